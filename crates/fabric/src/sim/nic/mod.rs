//! NICs and HCAs running the RC transport: the queue pairs ([`Qp`]), the messages posted
//! on them, and the receive dispatch (data to the responder, ACK/NAK to the requester,
//! CNP to the reaction point). The requester ([`requester`]) sends, paces and
//! retransmits; the responder ([`responder`]) acknowledges and notifies congestion; the
//! DCQCN reaction point glue is [`dcqcn`]; an impaired receiver is [`impaired_rx`].
//!
//! Model: go-back-N with a local ACK timeout and retry count (IBTA Vol. 1 §9.7), one ACK
//! every `ack_every` packets and at each message's last, a NAK on the first out-of-order
//! packet — or, with out-of-order placement on, [`reorder`]'s rule. Leaves out: read and atomic operations (writes and sends only), RNR NAKs, and
//! the NIC's PCIe and host-memory side (NICs absorb what arrives at once unless a fault
//! impairs them).

use super::*;

pub(super) mod dcqcn;
pub(super) mod impaired_rx;
pub(super) mod reorder;
pub(super) mod requester;
pub(super) mod responder;

/// A queue pair, numbered densely in flow order as flows open one (flows that share a
/// connection share its QP; a SHARP join has none). Serialises as its number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
#[repr(transparent)]
pub struct QpId(pub u32);

impl QpId {
    /// Its index into per-QP arrays.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

pub(super) struct Nic {
    pub(super) port: PortId,
    /// QPs with work or that may have some, in round-robin order.
    pub(super) active: Vec<QpId>,
    pub(super) rr: usize,
    pub(super) line_bps: u64,
    /// Last CNP this NIC sent (DCQCN `cnp_scope = "port"`).
    pub(super) last_cnp: SimTime,
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
    pub(super) rto_deadline: SimTime,
    pub(super) rto_pending: bool,
    pub(super) retries: u32,
    pub(super) failed: bool,
    pub(super) next_tx: SimTime,
    /// When the QP's last data frame started, and its wire bytes (DCQCN re-timing).
    pub(super) last_tx: SimTime,
    pub(super) last_wire: u32,
    pub(super) active: bool,
    pub(super) cc: Option<Dcqcn>,
    pub(super) rate_gen: u32,
    pub(super) cca: crate::ibcc::Cca,
    // responder side
    pub(super) epsn: u32,
    pub(super) nak_sent: bool,
    pub(super) unacked: u32,
    pub(super) last_cnp: SimTime,
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
/// many a QP holds. Inlined by force: every data packet looks its message up.
#[inline(always)]
pub(super) fn msg_at(msgs: &VecDeque<Msg>, psn: u32) -> &Msg {
    let i = msgs.partition_point(|m| m.first_psn + m.npkts <= psn);
    let m = msgs.get(i).expect("snd_nxt inside a posted message");
    debug_assert!(m.first_psn <= psn);
    m
}

/// Every NIC/HCA and the RC queue pairs on them: the requester and responder state of
/// each QP, the addresses its packets carry, and each QP's unrecovered loss.
pub(super) struct Hosts {
    /// Per endpoint.
    pub(super) nics: Vec<Nic>,
    pub(super) qps: Vec<Qp>,
    /// Per QP: the addresses and UDP source port its packets carry (read by forwarding).
    pub(super) qp_addr: Vec<QpAddr>,
    /// Per QP, a data loss not yet recovered: (when, lowest PSN lost).
    pub(super) lost: Vec<(SimTime, u32)>,
    /// Out-of-order placement's per-QP state (empty when it is off).
    pub(super) reorder: reorder::Reorder,
    /// Payload bytes received over every NIC, the sum of their `rx_payload`: the progress
    /// a watcher sees, without a walk over every NIC's statistics.
    pub(super) delivered: u64,
}

impl Hosts {
    /// A NIC per endpoint and a QP per flow, except flows that share a connection (one QP)
    /// and SHARP joins (none). One pass over `flows`: `each` sees every flow and its QP
    /// (`NO_QP` for a join), in flow order.
    pub(super) fn new(topo: &Topology, p: &Params, flows: &dyn FlowSource, seed: u64, each: &mut dyn FnMut(&FlowSpec, QpId)) -> Hosts {
        let nics = topo
            .endpoints
            .iter()
            .map(|&nid| {
                let port = PortId(topo.node(nid).first_port);
                Nic { port, active: vec![], rr: 0, line_bps: topo.port(port).rate.0, last_cnp: NEVER }
            })
            .collect();
        // One per connection and per flow without one (a collective's millions of flows
        // share a few thousand QPs), grown as flows open them.
        let mut qps = vec![];
        let mut qp_addr = vec![];
        let mut qp_rng = Rng::new(seed, engine::stream::QP_SOURCE_PORT);
        // Lookup only (QP numbers follow flow order): connection id → its QP, and the
        // addresses and class its first flow gave it.
        let mut conn_qp: std::collections::HashMap<u32, (QpId, [u32; 2], [u8; 2])> = std::collections::HashMap::new();
        flows.for_each(&mut |f| {
            if f.join {
                each(f, NO_QP);
                return;
            }
            if let Some(c) = f.conn {
                if let Some(&(qi, ends, class)) = conn_qp.get(&c) {
                    assert!(ends == [f.src, f.dst] && class == [f.dscp, f.sl], "flows sharing connection {c} must have one source, destination and class");
                    each(f, qi);
                    return;
                }
                conn_qp.insert(c, (QpId(qps.len() as u32), [f.src, f.dst], [f.dscp, f.sl]));
            }
            each(f, QpId(qps.len() as u32));
            // RoCEv2 source ports come from the dynamic range 49152–65535 (Annex A17.5.1.1).
            let sport = 49152 + qp_rng.below(16384) as u16;
            qp_addr.push(QpAddr { src: f.src, dst: f.dst, sport });
            qps.push(Qp::new(topo, p, f, sport));
        });
        qps.shrink_to_fit();
        qp_addr.shrink_to_fit();
        let lost = vec![(NEVER, 0); qps.len()];
        let reorder = reorder::Reorder::new(p, qps.len());
        Hosts { nics, qps, qp_addr, lost, reorder, delivered: 0 }
    }
}

impl Qp {
    /// A QP for flow `f`, idle: nothing posted, PSNs at zero, DCQCN at line rate.
    fn new(topo: &Topology, p: &Params, f: &FlowSpec, sport: u16) -> Qp {
        let line = topo.ports[topo.ep_port(f.src).0 as usize].rate.0;
        let class = match &p.ib {
            Some(ibc) => ibc.sl_to_vl_hca.get(&f.src).unwrap_or(&ibc.sl_to_vl)[f.sl as usize],
            None => p.dscp_to_tc[f.dscp as usize],
        };
        Qp {
            src: f.src,
            dst: f.dst,
            tc: class,
            sl: f.sl,
            dscp: f.dscp,
            sport,
            msgs: VecDeque::new(),
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            max_sent: 0,
            rto_deadline: NEVER,
            rto_pending: false,
            retries: 0,
            failed: false,
            next_tx: SimTime::ZERO,
            last_tx: NEVER,
            last_wire: 0,
            active: false,
            cc: p.dcqcn.as_ref().map(|(_, d)| Dcqcn::new(line, d)),
            rate_gen: 0,
            cca: crate::ibcc::Cca::default(),
            epsn: 0,
            nak_sent: false,
            unacked: 0,
            last_cnp: NEVER,
            rx_msgs: VecDeque::new(),
        }
    }

