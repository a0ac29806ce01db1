//! The sweep's CSV: `# key=value` comment lines holding what the plot needs ([`Meta`]:
//! scenario, metric, number of variants, how each fabric ran, and in a shard file which
//! shard it is), the header row, then one [`Row`] per (variant, fabric) in a fixed column
//! order; rows of a fabric run once have `ref` as their variant and empty parameter cells.
//! [`parse_csv`] reads back exactly what [`csv_text`] writes, which is what lets `merge`
//! and the SVG work from the text alone.
//!
//! Left out: checks across files (`merge.rs`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::fabrics::{Fabric, Mode};
use super::figures::{metric, Metric, COLUMNS};
use super::shard::parse_shard;

/// What a sweep's files say about it besides their rows: the CSV's comment lines.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Meta {
    pub(super) scenario: String,
    pub(super) metric: &'static Metric,
    pub(super) params: Vec<String>,
    pub(super) variants: usize,
    pub(super) modes: [Mode; 2],
}

impl Meta {
    pub(super) fn mode(&self, f: Fabric) -> Mode {
        self.modes[f as usize]
    }

    pub(super) fn header(&self) -> Vec<String> {
        let mut h = vec!["variant".to_string()];
        h.extend(self.params.iter().cloned());
        h.push("fabric".into());
        h.extend(COLUMNS.iter().map(|c| c.to_string()));
        h
    }

    pub(super) fn column(&self, name: &str) -> usize {
        COLUMNS.iter().position(|c| *c == name).expect("a known column")
    }
}

/// One CSV row: a fabric's run of a variant (`None`: the fabric's single run).
#[derive(Clone, Debug)]
pub(super) struct Row {
    pub(super) variant: Option<usize>,
    pub(super) values: Vec<String>,
    pub(super) fabric: Fabric,
    pub(super) cells: Vec<String>,
}

impl Row {
    pub(super) fn order(&self) -> (usize, Fabric) {
        (self.variant.unwrap_or(usize::MAX), self.fabric)
    }
}

/// The CSV text: comment lines, the header row, the rows.
pub(super) fn csv_text(meta: &Meta, rows: &[Row], shard: Option<(usize, usize)>) -> String {
    let mut s = String::new();
    let clean = |x: &str| x.replace(['\n', '\r'], " ");
    let _ = writeln!(s, "# fabriclab sweep");
    let _ = writeln!(s, "# scenario={}", clean(&meta.scenario));
    let _ = writeln!(s, "# metric={}", meta.metric.name);
    let _ = writeln!(s, "# variants={}", meta.variants);
    for f in Fabric::ALL {
        let _ = writeln!(s, "# {}={}", f.key(), meta.mode(f).key());
    }
    if let Some((i, n)) = shard {
        let _ = writeln!(s, "# shard={i}/{n}");
    }
    let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::Any(b'\n')).from_writer(vec![]);
    let _ = w.write_record(meta.header());
    for r in rows {
        let mut rec = vec![r.variant.map_or("ref".to_string(), |v| v.to_string())];
        rec.extend(r.values.iter().cloned());
        rec.push(r.fabric.key().to_string());
        rec.extend(r.cells.iter().cloned());
        let _ = w.write_record(&rec);
    }
    let body = w.into_inner().map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
    s + &body
}

/// A sweep CSV read back: its header, its shard (I, N) if it is one, its rows.
pub(super) type Parsed = (Meta, Option<(usize, usize)>, Vec<Row>);

