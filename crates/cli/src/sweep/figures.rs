//! The figures of one run: the CSV's columns after the parameters ([`COLUMNS`]), the
//! plottable metrics among them ([`METRICS`], `--metric`), and how a simulator report
//! fills them ([`cells`]), as text cells so the CSV, the table and the JSON agree.
//!
//! Left out: how rows are laid out (`csv_file.rs`) and drawn (`plot.rs`).

use report::Report;

/// A plottable figure: its `--metric` name, its CSV column and its axis label.
pub(super) struct Metric {
    pub(super) name: &'static str,
    pub(super) column: &'static str,
    pub(super) label: &'static str,
}

pub(super) const METRICS: [Metric; 11] = [
    Metric { name: "busbw", column: "busbw_gbs", label: "bus bandwidth, first collective (GB/s)" },
    Metric { name: "fct-p99", column: "fct_p99_us", label: "flow completion time p99 (µs)" },
    Metric { name: "slowdown-p99", column: "slowdown_p99", label: "slowdown p99 (×)" },
    Metric { name: "lossless-drops", column: "lossless_drops", label: "drops in lossless classes (packets)" },
    Metric { name: "pause-frames", column: "pause_frames", label: "PFC pause frames sent" },
    Metric { name: "goodput", column: "goodput_gbps", label: "goodput (Gb/s)" },
    Metric { name: "ecn-marks", column: "ecn_marks", label: "ECN marks (packets)" },
    Metric { name: "drops", column: "drops", label: "drops, all classes (packets)" },
    Metric { name: "paused", column: "paused_us", label: "paused time, summed over ports (µs)" },
    Metric { name: "victim-slowdown", column: "victim_slowdown_max", label: "slowdown of the worst victim flow (×)" },
    Metric { name: "recovery", column: "recovery_us", label: "recovery after a fault, worst (µs)" },
];

/// The figures of one run, after the parameter columns, in this order.
pub(super) const COLUMNS: [&str; 19] = [
    "busbw_gbs",
    "fct_p50_us",
    "fct_p99_us",
    "slowdown_p99",
    "goodput_gbps",
    "flows_failed",
    "lossless_drops",
    "drops",
    "pause_frames",
    "ecn_marks",
    "cnps",
    "retransmitted_bytes",
    "timeouts",
    "paused_us",
    "xmit_wait_us",
    "deadlock",
    "victim_slowdown_max",
    "recovery_us",
    "end_us",
];

pub(super) fn metric(name: &str) -> Option<&'static Metric> {
    METRICS.iter().find(|m| m.name == name)
}

impl PartialEq for Metric {
    fn eq(&self, o: &Metric) -> bool {
        self.name == o.name
    }
}

impl std::fmt::Debug for Metric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// Integer picoseconds as microseconds with three decimals (rounded to the nanosecond).
fn us(ps: u64) -> String {
    let ns = (ps + 500) / 1000;
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

fn float(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.3}")
    } else {
        String::new()
    }
}

/// A report's figures in `COLUMNS` order.
pub(super) fn cells(r: &Report) -> Vec<String> {
    let flows = r.flows.count > 0;
    let t = &r.totals;
    let paused: u64 = r.ports.iter().map(|p| p.paused_ps.iter().copied().max().unwrap_or(0)).sum();
    let c = vec![
        r.collectives.first().filter(|c| c.time_ps.is_some()).map_or(String::new(), |c| float(c.busbw_gbs)),
        if flows { us(r.flows.fct_p50_ps) } else { String::new() },
        if flows { us(r.flows.fct_p99_ps) } else { String::new() },
        if flows { float(r.flows.slowdown_p99) } else { String::new() },
        if flows { float(r.flows.goodput_gbps) } else { String::new() },
        r.flows.failed.to_string(),
        t.lossless_drops.to_string(),
        t.drops.to_string(),
        t.pfc_frames.to_string(),
        t.ecn_marks.to_string(),
        t.cnps.to_string(),
        t.retransmitted_bytes.to_string(),
        t.timeouts.to_string(),
        us(paused),
        us(t.xmit_wait_ps),
        u8::from(t.deadlock.is_some()).to_string(),
        if r.victims.victims > 0 { float(r.victims.victim_slowdown_max) } else { String::new() },
        r.incidents.worst_recovery_ps().map_or(String::new(), us),
        us(r.end_ps),
    ];
    debug_assert_eq!(c.len(), COLUMNS.len());
    c
}
