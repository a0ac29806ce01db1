//! The RC requester: posting messages, picking the next packet a NIC sends (control
//! packets first, then round robin over QPs with work that are not paused, have
//! credits and whose rate allows), building data packets (with DCQCN or IB CC pacing),
//! handling ACKs and NAKs (go-back-N), and the retransmission timeout.

use super::super::*;

impl Sim {
    pub(in crate::sim) fn on_post(&mut self, now: SimTime, f: u32) {
        let rec = &mut self.stats.flows[f as usize];
        rec.start = now.ps();
        let size = rec.size();
        let (n, last) = segments(Bytes(size), self.p.mtu);
        let qpi = self.flows.qp[f as usize];
        if qpi == NO_QP {
            // A barrier: done as soon as it is released.
            self.stats.flows[f as usize].set_finish(now.ps());
            self.flows.remaining -= 1;
            self.on_delivered(now, f);
            return;
        }
        let qp = &mut self.hosts.qps[qpi.index()];
        if qp.failed {
            // The QP is in the error state: the post completes with an error at once.
            self.fail_flows(&[f]);
            return;
        }
        qp.msgs.push_back(Msg { flow: f, first_psn: qp.snd_max, npkts: n as u32, size, last_payload: last.0 as u32 });
        qp.rx_msgs.push_back(f);
        qp.snd_max += n as u32;
        let ep = qp.src;
        self.activate(ep, qpi);
        let port = self.hosts.nics[ep as usize].port;
        self.try_tx(now, port);
    }

    /// A NIC's next frame ([`Sim::try_tx`] step 3): a control packet (ACK, NAK, CNP) first,
    /// then round robin over the QPs with work that are not paused, have credits and whose
    /// rate allows. Inlined by force into its one caller, like `sched::switch_pick`.
    #[inline(always)]
    pub(in crate::sim) fn nic_pick(&mut self, now: SimTime, ep: u32) -> Option<u32> {
        let port = self.hosts.nics[ep as usize].port;
        let pi = port.index();
        let mut wake = NEVER;
        // Control packets (ACK/NAK/CNP) first, by class, honouring pause.
        let mut credit_blocked = false;
        let mut m = self.ports[pi].nonempty;
        while m != 0 {
            let tc = 7 - m.leading_zeros() as usize;
            m &= !(1 << tc);
            let head = self.cls[pi * 8 + tc].head;
            match self.may_send(port, tc, self.pkts[head as usize].frame as u32, now) {
                Ok(()) => {}
                Err(NEVER) => {
                    credit_blocked = true;
                    continue;
                }
                Err(t) => {
                    wake = wake.min(t);
                    continue;
                }
            }
            let id = self.pop_q(port, tc);
            self.cls[pi * 8 + tc].qbytes -= self.pkts[id as usize].frame as u64;
            return Some(id);
        }
        // Data: round robin over QPs with work, not paused, allowed by their rate.
        let e = ep as usize;
        let n = self.hosts.nics[e].active.len();
        let mut i = 0;
        while i < n.min(self.hosts.nics[e].active.len()) {
            let len = self.hosts.nics[e].active.len();
            let idx = (self.hosts.nics[e].rr + i) % len;
            let qpi = self.hosts.nics[e].active[idx];
            let qp = &self.hosts.qps[qpi.index()];
            if qp.snd_nxt >= qp.snd_max || qp.failed {
                // Nothing to send: leave the active list (re-added on post or go-back).
                self.hosts.qps[qpi.index()].active = false;
                self.hosts.nics[e].active.swap_remove(idx);
                continue;
            }
            let tc = qp.tc as usize;
            let next_tx = qp.next_tx;
            if self.ib.is_none() {
                let c = &self.cls[pi * 8 + tc];
                if c.paused(now) {
                    wake = wake.min(c.pause_until);
                    i += 1;
                    continue;
                }
            } else if !self.qp_has_credit(port, qpi) {
                credit_blocked = true;
                i += 1;
                continue;
            }
            if next_tx > now {
                wake = wake.min(next_tx);
                i += 1;
                continue;
            }
            self.hosts.nics[e].rr = (idx + 1) % len;
            let id = self.build_data(now, qpi);
            return Some(id);
        }
        if credit_blocked {
            self.credit_wait(port, now);
        }
        if wake != NEVER {
            self.kick_at(port, wake);
        }
        None
    }

    /// Whether QP `qpi`'s next packet fits the credits of its VL at `port`.
    pub(in crate::sim) fn qp_has_credit(&self, port: PortId, qpi: QpId) -> bool {
        let qp = &self.hosts.qps[qpi.index()];
        let psn = qp.snd_nxt;
        let m = msg_at(&qp.msgs, psn);
        let first = psn == m.first_psn;
        let payload = if psn == m.first_psn + m.npkts - 1 { m.last_payload as u64 } else { self.p.mtu.0 };
        let t = if first { Transport::WriteFirst } else { Transport::WriteRest };
        self.may_send(port, qp.tc as usize, frame_of(&self.p, t, Bytes(payload)).0 as u32, SimTime::ZERO).is_ok()
    }

