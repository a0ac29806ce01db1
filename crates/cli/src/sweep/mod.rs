//! `fabriclab sweep FILE --vary PATH=V1,V2,..`: one scenario run over a grid of parameter
//! values, every variant in parallel on all cores, written as a CSV table and an SVG plot
//! ("lossless by configuration": the varied RoCEv2 setting against InfiniBand as the
//! reference), and `fabriclab merge`: the shards of a sweep split over machines
//! (`--shard I/N`, one per task of a batch scheduler's job array) joined into the same
//! files an unsharded sweep writes.
//!
//! Fabrics. A file with a `[roce]` section runs every variant on RoCEv2; its InfiniBand
//! side (the file's `[infiniband]`, or stated defaults as `compare` fills them) runs once
//! as a reference when every varied field is a RoCE-only knob (`roce.*`, `buffer.*`), and
//! per variant otherwise, with the edits that apply to it (`roce.*`/`buffer.*` edits are
//! skipped). A file that cannot give an InfiniBand side is swept on RoCEv2 alone; a file
//! with only `[infiniband]` is swept on InfiniBand alone. Identical runs (a fabric whose
//! applicable edits are the same for two variants) are simulated once.
//!
//! Files. The CSV opens with `# key=value` comment lines holding what the plot needs
//! (scenario name, metric, number of variants, how each fabric ran, and in a shard file
//! which shard it is), then one row per (variant, fabric) in a fixed column order; rows
//! of a fabric run once have `ref` as their variant and empty parameter cells. The SVG is
//! drawn from the CSV's text alone, so `merge` reproduces both files byte for byte.
//! Nothing in either file depends on the machine, the thread count or the wall clock.
//!
//! Files, in the order a sweep runs: `vary.rs` (the grid), `fabrics.rs` (which fabrics run,
//! and how), `shard.rs` (the runs a shard owns, without duplicates), `simulate.rs`
//! (compile all, then run all in parallel), `figures.rs` (a run's CSV columns and metrics),
//! `csv_file.rs` (the CSV written and read back), `plot.rs` (the SVG), `output.rs` (the
//! files and the table or JSON printed), and `merge.rs` (`fabriclab merge`). This file
//! keeps the arguments and [`run`], which takes those steps in turn.

mod csv_file;
mod fabrics;
mod figures;
mod merge;
mod output;
mod plot;
mod shard;
mod simulate;
mod vary;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use toml::{Table, Value};

use csv_file::{Meta, Row};
use fabrics::{Fabric, Mode};
use figures::{metric, Metric, METRICS};
use output::{print_result, write_outputs};
use shard::parse_shard;

pub use merge::{merge, MergeArgs};

const SHORTCUTS: &str = "\
Each --vary is PATH=V1,V2,..: a field of the scenario file by its path (roce.ecn[0].kmin,
buffer.headroom, traffic[0].size, topology.leaves; a missing field is added) and its
values, split on commas outside brackets and quotes ([3, 4] is one value). Several --vary
form their Cartesian product, the first outermost; the plot's x axis is the first one.
Shortcuts:
  incast-degree=N     the first incast traffic entry keeps its first N senders
  oversubscription=R  topology.oversubscription (leaf-spine without uplinks_per_spine)
  dcqcn=P             roce.dcqcn.preset: off, paper, nvidia-default or hpcc-ns3
  pfc=on|off          roce.pfc.enabled
  headroom=V          buffer.headroom: \"auto\" or a size per lossless PG (100KB)
  ecn-kmin=V          roce.ecn[i].kmin of every ECN entry
RoCE-only fields (roce.*, buffer.*) leave InfiniBand as a reference line run once.
--shard I/N (0-based: 0 <= I < N) runs the variants whose index % N == I and writes
DIR/sweep.shard-I-of-N.csv; `fabriclab merge DIR` joins the shards.";

/// `fabriclab sweep` arguments.
#[derive(Args, Debug)]
#[command(after_help = SHORTCUTS)]
pub struct SweepArgs {
    /// Scenario file (TOML).
    pub file: PathBuf,
    /// PATH=V1,V2,..: a field (or shortcut, see below) and its values (repeatable).
    #[arg(long = "vary", required = true, value_name = "PATH=V1,V2,..")]
    pub vary: Vec<String>,
    /// Simulations in parallel (default: all cores).
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,
    /// Run only shard I of N (0-based, I = 0..N-1), e.g. ${SLURM_ARRAY_TASK_ID}/16.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Directory for sweep.csv and sweep.svg (or the shard's CSV).
    #[arg(long, default_value = "sweep")]
    pub out: PathBuf,
    /// The plot's y axis (default: busbw with a collective, else fct-p99).
    #[arg(long, value_parser = METRICS.iter().map(|m| m.name).collect::<Vec<_>>())]
    pub metric: Option<String>,
    /// Print one JSON document instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Each point is checked against these (a point beyond them fails with the reason).
    #[command(flatten)]
    pub limits: crate::limits::LimitArgs,
}

fn fail(m: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {m}");
    ExitCode::from(2)
}

