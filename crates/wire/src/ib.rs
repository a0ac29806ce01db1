//! InfiniBand transport headers: BTH, RETH, AETH, ImmDt, and the RoCEv2
//! congestion notification packet (CNP).
//!
//! Sources: IBTA InfiniBand Architecture Specification Vol 1 (release 1.4)
//! §9.2 (BTH, opcodes in §9.2.1 and its opcode table), §9.3.3 (RETH),
//! §9.3.5 (AETH) with the syndrome encoding of §9.7.5.1, §9.3.6 (ImmDt);
//! IBTA Annex A17 "RoCEv2" for the CNP (opcode 0x81: BTH, then 16 reserved
//! bytes, then the ICRC) and for FECN/BECN in BTH byte 4; IBTA Vol 1 Annex A10
//! (congestion control) for native InfiniBand's CNP, opcode 0x80 (the value
//! Wireshark names "CNP", `epan/dissectors/packet-infiniband.c` `OpCodeMap`, tag
//! v4.0.17), laid out as the RoCEv2 one (16 reserved bytes), as
//! `model::frame::CNP_RESERVED` charges it.
//!
//! Modelled: the Reliable Connection opcodes (SEND, RDMA WRITE, RDMA READ,
//! ACKNOWLEDGE) and the CNP. Left out: UC/UD/RD/XRC opcodes' extra headers
//! (DETH, RDETH, XRCETH), atomics (AtomicETH, AtomicAckETH), IETH.

use crate::error::{need, Error, Result};
use core::fmt;

/// BTH length (IBTA Vol 1 §9.2).
pub const BTH_LEN: usize = 12;
/// RETH length (IBTA Vol 1 §9.3.3).
pub const RETH_LEN: usize = 16;
/// AETH length (IBTA Vol 1 §9.3.5).
pub const AETH_LEN: usize = 4;
/// ImmDt length (IBTA Vol 1 §9.3.6).
pub const IMMDT_LEN: usize = 4;
/// Reserved bytes after the BTH of a CNP (IBTA Annex A17).
pub const CNP_RESERVED_LEN: usize = 16;
/// ICRC length (IBTA Vol 1 §7.8.1).
pub const ICRC_LEN: usize = 4;
/// Largest PSN and QP number: both are 24-bit fields (IBTA Vol 1 §9.2).
pub const MAX_24: u32 = 0x00FF_FFFF;
/// The default partition key, full membership (IBTA Vol 1 §10.9.1.2).
pub const DEFAULT_PKEY: u16 = 0xFFFF;

/// A BTH opcode (IBTA Vol 1 §9.2.1): bits 7–5 transport, bits 4–0 operation.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Opcode(pub u8);

macro_rules! opcodes {
    ($($name:ident = $val:literal, $text:literal;)*) => {
        impl Opcode {
            $(
                #[doc = $text]
                pub const $name: Opcode = Opcode($val);
            )*

            /// The specification's name of this opcode, if modelled.
            pub fn name(self) -> Option<&'static str> {
                match self.0 {
                    $($val => Some($text),)*
                    _ => None,
                }
            }
        }
    };
}

