//! TODO doc

use super::*;

pub(super) mod dcqcn;
pub(super) mod impaired_rx;
pub(super) mod requester;
pub(super) mod responder;


pub(super) struct Nic {
    pub(super) port: u32,
    pub(super) active: Vec<u32>,
    pub(super) rr: usize,
    pub(super) line_bps: u64,
    /// Last CNP this NIC sent (DCQCN `cnp_scope = "port"`).
    pub(super) last_cnp: u64,
}

pub(super) struct Qp {
    pub(super) src: u32,
    pub(super) dst: u32,
    pub(super) tc: u8,
    /// InfiniBand service level (a switch maps it to the VL of each hop).
    pub(super) sl: u8,
    /// RoCEv2 DSCP of its packets (data and ACKs; CNPs carry the CNP DSCP).
    pub(super) dscp: u8,
    pub(super) sport: u16,
    pub(super) msgs: VecDeque<Msg>,
    pub(super) snd_una: u32,
    pub(super) snd_nxt: u32,
    pub(super) snd_max: u32,
    pub(super) max_sent: u32,
    pub(super) rto_deadline: u64,
    pub(super) rto_pending: bool,
    pub(super) retries: u32,
    pub(super) failed: bool,
    pub(super) next_tx: u64,
    /// When the QP's last data frame started, and its wire bytes (DCQCN re-timing).
    pub(super) last_tx: u64,
    pub(super) last_wire: u32,
    pub(super) active: bool,
    pub(super) cc: Option<Dcqcn>,
    pub(super) rate_gen: u32,
    pub(super) cca: crate::ibcc::Cca,
    // responder side
    pub(super) epsn: u32,
    pub(super) nak_sent: bool,
    pub(super) unacked: u32,
    pub(super) last_cnp: u64,
    /// Flows posted on this QP and not yet fully received, in PSN order.
    pub(super) rx_msgs: VecDeque<u32>,
}

pub(super) struct Msg {
    pub(super) flow: u32,
    pub(super) first_psn: u32,
    pub(super) npkts: u32,
    pub(super) size: u64,
    pub(super) last_payload: u32,
}

/// The posted message holding `psn`. Messages are posted back to back in PSN order (each
/// at least one packet) and leave from the front, so a binary search finds it however
/// many a QP holds.
pub(super) fn msg_at(msgs: &VecDeque<Msg>, psn: u32) -> &Msg {
    let i = msgs.partition_point(|m| m.first_psn + m.npkts <= psn);
    let m = msgs.get(i).expect("snd_nxt inside a posted message");
    debug_assert!(m.first_psn <= psn);
    m
}

impl Sim {
    pub(super) fn nic_rx(&mut self, now: u64, ep: u32, id: u32) {
        let pk = self.pkts[id as usize];
        self.free_pkt(id);
        debug_assert_eq!(self.addr(&pk).1, ep);
        match pk.kind {
            Kind::Data => self.responder(now, pk),
            Kind::Ack | Kind::Nak => self.requester_ack(now, pk),
            Kind::Cnp => {
                self.stats.nics[ep as usize].cnp_rx += 1;
                let qpi = pk.qp;
                if let Some(cc) = self.p.ib.as_ref().and_then(|i| i.cc.as_ref()) {
                    let cca = &mut self.qps[qpi as usize].cca;
                    if cca.on_becn(cc) {
                        let gen = cca.gen;
                        let t = cc.ccti_timer;
                        self.q.schedule(SimTime(now) + t, Ev::CctiTimer { qp: qpi, gen });
                    }
                }
                self.dcqcn_cnp(now, qpi);
            }
            Kind::Pfc | Kind::Fcp => unreachable!("link frames are consumed on arrival"),
        }
    }

    pub(super) fn nic_tx_ctrl(&mut self, now: u64, ep: u32, pk: Packet) {
        let port = self.nics[ep as usize].port;
        let id = self.alloc(pk);
        let (pi, tc) = (port as usize, pk.tc as usize);
        self.push_q(pi, tc, id);
        self.cls[pi * 8 + tc].qbytes += pk.frame as u64;
        self.try_tx(now, port);
    }

    pub(super) fn activate(&mut self, ep: u32, qp: u32) {
        if !self.qps[qp as usize].active {
            self.qps[qp as usize].active = true;
            self.nics[ep as usize].active.push(qp);
        }
    }
}
