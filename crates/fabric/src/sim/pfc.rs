//! Priority flow control (IEEE 802.1Qbb): sending XOFF/XON for a PG, refreshing a pause
//! while it holds, and obeying received PFC frames after the response time.
//!
//! Model: a PFC frame is inserted at the sending port's next frame boundary, ahead of
//! queued data, and is never paused itself; a received pause takes effect after the
//! port's response time (IEEE 802.3 Table 31B-1 unless set) and lasts its quanta × 512
//! bit times; zero quanta (XON) resume at once. The MMU decides when a PG pauses
//! ([`Mmu::admit`], [`Mmu::release`]); the watchdog may make a queue ignore PFC.

use std::collections::VecDeque;

use super::*;

/// PFC's per-port state: the pause times of the next PFC frame, those of PFC frames on
/// the link (in link order), the response delay and quantum length, and which ports a
/// fault switched PFC off on.
pub(super) struct PfcState {
    /// Per port: pause quanta of the next PFC frame, per priority.
    next_quanta: Vec<[u16; 8]>,
    /// Per port: pause quanta of the PFC frames on its link, oldest first.
    on_link: Vec<VecDeque<[u16; 8]>>,
    /// Per port: time from receiving a PFC frame to acting on it.
    response: Vec<SimDuration>,
    /// Per port: one pause quantum, 512 bit times.
    quantum: Vec<SimDuration>,
    /// Per port, when some port's PFC is switched off during the run (else empty).
    off: Vec<bool>,
}

impl PfcState {
    pub(super) fn new(topo: &Topology, p: &Params, faults: &Faults) -> PfcState {
        let np = topo.ports.len();
        let response = topo
            .ports
            .iter()
            .map(|pt| match p.pfc.response {
                Some(d) => d,
                None if pt.rate.0 > 0 => model::headroom::quantum(pt.rate) * model::headroom::pause_response_quanta(pt.rate),
                None => SimDuration::ZERO,
            })
            .collect();
        let quantum = topo.ports.iter().map(|pt| if pt.rate.0 > 0 { model::headroom::quantum(pt.rate) } else { SimDuration::ZERO }).collect();
        let off = if faults.any(|k| matches!(k, FaultKind::PortPfc { .. })) { vec![false; np] } else { vec![] };
        PfcState { next_quanta: vec![[0; 8]; np], on_link: (0..np).map(|_| VecDeque::new()).collect(), response, quantum, off }
    }

    /// PFC is switched off on `port` (it neither sends nor obeys pause frames).
    #[inline]
    pub(super) fn is_off(&self, port: PortId) -> bool {
        !self.off.is_empty() && self.off[port.index()]
    }

    pub(super) fn set_off(&mut self, port: PortId, off: bool) {
        self.off[port.index()] = off;
    }

    /// `port` starts sending a PFC frame: its quanta go on the link.
    pub(super) fn frame_sent(&mut self, port: PortId) {
        let pi = port.index();
        self.on_link[pi].push_back(self.next_quanta[pi]);
    }

    /// The pause times of the PFC frame `port` started last (the capture tap reads them).
    pub(super) fn last_sent(&self, port: PortId) -> [u16; 8] {
        *self.on_link[port.index()].back().expect("PFC frame on the link")
    }

    /// The oldest PFC frame on `port`'s link arrives: its quanta.
    pub(super) fn frame_arrived(&mut self, port: PortId) -> [u16; 8] {
        self.on_link[port.index()].pop_front().expect("PFC frame on the link")
    }
}

