//! `fabriclab run FILE`: simulate a scenario and print what happened (the text summary or
//! `--json`), optionally writing the CSV time series (`--out`) and an HTML report
//! (`--html`) and packet captures (`--pcap`, `pcap.rs`). The nccl-tests size sweep
//! (`-b/-e/-f`) is `nccl.rs`'s.

use std::path::Path;
use std::process::ExitCode;

pub fn run(file: &Path, json: bool, out: Option<&Path>, html: Option<&Path>, pcap: &crate::pcap::PcapArgs) -> ExitCode {
    let sample = out.is_some() || html.is_some();
    // The file is read once: for the world and, with time series, for the second check.
    let name = file.display().to_string();
    let loaded = std::fs::read_to_string(file)
        .map_err(|e| scenario::ConfigError { file: name.clone(), line: None, field: "-".into(), msg: format!("cannot read: {e}") })
        .and_then(|src| {
            let world = scenario::load_str(&name, &src)?;
            if sample {
                // Time series grow with the run: check the limits again with them counted.
                check_with_samples(file, &name, &src)?;
            }
            Ok(world)
        });
    let world = match loaded {
        Ok(w) => w,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let capture = match crate::pcap::plan(pcap, &world, &name) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let mut bar = crate::progress::Bar::new(&world.name);
    let (sim, report) = match &capture {
        None => report::run_watched(&world, sample, &mut bar),
        Some(plan) => match crate::pcap::run(&world, sample, &mut bar, plan) {
            Ok(x) => x,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(1);
            }
        },
    };
    drop(bar);
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
        // Streamed: a report of millions of flows is never held as one string.
        match print_json(&report) {
            Ok(()) => {}
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
    if let Some(i) = &report.incomplete {
        eprintln!("cancelled at simulated {}: the figures above cover the run up to then only", units::SimDuration(i.at_ps));
        return ExitCode::from(crate::progress::EXIT_CANCELLED);
    }
    ExitCode::SUCCESS
}

/// The process's limits, with the time series `--out`/`--html` record counted.
fn check_with_samples(file: &Path, name: &str, src: &str) -> Result<(), scenario::ConfigError> {
    let e = scenario::estimate_str(name, src, file.parent().unwrap_or(Path::new(".")), true)?;
    e.check_file(name, src, &scenario::Limits::for_process())
}

/// A scenario file's name and text; an unreadable file is reported (exit 2).
pub fn read_scenario(file: &Path) -> Result<(String, String), ExitCode> {
    let name = file.display().to_string();
    match std::fs::read_to_string(file) {
        Ok(src) => Ok((name, src)),
        Err(e) => {
            eprintln!("error: {name}: cannot read: {e}");
            Err(ExitCode::from(2))
        }
    }
}

/// Writes an HTML report; an error names the path.
pub fn write_html(path: &Path, page: &str) -> Result<(), ExitCode> {
    std::fs::write(path, page).map_err(|e| {
        eprintln!("error: {}: cannot write the HTML report: {e}", path.display());
        ExitCode::from(1)
    })
}

/// `run --estimate`: what the run would cost, term by term, without running it.
pub fn estimate(file: &Path, json: bool, sample: bool) -> ExitCode {
    let (name, src) = match read_scenario(file) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let base = file.parent().unwrap_or(Path::new("."));
    let e = match scenario::estimate_str(&name, &src, base, sample) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if json {
        let doc = serde_json::json!({
            "memory_bytes": sat(e.memory()),
            "memory_terms": e.memory_terms.iter().map(|t| serde_json::json!({"what": t.what, "field": t.field, "bytes": sat(t.bytes)})).collect::<Vec<_>>(),
            "events": sat(e.events),
            "events_field": e.events_field,
            "sim_time_ps": sat(e.sim_time_ps),
        });
        println!("{}", serde_json::to_string_pretty(&doc).expect("a JSON value serialises"));
    } else {
        println!(
            "{name}: estimated peak memory {}, {} events, simulated time at least {}",
            scenario::estimate::human(e.memory()),
            e.events,
            units::SimDuration(sat(e.sim_time_ps))
        );
        let mut terms = e.memory_terms.clone();
        terms.sort_by_key(|t| std::cmp::Reverse(t.bytes));
        for t in terms.iter().filter(|t| t.bytes > 0) {
            println!("  {:>10}  {} ({})", scenario::estimate::human(t.bytes), t.what, t.field);
        }
    }
    let limits = scenario::Limits::for_process();
    if let Err(err) = e.check_file(&name, &src, &limits) {
        eprintln!("error: {err}");
        return ExitCode::from(2);
    }
    ExitCode::SUCCESS
}

/// A count for JSON, saturated at u64's largest.
fn sat(x: u128) -> u64 {
    u64::try_from(x).unwrap_or(u64::MAX)
}

/// Prints `v` as pretty JSON and a newline, streamed to stdout (the same bytes as
/// `to_string_pretty` and `println!`, without holding them in memory).
pub fn print_json<T: serde::Serialize>(v: &T) -> Result<(), serde_json::Error> {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    serde_json::to_writer_pretty(&mut out, v)?;
    writeln!(out).and_then(|()| out.flush()).map_err(serde_json::Error::io)
}