opcodes! {
    RC_SEND_FIRST = 0x00, "RC SEND First";
    RC_SEND_MIDDLE = 0x01, "RC SEND Middle";
    RC_SEND_LAST = 0x02, "RC SEND Last";
    RC_SEND_LAST_IMM = 0x03, "RC SEND Last with Immediate";
    RC_SEND_ONLY = 0x04, "RC SEND Only";
    RC_SEND_ONLY_IMM = 0x05, "RC SEND Only with Immediate";
    RC_RDMA_WRITE_FIRST = 0x06, "RC RDMA WRITE First";
    RC_RDMA_WRITE_MIDDLE = 0x07, "RC RDMA WRITE Middle";
    RC_RDMA_WRITE_LAST = 0x08, "RC RDMA WRITE Last";
    RC_RDMA_WRITE_LAST_IMM = 0x09, "RC RDMA WRITE Last with Immediate";
    RC_RDMA_WRITE_ONLY = 0x0A, "RC RDMA WRITE Only";
    RC_RDMA_WRITE_ONLY_IMM = 0x0B, "RC RDMA WRITE Only with Immediate";
    RC_RDMA_READ_REQUEST = 0x0C, "RC RDMA READ Request";
    RC_RDMA_READ_RESPONSE_FIRST = 0x0D, "RC RDMA READ response First";
    RC_RDMA_READ_RESPONSE_MIDDLE = 0x0E, "RC RDMA READ response Middle";
    RC_RDMA_READ_RESPONSE_LAST = 0x0F, "RC RDMA READ response Last";
    RC_RDMA_READ_RESPONSE_ONLY = 0x10, "RC RDMA READ response Only";
    RC_ACKNOWLEDGE = 0x11, "RC Acknowledge";
    CNP = 0x81, "RoCEv2 CNP (Annex A17)";
    IB_CNP = 0x80, "InfiniBand CNP (Annex A10)";
}

/// The extension headers that follow the BTH, by opcode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExtHeaders {
    /// RETH present (RDMA WRITE First/Only, RDMA READ Request).
    pub reth: bool,
    /// AETH present (ACK, RDMA READ response First/Last/Only).
    pub aeth: bool,
    /// ImmDt present (the "with Immediate" opcodes).
    pub immdt: bool,
    /// 16 reserved bytes (CNP).
    pub cnp_reserved: bool,
}

impl ExtHeaders {
    /// Total length of the extension headers.
    pub fn len(&self) -> usize {
        usize::from(self.reth) * RETH_LEN
            + usize::from(self.aeth) * AETH_LEN
            + usize::from(self.immdt) * IMMDT_LEN
            + usize::from(self.cnp_reserved) * CNP_RESERVED_LEN
    }

    /// True when no extension header follows the BTH.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Opcode {
    /// Which extension headers follow the BTH (IBTA Vol 1 §9.2.1 opcode
    /// table, "Packet header layout" column), or `None` if not modelled.
    pub fn ext_headers(self) -> Option<ExtHeaders> {
        let none = ExtHeaders::default();
        let h = match self {
            Opcode::RC_SEND_FIRST
            | Opcode::RC_SEND_MIDDLE
            | Opcode::RC_SEND_LAST
            | Opcode::RC_SEND_ONLY
            | Opcode::RC_RDMA_WRITE_MIDDLE
            | Opcode::RC_RDMA_WRITE_LAST
            | Opcode::RC_RDMA_READ_RESPONSE_MIDDLE => none,
            Opcode::RC_SEND_LAST_IMM | Opcode::RC_SEND_ONLY_IMM | Opcode::RC_RDMA_WRITE_LAST_IMM => ExtHeaders { immdt: true, ..none },
            Opcode::RC_RDMA_WRITE_FIRST | Opcode::RC_RDMA_WRITE_ONLY | Opcode::RC_RDMA_READ_REQUEST => ExtHeaders { reth: true, ..none },
            Opcode::RC_RDMA_WRITE_ONLY_IMM => ExtHeaders { reth: true, immdt: true, ..none },
            Opcode::RC_RDMA_READ_RESPONSE_FIRST | Opcode::RC_RDMA_READ_RESPONSE_LAST | Opcode::RC_RDMA_READ_RESPONSE_ONLY | Opcode::RC_ACKNOWLEDGE => {
                ExtHeaders { aeth: true, ..none }
            }
            Opcode::CNP | Opcode::IB_CNP => ExtHeaders { cnp_reserved: true, ..none },
            _ => return None,
        };
        Some(h)
    }

    /// True for opcodes that may carry a payload.
    pub fn carries_payload(self) -> bool {
        !matches!(self, Opcode::RC_ACKNOWLEDGE | Opcode::RC_RDMA_READ_REQUEST | Opcode::CNP | Opcode::IB_CNP)
    }
}

