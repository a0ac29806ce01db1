//! IP routing for RoCEv2: shortest-path ECMP groups, hashed per packet 5-tuple.
//!
//! Each switch holds one ECMP group per destination *leaf* (the switch an endpoint hangs
//! off), not per host: at most `switches × leaves` one-byte entries (switches with equal
//! rows share one), never `hosts²`. A switch that is the destination's leaf forwards
//! straight to the NIC's port. Groups are the neighbours one hop closer to the destination
//! leaf (BFS over up links only), which is what BGP with
//! ECMP converges to on a Clos fabric. Tables can be rebuilt while the simulation runs
//! (a failed link is left out of the BFS).
//!
//! The hash mixes the RoCEv2 5-tuple (source and destination endpoint standing for the IP
//! addresses, UDP source port as the QP's entropy, destination port 4791) with a
//! per-switch seed, as switch ASICs do to avoid hash polarisation. Real ASICs use CRC-based
//! hash functions; a 64-bit mixer stands in for them here.

use crate::lft::Lft;
use crate::topology::{NodeId, NodeKind, PortId, Topology};

pub struct Routes {
    /// Leaf switches (those with endpoints): the columns of `group_of`.
    nleaf: usize,
    /// Switch node → dense switch index (u32::MAX for NICs).
    sw_index: Vec<u32>,
    /// `(row_start[switch] + destination leaf)` → the switch's local group number
    /// (`group_base[switch] + local` indexes `groups`). Identical port lists are stored
    /// once per switch (a fat tree's switch has a handful of distinct groups), and
    /// switches whose rows of local numbers are equal share one row ([`shared_rows`]), so
    /// the per-packet lookup is a byte in a table that stays in cache: 34 rows of 512
    /// bytes on the k = 32 fat tree instead of 1,280 (655 KB, which the 8,192-host run
    /// evicted between two lookups).
    group_of: GroupTable,
    /// Switch index → where its row starts in `group_of`.
    row_start: Vec<usize>,
    group_base: Vec<u32>,
    /// Distinct groups: range in `ports`. Local group 0 of every switch is empty.
    groups: Vec<(u32, u32)>,
    ports: Vec<PortId>,
    /// Endpoint → its leaf (switch index and column) and the leaf port facing it.
    ep_leaf: Vec<EpLeaf>,
    seeds: Vec<u64>,
}

#[derive(Clone, Copy)]
struct EpLeaf {
    sw: u32,
    col: u32,
    port: PortId,
}

/// Local group numbers: a byte each unless some switch has more than 255 groups.
enum GroupTable {
    Narrow(Vec<u8>),
    Wide(Vec<u16>),
}

impl GroupTable {
    #[inline]
    fn get(&self, i: usize) -> usize {
        match self {
            GroupTable::Narrow(v) => v[i] as usize,
            GroupTable::Wide(v) => v[i] as usize,
        }
    }
}

pub const ROCE_UDP_PORT: u16 = 4791;

impl Routes {
    /// Builds ECMP tables; `up(port)` says whether a port's link may carry traffic.
    pub fn build(t: &Topology, seed: u64, up: impl Fn(PortId) -> bool) -> Routes {
        let mut sw_index = vec![u32::MAX; t.nodes.len()];
        let mut switches = vec![];
        for (i, n) in t.nodes.iter().enumerate() {
            if n.kind == NodeKind::Switch {
                sw_index[i] = switches.len() as u32;
                switches.push(NodeId(i as u32));
            }
        }
        let nsw = switches.len();
        let mut col_of = vec![u32::MAX; nsw];
        let mut ep_leaf = vec![];
        for &nic in &t.endpoints {
            let p = t.port(t.port_of(nic, 0));
            let peer = p.peer.expect("topology checked");
            let sw = sw_index[t.port(peer).node.0 as usize];
            col_of[sw as usize] = 0;
            ep_leaf.push(EpLeaf { sw, col: 0, port: peer });
        }
        // Columns in switch order.
        let leaves: Vec<usize> = (0..nsw).filter(|&s| col_of[s] == 0).collect();
        for (c, &s) in leaves.iter().enumerate() {
            col_of[s] = c as u32;
        }
        for e in &mut ep_leaf {
            e.col = col_of[e.sw as usize];
        }
        let nleaf = leaves.len();
        // Switch-to-switch adjacency as (neighbour switch index, local port).
        let adj: Vec<Vec<(u32, PortId)>> = switches
            .iter()
            .map(|&s| {
                let n = t.node(s);
                (n.first_port..n.first_port + n.nports)
                    .map(PortId)
                    .filter(|&p| up(p))
                    .filter_map(|p| {
                        let peer = t.port(p).peer?;
                        let other = t.port(peer).node;
                        (sw_index[other.0 as usize] != u32::MAX && up(peer)).then(|| (sw_index[other.0 as usize], p))
                    })
                    .collect()
            })
            .collect();
        let (group_of, sw_groups) = next_hop_groups(&adj, &leaves);
        let (group_of, row_start) = shared_rows(group_of, &leaves);
        let mut group_base = Vec::with_capacity(nsw);
        let mut groups = vec![];
        let mut ports = vec![];
        for list in &sw_groups {
            group_base.push(groups.len() as u32);
            for g in list {
                groups.push((ports.len() as u32, g.len() as u32));
                ports.extend_from_slice(g);
            }
        }
        let group_of = if sw_groups.iter().all(|g| g.len() <= 256) {
            GroupTable::Narrow(group_of.into_iter().map(|g| g as u8).collect())
        } else {
            GroupTable::Wide(group_of)
        };
        let seeds = (0..nsw as u64).map(|i| engine::Rng::new(seed, engine::stream::ECMP_HASH_SEED + i).next_u64()).collect();
        Routes { nleaf, sw_index, group_of, row_start, group_base, groups, ports, ep_leaf, seeds }
    }