    /// The next data packet of QP `qpi`: its PSN, size and flags; DCQCN or IB CC pacing;
    /// the retransmission timer armed. Inlined by force into its one caller, `nic_pick`.
    #[inline(always)]
    pub(in crate::sim) fn build_data(&mut self, now: SimTime, qpi: QpId) -> u32 {
        let mtu = self.p.mtu.0 as u32;
        let qp = &mut self.hosts.qps[qpi.index()];
        let psn = qp.snd_nxt;
        let m = msg_at(&qp.msgs, psn);
        let first = psn == m.first_psn;
        let last = psn == m.first_psn + m.npkts - 1;
        let payload = if last { m.last_payload } else { mtu };
        let t = if first { Transport::WriteFirst } else { Transport::WriteRest };
        let frame = frame_of(&self.p, t, Bytes(payload as u64)).0 as u32;
        qp.snd_nxt += 1;
        let retx = psn < qp.max_sent;
        qp.max_sent = qp.max_sent.max(psn + 1);
        let line = self.hosts.nics[qp.src as usize].line_bps;
        let w = wire_of(self.p.tech, Bytes(frame as u64));
        if let (Some(cc), Some((_, d))) = (qp.cc.as_mut(), self.p.dcqcn.as_ref()) {
            cc.on_sent(w.0, d);
            qp.last_tx = now;
            qp.last_wire = w.0 as u32;
            qp.next_tx = SimTime(paced_next_tx(now.ps(), w.0 as u32, cc.rate_bps(), line));
        } else if let Some(cc) = self.p.ib.as_ref().and_then(|i| i.cc.as_ref()) {
            let t = serialization(w, units::BitRate(line));
            let gap = SimDuration(qp.cca.gap_ps(cc, t.ps()));
            qp.next_tx = if gap == SimDuration::ZERO { SimTime::ZERO } else { now + t + gap };
        }
        if !qp.rto_pending {
            qp.rto_pending = true;
            qp.rto_deadline = now + self.p.rto;
            self.q.schedule(qp.rto_deadline, Ev::Rto(qpi));
        } else if qp.rto_deadline == NEVER {
            qp.rto_deadline = now + self.p.rto;
        }
        let (src, tc) = (qp.src, qp.tc);
        let ecn_capable = self.p.dcqcn.is_some() || self.p.ecn[tc as usize].is_some() || self.p.ib.as_ref().is_some_and(|i| i.cc.is_some());
        let st = &mut self.stats.nics[src as usize];
        st.tx_data_pkts += 1;
        st.tx_payload += payload as u64;
        if retx {
            st.retx_bytes += payload as u64;
        }
        let flags = if ecn_capable { ECN_CAPABLE } else { 0 } | if first { FIRST } else { 0 } | if last { LAST } else { 0 } | if retx { RETX } else { 0 };
        self.alloc(Packet {
            kind: Kind::Data,
            tc,
            in_pg: 0,
            flags,
            frame: frame as u16,
            payload: payload as u16,
            qp: qpi,
            psn,
            in_port: NO_PORT,
            next: NONE,
            t: SimTime::ZERO,
        })
    }

    pub(in crate::sim) fn requester_ack(&mut self, now: SimTime, pk: Packet) {
        let qpi = pk.qp;
        if pk.has(CNP_FLAG) {
            self.stats.nics[self.hosts.qps[qpi.index()].src as usize].cnp_rx += 1;
            self.dcqcn_cnp(now, qpi);
        }
        let qp = &mut self.hosts.qps[qpi.index()];
        let new_una = match pk.kind {
            Kind::Ack => pk.psn + 1,
            _ => pk.psn,
        };
        if new_una > qp.snd_una {
            qp.snd_una = new_una;
            // A late cumulative ACK may overtake a go-back: never resend acknowledged PSNs.
            qp.snd_nxt = qp.snd_nxt.max(new_una);
            qp.retries = 0;
            qp.rto_deadline = if qp.snd_una < qp.snd_nxt.max(qp.max_sent) { now + self.p.rto } else { NEVER };
            while let Some(m) = qp.msgs.front() {
                if m.first_psn + m.npkts <= qp.snd_una {
                    let m = qp.msgs.pop_front().expect("front");
                    let rec = &mut self.stats.flows[m.flow as usize];
                    rec.set_finish(now.ps());
                    debug_assert_eq!(rec.size(), m.size);
                    self.flows.remaining -= 1;
                } else {
                    break;
                }
            }
        }
        if pk.kind == Kind::Nak && pk.psn < qp.snd_nxt {
            // Go-back-N from the expected PSN.
            qp.snd_nxt = pk.psn.max(qp.snd_una);
            self.stats.nics[qp.src as usize].nak_rx += 1;
            let ep = qp.src;
            self.activate(ep, qpi);
            let port = self.hosts.nics[ep as usize].port;
            self.try_tx(now, port);
        }
    }

    pub(in crate::sim) fn on_rto(&mut self, now: SimTime, qpi: QpId) {
        let rto = self.p.rto;
        let retry_cnt = self.p.retry_cnt;
        let qp = &mut self.hosts.qps[qpi.index()];
        qp.rto_pending = false;
        if qp.rto_deadline == NEVER || qp.failed {
            return;
        }
        if qp.rto_deadline > now {
            qp.rto_pending = true;
            self.q.schedule(qp.rto_deadline, Ev::Rto(qpi));
            return;
        }
        if qp.snd_una >= qp.snd_max {
            qp.rto_deadline = NEVER;
            return;
        }
        qp.retries += 1;
        self.stats.nics[qp.src as usize].timeouts += 1;
        if qp.retries > retry_cnt {
            qp.failed = true;
            qp.rto_deadline = NEVER;
            let failed: Vec<u32> = qp.msgs.drain(..).map(|m| m.flow).collect();
            qp.rx_msgs.clear();
            self.fail_flows(&failed);
            return;
        }
        qp.snd_nxt = qp.snd_una;
        qp.rto_deadline = now + rto;
        qp.rto_pending = true;
        self.q.schedule(qp.rto_deadline, Ev::Rto(qpi));
        let ep = qp.src;
        self.activate(ep, qpi);
        let port = self.hosts.nics[ep as usize].port;
        self.try_tx(now, port);
    }
}
