//! The 2:1 all-to-all of `collectives.rs` (16 ranks, 4 leaves × 2 spines, 100 Gb/s, one
//! QP per peer, PFC only) with RoCEv2 load balancing: spraying and adaptive routing with
//! out-of-order placement reach the uplink bound that ECMP's hash collisions keep it
//! from, and InfiniBand's static ftree routes stay where they were.

#[path = "../../fabric/tests/common.rs"]
mod common;

use report::compare::{self, Side};

/// The all-to-all of 16 MiB per rank, the RoCE side with `lb` added to `[roce]`.
fn all_to_all(lb: &str) -> String {
    let topology = "[topology]\nkind = \"leaf-spine\"\nleaves = 4\nspines = 2\nhosts_per_leaf = 4\noversubscription = 2.0\n\
         host_link = { speed = \"100Gbps\", cable = \"3m\" }\nfabric_link = { speed = \"100Gbps\", cable = \"20m\" }\n";
    let roce = format!("forwarding = \"store-and-forward\"\ndcqcn = {{ preset = \"off\" }}\n{lb}");
    let traffic = "[[traffic]]\nkind = \"collective\"\ndscp = 26\nsl = 0\nop = \"all-to-all\"\nsize = \"16MiB\"\n";
    common::scenario(topology, &roce, common::BUFFER, traffic)
}

/// busbw over the uplink bound: the link payload rate × the share of it 2:1 uplinks leave
/// an all-to-all, (n−1) / (o·(n−h)) with n = 16 ranks, h = 4 per leaf, o = 2.
fn of_bound(s: &Side) -> f64 {
    let c = &s.report.collectives[0];
    let share = f64::min(1.0, 15.0 / (2.0 * 12.0));
    c.busbw_gbs / (share * c.busbw_bound_gbs)
}

#[test]
fn spraying_and_adaptive_with_ooo_reach_the_uplink_bound() {
    let (c, ib, ecmp) = compare::run("test.toml", &all_to_all(""), false).expect("valid");
    assert!(c.limitations[0].contains("RoCE packets ECMP hashing"), "the default limitation stays");
    let ib_ratio = of_bound(&ib);
    let ecmp_ratio = of_bound(&ecmp);
    assert!(ecmp_ratio < 0.9, "ECMP at {ecmp_ratio:.3} of the bound");
    for lb in ["load_balancing = \"packet-spray\"\nooo = true", "load_balancing = \"adaptive\"\nooo = true"] {
        let (c, ib_again, roce) = compare::run("test.toml", &all_to_all(lb), false).expect("valid");
        let r = of_bound(&roce);
        assert!((0.95..=1.0).contains(&r), "{lb}: {r:.3} of the uplink bound (ECMP {ecmp_ratio:.3})");
        assert_eq!(roce.report.totals.drops, 0);
        assert_eq!(roce.report.totals.retransmitted_bytes, 0);
        assert_eq!(of_bound(&ib_again), ib_ratio, "the InfiniBand side does not change");
        assert!(c.limitations[0].contains("place out-of-order packets"), "{}", c.limitations[0]);
        assert!(c.differing_defaults.iter().any(|d| d.parameter == "out-of-order placement"));
    }
}