    /// Local repair after a link failure: the switch owning `port` drops it from every
    /// ECMP group it is a member of, at once, before routing reconverges (a switch sees its
    /// own link go down; the rest of the fabric learns it from the routing protocol).
    /// Flows of a shrunk group are re-hashed over the remaining members (no resilient
    /// hashing). `true` if some group changed.
    pub fn prune(&mut self, t: &Topology, port: PortId) -> bool {
        let s = self.sw_index[t.port(port).node.0 as usize];
        if s == u32::MAX {
            return false;
        }
        let s = s as usize;
        let first = self.group_base[s] as usize;
        let last = self.group_base.get(s + 1).map_or(self.groups.len(), |&b| b as usize);
        let mut changed = false;
        for g in first..last {
            let (start, len) = self.groups[g];
            let range = start as usize..(start + len) as usize;
            if let Some(i) = self.ports[range.clone()].iter().position(|&p| p == port) {
                // Keep the survivors in order, the pruned member past the group's end.
                self.ports[range.start + i..range.end].rotate_left(1);
                self.groups[g].1 -= 1;
                changed = true;
            }
        }
        changed
    }

    /// The ECMP group (range in `ports`) at switch index `s` towards leaf column `col`.
    #[inline]
    fn group(&self, s: usize, col: u32) -> (u32, u32) {
        self.groups[self.group_base[s] as usize + self.group_of.get(self.row_start[s] + col as usize)]
    }

    /// Output port at switch `sw` for a packet to endpoint `dst`, hashing the 5-tuple.
    /// `None` when the destination is unreachable.
    #[inline]
    pub fn next_hop(&self, sw: NodeId, src: u32, dst: u32, sport: u16) -> Option<PortId> {
        let s = self.sw_index[sw.0 as usize] as usize;
        let leaf = self.ep_leaf[dst as usize];
        if s == leaf.sw as usize {
            return Some(leaf.port);
        }
        let (start, len) = self.group(s, leaf.col);
        match len {
            0 => None,
            1 => Some(self.ports[start as usize]),
            _ => {
                let h = hash5(self.seeds[s], src, dst, sport);
                Some(self.ports[start as usize + pick(h, len as usize)])
            }
        }
    }

    /// The ECMP hash of switch `sw` (its seed mixed with the 5-tuple), for load balancers
    /// that re-hash: `salt` is xored into the seed (0 gives [`Routes::next_hop`]'s hash).
    #[inline]
    pub fn hash(&self, sw: NodeId, salt: u64, src: u32, dst: u32, sport: u16) -> u64 {
        hash5(self.seed(sw) ^ salt, src, dst, sport)
    }

    /// Switch `sw`'s ECMP seed ([`Routes::hash`] is [`hash5`] of it xored with a salt).
    #[inline]
    pub fn seed(&self, sw: NodeId) -> u64 {
        self.seeds[self.sw_index[sw.0 as usize] as usize]
    }

    /// The dense index of switch `node` (`u32::MAX` for a NIC), the numbering the
    /// channel-dependency check uses.
    pub fn switch_index(&self, node: NodeId) -> u32 {
        self.sw_index[node.0 as usize]
    }

    /// Leaf switches (those with endpoints).
    pub fn leaves(&self) -> usize {
        self.nleaf
    }

    /// Endpoint `dst`'s leaf: its switch index and its leaf number (`0..leaves()`).
    pub fn leaf_of(&self, dst: u32) -> (u32, u32) {
        let l = self.ep_leaf[dst as usize];
        (l.sw, l.col)
    }

