//! The driver between workloads and the fabric: places a workload's ranks on NICs and
//! turns each node of its transfer graph into a simulator flow (dependencies, shared
//! QPs, barriers) as the graph is generated. The workload crate knows nothing of the fabric; the simulator nothing of
//! collectives.

use units::Bytes;
use workload::Node;

use fabric::params::FlowSpec;
use fabric::topology::{NodeKind, Topology};

/// How ranks are laid onto the job's NICs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Rank r on the job's host r / rails, NIC rail r % rails: consecutive ranks share a
    /// host, as a scheduler numbers GPUs.
    Linear,
    /// Rank r on host r % hosts, rail r / hosts: consecutive ranks share a rail (and so,
    /// in a rail-optimised fabric, a leaf), the order NCCL's rings follow across hosts.
    RailAligned,
    /// A seeded shuffle of the linear placement.
    Random,
}

impl Placement {
    pub fn parse(s: &str) -> Option<Placement> {
        match s {
            "linear" => Some(Placement::Linear),
            "rail-aligned" => Some(Placement::RailAligned),
            "random" => Some(Placement::Random),
            _ => None,
        }
    }
}

/// The NICs of `hosts` (in order) by rail: `nics[h][rail]` = endpoint index.
pub fn host_nics(topo: &Topology, hosts: &[u32]) -> Vec<Vec<u32>> {
    let mut by_host: Vec<Vec<(u32, u32)>> = vec![vec![]; topo.hosts as usize];
    for (ep, &n) in topo.endpoints.iter().enumerate() {
        if let NodeKind::Nic { host, rail, .. } = topo.node(n).kind {
            by_host[host as usize].push((rail, ep as u32));
        }
    }
    hosts
        .iter()
        .map(|&h| {
            let mut v = by_host[h as usize].clone();
            v.sort_unstable();
            v.into_iter().map(|(_, ep)| ep).collect()
        })
        .collect()
}

/// Endpoint of each rank: `ranks` NICs of `hosts` in `placement` order. Every host must
/// have the same number of NICs (the job uses all of them).
pub fn place(topo: &Topology, hosts: &[u32], ranks: u32, placement: Placement, rng: &mut engine::Rng) -> Result<Vec<u32>, String> {
    let nics = host_nics(topo, hosts);
    let rails = nics.first().map_or(0, |v| v.len());
    if nics.iter().any(|v| v.len() != rails) {
        return Err("the job's hosts have different numbers of NICs".into());
    }
    let slots = hosts.len() * rails;
    if ranks as usize > slots {
        return Err(format!("{ranks} ranks do not fit on {} hosts × {rails} NICs", hosts.len()));
    }
    let mut order: Vec<u32> = match placement {
        Placement::Linear | Placement::Random => nics.iter().flatten().copied().collect(),
        Placement::RailAligned => (0..rails).flat_map(|r| nics.iter().map(move |h| h[r])).collect(),
    };
    if placement == Placement::Random {
        for i in (1..order.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            order.swap(i, j);
        }
    }
    order.truncate(ranks as usize);
    Ok(order)
}

/// Node `n` of a job's graph as a flow, written into `f` (whose start, class and group
/// are the job's): vertex v (a rank, or a SHARP aggregation vertex after the ranks) is on
/// endpoint `eps[v]`, node i is flow `first + i`, and connection ids are offset by
/// `conn_base` so jobs never share a QP. Writes into a reused spec because a job's
/// flows are generated each time they are read ([`crate::flow_list`]).
pub fn node_flow(n: &Node, eps: &[u32], first: u32, conn_base: u32, f: &mut FlowSpec) {
    let after = match n {
        Node::Send { src, dst, bytes, conn, after } => {
            (f.src, f.dst, f.size, f.conn, f.join) = (eps[*src as usize], eps[*dst as usize], Bytes(*bytes), Some(conn_base + conn), false);
            after
        }
        Node::Join { after } => {
            (f.src, f.dst, f.size, f.conn, f.join) = (0, 0, Bytes(0), None, true);
            after
        }
    };
    f.after.clear();
    f.after.extend(after.iter().map(|a| a + first));
}
