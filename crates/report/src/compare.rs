//! `compare`: one scenario run on InfiniBand and on RoCEv2 with the same topology, link
//! speeds and traffic, and the figures a practitioner reads, side by side.

use serde::Serialize;

use crate::differences::Difference;
use crate::{PortReport, Report};
use fabric::params::Tech;
use fabric::stats::Stats;
use scenario::{ConfigError, World};

/// One fabric's run: the compiled scenario, its report and the raw statistics (time series
/// for plots).
pub struct Side {
    pub world: World,
    pub report: Report,
    pub stats: Stats,
}

/// One line of the side-by-side table.
#[derive(Serialize, Debug, Clone)]
pub struct Row {
    pub metric: String,
    pub unit: String,
    pub infiniband: Option<f64>,
    pub roce: Option<f64>,
}

/// The comparison as `--json` prints it.
#[derive(Serialize, Debug)]
pub struct Comparison {
    pub scenario: String,
    pub seed: u64,
    pub rows: Vec<Row>,
    /// What the models leave out that matters to this comparison.
    pub limitations: Vec<String>,
    /// Every setting the two sides ran with differently (defaults filled by `compare`
    /// included), with its reason ([`crate::differences`]).
    pub differing_defaults: Vec<Difference>,
    pub infiniband: Report,
    pub roce: Report,
}

/// What fabriclab does not model and a reader of a comparison should know.
pub const LIMITATIONS: [&str; 5] = [
    "InfiniBand adaptive routing (NVIDIA Quantum AR) is off: IB packets follow the subnet manager's static tables (`[infiniband] adaptive_routing` turns it on), RoCE packets ECMP hashing",
    "SHARP (algorithm = \"sharp\") is modelled as aggregation nodes in every IB switch that reduce at line rate, without SHARP's resource limits (trees, jobs, outstanding operations) or its multicast result; RoCEv2 has no in-network reduction and runs such jobs with the ring",
    "NICs drain received data at once unless a slow- or stuck-receiver fault says otherwise; GPU compute and NVLink inside a host are not modelled (every rank-to-rank transfer crosses the fabric)",
    "packets are switched whole (no flit-level credits); the IB per-VL input buffer and the RoCE shared buffer come from the scenario",
    "NCCL is modelled at its network-transfer granularity (Simple protocol; no LL/LL128, no launch latency)",
];

/// [`LIMITATIONS`] for a comparison whose sides run with `ib` and `roce`: the routing line
/// states what is modelled when InfiniBand adapts over the SM's AR groups, or RoCEv2
/// balances load other than by ECMP's hash, or either places packets out of order (and
/// says adaptive routing is off otherwise).
pub fn limitations(ib: &fabric::params::Params, roce: &fabric::params::Params) -> Vec<String> {
    use fabric::params::LoadBalancing;
    let mut l: Vec<String> = LIMITATIONS.iter().map(|s| s.to_string()).collect();
    let place = |p: &fabric::params::Params| if p.ooo.is_some() { "place" } else { "do not place (go-back-N)" };
    let ib_line = if ib.load_balancing == LoadBalancing::Ecmp && ib.ooo.is_none() {
        "InfiniBand adaptive routing (NVIDIA Quantum AR) is off: IB packets follow the subnet manager's static tables (`[infiniband] adaptive_routing` turns it on)".to_string()
    } else {
        format!(
            "InfiniBand switches route data packets `{}` over the subnet manager's AR groups (minimum-hop ports kept deadlock-free; local queue state only, ACKs by the LFT) and HCAs {} out-of-order packets",
            crate::balance::mode_name(ib),
            place(ib)
        )
    };
    l[0] = if roce.load_balancing != LoadBalancing::Ecmp || roce.ooo.is_some() {
        format!(
            "{ib_line}. RoCEv2 switches balance data packets by `{}` over the ECMP group (local queue state only, ACKs hashed) and NICs {} out-of-order packets",
            crate::balance::mode_name(roce),
            place(roce)
        )
    } else {
        format!("{ib_line}, RoCE packets ECMP hashing")
    };
    l
}

/// Compiles `src` for both fabrics (filling a missing `[infiniband]` with stated
/// defaults), runs both (in parallel), and builds the comparison.
pub fn run(file: &str, src: &str, sample: bool) -> Result<(Comparison, Side, Side), ConfigError> {
    run_watched(file, src, sample, &mut fabric::sim::Unwatched, &mut fabric::sim::Unwatched)
}

