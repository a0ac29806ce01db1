//! InfiniBand adaptive routing (`[infiniband] adaptive_routing`) and out-of-order
//! placement (`ooo`) against bounds no one here chose: the uplink bound of a 2:1
//! oversubscribed all-to-all, the line-rate ideal of a permutation on a non-blocking fat
//! tree, go-back-N's retransmissions when reordering meets a responder without
//! out-of-order placement, deadlock freedom on a ring routed by dfsssp, determinism.

mod common;

use common::*;

fn ib(topology: &str, extra: &[(&str, &str)], traffic: &str) -> report::Report {
    let mut o = vec![("routing", "\"ftree\""), ("forwarding", "\"store-and-forward\"")];
    o.extend_from_slice(extra);
    report::run(&load(&ib_scenario(topology, &o, traffic)), false).1
}

const PER_PACKET: (&str, &str) = ("adaptive_routing", "{ mode = \"per-packet\" }");
const OOO: (&str, &str) = ("ooo", "true");

/// busbw over the uplink bound: the collective's bound (link payload rate) × the share
/// of it 2:1 uplinks leave an all-to-all, (n−1) / (o·(n−h)) with n = 16 ranks, h = 4 per
/// leaf, o = 2 (as `report/tests/load_balance.rs` for RoCE).
fn of_bound(r: &report::Report) -> f64 {
    let c = &r.collectives[0];
    let share = f64::min(1.0, 15.0 / (2.0 * 12.0));
    c.busbw_gbs / (share * c.busbw_bound_gbs)
}

const ALL_TO_ALL: &str = "[[traffic]]\nkind = \"collective\"\nsl = 0\nop = \"all-to-all\"\nsize = \"16MiB\"\n";

#[test]
fn all_to_all_with_ar_is_at_least_as_good_as_ftree_static() {
    let stat = ib(LEAF_SPINE_2TO1, &[], ALL_TO_ALL);
    let ar = ib(LEAF_SPINE_2TO1, &[PER_PACKET, OOO], ALL_TO_ALL);
    let flowlet = ib(LEAF_SPINE_2TO1, &[("adaptive_routing", "{ mode = \"per-flowlet\", flowlet_gap = \"2us\" }"), OOO], ALL_TO_ALL);
    for (name, r) in [("static", &stat), ("per-packet", &ar), ("per-flowlet", &flowlet)] {
        assert!(r.collectives[0].time_ps.is_some(), "{name}: unfinished");
        assert_eq!(r.totals.drops, 0, "{name}");
        assert!(of_bound(r) <= 1.0, "{name}: {:.3} of the bound: faster than physics", of_bound(r));
    }
    eprintln!("of the uplink bound: static {:.4}, per-packet {:.4}, per-flowlet {:.4}", of_bound(&stat), of_bound(&ar), of_bound(&flowlet));
    assert!(of_bound(&stat) >= 0.98, "ftree static at {:.3} of the uplink bound", of_bound(&stat));
    assert!(of_bound(&ar) >= of_bound(&stat) - 0.002, "AR {:.4} vs static {:.4}", of_bound(&ar), of_bound(&stat));
    assert!(of_bound(&flowlet) >= 0.95, "per-flowlet {:.4}", of_bound(&flowlet));
    assert_eq!(ar.totals.retransmitted_bytes, 0);
    let lb = ar.load_balance.as_ref().expect("stated");
    assert_eq!(lb.load_balancing, "per-packet");
    assert_eq!(lb.uplink_tiers[0].ports, 8);
    assert!(lb.uplink_tiers[0].spread < 1.02, "spread {:.3}", lb.uplink_tiers[0].spread);
    assert!(stat.load_balance.is_none(), "no section unless stated");
}