    /// Every member of the ECMP group at switch `sw` towards endpoint `dst` (the leaf's port
    /// to it when `sw` is its leaf); empty when unreachable.
    pub fn next_hops(&self, sw: NodeId, dst: u32) -> &[PortId] {
        let s = self.sw_index[sw.0 as usize] as usize;
        let leaf = &self.ep_leaf[dst as usize];
        if s == leaf.sw as usize {
            return std::slice::from_ref(&leaf.port);
        }
        let (start, len) = self.group(s, leaf.col);
        &self.ports[start as usize..(start + len) as usize]
    }

    /// Forwarding tables that send each destination over one of its shortest paths, chosen
    /// by hashing the destination with the switch's seed: deterministic, destination-based
    /// routing such as an IB subnet manager programs, balanced by the hash rather than by
    /// counting routes per port (which OpenSM's engines do).
    pub fn destination_lft(&self, t: &Topology) -> Lft {
        let mut lft = Lft::new(t);
        for (i, n) in t.nodes.iter().enumerate() {
            if n.kind != NodeKind::Switch {
                continue;
            }
            let sw = NodeId(i as u32);
            let s = self.sw_index[i] as usize;
            for dst in 0..t.endpoints.len() as u32 {
                let leaf = self.ep_leaf[dst as usize];
                let port = if s == leaf.sw as usize {
                    Some(leaf.port)
                } else {
                    let (start, len) = self.group(s, leaf.col);
                    (len > 0).then(|| {
                        let h = hash5(self.seeds[s], 0, dst, 0);
                        self.ports[start as usize + pick(h, len as usize)]
                    })
                };
                lft.set(sw, dst, port);
            }
        }
        lft
    }

    /// Number of equal-cost next hops at `sw` towards endpoint `dst`.
    pub fn fanout(&self, sw: NodeId, dst: u32) -> u32 {
        let s = self.sw_index[sw.0 as usize] as usize;
        let leaf = self.ep_leaf[dst as usize];
        if s == leaf.sw as usize {
            1
        } else {
            self.group(s, leaf.col).1
        }
    }
}

/// Every switch's ECMP group towards each destination leaf: the ports to neighbours one
/// hop closer (breadth-first search from the leaf over `adj`, the switch-to-switch links
/// up). Returns the `(switch · nleaf + leaf)` → local group table and each switch's
/// distinct groups, numbered in destination order (local 0: empty). The maps are for
/// lookups only, so the tables do not depend on hashing.
fn next_hop_groups(adj: &[Vec<(u32, PortId)>], leaves: &[usize]) -> (Vec<u16>, Vec<Vec<Vec<PortId>>>) {
    let (nsw, nleaf) = (adj.len(), leaves.len());
    let mut group_of = vec![0u16; nsw * nleaf];
    let mut sw_groups: Vec<Vec<Vec<PortId>>> = vec![vec![vec![]]; nsw];
    let mut local: Vec<std::collections::HashMap<Vec<PortId>, u16>> = vec![Default::default(); nsw];
    let mut dist = vec![u32::MAX; nsw];
    let mut queue = std::collections::VecDeque::new();
    let mut g = vec![];
    let mut last_col = vec![0u32; nsw];
    for (col, &d) in leaves.iter().enumerate() {
        dist.fill(u32::MAX);
        dist[d] = 0;
        queue.clear();
        queue.push_back(d as u32);
        while let Some(u) = queue.pop_front() {
            for &(v, _) in &adj[u as usize] {
                if dist[v as usize] == u32::MAX {
                    dist[v as usize] = dist[u as usize] + 1;
                    queue.push_back(v);
                }
            }
        }
        for s in 0..nsw {
            if s == d || dist[s] == u32::MAX {
                continue;
            }
            g.clear();
            g.extend(adj[s].iter().filter(|&&(v, _)| dist[v as usize] + 1 == dist[s]).map(|&(_, p)| p));
            if g.is_empty() {
                continue;
            }
            // Most destinations reuse the group the previous one used (the up links).
            let last = group_of[s * nleaf + last_col[s] as usize];
            group_of[s * nleaf + col] = if last != 0 && sw_groups[s][last as usize] == g {
                last
            } else if let Some(&n) = local[s].get(&g) {
                n
            } else {
                let n = u16::try_from(sw_groups[s].len()).expect("at most 65,535 ECMP groups per switch");
                sw_groups[s].push(g.clone());
                local[s].insert(g.clone(), n);
                n
            };
            last_col[s] = col as u32;
        }
    }
    (group_of, sw_groups)
}

