//! The HTML report: one self-contained page (inline CSS, charts as inline SVG drawn here,
//! a few lines of inline script that highlight a series when its legend entry is hovered;
//! no network, fonts or images) for a run (`run --html`) or a comparison
//! (`compare --html`).
//!
//! Charts, per fabric: egress queue depth over time on the hottest ports (by maximum
//! queue, `[output] top_ports` of them), the DCQCN rate of the QPs it slowed down, and a
//! timeline of the ports that were paused by PFC (RoCE) or had a VL waiting for credits
//! (IB); and the completion-time CDF of every fabric on one chart. All but the CDF come
//! from the simulator's samples (`Stats::samples`, every `[output] sample_period`), so an
//! event shorter than the period may not show; the tables come from the report and are
//! exact.
//!
//! Contract (checked by `crates/cli/tests/html.rs` in headless Chromium): every
//! `<svg class="chart">` has a title, axis labels with units and `data-points` = the number
//! of data points it draws (line vertices before joining, timeline bars), never 0. A chart
//! with nothing to draw is a `<p class="nodata">` saying why instead. Each chart sits in a
//! `<figure>` with a stable id (`cdf`, `{ib,roce}-queue`, `{ib,roce}-rate`,
//! `{ib,roce}-fc`). A series longer than [`MAX_POINTS`] keeps the minimum and maximum of
//! each bucket, so peaks survive. The page is a pure function of its inputs: no clock, no
//! hash-map order; the same scenario gives the same bytes.

mod charts;
mod sections;
mod svg;

use std::fmt::Write as _;

use crate::compare::{cell, settings_line, Comparison, Side};
use crate::Report;
use fabric::params::Tech;
use fabric::stats::Stats;
use fabric::topology::PortId;
use scenario::World;

use charts::charts;
use sections::{collectives, incidents, load_balance, notes};

/// Most points drawn per line.
pub const MAX_POINTS: usize = 2000;
/// Most QPs on a rate chart.
pub const MAX_QPS: usize = 16;
/// Most rows of a flow-control timeline.
pub const MAX_ROWS: usize = 24;

const IB_COLOUR: &str = "#1f6fb4";
const ROCE_COLOUR: &str = "#d9480f";
/// Series colours (Tableau 10 and six more), for ports and QPs.
const PALETTE: [&str; 16] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#79706e", "#17becf", "#8c564b", "#bcbd22", "#1b9e77",
    "#7570b3", "#e7298a",
];

/// One fabric's data, as the charts need it.
struct Fabric<'a> {
    /// Id prefix: `ib` or `roce`.
    key: &'static str,
    name: &'static str,
    colour: &'static str,
    world: &'a World,
    report: &'a Report,
    stats: &'a Stats,
}

