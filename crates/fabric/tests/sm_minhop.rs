//! minhop: shortest paths for every pair, OpenSM's port load balancing, LMC spreading,
//! and the cyclic channel dependencies a ring gets.

mod sm_util;

use fabric::subnet_manager::tables::Peer;
use fabric::subnet_manager::{cdg, Engine, SmConfig, SubnetManager};
use fabric::topology::Topology;
use sm_util::{shortest_links, walk, L};

fn all_pairs_shortest(t: &Topology, engine: Engine) {
    let mut sm = SubnetManager::new(t, SmConfig { engine, ..Default::default() });
    let r = sm.bring_up();
    assert_eq!(r.engine, engine, "no fallback: {:?}", r.fallback);
    let n = t.endpoints.len() as u32;
    for s in 0..n {
        for d in 0..n {
            if s == d {
                continue;
            }
            let path = walk(t, sm.lft(), s, d).unwrap_or_else(|| panic!("{engine}: no path {s}->{d}"));
            assert_eq!(Some(path.len() + 1), shortest_links(t, s, d, &[]), "{engine}: {s}->{d} not shortest");
        }
    }
    let st = sm.state().unwrap();
    assert!(st.stats.unreachable.is_empty());
}

#[test]
fn minhop_routes_are_shortest_on_fat_trees_rings_and_tori() {
    for t in [
        Topology::fat_tree(4, L, L).unwrap(),
        Topology::fat_tree(8, L, L).unwrap(),
        Topology::leaf_spine(6, 3, 4, 1, 2, L, L).unwrap(),
        Topology::ring(7, 2, L, L).unwrap(),
        Topology::ring(8, 1, L, L).unwrap(),
        Topology::torus_2d(4, 4, 2, L, L).unwrap(),
        Topology::torus_2d(5, 3, 1, L, L).unwrap(),
    ] {
        all_pairs_shortest(&t, Engine::Minhop);
    }
}

#[test]
fn minhop_balances_uplinks_on_a_fat_tree() {
    // k=8: each edge switch has 4 hosts and 4 uplinks; 124 remote CA LIDs (128 − 4 local).
    let t = Topology::fat_tree(8, L, L).unwrap();
    let mut sm = SubnetManager::new(&t, SmConfig::default());
    sm.bring_up();
    let st = sm.state().unwrap();
    let f = &st.fabric;
    for s in 0..f.nsw() {
        let ups: Vec<u64> = (1..=f.nports[s] as usize).filter(|&p| matches!(f.adj[s][p], Peer::Switch { .. })).map(|p| st.stats.port_routes[s][p]).collect();
        let hosts = f.sw_eps[s].len();
        if hosts == 0 {
            continue;
        }
        // Edge: 124 remote CA LIDs over 4 uplinks, 31 each.
        assert!(ups.iter().all(|&c| c == 31), "edge switch {s}: uplink loads {ups:?}");
    }
}

#[test]
fn lmc_gives_each_endpoint_paths_through_different_neighbours() {
    let t = Topology::fat_tree(4, L, L).unwrap();
    let mut sm = SubnetManager::new(&t, SmConfig { lmc: 1, ..Default::default() });
    sm.bring_up();
    let st = sm.state().unwrap();
    let f = &st.fabric;
    // LIDs are aligned to 2 and every endpoint has 2.
    assert!(f.eps.iter().all(|e| e.lmc == 1 && e.lid % 2 == 0));
    let base = sm.lft();
    let alt = sm.lft_for_offset(1);
    let n = t.endpoints.len() as u32;
    let mut differ = 0;
    for s in 0..n {
        for d in 0..n {
            if s / 2 == d / 2 {
                continue;
            }
            let a = walk(&t, base, s, d).unwrap();
            let b = walk(&t, &alt, s, d).unwrap();
            assert_eq!(a.len(), b.len(), "both LIDs are least-hop");
            if a[0] != b[0] {
                differ += 1;
            }
        }
    }
    // From an edge switch the two LIDs of a remote endpoint leave on different uplinks.
    assert_eq!(differ, 16 * 14, "every remote pair gets two distinct first hops");
}

#[test]
fn minhop_on_a_ring_has_a_dependency_cycle_and_names_it() {
    let t = Topology::ring(6, 1, L, L).unwrap();
    let mut sm = SubnetManager::new(&t, SmConfig::default());
    sm.bring_up();
    let st = sm.state().unwrap();
    let c = cdg::check(&st.fabric, &st.routed.tables, None);
    assert!(!c.acyclic);
    let (_, cycle) = c.cycle.expect("a cycle is named");
    assert!(cycle.len() >= 3, "{cycle:?}");
    // Consecutive channels of the cycle are joined: each one's switch is the previous
    // one's peer, and the last leads back to the first.
    for i in 0..cycle.len() {
        let (s, p) = cycle[i];
        let (next_s, _) = cycle[(i + 1) % cycle.len()];
        match st.fabric.adj[s as usize][p as usize] {
            Peer::Switch { sw, .. } => assert_eq!(sw, next_s),
            other => panic!("channel {s}:{p} is not a switch link: {other:?}"),
        }
    }
    // A fat tree's minhop routes are up*/down*: no cycle.
    let ft = Topology::fat_tree(4, L, L).unwrap();
    let mut sm = SubnetManager::new(&ft, SmConfig::default());
    sm.bring_up();
    let st = sm.state().unwrap();
    assert!(cdg::check(&st.fabric, &st.routed.tables, None).acyclic);
}
