//! The readable summary `fabriclab run` prints: settings, flow completion, collectives,
//! what the fabric did (flow control, drops, re-routes, deadlock, storms, recovery), the
//! incident timeline, the busiest ports and the notes. Times in microseconds with three
//! decimals ([`SimDuration`]'s display).
//!
//! Owns the layout of that text. Leaves out the figures (the [`Report`], built by
//! [`build`](fn@crate::build)).

use std::fmt::Write as _;

use fabric::params::Tech;
use units::{Bytes, SimDuration};

use crate::types::{PortReport, Report};

fn d(ps: u64) -> String {
    format!("{:.3}", SimDuration(ps))
}

/// The readable summary printed by `fabriclab run`.
pub fn text(r: &Report) -> String {
    let mut s = String::new();
    if let Some(i) = &r.incomplete {
        let _ = writeln!(s, "INCOMPLETE: the run was {} at {}; every figure below covers it up to then only", i.reason, units::SimDuration(i.at_ps));
    }
    header(&mut s, r);
    flows(&mut s, r);
    collectives(&mut s, r);
    fabric_counters(&mut s, r);
    load_balance(&mut s, r);
    timeline(&mut s, r);
    busiest(&mut s, r);
    for n in &r.notes {
        let _ = writeln!(s, "note: {n}");
    }
    s
}

/// The scenario, the fabric's settings and how long the run took.
fn header(s: &mut String, r: &Report) {
    let tech = match r.fabric {
        Tech::Roce => "RoCEv2",
        Tech::Infiniband => "InfiniBand",
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
                "settings: MTU {} B, {:?}, switch latency {}, {} data VL(s) x {} input buffer, routing {}, HOQ lifetime {} ({} towards CAs), switch lifetime {}, adaptive routing {}",
                st.mtu_bytes,
                st.forwarding,
                d(st.switch_latency_ps),
                ib.data_vls,
                Bytes(ib.vl_buffer_bytes),
                ib.routing,
                life(ib.hoq_lifetime_ps),
                life(ib.leaf_hoq_lifetime_ps),
                life(ib.switch_lifetime_ps),
                r.load_balance.as_ref().map_or("off", |l| l.load_balancing.as_str())
            );
        }
    }
    let _ = writeln!(s, "simulated {} in {} events", d(r.end_ps), r.events);
}

/// Load balancing: the uplinks' spread per tier, packet order, findings.
fn load_balance(s: &mut String, r: &Report) {
    let Some(lb) = &r.load_balance else { return };
    let _ = writeln!(s, "\nload balancing: {}, out-of-order placement {}", lb.load_balancing, if lb.ooo { "on" } else { "off" });
    for t in &lb.uplink_tiers {
        let _ = writeln!(
            s,
            "  tier {} uplinks ({}): utilisation mean {:.1}%  max {:.1}%  min {:.1}%  spread (max/mean) {:.3}",
            t.tier,
            t.ports,
            100.0 * t.mean_utilisation,
            100.0 * t.max_utilisation,
            100.0 * t.min_utilisation,
            t.spread
        );
    }
    let _ = writeln!(
        s,
        "  packet order: {} out-of-order arrivals on {} QPs (at most {} on one), {} duplicates, {} late",
        lb.out_of_order_pkts, lb.qps_out_of_order, lb.out_of_order_max_per_qp, lb.duplicate_pkts, lb.late_pkts
    );
    for f in &lb.findings {
        let _ = writeln!(s, "  finding: {f}");
    }
}

/// Completion time, slowdown and goodput, overall and per `[[traffic]]` entry.
fn flows(s: &mut String, r: &Report) {
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
}

/// Collective jobs in nccl-tests' terms.
fn collectives(s: &mut String, r: &Report) {
    if r.collectives.is_empty() {
        return;
    }
    let _ = writeln!(s, "\ncollectives (nccl-tests: GB/s = 10^9 B/s; time = mean per iteration)");
    let _ = writeln!(
        s,
        "  {:<15} {:<5} {:>5} {:>14} {:>5} {:>12} {:>9} {:>9} {:>7} {:>9}",
        "op", "algo", "ranks", "size (B)", "iters", "time (us)", "algbw", "busbw", "factor", "bound"
    );
    for c in &r.collectives {
        let time = c.time_ps.map_or("unfinished".to_string(), |t| format!("{:.2}", SimDuration(t).as_us_f64()));
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

/// What the fabric did: flow-control, marking and drop counters, re-routes, a deadlock,
/// PFC storms, the transport's recovery after faults, what stayed paused.
fn fabric_counters(s: &mut String, r: &Report) {
    let st = &r.settings;
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
}

/// The first entries of the incident timeline (all of them are in the JSON).
fn timeline(s: &mut String, r: &Report) {
    let inc = &r.incidents;
    if inc.timeline.is_empty() {
        return;
    }
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

/// The eight ports with the deepest egress queue (or any pause or credit wait).
fn busiest(s: &mut String, r: &Report) {
    let st = &r.settings;
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
}
