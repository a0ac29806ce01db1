//! Scenario files: a TOML file compiled into a [`World`] the simulator runs.
//!
//! Owns the file format and everything that turns it into simulator inputs: the schema,
//! errors that name file:line:field, RoCE and InfiniBand parameters with their `auto`
//! values, topologies (generated or read from `ibnetdiscover`/ibsim files), faults,
//! traffic and collective jobs (the driver places ranks on hosts; SHARP trees), and
//! variants (a file with edits, or the other fabric's defaults for `compare`). Leaves out
//! the physics (crate `fabric`) and what is made of a run's statistics (crate `report`).

pub mod config;
pub mod driver;
pub mod sharp;
pub mod topofile;
pub mod variant;
mod world;

pub use config::{auto_headroom, load, load_str, load_str_at, locate, ConfigError, World};
