//! The deterministic discrete-event core of fabriclab. It knows nothing of networks.
//!
//! * [`EventQueue`]: pending events totally ordered by `(time, insertion sequence)`, so
//!   simultaneous events run in the order they were scheduled, run after run.
//! * [`Rng`]: xoshiro256++ streams (Blackman & Vigna, "Scrambled Linear Pseudorandom
//!   Number Generators", ACM TOMS 2021), each seeded from `(scenario seed, stream id)`
//!   through SplitMix64, so every component has its own reproducible stream and adding a
//!   component does not perturb the others. The algorithm is fixed here rather than taken
//!   from a crate whose default generator may change between versions.

mod queue;
mod rng;

pub use queue::{EventQueue, Packed};
pub use rng::{splitmix64, stream, Rng};
