//! Whole-frame builders: one RoCEv2 packet, one PAUSE/PFC frame, one
//! native InfiniBand packet, each emitted with every length, checksum and
//! CRC filled in, and parsed back with every one of them checked.
//!
//! On-wire sizes: [`RoceFrame::frame_len`] and [`PfcFrame::frame_len`]
//! count the Ethernet frame including the FCS and minimum-size padding;
//! `wire_len` adds preamble/SFD (8 B) and the inter-frame gap (12 B)
//! (IEEE 802.3 §3.2.1, §4.4.2). [`IbPacket::packet_len`] counts LRH through
//! VCRC; IB's physical-layer delimiters and idles are not modelled.
//!
//! Payload bytes are a deterministic pattern ([`PayloadFill`]); the
//! simulator never carries application data.

use crate::error::{need, Error, Result};
use crate::ethernet::{self, EtherType, EthernetAddress, EthernetFrame, EthernetRepr, VlanTag};
use crate::ib::{AethRepr, BthRepr, Opcode, RethRepr, TransportRepr, ICRC_LEN};
use crate::ib_link::{GrhRepr, LinkNextHeader, LrhRepr, GRH_LEN, GRH_NXTHDR_IBA, LRH_LEN, VCRC_LEN};
use crate::icrc;
use crate::ipv4::{self, Ecn, Ipv4Packet, Ipv4Repr};
use crate::pfc::MacControlRepr;
use crate::udp::{self, UdpPacket, UdpRepr};
use core::net::Ipv4Addr;

/// How payload bytes are filled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PayloadFill {
    /// All zeros.
    #[default]
    Zeros,
    /// Byte *i* of the payload is `i mod 256`.
    Counter,
}

impl PayloadFill {
    fn fill(self, buf: &mut [u8]) {
        match self {
            PayloadFill::Zeros => buf.fill(0),
            PayloadFill::Counter => {
                for (i, b) in buf.iter_mut().enumerate() {
                    *b = i as u8;
                }
            }
        }
    }

    /// The fill that produces `payload`, if any (`Zeros` for empty).
    pub fn detect(payload: &[u8]) -> Option<Self> {
        if payload.iter().all(|&b| b == 0) {
            Some(PayloadFill::Zeros)
        } else if payload.iter().enumerate().all(|(i, &b)| b == i as u8) {
            Some(PayloadFill::Counter)
        } else {
            None
        }
    }
}

/// Whether a byte slice handed to a parser ends with the Ethernet FCS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fcs {
    /// The last four bytes are the FCS; it is checked and removed.
    Included,
    /// No FCS (as in a LINKTYPE_ETHERNET capture).
    Absent,
}

fn body(frame: &[u8], fcs: Fcs) -> Result<&[u8]> {
    match fcs {
        Fcs::Included => ethernet::check_fcs(frame),
        Fcs::Absent => Ok(frame),
    }
}

fn validate_vlan(vlan: Option<VlanTag>) -> Result<()> {
    match vlan {
        Some(t) if t.pcp > 7 => Err(Error::OutOfRange("VLAN PCP > 7")),
        Some(t) if t.vid > 0x0FFF => Err(Error::OutOfRange("VLAN VID > 4095")),
        _ => Ok(()),
    }
}

fn pad_for(payload_len: usize) -> usize {
    (4 - payload_len % 4) % 4
}

