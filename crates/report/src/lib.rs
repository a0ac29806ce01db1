//! What is made of a run: the report (from the simulator's `Stats` and the compiled
//! `World`, never a live simulator), its text, JSON and CSV forms, the side-by-side
//! `compare` of one scenario on both fabrics with the defaults they differ in, and the
//! self-contained HTML page.
//!
//! | module | owns |
//! |---|---|
//! | `types` | [`Report`] and its parts: the JSON `run --json` prints |
//! | `build` | [`build`](fn@build): every figure, from `Stats` and the `World` |
//! | `flow_records` | [`FlowRecords`]: every flow's record, 40 bytes each, read as `FlowReport`s |
//! | `balance` | uplink utilisation spread and packet order (load balancing, `ooo`) |
//! | `text` | [`text`](fn@text): the summary `run` prints |
//! | `csv` | [`write_csv`]: the `--out` files |
//! | [`compare`] | one scenario on both fabrics, side by side |
//! | [`differences`] | the settings the two sides of a comparison differ in, and why |
//! | [`html`] | the HTML page of a run or a comparison |
//!
//! Leaves out the physics (crate `fabric`) and the scenario files (crate `scenario`).

mod balance;
mod build;
pub mod compare;
mod csv;
pub mod differences;
mod flow_records;
pub mod html;
mod text;
mod types;

pub use build::{build, payload_efficiency};
pub use csv::write_csv;
pub use flow_records::FlowRecords;
pub use text::text;
pub use types::*;

use fabric::Sim;
use scenario::World;

/// Runs `w` to its end and builds its report. `sample` records time series (for CSV and
/// HTML output).
pub fn run(w: &World, sample: bool) -> (Sim, Report) {
    run_watched(w, sample, &mut fabric::sim::Unwatched)
}

/// [`run`] under a watcher that sees its progress and may cancel it (the report is then
/// marked incomplete).
pub fn run_watched(w: &World, sample: bool, watch: &mut dyn fabric::sim::Watch) -> (Sim, Report) {
    let mut sim = w.simulator(sample);
    sim.run_watched(watch);
    let r = build(w, &sim.stats);
    (sim, r)
}
