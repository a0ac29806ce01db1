//! `plan::design` against published tables, the textbook formulas, its own wiring, and
//! the simulator's scenario loader.
//!
//! The SuperPOD rows are those of `shared/data/superpod-reference-architectures.md`, copied
//! from NVIDIA's DGX H100 reference architecture RA-11333-001 "Network Fabrics", Table 4,
//! and the DGX B200 SuperPOD reference architecture; the fat-tree and leaf-spine figures
//! are Al-Fares, Loukissas and Vahdat, SIGCOMM 2008 (k³/4 hosts, 5k²/4 switches; two tiers
//! of radix R hold R²/2 hosts). Every count is derived from the inputs.

use std::collections::BTreeMap;

use model::sizing::{fat_tree, Oversubscription};
use plan::design::*;

fn endpoints(n: u64, radix: u32) -> DesignInput {
    DesignInput { radix, ..DesignInput::endpoints(n) }
}

#[test]
fn dgx_h100_table_4() {
    // SUs, nodes, GPUs, leaf, spine, compute + UFM cables, spine-leaf cables.
    let rows: [(u32, u64, u64, u64, u64, u64, u64); 4] =
        [(1, 31, 248, 8, 4, 252, 256), (2, 63, 504, 16, 8, 508, 512), (3, 95, 760, 24, 16, 764, 768), (4, 127, 1016, 32, 16, 1020, 1024)];
    for (su, nodes, gpus, leaf, spine, compute, spine_leaf) in rows {
        let d = design(&DesignInput::superpod(SuperPod::H100, su)).unwrap();
        assert_eq!(
            (d.nodes, d.endpoints, d.switches("leaf"), d.switches("spine"), d.cables("node-leaf"), d.cables("leaf-spine")),
            (nodes, gpus, leaf, spine, compute, spine_leaf),
            "H100 {su} SU"
        );
        assert_eq!((d.tiers, d.switches("core"), d.cables("spine-core"), d.ufm_ports), (2, 0, 0, 4), "H100 {su} SU");
    }
}

#[test]
fn dgx_b200_table() {
    // SUs, nodes, GPUs, leaf, spine, core, node-leaf, leaf-spine, spine-core cables.
    type Row = (u32, u64, u64, u64, u64, u64, u64, u64, u64);
    let rows: [Row; 6] = [
        (2, 64, 512, 16, 8, 0, 512, 512, 0),
        (4, 128, 1024, 32, 16, 0, 1024, 1024, 0),
        (8, 256, 2048, 64, 32, 0, 2048, 2048, 0),
        (16, 512, 4096, 128, 128, 64, 4096, 4096, 4096),
        (32, 1024, 8192, 256, 256, 128, 8192, 8192, 8192),
        (64, 2048, 16384, 512, 512, 256, 16384, 16384, 16384),
    ];
    for (su, nodes, gpus, leaf, spine, core, nl, ls, sc) in rows {
        let d = design(&DesignInput::superpod(SuperPod::B200, su)).unwrap();
        assert_eq!(
            (
                d.nodes,
                d.endpoints,
                d.switches("leaf"),
                d.switches("spine"),
                d.switches("core"),
                d.cables("node-leaf"),
                d.cables("leaf-spine"),
                d.cables("spine-core")
            ),
            (nodes, gpus, leaf, spine, core, nl, ls, sc),
            "B200 {su} SU"
        );
        assert_eq!(d.tiers, if su >= 16 { 3 } else { 2 }, "B200 {su} SU");
        // "From 16 SUs ... leaf and spine 32 down / 32 up; core 64 down."
        if su >= 16 {
            let ports = |t: &str| d.tier(t).map(|t| (t.ports_down, t.ports_up));
            assert_eq!((ports("leaf"), ports("spine"), ports("core")), (Some((32, 32)), Some((32, 32)), Some((64, 0))));
            assert_eq!(d.hops.across_pods, 5);
        }
    }
}