impl<'a> Fabric<'a> {
    fn new(world: &'a World, report: &'a Report, stats: &'a Stats) -> Fabric<'a> {
        let (key, name, colour) = match report.fabric {
            Tech::Infiniband => ("ib", "InfiniBand", IB_COLOUR),
            Tech::Roce => ("roce", "RoCEv2", ROCE_COLOUR),
        };
        Fabric { key, name, colour, world, report, stats }
    }

    fn ib(&self) -> bool {
        self.report.fabric == Tech::Infiniband
    }

    /// Last instant with data: the end of the run or the last sample.
    fn end_ps(&self) -> u64 {
        self.stats.end.max(self.stats.samples.last().map_or(0, |s| s.t))
    }

    /// `node:port`, as in the CSV output.
    fn port_name(&self, i: usize) -> String {
        self.world.topo.port_name(PortId(i as u32))
    }

    fn peer_name(&self, i: usize) -> String {
        self.world.topo.ports[i].peer.map_or_else(|| "-".into(), |q| self.port_name(q.0 as usize))
    }

    fn endpoint_name(&self, ep: u32) -> &str {
        let t = &self.world.topo;
        &t.node(t.endpoints[ep as usize]).name
    }
}

/// The page for one comparison: both fabrics on shared axes.
pub fn compare_page(cmp: &Comparison, ib: &Side, roce: &Side) -> String {
    let fabrics = [Fabric::new(&ib.world, &ib.report, &ib.stats), Fabric::new(&roce.world, &roce.report, &roce.stats)];
    let mut s = String::new();
    head(&mut s, &format!("fabriclab compare: {}", cmp.scenario));
    let _ = writeln!(s, "<h1>fabriclab compare: {}</h1>", esc(&cmp.scenario));
    let _ = writeln!(s, "<p class=\"sub\">seed {}: the same topology, link speeds and traffic on both fabrics</p>", cmp.seed);
    s.push_str("<ul class=\"settings\">\n");
    for f in &fabrics {
        let _ = writeln!(s, "<li class=\"{}\">{}</li>", f.key, esc(&settings_line(f.report)));
    }
    s.push_str("</ul>\n<h2>Results side by side</h2>\n<table class=\"cmp\">\n<thead><tr><th>metric</th><th>unit</th>");
    for f in &fabrics {
        let _ = write!(s, "<th class=\"{}\">{}</th>", f.key, f.name);
    }
    s.push_str("</tr></thead>\n<tbody>\n");
    for r in &cmp.rows {
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            esc(r.metric.trim_start()),
            esc(&r.unit),
            cell(r.infiniband, &r.unit),
            cell(r.roce, &r.unit)
        );
    }
    s.push_str("</tbody>\n</table>\n");
    if !cmp.differing_defaults.is_empty() {
        s.push_str("<h3>Settings that differ between the sides</h3>\n<table class=\"cmp small\">\n<thead><tr><th>setting</th>");
        for f in &fabrics {
            let _ = write!(s, "<th class=\"{}\">{}</th>", f.key, f.name);
        }
        s.push_str("<th>why</th></tr></thead>\n<tbody>\n");
        for d in &cmp.differing_defaults {
            let _ = writeln!(s, "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>", esc(&d.parameter), esc(&d.infiniband), esc(&d.roce), esc(&d.reason));
        }
        s.push_str("</tbody>\n</table>\n");
    }
    s.push_str("<h3>Limitations</h3>\n<ul class=\"small\">\n");
    for l in &cmp.limitations {
        let _ = writeln!(s, "<li>{}</li>", esc(l));
    }
    s.push_str("</ul>\n");
    if !cmp.roce.collectives.is_empty() {
        collectives(&mut s, &fabrics);
    }
    load_balance(&mut s, &fabrics);
    incidents(&mut s, &fabrics);
    charts(&mut s, &fabrics);
    notes(&mut s, &fabrics);
    tail(&mut s);
    s
}

/// The page for one run.
pub fn run_page(world: &World, report: &Report, stats: &Stats) -> String {
    let f = [Fabric::new(world, report, stats)];
    let mut s = String::new();
    head(&mut s, &format!("fabriclab run: {}", report.scenario));
    let _ = writeln!(s, "<h1>fabriclab run: {} <span class=\"tag {}\">{}</span></h1>", esc(&report.scenario), f[0].key, f[0].name);
    let _ = writeln!(s, "<p class=\"sub\">seed {}</p>", report.seed);
    let _ = writeln!(s, "<ul class=\"settings\"><li class=\"{}\">{}</li></ul>", f[0].key, esc(&settings_line(report)));
    s.push_str("<h2>Summary</h2>\n<table class=\"cmp\">\n<thead><tr><th>metric</th><th>unit</th><th>value</th></tr></thead>\n<tbody>\n");
    let fl = &report.flows;
    let worst_wait = report.ports.iter().map(|p| p.paused_ps.iter().copied().max().unwrap_or(0).max(p.xmit_wait_ps)).max();
    let rows: [(&str, &str, Option<f64>); 13] = [
        ("flows completed", "flows", Some(fl.completed as f64)),
        ("flows failed", "flows", Some(fl.failed as f64)),
        ("completion time p50", "us", Some(units::SimDuration(fl.fct_p50_ps).as_us_f64())),
        ("completion time p99", "us", Some(units::SimDuration(fl.fct_p99_ps).as_us_f64())),
        ("slowdown p99", "x", Some(fl.slowdown_p99)),
        ("goodput", "Gb/s", Some(fl.goodput_gbps)),
        ("max queue depth (any port)", "B", report.ports.iter().map(|p| p.max_queue_bytes as f64).reduce(f64::max)),
        ("PFC pause frames sent", "frames", (!f[0].ib()).then_some(report.totals.pfc_frames as f64)),
        ("flow-control wait, most-blocked port", "us", worst_wait.map(|w| units::SimDuration(w).as_us_f64())),
        ("drops", "packets", Some(report.totals.drops as f64)),
        (if f[0].ib() { "FECN marks" } else { "ECN marks" }, "packets", Some(report.totals.ecn_marks as f64)),
        ("victim flows (blocked, not contributing)", "flows", Some(report.victims.victims as f64)),
        ("simulated time", "us", Some(units::SimTime(report.end_ps).as_us_f64())),
    ];
    for (metric, unit, v) in rows {
        let _ = writeln!(s, "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td></tr>", esc(metric), esc(unit), cell(v, unit));
    }
    s.push_str("</tbody>\n</table>\n");
    let _ = writeln!(s, "<details><summary>Text report</summary><pre>{}</pre></details>", esc(&crate::text(report)));
    if !report.collectives.is_empty() {
        collectives(&mut s, &f);
    }
    load_balance(&mut s, &f);
    incidents(&mut s, &f);
    charts(&mut s, &f);
    notes(&mut s, &f);
    tail(&mut s);
    s
}

