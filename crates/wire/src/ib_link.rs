//! Native InfiniBand link and network headers: LRH and GRH.
//!
//! Sources: IBTA Vol 1 (release 1.4) §7.7 (Local Route Header), §8.3
//! (Global Route Header), §7.8 (ICRC/VCRC; see [`crate::icrc`] and
//! [`crate::crc::vcrc16`]).
//!
//! A native packet is `LRH (8) [GRH (40)] BTH ... payload pad ICRC (4)
//! VCRC (2)`. LRH.PktLen counts 4-byte words from the first byte of the LRH
//! to the last byte before the VCRC; GRH.PayLen counts bytes after the GRH
//! up to and including the ICRC. Wireshark reads such packets from pcap
//! LINKTYPE_INFINIBAND (247).
//!
//! Left out: raw/IPv6 LNH payloads (link packets are [`crate::ib_fc`]'s),
//! the extended LRH of later releases (32-bit LIDs).

use crate::error::{need, Error, Result};

/// LRH length (IBTA Vol 1 §7.7).
pub const LRH_LEN: usize = 8;
/// GRH length (IBTA Vol 1 §8.3).
pub const GRH_LEN: usize = 40;
/// VCRC length (IBTA Vol 1 §7.8.2).
pub const VCRC_LEN: usize = 2;
/// GRH IPVer value (IBTA Vol 1 §8.3.1: 6).
pub const GRH_IPVER: u8 = 6;
/// GRH NxtHdr for an IBA transport header (IBTA Vol 1 §8.3.5: 0x1B).
pub const GRH_NXTHDR_IBA: u8 = 0x1B;
/// Largest PktLen: an 11-bit field (IBTA Vol 1 §7.7.8).
pub const MAX_PKT_LEN_WORDS: u16 = 0x07FF;

/// Link next header (IBTA Vol 1 §7.7.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkNextHeader {
    /// 0b00: raw packet.
    Raw,
    /// 0b01: IP non-IBA transport (IPv6 header follows).
    IpNonIba,
    /// 0b10: IBA local: BTH follows.
    IbaLocal,
    /// 0b11: IBA global: GRH follows.
    IbaGlobal,
}

impl LinkNextHeader {
    fn bits(self) -> u8 {
        match self {
            LinkNextHeader::Raw => 0,
            LinkNextHeader::IpNonIba => 1,
            LinkNextHeader::IbaLocal => 2,
            LinkNextHeader::IbaGlobal => 3,
        }
    }

    fn from_bits(b: u8) -> Self {
        match b & 3 {
            0 => LinkNextHeader::Raw,
            1 => LinkNextHeader::IpNonIba,
            2 => LinkNextHeader::IbaLocal,
            _ => LinkNextHeader::IbaGlobal,
        }
    }
}

/// High-level representation of an LRH.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LrhRepr {
    /// Virtual lane, 0–15 (15 = subnet management).
    pub vl: u8,
    /// Link version, 0.
    pub lver: u8,
    /// Service level, 0–15.
    pub sl: u8,
    /// What follows the LRH.
    pub lnh: LinkNextHeader,
    /// Destination LID.
    pub dlid: u16,
    /// Packet length in 4-byte words, LRH through ICRC (11 bits).
    pub pkt_len_words: u16,
    /// Source LID.
    pub slid: u16,
}

impl LrhRepr {
    /// Parses the first 8 bytes of `buf`.
    pub fn parse(buf: &[u8]) -> Result<Self> {
        need(buf, LRH_LEN)?;
        Ok(LrhRepr {
            vl: buf[0] >> 4,
            lver: buf[0] & 0x0F,
            sl: buf[1] >> 4,
            lnh: LinkNextHeader::from_bits(buf[1]),
            dlid: u16::from_be_bytes([buf[2], buf[3]]),
            pkt_len_words: u16::from_be_bytes([buf[4], buf[5]]) & MAX_PKT_LEN_WORDS,
            slid: u16::from_be_bytes([buf[6], buf[7]]),
        })
    }

    /// Header length.
    pub const fn buffer_len(&self) -> usize {
        LRH_LEN
    }

