//! One destination's shortest-path tree for [`super`] (OpenSM `osm_ucast_dfsssp.c`,
//! `dijkstra`, at linux-rdma/opensm fa74b98): every switch's next hop towards one
//! destination switch under link weights P² + load.
//!
//! Two ways to find it, with the same result where both apply:
//! - [`layered`]: while every path's accumulated load stays below P² / (longest path),
//!   the weights order paths by (hops, load) exactly, so Dijkstra reduces to one pass over
//!   the breadth-first layers from the destination ([`Layers`]): each switch takes the
//!   candidate one hop nearer with the least accumulated load, ties to its lowest port.
//!   The layers depend only on the destination switch, so the CA LIDs of one switch share
//!   them (16 destinations in a row on a k=32 fat tree).
//! - [`heap_dijkstra`]: plain Dijkstra with a binary heap, for when the bound does not
//!   hold. Ties go to the first relaxation (OpenSM's 4-ary heap breaks them in its own
//!   order, so tie choices can differ there).
//!
//! Both leave the tree in the same form: a [`Layers`] (switches parents first) and one
//! chosen candidate per switch ([`Tree`]), which [`super`] charges and writes out.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::subnet_manager::cdg::NONE;

/// The switch graph with its link loads, as the Dijkstra passes see it.
pub(super) struct Graph {
    pub n: usize,
    /// Flat port id base per switch.
    pub base: Vec<usize>,
    /// Per directed link `u→v`, by the flat port id of its *receiving* end (`v`'s port):
    /// accumulated load. A switch's incoming links are then side by side, as the layered
    /// pass reads them.
    pub load: Vec<u64>,
    /// Switch neighbours of each switch `v` in `v`'s port order (compressed rows,
    /// `nbr[nbr_start[v]..nbr_start[v + 1]]`): the neighbour, `v`'s port to it, and its
    /// port to `v`.
    pub nbr_start: Vec<u32>,
    pub nbr: Vec<(u32, u8, u8)>,
    /// P², P = number of LIDs: every link's base weight.
    pub p2: u64,
}

impl Graph {
    fn nbrs(&self, v: usize) -> &[(u32, u8, u8)] {
        &self.nbr[self.nbr_start[v] as usize..self.nbr_start[v + 1] as usize]
    }
}

/// The min-hop DAG from one destination switch: the reachable switches in breadth-first
/// order (*positions*: the destination at 0, parents before children), and for each the
/// candidates one hop nearer, in its port order (compressed rows).
pub(super) struct Layers {
    /// The destination switch the layers were built from; `usize::MAX` when they hold a
    /// heap Dijkstra's tree instead.
    pub src: usize,
    /// Position → switch.
    pub order: Vec<u32>,
    /// Per position: the LIDs (OpenSM `num_hca`) and the CA LIDs of that switch, which
    /// its subtree sums start from.
    pub own: Vec<(u64, u64)>,
    /// Switch → position (scratch of [`Layers::build`]).
    pos: Vec<u32>,
    /// Per position: its first candidate (`order.len() + 1` entries).
    start: Vec<u32>,
    /// Per candidate (a switch one hop nearer, a possible parent): its position, and the
    /// load of its link to the child shifted left by 8 with the candidate's rank among the
    /// child's (port order) in the low byte — the two columns the layered pass reads,
    /// kept current by [`Layers::charge`] while the layers are reused.
    parent: Vec<u32>,
    key: Vec<u64>,
    /// Per candidate: the flat id of the directed link parent → child ([`Graph::load`]),
    /// and its ports ([`Layers::ports`]).
    link: Vec<u32>,
    ports: Vec<(u8, u8)>,
}

/// The tree chosen on a [`Layers`], by position.
pub(super) struct Tree {
    /// Accumulated load from the destination, shifted left by 8 (as [`Layers::key`]).
    acc: Vec<u64>,
    /// The chosen candidate (an index into the layers' candidates); unused at 0.
    pub choice: Vec<u32>,
    /// Scratch for the caller's subtree sums, per position; zero between destinations.
    pub sub: Vec<(u64, u64)>,
}

impl Tree {
    pub fn new(n: usize) -> Tree {
        Tree { acc: vec![0; n], choice: vec![0; n], sub: vec![(0, 0); n] }
    }
}

impl Layers {
    /// Empty layers for `n` switches.
    pub fn new(n: usize) -> Layers {
        Layers { src: usize::MAX, order: vec![], own: vec![], pos: vec![NONE; n], start: vec![], parent: vec![], key: vec![], link: vec![], ports: vec![] }
    }

    /// Candidate `c`'s position (an index from [`Tree::choice`]).
    #[inline]
    pub fn parent(&self, c: u32) -> usize {
        self.parent[c as usize] as usize
    }

    /// Adds `lids` to the load of candidate `c`'s link, in `g` and in the layers' copy.
    /// Returns the new load.
    #[inline]
    pub fn charge(&mut self, g: &mut Graph, c: u32, lids: u64) -> u64 {
        self.key[c as usize] += lids << 8;
        let load = &mut g.load[self.link[c as usize] as usize];
        *load += lids;
        *load
    }

    /// Candidate `c`'s ports: the child's port towards the parent (its LFT entry), and the
    /// parent's port towards the child.
    #[inline]
    pub fn ports(&self, c: u32) -> (u8, u8) {
        self.ports[c as usize]
    }

