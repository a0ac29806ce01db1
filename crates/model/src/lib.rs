//! The formulas of fabriclab, as pure functions with their sources.
//!
//! Everything here is arithmetic on [`units`] types: no state, no I/O, no randomness.
//! The simulator calls these only to fill `auto` values in a scenario (and to compute an
//! "ideal" reference such as a flow's unloaded completion time); planners and the
//! verifier call the same functions. The simulator itself never re-derives a threshold
//! from a formula, so simulating a planned configuration genuinely tests the formula.

pub mod buffer;
pub mod dcqcn;
pub mod ecn;
pub mod frame;
pub mod headroom;
pub mod ib;
pub mod sizing;
pub mod sonic;
pub mod sonic_pool;
pub mod switch_latency;
