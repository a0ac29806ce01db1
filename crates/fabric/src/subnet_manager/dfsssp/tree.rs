//! One destination's shortest-path tree for [`super`] (OpenSM `osm_ucast_dfsssp.c`,
//! `dijkstra`, at linux-rdma/opensm fa74b98): every switch's next hop towards one
//! destination switch under link weights P² + load.
//!
//! While every path's accumulated load stays below P² / (longest path), the weights order
//! paths by (hops, load) exactly, so Dijkstra reduces to one pass over the breadth-first
//! layers from the destination: each switch takes the candidate one hop nearer with the
//! least accumulated load, ties to its lowest port. Two forms of that pass, with the same
//! result:
//! - [`layered`], over prebuilt [`Layers`] that list each switch's candidates only. The
//!   layers depend only on the destination switch, so the CA LIDs of one switch share
//!   them (16 destinations in a row on a k=32 fat tree); building them costs about as
//!   much as [`scan`].
//! - [`scan`], over every switch's whole neighbour list, for a destination switch used
//!   once (a switch LID): switches not yet reached read an unreachable accumulated load
//!   ([`UNREACHED`]), and a layer's loads are published only once the whole layer is
//!   chosen, so only the candidates one hop nearer can win.
//!
//! Where the bound does not hold, [`heap_dijkstra`]: plain Dijkstra with a binary heap.
//! Ties go to the first relaxation (OpenSM's 4-ary heap breaks them in its own order, so
//! tie choices can differ there).
//!
//! All three leave the tree in the same form: a [`Layers`] (switches parents first) and one
//! chosen candidate per switch ([`Tree`]), which [`super`] charges and writes out.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::subnet_manager::cdg::NONE;

/// The switch graph as the Dijkstra passes see it: per switch `v`, its switch neighbours
/// in `v`'s port order as *entries* (compressed rows, `nbr_start[v]..nbr_start[v + 1]`),
/// each entry also naming the directed link `u → v` that arrives from neighbour `u`.
///
/// The link loads are kept apart, as *keys* per entry (`keys: &[u64]` in the passes): the
/// accumulated load of the link `u → v` shifted left by 8, with the entry's index in `v`'s
/// row in the low byte (a switch has at most 255 switch ports). The least of `accumulated
/// load + key` over a row is then the least load at the lowest port, found without a
/// branch. Apart, they can change while the graph is shared with the thread that builds
/// [`Layers`] ahead (`super::pipeline`).
pub(super) struct Graph {
    pub n: usize,
    pub nbr_start: Vec<u32>,
    /// Per entry: the neighbour `u` (16-bit: [`MAX_SWITCHES`]).
    pub nb: Vec<u16>,
    /// Per entry: `v`'s port to `u` (`v`'s LFT entry when `u` is its next hop).
    pub port: Vec<u8>,
    /// Per entry: `u`'s port to `v` (the in port of a path that goes on from `u`).
    pub up: Vec<u8>,
    /// Per entry: the entry of `v` in `u`'s row (the opposite link), for [`heap_dijkstra`].
    pub rev: Vec<u32>,
    /// P², P = number of LIDs: every link's base weight.
    pub p2: u64,
}

impl Graph {
    /// Entries `nbr_start[v]..nbr_start[v + 1]` as a range.
    #[inline]
    pub fn row(&self, v: usize) -> std::ops::Range<usize> {
        self.nbr_start[v] as usize..self.nbr_start[v + 1] as usize
    }
}

/// The min-hop DAG from one destination switch: the reachable switches in breadth-first
/// order (*positions*: the destination at 0, parents before children), and for each the
/// candidates one hop nearer, in its port order (compressed rows).
pub(super) struct Layers {
    /// The destination switch the layers were built from; `usize::MAX` when they hold a
    /// single chosen tree ([`scan`], [`heap_dijkstra`]) instead.
    pub src: usize,
    /// Position → switch.
    pub order: Vec<u32>,
    /// Per position: the LIDs of that switch (OpenSM `num_hca`), which its subtree sums
    /// start from.
    pub own: Vec<u64>,
    /// Switch → position.
    pos: Vec<u32>,
    /// Per breadth-first layer: its first position (one more entry than layers).
    layer_start: Vec<u32>,
    /// Per position: its first candidate (`order.len() + 1` entries).
    start: Vec<u32>,
    /// Per candidate (a switch one hop nearer, a possible parent): its position (16-bit:
    /// [`MAX_SWITCHES`]), and the key of its link ([`Graph`]) with the candidate's rank among
    /// the child's (port order) in the low byte instead — the two columns the layered
    /// pass reads. [`Layers::build`] leaves only the rank; [`Layers::load_keys`] adds the
    /// loads, and the caller keeps them current as it charges loads while the layers are reused.
    pub parent: Vec<u16>,
    pub key: Vec<u64>,
    /// Per candidate: its [`Graph`] entry, which gives the ports and the link.
    pub entry: Vec<u32>,
}