/// The same SuperPOD from generic flags: GPUs instead of SUs gives the same fabric.
#[test]
fn superpod_from_gpus() {
    let mut i = DesignInput::superpod(SuperPod::H100, 4);
    i.scalable_units = None;
    i.endpoints = Some(1016);
    let d = design(&i).unwrap();
    let p = design(&DesignInput::superpod(SuperPod::H100, 4)).unwrap();
    assert_eq!((d.scalable_units, &d.switch_tiers, &d.link_layers), (4, &p.switch_tiers, &p.link_layers));
}

/// Ports cabled on every switch of a wiring, and the links per (lower, upper) pair.
struct Tally {
    used: BTreeMap<u64, u64>,
    pairs: BTreeMap<(u64, u64), u64>,
    per_layer: [u64; 3],
}

fn tally(d: &Design) -> Tally {
    let w = wiring(d);
    let r = d.input.radix as u64;
    let mut seen = std::collections::BTreeSet::new();
    let mut t = Tally { used: BTreeMap::new(), pairs: BTreeMap::new(), per_layer: [0; 3] };
    for &(a, b, layer) in &w.links {
        t.per_layer[layer as usize] += 1;
        let mut ends = vec![];
        for e in [a, b] {
            if let End::Port { switch, port } = e {
                assert!(port < r, "port {port} of a radix-{r} switch");
                assert!(seen.insert((switch, port)), "port {port} of switch {switch} cabled twice");
                *t.used.entry(switch).or_default() += 1;
                ends.push(switch);
            }
        }
        if let [lo, hi] = ends[..] {
            *t.pairs.entry((lo, hi)).or_default() += 1;
        }
    }
    t
}

/// The wiring realises the counts: every port exists and is used once, link and cable
/// counts agree per layer, each leaf spreads its uplinks evenly over its pod's spines and
/// each spine over its plane's cores, and the transceiver count is the wiring's.
fn assert_consistent(d: &Design, what: &str) {
    let c = d.sizing.clos;
    let r = d.input.radix as u64;
    for t in &d.switch_tiers {
        assert!(t.max_ports_used <= r, "{what}: {} uses {} of {r} ports", t.name, t.max_ports_used);
        assert!(t.ports_used <= r * t.switches, "{what}: {}", t.name);
        assert_eq!(t.ports_used + t.ports_free, r * t.switches, "{what}: {}", t.name);
        assert_eq!(t.ports_down + t.ports_up, r as u32, "{what}: {} split", t.name);
    }
    for l in &d.link_layers {
        assert_eq!(l.cables, l.links, "{what}: {}", l.name);
    }
    let t = tally(d);
    let ufm = d.ufm_ports as u64;
    assert_eq!(t.per_layer[0] + ufm, d.cables("node-leaf"), "{what}: node-leaf");
    assert_eq!(t.per_layer[1], d.cables("leaf-spine"), "{what}: leaf-spine");
    assert_eq!(t.per_layer[2], d.cables("spine-core"), "{what}: spine-core");
    // Even spreading: a leaf's links go to every spine of its pod in equal numbers.
    if c.tiers >= 2 {
        for l in 0..c.leaves {
            let counts: Vec<u64> = t.pairs.range((l, c.leaves)..(l, c.leaves + c.spines)).map(|(_, &n)| n).collect();
            assert!(counts.iter().all(|&n| n == counts[0]), "{what}: leaf {l} uplinks uneven: {counts:?}");
            assert_eq!(counts.iter().sum::<u64>(), c.leaf_uplinks as u64, "{what}: leaf {l}");
        }
    }
    if c.tiers >= 3 {
        let cores = c.leaves + c.spines;
        for s in c.leaves..cores {
            let counts: Vec<u64> = t.pairs.range((s, cores)..(s, cores + c.cores)).map(|(_, &n)| n).collect();
            assert!(counts.iter().all(|&n| n == counts[0]), "{what}: spine {s} uplinks uneven: {counts:?}");
            assert_eq!(counts.iter().sum::<u64>(), c.spine_uplinks as u64, "{what}: spine {s}");
        }
    }
    // Transceivers: the wiring's ports per switch (plus UFM ports on the leaves).
    let ppt = d.input.switch_ports_per_transceiver as u64;
    if ufm == 0 {
        let modules: u64 = t.used.values().map(|u| u.div_ceil(ppt)).sum();
        assert_eq!(modules, d.totals.switch_transceivers, "{what}: transceivers");
        assert_eq!(t.used.values().sum::<u64>(), d.totals.ports_used, "{what}: ports used");
    }
}

