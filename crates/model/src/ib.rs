//! InfiniBand packet sizes, link-level credit arithmetic and technology profiles.
//!
//! Sources:
//! * Packet layout (IBTA Vol. 1 Rel. 1.4): LRH 8 (§7.7), optional GRH 40 (§8.3), BTH 12,
//!   RETH 16, AETH 4 (ch. 9), payload padded to 4 bytes (BTH PadCnt), ICRC 4 and VCRC 2
//!   (§7.8). The same transport headers as RoCEv2 ([`crate::frame`]), without
//!   Ethernet/IP/UDP.
//! * Credits (§7.9): buffer space is counted in 64-byte blocks; a packet needs
//!   ceil(bytes from the LRH to the VCRC / 64) blocks. The receiver advertises the flow
//!   control credit limit FCCL = ABR + min(free blocks, 2048) (mod 4096), where ABR counts
//!   the blocks it has received; the sender keeps FCTBS, the blocks it has sent (mod 4096),
//!   and may send a packet of `b` blocks only if (FCCL − (FCTBS + b)) mod 4096 ≤ 2048.
//!   So at most 2048 blocks = 128 KiB are outstanding per virtual lane, whatever the
//!   receive buffer: a link whose round trip holds more than that cannot run at line rate.
//! * A flow-control packet is 6 bytes: Op 4 bits, FCTBS 12, VL 4, FCCL 12, LPCRC 16 (§7.9.4).
//! * Framing on the wire: at EDR and faster (64b/66b and RS-FEC, whose overhead is in the
//!   signalling rate, so the data rate is the nominal 100/200/400/800 Gb/s) a packet is
//!   delimited by a start and an end control character and followed by idles. fabriclab
//!   charges [`IB_FRAMING`] bytes per packet for delimiters and the minimum idle; see its
//!   doc for the source.

use units::{BitRate, Bytes, SimDuration};

pub const LRH: u64 = 8;
pub const GRH: u64 = 40;
pub const VCRC: u64 = 2;
/// Bytes per flow-control block (IBTA Vol. 1 §7.9.1).
pub const BLOCK: u64 = 64;
/// The FCTBS/FCCL/ABR counters are 12 bits wide (§7.9.4).
pub const CREDIT_MODULUS: u32 = 4096;
/// The most blocks a receiver may advertise beyond what it has received (§7.9.4.3).
pub const MAX_CREDITS: u32 = 2048;
/// A flow-control packet (§7.9.4): 6 bytes.
pub const FCP: u64 = 6;
/// Link-layer framing charged per packet: start delimiter, end delimiter and the minimum
/// idle between packets, in byte times of the data rate. IBTA Vol. 1 §5.3 (8b/10b
/// lanes): SDP/SLP and EGP are one symbol each per lane-striped packet, with at least
/// one idle between packets; 64b/66b lanes (FDR and faster, Vol. 2 ch. 5/6) carry them as
/// control blocks. 8 bytes is the conservative figure used here for all speeds.
pub const IB_FRAMING: u64 = 8;

/// Which extension header follows the BTH of an IB packet (the same cases as RoCEv2).
pub use crate::frame::Transport;

/// Bytes from the LRH to the VCRC of a native IB packet carrying `payload` bytes.
pub fn ib_packet(grh: bool, t: Transport, payload: Bytes) -> Bytes {
    let padded = payload.0.div_ceil(4) * 4;
    let ext = match t {
        Transport::WriteFirst => crate::frame::RETH,
        Transport::WriteRest => 0,
        Transport::Ack => crate::frame::AETH,
        // IB congestion control's CNP (Annex A10.2.3): BTH with opcode CNP, 16 reserved bytes.
        Transport::Cnp => crate::frame::CNP_RESERVED,
    };
    Bytes(LRH + if grh { GRH } else { 0 } + crate::frame::BTH + ext + padded + crate::frame::ICRC + VCRC)
}

/// Bytes of link time an IB packet occupies: the packet plus framing.
pub fn ib_wire(packet: Bytes) -> Bytes {
    Bytes(packet.0 + IB_FRAMING)
}

/// Flow-control blocks a packet of `bytes` needs (§7.9.1: whole 64-byte blocks).
pub fn blocks(bytes: Bytes) -> u32 {
    bytes.0.div_ceil(BLOCK) as u32
}

/// The credit limit a receiver advertises (§7.9.4.3): ABR plus the free blocks, at most 2048.
pub fn fccl(abr: u16, free_blocks: u32) -> u16 {
    ((abr as u32 + free_blocks.min(MAX_CREDITS)) % CREDIT_MODULUS) as u16
}

/// Whether a sender holding `fctbs` (blocks sent) may send `b` more blocks under limit
/// `fccl` (§7.9.4.2): (FCCL − (FCTBS + b)) mod 4096 ≤ 2048.
pub fn may_send(fccl: u16, fctbs: u16, b: u32) -> bool {
    let m = CREDIT_MODULUS as i64;
    let d = (fccl as i64 - (fctbs as i64 + b as i64)).rem_euclid(m);
    d <= MAX_CREDITS as i64
}

/// RC local ACK timeout: 4.096 µs × 2^timeout (IBTA Vol. 1 §9.7.6.1.3, QP attribute
/// `timeout`, 5 bits; 0 means infinite, which fabriclab rejects in scenarios).
pub fn local_ack_timeout(timeout: u32) -> SimDuration {
    SimDuration(4_096_000u64 << timeout)
}