/// [`run`], each side under its own watcher (InfiniBand's, RoCEv2's), which sees its
/// progress and may cancel it (that side's report is then marked incomplete).
pub fn run_watched(
    file: &str,
    src: &str,
    sample: bool,
    ib_watch: &mut (dyn fabric::sim::Watch + Send),
    roce_watch: &mut (dyn fabric::sim::Watch + Send),
) -> Result<(Comparison, Side, Side), ConfigError> {
    let compile = |tech: Tech| -> Result<World, ConfigError> {
        let (edits, notes) =
            scenario::variant::for_technology(src, tech).map_err(|msg| ConfigError { file: file.to_string(), line: None, field: "-".into(), msg })?;
        let side = match tech {
            Tech::Roce => "RoCEv2 side",
            Tech::Infiniband => "InfiniBand side",
        };
        let mut w = scenario::variant::load_variant(file, src, &edits).map_err(|mut e| {
            e.file = format!("{file} ({side})");
            e
        })?;
        w.notes.extend(notes);
        Ok(w)
    };
    let ib = compile(Tech::Infiniband)?;
    let roce = compile(Tech::Roce)?;
    both_fit(file, &ib, &roce)?;
    let simulate = |w: World, watch: &mut (dyn fabric::sim::Watch + Send)| -> Side {
        let (mut sim, report) = crate::run_watched(&w, sample, watch);
        let stats = std::mem::take(&mut sim.stats);
        Side { world: w, report, stats }
    };
    let (ib, roce) = std::thread::scope(|s| {
        let h = s.spawn(|| simulate(ib, ib_watch));
        let r = simulate(roce, roce_watch);
        (h.join().expect("the InfiniBand run panicked"), r)
    });
    let ib_from_defaults = !scenario::variant::sections(src).is_ok_and(|(_, ib)| ib);
    let cmp = Comparison {
        scenario: roce.report.scenario.clone(),
        seed: roce.report.seed,
        rows: rows(&ib, &roce),
        limitations: limitations(&ib.world.params, &roce.world.params),
        differing_defaults: crate::differences::differences(&ib.world, &roce.world, ib_from_defaults),
        infiniband: ib.report.clone(),
        roce: roce.report.clone(),
    };
    Ok((cmp, ib, roce))
}

/// The two sides run at once: each was checked against the process's memory limit when
/// it was compiled, and together they must fit too (one process baseline between them).
fn both_fit(file: &str, ib: &World, roce: &World) -> Result<(), ConfigError> {
    let limits = scenario::Limits::for_process();
    let (i, r) = (ib.estimate.memory(), roce.estimate.memory());
    let base = ib.estimate.memory_terms.first().map_or(0, |t| t.bytes);
    let both = i + r - base.min(i.min(r));
    if limits.force || both <= limits.max_memory as u128 {
        return Ok(());
    }
    let h = scenario::estimate::human;
    Err(ConfigError {
        file: file.to_string(),
        line: None,
        field: "-".into(),
        msg: format!(
            "compare runs both fabrics at once: an estimated {} of memory together (InfiniBand {}, RoCEv2 {}), above the limit of {} (--max-memory; --force runs it anyway)",
            h(both),
            h(i),
            h(r),
            h(limits.max_memory as u128)
        ),
    })
}

/// Link-level flow-control wait of a port: paused time over all priorities (RoCE) or
/// PortXmitWait (IB).
fn fc_wait(p: &PortReport) -> u64 {
    p.paused_ps.iter().copied().max().unwrap_or(0).max(p.xmit_wait_ps)
}

