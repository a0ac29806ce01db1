//! A pcapng writer: one section, one interface per file, Enhanced Packet Blocks with
//! their direction flag and nanosecond timestamps.
//!
//! Format (IETF draft-ietf-opsawg-pcapng, "PCAP Next Generation (pcapng) Capture File
//! Format"): a Section Header Block (§4.1, type 0x0A0D0D0A, byte-order magic
//! 0x1A2B3C4D, version 1.0, section length −1 = not given), an Interface Description
//! Block (§4.2, type 1: link type, snap length, and the options `if_name` (2),
//! `if_tsresol` (9) = 9 so timestamps count nanoseconds, `if_fcslen` (13) saying how
//! many FCS bytes each frame ends with), then per packet an Enhanced Packet Block
//! (§4.3, type 6) with the option `epb_flags` (2), whose bits 0–1 give the direction
//! (§4.3.1: 01 inbound, 10 outbound). Every block and option is padded to 32 bits;
//! fields are written little-endian (readers detect the order from the magic).
//!
//! Why not the `pcap-file` crate: its pcapng writer takes options as it parses them, but
//! has no typed `if_fcslen`, and the four blocks needed here are a few dozen lines whose
//! every byte the unit test below pins.
//!
//! Timestamps are fabriclab's integer picoseconds, truncated to whole nanoseconds.
//! Leaves out: several interfaces or sections per file, Name Resolution and Interface
//! Statistics blocks, comments.

use std::io::{self, Write};

use crate::pcap::LinkType;

/// Block type of a Section Header Block.
pub const SHB: u32 = 0x0A0D_0D0A;
/// Block type of an Interface Description Block.
pub const IDB: u32 = 1;
/// Block type of an Enhanced Packet Block.
pub const EPB: u32 = 6;
/// The byte-order magic of a Section Header Block.
pub const BYTE_ORDER_MAGIC: u32 = 0x1A2B_3C4D;
const OPT_END: u16 = 0;
const IF_NAME: u16 = 2;
const IF_TSRESOL: u16 = 9;
const IF_FCSLEN: u16 = 13;
const EPB_FLAGS: u16 = 2;
/// `if_tsresol` 9: timestamps in units of 10^-9 s.
pub const TSRESOL_NANOS: u8 = 9;

/// Which way a frame crossed the captured port (pcapng `epb_flags` bits 0–1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Received by the captured port (01).
    Inbound,
    /// Sent by the captured port (10).
    Outbound,
}

impl Direction {
    /// The `epb_flags` word.
    pub const fn flags(self) -> u32 {
        match self {
            Direction::Inbound => 1,
            Direction::Outbound => 2,
        }
    }
}

/// The one interface of a file.
#[derive(Debug, Clone)]
pub struct Interface {
    /// Its link type.
    pub link: LinkType,
    /// Frames longer than this are cut to it (the original length is kept).
    pub snaplen: u32,
    /// `if_name`.
    pub name: String,
    /// `if_fcslen`: bytes of FCS at the end of every frame (0: none).
    pub fcs_len: u8,
}

/// Writes one interface's packets as pcapng, counting the bytes written.
#[derive(Debug)]
pub struct PcapngWriter<W: Write> {
    out: W,
    snaplen: u32,
    written: u64,
}

/// Appends an option: code, length, value, padding to 32 bits.
fn option(buf: &mut Vec<u8>, code: u16, value: &[u8]) {
    buf.extend_from_slice(&code.to_le_bytes());
    buf.extend_from_slice(&(value.len() as u16).to_le_bytes());
    buf.extend_from_slice(value);
    buf.resize(buf.len().next_multiple_of(4), 0);
}

/// A whole block: type, total length, `body` (already padded), total length again.
fn block(kind: u32, body: &[u8]) -> Vec<u8> {
    debug_assert!(body.len().is_multiple_of(4));
    let total = (body.len() + 12) as u32;
    let mut b = Vec::with_capacity(total as usize);
    b.extend_from_slice(&kind.to_le_bytes());
    b.extend_from_slice(&total.to_le_bytes());
    b.extend_from_slice(body);
    b.extend_from_slice(&total.to_le_bytes());
    b
}

impl<W: Write> PcapngWriter<W> {
    /// Writes the section header and the interface description.
    pub fn new(mut out: W, iface: &Interface) -> io::Result<Self> {
        let mut shb = Vec::with_capacity(16);
        shb.extend_from_slice(&BYTE_ORDER_MAGIC.to_le_bytes());
        shb.extend_from_slice(&1u16.to_le_bytes());
        shb.extend_from_slice(&0u16.to_le_bytes());
        shb.extend_from_slice(&(-1i64).to_le_bytes());
        let mut idb = Vec::with_capacity(64);
        idb.extend_from_slice(&(iface.link.code() as u16).to_le_bytes());
        idb.extend_from_slice(&0u16.to_le_bytes());
        idb.extend_from_slice(&iface.snaplen.to_le_bytes());
        if !iface.name.is_empty() {
            option(&mut idb, IF_NAME, iface.name.as_bytes());
        }
        option(&mut idb, IF_TSRESOL, &[TSRESOL_NANOS]);
        option(&mut idb, IF_FCSLEN, &[iface.fcs_len]);
        option(&mut idb, OPT_END, &[]);
        let head = [block(SHB, &shb), block(IDB, &idb)].concat();
        out.write_all(&head)?;
        Ok(PcapngWriter { out, snaplen: iface.snaplen, written: head.len() as u64 })
    }

