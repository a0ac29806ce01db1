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
    pub fn nbrs(&self, v: usize) -> &[(u32, u8, u8)] {
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
    /// Per candidate (a switch one hop nearer, a possible parent): its position (16-bit:
    /// [`MAX_SWITCHES`]), and the load of its link to the child shifted left by 8 with the
    /// candidate's rank among the child's (port order) in the low byte — the two columns
    /// the layered pass reads, kept current by [`Layers::charge`] while the layers are
    /// reused.
    parent: Vec<u16>,
    key: Vec<u64>,
    /// Per candidate: its index in the child's neighbour list ([`Graph::nbrs`]), which
    /// gives the ports and the link.
    nbr: Vec<u8>,
}

/// Positions are 16-bit, so there can be at most this many switches (a subnet has fewer
/// than 49,152 unicast LIDs, IBTA Vol. 1 §4.1.3, so fewer switches).
pub(super) const MAX_SWITCHES: usize = 1 << 16;

/// The tree chosen on a [`Layers`], by position.
pub(super) struct Tree {
    /// Accumulated load from the destination, shifted left by 8 (as [`Layers::key`]);
    /// spans every 16-bit position, so reading it at a candidate's needs no bounds check.
    acc: Box<[u64; MAX_SWITCHES]>,
    /// The chosen candidate (an index into the layers' candidates); unused at 0.
    pub choice: Vec<u32>,
    /// Scratch for the caller's subtree sums, per position; zero between destinations.
    pub sub: Vec<(u64, u64)>,
}

impl Tree {
    pub fn new(n: usize) -> Tree {
        Tree { acc: Box::new([0; MAX_SWITCHES]), choice: vec![0; n], sub: vec![(0, 0); n] }
    }
}

impl Layers {
    /// Empty layers for `n` switches.
    pub fn new(n: usize) -> Layers {
        Layers { src: usize::MAX, order: vec![], own: vec![], pos: vec![NONE; n], start: vec![], parent: vec![], key: vec![], nbr: vec![] }
    }

    /// Candidate `c`'s position (an index from [`Tree::choice`]).
    #[inline]
    pub fn parent(&self, c: u32) -> usize {
        self.parent[c as usize] as usize
    }

    /// Candidate `c` of the switch at position `i`: the switch's port towards it (its LFT
    /// entry), its port towards the switch, and the flat id of the link to the switch
    /// ([`Graph::load`]).
    #[inline]
    pub fn link(&self, g: &Graph, i: usize, c: u32) -> (u8, u8, usize) {
        let v = self.order[i] as usize;
        let (_, q, up) = g.nbrs(v)[self.nbr[c as usize] as usize];
        (q, up, g.base[v] + q as usize)
    }

    /// Adds `lids` to the load of `link`, candidate `c`'s link, in `g` and in the layers'
    /// copy. Returns the new load.
    #[inline]
    pub fn charge(&mut self, g: &mut Graph, c: u32, link: usize, lids: u64) -> u64 {
        self.key[c as usize] += lids << 8;
        let load = &mut g.load[link];
        *load += lids;
        *load
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
        self.start.clear();
        self.start.push(0);
        self.parent.clear();
        self.key.clear();
        self.nbr.clear();
        for &v in &self.order {
            let dv = row[v as usize];
            let base = g.base[v as usize];
            let first = self.parent.len();
            for (j, &(u, q, _)) in g.nbrs(v as usize).iter().enumerate() {
                let du = row[u as usize];
                if du != u8::MAX && du + 1 == dv {
                    let rank = self.parent.len() - first;
                    self.parent.push(self.pos[u as usize] as u16);
                    self.key.push(g.load[base + q as usize] << 8 | rank as u64);
                    self.nbr.push(j as u8);
                }
            }
            self.start.push(self.parent.len() as u32);
        }
    }
}

/// The least-load tree on the layers (exact while the P² term dominates, see the module
/// doc): per switch, nearest first, the candidate with the least accumulated load, ties to
/// the lowest port.
#[inline(never)] // once per destination; kept apart in profiles
pub(super) fn layered(l: &Layers, t: &mut Tree) {
    t.acc[0] = 0;
    debug_assert!(l.order.len() <= MAX_SWITCHES);
    for i in 1..l.order.len() {
        let (s, e) = (l.start[i], l.start[i + 1]);
        debug_assert!(s < e && e - s <= 256, "a reachable switch has 1 to 255 candidates");
        // The sum and the candidate's rank (its port order) in one key, so that the least
        // key is the least load at the lowest port, found without a branch. Accumulated
        // loads stay under the diameter times the largest load, which the caller keeps
        // below P² ≤ 2^32 (P ≤ 2^16 LIDs): the shifted sums cannot overflow.
        // Four running minima, so that the comparisons do not wait on one another (keys
        // are distinct, so the order of taking minima does not matter).
        let (s, e) = (s as usize, e as usize);
        let (parent, key) = (&l.parent[s..e], &l.key[s..e]);
        let acc = &mut *t.acc;
        let mut m = [u64::MAX; 4];
        let (mut pc, mut kc) = (parent.chunks_exact(4), key.chunks_exact(4));
        for (p, k) in (&mut pc).zip(&mut kc) {
            for x in 0..4 {
                m[x] = m[x].min(acc[p[x] as usize] + k[x]);
            }
        }
        let best = pc.remainder().iter().zip(kc.remainder()).fold(m[0].min(m[1]).min(m[2].min(m[3])), |b, (&p, &k)| b.min(acc[p as usize] + k));
        acc[i] = best & !0xFF;
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
    l.nbr.clear();
    for (i, &v) in l.order.iter().enumerate().skip(1) {
        let (u, _, q, _) = parent[v as usize];
        let j = g.nbrs(v as usize).iter().position(|x| x.1 == q).expect("the tree's link is a neighbour's");
        l.parent.push(l.pos[u as usize] as u16);
        l.key.push(0); // the next layered pass rebuilds the layers
        l.nbr.push(j as u8);
        l.start.push(i as u32);
        t.choice[i] = i as u32 - 1;
    }
}
