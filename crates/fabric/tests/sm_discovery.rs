//! Discovery finds exactly the topology's nodes and links, with the number of SMPs the
//! directed-route BFS must send.

mod sm_util;

use std::collections::BTreeSet;

use fabric::subnet_manager::layout::IbLayout;
use fabric::subnet_manager::mad::Agents;
use fabric::subnet_manager::{discovery, SmConfig, SubnetManager};
use fabric::topology::{PortId, Topology};
use sm_util::L;

fn topologies() -> Vec<(&'static str, Topology)> {
    vec![
        ("leaf-spine 4x2x3 with 2 uplinks", Topology::leaf_spine(4, 2, 3, 1, 2, L, L).unwrap()),
        ("fat tree k=4", Topology::fat_tree(4, L, L).unwrap()),
        ("ring 5", Topology::ring(5, 2, L, L).unwrap()),
        ("torus 3x3", Topology::torus_2d(3, 3, 1, L, L).unwrap()),
        ("torus 2x2 (parallel links)", Topology::torus_2d(2, 2, 1, L, L).unwrap()),
    ]
}

/// Links as ((GUID, IB port), (GUID, IB port)), each once.
fn topo_links(t: &Topology, lay: &IbLayout, down: &[PortId]) -> BTreeSet<((u64, u8), (u64, u8))> {
    let mut v = BTreeSet::new();
    for (i, p) in t.ports.iter().enumerate() {
        let Some(peer) = p.peer else { continue };
        if down.contains(&PortId(i as u32)) || down.contains(&peer) {
            continue;
        }
        let (a, ap) = lay.ib_port(PortId(i as u32));
        let (b, bp) = lay.ib_port(peer);
        let x = (lay.nodes[a as usize].guid, ap);
        let y = (lay.nodes[b as usize].guid, bp);
        v.insert((x.min(y), x.max(y)));
    }
    v
}

fn found_links(sub: &discovery::Subnet) -> BTreeSet<((u64, u8), (u64, u8))> {
    sub.links()
        .into_iter()
        .map(|((a, ap), (b, bp))| {
            let x = (sub.nodes[a as usize].guid, ap);
            let y = (sub.nodes[b as usize].guid, bp);
            (x.min(y), x.max(y))
        })
        .collect()
}

#[test]
fn finds_every_node_and_link_with_the_expected_smps() {
    for (name, t) in topologies() {
        let lay = IbLayout::synthesize(&t);
        let mut agents = Agents::new(t.clone(), lay.clone());
        let (n, p) = lay.sm;
        let sub = discovery::discover(&mut agents.at(n, p), p);

        let want_nodes: BTreeSet<u64> = lay.nodes.iter().map(|n| n.guid).collect();
        let got_nodes: BTreeSet<u64> = sub.nodes.iter().map(|n| n.guid).collect();
        assert_eq!(got_nodes, want_nodes, "{name}: nodes");
        assert_eq!(found_links(&sub), topo_links(&t, &lay, &[]), "{name}: links");

        // The SMP count the BFS must send, from the topology alone.
        let switches: Vec<_> = t.nodes.iter().filter(|n| n.kind == fabric::topology::NodeKind::Switch).collect();
        let cabled = |n: &fabric::topology::Node| (n.first_port..n.first_port + n.nports).filter(|&q| t.ports[q as usize].peer.is_some()).count() as u64;
        // SM on a CA: NodeInfo of itself, of the switch behind its port, then every cabled
        // switch port except the one each switch was reached through.
        let node_info = 2 + switches.iter().map(|s| cabled(s) - 1).sum::<u64>();
        let port_info = switches.iter().map(|s| s.nports as u64 + 1).sum::<u64>() + t.endpoints.len() as u64;
        assert_eq!(sub.smps.get_node_info, node_info, "{name}: NodeInfo");
        assert_eq!(sub.smps.get_node_desc, t.nodes.len() as u64, "{name}: NodeDescription");
        assert_eq!(sub.smps.get_switch_info, switches.len() as u64, "{name}: SwitchInfo");
        assert_eq!(sub.smps.get_port_info, port_info, "{name}: PortInfo");
        assert_eq!(sub.smps.get_sm_info, 0, "{name}: no other SM");
        assert_eq!(sub.smps.timeouts, 0, "{name}: nothing lost");
    }
}

#[test]
fn a_dead_link_is_not_found_and_its_nodes_still_are() {
    let t = Topology::fat_tree(4, L, L).unwrap();
    let lay = IbLayout::synthesize(&t);
    // An edge-to-aggregation link: both switches stay reachable through others.
    let edge = t.nodes.iter().position(|n| n.name == "edge1-0").unwrap();
    let up = PortId(t.nodes[edge].first_port + 2);
    let mut agents = Agents::new(t.clone(), lay.clone());
    agents.set_port_up(up, false);
    let (n, p) = lay.sm;
    let sub = discovery::discover(&mut agents.at(n, p), p);
    assert_eq!(sub.nodes.len(), t.nodes.len());
    assert_eq!(found_links(&sub), topo_links(&t, &lay, &[up]));
}

#[test]
fn bring_up_programs_every_switch_and_counts_its_smps() {
    let t = Topology::fat_tree(4, L, L).unwrap();
    let mut sm = SubnetManager::new(&t, SmConfig::default());
    let r = sm.bring_up();
    assert_eq!(r.nodes, t.nodes.len());
    let st = sm.state().unwrap();
    // 20 switches + 16 CAs = 36 LIDs (1..=36): one LFT block per switch.
    assert_eq!(st.fabric.nlid, 37);
    assert_eq!(r.smps.set_lft, 20);
    assert_eq!(r.smps.set_switch_info, 20);
    // LIDs for 16 CA ports and 20 switch port 0s; every cabled port activated twice.
    let cabled = t.ports.iter().filter(|p| p.peer.is_some()).count() as u64;
    assert_eq!(r.smps.set_port_info, 36 + 2 * cabled);
    assert!(r.total > units::SimDuration::ZERO);
    // A second sweep with nothing changed writes nothing.
    let again = sm.resweep(&[]);
    assert_eq!(again.smps.set_lft + again.smps.set_port_info + again.smps.set_switch_info, 0);
}
