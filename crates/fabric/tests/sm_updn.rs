//! updn and ftree obey up*/down* on fat trees; updn is deadlock-free on rings and tori.

mod sm_util;

use fabric::subnet_manager::{cdg, Engine, SmConfig, SubnetManager};
use fabric::topology::Topology;
use sm_util::{peer_node, shortest_links, walk, L};

/// Every endpoint pair's path goes up in tier, then down, never down then up; and is
/// as short as the shortest path.
fn up_down_on_tiers(t: &Topology, engine: Engine, roots: Vec<u64>) {
    let mut sm = SubnetManager::new(t, SmConfig { engine, roots, ..Default::default() });
    let r = sm.bring_up();
    assert_eq!(r.engine, engine, "fallback: {:?}", r.fallback);
    let n = t.endpoints.len() as u32;
    for s in 0..n {
        for d in 0..n {
            if s == d {
                continue;
            }
            let path = walk(t, sm.lft(), s, d).unwrap_or_else(|| panic!("{engine}: {s}->{d} unreachable"));
            let mut tiers = vec![t.node(peer_node(t, t.ep_port(s))).tier];
            tiers.extend(path.iter().map(|&p| t.node(peer_node(t, p)).tier));
            let top = tiers.iter().position(|&x| x == *tiers.iter().max().unwrap()).unwrap();
            assert!(tiers[..=top].windows(2).all(|w| w[1] > w[0]), "{engine}: {s}->{d} tiers {tiers:?}");
            assert!(tiers[top..].windows(2).all(|w| w[1] < w[0]), "{engine}: {s}->{d} tiers {tiers:?}");
            assert_eq!(Some(path.len() + 1), shortest_links(t, s, d, &[]), "{engine}: {s}->{d}");
        }
    }
    let st = sm.state().unwrap();
    assert!(cdg::check(&st.fabric, &st.routed.tables, None).acyclic, "{engine}: up/down routes have no cycle");
}

fn core_guids(t: &Topology, sm: &SubnetManager, tier: u8) -> Vec<u64> {
    let lay = &sm.agents.layout;
    t.nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.tier == tier && n.kind == fabric::topology::NodeKind::Switch)
        .map(|(i, _)| lay.nodes[lay.node_ib[i] as usize].guid)
        .collect()
}

#[test]
fn updn_with_automatic_roots_on_fat_trees() {
    for k in [4, 8] {
        let t = Topology::fat_tree(k, L, L).unwrap();
        up_down_on_tiers(&t, Engine::Updn, vec![]);
        // The detected roots are the cores (OpenSM's 90 %/5 % histogram rule).
        let mut sm = SubnetManager::new(&t, SmConfig { engine: Engine::Updn, ..Default::default() });
        sm.bring_up();
        let st = sm.state().unwrap();
        let mut roots: Vec<u64> = st.routed.roots.iter().map(|&s| st.fabric.sw_guid[s]).collect();
        let mut cores = core_guids(&t, &sm, 3);
        roots.sort();
        cores.sort();
        assert_eq!(roots, cores, "k={k}");
    }
}

#[test]
fn updn_with_given_roots() {
    let t = Topology::fat_tree(4, L, L).unwrap();
    let sm = SubnetManager::new(&t, SmConfig::default());
    up_down_on_tiers(&t, Engine::Updn, core_guids(&t, &sm, 3));
    let ls = Topology::leaf_spine(6, 3, 4, 1, 1, L, L).unwrap();
    let sm = SubnetManager::new(&ls, SmConfig::default());
    up_down_on_tiers(&ls, Engine::Updn, core_guids(&ls, &sm, 2));
}

#[test]
fn ftree_on_fat_trees() {
    for t in [Topology::fat_tree(4, L, L).unwrap(), Topology::fat_tree(8, L, L).unwrap(), Topology::leaf_spine(8, 4, 4, 1, 1, L, L).unwrap()] {
        up_down_on_tiers(&t, Engine::Ftree, vec![]);
    }
}

#[test]
fn updn_is_deadlock_free_on_rings_and_tori() {
    for t in [Topology::ring(6, 1, L, L).unwrap(), Topology::torus_2d(4, 4, 1, L, L).unwrap(), Topology::torus_2d(3, 5, 2, L, L).unwrap()] {
        // One root: the first switch.
        let sm0 = SubnetManager::new(&t, SmConfig::default());
        let lay = &sm0.agents.layout;
        let first = t.nodes.iter().position(|n| n.kind == fabric::topology::NodeKind::Switch).unwrap();
        let root = lay.nodes[lay.node_ib[first] as usize].guid;
        let mut sm = SubnetManager::new(&t, SmConfig { engine: Engine::Updn, roots: vec![root], ..Default::default() });
        let r = sm.bring_up();
        assert_eq!(r.engine, Engine::Updn);
        let st = sm.state().unwrap();
        assert!(st.stats.unreachable.is_empty());
        assert!(cdg::check(&st.fabric, &st.routed.tables, None).acyclic);
    }
}

