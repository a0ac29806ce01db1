//! What differs between the two sides of a `compare`, and why.
//!
//! `compare` runs one scenario on both fabrics, but the fabrics cannot share every
//! setting: their link layers, buffers, congestion control, routing and switch silicon
//! differ by design, and whatever the file leaves out of `[infiniband]` comes from stated
//! defaults (`variant::for_technology`). A reader of a comparison must see every such
//! difference next to the numbers it explains. This module lists them from the two
//! compiled scenarios — the values the simulator actually ran with — with a reason for
//! each; `compare` prints the list and puts it in its JSON as `differing_defaults`.
//!
//! Listed: every setting whose value differs between the sides, plus the switch latency
//! whenever the RoCEv2 figure was taken from InfiniBand for lack of a published one (the
//! same value on both sides, which the reader should know is not a measurement).
//! Not listed: settings both sides share (topology, link speeds, cables, traffic, seed,
//! deadlock timeout), and the mechanisms each side models alone (PFC frames, credits), which
//! the report's own rows show.

use serde::Serialize;

use crate::payload_efficiency;
use scenario::schema::Auto;
use scenario::World;

/// One setting the two sides of a comparison ran with differently.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Difference {
    pub parameter: String,
    pub infiniband: String,
    pub roce: String,
    /// Why the sides differ and where each value comes from.
    pub reason: String,
}

/// The differences between the InfiniBand side `ib` and the RoCEv2 side `roce` of one
/// scenario; `ib_from_defaults`: the file has no `[infiniband]`, so `compare` filled it.
pub fn differences(ib: &World, roce: &World, ib_from_defaults: bool) -> Vec<Difference> {
    if ib.params.ib.is_none() {
        return vec![];
    }
    let ib_origin = if ib_from_defaults { "compare's default (the file has no [infiniband])" } else { "the file's [infiniband]" };
    let mut d = List { out: vec![], ib_origin };
    latency_and_framing(&mut d, ib, roce);
    flow_control_and_buffers(&mut d, ib, roce);
    congestion_control(&mut d, ib, roce);
    routing_and_transport(&mut d, ib, roce);
    containment_and_reroute(&mut d, ib, roce);
    d.out
}

/// The list being built, and where the InfiniBand side's settings come from.
struct List {
    out: Vec<Difference>,
    ib_origin: &'static str,
}

impl List {
    fn add(&mut self, parameter: &str, infiniband: String, roce: String, reason: String) {
        self.out.push(Difference { parameter: parameter.into(), infiniband, roce, reason });
    }
}

/// Switch latency, path MTU and the wire bytes of a data packet.
fn latency_and_framing(d: &mut List, ib: &World, roce: &World) {
    let (p, q) = (&ib.params, &roce.params);
    let ib_origin = d.ib_origin;
    let mut add = |parameter: &str, infiniband: String, roce: String, reason: String| d.add(parameter, infiniband, roce, reason);
    let (li, lr) = (&ib.switch_latency, &roce.switch_latency);
    if li.latency != lr.latency || lr.same_as_infiniband {
        let what = if lr.same_as_infiniband { "no published figure for the RoCEv2 switch, so the same value on both sides; " } else { "" };
        add("switch latency", li.latency.to_string(), lr.latency.to_string(), format!("{what}InfiniBand: {}; RoCEv2: {}", li.source, lr.source));
    }

    if p.mtu != q.mtu {
        add("path MTU", p.mtu.to_string(), q.mtu.to_string(), format!("InfiniBand: {ib_origin}; RoCEv2: the file's [roce]"));
    }
    let wire = |w: &World| {
        let e = payload_efficiency(&w.params);
        let bytes = (w.params.mtu.0 as f64 / e).round();
        format!("{bytes} B per {} B payload ({:.2} %)", w.params.mtu.0, 100.0 * e)
    };
    add(
        "wire bytes per full data packet",
        wire(ib),
        wire(roce),
        "the encapsulations differ: InfiniBand LRH, BTH, ICRC, VCRC and link framing (IBTA Vol. 1 ch. 5, 7, 9); RoCEv2 Ethernet, IPv4, UDP, \
         BTH, ICRC, FCS, preamble and inter-frame gap (IBTA Vol. 1 Annex A17)"
            .into(),
    );
}

