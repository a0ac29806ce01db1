//! The `fabriclab` command line: the arguments and one dispatch to a module per
//! subcommand. `run.rs`, `compare.rs` and `bench.rs` simulate scenario files (`nccl.rs` is
//! `run -b/-e`'s size sweep); `sm.rs` runs the subnet manager; `sweep/` runs a scenario over
//! a grid and merges shards; `design.rs`, `burst.rs` and `plan/` drive the planners of the
//! `plan` crate, `prove.rs` holding what their `--prove` scenarios share; `par.rs` is the
//! parallel map the sweeps use; `serve.rs` starts the web app (the `web` crate).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod bench;
mod burst;
mod compare;
mod design;
mod limits;
mod nccl;
mod oom;
mod par;
mod pcap;
mod plan;
mod progress;
mod prove;
mod run;
mod serve;
mod sm;
mod sweep;
mod verify;

/// Out of memory is an error with exit code 2, not an abort (`oom.rs`).
#[global_allocator]
static ALLOCATOR: oom::Checked = oom::Checked;

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
        /// Print what the run would cost (memory by term, events, simulated time) and stop.
        #[arg(long, conflicts_with = "minbytes")]
        estimate: bool,
        #[command(flatten)]
        limits: limits::LimitArgs,
        #[command(flatten)]
        pcap: pcap::PcapArgs,
    },
    /// Simulate a benchmark scenario and print wall time, events/s and transmissions/s.
    Bench {
        file: PathBuf,
        #[command(flatten)]
        limits: limits::LimitArgs,
    },
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
    /// Check SONiC config_db.json files for a lossless RoCE fabric: findings by severity.
    Verify(verify::VerifyArgs),
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
        #[command(flatten)]
        limits: limits::LimitArgs,
    },
    /// Serve the planners and their JSON API as a local web app (http://127.0.0.1:8080/).
    Serve(serve::ServeArgs),
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
    let limits = match &cli.cmd {
        Cmd::Run { limits, .. } | Cmd::Bench { limits, .. } | Cmd::Compare { limits, .. } => Some(limits),
        Cmd::Sweep(a) => Some(&a.limits),
        _ => None,
    };
    if let Some(Err(code)) = limits.map(limits::LimitArgs::apply) {
        return code;
    }
    progress::install_ctrlc();
    if let Cmd::Run { pcap: pcap::PcapArgs { pcap: Some(_), .. }, minbytes, estimate, .. } = &cli.cmd {
        if minbytes.is_some() || *estimate {
            eprintln!("error: --pcap captures one run: not with -b/-e (a size sweep) or --estimate");
            return ExitCode::from(2);
        }
    }
    match cli.cmd {
        Cmd::Sm(a) => sm::run(a),
        Cmd::Sweep(a) => sweep::run(a),
        Cmd::Merge(a) => sweep::merge(a),
        Cmd::Design(a) => design::run(a),
        Cmd::Burst(a) => burst::run(a),
        Cmd::Plan(a) => plan::run(a),
        Cmd::Verify(a) => verify::run(a),
        Cmd::Serve(a) => serve::run(a),
        Cmd::Compare { file, json, html, .. } => compare::compare(&file, json, html.as_deref()),
        Cmd::Run { file, json, minbytes: Some(b), maxbytes: Some(e), stepfactor, .. } => nccl::run(&file, &b, &e, &stepfactor, json),
        Cmd::Run { file, json, out, html, estimate: true, .. } => run::estimate(&file, json, out.is_some() || html.is_some()),
        Cmd::Run { file, json, out, html, pcap, .. } => run::run(&file, json, out.as_deref(), html.as_deref(), &pcap),
        Cmd::Bench { file, .. } => bench::bench(&file),
    }
}
