//! IPv4 headers (RFC 791 §3.1) with the DSCP (RFC 2474 §3) and ECN
//! (RFC 3168 §5) split of the old TOS byte, and the header checksum
//! (RFC 791 §3.1, computed as in RFC 1071).
//!
//! Modelled: the fixed 20-byte header; options are skipped on parse and
//! never emitted. Left out: fragmentation (fragments are rejected as
//! unsupported; RoCEv2 sets DF and never fragments).

use crate::error::{need, Error, Result};
use core::net::Ipv4Addr;

/// Length of the header without options.
pub const HEADER_LEN: usize = 20;
/// IP protocol number of UDP (IANA "Assigned Internet Protocol Numbers").
pub const PROTOCOL_UDP: u8 = 17;

/// The ECN codepoint, the two low bits of the old TOS byte (RFC 3168 §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Ecn {
    /// 0b00: not ECN-capable transport.
    #[default]
    NotEct,
    /// 0b10: ECN-capable transport, ECT(0). RoCEv2 NICs send this.
    Ect0,
    /// 0b01: ECN-capable transport, ECT(1).
    Ect1,
    /// 0b11: congestion experienced, set by a marking switch.
    Ce,
}

impl Ecn {
    /// The two-bit codepoint.
    pub const fn bits(self) -> u8 {
        match self {
            Ecn::NotEct => 0b00,
            Ecn::Ect1 => 0b01,
            Ecn::Ect0 => 0b10,
            Ecn::Ce => 0b11,
        }
    }

    /// The codepoint of the two low bits of `b`.
    pub const fn from_bits(b: u8) -> Self {
        match b & 0b11 {
            0b00 => Ecn::NotEct,
            0b01 => Ecn::Ect1,
            0b10 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }
}

mod field {
    use core::ops::Range;
    pub const VER_IHL: usize = 0;
    pub const DSCP_ECN: usize = 1;
    pub const LENGTH: Range<usize> = 2..4;
    pub const IDENT: Range<usize> = 4..6;
    pub const FLG_OFF: Range<usize> = 6..8;
    pub const TTL: usize = 8;
    pub const PROTOCOL: usize = 9;
    pub const CHECKSUM: Range<usize> = 10..12;
    pub const SRC: Range<usize> = 12..16;
    pub const DST: Range<usize> = 16..20;
}

/// Flag bits of the flags/fragment-offset word (RFC 791 §3.1).
const FLAG_DF: u16 = 0x4000;
const FLAG_MF: u16 = 0x2000;
const FRAG_OFFSET_MASK: u16 = 0x1FFF;

/// The RFC 1071 one's-complement sum of `data`, folded and complemented.
pub fn checksum(data: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        sum += u32::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        sum += u32::from(*last) << 8;
    }
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

/// A read/write view of an IPv4 packet.
#[derive(Debug, Clone)]
pub struct Ipv4Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Ipv4Packet<T> {
    /// Wraps `buffer` without checks.
    pub const fn new_unchecked(buffer: T) -> Self {
        Ipv4Packet { buffer }
    }

    /// Wraps `buffer`, checking the header length and total length fields
    /// against the buffer.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Checks IHL ≥ 5, total length ≥ header length, and that the buffer
    /// holds `total_len` bytes (it may hold more: link padding).
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        need(b, HEADER_LEN)?;
        let hl = self.header_len();
        if hl < HEADER_LEN {
            return Err(Error::Malformed("IPv4 IHL < 5"));
        }
        need(b, hl)?;
        let tl = usize::from(self.total_len());
        if tl < hl {
            return Err(Error::Malformed("IPv4 total length < header length"));
        }
        need(b, tl)
    }

