//! Ethernet II frames with an optional IEEE 802.1Q tag, and the FCS.
//!
//! Layout (IEEE 802.3-2018 §3.1.1 MAC frame format; EtherType per IEEE
//! 802.3 §3.2.6; tag per IEEE 802.1Q-2018 §9.6): destination (6),
//! source (6), then either EtherType (2) or TPID 0x8100 (2) + TCI (2) +
//! EtherType (2), then the payload, then the 4-byte FCS. A frame is at
//! least 64 bytes including the FCS (IEEE 802.3 §4.4.2 minFrameSize
//! = 512 bits); shorter payloads are zero-padded before the FCS.
//!
//! Views here see the frame *without* the FCS, as captures do; the FCS is
//! computed and checked by [`fcs`], [`append_fcs`] and [`check_fcs`].
//! Left out: stacked tags (QinQ), 802.3 length/LLC frames, jumbo limits.

use crate::crc::crc32;
use crate::error::{need, Error, Result};
use core::fmt;
use core::ops::Range;

/// Length of the FCS (IEEE 802.3 §3.2.9).
pub const FCS_LEN: usize = 4;
/// Minimum frame length including the FCS (IEEE 802.3 §4.4.2).
pub const MIN_FRAME_LEN: usize = 64;
/// Preamble (7) + start frame delimiter (1) (IEEE 802.3 §3.2.1, §3.2.2).
pub const PREAMBLE_SFD_LEN: usize = 8;
/// Minimum inter-packet gap, 96 bit times (IEEE 802.3 §4.4.2).
pub const IFG_LEN: usize = 12;
/// Untagged header length.
pub const HEADER_LEN: usize = 14;
/// Length of an 802.1Q tag (TPID + TCI).
pub const VLAN_TAG_LEN: usize = 4;

/// Bytes a frame of `frame_len` bytes (FCS included) occupies on the wire:
/// padded to [`MIN_FRAME_LEN`], plus preamble/SFD and the inter-frame gap.
pub fn wire_len(frame_len: usize) -> usize {
    frame_len.max(MIN_FRAME_LEN) + PREAMBLE_SFD_LEN + IFG_LEN
}

/// A 48-bit MAC address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct EthernetAddress(pub [u8; 6]);

impl EthernetAddress {
    /// The MAC Control multicast address 01-80-C2-00-00-01 that PAUSE and
    /// PFC frames are sent to (IEEE 802.3 Annex 31B.1, IEEE 802.1Qbb §36.1.3).
    pub const MAC_CONTROL: EthernetAddress = EthernetAddress([0x01, 0x80, 0xC2, 0x00, 0x00, 0x01]);

    /// Copies an address from the first 6 bytes of `b`.
    fn from_slice(b: &[u8]) -> Self {
        let mut a = [0; 6];
        a.copy_from_slice(&b[..6]);
        EthernetAddress(a)
    }
}

impl fmt::Display for EthernetAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        write!(f, "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", b[0], b[1], b[2], b[3], b[4], b[5])
    }
}

/// An EtherType (IEEE 802.3 §3.2.6; values from the IEEE RA registry).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EtherType(pub u16);

impl EtherType {
    /// IPv4 (RFC 894).
    pub const IPV4: EtherType = EtherType(0x0800);
    /// IPv6 (RFC 2464).
    pub const IPV6: EtherType = EtherType(0x86DD);
    /// Customer VLAN tag TPID (IEEE 802.1Q-2018 §9.5).
    pub const VLAN: EtherType = EtherType(0x8100);
    /// MAC Control: PAUSE and PFC (IEEE 802.3 §31.4.1.3).
    pub const MAC_CONTROL: EtherType = EtherType(0x8808);
    /// RoCE v1 (IBTA Annex A16).
    pub const ROCE_V1: EtherType = EtherType(0x8915);
}

/// The 802.1Q tag control information (IEEE 802.1Q-2018 §9.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct VlanTag {
    /// Priority code point, 0–7: the priority PFC pauses.
    pub pcp: u8,
    /// Drop eligible indicator.
    pub dei: bool,
    /// VLAN identifier, 0–4095 (0 = priority tag only).
    pub vid: u16,
}

impl VlanTag {
    fn to_tci(self) -> u16 {
        (u16::from(self.pcp & 0x7) << 13) | (u16::from(self.dei) << 12) | (self.vid & 0x0FFF)
    }

