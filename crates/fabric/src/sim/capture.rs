//! The capture tap: what the simulator sends on chosen ports, frame by frame, for a packet
//! capture (`fabriclab run --pcap`).
//!
//! Model: a capture watches ports. Every frame a watched port starts sending is seen
//! `Outbound` at that instant; every frame its peer starts sending is seen `Inbound` one
//! cable propagation delay later, when its first bit reaches the watched port. A
//! [`Captured`] record holds what the simulator put on the wire: kind, frame and payload
//! sizes, the QP's addresses and UDP source port, PSN, opcode position (first, last), ECN
//! codepoint, DSCP, priority, a PFC frame's enable vector and eight pause times; on
//! InfiniBand the VL the packet takes on that link and its QP's SL, and a flow-control
//! packet's VL, FCTBS and FCCL as the credit model sent them (`ib/credits.rs`: one FCP per
//! VL whose FCCL changed, at the next packet boundary). [`Captured::roce_bytes`] and
//! [`Captured::ib_bytes`] turn a record into the packet's real bytes with the `wire`
//! crate; [`Captured::flow_control`] gives an FCP's fields. Records go to a [`CaptureSink`] in the
//! order the simulator sends them (inbound ones are stamped ahead of that order by at most
//! one propagation delay; the sink may reorder).
//!
//! Cost: `Sim::send` tests one `Option`; with no capture set that is all it does.
//!
//! Addressing, since the simulator keeps endpoints and QPs as indices: endpoint `e` has
//! MAC 02:00:`e+1` (32 bits) and IPv4 10.0.0.0 + `e+1`; a port sending PFC uses MAC
//! 02:01:`port` (32 bits); the QP of flow `q` is numbered 0x100 + `q` ([`qpn`]) on both of
//! its HCAs, so one QP's data and its ACKs share `bth.destqp`. Frames go end to end between
//! the endpoints' MACs, as in one L2 domain.
//!
//! InfiniBand addressing: the LIDs are the caller's (the subnet manager's, when one routes
//! the fabric: the simulator forwards by endpoint); with a GRH, endpoint `e`'s GID is the
//! link-local prefix fe80::/64 (IBTA Vol 1 §4.1.1) with interface ID `e+1` ([`endpoint_gid`]).
//! A native IB CNP (IB congestion control) is opcode 0x80, RoCEv2's 0x81; a CE mark is
//! BTH FECN on IB.
//!
//! Leaves out: the IP TTL a switch decrements (always 64, [`IP_TTL`]; also the GRH hop
//! limit), the IPv4 identification (0), RETH's virtual address, R_Key and DMA length (0:
//! the simulator moves no buffers), AETH's MSN (0) and credit count (31, "invalid": RC
//! without end-to-end credits, IBTA Vol 1 §9.7.5.1), RoCEv2 over IPv6, the GRH's traffic
//! class and flow label (0).

use super::*;
use wire::{AethRepr, BthRepr, EthernetAddress, FlowControlRepr, GrhRepr, IbPacket, NakCode, Opcode, RethRepr, RoceFrame, Syndrome, VlanTag};

pub use wire::{Direction, Ecn};

/// What a frame is, as the simulator counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FrameKind {
    Data,
    Ack,
    Nak,
    Cnp,
    Pfc,
    /// An InfiniBand flow-control packet.
    Fcp,
}

/// Which ports to watch, and when.
#[derive(Clone, Debug)]
pub struct CaptureSpec {
    pub ports: Vec<PortId>,
    /// Frames stamped before `from` or after `to` are not recorded.
    pub from: SimTime,
    pub to: SimTime,
}

