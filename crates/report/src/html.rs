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

use std::fmt::Write as _;

use crate::compare::{cell, settings_line, Comparison, Side};
use crate::Report;
use fabric::params::Tech;
use fabric::stats::Stats;
use scenario::World;

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
        self.world.topo.port_name(fabric::topology::PortId(i as u32))
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
        ("completion time p50", "us", Some(fl.fct_p50_ps as f64 / 1e6)),
        ("completion time p99", "us", Some(fl.fct_p99_ps as f64 / 1e6)),
        ("slowdown p99", "x", Some(fl.slowdown_p99)),
        ("goodput", "Gb/s", Some(fl.goodput_gbps)),
        ("max queue depth (any port)", "B", report.ports.iter().map(|p| p.max_queue_bytes as f64).reduce(f64::max)),
        ("PFC pause frames sent", "frames", (!f[0].ib()).then_some(report.totals.pfc_frames as f64)),
        ("flow-control wait, most-blocked port", "us", worst_wait.map(|w| w as f64 / 1e6)),
        ("drops", "packets", Some(report.totals.drops as f64)),
        (if f[0].ib() { "FECN marks" } else { "ECN marks" }, "packets", Some(report.totals.ecn_marks as f64)),
        ("victim flows (blocked, not contributing)", "flows", Some(report.victims.victims as f64)),
        ("simulated time", "us", Some(report.end_ps as f64 / 1e6)),
    ];
    for (metric, unit, v) in rows {
        let _ = writeln!(s, "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td></tr>", esc(metric), esc(unit), cell(v, unit));
    }
    s.push_str("</tbody>\n</table>\n");
    let _ = writeln!(s, "<details><summary>Text report</summary><pre>{}</pre></details>", esc(&crate::text(report)));
    if !report.collectives.is_empty() {
        collectives(&mut s, &f);
    }
    incidents(&mut s, &f);
    charts(&mut s, &f);
    notes(&mut s, &f);
    tail(&mut s);
    s
}

// ------------------------------------------------------------------ page parts

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

fn tail(s: &mut String) {
    let _ = write!(s, "</main>\n<script>\n{SCRIPT}\n</script>\n</body>\n</html>\n");
}

/// A table cell, formatted as `compare::text` does.
fn collectives(s: &mut String, fabrics: &[Fabric]) {
    s.push_str("<h2>Collectives</h2>\n<table class=\"cmp\">\n<thead><tr><th>operation</th><th>algorithm</th><th>ranks</th><th>size (B)</th><th>channels</th>");
    for f in fabrics {
        let _ = write!(s, "<th class=\"{k}\">{n}: time per iteration (us)</th><th class=\"{k}\">{n}: busbw (GB/s)</th>", k = f.key, n = f.name);
    }
    s.push_str("<th>busbw bound (GB/s)</th></tr></thead>\n<tbody>\n");
    let first = &fabrics[fabrics.len() - 1].report.collectives;
    for (i, c) in first.iter().enumerate() {
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>",
            esc(&c.op),
            esc(&c.algorithm),
            c.ranks,
            c.size_bytes,
            c.channels
        );
        for f in fabrics {
            let o = f.report.collectives.get(i);
            let t = o.and_then(|c| c.time_ps).map(|t| t as f64 / 1e6);
            let bw = o.filter(|c| c.time_ps.is_some()).map(|c| c.busbw_gbs);
            let _ = write!(s, "<td class=\"num\">{}</td><td class=\"num\">{}</td>", cell(t, "us"), cell(bw, "GB/s"));
        }
        let _ = writeln!(s, "<td class=\"num\">{}</td></tr>", cell(Some(c.busbw_bound_gbs), "GB/s"));
    }
    s.push_str("</tbody>\n</table>\n");
}

