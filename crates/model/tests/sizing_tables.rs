//! `model::sizing` against the published tables and the textbook formulas.
//!
//! The SuperPOD rows are those of `shared/data/superpod-reference-architectures.md`, copied
//! from NVIDIA's DGX H100 reference architecture RA-11333-001 "Network Fabrics", Table 4,
//! and the DGX B200 SuperPOD reference architecture. The code derives every count from
//! (radix 64, 32 nodes per SU, 8 rails, UFM ports); nothing is looked up.

use model::sizing::*;

#[test]
fn dgx_h100_table_4() {
    // SUs, nodes, GPUs, leaf, spine, compute + UFM cables, spine-leaf cables.
    let rows: [(u32, u64, u64, u64, u64, u64, u64); 4] =
        [(1, 31, 248, 8, 4, 252, 256), (2, 63, 504, 16, 8, 508, 512), (3, 95, 760, 24, 16, 764, 768), (4, 127, 1016, 32, 16, 1020, 1024)];
    for (su, nodes, gpus, leaf, spine, compute, spine_leaf) in rows {
        let p = superpod(&SuperPodInput::dgx_h100(su)).unwrap();
        assert_eq!(
            (p.nodes, p.gpus, p.leaves, p.spines, p.node_leaf_cables, p.leaf_spine_cables),
            (nodes, gpus, leaf, spine, compute, spine_leaf),
            "H100 {su} SU"
        );
        assert_eq!((p.tiers, p.cores, p.spine_core_cables), (2, 0, 0));
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
        let p = superpod(&SuperPodInput::dgx_b200(su)).unwrap();
        assert_eq!(
            (p.nodes, p.gpus, p.leaves, p.spines, p.cores, p.node_leaf_cables, p.leaf_spine_cables, p.spine_core_cables),
            (nodes, gpus, leaf, spine, core, nl, ls, sc),
            "B200 {su} SU"
        );
        assert_eq!(p.tiers, if su >= 16 { 3 } else { 2 });
    }
}

/// SU counts the tables do not list: every switch's ports suffice, every leaf spreads its
/// uplinks evenly, and cables are conserved between tiers.
#[test]
fn unlisted_su_counts_are_consistent() {
    for su in 1..=128u32 {
        for inp in [SuperPodInput::dgx_h100(su), SuperPodInput::dgx_b200(su)] {
            let p = superpod(&inp).unwrap();
            let r = inp.radix as u64;
            assert_eq!(p.leaves, 8 * su as u64);
            assert_eq!(p.gpus, 8 * p.nodes);
            assert_eq!(p.node_leaf_cables, p.gpus + inp.ufm_ports as u64);
            assert!(p.node_leaf_cables <= p.leaves * r / 2, "leaf downlinks hold nodes and UFM");
            assert_eq!(p.leaf_spine_cables, p.leaves * 32);
            assert!(p.leaf_spine_cables <= p.spines * if p.tiers == 2 { r } else { r / 2 });
            if p.tiers == 2 {
                assert_eq!(32 % p.spines, 0, "{su} SU: uplinks spread evenly");
                assert!(p.leaves <= r);
                // Minimal: no smaller divisor of 32 has ports for all uplinks.
                for d in (1..p.spines).filter(|d| 32 % d == 0) {
                    assert!(d * r < p.leaf_spine_cables, "{su} SU: {d} spines would do");
                }
            } else {
                assert_eq!(p.spine_core_cables, p.spines * 32);
                assert!(p.spine_core_cables <= p.cores * r);
                assert!(p.leaves > r);
            }
        }
    }
    // Two tiers end exactly at 8 SUs (64 leaves = radix), three begin at 9: two full pods
    // of 32 leaves and 32 spines, and a last pod of 8 leaves whose 32 uplinks spread over
    // 8 spines (4 links each). The 8 core planes with a spine in all 3 pods need 2 cores
    // (96 uplinks > 64 ports), the other 24 planes one: 40 cores. (36 cores would hold the
    // 2304 uplinks but could not take an equal share from every spine.)
    assert_eq!(superpod(&SuperPodInput::dgx_b200(8)).unwrap().tiers, 2);
    let p = superpod(&SuperPodInput::dgx_b200(9)).unwrap();
    assert_eq!((p.tiers, p.leaves, p.spines, p.cores), (3, 72, 72, 40));
    // 5 SUs: 40 leaves, 1280 uplinks need >= 20 spines; the divisors of 32 give 32.
    let p = superpod(&SuperPodInput::dgx_h100(5)).unwrap();
    assert_eq!((p.nodes, p.leaves, p.spines), (159, 40, 32));
    // The largest three-tier design at radix 64 is a k = 64 fat tree: 2048 leaves = 256 SUs.
    assert_eq!(superpod(&SuperPodInput::dgx_b200(256)).unwrap().gpus, fat_tree(64).unwrap().hosts);
    assert!(matches!(superpod(&SuperPodInput::dgx_b200(257)), Err(SizingError::TooLarge { .. })));
}

