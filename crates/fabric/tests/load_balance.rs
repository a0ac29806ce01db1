//! RoCEv2 load balancing (`[roce] load_balancing`) and out-of-order placement (`ooo`)
//! against bounds no one here chose: the uplink bound of a 2:1 oversubscribed all-to-all
//! (bytes that must cross a leaf's uplinks over their rate) and the line-rate ideal of a
//! permutation on a non-blocking fat tree; go-back-N's retransmissions when spraying
//! meets a responder without out-of-order placement; determinism.

mod common;

use common::*;
use model::frame::{roce_frame, segments, wire, write_wire_bytes, Encap, Transport};
use units::Bytes;

/// PFC only (no DCQCN, no ECN), store-and-forward, and the load-balancing lines.
fn roce_extra(lb: &str) -> String {
    format!("forwarding = \"store-and-forward\"\ndcqcn = {{ preset = \"off\" }}\n{lb}")
}

fn all_to_all(lb: &str, size: &str) -> report::Report {
    let s = scenario(LEAF_SPINE_2TO1, &roce_extra(lb), BUFFER, &format!("[[traffic]]\nkind = \"all-to-all\"\nsize = \"{size}\"\ndscp = 26\n"));
    report::run(&load(&s), false).1
}

/// The time a leaf's uplinks need for what must cross them: each of its 4 hosts writes
/// `size` to the 12 hosts on other leaves, and the ACKs (one per packet, `ack_every = 1`)
/// for as much arriving data leave by the same uplinks; 2 uplinks of 100 Gb/s.
fn uplink_bound_ps(size: u64) -> f64 {
    let encap = Encap { vlan: false, ipv6: false };
    let mtu = Bytes(4096);
    let flows = 4 * 12;
    let data = write_wire_bytes(encap, Bytes(size), mtu).0;
    let acks = segments(Bytes(size), mtu).0 * wire(roce_frame(encap, Transport::Ack, Bytes(0))).0;
    let bits = (flows * (data + acks) * 8) as f64;
    bits / 200e9 * 1e12
}

#[test]
fn spraying_and_adaptive_reach_the_uplink_bound_where_ecmp_collides() {
    let bound = uplink_bound_ps(1_000_000);
    let ratio = |r: &report::Report| bound / r.flows.fct_max_ps as f64;
    let ecmp = all_to_all("load_balancing = \"ecmp\"\nooo = true", "1MB");
    let spray = all_to_all("load_balancing = \"packet-spray\"\nooo = true", "1MB");
    let adaptive = all_to_all("load_balancing = \"adaptive\"\nooo = true", "1MB");
    for (name, r) in [("ecmp", &ecmp), ("packet-spray", &spray), ("adaptive", &adaptive)] {
        assert_eq!(r.flows.completed, 240, "{name}");
        assert_eq!(r.totals.drops, 0, "{name}: PFC keeps the class lossless");
        assert!(ratio(r) <= 1.0, "{name}: {:.3} of the bound: faster than physics", ratio(r));
    }
    assert!(ratio(&ecmp) < 0.9, "ecmp: {:.3} of the uplink bound; hash collisions should cost more", ratio(&ecmp));
    assert!(ratio(&spray) >= 0.95, "packet-spray: {:.3} of the uplink bound", ratio(&spray));
    assert!(ratio(&adaptive) >= 0.95, "adaptive: {:.3} of the uplink bound", ratio(&adaptive));
    // The spread of the leaves' uplinks says why.
    let spread = |r: &report::Report| r.load_balance.as_ref().expect("stated").uplink_tiers[0].spread;
    assert!(spread(&ecmp) > 1.1, "ecmp spread {:.3}", spread(&ecmp));
    assert!(spread(&spray) < 1.01 && spread(&adaptive) < 1.01, "spread {:.3} / {:.3}", spread(&spray), spread(&adaptive));
    let lb = spray.load_balance.as_ref().expect("stated");
    assert_eq!(lb.uplink_tiers.len(), 1);
    assert_eq!(lb.uplink_tiers[0].ports, 8);
    assert!(lb.out_of_order_pkts > 0 && lb.qps_out_of_order > 0, "spraying reorders");
    assert_eq!(ecmp.load_balance.as_ref().expect("stated").out_of_order_pkts, 0, "one path per flow keeps order");
}

#[test]
fn spraying_without_ooo_retransmits_and_the_report_says_why() {
    let off = all_to_all("load_balancing = \"packet-spray\"", "256KB");
    let on = all_to_all("load_balancing = \"packet-spray\"\nooo = true", "256KB");
    let naks = |r: &report::Report| r.nics.iter().map(|n| n.naks).sum::<u64>();
    assert!(naks(&off) > 0 && off.totals.retransmitted_bytes > 0, "no NAKs or retransmissions without ooo");
    let lb = off.load_balance.as_ref().expect("stated");
    assert!(lb.findings.iter().any(|f| f.starts_with("reordering without out-of-order placement")), "{:?}", lb.findings);
    assert!(lb.duplicate_pkts > 0, "go-back-N resends what had arrived");
    assert_eq!(naks(&on), 0);
    assert_eq!(on.totals.retransmitted_bytes, 0);
    assert_eq!(on.totals.timeouts, 0);
    let lb = on.load_balance.as_ref().expect("stated");
    assert!(lb.out_of_order_pkts > 0, "the packets still arrive out of order");
    assert_eq!((lb.duplicate_pkts, lb.late_pkts), (0, 0));
    assert!(lb.findings.is_empty(), "{:?}", lb.findings);
    assert_eq!(on.flows.completed, 240);
    // Every flow's data was delivered exactly once.
    assert!(on.flow_records.iter().all(|f| f.fct_ps.is_some()));
}

