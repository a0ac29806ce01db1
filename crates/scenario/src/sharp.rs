//! SHARP's Aggregation Manager, as far as a job needs it: which switches' aggregation
//! nodes (ANs) reduce a job's data, and in which tree.
//!
//! In NVIDIA SHARP the Aggregation Manager (AM) builds aggregation trees over the
//! fabric's switches and assigns each job a tree whose leaves are the switches its
//! hosts are cabled to (Graham et al., "Scalable Hierarchical Aggregation Protocol
//! (SHArP)", COMHPC 2016, §III; NVIDIA SHARP documentation, "Aggregation Manager"). Here
//! the tree is computed per job from the topology:
//! * the root is the switch whose farthest leaf switch of the job is nearest (ties: the
//!   smaller sum of distances, then the lower node id) — a spine of a leaf-spine, a core
//!   of a fat tree, the leaf itself when every rank is on one leaf;
//! * every other switch hangs off the switch from which a breadth-first search from the
//!   root first reached it (neighbours in port order), so a leaf's data climbs a
//!   shortest path;
//! * a rank's parent is the AN of the switch its NIC is cabled to; a switch's AN's parent
//!   is its tree parent's AN;
//! * an AN with a single child would only forward what passes through its switch anyway,
//!   so it is left out and its child sends to the next AN up (the reduction and its
//!   bandwidth are unchanged; a real AM keeps it in the tree, which costs one more
//!   store-and-forward of each chunk).
//!
//! Simplified: an AN forwards a chunk (the job's `chunk`) once all of it has arrived from
//! every child, where a SHARPv2 switch streams packet by packet, so each tree level adds
//! one chunk time: large messages do not notice, a message of a few chunks does (a
//! smaller `chunk` approaches streaming, at the cost of more transfers to simulate).
//!
//! Left out: the AM's limits on trees, jobs and outstanding operations per switch (the
//! SHARP resource model) and its spreading of jobs over trees (here jobs on the same
//! leaves share a root: the lowest-numbered eligible switch), SHARP's reliability protocol, and multicast for the result (the
//! result comes down as one unicast stream per tree edge, which loads every link as
//! multicast would).

use std::collections::VecDeque;

use fabric::topology::{NodeId, Topology};

/// A job's aggregation tree in the workload's terms, and where its vertices live.
#[derive(Clone, Debug)]
pub struct JobTree {
    pub tree: workload::AggregationTree,
    /// Endpoint of every vertex: the ranks' NICs, then the ANs used.
    pub endpoints: Vec<u32>,
    /// The switch of each aggregation vertex (vertex `ranks + i` is `switches[i]`).
    pub switches: Vec<NodeId>,
}

/// Neighbouring switches of each switch, in port order, each once.
fn switch_graph(t: &Topology) -> Vec<Vec<u32>> {
    t.nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let mut v = vec![];
            if t.is_switch(NodeId(i as u32)) {
                for pi in n.first_port..n.first_port + n.nports {
                    let Some(q) = t.ports[pi as usize].peer else { continue };
                    let m = t.port(q).node;
                    if t.is_switch(m) && !v.contains(&m.0) {
                        v.push(m.0);
                    }
                }
            }
            v
        })
        .collect()
}

/// Breadth-first distances and parents from `root` over the switch graph.
fn bfs(adj: &[Vec<u32>], root: u32) -> (Vec<u32>, Vec<u32>) {
    let mut dist = vec![u32::MAX; adj.len()];
    let mut parent = vec![u32::MAX; adj.len()];
    dist[root as usize] = 0;
    let mut q = VecDeque::from([root]);
    while let Some(s) = q.pop_front() {
        for &m in &adj[s as usize] {
            if dist[m as usize] == u32::MAX {
                dist[m as usize] = dist[s as usize] + 1;
                parent[m as usize] = s;
                q.push_back(m);
            }
        }
    }
    (dist, parent)
}