impl fmt::Debug for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "Opcode({:#04x} {n})", self.0),
            None => write!(f, "Opcode({:#04x})", self.0),
        }
    }
}

mod bth {
    use core::ops::Range;
    pub const OPCODE: usize = 0;
    pub const FLAGS: usize = 1; // SE(7) M(6) PadCnt(5:4) TVer(3:0)
    pub const PKEY: Range<usize> = 2..4;
    pub const BYTE4: usize = 4; // FECN(7) BECN(6) resv6(5:0); "resv8a" before Annex A17
    pub const DEST_QP: Range<usize> = 5..8;
    pub const ACKREQ: usize = 8; // A(7) resv7(6:0)
    pub const PSN: Range<usize> = 9..12;
}

fn be24(b: &[u8]) -> u32 {
    (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2])
}

fn put_be24(b: &mut [u8], v: u32) {
    b[0] = (v >> 16) as u8;
    b[1] = (v >> 8) as u8;
    b[2] = v as u8;
}

/// A read/write view of a BTH.
#[derive(Debug, Clone)]
pub struct BthPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> BthPacket<T> {
    /// Wraps `buffer` without checks.
    pub const fn new_unchecked(buffer: T) -> Self {
        BthPacket { buffer }
    }

    /// Wraps `buffer`, checking it holds 12 bytes.
    pub fn new_checked(buffer: T) -> Result<Self> {
        need(buffer.as_ref(), BTH_LEN)?;
        Ok(Self::new_unchecked(buffer))
    }

    fn b(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    /// Opcode.
    pub fn opcode(&self) -> Opcode {
        Opcode(self.b()[bth::OPCODE])
    }
    /// Solicited event.
    pub fn solicited(&self) -> bool {
        self.b()[bth::FLAGS] & 0x80 != 0
    }
    /// Migration request.
    pub fn mig_req(&self) -> bool {
        self.b()[bth::FLAGS] & 0x40 != 0
    }
    /// Pad count: bytes (0–3) padding the payload to a 4-byte multiple.
    pub fn pad_count(&self) -> u8 {
        (self.b()[bth::FLAGS] >> 4) & 0x3
    }
    /// Transport header version (0).
    pub fn tver(&self) -> u8 {
        self.b()[bth::FLAGS] & 0x0F
    }
    /// Partition key.
    pub fn pkey(&self) -> u16 {
        u16::from_be_bytes([self.b()[2], self.b()[3]])
    }
    /// Forward explicit congestion notification.
    pub fn fecn(&self) -> bool {
        self.b()[bth::BYTE4] & 0x80 != 0
    }
    /// Backward explicit congestion notification.
    pub fn becn(&self) -> bool {
        self.b()[bth::BYTE4] & 0x40 != 0
    }
    /// Destination QP, 24 bits.
    pub fn dest_qp(&self) -> u32 {
        be24(&self.b()[bth::DEST_QP])
    }
    /// Acknowledge request.
    pub fn ack_req(&self) -> bool {
        self.b()[bth::ACKREQ] & 0x80 != 0
    }
    /// Packet sequence number, 24 bits.
    pub fn psn(&self) -> u32 {
        be24(&self.b()[bth::PSN])
    }
}

/// High-level representation of a BTH.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BthRepr {
    /// Opcode.
    pub opcode: Opcode,
    /// Solicited event.
    pub solicited: bool,
    /// Migration request (APM state; 1 once migrated).
    pub mig_req: bool,
    /// Pad count, 0–3. Frame builders compute it from the payload length.
    pub pad_count: u8,
    /// Transport header version; 0 in every released spec.
    pub tver: u8,
    /// Partition key.
    pub pkey: u16,
    /// FECN (IBTA Annex A17: set by the network to signal congestion).
    pub fecn: bool,
    /// BECN (set by the responder in a CNP).
    pub becn: bool,
    /// Destination QP, < 2^24.
    pub dest_qp: u32,
    /// Acknowledge request.
    pub ack_req: bool,
    /// PSN, < 2^24.
    pub psn: u32,
}