/// Positions are 16-bit, so there can be at most this many switches (a subnet has fewer
/// than 49,152 unicast LIDs, IBTA Vol. 1 §4.1.3, so fewer switches).
pub(super) const MAX_SWITCHES: usize = 1 << 16;

/// The accumulated load (shifted) of a switch [`scan`] has not chosen a parent for yet:
/// above any real sum (loads stay below 2^32, shifted below 2^40, see [`layered`]), and
/// far enough below 2^64 that adding a key cannot overflow.
const UNREACHED: u64 = 1 << 62;

/// The tree chosen on a [`Layers`], by position.
pub(super) struct Tree {
    /// Per position: accumulated load from the destination, shifted left by 8 (as
    /// the keys of [`Graph`]); spans every 16-bit position, so reading it at a candidate's needs
    /// no bounds check.
    acc: Box<[u64; MAX_SWITCHES]>,
    /// The same per switch, [`UNREACHED`] until the switch's layer is chosen ([`scan`]).
    acc_by_switch: Box<[u64; MAX_SWITCHES]>,
    /// The chosen candidate (an index into the layers' candidates); unused at 0.
    pub choice: Vec<u32>,
    /// Scratch for the caller's subtree sums, per position; zero between destinations.
    pub sub: Vec<u64>,
}

impl Tree {
    pub fn new(n: usize) -> Tree {
        Tree { acc: Box::new([0; MAX_SWITCHES]), acc_by_switch: Box::new([UNREACHED; MAX_SWITCHES]), choice: vec![0; n], sub: vec![0; n] }
    }
}

impl Layers {
    /// Empty layers for the switches of `g`. The candidate columns are sized once for
    /// the most candidates there can be: every entry (a switch's candidates are some of
    /// its entries), or one per switch for a chosen tree.
    pub fn new(g: &Graph) -> Layers {
        let most = g.nb.len().max(g.n);
        Layers {
            src: usize::MAX,
            order: vec![],
            own: vec![],
            pos: vec![NONE; g.n],
            layer_start: vec![],
            start: vec![],
            parent: vec![0; most],
            key: vec![0; most],
            entry: vec![0; most],
        }
    }

    /// Positions from destination switch `d`, whose row of the distance matrix is `row`:
    /// reachable switches by distance, ties in index order (a counting sort: stable). The
    /// order within a layer does not change any result: a layer's choices read only the
    /// layer before, and the caller only sums over the tree. Clears the candidates.
    fn position(&mut self, d: usize, row: &[u8], own: &[u64]) {
        let mut at = [0u32; 257];
        for &x in row {
            at[x as usize + 1] += 1;
        }
        for x in 1..257 {
            at[x] += at[x - 1];
        }
        // Unreachable switches (`u8::MAX`) sort last and are cut off.
        let reached = at[255] as usize;
        let layers = at.iter().rposition(|&a| (a as usize) < reached).map_or(0, |x| x + 1);
        self.layer_start.clear();
        self.layer_start.extend_from_slice(&at[..=layers]);
        self.order.resize(row.len(), 0);
        for (v, &x) in row.iter().enumerate() {
            let a = &mut at[x as usize];
            self.order[*a as usize] = v as u32;
            self.pos[v] = *a;
            *a += 1;
        }
        self.order.truncate(reached);
        debug_assert_eq!(self.order.first(), Some(&(d as u32)));
        self.own.clear();
        self.own.extend(self.order.iter().map(|&v| own[v as usize]));
        self.start.clear();
    }