/// SU counts the tables do not list: consistent, and never fewer switches or cables for
/// more SUs.
#[test]
fn unlisted_su_counts() {
    for p in [SuperPod::H100, SuperPod::B200] {
        let mut last = (0, 0);
        for su in 1..=40u32 {
            let d = design(&DesignInput::superpod(p, su)).unwrap();
            assert_consistent(&d, &format!("{p} {su} SU"));
            assert_eq!(d.switches("leaf"), 8 * su as u64);
            assert!((d.bisection.oversubscription - 1.0).abs() < 0.01, "{p} {su} SU: non-blocking");
            let now = (d.totals.switches, d.totals.cables);
            assert!(now.0 >= last.0 && now.1 > last.1, "{p} {su} SU: {now:?} after {last:?}");
            last = now;
        }
    }
    // 5 SUs (H100): 40 leaves, 1280 uplinks need >= 20 spines; the divisors of 32 give 32.
    let d = design(&DesignInput::superpod(SuperPod::H100, 5)).unwrap();
    assert_eq!((d.tiers, d.nodes, d.switches("leaf"), d.switches("spine"), d.cables("leaf-spine")), (2, 159, 40, 32, 1280));
    // 12 SUs (B200): three full pods of 32 leaves and 32 spines; each of the 32 core
    // planes takes 3 × 32 spine uplinks on 2 cores (16 links from each spine to each).
    let d = design(&DesignInput::superpod(SuperPod::B200, 12)).unwrap();
    assert_eq!((d.tiers, d.switches("leaf"), d.switches("spine"), d.switches("core")), (3, 96, 96, 64));
    assert_eq!(d.layer("spine-core").unwrap().links_per_pair, 16);
    // 9 SUs: a partial pod of 8 leaves on 8 spines; 40 cores (see model::sizing's tests).
    let d = design(&DesignInput::superpod(SuperPod::B200, 9)).unwrap();
    assert_eq!((d.switches("spine"), d.switches("core")), (72, 40));
}

#[test]
fn fat_tree_k() {
    for k in [4u32, 8, 16, 32] {
        let k64 = k as u64;
        let d = design(&endpoints(k64 * k64 * k64 / 4, k)).unwrap();
        let t = fat_tree(k).unwrap();
        assert_eq!(d.tiers, 3, "k = {k}");
        assert_eq!(d.endpoints, k64 * k64 * k64 / 4, "k³/4");
        assert_eq!(d.totals.switches, 5 * k64 * k64 / 4, "5k²/4");
        assert_eq!((d.switches("leaf"), d.switches("spine"), d.switches("core")), (t.edge_switches, t.aggregation_switches, t.core_switches));
        assert_eq!((d.cables("node-leaf"), d.cables("leaf-spine"), d.cables("spine-core")), (t.host_links, t.edge_aggregation_links, t.aggregation_core_links));
        // Every port of every switch used, full bisection, 1/3/5 switch hops.
        assert_eq!(d.tier("core").unwrap().ports_free + d.tier("leaf").unwrap().ports_free, 0);
        assert_eq!(d.bisection.bandwidth.0, k64 * k64 * k64 / 8 * 400_000_000_000);
        assert_eq!((d.hops.same_leaf, d.hops.same_pod, d.hops.across_pods), (1, 3, 5));
        assert_consistent(&d, &format!("fat tree k = {k}"));
    }
    // Al-Fares §3: k = 48 gives 27,648 hosts and 2,880 switches.
    let d = design(&endpoints(27_648, 48)).unwrap();
    assert_eq!(d.totals.switches, 2_880);
}

