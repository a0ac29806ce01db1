//! The results of a run: a serialisable report, its text rendering and CSV time series.
//!
//! Units are in the field names (`_ps`, `_bytes`, `_gbps`); JSON output is a pure
//! function of the scenario and seed (no wall-clock figures in it).

use serde::Serialize;
use std::fmt::Write as _;

use model::frame::Transport;
use units::{Bytes, SimDuration};

use fabric::params::Params;
use fabric::stats::{Stats, DROP_CAUSES};
use fabric::timing;
use scenario::World;

#[derive(Serialize, Debug, Clone)]
pub struct Report {
    pub scenario: String,
    pub seed: u64,
    pub fabric: fabric::params::Tech,
    pub settings: Settings,
    pub end_ps: u64,
    pub events: u64,
    pub flows: FlowSummary,
    /// The same figures for each `[[traffic]]` entry (background vs. foreground traffic).
    pub traffic: Vec<GroupSummary>,
    pub totals: Totals,
    pub ports: Vec<PortReport>,
    pub nics: Vec<NicReport>,
    pub flow_records: Vec<FlowReport>,
    /// Collective jobs, reported as nccl-tests does.
    pub collectives: Vec<CollectiveReport>,
    pub victims: VictimSummary,
    /// Faults and what followed them: the incident timeline, PFC watchdog storms, the
    /// RC transport's recovery, deadlock.
    pub incidents: Incidents,
    pub notes: Vec<String>,
}

/// What went wrong and when, with ports named "node:port".
#[derive(Serialize, Debug, Default, Clone)]
pub struct Incidents {
    /// In time order.
    pub timeline: Vec<TimelineEntry>,
    pub storms: Vec<StormReport>,
    /// Per fault (its start): the RC transport's recovery of what it lost.
    pub recovery: Vec<RecoveryReport>,
    /// The deadlock's cycle, hop by hop (empty: none).
    pub deadlock_cycle: Vec<CycleHop>,
    /// (port, class) queues still paused (RoCE) when the run ended.
    pub paused_at_end: Vec<String>,
}

impl Incidents {
    /// From a fault to the last QP that lost data after it delivering past its loss, the
    /// worst over the faults (`None`: no fault cost data, or none was recovered).
    pub fn worst_recovery_ps(&self) -> Option<u64> {
        self.recovery.iter().filter_map(|x| x.recovery_ps).max()
    }
}

#[derive(Serialize, Debug, Clone)]
pub struct TimelineEntry {
    pub t_ps: u64,
    pub event: &'static str,
    pub port: Option<String>,
    pub class: Option<u8>,
    pub detail: String,
}

#[derive(Serialize, Debug, Clone)]
pub struct StormReport {
    pub port: String,
    pub priority: u8,
    pub paused_from_ps: u64,
    pub detected_ps: u64,
    pub restored_ps: Option<u64>,
    pub dropped_pkts: u64,
    pub dropped_bytes: u64,
}

#[derive(Serialize, Debug, Clone)]
pub struct RecoveryReport {
    pub fault: String,
    pub at_ps: u64,
    /// QPs that lost data between this fault and the next one.
    pub qps_with_loss: usize,
    pub qps_recovered: usize,
    /// From the fault to the last of those QPs delivering, in order, past what it lost
    /// (`None` when none did).
    pub recovery_ps: Option<u64>,
}

/// One hop of a deadlock cycle: an egress queue blocked by the next hop's buffer.
#[derive(Serialize, Debug, Clone)]
pub struct CycleHop {
    /// Switch egress port ("node:port") and the switch it feeds.
    pub port: String,
    pub towards: String,
    /// Priority (RoCE) or VL (IB).
    pub class: u8,
}

/// Flows hurt by link-level flow control they did not cause. A port is *blocked* when it
/// spent time paused by PFC (RoCE) or waiting for credits (IB PortXmitWait). A
/// *congestion root* is a switch egress that built a standing queue (at least four
/// maximum frames) without ever being blocked itself: it is slow because its own link is
/// full, not because something downstream stopped it. A flow that crosses a root
/// *contributes* to the congestion; a flow that crosses a blocked port but no root is a
/// *victim* (PFC's head-of-line blocking, Guo et al., "RDMA over Commodity Ethernet at
/// Scale", SIGCOMM 2016, §4; IB's congestion spreading, IBTA Vol. 1 Annex A10.1).
#[derive(Serialize, Debug, Default, Clone)]
pub struct VictimSummary {
    pub blocked_ports: usize,
    pub congestion_roots: Vec<String>,
    pub contributors: usize,
    pub victims: usize,
    /// Flow indices of the victims (their `flow_records`).
    pub victim_flows: Vec<u32>,
    pub victim_slowdown_p50: f64,
    pub victim_slowdown_max: f64,
}