    /// The layers from destination switch `d`, whose row of the distance matrix is `row`;
    /// `own` as in [`Layers::own`], by switch. The keys hold only the candidates' ranks
    /// until [`Layers::load_keys`]: building needs no loads, so it can run ahead on another
    /// thread.
    #[inline(never)] // once per destination switch with several LIDs; kept apart in profiles
    pub fn build(&mut self, g: &Graph, d: usize, row: &[u8], own: &[u64]) {
        self.position(d, row, own);
        self.start.reserve(self.order.len() + 1);
        // A neighbour is one hop nearer exactly when its position comes before the
        // switch's layer (breadth-first: a neighbour is at most one layer away). The
        // columns span every entry (a switch's candidates are some of its entries).
        let total = g.nb.len();
        let (parent, rank, entry, pos) = (&mut self.parent[..total], &mut self.key[..total], &mut self.entry[..total], &self.pos[..]);
        self.start.push(0);
        let mut len = 0;
        for layer in self.layer_start.windows(2) {
            let nearer = layer[0];
            for &v in &self.order[layer[0] as usize..layer[1] as usize] {
                let first = len;
                let r = g.row(v as usize);
                for (k, &u) in r.clone().zip(&g.nb[r]) {
                    let pu = pos[u as usize];
                    if pu < nearer {
                        parent[len] = pu as u16;
                        rank[len] = (len - first) as u64;
                        entry[len] = k as u32;
                        len += 1;
                    }
                }
                self.start.push(len as u32);
            }
        }
        self.src = d;
    }

    /// Adds the current loads (the link keys of [`Graph`], by entry) to the candidates'
    /// ranks left by [`Layers::build`].
    pub fn load_keys(&mut self, keys: &[u64]) {
        let m = self.start.last().map_or(0, |&e| e as usize);
        for (key, &k) in self.key[..m].iter_mut().zip(&self.entry[..m]) {
            *key = keys[k as usize] & !0xFF | *key & 0xFF;
        }
    }
}

/// The least of `acc[index[x]] + key[x]`, with four running minima so that the
/// comparisons do not wait on one another (the keys of one row are distinct in their low
/// byte, so the order of taking minima does not matter). Rows of 16 and of 1 candidate
/// take fixed-length paths, fully unrolled with no remainder loop: on a k=32 fat tree
/// nearly every row of the layers is one or the other (a leaf's 16 uplinks, an
/// aggregation switch's 16 down or up links; a switch next to the destination, a core,
/// has one candidate), as is a leaf's whole neighbour list in [`scan`]; the fixed paths
/// cut a k=32 `route` from 3.02 G to 2.64 G instructions (docs/speed.md).
/// SIMD gathers were tried here and were slower (docs/speed.md).
#[inline(always)]
fn least(index: &[u16], key: &[u64], acc: &[u64; MAX_SWITCHES]) -> u64 {
    if let (Ok(p), Ok(k)) = (<&[u16; 16]>::try_from(index), <&[u64; 16]>::try_from(key)) {
        let mut m = [u64::MAX; 4];
        for x in 0..16 {
            m[x % 4] = m[x % 4].min(acc[p[x] as usize] + k[x]);
        }
        return m[0].min(m[1]).min(m[2].min(m[3]));
    }
    if let ([p], [k]) = (index, key) {
        return acc[*p as usize] + k;
    }
    let mut m = [u64::MAX; 4];
    let (mut ic, mut kc) = (index.chunks_exact(4), key.chunks_exact(4));
    for (p, k) in (&mut ic).zip(&mut kc) {
        for x in 0..4 {
            m[x] = m[x].min(acc[p[x] as usize] + k[x]);
        }
    }
    ic.remainder().iter().zip(kc.remainder()).fold(m[0].min(m[1]).min(m[2].min(m[3])), |b, (&p, &k)| b.min(acc[p as usize] + k))
}

/// The least-load tree on the layers (exact while the P² term dominates, see the module
/// doc): per switch, nearest first, the candidate with the least accumulated load, ties to
/// the lowest port.
#[inline(never)] // once per destination; kept apart in profiles
pub(super) fn layered(l: &Layers, t: &mut Tree) {
    let n = l.order.len();
    debug_assert!((1..=MAX_SWITCHES).contains(&n));
    let acc = &mut *t.acc;
    acc[0] = 0;
    // Both candidate columns cut to one length, so that a row's bounds are checked once.
    let m = l.parent.len();
    let (parent, key) = (&l.parent[..m], &l.key[..m]);
    // Accumulated loads stay under the diameter times the largest load, which the caller
    // keeps below P² ≤ 2^32 (P ≤ 2^16 LIDs): the shifted sums cannot overflow.
    let mut s = l.start[1] as usize;
    for (i, (&e, choice)) in l.start[2..=n].iter().zip(&mut t.choice[1..n]).enumerate() {
        let e = e as usize;
        debug_assert!(s < e && e - s <= 256, "a reachable switch has 1 to 255 candidates");
        let best = least(&parent[s..e], &key[s..e], acc);
        // Position i + 1 < n ≤ MAX_SWITCHES: the mask only spares the bounds check.
        acc[(i + 1) % MAX_SWITCHES] = best & !0xFF;
        *choice = (s + (best & 0xFF) as usize) as u32;
        s = e;
    }
}