/// `group_of` (`switch · nleaf + leaf` → local group) with equal rows stored once:
/// the distinct rows, and where each switch's row starts in them.
///
/// Local groups are numbered in destination order, so switches in the same place of a
/// regular fabric number theirs alike: on a fat tree every core switch has the same row
/// (leaf → the port towards its pod, by pod), the aggregation switches of one pod share
/// one, and every leaf's row is "up" for all other leaves. A leaf's own column differs
/// (no group: it forwards to the endpoint's port), but no lookup reads it — every caller
/// of [`Routes::group`] answers a switch's own endpoints from `ep_leaf` first — so it is
/// set to its neighbour column's entry before rows are compared. Which rows are shared
/// changes no route.
fn shared_rows(mut group_of: Vec<u16>, leaves: &[usize]) -> (Vec<u16>, Vec<usize>) {
    let nleaf = leaves.len();
    if nleaf == 0 {
        return (group_of, vec![]);
    }
    let nsw = group_of.len() / nleaf;
    if nleaf > 1 {
        for (col, &s) in leaves.iter().enumerate() {
            let neighbour = if col > 0 { col - 1 } else { 1 };
            group_of[s * nleaf + col] = group_of[s * nleaf + neighbour];
        }
    }
    let mut seen: std::collections::HashMap<&[u16], usize> = Default::default();
    let mut rows = vec![];
    let row_start = group_of
        .chunks_exact(nleaf)
        .map(|row| {
            *seen.entry(row).or_insert_with(|| {
                rows.extend_from_slice(row);
                rows.len() - nleaf
            })
        })
        .collect::<Vec<_>>();
    debug_assert_eq!(row_start.len(), nsw);
    (rows, row_start)
}

/// A member index `0..len` from a 64-bit hash (multiply-shift, no modulo bias worth the
/// name).
#[inline]
pub fn pick(h: u64, len: usize) -> usize {
    ((h as u128 * len as u128) >> 64) as usize
}

/// Mixes the 5-tuple (src IP, dst IP, UDP, src port, 4791) with a switch seed.
#[inline]
pub(crate) fn hash5(seed: u64, src: u32, dst: u32, sport: u16) -> u64 {
    let mut x = seed ^ ((src as u64) << 32 | dst as u64);
    x = (x ^ (x >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= (sport as u64) << 16 | ROCE_UDP_PORT as u64 | 17 << 48;
    x = (x ^ (x >> 33)).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

#[cfg(test)]
mod tests {
    use super::*;
    use units::{BitRate, SimDuration};

    #[test]
    fn fat_tree_paths_are_shortest_and_spread() {
        let l = (BitRate::from_gbps(100), SimDuration::from_ns(5));
        let t = Topology::fat_tree(4, l, l).unwrap();
        let r = Routes::build(&t, 1, |_| true);
        // Walk every pair with several source ports; count hops.
        let mut used = std::collections::HashSet::new();
        for s in 0..16u32 {
            for d in 0..16u32 {
                if s == d {
                    continue;
                }
                for sport in 0..8u16 {
                    let mut port = t.port(t.ep_port(s)).peer.unwrap();
                    let mut hops = 1;
                    loop {
                        let node = t.port(port).node;
                        if !t.is_switch(node) {
                            assert_eq!(node, t.endpoints[d as usize]);
                            break;
                        }
                        let out = r.next_hop(node, s, d, sport).unwrap();
                        used.insert(out);
                        port = t.port(out).peer.unwrap();
                        hops += 1;
                    }
                    let same_edge = s / 2 == d / 2;
                    let same_pod = s / 4 == d / 4;
                    let want = if same_edge {
                        2
                    } else if same_pod {
                        4
                    } else {
                        6
                    };
                    assert_eq!(hops, want, "{s}->{d}");
                }
            }
        }
        // Every switch port is used by some route.
        let sw_ports = t.ports.iter().enumerate().filter(|(_, p)| t.is_switch(p.node)).count();
        assert_eq!(used.len(), sw_ports);
    }

    /// A fat tree's switches share rows of the group table by role: one row for every
    /// core, one per pod for its aggregation switches, one for every leaf.
    #[test]
    fn fat_tree_rows_are_shared_by_role() {
        let l = (BitRate::from_gbps(100), SimDuration::from_ns(5));
        let t = Topology::fat_tree(8, l, l).unwrap();
        let r = Routes::build(&t, 1, |_| true);
        let distinct: std::collections::HashSet<usize> = r.row_start.iter().copied().collect();
        assert_eq!(r.row_start.len(), 80);
        assert_eq!(distinct.len(), 1 + 8 + 1);
        assert_eq!(r.nleaf, 32);
        match &r.group_of {
            GroupTable::Narrow(v) => assert_eq!(v.len(), 10 * 32),
            GroupTable::Wide(_) => panic!("a k = 8 fat tree has fewer than 256 groups per switch"),
        }
    }
}