#[test]
fn ftree_balances_every_uplink_of_a_fat_tree_exactly() {
    // k=8: 124 remote CA LIDs per edge switch over 4 uplinks; the aggregation switches'
    // 4 uplinks carry the 112 CA LIDs outside the pod, 28 each.
    let t = Topology::fat_tree(8, L, L).unwrap();
    let mut sm = SubnetManager::new(&t, SmConfig { engine: Engine::Ftree, ..Default::default() });
    assert_eq!(sm.bring_up().engine, Engine::Ftree);
    let st = sm.state().unwrap();
    let lay = &sm.agents.layout;
    let name_of = |s: usize| &lay.nodes.iter().find(|n| n.guid == st.fabric.sw_guid[s]).unwrap().name;
    for s in 0..st.fabric.nsw() {
        let name = name_of(s);
        let ups: Vec<u64> = (1..=st.fabric.nports[s] as usize)
            .filter(|&p| match st.fabric.adj[s][p] {
                fabric::subnet_manager::tables::Peer::Switch { sw, .. } => {
                    let other = name_of(sw as usize);
                    (name.starts_with("edge") && other.starts_with("agg")) || (name.starts_with("agg") && other.starts_with("core"))
                }
                _ => false,
            })
            .map(|p| st.stats.port_routes[s][p])
            .collect();
        let want = if name.starts_with("edge") { 31 } else { 28 };
        assert!(ups.iter().all(|&c| c == want), "{name}: {ups:?}");
    }
}

/// SHARP aggregation nodes (a CA inside every switch, `Topology::with_aggregation_nodes`)
/// would make every switch look like a leaf: updn and ftree route the fabric without
/// them and reach each AN as they reach its switch. They still route (no minhop
/// fallback), host-to-host routes are the same hops as without ANs, every edge of a
/// SHARP tree over all hosts is routed both ways by a shortest path (a tree edge joins
/// adjacent switches, or climbs or descends, so up*/down* allows it), and the routes stay
/// free of credit loops. (Not every AN is reachable from every switch under updn: two
/// aggregation switches of one pod have no up*/down* path between them, and neither do
/// their LIDs.)
#[test]
fn aggregation_nodes_are_routed_through_their_switch() {
    let hops = |t: &Topology, path: &[fabric::topology::PortId]| -> Vec<(u32, u32)> { path.iter().map(|&p| (t.port(p).node.0, t.port(p).index)).collect() };
    for t in [Topology::fat_tree(4, L, L).unwrap(), Topology::leaf_spine(4, 2, 4, 1, 2, L, L).unwrap()] {
        let a = t.with_aggregation_nodes().unwrap();
        let hosts = t.endpoints.len() as u32;
        let job = scenario::sharp::job_tree(&a, &(0..hosts).collect::<Vec<_>>()).unwrap();
        for engine in [Engine::Updn, Engine::Ftree] {
            let mut plain = SubnetManager::new(&t, SmConfig { engine, ..Default::default() });
            plain.bring_up();
            let mut sm = SubnetManager::new(&a, SmConfig { engine, ..Default::default() });
            let r = sm.bring_up();
            assert_eq!(r.engine, engine, "fallback: {:?}", r.fallback);
            for s in 0..hosts {
                for d in (0..hosts).filter(|&d| d != s) {
                    assert_eq!(hops(&t, &walk(&t, plain.lft(), s, d).unwrap()), hops(&a, &walk(&a, sm.lft(), s, d).unwrap()), "{engine}: {s}->{d}");
                }
            }
            for (v, p) in job.tree.parent.iter().enumerate() {
                let Some(p) = *p else { continue };
                let (c, q) = (job.endpoints[v], job.endpoints[p as usize]);
                for (x, y) in [(c, q), (q, c)] {
                    let path = walk(&a, sm.lft(), x, y).unwrap_or_else(|| panic!("{engine}: tree edge {x}->{y} unreachable"));
                    assert_eq!(Some(path.len() + 1), shortest_links(&a, x, y, &[]), "{engine}: {x}->{y}");
                }
            }
            let st = sm.state().unwrap();
            assert!(cdg::check(&st.fabric, &st.routed.tables, None).acyclic, "{engine}: credit loop with ANs");
        }
    }
}
