//! What a compiled [`World`] builds: the simulator and the control plane that re-routes
//! after faults. The world itself is compiled in [`crate::config`].

use fabric::params::Tech;
use fabric::sim::{self, Sim};

use crate::config::{self, Auto, World};

impl World {
    /// A simulator for this world. `sample` records time series at the scenario's period.
    pub fn simulator(&self, sample: bool) -> Sim {
        Sim::new(
            self.topo.clone(),
            self.params.clone(),
            self.flows.clone(),
            self.seed,
            self.headroom_cells.clone(),
            self.stop,
            sample.then_some(self.sample_period),
            self.lft.clone(),
            self.faults.clone(),
            self.control_plane(),
        )
    }

    /// The control plane that re-routes after faults (none without faults).
    pub fn control_plane(&self) -> Option<Box<dyn sim::ControlPlane>> {
        let delay = self.reroute_delay?;
        if let (Some(cfg), Some(ib)) = (&self.sm, &self.params.ib) {
            let sm = config::sm_bring_up(&self.topo, self.layout.as_ref(), cfg, ib.data_vls);
            let fixed = match delay {
                Auto::Auto => None,
                Auto::Value(d) => Some(d),
            };
            return Some(Box::new(fabric::control::SmControl::new(sm, fixed)));
        }
        let Auto::Value(delay) = delay else { unreachable!("auto needs an SM, checked when loading") };
        Some(Box::new(sim::EcmpControl { seed: self.seed, delay, destination_tables: self.params.tech == Tech::Infiniband }))
    }

    /// Runs the scenario to its end; the results are in the returned simulator's `stats`
    /// (`report::run` also builds the report).
    pub fn run(&self, sample: bool) -> Sim {
        let mut sim = self.simulator(sample);
        sim.run();
        sim
    }
}