/// One RoCEv2 packet over IPv4 (IBTA Annex A17): `Ethernet [802.1Q] / IPv4 /
/// UDP to port 4791 / BTH [RETH] [AETH] [ImmDt] / payload / pad / ICRC / FCS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoceFrame {
    /// Source MAC.
    pub src_mac: EthernetAddress,
    /// Destination MAC.
    pub dst_mac: EthernetAddress,
    /// Optional 802.1Q tag; its PCP is the priority PFC acts on.
    pub vlan: Option<VlanTag>,
    /// Source IPv4 address.
    pub src_ip: Ipv4Addr,
    /// Destination IPv4 address.
    pub dst_ip: Ipv4Addr,
    /// DSCP, 0–63.
    pub dscp: u8,
    /// ECN codepoint.
    pub ecn: Ecn,
    /// IPv4 TTL.
    pub ttl: u8,
    /// IPv4 identification.
    pub ident: u16,
    /// UDP source port: flow entropy for ECMP (Annex A17).
    pub src_port: u16,
    /// BTH; `pad_count` is recomputed from `payload_len` on emit.
    pub bth: BthRepr,
    /// RETH, exactly when the opcode has one.
    pub reth: Option<RethRepr>,
    /// AETH, exactly when the opcode has one.
    pub aeth: Option<AethRepr>,
    /// Immediate data, exactly when the opcode has ImmDt.
    pub imm: Option<u32>,
    /// Payload length in bytes, before the BTH pad.
    pub payload_len: usize,
    /// How the payload is filled.
    pub payload_fill: PayloadFill,
}

impl RoceFrame {
    /// A frame carrying `bth` with documentation defaults: locally
    /// administered MACs 02:00:00:00:00:01 → :02, 10.0.0.1 → 10.0.0.2,
    /// no VLAN, DSCP 26 with ECT(0) (the NVIDIA RoCE default traffic class),
    /// TTL 64, UDP source port 49152, no extension headers, no payload.
    pub const fn new(bth: BthRepr) -> Self {
        RoceFrame {
            src_mac: EthernetAddress([2, 0, 0, 0, 0, 1]),
            dst_mac: EthernetAddress([2, 0, 0, 0, 0, 2]),
            vlan: None,
            src_ip: Ipv4Addr::new(10, 0, 0, 1),
            dst_ip: Ipv4Addr::new(10, 0, 0, 2),
            dscp: 26,
            ecn: Ecn::Ect0,
            ttl: 64,
            ident: 0,
            src_port: 49152,
            bth,
            reth: None,
            aeth: None,
            imm: None,
            payload_len: 0,
            payload_fill: PayloadFill::Zeros,
        }
    }

    /// A CNP to `dest_qp` (IBTA Annex A17): opcode 0x81, BECN set, PSN 0,
    /// P_Key 0xFFFF, DSCP 48 with ECT(0) as in a ConnectX-4 Lx capture.
    pub const fn cnp(dest_qp: u32) -> Self {
        let mut bth = BthRepr::new(Opcode::CNP, dest_qp, 0);
        bth.becn = true;
        let mut f = RoceFrame::new(bth);
        f.dscp = 48;
        f
    }

    /// The transport headers, with the pad count this payload needs.
    pub fn transport(&self) -> TransportRepr {
        let mut bth = self.bth;
        bth.pad_count = pad_for(self.payload_len) as u8;
        TransportRepr { bth, reth: self.reth, aeth: self.aeth, imm: self.imm }
    }

    fn ip_len(&self) -> usize {
        let t = self.transport();
        ipv4::HEADER_LEN + udp::HEADER_LEN + t.buffer_len() + self.payload_len + pad_for(self.payload_len) + ICRC_LEN
    }

    fn eth(&self) -> EthernetRepr {
        EthernetRepr { src: self.src_mac, dst: self.dst_mac, vlan: self.vlan, ethertype: EtherType::IPV4 }
    }

    /// Frame length in bytes, FCS and minimum-frame padding included.
    pub fn frame_len(&self) -> usize {
        (self.eth().buffer_len() + self.ip_len() + ethernet::FCS_LEN).max(ethernet::MIN_FRAME_LEN)
    }

    /// Bytes on the wire: [`frame_len`](Self::frame_len) + preamble/SFD + IFG.
    pub fn wire_len(&self) -> usize {
        ethernet::wire_len(self.frame_len())
    }

    /// Checks every field against its width and the opcode's header layout.
    pub fn validate(&self) -> Result<()> {
        validate_vlan(self.vlan)?;
        let t = self.transport();
        t.validate()?;
        if self.payload_len > 0 && !self.bth.opcode.carries_payload() {
            return Err(Error::Malformed("payload on an opcode without one"));
        }
        let ip = self.ipv4_repr();
        ip.validate()
    }