#[test]
fn two_tier_max_is_r_squared_over_2() {
    for r in [4u32, 8, 16, 32, 64, 128] {
        let r64 = r as u64;
        let d = design(&endpoints(r64 * r64 / 2, r)).unwrap();
        assert_eq!((d.tiers, d.switches("leaf"), d.switches("spine")), (2, r64, r64 / 2), "R = {r}");
        assert_eq!(d.hops.across_pods, 3);
        assert_consistent(&d, &format!("R²/2 at R = {r}"));
        let d = design(&endpoints(r64 * r64 / 2 + 1, r)).unwrap();
        assert_eq!(d.tiers, 3, "R²/2 + 1 at R = {r}");
        assert_consistent(&d, &format!("R²/2 + 1 at R = {r}"));
    }
    // One switch while the endpoints fit it.
    let d = design(&endpoints(64, 64)).unwrap();
    assert_eq!((d.tiers, d.totals.switches, d.hops.across_pods), (1, 1, 1));
}

#[test]
fn oversubscribed_leaves() {
    // (radix, o, down, up): down = ⌊R·o/(o+1)⌋, up = R - down.
    let rows = [(48u32, 2u32, 32u32, 16u32), (64, 2, 42, 22), (64, 3, 48, 16), (32, 3, 24, 8), (36, 2, 24, 12)];
    for (r, o, down, up) in rows {
        let mut i = endpoints(r as u64 * down as u64, r);
        i.leaf_oversubscription = Oversubscription { down: o, up: 1 };
        let d = design(&i).unwrap();
        let leaf = d.tier("leaf").unwrap();
        assert_eq!((leaf.ports_down, leaf.ports_up), (down, up), "R = {r}, {o}:1");
        // The largest two-tier fabric: R full leaves.
        assert_eq!((d.tiers, leaf.switches), (2, r as u64), "R = {r}, {o}:1");
        let ratio = down as f64 / up as f64;
        assert!((d.bisection.oversubscription - ratio).abs() < 1e-9, "R = {r}, {o}:1: {}", d.bisection.oversubscription);
        assert!(ratio <= o as f64, "never more oversubscribed than asked");
        assert_consistent(&d, &format!("R = {r}, {o}:1"));
    }
    // Spines at 2:1 in three tiers: 42 down, 22 up; the bisection is set by the spines.
    let mut i = endpoints(8192, 64);
    i.spine_oversubscription = Oversubscription { down: 2, up: 1 };
    let d = design(&i).unwrap();
    let spine = d.tier("spine").unwrap();
    assert_eq!((d.tiers, spine.ports_down, spine.ports_up), (3, 42, 22));
    assert!(d.bisection.oversubscription > 1.4, "{}", d.bisection.oversubscription);
    assert_consistent(&d, "spines 2:1");
}

/// Designs off the SuperPOD path: NICs sharing a leaf, partial SUs, UFM ports.
#[test]
fn other_designs_are_consistent() {
    let mut cases = vec![];
    for (e, nics, rail, su, r) in [
        (1000u64, 8u32, false, None, 64u32),
        (1024, 8, true, Some(16u32), 64),
        (4096, 4, true, None, 64),
        (12, 1, false, None, 4),
        (300, 1, false, None, 16),
        (3000, 2, false, Some(100), 32),
    ] {
        let mut i = endpoints(e, r);
        i.nics_per_node = nics;
        i.rail_optimised = rail;
        i.su_nodes = su;
        cases.push(i);
    }
    let mut i = DesignInput::superpod(SuperPod::H100, 12);
    i.ufm_ports = 8;
    cases.push(i);
    for i in cases {
        let d = design(&i).unwrap_or_else(|e| panic!("{i:?}: {e}"));
        assert_consistent(&d, &format!("{i:?}"));
    }
}