/// The least-load tree over every switch's whole neighbour list (same result as
/// [`Layers::build`] then [`layered`], without building the candidate lists): per layer,
/// each switch's least `accumulated load + key` over all its neighbours, where only those
/// of the layer before have published their accumulated load; the others read
/// [`UNREACHED`] and cannot win. Leaves one candidate per switch in `l` (`l.src` reset).
#[inline(never)] // once per switch LID; kept apart in profiles
pub(super) fn scan(g: &Graph, keys: &[u64], d: usize, row: &[u8], own: &[u64], l: &mut Layers, t: &mut Tree) {
    l.position(d, row, own);
    l.src = usize::MAX;
    let acc_sw = &mut *t.acc_by_switch;
    acc_sw[..g.n].fill(UNREACHED);
    acc_sw[d] = 0;
    l.start.reserve(l.order.len() + 1);
    l.start.extend([0, 0]);
    // Both entry columns cut to one length, so that a row's bounds are checked once.
    let (nb, key) = (&g.nb[..g.nb.len()], &keys[..g.nb.len()]);
    for layer in l.layer_start.windows(2).skip(1) {
        let (first, end) = (layer[0] as usize, layer[1] as usize);
        for i in first..end {
            let v = l.order[i] as usize;
            let r = g.row(v);
            let best = least(&nb[r.clone()], &key[r.clone()], acc_sw);
            debug_assert!(best < UNREACHED, "a reachable switch has a neighbour one hop nearer");
            let k = r.start + (best & 0xFF) as usize;
            t.acc[i] = best & !0xFF;
            // One candidate, the one chosen (its key is not read: the layers are not reused).
            l.parent[i - 1] = l.pos[nb[k] as usize] as u16;
            l.entry[i - 1] = k as u32;
            l.start.push(i as u32);
            t.choice[i] = i as u32 - 1;
        }
        // Publish the layer only now: a neighbour in the same layer is no candidate.
        for i in first..end {
            acc_sw[l.order[i] as usize] = t.acc[i];
        }
    }
}

/// Plain Dijkstra from `src` on weights P² + load, for when the layered shortcut is not
/// exact. Leaves its tree in `l` (one candidate per switch, `l.src` reset so the next
/// layered pass rebuilds) and `t`.
pub(super) fn heap_dijkstra(g: &Graph, keys: &[u64], src: usize, own: &[u64], l: &mut Layers, t: &mut Tree) {
    let n = g.n;
    let mut dist = vec![u64::MAX; n];
    let mut hops = vec![u16::MAX; n];
    let mut done = vec![false; n];
    // Per switch: its parent and the entry of the link from it.
    let mut parent = vec![(NONE, 0u32); n];
    dist[src] = 0;
    hops[src] = 0;
    let mut h = BinaryHeap::new();
    h.push(Reverse((0u64, src)));
    while let Some(Reverse((d, u))) = h.pop() {
        if done[u] || d != dist[u] {
            continue;
        }
        done[u] = true;
        for k in g.row(u) {
            let v = g.nb[k] as usize;
            let e = g.rev[k] as usize; // the link u → v, in v's row
            let nd = d + g.p2 + (keys[e] >> 8);
            if !done[v] && nd < dist[v] {
                dist[v] = nd;
                hops[v] = hops[u] + 1;
                parent[v] = (u as u32, e as u32);
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
    for (i, &v) in l.order.iter().enumerate().skip(1) {
        let (u, e) = parent[v as usize];
        // Its key is not read: the next layered pass rebuilds the layers.
        l.parent[i - 1] = l.pos[u as usize] as u16;
        l.entry[i - 1] = e;
        l.start.push(i as u32);
        t.choice[i] = i as u32 - 1;
    }
}
