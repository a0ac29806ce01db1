//! What is made of a run: the report (from the simulator's `Stats` and the compiled
//! `World`, never a live simulator), its text, JSON and CSV forms, the side-by-side
//! `compare` of one scenario on both fabrics with the defaults they differ in, and the
//! self-contained HTML page. Leaves out the physics (crate `fabric`) and the scenario
//! files (crate `scenario`).

pub mod compare;
pub mod differences;
pub mod html;
mod report;

pub use report::*;

use fabric::Sim;
use scenario::World;

/// Runs `w` to its end and builds its report. `sample` records time series (for CSV and
/// HTML output).
pub fn run(w: &World, sample: bool) -> (Sim, Report) {
    let sim = w.run(sample);
    let r = build(w, &sim.stats);
    (sim, r)
}
