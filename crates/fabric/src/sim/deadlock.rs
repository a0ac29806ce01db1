//! The deadlock detector: every `deadlock_timeout` (1 ms when unset), a cycle of
//! blocked switch egress queues (paused, or without credits) none of which dequeued for
//! that long is a deadlock: the channel-dependency cycle of Dally & Seitz (1987), for
//! PFC Hu et al. (HotNets 2016). It is recorded once with the time the last of them
//! moved; the run stops there unless a PFC watchdog or IB lifetime discards can still
//! break it. The cycle search is the one `crate::graph` gives the subnet manager's CDG.

use super::*;

/// The deadlock detector's period: the scenario's timeout (1 ms when unset).
pub(super) fn deadlock_period(p: &Params) -> SimDuration {
    match p.deadlock_timeout {
        SimDuration::ZERO => SimDuration::from_ms(1),
        t => t,
    }
}

/// The deadlock detector: whether it has found (and recorded) a deadlock.
pub(super) struct DeadlockDetector {
    checked: bool,
}

impl DeadlockDetector {
    /// Schedules the first check one period in, if there is anything to run.
    pub(super) fn new(p: &Params, flows: usize, q: &mut Events) -> DeadlockDetector {
        if flows > 0 {
            q.schedule(SimTime::ZERO + deadlock_period(p), Ev::DeadlockCheck);
        }
        DeadlockDetector { checked: false }
    }
}

impl Sim {
    /// The deadlock detector, every `deadlock_timeout`: a cycle of blocked queues none of
    /// which has dequeued for that long is a deadlock. It is recorded once; the run stops
    /// there unless something can still break it (a PFC watchdog, IB lifetime discards).
    pub(super) fn check_deadlock(&mut self, now: SimTime) {
        if self.flows.remaining == 0 || self.deadlock.checked {
            return;
        }
        let period = deadlock_period(&self.p);
        if let Some(cycle) = self.find_cycle(now, period) {
            let formed = cycle.iter().map(|&(p, c)| self.cls[p.index() * 8 + c as usize].moved).max().unwrap_or(now);
            let hops = cycle.len();
            self.incident(
                formed,
                IncidentKind::DeadlockFormed,
                Some(cycle[0].0),
                Some(cycle[0].1),
                format!("last dequeue on a cycle of {hops} blocked queues"),
            );
            self.incident(
                now,
                IncidentKind::DeadlockDetected,
                Some(cycle[0].0),
                Some(cycle[0].1),
                format!("no queue of the cycle moved for {} us", (now - formed).whole_us()),
            );
            self.stats.deadlock = Some(Deadlock { detected_at_ps: now.ps(), formed_at_ps: formed.ps(), cycle });
            self.deadlock.checked = true;
            let breakable = self.p.pfc.watchdog.is_some()
                || self.p.ib.as_ref().is_some_and(|i| i.hoq_lifetime.is_some() || i.leaf_hoq_lifetime.is_some() || i.switch_lifetime.is_some());
            if !breakable {
                self.halted = true;
            }
            return;
        }
        self.q.schedule(now + period, Ev::DeadlockCheck);
    }

    /// Whether the head of egress queue (`port`, `tc`) is blocked (paused or without
    /// credits).
    pub(super) fn head_blocked(&self, port: PortId, tc: usize, now: SimTime) -> bool {
        match self.cls[port.index() * 8 + tc].head {
            NONE => false,
            h => self.may_send(port, tc, self.pkts[h as usize].frame as u32, now).is_err(),
        }
    }

    /// A cycle of blocked switch egress queues, each waiting for buffer at the next hop's
    /// input that is held by packets queued behind the next one: the channel dependency
    /// cycle of a deadlock (Dally & Seitz 1987; for PFC, Hu et al., HotNets 2016).
    pub(super) fn find_cycle(&self, now: SimTime, stale: SimDuration) -> Option<Vec<(PortId, u8)>> {
        use std::collections::BTreeMap;
        // Queues that are blocked and have not moved for `stale`.
        let stuck = |p: PortId, tc: usize| self.head_blocked(p, tc, now) && now.since(self.cls[p.index() * 8 + tc].moved) >= stale;
        // Edge (u, c) → (q, c): upstream egress u feeds the input whose packets wait at q.
        let mut adj: BTreeMap<(PortId, u8), Vec<(PortId, u8)>> = BTreeMap::new();
        for n in self.topo.nodes.iter().filter(|n| n.kind == NodeKind::Switch) {
            for q in (n.first_port..n.first_port + n.nports).map(PortId) {
                for tc in 0..8 {
                    if !stuck(q, tc) {
                        continue;
                    }
                    for id in self.queued(q, tc) {
                        let i = self.pkts[id as usize].in_port;
                        let Some(u) = self.topo.port(i).peer else { continue };
                        // The class it held upstream: the same priority on RoCE; on IB the
                        // VL it arrived on (SL→VL tables may move it to another VL here).
                        let utc = if self.ib.is_none() { tc } else { self.pkts[id as usize].in_pg as usize };
                        if self.topo.is_switch(self.topo.port(u).node) && stuck(u, utc) {
                            let e = adj.entry((u, utc as u8)).or_default();
                            if !e.contains(&(q, tc as u8)) {
                                e.push((q, tc as u8));
                            }
                        }
                    }
                }
            }
        }
        let index = |(p, c): (PortId, u8)| p.index() * 8 + c as usize;
        crate::graph::find_cycle(self.ports.len() * 8, index, adj.keys().copied(), |v| adj.get(&v).cloned().unwrap_or_default())
    }
}
