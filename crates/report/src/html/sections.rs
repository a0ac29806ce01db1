//! The page's tables: collectives, uplink utilisation per tier (load balancing), the incident timeline (with storms and the deadlock
//! cycle) and the notes. Exact figures from the report, not from samples.

use std::fmt::Write as _;

use super::{esc, Fabric};
use crate::compare::cell;

/// The collectives table: each job's time per iteration and busbw on each fabric, and
/// the busbw bound.
pub(super) fn collectives(s: &mut String, fabrics: &[Fabric]) {
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
            let t = o.and_then(|c| c.time_ps).map(|t| units::SimDuration(t).as_us_f64());
            let bw = o.filter(|c| c.time_ps.is_some()).map(|c| c.busbw_gbs);
            let _ = write!(s, "<td class=\"num\">{}</td><td class=\"num\">{}</td>", cell(t, "us"), cell(bw, "GB/s"));
        }
        let _ = writeln!(s, "<td class=\"num\">{}</td></tr>", cell(Some(c.busbw_bound_gbs), "GB/s"));
    }
    s.push_str("</tbody>\n</table>\n");
}

/// Uplink utilisation per switch tier and packet order, for each fabric whose report has
/// a load-balancing section (nothing otherwise).
pub(super) fn load_balance(s: &mut String, fabrics: &[Fabric]) {
    if fabrics.iter().all(|f| f.report.load_balance.is_none()) {
        return;
    }
    s.push_str("<h2>Uplink utilisation per tier</h2>\n<table class=\"cmp\">\n<thead><tr><th>fabric</th><th>load balancing</th><th>tier</th><th>uplinks</th><th>mean</th><th>max</th><th>min</th><th>spread (max/mean)</th><th>out-of-order arrivals</th></tr></thead>\n<tbody>\n");
    for f in fabrics {
        let Some(lb) = &f.report.load_balance else { continue };
        for t in &lb.uplink_tiers {
            let _ = writeln!(
                s,
                "<tr><td class=\"{}\">{}</td><td>{}{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{:.1}%</td><td class=\"num\">{:.1}%</td><td class=\"num\">{:.1}%</td><td class=\"num\">{:.3}</td><td class=\"num\">{}</td></tr>",
                f.key,
                f.name,
                esc(&lb.load_balancing),
                if lb.ooo { ", ooo" } else { "" },
                t.tier,
                t.ports,
                100.0 * t.mean_utilisation,
                100.0 * t.max_utilisation,
                100.0 * t.min_utilisation,
                t.spread,
                lb.out_of_order_pkts
            );
        }
    }
    s.push_str("</tbody>\n</table>\n");
    for f in fabrics {
        for x in f.report.load_balance.iter().flat_map(|lb| &lb.findings) {
            let _ = writeln!(s, "<p class=\"note\"><b>{}</b>: {}</p>", f.name, esc(x));
        }
    }
}

/// The incident timeline, PFC storms and deadlock cycle of each fabric (nothing when no
/// fabric had an incident).
pub(super) fn incidents(s: &mut String, fabrics: &[Fabric]) {
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
                units::SimTime(dl.formed_at_ps).as_us_f64(),
                units::SimTime(dl.detected_at_ps).as_us_f64(),
                esc(&hops.join(" → "))
            );
        }
        for x in &inc.storms {
            let restored = x.restored_ps.map_or_else(|| "not restored".to_string(), |t| format!("restored at {:.3} us", units::SimTime(t).as_us_f64()));
            let _ = writeln!(
                s,
                "<p class=\"note\"><b>{}</b>: PFC storm on {} priority {}: paused from {:.3} us, watchdog at {:.3} us, {restored}, {} packets dropped</p>",
                f.name,
                esc(&x.port),
                x.priority,
                units::SimTime(x.paused_from_ps).as_us_f64(),
                units::SimTime(x.detected_ps).as_us_f64(),
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
            units::SimTime(t).as_us_f64(),
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

/// Each fabric's notes (how `auto` values were resolved, what was modelled how).
pub(super) fn notes(s: &mut String, fabrics: &[Fabric]) {
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