fn rows(ib: &Side, roce: &Side) -> Vec<Row> {
    let mut rows = vec![];
    let mut add = |metric: String, unit: &str, f: &dyn Fn(&Report) -> Option<f64>| {
        rows.push(Row { metric, unit: unit.into(), infiniband: f(&ib.report), roce: f(&roce.report) });
    };
    for (i, c) in roce.report.collectives.iter().enumerate() {
        // A SHARP job runs as sharp on InfiniBand and as ring on RoCEv2: say both.
        let algorithm = match ib.report.collectives.get(i) {
            Some(x) if x.algorithm != c.algorithm => format!("{} (IB) / {} (RoCE)", x.algorithm, c.algorithm),
            _ => c.algorithm.clone(),
        };
        let label = format!("{} {} {} B, {} ranks", c.op, algorithm, c.size_bytes, c.ranks);
        if algorithm != c.algorithm {
            add(format!("{label}: algbw"), "GB/s", &|r| r.collectives.get(i).filter(|c| c.time_ps.is_some()).map(|c| c.algbw_gbs));
        }
        add(format!("{label}: busbw"), "GB/s", &|r| r.collectives.get(i).filter(|c| c.time_ps.is_some()).map(|c| c.busbw_gbs));
        add(format!("{label}: time per iteration"), "us", &|r| r.collectives.get(i).and_then(|c| c.time_ps).map(|t| units::SimDuration(t).as_us_f64()));
        add(format!("{label}: busbw bound"), "GB/s", &|r| r.collectives.get(i).map(|c| c.busbw_bound_gbs));
    }
    add("flows completed".into(), "flows", &|r| Some(r.flows.completed as f64));
    add("flows failed".into(), "flows", &|r| Some(r.flows.failed as f64));
    add("completion time p50".into(), "us", &|r| Some(units::SimDuration(r.flows.fct_p50_ps).as_us_f64()));
    add("completion time p99".into(), "us", &|r| Some(units::SimDuration(r.flows.fct_p99_ps).as_us_f64()));
    add("completion time max".into(), "us", &|r| Some(units::SimDuration(r.flows.fct_max_ps).as_us_f64()));
    add("slowdown p50".into(), "x", &|r| Some(r.flows.slowdown_p50));
    add("slowdown p99".into(), "x", &|r| Some(r.flows.slowdown_p99));
    add("goodput".into(), "Gb/s", &|r| Some(r.flows.goodput_gbps));
    add("max queue depth (any port)".into(), "B", &|r| r.ports.iter().map(|p| p.max_queue_bytes).max().map(|x| x as f64));
    add("mean queue depth (deepest port)".into(), "B", &|r| {
        r.ports.iter().max_by(|a, b| a.max_queue_bytes.cmp(&b.max_queue_bytes).then(b.node.cmp(&a.node))).map(|p| p.mean_queue_bytes)
    });
    add("PFC pause frames sent (RoCE)".into(), "frames", &|r| (r.fabric == Tech::Roce).then_some(r.totals.pfc_frames as f64));
    add("flow-control wait: paused (RoCE) / PortXmitWait (IB), summed".into(), "us", &|r| {
        Some(units::SimDuration(r.ports.iter().map(fc_wait).sum::<u64>()).as_us_f64())
    });
    add("flow-control wait: most-blocked port, share of the run".into(), "%", &|r| {
        let worst = r.ports.iter().map(fc_wait).max().unwrap_or(0);
        Some(if r.end_ps > 0 { 100.0 * worst as f64 / r.end_ps as f64 } else { 0.0 })
    });
    add("ports blocked by flow control".into(), "ports", &|r| Some(r.victims.blocked_ports as f64));
    add("drops".into(), "packets", &|r| Some(r.totals.drops as f64));
    add("drops in lossless classes".into(), "packets", &|r| Some(r.totals.lossless_drops as f64));
    for (i, (cause, _)) in roce.report.totals.drops_by_cause.iter().enumerate() {
        let any = |r: &Report| r.totals.drops_by_cause.get(i).is_some_and(|x| x.1 > 0);
        if any(&roce.report) || any(&ib.report) {
            add(format!("  drops: {cause}"), "packets", &|r| r.totals.drops_by_cause.get(i).map(|x| x.1 as f64));
        }
    }
    add("ECN marks (RoCE) / FECN marks (IB)".into(), "packets", &|r| Some(r.totals.ecn_marks as f64));
    add("CNPs (RoCE) / BECNs (IB)".into(), "packets", &|r| Some(r.totals.cnps as f64));
    add("retransmitted".into(), "B", &|r| Some(r.totals.retransmitted_bytes as f64));
    add("transport timeouts".into(), "events", &|r| Some(r.totals.timeouts as f64));
    add("victim flows (blocked, not contributing)".into(), "flows", &|r| Some(r.victims.victims as f64));
    add("victim slowdown p50".into(), "x", &|r| (r.victims.victims > 0).then_some(r.victims.victim_slowdown_p50));
    add("victim slowdown max".into(), "x", &|r| (r.victims.victims > 0).then_some(r.victims.victim_slowdown_max));
    add("deadlock detected".into(), "", &|r| Some(if r.totals.deadlock.is_some() { 1.0 } else { 0.0 }));
    let incidents = |r: &Report, e: &str| r.incidents.timeline.iter().filter(|x| x.event == e).count();
    if [&ib.report, &roce.report].iter().any(|r| !r.incidents.timeline.is_empty()) {
        add("  deadlock formed at".into(), "us", &|r| r.totals.deadlock.as_ref().map(|d| units::SimTime(d.formed_at_ps).as_us_f64()));
        add("storms contained: PFC watchdog (RoCE) / VL stall (IB)".into(), "events", &|r| {
            Some((r.incidents.storms.len() + incidents(r, "vl-stalled")) as f64)
        });
        add("queues still paused at the end".into(), "queues", &|r| Some(r.incidents.paused_at_end.len() as f64));
        add("recovery after a fault, worst".into(), "us", &|r| r.incidents.worst_recovery_ps().map(|t| units::SimDuration(t).as_us_f64()));
        add("QPs that lost data and never recovered".into(), "QPs", &|r| {
            Some(r.incidents.recovery.iter().map(|x| x.qps_with_loss - x.qps_recovered).sum::<usize>() as f64)
        });
    }
    add("simulated time".into(), "us", &|r| Some(units::SimTime(r.end_ps).as_us_f64()));
    rows
}