    fn ipv4_repr(&self) -> Ipv4Repr {
        Ipv4Repr {
            src: self.src_ip,
            dst: self.dst_ip,
            dscp: self.dscp,
            ecn: self.ecn,
            ident: self.ident,
            dont_frag: true,
            ttl: self.ttl,
            protocol: ipv4::PROTOCOL_UDP,
            payload_len: self.ip_len() - ipv4::HEADER_LEN,
        }
    }

    /// The whole frame, FCS included.
    pub fn emit(&self) -> Result<Vec<u8>> {
        self.validate()?;
        let eth = self.eth();
        let ip_len = self.ip_len();
        let e = eth.buffer_len();
        let mut buf = vec![0u8; e + ip_len];
        eth.emit(&mut buf);
        self.ipv4_repr().emit(&mut buf[e..]);
        let u = e + ipv4::HEADER_LEN;
        UdpRepr { src_port: self.src_port, dst_port: udp::ROCE_V2_PORT, payload_len: ip_len - 28 }.emit(&mut buf[u..]);
        let t = self.transport();
        let tp = u + udp::HEADER_LEN;
        t.emit(&mut buf[tp..]);
        let p = tp + t.buffer_len();
        self.payload_fill.fill(&mut buf[p..p + self.payload_len]);
        let icrc_at = buf.len() - ICRC_LEN;
        let crc = icrc::roce_v2_ipv4(&buf[e..icrc_at])?;
        buf[icrc_at..].copy_from_slice(&crc.to_le_bytes());
        ethernet::append_fcs(&mut buf);
        Ok(buf)
    }

    /// Parses a RoCEv2 frame, checking FCS (if included), IPv4 checksum,
    /// UDP port and length, opcode layout and ICRC. Returns the frame and
    /// its payload (pad excluded). `payload_fill` is `Counter` when the
    /// payload matches that pattern, else `Zeros`; the slice is
    /// authoritative.
    pub fn parse(frame: &[u8], fcs: Fcs) -> Result<(RoceFrame, &[u8])> {
        let body = body(frame, fcs)?;
        let ef = EthernetFrame::new_checked(body)?;
        let eth = EthernetRepr::parse(&ef)?;
        if eth.ethertype != EtherType::IPV4 {
            return Err(Error::Unsupported("RoCEv2 over a non-IPv4 EtherType"));
        }
        let ip_bytes = &body[ef.header_len()..];
        let ipp = Ipv4Packet::new_checked(ip_bytes)?;
        let ip = Ipv4Repr::parse(&ipp)?;
        if ip.protocol != ipv4::PROTOCOL_UDP {
            return Err(Error::Unsupported("IP protocol other than UDP"));
        }
        if ipp.header_len() != ipv4::HEADER_LEN {
            return Err(Error::Unsupported("IPv4 options in RoCEv2"));
        }
        let ip_total = usize::from(ipp.total_len());
        let ip_payload = &ip_bytes[ipv4::HEADER_LEN..ip_total];
        let up = UdpPacket::new_checked(ip_payload)?;
        let udp = UdpRepr::parse(&up)?;
        if udp.dst_port != udp::ROCE_V2_PORT {
            return Err(Error::Unsupported("UDP port other than 4791"));
        }
        if udp.payload_len + udp::HEADER_LEN != ip.payload_len {
            return Err(Error::Malformed("UDP length disagrees with IPv4 length"));
        }
        let ib = &ip_payload[udp::HEADER_LEN..usize::from(up.len())];
        let (t, tlen) = TransportRepr::parse(ib)?;
        need(ib, tlen + ICRC_LEN)?;
        let icrc_at = ib.len() - ICRC_LEN;
        let got = u32::from_le_bytes([ib[icrc_at], ib[icrc_at + 1], ib[icrc_at + 2], ib[icrc_at + 3]]);
        let ip_end = ipv4::HEADER_LEN + udp::HEADER_LEN + icrc_at;
        if icrc::roce_v2_ipv4(&ip_bytes[..ip_end])? != got {
            return Err(Error::BadChecksum("ICRC"));
        }
        let padded = &ib[tlen..icrc_at];
        let pad = usize::from(t.bth.pad_count);
        if pad > padded.len() {
            return Err(Error::Malformed("BTH pad count exceeds the payload"));
        }
        let payload = &padded[..padded.len() - pad];
        let f = RoceFrame {
            src_mac: eth.src,
            dst_mac: eth.dst,
            vlan: eth.vlan,
            src_ip: ip.src,
            dst_ip: ip.dst,
            dscp: ip.dscp,
            ecn: ip.ecn,
            ttl: ip.ttl,
            ident: ip.ident,
            src_port: udp.src_port,
            bth: t.bth,
            reth: t.reth,
            aeth: t.aeth,
            imm: t.imm,
            payload_len: payload.len(),
            payload_fill: match PayloadFill::detect(payload) {
                Some(PayloadFill::Counter) => PayloadFill::Counter,
                _ => PayloadFill::Zeros,
            },
        };
        Ok((f, payload))
    }
}

