//! Scenario files: a TOML file compiled into a [`World`] the simulator runs.
//!
//! Owns the file format and everything that turns it into simulator inputs, one module
//! per role:
//!
//! | module | owns |
//! |---|---|
//! | [`schema`] | the TOML sections as serde structs, and what each field means |
//! | [`error`] | [`ConfigError`]: file, line, field and what was expected |
//! | [`estimate`] | memory and events before anything is built; the [`Limits`] a file is refused beyond |
//! | `compile` | [`load`]: parse, then compile in named steps, in the order errors are reported |
//! | `topology` | `[topology]`: generated shapes, explicit nodes and links, topology files; port names |
//! | [`roce`] | `[roce]` and `[buffer]`: classes, ECN, DCQCN, MMU, PFC, headroom ([`auto_headroom`]) |
//! | [`ib`] | `[infiniband]`: SL→VL, VLs and credits, lifetimes, IB CC, routing and the subnet manager |
//! | `faults` | `[[faults]]`: fault edges against the topology and the technology |
//! | [`traffic`] | `[[traffic]]`: flows and collective jobs |
//! | [`driver`] | ranks of a collective placed on hosts' NICs, the job's transfers as flows |
//! | [`flow_list`] | the flows the simulator reads: specs, and collective jobs generated as they are read |
//! | [`sharp`] | SHARP aggregation trees over the switches |
//! | [`topofile`] | `ibnetdiscover` output and ibsim net files, read and written |
//! | [`variant`] | a file with edits (sweeps), or the other fabric's defaults (`compare`) |
//! | [`world`] | the compiled [`World`], and the simulator and control plane it builds |
//!
//! `auto` values are filled here, once, from the `model` crate's formulas. Leaves out the
//! physics (crate `fabric`) and what is made of a run's statistics (crate `report`).

mod compile;
pub mod driver;
pub mod error;
pub mod estimate;
mod faults;
pub mod flow_list;
pub mod ib;
pub mod roce;
pub mod schema;
pub mod sharp;
pub mod topofile;
mod topology;
pub mod traffic;
pub mod variant;
pub mod world;

pub use compile::{estimate_str, load, load_str, load_str_at, load_str_limited};
pub use error::{locate, ConfigError};
pub use estimate::{Estimate, Limits};
pub use flow_list::FlowList;
pub use roce::auto_headroom;
pub use world::World;
