//! The fabric model of fabriclab: topology, routing, switches (shared-buffer MMU, PFC,
//! ECN), NICs running the RDMA RC transport with DCQCN, and the scenario files that
//! describe them. See `sim` for what the packet-level model includes and leaves out.

pub mod compare;
pub mod config;
pub mod control;
pub mod dcqcn;
pub mod differences;
pub mod driver;
pub mod graph;
pub mod html;
pub mod ibcc;
pub mod lft;
pub mod params;
pub mod report;
pub mod routing;
pub mod sharp;
pub mod sim;
pub mod stats;
pub mod subnet_manager;
pub mod timing;
pub mod topofile;
pub mod topology;
pub mod variant;

pub use config::{load, load_str, ConfigError, World};
pub use sim::Sim;

impl World {
    /// A simulator for this world. `sample` records time series at the scenario's period.
    pub fn simulator(&self, sample: bool) -> Sim {
        Sim::new(sim::SimInput {
            topo: self.topo.clone(),
            params: self.params.clone(),
            flows: self.flows.clone(),
            seed: self.seed,
            headroom: self.headroom_cells.clone(),
            stop: self.stop,
            sample_period: sample.then_some(self.sample_period),
            lft: self.lft.clone(),
            faults: self.faults.clone(),
            control: self.control_plane(),
        })
    }

    /// The control plane that re-routes after faults (none without faults).
    pub fn control_plane(&self) -> Option<Box<dyn sim::ControlPlane>> {
        let delay = self.reroute_delay?;
        if let (Some(cfg), Some(ib)) = (&self.sm, &self.params.ib) {
            let sm = config::sm_bring_up(&self.topo, self.layout.as_ref(), cfg, ib.data_vls);
            let fixed = match delay {
                config::Auto::Auto => None,
                config::Auto::Value(d) => Some(d),
            };
            return Some(Box::new(control::SmControl::new(sm, fixed)));
        }
        let config::Auto::Value(delay) = delay else { unreachable!("auto needs an SM, checked when loading") };
        Some(Box::new(sim::EcmpControl { seed: self.seed, delay, destination_tables: self.params.tech == params::Tech::Infiniband }))
    }

    /// Runs the scenario and builds its report.
    pub fn run(&self, sample: bool) -> (Sim, report::Report) {
        let mut sim = self.simulator(sample);
        sim.run();
        let r = report::build(self, &sim.stats);
        (sim, r)
    }
}
