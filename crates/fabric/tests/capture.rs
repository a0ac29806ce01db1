//! The capture tap: what it records equals what the simulator counted, every RoCEv2
//! and InfiniBand record becomes bytes that parse back to the same fields at the size the
//! simulator charged, every InfiniBand flow-control packet carries the FCTBS its port's
//! sends add up to, and watching changes no result.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use fabric::sim::{CaptureSink, CaptureSpec, Captured, Direction, FrameKind};
use fabric::topology::PortId;
use units::SimTime;
use wire::{Fcs, FlowControlRepr, IbPacket, MacControlRepr, Opcode, PfcFrame, RoceFrame, Syndrome};

mod common;

#[derive(Clone, Default)]
struct Shared(Rc<RefCell<Vec<Captured>>>);

impl CaptureSink for Shared {
    fn frame(&mut self, f: &Captured) {
        self.0.borrow_mut().push(*f);
    }
}

fn example(path: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(path)).expect("example")
}

/// Runs `w` watching `ports` over the whole run: the records and the simulator.
fn captured(w: &scenario::World, ports: &[PortId]) -> (Vec<Captured>, fabric::Sim) {
    let sink = Shared::default();
    let mut sim = w.simulator(false);
    sim.set_capture(CaptureSpec { ports: ports.to_vec(), from: SimTime::ZERO, to: SimTime::MAX }, Box::new(sink.clone()));
    sim.run();
    drop(sim.take_capture());
    let recs = Rc::try_unwrap(sink.0).expect("the sink was returned").into_inner();
    (recs, sim)
}

/// Every record's bytes parse back to its fields, at the simulator's frame size.
fn check_bytes(recs: &[Captured]) {
    for r in recs {
        let b = r.roce_bytes().expect("RoCEv2 bytes");
        assert_eq!(b.len() + 4, r.frame_bytes as usize, "{r:?}: bytes (FCS left out) vs the simulator's frame size");
        if r.kind == FrameKind::Pfc {
            let f = PfcFrame::parse(&b, Fcs::Absent).expect("PFC frame parses");
            let MacControlRepr::Pfc(p) = f.control else { panic!("not PFC") };
            assert_eq!(p.enable, r.pfc_vector);
            for i in 0..8 {
                if r.pfc_vector & (1 << i) != 0 {
                    assert_eq!(p.quanta[i], r.pfc_quanta[i]);
                }
            }
            continue;
        }
        let (f, payload) = RoceFrame::parse(&b, Fcs::Absent).expect("RoCEv2 frame parses, ICRC checked");
        assert_eq!(payload.len(), r.payload as usize);
        assert!(payload.iter().all(|&x| x == 0));
        assert_eq!(f.bth.opcode, r.opcode());
        assert_eq!(f.bth.dest_qp, fabric::sim::qpn(r.qp.unwrap()));
        assert_eq!(f.bth.psn, r.psn & 0xFF_FFFF);
        assert_eq!(f.src_port, r.sport);
        assert_eq!(f.ecn, r.ecn);
        assert_eq!(f.dscp, r.dscp);
        assert_eq!(f.src_ip, fabric::sim::endpoint_ip(r.src));
        assert_eq!(f.dst_ip, fabric::sim::endpoint_ip(r.dst));
        assert_eq!(f.reth.is_some(), r.kind == FrameKind::Data && r.first);
        assert_eq!(f.aeth.is_some(), matches!(r.kind, FrameKind::Ack | FrameKind::Nak));
    }
}

/// Records per (slot, direction, kind).
fn counts(recs: &[Captured]) -> BTreeMap<(usize, u8, FrameKind), u64> {
    let mut m = BTreeMap::new();
    for r in recs {
        *m.entry((r.slot, r.dir.flags() as u8, r.kind)).or_insert(0) += 1;
    }
    m
}

fn count(m: &BTreeMap<(usize, u8, FrameKind), u64>, slot: usize, dir: Direction, kinds: &[FrameKind]) -> u64 {
    kinds.iter().map(|k| m.get(&(slot, dir.flags() as u8, *k)).copied().unwrap_or(0)).sum()
}

const ALL: [FrameKind; 6] = [FrameKind::Data, FrameKind::Ack, FrameKind::Nak, FrameKind::Cnp, FrameKind::Pfc, FrameKind::Fcp];

