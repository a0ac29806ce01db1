//! The ideal FCT in reports is the simulator's own timing: one message alone on an idle
//! fabric completes in exactly its ideal time (slowdown 1.000), on both fabrics, in both
//! forwarding modes, on a path whose switches mix port speeds (hosts at 100 Gb/s, switches
//! between them at 400 Gb/s: the leaves store and forward even in cut-through mode, the
//! spines cut through) and on a path of one speed (every switch cuts through).
//!
//! The ideal is also checked against a closed form for the mixed-speed cut-through path,
//! so that the simulator and the report cannot agree on a wrong figure.

mod common;
use common::*;

/// [`LEAF_SPINE`] with the leaves' uplinks at 400 Gb/s: hosts stay at 100 Gb/s, so
/// leaf ports run at two speeds.
fn mixed_speeds() -> String {
    let fabric_100g = r#"fabric_link = { speed = "100Gbps""#;
    assert!(LEAF_SPINE.contains(fabric_100g));
    LEAF_SPINE.replace(fabric_100g, r#"fabric_link = { speed = "400Gbps""#)
}

/// Switch pipeline latency in these scenarios, so that it counts on every switch hop.
const SWITCH_LATENCY: &str = "250ns";

/// A 1 MB message h0 -> h8 alone on a RoCEv2 fabric (DCQCN off).
fn roce_alone(topology: &str, forwarding: &str) -> scenario::World {
    let s = scenario(
        topology,
        &format!("forwarding = \"{forwarding}\"\ndcqcn = {{ preset = \"off\" }}"),
        BUFFER,
        "[[traffic]]\nkind = \"message\"\nsrc = 0\ndst = 8\nsize = \"1MB\"\nat = \"1us\"\ndscp = 26\n",
    )
    .replace("switch_latency = \"0ns\"", &format!("switch_latency = \"{SWITCH_LATENCY}\""));
    load(&s)
}

/// A 1 MB message h0 -> h8 alone on an InfiniBand fabric, one ACK per message.
fn ib_alone(topology: &str, forwarding: &str) -> scenario::World {
    let s = ib_scenario(
        topology,
        &[("forwarding", &format!("\"{forwarding}\"")), ("ack_every", "1000"), ("switch_latency", &format!("\"{SWITCH_LATENCY}\""))],
        "[[traffic]]\nkind = \"message\"\nsrc = 0\ndst = 8\nsize = \"1MB\"\nat = \"1us\"\nsl = 0\n",
    );
    load(&s)
}

/// The one flow of `w` completes in exactly its ideal time; returns that time.
fn assert_ideal(w: &scenario::World) -> u64 {
    let (_, r) = report::run(w, false);
    assert_eq!(r.flows.completed, 1);
    assert_eq!(r.totals.drops, 0);
    let f = &r.flow_records.get(0).unwrap();
    assert_eq!(f.fct_ps, Some(f.ideal_ps), "{f:?}");
    assert_eq!(f.slowdown, Some(1.0), "{f:?}");
    f.ideal_ps
}

#[test]
fn roce_cut_through_mixed_speeds_alone_is_ideal() {
    assert_ideal(&roce_alone(&mixed_speeds(), "cut-through"));
}

#[test]
fn roce_store_and_forward_mixed_speeds_alone_is_ideal() {
    assert_ideal(&roce_alone(&mixed_speeds(), "store-and-forward"));
}

#[test]
fn ib_cut_through_mixed_speeds_alone_is_ideal() {
    assert_ideal(&ib_alone(&mixed_speeds(), "cut-through"));
}

#[test]
fn ib_store_and_forward_mixed_speeds_alone_is_ideal() {
    assert_ideal(&ib_alone(&mixed_speeds(), "store-and-forward"));
}

#[test]
fn roce_cut_through_one_speed_alone_is_ideal() {
    assert_ideal(&roce_alone(LEAF_SPINE, "cut-through"));
}

#[test]
fn roce_store_and_forward_one_speed_alone_is_ideal() {
    assert_ideal(&roce_alone(LEAF_SPINE, "store-and-forward"));
}

#[test]
fn ib_cut_through_one_speed_alone_is_ideal() {
    assert_ideal(&ib_alone(LEAF_SPINE, "cut-through"));
}

#[test]
fn ib_store_and_forward_one_speed_alone_is_ideal() {
    assert_ideal(&ib_alone(LEAF_SPINE, "store-and-forward"));
}

/// RoCEv2, cut-through mode, hosts at 100 Gb/s (80 ps/byte) and the fabric at 400 Gb/s
/// (20 ps/byte): only the spine cuts through. 10^6 B = 244 packets of 4096 B + one of
/// 576 B, the first with a RETH. The host link and the last leaf's egress both run at
/// 100 Gb/s, so the data's last bit reaches h8 after all packets at 100 Gb/s, plus the
/// first packet stored once more at each store-and-forward leaf (at its egress rate),
/// plus the header the spine waits for, plus cables and three switch latencies. The ACK
/// returns over leaf1 (stores it), the spine (cuts through after the header: the 86-byte
/// ACK is longer than its 72 bytes) and leaf0 (stores it).
#[test]
fn roce_mixed_speed_cut_through_closed_form() {
    const PS_100G: u64 = 80;
    const PS_400G: u64 = 20;
    // Wire bytes: payload + Eth 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4 + preamble/IFG 20.
    let wire = |payload: u64, reth: bool| payload + 82 + if reth { 16 } else { 0 };
    const ACK_WIRE: u64 = 86;
    const HDR: u64 = 72; // preamble/SFD 8 + 64 B of headers
    const PROP_ONE_WAY: u64 = 2 * 15_000 + 2 * 100_000; // 3 m + 20 m + 20 m + 3 m
    const LATENCY: u64 = 250_000;
    let first = wire(4096, true);
    let all = first + 243 * wire(4096, false) + wire(576, false);
    let data = all * PS_100G + first * PS_400G + HDR * PS_400G + first * PS_100G + PROP_ONE_WAY + 3 * LATENCY;
    let ack = ACK_WIRE * PS_100G + HDR * PS_400G + ACK_WIRE * PS_400G + ACK_WIRE * PS_100G + PROP_ONE_WAY + 3 * LATENCY;
    assert_eq!(assert_ideal(&roce_alone(&mixed_speeds(), "cut-through")), data + ack);
}

/// Which switches cut through: in cut-through mode the spines (all ports at 400 Gb/s)
/// but not the leaves (100 and 400 Gb/s) of the mixed-speed fabric, every switch of the
/// one-speed fabric; none in store-and-forward mode.
#[test]
fn only_switches_whose_ports_run_at_one_speed_cut_through() {
    let cuts = |w: &scenario::World, name: &str| {
        let node = w.topo.nodes.iter().position(|n| n.name == name).expect("node");
        fabric::timing::cuts_through(&w.topo, &w.params, fabric::topology::NodeId(node as u32))
    };
    for w in [roce_alone(&mixed_speeds(), "cut-through"), ib_alone(&mixed_speeds(), "cut-through")] {
        assert_eq!([cuts(&w, "leaf0"), cuts(&w, "leaf1"), cuts(&w, "spine0"), cuts(&w, "spine1")], [false, false, true, true]);
    }
    for w in [roce_alone(LEAF_SPINE, "cut-through"), ib_alone(LEAF_SPINE, "cut-through")] {
        assert_eq!([cuts(&w, "leaf0"), cuts(&w, "leaf1"), cuts(&w, "spine0"), cuts(&w, "spine1")], [true; 4]);
    }
    for w in [roce_alone(LEAF_SPINE, "store-and-forward"), ib_alone(&mixed_speeds(), "store-and-forward")] {
        assert_eq!([cuts(&w, "leaf0"), cuts(&w, "leaf1"), cuts(&w, "spine0"), cuts(&w, "spine1")], [false; 4]);
    }
}
