//! Building a [`Report`] from a run's [`Stats`] and the compiled [`World`]: flow
//! completion and slowdown, per-traffic-entry figures, port and NIC counters, collectives
//! in nccl-tests' terms, the incident timeline with the transport's recovery, and the
//! victims of link-level flow control.
//!
//! Owns every figure's definition (percentiles by nearest rank, slowdown against the
//! simulator's own ideal time, congestion roots and victims). Leaves out the physics
//! (`fabric`): the ideal completion time and frame sizes come from `fabric::timing`, so a
//! report never re-derives what the simulator did.

use model::frame::Transport;
use units::Bytes;

use fabric::params::Params;
use fabric::sim::Fault;
use fabric::stats::{DropCause, Stats, DROP_CAUSES};
use fabric::timing;
use fabric::topology::PortId;
use scenario::World;

use crate::flow_records::{FlowRecords, FlowRow};
use crate::types::*;

/// Nearest-rank percentile `q` of an ascending slice (zero when empty).
fn pct<T: Copy + Default>(sorted: &[T], q: f64) -> T {
    if sorted.is_empty() {
        return T::default();
    }
    let i = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

/// The report of a finished run of `w`.
pub fn build(w: &World, st: &Stats) -> Report {
    let flow_records = flow_records(w, st);
    let mut totals = Totals::default();
    let ports = ports(w, st, &mut totals);
    totals.deadlock = st.deadlock.clone();
    totals.reroutes = st.reroute_steps.clone();
    totals.reroutes_installed_ps = st.reroutes.clone();
    let nics = nics(w, st, &mut totals);
    Report {
        scenario: w.name.clone(),
        seed: w.seed,
        fabric: w.params.tech,
        settings: settings(&w.params),
        end_ps: st.end,
        events: st.events,
        flows: flow_summary(st, &flow_records),
        traffic: groups(w, &flow_records),
        totals,
        ports,
        nics,
        collectives: collectives(w, st),
        victims: victims(w, st, &flow_records),
        incidents: incidents(w, st),
        notes: w.notes.clone(),
        flow_records,
        load_balance: crate::balance::load_balance(w, st),
        incomplete: st.cancelled.map(|at_ps| Incomplete { reason: "cancelled".into(), at_ps }),
    }
}

/// Each flow's completion (barriers left out), against the time it would take alone on
/// the path its first packet took.
fn flow_records(w: &World, st: &Stats) -> FlowRecords {
    let t = &w.topo;
    let names: Vec<EndpointName> = t.endpoints.iter().map(|&n| EndpointName::new(&t.node(n).name)).collect();
    let mut flow_records = FlowRecords::new(names, st.flows.iter().filter(|f| !f.join()).count());
    for (fi, f) in st.flows.iter().enumerate() {
        if f.join() {
            continue;
        }
        // Slowdown's reference: the message alone on the path its first packet took.
        let ideal = st.flow_path(fi as u32).map_or(0, |path| timing::ideal_fct(&w.topo, &w.params, path, Bytes(f.size())).ps());
        flow_records.push(FlowRow {
            flow: fi as u32,
            src: f.src,
            dst: f.dst,
            size: f.size(),
            start_ps: f.start,
            fct_ps: f.finish().map(|e| e - f.start),
            ideal_ps: ideal,
            failed: f.failed(),
        });
    }
    flow_records
}

/// Completion over all flows; goodput is the payload of the completed flows over the
/// time from the first one's start to the last one's finish.
fn flow_summary(st: &Stats, records: &FlowRecords) -> FlowSummary {
    let mut fcts = vec![];
    let mut slow = vec![];
    let (mut first, mut lastf, mut bytes) = (u64::MAX, 0u64, 0u64);
    for r in records.figures() {
        if let (Some(x), Some(s)) = (r.fct_ps, r.slowdown) {
            fcts.push(x);
            slow.push(s);
            first = first.min(r.start_ps);
            lastf = lastf.max(r.start_ps + x);
            bytes += r.size;
        }
    }
    fcts.sort_unstable();
    slow.sort_by(|a, b| a.total_cmp(b));
    FlowSummary {
        count: st.flows.iter().filter(|f| !f.join()).count(),
        completed: fcts.len(),
        failed: st.flows.iter().filter(|f| f.failed() && !f.join()).count(),
        fct_p50_ps: pct(&fcts, 0.5),
        fct_p99_ps: pct(&fcts, 0.99),
        fct_max_ps: fcts.last().copied().unwrap_or(0),
        slowdown_p50: pct(&slow, 0.5),
        slowdown_p99: pct(&slow, 0.99),
        slowdown_max: slow.last().copied().unwrap_or(0.0),
        goodput_gbps: if lastf > first { bytes as f64 * 8.0 / units::SimDuration(lastf - first).as_secs_f64() / 1e9 } else { 0.0 },
    }
}

/// The same figures for each `[[traffic]]` entry.
fn groups(w: &World, records: &FlowRecords) -> Vec<GroupSummary> {
    w.traffic_kinds
        .iter()
        .enumerate()
        .map(|(g, kind)| {
            let (mut flows, mut failed) = (0, 0);
            let mut f: Vec<u64> = vec![];
            let mut sd: Vec<f64> = vec![];
            for r in records.figures().filter(|r| w.flows.group_of(r.flow) == g as u32) {
                flows += 1;
                failed += r.failed as usize;
                f.extend(r.fct_ps);
                sd.extend(r.slowdown);
            }
            f.sort_unstable();
            sd.sort_by(|a, b| a.total_cmp(b));
            GroupSummary {
                traffic: g,
                kind: kind.clone(),
                flows,
                completed: f.len(),
                failed,
                fct_p50_ps: pct(&f, 0.5),
                fct_p99_ps: pct(&f, 0.99),
                slowdown_p50: pct(&sd, 0.5),
                slowdown_p99: pct(&sd, 0.99),
            }
        })
        .collect()
}

/// Every port that sent, was paused or dropped anything; the fabric-wide port counters
/// are summed into `totals`.
fn ports(w: &World, st: &Stats, totals: &mut Totals) -> Vec<PortReport> {
    let t = &w.topo;
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
    ports
}

/// Every NIC's congestion-control and transport counters, summed into `totals` too.
fn nics(w: &World, st: &Stats, totals: &mut Totals) -> Vec<NicReport> {
    let t = &w.topo;
    let mut nics = vec![];
    for (ep, ns) in st.nics.iter().enumerate() {
        totals.cnps += ns.cnp_tx;
        totals.retransmitted_bytes += ns.retx_bytes;
        totals.timeouts += ns.timeouts;
        nics.push(NicReport {
            name: t.node(t.endpoints[ep]).name.clone(),
            cnp_tx: ns.cnp_tx,
            cnp_rx: ns.cnp_rx,
            ce_rx: ns.ce_rx,
            retransmitted_bytes: ns.retx_bytes,
            naks: ns.nak_tx,
            timeouts: ns.timeouts,
        });
    }
    nics
}

/// The settings a reader needs to tell runs apart.
fn settings(p: &Params) -> Settings {
    Settings {
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
    }
}

/// "node:port" of a simulator port.
fn port_name(w: &World, p: PortId) -> String {
    w.topo.port_name(p)
}

/// The incident timeline with ports named, PFC storms, each fault's recovery (QPs that
/// lost data between it and the next fault, and when the last of them recovered), the
/// deadlock cycle and what was still paused at the end.
fn incidents(w: &World, st: &Stats) -> Incidents {
    let mut timeline: Vec<TimelineEntry> = st
        .timeline
        .iter()
        .map(|i| TimelineEntry { t_ps: i.t_ps, event: i.event.as_str(), port: i.port.map(|p| port_name(w, p)), class: i.class, detail: i.detail.clone() })
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
    let starts: Vec<&Fault> = w.faults.iter().filter(|f| !f.ends).collect();
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
                    let peer = w.topo.port(p).peer.map(|q| w.topo.node(w.topo.port(q).node).name.clone());
                    CycleHop { port: port_name(w, p), towards: peer.unwrap_or_default(), class: c }
                })
                .collect()
        })
        .unwrap_or_default();
    let paused_at_end = st.paused_at_end.iter().map(|&(p, c)| format!("{} priority {c}", port_name(w, p))).collect();
    Incidents { timeline, storms, recovery, deadlock_cycle, paused_at_end }
}