impl BthRepr {
    /// A BTH with the given opcode, QP and PSN, default P_Key, everything
    /// else clear.
    pub const fn new(opcode: Opcode, dest_qp: u32, psn: u32) -> Self {
        BthRepr { opcode, solicited: false, mig_req: false, pad_count: 0, tver: 0, pkey: DEFAULT_PKEY, fecn: false, becn: false, dest_qp, ack_req: false, psn }
    }

    /// Parses a BTH. Reserved bits are ignored.
    pub fn parse<T: AsRef<[u8]>>(p: &BthPacket<T>) -> Result<Self> {
        need(p.b(), BTH_LEN)?;
        Ok(BthRepr {
            opcode: p.opcode(),
            solicited: p.solicited(),
            mig_req: p.mig_req(),
            pad_count: p.pad_count(),
            tver: p.tver(),
            pkey: p.pkey(),
            fecn: p.fecn(),
            becn: p.becn(),
            dest_qp: p.dest_qp(),
            ack_req: p.ack_req(),
            psn: p.psn(),
        })
    }

    /// Header length.
    pub const fn buffer_len(&self) -> usize {
        BTH_LEN
    }

    /// Checks the fields that have fewer bits than their types.
    pub fn validate(&self) -> Result<()> {
        if self.dest_qp > MAX_24 {
            return Err(Error::OutOfRange("destination QP >= 2^24"));
        }
        if self.psn > MAX_24 {
            return Err(Error::OutOfRange("PSN >= 2^24"));
        }
        if self.pad_count > 3 {
            return Err(Error::OutOfRange("pad count > 3"));
        }
        if self.tver > 15 {
            return Err(Error::OutOfRange("TVer > 15"));
        }
        Ok(())
    }

    /// Writes the BTH, reserved bits zero, out-of-range fields masked.
    /// Panics if `buf` is shorter than 12 bytes.
    pub fn emit(&self, buf: &mut [u8]) {
        let b = &mut buf[..BTH_LEN];
        b[bth::OPCODE] = self.opcode.0;
        b[bth::FLAGS] = (u8::from(self.solicited) << 7) | (u8::from(self.mig_req) << 6) | ((self.pad_count & 0x3) << 4) | (self.tver & 0x0F);
        b[bth::PKEY].copy_from_slice(&self.pkey.to_be_bytes());
        b[bth::BYTE4] = (u8::from(self.fecn) << 7) | (u8::from(self.becn) << 6);
        put_be24(&mut b[bth::DEST_QP], self.dest_qp & MAX_24);
        b[bth::ACKREQ] = u8::from(self.ack_req) << 7;
        put_be24(&mut b[bth::PSN], self.psn & MAX_24);
    }
}

/// High-level representation of a RETH (IBTA Vol 1 §9.3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RethRepr {
    /// Remote virtual address.
    pub va: u64,
    /// Remote key.
    pub rkey: u32,
    /// Length of the whole RDMA operation in bytes.
    pub dma_len: u32,
}

impl RethRepr {
    /// Parses the first 16 bytes of `buf`.
    pub fn parse(buf: &[u8]) -> Result<Self> {
        need(buf, RETH_LEN)?;
        let mut va = [0u8; 8];
        va.copy_from_slice(&buf[0..8]);
        Ok(RethRepr {
            va: u64::from_be_bytes(va),
            rkey: u32::from_be_bytes([buf[8], buf[9], buf[10], buf[11]]),
            dma_len: u32::from_be_bytes([buf[12], buf[13], buf[14], buf[15]]),
        })
    }

    /// Header length.
    pub const fn buffer_len(&self) -> usize {
        RETH_LEN
    }