/// One collective job's result in nccl-tests' terms (nccl-tests `doc/PERFORMANCE.md`):
/// time per iteration, algbw = S / t and busbw = algbw × `bus_factor`, in GB/s = 10^9 B/s.
#[derive(Serialize, Debug, Clone)]
pub struct CollectiveReport {
    pub op: String,
    pub algorithm: String,
    pub ranks: u32,
    pub size_bytes: u64,
    pub channels: u32,
    pub chunk_bytes: u64,
    /// Each iteration's time, from its start (the job's start or the previous iteration's
    /// end) to the moment every rank has all its data; `None` if it never finished.
    pub iteration_ps: Vec<Option<u64>>,
    /// Mean over the completed iterations.
    pub time_ps: Option<u64>,
    pub algbw_gbs: f64,
    pub busbw_gbs: f64,
    /// nccl-tests' factor for the operation, whatever the algorithm: all-reduce is
    /// 2(n−1)/n for ring, tree and SHARP alike (nccl-tests `src/all_reduce.cu`,
    /// `AllReduceGetBw`, applies it to every NCCL algorithm, CollNet and NVLS included;
    /// nccl-tests issue #279 asks about exactly this). NCCL's own tuning model converts
    /// bus to algorithm bandwidth per algorithm (`src/graph/tuning.cc`: ring n/(2(n−1)),
    /// NVLS 5/6, tree and CollNet 1/2); no (n−1)/(n+1) factor appears in either.
    pub bus_factor: f64,
    /// The most busbw can be, in GB/s: ring and tree, the slowest rank NIC's line rate ×
    /// payload/wire bytes of a full path-MTU packet (the link payload rate); SHARP, that
    /// rate × `bus_factor` (each rank's link carries S once each way, so algbw itself is
    /// bounded by the link payload rate).
    pub busbw_bound_gbs: f64,
    /// The most algbw can be: `busbw_bound_gbs / bus_factor`.
    pub algbw_bound_gbs: f64,
    /// Bandwidth the busiest rank link carried in one direction, in GB/s: algbw × (bytes
    /// a rank sends or receives per iteration, at most) / S. Equals busbw for ring; for
    /// SHARP it is algbw (the figure to hold against the link rate).
    pub link_gbs: f64,
}

#[derive(Serialize, Debug, Clone)]
pub struct Settings {
    pub mtu_bytes: u64,
    pub forwarding: fabric::params::Forwarding,
    pub dcqcn: Option<String>,
    pub pfc: bool,
    pub buffer_bytes: u64,
    pub cell_bytes: u64,
    pub switch_latency_ps: u64,
    pub infiniband: Option<IbSettings>,
}

#[derive(Serialize, Debug, Clone)]
pub struct IbSettings {
    pub data_vls: u8,
    pub vl_buffer_bytes: u64,
    pub routing: String,
    pub hoq_lifetime_ps: Option<u64>,
    /// On switch ports that drive a CA.
    pub leaf_hoq_lifetime_ps: Option<u64>,
    pub switch_lifetime_ps: Option<u64>,
    pub grh: bool,
    /// Stated plainly: fabriclab does not model NVIDIA's adaptive routing; IB packets
    /// follow the subnet manager's static tables.
    pub adaptive_routing: bool,
}

#[derive(Serialize, Debug, Default, Clone)]
pub struct FlowSummary {
    pub count: usize,
    pub completed: usize,
    pub failed: usize,
    pub fct_p50_ps: u64,
    pub fct_p99_ps: u64,
    pub fct_max_ps: u64,
    pub slowdown_p50: f64,
    pub slowdown_p99: f64,
    pub slowdown_max: f64,
    /// Payload delivered / time from first start to last finish.
    pub goodput_gbps: f64,
}

/// Completion figures of one `[[traffic]]` entry.
#[derive(Serialize, Debug, Default, Clone)]
pub struct GroupSummary {
    pub traffic: usize,
    pub kind: String,
    pub flows: usize,
    pub completed: usize,
    pub failed: usize,
    pub fct_p50_ps: u64,
    pub fct_p99_ps: u64,
    pub slowdown_p50: f64,
    pub slowdown_p99: f64,
}

#[derive(Serialize, Debug, Default, Clone)]
pub struct Totals {
    pub pfc_frames: u64,
    pub ecn_marks: u64,
    pub drops: u64,
    pub lossless_drops: u64,
    pub drops_by_cause: Vec<(String, u64)>,
    pub cnps: u64,
    pub retransmitted_bytes: u64,
    pub timeouts: u64,
    /// IB: PortXmitWait summed over ports, and flow-control packets.
    pub xmit_wait_ps: u64,
    pub fcp_frames: u64,
    /// A deadlock the watchdog found (the run stopped there).
    pub deadlock: Option<fabric::stats::Deadlock>,
    /// Faults and the control plane's reaction: (fault time, timed steps), and when new
    /// forwarding state took effect.
    pub reroutes: Vec<(u64, Vec<fabric::stats::ControlStep>)>,
    pub reroutes_installed_ps: Vec<u64>,
}

