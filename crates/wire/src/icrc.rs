//! The InfiniBand invariant CRC (ICRC), for RoCEv2 and native IB.
//!
//! IBTA Vol 1 §7.8.1 defines the ICRC as the 802.3 CRC-32 over every field
//! that does not change end to end, with the *variant* fields replaced by
//! ones, from the first byte of the LRH to the end of the payload and pad
//! bytes. It is sent least significant byte first, like the Ethernet FCS.
//!
//! Masked fields (bits set to 1 before the CRC):
//!
//! | packet | masked |
//! |---|---|
//! | native IB (§7.8.1) | the whole LRH (8 bytes); GRH Traffic Class, Flow Label, Hop Limit; BTH byte 4 (resv8a: FECN, BECN, reserved) |
//! | RoCEv2/IPv4 (Annex A17) | 8 bytes of ones standing for the absent LRH; IPv4 TOS (DSCP+ECN), TTL, header checksum; UDP checksum; BTH byte 4 |
//!
//! Linux's software RoCE, `drivers/infiniband/sw/rxe/rxe_icrc.c`, does the
//! same: it seeds the CRC with 0xdebb20e3, "the result of computing a CRC
//! with a seed of 0xffffffff and 8 bytes of 0xff representing a masked
//! LRH", masks `tos`, `ttl`, `check`, the UDP `check` and the BTH byte that
//! shares a word with the QPN, and stores `~crc` in CPU (little-endian)
//! order. The golden test below checks a CNP captured from a ConnectX-4 Lx.
//!
//! Left out: RoCEv2 over IPv6 (mask: traffic class, flow label, hop limit).

use crate::crc::Crc32;
use crate::error::{need, Error, Result};
use crate::ib::BTH_LEN;
use crate::ib_link::{GRH_LEN, LRH_LEN};
use crate::ipv4;
use crate::udp;

/// Offset of the variant byte (resv8a: FECN/BECN) inside the BTH.
const BTH_VARIANT_BYTE: usize = 4;

/// ICRC of a RoCEv2 packet over IPv4.
///
/// `ip_packet` runs from the first byte of the IPv4 header to the last
/// byte before the ICRC (payload and BTH pad bytes included); it must hold
/// an option-free IPv4 header, UDP and a BTH. The result goes on the wire
/// as `icrc.to_le_bytes()`.
pub fn roce_v2_ipv4(ip_packet: &[u8]) -> Result<u32> {
    const HDRS: usize = ipv4::HEADER_LEN + udp::HEADER_LEN + BTH_LEN;
    need(ip_packet, HDRS)?;
    if ip_packet[0] != 0x45 {
        return Err(Error::Unsupported("ICRC over IPv4 with options or non-IPv4"));
    }
    let mut hdr = [0u8; HDRS];
    hdr.copy_from_slice(&ip_packet[..HDRS]);
    hdr[1] = 0xFF; // TOS: DSCP + ECN
    hdr[8] = 0xFF; // TTL
    hdr[10] = 0xFF; // header checksum
    hdr[11] = 0xFF;
    let udp_off = ipv4::HEADER_LEN;
    hdr[udp_off + 6] = 0xFF; // UDP checksum
    hdr[udp_off + 7] = 0xFF;
    hdr[udp_off + udp::HEADER_LEN + BTH_VARIANT_BYTE] = 0xFF;
    let mut c = Crc32::new();
    c.update(&[0xFF; LRH_LEN]);
    c.update(&hdr);
    c.update(&ip_packet[HDRS..]);
    Ok(c.finish())
}