/// The style sheet; `IB_COLOUR` and `ROCE_COLOUR` are replaced by the fabrics' colours.
const CSS: &str = "\
body{margin:0;background:#fafafa;color:#222;font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif}
main{max-width:1360px;margin:0 auto;padding:16px 24px 48px}
h1{font-size:22px;margin:8px 0 2px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:3px}
h3{font-size:15px;margin:16px 0 4px}.sub{color:#555;margin:0 0 8px}
.settings{list-style:none;padding:0;margin:4px 0}.settings li{padding-left:10px;margin:2px 0}
.settings li.ib,.fig.ib{border-left:4px solid IB_COLOUR}.settings li.roce,.fig.roce{border-left:4px solid ROCE_COLOUR}
.fig.both{border-left:4px solid #888}
.tag{font-size:13px;color:#fff;padding:1px 7px;border-radius:3px;vertical-align:middle}.tag.ib{background:IB_COLOUR}.tag.roce{background:ROCE_COLOUR}
table{border-collapse:collapse;background:#fff;font-size:13px}td,th{padding:3px 10px;border-bottom:1px solid #eee;text-align:left}
th{background:#f0f0f0}th.ib{color:IB_COLOUR}th.roce{color:ROCE_COLOUR}td.num{text-align:right;font-variant-numeric:tabular-nums}
.small{font-size:12.5px;color:#444}pre{font-size:12px;background:#fff;padding:8px;overflow:auto}
.pair{display:grid;grid-template-columns:repeat(auto-fit,minmax(560px,1fr));gap:16px;align-items:start}
.fig{margin:0;background:#fff;padding:6px 8px 8px;box-shadow:0 1px 2px rgba(0,0,0,.08)}
.fig.wide,.single .fig{max-width:680px}.single .fig{margin-bottom:16px}
svg.chart{display:block;width:100%;height:auto}
svg.chart text{font-size:12px;fill:#333;font-family:system-ui,'DejaVu Sans',sans-serif}
svg.chart text.title{font-size:14px;font-weight:600;fill:#111}svg.chart text.axl{font-size:12.5px;fill:#444}
svg.chart text.row{font-size:11px}
svg.chart .grid{stroke:#e8e8e8;stroke-width:1}svg.chart .frame{stroke:#999;fill:none}
svg.chart polyline{fill:none;stroke-width:1.7;stroke-linejoin:round}svg.chart polyline:hover{stroke-width:3}
svg.chart .band{fill:#f6f6f6}
.dim{opacity:.12}
ul.legend{list-style:none;display:flex;flex-wrap:wrap;gap:2px 16px;font-size:12px;padding:0;margin:4px 0 0 8px}
ul.legend li{cursor:default;white-space:nowrap}.sw{display:inline-block;width:16px;height:3px;vertical-align:middle;margin-right:5px}
p.nodata{color:#666;font-style:italic;margin:12px 8px}p.note{color:#555;font-size:12.5px;margin:4px 8px}
";

/// Hovering a legend entry or a line dims the figure's other series.
const SCRIPT: &str = "\
for(const f of document.querySelectorAll('figure')){const s=f.querySelectorAll('[data-s]');\
const hl=k=>{for(const e of s)e.classList.toggle('dim',k!==null&&e.dataset.s!==k)};\
for(const e of s){e.addEventListener('mouseenter',()=>hl(e.dataset.s));e.addEventListener('mouseleave',()=>hl(null))}}";

/// The page up to its content: doctype, title, the style sheet.
fn head(s: &mut String, title: &str) {
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>\n{}</style>\n</head>\n<body>\n<main>\n",
        esc(title),
        CSS.replace("ROCE_COLOUR", ROCE_COLOUR).replace("IB_COLOUR", IB_COLOUR)
    );
}

/// The page after its content: the script.
fn tail(s: &mut String) {
    let _ = write!(s, "</main>\n<script>\n{SCRIPT}\n</script>\n</body>\n</html>\n");
}

/// Text for HTML element content and quoted attribute values.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(esc("a<b & \"c\" 'd'>"), "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;");
    }
}