    /// Its DCQCN rate now (0 without DCQCN), for sampling.
    pub(super) fn rate_bps(&self) -> u64 {
        self.cc.as_ref().map(|c| c.rate_bps()).unwrap_or(0)
    }
}

impl Sim {
    pub(super) fn nic_rx(&mut self, now: SimTime, ep: u32, id: u32) {
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
                    let cca = &mut self.hosts.qps[qpi.index()].cca;
                    if cca.on_becn(cc) {
                        let gen = cca.gen;
                        let t = cc.ccti_timer;
                        self.q.schedule(now + t, Ev::CctiTimer { qp: qpi, gen });
                    }
                }
                self.dcqcn_cnp(now, qpi);
            }
            Kind::Pfc | Kind::Fcp => unreachable!("link frames are consumed on arrival"),
        }
    }

    pub(super) fn nic_tx_ctrl(&mut self, now: SimTime, ep: u32, pk: Packet) {
        let port = self.hosts.nics[ep as usize].port;
        let id = self.alloc(pk);
        let tc = pk.tc as usize;
        self.push_q(port, tc, id);
        self.cls[port.index() * 8 + tc].qbytes += pk.frame as u64;
        self.try_tx(now, port);
    }

    pub(super) fn activate(&mut self, ep: u32, qp: QpId) {
        if !self.hosts.qps[qp.index()].active {
            self.hosts.qps[qp.index()].active = true;
            self.hosts.nics[ep as usize].active.push(qp);
        }
    }
}
