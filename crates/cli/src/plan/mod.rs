//! `fabriclab plan roce`: the RoCEv2 lossless planner (see `plan::roce` for the models and
//! their sources). Inputs come from `--config FILE.toml`, flags, or both: a flag overrides
//! the file's field of the same name. Errors name the flag, or the file and field, and what
//! is expected (exit code 2).
//!
//! `--prove` simulates, per tier, the headroom worst case on one switch: the sender h0 on
//! the tier's speed and longest cable shares the receiver h1 2:1 with h2 for up to 4000
//! packets (so its ingress PG pauses again and again; h1's link is a tenth as fast, so the PG
//! barely drains while its headroom fills) and the rest of the named incast joins at the
//! start; h_rev writes to h0 in a lossy class with random gaps (so PFC
//! frames to h0 wait behind maximum frames at every phase, and h0 is part-way through a
//! frame when a pause arrives), buffers counted
//! in cells with the plan's reserved, alpha, headroom and resume offset, ECN and DCQCN off
//! (PFC alone). The trigger is scaled down (IEEE: static, 8 maximum frames; SONiC: its
//! dynamic threshold over a small pool) so the PGs pause often; headroom does not depend
//! on the trigger level. IEEE: the plan, then one maximum frame less; SONiC: its margin
//! over the simulated peak. The bound's last frame needs a phase some pause cycles lack:
//! IEEE runs try up to PROVE_ATTEMPTS reverse-traffic patterns until one reaches the
//! planned headroom, and run one MTU short with that pattern; if none does, the output
//! says how rare the phase is. With SONiC's shared headroom pool the switch's headroom is
//! one pool, the one `buffer_pool_mellanox.lua` gives that scenario's ports plus their
//! private headroom (see `prove::headroom_pool_cells`), and the output reports it and its
//! headroom-overflow drops.
//!
//! Files: `prove.rs` (`--prove`), `print.rs` (the text output); the flags, `--config` and
//! the `--json` document are `plan::args::roce` (`fabriclab serve` answers with the same
//! code). This file keeps the subcommand and [`run`].

mod print;
/// `verify --simulate` runs the same headroom worst case.
pub(crate) mod prove;

use std::process::ExitCode;

use clap::{Args, Subcommand};
use plan::roce as r;

use plan::args::roce::{json_value, planned, RoceArgs};
use print::{print_plan, print_proof};
use prove::prove;

#[derive(Args, Debug)]
pub struct PlanArgs {
    #[command(subcommand)]
    pub cmd: PlanCmd,
}

#[derive(Subcommand, Debug)]
pub enum PlanCmd {
    /// RoCEv2 lossless planner: PFC headroom/XOFF/XON per port type, buffer budget, ECN,
    /// DCQCN, risk flags; --prove simulates the headroom worst case.
    Roce(Box<RoceArgs>),
}

pub fn run(a: PlanArgs) -> ExitCode {
    let PlanCmd::Roce(a) = a.cmd;
    let (i, p) = match planned(&a) {
        Ok(ip) => ip,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let proofs = if a.prove {
        match prove(&i, &p) {
            Ok(v) => Some(v),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(1);
            }
        }
    } else {
        None
    };
    if a.json {
        let mut v = json_value(&a, &i, &p);
        if let Some(pr) = &proofs {
            v["prove"] = serde_json::json!(pr);
        }
        println!("{}", serde_json::to_string_pretty(&v).expect("serialisable"));
        return ExitCode::SUCCESS;
    }
    print_plan(&i, &p);
    if let Some(pr) = &proofs {
        print_proof(&i, pr);
    }
    if a.explain {
        println!("\nFormulas and sources:");
        for l in r::explain(&i, &p) {
            println!("  - {l}");
        }
    }
    ExitCode::SUCCESS
}
