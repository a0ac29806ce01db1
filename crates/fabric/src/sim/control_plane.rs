//! The control plane's reaction to link changes, at fault time only: the trait a
//! control plane implements (IB's subnet manager is `crate::control::SmControl`), what
//! it returns (new forwarding state, its delay and timed steps), and ECMP re-routing
//! after a fixed convergence delay (BGP withdraw + FIB update; the scenario states it).

use super::*;

/// The control plane's reaction to link changes: forwarding state for the links now up,
/// and how long the reaction takes (IP routing convergence, or an IB subnet manager's
/// detect/sweep/route/program time). Runs at fault time only, never per packet.
pub trait ControlPlane {
    fn on_link_change(&mut self, now: SimTime, topo: &Topology, up: &[bool]) -> Reaction;
    /// The master SM died (InfiniBand); returns when a standby becomes master, if one does.
    fn on_sm_failure(&mut self, _now: SimTime, _standby: bool) -> Option<SimTime> {
        None
    }
}

/// What a control plane does about a link change.
pub struct Reaction {
    /// From the change to the new forwarding state taking effect (`None`: never — no
    /// subnet manager is left to re-route).
    pub delay: Option<SimDuration>,
    pub fwd: Forwarder,
    /// The timed steps of that delay (e.g. the SM's detect, sweep, route, program).
    pub steps: Vec<crate::stats::ControlStep>,
}

/// The control plane of a run, if it has one, and the forwarding state it computed that
/// waits for its delay to pass (generation `gen`: a later change makes it stale).
pub(super) struct Control {
    pub(super) plane: Option<Box<dyn ControlPlane>>,
    pub(super) pending: Option<Forwarder>,
    pub(super) gen: u32,
}

impl Control {
    pub(super) fn new(plane: Option<Box<dyn ControlPlane>>) -> Control {
        Control { plane, pending: None, gen: 0 }
    }
}

/// ECMP routing rebuilt over the links that are up, after a fixed convergence delay
/// (BGP withdraw + FIB update; the scenario states the delay).
pub struct EcmpControl {
    pub seed: u64,
    pub delay: SimDuration,
    /// Build destination-based tables (an SM-like fabric) instead of hashed ECMP groups.
    pub destination_tables: bool,
}

impl ControlPlane for EcmpControl {
    fn on_link_change(&mut self, _now: SimTime, topo: &Topology, up: &[bool]) -> Reaction {
        let r = Routes::build(topo, self.seed, |p| up[p.0 as usize]);
        let fwd = if self.destination_tables { Forwarder::Lft(r.destination_lft(topo)) } else { Forwarder::Ecmp(r) };
        let steps = vec![crate::stats::ControlStep { step: "converge".into(), start_ps: 0, duration_ps: self.delay.ps(), smps: 0 }];
        Reaction { delay: Some(self.delay), fwd, steps }
    }
}