/// One MAC Control frame: 802.1Qbb PFC or 802.3 PAUSE, untagged, to
/// 01-80-C2-00-00-01, padded to 64 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PfcFrame {
    /// Source MAC of the port sending the request.
    pub src_mac: EthernetAddress,
    /// PFC or PAUSE.
    pub control: MacControlRepr,
}

impl PfcFrame {
    /// Frame length: always the 64-byte minimum.
    pub const fn frame_len(&self) -> usize {
        ethernet::MIN_FRAME_LEN
    }

    /// Bytes on the wire: 84.
    pub const fn wire_len(&self) -> usize {
        ethernet::MIN_FRAME_LEN + ethernet::PREAMBLE_SFD_LEN + ethernet::IFG_LEN
    }

    /// The whole 64-byte frame, FCS included.
    pub fn emit(&self) -> Vec<u8> {
        let eth = EthernetRepr { src: self.src_mac, dst: EthernetAddress::MAC_CONTROL, vlan: None, ethertype: EtherType::MAC_CONTROL };
        let mut buf = vec![0u8; ethernet::MIN_FRAME_LEN - ethernet::FCS_LEN];
        eth.emit(&mut buf);
        self.control.emit(&mut buf[ethernet::HEADER_LEN..]);
        ethernet::append_fcs(&mut buf);
        buf
    }

    /// Parses a MAC Control frame. The destination must be
    /// 01-80-C2-00-00-01 and the frame untagged.
    pub fn parse(frame: &[u8], fcs: Fcs) -> Result<PfcFrame> {
        let body = body(frame, fcs)?;
        let ef = EthernetFrame::new_checked(body)?;
        let eth = EthernetRepr::parse(&ef)?;
        if eth.ethertype != EtherType::MAC_CONTROL || eth.vlan.is_some() {
            return Err(Error::Unsupported("not an untagged MAC Control frame"));
        }
        if eth.dst != EthernetAddress::MAC_CONTROL {
            return Err(Error::Malformed("MAC Control destination address"));
        }
        Ok(PfcFrame { src_mac: eth.src, control: MacControlRepr::parse(ef.payload())? })
    }
}

/// One native InfiniBand packet: `LRH [GRH] BTH [RETH] [AETH] [ImmDt]
/// payload pad ICRC VCRC` (IBTA Vol 1 §7–§9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IbPacket {
    /// Virtual lane, 0–15.
    pub vl: u8,
    /// Service level, 0–15.
    pub sl: u8,
    /// Destination LID.
    pub dlid: u16,
    /// Source LID.
    pub slid: u16,
    /// Optional GRH; `pay_len` and `nxt_hdr` are computed on emit.
    pub grh: Option<GrhRepr>,
    /// BTH; `pad_count` is recomputed from `payload_len` on emit.
    pub bth: BthRepr,
    /// RETH, exactly when the opcode has one.
    pub reth: Option<RethRepr>,
    /// AETH, exactly when the opcode has one.
    pub aeth: Option<AethRepr>,
    /// Immediate data, exactly when the opcode has ImmDt.
    pub imm: Option<u32>,
    /// Payload length in bytes, before the pad.
    pub payload_len: usize,
    /// How the payload is filled.
    pub payload_fill: PayloadFill,
}

