//! Helpers shared by the subnet-manager tests.
#![allow(dead_code)]

use std::collections::VecDeque;

use fabric::lft::Lft;
use fabric::topology::{NodeId, PortId, Topology};
use units::{BitRate, SimDuration};

pub const L: (BitRate, SimDuration) = (BitRate::from_gbps(200), SimDuration::from_ns(5));

/// Follows the data-plane table from endpoint `s` to `d`: the ports taken (switch output
/// ports), or `None` if a hop has no entry, leads nowhere, or loops.
pub fn walk(t: &Topology, lft: &Lft, s: u32, d: u32) -> Option<Vec<PortId>> {
    let mut port = t.port(t.ep_port(s)).peer?;
    let mut taken = vec![];
    for _ in 0..64 {
        let node = t.port(port).node;
        if !t.is_switch(node) {
            return (node == t.endpoints[d as usize]).then_some(taken);
        }
        let out = lft.get(node, d)?;
        taken.push(out);
        port = t.port(out).peer?;
    }
    None
}

/// Links between endpoints `s` and `d` on a shortest path, by BFS over the topology
/// (`down` ports excluded).
pub fn shortest_links(t: &Topology, s: u32, d: u32, down: &[PortId]) -> Option<usize> {
    let src = t.endpoints[s as usize];
    let dst = t.endpoints[d as usize];
    let mut dist = vec![usize::MAX; t.nodes.len()];
    dist[src.0 as usize] = 0;
    let mut q = VecDeque::from([src]);
    while let Some(n) = q.pop_front() {
        if n == dst {
            return Some(dist[n.0 as usize]);
        }
        if n != src && !t.is_switch(n) {
            continue;
        }
        let node = t.node(n);
        for p in node.first_port..node.first_port + node.nports {
            let p = PortId(p);
            let Some(peer) = t.port(p).peer else { continue };
            if down.contains(&p) || down.contains(&peer) {
                continue;
            }
            let m = t.port(peer).node;
            if dist[m.0 as usize] == usize::MAX {
                dist[m.0 as usize] = dist[n.0 as usize] + 1;
                q.push_back(m);
            }
        }
    }
    None
}

/// The node a port leads to.
pub fn peer_node(t: &Topology, p: PortId) -> NodeId {
    t.port(t.port(p).peer.unwrap()).node
}
