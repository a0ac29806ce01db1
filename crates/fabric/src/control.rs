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
    /// The master died: when the standby takes over (`None`: no standby, never).
    master_back: Option<Option<SimTime>>,
}

impl SmControl {
    /// `sm` has brought the fabric up; `fixed` overrides the modelled re-sweep time.
    pub fn new(sm: SubnetManager, fixed: Option<SimDuration>) -> SmControl {
        let n = sm.agents.topo.ports.len();
        SmControl { sm, fixed, up: vec![true; n], master_back: None }
    }
}

impl ControlPlane for SmControl {
    /// A standby polls the master's SMInfo every `polling_timeout` and declares it lost
    /// after `polling_retries` unanswered polls in a row (OpenSM
    /// `osm_sm_state_mgr_polling_callback`; see `subnet_manager::failover`). Taking the
    /// failure right after a successful poll, the standby becomes master
    /// `polling_timeout × (polling_retries + 1)` after it (50 s with OpenSM's defaults).
    fn on_sm_failure(&mut self, now: SimTime, standby: bool) -> Option<SimTime> {
        let t = self.sm.cfg.timing;
        let back = standby.then(|| now + SimDuration(t.polling_timeout.ps() * (t.polling_retries as u64 + 1)));
        self.master_back = Some(back);
        back
    }

    fn on_link_change(&mut self, now: SimTime, _topo: &Topology, up: &[bool]) -> Reaction {
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
        let mut steps: Vec<ControlStep> = steps;
        let wait = match self.master_back {
            // No master: the re-sweep waits for the standby's takeover, or never happens.
            Some(None) => return Reaction { delay: None, fwd: Forwarder::Lft(self.sm.lft().clone()), steps: vec![] },
            Some(Some(back)) if back > now => {
                let w = SimDuration(back.0 - now.0);
                for s in &mut steps {
                    s.start_ps += w.ps();
                }
                steps.insert(0, ControlStep { step: "standby-takeover".into(), start_ps: 0, duration_ps: w.ps(), smps: 0 });
                w
            }
            _ => SimDuration::ZERO,
        };
        Reaction { delay: Some(wait + self.fixed.unwrap_or(r.total)), fwd: Forwarder::Lft(self.sm.lft().clone()), steps }
    }
}
