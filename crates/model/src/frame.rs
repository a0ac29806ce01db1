//! Frame sizes on the wire: RoCEv2 encapsulation and Ethernet overheads.
//!
//! Sizes, all in bytes, with their sources:
//! * Ethernet (IEEE 802.3-2018 clause 3): preamble 7 + SFD 1, MAC header 14 (dst, src,
//!   EtherType), FCS 4, minimum frame 64 (header to FCS), inter-packet gap 12 byte times
//!   (clause 4.4.2). An 802.1Q tag adds 4 (IEEE 802.1Q-2018 clause 9).
//! * IPv4 header without options 20 (RFC 791); IPv6 40 (RFC 8200); UDP 8 (RFC 768).
//! * InfiniBand transport (IBTA Vol. 1 Rel. 1.4, ch. 9): BTH 12, RETH 16 (first or only
//!   packet of an RDMA WRITE), AETH 4 (acknowledgements), ICRC 4. The payload is padded to
//!   a multiple of 4 bytes (BTH PadCnt, §9.2). RoCEv2 carries this in UDP to port 4791
//!   (IBTA Vol. 1 Annex A17).
//! * RoCEv2 CNP (Annex A17.9.3): BTH (opcode 0x81) + 16 reserved bytes + ICRC.
//! * PFC (IEEE 802.1Qbb-2011 clause 36 / 802.3 Annex 31D): a minimum-size 64-byte MAC
//!   control frame.
//!
//! "Frame" lengths below run from the destination MAC to the FCS, which is what a switch
//! buffers; "wire" lengths add preamble, SFD and the inter-packet gap, which is what
//! occupies the link's time.

use serde::{Deserialize, Serialize};
use units::Bytes;

pub const PREAMBLE_SFD: u64 = 8;
pub const IFG: u64 = 12;
/// Per-frame physical-layer overhead: preamble + SFD + inter-packet gap.
pub const L1_OVERHEAD: u64 = PREAMBLE_SFD + IFG;
pub const ETH_HEADER: u64 = 14;
pub const VLAN_TAG: u64 = 4;
pub const FCS: u64 = 4;
pub const MIN_FRAME: u64 = 64;
pub const IPV4_HEADER: u64 = 20;
pub const IPV6_HEADER: u64 = 40;
pub const UDP_HEADER: u64 = 8;
pub const BTH: u64 = 12;
pub const RETH: u64 = 16;
pub const AETH: u64 = 4;
pub const ICRC: u64 = 4;
pub const CNP_RESERVED: u64 = 16;
/// PFC frame: a minimum-size MAC control frame.
pub const PFC_FRAME: u64 = MIN_FRAME;
/// The IB path MTUs a RoCEv2 or IB QP may use (IBTA Vol. 1 §9.7.5.1.3 / PortInfo:MTUCap).
pub const IB_MTUS: [u64; 5] = [256, 512, 1024, 2048, 4096];

/// How a RoCEv2 packet is wrapped: whether it carries an 802.1Q tag (needed for
/// PCP-based PFC; DSCP-based PFC needs none) and whether IP is v4 or v6.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Encap {
    pub vlan: bool,
    pub ipv6: bool,
}

impl Encap {
    /// Ethernet + IP + UDP + FCS bytes around the IB transport headers.
    pub fn outer(self) -> u64 {
        ETH_HEADER + if self.vlan { VLAN_TAG } else { 0 } + if self.ipv6 { IPV6_HEADER } else { IPV4_HEADER } + UDP_HEADER + FCS
    }
}

/// Which IB extension headers follow the BTH.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// RDMA WRITE First or Only: BTH + RETH.
    WriteFirst,
    /// RDMA WRITE Middle or Last, or SEND: BTH only.
    WriteRest,
    /// ACK or NAK: BTH + AETH, no payload.
    Ack,
    /// RoCEv2 congestion notification packet.
    Cnp,
}

impl Transport {
    fn ext(self) -> u64 {
        match self {
            Transport::WriteFirst => RETH,
            Transport::WriteRest => 0,
            Transport::Ack => AETH,
            Transport::Cnp => CNP_RESERVED,
        }
    }
}

