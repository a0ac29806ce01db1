//! The charts: completion-time CDF, egress queue depth of the hottest ports, per-QP
//! DCQCN rate, and the flow-control timeline (PFC pause, credit wait). All but the CDF
//! are drawn from the simulator's samples.

use std::fmt::Write as _;

use fabric::stats::PortStats;

use super::svg::{byte_unit, downsample, drop_flat, line_chart, shorten, Line, Scale, W};
use super::{esc, Fabric, MAX_POINTS, MAX_QPS, MAX_ROWS, PALETTE};

/// Every chart section; axes shared between fabrics so that heights compare.
pub(super) fn charts(s: &mut String, fabrics: &[Fabric]) {
    let end_us = units::SimTime(fabrics.iter().map(|f| f.end_ps()).max().unwrap_or(0)).as_us_f64();
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

/// The `top_ports` ports with the deepest queue (ties: lower port id first).
fn hottest(f: &Fabric) -> Vec<usize> {
    let st = &f.stats.ports;
    let mut idx: Vec<usize> = (0..st.len()).filter(|&i| st[i].max_queue > 0).collect();
    idx.sort_by(|&a, &b| st[b].max_queue.cmp(&st[a].max_queue).then(a.cmp(&b)));
    idx.truncate(f.world.top_ports);
    idx
}

/// A figure with nothing to draw, saying why.
fn nodata(id: &str, class: &str, title: &str, why: &str) -> String {
    format!("<figure class=\"fig {class}\" id=\"{id}\"><p class=\"nodata\"><b>{}</b>: {}</p></figure>\n", esc(title), esc(why))
}

/// Why a chart of samples is empty when the run was not sampled.
fn not_sampled() -> String {
    "the time series were not recorded (run without sampling)".into()
}

/// Egress queue depth over time of the hottest ports, one line each.
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
            let pts: Vec<(f64, f64)> = f.stats.samples.iter().map(|s| (units::SimTime(s.t).as_us_f64(), s.queue[i] as f64 / div)).collect();
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

/// The rate chart's lines: the QPs DCQCN slowed most.
struct RateLines {
    lines: Vec<Line>,
    /// QPs whose rate dropped below line rate (more than are drawn, possibly).
    throttled: usize,
}

/// The QPs whose DCQCN rate dropped below line rate, most throttled first (at most
/// [`MAX_QPS`]), or why there are none to draw.
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
    // Each QP's endpoints, in the simulator's QP numbering (the samples' too).
    let eps = &f.stats.qp_rx;
    let nqp = f.stats.samples[0].qp_rate.len();
    let t = &f.world.topo;
    // (lowest rate, QP) of each QP that went below its line rate.
    let mut slowed: Vec<(u64, usize)> = (0..nqp)
        .filter_map(|q| {
            let line = eps.get(q).map_or(u64::MAX, |r| t.ports[t.ep_port(r.src).0 as usize].rate.0);
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
            let pts: Vec<(f64, f64)> = f.stats.samples.iter().map(|s| (units::SimTime(s.t).as_us_f64(), s.qp_rate[q] as f64 / 1e9)).collect();
            let who = eps.get(q).map_or_else(String::new, |r| format!(" {}→{}", f.endpoint_name(r.src), f.endpoint_name(r.dst)));
            Line {
                label: format!("qp{q}{who} (min {})", units::BitRate(min)),
                colour: PALETTE[k % PALETTE.len()],
                pts: drop_flat(downsample(&pts, MAX_POINTS)),
            }
        })
        .collect();
    Ok(RateLines { lines, throttled })
}

/// The per-QP DCQCN rate chart, or why there is none.
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
fn blocked(ps: &PortStats) -> u64 {
    ps.paused_ps.iter().copied().max().unwrap_or(0).max(ps.xmit_wait_ps)
}

/// Margins of the flow-control timeline: port names on the left, the exact blocked time
/// on the right; and the height of a row.
const FC_L: f64 = 128.0;
const FC_R: f64 = 96.0;
const FC_ROW: f64 = 17.0;
/// Space above the rows (the title) and below them (the time axis).
const FC_TOP: f64 = 34.0;
const FC_BOTTOM: f64 = 46.0;

