//! fabriclab's planners: pure functions from what a cluster needs to a design, every
//! number computed by the formulas of `model` and explained with its source.
//!
//! * [`design`]: the fabric designer (`fabriclab design`): tiers, switches, links,
//!   cables, transceivers, bisection bandwidth and hop counts of a Clos fabric, and a
//!   scenario file for the simulator.

pub mod burst;
pub mod design;