#[test]
fn fat_tree_textbook() {
    for k in (2..=128u32).step_by(2) {
        let t = fat_tree(k).unwrap();
        let k = k as u64;
        assert_eq!(t.hosts, k * k * k / 4);
        assert_eq!(t.switches, 5 * k * k / 4);
        assert_eq!(t.host_links, t.edge_aggregation_links);
        assert_eq!(t.edge_aggregation_links, t.aggregation_core_links);
        // Every switch port is used exactly once.
        assert_eq!(2 * (t.host_links + t.edge_aggregation_links + t.aggregation_core_links) - t.hosts, t.switches * k);
    }
    // Al-Fares et al. §3: k = 48 gives 27,648 hosts and 2,880 switches.
    let t = fat_tree(48).unwrap();
    assert_eq!((t.hosts, t.switches, t.core_switches), (27_648, 2_880, 576));
    assert_eq!(three_tier_max_hosts(64), Ok(65_536));
}

#[test]
fn leaf_spine_textbook() {
    for r in (2..=128u32).step_by(2) {
        let f = leaf_spine(r, Oversubscription::NON_BLOCKING).unwrap();
        let r64 = r as u64;
        assert_eq!(f.hosts, r64 * r64 / 2, "R²/2");
        assert_eq!((f.leaves, f.spines, f.links_per_leaf_spine), (r64, r64 / 2, 1));
    }
    // 3:1 at radix 64: 48 down, 16 up; 64 leaves, 16 spines, 3072 hosts.
    let f = leaf_spine(64, Oversubscription { down: 3, up: 1 }).unwrap();
    assert_eq!((f.leaf_downlinks, f.leaf_uplinks, f.leaves, f.spines, f.hosts), (48, 16, 64, 16, 3072));
    // Sized for 1000 hosts non-blocking: 32 leaves, 1024 uplinks on >= 16 spines -> 16.
    let f = leaf_spine_for(64, Oversubscription::NON_BLOCKING, 1000).unwrap();
    assert_eq!((f.leaves, f.spines, f.links_per_leaf_spine, f.hosts), (32, 16, 2, 1024));
    assert!(matches!(leaf_spine_for(64, Oversubscription::NON_BLOCKING, 2049), Err(SizingError::TooLarge { .. })));
}

fn fabric_of(radix: u32, nodes: u64, rails: u32, rail_optimised: bool, nodes_per_su: Option<u32>, leaf: Oversubscription) -> Fabric {
    fabric(&FabricInput { radix, nodes, rails, rail_optimised, nodes_per_su, ufm_ports: 0, leaf, spine: Oversubscription::NON_BLOCKING }).unwrap()
}

/// `fabric` with one NIC per node and as many nodes as a k-ary fat tree has hosts builds
/// exactly that fat tree; R²/2 hosts is the largest two-tier fabric.
#[test]
fn fabric_reproduces_the_textbook() {
    for k in (4..=64u32).step_by(2) {
        let t = fat_tree(k).unwrap();
        let f = fabric_of(k, t.hosts, 1, false, None, Oversubscription::NON_BLOCKING);
        let c = f.clos;
        assert_eq!(
            (c.tiers, c.leaves, c.spines, c.cores, c.leaf_spine_links, c.spine_core_links),
            (3, t.edge_switches, t.aggregation_switches, t.core_switches, t.edge_aggregation_links, t.aggregation_core_links),
            "k = {k}"
        );
        assert_eq!((c.pods, c.pod_leaves, c.pod_spines, c.plane_cores), (k as u64, k as u64 / 2, k as u64 / 2, k as u64 / 2));
        assert_eq!(c.switches(), t.switches);

        let r = k as u64;
        let two = fabric_of(k, r * r / 2, 1, false, None, Oversubscription::NON_BLOCKING);
        assert_eq!((two.clos.tiers, two.clos.leaves, two.clos.spines), (2, r, r / 2), "R²/2 at R = {k}");
        assert_eq!(fabric_of(k, r * r / 2 + 1, 1, false, None, Oversubscription::NON_BLOCKING).clos.tiers, 3);
        // One switch holds R endpoints; one more needs leaves and spines.
        assert_eq!(fabric_of(k, r, 1, false, None, Oversubscription::NON_BLOCKING).clos.tiers, 1);
        assert_eq!(fabric_of(k, r + 1, 1, false, None, Oversubscription::NON_BLOCKING).clos.tiers, 2);
    }
    // One past the largest three-tier fabric needs a fourth tier.
    let too_big = FabricInput {
        radix: 8,
        nodes: 129,
        rails: 1,
        rail_optimised: false,
        nodes_per_su: None,
        ufm_ports: 0,
        leaf: Oversubscription::NON_BLOCKING,
        spine: Oversubscription::NON_BLOCKING,
    };
    assert!(matches!(fabric(&too_big), Err(SizingError::TooLarge { max_leaves: 32, .. })));
}