/// The flow-control timeline of one fabric: a row per blocked port, a bar per sampled
/// interval it was paused (RoCE) or waiting for credits (IB).
fn fc_chart(f: &Fabric, time: &Scale, sampled: bool) -> String {
    let id = format!("{}-fc", f.key);
    let (what, class) = if f.ib() { ("waiting for credits", "VL") } else { ("paused by PFC", "priority") };
    if !sampled {
        return nodata(&id, f.key, &format!("{}: ports {what}", f.name), &not_sampled());
    }
    let (rows, all, unseen) = fc_rows(f);
    let unseen_note = unseen_note(f, &unseen);
    if rows.is_empty() {
        let why = format!("no port was sampled {what} in this run (sampled every {}).{unseen_note}", f.world.sample_period);
        return nodata(&id, f.key, &format!("{}: ports {what}", f.name), &why);
    }
    let (w, top, bottom) = (W, FC_TOP, FC_BOTTOM);
    let h = top + rows.len() as f64 * FC_ROW + bottom;
    let pw = w - FC_L - FC_R;
    let title = format!("{}: ports {what}, most blocked first", f.name);
    let (bars, n) = fc_bars(f, &rows, time, what, class);
    let mut s = format!("<figure class=\"fig {}\" id=\"{id}\">\n", f.key);
    let _ = writeln!(
        s,
        "<svg class=\"chart\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"{t}\" data-points=\"{n}\">\n\
         <text class=\"title\" x=\"8\" y=\"20\">{t}</text>",
        t = esc(&title)
    );
    for &v in &time.ticks {
        let x = FC_L + time.frac(v) * pw;
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
        "<rect class=\"frame\" x=\"{FC_L}\" y=\"{top}\" width=\"{pw:.1}\" height=\"{:.1}\"/>\n\
         <text class=\"axl\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">time (µs)</text>\n\
         <text class=\"axl\" x=\"{:.1}\" y=\"{top}\" text-anchor=\"start\" dy=\"-4\">{what}</text>\n</svg>",
        h - top - bottom,
        FC_L + pw / 2.0,
        h - 8.0,
        w - FC_R + 6.0,
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

/// The note on ports whose counters show blocked time that no sample caught (empty when
/// there are none).
fn unseen_note(f: &Fabric, unseen: &[(usize, u64)]) -> String {
    let t = &f.world.topo;
    let Some(&(p, b)) = unseen.first() else { return String::new() };
    let n = unseen.len();
    format!(
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
        units::SimDuration(b).as_us_f64()
    )
}

/// The timeline's rows (name, bars, exact blocked time) and how many bars they draw.
fn fc_bars(f: &Fabric, rows: &[FcRow], time: &Scale, what: &str, class: &str) -> (String, usize) {
    let (w, top) = (W, FC_TOP);
    let pw = w - FC_L - FC_R;
    let end = f.report.end_ps.max(1);
    let mut bars = String::new();
    let mut n = 0usize;
    for (k, r) in rows.iter().enumerate() {
        let y = top + k as f64 * FC_ROW;
        let name = f.port_name(r.port);
        let classes: Vec<String> = (0..8).filter(|b| r.mask & (1 << b) != 0).map(|b| b.to_string()).collect();
        let share = 100.0 * r.blocked_ps as f64 / end as f64;
        if k % 2 == 1 {
            let _ = writeln!(bars, "<rect class=\"band\" x=\"{FC_L}\" y=\"{y:.1}\" width=\"{pw:.1}\" height=\"{FC_ROW}\"/>");
        }
        let _ = write!(
            bars,
            "<g data-s=\"{k}\"><title>{} → {}: {what} {:.1} µs ({share:.1}% of the run); {class} {}</title>\
             <text class=\"row\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\
             <text class=\"row\" x=\"{:.1}\" y=\"{:.1}\">{:.1} µs, {share:.0}%</text>",
            esc(&name),
            esc(&f.peer_name(r.port)),
            units::SimDuration(r.blocked_ps).as_us_f64(),
            classes.join(","),
            FC_L - 6.0,
            y + FC_ROW - 5.0,
            esc(&shorten(&name, 20)),
            w - FC_R + 6.0,
            y + FC_ROW - 5.0,
            units::SimDuration(r.blocked_ps).as_us_f64(),
        );
        // Spans closer than half a pixel merge, so a row has at most one bar per pixel.
        let mut px: Vec<(f64, f64)> = vec![];
        for &(a, b) in &r.spans {
            let x0 = FC_L + time.frac(units::SimTime(a).as_us_f64()) * pw;
            let x1 = FC_L + time.frac(units::SimTime(b).as_us_f64()) * pw;
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
                FC_ROW - 5.0,
                f.colour
            );
            n += 1;
        }
        bars.push_str("</g>\n");
    }
    (bars, n)
}

/// Completion-time CDF of every fabric on one chart (log scale when the times span more
/// than two decades).
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
        let pts: Vec<(f64, f64)> =
            (0..n).filter(|i| (i + 1) % step == 0 || i + 1 == n).map(|i| (units::SimDuration(fct[i]).as_us_f64(), (i + 1) as f64 / n as f64)).collect();
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
