//! Egress queues and the scheduler: the per-(port, class) queues ([`ClassQ`]), whether a
//! class may send now (not paused, or with credits on InfiniBand), and which class goes
//! next: strict priority first (highest class first), then deficit round robin over the
//! weighted classes with a 4096-byte quantum per weight unit (Shreedhar & Varghese,
//! SIGCOMM 1995). InfiniBand's VL arbitration uses the same scheduler: high-priority
//! VLs strict, low-priority VLs weighted (LimitOfHighPriority is not modelled).

use super::*;
use model::ib;

/// One egress queue (port, class): a list through `Packet::next`, its bytes, DRR deficit
/// and PFC pause interval. One cache line.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub(super) struct ClassQ {
    pub(super) head: u32,
    pub(super) tail: u32,
    pub(super) qbytes: u64,
    pub(super) deficit: i64,
    pub(super) pause_from: SimTime,
    pub(super) pause_until: SimTime,
    /// The last dequeue, or when the current head arrived at an empty queue (deadlock
    /// detector: how long the queue has not moved).
    pub(super) moved: SimTime,
}

const _: () = assert!(std::mem::size_of::<ClassQ>() == 64);

impl ClassQ {
    /// The pause predicate: a PFC pause holds this queue at `now`.
    #[inline]
    pub(super) fn paused(&self, now: SimTime) -> bool {
        self.pause_from <= now && now < self.pause_until
    }

    /// How long the current (or last) pause held the queue before `t`.
    #[inline]
    pub(super) fn paused_through(&self, t: SimTime) -> SimDuration {
        if self.pause_from < self.pause_until && self.pause_from < t {
            self.pause_until.min(t) - self.pause_from
        } else {
            SimDuration::ZERO
        }
    }

    /// Ends a pause still running at `now` (PFC switched off, a watchdog storm): returns
    /// the time it held the queue, for `paused_ps`.
    pub(super) fn cut_pause(&mut self, now: SimTime) -> SimDuration {
        if !(self.pause_from < self.pause_until && self.pause_until > now) {
            return SimDuration::ZERO;
        }
        let held = self.paused_through(now);
        self.pause_from = now;
        self.pause_until = now;
        held
    }
}

impl Default for ClassQ {
    fn default() -> Self {
        ClassQ { head: NONE, tail: NONE, qbytes: 0, deficit: 0, pause_from: SimTime::ZERO, pause_until: SimTime::ZERO, moved: SimTime::ZERO }
    }
}

/// Which classes a port serves strictly and which by deficit round robin (the same for
/// every port: Ethernet priorities, or InfiniBand VLs under the VL arbitration table).
pub(super) struct Scheduler {
    strict_mask: u8,
    weighted_mask: u8,
}

impl Scheduler {
    pub(super) fn new(p: &Params) -> Scheduler {
        let mask = |f: fn(Sched) -> bool| (0..8).filter(|&tc| f(p.sched[tc])).fold(0u8, |m, tc| m | 1 << tc);
        Scheduler { strict_mask: mask(|s| s == Sched::Strict), weighted_mask: mask(|s| matches!(s, Sched::Weighted(_))) }
    }
}

impl Sim {
    /// Whether class `tc` at `port` may send `frame` bytes now. `Err(t)`: blocked until
    /// `t` (a PFC pause expiry), or `Err(NEVER)` until credits arrive.
    #[inline]
    pub(super) fn may_send(&self, port: PortId, tc: usize, frame: u32, now: SimTime) -> Result<(), SimTime> {
        let pi = port.index();
        match &self.ib {
            None => {
                let c = &self.cls[pi * 8 + tc];
                if c.paused(now) {
                    return Err(c.pause_until);
                }
                Ok(())
            }
            Some(ibs) => {
                let st = &ibs[port];
                if ib::may_send(st.fccl[tc], st.fctbs[tc], ib::blocks(Bytes(frame as u64))) {
                    Ok(())
                } else {
                    Err(NEVER)
                }
            }
        }
    }

    pub(super) fn paused(&self, port: PortId, tc: usize, now: SimTime) -> bool {
        let c = &self.cls[port.index() * 8 + tc];
        c.paused(now)
    }

    /// Appends packet `id` to queue (`port`, `tc`).
    #[inline]
    pub(super) fn push_q(&mut self, port: PortId, tc: usize, id: u32) {
        let pi = port.index();
        self.pkts[id as usize].next = NONE;
        let c = &mut self.cls[pi * 8 + tc];
        if c.tail == NONE {
            c.head = id;
            c.moved = self.q.now();
            self.ports[pi].nonempty |= 1 << tc;
        } else {
            self.pkts[c.tail as usize].next = id;
        }
        c.tail = id;
    }

    /// Removes the head of the non-empty queue (`port`, `tc`).
    #[inline(always)]
    pub(super) fn pop_q(&mut self, port: PortId, tc: usize) -> u32 {
        let pi = port.index();
        let c = &mut self.cls[pi * 8 + tc];
        let id = c.head;
        debug_assert!(id != NONE, "pop from an empty queue");
        let next = self.pkts[id as usize].next;
        c.head = next;
        if next == NONE {
            c.tail = NONE;
            self.ports[pi].nonempty &= !(1 << tc);
        }
        id
    }

