//! The `[infiniband]` section compiled into the simulator's InfiniBand parameters: SL→VL
//! tables (fabric-wide and per port), VL arbitration, VL buffers and credits, the RC
//! transport's timers, head-of-queue and switch lifetimes, VL stall, IB congestion
//! control, the switch latency, and routing: hashed shortest paths or a subnet manager
//! brought up on the fabric.
//!
//! Owns those checks and OpenSM's defaults for `auto`. Leaves out the subnet manager
//! itself (`fabric::subnet_manager`), the physics (`fabric::sim`) and everything RoCE
//! ([`crate::roce`]).

use std::collections::HashMap;

use model::frame::{Encap, Transport, IB_MTUS};
use units::{Bytes, SimDuration};

use crate::flow_list::FlowList;
use fabric::ibcc::IbCcParams;
use fabric::lft::Lft;
use fabric::params::{Buffer, EcnMarking, Ib, LoadBalancing, Params, Pfc, Resume, Sched, Tech, Trigger};
use fabric::routing::Routes;
use fabric::subnet_manager::ar::ArTable;
use fabric::subnet_manager::layout::IbLayout;
use fabric::subnet_manager::{Engine, SmConfig, SubnetManager};
use fabric::topology::{NodeId, NodeKind, PortId, Topology};

use crate::compile::{latency_from_file, FabricParams};
use crate::error::{ConfigError, Ctx};
use crate::schema::{Auto, IbCcCfg, IbSection};
use crate::topology::{fastest_rate, ports_of};

/// OpenSM's defaults (opensm/osm_subnet.c, `osm_subn_set_default_opt`): head_of_queue_lifetime
/// 0x12 and packet_life_time 0x12, i.e. 4.096 µs × 2^18 ≈ 1.07 s (IBTA Vol. 1 §14.2.5.6,
/// HOQLife and LifeTimeValue encode 4.096 µs × 2^value; values above 19 mean infinite).
const OPENSM_LIFETIME_EXP: u32 = 18;
/// OpenSM's leaf_head_of_queue_lifetime for switch ports that drive a CA
/// (OSM_DEFAULT_LEAF_HEAD_OF_QUEUE_LIFE 0x10: 4.096 µs × 2^16 ≈ 268 ms).
const OPENSM_LEAF_HOQ_EXP: u32 = 16;

/// The steps, in the order their errors are reported.
pub(crate) fn compile(c: &Ctx, r: &IbSection, topo: &Topology, layout: Option<&IbLayout>, seed: u64) -> Result<FabricParams, ConfigError> {
    if !IB_MTUS.contains(&r.mtu.0) {
        return Err(c.err("infiniband.mtu", format!("{} is not an IB path MTU; expected one of 256B, 512B, 1024B, 2048B, 4096B", r.mtu)));
    }
    if !(1..=8).contains(&r.data_vls) {
        return Err(c.err("infiniband.data_vls", "expected 1..8 data VLs (VL15 is for management)"));
    }
    let mut sl_to_vl = sl_to_vl(c, r)?;
    let mut sched = [Sched::Weighted(1); 8];
    for &v in &r.high_priority_vls {
        if v >= r.data_vls {
            return Err(c.err("infiniband.high_priority_vls", format!("VL {v} is not an operational data VL")));
        }
        sched[v as usize] = Sched::Strict;
    }
    let mtu_blocks = model::ib::blocks(model::ib::ib_packet(r.grh, Transport::WriteFirst, r.mtu));
    let vl_buffer_blocks = u32::try_from(r.vl_buffer.0 / model::ib::BLOCK)
        .map_err(|_| c.err("infiniband.vl_buffer", format!("{} is 2^32 blocks of 64 B or more; expected fewer", r.vl_buffer)))?;
    if vl_buffer_blocks < mtu_blocks {
        return Err(c.err("infiniband.vl_buffer", format!("{} holds {vl_buffer_blocks} blocks of 64 B; a maximum packet needs {mtu_blocks}", r.vl_buffer)));
    }
    if r.ack_every == 0 {
        return Err(c.err("infiniband.ack_every", "expected at least 1"));
    }
    if !(1..=31).contains(&r.timeout) {
        return Err(c.err("infiniband.timeout", "the local ACK timeout exponent is 1..31 (0 would mean infinite)"));
    }
    if r.retry_cnt > 7 {
        return Err(c.err("infiniband.retry_cnt", "retry_cnt is a 3-bit field: 0..7"));
    }
    let mut notes = vec![];
    check_speeds(c, topo)?;
    check_port_counts(c, topo)?;
    let latency = match r.switch_latency {
        Auto::Value(v) => latency_from_file(c, "infiniband.switch_latency", v)?,
        Auto::Auto => {
            // Every link runs at an IB speed (checked above): no generation means no link.
            let g = model::ib::Generation::of(fastest_rate(topo)).ok_or_else(|| {
                c.err("infiniband.switch_latency", "\"auto\" is the datasheet latency of the fastest link's generation, but the fabric has no links")
            })?;
            let l = model::switch_latency::infiniband(g);
            notes.push(format!("switch latency auto: {} ({})", l.latency, l.source));
            l
        }
    };
    let load_balancing = adaptive_routing(c, r)?;
    let (lft, sm, ar) = routing(c, r, topo, layout, seed, load_balancing != LoadBalancing::Ecmp, &mut notes)?;
    if matches!(r.routing.as_str(), "dfsssp") {
        for (sl, vl) in sl_to_vl.iter_mut().enumerate() {
            *vl = if sl < r.data_vls as usize { sl as u8 } else { 0 };
        }
    }
    let ib = settings(c, r, topo, sl_to_vl, vl_buffer_blocks)?;
    let mut params = params(r, sched, latency.latency, ib);
    params.load_balancing = load_balancing;
    params.ooo = crate::roce::out_of_order(c, "infiniband", r.ooo, r.ooo_nak_window, r.ooo_nak_timeout, r.timeout)?;
    Ok(FabricParams { params, headroom_cells: vec![0; topo.ports.len()], notes, lft: Some(lft), ar, sm, switch_latency: latency })
}