/// Parses a CSV written by `csv_text`.
pub(super) fn parse_csv(file: &str, text: &str) -> Result<Parsed, String> {
    let mut kv: BTreeMap<&str, &str> = BTreeMap::new();
    let mut lines = text.lines().peekable();
    if lines.next() != Some("# fabriclab sweep") {
        return Err(format!("{file}: not a fabriclab sweep CSV (its first line is not `# fabriclab sweep`)"));
    }
    let mut body_start = "# fabriclab sweep\n".len();
    while let Some(l) = lines.next_if(|l| l.starts_with('#')) {
        body_start += l.len() + 1;
        let (k, v) = l[1..].trim_start().split_once('=').ok_or_else(|| format!("{file}: header line `{l}`: expected `# key=value`"))?;
        kv.insert(k, v);
    }
    let get = |k: &str| kv.get(k).copied().ok_or_else(|| format!("{file}: the header has no `# {k}=` line"));
    let metric = metric(get("metric")?).ok_or_else(|| format!("{file}: unknown metric `{}`", kv["metric"]))?;
    let variants = get("variants")?.parse::<usize>().map_err(|_| format!("{file}: `# variants=` is not a number"))?;
    let mut modes = [Mode::Off; 2];
    for f in Fabric::ALL {
        modes[f as usize] = Mode::parse(get(f.key())?).ok_or_else(|| format!("{file}: `# {}=` is not per-variant, once or off", f.key()))?;
    }
    let shard = kv.get("shard").map(|s| parse_shard(s).map_err(|m| format!("{file}: {m}"))).transpose()?;
    let mut rd = csv::ReaderBuilder::new().has_headers(true).from_reader(&text.as_bytes()[body_start.min(text.len())..]);
    let header: Vec<String> = rd.headers().map_err(|e| format!("{file}: {e}"))?.iter().map(str::to_string).collect();
    let k = header.len().checked_sub(COLUMNS.len() + 2).ok_or_else(|| format!("{file}: too few columns"))?;
    if header[0] != "variant" || header[k + 1] != "fabric" || header[k + 2..] != COLUMNS {
        return Err(format!("{file}: unexpected columns (written by another version of fabriclab?)"));
    }
    let meta = Meta { scenario: get("scenario")?.to_string(), metric, params: header[1..=k].to_vec(), variants, modes };
    let mut rows = vec![];
    for (n, rec) in rd.records().enumerate() {
        let rec = rec.map_err(|e| format!("{file}: {e}"))?;
        let line = n + 1;
        let variant = match &rec[0] {
            "ref" => None,
            v => Some(
                v.parse::<usize>()
                    .ok()
                    .filter(|&v| v < variants)
                    .ok_or_else(|| format!("{file}: row {line}: variant `{v}` is not 0..{}", variants.saturating_sub(1)))?,
            ),
        };
        let fabric = Fabric::parse(&rec[k + 1]).ok_or_else(|| format!("{file}: row {line}: unknown fabric `{}`", &rec[k + 1]))?;
        let expected = if variant.is_some() { Mode::PerVariant } else { Mode::Once };
        if meta.mode(fabric) != expected {
            return Err(format!("{file}: row {line}: a {} row, but the header says {}={}", fabric.key(), fabric.key(), meta.mode(fabric).key()));
        }
        rows.push(Row {
            variant,
            values: rec.iter().skip(1).take(k).map(str::to_string).collect(),
            fabric,
            cells: rec.iter().skip(k + 2).map(str::to_string).collect(),
        });
    }
    Ok((meta, shard, rows))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::figures::METRICS;
    use crate::sweep::plot::plot;

    #[test]
    fn csv_round_trips() {
        let meta = Meta { scenario: "x".into(), metric: &METRICS[1], params: vec!["a.b".into()], variants: 2, modes: [Mode::PerVariant, Mode::Once] };
        let row = |v: Option<usize>, f, val: &str| Row { variant: v, values: vec![val.into()], fabric: f, cells: vec!["1.000".into(); COLUMNS.len()] };
        let rows = vec![row(Some(0), Fabric::Roce, "[1, 2]"), row(Some(1), Fabric::Roce, "3"), row(None, Fabric::Infiniband, "")];
        let text = csv_text(&meta, &rows, Some((0, 1)));
        let (m, shard, back) = parse_csv("t", &text).unwrap();
        assert_eq!(m, meta);
        assert_eq!(shard, Some((0, 1)));
        assert_eq!(csv_text(&m, &back, Some((0, 1))), text);
        assert!(plot(&m, &back).contains("<polyline class=\"roce\""));
    }
}
