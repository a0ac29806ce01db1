//! The `fabriclab` command line.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod burst;
mod design;
mod nccl;
mod plan;
mod prove;
mod sm;
mod sweep;

#[derive(Parser)]
#[command(name = "fabriclab", version, about = "Packet-level InfiniBand vs RoCEv2 fabric simulator")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Simulate a scenario file and print what happened.
    Run {
        /// Scenario file (TOML).
        file: PathBuf,
        /// Print one JSON document instead of the summary.
        #[arg(long)]
        json: bool,
        /// Write CSV time series (queues, QP rates, pause state) and the pause log here.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Write a self-contained HTML report with plots (queues, rates, pauses, CDF) here.
        #[arg(long, value_name = "PATH", conflicts_with = "minbytes")]
        html: Option<PathBuf>,
        /// nccl-tests size sweep of the scenario's collective: smallest size (8, 64K, 1M, 8G
        /// as nccl-tests reads them: K/M/G are powers of 2^10).
        #[arg(short = 'b', long = "minbytes", requires = "maxbytes")]
        minbytes: Option<String>,
        /// Largest size of the sweep.
        #[arg(short = 'e', long = "maxbytes", requires = "minbytes")]
        maxbytes: Option<String>,
        /// Size multiplier between sweep steps.
        #[arg(short = 'f', long = "stepfactor", default_value = "2")]
        stepfactor: String,
    },
    /// Simulate a benchmark scenario and print wall time, events/s and transmissions/s.
    Bench { file: PathBuf },
    /// Run the InfiniBand subnet manager on a topology: LIDs, forwarding tables, checks.
    Sm(sm::SmArgs),
    /// Run a scenario over a grid of parameter values (all cores): CSV, SVG plot, table.
    Sweep(sweep::SweepArgs),
    /// Join the shard files of a sweep run with --shard into sweep.csv and sweep.svg.
    Merge(sweep::MergeArgs),
    /// Size a Clos fabric (tiers, switches, cables, transceivers, bisection) from its inputs.
    Design(design::DesignArgs),
    /// Microburst buffer planner: peak queue, drain, largest burst absorbed, drops or pause beyond.
    Burst(burst::BurstArgs),
    /// Planners for a fabric's settings (`plan roce`: the RoCEv2 lossless planner).
    Plan(plan::PlanArgs),
    /// Run one scenario on InfiniBand and on RoCEv2 and print the results side by side.
    Compare {
        /// Scenario file (TOML) with a [roce] section; [infiniband] is optional (defaults).
        file: PathBuf,
        /// Print one JSON document instead of the table.
        #[arg(long)]
        json: bool,
        /// Also write a self-contained HTML report with plots of both fabrics here.
        #[arg(long, value_name = "PATH")]
        html: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    // Like other Unix filters, end quietly when the reader of our output goes away
    // (`fabriclab run x --json | head`): Rust ignores SIGPIPE and print! would panic.
    // SAFETY: restoring the default disposition of one signal before any thread starts.
    #[cfg(unix)]
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Sm(a) => sm::run(a),
        Cmd::Sweep(a) => sweep::run(a),
        Cmd::Merge(a) => sweep::merge(a),
        Cmd::Design(a) => design::run(a),
        Cmd::Burst(a) => burst::run(a),
        Cmd::Plan(a) => plan::run(a),
        Cmd::Compare { file, json, html } => compare(&file, json, html.as_deref()),
        Cmd::Run { file, json, out: _, html: _, minbytes: Some(b), maxbytes: Some(e), stepfactor } => nccl::run(&file, &b, &e, &stepfactor, json),
        Cmd::Run { file, json, out, html, .. } => {
            let world = match scenario::load(&file) {
                Ok(w) => w,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            };
            let (sim, report) = report::run(&world, out.is_some() || html.is_some());
            if let Some(dir) = &out {
                if let Err(e) = report::write_csv(dir, &world, &sim.stats, &report) {
                    eprintln!("error: {}: cannot write: {e}", dir.display());
                    return ExitCode::from(1);
                }
            }
            if let Some(path) = &html {
                if let Err(code) = write_html(path, &report::html::run_page(&world, &report, &sim.stats)) {
                    return code;
                }
            }
            if json {
                match serde_json::to_string_pretty(&report) {
                    Ok(s) => println!("{s}"),
                    Err(e) => {
                        eprintln!("error: cannot serialise the report: {e}");
                        return ExitCode::from(1);
                    }
                }
            } else {
                print!("{}", report::text(&report));
            }
            if report.totals.lossless_drops > 0 {
                eprintln!("warning: {} packets dropped in lossless classes", report.totals.lossless_drops);
            }
            ExitCode::SUCCESS
        }
        Cmd::Bench { file } => {
            let world = match scenario::load(&file) {
                Ok(w) => w,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            };
            let t0 = std::time::Instant::now();
            let mut sim = world.simulator(false);
            let setup = t0.elapsed();
            sim.run();
            let total = t0.elapsed();
            let tx: u64 = sim.stats.ports.iter().map(|p| p.tx_frames).sum();
            let secs = total.as_secs_f64();
            println!(
                "{}: setup {:.3} s, total {:.3} s, {} events ({:.2} M/s), {} link transmissions ({:.2} M/s), simulated {}, peak RSS {}",
                world.name,
                setup.as_secs_f64(),
                secs,
                sim.events(),
                sim.events() as f64 / secs / 1e6,
                tx,
                tx as f64 / secs / 1e6,
                sim.now(),
                peak_rss()
            );
            ExitCode::SUCCESS
        }
    }
}

fn compare(file: &std::path::Path, json: bool, html: Option<&std::path::Path>) -> ExitCode {
    let name = file.display().to_string();
    let src = match std::fs::read_to_string(file) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {name}: cannot read: {e}");
            return ExitCode::from(2);
        }
    };
    let (cmp, ib, roce) = match report::compare::run(&name, &src, html.is_some()) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(path) = html {
        if let Err(code) = write_html(path, &report::html::compare_page(&cmp, &ib, &roce)) {
            return code;
        }
    }
    if json {
        match serde_json::to_string_pretty(&cmp) {
            Ok(s) => println!("{s}"),
            Err(e) => {
                eprintln!("error: cannot serialise the comparison: {e}");
                return ExitCode::from(1);
            }
        }
    } else {
        print!("{}", report::compare::text(&cmp));
    }
    ExitCode::SUCCESS
}

/// Writes an HTML report; an error names the path.
fn write_html(path: &std::path::Path, page: &str) -> Result<(), ExitCode> {
    std::fs::write(path, page).map_err(|e| {
        eprintln!("error: {}: cannot write the HTML report: {e}", path.display());
        ExitCode::from(1)
    })
}

/// Peak resident set size from /proc (Linux), for benchmark output.
fn peak_rss() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).map(|l| l[6..].trim().to_string()))
        .unwrap_or_else(|| "n/a".into())
}