    fn from_tci(tci: u16) -> Self {
        VlanTag { pcp: (tci >> 13) as u8, dei: tci & 0x1000 != 0, vid: tci & 0x0FFF }
    }
}

mod field {
    use core::ops::Range;
    pub const DST: Range<usize> = 0..6;
    pub const SRC: Range<usize> = 6..12;
    pub const ETHERTYPE: Range<usize> = 12..14;
    pub const TCI: Range<usize> = 14..16;
    pub const INNER_ETHERTYPE: Range<usize> = 16..18;
}

/// A read/write view of an Ethernet II frame (FCS excluded).
#[derive(Debug, Clone)]
pub struct EthernetFrame<T: AsRef<[u8]>> {
    buffer: T,
}

fn be16(b: &[u8], r: Range<usize>) -> u16 {
    u16::from_be_bytes([b[r.start], b[r.start + 1]])
}

impl<T: AsRef<[u8]>> EthernetFrame<T> {
    /// Wraps `buffer` without checking its length.
    pub const fn new_unchecked(buffer: T) -> Self {
        EthernetFrame { buffer }
    }

    /// Wraps `buffer`, checking that it holds the whole header.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let f = Self::new_unchecked(buffer);
        f.check_len()?;
        Ok(f)
    }

    /// Checks that the buffer holds the (possibly tagged) header.
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        need(b, HEADER_LEN)?;
        need(b, self.header_len())
    }

    /// Header length: 14, or 18 with a VLAN tag.
    pub fn header_len(&self) -> usize {
        if self.outer_ethertype() == EtherType::VLAN {
            HEADER_LEN + VLAN_TAG_LEN
        } else {
            HEADER_LEN
        }
    }

    /// Destination address.
    pub fn dst_addr(&self) -> EthernetAddress {
        EthernetAddress::from_slice(&self.buffer.as_ref()[field::DST])
    }

    /// Source address.
    pub fn src_addr(&self) -> EthernetAddress {
        EthernetAddress::from_slice(&self.buffer.as_ref()[field::SRC])
    }

    fn outer_ethertype(&self) -> EtherType {
        EtherType(be16(self.buffer.as_ref(), field::ETHERTYPE))
    }

    /// The 802.1Q tag, if the frame has one.
    pub fn vlan(&self) -> Option<VlanTag> {
        (self.outer_ethertype() == EtherType::VLAN).then(|| VlanTag::from_tci(be16(self.buffer.as_ref(), field::TCI)))
    }

    /// The EtherType of the payload (the inner one when tagged).
    pub fn ethertype(&self) -> EtherType {
        if self.outer_ethertype() == EtherType::VLAN {
            EtherType(be16(self.buffer.as_ref(), field::INNER_ETHERTYPE))
        } else {
            self.outer_ethertype()
        }
    }

    /// The payload (everything after the header; may include padding).
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }
}

/// High-level representation of an Ethernet II header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EthernetRepr {
    /// Source address.
    pub src: EthernetAddress,
    /// Destination address.
    pub dst: EthernetAddress,
    /// Optional 802.1Q tag.
    pub vlan: Option<VlanTag>,
    /// EtherType of the payload.
    pub ethertype: EtherType,
}

impl EthernetRepr {
    /// Parses a header. Rejects a double tag as unsupported.
    pub fn parse<T: AsRef<[u8]>>(frame: &EthernetFrame<T>) -> Result<Self> {
        frame.check_len()?;
        if frame.vlan().is_some() && frame.ethertype() == EtherType::VLAN {
            return Err(Error::Unsupported("stacked 802.1Q tags"));
        }
        Ok(EthernetRepr { src: frame.src_addr(), dst: frame.dst_addr(), vlan: frame.vlan(), ethertype: frame.ethertype() })
    }

    /// Header length in bytes.
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN + if self.vlan.is_some() { VLAN_TAG_LEN } else { 0 }
    }

    /// Writes the header into the first [`buffer_len`](Self::buffer_len)
    /// bytes of `buf`. Panics if `buf` is shorter.
    pub fn emit(&self, buf: &mut [u8]) {
        buf[field::DST].copy_from_slice(&self.dst.0);
        buf[field::SRC].copy_from_slice(&self.src.0);
        match self.vlan {
            Some(tag) => {
                buf[field::ETHERTYPE].copy_from_slice(&EtherType::VLAN.0.to_be_bytes());
                buf[field::TCI].copy_from_slice(&tag.to_tci().to_be_bytes());
                buf[field::INNER_ETHERTYPE].copy_from_slice(&self.ethertype.0.to_be_bytes());
            }
            None => buf[field::ETHERTYPE].copy_from_slice(&self.ethertype.0.to_be_bytes()),
        }
    }
}