/// How long an RC requester keeps retrying an unacknowledged packet before its QP moves to
/// the error state: the first local ACK timeout plus `retry_cnt` retries, each waiting one
/// more timeout, 4.096 µs × 2^timeout × (retry_cnt + 1) (IBTA Vol. 1 §9.7.6.1.3, QP
/// attributes `timeout` and `retry_cnt`, 3 bits). A pause longer than this (a PFC storm)
/// breaks the connection.
pub fn retry_budget(timeout: u32, retry_cnt: u32) -> SimDuration {
    SimDuration(local_ack_timeout(timeout).0 * (u64::from(retry_cnt) + 1))
}

/// NCCL's defaults for IB QPs: NCCL_IB_TIMEOUT = 20 (4.096 µs × 2^20 ≈ 4.3 s) and
/// NCCL_IB_RETRY_CNT = 7 (NCCL environment-variable documentation, "NCCL_IB_TIMEOUT" and
/// "NCCL_IB_RETRY_CNT").
pub const NCCL_IB_TIMEOUT: u32 = 20;
pub const NCCL_IB_RETRY_CNT: u32 = 7;

/// IB link generations by their 4x data rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Generation {
    Edr,
    Hdr,
    Ndr,
    Xdr,
}

impl Generation {
    /// The generation whose 4x port runs at `rate` (EDR 100, HDR 200, NDR 400, XDR 800 Gb/s).
    pub fn of(rate: BitRate) -> Option<Generation> {
        match rate.0 {
            100_000_000_000 => Some(Generation::Edr),
            200_000_000_000 => Some(Generation::Hdr),
            400_000_000_000 => Some(Generation::Ndr),
            800_000_000_000 => Some(Generation::Xdr),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Generation::Edr => "EDR",
            Generation::Hdr => "HDR",
            Generation::Ndr => "NDR",
            Generation::Xdr => "XDR",
        }
    }

    /// Port-to-port switch latency of NVIDIA's switch of that generation, from its datasheet:
    /// Switch-IB 2 (EDR, SB7800) 90 ns; Quantum (HDR, QM8700) 130 ns; Quantum-2 (NDR,
    /// QM9700) and Quantum-X800 (XDR) are quoted in the same class; fabriclab uses 130 ns
    /// for both where the datasheet gives no figure.
    pub fn switch_latency(self) -> SimDuration {
        match self {
            Generation::Edr => SimDuration::from_ns(90),
            Generation::Hdr | Generation::Ndr | Generation::Xdr => SimDuration::from_ns(130),
        }
    }

    /// Where [`Self::switch_latency`] comes from, as reports print it.
    pub fn switch_latency_source(self) -> &'static str {
        match self {
            Generation::Edr => "NVIDIA Switch-IB 2 (SB7800) datasheet: 90 ns",
            Generation::Hdr => "NVIDIA Quantum (QM8700) datasheet class: 130 ns",
            Generation::Ndr => "Quantum-2 (QM9700): no datasheet figure, HDR's 130 ns",
            Generation::Xdr => "Quantum-X800: no datasheet figure, HDR's 130 ns",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_sizes() {
        // LRH 8 + BTH 12 + RETH 16 + 4096 + ICRC 4 + VCRC 2 = 4138.
        assert_eq!(ib_packet(false, Transport::WriteFirst, Bytes(4096)), Bytes(4138));
        assert_eq!(ib_packet(false, Transport::WriteRest, Bytes(4096)), Bytes(4122));
        assert_eq!(ib_packet(true, Transport::WriteRest, Bytes(4096)), Bytes(4162));
        // ACK: 8 + 12 + 4 + 4 + 2 = 30.
        assert_eq!(ib_packet(false, Transport::Ack, Bytes(0)), Bytes(30));
        assert_eq!(ib_packet(false, Transport::WriteRest, Bytes(1)), Bytes(30));
        assert_eq!(blocks(Bytes(4138)), 65);
        assert_eq!(blocks(Bytes(30)), 1);
        assert_eq!(blocks(Bytes(64)), 1);
    }

    #[test]
    fn credit_arithmetic() {
        assert_eq!(fccl(0, 10_000), 2048);
        assert_eq!(fccl(4000, 200), 104);
        // With FCCL = FCTBS + 2048 a sender may send 2048 blocks, not 2049.
        assert!(may_send(2048, 0, 2048));
        assert!(!may_send(2048, 0, 2049));
        // Wrapped counters.
        assert!(may_send(100, 4000, 196));
        assert!(!may_send(100, 4000, 197));
        assert!(!may_send(0, 0, 1));
        assert_eq!(local_ack_timeout(14), SimDuration(67_108_864_000));
        // NCCL's defaults: 4.096 µs × 2^20 × 8 = 34.36 s; timeout 14, retry_cnt 7: 537 ms.
        assert_eq!(retry_budget(NCCL_IB_TIMEOUT, NCCL_IB_RETRY_CNT), SimDuration(34_359_738_368_000));
        assert_eq!(retry_budget(14, 7), SimDuration(536_870_912_000));
        assert_eq!(retry_budget(14, 0), local_ack_timeout(14));
    }
}
