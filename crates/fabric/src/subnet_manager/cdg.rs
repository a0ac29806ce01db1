//! Channel dependency graph (Dally & Seitz, "Deadlock-free message routing in
//! multiprocessor interconnection networks", IEEE Trans. Computers C-36(5), 1987): a
//! channel is a directed switch-to-switch link; a route that enters switch `n` on one
//! channel and leaves on another makes the second depend on the first. With credit-based
//! lossless links a cycle of dependencies can deadlock; an acyclic graph cannot.
//!
//! Dependencies come from the routes between CA ports — the data traffic: every switch
//! with CAs is a source, every CA LID (all 2^LMC) a destination. Paths to and from switch
//! port 0 are left out (OpenSM's DFSSSP layers them too; here no data traffic uses them,
//! and subnet management travels on VL15, which is not flow controlled). CA-to-switch and
//! switch-to-CA channels are left out as well: nothing depends into the first or out of
//! the second, so they are never on a cycle. With an [`SlTable`] the graph is built per
//! virtual lane: a dependency exists on VL `v` when some path on VL `v` uses both channels.
//!
//! Per destination the routes form an in-tree, so the graph is built in
//! `switches × LIDs` steps (not `endports²`), bitsets of `in-port × out-port` per switch.

use super::mad::NO_PATH;
use super::tables::{Fabric, Peer, SlTable, Tables};
use crate::routing::Routes;
use crate::topology::{NodeId, NodeKind, PortId, Topology};

/// The routes to one destination LID as a tree: next switch (and the port taken) per
/// switch, and the switches sorted farthest first.
pub(crate) struct DstTree {
    pub next: Vec<u32>,
    pub port: Vec<u8>,
    pub dist: Vec<u16>,
    pub far_first: Vec<u32>,
    stack: Vec<usize>,
    count: Vec<u32>,
}

pub(crate) const NONE: u32 = u32::MAX;
const UNKNOWN: u16 = u16::MAX;
const ACTIVE: u16 = u16::MAX - 1;
const DEAD: u16 = u16::MAX - 2;

impl DstTree {
    pub fn new(nsw: usize) -> DstTree {
        DstTree { next: vec![NONE; nsw], port: vec![NO_PATH; nsw], dist: vec![UNKNOWN; nsw], far_first: Vec::with_capacity(nsw), stack: vec![], count: vec![] }
    }

    /// Fills the tree from one LID's column (entry per switch, see [`Tables::columns`]).
    /// With `ep`, only delivery to that endport counts as arriving. Switches whose route
    /// loops or dead-ends are left out of `far_first` (they carry no complete path).
    pub fn build_col(&mut self, f: &Fabric, col: &[u8], ep: Option<u32>) {
        let n = f.nsw();
        use super::tables::{PEER_EP, PEER_NONE};
        for (s, &p) in col.iter().enumerate().take(n) {
            self.port[s] = p;
            self.next[s] = if p == 0 || p == NO_PATH || p > f.nports[s] {
                NONE
            } else {
                match f.peer_flat[f.port_base[s] as usize + p as usize] {
                    x if x == PEER_NONE || x & PEER_EP != 0 => NONE,
                    x => x,
                }
            };
        }
        self.dist.fill(UNKNOWN);
        let mut max = 0;
        for s0 in 0..n {
            if self.dist[s0] != UNKNOWN {
                continue;
            }
            self.stack.clear();
            let mut s = s0;
            let top = loop {
                if self.dist[s] != UNKNOWN {
                    break if self.dist[s] >= DEAD { DEAD } else { self.dist[s] + 1 };
                }
                self.dist[s] = ACTIVE;
                self.stack.push(s);
                let p = self.port[s];
                if self.next[s] != NONE {
                    s = self.next[s] as usize;
                } else {
                    let arrives = if p == NO_PATH || p > f.nports[s] {
                        false
                    } else if p == 0 {
                        ep.is_none()
                    } else {
                        let x = f.peer_flat[f.port_base[s] as usize + p as usize];
                        x != PEER_NONE && x & PEER_EP != 0 && ep.is_none_or(|e| e == x & !PEER_EP)
                    };
                    break if arrives { 0 } else { DEAD };
                }
            };
            let mut v = top;
            while let Some(x) = self.stack.pop() {
                self.dist[x] = v;
                if v != DEAD {
                    max = max.max(v);
                    v += 1;
                }
            }
        }
        // Farthest first, by counting sort on the hop count.
        self.count.clear();
        self.count.resize(max as usize + 2, 0);
        for s in 0..n {
            let d = self.dist[s];
            if d < DEAD {
                self.count[(max - d) as usize + 1] += 1;
            }
        }
        for i in 1..self.count.len() {
            self.count[i] += self.count[i - 1];
        }
        let total = self.count[self.count.len() - 1] as usize;
        self.far_first.clear();
        self.far_first.resize(total, 0);
        for s in 0..n {
            let d = self.dist[s];
            if d < DEAD {
                let k = (max - d) as usize;
                self.far_first[self.count[k] as usize] = s as u32;
                self.count[k] += 1;
            }
        }
    }

