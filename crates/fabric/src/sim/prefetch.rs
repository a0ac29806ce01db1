//! Prefetching what the next events will touch, while the current one runs.
//!
//! At 8,192 hosts the fabric's state is far larger than the cache, and nearly every
//! event starts with misses on its port's line, the frame at the head of the link, the
//! QP's addresses, the egress port and class queue and the ingress PG (docs/speed.md,
//! "Cache lines per event"). The calendar queue's current bucket is sorted, so the
//! events after the next one are known ([`Events::upcoming`]). Each of those lines can
//! only be found once the one before it is in (the port line names the frame, the frame
//! its QP and class, the QP's addresses the route), so they are requested in stages, the
//! first furthest ahead:
//!
//! | events ahead | arrival at a switch | arrival at a NIC | end of a frame, or a re-check, at a switch port | at a NIC port |
//! |---|---|---|---|---|
//! | [`PORT_AHEAD`] | the sending port's two lines | the same | the port's two lines | the same |
//! | [`FRAME_AHEAD`] | the frame at the head of the link | the same | the first non-empty class queue | the NIC |
//! | [`ADDR_AHEAD`] | the QP's addresses | the QP (every line of it) | that queue's head frame | the QP next in its round robin (every line) |
//! | [`HOP_AHEAD`] | the egress port (both lines) and class queue (the route computed as `switch_rx` will), the ingress PG, the egress port's ECN marking curve (when counted) | the NIC's statistics, the QP's oldest posted message | — | — |
//!
//! A prefetch changes no state and no order; it only starts the memory accesses sooner
//! (PREFETCHT0: "Software Prefetching", Intel 64 and IA-32 Architectures Optimization
//! Reference Manual, 248966; "Prefetch Instructions", AMD Software Optimization Guide
//! for AMD Family 19h Processors, 56665). The distances were chosen by alternating runs
//! of the perm8192-pfc bench cut at 100 µs and of perm1024 (docs/speed.md).
//!
//! A port's second line holds the counters every enqueue and dequeue updates
//! (`PortCounters`: the queue area was half of `enqueue`'s samples at 8,192 hosts), and
//! an arrival at a NIC counts into the NIC's statistics (CE marks, CNPs, payload) and an
//! ACK reads the QP's oldest message: with DCQCN those were most of `nic_rx`'s samples
//! (docs/speed.md, "Prefetching the events ahead").
//!
//! Tried and left out (no gain measured): the frame at the tail of a sending port's link
//! (the send links the new frame behind it) and the ingress PG a dequeue releases.
//! Leaves out: a QP's posted messages past the oldest (a separate buffer); the route under
//! load balancing (it depends on the queues when the frame arrives); events in the queue's
//! unsorted `soon` heap, which the hint does not see.

use super::*;

/// Events ahead at which an event's port line is requested.
const PORT_AHEAD: usize = 6;
/// Events ahead at which the frame arriving (or the class queue sending) is requested.
const FRAME_AHEAD: usize = 4;
/// Events ahead at which an arriving frame's QP addresses (or a sending queue's head
/// frame) are requested.
const ADDR_AHEAD: usize = 2;
/// Events ahead at which an arriving frame's egress port and queue and its ingress PG
/// are requested.
const HOP_AHEAD: usize = 1;

/// Asks the cache for the line holding `*p`; a no-op on targets without the instruction.
#[inline(always)]
fn prefetch<T>(p: &T) {
    prefetch_at((p as *const T).cast());
}

/// Asks the cache for every line of `*p` (a struct larger than a line).
#[inline(always)]
fn prefetch_all<T>(p: &T) {
    let base: *const u8 = (p as *const T).cast();
    for off in (0..std::mem::size_of::<T>()).step_by(64) {
        prefetch_at(base.wrapping_add(off));
    }
}

