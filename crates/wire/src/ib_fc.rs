//! The InfiniBand flow-control packet: a link packet carrying one VL's credits.
//!
//! Source: IBTA Vol 1 §7.9.4 (flow-control packet format) and §7.9.2–7.9.3 (FCTBS, FCCL).
//! Six bytes: `Op (4 bits) | FCTBS (12) | VL (4) | FCCL (12) | LPCRC (16)`, the first four
//! big-endian as the LRH is. Op 0 is a normal flow-control packet, 1 the initialisation
//! packet. FCTBS is the sender's total blocks sent on the VL, FCCL the receiver's credit
//! limit, both modulo 4096. The LPCRC is the link packet's CRC over its first four bytes;
//! it is computed here with the VCRC's CRC-16 ([`crate::crc::vcrc16`]) and sent least
//! significant byte first like the VCRC, an assumption by analogy that no capture pins:
//! Wireshark shows the LPCRC but does not check it. (Wireshark 4.0 cannot show a correct
//! 6-byte FCP at all: [`crate::erf`] says why.)
//!
//! Leaves out: nothing of the packet; the physical-layer delimiters around it are not
//! modelled, as for every IB packet here.

use crate::error::{need, Error, Result};

/// A flow-control packet is 6 bytes (IBTA Vol 1 §7.9.4).
pub const FCP_LEN: usize = 6;

/// The credit counters are 12 bits (IBTA Vol 1 §7.9.2: modulo 4096).
pub const CREDIT_MASK: u16 = 0x0FFF;

/// One flow-control packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowControlRepr {
    /// 0: normal; 1: initialisation.
    pub op: u8,
    /// Flow Control Total Blocks Sent, modulo 4096.
    pub fctbs: u16,
    /// The data VL (0–14) whose credits it carries.
    pub vl: u8,
    /// Flow Control Credit Limit, modulo 4096.
    pub fccl: u16,
}

impl FlowControlRepr {
    /// Checks every field against its width.
    pub fn validate(&self) -> Result<()> {
        if self.op > 1 {
            return Err(Error::OutOfRange("flow-control Op > 1"));
        }
        if self.vl > 14 {
            return Err(Error::OutOfRange("flow-control VL > 14"));
        }
        if self.fctbs > CREDIT_MASK || self.fccl > CREDIT_MASK {
            return Err(Error::OutOfRange("FCTBS or FCCL > 4095"));
        }
        Ok(())
    }

    /// The six bytes, LPCRC included.
    pub fn emit(&self) -> Result<[u8; FCP_LEN]> {
        self.validate()?;
        let w0 = (u16::from(self.op) << 12) | self.fctbs;
        let w1 = (u16::from(self.vl) << 12) | self.fccl;
        let mut b = [0u8; FCP_LEN];
        b[0..2].copy_from_slice(&w0.to_be_bytes());
        b[2..4].copy_from_slice(&w1.to_be_bytes());
        let crc = crate::crc::vcrc16(&b[..4]);
        b[4..6].copy_from_slice(&crc.to_le_bytes());
        Ok(b)
    }

    /// Parses a flow-control packet, checking its LPCRC.
    pub fn parse(buf: &[u8]) -> Result<Self> {
        need(buf, FCP_LEN)?;
        if crate::crc::vcrc16(&buf[..4]).to_le_bytes() != buf[4..6] {
            return Err(Error::BadChecksum("LPCRC"));
        }
        let w0 = u16::from_be_bytes([buf[0], buf[1]]);
        let w1 = u16::from_be_bytes([buf[2], buf[3]]);
        let r = FlowControlRepr { op: (w0 >> 12) as u8, fctbs: w0 & CREDIT_MASK, vl: (w1 >> 12) as u8, fccl: w1 & CREDIT_MASK };
        r.validate()?;
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_in_their_bits_and_back() {
        let r = FlowControlRepr { op: 0, fctbs: 0x0ABC, vl: 2, fccl: 0x0040 };
        let b = r.emit().unwrap();
        assert_eq!(&b[..4], &[0x0A, 0xBC, 0x20, 0x40]);
        assert_eq!(FlowControlRepr::parse(&b).unwrap(), r);
        let mut bad = b;
        bad[3] ^= 1;
        assert_eq!(FlowControlRepr::parse(&bad), Err(Error::BadChecksum("LPCRC")));
        assert!(FlowControlRepr { fccl: 4096, ..r }.emit().is_err());
        assert!(FlowControlRepr { vl: 15, ..r }.emit().is_err());
    }
}
