//! A classic libpcap file writer with nanosecond timestamps.
//!
//! Format (draft-ietf-opsawg-pcap, "PCAP Capture File Format", §4–§5; the
//! Wireshark wiki "Development/LibpcapFileFormat"): a 24-byte file header
//! with magic 0xA1B23C4D (nanosecond resolution), version 2.4, snap length
//! and link type, then per packet a 16-byte record header (seconds,
//! nanoseconds, captured length, original length) and the bytes. Fields are
//! written little-endian; readers detect the byte order from the magic.
//!
//! Link types (tcpdump.org "Link-layer header types"): LINKTYPE_ETHERNET
//! = 1, LINKTYPE_INFINIBAND = 247 ("raw InfiniBand frames, starting with
//! the Local Routing Header"). Wireshark 4.0.17 does not map 247 in pcap
//! files (it reports "network type 247 unknown or unsupported"); its
//! InfiniBand dissector is reached through a DLT_USER binding instead,
//! see [`LinkType::User`].
//!
//! **FCS**: LINKTYPE_ETHERNET does not say whether frames carry their FCS.
//! Wireshark guesses (its `eth.fcs` preference defaults to "According to
//! heuristic" and `eth.check_fcs` to FALSE), so the unambiguous choice is
//! to leave the FCS out: write `ethernet::strip_fcs(&frame)`. The original
//! length then equals the captured length. (With `-o eth.fcs:Always -o
//! eth.check_fcs:TRUE` Wireshark also verifies included FCSs; the tshark
//! test uses that to check [`crate::ethernet::fcs`].) Native IB packets
//! are written whole, ICRC and VCRC included, as the InfiniBand dissector
//! expects.
//!
//! Timestamps are integer picoseconds (fabriclab's time unit) and are
//! truncated to whole nanoseconds.

use std::io::{self, Write};

/// Magic number of a nanosecond-resolution pcap file.
pub const MAGIC_NANOS: u32 = 0xA1B2_3C4D;
/// File format version 2.4.
pub const VERSION: (u16, u16) = (2, 4);
/// Snap length written into the header; longer packets are truncated.
pub const SNAPLEN: u32 = 262_144;

/// A pcap link type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkType {
    /// LINKTYPE_ETHERNET (1): Ethernet II frames, FCS not included.
    Ethernet,
    /// LINKTYPE_INFINIBAND (247): native InfiniBand packets from the LRH.
    Infiniband,
    /// LINKTYPE_ERF (197): Endace ERF records ([`crate::erf`]); how Wireshark 4.0 reads
    /// native InfiniBand.
    Erf,
    /// LINKTYPE_USER0..USER15 (147–162, reserved for private use); `n` is
    /// taken modulo 16. Wireshark 4.0 does not read 247 from pcap files,
    /// so native IB captures for it can use a user type bound to the
    /// `infiniband` dissector (Preferences → Protocols → DLT_USER).
    User(u8),
}

impl LinkType {
    /// The numeric link type.
    pub const fn code(self) -> u32 {
        match self {
            LinkType::Ethernet => 1,
            LinkType::Infiniband => 247,
            LinkType::Erf => 197,
            LinkType::User(n) => 147 + (n as u32 % 16),
        }
    }
}

/// Writes packets to a pcap stream.
#[derive(Debug)]
pub struct PcapWriter<W: Write> {
    out: W,
}

const PS_PER_NS: u64 = 1_000;
const NS_PER_S: u64 = 1_000_000_000;

impl<W: Write> PcapWriter<W> {
    /// Writes the file header and returns the writer.
    pub fn new(mut out: W, link: LinkType) -> io::Result<Self> {
        let mut h = [0u8; 24];
        h[0..4].copy_from_slice(&MAGIC_NANOS.to_le_bytes());
        h[4..6].copy_from_slice(&VERSION.0.to_le_bytes());
        h[6..8].copy_from_slice(&VERSION.1.to_le_bytes());
        // 8..16: thiszone and sigfigs, both 0.
        h[16..20].copy_from_slice(&SNAPLEN.to_le_bytes());
        h[20..24].copy_from_slice(&link.code().to_le_bytes());
        out.write_all(&h)?;
        Ok(PcapWriter { out })
    }

    /// Writes one packet captured at `ts_ps` picoseconds (truncated to ns).
    pub fn write_packet(&mut self, ts_ps: u64, packet: &[u8]) -> io::Result<()> {
        let ns = ts_ps / PS_PER_NS;
        let secs = u32::try_from(ns / NS_PER_S).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "timestamp past 2106"))?;
        let nanos = (ns % NS_PER_S) as u32;
        let orig = u32::try_from(packet.len()).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "packet longer than 4 GiB"))?;
        let incl = orig.min(SNAPLEN);
        let mut h = [0u8; 16];
        h[0..4].copy_from_slice(&secs.to_le_bytes());
        h[4..8].copy_from_slice(&nanos.to_le_bytes());
        h[8..12].copy_from_slice(&incl.to_le_bytes());
        h[12..16].copy_from_slice(&orig.to_le_bytes());
        self.out.write_all(&h)?;
        self.out.write_all(&packet[..incl as usize])
    }

    /// Flushes the underlying writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Returns the underlying writer.
    pub fn into_inner(self) -> W {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_and_record_bytes() {
        let mut w = PcapWriter::new(Vec::new(), LinkType::Infiniband).unwrap();
        // 1.000000002999 s -> 1 s + 2 ns (truncated).
        w.write_packet(1_000_000_002_999, &[0xAA, 0xBB]).unwrap();
        let b = w.into_inner();
        assert_eq!(&b[0..4], &[0x4D, 0x3C, 0xB2, 0xA1]);
        assert_eq!(&b[4..8], &[2, 0, 4, 0]);
        assert_eq!(&b[20..24], &[247, 0, 0, 0]);
        assert_eq!(&b[24..28], &[1, 0, 0, 0]);
        assert_eq!(&b[28..32], &[2, 0, 0, 0]);
        assert_eq!(&b[32..40], &[2, 0, 0, 0, 2, 0, 0, 0]);
        assert_eq!(&b[40..], &[0xAA, 0xBB]);
    }
}