#[derive(Serialize, Debug, Clone)]
pub struct PortReport {
    pub node: String,
    pub port: u32,
    pub peer: String,
    pub speed_gbps: f64,
    pub tx_bytes: u64,
    pub utilisation: f64,
    pub max_queue_bytes: u64,
    pub mean_queue_bytes: f64,
    pub pfc_tx: [u64; 8],
    pub pfc_rx: [u64; 8],
    pub paused_ps: [u64; 8],
    pub ecn_marks: u64,
    pub drops: Vec<(String, u64)>,
    pub headroom_cells: u64,
    pub peak_headroom_cells: u64,
    /// IB: PortXmitWait (time with data but no credits) and flow-control packets sent.
    pub xmit_wait_ps: u64,
    pub fcp_tx: u64,
    /// IB: peak blocks (64 B) held in this port's input VL buffers.
    pub peak_vl_blocks: u32,
}

#[derive(Serialize, Debug, Clone)]
pub struct NicReport {
    pub name: String,
    pub cnp_tx: u64,
    pub cnp_rx: u64,
    pub ce_rx: u64,
    pub retransmitted_bytes: u64,
    pub naks: u64,
    pub timeouts: u64,
}

#[derive(Serialize, Debug, Clone)]
pub struct FlowReport {
    /// Index among the scenario's flows.
    pub flow: u32,
    pub src: String,
    pub dst: String,
    pub size_bytes: u64,
    pub start_ps: u64,
    pub fct_ps: Option<u64>,
    pub ideal_ps: u64,
    pub slowdown: Option<f64>,
    pub failed: bool,
}

