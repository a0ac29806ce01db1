//! MAC Control frames: IEEE 802.3 PAUSE and IEEE 802.1Qbb priority-based
//! flow control (PFC).
//!
//! Both are Ethernet frames to 01-80-C2-00-00-01 with EtherType 0x8808
//! (IEEE 802.3-2018 §31.4.1), a 16-bit opcode, parameters, and zero
//! padding to the 64-byte minimum frame (the padding is the MAC Control
//! "reserved" field, IEEE 802.3 §31.4.1.6).
//!
//! * PAUSE (IEEE 802.3 Annex 31B): opcode 0x0001, one 16-bit pause_time.
//! * PFC (IEEE 802.3 Annex 31D, the frame IEEE 802.1Qbb-2011 clause 36
//!   uses): opcode 0x0101, a 16-bit priority-enable vector whose upper
//!   octet is zero and whose bit *i* enables priority *i*, then eight
//!   16-bit times, time\[i] for priority *i*.
//!
//! Times are in quanta of 512 bit times (IEEE 802.3 Annex 31B.2), so their
//! duration depends on the link rate; a time of 0 resumes at once. Times of
//! priorities whose enable bit is clear are ignored by the receiver and
//! emitted as given (normally 0).

use crate::error::{need, Error, Result};

/// Length of the opcode field.
pub const OPCODE_LEN: usize = 2;
/// PAUSE opcode (IEEE 802.3 Annex 31B.3).
pub const OPCODE_PAUSE: u16 = 0x0001;
/// PFC opcode (IEEE 802.3 Annex 31D.3).
pub const OPCODE_PFC: u16 = 0x0101;
/// One pause quantum in bit times (IEEE 802.3 Annex 31B.2).
pub const PAUSE_QUANTUM_BITS: u64 = 512;
/// Number of priorities a PFC frame covers (IEEE 802.1Qbb §36.1).
pub const PRIORITIES: usize = 8;
/// Length of the PFC opcode and parameters.
pub const PFC_LEN: usize = OPCODE_LEN + 2 + 2 * PRIORITIES;
/// Length of the PAUSE opcode and parameter.
pub const PAUSE_LEN: usize = OPCODE_LEN + 2;

/// A PAUSE request (IEEE 802.3 Annex 31B).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PauseRepr {
    /// Pause time in quanta (0 resumes).
    pub quanta: u16,
}

/// A PFC request (IEEE 802.1Qbb-2011 clause 36, IEEE 802.3 Annex 31D).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PfcRepr {
    /// Priority-enable vector: bit i set means time\[i] is valid.
    pub enable: u8,
    /// Pause time per priority, in quanta.
    pub quanta: [u16; PRIORITIES],
}

impl PfcRepr {
    /// A PFC frame pausing each priority in `priorities` for `quanta`
    /// (0 = resume). Priorities above 7 are ignored.
    pub fn pause(priorities: &[u8], quanta: u16) -> Self {
        let mut r = PfcRepr::default();
        for &p in priorities.iter().filter(|&&p| usize::from(p) < PRIORITIES) {
            r.enable |= 1 << p;
            r.quanta[usize::from(p)] = quanta;
        }
        r
    }

    /// Is priority `p` paused (enabled with a non-zero time)?
    pub fn is_paused(&self, p: u8) -> bool {
        usize::from(p) < PRIORITIES && self.enable & (1 << p) != 0 && self.quanta[usize::from(p)] != 0
    }
}

/// The MAC Control frames modelled here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MacControlRepr {
    /// 802.3x PAUSE.
    Pause(PauseRepr),
    /// 802.1Qbb PFC.
    Pfc(PfcRepr),
}

