//! How long frames take over links and through switches: the per-hop rules the simulator
//! applies to every frame it sends, and the ideal completion time of a message (the
//! reference for slowdown in reports), which applies the same rules to one message alone.
//! Neither needs a running simulator: they are functions of the topology, the compiled
//! parameters and a path.
//!
//! Model, and what it leaves out:
//! * Serialisation: a frame keeps its port's transmitter busy for its wire bytes at line
//!   rate, rounded up to the picosecond ([`units::serialization`]). Wire bytes are the
//!   frame plus Ethernet's preamble, SFD and minimum inter-frame gap, short frames padded
//!   to 64 bytes (IEEE 802.3-2018 clauses 3 and 4.4.2, [`model::frame::wire`]), or an IB
//!   packet plus its delimiters and idle ([`model::ib::IB_FRAMING`]). Frame sizes come
//!   from [`model::frame::roce_frame`] and [`model::ib::ib_packet`].
//! * Propagation: the cable's delay ([`crate::topology::Port::prop`]), the same both ways.
//! * Switch pipeline: a switch adds a fixed latency to every frame it receives
//!   ([`crate::params::Params::switch_latency`]: the scenario's, or the datasheet figure
//!   of the switch generation); NICs add none.
//! * Store-and-forward vs cut-through: a switch forwards a packet once it has received all
//!   of it, unless the scenario forwards cut-through and every port of the switch runs at
//!   one speed (SHARP aggregation ports aside); then it forwards once the first 64 bytes
//!   after the preamble/SFD (Ethernet) or start delimiter (IB) are in (the 64-byte
//!   "fragment-free" cut-through of Ethernet switches). A packet shorter than that is
//!   forwarded whole. Switches cannot cut through from a slower port to a faster one (the
//!   egress would run out of data): Extreme Networks, ExtremeXOS 22 User Guide, "Default
//!   Switching Mode", says so and lets equal-speed and fast-to-slow pairs cut through.
//!   fabriclab decides per switch, not per port pair: a switch whose ports mix speeds
//!   stores every packet, the fast-to-slow ones too. Link-level frames (PFC, IB
//!   flow-control packets) end at the port that receives them and are never forwarded.
//! * The ideal completion time ([`ideal_fct`]) adds, for an RDMA WRITE alone on its
//!   path: the packets' pipeline over the hops (each hop's transmitter serves them in
//!   order), on InfiniBand the flow-control packet the receiving HCA sends for the last
//!   packet's blocks just before its ACK, and that ACK's way back. It leaves out what
//!   other traffic or the message itself may add: queueing behind other flows, PFC pauses
//!   and waits for IB credits, rate limits of congestion control, retransmissions,
//!   acknowledgements before the last one that delay it (on IB each ACK a switch forwards
//!   sends a flow-control packet towards the receiver, on the data's links), and an ACK
//!   that returns by other links than the data's (it is taken to retrace them).

use model::frame::{roce_frame, segments, wire, Transport};
use model::ib;
use units::{serialization, BitRate, Bytes, SimDuration};

use crate::params::{Forwarding, Params, Tech};
use crate::topology::{NodeId, NodeKind, PortId, Topology};

/// Frame (RoCEv2: MAC header to FCS) or packet (IB: LRH to VCRC) bytes of a `t` packet
/// carrying `payload` bytes.
#[inline]
pub fn frame_of(p: &Params, t: Transport, payload: Bytes) -> Bytes {
    match &p.ib {
        None => roce_frame(p.encap, t, payload),
        Some(ibc) => ib::ib_packet(ibc.grh, t, payload),
    }
}

/// Link time of a frame or packet, in byte times: Ethernet adds preamble, SFD and the
/// inter-frame gap (and pads to 64 bytes); InfiniBand adds its delimiters and idle.
#[inline]
pub fn wire_of(tech: Tech, frame: Bytes) -> Bytes {
    match tech {
        Tech::Roce => wire(frame),
        Tech::Infiniband => ib::ib_wire(frame),
    }
}

/// What a cut-through switch must have received before it forwards: the first 64 bytes
/// of the frame, after the preamble/SFD (Ethernet) or the start delimiter (IB).
pub fn cut_through_header(tech: Tech) -> Bytes {
    let lead = match tech {
        Tech::Roce => model::frame::PREAMBLE_SFD,
        Tech::Infiniband => ib::IB_FRAMING / 2,
    };
    Bytes(lead + 64)
}

