//! Running a shard's tasks: every one is compiled before any runs (so a bad value fails
//! at once, naming its variant, not after hours), then all are simulated on `workers`
//! threads (fewer when the points' memory estimates together would pass `--max-memory`)
//! behind a progress bar (drawn only on a terminal), results in task order; Ctrl-C
//! stops the points running and skips the rest.
//!
//! Left out: what a task is and which ones a shard owns (`shard.rs`).

use scenario::variant::load_variant;

use super::figures::cells;
use super::shard::Task;
use crate::par::par_map;

/// Compiles every task; the first that fails is named with its variant and fabric.
/// Returns the largest memory estimate of a task (`scenario::Estimate`).
pub(super) fn compile_all(name: &str, src: &str, tasks: &[Task], workers: usize) -> Result<u128, String> {
    let checked = par_map(workers, tasks.len(), |i| load_variant(name, src, &tasks[i].edits).map(|w| w.estimate.memory()));
    if let Some((t, e)) = tasks.iter().zip(&checked).find_map(|(t, e)| e.as_ref().err().map(|e| (t, e))) {
        let which = match t.variant {
            Some(v) => format!("variant {v} ({})", t.label),
            None => "the reference run".into(),
        };
        return Err(format!("{which} on {}: {e}", t.fabric.title()));
    }
    Ok(checked.into_iter().filter_map(Result::ok).max().unwrap_or(0))
}

/// How many of `workers` can run at once within the memory limit when a point needs up
/// to `largest` bytes (at least one: that one was checked against the limit alone).
pub(super) fn workers_that_fit(workers: usize, largest: u128) -> usize {
    let limits = scenario::Limits::for_process();
    if limits.force || largest == 0 {
        return workers;
    }
    workers.min((limits.max_memory as u128 / largest).max(1) as usize)
}

/// Simulates every task; each one's figures (`figures::cells`), in task order.
pub(super) fn simulate_all(name: &str, src: &str, tasks: &[Task], workers: usize) -> Result<Vec<Vec<String>>, String> {
    let bar = indicatif::ProgressBar::with_draw_target(Some(tasks.len() as u64), indicatif::ProgressDrawTarget::stderr());
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} {elapsed} (eta {eta}) {wide_msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    let results = par_map(workers, tasks.len(), |i| {
        let t = &tasks[i];
        if crate::progress::cancelled() {
            return Err("cancelled".to_string());
        }
        let label = format!("{} {}", t.fabric.title(), t.label);
        bar.set_message(label.clone());
        let mut watch = |p: &fabric::sim::Progress| {
            bar.set_message(format!("{label}: {}", crate::progress::describe(p)));
            !crate::progress::cancelled()
        };
        // Compiled once already; only a topology file changed meanwhile could fail here.
        let r = load_variant(name, src, &t.edits).map_err(|e| e.to_string()).map(|w| report::run_watched(&w, false, &mut watch).1);
        bar.inc(1);
        match r {
            Ok(rep) if rep.incomplete.is_some() => Err("cancelled".to_string()),
            Ok(rep) => Ok(cells(&rep)),
            Err(e) => Err(e),
        }
    });
    bar.finish_and_clear();
    if crate::progress::cancelled() {
        let done = results.iter().filter(|r| r.is_ok()).count();
        return Err(format!("cancelled after {done} of {} points; nothing was written", tasks.len()));
    }
    results.into_iter().collect::<Result<Vec<_>, _>>()
}
