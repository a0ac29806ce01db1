//! An impaired NIC receiver (the `stuck-receiver` and `slow-receiver` faults): it absorbs
//! received packets at a set rate into a bounded buffer, or none at all. A RoCE NIC
//! pauses its switch (every lossless priority) at XOFF and resumes at XON, and drops
//! what overflows; a stuck one pauses at once and keeps refreshing the pause. An IB HCA
//! returns credits while its buffer has room, then only as it drains: credits bound the
//! backlog and nothing is dropped.

use super::super::*;

/// An impaired NIC receiver: it absorbs `drain_bps` (0: nothing — stuck), holds a backlog
/// of at most `buffer` bytes, pauses its switch (every lossless priority) when the backlog
/// reaches `xoff` bytes and resumes at `xon`. A stuck receiver pauses at once and keeps
/// refreshing the pause for as long as it is stuck.
#[derive(Clone, Copy, Debug)]
pub struct RxFault {
    pub drain_bps: u64,
    pub buffer: u64,
    pub xoff: u64,
    pub xon: u64,
}

/// An impaired NIC receiver's state (see [`RxFault`]).
#[derive(Default)]
pub(in crate::sim) struct NicRx {
    pub(in crate::sim) fault: Option<RxFault>,
    /// Packets received and not yet absorbed, oldest first.
    pub(in crate::sim) backlog: VecDeque<u32>,
    pub(in crate::sim) bytes: u64,
    /// Bumped when the fault changes, so that a pending drain event goes stale.
    pub(in crate::sim) gen: u32,
    pub(in crate::sim) draining: bool,
}

/// The impaired NIC receivers: per endpoint when some NIC receiver is impaired during
/// the run (else empty).
pub(in crate::sim) struct ImpairedRx {
    pub(in crate::sim) nics: Vec<NicRx>,
}

impl ImpairedRx {
    pub(in crate::sim) fn new(topo: &Topology, faults: &Faults) -> ImpairedRx {
        let any = faults.any(|k| matches!(k, FaultKind::NicRx { .. }));
        ImpairedRx { nics: if any { (0..topo.endpoints.len()).map(|_| NicRx::default()).collect() } else { vec![] } }
    }

    /// Endpoint `ep`'s receiver is impaired now.
    #[inline]
    pub(in crate::sim) fn is_impaired(&self, ep: u32) -> bool {
        !self.nics.is_empty() && self.nics[ep as usize].fault.is_some()
    }
}

impl Sim {
    /// Impairs (or heals) the receive side of endpoint `ep`'s NIC.
    pub(in crate::sim) fn set_nic_rx(&mut self, now: SimTime, ep: u32, rx: Option<RxFault>) {
        let e = ep as usize;
        self.impaired.nics[e].fault = rx;
        self.impaired.nics[e].gen += 1;
        self.impaired.nics[e].draining = false;
        match rx {
            Some(f) if f.drain_bps == 0 => self.nic_pause(now, ep, true),
            Some(_) => {
                if !self.impaired.nics[e].backlog.is_empty() {
                    self.schedule_drain(now, ep);
                }
            }
            None => {
                // Healthy again: it absorbs its backlog at once and releases the pause.
                let backlog: Vec<u32> = self.impaired.nics[e].backlog.drain(..).collect();
                self.impaired.nics[e].bytes = 0;
                self.nic_pause(now, ep, false);
                for id in backlog {
                    self.hca_release(now, ep, id);
                    self.nic_rx(now, ep, id);
                }
            }
        }
    }

    /// A packet reaches an impaired NIC receiver: held in its backlog, or dropped when the
    /// receiver is stuck or its buffer full; crossing XOFF pauses the switch.
    pub(in crate::sim) fn impaired_rx(&mut self, now: SimTime, ep: u32, port: PortId, id: u32) {
        let e = ep as usize;
        let f = self.impaired.nics[e].fault.expect("impaired");
        let frame = self.pkts[id as usize].frame as u64;
        if self.ib.is_some() {
            // InfiniBand: the HCA moves the packet into its receive buffer (`buffer` bytes
            // beyond the port's VL buffer) and returns its credits; once that is full it
            // holds packets in the VL buffer and returns no credits until it absorbs them.
            // Credits bound the backlog: nothing is dropped.
            self.impaired.nics[e].backlog.push_back(id);
            self.impaired.nics[e].bytes += frame;
            if self.impaired.nics[e].bytes <= f.buffer {
                self.hca_release(now, ep, id);
                self.pkts[id as usize].flags |= CREDITED;
            }
            if f.drain_bps > 0 && !self.impaired.nics[e].draining {
                self.schedule_drain(now, ep);
            }
            return;
        }
        if f.drain_bps == 0 {
            self.drop_pkt(port, id, DropCause::ReceiverStuck);
            return;
        }
        if self.impaired.nics[e].bytes + frame > f.buffer {
            self.drop_pkt(port, id, DropCause::ReceiverOverflow);
            return;
        }
        self.impaired.nics[e].backlog.push_back(id);
        self.impaired.nics[e].bytes += frame;
        if self.impaired.nics[e].bytes >= f.xoff {
            self.nic_pause(now, ep, true);
        }
        if !self.impaired.nics[e].draining {
            self.schedule_drain(now, ep);
        }
    }

    pub(in crate::sim) fn schedule_drain(&mut self, now: SimTime, ep: u32) {
        let e = ep as usize;
        let f = self.impaired.nics[e].fault.expect("impaired");
        let head = *self.impaired.nics[e].backlog.front().expect("backlog");
        let t = serialization(Bytes(self.pkts[head as usize].frame as u64), BitRate(f.drain_bps));
        self.impaired.nics[e].draining = true;
        let gen = self.impaired.nics[e].gen;
        self.q.schedule(now + t, Ev::NicDrain { ep, gen });
    }

    pub(in crate::sim) fn on_nic_drain(&mut self, now: SimTime, ep: u32, gen: u32) {
        let e = ep as usize;
        if self.impaired.nics[e].gen != gen || !self.impaired.nics[e].draining {
            return;
        }
        self.impaired.nics[e].draining = false;
        let Some(id) = self.impaired.nics[e].backlog.pop_front() else { return };
        self.impaired.nics[e].bytes -= self.pkts[id as usize].frame as u64;
        self.hca_release(now, ep, id);
        let f = self.impaired.nics[e].fault.expect("impaired");
        if self.impaired.nics[e].bytes <= f.xon {
            self.nic_pause(now, ep, false);
        }
        self.nic_rx(now, ep, id);
        if !self.impaired.nics[e].backlog.is_empty() {
            self.schedule_drain(now, ep);
        }
    }

    /// InfiniBand: an impaired HCA returns a held packet's credits (once).
    pub(in crate::sim) fn hca_release(&mut self, now: SimTime, ep: u32, id: u32) {
        if self.ib.is_some() && !self.pkts[id as usize].has(CREDITED) {
            let pk = self.pkts[id as usize];
            self.ib_release(now, self.hosts.nics[ep as usize].port, pk.tc, pk.frame as u32);
        }
    }
}