#[test]
fn bad_inputs_name_the_input() {
    type Edit = fn(&mut DesignInput);
    let cases: [(Edit, &str, &str); 16] = [
        (|i| i.radix = 63, "radix", "even"),
        (|i| i.radix = 2, "radix", "at least 4"),
        (|i| i.speed = units::BitRate::from_gbps(1), "speed", "10Gbps"),
        (|i| i.speed = units::BitRate::from_gbps(1600), "speed", "800Gbps"),
        (|i| i.leaf_oversubscription = Oversubscription { down: 1, up: 2 }, "leaf_oversubscription", "DOWN >= UP"),
        (|i| i.spine_oversubscription = Oversubscription { down: 1, up: 0 }, "spine_oversubscription", "DOWN >= UP"),
        (|i| i.node_ports_per_transceiver = 9, "node_ports_per_transceiver", "1 to 8"),
        (|i| i.endpoints = Some(0), "endpoints", "at least 1"),
        (|i| i.endpoints = Some(1001), "endpoints", "multiple of 8"),
        (|i| i.nodes = Some(4), "endpoints", "exactly one"),
        (|i| i.su_nodes = Some(33), "su_nodes", "downlinks"),
        (|i| i.endpoints = Some(1000), "endpoints", "1016 endpoints (4 SUs)"),
        (|i| i.ufm_ports = 300, "ufm_ports", "node slots"),
        (|i| i.nics_per_node = 0, "nics_per_node", "at least 1"),
        (|i| i.switch_ports_per_transceiver = 0, "switch_ports_per_transceiver", "1 to 8"),
        (|i| i.endpoints = Some(8 * 40_000), "endpoints", "fourth tier"),
    ];
    for (edit, input, says) in cases {
        // 8 NICs per node, SUs of 32, 4 UFM ports: the H100 SuperPOD sized by GPUs.
        let mut i = DesignInput::superpod(SuperPod::H100, 4);
        i.scalable_units = None;
        i.endpoints = Some(1016);
        edit(&mut i);
        let e = design(&i).expect_err(input);
        assert_eq!(e.input, input, "{e}");
        assert!(e.msg.contains(says), "{input}: `{}` does not say `{says}`", e.msg);
    }
    // Not rail-optimised, a node's NICs must fit a leaf.
    let mut i = endpoints(80, 8);
    i.nics_per_node = 5;
    assert_eq!(design(&i).unwrap_err().input, "nics_per_node");
    // Scalable units without an SU size (not rail-optimised).
    let mut i = endpoints(1, 64);
    i.endpoints = None;
    i.scalable_units = Some(2);
    assert_eq!(design(&i).unwrap_err().input, "su_nodes");
}

#[test]
fn explain_cites_every_formula() {
    for i in [DesignInput::superpod(SuperPod::H100, 4), DesignInput::superpod(SuperPod::B200, 16), endpoints(40, 64)] {
        let d = design(&i).unwrap();
        for f in &d.formulas {
            assert!(!f.source.is_empty() && !f.formula.is_empty(), "{f:?}");
        }
        let q: Vec<&str> = d.formulas.iter().map(|f| f.quantity.as_str()).collect();
        for needed in ["tiers", "node-leaf links", "cables", "switch transceivers", "bisection bandwidth", "switch hops"] {
            assert!(q.contains(&needed), "{needed} missing from {q:?}");
        }
        if d.tiers >= 2 {
            assert!(q.contains(&"spines") && q.contains(&"leaf ports down / up"), "{q:?}");
        }
        if d.tiers == 3 {
            assert!(q.contains(&"pods") && q.contains(&"cores"), "{q:?}");
        }
        let x = explain_text(&d);
        assert!(x.contains("source: ") && x.contains("Conventions:"), "{x}");
    }
    let d = design(&DesignInput::superpod(SuperPod::H100, 3)).unwrap();
    let x = explain_text(&d);
    assert!(x.contains("RA-11333-001") && x.contains("16 spines"), "{x}");
    let t = text(&d);
    assert!(t.contains("2 tiers: 24 leaves <= radix 64"), "{t}");
}