    /// The layers from destination switch `d`, whose row of the distance matrix is `row`;
    /// `own` as in [`Layers::own`], by switch.
    #[inline(never)] // once per destination switch; kept apart in profiles
    pub fn build(&mut self, g: &Graph, d: usize, row: &[u8], own: &[(u64, u64)]) {
        // Reachable switches by distance, ties in index order (a counting sort: stable).
        // The order within a layer does not change any result: a layer's choices read
        // only the layer before, and the caller only sums over the tree.
        let mut at = [0u32; 257];
        for &x in row.iter().filter(|&&x| x != u8::MAX) {
            at[x as usize + 1] += 1;
        }
        for x in 1..257 {
            at[x] += at[x - 1];
        }
        self.src = d;
        self.order.clear();
        self.order.resize(at[255] as usize, 0);
        self.pos.fill(NONE);
        for (v, &x) in row.iter().enumerate().filter(|(_, &x)| x != u8::MAX) {
            self.order[at[x as usize] as usize] = v as u32;
            self.pos[v] = at[x as usize];
            at[x as usize] += 1;
        }
        debug_assert_eq!(self.order.first(), Some(&(d as u32)));
        self.own.clear();
        self.own.extend(self.order.iter().map(|&v| own[v as usize]));
        // Every neighbour may be a candidate: write each, keep those that are.
        let m = g.nbr.len();
        if self.parent.len() < m {
            self.parent.resize(m, 0);
            self.key.resize(m, 0);
            self.link.resize(m, 0);
            self.ports.resize(m, (0, 0));
        }
        self.start.clear();
        self.start.push(0);
        let mut k = 0;
        for &v in &self.order {
            let dv = row[v as usize];
            let base = g.base[v as usize];
            let first = k;
            for &(u, q, pu) in g.nbrs(v as usize) {
                let du = row[u as usize];
                let link = base + q as usize;
                self.parent[k] = self.pos[u as usize];
                self.key[k] = g.load[link] << 8 | (k - first) as u64;
                self.link[k] = link as u32;
                self.ports[k] = (q, pu);
                k += usize::from(du != u8::MAX && du + 1 == dv);
            }
            self.start.push(k as u32);
        }
    }
}

/// The least-load tree on the layers (exact while the P² term dominates, see the module
/// doc): per switch, nearest first, the candidate with the least accumulated load, ties to
/// the lowest port.
#[inline(never)] // once per destination; kept apart in profiles
pub(super) fn layered(l: &Layers, t: &mut Tree) {
    t.acc[0] = 0;
    for i in 1..l.order.len() {
        let (s, e) = (l.start[i], l.start[i + 1]);
        debug_assert!(s < e && e - s <= 256, "a reachable switch has 1 to 255 candidates");
        // The sum and the candidate's rank (its port order) in one key, so that the least
        // key is the least load at the lowest port, found without a branch. Accumulated
        // loads stay under the diameter times the largest load, which the caller keeps
        // below P² ≤ 2^32 (P ≤ 2^16 LIDs): the shifted sums cannot overflow.
        let (s, e) = (s as usize, e as usize);
        let mut best = u64::MAX;
        for (&p, &k) in l.parent[s..e].iter().zip(&l.key[s..e]) {
            best = best.min(t.acc[p as usize] + k);
        }
        t.acc[i] = best & !0xFF;
        t.choice[i] = (s + (best & 0xFF) as usize) as u32;
    }
}

/// Plain Dijkstra from `src` on weights P² + load, for when the layered shortcut is not
/// exact. Leaves its tree in `l` (one candidate per switch, `l.src` reset so the next
/// layered pass rebuilds) and `t`.
pub(super) fn heap_dijkstra(g: &Graph, src: usize, own: &[(u64, u64)], l: &mut Layers, t: &mut Tree) {
    let n = g.n;
    let mut dist = vec![u64::MAX; n];
    let mut hops = vec![u16::MAX; n];
    let mut done = vec![false; n];
    // Per switch: parent, link charged, own port to the parent, parent's port to it.
    let mut parent = vec![(NONE, 0u32, 0u8, 0u8); n];
    dist[src] = 0;
    hops[src] = 0;
    let mut h = BinaryHeap::new();
    h.push(Reverse((0u64, src)));
    while let Some(Reverse((d, u))) = h.pop() {
        if done[u] || d != dist[u] {
            continue;
        }
        done[u] = true;
        for &(v, pu, q) in g.nbrs(u) {
            let v = v as usize;
            let e = g.base[v] + q as usize;
            let nd = d + g.p2 + g.load[e];
            if !done[v] && nd < dist[v] {
                dist[v] = nd;
                hops[v] = hops[u] + 1;
                parent[v] = (u as u32, e as u32, q, pu);
                h.push(Reverse((nd, v)));
            }
        }
    }
    // Positions by the hop count of the tree found (parents before children), ties in
    // index order; one candidate each, its parent.
    l.src = usize::MAX;
    l.order.clear();
    l.order.extend((0..n as u32).filter(|&v| hops[v as usize] != u16::MAX));
    l.order.sort_by_key(|&v| hops[v as usize]);
    l.pos.fill(NONE);
    for (i, &v) in l.order.iter().enumerate() {
        l.pos[v as usize] = i as u32;
    }
    l.own.clear();
    l.own.extend(l.order.iter().map(|&v| own[v as usize]));
    l.start.clear();
    l.start.extend([0, 0]);
    l.parent.clear();
    l.key.clear();
    l.link.clear();
    l.ports.clear();
    for (i, &v) in l.order.iter().enumerate().skip(1) {
        let (u, link, q, pu) = parent[v as usize];
        l.parent.push(l.pos[u as usize]);
        l.key.push(0); // the next layered pass rebuilds the layers
        l.link.push(link);
        l.ports.push((q, pu));
        l.start.push(i as u32);
        t.choice[i] = i as u32 - 1;
    }
}