#[inline(always)]
fn prefetch_at(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 is a hint: it never faults, whatever the address, and writes
    // nothing.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

impl Sim {
    /// Requests the lines of the events ahead, one stage per distance (see the module doc).
    #[inline(always)]
    pub(super) fn prefetch_ahead(&self) {
        if let Some(Ev::Arrive(p) | Ev::TxDone(p) | Ev::Kick(p)) = self.q.upcoming(PORT_AHEAD) {
            prefetch_all(&self.ports[p.index()]);
        }
        match self.q.upcoming(FRAME_AHEAD) {
            Some(Ev::Arrive(p)) => {
                if let Some(head) = self.link_head(p) {
                    prefetch(head);
                }
            }
            Some(Ev::TxDone(p) | Ev::Kick(p)) => {
                let ps = &self.ports[p.index()];
                if ps.flags & P_SWITCH == 0 {
                    prefetch(&self.hosts.nics[ps.owner as usize]);
                } else if let Some(cq) = self.first_class(p) {
                    prefetch(cq);
                }
            }
            _ => {}
        }
        match self.q.upcoming(ADDR_AHEAD) {
            Some(Ev::Arrive(p)) => {
                if let Some(pk) = self.link_head(p).filter(|pk| pk.is_pkt()) {
                    if self.ports[p.index()].flags & P_PEER_SWITCH != 0 {
                        prefetch(&self.hosts.qp_addr[pk.qp.index()]);
                    } else if let Some(qp) = self.hosts.qps.get(pk.qp.index()) {
                        prefetch_all(qp);
                    }
                }
            }
            Some(Ev::TxDone(p) | Ev::Kick(p)) => {
                let ps = &self.ports[p.index()];
                if ps.flags & P_SWITCH == 0 {
                    let nic = &self.hosts.nics[ps.owner as usize];
                    if let Some(qp) = nic.active.get(nic.rr % nic.active.len().max(1)) {
                        prefetch_all(&self.hosts.qps[qp.index()]);
                    }
                } else if let Some(head) = self.first_class(p).map(|cq| cq.head).filter(|&h| h != NONE) {
                    prefetch(&self.pkts[head as usize]);
                }
            }
            _ => {}
        }
        if let Some(Ev::Arrive(p)) = self.q.upcoming(HOP_AHEAD) {
            if self.ports[p.index()].flags & P_PEER_SWITCH != 0 {
                self.prefetch_hop(p);
            } else {
                self.prefetch_nic_rx(p);
            }
        }
    }

    /// The frame at the head of the link leaving `port`, if any.
    #[inline(always)]
    fn link_head(&self, port: PortId) -> Option<&Packet> {
        let head = self.ports[port.index()].chan_head;
        (head != NONE).then(|| &self.pkts[head as usize])
    }

    /// The first non-empty class queue of switch port `port` (the one its scheduler most
    /// often picks), if any.
    #[inline(always)]
    fn first_class(&self, port: PortId) -> Option<&ClassQ> {
        let ps = &self.ports[port.index()];
        (ps.flags & P_SWITCH != 0 && ps.nonempty != 0).then(|| &self.cls[port.index() * 8 + ps.nonempty.trailing_zeros() as usize])
    }

    /// For the frame arriving over the link leaving `port` at a NIC: the NIC's statistics
    /// and the first of the QP's posted messages (the ACK's requester reads it).
    #[inline(always)]
    fn prefetch_nic_rx(&self, port: PortId) {
        let ps = &self.ports[port.index()];
        if let Some(st) = self.stats.nics.get(ps.peer_owner as usize) {
            prefetch_all(st);
        }
        let Some(pk) = self.link_head(port).filter(|pk| pk.is_pkt()) else { return };
        if let Some(m) = self.hosts.qps.get(pk.qp.index()).and_then(|qp| qp.msgs.front()) {
            prefetch(m);
        }
    }

    /// For the frame arriving over the link leaving `port` at a switch: its egress port
    /// and, on RoCE, its egress class queue and its ingress PG. The route is `switch_rx`'s
    /// own (`next_hop`); under load balancing it is left alone.
    #[inline(always)]
    fn prefetch_hop(&self, port: PortId) {
        let ps = &self.ports[port.index()];
        if ps.flags & P_PEER_SWITCH == 0 || self.forwarding.balance.is_some() {
            return;
        }
        let Some(pk) = self.link_head(port).filter(|pk| pk.is_pkt()) else { return };
        if let Some(out) = self.next_hop(NodeId(ps.peer_owner), pk) {
            prefetch_all(&self.ports[out.index()]);
            if self.ib.is_none() {
                prefetch(&self.cls[out.index() * 8 + pk.tc as usize]);
                if self.ecn.curve && self.p.ecn[pk.tc as usize].is_some() && self.p.ecn_marking == EcnMarking::Enqueue {
                    // `ecn_mark` counts the packet in its queue-length bin: 16 counters,
                    // two lines of the port's statistics.
                    let seen = &self.stats.ports[out.index()].ecn_seen;
                    prefetch(&seen[0]);
                    prefetch(&seen[seen.len() - 1]);
                }
            }
        }
        if self.ib.is_none() {
            prefetch(self.mmu.pg(ps.peer, self.p.tc_to_pg[pk.tc as usize]));
        }
    }
}
