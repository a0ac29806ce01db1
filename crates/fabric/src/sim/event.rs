//! The event queue of the simulator: what can happen ([`Ev`]) and when, packed for the
//! engine's 4-ary heap. The five per-packet kinds (arrive, tx done, kick, post, RTO) fit
//! in 32 bits with their port, flow or QP; rarer events with more fields wait in a slab
//! and the heap holds their slot. Stale events are not removed: their handlers compare
//! a generation (lazy cancellation).

use super::*;

#[derive(Clone, Copy, Debug)]
pub(super) enum Ev {
    /// The head of the link leaving `port` reaches the peer.
    Arrive(PortId),
    /// `port` finished serialising a frame.
    TxDone(PortId),
    /// Re-check whether `port` can send (pause expiry, pacing).
    Kick(PortId),
    /// Re-send the XOFF of PG `pg` at ingress `port` if its pause (generation `gen`) holds.
    PfcRefresh {
        port: PortId,
        pg: u8,
        gen: u32,
    },
    /// Flow `f` (its index) is posted on its QP.
    Post(u32),
    /// The retransmission timeout of a QP.
    Rto(QpId),
    /// DCQCN: a QP's rate-increase timer (stale if `gen` moved on).
    RateTimer {
        qp: QpId,
        gen: u32,
    },
    /// DCQCN: a deferred or grid-scheduled rate cut of QP `qp` is due.
    RateCut(QpId),
    /// IB CC: a QP's CCTI timer.
    CctiTimer {
        qp: QpId,
        gen: u32,
    },
    Sample,
    /// Out-of-order placement: QP `qp` has had a gap open and its expected PSN unmoved for
    /// the NAK timeout (stale
    /// if `gen` moved on).
    ReorderTimer {
        qp: QpId,
        gen: u32,
    },
    /// The deadlock detector's periodic check.
    DeadlockCheck,
    /// Scenario fault `i` happens.
    Fault(u32),
    /// The control plane installs the forwarding state it computed (stale if `gen` moved on).
    Install {
        gen: u32,
    },
    /// An impaired NIC finished absorbing the head of its receive backlog.
    NicDrain {
        ep: u32,
        gen: u32,
    },
    /// PFC watchdog: has queue (`port`, `tc`) been paused for the detection time?
    WdCheck {
        port: PortId,
        tc: u8,
    },
    /// PFC watchdog: has queue (`port`, `tc`) heard no PFC for the restoration time?
    WdRestore {
        port: PortId,
        tc: u8,
    },
}

// The slab holds `Ev`s by value: keep them small.
const _: () = assert!(std::mem::size_of::<Ev>() == 12);

/// The event queue, with events packed into 32 bits for its 16-byte entries: a 3-bit
/// kind and a port, flow or QP number; events with more fields wait in a slab and the
/// queue holds their slot.
pub(super) struct Events {
    pub(super) q: EventQueue<u32>,
    pub(super) slab: Vec<Ev>,
    pub(super) free: Vec<u32>,
}

pub(super) const ID_BITS: u32 = 29;

pub(super) const ID_MASK: u32 = (1 << ID_BITS) - 1;

impl Events {
    pub(super) fn new() -> Events {
        Events { q: EventQueue::new(), slab: vec![], free: vec![] }
    }

    #[inline]
    pub(super) fn schedule(&mut self, at: SimTime, ev: Ev) {
        let (kind, id) = match ev {
            Ev::Arrive(p) => (0, p.0),
            Ev::TxDone(p) => (1, p.0),
            Ev::Kick(p) => (2, p.0),
            Ev::Post(f) => (3, f),
            Ev::Rto(q) => (4, q.0),
            _ => {
                let slot = match self.free.pop() {
                    Some(s) => {
                        self.slab[s as usize] = ev;
                        s
                    }
                    None => {
                        self.slab.push(ev);
                        self.slab.len() as u32 - 1
                    }
                };
                (7, slot)
            }
        };
        debug_assert!(id <= ID_MASK);
        self.q.schedule(at, kind << ID_BITS | id);
    }

    #[inline]
    pub(super) fn pop(&mut self) -> Option<(SimTime, Ev)> {
        let (t, code) = self.q.pop()?;
        let id = code & ID_MASK;
        let ev = match code >> ID_BITS {
            0 => Ev::Arrive(PortId(id)),
            1 => Ev::TxDone(PortId(id)),
            2 => Ev::Kick(PortId(id)),
            3 => Ev::Post(id),
            4 => Ev::Rto(QpId(id)),
            _ => {
                self.free.push(id);
                self.slab[id as usize]
            }
        };
        Some((t, ev))
    }

    /// The per-packet event `n` places after the next one in the current bucket, if it
    /// is one (a hint for prefetching: see `prefetch.rs`); slab events are not decoded.
    #[inline(always)]
    pub(super) fn upcoming(&self, n: usize) -> Option<Ev> {
        let code = self.q.upcoming(n)?;
        let id = code & ID_MASK;
        match code >> ID_BITS {
            0 => Some(Ev::Arrive(PortId(id))),
            1 => Some(Ev::TxDone(PortId(id))),
            2 => Some(Ev::Kick(PortId(id))),
            _ => None,
        }
    }

    pub(super) fn peek_time(&mut self) -> Option<SimTime> {
        self.q.peek_time()
    }
    pub(super) fn now(&self) -> SimTime {
        self.q.now()
    }
    pub(super) fn popped(&self) -> u64 {
        self.q.popped()
    }
}
