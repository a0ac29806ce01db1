//! `fabriclab run FILE`: simulate a scenario and print what happened (the text summary or
//! `--json`), optionally writing the CSV time series (`--out`) and an HTML report
//! (`--html`). The nccl-tests size sweep (`-b/-e/-f`) is `nccl.rs`'s.

use std::path::Path;
use std::process::ExitCode;

pub fn run(file: &Path, json: bool, out: Option<&Path>, html: Option<&Path>) -> ExitCode {
    let world = match scenario::load(file) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let (sim, report) = report::run(&world, out.is_some() || html.is_some());
    if let Some(dir) = out {
        if let Err(e) = report::write_csv(dir, &world, &sim.stats, &report) {
            eprintln!("error: {}: cannot write: {e}", dir.display());
            return ExitCode::from(1);
        }
    }
    if let Some(path) = html {
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

/// Writes an HTML report; an error names the path.
pub fn write_html(path: &Path, page: &str) -> Result<(), ExitCode> {
    std::fs::write(path, page).map_err(|e| {
        eprintln!("error: {}: cannot write the HTML report: {e}", path.display());
        ExitCode::from(1)
    })
}