fn fail_io(p: &Path, e: std::io::Error) -> ExitCode {
    eprintln!("error: {}: cannot write: {e}", p.display());
    ExitCode::from(1)
}

pub fn run(a: SweepArgs) -> ExitCode {
    match sweep(&a) {
        Ok(()) => ExitCode::SUCCESS,
        Err(code) => code,
    }
}

/// The sweep, step by step; an error has been printed when it returns one.
fn sweep(a: &SweepArgs) -> Result<(), ExitCode> {
    let name = a.file.display().to_string();
    let src = std::fs::read_to_string(&a.file).map_err(|e| fail(format!("{name}: cannot read: {e}")))?;
    let table: Table = toml::from_str(&src).map_err(|e: toml::de::Error| fail(format!("{name}: {}", e.message())))?;
    let shard = a.shard.as_deref().map(parse_shard).transpose().map_err(fail)?;
    if a.jobs == Some(0) {
        return Err(fail("--jobs 0: expected at least 1"));
    }
    let params = vary::params(&a.vary, &table).map_err(fail)?;
    let metric = plotted_metric(a.metric.as_deref(), &table).map_err(fail)?;
    let fabrics = fabrics::choose(&name, &src, &table, &params).map_err(fail)?;
    let meta = Meta {
        scenario: table.get("scenario").and_then(|s| s.get("name")).and_then(Value::as_str).unwrap_or("").to_string(),
        metric,
        params: params.iter().map(|p| p.name.clone()).collect(),
        variants: params.iter().map(|p| p.values.len()).product(),
        modes: fabrics.modes,
    };
    let (tasks, rows) = shard::tasks(&meta, &params, &fabrics.edits, shard);
    for n in &fabrics.notes {
        eprintln!("note: {n}");
    }
    let workers = a.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let largest = simulate::compile_all(&name, &src, &tasks, workers).map_err(fail)?;
    let fit = simulate::workers_that_fit(workers, largest);
    if fit < workers {
        eprintln!(
            "note: {fit} simulation{} at a time, not {workers}: a point needs up to an estimated {} of memory (--max-memory)",
            if fit == 1 { "" } else { "s" },
            scenario::estimate::human(largest)
        );
    }
    let workers = fit;
    announce(&meta, shard, tasks.len(), workers);
    let results = simulate::simulate_all(&name, &src, &tasks, workers).map_err(fail)?;
    let mut rows: Vec<Row> = rows
        .into_iter()
        .map(|(mut r, t)| {
            r.cells = results[t].clone();
            r
        })
        .collect();
    rows.sort_by_key(Row::order);

    std::fs::create_dir_all(&a.out).map_err(|e| fail_io(&a.out, e))?;
    let (csv_path, svg_path) = match shard {
        Some((i, n)) => (a.out.join(format!("sweep.shard-{i}-of-{n}.csv")), None),
        None => (a.out.join("sweep.csv"), Some(a.out.join("sweep.svg"))),
    };
    write_outputs(&meta, &rows, shard, &csv_path, svg_path.as_deref())?;
    print_result(&meta, &rows, shard, &csv_path, svg_path.as_deref(), a.json);
    let lossless: u64 = rows.iter().filter(|r| r.fabric == Fabric::Roce).filter_map(|r| r.cells[meta.column("lossless_drops")].parse::<u64>().ok()).sum();
    if lossless > 0 {
        eprintln!("warning: packets dropped in lossless classes in some RoCEv2 variants ({lossless} in all)");
    }
    Ok(())
}

/// `--metric`, by default busbw with a collective and fct-p99 without.
fn plotted_metric(name: Option<&str>, table: &Table) -> Result<&'static Metric, String> {
    let collective = matches!(table.get("traffic"), Some(Value::Array(tr)) if tr.iter().any(|x| x.get("kind").and_then(Value::as_str) == Some("collective")));
    Ok(match name {
        Some("busbw") if !collective => return Err("--metric busbw: the scenario has no collective traffic; choose fct-p99 or another metric".into()),
        Some(m) => metric(m).expect("clap checked the name"),
        None if collective => &METRICS[0],
        None => &METRICS[1],
    })
}

/// The line on stderr saying what is about to run.
fn announce(meta: &Meta, shard: Option<(usize, usize)>, tasks: usize, workers: usize) {
    let variants = meta.variants;
    let what = |f: Fabric| match meta.mode(f) {
        Mode::PerVariant => format!("{} per variant", f.title()),
        Mode::Once => format!("{} once (reference)", f.title()),
        Mode::Off => format!("no {}", f.title()),
    };
    eprintln!(
        "sweep {}: {variants} variant{}{}, {}, {}: {} simulation{} on {} thread{}",
        meta.scenario,
        if variants == 1 { "" } else { "s" },
        shard.map_or(String::new(), |(i, n)| format!(" (shard {i}/{n})")),
        what(Fabric::Roce),
        what(Fabric::Infiniband),
        tasks,
        if tasks == 1 { "" } else { "s" },
        workers.min(tasks.max(1)),
        if workers.min(tasks.max(1)) == 1 { "" } else { "s" },
    );
}