/// Whether `node` forwards packets cut-through: a switch, in a scenario that forwards
/// cut-through, whose ports all run at one speed (its SHARP aggregation port aside).
pub fn cuts_through(topo: &Topology, p: &Params, node: NodeId) -> bool {
    let n = topo.node(node);
    p.forwarding == Forwarding::CutThrough && n.kind == NodeKind::Switch && {
        let rate = topo.ports[n.first_port as usize].rate;
        (n.first_port..n.first_port + n.nports).all(|pi| topo.ports[pi as usize].rate == rate || topo.is_aggregator_port(PortId(pi)))
    }
}

/// One direction of a cable, as the frames sent on it see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hop {
    pub tech: Tech,
    pub rate: BitRate,
    /// Propagation delay, plus the pipeline latency when the far end is a switch.
    pub delay: SimDuration,
    /// The far end is a switch that forwards cut-through ([`cuts_through`]).
    pub cut_through: bool,
}

/// What one frame costs on a [`Hop`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transit {
    /// How long the frame keeps the transmitter busy.
    pub busy: SimDuration,
    /// From its first bit leaving to the far end acting on it: forwarding it, consuming
    /// it, or (link-level frames) obeying it.
    pub ready: SimDuration,
}

impl Hop {
    /// The hop out of `port`; `None` if the port is not cabled.
    pub fn out_of(topo: &Topology, p: &Params, port: PortId) -> Option<Hop> {
        let pt = topo.port(port);
        let far = topo.port(pt.peer?).node;
        let switch = topo.is_switch(far);
        Some(Hop {
            tech: p.tech,
            rate: pt.rate,
            delay: if switch { pt.prop + p.switch_latency } else { pt.prop },
            cut_through: switch && cuts_through(topo, p, far),
        })
    }

    /// The transit of a `frame`-byte frame; `packet`: a packet a switch forwards (data,
    /// ACK, NAK, CNP), not a link-level frame (PFC, IB flow control).
    #[inline]
    pub fn transit(&self, frame: Bytes, packet: bool) -> Transit {
        let busy = serialization(wire_of(self.tech, frame), self.rate);
        let received = if self.cut_through && packet { busy.min(serialization(cut_through_header(self.tech), self.rate)) } else { busy };
        Transit { busy, ready: self.delay + received }
    }
}

/// Completion time of a `size`-byte RDMA WRITE alone on `path` (the egress ports its
/// packets leave by, from the sender's NIC to the last switch): from the post until the
/// ACK of its last packet is back at the sender, by the rules of this module. The
/// simulator's completion time equals it when nothing else shares the path and, on
/// InfiniBand, one ACK covers the message (the module doc says what it leaves out).
pub fn ideal_fct(topo: &Topology, p: &Params, path: &[PortId], size: Bytes) -> SimDuration {
    let cabled = |port: PortId| topo.port(port).peer.expect("a path runs over cabled ports");
    let hop = |port: PortId| Hop::out_of(topo, p, port).expect("a path runs over cabled ports");
    let hops: Vec<Hop> = path.iter().map(|&port| hop(port)).collect();
    let (n, last) = segments(size, p.mtu);
    // free[h]: when hop h's transmitter is next free; each packet goes hop by hop.
    let mut free = vec![SimDuration::ZERO; hops.len()];
    let mut delivered = SimDuration::ZERO;
    for i in 0..n {
        let payload = if i + 1 == n { last } else { p.mtu };
        let t = if i == 0 { Transport::WriteFirst } else { Transport::WriteRest };
        let frame = frame_of(p, t, payload);
        let mut ready = SimDuration::ZERO;
        for (h, hop) in hops.iter().enumerate() {
            let start = ready.max(free[h]);
            let tr = hop.transit(frame, true);
            free[h] = start + tr.busy;
            ready = start + tr.ready;
        }
        delivered = ready;
    }
    // The receiver answers the last packet over the path's links, backwards.
    let back: Vec<Hop> = path.iter().rev().map(|&port| hop(cabled(port))).collect();
    let ack = frame_of(p, Transport::Ack, Bytes(0));
    let mut at = delivered;
    if p.tech == Tech::Infiniband {
        // The HCA returns the last packet's credits first: `Sim::ib_receive` sends the
        // flow-control packet before the responder queues its ACK behind it.
        at += back[0].transit(Bytes(ib::FCP), false).busy;
    }
    for hop in &back {
        at += hop.transit(ack, true).ready;
    }
    at
}
