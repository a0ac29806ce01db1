//! What a sweep or a merge leaves behind: the CSV and the SVG drawn from its text (so a
//! merge draws the same bytes), and what it prints, the readable table or one JSON
//! document.
//!
//! Left out: the CSV's format (`csv_file.rs`) and the plot's drawing (`plot.rs`).

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use super::csv_file::{csv_text, parse_csv, Meta, Row};
use super::fabrics::Fabric;
use super::figures::COLUMNS;
use super::plot::plot;
use super::{fail, fail_io};

/// Writes the CSV and, unless this is a shard, the SVG; an error has been printed.
pub(super) fn write_outputs(meta: &Meta, rows: &[Row], shard: Option<(usize, usize)>, csv: &Path, svg: Option<&Path>) -> Result<(), ExitCode> {
    let text = csv_text(meta, rows, shard);
    std::fs::write(csv, &text).map_err(|e| fail_io(csv, e))?;
    if let Some(p) = svg {
        // Drawn from the CSV text, exactly as `merge` draws it.
        let (m, _, r) = parse_csv(&csv.display().to_string(), &text).map_err(fail)?;
        std::fs::write(p, plot(&m, &r)).map_err(|e| fail_io(p, e))?;
    }
    Ok(())
}

/// Prints the table (or the JSON document) and where the files went.
pub(super) fn print_result(meta: &Meta, rows: &[Row], shard: Option<(usize, usize)>, csv: &Path, svg: Option<&Path>, json: bool) {
    if json {
        let num = |c: &str| -> serde_json::Value { c.parse::<f64>().ok().map_or(serde_json::Value::Null, serde_json::Value::from) };
        let rows: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| {
                let mut o = serde_json::Map::new();
                o.insert("variant".into(), r.variant.map_or(serde_json::Value::Null, serde_json::Value::from));
                let values: serde_json::Map<String, serde_json::Value> =
                    meta.params.iter().zip(&r.values).filter(|_| r.variant.is_some()).map(|(p, v)| (p.clone(), v.clone().into())).collect();
                o.insert("values".into(), values.into());
                o.insert("fabric".into(), r.fabric.key().into());
                for (c, v) in COLUMNS.iter().zip(&r.cells) {
                    o.insert(c.to_string(), num(v));
                }
                o.into()
            })
            .collect();
        let doc = serde_json::json!({
            "scenario": meta.scenario,
            "metric": meta.metric.name,
            "params": meta.params,
            "variants": meta.variants,
            "roce": meta.mode(Fabric::Roce).key(),
            "infiniband": meta.mode(Fabric::Infiniband).key(),
            "shard": shard.map(|(i, n)| format!("{i}/{n}")),
            "csv": csv.display().to_string(),
            "svg": svg.map(|p| p.display().to_string()),
            "rows": rows,
        });
        println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        return;
    }
    print!("{}", table(meta, rows));
    match svg {
        Some(p) => println!("\nwrote {} and {}", csv.display(), p.display()),
        None => println!("\nwrote {}", csv.display()),
    }
}

/// The readable table.
fn table(meta: &Meta, rows: &[Row]) -> String {
    let busbw = rows.iter().any(|r| !r.cells[meta.column("busbw_gbs")].is_empty());
    let mut cols: Vec<(&str, &str)> = vec![];
    if busbw {
        cols.push(("busbw_gbs", "busbw GB/s"));
    }
    cols.extend([
        ("fct_p99_us", "FCT p99 us"),
        ("slowdown_p99", "slowdown p99"),
        ("goodput_gbps", "goodput Gb/s"),
        ("lossless_drops", "lossless drops"),
        ("pause_frames", "PFC frames"),
        ("ecn_marks", "ECN marks"),
        ("cnps", "CNPs"),
        ("paused_us", "paused us"),
        ("xmit_wait_us", "xmit wait us"),
    ]);
    // The plotted metric is always shown.
    if !cols.iter().any(|(c, _)| *c == meta.metric.column) {
        cols.push((meta.metric.column, meta.metric.name));
    }
    let mut head: Vec<String> = vec!["variant".into()];
    head.extend(meta.params.iter().cloned());
    head.push("fabric".into());
    head.extend(cols.iter().map(|(c, h)| if *c == meta.metric.column { format!("*{h}") } else { h.to_string() }));
    let mut lines = vec![head];
    for r in rows {
        let mut l = vec![r.variant.map_or("ref".into(), |v| v.to_string())];
        l.extend(r.values.iter().map(|v| if r.variant.is_some() { v.clone() } else { "-".into() }));
        l.push(r.fabric.title().into());
        l.extend(cols.iter().map(|(c, _)| {
            let v = &r.cells[meta.column(c)];
            if v.is_empty() {
                "-".into()
            } else {
                v.clone()
            }
        }));
        lines.push(l);
    }
    let k = meta.params.len() + 2;
    let widths: Vec<usize> = (0..lines[0].len()).map(|i| lines.iter().map(|l| l[i].chars().count()).max().unwrap_or(0)).collect();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "sweep {}: {} variant{} of {}; plotted: {} (* column)\n",
        meta.scenario,
        meta.variants,
        if meta.variants == 1 { "" } else { "s" },
        meta.params.join(" × "),
        meta.metric.label
    );
    for l in &lines {
        let cells: Vec<String> = l.iter().zip(&widths).enumerate().map(|(i, (c, &w))| if i < k { format!("{c:<w$}") } else { format!("{c:>w$}") }).collect();
        let _ = writeln!(s, "{}", cells.join("  ").trim_end());
    }
    s
}
