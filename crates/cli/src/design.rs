//! `fabriclab design`: size a Clos fabric from what the cluster needs (see `plan::design`)
//! and print it as a table (`--json`: one JSON document, the `plan::design::Design`
//! fields), with every formula and its source (`--explain`), and optionally write a
//! scenario file for `run` / `compare` (`--emit-scenario FILE`).
//!
//! Flags override a `--superpod` preset's inputs, so `--superpod h100 --sus 4
//! --oversubscription 2` is the H100 SuperPOD with 2:1 leaves. An error names the flag
//! and what it expects (exit code 2). The flags and the design they give are
//! `plan::args::design` (`fabriclab serve` answers with the same code).

use std::process::ExitCode;

pub use plan::args::design::DesignArgs;
use plan::args::design::{flag, planned};
use plan::design::{self as d, DesignError, Technology};

fn fail(e: &DesignError) -> ExitCode {
    eprintln!("error: {}: {}", flag(e.input), e.msg);
    ExitCode::from(2)
}

pub fn run(a: DesignArgs) -> ExitCode {
    let design = match planned(&a) {
        Ok((_, x)) => x,
        Err(m) => {
            eprintln!("error: {m}");
            return ExitCode::from(2);
        }
    };
    if let Some(path) = &a.emit_scenario {
        let tech = if a.technology == "infiniband" { Technology::Infiniband } else { Technology::Roce };
        let command = std::iter::once("fabriclab".to_string()).chain(std::env::args().skip(1)).collect::<Vec<_>>().join(" ");
        let src = match d::scenario(&design, tech, &command) {
            Ok(s) => s,
            Err(e) => return fail(&e),
        };
        if let Err(e) = std::fs::write(path, src) {
            eprintln!("error: {}: cannot write the scenario: {e}", path.display());
            return ExitCode::from(1);
        }
        eprintln!("wrote {}: `fabriclab compare {}` runs it on both fabrics", path.display(), path.display());
    }
    if a.json {
        match serde_json::to_string_pretty(&design) {
            Ok(s) => println!("{s}"),
            Err(e) => {
                eprintln!("error: cannot serialise the design: {e}");
                return ExitCode::from(1);
            }
        }
    } else {
        print!("{}", d::text(&design));
        if a.explain {
            println!();
            print!("{}", d::explain_text(&design));
        }
    }
    ExitCode::SUCCESS
}