/// Nearest-rank percentile `q` of an ascending slice (zero when empty).
fn pct<T: Copy + Default>(sorted: &[T], q: f64) -> T {
    if sorted.is_empty() {
        return T::default();
    }
    let i = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

pub fn build(w: &World, st: &Stats) -> Report {
    let t = &w.topo;
    let name = |ep: u32| t.node(t.endpoints[ep as usize]).name.clone();
    let mut flow_records = vec![];
    let mut fcts = vec![];
    let mut slow = vec![];
    let (mut first, mut lastf, mut bytes) = (u64::MAX, 0u64, 0u64);
    for (fi, f) in st.flows.iter().enumerate() {
        if f.join {
            continue;
        }
        // Slowdown's reference: the message alone on the path its first packet took.
        let ideal = st.flow_paths[fi].as_ref().map_or(0, |path| timing::ideal_fct(&w.topo, &w.params, path, Bytes(f.size)).ps());
        let fct = f.finish.map(|e| e - f.start);
        let sd = fct.map(|x| if ideal > 0 { x as f64 / ideal as f64 } else { 0.0 });
        if let (Some(x), Some(s)) = (fct, sd) {
            fcts.push(x);
            slow.push(s);
            first = first.min(f.start);
            lastf = lastf.max(f.start + x);
            bytes += f.size;
        }
        flow_records.push(FlowReport {
            flow: fi as u32,
            src: name(f.src),
            dst: name(f.dst),
            size_bytes: f.size,
            start_ps: f.start,
            fct_ps: fct,
            ideal_ps: ideal,
            slowdown: sd,
            failed: f.failed,
        });
    }
    let traffic = w
        .traffic_kinds
        .iter()
        .enumerate()
        .map(|(g, kind)| {
            let mine: Vec<&FlowReport> = flow_records.iter().filter(|r| w.flows[r.flow as usize].group == g as u32).collect();
            let mut f: Vec<u64> = mine.iter().filter_map(|r| r.fct_ps).collect();
            let mut sd: Vec<f64> = mine.iter().filter_map(|r| r.slowdown).collect();
            f.sort_unstable();
            sd.sort_by(|a, b| a.total_cmp(b));
            GroupSummary {
                traffic: g,
                kind: kind.clone(),
                flows: mine.len(),
                completed: f.len(),
                failed: mine.iter().filter(|r| r.failed).count(),
                fct_p50_ps: pct(&f, 0.5),
                fct_p99_ps: pct(&f, 0.99),
                slowdown_p50: pct(&sd, 0.5),
                slowdown_p99: pct(&sd, 0.99),
            }
        })
        .collect();
    fcts.sort_unstable();
    slow.sort_by(|a, b| a.total_cmp(b));
    let flows = FlowSummary {
        count: st.flows.iter().filter(|f| !f.join).count(),
        completed: fcts.len(),
        failed: st.flows.iter().filter(|f| f.failed && !f.join).count(),
        fct_p50_ps: pct(&fcts, 0.5),
        fct_p99_ps: pct(&fcts, 0.99),
        fct_max_ps: fcts.last().copied().unwrap_or(0),
        slowdown_p50: pct(&slow, 0.5),
        slowdown_p99: pct(&slow, 0.99),
        slowdown_max: slow.last().copied().unwrap_or(0.0),
        goodput_gbps: if lastf > first { bytes as f64 * 8.0 / ((lastf - first) as f64 / 1e12) / 1e9 } else { 0.0 },
    };
    let mut totals = Totals::default();
    let mut by_cause = [0u64; DROP_CAUSES.len()];
    let mut ports = vec![];
    for (pi, ps) in st.ports.iter().enumerate() {
        let p = &t.ports[pi];
        totals.pfc_frames += ps.pfc_tx.iter().sum::<u64>();
        totals.ecn_marks += ps.ecn_marked;
        totals.drops += ps.drops.iter().sum::<u64>();
        totals.lossless_drops += ps.lossless_drops;
        for (c, n) in by_cause.iter_mut().enumerate() {
            *n += ps.drops[c];
        }
        totals.xmit_wait_ps += ps.xmit_wait_ps;
        totals.fcp_frames += ps.fcp_tx;
        if ps.tx_frames == 0 && ps.pfc_rx.iter().all(|&x| x == 0) && ps.drops.iter().all(|&x| x == 0) {
            continue;
        }
        let peer = p.peer.map(|q| t.port_name(q));
        ports.push(PortReport {
            node: t.node(p.node).name.clone(),
            port: p.index,
            peer: peer.unwrap_or_default(),
            speed_gbps: p.rate.as_gbps_f64(),
            tx_bytes: ps.tx_bytes,
            utilisation: if st.end > 0 { ps.busy_ps as f64 / st.end as f64 } else { 0.0 },
            max_queue_bytes: ps.max_queue,
            mean_queue_bytes: if st.end > 0 { ps.queue_area as f64 / st.end as f64 } else { 0.0 },
            pfc_tx: ps.pfc_tx,
            pfc_rx: ps.pfc_rx,
            paused_ps: ps.paused_ps,
            ecn_marks: ps.ecn_marked,
            drops: DROP_CAUSES.iter().filter(|&&c| ps.drops[c as usize] > 0).map(|&c| (cause_name(c), ps.drops[c as usize])).collect(),
            headroom_cells: ps.headroom_cap_cells,
            peak_headroom_cells: ps.peak_headroom_cells,
            xmit_wait_ps: ps.xmit_wait_ps,
            fcp_tx: ps.fcp_tx,
            peak_vl_blocks: ps.peak_vl_blocks,
        });
    }
    totals.drops_by_cause = DROP_CAUSES.iter().map(|&c| (cause_name(c), by_cause[c as usize])).collect();
    totals.deadlock = st.deadlock.clone();
    let incidents = incidents(w, st);
    totals.reroutes = st.reroute_steps.clone();
    totals.reroutes_installed_ps = st.reroutes.clone();
    let mut nics = vec![];
    for (ep, ns) in st.nics.iter().enumerate() {
        totals.cnps += ns.cnp_tx;
        totals.retransmitted_bytes += ns.retx_bytes;
        totals.timeouts += ns.timeouts;
        nics.push(NicReport {
            name: name(ep as u32),
            cnp_tx: ns.cnp_tx,
            cnp_rx: ns.cnp_rx,
            ce_rx: ns.ce_rx,
            retransmitted_bytes: ns.retx_bytes,
            naks: ns.nak_tx,
            timeouts: ns.timeouts,
        });
    }
    let p = &w.params;
    let victims = victims(w, st, &flow_records);
    Report {
        scenario: w.name.clone(),
        seed: w.seed,
        fabric: p.tech,
        settings: Settings {
            mtu_bytes: p.mtu.0,
            forwarding: p.forwarding,
            dcqcn: p.dcqcn.as_ref().map(|(n, _)| n.clone()),
            pfc: p.pfc.enabled,
            buffer_bytes: p.buffer.total_cells * p.buffer.cell.0,
            cell_bytes: p.buffer.cell.0,
            switch_latency_ps: p.switch_latency.ps(),
            infiniband: p.ib.as_ref().map(|ib| IbSettings {
                data_vls: ib.data_vls,
                vl_buffer_bytes: ib.vl_buffer_blocks as u64 * model::ib::BLOCK,
                routing: ib.routing.clone(),
                hoq_lifetime_ps: ib.hoq_lifetime.map(|d| d.ps()),
                leaf_hoq_lifetime_ps: ib.leaf_hoq_lifetime.map(|d| d.ps()),
                switch_lifetime_ps: ib.switch_lifetime.map(|d| d.ps()),
                grh: ib.grh,
                adaptive_routing: false,
            }),
        },
        end_ps: st.end,
        events: st.events,
        flows,
        traffic,
        totals,
        ports,
        nics,
        flow_records,
        collectives: collectives(w, st),
        victims,
        incidents,
        notes: w.notes.clone(),
    }
}

/// "node:port" of a simulator port.
fn port_name(w: &World, p: u32) -> String {
    w.topo.port_name(fabric::topology::PortId(p))
}

fn incidents(w: &World, st: &Stats) -> Incidents {
    let mut timeline: Vec<TimelineEntry> = st
        .timeline
        .iter()
        .map(|i| TimelineEntry { t_ps: i.t_ps, event: i.event, port: i.port.map(|p| port_name(w, p)), class: i.class, detail: i.detail.clone() })
        .collect();
    let storms = st
        .storms
        .iter()
        .map(|x| StormReport {
            port: port_name(w, x.port),
            priority: x.priority,
            paused_from_ps: x.paused_from_ps,
            detected_ps: x.detected_ps,
            restored_ps: x.restored_ps,
            dropped_pkts: x.dropped_pkts,
            dropped_bytes: x.dropped_bytes,
        })
        .collect();
    let starts: Vec<&fabric::sim::Fault> = w.faults.iter().filter(|f| !f.ends).collect();
    let mut recovery = vec![];
    for (k, f) in starts.iter().enumerate() {
        let from = f.at.0;
        let to = starts.iter().skip(k + 1).map(|g| g.at.0).filter(|&t| t > from).min().unwrap_or(u64::MAX);
        let within = |t: u64| t >= from && t < to;
        let rec: Vec<u64> = st.recoveries.iter().filter(|r| within(r.1)).map(|r| r.2).collect();
        let unrec = st.unrecovered.iter().filter(|u| within(u.1)).count();
        recovery.push(RecoveryReport {
            fault: f.label.clone(),
            at_ps: from,
            qps_with_loss: rec.len() + unrec,
            qps_recovered: rec.len(),
            recovery_ps: rec.iter().max().map(|&t| t - from),
        });
    }
    for x in &recovery {
        if let Some(t) = x.recovery_ps {
            timeline.push(TimelineEntry {
                t_ps: x.at_ps + t,
                event: "traffic-recovered",
                port: None,
                class: None,
                detail: format!("the last of {} QPs that lost data after `{}` delivers past its loss", x.qps_recovered, x.fault),
            });
        }
    }
    // Stable: entries at the same time keep the order the simulator recorded them in.
    timeline.sort_by_key(|e| e.t_ps);
    let deadlock_cycle = st
        .deadlock
        .as_ref()
        .map(|d| {
            d.cycle
                .iter()
                .map(|&(p, c)| {
                    let peer = w.topo.ports[p as usize].peer.map(|q| w.topo.node(w.topo.ports[q.0 as usize].node).name.clone());
                    CycleHop { port: port_name(w, p), towards: peer.unwrap_or_default(), class: c }
                })
                .collect()
        })
        .unwrap_or_default();
    let paused_at_end = st.paused_at_end.iter().map(|&(p, c)| format!("{} priority {c}", port_name(w, p))).collect();
    Incidents { timeline, storms, recovery, deadlock_cycle, paused_at_end }
}

fn victims(w: &World, st: &Stats, records: &[FlowReport]) -> VictimSummary {
    let t = &w.topo;
    let blocked: Vec<bool> = st.ports.iter().map(|p| p.paused_ps.iter().any(|&x| x > 0) || p.xmit_wait_ps > 0).collect();
    let max_frame = timing::frame_of(&w.params, Transport::WriteFirst, w.params.mtu).0;
    // Paths first: a port crossed by a single flow builds a queue only from a speed
    // change (e.g. a backlog leaving a 400G link into a 100G one) and harms no one else.
    let paths: Vec<Option<Vec<fabric::topology::PortId>>> = records.iter().map(|r| st.flow_paths[r.flow as usize].clone()).collect();
    let mut crossing = vec![0u32; st.ports.len()];
    for p in paths.iter().flatten() {
        for q in p {
            crossing[q.0 as usize] += 1;
        }
    }
    // A root: a standing queue shared by several flows at an unblocked switch egress, or a
    // switch egress paused by the host NIC it feeds (the NIC is where that back-pressure
    // starts: a slow or stuck receiver).
    let by_nic = |pi: usize| t.ports[pi].peer.is_some_and(|q| !t.is_switch(t.ports[q.0 as usize].node));
    let root: Vec<bool> = (0..st.ports.len())
        .map(|pi| {
            t.is_switch(t.ports[pi].node) && ((!blocked[pi] && st.ports[pi].max_queue >= 4 * max_frame && crossing[pi] >= 2) || (blocked[pi] && by_nic(pi)))
        })
        .collect();
    let mut out = VictimSummary {
        blocked_ports: blocked.iter().filter(|&&b| b).count(),
        congestion_roots: (0..root.len()).filter(|&pi| root[pi]).map(|pi| t.port_name(fabric::topology::PortId(pi as u32))).collect(),
        ..VictimSummary::default()
    };
    let mut slow = vec![];
    for (r, path) in records.iter().zip(&paths) {
        let Some(path) = path else { continue };
        if path.iter().any(|p| root[p.0 as usize]) {
            out.contributors += 1;
        } else if path.iter().any(|p| blocked[p.0 as usize]) {
            out.victims += 1;
            out.victim_flows.push(r.flow);
            if let Some(s) = r.slowdown {
                slow.push(s);
            }
        }
    }
    slow.sort_by(|a, b| a.total_cmp(b));
    out.victim_slowdown_p50 = pct(&slow, 0.5);
    out.victim_slowdown_max = slow.last().copied().unwrap_or(0.0);
    out
}

/// Payload efficiency of the data path: path-MTU payload over the wire bytes of a full
/// RDMA WRITE middle packet (headers, trailers, preamble, IFG or IB framing).
pub fn payload_efficiency(p: &Params) -> f64 {
    let wire = timing::wire_of(p.tech, timing::frame_of(p, Transport::WriteRest, p.mtu));
    p.mtu.0 as f64 / wire.0 as f64
}

fn collectives(w: &World, st: &Stats) -> Vec<CollectiveReport> {
    let eff = payload_efficiency(&w.params);
    w.jobs
        .iter()
        .map(|j| {
            let mut from = Some(j.start.0);
            let iteration_ps: Vec<Option<u64>> = j
                .iteration_ends
                .iter()
                .map(|&e| {
                    let end = st.flows[e as usize].delivered;
                    let t = match (from, end) {
                        (Some(a), Some(b)) => Some(b - a),
                        _ => None,
                    };
                    from = end;
                    t
                })
                .collect();
            let done: Vec<u64> = iteration_ps.iter().flatten().copied().collect();
            let time_ps = (!done.is_empty()).then(|| done.iter().sum::<u64>() / done.len() as u64);
            let row = time_ps.map(|t| workload::NcclRow::new(j.op, j.ranks, j.size, t));
            let slowest = j.endpoints.iter().map(|&ep| w.topo.port(w.topo.ep_port(ep)).rate.0).min().unwrap_or(0);
            let factor = workload::bus_factor(j.op, j.ranks);
            let link_rate = slowest as f64 * eff / 8e9;
            let busbw_bound_gbs = if j.algorithm == workload::Algorithm::Sharp { link_rate * factor } else { link_rate };
            let algbw_gbs = row.as_ref().map_or(0.0, |r| r.algbw_gbs);
            CollectiveReport {
                op: j.op.name().into(),
                algorithm: j.algorithm.name().into(),
                ranks: j.ranks,
                size_bytes: j.size,
                channels: j.channels,
                chunk_bytes: j.chunk,
                iteration_ps,
                time_ps,
                algbw_gbs,
                busbw_gbs: row.as_ref().map_or(0.0, |r| r.busbw_gbs),
                bus_factor: factor,
                busbw_bound_gbs,
                algbw_bound_gbs: if factor > 0.0 { busbw_bound_gbs / factor } else { 0.0 },
                link_gbs: if j.size > 0 { algbw_gbs * j.rank_link_bytes as f64 / j.size as f64 } else { 0.0 },
            }
        })
        .collect()
}

fn cause_name(c: fabric::stats::DropCause) -> String {
    serde_json::to_value(c).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

fn d(ps: u64) -> String {
    format!("{:.3}", SimDuration(ps))
}

/// The readable summary printed by `fabriclab run`.
pub fn text(r: &Report) -> String {
    let mut s = String::new();
    let tech = match r.fabric {
        fabric::params::Tech::Roce => "RoCEv2",
        fabric::params::Tech::Infiniband => "InfiniBand",
    };
    let _ = writeln!(s, "scenario {}  (seed {}, fabric {tech})", r.scenario, r.seed);
    let st = &r.settings;
    match &st.infiniband {
        None => {
            let _ = writeln!(
                s,
                "settings: MTU {} B, {:?}, switch latency {}, PFC {}, DCQCN {}, buffer {} in {} B cells",
                st.mtu_bytes,
                st.forwarding,
                d(st.switch_latency_ps),
                if st.pfc { "on" } else { "off" },
                st.dcqcn.as_deref().unwrap_or("off"),
                Bytes(st.buffer_bytes),
                st.cell_bytes
            );
        }
        Some(ib) => {
            let life = |x: Option<u64>| x.map(d).unwrap_or_else(|| "infinite".into());
            let _ = writeln!(
                s,
                "settings: MTU {} B, {:?}, switch latency {}, {} data VL(s) x {} input buffer, routing {}, HOQ lifetime {} ({} towards CAs), switch lifetime {}, adaptive routing not modelled",
                st.mtu_bytes,
                st.forwarding,
                d(st.switch_latency_ps),
                ib.data_vls,
                Bytes(ib.vl_buffer_bytes),
                ib.routing,
                life(ib.hoq_lifetime_ps),
                life(ib.leaf_hoq_lifetime_ps),
                life(ib.switch_lifetime_ps)
            );
        }
    }
    let _ = writeln!(s, "simulated {} in {} events", d(r.end_ps), r.events);
    let f = &r.flows;
    let _ = writeln!(s, "\nflows: {} of {} completed, {} failed", f.completed, f.count, f.failed);
    let _ = writeln!(s, "  completion time  p50 {}  p99 {}  max {}", d(f.fct_p50_ps), d(f.fct_p99_ps), d(f.fct_max_ps));
    let _ = writeln!(s, "  slowdown         p50 {:.3}  p99 {:.3}  max {:.3}", f.slowdown_p50, f.slowdown_p99, f.slowdown_max);
    let _ = writeln!(s, "  goodput          {:.2} Gb/s", f.goodput_gbps);
    if r.traffic.len() > 1 {
        for g in &r.traffic {
            let _ = writeln!(
                s,
                "  traffic[{}] {:<34} {:>6} flows  completion p50 {}  p99 {}  slowdown p50 {:.3}  p99 {:.3}",
                g.traffic,
                g.kind,
                g.flows,
                d(g.fct_p50_ps),
                d(g.fct_p99_ps),
                g.slowdown_p50,
                g.slowdown_p99
            );
        }
    }
    if !r.collectives.is_empty() {
        let _ = writeln!(s, "\ncollectives (nccl-tests: GB/s = 10^9 B/s; time = mean per iteration)");
        let _ = writeln!(
            s,
            "  {:<15} {:<5} {:>5} {:>14} {:>5} {:>12} {:>9} {:>9} {:>7} {:>9}",
            "op", "algo", "ranks", "size (B)", "iters", "time (us)", "algbw", "busbw", "factor", "bound"
        );
        for c in &r.collectives {
            let time = c.time_ps.map_or("unfinished".to_string(), |t| format!("{:.2}", t as f64 / 1e6));
            let _ = writeln!(
                s,
                "  {:<15} {:<5} {:>5} {:>14} {:>5} {:>12} {:>9.2} {:>9.2} {:>7.4} {:>9.2}",
                c.op,
                c.algorithm,
                c.ranks,
                c.size_bytes,
                c.iteration_ps.len(),
                time,
                c.algbw_gbs,
                c.busbw_gbs,
                c.bus_factor,
                c.busbw_bound_gbs
            );
        }
        if let Some(c) = r.collectives.iter().find(|c| c.algorithm == "sharp") {
            let _ = writeln!(
                s,
                "  sharp rows: busbw = algbw x 2(n-1)/n, nccl-tests' all-reduce factor for every algorithm (src/all_reduce.cu); \
                 each rank's link carries S once each way, so algbw is the link load: bound {:.2} GB/s (link payload rate), busbw bound = that x factor",
                c.algbw_bound_gbs
            );
        }
    }
    let t = &r.totals;
    let _ = writeln!(
        s,
        "\nfabric: {} PFC frames sent, {} ECN marks, {} CNPs, {} drops ({} in lossless classes), {} B retransmitted, {} timeouts",
        t.pfc_frames, t.ecn_marks, t.cnps, t.drops, t.lossless_drops, t.retransmitted_bytes, t.timeouts
    );
    if st.infiniband.is_some() {
        let _ = writeln!(s, "  credits: PortXmitWait {} summed over ports, {} flow-control packets", d(t.xmit_wait_ps), t.fcp_frames);
    }
    for (c, n) in &t.drops_by_cause {
        if *n > 0 {
            let _ = writeln!(s, "  drops: {n} {c}");
        }
    }
    for (at, steps) in &t.reroutes {
        let parts: Vec<String> = steps.iter().map(|x| format!("{} {}", x.step, d(x.duration_ps))).collect();
        let _ = writeln!(s, "  fault at {}: control plane {}", d(*at), parts.join(", "));
    }
    if let Some(dl) = &t.deadlock {
        let hops: Vec<String> = r.incidents.deadlock_cycle.iter().map(|h| format!("{} ({})", h.port, h.class)).collect();
        let _ = writeln!(
            s,
            "  DEADLOCK formed at {} (detected {}): a cycle of {} blocked queues: {}",
            d(dl.formed_at_ps),
            d(dl.detected_at_ps),
            dl.cycle.len(),
            hops.join(" -> ")
        );
    }
    let inc = &r.incidents;
    for x in &inc.storms {
        let restored = x.restored_ps.map(d).unwrap_or_else(|| "not restored".into());
        let _ = writeln!(
            s,
            "  PFC storm on {} priority {}: paused from {}, watchdog at {}, restored {}, {} packets ({} B) dropped",
            x.port,
            x.priority,
            d(x.paused_from_ps),
            d(x.detected_ps),
            restored,
            x.dropped_pkts,
            x.dropped_bytes
        );
    }
    for x in inc.recovery.iter().filter(|x| x.qps_with_loss > 0) {
        let rec = x.recovery_ps.map(d).unwrap_or_else(|| "-".into());
        let _ = writeln!(s, "  {} at {}: {} QPs lost data, {} recovered, last {} after the fault", x.fault, d(x.at_ps), x.qps_with_loss, x.qps_recovered, rec);
    }
    if !inc.paused_at_end.is_empty() {
        let _ = writeln!(s, "  still paused at the end: {}", inc.paused_at_end.join(", "));
    }
    if !inc.timeline.is_empty() {
        let _ = writeln!(s, "\nincident timeline");
        const SHOWN: usize = 24;
        for e in inc.timeline.iter().take(SHOWN) {
            let at = e.port.as_deref().map(|p| format!(" {p}")).unwrap_or_default();
            let class = e.class.map(|c| format!(" ({c})")).unwrap_or_default();
            let _ = writeln!(s, "  {:>12}  {:<18}{at}{class}  {}", d(e.t_ps), e.event, e.detail);
        }
        if inc.timeline.len() > SHOWN {
            let _ = writeln!(s, "  ... {} more entries in the JSON report", inc.timeline.len() - SHOWN);
        }
    }
    let ib = st.infiniband.is_some();
    let mut busiest: Vec<&PortReport> = r.ports.iter().filter(|p| p.max_queue_bytes > 0 || p.pfc_tx.iter().any(|&x| x > 0) || p.xmit_wait_ps > 0).collect();
    busiest.sort_by(|a, b| b.max_queue_bytes.cmp(&a.max_queue_bytes).then(a.node.cmp(&b.node)).then(a.port.cmp(&b.port)));
    if !busiest.is_empty() {
        if ib {
            let _ = writeln!(s, "\nbusiest ports (egress queue)            max queue   mean queue  util  XmitWait  peak input");
        } else {
            let _ = writeln!(s, "\nbusiest ports (egress queue)            max queue   mean queue  util   PFC rx  paused   ECN");
        }
        for p in busiest.iter().take(8) {
            let head = format!(
                "  {:<18} -> {:<16} {:>10} {:>12.0} {:>5.1}%",
                format!("{}:{}", p.node, p.port),
                p.peer,
                p.max_queue_bytes,
                p.mean_queue_bytes,
                p.utilisation * 100.0
            );
            if ib {
                let _ = writeln!(s, "{head} {:>9} {:>8} B", d(p.xmit_wait_ps), p.peak_vl_blocks as u64 * model::ib::BLOCK);
            } else {
                let paused: u64 = p.paused_ps.iter().copied().max().unwrap_or(0);
                let _ = writeln!(s, "{head} {:>7} {:>8} {:>5}", p.pfc_rx.iter().sum::<u64>(), d(paused), p.ecn_marks);
            }
        }
    }
    for n in &r.notes {
        let _ = writeln!(s, "note: {n}");
    }
    s
}

/// Writes CSV time series and the pause log into `dir`.
pub fn write_csv(dir: &std::path::Path, w: &World, st: &Stats, r: &Report) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let t = &w.topo;
    // The busiest ports by maximum queue.
    let mut idx: Vec<usize> = (0..st.ports.len()).filter(|&i| st.ports[i].max_queue > 0).collect();
    idx.sort_by(|&a, &b| st.ports[b].max_queue.cmp(&st.ports[a].max_queue).then(a.cmp(&b)));
    idx.truncate(w.top_ports);
    let pname = |i: usize| t.port_name(fabric::topology::PortId(i as u32));
    let mut q = String::from("time_ps");
    for &i in &idx {
        let _ = write!(q, ",{}", pname(i));
    }
    q.push('\n');
    let mut paused = q.clone();
    for smp in &st.samples {
        let _ = write!(q, "{}", smp.t);
        let _ = write!(paused, "{}", smp.t);
        for &i in &idx {
            let _ = write!(q, ",{}", smp.queue[i]);
            let _ = write!(paused, ",{}", smp.paused[i]);
        }
        q.push('\n');
        paused.push('\n');
    }
    std::fs::write(dir.join("queue_bytes.csv"), q)?;
    std::fs::write(dir.join("paused_priorities.csv"), paused)?;
    let mut rates = String::from("time_ps");
    for (i, f) in st.flows.iter().enumerate() {
        let _ = write!(rates, ",qp{i}_{}_{}", f.src, f.dst);
    }
    rates.push('\n');
    for smp in &st.samples {
        let _ = write!(rates, "{}", smp.t);
        for r in &smp.qp_rate {
            let _ = write!(rates, ",{r}");
        }
        rates.push('\n');
    }
    std::fs::write(dir.join("qp_rate_bps.csv"), rates)?;
    let mut log = String::from("time_ps,port,priority,quanta\n");
    for &(tm, port, prio, quanta) in &st.pause_log {
        let _ = writeln!(log, "{tm},{},{prio},{quanta}", pname(port as usize));
    }
    std::fs::write(dir.join("pause_events.csv"), log)?;
    let mut flows = String::from("src,dst,size_bytes,start_ps,fct_ps,ideal_ps,slowdown\n");
    for f in &r.flow_records {
        let _ = writeln!(
            flows,
            "{},{},{},{},{},{},{}",
            f.src,
            f.dst,
            f.size_bytes,
            f.start_ps,
            f.fct_ps.map(|x| x.to_string()).unwrap_or_default(),
            f.ideal_ps,
            f.slowdown.map(|x| format!("{x:.6}")).unwrap_or_default()
        );
    }
    std::fs::write(dir.join("flows.csv"), flows)?;
    // The incident timeline; the detail is quoted (it may hold commas).
    let mut inc = String::from("t_ps,event,port,class,detail\n");
    for e in &r.incidents.timeline {
        let _ = writeln!(
            inc,
            "{},{},{},{},\"{}\"",
            e.t_ps,
            e.event,
            e.port.as_deref().unwrap_or(""),
            e.class.map(|c| c.to_string()).unwrap_or_default(),
            e.detail.replace('"', "\"\"")
        );
    }
    std::fs::write(dir.join("incidents.csv"), inc)?;
    Ok(())
}
