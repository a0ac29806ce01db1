//! TODO doc

use super::*;

/// PFC watchdog state of one (switch egress port, priority).
#[derive(Default, Clone, Copy)]
pub(super) struct WdQueue {
    pub(super) storm: bool,
    /// A detection check is pending.
    pub(super) armed: bool,
    /// The last PFC frame received on this queue.
    pub(super) last_pfc: u64,
    /// Index of its current storm in `Stats::storms`.
    pub(super) storm_idx: u32,
}

impl Sim {
    /// PFC watchdog: declares a storm on (`port`, `tc`) if it has been paused without a
    /// break for the detection time, and mitigates it.
    pub(super) fn on_wd_check(&mut self, now: u64, port: u32, tc: u8) {
        let w = self.p.pfc.watchdog.expect("watchdog");
        let (pi, t) = (port as usize, tc as usize);
        let q = pi * 8 + t;
        self.wd[q].armed = false;
        if self.wd[q].storm || !self.paused(pi, t, now) {
            return;
        }
        let since = self.cls[q].pause_from;
        if now < since + w.detection.ps() {
            self.wd[q].armed = true;
            self.q.schedule(SimTime(since + w.detection.ps()), Ev::WdCheck { port, tc });
            return;
        }
        // Storm: the queue stops obeying pause frames.
        self.stats.ports[pi].paused_ps[t] += now - since;
        let c = &mut self.cls[q];
        c.pause_from = now;
        c.pause_until = now;
        self.wd[q].storm = true;
        self.wd[q].storm_idx = self.stats.storms.len() as u32;
        self.storms_active += 1;
        self.stats.storms.push(crate::stats::Storm {
            port,
            priority: tc,
            paused_from_ps: since,
            detected_ps: now,
            restored_ps: None,
            dropped_pkts: 0,
            dropped_bytes: 0,
        });
        let action = w.action;
        let verb = if action == crate::params::WatchdogAction::Drop { "drop" } else { "forward" };
        self.incident(now, "watchdog-fired", Some(port), Some(tc), format!("paused for {} us without a break: action {verb}", (now - since) / 1_000_000));
        if action == crate::params::WatchdogAction::Drop {
            while self.cls[q].head != NONE {
                let id = self.dequeue(now, port, t);
                let st = &mut self.stats.storms[self.wd[q].storm_idx as usize];
                st.dropped_pkts += 1;
                st.dropped_bytes += self.pkts[id as usize].frame as u64;
                self.drop_pkt(port, id, DropCause::PfcWatchdog);
            }
            // The drop action also stops pausing that neighbour on this priority.
            let pg = self.p.tc_to_pg[t];
            let gi = self.pg_index(port, pg);
            if self.pgs[gi].paused && self.pgs[gi].hdrm == 0 {
                self.pgs[gi].paused = false;
                self.pgs[gi].gen += 1;
                self.queue_pfc(now, port, pg, 0);
            }
        }
        let at = self.wd[q].last_pfc.max(now) + w.restoration.ps();
        self.q.schedule(SimTime(at), Ev::WdRestore { port, tc });
        self.try_tx(now, port);
    }

    /// PFC watchdog: restores (`port`, `tc`) once no pause frame has arrived on it for the
    /// restoration time.
    pub(super) fn on_wd_restore(&mut self, now: u64, port: u32, tc: u8) {
        let w = self.p.pfc.watchdog.expect("watchdog");
        let q = port as usize * 8 + tc as usize;
        if !self.wd[q].storm {
            return;
        }
        let at = self.wd[q].last_pfc + w.restoration.ps();
        if now < at {
            self.q.schedule(SimTime(at), Ev::WdRestore { port, tc });
            return;
        }
        self.wd[q].storm = false;
        self.storms_active -= 1;
        let st = &mut self.stats.storms[self.wd[q].storm_idx as usize];
        st.restored_ps = Some(now);
        let dropped = st.dropped_pkts;
        self.incident(
            now,
            "watchdog-restored",
            Some(port),
            Some(tc),
            format!("no pause frame for the restoration time; {dropped} packets dropped in the storm"),
        );
        self.try_tx(now, port);
    }
}
