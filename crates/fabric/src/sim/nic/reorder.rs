//! Out-of-order data placement at the RC responder (`[roce] ooo = true`; the model and
//! its sources are [`crate::params::OutOfOrder`]'s doc).
//!
//! Model: a data packet ahead of the expected PSN (`epsn`) is written to memory at once
//! (its payload counts as received) and remembered in a per-QP bitmap that starts at
//! `epsn`; when the packet at `epsn` arrives, `epsn` moves past every PSN already placed,
//! completing each message whose last packet it passes, and the usual cumulative ACK
//! follows (every `ack_every` packets and at a message's end). A gap is NAKed (once, go-back-N
//! from `epsn` as today) when a packet arrives more than `nak_window` PSNs ahead of
//! `epsn`, or when a gap is open and `epsn` has not moved for `nak_timeout` (the timer
//! restarts whenever `epsn` moves). Packets whose PSN was placed
//! already are duplicates (discarded, a cumulative ACK answers them as today); first
//! transmissions that arrive after the responder NAKed their PSN, before any
//! retransmission it asked for, are counted late.
//!
//! Leaves out: selective retransmission (the requester still goes back N, so placed
//! packets come again as duplicates after a NAK), a limit on the bitmap (NICs track a
//! bounded window; here it is as long as the requester's window), and the NIC's memory
//! writes themselves (placement is instantaneous, as in-order receipt is).

use super::super::*;

/// A PSN at or past `epsn` has arrived.
const PLACED: u8 = 1;

/// ... and it was the last packet of its message.
const ENDS_MSG: u8 = 2;

/// Per QP: what the responder has placed past its expected PSN and its oldest gap.
#[derive(Default)]
pub(in crate::sim) struct Reorder {
    /// Per QP: flags of PSN `epsn + i` at `i` (index 0, `epsn` itself, is never placed).
    ahead: Vec<VecDeque<u8>>,
    /// Per QP: the NAK timer's generation (a timer of an older one is stale).
    gen: Vec<u32>,
    /// Per QP: whether a gap is open (a packet past `epsn` is placed).
    gap_open: Vec<bool>,
    /// Per QP: the PSN NAKed last, until a retransmission of it arrives (`u32::MAX`: none).
    naked: Vec<u32>,
}

impl Reorder {
    /// State for `qps` QPs when out-of-order placement is on, else none.
    pub(in crate::sim) fn new(p: &Params, qps: usize) -> Reorder {
        if p.ooo.is_none() {
            return Reorder::default();
        }
        Reorder { ahead: (0..qps).map(|_| VecDeque::new()).collect(), gen: vec![0; qps], gap_open: vec![false; qps], naked: vec![u32::MAX; qps] }
    }
}

impl Sim {
    /// Out-of-order placement's receive rule (module doc). Returns the reply due now.
    pub(in crate::sim) fn accept_out_of_order(&mut self, now: SimTime, pk: &Packet) -> Option<(Kind, u32)> {
        let qi = pk.qp.index();
        let ooo = self.p.ooo.expect("accept_out_of_order without ooo");
        let qp = &mut self.hosts.qps[qi];
        let dst = qp.dst as usize;
        let r = &mut self.hosts.reorder;
        let naked = r.naked[qi];
        if pk.has(RETX) && pk.psn == naked {
            r.naked[qi] = u32::MAX;
        } else if !pk.has(RETX) && naked != u32::MAX && pk.psn >= naked {
            self.stats.qp_rx[qi].late += 1;
        }
        let offset = pk.psn.wrapping_sub(qp.epsn) as usize;
        let ahead = &mut r.ahead[qi];
        if pk.psn < qp.epsn || ahead.get(offset).is_some_and(|&f| f & PLACED != 0) {
            self.stats.nics[dst].rx_discarded_payload += pk.payload as u64;
            self.stats.qp_rx[qi].duplicate += 1;
            return (pk.psn < qp.epsn).then(|| (Kind::Ack, qp.epsn - 1));
        }
        if ahead.len() <= offset {
            ahead.resize(offset + 1, 0);
        }
        ahead[offset] = PLACED | if pk.has(LAST) { ENDS_MSG } else { 0 };
        self.stats.nics[dst].rx_payload += pk.payload as u64;
        self.hosts.delivered += pk.payload as u64;
        if offset > 0 {
            self.stats.qp_rx[qi].out_of_order += 1;
            if !r.gap_open[qi] {
                r.gap_open[qi] = true;
                self.arm_reorder_timer(now, pk.qp, ooo.nak_timeout);
            }
            let qp = &mut self.hosts.qps[qi];
            if offset as u64 > ooo.nak_window as u64 && !qp.nak_sent {
                return Some(self.nak_gap(pk.qp));
            }
            return None;
        }
        self.advance_epsn(now, pk.qp, ooo.nak_timeout)
    }

