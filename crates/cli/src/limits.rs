//! `--max-memory`, `--max-events` and `--force`: the limits a scenario is checked against
//! before anything is built (`scenario::estimate`), shared by every subcommand that
//! simulates.

use std::process::ExitCode;

use clap::Args;
use scenario::Limits;

#[derive(Args, Clone, Debug, Default)]
pub struct LimitArgs {
    /// Refuse scenarios whose memory estimate is above this (e.g. "16GiB"; default: 80 %
    /// of this machine's memory).
    #[arg(long, value_name = "SIZE")]
    pub max_memory: Option<units::Bytes>,
    /// Refuse scenarios whose event estimate is above this (default 1e11, hours here).
    #[arg(long, value_name = "N", value_parser = parse_count)]
    pub max_events: Option<u64>,
    /// Run scenarios beyond the limits anyway (the estimates may be pessimistic).
    #[arg(long)]
    pub force: bool,
}

impl LimitArgs {
    /// The limits these flags give, over this machine's defaults.
    pub fn limits(&self) -> Limits {
        let d = Limits::for_this_machine();
        Limits { max_memory: self.max_memory.map_or(d.max_memory, |b| b.0), max_events: self.max_events.unwrap_or(d.max_events), force: self.force }
    }

    /// Makes them the process's limits (every scenario it loads is checked against them).
    pub fn apply(&self) -> Result<(), ExitCode> {
        self.limits().set_for_process().map_err(|_| {
            eprintln!("error: the limits were set twice");
            ExitCode::from(2)
        })
    }
}

/// A count such as "100000000000" or "1e11".
fn parse_count(s: &str) -> Result<u64, String> {
    if let Ok(n) = s.parse::<u64>() {
        return Ok(n);
    }
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 1.0 && x <= u64::MAX as f64 => Ok(x as u64),
        _ => Err(format!("`{s}`: expected a positive count such as 100000000000 or 1e11")),
    }
}