/// The aggregation tree of a job whose rank r runs on endpoint `ranks[r]`. Every switch
/// the tree uses must have an aggregation node ([`Topology::with_aggregation_nodes`]).
pub fn job_tree(t: &Topology, ranks: &[u32]) -> Result<JobTree, String> {
    let n = ranks.len();
    if n < 2 {
        return Err(format!("an aggregation tree needs at least 2 ranks, got {n}"));
    }
    let adj = switch_graph(t);
    let leaf_of: Vec<u32> = ranks
        .iter()
        .map(|&ep| t.port(t.ep_port(ep)).peer.map(|q| t.port(q).node.0).ok_or_else(|| format!("endpoint {ep} is not cabled")))
        .collect::<Result<_, _>>()?;
    let mut leaves = leaf_of.clone();
    leaves.sort_unstable();
    leaves.dedup();
    // The root: the switch nearest to the job's farthest leaf.
    let mut best: Option<((u32, u64, u32), Vec<u32>)> = None;
    for s in (0..t.nodes.len() as u32).filter(|&s| t.is_switch(NodeId(s))) {
        let (dist, parent) = bfs(&adj, s);
        if leaves.iter().any(|&l| dist[l as usize] == u32::MAX) {
            continue;
        }
        let far = leaves.iter().map(|&l| dist[l as usize]).max().unwrap_or(0);
        let sum = leaves.iter().map(|&l| dist[l as usize] as u64).sum();
        let key = (far, sum, s);
        if best.as_ref().is_none_or(|(k, _)| key < *k) {
            best = Some((key, parent));
        }
    }
    let Some(((_, _, root), sw_parent)) = best else {
        return Err("no switch reaches every leaf switch of the job".into());
    };
    // Vertices: ranks, then one per switch on a leaf's way to the root (by node id).
    let mut used = vec![false; t.nodes.len()];
    for &l in &leaves {
        let mut s = l;
        while !used[s as usize] {
            used[s as usize] = true;
            if s == root {
                break;
            }
            s = sw_parent[s as usize];
        }
    }
    let switches: Vec<u32> = (0..t.nodes.len() as u32).filter(|&s| used[s as usize]).collect();
    let mut vertex_of = vec![u32::MAX; t.nodes.len()];
    for (i, &s) in switches.iter().enumerate() {
        vertex_of[s as usize] = (n + i) as u32;
    }
    let mut parent: Vec<Option<u32>> = leaf_of.iter().map(|&l| Some(vertex_of[l as usize])).collect();
    parent.extend(switches.iter().map(|&s| (s != root).then(|| vertex_of[sw_parent[s as usize] as usize])));
    // Leave out aggregation vertices with one child (repeatedly: a chain collapses).
    let mut gone = vec![false; parent.len()];
    loop {
        let mut children = vec![0u32; parent.len()];
        for (v, p) in parent.iter().enumerate() {
            if let (false, Some(p)) = (gone[v], p) {
                children[*p as usize] += 1;
            }
        }
        let Some(a) = (n..parent.len()).find(|&a| !gone[a] && children[a] == 1) else { break };
        let child = (0..parent.len()).find(|&v| !gone[v] && parent[v] == Some(a as u32)).expect("one child");
        parent[child] = parent[a];
        gone[a] = true;
    }
    // Renumber the kept vertices.
    let mut new_id = vec![u32::MAX; parent.len()];
    let mut next = 0u32;
    for v in 0..parent.len() {
        if !gone[v] {
            new_id[v] = next;
            next += 1;
        }
    }
    let tree = workload::AggregationTree { parent: (0..parent.len()).filter(|&v| !gone[v]).map(|v| parent[v].map(|p| new_id[p as usize])).collect() };
    let kept: Vec<NodeId> = switches.iter().enumerate().filter(|&(i, _)| !gone[n + i]).map(|(_, &s)| NodeId(s)).collect();
    let mut endpoints = ranks.to_vec();
    for &s in &kept {
        let ep = t.aggregator_of(s).ok_or_else(|| format!("switch `{}` has no aggregation node", t.node(s).name))?;
        endpoints.push(ep);
    }
    Ok(JobTree { tree, endpoints, switches: kept })
}

#[cfg(test)]
mod tests {
    use super::*;
    use units::{BitRate, SimDuration};

    const L: (BitRate, SimDuration) = (BitRate::from_gbps(400), SimDuration::from_ns(5));

    fn names(t: &Topology, j: &JobTree) -> Vec<String> {
        j.switches.iter().map(|&s| t.node(s).name.clone()).collect()
    }

    #[test]
    fn leaf_spine_tree_is_leaves_under_the_first_spine() {
        let t = Topology::leaf_spine(2, 2, 4, 1, 1, L, L).unwrap().with_aggregation_nodes().unwrap();
        let j = job_tree(&t, &(0..8).collect::<Vec<_>>()).unwrap();
        assert_eq!(names(&t, &j), ["leaf0", "leaf1", "spine0"]);
        let p = |v: u32| j.tree.parent[v as usize];
        assert!((0..4).all(|r| p(r) == Some(8)) && (4..8).all(|r| p(r) == Some(9)));
        assert_eq!((p(8), p(9), p(10)), (Some(10), Some(10), None));
        assert_eq!(j.endpoints[8..], [t.aggregator_of(NodeId(0)).unwrap(), t.aggregator_of(NodeId(1)).unwrap(), t.aggregator_of(NodeId(2)).unwrap()]);
    }

    #[test]
    fn single_child_aggregation_nodes_are_left_out() {
        let t = Topology::leaf_spine(4, 2, 4, 1, 1, L, L).unwrap().with_aggregation_nodes().unwrap();
        // One rank on leaf0, two on leaf1: leaf0's AN would have one child.
        let j = job_tree(&t, &[0, 4, 5]).unwrap();
        assert_eq!(names(&t, &j), ["leaf1", "spine0"]);
        assert_eq!(j.tree.parent, [Some(4), Some(3), Some(3), Some(4), None]);
        // Every rank on one leaf: that leaf is the root.
        let j = job_tree(&t, &[0, 1, 2]).unwrap();
        assert_eq!(names(&t, &j), ["leaf0"]);
    }

    #[test]
    fn fat_tree_root_is_a_core_over_every_pod() {
        let t = Topology::fat_tree(4, L, L).unwrap().with_aggregation_nodes().unwrap();
        let j = job_tree(&t, &(0..16).collect::<Vec<_>>()).unwrap();
        let names = names(&t, &j);
        assert_eq!(names.iter().filter(|x| x.starts_with("edge")).count(), 8);
        assert_eq!(names.iter().filter(|x| x.starts_with("agg")).count(), 4);
        assert_eq!(names.last().unwrap(), "core0");
        assert_eq!(j.tree.parent.iter().filter(|p| p.is_none()).count(), 1);
        assert!(job_tree(&Topology::fat_tree(4, L, L).unwrap(), &[0, 2]).unwrap_err().contains("no aggregation node"));
    }
}