/// Link-level flow control and the switch buffer.
fn flow_control_and_buffers(d: &mut List, ib: &World, roce: &World) {
    let q = &roce.params;
    let ibp = ib.params.ib.as_ref().expect("checked in `differences`");
    let ib_origin = d.ib_origin;
    let mut add = |parameter: &str, infiniband: String, roce: String, reason: String| d.add(parameter, infiniband, roce, reason);
    let lossless: Vec<String> = (0..8).filter(|&c| q.lossless[c]).map(|c| c.to_string()).collect();
    add(
        "link-level flow control",
        format!("credits, {} data VL(s), every VL lossless", ibp.data_vls),
        if q.pfc.enabled && !lossless.is_empty() {
            format!("PFC on priorit{} {}", if lossless.len() == 1 { "y" } else { "ies" }, lossless.join(", "))
        } else {
            "none: PFC off, every class lossy".into()
        },
        format!(
            "InfiniBand's credits are part of its link layer (IBTA Vol. 1 §7.9); RoCEv2 is lossless only where configured (IEEE 802.1Qbb PFC, [roce] pfc). \
             VLs: {ib_origin}"
        ),
    );

    let b = &q.buffer;
    add(
        "switch buffer",
        format!("{} per input port and VL", size(ibp.vl_buffer_blocks as u64 * model::ib::BLOCK)),
        format!(
            "{} shared per switch, {} cells, α = 2^{}, headroom {}",
            size(b.total_cells * b.cell.0),
            size(b.cell.0),
            b.dynamic_th,
            b.headroom_cells.map_or("auto (IEEE 802.1Qbb per port)".into(), |h| size(h * b.cell.0))
        ),
        format!(
            "InfiniBand buffers per input VL and advertises at most 2048 × 64 B of it (§7.9.4); a RoCEv2 switch shares one MMU ([buffer]). \
             InfiniBand: {ib_origin}"
        ),
    );
}

/// Congestion control and the marking it needs.
fn congestion_control(d: &mut List, ib: &World, roce: &World) {
    let q = &roce.params;
    let ibp = ib.params.ib.as_ref().expect("checked in `differences`");
    let ib_origin = d.ib_origin;
    let mut add = |parameter: &str, infiniband: String, roce: String, reason: String| d.add(parameter, infiniband, roce, reason);
    let ib_cc = match &ibp.cc {
        None => "off (OpenSM ships none)".to_string(),
        Some(c) => format!("IB CC, FECN above {}", size(c.threshold_bytes)),
    };
    let roce_cc = q.dcqcn.as_ref().map_or("off".to_string(), |(n, _)| format!("DCQCN {n}"));
    if ibp.cc.is_some() || q.dcqcn.is_some() {
        add(
            "congestion control",
            ib_cc,
            roce_cc,
            format!("IB congestion control (IBTA Annex A10) is configured per subnet; DCQCN per [roce] dcqcn. InfiniBand: {ib_origin}"),
        );
    }
    let marks: Vec<String> =
        (0..8).filter_map(|i| q.ecn[i].as_ref().map(|r| format!("queue {i}: {}..{} p {}", size(r.kmin.0), size(r.kmax.0), r.pmax))).collect();
    if !marks.is_empty() || ibp.cc.is_some() {
        add(
            "ECN / FECN marking",
            ibp.cc.as_ref().map_or("none".into(), |c| format!("FECN above {} per VL", size(c.threshold_bytes))),
            if marks.is_empty() { "none".into() } else { format!("RED {}", marks.join("; ")) },
            "switches mark only where the fabric's congestion control is configured: [roce] ecn, [infiniband] congestion_control".into(),
        );
    }
}