/// The incident timeline, PFC storms and deadlock cycle of each fabric (nothing when no
/// fabric had an incident).
fn incidents(s: &mut String, fabrics: &[Fabric]) {
    if fabrics.iter().all(|f| f.report.incidents.timeline.is_empty()) {
        return;
    }
    s.push_str("<h2>Incident timeline</h2>\n");
    for f in fabrics {
        let inc = &f.report.incidents;
        if let Some(dl) = &f.report.totals.deadlock {
            let hops: Vec<String> = inc.deadlock_cycle.iter().map(|h| format!("{} ({})", h.port, h.class)).collect();
            let _ = writeln!(
                s,
                "<p class=\"note\"><b>{}</b>: deadlock formed at {:.3} us, detected at {:.3} us: {}</p>",
                f.name,
                dl.formed_at_ps as f64 / 1e6,
                dl.detected_at_ps as f64 / 1e6,
                esc(&hops.join(" → "))
            );
        }
        for x in &inc.storms {
            let restored = x.restored_ps.map_or_else(|| "not restored".to_string(), |t| format!("restored at {:.3} us", t as f64 / 1e6));
            let _ = writeln!(
                s,
                "<p class=\"note\"><b>{}</b>: PFC storm on {} priority {}: paused from {:.3} us, watchdog at {:.3} us, {restored}, {} packets dropped</p>",
                f.name,
                esc(&x.port),
                x.priority,
                x.paused_from_ps as f64 / 1e6,
                x.detected_ps as f64 / 1e6,
                x.dropped_pkts
            );
        }
    }
    s.push_str(
        "<table class=\"cmp\">\n<thead><tr><th>time (us)</th><th>fabric</th><th>event</th><th>port</th><th>class</th><th>detail</th></tr></thead>\n<tbody>\n",
    );
    let mut rows: Vec<(u64, &Fabric, &crate::TimelineEntry)> =
        fabrics.iter().flat_map(|f| f.report.incidents.timeline.iter().map(move |e| (e.t_ps, f, e))).collect();
    rows.sort_by_key(|r| r.0);
    for (t, f, e) in rows {
        let _ = writeln!(
            s,
            "<tr><td class=\"num\">{:.3}</td><td class=\"{}\">{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            t as f64 / 1e6,
            f.key,
            f.name,
            e.event,
            esc(e.port.as_deref().unwrap_or("")),
            e.class.map(|c| c.to_string()).unwrap_or_default(),
            esc(&e.detail)
        );
    }
    s.push_str("</tbody>\n</table>\n");
}

fn notes(s: &mut String, fabrics: &[Fabric]) {
    if fabrics.iter().all(|f| f.report.notes.is_empty()) {
        return;
    }
    s.push_str("<h2>Notes</h2>\n<ul class=\"small\">\n");
    for f in fabrics {
        for n in &f.report.notes {
            let _ = writeln!(s, "<li><b>{}</b>: {}</li>", f.name, esc(n));
        }
    }
    s.push_str("</ul>\n");
}

/// Every chart section; axes shared between fabrics so that heights compare.
fn charts(s: &mut String, fabrics: &[Fabric]) {
    let end_us = fabrics.iter().map(|f| f.end_ps()).max().unwrap_or(0) as f64 / 1e6;
    let time = Scale::linear(end_us);
    let sampled = fabrics.iter().all(|f| !f.stats.samples.is_empty());
    let period = fabrics[0].world.sample_period;

    s.push_str("<h2>Completion time</h2>\n");
    s.push_str(&cdf_chart(fabrics));

    let pair = if fabrics.len() > 1 { "<div class=\"pair\">\n" } else { "<div class=\"single\">\n" };
    let shared = if fabrics.len() > 1 { "; both fabrics on the same scales" } else { "" };
    let _ = writeln!(s, "<h2>Egress queue depth on the hottest ports</h2>\n<p class=\"note\">Sampled every {period}{shared}.</p>");
    s.push_str(pair);
    let hot: Vec<Vec<usize>> = fabrics.iter().map(hottest).collect();
    let qmax = fabrics.iter().zip(&hot).flat_map(|(f, h)| h.iter().map(|&i| f.stats.ports[i].max_queue)).max().unwrap_or(0);
    for (f, h) in fabrics.iter().zip(&hot) {
        s.push_str(&queue_chart(f, h, &time, qmax, sampled));
    }
    s.push_str("</div>\n<h2>Per-QP sending rate (DCQCN)</h2>\n");
    s.push_str(pair);
    let lines: Vec<Result<RateLines, String>> = fabrics.iter().map(|f| rate_lines(f, sampled)).collect();
    let rmax = lines.iter().flatten().flat_map(|r| r.lines.iter().flat_map(|l| l.pts.iter().map(|p| p.1))).fold(0.0, f64::max);
    let rate = Scale::linear(rmax);
    for (f, l) in fabrics.iter().zip(lines) {
        s.push_str(&rate_chart(f, l, &time, &rate));
    }
    s.push_str("</div>\n<h2>Flow-control timeline: PFC pause (RoCE), credit wait (IB)</h2>\n");
    s.push_str(pair);
    for f in fabrics {
        s.push_str(&fc_chart(f, &time, sampled));
    }
    s.push_str("</div>\n");
}

