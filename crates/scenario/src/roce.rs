//! The `[roce]` and `[buffer]` sections compiled into the simulator's RoCEv2 parameters:
//! class maps, ECN, queue scheduling, DCQCN, the RC transport's timers, the switch MMU
//! (pause and resume points, headroom, the buffer budget), PFC and its watchdog, and the
//! switch latency.
//!
//! Owns the checks of those sections and their `auto` values, filled once here from the
//! `model` crate's formulas: headroom (IEEE 802.1Qbb, [`auto_headroom`]), the DCQCN
//! presets, switch latency. Leaves out the physics that uses them (`fabric::sim`) and
//! everything InfiniBand ([`crate::ib`]).

use model::dcqcn::{DcqcnParams, DcqcnPreset, ReduceTiming};
use model::ecn::Red;
use model::frame::{roce_frame, Encap, Transport, IB_MTUS};
use model::headroom::{ieee_8021qbb, pause_response_quanta, quantum, HeadroomInput};
use model::switch_latency::{EthernetSwitch, SwitchLatency};
use units::{BitRate, Bytes, SimDuration};

use fabric::params::{Buffer, EcnMarking, LoadBalancing, OutOfOrder, Params, Pfc, PfcWatchdog, Resume, Sched, Spray, Tech, Trigger, WatchdogAction};
use fabric::topology::{NodeKind, Topology};

use crate::compile::{latency_from_file, FabricParams};
use crate::error::{ConfigError, Ctx};
use crate::schema::{Auto, BufferSection, DcqcnCfg, RoceSection};
use crate::topology::fastest_rate;

/// The steps, in the order their errors are reported.
pub(crate) fn compile(c: &Ctx, r: &RoceSection, b: &BufferSection, topo: &Topology) -> Result<FabricParams, ConfigError> {
    if !IB_MTUS.contains(&r.mtu.0) {
        return Err(c.err("roce.mtu", format!("{} is not an IB path MTU; expected one of 256B, 512B, 1024B, 2048B, 4096B", r.mtu)));
    }
    let Classes { dscp_to_tc, tc_to_pg, lossless } = classes(c, r)?;
    if r.cnp_dscp > 63 {
        return Err(c.err("roce.cnp_dscp", "expected a DSCP value 0..63"));
    }
    let ecn = ecn(c, r)?;
    let mut sched = [Sched::Weighted(1); 8];
    for &q in r.strict_queues.as_deref().unwrap_or(&[6, 7]) {
        if q > 7 {
            return Err(c.err("roce.strict_queues", "expected queues 0..7"));
        }
        sched[q as usize] = Sched::Strict;
    }
    let dcqcn = dcqcn(c, &r.dcqcn, topo)?;
    if r.ack_every == 0 {
        return Err(c.err("roce.ack_every", "expected at least 1"));
    }
    if r.timeout > 31 {
        return Err(c.err("roce.timeout", "the local ACK timeout exponent is 0..31"));
    }
    if r.retry_cnt > 7 {
        return Err(c.err("roce.retry_cnt", "retry_cnt is a 3-bit field: 0..7"));
    }
    let encap = Encap { vlan: r.vlan, ipv6: false };
    let max_frame = roce_frame(encap, Transport::WriteFirst, r.mtu);
    let (trigger, resume) = pause_points(c, b, max_frame)?;
    let pfc = pfc(c, r)?;
    let mut notes = vec![];
    let latency = switch_latency(c, r, topo)?;
    if matches!(r.switch_latency, None | Some(Auto::Auto)) {
        notes.push(format!("switch latency auto: {} ({})", latency.latency, latency.source));
    }
    let headroom_cells = headroom(b, topo, max_frame, pfc.response, latency.latency, trigger, &mut notes);
    check_budget(c, b, topo, &headroom_cells, &tc_to_pg, &lossless)?;
    let cells = |x: Bytes| x.cells(b.cell);
    let buffer = Buffer {
        cell: b.cell,
        total_cells: cells(b.total),
        dynamic_th: b.dynamic_th,
        reserved_cells: cells(b.reserved),
        headroom_cells: match b.headroom {
            Auto::Value(h) => Some(cells(h)),
            Auto::Auto => None,
        },
        trigger,
        resume,
        shared_headroom_pool: b.shared_headroom_pool.map(cells),
    };
    let params = Params {
        tech: Tech::Roce,
        mtu: r.mtu,
        encap,
        dscp_to_tc,
        tc_to_pg,
        lossless,
        ecn,
        ecn_marking: ecn_marking(c, r)?,
        sched,
        cnp_dscp: r.cnp_dscp,
        pfc,
        dcqcn,
        ack_every: r.ack_every,
        rto: SimDuration(4_096_000 << r.timeout),
        retry_cnt: r.retry_cnt,
        forwarding: r.forwarding,
        switch_latency: latency.latency,
        buffer,
        ib: None,
        deadlock_timeout: SimDuration::ZERO,
        load_balancing: load_balancing(c, r, encap)?,
        ooo: out_of_order(c, "roce", r.ooo, r.ooo_nak_window, r.ooo_nak_timeout, r.timeout)?,
    };
    Ok(FabricParams { params, headroom_cells, notes, lft: None, ar: None, sm: None, switch_latency: latency })
}

