//! Packets: the 32-byte [`Packet`] (header fields that matter, no bytes), its flags, the
//! slab they live in ([`Packets`]) with the one list iterator every queue and link uses,
//! and what happens to a dropped packet (counted by cause; a data packet's loss is
//! remembered for the RC transport's recovery statistics).

use super::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Data,
    Ack,
    Nak,
    Cnp,
    /// A PFC frame: `tc` holds its priority-enable vector; its pause times wait, in link
    /// order, in the sending port's `pfc_sent`.
    Pfc,
    /// An IB flow-control packet: `tc` is its VL, `psn` its FCCL (its FCTBS is implied:
    /// links never lose packets here).
    Fcp,
}

/// Packet flags.
pub(super) const ECN_CAPABLE: u8 = 1;

pub(super) const CE: u8 = 2;

/// The first packet of a message (RDMA WRITE FIRST or ONLY: it carries the RETH).
pub(super) const FIRST: u8 = 4;

pub(super) const LAST: u8 = 8;

/// IB: an impaired HCA already returned this packet's credits (it sits in host memory).
pub(super) const CREDITED: u8 = 16;

/// RoCE ACK/NAK: carries a congestion notification (DCQCN `cnp = "ack-flag"`, ns-3's
/// `SetCnp()` on the ACK of a marked packet).
pub(super) const CNP_FLAG: u8 = 32;

/// Data: a retransmission (its PSN had been sent before), for the responder's accounting
/// of late arrivals.
pub(super) const RETX: u8 = 64;

/// A frame in the simulation: header fields that matter, no bytes. Frames live in a slab
/// (`Sim::pkts`) and move by id; a port's class queues and the frames on its link are
/// singly linked lists through `next`. 32 bytes, two to a cache line: addresses and the
/// UDP source port are the QP's ([`Sim::addr`]), not copied into every packet.
#[derive(Clone, Copy, Debug)]
pub(super) struct Packet {
    pub(super) kind: Kind,
    /// By kind: a packet's traffic class (RoCE priority; InfiniBand: the VL of the hop it
    /// is on); a PFC frame's priority-enable vector; an FCP's VL.
    pub(super) tc: u8,
    /// At the switch holding it, the class whose ingress buffer it occupies: RoCE its
    /// ingress PG (cells, for release); InfiniBand the VL it arrived on (input blocks).
    pub(super) in_pg: u8,
    /// `ECN_CAPABLE`, `CE`, `FIRST`, `LAST`, `CREDITED`, `CNP_FLAG`, `RETX`.
    pub(super) flags: u8,
    /// Frame bytes (`timing::frame_of`: RoCEv2 MAC header to FCS, InfiniBand LRH to VCRC).
    pub(super) frame: u16,
    /// RDMA payload bytes (0 for ACK, NAK, CNP, PFC, FCP).
    pub(super) payload: u16,
    /// The QP it belongs to (`NO_QP` for PFC and FCP frames).
    pub(super) qp: QpId,
    /// By kind: data: its PSN; ACK: the last PSN acknowledged; NAK: the PSN expected;
    /// FCP: its FCCL; CNP and PFC: unused.
    pub(super) psn: u32,
    /// Ingress port at the switch currently holding it (`NO_PORT` elsewhere).
    pub(super) in_port: PortId,
    /// The next frame in the same queue or on the same link.
    pub(super) next: u32,
    /// On a link: when the frame behind it (`next`) arrives. In an IB switch: when it
    /// entered (lifetime limits).
    pub(super) t: SimTime,
}

const _: () = assert!(std::mem::size_of::<Packet>() == 32);

impl Packet {
    pub(super) fn ctrl(kind: Kind, tc: u8, psn: u32) -> Packet {
        Packet { kind, tc, in_pg: 0, flags: 0, frame: 0, payload: 0, qp: NO_QP, psn, in_port: NO_PORT, next: NONE, t: SimTime::ZERO }
    }
    #[inline]
    pub(super) fn is_pkt(&self) -> bool {
        !matches!(self.kind, Kind::Pfc | Kind::Fcp)
    }
    #[inline]
    pub(super) fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
}

/// The packet slab: every frame in the simulation lives here and moves by id; freed ids
/// are reused. Queues and links are singly linked lists through `Packet::next`.
#[derive(Default)]
pub(super) struct Packets {
    slab: Vec<Packet>,
    free: Vec<u32>,
}

impl Packets {
    /// Stores `p` and returns its id.
    #[inline]
    pub(super) fn alloc(&mut self, p: Packet) -> u32 {
        if let Some(id) = self.free.pop() {
            self.slab[id as usize] = p;
            id
        } else {
            self.slab.push(p);
            (self.slab.len() - 1) as u32
        }
    }

    pub(super) fn free(&mut self, id: u32) {
        self.free.push(id);
    }

    /// The packets of the list starting at `head` (a queue or a link), in order.
    pub(super) fn list(&self, head: u32) -> impl Iterator<Item = u32> + '_ {
        let mut id = head;
        std::iter::from_fn(move || {
            (id != NONE).then(|| {
                let cur = id;
                id = self.slab[cur as usize].next;
                cur
            })
        })
    }
}

impl std::ops::Index<usize> for Packets {
    type Output = Packet;
    #[inline]
    fn index(&self, id: usize) -> &Packet {
        &self.slab[id]
    }
}

impl std::ops::IndexMut<usize> for Packets {
    #[inline]
    fn index_mut(&mut self, id: usize) -> &mut Packet {
        &mut self.slab[id]
    }
}

impl Sim {
    #[inline]
    pub(super) fn alloc(&mut self, p: Packet) -> u32 {
        let id = self.pkts.alloc(p);
        self.forwarding.new_packet(id);
        id
    }

    pub(super) fn free_pkt(&mut self, id: u32) {
        self.pkts.free(id);
    }

    /// An ACK, NAK or CNP of QP `qp` (from its responder to its requester).
    pub(super) fn ctrl_packet(&self, kind: Kind, qp: QpId, psn: u32, tc: u8) -> Packet {
        let t = if kind == Kind::Cnp { Transport::Cnp } else { Transport::Ack };
        Packet {
            kind,
            tc,
            in_pg: 0,
            flags: 0,
            frame: frame_of(&self.p, t, Bytes(0)).0 as u16,
            payload: 0,
            qp,
            psn,
            in_port: NO_PORT,
            next: NONE,
            t: SimTime::ZERO,
        }
    }

    pub(super) fn drop_pkt(&mut self, port: PortId, id: u32, cause: DropCause) {
        let pk = self.pkts[id as usize];
        let st = &mut self.stats.ports[port.index()];
        st.drops[cause as usize] += 1;
        st.drop_bytes += pk.frame as u64;
        if self.p.lossless[pk.tc as usize] {
            st.lossless_drops += 1;
        }
        if pk.kind == Kind::Data {
            self.stats.dropped_payload += pk.payload as u64;
            let l = &mut self.hosts.lost[pk.qp.index()];
            if l.0 == NEVER {
                *l = (self.q.now(), pk.psn);
            } else {
                l.1 = l.1.min(pk.psn);
            }
        }
        self.free_pkt(id);
    }
}