// ------------------------------------------------------------------ the charts

/// The `top_ports` ports with the deepest queue (ties: lower port id first).
fn hottest(f: &Fabric) -> Vec<usize> {
    let st = &f.stats.ports;
    let mut idx: Vec<usize> = (0..st.len()).filter(|&i| st[i].max_queue > 0).collect();
    idx.sort_by(|&a, &b| st[b].max_queue.cmp(&st[a].max_queue).then(a.cmp(&b)));
    idx.truncate(f.world.top_ports);
    idx
}

fn nodata(id: &str, class: &str, title: &str, why: &str) -> String {
    format!("<figure class=\"fig {class}\" id=\"{id}\"><p class=\"nodata\"><b>{}</b>: {}</p></figure>\n", esc(title), esc(why))
}

fn not_sampled() -> String {
    "the time series were not recorded (run without sampling)".into()
}

fn queue_chart(f: &Fabric, ports: &[usize], time: &Scale, qmax: u64, sampled: bool) -> String {
    let id = format!("{}-queue", f.key);
    let title = format!("{}: egress queue depth, {} hottest ports", f.name, ports.len());
    if !sampled {
        return nodata(&id, f.key, &title, &not_sampled());
    }
    if ports.is_empty() {
        return nodata(&id, f.key, &format!("{}: egress queue depth", f.name), "no egress queue built up in this run");
    }
    let (unit, div) = byte_unit(qmax);
    let lines: Vec<Line> = ports
        .iter()
        .enumerate()
        .map(|(k, &i)| {
            let pts: Vec<(f64, f64)> = f.stats.samples.iter().map(|s| (s.t as f64 / 1e6, s.queue[i] as f64 / div)).collect();
            Line {
                label: format!("{} → {} (max {})", f.port_name(i), f.peer_name(i), units::Bytes(f.stats.ports[i].max_queue)),
                colour: PALETTE[k % PALETTE.len()],
                pts: drop_flat(downsample(&pts, MAX_POINTS)),
            }
        })
        .collect();
    let y = Scale::linear(qmax as f64 / div);
    line_chart(&id, f.key, &title, "time (µs)", &format!("queue depth ({unit})"), time, &y, &lines, false, "")
}

struct RateLines {
    lines: Vec<Line>,
    /// QPs whose rate dropped below line rate (more than are drawn, possibly).
    throttled: usize,
}

/// Source and destination endpoint of each QP, in the simulator's QP numbering: one QP
/// per flow in flow order, barriers skipped, flows of one `conn` sharing the first one's
/// (as `Sim::new` assigns them).
fn qp_endpoints(w: &World) -> Vec<(u32, u32)> {
    let mut seen = std::collections::BTreeSet::new();
    w.flows.iter().filter(|f| !f.join && f.conn.is_none_or(|c| seen.insert(c))).map(|f| (f.src, f.dst)).collect()
}

fn rate_lines(f: &Fabric, sampled: bool) -> Result<RateLines, String> {
    if f.ib() {
        return Err("InfiniBand has no DCQCN: its links are lossless by credits (see the credit-wait timeline), and the \
                    injection delay of IB congestion control is not sampled"
            .into());
    }
    if f.report.settings.dcqcn.is_none() {
        return Err("DCQCN is off in this scenario: every QP sends at line rate".into());
    }
    if !sampled {
        return Err(not_sampled());
    }
    let eps = qp_endpoints(f.world);
    let nqp = f.stats.samples[0].qp_rate.len();
    let t = &f.world.topo;
    // (lowest rate, QP) of each QP that went below its line rate.
    let mut slowed: Vec<(u64, usize)> = (0..nqp)
        .filter_map(|q| {
            let line = eps.get(q).map_or(u64::MAX, |&(src, _)| t.ports[t.ep_port(src).0 as usize].rate.0);
            let min = f.stats.samples.iter().map(|s| s.qp_rate[q]).filter(|&r| r > 0).min()?;
            (min < line).then_some((min, q))
        })
        .collect();
    if slowed.is_empty() {
        return Err("no QP's DCQCN rate dropped below line rate".into());
    }
    slowed.sort_unstable();
    let throttled = slowed.len();
    slowed.truncate(MAX_QPS);
    slowed.sort_unstable_by_key(|&(_, q)| q);
    let lines = slowed
        .iter()
        .enumerate()
        .map(|(k, &(min, q))| {
            let pts: Vec<(f64, f64)> = f.stats.samples.iter().map(|s| (s.t as f64 / 1e6, s.qp_rate[q] as f64 / 1e9)).collect();
            let who = eps.get(q).map_or_else(String::new, |&(a, b)| format!(" {}→{}", f.endpoint_name(a), f.endpoint_name(b)));
            Line {
                label: format!("qp{q}{who} (min {})", units::BitRate(min)),
                colour: PALETTE[k % PALETTE.len()],
                pts: drop_flat(downsample(&pts, MAX_POINTS)),
            }
        })
        .collect();
    Ok(RateLines { lines, throttled })
}