impl Sim {
    /// A PFC frame arrives at `port`: for each priority in `mask`, after the port's response
    /// time, pause that egress queue for its quanta (zero quanta: resume), unless PFC is off
    /// on the port or the watchdog has the queue in storm.
    pub(super) fn on_pfc(&mut self, now: SimTime, port: PortId, mask: u8, quanta: [u16; 8]) {
        let pi = port.index();
        let x = now + self.pfc.response[pi];
        let mut wake = false;
        for (p, &q) in quanta.iter().enumerate() {
            if mask & (1 << p) == 0 {
                continue;
            }
            self.stats.ports[pi].pfc_rx[p] += 1;
            if self.pfc.is_off(port) {
                continue; // PFC disabled on this port: pause frames are not honoured
            }
            if self.watchdog.heard_pfc(port, p, now) {
                continue; // the watchdog ignores pause frames on a queue in storm
            }
            let new_until = x + self.pfc.quantum[pi] * q as u64;
            let c = &mut self.cls[pi * 8 + p];
            let starts = c.pause_from >= c.pause_until || x >= c.pause_until;
            if starts {
                // The previous pause (if any) is over by `x`: account it, start a new one.
                self.stats.ports[pi].paused_ps[p] += c.paused_through(x).ps();
                c.pause_from = x;
            }
            c.pause_until = new_until;
            if quanta[p] == 0 {
                wake = true;
            }
            if starts && quanta[p] > 0 {
                if !self.observe.first_block[pi] {
                    self.observe.first_block[pi] = true;
                    self.incident(x, IncidentKind::Paused, Some(port), Some(p as u8), format!("first pause ({} quanta)", quanta[p]));
                }
                if self.ports[pi].flags & P_SWITCH != 0 && self.watchdog.arm(port, p) {
                    let d = self.p.pfc.watchdog.expect("watchdog").detection;
                    self.q.schedule(x + d, Ev::WdCheck { port, tc: p as u8 });
                }
            }
            if self.stats.pause_log.len() < crate::stats::PAUSE_LOG_CAP {
                self.stats.pause_log.push((now.ps(), port, p as u8, quanta[p]));
            }
        }
        if wake {
            self.kick_at(port, x);
        }
    }

    /// Asks `port` to send a PFC frame with `quanta` for every lossless class of PG `pg`
    /// at its next frame boundary.
    pub(super) fn queue_pfc(&mut self, now: SimTime, port: PortId, pg: u8, quanta: u16) {
        let pi = port.index();
        for tc in 0..8 {
            if self.p.tc_to_pg[tc] == pg && self.p.lossless[tc] {
                self.ports[pi].pfc_mask |= 1 << tc;
                self.pfc.next_quanta[pi][tc] = quanta;
            }
        }
        self.try_tx(now, port);
    }

    /// Schedules the re-send of an XOFF while the pause (generation `gen`) holds: after the
    /// configured refresh, or half the pause time.
    pub(super) fn schedule_refresh(&mut self, now: SimTime, port: PortId, pg: u8, gen: u32) {
        let period = match self.p.pfc.refresh {
            Some(r) => r,
            None => self.pfc.quantum[port.index()] * self.p.pfc.quanta as u64 / 2,
        };
        if period > SimDuration::ZERO {
            self.q.schedule(now + period, Ev::PfcRefresh { port, pg, gen });
        }
    }

    /// A NIC asserts (or releases) pause on every lossless priority towards its switch
    /// (RoCEv2; an InfiniBand HCA withholds credits instead).
    pub(super) fn nic_pause(&mut self, now: SimTime, ep: u32, on: bool) {
        if self.ib.is_some() {
            return;
        }
        let port = self.hosts.nics[ep as usize].port;
        for pg in self.mmu.lossless_pgs() {
            self.set_pg_paused(now, port, pg, on, true);
        }
    }

    /// The one XOFF/XON transition of PG `pg` at ingress `port` ([`Mmu::set_paused`]); when
    /// it changes and `tell_peer`, the PFC frame that says so: XOFF with the configured
    /// quanta, refreshed while the pause lasts, or XON (zero quanta). A port whose PFC was
    /// switched off stops pausing without telling its peer.
    pub(super) fn set_pg_paused(&mut self, now: SimTime, port: PortId, pg: u8, on: bool, tell_peer: bool) {
        let gi = self.mmu.pg_index(port, pg);
        let Some(gen) = self.mmu.set_paused(gi, on) else { return };
        if !tell_peer {
            return;
        }
        if on {
            self.queue_pfc(now, port, pg, self.p.pfc.quanta);
            self.schedule_refresh(now, port, pg, gen);
        } else {
            self.queue_pfc(now, port, pg, 0);
        }
    }

    /// A PFC refresh is due: re-send the XOFF if that pause (generation `gen`) still holds.
    pub(super) fn on_pfc_refresh(&mut self, now: SimTime, port: PortId, pg: u8, gen: u32) {
        let st = *self.mmu.pg(port, pg);
        if st.paused && st.gen == gen {
            self.queue_pfc(now, port, pg, self.p.pfc.quanta);
            self.schedule_refresh(now, port, pg, gen);
        }
    }
}
