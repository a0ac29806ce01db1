//! UDP headers (RFC 768).
//!
//! The checksum is emitted as 0, "no checksum", which RFC 768 allows over
//! IPv4 and IBTA Annex A17 (RoCEv2) explicitly permits: the ICRC protects
//! the payload and the UDP checksum is excluded from it. Parsing does not
//! verify a non-zero checksum.

use crate::error::{need, Error, Result};

/// Header length.
pub const HEADER_LEN: usize = 8;
/// The IANA-assigned UDP destination port of RoCEv2 (IBTA Annex A17).
pub const ROCE_V2_PORT: u16 = 4791;

mod field {
    use core::ops::Range;
    pub const SRC_PORT: Range<usize> = 0..2;
    pub const DST_PORT: Range<usize> = 2..4;
    pub const LENGTH: Range<usize> = 4..6;
    pub const CHECKSUM: Range<usize> = 6..8;
}

/// A read/write view of a UDP datagram.
#[derive(Debug, Clone)]
pub struct UdpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> UdpPacket<T> {
    /// Wraps `buffer` without checks.
    pub const fn new_unchecked(buffer: T) -> Self {
        UdpPacket { buffer }
    }

    /// Wraps `buffer`, checking the length field against it.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Checks 8 ≤ length ≤ buffer length.
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        need(b, HEADER_LEN)?;
        let len = usize::from(self.len());
        if len < HEADER_LEN {
            return Err(Error::Malformed("UDP length < 8"));
        }
        need(b, len)
    }

    fn be16(&self, r: core::ops::Range<usize>) -> u16 {
        let b = self.buffer.as_ref();
        u16::from_be_bytes([b[r.start], b[r.start + 1]])
    }

    /// Source port (RoCEv2: flow entropy for ECMP).
    pub fn src_port(&self) -> u16 {
        self.be16(field::SRC_PORT)
    }

    /// Destination port.
    pub fn dst_port(&self) -> u16 {
        self.be16(field::DST_PORT)
    }

    /// Length of header plus payload.
    pub fn len(&self) -> u16 {
        self.be16(field::LENGTH)
    }

    /// True when the length field is zero (never for a valid datagram).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Checksum as stored (0 = none).
    pub fn checksum(&self) -> u16 {
        self.be16(field::CHECKSUM)
    }

    /// The payload, up to the length field.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..usize::from(self.len())]
    }
}

/// High-level representation of a UDP header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UdpRepr {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Payload length in bytes.
    pub payload_len: usize,
}

impl UdpRepr {
    /// Parses a header.
    pub fn parse<T: AsRef<[u8]>>(p: &UdpPacket<T>) -> Result<Self> {
        p.check_len()?;
        Ok(UdpRepr { src_port: p.src_port(), dst_port: p.dst_port(), payload_len: usize::from(p.len()) - HEADER_LEN })
    }

    /// Header length.
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the header with a zero checksum. Panics if `buf` is shorter
    /// than 8 bytes.
    pub fn emit(&self, buf: &mut [u8]) {
        buf[field::SRC_PORT].copy_from_slice(&self.src_port.to_be_bytes());
        buf[field::DST_PORT].copy_from_slice(&self.dst_port.to_be_bytes());
        let len = (HEADER_LEN + self.payload_len).min(usize::from(u16::MAX)) as u16;
        buf[field::LENGTH].copy_from_slice(&len.to_be_bytes());
        buf[field::CHECKSUM].copy_from_slice(&[0, 0]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip() {
        let r = UdpRepr { src_port: 49152, dst_port: ROCE_V2_PORT, payload_len: 36 };
        let mut b = vec![0u8; 44];
        r.emit(&mut b);
        assert_eq!(&b[..8], &[0xC0, 0x00, 0x12, 0xB7, 0x00, 0x2C, 0, 0]);
        let p = UdpPacket::new_checked(&b[..]).unwrap();
        assert_eq!(UdpRepr::parse(&p).unwrap(), r);
    }

    #[test]
    fn short_length_field_rejected() {
        let b = [0, 1, 0, 2, 0, 7, 0, 0];
        assert!(UdpPacket::new_checked(&b[..]).is_err());
    }
}