/// Congestion roots, contributors and victims (see [`VictimSummary`]).
fn victims(w: &World, st: &Stats, records: &FlowRecords) -> VictimSummary {
    let t = &w.topo;
    let blocked: Vec<bool> = st.ports.iter().map(|p| p.paused_ps.iter().any(|&x| x > 0) || p.xmit_wait_ps > 0).collect();
    let max_frame = timing::frame_of(&w.params, Transport::WriteFirst, w.params.mtu).0;
    // Paths first: a port crossed by a single flow builds a queue only from a speed
    // change (e.g. a backlog leaving a 400G link into a 100G one) and harms no one else.
    // (Looked up per flow, not collected: flows on one QP share its path.)
    let mut crossing = vec![0u32; st.ports.len()];
    for p in records.figures().filter_map(|r| st.flow_path(r.flow)) {
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
        congestion_roots: (0..root.len()).filter(|&pi| root[pi]).map(|pi| t.port_name(PortId(pi as u32))).collect(),
        ..VictimSummary::default()
    };
    let mut slow = vec![];
    for r in records.figures() {
        let Some(path) = st.flow_path(r.flow) else { continue };
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

/// Each collective job in nccl-tests' terms, with the link-payload-rate bounds.
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
                    let end = st.flows[e as usize].delivered();
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

/// A drop cause as the JSON names it.
fn cause_name(c: DropCause) -> String {
    serde_json::to_value(c).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}