/// One frame seen on a watched port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Captured {
    /// When its first bit crossed the watched port.
    pub t: SimTime,
    /// When the sender started it (records arrive in this order).
    pub sent: SimTime,
    /// Index of the watched port in [`CaptureSpec::ports`].
    pub slot: usize,
    pub dir: Direction,
    pub kind: FrameKind,
    /// Frame bytes as the simulator counts them (RoCEv2: MAC header to FCS).
    pub frame_bytes: u32,
    pub payload: u32,
    /// Flow index of its QP (data, ACK, NAK, CNP).
    pub qp: Option<u32>,
    /// Source and destination endpoints (data: requester → responder).
    pub src: u32,
    pub dst: u32,
    pub sport: u16,
    /// Data: its PSN; ACK: the last PSN acknowledged; NAK: the PSN expected.
    pub psn: u32,
    pub first: bool,
    pub last: bool,
    pub ecn: Ecn,
    pub dscp: u8,
    /// RoCEv2: the priority (802.1Q PCP when tagged); InfiniBand: the VL.
    pub tc: u8,
    /// An ACK or NAK carrying DCQCN's congestion flag (written as BTH BECN).
    pub becn: bool,
    /// PFC: enable vector and the pause times, per priority, in 512-bit-time quanta.
    pub pfc_vector: u8,
    pub pfc_quanta: [u16; 8],
    /// IB flow-control packet: its FCCL, and the sending port's FCTBS on that VL.
    pub fccl: u16,
    pub fctbs: u16,
    /// InfiniBand: the QP's service level (0 on RoCEv2).
    pub sl: u8,
    /// A native InfiniBand packet (else RoCEv2 or PFC).
    pub ib: bool,
    /// InfiniBand: packets carry a GRH.
    pub grh: bool,
    /// The sending port (PFC frames' source MAC).
    pub from_port: PortId,
    /// The scenario tags frames with 802.1Q.
    pub vlan: bool,
}

/// Where captured frames go.
pub trait CaptureSink {
    fn frame(&mut self, f: &Captured);
}

/// A capture in progress: the spec, each port's slot when watched from either side, the
/// sink.
pub(super) struct Capture {
    spec: CaptureSpec,
    /// Per port: slot of the watched port this port is (outbound), or whose peer it is
    /// (inbound); `NONE` when neither.
    out_slot: Vec<u32>,
    in_slot: Vec<u32>,
    sink: Box<dyn CaptureSink>,
}

/// The IPv4 TTL written in captures: what a NIC sends ([`IP_TTL`]).
const CAPTURE_TTL: u8 = IP_TTL;

/// AETH credit count "invalid" (IBTA Vol 1 §9.7.5.1): no end-to-end credits.
const AETH_NO_CREDITS: u8 = 31;

/// The lowest QPN given to a flow's QP: QP0 and QP1 are the special QPs (IBTA Vol 1:
/// the Subnet Management and General Services Interfaces), whose payloads Wireshark's
/// `infiniband` dissector parses as management datagrams.
pub const FIRST_QPN: u32 = 0x100;

/// A QP's number on its HCAs: [`FIRST_QPN`] + flow index, wrapping within the 24-bit
/// QPN space above the special QPs.
pub fn qpn(flow_qp: u32) -> u32 {
    FIRST_QPN + flow_qp % (0x100_0000 - FIRST_QPN)
}

/// Endpoint `e`'s MAC address.
pub fn endpoint_mac(e: u32) -> [u8; 6] {
    let b = (e + 1).to_be_bytes();
    [0x02, 0x00, b[0], b[1], b[2], b[3]]
}

/// Endpoint `e`'s IPv4 address.
pub fn endpoint_ip(e: u32) -> std::net::Ipv4Addr {
    std::net::Ipv4Addr::from(0x0A00_0000u32.wrapping_add(e + 1))
}

/// Endpoint `e`'s GID: the link-local prefix fe80::/64 (IBTA Vol 1 §4.1.1) and interface
/// ID `e + 1`.
pub fn endpoint_gid(e: u32) -> [u8; 16] {
    let mut g = [0u8; 16];
    g[..2].copy_from_slice(&[0xFE, 0x80]);
    g[8..].copy_from_slice(&(u64::from(e) + 1).to_be_bytes());
    g
}

/// The MAC a port sends PFC frames from.
pub fn port_mac(p: PortId) -> [u8; 6] {
    let b = p.0.to_be_bytes();
    [0x02, 0x01, b[0], b[1], b[2], b[3]]
}

impl Captured {
    /// The Ethernet frame as sent, FCS left out (pcap LINKTYPE_ETHERNET, `if_fcslen` 0);
    /// `None` for InfiniBand records (flow-control packets, or data on an IB fabric).
    pub fn roce_bytes(&self) -> Option<Vec<u8>> {
        if self.ib {
            return None;
        }
        match self.kind {
            FrameKind::Fcp => None,
            FrameKind::Pfc => {
                let mut quanta = [0u16; 8];
                for (p, q) in quanta.iter_mut().enumerate() {
                    if self.pfc_vector & (1 << p) != 0 {
                        *q = self.pfc_quanta[p];
                    }
                }
                let repr = wire::PfcRepr { enable: self.pfc_vector, quanta };
                let f = wire::PfcFrame { src_mac: EthernetAddress(port_mac(self.from_port)), control: wire::MacControlRepr::Pfc(repr) };
                Some(wire::ethernet::strip_fcs(&f.emit()).to_vec())
            }
            _ => {
                let bytes = self.roce_frame().emit().expect("the simulator's fields fit their headers");
                Some(wire::ethernet::strip_fcs(&bytes).to_vec())
            }
        }
    }