fn rate_chart(f: &Fabric, l: Result<RateLines, String>, time: &Scale, y: &Scale) -> String {
    let id = format!("{}-rate", f.key);
    let r = match l {
        Ok(r) => r,
        Err(why) => return nodata(&id, f.key, &format!("{}: per-QP rate", f.name), &why),
    };
    let shown = r.lines.len();
    let title = format!("{}: DCQCN rate of {} throttled QP{}", f.name, shown, if shown == 1 { "" } else { "s" });
    let note =
        if r.throttled > shown { format!("{} of {} QPs whose rate dropped below line rate: the most throttled.", shown, r.throttled) } else { String::new() };
    line_chart(&id, f.key, &title, "time (µs)", "rate (Gb/s)", time, y, &r.lines, false, &note)
}

/// One row of the flow-control timeline.
struct FcRow {
    port: usize,
    /// Exact blocked time from the counters (PFC paused, worst priority; IB PortXmitWait).
    blocked_ps: u64,
    /// Union of the sampled masks: priorities (RoCE) or VLs (IB).
    mask: u8,
    /// Sampled blocked intervals, ps.
    spans: Vec<(u64, u64)>,
}

/// The most-blocked ports from the sampled masks, how many ports were sampled blocked, and
/// the ports whose counters show blocked time that no sample caught, most blocked first.
fn fc_rows(f: &Fabric) -> (Vec<FcRow>, usize, Vec<(usize, u64)>) {
    let smp = &f.stats.samples;
    let period = f.world.sample_period.ps();
    let nports = smp.first().map_or(0, |s| s.paused.len());
    let mut rows: Vec<FcRow> = (0..nports)
        .filter_map(|p| {
            let mut spans: Vec<(u64, u64)> = vec![];
            let mut mask = 0u8;
            for (k, s) in smp.iter().enumerate() {
                if s.paused[p] == 0 {
                    continue;
                }
                mask |= s.paused[p];
                let end = smp.get(k + 1).map_or(s.t + period, |n| n.t);
                match spans.last_mut() {
                    Some(last) if last.1 == s.t => last.1 = end,
                    _ => spans.push((s.t, end)),
                }
            }
            if spans.is_empty() {
                return None;
            }
            Some(FcRow { port: p, blocked_ps: blocked(&f.stats.ports[p]), mask, spans })
        })
        .collect();
    let sampled = |r: &FcRow| r.spans.iter().map(|s| s.1 - s.0).sum::<u64>();
    rows.sort_by(|a, b| b.blocked_ps.cmp(&a.blocked_ps).then(sampled(b).cmp(&sampled(a))).then(a.port.cmp(&b.port)));
    let all = rows.len();
    rows.truncate(MAX_ROWS);
    let mut unseen: Vec<(usize, u64)> =
        (0..f.stats.ports.len()).map(|p| (p, blocked(&f.stats.ports[p]))).filter(|&(p, b)| b > 0 && smp.iter().all(|s| s.paused[p] == 0)).collect();
    unseen.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    (rows, all, unseen)
}

/// Exact blocked time of a port: paused time of its most-paused priority (RoCE) or
/// PortXmitWait (IB), as `compare` counts it.
fn blocked(ps: &fabric::stats::PortStats) -> u64 {
    ps.paused_ps.iter().copied().max().unwrap_or(0).max(ps.xmit_wait_ps)
}