/// ICRC of a native InfiniBand packet.
///
/// `packet` runs from the first byte of the LRH to the last byte before the
/// ICRC. A GRH is expected when the LRH's LNH is 0b11 (IBA global).
pub fn native(packet: &[u8]) -> Result<u32> {
    need(packet, LRH_LEN + BTH_LEN)?;
    let lnh = packet[1] & 0x3;
    let mut c = Crc32::new();
    c.update(&[0xFF; LRH_LEN]);
    let mut off = LRH_LEN;
    match lnh {
        0b11 => {
            need(packet, LRH_LEN + GRH_LEN + BTH_LEN)?;
            let mut grh = [0u8; GRH_LEN];
            grh.copy_from_slice(&packet[off..off + GRH_LEN]);
            // IPVer(4) TClass(8) FlowLabel(20): keep IPVer, mask the rest.
            grh[0] |= 0x0F;
            grh[1] = 0xFF;
            grh[2] = 0xFF;
            grh[3] = 0xFF;
            grh[7] = 0xFF; // HopLmt
            c.update(&grh);
            off += GRH_LEN;
        }
        0b10 => {}
        _ => return Err(Error::Unsupported("ICRC of a raw (non-IBA) packet")),
    }
    let mut bth = [0u8; BTH_LEN];
    bth.copy_from_slice(&packet[off..off + BTH_LEN]);
    bth[BTH_VARIANT_BYTE] = 0xFF;
    c.update(&bth);
    c.update(&packet[off + BTH_LEN..]);
    Ok(c.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_util::hex;

    /// A RoCEv2 CNP captured on a ConnectX-4 Lx, from scapy's
    /// `test/contrib/roce.uts` ("RoCE CNP captured on ConnectX-4 Lx"),
    /// whose last four bytes 82 fd 00 2a are the hardware's ICRC.
    const CX4_CNP: &str = "e41d2dab2bc2 7cfe90643b32 0800
        45c2 003c 718c 4000 4011 9161 0a001101 0a001201
        0000 12b7 0028 0000
        8100ffff 40000118 00000000
        00000000 00000000 00000000 00000000
        82fd002a";

    #[test]
    fn hardware_cnp_icrc() {
        let f = hex(CX4_CNP);
        assert_eq!(f.len(), 74);
        let ip = &f[14..f.len() - 4];
        let icrc = roce_v2_ipv4(ip).unwrap();
        assert_eq!(icrc.to_le_bytes(), [0x82, 0xfd, 0x00, 0x2a]);
    }

    #[test]
    fn variant_fields_do_not_change_icrc() {
        let f = hex(CX4_CNP);
        let mut ip = f[14..f.len() - 4].to_vec();
        let base = roce_v2_ipv4(&ip).unwrap();
        ip[1] ^= 0x03; // ECN -> CE marking
        ip[8] = 1; // TTL
        ip[10] ^= 0x55; // checksum
        ip[26] = 0x12; // UDP checksum
        ip[20 + 8 + 4] = 0x80; // FECN
        assert_eq!(roce_v2_ipv4(&ip).unwrap(), base);
        ip[20 + 8 + 7] ^= 1; // dest QP is invariant
        assert_ne!(roce_v2_ipv4(&ip).unwrap(), base);
    }

    #[test]
    fn scapy_uc_send_only_icrc() {
        // scapy test/contrib/roce.uts "RoCE layer": a UC SEND Only
        // (opcode 0x24, M=1, pad 2, QP 211, PSN 13571856) whose ICRC scapy
        // computes as 0x78f353f3, i.e. wire bytes 78 f3 53 f3. The IP
        // checksum 0xb4d5 is asserted there; the UDP checksum field
        // (0xaca2) is masked and does not matter.
        let mut ip = hex("45010040047840004011b4d5c0a80007c0a80007
            c00012b7002caca2
            2460ffff000000d300cf1710");
        ip.extend_from_slice(b"F0\x81\x8b\xe2\x895\xd9\x0e\x9a\x95PT\x01\xbe\x88^P\x00\x00");
        assert_eq!(ip.len(), 60);
        let icrc = roce_v2_ipv4(&ip).unwrap();
        assert_eq!(icrc.to_le_bytes(), [0x78, 0xf3, 0x53, 0xf3]);
    }

    #[test]
    fn native_masks_lrh_and_grh_variant_fields() {
        let mut p = vec![0u8; LRH_LEN + GRH_LEN + BTH_LEN + 8];
        p[1] = 0x03; // LNH = global
        p[LRH_LEN] = 0x60; // IPVer 6
        let base = native(&p).unwrap();
        p[0] = 0x30; // VL
        p[2] = 0x12; // DLID
        p[LRH_LEN + 1] = 0xAB; // TClass/FlowLabel
        p[LRH_LEN + 7] = 7; // HopLmt
        p[LRH_LEN + GRH_LEN + 4] = 0x40; // BECN
        assert_eq!(native(&p).unwrap(), base);
        p[LRH_LEN + 4] = 1; // GRH PayLen is invariant
        assert_ne!(native(&p).unwrap(), base);
    }
}
