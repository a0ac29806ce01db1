//! The RC responder: accepting in-order data, ACKs (every `ack_every` packets and at a
//! message's end), a NAK on the first out-of-order packet, and congestion notification:
//! a CNP for a CE-marked packet at most once per `cnp_interval` per QP or per port
//! (DCQCN), a CNP flag on the ACK (ns-3's rule), or a BECN for every FECN (IB CC). With
//! out-of-order placement on (`Params::ooo`) the PSN rule is [`super::reorder`]'s.

use super::super::*;

impl Sim {
    pub(in crate::sim) fn responder(&mut self, now: SimTime, pk: Packet) {
        let qpi = pk.qp;
        // DCQCN: at most one CNP per interval (per QP or per port); IB CC: a BECN for every
        // FECN.
        let (cnp_interval, per_port, ack_flag) = match &self.p.ib {
            Some(i) => (i.cc.as_ref().map(|_| SimDuration::ZERO), false, false),
            None => match self.p.dcqcn.as_ref() {
                Some((_, d)) => (Some(d.cnp_interval), d.cnp_scope == CnpScope::Port, d.cnp == CnpTransport::AckFlag),
                None => (None, false, false),
            },
        };
        let cnp_tc = self.p.dscp_to_tc[self.p.cnp_dscp as usize];
        let tc = self.responder_class(qpi);
        let qp = &mut self.hosts.qps[qpi.index()];
        let dst = qp.dst;
        let mut send_cnp = false;
        if pk.has(CE) {
            self.stats.nics[dst as usize].ce_rx += 1;
            if let Some(n) = cnp_interval {
                let last = if per_port { &mut self.hosts.nics[dst as usize].last_cnp } else { &mut qp.last_cnp };
                if *last == NEVER || now >= *last + n {
                    *last = now;
                    send_cnp = true;
                }
            }
        }
        let reply = if self.p.ooo.is_some() { self.accept_out_of_order(now, &pk) } else { self.accept_in_order(now, &pk) };
        // ns-3 flags the ACK or NAK this packet triggers; a marked packet that triggers
        // none (ack_every > 1) notifies nothing.
        let flag_reply = ack_flag && send_cnp && reply.is_some();
        if send_cnp && !ack_flag {
            self.stats.nics[dst as usize].cnp_tx += 1;
            let c = self.ctrl_packet(Kind::Cnp, qpi, 0, cnp_tc);
            self.nic_tx_ctrl(now, dst, c);
        }
        if let Some((kind, psn)) = reply {
            if kind == Kind::Nak {
                self.stats.nics[dst as usize].nak_tx += 1;
            }
            let mut a = self.ctrl_packet(kind, qpi, psn, tc);
            if flag_reply {
                self.stats.nics[dst as usize].cnp_tx += 1;
                a.flags |= CNP_FLAG;
            }
            self.nic_tx_ctrl(now, dst, a);
        }
    }

    /// The class of QP `qpi`'s ACKs and NAKs: the responder's HCA maps the SL by its own
    /// table (RoCE: the QP's class).
    #[inline(always)]
    pub(in crate::sim) fn responder_class(&self, qpi: QpId) -> u8 {
        let qp = &self.hosts.qps[qpi.index()];
        match &self.p.ib {
            Some(ibc) => ibc.sl_to_vl_hca.get(&qp.dst).unwrap_or(&ibc.sl_to_vl)[qp.sl as usize],
            None => qp.tc,
        }
    }

    /// Go-back-N's receive rule: only the expected PSN is accepted; the first packet past
    /// it is NAKed once, later ones and duplicates are discarded. Returns the reply due.
    #[inline]
    fn accept_in_order(&mut self, now: SimTime, pk: &Packet) -> Option<(Kind, u32)> {
        let qpi = pk.qp;
        let ack_every = self.p.ack_every;
        let qp = &mut self.hosts.qps[qpi.index()];
        let dst = qp.dst;
        let mut reply = None;
        if pk.psn == qp.epsn {
            let l = &mut self.hosts.lost[qpi.index()];
            if l.0 != NEVER && pk.psn >= l.1 {
                self.stats.recoveries.push((qpi, l.0.ps(), now.ps()));
                *l = (NEVER, 0);
            }
            qp.epsn += 1;
            qp.nak_sent = false;
            qp.unacked += 1;
            self.stats.nics[dst as usize].rx_payload += pk.payload as u64;
            self.hosts.delivered += pk.payload as u64;
            if pk.has(LAST) || qp.unacked >= ack_every {
                qp.unacked = 0;
                reply = Some((Kind::Ack, qp.epsn - 1));
            }
            if pk.has(LAST) {
                let f = qp.rx_msgs.pop_front().expect("a last packet ends a posted message");
                self.on_delivered(now, f);
            }
        } else if pk.psn > qp.epsn {
            self.stats.nics[dst as usize].rx_discarded_payload += pk.payload as u64;
            self.stats.qp_rx[qpi.index()].out_of_order += 1;
            if !qp.nak_sent {
                qp.nak_sent = true;
                reply = Some((Kind::Nak, qp.epsn));
            }
        } else {
            self.stats.nics[dst as usize].rx_discarded_payload += pk.payload as u64;
            self.stats.qp_rx[qpi.index()].duplicate += 1;
            reply = Some((Kind::Ack, qp.epsn - 1));
        }
        reply
    }
}
