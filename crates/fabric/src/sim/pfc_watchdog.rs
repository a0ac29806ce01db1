//! SONiC's PFC watchdog (pfcwd) per lossless (switch egress port, priority): a queue
//! paused without a break for the detection time is in a storm; it then ignores pause
//! frames and, with the `drop` action, discards what it holds and what arrives for it,
//! and stops pausing its neighbour; it is restored once no pause frame has arrived for
//! the restoration time (SONiC `pfcwd` and `pfc_detect_*.lua`). Checked against SONiC's
//! Lua in `tests/sonic_lua.rs`.

use super::*;

/// PFC watchdog state of one (switch egress port, priority).
#[derive(Default, Clone, Copy)]
pub(super) struct WdQueue {
    storm: bool,
    /// A detection check is pending.
    armed: bool,
    /// The last PFC frame received on this queue.
    last_pfc: SimTime,
    /// Index of its current storm in `Stats::storms`.
    storm_idx: u32,
}

/// SONiC's PFC watchdog: state per (port, priority), empty without a watchdog (or on
/// InfiniBand), and how many queues are in storm now.
pub(super) struct PfcWatchdog {
    queues: Vec<WdQueue>,
    storms_active: u32,
}

impl PfcWatchdog {
    pub(super) fn new(np: usize, p: &Params) -> PfcWatchdog {
        let queues = if p.pfc.watchdog.is_some() && p.ib.is_none() { vec![WdQueue::default(); np * 8] } else { vec![] };
        PfcWatchdog { queues, storms_active: 0 }
    }

    /// A PFC frame arrived for queue (`port`, `prio`): remembered for the restoration
    /// timer. `true` if the queue is in storm and ignores it.
    #[inline]
    pub(super) fn heard_pfc(&mut self, port: PortId, prio: usize, now: SimTime) -> bool {
        if self.queues.is_empty() {
            return false;
        }
        let w = &mut self.queues[port.index() * 8 + prio];
        w.last_pfc = now;
        w.storm
    }

    /// Queue (`port`, `prio`) started a pause: `true` if a detection check must be
    /// scheduled (a watchdog runs and none is pending).
    pub(super) fn arm(&mut self, port: PortId, prio: usize) -> bool {
        let q = port.index() * 8 + prio;
        if self.queues.is_empty() || self.queues[q].armed {
            return false;
        }
        self.queues[q].armed = true;
        true
    }

    /// The storm (index in `Stats::storms`) of queue `q`, if it is in one.
    #[inline]
    fn storm_of(&self, q: usize) -> Option<usize> {
        let w = &self.queues[q];
        w.storm.then_some(w.storm_idx as usize)
    }
}

impl Sim {
    /// PFC watchdog: declares a storm on (`port`, `tc`) if it has been paused without a
    /// break for the detection time, and mitigates it.
    pub(super) fn on_wd_check(&mut self, now: SimTime, port: PortId, tc: u8) {
        let w = self.p.pfc.watchdog.expect("watchdog");
        let (pi, t) = (port.index(), tc as usize);
        let q = pi * 8 + t;
        self.watchdog.queues[q].armed = false;
        if self.watchdog.queues[q].storm || !self.paused(port, t, now) {
            return;
        }
        let since = self.cls[q].pause_from;
        if now < since + w.detection {
            self.watchdog.queues[q].armed = true;
            self.q.schedule(since + w.detection, Ev::WdCheck { port, tc });
            return;
        }
        // Storm: the queue stops obeying pause frames.
        self.stats.ports[pi].paused_ps[t] += self.cls[q].cut_pause(now).ps();
        self.watchdog.queues[q].storm = true;
        self.watchdog.queues[q].storm_idx = self.stats.storms.len() as u32;
        self.watchdog.storms_active += 1;
        self.stats.storms.push(crate::stats::Storm {
            port,
            priority: tc,
            paused_from_ps: since.ps(),
            detected_ps: now.ps(),
            restored_ps: None,
            dropped_pkts: 0,
            dropped_bytes: 0,
        });
        let action = w.action;
        let verb = if action == crate::params::WatchdogAction::Drop { "drop" } else { "forward" };
        self.incident(
            now,
            IncidentKind::WatchdogFired,
            Some(port),
            Some(tc),
            format!("paused for {} us without a break: action {verb}", (now - since).whole_us()),
        );
        if action == crate::params::WatchdogAction::Drop {
            while self.cls[q].head != NONE {
                let id = self.dequeue(now, port, t);
                let st = &mut self.stats.storms[self.watchdog.queues[q].storm_idx as usize];
                st.dropped_pkts += 1;
                st.dropped_bytes += self.pkts[id as usize].frame as u64;
                self.drop_pkt(port, id, DropCause::PfcWatchdog);
            }
            // The drop action also stops pausing that neighbour on this priority.
            let pg = self.p.tc_to_pg[t];
            if self.mmu.pg(port, pg).hdrm == 0 {
                self.set_pg_paused(now, port, pg, false, true);
            }
        }
        let at = self.watchdog.queues[q].last_pfc.max(now) + w.restoration;
        self.q.schedule(at, Ev::WdRestore { port, tc });
        self.try_tx(now, port);
    }

    /// PFC watchdog: restores (`port`, `tc`) once no pause frame has arrived on it for the
    /// restoration time.
    pub(super) fn on_wd_restore(&mut self, now: SimTime, port: PortId, tc: u8) {
        let w = self.p.pfc.watchdog.expect("watchdog");
        let q = port.index() * 8 + tc as usize;
        if !self.watchdog.queues[q].storm {
            return;
        }
        let at = self.watchdog.queues[q].last_pfc + w.restoration;
        if now < at {
            self.q.schedule(at, Ev::WdRestore { port, tc });
            return;
        }
        self.watchdog.queues[q].storm = false;
        self.watchdog.storms_active -= 1;
        let st = &mut self.stats.storms[self.watchdog.queues[q].storm_idx as usize];
        st.restored_ps = Some(now.ps());
        let dropped = st.dropped_pkts;
        self.incident(
            now,
            IncidentKind::WatchdogRestored,
            Some(port),
            Some(tc),
            format!("no pause frame for the restoration time; {dropped} packets dropped in the storm"),
        );
        self.try_tx(now, port);
    }

    /// The watchdog's drop action at a RoCEv2 switch: a packet for a queue in storm, or
    /// arriving on the stormed port's priority, is discarded. `true` if it was.
    #[inline]
    pub(super) fn watchdog_drops(&mut self, in_port: PortId, out: PortId, tc: usize, id: u32, pk: &Packet) -> bool {
        if self.watchdog.storms_active == 0 || !self.p.pfc.watchdog.is_some_and(|w| w.action == crate::params::WatchdogAction::Drop) {
            return false;
        }
        for q in [out.index() * 8 + tc, in_port.index() * 8 + tc] {
            if let Some(i) = self.watchdog.storm_of(q) {
                let st = &mut self.stats.storms[i];
                st.dropped_pkts += 1;
                st.dropped_bytes += pk.frame as u64;
                self.drop_pkt(in_port, id, DropCause::PfcWatchdog);
                return true;
            }
        }
        false
    }
}