/// `adaptive_grade` by default, in full-MTU packets: this model's choice, as NVIDIA
/// publishes no figure for Quantum's port-load grading (the same default as RoCE's
/// `adaptive_grade`, see `crate::roce`).
const AR_GRADE_PACKETS: u64 = 8;

/// `adaptive_routing`: `per-packet` is [`LoadBalancing::Adaptive`], `per-flowlet`
/// [`LoadBalancing::AdaptiveFlowlet`], `off` (or no table) [`LoadBalancing::Ecmp`] (the
/// LFT alone).
fn adaptive_routing(c: &Ctx, r: &IbSection) -> Result<LoadBalancing, ConfigError> {
    let Some(ar) = &r.adaptive_routing else { return Ok(LoadBalancing::Ecmp) };
    let mode = ar.mode.as_str();
    if ar.flowlet_gap.is_some() && mode != "per-flowlet" {
        return Err(c.err("infiniband.adaptive_routing.flowlet_gap", "only applies with mode = \"per-flowlet\""));
    }
    if ar.grade.is_some() && mode == "off" {
        return Err(c.err("infiniband.adaptive_routing.grade", "does not apply with mode = \"off\""));
    }
    let grade = ar.grade.unwrap_or(Bytes(AR_GRADE_PACKETS * model::ib::ib_packet(r.grh, Transport::WriteRest, r.mtu).0));
    if grade == Bytes(0) {
        return Err(c.err("infiniband.adaptive_routing.grade", "expected at least 1 byte"));
    }
    Ok(match mode {
        "off" => LoadBalancing::Ecmp,
        "per-packet" => LoadBalancing::Adaptive { grade },
        "per-flowlet" => {
            let gap = ar.flowlet_gap.ok_or_else(|| {
                c.err("infiniband.adaptive_routing.flowlet_gap", "mode = \"per-flowlet\" needs the idle gap that starts a new flowlet, e.g. \"20us\"")
            })?;
            if gap == SimDuration::ZERO {
                return Err(c.err("infiniband.adaptive_routing.flowlet_gap", "expected a gap above 0"));
            }
            LoadBalancing::AdaptiveFlowlet { gap, grade }
        }
        other => return Err(c.err("infiniband.adaptive_routing.mode", format!("`{other}`: expected \"per-packet\", \"per-flowlet\" or \"off\""))),
    })
}