/// `adaptive_grade` by default, in full-MTU frames: this model's choice, as NVIDIA
/// publishes no figure for Spectrum's port grading (see `fabric::sim`'s
/// `load_balance.rs` for what a finer grade does).
const ADAPTIVE_GRADE_FRAMES: u64 = 8;

/// `load_balancing` and the fields of its mode.
fn load_balancing(c: &Ctx, r: &RoceSection, encap: Encap) -> Result<LoadBalancing, ConfigError> {
    let mode = r.load_balancing.as_deref().unwrap_or("ecmp");
    if r.flowlet_gap.is_some() && mode != "flowlet" {
        return Err(c.err("roce.flowlet_gap", "only applies with load_balancing = \"flowlet\""));
    }
    if r.adaptive_grade.is_some() && mode != "adaptive" {
        return Err(c.err("roce.adaptive_grade", "only applies with load_balancing = \"adaptive\""));
    }
    if r.spray.is_some() && mode != "packet-spray" {
        return Err(c.err("roce.spray", "only applies with load_balancing = \"packet-spray\""));
    }
    Ok(match mode {
        "ecmp" => LoadBalancing::Ecmp,
        "flowlet" => {
            let gap = r
                .flowlet_gap
                .ok_or_else(|| c.err("roce.flowlet_gap", "load_balancing = \"flowlet\" needs the idle gap that starts a new flowlet, e.g. \"20us\""))?;
            if gap == SimDuration::ZERO {
                return Err(c.err("roce.flowlet_gap", "expected a gap above 0"));
            }
            LoadBalancing::Flowlet { gap }
        }
        "packet-spray" => LoadBalancing::PacketSpray {
            order: match r.spray.as_deref().unwrap_or("round-robin") {
                "round-robin" => Spray::RoundRobin,
                "random" => Spray::Random,
                other => return Err(c.err("roce.spray", format!("`{other}`: expected \"round-robin\" or \"random\""))),
            },
        },
        "adaptive" => {
            let grade = r.adaptive_grade.unwrap_or(Bytes(ADAPTIVE_GRADE_FRAMES * roce_frame(encap, Transport::WriteRest, r.mtu).0));
            if grade == Bytes(0) {
                return Err(c.err("roce.adaptive_grade", "expected at least 1 byte"));
            }
            LoadBalancing::Adaptive { grade }
        }
        other => return Err(c.err("roce.load_balancing", format!("`{other}`: expected \"ecmp\", \"flowlet\", \"packet-spray\" or \"adaptive\""))),
    })
}