fn fc_chart(f: &Fabric, time: &Scale, sampled: bool) -> String {
    let id = format!("{}-fc", f.key);
    let (what, class) = if f.ib() { ("waiting for credits", "VL") } else { ("paused by PFC", "priority") };
    if !sampled {
        return nodata(&id, f.key, &format!("{}: ports {what}", f.name), &not_sampled());
    }
    let (rows, all, unseen) = fc_rows(f);
    let t = &f.world.topo;
    let mut unseen_note = String::new();
    if let Some(&(p, b)) = unseen.first() {
        let n = unseen.len();
        unseen_note = format!(
            " {n} more port{} show{} {} in {} counters that no sample caught{} (the most: {}, {:.1} µs).",
            if n == 1 { "" } else { "s" },
            if n == 1 { "s" } else { "" },
            if f.ib() { "PortXmitWait" } else { "paused time" },
            if n == 1 { "its" } else { "their" },
            if f.ib() && unseen.iter().any(|&(p, _)| !t.is_switch(t.ports[p].node)) {
                "; a NIC's packets wait in its QPs, which the samples leave out"
            } else {
                ""
            },
            f.port_name(p),
            b as f64 / 1e6
        );
    }
    if rows.is_empty() {
        let why = format!("no port was sampled {what} in this run (sampled every {}).{unseen_note}", f.world.sample_period);
        return nodata(&id, f.key, &format!("{}: ports {what}", f.name), &why);
    }
    let end = f.report.end_ps.max(1);
    const L: f64 = 128.0;
    const R: f64 = 96.0;
    const ROW: f64 = 17.0;
    let (w, top, bottom) = (W, 34.0, 46.0);
    let h = top + rows.len() as f64 * ROW + bottom;
    let pw = w - L - R;
    let title = format!("{}: ports {what}, most blocked first", f.name);
    let mut bars = String::new();
    let mut n = 0usize;
    for (k, r) in rows.iter().enumerate() {
        let y = top + k as f64 * ROW;
        let name = f.port_name(r.port);
        let classes: Vec<String> = (0..8).filter(|b| r.mask & (1 << b) != 0).map(|b| b.to_string()).collect();
        let share = 100.0 * r.blocked_ps as f64 / end as f64;
        if k % 2 == 1 {
            let _ = writeln!(bars, "<rect class=\"band\" x=\"{L}\" y=\"{y:.1}\" width=\"{pw:.1}\" height=\"{ROW}\"/>");
        }
        let _ = write!(
            bars,
            "<g data-s=\"{k}\"><title>{} → {}: {what} {:.1} µs ({share:.1}% of the run); {class} {}</title>\
             <text class=\"row\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\
             <text class=\"row\" x=\"{:.1}\" y=\"{:.1}\">{:.1} µs, {share:.0}%</text>",
            esc(&name),
            esc(&f.peer_name(r.port)),
            r.blocked_ps as f64 / 1e6,
            classes.join(","),
            L - 6.0,
            y + ROW - 5.0,
            esc(&shorten(&name, 20)),
            w - R + 6.0,
            y + ROW - 5.0,
            r.blocked_ps as f64 / 1e6,
        );
        // Spans closer than half a pixel merge, so a row has at most one bar per pixel.
        let mut px: Vec<(f64, f64)> = vec![];
        for &(a, b) in &r.spans {
            let x0 = L + time.frac(a as f64 / 1e6) * pw;
            let x1 = L + time.frac(b as f64 / 1e6) * pw;
            match px.last_mut() {
                Some(last) if x0 - last.1 < 0.5 => last.1 = x1,
                _ => px.push((x0, x1)),
            }
        }
        for (x0, x1) in px {
            let _ = write!(
                bars,
                "<rect class=\"bar\" x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\"/>",
                y + 2.5,
                (x1 - x0).max(1.0),
                ROW - 5.0,
                f.colour
            );
            n += 1;
        }
        bars.push_str("</g>\n");
    }
    let mut s = format!("<figure class=\"fig {}\" id=\"{id}\">\n", f.key);
    let _ = writeln!(
        s,
        "<svg class=\"chart\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"{t}\" data-points=\"{n}\">\n\
         <text class=\"title\" x=\"8\" y=\"20\">{t}</text>",
        t = esc(&title)
    );
    for &v in &time.ticks {
        let x = L + time.frac(v) * pw;
        let _ = writeln!(
            s,
            "<line class=\"grid\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{top}\" y2=\"{:.1}\"/><text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            h - bottom,
            h - bottom + 16.0,
            time.label(v)
        );
    }
    s.push_str(&bars);
    let _ = writeln!(
        s,
        "<rect class=\"frame\" x=\"{L}\" y=\"{top}\" width=\"{pw:.1}\" height=\"{:.1}\"/>\n\
         <text class=\"axl\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">time (µs)</text>\n\
         <text class=\"axl\" x=\"{:.1}\" y=\"{top}\" text-anchor=\"start\" dy=\"-4\">{what}</text>\n</svg>",
        h - top - bottom,
        L + pw / 2.0,
        h - 8.0,
        w - R + 6.0,
        what = if f.ib() { "credit wait" } else { "paused" },
    );
    let mut note = format!(
        "Bars: sampled every {} with a {class} {what}; right: the exact time from the port's counters ({}).",
        f.world.sample_period,
        if f.ib() { "PortXmitWait" } else { "paused time of its most-paused priority" }
    );
    if all > rows.len() {
        let _ = write!(note, " {} of {} blocked ports shown.", rows.len(), all);
    }
    note.push_str(&unseen_note);
    let _ = writeln!(s, "<p class=\"note\">{}</p>\n</figure>", esc(&note));
    s
}