impl IbPacket {
    /// A local (no GRH) packet on VL 0 / SL 0 carrying `bth`.
    pub const fn new(dlid: u16, slid: u16, bth: BthRepr) -> Self {
        IbPacket { vl: 0, sl: 0, dlid, slid, grh: None, bth, reth: None, aeth: None, imm: None, payload_len: 0, payload_fill: PayloadFill::Zeros }
    }

    /// The transport headers, with the pad count this payload needs.
    pub fn transport(&self) -> TransportRepr {
        let mut bth = self.bth;
        bth.pad_count = pad_for(self.payload_len) as u8;
        TransportRepr { bth, reth: self.reth, aeth: self.aeth, imm: self.imm }
    }

    fn after_grh_len(&self) -> usize {
        self.transport().buffer_len() + self.payload_len + pad_for(self.payload_len) + ICRC_LEN
    }

    /// Packet length in bytes, LRH through VCRC.
    pub fn packet_len(&self) -> usize {
        LRH_LEN + self.grh.map_or(0, |_| GRH_LEN) + self.after_grh_len() + VCRC_LEN
    }

    fn lrh(&self) -> LrhRepr {
        let words = (self.packet_len() - VCRC_LEN) / 4;
        LrhRepr {
            vl: self.vl,
            lver: 0,
            sl: self.sl,
            lnh: if self.grh.is_some() { LinkNextHeader::IbaGlobal } else { LinkNextHeader::IbaLocal },
            dlid: self.dlid,
            pkt_len_words: words.min(usize::from(u16::MAX)) as u16,
            slid: self.slid,
        }
    }

    /// Checks every field against its width and the opcode's layout.
    pub fn validate(&self) -> Result<()> {
        self.lrh().validate()?;
        self.transport().validate()?;
        if self.payload_len > 0 && !self.bth.opcode.carries_payload() {
            return Err(Error::Malformed("payload on an opcode without one"));
        }
        if let Some(g) = self.grh {
            if g.flow_label > 0x000F_FFFF {
                return Err(Error::OutOfRange("GRH flow label >= 2^20"));
            }
        }
        Ok(())
    }

    /// The whole packet, ICRC and VCRC included.
    pub fn emit(&self) -> Result<Vec<u8>> {
        self.validate()?;
        let mut buf = vec![0u8; self.packet_len()];
        self.lrh().emit(&mut buf);
        let mut off = LRH_LEN;
        if let Some(g) = self.grh {
            let g = GrhRepr { pay_len: self.after_grh_len() as u16, nxt_hdr: GRH_NXTHDR_IBA, ..g };
            g.emit(&mut buf[off..]);
            off += GRH_LEN;
        }
        let t = self.transport();
        t.emit(&mut buf[off..]);
        off += t.buffer_len();
        self.payload_fill.fill(&mut buf[off..off + self.payload_len]);
        let icrc_at = buf.len() - VCRC_LEN - ICRC_LEN;
        let crc = icrc::native(&buf[..icrc_at])?;
        buf[icrc_at..icrc_at + ICRC_LEN].copy_from_slice(&crc.to_le_bytes());
        let vcrc_at = icrc_at + ICRC_LEN;
        let v = crate::crc::vcrc16(&buf[..vcrc_at]);
        buf[vcrc_at..].copy_from_slice(&v.to_le_bytes());
        Ok(buf)
    }

