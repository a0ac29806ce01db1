//! The design as a readable report: the inputs in one line, why this many tiers, a table
//! of switches per tier and one of links per layer, transceivers, bisection and hops.
//!
//! Left out: the formulas (`explain.rs`) and JSON (the [`Design`] serialises itself).

use std::fmt::Write as _;

use super::explain::ovs;
use super::Design;

/// The design as a readable report.
pub fn text(d: &Design) -> String {
    let i = &d.input;
    let mut s = String::new();
    let what = match (i.preset, i.scalable_units) {
        (Some(p), Some(n)) => format!("{p}, {n} SU{}: ", if n == 1 { "" } else { "s" }),
        _ => String::new(),
    };
    let ufm = if d.ufm_ports > 0 { format!(" + {} UFM ports", d.ufm_ports) } else { String::new() };
    let _ = writeln!(
        s,
        "{what}{}{ufm}, {}, radix {}, leaf {}{}{}",
        if i.nics_per_node == 1 {
            format!("{} endpoints", d.endpoints)
        } else {
            format!("{} nodes × {} NICs = {} endpoints", d.nodes, i.nics_per_node, d.endpoints)
        },
        i.speed,
        i.radix,
        ovs(i.leaf_oversubscription),
        if d.tiers == 3 { format!(", spine {}", ovs(i.spine_oversubscription)) } else { String::new() },
        if d.sizing.rail_optimised { format!(", rail-optimised, {} SUs of {} nodes", d.scalable_units, d.nodes_per_su) } else { String::new() },
    );
    if d.spare_node_slots > 0 {
        let _ = writeln!(s, "{} node slots spare in the last SU", d.spare_node_slots);
    }
    let _ = writeln!(s, "{}\n", d.choice);

    let mut rows = vec![vec!["switches".to_string(), "count".into(), "down+up".into(), "ports used".into(), "free".into(), "transceivers".into()]];
    for t in &d.switch_tiers {
        rows.push(vec![
            t.name.into(),
            t.switches.to_string(),
            format!("{}+{}", t.ports_down, t.ports_up),
            t.ports_used.to_string(),
            t.ports_free.to_string(),
            t.transceivers.to_string(),
        ]);
    }
    let free: u64 = d.switch_tiers.iter().map(|t| t.ports_free).sum();
    rows.push(vec![
        "total".into(),
        d.totals.switches.to_string(),
        String::new(),
        d.totals.ports_used.to_string(),
        free.to_string(),
        d.totals.switch_transceivers.to_string(),
    ]);
    table(&mut s, &rows);
    s.push('\n');

    let mut rows = vec![vec!["links".to_string(), "count".into(), "cables".into(), "per pair".into()]];
    for l in &d.link_layers {
        rows.push(vec![l.name.into(), l.links.to_string(), l.cables.to_string(), l.links_per_pair.to_string()]);
    }
    rows.push(vec!["total".into(), d.totals.links.to_string(), d.totals.cables.to_string(), String::new()]);
    table(&mut s, &rows);
    s.push('\n');

    let _ = writeln!(
        s,
        "transceivers  {} = {} switch side (switch ports per module: {}) + {} node side (NIC ports per module: {}{})",
        d.totals.transceivers,
        d.totals.switch_transceivers,
        i.switch_ports_per_transceiver,
        d.totals.node_transceivers,
        i.node_ports_per_transceiver,
        if d.ufm_ports > 0 { "; one per UFM port" } else { "" },
    );
    let _ = writeln!(
        s,
        "bisection     {:.1} one way ({} endpoints × {} / 2{})",
        d.bisection.bandwidth,
        d.endpoints,
        i.speed,
        if d.bisection.oversubscription > 1.0 { format!(" / {:.2} oversubscription", d.bisection.oversubscription) } else { ", full bisection".into() },
    );
    let _ = writeln!(s, "switch hops   {} same leaf, {} same pod, {} across pods ({})", d.hops.same_leaf, d.hops.same_pod, d.hops.across_pods, d.hops.note);
    s
}

/// Left column left-aligned, the rest right-aligned, two spaces apart.
fn table(s: &mut String, rows: &[Vec<String>]) {
    let cols = rows[0].len();
    let w: Vec<usize> = (0..cols).map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
    for r in rows {
        let mut line = String::new();
        for (c, cell) in r.iter().enumerate() {
            if c == 0 {
                let _ = write!(line, "{cell:<w$}", w = w[0]);
            } else {
                let _ = write!(line, "  {cell:>w$}", w = w[c]);
            }
        }
        let _ = writeln!(s, "{}", line.trim_end());
    }
}