/// Routing, forwarding and the RC transport's timers.
fn routing_and_transport(d: &mut List, ib: &World, roce: &World) {
    let (p, q) = (&ib.params, &roce.params);
    let ibp = ib.params.ib.as_ref().expect("checked in `differences`");
    let ib_origin = d.ib_origin;
    let mut add = |parameter: &str, infiniband: String, roce: String, reason: String| d.add(parameter, infiniband, roce, reason);
    let ib_ar = match p.load_balancing {
        fabric::params::LoadBalancing::Ecmp => "adaptive routing off".to_string(),
        _ => format!("adaptive routing `{}`", crate::balance::mode_name(p)),
    };
    add(
        "routing",
        match p.load_balancing {
            fabric::params::LoadBalancing::Ecmp => format!("subnet manager ({}), static forwarding tables", ibp.routing),
            _ => format!("subnet manager ({}), `{}` over AR groups (the file)", ibp.routing, crate::balance::mode_name(p)),
        },
        match q.load_balancing {
            fabric::params::LoadBalancing::Ecmp => "ECMP, per-flow hashing".into(),
            _ => format!("ECMP groups, `{}` per data packet (the file)", crate::balance::mode_name(q)),
        },
        match q.load_balancing {
            fabric::params::LoadBalancing::Ecmp => {
                format!("InfiniBand routes by the SM's LFTs ({ib_ar}), RoCEv2 by ECMP. InfiniBand engine: {ib_origin}")
            }
            _ => format!("InfiniBand routes by the SM's LFTs ({ib_ar}), RoCEv2 balances load over its ECMP groups. InfiniBand engine: {ib_origin}"),
        },
    );
    if p.ooo.is_some() != q.ooo.is_some() {
        let state = |on: bool| if on { "on".to_string() } else { "off (go-back-N)".to_string() };
        let reason = if p.load_balancing == fabric::params::LoadBalancing::Ecmp && p.ooo.is_none() {
            "RoCEv2: `ooo = true` in the file; InfiniBand's static routes keep each QP's packets in order".into()
        } else {
            "`ooo = true` in the file's section of the fabric that places; a fabric that does not takes a reordered packet for a loss".into()
        };
        add("out-of-order placement", state(p.ooo.is_some()), state(q.ooo.is_some()), reason);
    }

    if p.forwarding != q.forwarding {
        add("forwarding", format!("{:?}", p.forwarding), format!("{:?}", q.forwarding), format!("InfiniBand: {ib_origin}; RoCEv2: the file"));
    }
    if p.rto != q.rto || p.retry_cnt != q.retry_cnt {
        add(
            "transport timeout",
            format!("{} × {} retries", p.rto, p.retry_cnt),
            format!("{} × {} retries", q.rto, q.retry_cnt),
            format!("local ACK timeout 4.096 us × 2^timeout (IBTA Vol. 1 §9.7.6.1.3); InfiniBand: {ib_origin} (NCCL's 20 / 7 by default); RoCEv2: the file"),
        );
    }
    if p.ack_every != q.ack_every {
        add("ACK every", p.ack_every.to_string(), q.ack_every.to_string(), format!("InfiniBand: {ib_origin}; RoCEv2: the file"));
    }
}

/// What contains a stuck queue, and how long re-routing takes after a fault.
fn containment_and_reroute(d: &mut List, ib: &World, roce: &World) {
    let q = &roce.params;
    let ibp = ib.params.ib.as_ref().expect("checked in `differences`");
    let ib_origin = d.ib_origin;
    let mut add = |parameter: &str, infiniband: String, roce: String, reason: String| d.add(parameter, infiniband, roce, reason);
    let life = |d: Option<units::SimDuration>| d.map_or("infinite".to_string(), |d| d.to_string());
    add(
        "stuck-queue containment",
        format!("head-of-queue lifetime {} (leaf {}), VL stall after {} discards", life(ibp.hoq_lifetime), life(ibp.leaf_hoq_lifetime), ibp.vl_stall_count),
        q.pfc
            .watchdog
            .map_or("none (no PFC watchdog)".into(), |w| format!("PFC watchdog: detection {}, restoration {}, {:?}", w.detection, w.restoration, w.action)),
        format!(
            "InfiniBand switches discard what waits too long (IBTA Vol. 1 §18.2.5.4, OpenSM's lifetimes); a RoCEv2 switch needs a PFC watchdog \
             (SONiC pfcwd, [roce.pfc] watchdog). InfiniBand: {ib_origin}"
        ),
    );

    let reroute = |w: &World| match w.reroute_delay {
        None => "none".to_string(),
        Some(Auto::Auto) => "the subnet manager's modelled re-sweep".into(),
        Some(Auto::Value(d)) => d.to_string(),
    };
    if !ib.faults.is_empty() || !roce.faults.is_empty() {
        add(
            "re-route delay after a fault",
            reroute(ib),
            reroute(roce),
            format!("InfiniBand re-routes when the SM has re-swept, RoCEv2 when routing has converged ([roce] reroute_delay). InfiniBand: {ib_origin}"),
        );
    }
}

/// A size in the unit it is most likely written in: binary or decimal when it divides
/// evenly, else bytes.
fn size(b: u64) -> String {
    match b {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b if b >= 1_000_000 && b % 1_000_000 == 0 => format!("{} MB", b / 1_000_000),
        b if b >= 1000 && b % 1000 == 0 => format!("{} KB", b / 1000),
        b => format!("{b} B"),
    }
}

/// The list as text, one difference per paragraph.
pub fn text(d: &[Difference]) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    if d.is_empty() {
        return s;
    }
    let _ = writeln!(s, "settings that differ between the sides (and why):");
    for x in d {
        let _ = writeln!(s, "  - {}: InfiniBand {} | RoCEv2 {}", x.parameter, x.infiniband, x.roce);
        let _ = writeln!(s, "      {}", x.reason);
    }
    s
}