    /// The packet at `epsn` was placed: moves `epsn` past every placed PSN, delivering the
    /// messages it completes; re-arms the gap timer for the next gap, if one is open.
    /// Returns the ACK due, if any.
    fn advance_epsn(&mut self, now: SimTime, qpi: QpId, nak_timeout: SimDuration) -> Option<(Kind, u32)> {
        let qi = qpi.index();
        let ack_every = self.p.ack_every;
        let mut ended = false;
        loop {
            let ahead = &mut self.hosts.reorder.ahead[qi];
            let f = match ahead.front() {
                Some(&f) if f & PLACED != 0 => f,
                _ => break,
            };
            ahead.pop_front();
            let qp = &mut self.hosts.qps[qi];
            qp.epsn += 1;
            qp.unacked += 1;
            if f & ENDS_MSG != 0 {
                ended = true;
                let flow = qp.rx_msgs.pop_front().expect("a last packet ends a posted message");
                self.on_delivered(now, flow);
            }
        }
        let qp = &mut self.hosts.qps[qi];
        qp.nak_sent = false;
        let epsn = qp.epsn;
        let reply = (ended || qp.unacked >= ack_every).then(|| {
            qp.unacked = 0;
            (Kind::Ack, epsn - 1)
        });
        let gap = !self.hosts.reorder.ahead[qi].is_empty();
        let l = &mut self.hosts.lost[qi];
        if l.0 != NEVER && epsn > l.1 {
            self.stats.recoveries.push((qpi, l.0.ps(), now.ps()));
            *l = (NEVER, 0);
        }
        self.hosts.reorder.gen[qi] += 1;
        self.hosts.reorder.gap_open[qi] = gap;
        if gap {
            self.arm_reorder_timer(now, qpi, nak_timeout);
        }
        reply
    }

    fn arm_reorder_timer(&mut self, now: SimTime, qpi: QpId, nak_timeout: SimDuration) {
        let gen = self.hosts.reorder.gen[qpi.index()];
        self.q.schedule(now + nak_timeout, Ev::ReorderTimer { qp: qpi, gen });
    }

    /// A NAK for QP `qpi`'s expected PSN: the gap there is declared lost.
    fn nak_gap(&mut self, qpi: QpId) -> (Kind, u32) {
        let qp = &mut self.hosts.qps[qpi.index()];
        qp.nak_sent = true;
        self.hosts.reorder.naked[qpi.index()] = qp.epsn;
        (Kind::Nak, qp.epsn)
    }

    /// The gap timer of QP `qpi` (generation `gen`) fired: NAK the gap if it is still the
    /// same one and not NAKed yet.
    pub(in crate::sim) fn on_reorder_timeout(&mut self, now: SimTime, qpi: QpId, gen: u32) {
        let qi = qpi.index();
        if gen != self.hosts.reorder.gen[qi] || !self.hosts.reorder.gap_open[qi] || self.hosts.qps[qi].nak_sent || self.hosts.qps[qi].failed {
            return;
        }
        let (kind, psn) = self.nak_gap(qpi);
        let dst = self.hosts.qps[qi].dst;
        self.stats.nics[dst as usize].nak_tx += 1;
        let tc = self.responder_class(qpi);
        let a = self.ctrl_packet(kind, qpi, psn, tc);
        self.nic_tx_ctrl(now, dst, a);
    }
}