    /// The BTH opcode of a RoCEv2 packet (RDMA WRITE for data).
    pub fn opcode(&self) -> Opcode {
        match self.kind {
            FrameKind::Data => match (self.first, self.last) {
                (true, true) => Opcode::RC_RDMA_WRITE_ONLY,
                (true, false) => Opcode::RC_RDMA_WRITE_FIRST,
                (false, true) => Opcode::RC_RDMA_WRITE_LAST,
                (false, false) => Opcode::RC_RDMA_WRITE_MIDDLE,
            },
            FrameKind::Ack | FrameKind::Nak => Opcode::RC_ACKNOWLEDGE,
            _ if self.ib => Opcode::IB_CNP,
            _ => Opcode::CNP,
        }
    }

    /// The native InfiniBand packet as sent, LRH to VCRC (both CRCs computed), from LID
    /// `slid` to `dlid`; `None` for RoCEv2 records and flow-control packets.
    pub fn ib_bytes(&self, slid: u16, dlid: u16) -> Option<Vec<u8>> {
        if !self.ib || matches!(self.kind, FrameKind::Fcp | FrameKind::Pfc) {
            return None;
        }
        let mut bth = self.bth();
        bth.fecn = self.ecn == Ecn::Ce;
        let grh = self.grh.then(|| GrhRepr {
            tclass: 0,
            flow_label: 0,
            pay_len: 0,
            nxt_hdr: wire::ib_link::GRH_NXTHDR_IBA,
            hop_limit: CAPTURE_TTL,
            sgid: endpoint_gid(self.src),
            dgid: endpoint_gid(self.dst),
        });
        let p = IbPacket {
            vl: self.tc,
            sl: self.sl,
            dlid,
            slid,
            grh,
            bth,
            reth: self.reth(),
            aeth: self.aeth(),
            imm: None,
            payload_len: self.payload as usize,
            payload_fill: wire::PayloadFill::Zeros,
        };
        Some(p.emit().expect("the simulator's fields fit their headers"))
    }

    /// An InfiniBand flow-control packet's fields (normal FCP, IBTA Vol 1 §7.9.4).
    pub fn flow_control(&self) -> Option<FlowControlRepr> {
        (self.kind == FrameKind::Fcp).then_some(FlowControlRepr { op: 0, fctbs: self.fctbs, vl: self.tc, fccl: self.fccl })
    }

    fn bth(&self) -> BthRepr {
        let qp = self.qp.expect("a transport packet belongs to a QP");
        let mut bth = BthRepr::new(self.opcode(), qpn(qp), self.psn & 0xFF_FFFF);
        bth.ack_req = self.kind == FrameKind::Data && self.last;
        bth.becn = self.becn || self.kind == FrameKind::Cnp;
        bth
    }

    fn reth(&self) -> Option<RethRepr> {
        (self.kind == FrameKind::Data && self.first).then_some(RethRepr { va: 0, rkey: 0, dma_len: 0 })
    }

    fn aeth(&self) -> Option<AethRepr> {
        let syndrome = match self.kind {
            FrameKind::Ack => Syndrome::Ack { credits: AETH_NO_CREDITS },
            FrameKind::Nak => Syndrome::Nak(NakCode::PsnSequenceError),
            _ => return None,
        };
        Some(AethRepr { syndrome, msn: 0 })
    }

    fn roce_frame(&self) -> RoceFrame {
        RoceFrame {
            src_mac: EthernetAddress(endpoint_mac(self.src)),
            dst_mac: EthernetAddress(endpoint_mac(self.dst)),
            vlan: self.vlan.then_some(VlanTag { pcp: self.tc & 7, dei: false, vid: 0 }),
            src_ip: endpoint_ip(self.src),
            dst_ip: endpoint_ip(self.dst),
            dscp: self.dscp,
            ecn: self.ecn,
            ttl: CAPTURE_TTL,
            ident: 0,
            src_port: self.sport,
            bth: self.bth(),
            reth: self.reth(),
            aeth: self.aeth(),
            imm: None,
            payload_len: self.payload as usize,
            payload_fill: wire::PayloadFill::Zeros,
        }
    }
}