/// `sl_to_vl`: SL → VL, unlisted SLs on VL 0, every VL an operational one.
fn sl_to_vl(c: &Ctx, r: &IbSection) -> Result<[u8; 16], ConfigError> {
    let mut sl_to_vl = [0u8; 16];
    for (k, &vl) in &r.sl_to_vl {
        let sl: u8 = k.parse().ok().filter(|&x: &u8| x < 16).ok_or_else(|| c.err("infiniband.sl_to_vl", format!("key `{k}` is not a service level 0..15")))?;
        if vl >= r.data_vls {
            return Err(c.err("infiniband.sl_to_vl", format!("SL {sl} maps to VL {vl}, but only VL0..VL{} are operational", r.data_vls - 1)));
        }
        sl_to_vl[sl as usize] = vl;
    }
    Ok(sl_to_vl)
}

/// Every link runs at an InfiniBand 4x speed (aggregation nodes' internal ports aside).
fn check_speeds(c: &Ctx, topo: &Topology) -> Result<(), ConfigError> {
    for (pi, p) in topo.ports.iter().enumerate() {
        if p.rate.0 > 0 && model::ib::Generation::of(p.rate).is_none() && !topo.is_aggregator_port(PortId(pi as u32)) {
            return Err(
                c.err("topology", format!("{} is not an InfiniBand 4x speed; expected 100Gbps (EDR), 200Gbps (HDR), 400Gbps (NDR) or 800Gbps (XDR)", p.rate))
            );
        }
    }
    Ok(())
}

/// Every switch has at most 254 ports: InfiniBand port numbers are 8 bits, port 0 is the
/// switch's own (management) port and 255 is reserved (`topofile` reads `Switch N` with
/// the same bound).
fn check_port_counts(c: &Ctx, topo: &Topology) -> Result<(), ConfigError> {
    for (i, n) in topo.nodes.iter().enumerate() {
        if n.nports > 254 && topo.is_switch(NodeId(i as u32)) {
            let an = if topo.aggregator_of(NodeId(i as u32)).is_some() { ", its SHARP aggregation node's included" } else { "" };
            return Err(
                c.err("topology", format!("switch `{}` has {} ports{an}; an InfiniBand switch has at most 254 (port numbers are 8 bits)", n.name, n.nports))
            );
        }
    }
    Ok(())
}

/// The forwarding tables: `dest-hash` (shortest paths hashed by destination, no subnet
/// manager), or a subnet manager's engine brought up on the fabric, with notes on what
/// it did; with `ar`, the SM's adaptive-routing groups too.
fn routing(
    c: &Ctx,
    r: &IbSection,
    topo: &Topology,
    layout: Option<&IbLayout>,
    seed: u64,
    ar: bool,
    notes: &mut Vec<String>,
) -> Result<(Lft, Option<SmConfig>, Option<ArTable>), ConfigError> {
    let name = match r.routing.as_str() {
        "dest-hash" if ar => {
            return Err(c.err(
                "infiniband.adaptive_routing",
                "adaptive routing needs the subnet manager's AR groups: set `routing` to an SM engine (minhop, updn, ftree, dfsssp), not \"dest-hash\"",
            ))
        }
        "dest-hash" => return Ok((Routes::build(topo, seed, |_| true).destination_lft(topo), None, None)),
        name => name,
    };
    let engine: Engine =
        name.parse().map_err(|e: String| c.err("infiniband.routing", format!("{e}, or \"dest-hash\" (shortest paths hashed by destination, no SM)")))?;
    let cfg = SmConfig { engine, ..Default::default() };
    let mut mgr = match layout {
        Some(l) => SubnetManager::with_layout(topo.clone(), l.clone(), cfg.clone()),
        None => SubnetManager::new(topo, cfg.clone()),
    };
    mgr.agents.data_vls = r.data_vls;
    let res = mgr.bring_up();
    if let Some(why) = &res.fallback {
        notes.push(format!("subnet manager: {name} could not route this fabric ({why}); fell back to minhop, as OpenSM does"));
    }
    notes.push(format!(
        "subnet manager: {} on {} nodes and {} links, {} SMPs, bring-up {} (simulated)",
        res.engine,
        res.nodes,
        res.links,
        res.smps.total(),
        res.total
    ));
    let groups = ar.then(|| mgr.ar_table()).flatten();
    if let Some(g) = &groups {
        notes.push(format!(
            "adaptive routing: {} AR group entries with an alternative port; {} minimum-hop ports left out to keep the channel dependency graph acyclic",
            g.alternatives(),
            g.restricted
        ));
    }
    Ok((mgr.lft().clone(), Some(cfg), groups))
}