    /// The packets queued at (`port`, `tc`), head first.
    pub(super) fn queued(&self, port: PortId, tc: usize) -> impl Iterator<Item = u32> + '_ {
        self.pkts.list(self.cls[port.index() * 8 + tc].head)
    }

    pub(super) fn enqueue(&mut self, now: SimTime, port: PortId, id: u32) {
        let pk = &self.pkts[id as usize];
        let (tc, bytes) = (pk.tc as usize, pk.frame as u64);
        let pi = port.index();
        self.account_queue(now, port);
        if self.cls[pi * 8 + tc].head == NONE {
            if let Some(ib) = &mut self.ib {
                ib[port].head_since[tc] = now;
            }
        }
        self.push_q(port, tc, id);
        self.cls[pi * 8 + tc].qbytes += bytes;
        let ps = &mut self.ports[pi];
        ps.qtotal += bytes;
        ps.counters.max_queue = ps.counters.max_queue.max(ps.qtotal);
    }

    pub(super) fn account_queue(&mut self, now: SimTime, port: PortId) {
        let ps = &mut self.ports[port.index()];
        ps.counters.queue_area += ps.qtotal as u128 * (now - ps.q_changed).ps() as u128;
        ps.q_changed = now;
    }

    /// A switch port's next frame ([`Sim::try_tx`] step 3): the first sendable strict
    /// queue, else deficit round robin over the sendable weighted ones; when none may send,
    /// a re-check at the earliest pause expiry (or a credit wait). Inlined by force: its one
    /// caller is `try_tx`, and LLVM's inliner stopped taking it there when times became
    /// `SimTime` (about 1 % more instructions on perm1024 without this).
    #[inline(always)]
    pub(super) fn switch_pick(&mut self, now: SimTime, port: PortId) -> Option<u32> {
        let pi = port.index();
        let mut expiry = NEVER;
        if self.ib.is_some() {
            expiry = self.expire_heads(now, port);
        }
        let mut blocked_until = NEVER;
        let mut credit_blocked = false;
        let nonempty = self.ports[pi].nonempty;
        // Strict queues (high-priority VLs), highest index first.
        let mut m = nonempty & self.sched.strict_mask;
        while m != 0 {
            let tc = 7 - m.leading_zeros() as usize;
            m &= !(1 << tc);
            let head = self.cls[pi * 8 + tc].head;
            match self.may_send(port, tc, self.pkts[head as usize].frame as u32, now) {
                Ok(()) => return Some(self.dequeue(now, port, tc)),
                Err(NEVER) => credit_blocked = true,
                Err(t) => blocked_until = blocked_until.min(t),
            }
        }
        // Deficit round robin among weighted queues.
        let mut eligible = 0u8;
        let mut m = nonempty & self.sched.weighted_mask;
        while m != 0 {
            let tc = m.trailing_zeros() as usize;
            m &= m - 1;
            let head = self.cls[pi * 8 + tc].head;
            match self.may_send(port, tc, self.pkts[head as usize].frame as u32, now) {
                Ok(()) => eligible |= 1 << tc,
                Err(NEVER) => credit_blocked = true,
                Err(t) => blocked_until = blocked_until.min(t),
            }
        }
        if eligible == 0 {
            if credit_blocked {
                self.credit_wait(port, now);
                blocked_until = blocked_until.min(expiry);
            }
            if blocked_until != NEVER {
                self.kick_at(port, blocked_until);
            }
            return None;
        }
        loop {
            let tc = self.ports[pi].rr as usize;
            if eligible & (1 << tc) != 0 {
                let c = &mut self.cls[pi * 8 + tc];
                let size = self.pkts[c.head as usize].frame as i64;
                if c.deficit >= size {
                    c.deficit -= size;
                    let nz = c.deficit != 0;
                    self.set_deficit_nz(pi, tc, nz);
                    return Some(self.dequeue(now, port, tc));
                }
                let Sched::Weighted(w) = self.p.sched[tc] else { unreachable!() };
                c.deficit += w as i64 * 4096;
                let (d, nz) = (c.deficit, c.deficit != 0);
                self.set_deficit_nz(pi, tc, nz);
                if d >= size {
                    continue;
                }
            } else if nonempty & (1 << tc) == 0 && self.ports[pi].deficit_nz & (1 << tc) != 0 {
                // An empty queue loses its deficit when the round passes it.
                self.cls[pi * 8 + tc].deficit = 0;
                self.ports[pi].deficit_nz &= !(1 << tc);
            }
            self.ports[pi].rr = ((tc + 1) % 8) as u8;
        }
    }

    #[inline(always)]
    fn set_deficit_nz(&mut self, pi: usize, tc: usize, nz: bool) {
        let ps = &mut self.ports[pi];
        if nz {
            ps.deficit_nz |= 1 << tc;
        } else {
            ps.deficit_nz &= !(1 << tc);
        }
    }

    pub(super) fn dequeue(&mut self, now: SimTime, port: PortId, tc: usize) -> u32 {
        let pi = port.index();
        self.account_queue(now, port);
        let id = self.pop_q(port, tc);
        self.cls[pi * 8 + tc].moved = now;
        let pk = self.pkts[id as usize];
        self.cls[pi * 8 + tc].qbytes -= pk.frame as u64;
        let ps = &mut self.ports[pi];
        ps.qtotal -= pk.frame as u64;
        let node = NodeId(ps.owner);
        if let Some(ib) = &mut self.ib {
            ib[port].head_since[tc] = now;
            self.ib_release(now, pk.in_port, pk.in_pg, pk.frame as u32);
        } else {
            if self.p.ecn_marking == EcnMarking::Dequeue {
                self.ecn_mark(port, tc, id);
            }
            self.release(now, node, pk);
        }
        id
    }
}