impl Capture {
    pub(super) fn new(np: usize, spec: CaptureSpec, topo: &Topology, sink: Box<dyn CaptureSink>) -> Capture {
        let (mut out_slot, mut in_slot) = (vec![NONE; np], vec![NONE; np]);
        for (slot, &p) in spec.ports.iter().enumerate() {
            out_slot[p.index()] = slot as u32;
            if let Some(peer) = topo.port(p).peer {
                in_slot[peer.index()] = slot as u32;
            }
        }
        Capture { spec, out_slot, in_slot, sink }
    }
}

impl Sim {
    /// Watches `spec.ports` for the rest of the run, handing every frame to `sink`.
    /// Results are unchanged: the tap only reads.
    pub fn set_capture(&mut self, spec: CaptureSpec, sink: Box<dyn CaptureSink>) {
        self.capture = Some(Box::new(Capture::new(self.ports.len(), spec, &self.topo, sink)));
    }

    /// Ends the capture and returns its sink.
    pub fn take_capture(&mut self) -> Option<Box<dyn CaptureSink>> {
        self.capture.take().map(|c| c.sink)
    }

    /// Frame `id` starts on `port` at `now`: record it for each watched side.
    #[cold]
    #[inline(never)]
    pub(super) fn capture_frame(&mut self, now: SimTime, port: PortId, id: u32, frame_bytes: u64) {
        let Some(mut cap) = self.capture.take() else { return };
        let pi = port.index();
        let arrives = now + self.topo.port(port).prop;
        let sides = [(cap.out_slot[pi], Direction::Outbound, now), (cap.in_slot[pi], Direction::Inbound, arrives)];
        let mut sent = None;
        for (slot, dir, t) in sides {
            if slot != NONE && t >= cap.spec.from && t <= cap.spec.to {
                let rec = *sent.get_or_insert_with(|| self.record(now, port, id, frame_bytes));
                cap.sink.frame(&Captured { t, slot: slot as usize, dir, ..rec });
            }
        }
        self.capture = Some(cap);
    }

    /// Frame `id` as `port` starts sending it at `now` (seen outbound on slot 0: the caller
    /// sets the side).
    fn record(&self, now: SimTime, port: PortId, id: u32, frame_bytes: u64) -> Captured {
        let pk = self.pkts[id as usize];
        let kind = match pk.kind {
            Kind::Data => FrameKind::Data,
            Kind::Ack => FrameKind::Ack,
            Kind::Nak => FrameKind::Nak,
            Kind::Cnp => FrameKind::Cnp,
            Kind::Pfc => FrameKind::Pfc,
            Kind::Fcp => FrameKind::Fcp,
        };
        let mut c = Captured {
            t: now,
            sent: now,
            slot: 0,
            dir: Direction::Outbound,
            kind,
            frame_bytes: frame_bytes as u32,
            payload: pk.payload as u32,
            qp: None,
            src: NONE,
            dst: NONE,
            sport: 0,
            psn: pk.psn,
            first: pk.has(FIRST),
            last: pk.has(LAST),
            ecn: match (pk.has(CE), pk.has(ECN_CAPABLE)) {
                (true, _) => Ecn::Ce,
                (false, true) => Ecn::Ect0,
                _ => Ecn::NotEct,
            },
            dscp: 0,
            tc: pk.tc,
            becn: pk.has(CNP_FLAG),
            pfc_vector: 0,
            pfc_quanta: [0; 8],
            fccl: 0,
            fctbs: 0,
            sl: 0,
            ib: self.ib.is_some(),
            grh: self.p.ib.as_ref().is_some_and(|ib| ib.grh),
            from_port: port,
            vlan: self.p.encap.vlan,
        };
        match kind {
            FrameKind::Pfc => {
                c.pfc_vector = pk.tc;
                c.pfc_quanta = self.pfc.last_sent(port);
                c.psn = 0;
            }
            FrameKind::Fcp => {
                c.fccl = pk.psn as u16;
                c.fctbs = self.ib.as_ref().map_or(0, |ib| ib[port].fctbs[pk.tc as usize]);
                c.psn = 0;
            }
            _ => {
                let (src, dst, sport) = self.addr(&pk);
                (c.qp, c.src, c.dst, c.sport, c.dscp) = (Some(pk.qp.0), src, dst, sport, self.dscp_of(&pk));
                if c.ib {
                    c.sl = self.hosts.qps[pk.qp.index()].sl;
                }
            }
        }
        c
    }
}