/// `ooo` and its NAK rule, for either fabric's `section`: by default no window, and a gap
/// is NAKed after the local ACK timeout (4.096 µs × 2^`timeout`, the time the requester
/// would wait before resending a lost tail anyway).
pub(crate) fn out_of_order(
    c: &Ctx,
    section: &str,
    ooo: bool,
    window: Option<u32>,
    timeout: Option<SimDuration>,
    ack_timeout_exp: u32,
) -> Result<Option<OutOfOrder>, ConfigError> {
    if !ooo {
        for (set, field) in [(window.is_some(), "ooo_nak_window"), (timeout.is_some(), "ooo_nak_timeout")] {
            if set {
                return Err(c.err(&format!("{section}.{field}"), "only applies with ooo = true"));
            }
        }
        return Ok(None);
    }
    let nak_window = window.unwrap_or(u32::MAX);
    if nak_window == 0 {
        return Err(c.err(&format!("{section}.ooo_nak_window"), "expected at least 1 PSN (leave it out for no window)"));
    }
    let nak_timeout = timeout.unwrap_or(SimDuration(4_096_000 << ack_timeout_exp));
    if nak_timeout == SimDuration::ZERO {
        return Err(c.err(&format!("{section}.ooo_nak_timeout"), "expected a time above 0"));
    }
    Ok(Some(OutOfOrder { nak_window, nak_timeout }))
}

/// DSCP → traffic class → priority group, and which classes are lossless.
struct Classes {
    dscp_to_tc: [u8; 64],
    tc_to_pg: [u8; 8],
    lossless: [bool; 8],
}

/// The class maps: unlisted DSCPs map to class 0; without `tc_to_pg` each lossless class
/// is its own PG and the rest share PG 0. A PG is all lossless or all lossy.
fn classes(c: &Ctx, r: &RoceSection) -> Result<Classes, ConfigError> {
    let mut dscp_to_tc = [0u8; 64];
    for (k, &tc) in &r.dscp_to_tc {
        let d: u8 = k.parse().ok().filter(|&d: &u8| d < 64).ok_or_else(|| c.err("roce.dscp_to_tc", format!("key `{k}` is not a DSCP value 0..63")))?;
        if tc > 7 {
            return Err(c.err("roce.dscp_to_tc", format!("traffic class {tc} for DSCP {d} is not 0..7")));
        }
        dscp_to_tc[d as usize] = tc;
    }
    let mut tc_to_pg = [0u8; 8];
    match &r.tc_to_pg {
        None => {
            for &p in &r.lossless_priorities {
                if p < 8 {
                    tc_to_pg[p as usize] = p;
                }
            }
        }
        Some(m) => {
            for (k, &pg) in m {
                let tc: u8 = k.parse().ok().filter(|&t: &u8| t < 8).ok_or_else(|| c.err("roce.tc_to_pg", format!("key `{k}` is not a traffic class 0..7")))?;
                if pg > 7 {
                    return Err(c.err("roce.tc_to_pg", format!("priority group {pg} is not 0..7")));
                }
                tc_to_pg[tc as usize] = pg;
            }
        }
    }
    let mut lossless = [false; 8];
    for &p in &r.lossless_priorities {
        if p > 7 {
            return Err(c.err("roce.lossless_priorities", format!("priority {p} is not 0..7")));
        }
        lossless[p as usize] = true;
    }
    for tc in 0..8 {
        for tc2 in 0..8 {
            if tc_to_pg[tc] == tc_to_pg[tc2] && lossless[tc] != lossless[tc2] && tc != tc2 {
                return Err(c.err("roce.tc_to_pg", format!("lossless class {tc} shares PG {} with lossy class {tc2}", tc_to_pg[tc])));
            }
        }
    }
    Ok(Classes { dscp_to_tc, tc_to_pg, lossless })
}

/// RED/ECN marking per egress queue (`[[roce.ecn]]`); unlisted queues do not mark.
fn ecn(c: &Ctx, r: &RoceSection) -> Result<[Option<Red>; 8], ConfigError> {
    let mut ecn = [None; 8];
    for (i, e) in r.ecn.iter().enumerate() {
        let f = format!("roce.ecn[{i}]");
        if e.queue > 7 {
            return Err(c.err(&format!("{f}.queue"), "expected a queue 0..7"));
        }
        if e.kmin > e.kmax {
            return Err(c.err(&format!("{f}.kmin"), format!("kmin {} is above kmax {}", e.kmin, e.kmax)));
        }
        if !(0.0..=1.0).contains(&e.pmax) {
            return Err(c.err(&format!("{f}.pmax"), "expected a probability in [0, 1]"));
        }
        ecn[e.queue as usize] = Some(Red { kmin: e.kmin, kmax: e.kmax, pmax: e.pmax });
    }
    Ok(ecn)
}