/// A scenario emitted for each topology kind loads into the simulator with the designed
/// switches and endpoints; the smallest ones also run to completion.
#[test]
fn emitted_scenarios_load_and_run() {
    let rail = {
        let mut i = endpoints(32, 8);
        i.nics_per_node = 4;
        i.rail_optimised = true;
        i.su_nodes = Some(4);
        i
    };
    let shared_leaf = {
        let mut i = endpoints(16, 8);
        i.nics_per_node = 2;
        i
    };
    // (input, topology kind, endpoints the simulator has, run it?)
    let cases = [
        (endpoints(16, 8), "leaf-spine", 16, true),
        (endpoints(16, 4), "fat-tree", 16, true),
        (endpoints(12, 4), "explicit", 12, true),
        (endpoints(40, 64), "explicit", 40, false),
        (endpoints(30, 8), "explicit", 30, false),
        (rail, "leaf-spine", 32, true),
        (shared_leaf, "explicit", 16, true),
        (DesignInput::superpod(SuperPod::H100, 1), "leaf-spine", 256, false),
    ];
    for (i, kind, eps, run) in cases {
        let d = design(&i).unwrap();
        for tech in [Technology::Roce, Technology::Infiniband] {
            let src = scenario(&d, tech, "fabriclab design (test)").unwrap();
            assert!(src.contains(&format!("kind = \"{kind}\"")), "{i:?}: {src}");
            let w = scenario::load_str("emitted.toml", &src).unwrap_or_else(|e| panic!("{i:?} {tech:?}: {e}\n{src}"));
            assert_eq!(w.topo.endpoints.len() as u64, eps, "{i:?}");
            let switches = w.topo.nodes.iter().filter(|n| n.kind == fabric::topology::NodeKind::Switch).count() as u64;
            assert_eq!(switches, d.totals.switches, "{i:?}");
            if tech == Technology::Roce {
                // No switch named: "auto" is InfiniBand's figure at the design's speed (NDR
                // 130 ns at 400 Gb/s), and the file says so next to it.
                let latency = "# switch_latency \"auto\" = 130ns: no switch named (`[roce] switch`); same as InfiniBand: NDR switch";
                assert!(src.contains(latency) && src.contains("\nswitch_latency = \"auto\"\n"), "{i:?}: {src}");
                assert_eq!(w.params.switch_latency, units::SimDuration::from_ns(130), "{i:?}");
                assert!(w.switch_latency.same_as_infiniband, "{i:?}");
            }
            if run && tech == Technology::Roce {
                let (_, report) = report::run(&w, false);
                assert_eq!(report.flows.failed, 0, "{i:?}");
                assert_eq!(report.flows.completed, report.flows.count, "{i:?}");
                assert_eq!(report.totals.lossless_drops, 0, "{i:?}");
            }
        }
    }
    // The H100 SuperPOD's UFM slot becomes a host; the file says so.
    let d = design(&DesignInput::superpod(SuperPod::H100, 1)).unwrap();
    let src = scenario(&d, Technology::Roce, "x").unwrap();
    assert!(src.contains("UFM ports take are ordinary hosts"), "{src}");
    // A large design is still emitted, with its size in a comment; its all-reduce runs on
    // 32 hosts spread over it, so it loads quickly.
    let d = design(&DesignInput::superpod(SuperPod::B200, 16)).unwrap();
    let src = scenario(&d, Technology::Infiniband, "x").unwrap();
    assert!(src.contains("# Large: 512 hosts, 4096 endpoints and 320 switches"), "{}", &src[..2000]);
    assert!(src.contains("kind = \"explicit\""));
    assert!(src.contains("hosts = [0, 16, 32, "), "{}", &src[src.len() - 600..]);
    // One switch: minhop routing (OpenSM's ftree needs two switch levels).
    let src = scenario(&design(&endpoints(40, 64)).unwrap(), Technology::Infiniband, "x").unwrap();
    assert!(src.contains("routing = \"minhop\""), "{src}");
    let w = scenario::load_str("emitted.toml", &src).unwrap();
    assert!(!w.notes.iter().any(|n| n.contains("fell back")), "{:?}", w.notes);
    // InfiniBand needs an InfiniBand speed; RoCE at 25G leaves [infiniband] out.
    let mut i = endpoints(16, 8);
    i.speed = units::BitRate::from_gbps(25);
    let d = design(&i).unwrap();
    assert_eq!(scenario(&d, Technology::Infiniband, "x").unwrap_err().input, "speed");
    let src = scenario(&d, Technology::Roce, "x").unwrap();
    assert!(!src.contains("\n[infiniband]\n") && src.contains("No [infiniband]: 25Gbps"), "{src}");
    // No InfiniBand figure to share at 25G: Spectrum-1 is named for its published 300 ns,
    // with the source in a comment.
    assert!(src.contains("switch = \"spectrum-1\"\nswitch_latency = \"auto\"\n") && src.contains("techrepublic.com"), "{src}");
    let w = scenario::load_str("emitted.toml", &src).unwrap();
    assert_eq!(w.params.switch_latency, units::SimDuration::from_ns(300));
}
