//! Control planes that react to link changes while a simulation runs.
//!
//! RoCEv2's IP routing ([`crate::sim::EcmpControl`]) rebuilds ECMP groups after a stated
//! convergence delay. InfiniBand's subnet manager ([`SmControl`]) re-sweeps the fabric
//! through its management agents: the time it takes is the SM's own model (trap
//! delivery, directed-route sweep, LID assignment, routing, LFT programming; see
//! `subnet_manager::SmTiming`), unless the scenario fixes it.

use units::{SimDuration, SimTime};

use crate::sim::{ControlPlane, Forwarder, Reaction};
use crate::stats::ControlStep;
use crate::subnet_manager::SubnetManager;
use crate::topology::{PortId, Topology};

/// The master subnet manager as the simulator's control plane.
pub struct SmControl {
    sm: SubnetManager,
    fixed: Option<SimDuration>,
    up: Vec<bool>,
}

impl SmControl {
    /// `sm` has brought the fabric up; `fixed` overrides the modelled re-sweep time.
    pub fn new(sm: SubnetManager, fixed: Option<SimDuration>) -> SmControl {
        let n = sm.agents.topo.ports.len();
        SmControl { sm, fixed, up: vec![true; n] }
    }
}

impl ControlPlane for SmControl {
    fn on_link_change(&mut self, _now: SimTime, _topo: &Topology, up: &[bool]) -> Reaction {
        let mut failed = vec![];
        for (p, (&was, &is)) in self.up.iter().zip(up).enumerate() {
            if was && !is {
                failed.push(PortId(p as u32));
            } else if !was && is {
                self.sm.agents.set_port_up(PortId(p as u32), true);
            }
        }
        self.up = up.to_vec();
        let r = self.sm.resweep(&failed);
        let steps = r
            .steps
            .iter()
            .map(|s| ControlStep {
                step: serde_json::to_value(s.step).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default(),
                start_ps: s.start.ps(),
                duration_ps: s.duration.ps(),
                smps: s.smps,
            })
            .collect();
        Reaction { delay: self.fixed.unwrap_or(r.total), fwd: Forwarder::Lft(self.sm.lft().clone()), steps }
    }
}