/// `[roce] ecn_marking`: which queue length marking looks at.
fn ecn_marking(c: &Ctx, r: &RoceSection) -> Result<EcnMarking, ConfigError> {
    match r.ecn_marking.as_deref() {
        None | Some("enqueue") => Ok(EcnMarking::Enqueue),
        Some("dequeue") => Ok(EcnMarking::Dequeue),
        Some(o) => Err(c.err("roce.ecn_marking", format!("unknown marking point `{o}`; expected \"enqueue\" or \"dequeue\""))),
    }
}

/// The MMU's cell and dynamic threshold checked, and a PG's pause trigger (`xoff`) and
/// resume point (`xon` or `xon_offset`; "auto": two maximum frames below the trigger).
fn pause_points(c: &Ctx, b: &BufferSection, max_frame: Bytes) -> Result<(Trigger, Resume), ConfigError> {
    if b.cell.0 == 0 || b.cell.0 > 1024 {
        return Err(c.err("buffer.cell", "expected a cell size between 1B and 1024B (real ASICs: 96..256 B)"));
    }
    if !(-7..=3).contains(&b.dynamic_th) {
        return Err(c.err("buffer.dynamic_th", "expected -7..3 (alpha = 2^dynamic_th, as in SONiC)"));
    }
    let cells = |x: Bytes| x.cells(b.cell);
    let trigger = match b.xoff.as_str() {
        "dynamic" => Trigger::Dynamic,
        s => Trigger::Static(cells(s.parse::<Bytes>().map_err(|e| c.err("buffer.xoff", format!("{e}; expected \"dynamic\" or a size")))?)),
    };
    let resume = match (b.xon_offset, b.xon) {
        (Some(_), Some(_)) => return Err(c.err("buffer.xon", "give either `xon` or `xon_offset`, not both")),
        (None, Some(x)) => Resume::Absolute(cells(x)),
        (Some(Auto::Value(o)), None) => Resume::Offset(cells(o)),
        (Some(Auto::Auto), None) | (None, None) => Resume::Offset(2 * cells(max_frame)),
    };
    Ok((trigger, resume))
}

/// `[roce] pfc`: pause quanta, refresh and response times ("auto": the simulator's
/// defaults), and the switches' PFC watchdog.
fn pfc(c: &Ctx, r: &RoceSection) -> Result<Pfc, ConfigError> {
    let pfc = Pfc {
        enabled: r.pfc.enabled,
        quanta: r.pfc.quanta,
        refresh: match r.pfc.refresh {
            Auto::Auto => None,
            Auto::Value(v) => Some(v),
        },
        response: match r.pfc.response {
            Auto::Auto => None,
            Auto::Value(v) => Some(v),
        },
        watchdog: match &r.pfc.watchdog {
            None => None,
            Some(w) => {
                let action = match w.action.as_str() {
                    "drop" => WatchdogAction::Drop,
                    "forward" => WatchdogAction::Forward,
                    o => return Err(c.err("roce.pfc.watchdog.action", format!("unknown action `{o}`; expected \"drop\" or \"forward\""))),
                };
                if w.detection_time.ps() == 0 || w.restoration_time.ps() == 0 {
                    return Err(c.err("roce.pfc.watchdog", "detection_time and restoration_time must be above zero"));
                }
                Some(PfcWatchdog { detection: w.detection_time, restoration: w.restoration_time, action })
            }
        },
    };
    if pfc.enabled && pfc.quanta == 0 {
        return Err(c.err("roce.pfc.quanta", "pause quanta must be 1..65535 (0 means resume)"));
    }
    let longest = longest_pause();
    if let Some(r) = pfc.response.filter(|&r| r > longest) {
        return Err(c.err(
            "roce.pfc.response",
            format!("a response time of {r}; expected at most {longest}, the longest pause (65535 quanta at 10 Gb/s, the slowest link), after which the peer resumes anyway"),
        ));
    }
    Ok(pfc)
}

/// The longest a PFC frame pauses: 65535 quanta of 512 bit times (IEEE 802.3 clause 31B.2)
/// at the slowest link speed fabriclab models, 10 Gb/s: 3.355 ms.
fn longest_pause() -> SimDuration {
    quantum(BitRate::from_gbps(10)) * 65535
}