#[test]
fn ar_permutation_near_line_rate() {
    let topo =
        "[topology]\nkind = \"fat-tree\"\nk = 8\nhost_link = { speed = \"100Gbps\", cable = \"3m\" }\nfabric_link = { speed = \"100Gbps\", cable = \"30m\" }\n";
    let traffic = "[[traffic]]\nkind = \"permutation\"\nsize = \"2MB\"\nsl = 0\n";
    let ar = ib(topo, &[PER_PACKET, OOO], traffic);
    assert_eq!(ar.flows.completed, 128);
    // Slowdown is against the line-rate ideal on the flow's path (`timing::ideal_fct`).
    assert!(ar.flows.slowdown_max <= 1.05, "AR: max slowdown {:.3}", ar.flows.slowdown_max);
    assert_eq!(ar.totals.retransmitted_bytes, 0);
}

#[test]
fn per_packet_ar_without_ooo_retransmits_and_with_ooo_does_not() {
    let traffic = "[[traffic]]\nkind = \"all-to-all\"\nsize = \"256KB\"\nsl = 0\n";
    let off = ib(LEAF_SPINE_2TO1, &[PER_PACKET], traffic);
    let on = ib(LEAF_SPINE_2TO1, &[PER_PACKET, OOO], traffic);
    let naks = |r: &report::Report| r.nics.iter().map(|n| n.naks).sum::<u64>();
    assert!(naks(&off) > 0 && off.totals.retransmitted_bytes > 0, "no NAKs or retransmissions without ooo");
    let lb = off.load_balance.as_ref().expect("stated");
    assert!(lb.findings.iter().any(|f| f.starts_with("reordering without out-of-order placement")), "{:?}", lb.findings);
    assert_eq!(naks(&on), 0);
    assert_eq!(on.totals.retransmitted_bytes, 0);
    assert!(on.load_balance.as_ref().expect("stated").out_of_order_pkts > 0);
    assert_eq!(on.flows.completed, 240);
}

/// The ring example's InfiniBand settings (`examples/deadlock-ring.toml`: 16 KiB per VL,
/// no lifetimes, all-to-all of 1 MB) routed by dfsssp on 4 VLs, on an 8-switch ring: the
/// example's 7 switches have a unique shortest path between every pair, so AR would have
/// nothing to choose from; on 8 the opposite switch is 4 hops both ways round.
fn ring_run(ar: bool) -> (scenario::World, fabric::sim::Sim) {
    let mut o = vec![
        ("routing", "\"dfsssp\""),
        ("data_vls", "4"),
        ("vl_buffer", "\"16KiB\""),
        ("hoq_lifetime", "\"infinite\""),
        ("switch_lifetime", "\"infinite\""),
        ("timeout", "14"),
        ("forwarding", "\"store-and-forward\""),
    ];
    if ar {
        o.extend([PER_PACKET, OOO]);
    }
    let s = ib_scenario(&ring(8, "2m"), &o, "[[traffic]]\nkind = \"all-to-all\"\nsize = \"1MB\"\nsl = 0\n")
        .replace("[scenario]\nname = \"test\"\nseed = 7\n", "[scenario]\nname = \"test\"\nseed = 7\ndeadlock_timeout = \"500us\"\n");
    let w = load(&s);
    let sim = w.run(false);
    (w, sim)
}

#[test]
fn ar_on_a_dfsssp_ring_stays_deadlock_free_and_uses_ports_the_lft_does_not() {
    let (w, with_ar) = ring_run(true);
    let (_, without) = ring_run(false);
    for (name, sim) in [("AR", &with_ar), ("static", &without)] {
        assert!(sim.stats.deadlock.is_none(), "{name}: deadlock {:?}", sim.stats.deadlock);
        assert!(sim.stats.flows.iter().all(|f| f.finish().is_some()), "{name}: unfinished flows");
    }
    let ar = w.ar.as_ref().expect("groups");
    let lft = w.lft.as_ref().expect("lft");
    // Ports that are in some AR group but not the LFT's port for that destination.
    let mut alt_only = std::collections::BTreeSet::new();
    for i in 0..w.topo.nodes.len() {
        let sw = fabric::topology::NodeId(i as u32);
        if !w.topo.is_switch(sw) {
            continue;
        }
        for dst in 0..w.topo.endpoints.len() as u32 {
            for &p in ar.group(sw, dst) {
                if Some(p) != lft.get(sw, dst) {
                    alt_only.insert((p, sw, dst));
                }
            }
        }
    }
    assert!(!alt_only.is_empty(), "no AR group has an alternative: the test proves nothing");
    // Traffic went where only AR sends it: more data on some alternative's port with AR
    // than without.
    let more = alt_only.iter().filter(|&&(p, _, _)| with_ar.stats.ports[p.index()].tx_bytes > without.stats.ports[p.index()].tx_bytes).count();
    assert!(more > 0, "no alternative port carried more with AR");
}

