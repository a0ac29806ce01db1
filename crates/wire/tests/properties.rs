//! Property tests: parsers never panic on arbitrary bytes (a cheap fuzz),
//! and every builder's output parses back to what was built.

use proptest::prelude::*;
use std::net::Ipv4Addr;
use wire::frame::Fcs;
use wire::ib::TransportRepr;
use wire::*;

fn any_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..600)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn parsers_never_panic(b in any_bytes()) {
        let _ = EthernetFrame::new_checked(&b[..]).and_then(|f| EthernetRepr::parse(&f));
        let _ = Ipv4Packet::new_checked(&b[..]).and_then(|p| Ipv4Repr::parse(&p));
        let _ = UdpPacket::new_checked(&b[..]).and_then(|p| UdpRepr::parse(&p));
        let _ = TransportRepr::parse(&b);
        let _ = RethRepr::parse(&b);
        let _ = AethRepr::parse(&b);
        let _ = LrhRepr::parse(&b);
        let _ = GrhRepr::parse(&b);
        let _ = MacControlRepr::parse(&b);
        let _ = RoceFrame::parse(&b, Fcs::Included);
        let _ = RoceFrame::parse(&b, Fcs::Absent);
        let _ = PfcFrame::parse(&b, Fcs::Included);
        let _ = IbPacket::parse(&b);
        let _ = FlowControlRepr::parse(&b);
        let _ = wire::icrc::roce_v2_ipv4(&b);
        let _ = wire::icrc::native(&b);
        let _ = wire::ethernet::check_fcs(&b);
    }

    /// Mutating one byte of a valid frame never panics a parser, and is
    /// never accepted silently when it touches checksummed bytes.
    #[test]
    fn mutated_frames_never_panic(idx in any::<prop::sample::Index>(), x in 1u8..=255, len in 0usize..300) {
        let f = RoceFrame {
            reth: Some(RethRepr { va: 1, rkey: 2, dma_len: 3 }),
            payload_len: len,
            payload_fill: PayloadFill::Counter,
            ..RoceFrame::new(BthRepr::new(Opcode::RC_RDMA_WRITE_FIRST, 9, 9))
        };
        let mut b = f.emit().unwrap();
        let i = idx.index(b.len());
        b[i] ^= x;
        // The FCS covers every byte, so a single-byte change is always caught.
        prop_assert!(RoceFrame::parse(&b, Fcs::Included).is_err());
        let _ = RoceFrame::parse(wire::ethernet::strip_fcs(&b), Fcs::Absent);
        let mut ib = IbPacket { payload_len: len, ..IbPacket::new(1, 2, BthRepr::new(Opcode::RC_SEND_ONLY, 3, 4)) }
            .emit().unwrap();
        let j = idx.index(ib.len());
        ib[j] ^= x;
        prop_assert!(IbPacket::parse(&ib).is_err());
    }

    #[test]
    fn roce_roundtrip(
        src in any::<[u8; 6]>(), dst in any::<[u8; 6]>(),
        vlan in prop::option::of((0u8..8, any::<bool>(), 0u16..4096)),
        sip in any::<u32>(), dip in any::<u32>(),
        dscp in 0u8..64, ecn in 0u8..4, ttl in any::<u8>(), ident in any::<u16>(), sport in any::<u16>(),
        qp in 0u32..(1 << 24), psn in 0u32..(1 << 24), pkey in any::<u16>(),
        flags in any::<(bool, bool, bool, bool, bool)>(),
        kind in 0usize..6, len in 0usize..2000, counter in any::<bool>(),
        va in any::<u64>(), rkey in any::<u32>(), dma in any::<u32>(), msn in 0u32..(1 << 24), syn in 0u8..32,
    ) {
        let (opcode, reth, aeth, imm, len) = match kind {
            0 => (Opcode::RC_RDMA_WRITE_FIRST, Some(RethRepr { va, rkey, dma_len: dma }), None, None, len),
            1 => (Opcode::RC_RDMA_WRITE_MIDDLE, None, None, None, len),
            2 => (Opcode::RC_RDMA_WRITE_LAST_IMM, None, None, Some(rkey), len),
            3 => (Opcode::RC_ACKNOWLEDGE, None, Some(AethRepr { syndrome: syndrome_from(syn), msn }), None, 0),
            4 => (Opcode::RC_SEND_ONLY, None, None, None, len),
            _ => (Opcode::CNP, None, None, None, 0),
        };
        let (solicited, mig_req, fecn, becn, ack_req) = flags;
        let f = RoceFrame {
            src_mac: EthernetAddress(src),
            dst_mac: EthernetAddress(dst),
            vlan: vlan.map(|(pcp, dei, vid)| VlanTag { pcp, dei, vid }),
            src_ip: Ipv4Addr::from(sip),
            dst_ip: Ipv4Addr::from(dip),
            dscp,
            ecn: Ecn::from_bits(ecn),
            ttl,
            ident,
            src_port: sport,
            bth: BthRepr { solicited, mig_req, fecn, becn, ack_req, pkey, ..BthRepr::new(opcode, qp, psn) },
            reth, aeth, imm,
            payload_len: len,
            payload_fill: if counter { PayloadFill::Counter } else { PayloadFill::Zeros },
        };
        let b = f.emit().unwrap();
        prop_assert_eq!(b.len(), f.frame_len());
        let (back, payload) = RoceFrame::parse(&b, Fcs::Included).unwrap();
        prop_assert_eq!(payload.len(), len);
        // A Counter payload of length <= 1 is indistinguishable from zeros.
        let fill = PayloadFill::detect(payload).unwrap();
        prop_assert_eq!(back, RoceFrame { bth: f.transport().bth, payload_fill: fill, ..f });
    }

    #[test]
    fn pfc_roundtrip(src in any::<[u8; 6]>(), enable in any::<u8>(), quanta in any::<[u16; 8]>(), pause in any::<Option<u16>>()) {
        let control = match pause {
            Some(q) => MacControlRepr::Pause(PauseRepr { quanta: q }),
            None => MacControlRepr::Pfc(PfcRepr { enable, quanta }),
        };
        let f = PfcFrame { src_mac: EthernetAddress(src), control };
        let b = f.emit();
        prop_assert_eq!(b.len(), 64);
        prop_assert_eq!(PfcFrame::parse(&b, Fcs::Included).unwrap(), f);
    }

    #[test]
    fn flow_control_roundtrip(op in 0u8..2, fctbs in 0u16..4096, vl in 0u8..15, fccl in 0u16..4096) {
        let r = FlowControlRepr { op, fctbs, vl, fccl };
        prop_assert_eq!(FlowControlRepr::parse(&r.emit().unwrap()).unwrap(), r);
    }

    #[test]
    fn ib_roundtrip(vl in 0u8..16, sl in 0u8..16, dlid in any::<u16>(), slid in any::<u16>(),
                    global in any::<bool>(), tclass in any::<u8>(), fl in 0u32..(1 << 20), hop in any::<u8>(),
                    qp in 0u32..(1 << 24), psn in 0u32..(1 << 24), len in 0usize..4000) {
        let grh = global.then_some(GrhRepr { tclass, flow_label: fl, pay_len: 0, nxt_hdr: 0, hop_limit: hop, sgid: [1; 16], dgid: [2; 16] });
        let p = IbPacket { vl, sl, grh, payload_len: len, payload_fill: PayloadFill::Zeros,
                           ..IbPacket::new(dlid, slid, BthRepr::new(Opcode::RC_SEND_MIDDLE, qp, psn)) };
        let b = p.emit().unwrap();
        let (back, payload) = IbPacket::parse(&b).unwrap();
        prop_assert_eq!(payload.len(), len);
        prop_assert_eq!(back.bth, p.transport().bth);
        prop_assert_eq!((back.vl, back.sl, back.dlid, back.slid), (vl, sl, dlid, slid));
        prop_assert_eq!(back.grh.map(|g| (g.tclass, g.flow_label, g.hop_limit)), grh.map(|g| (g.tclass, g.flow_label, g.hop_limit)));
    }
}

/// A syndrome for each value of 0..32, covering ACK, RNR NAK and NAK.
fn syndrome_from(v: u8) -> Syndrome {
    match v % 3 {
        0 => Syndrome::Ack { credits: v },
        1 => Syndrome::RnrNak { timer: v },
        _ => Syndrome::Nak(match v % 5 {
            0 => NakCode::PsnSequenceError,
            1 => NakCode::InvalidRequest,
            2 => NakCode::RemoteAccessError,
            3 => NakCode::RemoteOperationalError,
            _ => NakCode::InvalidRdRequest,
        }),
    }
}