    /// Writes the RETH. Panics if `buf` is shorter than 16 bytes.
    pub fn emit(&self, buf: &mut [u8]) {
        buf[0..8].copy_from_slice(&self.va.to_be_bytes());
        buf[8..12].copy_from_slice(&self.rkey.to_be_bytes());
        buf[12..16].copy_from_slice(&self.dma_len.to_be_bytes());
    }
}

/// NAK codes (IBTA Vol 1 §9.7.5.1, AETH syndrome table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NakCode {
    /// 0: PSN sequence error: the responder expected another PSN; the
    /// requester goes back to it (go-back-N).
    PsnSequenceError,
    /// 1: invalid request.
    InvalidRequest,
    /// 2: remote access error.
    RemoteAccessError,
    /// 3: remote operational error.
    RemoteOperationalError,
    /// 4: invalid RD request.
    InvalidRdRequest,
    /// 5–31: reserved values, kept as read.
    Reserved(u8),
}

impl NakCode {
    fn bits(self) -> u8 {
        match self {
            NakCode::PsnSequenceError => 0,
            NakCode::InvalidRequest => 1,
            NakCode::RemoteAccessError => 2,
            NakCode::RemoteOperationalError => 3,
            NakCode::InvalidRdRequest => 4,
            NakCode::Reserved(v) => v & 0x1F,
        }
    }

    fn from_bits(v: u8) -> Self {
        match v & 0x1F {
            0 => NakCode::PsnSequenceError,
            1 => NakCode::InvalidRequest,
            2 => NakCode::RemoteAccessError,
            3 => NakCode::RemoteOperationalError,
            4 => NakCode::InvalidRdRequest,
            r => NakCode::Reserved(r),
        }
    }
}

/// The AETH syndrome (IBTA Vol 1 §9.7.5.1): bit 7 reserved, bits 6–5 the
/// kind (00 ACK, 01 RNR NAK, 10 reserved, 11 NAK), bits 4–0 its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Syndrome {
    /// Positive acknowledgement with a 5-bit credit count (31 = credits
    /// not reported / unlimited, the value RC responders without
    /// end-to-end flow control send).
    Ack {
        /// Encoded credit count, 0–31.
        credits: u8,
    },
    /// Receiver not ready; retry after the encoded RNR timer value (0–31).
    RnrNak {
        /// Encoded minimum RNR NAK timer field, 0–31.
        timer: u8,
    },
    /// Negative acknowledgement.
    Nak(NakCode),
}

impl Syndrome {
    /// The syndrome byte.
    pub fn to_byte(self) -> u8 {
        match self {
            Syndrome::Ack { credits } => credits & 0x1F,
            Syndrome::RnrNak { timer } => 0x20 | (timer & 0x1F),
            Syndrome::Nak(code) => 0x60 | code.bits(),
        }
    }

    /// Decodes a syndrome byte; the reserved kind 0b10 is malformed.
    pub fn from_byte(b: u8) -> Result<Self> {
        let v = b & 0x1F;
        match (b >> 5) & 0x3 {
            0b00 => Ok(Syndrome::Ack { credits: v }),
            0b01 => Ok(Syndrome::RnrNak { timer: v }),
            0b11 => Ok(Syndrome::Nak(NakCode::from_bits(v))),
            _ => Err(Error::Malformed("AETH syndrome kind 0b10 (reserved)")),
        }
    }
}

/// High-level representation of an AETH (IBTA Vol 1 §9.3.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AethRepr {
    /// Syndrome.
    pub syndrome: Syndrome,
    /// Message sequence number, 24 bits.
    pub msn: u32,
}

impl AethRepr {
    /// Parses the first 4 bytes of `buf`.
    pub fn parse(buf: &[u8]) -> Result<Self> {
        need(buf, AETH_LEN)?;
        Ok(AethRepr { syndrome: Syndrome::from_byte(buf[0])?, msn: be24(&buf[1..4]) })
    }

    /// Header length.
    pub const fn buffer_len(&self) -> usize {
        AETH_LEN
    }

