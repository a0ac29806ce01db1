//! `fabriclab bench FILE`: simulate a benchmark scenario and print its wall time (setup and
//! total), events and link transmissions per second, the simulated time and the peak RSS.

use std::path::Path;
use std::process::ExitCode;

pub fn bench(file: &Path) -> ExitCode {
    let world = match scenario::load(file) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let t0 = std::time::Instant::now();
    let mut sim = world.simulator(false);
    let setup = t0.elapsed();
    let mut bar = crate::progress::Bar::new(&world.name);
    let finished = sim.run_watched(&mut bar);
    drop(bar);
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
    if !finished {
        eprintln!("cancelled: the figures above cover the run up to simulated {}", sim.now());
        return ExitCode::from(crate::progress::EXIT_CANCELLED);
    }
    ExitCode::SUCCESS
}

/// Peak resident set size from /proc (Linux), for benchmark output.
fn peak_rss() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).map(|l| l[6..].trim().to_string()))
        .unwrap_or_else(|| "n/a".into())
}