/// Headroom per port, in cells: configured, or the IEEE 802.1Qbb worst case of that
/// port's link (switch ports only), with a note giving the largest.
fn headroom(
    b: &BufferSection,
    topo: &Topology,
    max_frame: Bytes,
    response: Option<SimDuration>,
    latency: SimDuration,
    trigger: Trigger,
    notes: &mut Vec<String>,
) -> Vec<u64> {
    match b.headroom {
        Auto::Value(h) => vec![h.cells(b.cell); topo.ports.len()],
        Auto::Auto => {
            let mut worst = 0;
            let v: Vec<u64> = topo
                .ports
                .iter()
                .map(|p| {
                    if p.rate.0 == 0 || !topo.is_switch(p.node) {
                        return 0;
                    }
                    let d = auto_headroom(p.rate, p.prop, max_frame, response, latency, b.cell, trigger == Trigger::Dynamic);
                    worst = worst.max(d.cells);
                    d.cells
                })
                .collect();
            notes.push(format!("headroom auto: IEEE 802.1Qbb worst case per port (largest {} = {} cells of {})", b.cell * worst, worst, b.cell));
            v
        }
    }
}

/// Reserved plus headroom cells must leave a shared part in every switch's buffer. Counted
/// in 128 bits: a reserve or headroom of up to 2^64 − 1 bytes per port is refused here,
/// not wrapped.
fn check_budget(c: &Ctx, b: &BufferSection, topo: &Topology, headroom_cells: &[u64], tc_to_pg: &[u8; 8], lossless: &[bool; 8]) -> Result<(), ConfigError> {
    let cells = |x: Bytes| x.cells(b.cell) as u128;
    let total_cells = cells(b.total);
    let lossless_pgs = (0..8u8).filter(|&pg| (0..8).any(|tc| lossless[tc] && tc_to_pg[tc] == pg)).count() as u128;
    let bytes = |cells: u128| match u64::try_from(cells * b.cell.0 as u128) {
        Ok(x) => Bytes(x).to_string(),
        Err(_) => format!("{}B", cells * b.cell.0 as u128),
    };
    for n in &topo.nodes {
        if !matches!(n.kind, NodeKind::Switch) {
            continue;
        }
        let reserved = cells(b.reserved) * 8 * n.nports as u128;
        let hdrm: u128 = match b.shared_headroom_pool {
            Some(p) => cells(p),
            None => (n.first_port..n.first_port + n.nports).map(|p| headroom_cells[p as usize] as u128 * lossless_pgs).sum(),
        };
        if reserved + hdrm >= total_cells {
            return Err(c.err(
                "buffer.total",
                format!(
                    "switch `{}`: reserved ({}) + headroom ({}) leave no shared buffer in {} ({} ports)",
                    n.name,
                    bytes(reserved),
                    bytes(hdrm),
                    b.total,
                    n.nports
                ),
            ));
        }
    }
    Ok(())
}

/// `[roce] switch_latency` and `switch`, resolved (`model::switch_latency::roce`).
fn switch_latency(c: &Ctx, r: &RoceSection, topo: &Topology) -> Result<SwitchLatency, ConfigError> {
    let switch = match r.switch.as_deref() {
        None => None,
        Some(s) => Some(EthernetSwitch::from_name(s).ok_or_else(|| {
            c.err(
                "roce.switch",
                format!("unknown switch `{s}`; expected one of {} (\"spectrum\" and \"tomahawk\" mean the first generation)", EthernetSwitch::NAMES.join(", ")),
            )
        })?),
    };
    match r.switch_latency.unwrap_or(Auto::Auto) {
        Auto::Value(v) => latency_from_file(c, "roce.switch_latency", v),
        Auto::Auto => model::switch_latency::roce(switch, fastest_rate(topo)).map_err(|m| c.err("roce.switch_latency", m)),
    }
}