#[test]
fn storm_capture_matches_the_counters_and_shows_pause_refreshes() {
    let w = common::load(&example("examples/roce-pfc-storm.toml"));
    let nic = w.topo.ep_port(0); // h0: the stuck receiver
    let leaf = w.topo.port(nic).peer.expect("cabled");
    let (recs, sim) = captured(&w, &[nic, leaf]);
    check_bytes(&recs);
    let m = counts(&recs);
    for (slot, p) in [(0, nic), (1, leaf)] {
        let peer = w.topo.port(p).peer.unwrap();
        assert_eq!(count(&m, slot, Direction::Outbound, &ALL), sim.stats.ports[p.index()].tx_frames, "slot {slot} outbound");
        assert_eq!(count(&m, slot, Direction::Inbound, &ALL), sim.stats.ports[peer.index()].tx_frames, "slot {slot} inbound");
        let pfc_bits: u64 =
            recs.iter().filter(|r| r.slot == slot && r.dir == Direction::Outbound && r.kind == FrameKind::Pfc).map(|r| r.pfc_vector.count_ones() as u64).sum();
        assert_eq!(pfc_bits, sim.stats.ports[p.index()].pfc_tx.iter().sum::<u64>());
    }
    // The stuck NIC keeps the leaf paused: XOFF on priority 3 with the full 65535
    // quanta, refreshed again and again while it is stuck (50 us to 3 ms).
    let pauses: Vec<&Captured> = recs.iter().filter(|r| r.slot == 0 && r.dir == Direction::Outbound && r.kind == FrameKind::Pfc).collect();
    let xoff: Vec<u64> = pauses.iter().filter(|r| r.pfc_vector == 1 << 3 && r.pfc_quanta[3] == 65535).map(|r| r.t.ps()).collect();
    assert!(xoff.len() >= 10, "{} XOFF frames from the stuck receiver", xoff.len());
    assert!(xoff.windows(2).all(|w| w[1] > w[0]));
    assert!(*xoff.first().unwrap() >= 50_000_000 && *xoff.last().unwrap() <= 3_100_000_000);
    // The NIC's own sends: its data packets equal its transmit counter.
    let nic_data = count(&m, 0, Direction::Outbound, &[FrameKind::Data]);
    assert_eq!(nic_data, sim.stats.nics[0].tx_data_pkts);
}

#[test]
fn misconfigured_capture_shows_the_psn_gap_and_the_nak() {
    let w = common::load(&example("examples/roce-misconfigured.toml"));
    // The receivers of the first traffic entry: the flows' destinations.
    let dst = w.flows.to_vec()[0].dst;
    let nic = w.topo.ep_port(dst);
    let (recs, sim) = captured(&w, &[nic]);
    check_bytes(&recs);
    let drops: u64 = sim.stats.ports.iter().map(|p| p.lossless_drops).sum();
    assert!(drops > 0, "the example drops in the lossless class");
    let naks: Vec<&Captured> = recs.iter().filter(|r| r.kind == FrameKind::Nak && r.dir == Direction::Outbound).collect();
    assert!(!naks.is_empty(), "a NAK leaves the receiver");
    assert_eq!(naks.len() as u64, sim.stats.nics[dst as usize].nak_tx);
    // Before the first NAK, its QP's data arrived with a PSN past the one the NAK asks for.
    let nak = naks[0];
    let gap = recs.iter().find(|r| r.kind == FrameKind::Data && r.dir == Direction::Inbound && r.qp == nak.qp && r.t <= nak.t && r.psn > nak.psn);
    assert!(gap.is_some(), "the PSN gap before the NAK");
    assert!(!recs.iter().any(|r| r.kind == FrameKind::Data && r.qp == nak.qp && r.psn == nak.psn && r.t < nak.t && r.dir == Direction::Inbound));
}

#[test]
fn watching_changes_no_result() {
    let w = common::load(&example("examples/roce-pfc-storm.toml"));
    let plain = report::build(&w, &{
        let mut s = w.simulator(false);
        s.run();
        s.stats
    });
    let (_, sim) = captured(&w, &[w.topo.ep_port(0), w.topo.ep_port(4)]);
    let watched = report::build(&w, &sim.stats);
    assert_eq!(serde_json::to_string(&plain).unwrap(), serde_json::to_string(&watched).unwrap());
}

#[test]
fn a_window_keeps_only_its_frames() {
    let w = common::load(&example("examples/roce-pfc-storm.toml"));
    let nic = w.topo.ep_port(0);
    let (all, _) = captured(&w, &[nic]);
    // The middle third of the capture's span.
    let (t0, t1) = (all.first().unwrap().t.ps(), all.iter().map(|r| r.t.ps()).max().unwrap());
    let (from, to) = (SimTime(t0 + (t1 - t0) / 3), SimTime(t0 + 2 * (t1 - t0) / 3));
    let sink = Shared::default();
    let mut sim = w.simulator(false);
    sim.set_capture(CaptureSpec { ports: vec![nic], from, to }, Box::new(sink.clone()));
    sim.run();
    let all_len = all.len();
    let inside: Vec<Captured> = all.into_iter().filter(|r| r.t >= from && r.t <= to).collect();
    assert!(!inside.is_empty() && inside.len() < all_len);
    assert_eq!(*sink.0.borrow(), inside);
}

/// LIDs as `run --pcap` gives them on a fabric without a subnet manager: endpoint + 1.
fn lid(e: u32) -> u16 {
    (e + 1) as u16
}