    /// The bytes one packet of `len` bytes takes in the file (after the snap length).
    pub fn record_len(&self, len: usize) -> u64 {
        let cap = len.min(self.snaplen as usize);
        (12 + 20 + cap.next_multiple_of(4) + 8 + 4) as u64
    }

    /// Writes `frame`, seen at `ts_ps` picoseconds going `dir`, cut to the snap length.
    pub fn write_packet(&mut self, ts_ps: u64, dir: Direction, frame: &[u8]) -> io::Result<()> {
        let ns = ts_ps / 1_000;
        let orig = u32::try_from(frame.len()).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "packet longer than 4 GiB"))?;
        let cap = orig.min(self.snaplen);
        let mut body = Vec::with_capacity(cap as usize + 32);
        body.extend_from_slice(&0u32.to_le_bytes()); // interface 0
        body.extend_from_slice(&((ns >> 32) as u32).to_le_bytes());
        body.extend_from_slice(&(ns as u32).to_le_bytes());
        body.extend_from_slice(&cap.to_le_bytes());
        body.extend_from_slice(&orig.to_le_bytes());
        body.extend_from_slice(&frame[..cap as usize]);
        body.resize(body.len().next_multiple_of(4), 0);
        option(&mut body, EPB_FLAGS, &dir.flags().to_le_bytes());
        option(&mut body, OPT_END, &[]);
        let b = block(EPB, &body);
        self.out.write_all(&b)?;
        self.written += b.len() as u64;
        Ok(())
    }

    /// Bytes written so far, headers included.
    pub fn written(&self) -> u64 {
        self.written
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

    fn u32_at(b: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
    }

    #[test]
    fn blocks_byte_for_byte() {
        let iface = Interface { link: LinkType::Ethernet, snaplen: 4, name: "p1".into(), fcs_len: 0 };
        let mut w = PcapngWriter::new(Vec::new(), &iface).unwrap();
        let head = w.written();
        assert_eq!(head, 28 + 48);
        // 5 000 000 000 123 456 ps = 5 000 000 000 123 ns (truncated), past 2^32 ns.
        w.write_packet(5_000_000_000_123_456, Direction::Outbound, &[1, 2, 3, 4, 5]).unwrap();
        assert_eq!(w.written() - head, w.record_len(5));
        let b = w.into_inner();
        // SHB: type, length 28, magic, version 1.0, section length -1, length.
        assert_eq!(&b[0..12], &[0x0A, 0x0D, 0x0D, 0x0A, 28, 0, 0, 0, 0x4D, 0x3C, 0x2B, 0x1A]);
        assert_eq!(&b[12..16], &[1, 0, 0, 0]);
        assert_eq!(&b[16..24], &[0xFF; 8]);
        assert_eq!(u32_at(&b, 24), 28);
        // IDB: link type 1, snaplen 4, if_name "p1", if_tsresol 9, if_fcslen 0, end.
        let i = 28;
        assert_eq!(u32_at(&b, i), 1);
        assert_eq!(u32_at(&b, i + 4), 48);
        assert_eq!(&b[i + 8..i + 16], &[1, 0, 0, 0, 4, 0, 0, 0]);
        assert_eq!(&b[i + 16..i + 24], &[2, 0, 2, 0, b'p', b'1', 0, 0]);
        assert_eq!(&b[i + 24..i + 40], &[9, 0, 1, 0, 9, 0, 0, 0, 13, 0, 1, 0, 0, 0, 0, 0]);
        assert_eq!(&b[i + 40..i + 48], &[0, 0, 0, 0, 48, 0, 0, 0]);
        // EPB: interface 0, the timestamp in two halves, high first.
        let e = 76;
        assert_eq!(u32_at(&b, e), 6);
        let total = u32_at(&b, e + 4) as usize;
        assert_eq!(total, 12 + 20 + 4 + 8 + 4);
        assert_eq!(u32_at(&b, e + 8), 0);
        assert_eq!(u32_at(&b, e + 12), (5_000_000_000_123u64 >> 32) as u32);
        assert_eq!(u32_at(&b, e + 16), 5_000_000_000_123u64 as u32);
        assert_eq!(u32_at(&b, e + 12), 1164);
        assert_eq!(u32_at(&b, e + 20), 4, "captured length: the snap length");
        assert_eq!(u32_at(&b, e + 24), 5, "original length");
        assert_eq!(&b[e + 28..e + 32], &[1, 2, 3, 4]);
        assert_eq!(&b[e + 32..e + 40], &[2, 0, 4, 0, 2, 0, 0, 0], "epb_flags: outbound");
        assert_eq!(u32_at(&b, e + total - 4) as usize, total);
        assert_eq!(b.len(), e + total);
    }
}
