//! The fabric model of fabriclab, the simulation core: topology, routing, switches
//! (shared-buffer MMU, PFC, ECN), NICs running the RDMA RC transport with DCQCN or IB
//! congestion control, the subnet manager and the control planes that re-route after
//! faults. See `sim` for what the packet-level model includes and leaves out. Scenario
//! files are crate `scenario`'s, reports crate `report`'s.

pub mod control;
pub mod dcqcn;
pub mod graph;
pub mod ibcc;
pub mod lft;
pub mod params;
pub mod routing;
pub mod sim;
pub mod stats;
pub mod subnet_manager;
pub mod timing;
pub mod topology;

pub use sim::Sim;
