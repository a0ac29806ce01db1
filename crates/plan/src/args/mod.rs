//! The planners' command-line inputs, shared by the `fabriclab` binary and `fabriclab
//! serve`: each command's flags as a clap struct (whose help, value names and defaults the
//! web forms read back through `clap::Command`), the reading of those flags into a
//! planner's input with errors that name the flag, and the `--json` document without
//! `--prove`. One copy, so the web API's answers and errors are the CLI's, byte for byte.
//!
//! * [`roce`]: `fabriclab plan roce` (flags over `--config FILE.toml`).
//! * [`design`]: `fabriclab design` (flags over a `--superpod` preset).
//! * [`burst`]: `fabriclab burst`.
//!
//! Left out: `--prove` (it simulates, so it lives with the simulator's drivers in the CLI)
//! and the text output.

pub mod burst;
pub mod design;
pub mod roce;