/// Every InfiniBand record's bytes parse back (PktLen, ICRC and VCRC checked) to its
/// fields, at the simulator's packet size; every FCP's six bytes to its VL, FCTBS, FCCL.
fn check_ib_bytes(recs: &[Captured]) {
    for r in recs {
        assert!(r.ib && r.roce_bytes().is_none(), "{r:?}");
        if let Some(fc) = r.flow_control() {
            assert_eq!(r.kind, FrameKind::Fcp);
            let b = fc.emit().expect("the credit model's FCTBS and FCCL fit 12 bits");
            assert_eq!(b.len() as u32, r.frame_bytes, "{r:?}: an FCP is 6 bytes");
            assert_eq!(FlowControlRepr::parse(&b).unwrap(), FlowControlRepr { op: 0, fctbs: r.fctbs, vl: r.tc, fccl: r.fccl });
            assert!(r.ib_bytes(1, 2).is_none());
            continue;
        }
        let b = r.ib_bytes(lid(r.src), lid(r.dst)).expect("an IB packet");
        assert_eq!(b.len() as u32, r.frame_bytes, "{r:?}: bytes vs the simulator's packet size");
        let (p, payload) = IbPacket::parse(&b).expect("parses, CRCs checked");
        assert_eq!(payload.len(), r.payload as usize);
        assert_eq!((p.vl, p.sl, p.slid, p.dlid), (r.tc, r.sl, lid(r.src), lid(r.dst)));
        assert_eq!(p.bth.opcode, r.opcode());
        assert_eq!(r.kind == FrameKind::Cnp, p.bth.opcode == Opcode::IB_CNP);
        assert_eq!(p.bth.dest_qp, fabric::sim::qpn(r.qp.unwrap()));
        assert_eq!(p.bth.psn, r.psn & 0xFF_FFFF);
        assert_eq!(p.bth.ack_req, r.kind == FrameKind::Data && r.last);
        assert_eq!(p.bth.fecn, r.ecn == fabric::sim::Ecn::Ce);
        assert_eq!(p.reth.is_some(), r.kind == FrameKind::Data && r.first);
        let nak = matches!(p.aeth.map(|a| a.syndrome), Some(Syndrome::Nak(_)));
        assert_eq!((p.aeth.is_some(), nak), (matches!(r.kind, FrameKind::Ack | FrameKind::Nak), r.kind == FrameKind::Nak));
    }
}

/// The IB incast seen from h0 and from its leaf port: bytes, counts per kind against the
/// counters, and FCTBS: each FCP a port sends carries the 64-byte blocks of everything it
/// sent on that VL before, modulo 4096 (IBTA Vol 1 §7.9.4), as the capture adds them up.
#[test]
fn ib_capture_matches_the_counters_and_the_credit_arithmetic() {
    let w = common::load(&example("examples/ib-incast.toml"));
    let nic = w.topo.ep_port(0);
    let leaf = w.topo.port(nic).peer.expect("cabled");
    let (recs, sim) = captured(&w, &[nic, leaf]);
    check_ib_bytes(&recs);
    let m = counts(&recs);
    for (slot, p) in [(0, nic), (1, leaf)] {
        let peer = w.topo.port(p).peer.unwrap();
        let (st, pst) = (&sim.stats.ports[p.index()], &sim.stats.ports[peer.index()]);
        assert_eq!(count(&m, slot, Direction::Outbound, &ALL), st.tx_frames, "slot {slot} outbound");
        assert_eq!(count(&m, slot, Direction::Inbound, &ALL), pst.tx_frames, "slot {slot} inbound");
        assert_eq!(count(&m, slot, Direction::Outbound, &[FrameKind::Fcp]), st.fcp_tx, "slot {slot}");
        assert_eq!(count(&m, slot, Direction::Inbound, &[FrameKind::Fcp]), pst.fcp_tx, "slot {slot}");
        assert!(st.fcp_tx > 100, "slot {slot}: credits flow back");
        // In the order they were sent (the sink's order), from t = 0.
        let mut blocks = [0u32; 8];
        for r in recs.iter().filter(|r| r.slot == slot && r.dir == Direction::Outbound) {
            let vl = r.tc as usize;
            match r.kind {
                FrameKind::Fcp => assert_eq!(u32::from(r.fctbs), blocks[vl] % model::ib::CREDIT_MODULUS, "slot {slot}: FCTBS at {:?}", r.t),
                _ => blocks[vl] += model::ib::blocks(units::Bytes(u64::from(r.frame_bytes))),
            }
        }
    }
    assert_eq!(count(&m, 0, Direction::Outbound, &[FrameKind::Nak]), sim.stats.nics[0].nak_tx);
    assert_eq!(count(&m, 0, Direction::Outbound, &[FrameKind::Cnp]), sim.stats.nics[0].cnp_tx);
    assert_eq!(count(&m, 0, Direction::Inbound, &[FrameKind::Data]), 16 * 1_000_000u64.div_ceil(4096), "16 senders' 1 MB in 4 KiB packets");
}

#[test]
fn watching_an_ib_fabric_changes_no_result() {
    let w = common::load(&example("examples/ib-incast.toml"));
    let plain = report::build(&w, &{
        let mut s = w.simulator(false);
        s.run();
        s.stats
    });
    let (_, sim) = captured(&w, &[w.topo.ep_port(0), w.topo.ep_port(8)]);
    assert_eq!(serde_json::to_string(&plain).unwrap(), serde_json::to_string(&report::build(&w, &sim.stats)).unwrap());
}