    /// Checks the fields that have fewer bits than their types.
    pub fn validate(&self) -> Result<()> {
        if self.vl > 15 || self.sl > 15 || self.lver > 15 {
            return Err(Error::OutOfRange("LRH VL, SL or LVer > 15"));
        }
        if self.pkt_len_words > MAX_PKT_LEN_WORDS {
            return Err(Error::OutOfRange("LRH PktLen > 2047 words"));
        }
        Ok(())
    }

    /// Writes the LRH (reserved bits zero). Panics if `buf` is shorter
    /// than 8 bytes.
    pub fn emit(&self, buf: &mut [u8]) {
        buf[0] = (self.vl << 4) | (self.lver & 0x0F);
        buf[1] = (self.sl << 4) | self.lnh.bits();
        buf[2..4].copy_from_slice(&self.dlid.to_be_bytes());
        buf[4..6].copy_from_slice(&(self.pkt_len_words & MAX_PKT_LEN_WORDS).to_be_bytes());
        buf[6..8].copy_from_slice(&self.slid.to_be_bytes());
    }
}

/// High-level representation of a GRH.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GrhRepr {
    /// Traffic class.
    pub tclass: u8,
    /// Flow label, 20 bits.
    pub flow_label: u32,
    /// Bytes after the GRH up to and including the ICRC.
    pub pay_len: u16,
    /// Next header (0x1B: IBA transport).
    pub nxt_hdr: u8,
    /// Hop limit.
    pub hop_limit: u8,
    /// Source GID.
    pub sgid: [u8; 16],
    /// Destination GID.
    pub dgid: [u8; 16],
}

impl GrhRepr {
    /// Parses the first 40 bytes of `buf`; IPVer must be 6.
    pub fn parse(buf: &[u8]) -> Result<Self> {
        need(buf, GRH_LEN)?;
        let w0 = u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]);
        if (w0 >> 28) as u8 != GRH_IPVER {
            return Err(Error::Malformed("GRH IPVer != 6"));
        }
        let mut sgid = [0u8; 16];
        let mut dgid = [0u8; 16];
        sgid.copy_from_slice(&buf[8..24]);
        dgid.copy_from_slice(&buf[24..40]);
        Ok(GrhRepr {
            tclass: (w0 >> 20) as u8,
            flow_label: w0 & 0x000F_FFFF,
            pay_len: u16::from_be_bytes([buf[4], buf[5]]),
            nxt_hdr: buf[6],
            hop_limit: buf[7],
            sgid,
            dgid,
        })
    }

    /// Header length.
    pub const fn buffer_len(&self) -> usize {
        GRH_LEN
    }

    /// Writes the GRH. Panics if `buf` is shorter than 40 bytes.
    pub fn emit(&self, buf: &mut [u8]) {
        let w0 = (u32::from(GRH_IPVER) << 28) | (u32::from(self.tclass) << 20) | (self.flow_label & 0x000F_FFFF);
        buf[0..4].copy_from_slice(&w0.to_be_bytes());
        buf[4..6].copy_from_slice(&self.pay_len.to_be_bytes());
        buf[6] = self.nxt_hdr;
        buf[7] = self.hop_limit;
        buf[8..24].copy_from_slice(&self.sgid);
        buf[24..40].copy_from_slice(&self.dgid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lrh_golden_and_roundtrip() {
        let lrh = LrhRepr { vl: 1, lver: 0, sl: 3, lnh: LinkNextHeader::IbaLocal, dlid: 0x0012, pkt_len_words: 0x0123, slid: 0x0034 };
        let mut b = [0u8; 8];
        lrh.emit(&mut b);
        assert_eq!(b, [0x10, 0x32, 0x00, 0x12, 0x01, 0x23, 0x00, 0x34]);
        assert_eq!(LrhRepr::parse(&b).unwrap(), lrh);
    }

    #[test]
    fn grh_roundtrip() {
        let grh = GrhRepr { tclass: 0xA5, flow_label: 0xBCDEF, pay_len: 300, nxt_hdr: GRH_NXTHDR_IBA, hop_limit: 64, sgid: [1; 16], dgid: [2; 16] };
        let mut b = [0u8; 40];
        grh.emit(&mut b);
        assert_eq!(&b[..4], &[0x6A, 0x5B, 0xCD, 0xEF]);
        assert_eq!(GrhRepr::parse(&b).unwrap(), grh);
        b[0] = 0x4A;
        assert!(GrhRepr::parse(&b).is_err());
    }
}