fn cdf_chart(fabrics: &[Fabric]) -> String {
    let title = "Flow completion time, CDF";
    let mut lines = vec![];
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    for f in fabrics {
        let mut fct: Vec<u64> = f.report.flow_records.iter().filter_map(|r| r.fct_ps).filter(|&x| x > 0).collect();
        if fct.is_empty() {
            continue;
        }
        fct.sort_unstable();
        let n = fct.len();
        // At most MAX_POINTS ranks, evenly spaced, the last one always kept.
        let step = n.div_ceil(MAX_POINTS);
        let pts: Vec<(f64, f64)> = (0..n).filter(|i| (i + 1) % step == 0 || i + 1 == n).map(|i| (fct[i] as f64 / 1e6, (i + 1) as f64 / n as f64)).collect();
        lo = lo.min(pts[0].0);
        hi = hi.max(pts[pts.len() - 1].0);
        lines.push(Line { label: format!("{} ({} flows)", f.name, n), colour: f.colour, pts });
    }
    if lines.is_empty() {
        return nodata("cdf", "both", title, "no flow completed");
    }
    let x = if hi / lo > 100.0 { Scale::log(lo, hi) } else { Scale::linear(hi) };
    let y = Scale { hi: 1.0, log: false, lo: 0.0, ticks: vec![0.0, 0.25, 0.5, 0.75, 1.0], step: 0.25 };
    let class = if fabrics.len() > 1 { "both wide".to_string() } else { format!("{} wide", fabrics[0].key) };
    line_chart("cdf", &class, title, "completion time (µs)", "fraction of flows", &x, &y, &lines, true, "")
}

// ------------------------------------------------------------------ drawing

/// Width of every chart's view box; text sizes are in the same units.
const W: f64 = 640.0;

struct Line {
    label: String,
    colour: &'static str,
    pts: Vec<(f64, f64)>,
}

/// An axis: linear from 0, or log in decades.
struct Scale {
    lo: f64,
    hi: f64,
    log: bool,
    ticks: Vec<f64>,
    step: f64,
}

impl Scale {
    /// 0 ..= a round number at or above `max`, with five to eight ticks of 1, 2, 2.5 or 5 × 10^k.
    fn linear(max: f64) -> Scale {
        let max = if max > 0.0 && max.is_finite() { max } else { 1.0 };
        let raw = max / 6.0;
        let mag = 10f64.powf(raw.log10().floor());
        let step = mag * [1.0, 2.0, 2.5, 5.0, 10.0].into_iter().find(|&m| raw <= m * mag * (1.0 + 1e-9)).unwrap_or(10.0);
        let n = (max / step - 1e-9).ceil().max(1.0) as usize;
        Scale { lo: 0.0, hi: n as f64 * step, log: false, ticks: (0..=n).map(|i| i as f64 * step).collect(), step }
    }

