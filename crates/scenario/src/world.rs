//! The compiled scenario, [`World`]: everything the simulator is built from, every unit
//! resolved and every `auto` value filled; and what it builds, the simulator and the
//! control plane that re-routes after faults.
//!
//! Owns nothing mutable: a world is compiled once ([`crate::load`]) and can build any
//! number of simulators. Leaves out compiling (the step modules) and reporting (crate
//! `report`, whose `report::run` runs a world and builds its report).

use fabric::lft::Lft;
use fabric::params::{Params, Tech};
use fabric::sim::{self, Fault, Sim};
use fabric::subnet_manager::ar::ArTable;
use fabric::subnet_manager::layout::IbLayout;
use fabric::subnet_manager::SmConfig;
use fabric::topology::Topology;
use model::switch_latency::SwitchLatency;
use units::{SimDuration, SimTime};

use crate::flow_list::FlowList;
use crate::ib::sm_bring_up;
use crate::schema::Auto;
use crate::traffic::Job;

/// A validated scenario, ready to simulate.
#[derive(Clone)]
pub struct World {
    pub name: String,
    pub seed: u64,
    pub topo: Topology,
    pub params: Params,
    /// InfiniBand: the forwarding tables the subnet manager programmed.
    pub lft: Option<Lft>,
    /// InfiniBand with adaptive routing: the subnet manager's AR groups.
    pub ar: Option<ArTable>,
    pub faults: Vec<Fault>,
    /// How long the control plane takes to re-route after a fault ("auto": the SM's time).
    pub reroute_delay: Option<Auto<SimDuration>>,
    /// InfiniBand routed by a subnet manager: its configuration.
    pub sm: Option<SmConfig>,
    /// Names, GUIDs and port numbers of a fabric read from a topology file.
    pub layout: Option<IbLayout>,
    /// Shared with the simulators built from this world (they read them while they are
    /// built); collectives' transfers are generated each time ([`FlowList`]).
    pub flows: std::sync::Arc<FlowList>,
    /// Collective jobs among the flows.
    pub jobs: Vec<Job>,
    /// A label for each `[[traffic]]` entry (the flows' `group`), e.g. "incast", "background".
    pub traffic_kinds: Vec<String>,
    pub headroom_cells: Vec<u64>,
    pub stop: Option<SimTime>,
    pub sample_period: SimDuration,
    pub top_ports: usize,
    /// Human-readable notes on how `auto` values were resolved.
    pub notes: Vec<String>,
    /// The switch latency in `params` and where it comes from (a datasheet, a launch
    /// figure, InfiniBand's for lack of one, or the scenario file).
    pub switch_latency: SwitchLatency,
    /// What running it costs, estimated before it was built (without time series).
    pub estimate: crate::Estimate,
    /// The scenario states `[roce] load_balancing`, `[infiniband] adaptive_routing` or
    /// either's `ooo` (for both fabrics' runs): reports add uplink
    /// utilisation spread and packet order (also for an explicit "ecmp", the baseline).
    pub load_balance_stated: bool,
}

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
            ar: self.ar.clone(),
            faults: self.faults.clone(),
            control: self.control_plane(),
        })
    }

    /// The control plane that re-routes after faults (none without faults).
    pub fn control_plane(&self) -> Option<Box<dyn sim::ControlPlane>> {
        let delay = self.reroute_delay?;
        if let (Some(cfg), Some(ib)) = (&self.sm, &self.params.ib) {
            let sm = sm_bring_up(&self.topo, self.layout.as_ref(), cfg, ib.data_vls);
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