/// A table cell: "-" for no value, yes/no for a flag (empty unit), integers as integers.
pub fn cell(v: Option<f64>, unit: &str) -> String {
    match v {
        None => "-".into(),
        Some(x) if unit.is_empty() => (if x > 0.0 { "yes" } else { "no" }).into(),
        Some(x) if x.fract() == 0.0 && x.abs() < 1e15 => format!("{}", x as i64),
        Some(x) if x.abs() >= 100.0 => format!("{x:.1}"),
        Some(x) => format!("{x:.3}"),
    }
}

/// One line naming a run's fabric settings.
pub fn settings_line(r: &Report) -> String {
    let st = &r.settings;
    match &st.infiniband {
        Some(ib) => format!(
            "InfiniBand: MTU {} B, {} data VL(s), {} B input buffer per VL, routing {}, {:?}",
            st.mtu_bytes, ib.data_vls, ib.vl_buffer_bytes, ib.routing, st.forwarding
        ),
        None => format!(
            "RoCEv2: MTU {} B, PFC {}, DCQCN {}, buffer {} B in {} B cells, {:?}",
            st.mtu_bytes,
            if st.pfc { "on" } else { "off" },
            st.dcqcn.as_deref().unwrap_or("off"),
            st.buffer_bytes,
            st.cell_bytes,
            st.forwarding
        ),
    }
}

/// The readable side-by-side table.
pub fn text(c: &Comparison) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(s, "compare {}  (seed {}): the same topology, link speeds and traffic on both fabrics\n", c.scenario, c.seed);
    let _ = writeln!(s, "{}", settings_line(&c.infiniband));
    let _ = writeln!(s, "{}\n", settings_line(&c.roce));
    let w = c.rows.iter().map(|r| r.metric.len() + r.unit.len() + 3).max().unwrap_or(20).max(20);
    let _ = writeln!(s, "{:<w$} {:>16} {:>16}", "", "InfiniBand", "RoCEv2");
    for r in &c.rows {
        let label = if r.unit.is_empty() { r.metric.clone() } else { format!("{} ({})", r.metric, r.unit) };
        let _ = writeln!(s, "{:<w$} {:>16} {:>16}", label, cell(r.infiniband, &r.unit), cell(r.roce, &r.unit));
    }
    let _ = write!(s, "\n{}", crate::differences::text(&c.differing_defaults));
    let _ = writeln!(s, "\nlimitations:");
    for l in &c.limitations {
        let _ = writeln!(s, "  - {l}");
    }
    for (name, r) in [("InfiniBand", &c.infiniband), ("RoCEv2", &c.roce)] {
        for n in &r.notes {
            let _ = writeln!(s, "note ({name}): {n}");
        }
    }
    s
}