    fn b(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    /// IP version (4 for a valid packet).
    pub fn version(&self) -> u8 {
        self.b()[field::VER_IHL] >> 4
    }

    /// Header length in bytes (IHL × 4).
    pub fn header_len(&self) -> usize {
        usize::from(self.b()[field::VER_IHL] & 0x0F) * 4
    }

    /// Differentiated services codepoint (RFC 2474).
    pub fn dscp(&self) -> u8 {
        self.b()[field::DSCP_ECN] >> 2
    }

    /// ECN codepoint (RFC 3168).
    pub fn ecn(&self) -> Ecn {
        Ecn::from_bits(self.b()[field::DSCP_ECN])
    }

    /// Total length: header plus payload, in bytes.
    pub fn total_len(&self) -> u16 {
        u16::from_be_bytes([self.b()[2], self.b()[3]])
    }

    /// Identification.
    pub fn ident(&self) -> u16 {
        u16::from_be_bytes([self.b()[4], self.b()[5]])
    }

    fn flags_offset(&self) -> u16 {
        u16::from_be_bytes([self.b()[6], self.b()[7]])
    }

    /// Don't-fragment flag.
    pub fn dont_frag(&self) -> bool {
        self.flags_offset() & FLAG_DF != 0
    }

    /// Time to live.
    pub fn ttl(&self) -> u8 {
        self.b()[field::TTL]
    }

    /// Protocol of the payload.
    pub fn protocol(&self) -> u8 {
        self.b()[field::PROTOCOL]
    }

    /// Header checksum as stored.
    pub fn checksum(&self) -> u16 {
        u16::from_be_bytes([self.b()[10], self.b()[11]])
    }

    /// Source address.
    pub fn src_addr(&self) -> Ipv4Addr {
        let s = &self.b()[field::SRC];
        Ipv4Addr::new(s[0], s[1], s[2], s[3])
    }

    /// Destination address.
    pub fn dst_addr(&self) -> Ipv4Addr {
        let d = &self.b()[field::DST];
        Ipv4Addr::new(d[0], d[1], d[2], d[3])
    }

    /// True when the header checksum verifies.
    pub fn verify_checksum(&self) -> bool {
        checksum(&self.b()[..self.header_len()]) == 0
    }

    /// The payload, up to the total length (link padding excluded).
    pub fn payload(&self) -> &[u8] {
        &self.b()[self.header_len()..usize::from(self.total_len())]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv4Packet<T> {
    /// Recomputes and stores the header checksum.
    pub fn fill_checksum(&mut self) {
        let hl = self.header_len();
        let b = self.buffer.as_mut();
        b[field::CHECKSUM].copy_from_slice(&[0, 0]);
        let c = checksum(&b[..hl]);
        b[field::CHECKSUM].copy_from_slice(&c.to_be_bytes());
    }

    /// Sets the ECN codepoint (what a marking switch does) and fixes the
    /// checksum.
    pub fn set_ecn(&mut self, ecn: Ecn) {
        let b = self.buffer.as_mut();
        b[field::DSCP_ECN] = (b[field::DSCP_ECN] & 0xFC) | ecn.bits();
        self.fill_checksum();
    }
}

/// High-level representation of an IPv4 header without options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv4Repr {
    /// Source address.
    pub src: Ipv4Addr,
    /// Destination address.
    pub dst: Ipv4Addr,
    /// DSCP, 0–63.
    pub dscp: u8,
    /// ECN codepoint.
    pub ecn: Ecn,
    /// Identification.
    pub ident: u16,
    /// Don't-fragment flag.
    pub dont_frag: bool,
    /// Time to live.
    pub ttl: u8,
    /// Payload protocol.
    pub protocol: u8,
    /// Payload length in bytes (total length − 20).
    pub payload_len: usize,
}

impl Ipv4Repr {
    /// Parses and validates a header: version 4, checksum, no fragments.
    pub fn parse<T: AsRef<[u8]>>(p: &Ipv4Packet<T>) -> Result<Self> {
        p.check_len()?;
        if p.version() != 4 {
            return Err(Error::Malformed("IPv4 version"));
        }
        if !p.verify_checksum() {
            return Err(Error::BadChecksum("IPv4 header checksum"));
        }
        let fo = p.flags_offset();
        if fo & FLAG_MF != 0 || fo & FRAG_OFFSET_MASK != 0 {
            return Err(Error::Unsupported("IPv4 fragment"));
        }
        Ok(Ipv4Repr {
            src: p.src_addr(),
            dst: p.dst_addr(),
            dscp: p.dscp(),
            ecn: p.ecn(),
            ident: p.ident(),
            dont_frag: p.dont_frag(),
            ttl: p.ttl(),
            protocol: p.protocol(),
            payload_len: usize::from(p.total_len()) - p.header_len(),
        })
    }

    /// Header length (always 20: no options).
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Checks the fields that have fewer bits than their types.
    pub fn validate(&self) -> Result<()> {
        if self.dscp > 63 {
            return Err(Error::OutOfRange("DSCP > 63"));
        }
        if self.payload_len > usize::from(u16::MAX) - HEADER_LEN {
            return Err(Error::OutOfRange("IPv4 payload longer than 65515 bytes"));
        }
        Ok(())
    }

    /// Writes the header (with checksum) into the first 20 bytes of `buf`.
    /// Out-of-range fields are masked; call [`validate`](Self::validate)
    /// first to reject them instead. Panics if `buf` is shorter than 20.
    pub fn emit(&self, buf: &mut [u8]) {
        let b = &mut buf[..HEADER_LEN];
        b[field::VER_IHL] = 0x45;
        b[field::DSCP_ECN] = ((self.dscp & 0x3F) << 2) | self.ecn.bits();
        let total = (HEADER_LEN + self.payload_len).min(usize::from(u16::MAX)) as u16;
        b[field::LENGTH].copy_from_slice(&total.to_be_bytes());
        b[field::IDENT].copy_from_slice(&self.ident.to_be_bytes());
        let fo = if self.dont_frag { FLAG_DF } else { 0 };
        b[field::FLG_OFF].copy_from_slice(&fo.to_be_bytes());
        b[field::TTL] = self.ttl;
        b[field::PROTOCOL] = self.protocol;
        b[field::SRC].copy_from_slice(&self.src.octets());
        b[field::DST].copy_from_slice(&self.dst.octets());
        Ipv4Packet::new_unchecked(b).fill_checksum();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repr() -> Ipv4Repr {
        Ipv4Repr {
            src: Ipv4Addr::new(192, 168, 0, 7),
            dst: Ipv4Addr::new(192, 168, 0, 7),
            dscp: 0,
            ecn: Ecn::Ect1,
            ident: 1144,
            dont_frag: true,
            ttl: 64,
            protocol: PROTOCOL_UDP,
            payload_len: 44,
        }
    }

    #[test]
    fn checksum_matches_scapy_example() {
        // scapy test/contrib/roce.uts "RoCE layer": IP(tos=0x1, id=1144,
        // flags='DF', ttl=64, src=dst=192.168.0.7, len=64) has chksum 0xb4d5.
        let mut b = [0u8; 20];
        repr().emit(&mut b);
        assert_eq!(u16::from_be_bytes([b[10], b[11]]), 0xB4D5);
    }

    #[test]
    fn roundtrip_all_ecn() {
        for ecn in [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ce] {
            let r = Ipv4Repr { ecn, dscp: 26, ..repr() };
            let mut b = vec![0u8; 64];
            r.emit(&mut b);
            let p = Ipv4Packet::new_checked(&b[..]).unwrap();
            assert_eq!(Ipv4Repr::parse(&p).unwrap(), r);
        }
    }

    #[test]
    fn ecn_codepoints_rfc3168() {
        assert_eq!(Ecn::Ect0.bits(), 2);
        assert_eq!(Ecn::Ect1.bits(), 1);
        assert_eq!(Ecn::Ce.bits(), 3);
    }

    #[test]
    fn set_ecn_keeps_checksum_valid() {
        let mut b = vec![0u8; 64];
        repr().emit(&mut b);
        let mut p = Ipv4Packet::new_unchecked(&mut b[..]);
        p.set_ecn(Ecn::Ce);
        assert!(p.verify_checksum());
        assert_eq!(p.ecn(), Ecn::Ce);
    }

    #[test]
    fn bad_checksum_rejected() {
        let mut b = vec![0u8; 64];
        repr().emit(&mut b);
        b[8] = 63;
        let p = Ipv4Packet::new_checked(&b[..]).unwrap();
        assert_eq!(Ipv4Repr::parse(&p), Err(Error::BadChecksum("IPv4 header checksum")));
    }
}
