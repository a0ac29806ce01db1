//! `fabriclab merge`: the shard files of a sweep run with `--shard I/N` (one per task of a
//! batch scheduler's job array) joined into the `sweep.csv` and `sweep.svg` an unsharded
//! sweep writes, byte for byte, once it has checked that the shards come from one sweep,
//! each shard holds only its own variants, and every variant is there exactly once (the
//! missing shards and variants are named).
//!
//! Left out: the CSV's format (`csv_file.rs`); ownership of variants is `shard.rs`'s rule.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use super::csv_file::{parse_csv, Meta, Row};
use super::fabrics::{Fabric, Mode};
use super::output::{print_result, write_outputs};
use super::{fail, fail_io};

/// `fabriclab merge` arguments.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Shard files (sweep.shard-I-of-N.csv) or directories holding them.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Directory for sweep.csv and sweep.svg (default: where the shards are).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Print one JSON document instead of the table.
    #[arg(long)]
    pub json: bool,
}

pub fn merge(a: MergeArgs) -> ExitCode {
    let mut files: Vec<PathBuf> = vec![];
    for p in &a.inputs {
        if p.is_dir() {
            let rd = match std::fs::read_dir(p) {
                Ok(r) => r,
                Err(e) => return fail(format!("{}: cannot read: {e}", p.display())),
            };
            let mut found: Vec<PathBuf> = rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("sweep.shard-") && n.ends_with(".csv")))
                .collect();
            if found.is_empty() {
                return fail(format!("{}: no shard files (sweep.shard-I-of-N.csv) in it", p.display()));
            }
            found.sort();
            files.extend(found);
        } else {
            files.push(p.clone());
        }
    }
    let out = a.out.clone().unwrap_or_else(|| {
        let first = &a.inputs[0];
        if first.is_dir() {
            first.clone()
        } else {
            first.parent().filter(|p| !p.as_os_str().is_empty()).map_or_else(|| PathBuf::from("."), Path::to_path_buf)
        }
    });
    let (meta, rows) = match join_shards(&files) {
        Ok(x) => x,
        Err(m) => return fail(m),
    };
    if let Err(e) = std::fs::create_dir_all(&out) {
        return fail_io(&out, e);
    }
    let (csv, svg) = (out.join("sweep.csv"), out.join("sweep.svg"));
    if let Err(code) = write_outputs(&meta, &rows, None, &csv, Some(&svg)) {
        return code;
    }
    print_result(&meta, &rows, None, &csv, Some(&svg), a.json);
    ExitCode::SUCCESS
}

/// Reads shard files and checks they make one whole sweep; rows in variant order.
fn join_shards(files: &[PathBuf]) -> Result<(Meta, Vec<Row>), String> {
    let mut meta: Option<(Meta, String)> = None;
    let mut shards: BTreeMap<usize, String> = BTreeMap::new();
    let mut total = 0;
    let mut rows: Vec<(Row, String)> = vec![];
    for f in files {
        let name = f.display().to_string();
        let text = std::fs::read_to_string(f).map_err(|e| format!("{name}: cannot read: {e}"))?;
        let (m, shard, r) = parse_csv(&name, &text)?;
        let (i, n) = shard.ok_or_else(|| format!("{name}: not a shard file (no `# shard=I/N` line); it is already a whole sweep"))?;
        match &meta {
            None => {
                meta = Some((m, name.clone()));
                total = n;
            }
            Some((m0, first)) => {
                if *m0 != m {
                    return Err(format!("{name}: its header differs from {first}'s: the shards are from different sweeps"));
                }
                if n != total {
                    return Err(format!("{name} is shard {i}/{n} but {first} is of {total} shards"));
                }
            }
        }
        if let Some(other) = shards.insert(i, name.clone()) {
            return Err(format!("{other} and {name} are both shard {i}/{n}"));
        }
        for row in &r {
            if let Some(v) = row.variant.filter(|v| v % n != i) {
                return Err(format!("{name}: variant {v} belongs to shard {}/{n}, not {i}/{n}", v % n));
            }
            if row.variant.is_none() && i != 0 {
                return Err(format!("{name}: a {} reference row, which belongs to shard 0", row.fabric.key()));
            }
        }
        rows.extend(r.into_iter().map(|x| (x, name.clone())));
    }
    let Some((meta, _)) = meta else { return Err("no shard files given".into()) };
    check_complete(&meta, total, &shards, &rows)?;
    let mut rows: Vec<Row> = rows.into_iter().map(|(r, _)| r).collect();
    rows.sort_by_key(Row::order);
    Ok((meta, rows))
}

/// Every shard of `total` there, and each fabric's rows (every variant, or the single run)
/// exactly once; `rows` carry the file they came from, for messages.
fn check_complete(meta: &Meta, total: usize, shards: &BTreeMap<usize, String>, rows: &[(Row, String)]) -> Result<(), String> {
    let missing: Vec<usize> = (0..total).filter(|i| !shards.contains_key(i)).collect();
    if !missing.is_empty() {
        let lost: Vec<String> = (0..meta.variants).filter(|v| missing.contains(&(v % total))).map(|v| v.to_string()).collect();
        let names: Vec<String> = missing.iter().map(|i| format!("{i}/{total} (sweep.shard-{i}-of-{total}.csv)")).collect();
        return Err(format!(
            "missing shard{} {}: variant{} {} not run{}",
            if names.len() == 1 { "" } else { "s" },
            names.join(", "),
            if lost.len() == 1 { "" } else { "s" },
            if lost.is_empty() { "(none)".into() } else { lost.join(", ") },
            if missing.contains(&0) && meta.modes.contains(&Mode::Once) { ", and the reference run" } else { "" }
        ));
    }
    // Each fabric's rows: every variant (or the single run) exactly once.
    for f in Fabric::ALL {
        let mut seen: BTreeMap<Option<usize>, &str> = BTreeMap::new();
        for (r, file) in rows.iter().filter(|(r, _)| r.fabric == f) {
            if let Some(prev) = seen.insert(r.variant, file) {
                let which = r.variant.map_or("the reference run".to_string(), |v| format!("variant {v}"));
                return Err(format!("{which} on {} appears twice ({prev}, {file})", f.title()));
            }
        }
        let want: Vec<Option<usize>> = match meta.mode(f) {
            Mode::PerVariant => (0..meta.variants).map(Some).collect(),
            Mode::Once => vec![None],
            Mode::Off => vec![],
        };
        let absent: Vec<String> = want.iter().filter(|v| !seen.contains_key(v)).map(|v| v.map_or("ref".to_string(), |v| v.to_string())).collect();
        if !absent.is_empty() {
            return Err(format!(
                "{} rows missing for variant{} {} (a shard file cut short?)",
                f.title(),
                if absent.len() == 1 { "" } else { "s" },
                absent.join(", ")
            ));
        }
    }
    Ok(())
}
