//! Byte-exact wire formats for the packets fabriclab puts on a link.
//!
//! The simulator itself moves small structs, not bytes; real bytes exist only
//! where they leave the program: pcap captures and golden tests. This crate
//! is that boundary. It follows smoltcp's `src/wire` design:
//!
//! * a zero-copy *view* per header (`Packet<T: AsRef<[u8]>>`) with field
//!   offsets as `const` ranges, `new_unchecked`, `new_checked` and getters
//!   (setters when `T: AsMut<[u8]>`);
//! * a small validated `*Repr` struct per header with `parse`, `emit` and
//!   `buffer_len`;
//! * builders for whole frames ([`RoceFrame`], [`PfcFrame`], [`IbPacket`])
//!   that fill in every length, checksum and CRC.
//!
//! # What is modelled
//! * Ethernet II with an optional IEEE 802.1Q tag, and the IEEE 802.3 FCS
//!   ([`ethernet`]);
//! * IPv4 with DSCP, ECN and the header checksum ([`ipv4`]);
//! * UDP ([`udp`]);
//! * InfiniBand transport headers BTH, RETH, AETH, ImmDt and the RoCEv2 CNP
//!   ([`ib`]);
//! * the invariant CRC for RoCEv2 and for native InfiniBand, and the native
//!   variant CRC ([`icrc`], [`crc`]);
//! * IEEE 802.3 MAC Control PAUSE and IEEE 802.1Qbb PFC frames ([`pfc`]);
//! * native InfiniBand LRH and GRH ([`ib_link`]) and the link-level flow-control
//!   packet ([`ib_fc`]);
//! * ERF records for native InfiniBand in captures ([`erf`]);
//! * a classic libpcap writer ([`pcap`]) and a pcapng writer with direction flags and
//!   nanosecond timestamps ([`pcapng`]).
//!
//! # What is left out
//! IPv6 (RoCEv2 over IPv6 is not built or parsed yet), IPv4 options on
//! emit, UDP checksums (always emitted as 0, which RFC 768 and IBTA Annex A17
//! allow for IPv4), the IB transport headers of UD/RD/XRC/atomics (DETH,
//! RDETH, AtomicETH, IETH), management datagrams, and the IB physical layer
//! (symbols, start/end delimiters).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod crc;
pub mod erf;
mod error;
pub mod ethernet;
pub mod frame;
pub mod ib;
pub mod ib_fc;
pub mod ib_link;
pub mod icrc;
pub mod ipv4;
pub mod pcap;
pub mod pcapng;
pub mod pfc;
pub mod udp;

pub use error::{Error, Result};
pub use ethernet::{EtherType, EthernetAddress, EthernetFrame, EthernetRepr, VlanTag};
pub use frame::{Fcs, IbPacket, PayloadFill, PfcFrame, RoceFrame};
pub use ib::{AethRepr, BthRepr, NakCode, Opcode, RethRepr, Syndrome};
pub use ib_fc::FlowControlRepr;
pub use ib_link::{GrhRepr, LinkNextHeader, LrhRepr};
pub use ipv4::{Ecn, Ipv4Packet, Ipv4Repr};
pub use pcap::{LinkType, PcapWriter};
pub use pcapng::{Direction, Interface, PcapngWriter};
pub use pfc::{MacControlRepr, PauseRepr, PfcRepr};
pub use udp::{UdpPacket, UdpRepr};

#[cfg(test)]
pub(crate) mod test_util {
    /// Bytes from a hex dump with arbitrary white space (test vectors).
    pub fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }
}