    /// Whole decades around `lo ..= hi` (both > 0).
    fn log(lo: f64, hi: f64) -> Scale {
        let a = lo.log10().floor() as i32;
        let b = (hi.log10().ceil() as i32).max(a + 1);
        Scale { lo: 10f64.powi(a), hi: 10f64.powi(b), log: true, ticks: (a..=b).map(|k| 10f64.powi(k)).collect(), step: 0.0 }
    }

    /// Position of `v` on the axis, 0 ..= 1.
    fn frac(&self, v: f64) -> f64 {
        let f = if self.log { (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10()) } else { (v - self.lo) / (self.hi - self.lo) };
        f.clamp(0.0, 1.0)
    }

    fn label(&self, v: f64) -> String {
        if self.log {
            return if (1e-3..1e6).contains(&v) { trim(format!("{v:.3}")) } else { format!("{v:e}") };
        }
        // As many decimals as the step needs (0.25 → 2, 2.5 → 1, 200 → 0).
        let decimals = (0..6).find(|&d| (format!("{:.d$}", self.step).parse::<f64>().unwrap_or(0.0) - self.step).abs() < 1e-9 * self.step).unwrap_or(6);
        format!("{v:.decimals$}")
    }
}

fn trim(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A multi-line chart in a `<figure>` with a legend. `step`: draw each line as a staircase
/// (a CDF).
#[allow(clippy::too_many_arguments)]
fn line_chart(id: &str, class: &str, title: &str, xlab: &str, ylab: &str, x: &Scale, y: &Scale, lines: &[Line], step: bool, note: &str) -> String {
    const L: f64 = 66.0;
    const R: f64 = 26.0;
    const T: f64 = 34.0;
    const B: f64 = 46.0;
    const H: f64 = 300.0;
    let (pw, ph) = (W - L - R, H - T - B);
    let px = |v: f64| L + x.frac(v) * pw;
    let py = |v: f64| T + (1.0 - y.frac(v)) * ph;
    let n: usize = lines.iter().map(|l| l.pts.len()).sum();
    let mut s = format!("<figure class=\"fig {class}\" id=\"{id}\">\n");
    let _ = writeln!(
        s,
        "<svg class=\"chart\" viewBox=\"0 0 {W} {H}\" role=\"img\" aria-label=\"{t}\" data-points=\"{n}\">\n<text class=\"title\" x=\"{L}\" y=\"20\">{t}</text>",
        t = esc(title)
    );
    for &v in &y.ticks {
        let yy = py(v);
        let _ = writeln!(
            s,
            "<line class=\"grid\" x1=\"{L}\" x2=\"{:.1}\" y1=\"{yy:.1}\" y2=\"{yy:.1}\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            W - R,
            L - 6.0,
            yy + 4.0,
            y.label(v)
        );
    }
    for &v in &x.ticks {
        let xx = px(v);
        let _ = writeln!(
            s,
            "<line class=\"grid\" x1=\"{xx:.1}\" x2=\"{xx:.1}\" y1=\"{T}\" y2=\"{:.1}\"/><text x=\"{xx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            T + ph,
            T + ph + 16.0,
            x.label(v)
        );
    }
    let _ = writeln!(
        s,
        "<rect class=\"frame\" x=\"{L}\" y=\"{T}\" width=\"{pw}\" height=\"{ph}\"/>\n\
         <text class=\"axl\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}{}</text>\n\
         <text class=\"axl\" transform=\"translate(16 {:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
        L + pw / 2.0,
        H - 8.0,
        esc(xlab),
        if x.log { ", log scale" } else { "" },
        T + ph / 2.0,
        esc(ylab)
    );
    for (k, l) in lines.iter().enumerate() {
        let _ = write!(s, "<polyline data-s=\"{k}\" stroke=\"{}\" points=\"", l.colour);
        let mut prev: Option<f64> = step.then_some(0.0);
        for &(a, b) in &l.pts {
            if let Some(p) = prev {
                let _ = write!(s, "{:.1},{:.1} ", px(a), py(p));
                if step {
                    prev = Some(b);
                }
            }
            let _ = write!(s, "{:.1},{:.1} ", px(a), py(b));
        }
        s.pop();
        let _ = writeln!(s, "\"><title>{}</title></polyline>", esc(&l.label));
    }
    s.push_str("</svg>\n<ul class=\"legend\">");
    for (k, l) in lines.iter().enumerate() {
        let _ = write!(s, "<li data-s=\"{k}\"><span class=\"sw\" style=\"background:{}\"></span>{}</li>", l.colour, esc(&l.label));
    }
    s.push_str("</ul>\n");
    if !note.is_empty() {
        let _ = writeln!(s, "<p class=\"note\">{}</p>", esc(note));
    }
    s.push_str("</figure>\n");
    s
}

/// `pts` without the points in the middle of a horizontal run (the drawing is the same),
/// which keeps mostly-idle series small.
fn drop_flat(pts: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    let n = pts.len();
    let keep = |i: usize| i == 0 || i + 1 == n || pts[i - 1].1 != pts[i].1 || pts[i + 1].1 != pts[i].1;
    (0..n).filter(|&i| keep(i)).map(|i| pts[i]).collect()
}

/// At most `max` points: longer series are cut into `max / 2` buckets of consecutive
/// points and each keeps its lowest and highest point, in time order, so peaks and troughs
/// survive.
fn downsample(pts: &[(f64, f64)], max: usize) -> Vec<(f64, f64)> {
    if pts.len() <= max || max < 2 {
        return pts.to_vec();
    }
    let buckets = max / 2;
    let mut out = Vec::with_capacity(max);
    for b in 0..buckets {
        let s = &pts[b * pts.len() / buckets..(b + 1) * pts.len() / buckets];
        let (mut lo, mut hi) = (0, 0);
        for (i, p) in s.iter().enumerate() {
            if p.1 < s[lo].1 {
                lo = i;
            }
            if p.1 > s[hi].1 {
                hi = i;
            }
        }
        out.push(s[lo.min(hi)]);
        if lo != hi {
            out.push(s[lo.max(hi)]);
        }
    }
    out
}

/// Unit for an axis of bytes whose top is `max`: B, KB or MB (powers of 10, as scenario
/// files write them), and its divisor.
fn byte_unit(max: u64) -> (&'static str, f64) {
    match max {
        0..2_000 => ("B", 1.0),
        2_000..2_000_000 => ("KB", 1e3),
        _ => ("MB", 1e6),
    }
}

fn shorten(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let head: String = s.chars().take(n - 1).collect();
        format!("{head}…")
    }
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

    #[test]
    fn downsampling_keeps_peaks_and_bounds() {
        let mut pts: Vec<(f64, f64)> = (0..100_000).map(|i| (i as f64, (i % 7) as f64)).collect();
        pts[54_321].1 = 1e9;
        pts[12_345].1 = -5.0;
        let d = downsample(&pts, MAX_POINTS);
        assert!(d.len() <= MAX_POINTS);
        assert!(d.iter().any(|p| p.1 == 1e9) && d.iter().any(|p| p.1 == -5.0));
        assert!(d.windows(2).all(|w| w[0].0 < w[1].0), "time order kept");
        assert_eq!(downsample(&pts[..10], MAX_POINTS), pts[..10].to_vec());
    }

    #[test]
    fn flat_runs_keep_their_ends() {
        let pts = vec![(0.0, 0.0), (1.0, 0.0), (2.0, 0.0), (3.0, 5.0), (4.0, 5.0), (5.0, 5.0), (6.0, 5.0)];
        assert_eq!(drop_flat(pts), vec![(0.0, 0.0), (2.0, 0.0), (3.0, 5.0), (6.0, 5.0)]);
    }

    #[test]
    fn scales_are_round() {
        let s = Scale::linear(1296.1);
        assert_eq!((s.hi, s.step), (1500.0, 250.0));
        assert_eq!(s.label(750.0), "750");
        let s = Scale::linear(0.9);
        assert_eq!(s.ticks.last(), Some(&1.0));
        assert_eq!(s.label(0.2), "0.2");
        let s = Scale::linear(14.0);
        assert_eq!((s.hi, s.step), (15.0, 2.5));
        assert_eq!(s.label(2.5), "2.5");
        assert_eq!(s.label(5.0), "5.0");
        let s = Scale::log(3.0, 4000.0);
        assert_eq!(s.ticks, vec![1.0, 10.0, 100.0, 1000.0, 10000.0]);
        assert!((s.frac(100.0) - 0.5).abs() < 1e-12);
    }
}