#[test]
fn same_seed_same_results() {
    let traffic = "[[traffic]]\nkind = \"all-to-all\"\nsize = \"128KB\"\nsl = 0\n";
    for mode in ["{ mode = \"per-packet\" }", "{ mode = \"per-flowlet\", flowlet_gap = \"1us\" }"] {
        let a = ib(LEAF_SPINE_2TO1, &[("adaptive_routing", mode), OOO], traffic);
        let b = ib(LEAF_SPINE_2TO1, &[("adaptive_routing", mode), OOO], traffic);
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "{mode}");
    }
}

#[test]
fn ar_off_is_the_lft() {
    let traffic = "[[traffic]]\nkind = \"all-to-all\"\nsize = \"128KB\"\nsl = 0\n";
    let fcts = |r: &report::Report| r.flow_records.iter().map(|f| f.fct_ps).collect::<Vec<_>>();
    let plain = ib(LEAF_SPINE_2TO1, &[], traffic);
    let off = ib(LEAF_SPINE_2TO1, &[("adaptive_routing", "{ mode = \"off\" }")], traffic);
    let never = ib(LEAF_SPINE_2TO1, &[("adaptive_routing", "{ mode = \"per-flowlet\", flowlet_gap = \"1s\" }")], traffic);
    assert_eq!(fcts(&plain), fcts(&off));
    assert!(never.flows.completed == plain.flows.completed);
}

#[test]
fn bad_adaptive_routing_fields_are_named() {
    let err = |extra: &[(&str, &str)]| {
        let mut o = vec![("routing", "\"ftree\"")];
        o.extend_from_slice(extra);
        let s = ib_scenario(LEAF_SPINE_2TO1, &o, "[[traffic]]\nkind = \"all-to-all\"\nsize = \"1MB\"\n");
        match scenario::load_str("test.toml", &s) {
            Ok(_) => panic!("{extra:?}: accepted"),
            Err(e) => e.to_string(),
        }
    };
    let e = err(&[("adaptive_routing", "{ mode = \"sometimes\" }")]);
    assert!(e.contains("infiniband.adaptive_routing.mode") && e.contains("per-packet"), "{e}");
    let e = err(&[("adaptive_routing", "{ mode = \"per-flowlet\" }")]);
    assert!(e.contains("infiniband.adaptive_routing.flowlet_gap"), "{e}");
    let e = err(&[("adaptive_routing", "{ mode = \"per-packet\", flowlet_gap = \"2us\" }")]);
    assert!(e.contains("infiniband.adaptive_routing.flowlet_gap") && e.contains("per-flowlet"), "{e}");
    let e = err(&[("adaptive_routing", "{ mode = \"per-packet\", grade = \"0B\" }")]);
    assert!(e.contains("infiniband.adaptive_routing.grade"), "{e}");
    let e = err(&[("adaptive_routing", "{ mode = \"per-packet\", speed = 3 }")]);
    assert!(e.contains("speed"), "{e}");
    let e = err(&[("adaptive_routing", "{ mode = \"per-packet\" }"), ("routing", "\"dest-hash\"")]);
    assert!(e.contains("infiniband.adaptive_routing") && e.contains("dest-hash"), "{e}");
    let e = err(&[("ooo_nak_window", "4")]);
    assert!(e.contains("infiniband.ooo_nak_window") && e.contains("ooo = true"), "{e}");
}