    /// Switch hops from `s` to where the destination is delivered, if it gets there.
    pub fn hops(&self, s: usize) -> Option<u16> {
        let d = self.dist[s];
        (d < DEAD).then_some(d)
    }
}

/// Dependency bitsets: for switch `n`, bit (in port `q`, out port `r`).
#[derive(Clone, Debug)]
pub struct DepGraph {
    /// Per switch: offset of its first word, and words per row.
    off: Vec<usize>,
    words: Vec<usize>,
    bits: Vec<u64>,
}

impl DepGraph {
    pub fn new(f: &Fabric) -> DepGraph {
        let mut off = vec![];
        let mut words = vec![];
        let mut total = 0;
        for &np in &f.nports {
            let w = (np as usize + 1).div_ceil(64);
            off.push(total);
            words.push(w);
            total += w * (np as usize + 1);
        }
        DepGraph { off, words, bits: vec![0; total] }
    }
    #[inline]
    pub fn set(&mut self, n: usize, q: u8, r: u8) {
        self.set_in_row(self.row(n, q), r);
    }
    /// The first word of channel (into `n` on port `q`)'s row, for [`DepGraph::set_in_row`]:
    /// a caller marking many dependencies of one channel looks it up once.
    #[inline]
    pub fn row(&self, n: usize, q: u8) -> usize {
        self.off[n] + q as usize * self.words[n]
    }
    /// [`DepGraph::set`] on the row of [`DepGraph::row`].
    #[inline]
    pub fn set_in_row(&mut self, row: usize, r: u8) {
        self.bits[row + r as usize / 64] |= 1 << (r % 64);
    }
    #[inline]
    pub fn get(&self, n: usize, q: u8, r: u8) -> bool {
        self.bits[self.row(n, q) + r as usize / 64] & (1 << (r % 64)) != 0
    }
    /// Out ports `r` that channel (into `n` on port `q`) depends into.
    pub fn succ(&self, n: usize, q: u8) -> impl Iterator<Item = u8> + '_ {
        let base = self.row(n, q);
        (0..self.words[n]).flat_map(move |w| {
            let mut x = self.bits[base + w];
            std::iter::from_fn(move || {
                if x == 0 {
                    return None;
                }
                let b = x.trailing_zeros();
                x &= x - 1;
                Some((w * 64) as u8 + b as u8)
            })
        })
    }
    pub fn is_empty(&self) -> bool {
        self.bits.iter().all(|&b| b == 0)
    }
}

/// The VLs of the paths from source switch `s` to `lid` as a bit mask: every VL the
/// split may use for that source; bit 0 without an SL table, none for a switch without
/// endpoints (no path starts there).
pub(super) fn source_vls(f: &Fabric, s: usize, lid: usize, sl: Option<&SlTable>) -> u16 {
    match sl {
        _ if f.sw_eps[s].is_empty() => 0,
        None => 1,
        Some(table) => {
            let v = table.vl[s * table.nlid + lid] as usize;
            let k = table.split.get(v).copied().unwrap_or(1).max(1) as usize;
            (((1u32 << k) - 1) << v) as u16
        }
    }
}

/// Builds the dependency graph of the tables, one per VL when `sl` is given (VL = the
/// path's SL, SL2VL being the identity).
pub fn build(f: &Fabric, t: &Tables, sl: Option<&SlTable>) -> Vec<DepGraph> {
    let nvl = sl.map_or(1, |s| s.split.len().clamp(1, 16));
    let mut g = vec![DepGraph::new(f); nvl];
    let n = f.nsw();
    let mut tree = DstTree::new(n);
    let mut mask = vec![0u16; n];
    let cols = t.columns();
    for lid in 1..f.nlid {
        let super::tables::Owner::Ep(e) = f.owner[lid] else { continue };
        if f.lid_switch(lid).is_none() {
            continue;
        }
        tree.build_col(f, &cols[lid * n..(lid + 1) * n], Some(e));
        for &s in &tree.far_first {
            let s = s as usize;
            mask[s] = source_vls(f, s, lid, sl);
        }
        for &s in &tree.far_first {
            let s = s as usize;
            let nx = tree.next[s];
            if nx != NONE {
                mask[nx as usize] |= mask[s];
            }
        }
        for &s in &tree.far_first {
            let s = s as usize;
            let nx = tree.next[s];
            if nx == NONE {
                continue;
            }
            let nx = nx as usize;
            if tree.next[nx] == NONE {
                continue;
            }
            let Peer::Switch { port: q, .. } = f.adj[s][tree.port[s] as usize] else { continue };
            let r = tree.port[nx];
            let mut m = mask[s];
            while m != 0 {
                let v = m.trailing_zeros() as usize;
                m &= m - 1;
                if v < g.len() {
                    g[v].set(nx, q, r);
                }
            }
        }
    }
    g
}