/// Brings the fabric up with a subnet manager: discovery, LIDs, routing, LFTs.
pub fn sm_bring_up(topo: &Topology, layout: Option<&IbLayout>, cfg: &SmConfig, data_vls: u8) -> SubnetManager {
    let mut sm = match layout {
        Some(l) => SubnetManager::with_layout(topo.clone(), l.clone(), cfg.clone()),
        None => SubnetManager::new(topo, cfg.clone()),
    };
    sm.agents.data_vls = data_vls;
    sm.bring_up();
    sm
}

/// dfsssp hands every path its SL (path records): each flow takes the SL the subnet
/// manager assigned to its (source, destination).
pub(crate) fn path_sls(topo: &Topology, layout: Option<&IbLayout>, sm: &SmConfig, data_vls: u8, flows: &mut FlowList) {
    let mgr = sm_bring_up(topo, layout, sm, data_vls);
    flows.set_path_sls(&|src, dst| mgr.path_sl(src, dst));
}

/// The InfiniBand-only settings: SL→VL tables, VL buffers, lifetimes, VL stall, IB CC.
fn settings(c: &Ctx, r: &IbSection, topo: &Topology, sl_to_vl: [u8; 16], vl_buffer_blocks: u32) -> Result<Ib, ConfigError> {
    let (sl_to_vl_ports, sl_to_vl_hca) = port_tables(c, r, topo, &sl_to_vl)?;
    Ok(Ib {
        grh: r.grh,
        sl_to_vl,
        sl_to_vl_ports,
        sl_to_vl_hca,
        data_vls: r.data_vls,
        vl_buffer_blocks,
        hoq_lifetime: lifetime(c, "infiniband.hoq_lifetime", &r.hoq_lifetime)?,
        leaf_hoq_lifetime: match r.leaf_hoq_lifetime.as_deref().unwrap_or(&r.hoq_lifetime) {
            "auto" => Some(model::ib::local_ack_timeout(OPENSM_LEAF_HOQ_EXP)),
            v => lifetime(c, "infiniband.leaf_hoq_lifetime", v)?,
        },
        vl_stall_count: match r.vl_stall_count {
            None => 7,
            Some(n @ 1..=7) => n,
            Some(n) => return Err(c.err("infiniband.vl_stall_count", format!("{n}: PortInfo:VLStallCount is 3 bits, expected 1..7"))),
        },
        switch_lifetime: lifetime(c, "infiniband.switch_lifetime", &r.switch_lifetime)?,
        routing: r.routing.clone(),
        cc: match &r.congestion_control {
            None => None,
            Some(cc) => Some(congestion_control(c, cc)?),
        },
    })
}

/// The simulator's parameters for an InfiniBand fabric: the Ethernet-side ones are
/// unused, every VL is lossless, the MMU counts 64-byte credit blocks.
fn params(r: &IbSection, sched: [Sched; 8], switch_latency: SimDuration, ib: Ib) -> Params {
    Params {
        tech: Tech::Infiniband,
        mtu: r.mtu,
        // The Ethernet-side fields are unused on InfiniBand.
        encap: Encap { vlan: false, ipv6: false },
        dscp_to_tc: [0; 64],
        tc_to_pg: [0; 8],
        // Every VL is lossless by design: any discard counts as a lossless-class drop.
        lossless: [true; 8],
        ecn: [None; 8],
        ecn_marking: EcnMarking::Enqueue,
        sched,
        cnp_dscp: 0,
        pfc: Pfc { enabled: false, quanta: 0, refresh: None, response: None, watchdog: None },
        dcqcn: None,
        ack_every: r.ack_every,
        rto: model::ib::local_ack_timeout(r.timeout),
        retry_cnt: r.retry_cnt,
        forwarding: r.forwarding,
        switch_latency,
        buffer: Buffer {
            cell: Bytes(model::ib::BLOCK),
            total_cells: 0,
            dynamic_th: 0,
            reserved_cells: 0,
            headroom_cells: None,
            trigger: Trigger::Dynamic,
            resume: Resume::Offset(0),
            shared_headroom_pool: None,
        },
        ib: Some(ib),
        deadlock_timeout: SimDuration::ZERO,
        load_balancing: fabric::params::LoadBalancing::Ecmp,
        ooo: None,
    }
}