#[test]
fn a_tight_reordering_window_or_timeout_naks_early_and_counts_late_packets() {
    let naks = |r: &report::Report| r.nics.iter().map(|n| n.naks).sum::<u64>();
    let relaxed = all_to_all("load_balancing = \"packet-spray\"\nspray = \"random\"\nooo = true", "256KB");
    assert!(relaxed.load_balance.as_ref().expect("stated").out_of_order_pkts > 0, "random spraying reorders");
    assert_eq!(naks(&relaxed), 0, "no window, the default timeout: reordering is no loss");
    for tight in ["ooo_nak_window = 2", "ooo_nak_timeout = \"10ns\""] {
        let r = all_to_all(&format!("load_balancing = \"packet-spray\"\nspray = \"random\"\nooo = true\n{tight}"), "256KB");
        let lb = r.load_balance.as_ref().expect("stated");
        assert!(naks(&r) > 0, "{tight}: reordering past it is NAKed");
        assert!(lb.late_pkts > 0 && lb.duplicate_pkts > 0, "{tight}: the NAKed packets were only late, and come twice");
        assert!(lb.findings.iter().any(|f| f.contains("ooo_nak_window")), "{tight}: {:?}", lb.findings);
        assert_eq!(r.flows.completed, 240, "{tight}");
    }
}

/// A random permutation on a k = 8 fat tree (128 hosts, non-blocking), PFC only.
fn permutation(lb: &str) -> report::Report {
    let topo =
        "[topology]\nkind = \"fat-tree\"\nk = 8\nhost_link = { speed = \"100Gbps\", cable = \"3m\" }\nfabric_link = { speed = \"100Gbps\", cable = \"30m\" }\n";
    let s = scenario(topo, &roce_extra(lb), BUFFER, "[[traffic]]\nkind = \"permutation\"\nsize = \"2MB\"\ndscp = 26\n");
    report::run(&load(&s), false).1
}

#[test]
fn adaptive_permutation_near_line_rate() {
    let ecmp = permutation("load_balancing = \"ecmp\"");
    let adaptive = permutation("load_balancing = \"adaptive\"\nooo = true");
    assert_eq!(adaptive.flows.completed, 128);
    // Slowdown is against the line-rate ideal on the flow's path (`timing::ideal_fct`).
    assert!(adaptive.flows.slowdown_max <= 1.05, "adaptive: max slowdown {:.3}", adaptive.flows.slowdown_max);
    assert!(ecmp.flows.slowdown_max > 1.5, "ecmp: max slowdown {:.3}; expected the collision tail", ecmp.flows.slowdown_max);
    assert_eq!(adaptive.totals.retransmitted_bytes, 0);
}

#[test]
fn ecmp_stated_or_not_and_a_flowlet_gap_never_reached_route_as_ecmp() {
    let fcts = |r: &report::Report| r.flow_records.iter().map(|f| f.fct_ps).collect::<Vec<_>>();
    let plain = all_to_all("", "128KB");
    let stated = all_to_all("load_balancing = \"ecmp\"", "128KB");
    let flowlet = all_to_all("load_balancing = \"flowlet\"\nflowlet_gap = \"1s\"", "128KB");
    assert!(plain.load_balance.is_none(), "no section unless stated");
    assert_eq!(fcts(&plain), fcts(&stated));
    assert_eq!(fcts(&plain), fcts(&flowlet), "a flowlet that never ends is the ECMP hash");
    // A gap shorter than a frame's time re-hashes nearly every packet: reordering appears.
    let short = all_to_all("load_balancing = \"flowlet\"\nflowlet_gap = \"1ns\"\nooo = true", "128KB");
    assert!(short.load_balance.as_ref().expect("stated").out_of_order_pkts > 0);
}

#[test]
fn same_seed_same_results() {
    for lb in [
        "load_balancing = \"packet-spray\"\nspray = \"random\"\nooo = true",
        "load_balancing = \"adaptive\"\nooo = true",
        "load_balancing = \"flowlet\"\nflowlet_gap = \"2us\"\nooo = true",
    ] {
        let a = all_to_all(lb, "128KB");
        let b = all_to_all(lb, "128KB");
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "{lb}");
    }
}

#[test]
fn bad_load_balancing_fields_are_named() {
    let err = |lb: &str| {
        let s = scenario(LEAF_SPINE_2TO1, &roce_extra(lb), BUFFER, "[[traffic]]\nkind = \"all-to-all\"\nsize = \"1MB\"\n");
        match scenario::load_str("test.toml", &s) {
            Ok(_) => panic!("{lb}: accepted"),
            Err(e) => e.to_string(),
        }
    };
    let e = err("load_balancing = \"spray\"");
    assert!(e.contains("roce.load_balancing") && e.contains("packet-spray"), "{e}");
    let e = err("load_balancing = \"flowlet\"");
    assert!(e.contains("roce.flowlet_gap"), "{e}");
    let e = err("load_balancing = \"adaptive\"\nspray = \"random\"");
    assert!(e.contains("roce.spray"), "{e}");
    let e = err("load_balancing = \"packet-spray\"\nspray = \"zigzag\"");
    assert!(e.contains("roce.spray") && e.contains("round-robin"), "{e}");
    let e = err("ooo_nak_window = 4");
    assert!(e.contains("roce.ooo_nak_window") && e.contains("ooo = true"), "{e}");
    let e = err("ooo = true\nooo_nak_window = 0");
    assert!(e.contains("roce.ooo_nak_window"), "{e}");
    let e = err("load_balancing = \"adaptive\"\nadaptive_grade = \"0B\"");
    assert!(e.contains("roce.adaptive_grade"), "{e}");
}