    /// Writes the AETH. Panics if `buf` is shorter than 4 bytes.
    pub fn emit(&self, buf: &mut [u8]) {
        buf[0] = self.syndrome.to_byte();
        put_be24(&mut buf[1..4], self.msn & MAX_24);
    }
}

/// The transport part of a packet: BTH plus extension headers, as far as
/// the opcode defines them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransportRepr {
    /// Base transport header.
    pub bth: BthRepr,
    /// RETH, required exactly when the opcode has one.
    pub reth: Option<RethRepr>,
    /// AETH, required exactly when the opcode has one.
    pub aeth: Option<AethRepr>,
    /// Immediate data, required exactly when the opcode has ImmDt.
    pub imm: Option<u32>,
}

impl TransportRepr {
    /// Parses BTH and extension headers; returns them and their length.
    pub fn parse(buf: &[u8]) -> Result<(Self, usize)> {
        let bth = BthRepr::parse(&BthPacket::new_checked(buf)?)?;
        let ext = bth.opcode.ext_headers().ok_or(Error::Unsupported("BTH opcode"))?;
        let len = BTH_LEN + ext.len();
        need(buf, len)?;
        let mut off = BTH_LEN;
        let mut reth = None;
        let mut aeth = None;
        let mut imm = None;
        if ext.reth {
            reth = Some(RethRepr::parse(&buf[off..])?);
            off += RETH_LEN;
        }
        if ext.aeth {
            aeth = Some(AethRepr::parse(&buf[off..])?);
            off += AETH_LEN;
        }
        if ext.immdt {
            imm = Some(u32::from_be_bytes([buf[off], buf[off + 1], buf[off + 2], buf[off + 3]]));
            off += IMMDT_LEN;
        }
        if ext.cnp_reserved {
            off += CNP_RESERVED_LEN;
        }
        debug_assert_eq!(off, len);
        Ok((TransportRepr { bth, reth, aeth, imm }, len))
    }

    /// Checks ranges and that the optional headers match the opcode.
    pub fn validate(&self) -> Result<()> {
        self.bth.validate()?;
        let ext = self.bth.opcode.ext_headers().ok_or(Error::Unsupported("BTH opcode"))?;
        if ext.reth != self.reth.is_some() {
            return Err(Error::Malformed("RETH presence does not match the opcode"));
        }
        if ext.aeth != self.aeth.is_some() {
            return Err(Error::Malformed("AETH presence does not match the opcode"));
        }
        if ext.immdt != self.imm.is_some() {
            return Err(Error::Malformed("ImmDt presence does not match the opcode"));
        }
        if let Some(a) = self.aeth {
            if a.msn > MAX_24 {
                return Err(Error::OutOfRange("MSN >= 2^24"));
            }
        }
        Ok(())
    }

    /// Length of BTH plus extension headers.
    pub fn buffer_len(&self) -> usize {
        BTH_LEN
            + self.reth.map_or(0, |_| RETH_LEN)
            + self.aeth.map_or(0, |_| AETH_LEN)
            + self.imm.map_or(0, |_| IMMDT_LEN)
            + if self.has_cnp_reserved() { CNP_RESERVED_LEN } else { 0 }
    }

    /// A CNP (RoCEv2's or InfiniBand's): 16 reserved bytes follow the BTH.
    fn has_cnp_reserved(&self) -> bool {
        self.bth.opcode.ext_headers().is_some_and(|e| e.cnp_reserved)
    }

