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
//! Wireshark reads a LINKTYPE_ERF packet's first 16 bytes as this header
//! (`wiretap/pcap-common.c`, `pcap_read_erf_pseudoheader`, tag v4.0.17): the frame's time
//! is the ERF timestamp, rounded to the nanosecond, not the pcap record's; the packet is
//! what follows the header (rlen and wlen are only shown). Its direction is bit 0 of the
//! flags: interface 0 "sent", 1 "received" (`epan/dissectors/packet-erf.c`, `dissect_erf`,
//! `pinfo->p2p_dir`), so `frame.p2p_dir` reads as in fabriclab's Ethernet captures.
//!
//! **Type 25 cannot be read by Wireshark 4.0** (checked against its source, tag v4.0.17,
//! and by `crates/wire/tests/tshark.rs`, `flow_control_erf_is_read_as_an_lrh`): the record
//! reaches `dissect_infiniband_link` (`packet-erf.c` hands types 21 and 25 to the
//! `erf.types.type` table), which first calls `dissect_general_info(...,
//! IB_PACKET_STARTS_WITH_LRH)` (`packet-infiniband.c` line 2242) to fill the address
//! columns: that reads the link packet as a Local Route Header, DLID from bytes 2–3 and
//! SLID from bytes 6–7, past the end of the 6-byte flow-control packet, and the
//! exception marks every correct FCP "Malformed Packet". (Eight bytes get further, then
//! fail or not by the low two bits of FCTBS, which that reading takes for the LRH's LNH.)
//! Nothing in the record can fix that without misstating the packet, so fabriclab writes
//! no type-25 records; [`crate::ib_fc`] builds the packet for tests and other readers.
//! Type 21 dissects completely.
//!
//! Timestamps: fabriclab's integer picoseconds, cut to the nanosecond (as the pcapng
//! writer does), then the nearest 2^-32 s fraction, which Wireshark's rounding turns back
//! into exactly that nanosecond. Leaves out: extension headers, multichannel types, the
//! other record types.

/// ERF type of an InfiniBand packet (from the LRH).
pub const TYPE_INFINIBAND: u8 = 21;
/// ERF type of an InfiniBand link packet (flow control).
pub const TYPE_INFINIBAND_LINK: u8 = 25;
/// Generic ERF header length.
pub const HEADER_LEN: usize = 16;
/// Flags bit 2: varying-length record.
pub const FLAG_VARLEN: u8 = 0x04;

/// The ERF timestamp of `ps` picoseconds: whole seconds in the high 32 bits, the
/// nanoseconds (picoseconds cut) as the nearest 32-bit binary fraction of a second.
pub fn timestamp(ps: u64) -> u64 {
    const NS_PER_S: u128 = 1_000_000_000;
    let ns = ps / 1_000;
    let secs = ns / NS_PER_S as u64;
    // 999,999,999 ns rounds to 0xFFFF_FFFC: the fraction never carries into the seconds.
    let frac = ((((ns % NS_PER_S as u64) as u128) << 32) + NS_PER_S / 2) / NS_PER_S;
    (secs << 32) | frac as u64
}

/// The nanoseconds Wireshark shows for ERF timestamp `ts` (its rounding, from
/// `pcap_read_erf_pseudoheader`): the inverse of [`timestamp`] on whole nanoseconds.
pub fn wireshark_ns(ts: u64) -> u64 {
    let frac_ns = ((ts & 0xFFFF_FFFF) * 1_000_000_000 + 0x8000_0000) >> 32;
    (ts >> 32) * 1_000_000_000 + frac_ns
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

    #[test]
    fn wireshark_reads_back_the_nanosecond() {
        for ns in [0u64, 1, 2, 499, 500_000_001, 999_999_999, 1_000_000_000, 3_123_456_789, 86_400_000_000_123] {
            assert_eq!(wireshark_ns(timestamp(ns * 1_000 + 999)), ns, "{ns} ns");
        }
        assert_eq!(timestamp(999_999_999_000) & 0xFFFF_FFFF, 0xFFFF_FFFC);
    }
}