/// The `auto` headroom of one lossless switch ingress: the IEEE 802.1Qbb worst case for the
/// link's rate and cable (`model::headroom`), counted the way the simulator admits frames.
/// The one formula behind `headroom = "auto"`, `fabriclab burst --prove` and a slow NIC's
/// pause point. `response`: the peer's reaction time (`None`: IEEE 802.3 Table 31B-1).
pub fn auto_headroom(
    rate: BitRate,
    cable: SimDuration,
    max_frame: Bytes,
    response: Option<SimDuration>,
    trigger_delay: SimDuration,
    cell: Bytes,
    dynamic_trigger: bool,
) -> model::headroom::Derivation {
    let response = response.unwrap_or(SimDuration(pause_response_quanta(rate) * quantum(rate).ps()));
    ieee_8021qbb(&HeadroomInput {
        rate,
        cable,
        max_frame_reverse: max_frame,
        max_frame_lossless: max_frame,
        response,
        trigger_delay,
        interface_delay: SimDuration::ZERO,
        cell,
        // The simulator admits a frame whole (on its last bit, or on its header when
        // cutting through), so ceil(W/P) maximum frames follow the trigger; the frame that
        // crosses it lands in headroom too when the trigger is dynamic (α·free falls between
        // this PG's arrivals). A static trigger leaves it in the shared part, unless the
        // pool runs so low that α·free falls under the static level. Maximum-size frames
        // only: short frames cost more cells (`fabriclab plan roce --short-frames`).
        trigger_frame_in_headroom: dynamic_trigger,
        short_frames: 0,
    })
}

/// The DCQCN parameter set: a preset, then every field the scenario overrides (the name
/// lists them). `hpcc-ns3` scales R_AI and R_HAI with the hosts' NIC speed, as HPCC's
/// `run.py --bw` does.
fn dcqcn(c: &Ctx, d: &DcqcnCfg, topo: &Topology) -> Result<Option<(String, DcqcnParams)>, ConfigError> {
    let mut p = match d.preset.as_str() {
        "off" => return Ok(None),
        "paper" => DcqcnPreset::Paper.params(),
        "nvidia-default" => DcqcnPreset::NvidiaDefault.params(),
        "hpcc-ns3" => {
            let mut speeds: Vec<u64> = (0..topo.hosts).map(|e| topo.port(topo.ep_port(e)).rate.0).collect();
            speeds.sort_unstable();
            speeds.dedup();
            match speeds.as_slice() {
                [bps] => model::dcqcn::hpcc_ns3(bps / 1_000_000_000),
                _ if d.rate_ai.is_some() && d.rate_hai.is_some() => DcqcnPreset::HpccNs3.params(),
                _ => {
                    return Err(c.err(
                        "roce.dcqcn.preset",
                        "hpcc-ns3 scales rate_ai and rate_hai with the NIC speed (run.py --bw), but the hosts here run at \
                         more than one speed: set rate_ai and rate_hai",
                    ))
                }
            }
        }
        other => return Err(c.err("roce.dcqcn.preset", format!("unknown preset `{other}`; expected \"paper\", \"nvidia-default\", \"hpcc-ns3\" or \"off\""))),
    };
    let mut name = d.preset.clone();
    let mut set = |what: &str| name.push_str(&format!(" +{what}"));
    macro_rules! over {
        ($f:ident) => {
            if let Some(v) = d.$f {
                p.$f = v;
                set(stringify!($f));
            }
        };
    }
    over!(g);
    over!(alpha_timer);
    over!(rate_timer);
    over!(byte_counter);
    over!(fast_recovery_steps);
    over!(rate_ai);
    over!(rate_hai);
    over!(min_rate);
    over!(cnp_interval);
    over!(rate_reduce_interval);
    over!(clamp_tgt_rate);
    over!(clamp_tgt_rate_after_time_inc);
    over!(rate_reduce_timing);
    over!(increase);
    over!(cnp);
    over!(cnp_scope);
    over!(retime);
    if !(0.0..=1.0).contains(&p.g) || p.g == 0.0 {
        return Err(c.err("roce.dcqcn.g", "expected 0 < g <= 1"));
    }
    if p.alpha_timer.ps() == 0 || p.rate_timer.ps() == 0 || p.byte_counter.0 == 0 {
        return Err(c.err("roce.dcqcn", "alpha_timer, rate_timer and byte_counter must be positive"));
    }
    if p.rate_reduce_timing == ReduceTiming::Grid && p.rate_reduce_interval.ps() == 0 {
        return Err(c.err("roce.dcqcn.rate_reduce_interval", "rate_reduce_timing = \"grid\" checks every rate_reduce_interval: expected > 0"));
    }
    Ok(Some((name, p)))
}