    /// Writes BTH and extension headers in specification order
    /// (BTH, RETH, AETH, ImmDt; CNP reserved bytes zeroed). Panics if
    /// `buf` is shorter than [`buffer_len`](Self::buffer_len).
    pub fn emit(&self, buf: &mut [u8]) {
        self.bth.emit(buf);
        let mut off = BTH_LEN;
        if let Some(r) = self.reth {
            r.emit(&mut buf[off..]);
            off += RETH_LEN;
        }
        if let Some(a) = self.aeth {
            a.emit(&mut buf[off..]);
            off += AETH_LEN;
        }
        if let Some(i) = self.imm {
            buf[off..off + 4].copy_from_slice(&i.to_be_bytes());
            off += IMMDT_LEN;
        }
        if self.has_cnp_reserved() {
            buf[off..off + CNP_RESERVED_LEN].fill(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bth_golden_bytes() {
        // Hand-derived: opcode 0x06, SE=0 M=1 Pad=2 TVer=0 -> 0x60,
        // P_Key 0xFFFF, FECN=1 -> 0x80, QP 0x0000D3, A=1 -> 0x80,
        // PSN 13571856 = 0xCF1710.
        let bth = BthRepr { mig_req: true, pad_count: 2, fecn: true, ack_req: true, ..BthRepr::new(Opcode::RC_RDMA_WRITE_FIRST, 211, 13_571_856) };
        let mut b = [0u8; 12];
        bth.emit(&mut b);
        assert_eq!(b, [0x06, 0x60, 0xFF, 0xFF, 0x80, 0x00, 0x00, 0xD3, 0x80, 0xCF, 0x17, 0x10]);
        assert_eq!(BthRepr::parse(&BthPacket::new_checked(&b[..]).unwrap()).unwrap(), bth);
    }

    #[test]
    fn syndromes() {
        assert_eq!(Syndrome::Ack { credits: 31 }.to_byte(), 0x1F);
        assert_eq!(Syndrome::RnrNak { timer: 14 }.to_byte(), 0x2E);
        assert_eq!(Syndrome::Nak(NakCode::PsnSequenceError).to_byte(), 0x60);
        assert_eq!(Syndrome::Nak(NakCode::RemoteAccessError).to_byte(), 0x62);
        for b in 0..=255u8 {
            if let Ok(s) = Syndrome::from_byte(b) {
                assert_eq!(s.to_byte(), b & 0x7F);
            } else {
                assert_eq!((b >> 5) & 3, 0b10);
            }
        }
    }

    #[test]
    fn transport_roundtrip() {
        let cases = [
            TransportRepr {
                bth: BthRepr::new(Opcode::RC_RDMA_WRITE_FIRST, 0x12, 7),
                reth: Some(RethRepr { va: 0x1122_3344_5566_7788, rkey: 0xABCD, dma_len: 3000 }),
                aeth: None,
                imm: None,
            },
            TransportRepr {
                bth: BthRepr::new(Opcode::RC_ACKNOWLEDGE, 0x34, 9),
                reth: None,
                aeth: Some(AethRepr { syndrome: Syndrome::Nak(NakCode::PsnSequenceError), msn: 5 }),
                imm: None,
            },
            TransportRepr { bth: BthRepr::new(Opcode::RC_SEND_ONLY_IMM, 1, 2), reth: None, aeth: None, imm: Some(0xDEAD_BEEF) },
            TransportRepr { bth: BthRepr { becn: true, ..BthRepr::new(Opcode::CNP, 0xD2, 0) }, reth: None, aeth: None, imm: None },
        ];
        for t in cases {
            t.validate().unwrap();
            let mut b = vec![0xEEu8; t.buffer_len()];
            t.emit(&mut b);
            let (p, len) = TransportRepr::parse(&b).unwrap();
            assert_eq!(len, t.buffer_len());
            assert_eq!(p, t);
        }
    }

    #[test]
    fn validate_catches_mismatch() {
        let t = TransportRepr { bth: BthRepr::new(Opcode::RC_RDMA_WRITE_FIRST, 1, 1), reth: None, aeth: None, imm: None };
        assert!(t.validate().is_err());
        let t = TransportRepr { bth: BthRepr::new(Opcode::RC_SEND_ONLY, 1 << 24, 1), ..t };
        assert_eq!(t.validate(), Err(Error::OutOfRange("destination QP >= 2^24")));
    }
}