/// Finds a cycle: the channels (switch index, output port) in dependency order, or `None`
/// ([`crate::graph::find_cycle`] over the channels between switches).
pub fn find_cycle(f: &Fabric, g: &DepGraph) -> Option<Vec<(u32, u8)>> {
    // Channel id = (switch, out port) flattened.
    let mut base = vec![0usize; f.nsw() + 1];
    for s in 0..f.nsw() {
        base[s + 1] = base[s] + f.nports[s] as usize + 1;
    }
    let channels =
        (0..f.nsw()).flat_map(|s| f.adj[s].iter().enumerate().filter(|(_, peer)| matches!(peer, Peer::Switch { .. })).map(move |(p, _)| (s as u32, p as u8)));
    crate::graph::find_cycle(base[f.nsw()], |(s, p): (u32, u8)| base[s as usize] + p as usize, channels, |(s, p)| succ_of(f, g, s as usize, p))
}

/// The channels channel (s, p) depends into: the next switch's output ports its packets
/// take (to other switches).
fn succ_of(f: &Fabric, g: &DepGraph, s: usize, p: u8) -> Vec<(u32, u8)> {
    match f.adj[s][p as usize] {
        Peer::Switch { sw, port } => {
            g.succ(sw as usize, port).filter(|&r| matches!(f.adj[sw as usize].get(r as usize), Some(Peer::Switch { .. }))).map(|r| (sw, r)).collect()
        }
        _ => vec![],
    }
}

/// The result of a channel-dependency check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CdgCheck {
    pub acyclic: bool,
    /// A cycle (switch index, output port) when not acyclic, and on which VL.
    pub cycle: Option<(u8, Vec<(u32, u8)>)>,
    pub vls_checked: u8,
}

/// Checks the tables (per VL when `sl` is given) for cyclic channel dependencies.
pub fn check(f: &Fabric, t: &Tables, sl: Option<&SlTable>) -> CdgCheck {
    let gs = build(f, t, sl);
    for (v, g) in gs.iter().enumerate() {
        if let Some(c) = find_cycle(f, g) {
            return CdgCheck { acyclic: false, cycle: Some((v as u8, c)), vls_checked: gs.len() as u8 };
        }
    }
    CdgCheck { acyclic: true, cycle: None, vls_checked: gs.len() as u8 }
}

/// A cycle of channel dependencies (Dally & Seitz 1987) in ECMP routes, if there is one:
/// the switch-to-switch output ports along it, in dependency order.
///
/// Every member of every ECMP group counts (hashing may send some flow along each), so
/// this is the dependency graph of all traffic the tables can carry. It is built as the
/// subnet manager's checker expects it (this module): a channel is a
/// directed switch-to-switch link, and a packet that arrives at switch `n` on one channel
/// and leaves on another makes the second depend on the first. `up` leaves failed links
/// out (as the routes were built with). Errors when a switch has more than 254 ports
/// (the checker numbers ports in a byte).
pub fn dependency_cycle(t: &Topology, r: &Routes, up: impl Fn(PortId) -> bool) -> Result<Option<Vec<PortId>>, String> {
    let switches: Vec<NodeId> = (0..t.nodes.len() as u32).map(NodeId).filter(|&n| t.is_switch(n)).collect();
    let mut f = Fabric { sw_node: switches.iter().map(|n| n.0).collect(), ..Default::default() };
    for &sw in &switches {
        let n = t.node(sw);
        let np = u8::try_from(n.nports)
            .ok()
            .filter(|&p| p < 255)
            .ok_or_else(|| format!("switch `{}` has {} ports; the check takes at most 254", n.name, n.nports))?;
        f.nports.push(np);
        let mut adj = vec![Peer::None; np as usize + 1];
        for i in 0..n.nports {
            let p = PortId(n.first_port + i);
            let Some(peer) = t.port(p).peer.filter(|&q| up(p) && up(q)) else { continue };
            let pp = t.port(peer);
            adj[i as usize + 1] = match t.node(pp.node).kind {
                NodeKind::Switch => Peer::Switch { sw: r.switch_index(pp.node), port: pp.index as u8 + 1 },
                NodeKind::Nic { ep, .. } | NodeKind::Aggregator { ep, .. } => Peer::Ep { ep },
            };
        }
        f.adj.push(adj);
    }
    let mut g = DepGraph::new(&f);
    // Routes are per destination leaf: one endpoint per leaf stands for all of its own.
    let mut seen = vec![false; r.leaves()];
    for dst in 0..t.endpoints.len() as u32 {
        let (leaf_sw, leaf) = r.leaf_of(dst);
        if std::mem::replace(&mut seen[leaf as usize], true) {
            continue;
        }
        for &s in &switches {
            if r.switch_index(s) == leaf_sw {
                continue;
            }
            for &p in r.next_hops(s, dst) {
                let Some(q) = t.port(p).peer else { continue };
                let n = t.port(q).node;
                let ni = r.switch_index(n);
                if ni == u32::MAX || ni == leaf_sw {
                    continue;
                }
                for &out in r.next_hops(n, dst) {
                    g.set(ni as usize, t.port(q).index as u8 + 1, t.port(out).index as u8 + 1);
                }
            }
        }
    }
    Ok(find_cycle(&f, &g).map(|c| c.into_iter().map(|(s, p)| PortId(t.node(switches[s as usize]).first_port + p as u32 - 1)).collect()))
}
