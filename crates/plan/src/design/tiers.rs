//! The counts per switch tier and per link layer, read out of `model::sizing`'s fabric:
//! switches, ports down and up, ports used and free, links, cables, and transceiver
//! modules (a switch needs ⌈ports used / ports per module⌉), and their totals.
//!
//! Left out: any count of its own; every switch and link count is `model::sizing`'s.

use model::sizing::Fabric;

use super::wiring::Placement;
use super::{DesignInput, LinkLayer, Tier, Totals};

/// Leaf, spine and core (as many as the fabric has tiers).
pub(super) fn switch_tiers(inp: &DesignInput, f: &Fabric) -> Vec<Tier> {
    let c = f.clos;
    let r = inp.radix;
    let loads = leaf_loads(f);
    let ppt = inp.switch_ports_per_transceiver as u64;
    let modules = |groups: &[(u64, u64)]| groups.iter().map(|&(n, used)| n * used.div_ceil(ppt)).sum::<u64>();
    let mut tiers = vec![];
    let leaf_groups: Vec<(u64, u64)> = loads.iter().map(|&l| (1, l + c.leaf_uplinks as u64)).collect();
    tiers.push(Tier {
        name: "leaf",
        switches: c.leaves,
        ports_down: f.leaf_downlinks,
        ports_up: c.leaf_uplinks,
        ports_used: f.node_leaf_links + c.leaf_spine_links,
        ports_free: c.leaves * r as u64 - f.node_leaf_links - c.leaf_spine_links,
        max_ports_used: leaf_groups.iter().map(|g| g.1).max().unwrap_or(0),
        links_down: f.node_leaf_links,
        links_up: c.leaf_spine_links,
        transceivers: modules(&leaf_groups),
    });
    let (lpp, lpp_last) = c.links_per_leaf_spine();
    let (lpc, lpc_short) = c.links_per_spine_core();
    if c.tiers >= 2 {
        let sup = c.spine_uplinks as u64;
        let groups = [(c.spines - c.last_pod_spines, c.pod_leaves * lpp + sup), (c.last_pod_spines, c.last_pod_leaves * lpp_last + sup)];
        tiers.push(Tier {
            name: "spine",
            switches: c.spines,
            ports_down: c.spine_downlinks,
            ports_up: c.spine_uplinks,
            ports_used: c.leaf_spine_links + c.spine_core_links,
            ports_free: c.spines * r as u64 - c.leaf_spine_links - c.spine_core_links,
            max_ports_used: groups.iter().filter(|g| g.0 > 0).map(|g| g.1).max().unwrap_or(0),
            links_down: c.leaf_spine_links,
            links_up: c.spine_core_links,
            transceivers: modules(&groups),
        });
    }
    if c.tiers >= 3 {
        let full = c.full_planes() * c.plane_cores;
        let groups = [(full, c.pods * lpc), (c.cores - full, (c.pods - 1) * lpc_short)];
        tiers.push(Tier {
            name: "core",
            switches: c.cores,
            ports_down: r,
            ports_up: 0,
            ports_used: c.spine_core_links,
            ports_free: c.cores * r as u64 - c.spine_core_links,
            max_ports_used: groups.iter().filter(|g| g.0 > 0).map(|g| g.1).max().unwrap_or(0),
            links_down: c.spine_core_links,
            links_up: 0,
            transceivers: modules(&groups),
        });
    }
    tiers
}

/// Node-leaf, leaf-spine and spine-core (as many as the fabric has tiers).
pub(super) fn link_layers(f: &Fabric) -> Vec<LinkLayer> {
    let c = f.clos;
    let (lpp, _) = c.links_per_leaf_spine();
    let (lpc, _) = c.links_per_spine_core();
    let mut layers = vec![LinkLayer { name: "node-leaf", links: f.node_leaf_links, cables: f.node_leaf_links, links_per_pair: 1 }];
    if c.tiers >= 2 {
        layers.push(LinkLayer { name: "leaf-spine", links: c.leaf_spine_links, cables: c.leaf_spine_links, links_per_pair: lpp });
    }
    if c.tiers >= 3 {
        layers.push(LinkLayer { name: "spine-core", links: c.spine_core_links, cables: c.spine_core_links, links_per_pair: lpc });
    }
    layers
}

/// The sums over tiers and layers, and the nodes' transceivers (one per UFM port).
pub(super) fn totals(inp: &DesignInput, f: &Fabric, tiers: &[Tier], layers: &[LinkLayer]) -> Totals {
    let node_transceivers = f.nodes * (f.rails as u64).div_ceil(inp.node_ports_per_transceiver as u64) + f.ufm_ports as u64;
    let switch_transceivers: u64 = tiers.iter().map(|t| t.transceivers).sum();
    let links: u64 = layers.iter().map(|l| l.links).sum();
    Totals {
        switches: f.clos.switches(),
        ports_used: tiers.iter().map(|t| t.ports_used).sum(),
        links,
        cables: links,
        node_transceivers,
        switch_transceivers,
        transceivers: node_transceivers + switch_transceivers,
    }
}

/// Endpoint ports (NICs and UFM) cabled to each leaf, in leaf order.
fn leaf_loads(f: &Fabric) -> Vec<u64> {
    let p = Placement(f);
    let mut loads = vec![0u64; f.clos.leaves as usize];
    for n in 0..f.nodes {
        for r in 0..f.rails as u64 {
            loads[p.node(n, r).0 as usize] += 1;
        }
    }
    for u in 0..f.ufm_ports as u64 {
        loads[p.ufm(u).0 as usize] += 1;
    }
    loads
}
