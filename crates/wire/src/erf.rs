//! ERF records: how native InfiniBand goes into a capture file Wireshark reads.
//!
//! Debian's Wireshark (4.0) rejects LINKTYPE_INFINIBAND (247) in capture files; it reads
//! LINKTYPE_ERF (197), whose packets are Endace ERF records, and hands ERF type 21
//! (INFINIBAND) to its `infiniband` dissector and type 25 (INFINIBAND_LINK) to
//! `infiniband_link` (`crates/wire/tests/tshark.rs`).
//!
//! Format (Endace "ERF Types Reference Guide", EDM11-01 v21, "Generic ERF header"): a
//! 16-byte header, then the packet. The timestamp is 64 bits little-endian, the high 32
//! bits seconds and the low 32 a binary fraction of a second; every other field is
//! big-endian: type (bit 7: extension headers follow), flags (bits 0–1 the capture
//! interface, bit 2 "varying length": the record is not padded to a snap length), rlen
//! (record length, header included), lctr (loss counter), wlen (length on the wire, which
//! "may contain padding").
//!
//! **Type 25 does not work in Wireshark 4.0.17**: the record reaches `infiniband_link`,
//! which throws on a real 6-byte flow-control packet (malformed, "exception occurred").
//! Probing shows why, apparently: it first reads the record as an IB packet header, so 8
//! bytes pass or fail by the low two bits of FCTBS (where an LRH has its LNH), and 64 bytes
//! pass. Padding a 6-byte packet to suit that bug would misstate its length, so nothing
//! here does; the test `native_ib_as_erf_dissects` reports what the installed Wireshark
//! does. Type 21 dissects completely.
//!
//! Timestamps are fabriclab's integer picoseconds; the fraction is truncated to 2^-32 s
//! (0.23 ns), so a nanosecond reading may be 1 ns early. Leaves out: extension headers,
//! multichannel types, the other record types.

/// ERF type of an InfiniBand packet (from the LRH).
pub const TYPE_INFINIBAND: u8 = 21;
/// ERF type of an InfiniBand link packet (flow control).
pub const TYPE_INFINIBAND_LINK: u8 = 25;
/// Generic ERF header length.
pub const HEADER_LEN: usize = 16;
/// Flags bit 2: varying-length record.
pub const FLAG_VARLEN: u8 = 0x04;

/// The ERF timestamp of `ps` picoseconds: seconds, and the rest as a 32-bit fraction.
pub fn timestamp(ps: u64) -> u64 {
    const PS_PER_S: u64 = 1_000_000_000_000;
    let secs = ps / PS_PER_S;
    let frac = (((ps % PS_PER_S) as u128) << 32) / PS_PER_S as u128;
    (secs << 32) | frac as u64
}

/// One ERF record of type `erf_type` holding `packet`, seen at `ts_ps` on capture
/// interface `interface` (0–3).
pub fn record(ts_ps: u64, erf_type: u8, interface: u8, packet: &[u8]) -> Vec<u8> {
    let len = packet.len().min(usize::from(u16::MAX) - HEADER_LEN);
    let mut r = Vec::with_capacity(HEADER_LEN + len);
    r.extend_from_slice(&timestamp(ts_ps).to_le_bytes());
    r.push(erf_type & 0x7F);
    r.push(FLAG_VARLEN | (interface & 3));
    r.extend_from_slice(&((HEADER_LEN + len) as u16).to_be_bytes());
    r.extend_from_slice(&0u16.to_be_bytes());
    r.extend_from_slice(&(len as u16).to_be_bytes());
    r.extend_from_slice(&packet[..len]);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_bytes() {
        // 1.5 s + 1 ps: fraction 0x8000_0000 (the picosecond is below 2^-32 s).
        let r = record(1_500_000_000_001, TYPE_INFINIBAND, 1, &[0xAA; 3]);
        assert_eq!(&r[..8], &(1u64 << 32 | 0x8000_0000).to_le_bytes());
        assert_eq!(&r[8..16], &[21, 0x05, 0, 19, 0, 0, 0, 3]);
        assert_eq!(&r[16..], &[0xAA; 3]);
        let l = record(0, TYPE_INFINIBAND_LINK, 0, &[1, 2, 3, 4, 5, 6]);
        assert_eq!(&l[8..16], &[25, 0x04, 0, 22, 0, 0, 0, 6]);
    }
}
