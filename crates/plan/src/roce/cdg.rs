//! The cyclic-buffer-dependency check: the simulator's own shortest-path ECMP routes
//! ([`fabric::routing::Routes`]) on the planned Clos, checked with the subnet manager's
//! channel-dependency checker, intact and after every single switch-to-switch link failure
//! (routes recomputed over the surviving links, as BGP would).
//!
//! Left out: routing other than shortest-path ECMP, and multiple simultaneous failures.

use fabric::routing::Routes;
use fabric::subnet_manager::cdg::dependency_cycle;
use fabric::topology::{PortId, Topology};
use serde::Serialize;
use units::{BitRate, SimDuration};

use super::{RoceInput, Topo};

/// The cyclic-buffer-dependency check of the planned Clos under ECMP.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CdgReport {
    pub switches: usize,
    pub links: usize,
    pub intact_cycle: Option<Vec<String>>,
    /// Single switch-to-switch link failures checked and those leaving a cycle.
    pub failures_checked: usize,
    /// Only one failure per class of link was checked (large fabrics; see [`cdg_check`]).
    pub by_symmetry: bool,
    pub failures_with_cycle: Vec<(String, Vec<String>)>,
}

/// Builds the planned Clos as the simulator would (link speeds and cables do not matter to
/// routing).
pub fn topology(i: &RoceInput) -> Result<Topology, String> {
    let l = (BitRate::from_gbps(100), SimDuration::from_ns(5));
    let t = match i.topology {
        Topo::LeafSpine { leaves, spines, hosts_per_leaf } => Topology::leaf_spine(leaves, spines, hosts_per_leaf, 1, 1, l, l),
        Topo::FatTree { k } => Topology::fat_tree(k, l, l),
    };
    t.map_err(|e| format!("{e:?}"))
}

fn port_name(t: &Topology, p: PortId) -> String {
    let pt = t.port(p);
    let peer = pt.peer.map(|q| t.node(t.port(q).node).name.clone()).unwrap_or_default();
    format!("{}:{}->{}", t.node(pt.node).name, pt.index, peer)
}

/// Fabrics with at most this many switch-to-switch links have every single failure checked.
pub const CDG_EVERY_LINK: usize = 1024;

/// Channel dependency cycles of shortest-path ECMP on the topology: intact, and after each
/// single switch-to-switch link failure (one per class of link above [`CDG_EVERY_LINK`]).
pub fn cdg_check(t: &Topology) -> Result<CdgReport, String> {
    let names = |c: Vec<PortId>| c.into_iter().map(|p| port_name(t, p)).collect::<Vec<_>>();
    let intact = dependency_cycle(t, &Routes::build(t, 1, |_| true), |_| true)?.map(names);
    let mut links = vec![];
    for (pi, p) in t.ports.iter().enumerate() {
        if let Some(q) = p.peer {
            if t.is_switch(p.node) && t.is_switch(t.port(q).node) && (pi as u32) < q.0 {
                links.push((PortId(pi as u32), q));
            }
        }
    }
    // Above CDG_EVERY_LINK links, one failure per class of link (the tiers it joins): the
    // planned Clos is symmetric within a class and every ECMP member counts (no hashing),
    // so one failure stands for its class.
    let checked: Vec<(PortId, PortId)> = if links.len() <= CDG_EVERY_LINK {
        links.clone()
    } else {
        let tier = |p: PortId| t.node(t.port(p).node).tier;
        let mut seen = std::collections::BTreeSet::new();
        links.iter().copied().filter(|&(a, b)| seen.insert((tier(a).min(tier(b)), tier(a).max(tier(b))))).collect()
    };
    let mut failures_with_cycle = vec![];
    for &(a, b) in &checked {
        let up = |x: PortId| x != a && x != b;
        if let Some(c) = dependency_cycle(t, &Routes::build(t, 1, up), up)? {
            failures_with_cycle.push((port_name(t, a), names(c)));
        }
    }
    Ok(CdgReport {
        switches: t.nodes.iter().filter(|n| n.kind == fabric::topology::NodeKind::Switch).count(),
        links: links.len(),
        intact_cycle: intact,
        failures_checked: checked.len(),
        by_symmetry: checked.len() < links.len(),
        failures_with_cycle,
    })
}