impl MacControlRepr {
    /// Parses a MAC Control payload (the bytes after the EtherType;
    /// trailing padding is allowed). A PFC vector with a non-zero upper
    /// octet is malformed.
    pub fn parse(buf: &[u8]) -> Result<Self> {
        need(buf, OPCODE_LEN)?;
        let be = |i: usize| u16::from_be_bytes([buf[i], buf[i + 1]]);
        match be(0) {
            OPCODE_PAUSE => {
                need(buf, PAUSE_LEN)?;
                Ok(MacControlRepr::Pause(PauseRepr { quanta: be(2) }))
            }
            OPCODE_PFC => {
                need(buf, PFC_LEN)?;
                let vector = be(2);
                if vector > 0xFF {
                    return Err(Error::Malformed("PFC priority-enable vector upper octet"));
                }
                let mut quanta = [0u16; PRIORITIES];
                for (i, q) in quanta.iter_mut().enumerate() {
                    *q = be(4 + 2 * i);
                }
                Ok(MacControlRepr::Pfc(PfcRepr { enable: vector as u8, quanta }))
            }
            _ => Err(Error::Unsupported("MAC Control opcode")),
        }
    }

    /// Length of opcode and parameters (padding excluded).
    pub const fn buffer_len(&self) -> usize {
        match self {
            MacControlRepr::Pause(_) => PAUSE_LEN,
            MacControlRepr::Pfc(_) => PFC_LEN,
        }
    }

    /// Writes opcode and parameters. Panics if `buf` is too short.
    pub fn emit(&self, buf: &mut [u8]) {
        match self {
            MacControlRepr::Pause(p) => {
                buf[0..2].copy_from_slice(&OPCODE_PAUSE.to_be_bytes());
                buf[2..4].copy_from_slice(&p.quanta.to_be_bytes());
            }
            MacControlRepr::Pfc(p) => {
                buf[0..2].copy_from_slice(&OPCODE_PFC.to_be_bytes());
                buf[2..4].copy_from_slice(&u16::from(p.enable).to_be_bytes());
                for (i, q) in p.quanta.iter().enumerate() {
                    buf[4 + 2 * i..6 + 2 * i].copy_from_slice(&q.to_be_bytes());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pfc_golden_bytes() {
        let r = MacControlRepr::Pfc(PfcRepr::pause(&[3, 4], 0xFFFF));
        let mut b = [0u8; PFC_LEN];
        r.emit(&mut b);
        // opcode 0x0101, vector 0b0001_1000, times for 3 and 4 only.
        assert_eq!(&b[..4], &[0x01, 0x01, 0x00, 0x18]);
        assert_eq!(&b[4..10], &[0, 0, 0, 0, 0, 0]);
        assert_eq!(&b[10..14], &[0xFF, 0xFF, 0xFF, 0xFF]);
        assert_eq!(&b[14..], &[0, 0, 0, 0, 0, 0]);
        assert_eq!(MacControlRepr::parse(&b).unwrap(), r);
    }

    #[test]
    fn pause_roundtrip() {
        let r = MacControlRepr::Pause(PauseRepr { quanta: 1234 });
        let mut b = [0u8; 42];
        r.emit(&mut b);
        assert_eq!(&b[..4], &[0x00, 0x01, 0x04, 0xD2]);
        assert_eq!(MacControlRepr::parse(&b).unwrap(), r);
    }

    #[test]
    fn resume_is_not_paused() {
        let r = PfcRepr::pause(&[3], 0);
        assert_eq!(r.enable, 0x08);
        assert!(!r.is_paused(3));
        assert!(PfcRepr::pause(&[3], 1).is_paused(3));
    }

    #[test]
    fn bad_vector_and_opcode() {
        let mut b = [0u8; PFC_LEN];
        b[..4].copy_from_slice(&[0x01, 0x01, 0x01, 0x00]);
        assert!(matches!(MacControlRepr::parse(&b), Err(Error::Malformed(_))));
        b[..2].copy_from_slice(&[0x00, 0x02]);
        assert!(matches!(MacControlRepr::parse(&b), Err(Error::Unsupported(_))));
    }
}