/// Oversubscribed leaves: R·o/(o+1) down, R/(o+1) up, and the largest two-tier fabric
/// grows to R · R·o/(o+1) hosts.
#[test]
fn fabric_oversubscribed() {
    for (o, down, up, spines) in [(2u32, 42u32, 22u32, 22u64), (3, 48, 16, 16)] {
        let ov = Oversubscription { down: o, up: 1 };
        let f = fabric_of(64, 64 * down as u64, 1, false, None, ov);
        assert_eq!((f.leaf_downlinks, f.clos.leaf_uplinks, f.clos.tiers, f.clos.leaves, f.clos.spines), (down, up, 2, 64, spines));
        // Half the hosts' bandwidth over the oversubscription.
        assert_eq!(f.bisection_half_links(), 64 * up as u64);
    }
    // Spines at 3:1 in three tiers: three full pods of 48 leaves, 16 uplinks per spine.
    let f = fabric(&FabricInput {
        radix: 64,
        nodes: 4608,
        rails: 1,
        rail_optimised: false,
        nodes_per_su: None,
        ufm_ports: 0,
        leaf: Oversubscription::NON_BLOCKING,
        spine: Oversubscription { down: 3, up: 1 },
    })
    .unwrap();
    let c = f.clos;
    assert_eq!((c.tiers, c.leaves, c.pod_leaves, c.pods, c.spine_downlinks, c.spine_uplinks), (3, 144, 48, 3, 48, 16));
    assert_eq!(f.bisection_half_links(), c.spine_core_links);
    assert_eq!(c.spine_core_links * 3, c.leaf_spine_links);
}

/// Not rail-optimised: a node's NICs share a leaf, ⌊downlinks / rails⌋ nodes per leaf.
#[test]
fn fabric_without_rails() {
    // 128 nodes × 8 NICs, 4 nodes per 64-port leaf: 32 leaves, 16 spines.
    let f = fabric_of(64, 128, 8, false, None, Oversubscription::NON_BLOCKING);
    assert_eq!((f.nodes_per_leaf, f.clos.leaves, f.clos.spines, f.node_leaf_links), (4, 32, 16, 1024));
    // The same nodes rail-optimised in SUs of 32: 4 SUs × 8 rails, the same counts.
    let g = fabric_of(64, 128, 8, true, Some(32), Oversubscription::NON_BLOCKING);
    assert_eq!((g.scalable_units, g.clos.leaves, g.clos.spines), (4, 32, 16));
    // A partial last SU keeps its rail leaves and leaves node slots spare.
    let g = fabric_of(64, 125, 8, true, Some(32), Oversubscription::NON_BLOCKING);
    assert_eq!((g.scalable_units, g.spare_node_slots, g.clos.leaves), (4, 3, 32));
    // 5 NICs per node on a 4-downlink leaf cannot share it.
    let e = fabric(&FabricInput {
        radix: 8,
        nodes: 2,
        rails: 5,
        rail_optimised: false,
        nodes_per_su: None,
        ufm_ports: 0,
        leaf: Oversubscription::NON_BLOCKING,
        spine: Oversubscription::NON_BLOCKING,
    });
    assert_eq!(e, Err(SizingError::NicsPerLeaf { rails: 5, leaf_downlinks: 4 }));
}