/// The FCS of a frame given without its FCS (IEEE 802.3 §3.2.9). It is
/// transmitted least significant byte first: `fcs(f).to_le_bytes()`.
pub fn fcs(frame_without_fcs: &[u8]) -> u32 {
    crc32(frame_without_fcs)
}

/// Pads `frame` (no FCS yet) with zeros to 60 bytes and appends the FCS.
pub fn append_fcs(frame: &mut Vec<u8>) {
    if frame.len() < MIN_FRAME_LEN - FCS_LEN {
        frame.resize(MIN_FRAME_LEN - FCS_LEN, 0);
    }
    let f = fcs(frame);
    frame.extend_from_slice(&f.to_le_bytes());
}

/// `frame` without its trailing FCS: what a capture of it holds.
pub fn strip_fcs(frame: &[u8]) -> &[u8] {
    &frame[..frame.len().saturating_sub(FCS_LEN)]
}

/// Checks the trailing FCS of `frame` and returns the frame without it.
pub fn check_fcs(frame: &[u8]) -> Result<&[u8]> {
    need(frame, HEADER_LEN + FCS_LEN)?;
    let (body, tail) = frame.split_at(frame.len() - FCS_LEN);
    let got = u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]);
    if got == fcs(body) {
        Ok(body)
    } else {
        Err(Error::BadChecksum("Ethernet FCS"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vlan_roundtrip() {
        let repr = EthernetRepr {
            src: EthernetAddress([2, 0, 0, 0, 0, 1]),
            dst: EthernetAddress([2, 0, 0, 0, 0, 2]),
            vlan: Some(VlanTag { pcp: 3, dei: true, vid: 100 }),
            ethertype: EtherType::IPV4,
        };
        let mut buf = vec![0u8; repr.buffer_len()];
        repr.emit(&mut buf);
        // TPID 0x8100, TCI = 011 1 000001100100 = 0x7064, EtherType 0x0800.
        assert_eq!(&buf[12..], &[0x81, 0x00, 0x70, 0x64, 0x08, 0x00]);
        let f = EthernetFrame::new_checked(&buf[..]).unwrap();
        assert_eq!(EthernetRepr::parse(&f).unwrap(), repr);
    }

    #[test]
    fn untagged_roundtrip() {
        let repr = EthernetRepr { src: EthernetAddress([0xaa; 6]), dst: EthernetAddress([0xbb; 6]), vlan: None, ethertype: EtherType::MAC_CONTROL };
        let mut buf = vec![0u8; 14];
        repr.emit(&mut buf);
        let f = EthernetFrame::new_checked(&buf[..]).unwrap();
        assert_eq!(f.header_len(), 14);
        assert_eq!(EthernetRepr::parse(&f).unwrap(), repr);
    }

    #[test]
    fn truncated_tag_is_an_error() {
        let buf = [0u8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x81, 0x00, 0x00];
        assert!(matches!(EthernetFrame::new_checked(&buf[..]), Err(Error::Truncated { .. })));
    }

    #[test]
    fn fcs_roundtrip_and_padding() {
        let mut f = vec![0x11u8; 20];
        append_fcs(&mut f);
        assert_eq!(f.len(), MIN_FRAME_LEN);
        assert_eq!(check_fcs(&f).unwrap().len(), 60);
        f[5] ^= 1;
        assert_eq!(check_fcs(&f), Err(Error::BadChecksum("Ethernet FCS")));
    }

    #[test]
    fn fcs_residue() {
        // Appending the FCS LSB-first makes the CRC register over the whole
        // frame equal the 802.3 residue: crc32(frame + fcs) = 0x2144DF1C
        // (the complement of the well-known magic 0xDEBB20E3).
        let mut f = b"any frame contents".to_vec();
        append_fcs(&mut f);
        assert_eq!(crc32(&f), 0x2144_DF1C);
    }

    #[test]
    fn wire_len_counts_preamble_and_gap() {
        assert_eq!(wire_len(64), 84);
        assert_eq!(wire_len(10), 84);
        assert_eq!(wire_len(1518), 1538);
    }
}