/// Frame length (destination MAC to FCS) of a RoCEv2 packet carrying `payload` bytes.
pub fn roce_frame(encap: Encap, t: Transport, payload: Bytes) -> Bytes {
    let padded = payload.0.div_ceil(4) * 4;
    Bytes((encap.outer() + BTH + t.ext() + padded + ICRC).max(MIN_FRAME))
}

/// Bytes of link time a frame occupies: frame + preamble/SFD + inter-packet gap.
pub fn wire(frame: Bytes) -> Bytes {
    Bytes(frame.0.max(MIN_FRAME) + L1_OVERHEAD)
}

/// The Ethernet MTU (IP packet size) a RoCEv2 path MTU needs: IB MTU + IP/UDP/BTH/RETH/ICRC.
/// E.g. IB MTU 4096 needs an Ethernet MTU of at least 4096+20+8+12+16+4 = 4156 (IPv4).
pub fn ethernet_mtu_for(encap: Encap, ib_mtu: Bytes) -> Bytes {
    let ip = if encap.ipv6 { IPV6_HEADER } else { IPV4_HEADER };
    Bytes(ib_mtu.0 + ip + UDP_HEADER + BTH + RETH + ICRC)
}

/// Splits a message into path-MTU packet payloads: `n` packets, the last one `last` bytes.
/// A zero-byte message is one packet with no payload (an RDMA WRITE Only of length 0).
pub fn segments(msg: Bytes, mtu: Bytes) -> (u64, Bytes) {
    if msg.0 == 0 {
        return (1, Bytes(0));
    }
    let n = msg.0.div_ceil(mtu.0);
    (n, Bytes(msg.0 - (n - 1) * mtu.0))
}

/// Total link time, in wire bytes, to carry a whole RDMA WRITE of `msg` bytes
/// (first packet with RETH, full packets, a partial last one).
pub fn write_wire_bytes(encap: Encap, msg: Bytes, mtu: Bytes) -> Bytes {
    let (n, last) = segments(msg, mtu);
    let first_pl = if n == 1 { last } else { mtu };
    let mut total = wire(roce_frame(encap, Transport::WriteFirst, first_pl)).0;
    if n >= 2 {
        total += (n - 2) * wire(roce_frame(encap, Transport::WriteRest, mtu)).0;
        total += wire(roce_frame(encap, Transport::WriteRest, last)).0;
    }
    Bytes(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    const V4: Encap = Encap { vlan: false, ipv6: false };

    #[test]
    fn sizes() {
        // 14 + 20 + 8 + 12 + 4096 + 4 + 4 = 4158 frame, + 20 = 4178 on the wire.
        assert_eq!(roce_frame(V4, Transport::WriteRest, Bytes(4096)), Bytes(4158));
        assert_eq!(wire(roce_frame(V4, Transport::WriteRest, Bytes(4096))), Bytes(4178));
        assert_eq!(roce_frame(V4, Transport::WriteFirst, Bytes(4096)), Bytes(4174));
        // ACK: 14+20+8+12+4+4+4 = 66.
        assert_eq!(roce_frame(V4, Transport::Ack, Bytes(0)), Bytes(66));
        // CNP: 14+20+8+12+16+4+4 = 78.
        assert_eq!(roce_frame(V4, Transport::Cnp, Bytes(0)), Bytes(78));
        // Padding to 4 and the 64-byte minimum.
        assert_eq!(roce_frame(V4, Transport::WriteRest, Bytes(1)), Bytes(66));
        assert_eq!(roce_frame(Encap { vlan: true, ipv6: false }, Transport::WriteRest, Bytes(0)), Bytes(66));
        assert_eq!(wire(Bytes(PFC_FRAME)), Bytes(84));
        assert_eq!(ethernet_mtu_for(V4, Bytes(4096)), Bytes(4156));
    }

    #[test]
    fn write_of_one_megabyte() {
        // 10^6 B at MTU 4096: 244 full packets + one of 576 B.
        assert_eq!(segments(Bytes(1_000_000), Bytes(4096)), (245, Bytes(576)));
        let w = write_wire_bytes(V4, Bytes(1_000_000), Bytes(4096));
        assert_eq!(w, Bytes(16 + 244 * 4178 + (576 + 62 + 20)));
    }
}