/// IB congestion control (Annex A10) from `[infiniband.congestion_control]`: every value
/// explicit, the CCT linear.
fn congestion_control(c: &Ctx, cc: &IbCcCfg) -> Result<IbCcParams, ConfigError> {
    let f = "infiniband.congestion_control";
    if cc.marking_rate == 0 {
        return Err(c.err(&format!("{f}.marking_rate"), "expected at least 1 (mark one in every n eligible packets)"));
    }
    if !(1..=16384).contains(&cc.cct_entries) {
        return Err(c.err(&format!("{f}.cct_entries"), "expected 1..16384 entries"));
    }
    if !(cc.cct_step.is_finite() && cc.cct_step >= 0.0) {
        return Err(c.err(&format!("{f}.cct_step"), "expected a non-negative delay factor"));
    }
    if cc.ccti_min >= cc.cct_entries {
        return Err(c.err(&format!("{f}.ccti_min"), "must be below cct_entries"));
    }
    if cc.ccti_timer.ps() == 0 {
        return Err(c.err(&format!("{f}.ccti_timer"), "expected a positive time"));
    }
    Ok(IbCcParams {
        threshold_bytes: cc.threshold.0,
        marking_rate: cc.marking_rate,
        packet_size_bytes: cc.packet_size.0,
        mark_victims: cc.mark_victims,
        ccti_increase: cc.ccti_increase,
        ccti_min: cc.ccti_min,
        ccti_timer: cc.ccti_timer,
        cct: (0..cc.cct_entries).map(|i| i as f64 * cc.cct_step).collect(),
    })
}

/// A lifetime: "auto" (OpenSM's default), "infinite" (`None`), or a time.
fn lifetime(c: &Ctx, field: &str, v: &str) -> Result<Option<SimDuration>, ConfigError> {
    match v {
        "auto" => Ok(Some(model::ib::local_ack_timeout(OPENSM_LIFETIME_EXP))),
        "infinite" => Ok(None),
        s => s.parse::<SimDuration>().map(Some).map_err(|e| c.err(field, format!("{e}; expected \"auto\", \"infinite\" or a time"))),
    }
}

type PortTables = (HashMap<(u32, u32), [u8; 16]>, HashMap<u32, [u8; 16]>);

/// The `sl_to_vl_ports` entries as tables keyed by port ids (switch pairs) and endpoints.
fn port_tables(c: &Ctx, r: &IbSection, topo: &Topology, default: &[u8; 16]) -> Result<PortTables, ConfigError> {
    let mut pairs = HashMap::new();
    let mut hcas = HashMap::new();
    for (i, e) in r.sl_to_vl_ports.iter().enumerate() {
        let f = format!("infiniband.sl_to_vl_ports[{i}]");
        let Some(ni) = topo.nodes.iter().position(|n| n.name == e.node) else {
            return Err(c.err(&format!("{f}.node"), format!("no node named `{}`", e.node)));
        };
        let node = &topo.nodes[ni];
        let mut map = *default;
        for (k, &vl) in &e.map {
            let sl: u8 =
                k.parse().ok().filter(|&x: &u8| x < 16).ok_or_else(|| c.err(&format!("{f}.map"), format!("key `{k}` is not a service level 0..15")))?;
            if vl >= r.data_vls {
                return Err(c.err(&format!("{f}.map"), format!("SL {sl} maps to VL {vl}, but only VL0..VL{} are operational", r.data_vls - 1)));
            }
            map[sl as usize] = vl;
        }
        match node.kind {
            NodeKind::Nic { ep, .. } | NodeKind::Aggregator { ep, .. } => {
                if e.in_port.is_some() || e.out_port.is_some() {
                    return Err(c.err(&f, format!("`{}` is an HCA: it has one table, give no in_port/out_port", e.node)));
                }
                hcas.insert(ep, map);
            }
            NodeKind::Switch => {
                let ports = |p: Option<u32>, field: &str| -> Result<Vec<u32>, ConfigError> {
                    match p {
                        Some(x) if x < node.nports => Ok(vec![node.first_port + x]),
                        Some(x) => Err(c.err(&format!("{f}.{field}"), format!("`{}` has {}; port {x} does not exist", e.node, ports_of(node.nports)))),
                        None => Ok((node.first_port..node.first_port + node.nports).collect()),
                    }
                };
                for a in ports(e.in_port, "in_port")? {
                    for b in ports(e.out_port, "out_port")? {
                        if a != b {
                            pairs.insert((a, b), map);
                        }
                    }
                }
            }
        }
    }
    Ok((pairs, hcas))
}
