//! dfsssp: shortest paths, per-VL channel dependency graphs acyclic on rings and tori,
//! SL per path retrievable; one VL suffices on a fat tree.

mod sm_util;

use fabric::subnet_manager::{cdg, Engine, SmConfig, SubnetManager};
use fabric::topology::Topology;
use sm_util::{shortest_links, walk, L};

fn check(t: &Topology) -> (u8, SubnetManager) {
    let mut sm = SubnetManager::new(t, SmConfig { engine: Engine::Dfsssp, ..Default::default() });
    let r = sm.bring_up();
    assert_eq!(r.engine, Engine::Dfsssp, "fallback: {:?}", r.fallback);
    let n = t.endpoints.len() as u32;
    for s in 0..n {
        for d in 0..n {
            if s != d {
                let p = walk(t, sm.lft(), s, d).unwrap_or_else(|| panic!("{s}->{d} unreachable"));
                assert_eq!(Some(p.len() + 1), shortest_links(t, s, d, &[]), "{s}->{d}");
                assert!(sm.path_sl(s, d) < 8);
            }
        }
    }
    let st = sm.state().unwrap();
    let sl = st.routed.sl.as_ref().expect("dfsssp assigns SLs");
    let c = cdg::check(&st.fabric, &st.routed.tables, Some(sl));
    assert!(c.acyclic, "per-VL CDG has a cycle: {:?}", c.cycle);
    // The same tables on one VL are cyclic (that is why VLs were needed).
    (sl.vls_needed, sm)
}

#[test]
fn dfsssp_breaks_ring_and_torus_cycles_with_vls() {
    // Odd rings (and a torus with an odd ring) have unique 2-hop paths all around, so one
    // VL is cyclic; a 4×4 torus has ties the load balancing may resolve acyclically.
    for (t, must_cycle) in [
        (Topology::ring(6, 1, L, L).unwrap(), true),
        (Topology::ring(9, 2, L, L).unwrap(), true),
        (Topology::torus_2d(5, 3, 2, L, L).unwrap(), true),
        (Topology::torus_2d(4, 4, 1, L, L).unwrap(), false),
    ] {
        let (needed, sm) = check(&t);
        let st = sm.state().unwrap();
        let single_vl_cyclic = !cdg::check(&st.fabric, &st.routed.tables, None).acyclic;
        assert_eq!(needed >= 2, single_vl_cyclic, "VLs are added exactly when one VL is cyclic");
        if !must_cycle {
            continue;
        }
        assert!(single_vl_cyclic);
        // Paths that need the upper VL exist, and SLs differ across pairs.
        let n = t.endpoints.len() as u32;
        let sls: std::collections::BTreeSet<u8> =
            (0..n).flat_map(|s| (0..n).filter(move |&d| d != s).map(move |d| (s, d))).map(|(s, d)| sm.path_sl(s, d)).collect();
        assert!(sls.len() >= 2, "{sls:?}");
    }
}

#[test]
fn dfsssp_needs_one_vl_on_a_fat_tree() {
    let (needed, _) = check(&Topology::fat_tree(4, L, L).unwrap());
    assert_eq!(needed, 1);
}
