//! fabriclab's planners: pure functions from what a cluster needs to a design, every
//! number computed by the formulas of `model` and explained with its source.
//!
//! * [`design`]: the fabric designer (`fabriclab design`): tiers, switches, links,
//!   cables, transceivers, bisection bandwidth and hop counts of a Clos fabric, and a
//!   scenario file for the simulator.
//! * [`burst`]: the microburst buffer planner (`fabriclab burst`).
//! * [`roce`]: the RoCEv2 lossless planner (`fabriclab plan roce`): PFC headroom (IEEE
//!   802.1Qbb or SONiC's Spectrum model), buffer budget, ECN, DCQCN and risk flags.
//! * [`verify`]: the configuration verifier (`fabriclab verify`): SONiC `config_db.json`
//!   files read into typed tables and checked for a lossless RoCE fabric. It lives here
//!   because it checks the same things the RoCE planner plans, with the same `model`
//!   formulas (docs/layout.md: planners and the verifier are pure functions over inputs).
//! * [`args`]: the planners' flags and `--json` documents, shared by the CLI and
//!   `fabriclab serve`.

pub mod args;
pub mod burst;
pub mod design;
pub mod roce;
pub mod verify;