    /// Parses a native packet, checking PktLen, GRH PayLen, VCRC and ICRC.
    pub fn parse(packet: &[u8]) -> Result<(IbPacket, &[u8])> {
        let lrh = LrhRepr::parse(packet)?;
        let len = usize::from(lrh.pkt_len_words) * 4 + VCRC_LEN;
        need(packet, len)?;
        if len < LRH_LEN + ICRC_LEN + VCRC_LEN {
            return Err(Error::Malformed("LRH PktLen too small"));
        }
        let packet = &packet[..len];
        let vcrc_at = len - VCRC_LEN;
        if crate::crc::vcrc16(&packet[..vcrc_at]).to_le_bytes() != packet[vcrc_at..] {
            return Err(Error::BadChecksum("VCRC"));
        }
        let icrc_at = vcrc_at - ICRC_LEN;
        let mut off = LRH_LEN;
        let grh = match lrh.lnh {
            LinkNextHeader::IbaLocal => None,
            LinkNextHeader::IbaGlobal => {
                let g = GrhRepr::parse(&packet[off..])?;
                off += GRH_LEN;
                if g.nxt_hdr != GRH_NXTHDR_IBA {
                    return Err(Error::Unsupported("GRH next header other than IBA"));
                }
                if usize::from(g.pay_len) != len - VCRC_LEN - off {
                    return Err(Error::Malformed("GRH PayLen disagrees with LRH PktLen"));
                }
                Some(g)
            }
            _ => return Err(Error::Unsupported("LRH LNH other than IBA local/global")),
        };
        if icrc_at < off {
            return Err(Error::Malformed("LRH PktLen too small"));
        }
        let ib = &packet[off..icrc_at];
        let (t, tlen) = TransportRepr::parse(ib)?;
        let got = &packet[icrc_at..vcrc_at];
        if icrc::native(&packet[..icrc_at])?.to_le_bytes() != got {
            return Err(Error::BadChecksum("ICRC"));
        }
        let padded = &ib[tlen..];
        let pad = usize::from(t.bth.pad_count);
        if pad > padded.len() {
            return Err(Error::Malformed("BTH pad count exceeds the payload"));
        }
        let payload = &padded[..padded.len() - pad];
        let p = IbPacket {
            vl: lrh.vl,
            sl: lrh.sl,
            dlid: lrh.dlid,
            slid: lrh.slid,
            grh,
            bth: t.bth,
            reth: t.reth,
            aeth: t.aeth,
            imm: t.imm,
            payload_len: payload.len(),
            payload_fill: match PayloadFill::detect(payload) {
                Some(PayloadFill::Counter) => PayloadFill::Counter,
                _ => PayloadFill::Zeros,
            },
        };
        Ok((p, payload))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ib::{NakCode, Syndrome};
    use crate::pfc::{PauseRepr, PfcRepr};

    use crate::test_util::hex;

    #[test]
    fn reproduces_connectx4_cnp_byte_for_byte() {
        // The CNP captured on a ConnectX-4 Lx in scapy's
        // test/contrib/roce.uts (FCS not captured; ICRC 82 fd 00 2a).
        let want = hex("e41d2dab2bc2 7cfe90643b32 0800
             45c2003c718c400040119161 0a001101 0a001201
             000012b700280000
             8100ffff4000011800000000
             00000000000000000000000000000000
             82fd002a");
        let f = RoceFrame {
            src_mac: EthernetAddress([0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32]),
            dst_mac: EthernetAddress([0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2]),
            src_ip: Ipv4Addr::new(10, 0, 17, 1),
            dst_ip: Ipv4Addr::new(10, 0, 18, 1),
            ident: 0x718c,
            src_port: 0,
            ..RoceFrame::cnp(0x118)
        };
        let got = f.emit().unwrap();
        assert_eq!(ethernet::strip_fcs(&got), &want[..]);
        assert_eq!(got.len(), 78);
        assert_eq!(f.frame_len(), 78);
        assert_eq!(f.wire_len(), 98);
        let (back, payload) = RoceFrame::parse(&want, Fcs::Absent).unwrap();
        assert_eq!(back, f);
        assert!(payload.is_empty());
    }

    fn samples() -> Vec<RoceFrame> {
        let write_first = RoceFrame {
            vlan: Some(VlanTag { pcp: 3, dei: false, vid: 10 }),
            reth: Some(RethRepr { va: 0x7f00_0000_1000, rkey: 0x1234, dma_len: 10_000 }),
            payload_len: 4096,
            payload_fill: PayloadFill::Counter,
            ..RoceFrame::new(BthRepr::new(Opcode::RC_RDMA_WRITE_FIRST, 0x11, 100))
        };
        let write_last =
            RoceFrame { payload_len: 1807, ecn: Ecn::Ce, bth: BthRepr { ack_req: true, ..BthRepr::new(Opcode::RC_RDMA_WRITE_LAST, 0x11, 102) }, ..write_first };
        let write_last = RoceFrame { reth: None, ..write_last };
        let ack = RoceFrame {
            aeth: Some(AethRepr { syndrome: Syndrome::Ack { credits: 31 }, msn: 1 }),
            ..RoceFrame::new(BthRepr::new(Opcode::RC_ACKNOWLEDGE, 0x22, 102))
        };
        let nak = RoceFrame { aeth: Some(AethRepr { syndrome: Syndrome::Nak(NakCode::PsnSequenceError), msn: 1 }), ..ack };
        let send_imm = RoceFrame { imm: Some(0xCAFE_F00D), payload_len: 3, ..RoceFrame::new(BthRepr::new(Opcode::RC_SEND_ONLY_IMM, 5, 0xFF_FFFF)) };
        vec![write_first, write_last, ack, nak, send_imm, RoceFrame::cnp(7)]
    }

    #[test]
    fn roce_roundtrip() {
        for f in samples() {
            let bytes = f.emit().unwrap();
            assert_eq!(bytes.len(), f.frame_len());
            let (back, payload) = RoceFrame::parse(&bytes, Fcs::Included).unwrap();
            let want = RoceFrame { bth: f.transport().bth, ..f };
            assert_eq!(back, want);
            assert_eq!(payload.len(), f.payload_len);
            let (again, _) = RoceFrame::parse(ethernet::strip_fcs(&bytes), Fcs::Absent).unwrap();
            assert_eq!(again, want);
        }
    }

    #[test]
    fn roce_sizes() {
        let s = samples();
        // 18 (tagged MAC) + 20 + 8 + 12 + 16 (RETH) + 4096 + 4 (ICRC) + 4 (FCS).
        assert_eq!(s[0].frame_len(), 4178);
        assert_eq!(s[0].wire_len(), 4198);
        // ACK: 14 + 20 + 8 + 12 + 4 + 4 + 4 = 66.
        assert_eq!(s[2].frame_len(), 66);
        // 1807-byte payload takes 1 pad byte.
        assert_eq!(s[1].transport().bth.pad_count, 1);
    }

    #[test]
    fn roce_corruption_detected() {
        let bytes = samples()[0].emit().unwrap();
        let body = ethernet::strip_fcs(&bytes);
        // Flip a payload bit: the ICRC catches it even without an FCS.
        let mut bad = body.to_vec();
        bad[200] ^= 0x10;
        assert_eq!(RoceFrame::parse(&bad, Fcs::Absent), Err(Error::BadChecksum("ICRC")));
        // Flip an ECN bit and fix the IP checksum: still a valid frame.
        let mut marked = body.to_vec();
        Ipv4Packet::new_unchecked(&mut marked[18..]).set_ecn(Ecn::Ce);
        let (m, _) = RoceFrame::parse(&marked, Fcs::Absent).unwrap();
        assert_eq!(m.ecn, Ecn::Ce);
    }

    #[test]
    fn roce_validation() {
        let mut f = samples()[0];
        f.reth = None;
        assert!(f.emit().is_err());
        let mut f = samples()[2];
        f.payload_len = 8;
        assert!(f.emit().is_err());
        let mut f = samples()[4];
        f.dscp = 64;
        assert_eq!(f.emit(), Err(Error::OutOfRange("DSCP > 63")));
    }

    #[test]
    fn pfc_frame_golden_and_roundtrip() {
        let f = PfcFrame { src_mac: EthernetAddress([2, 0, 0, 0, 0, 9]), control: MacControlRepr::Pfc(PfcRepr::pause(&[3, 4], 0xFFFF)) };
        let b = f.emit();
        assert_eq!(b.len(), 64);
        assert_eq!(&b[..6], &[0x01, 0x80, 0xC2, 0x00, 0x00, 0x01]);
        assert_eq!(&b[12..18], &[0x88, 0x08, 0x01, 0x01, 0x00, 0x18]);
        assert!(b[34..60].iter().all(|&x| x == 0));
        assert_eq!(PfcFrame::parse(&b, Fcs::Included).unwrap(), f);
        let p = PfcFrame { control: MacControlRepr::Pause(PauseRepr { quanta: 0 }), ..f };
        assert_eq!(PfcFrame::parse(&p.emit(), Fcs::Included).unwrap(), p);
        assert_eq!(p.wire_len(), 84);
    }

    #[test]
    fn ib_cnp_carries_its_reserved_bytes() {
        // IB CC's CNP (opcode 0x80): LRH, BTH, 16 reserved bytes, ICRC, VCRC, as
        // `model::ib::ib_packet(false, Transport::Cnp, 0)` charges it.
        let mut bth = BthRepr::new(Opcode::IB_CNP, 0x123, 0);
        bth.becn = true;
        let p = IbPacket::new(7, 9, bth);
        let b = p.emit().unwrap();
        assert_eq!(b.len(), 8 + 12 + 16 + 4 + 2);
        assert!(b[20..36].iter().all(|&x| x == 0));
        let (back, payload) = IbPacket::parse(&b).unwrap();
        assert!(payload.is_empty());
        assert_eq!((back.bth.opcode, back.bth.becn, back.bth.dest_qp), (Opcode::IB_CNP, true, 0x123));
        assert!(IbPacket { payload_len: 4, ..p }.emit().is_err(), "a CNP carries no payload");
    }

    #[test]
    fn ib_roundtrip_local_and_global() {
        let local = IbPacket {
            vl: 2,
            sl: 5,
            reth: Some(RethRepr { va: 0x1000, rkey: 0xAB, dma_len: 256 }),
            payload_len: 254,
            payload_fill: PayloadFill::Counter,
            ..IbPacket::new(0x10, 0x20, BthRepr::new(Opcode::RC_RDMA_WRITE_ONLY, 0x33, 44))
        };
        let global = IbPacket {
            grh: Some(GrhRepr { tclass: 3, flow_label: 0x12345, pay_len: 0, nxt_hdr: 0, hop_limit: 255, sgid: [0xFE; 16], dgid: [0xFD; 16] }),
            ..local
        };
        for p in [local, global] {
            let b = p.emit().unwrap();
            assert_eq!(b.len(), p.packet_len());
            assert_eq!(b.len() % 4, 2); // 4-byte words plus the VCRC
            let (back, payload) = IbPacket::parse(&b).unwrap();
            assert_eq!(payload.len(), 254);
            let want_grh = p.grh.map(|g| GrhRepr { pay_len: (b.len() - LRH_LEN - GRH_LEN - VCRC_LEN) as u16, nxt_hdr: GRH_NXTHDR_IBA, ..g });
            assert_eq!(back, IbPacket { bth: p.transport().bth, grh: want_grh, ..p });
            let mut bad = b.clone();
            bad[0] ^= 0x10; // VL is variant: VCRC catches it, ICRC would not
            assert_eq!(IbPacket::parse(&bad), Err(Error::BadChecksum("VCRC")));
        }
        // LRH(8) + BTH(12) + RETH(16) + 254 + pad 2 + ICRC 4 = 296 = 74 words.
        let b = local.emit().unwrap();
        assert_eq!(&b[4..6], &[0, 74]);
    }
}
