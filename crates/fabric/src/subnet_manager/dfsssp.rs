//! `dfsssp`: deadlock-free single-source shortest-path routing (Domke, Hoefler, Nagel,
//! "Deadlock-free oblivious routing for arbitrary topologies", IPDPS 2011), as OpenSM's
//! `osm_ucast_dfsssp.c` does it.
//!
//! Routing: every switch-to-switch link starts with weight P² (P = number of LIDs, so
//! fewer hops always win); for every destination LID in OpenSM's order (switches by number
//! of attached LIDs, most first, each with its CA ports in port order; then switch port 0s)
//! a Dijkstra from the destination gives every switch its next hop, and every link on the
//! resulting tree gets heavier by the number of source LIDs routed over it
//! (`update_weights`), so later destinations avoid loaded links.
//!
//! While every path's accumulated load stays below P² / (longest path), weights order
//! paths by (hops, load) exactly, and Dijkstra reduces to a pass over the breadth-first
//! layers from the destination: each switch takes the predecessor with the least
//! accumulated load. This implementation uses that pass when the bound holds and a heap
//! Dijkstra otherwise; ties go to the lowest port (OpenSM's 4-ary heap breaks them in its
//! own order, so tie choices can differ).
//!
//! Deadlock removal (`dfsssp_remove_deadlocks`): all paths start on VL 0; while the
//! channel dependency graph of a VL has a cycle, the paths on the cycle's weakest
//! dependency (fewest paths) move to the next VL; when the last VL still has a cycle the
//! engine fails (OpenSM then falls back to minhop). Spare VLs are then shared out to the
//! VLs with the most paths per VL (`vl_split_count`). A path's SL is its VL.
//!
//! Paths are CA-to-CA: one per (source switch, destination CA LID), weighted by the number
//! of source LIDs on that switch — the CAs of one switch share their switch-to-switch
//! channels, so they always move together. OpenSM also layers paths from and to switch
//! port 0; those carry no data traffic here and are left out, so OpenSM may need a VL
//! more on some fabrics. Where OpenSM picks one of a split VL group with `rand()`,
//! [`super::tables::SlTable::sl`] picks by source endpoint.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::cdg::{find_cycle, DepGraph, NONE};
use super::mad::NO_PATH;
use super::tables::{Fabric, Owner, Peer, SlTable, Tables};

/// A destination of the Dijkstra passes: a LID and the switch its traffic ends at.
#[derive(Clone, Copy)]
struct Dst {
    lid: usize,
    sw: usize,
    /// The port at `sw` that delivers (0 for the switch itself).
    port: u8,
}

struct Graph {
    n: usize,
    /// Flat port id base per switch.
    base: Vec<usize>,
    /// Per directed link `u→v`, by the flat port id of its *receiving* end (`v`'s port):
    /// accumulated load. A switch's incoming links are then side by side, as the layered
    /// pass reads them.
    load: Vec<u64>,
    /// Switch neighbours of each switch `v` in `v`'s port order (compressed rows,
    /// `nbr[nbr_start[v]..nbr_start[v + 1]]`): the neighbour, `v`'s port to it, and its
    /// port to `v`.
    nbr_start: Vec<u32>,
    nbr: Vec<(u32, u8, u8)>,
    p2: u64,
    /// Per switch: number of LIDs it and its CAs own (OpenSM `num_hca`).
    num_hca: Vec<u64>,
}

/// Dijkstra results for one destination.
struct Tree {
    dist: Vec<u16>,
    /// Accumulated load from the destination (within one hop layer).
    acc: Vec<u64>,
    /// For each switch: the port on it towards the destination, and the flat id of the
    /// directed link (pred → this switch) that the weight update charges.
    port: Vec<u8>,
    edge: Vec<usize>,
    pred: Vec<u32>,
    /// The parent's port towards this switch (the parent's in port from it).
    pred_port: Vec<u8>,
    order: Vec<u32>,
}

/// DFSSSP tables and SLs. `vls`: data VLs available on every port.
pub fn route(f: &Fabric, vls: u8) -> Result<(Tables, SlTable), String> {
    let n = f.nsw();
    if n == 0 {
        return Err("dfsssp: no switches".into());
    }
    let mut base = vec![0usize; n + 1];
    for s in 0..n {
        base[s + 1] = base[s] + f.nports[s] as usize + 1;
    }
    let total_lids: u64 = f.eps.iter().map(|e| 1u64 << e.lmc).sum::<u64>() + n as u64;
    let num_hca: Vec<u64> = (0..n).map(|s| 1 + f.sw_eps[s].iter().map(|&e| 1u64 << f.eps[e as usize].lmc).sum::<u64>()).collect();
    let (nbr_start, nbr) = switch_neighbours(f);
    let mut g = Graph { n, base: base.clone(), load: vec![0; base[n]], nbr_start, nbr, p2: total_lids * total_lids, num_hca };

    // Connectivity (OpenSM's dry run from the SM): every switch must be reachable.
    let dist = f.switch_distances();
    if dist[..n].contains(&u8::MAX) {
        return Err("dfsssp: the subnet is not connected (some switch unreachable)".into());
    }
    let diameter = dist.iter().copied().filter(|&d| d != u8::MAX).max().unwrap_or(0) as u64;

    // OpenSM's destination order.
    let mut sws: Vec<usize> = (0..n).collect();
    sws.sort_by_key(|&s| Reverse(g.num_hca[s]));
    let mut dsts: Vec<Dst> = vec![];
    for &s in &sws {
        for &e in &f.sw_eps[s] {
            let ep = &f.eps[e as usize];
            let port = ep.sw.expect("on this switch").1;
            for k in 0..1usize << ep.lmc {
                dsts.push(Dst { lid: ep.lid as usize + k, sw: s, port });
            }
        }
    }
    for &s in &sws {
        dsts.push(Dst { lid: f.sw_lid[s] as usize, sw: s, port: 0 });
    }

    // The tables are filled LID-major (one destination = one column) and transposed once.
    let mut cols = vec![NO_PATH; n * f.nlid];
    let mut tree = Tree {
        dist: vec![0; n],
        acc: vec![0; n],
        port: vec![NO_PATH; n],
        edge: vec![usize::MAX; n],
        pred: vec![NONE; n],
        pred_port: vec![NO_PATH; n],
        order: Vec::with_capacity(n),
    };
    let mut layers = Layers::default();
    let mut layer_src = usize::MAX;
    let mut max_load = 0u64;
    let mut sub = vec![0u64; n];
    let mut vl0 = Vl0::new(f);
    for d in &dsts {
        if d.lid == 0 || d.lid >= f.nlid {
            continue;
        }
        if layer_src != d.sw {
            layer_src = d.sw;
            layers.build(&g, &dist[d.sw * n..(d.sw + 1) * n]);
        }
        if diameter * max_load < g.p2 {
            layered(&g, d.sw, &layers, &mut tree);
        } else {
            heap_dijkstra(f, &g, d.sw, &mut tree);
            layer_src = usize::MAX; // recompute the layers for the next destination
        }
        let col = &mut cols[d.lid * n..(d.lid + 1) * n];
        for (v, c) in col.iter_mut().enumerate() {
            *c = if v == d.sw { d.port } else { tree.port[v] };
        }
        // Weight update: each link on the tree carries the LIDs of its subtree.
        for &v in tree.order.iter().rev() {
            sub[v as usize] = g.num_hca[v as usize];
        }
        for &v in tree.order.iter().rev() {
            let v = v as usize;
            if v == d.sw || tree.edge[v] == usize::MAX {
                continue;
            }
            let e = tree.edge[v];
            g.load[e] += sub[v];
            max_load = max_load.max(g.load[e]);
            let p = tree.pred[v] as usize;
            sub[p] += sub[v];
        }
        if matches!(f.owner[d.lid], Owner::Ep(_)) {
            vl0.add(f, d, &tree);
        }
    }
    let t = Tables::from_columns(n, f.nlid, &cols);

    let sl = remove_deadlocks(f, &t, vls.clamp(1, 15), vl0)?;
    Ok((t, sl))
}

/// The min-hop DAG from one destination switch, in breadth-first order: for every switch
/// (nearest first) the links from switches one hop nearer (compressed rows).
#[derive(Default)]
struct Layers {
    order: Vec<u32>,
    dist: Vec<u16>,
    start: Vec<u32>,
    pred: Vec<Pred>,
}

/// A switch `u` one hop nearer the destination than `v`.
#[derive(Clone, Copy)]
struct Pred {
    u: u32,
    /// Flat id of the directed link u→v ([`Graph::load`]).
    link: u32,
    /// `v`'s port towards `u`, and `u`'s towards `v`.
    port: u8,
    u_port: u8,
}

/// [`Graph::nbr_start`] and [`Graph::nbr`].
fn switch_neighbours(f: &Fabric) -> (Vec<u32>, Vec<(u32, u8, u8)>) {
    let mut start = vec![0u32];
    let mut nbr = vec![];
    for row in &f.adj {
        for (q, peer) in row.iter().enumerate() {
            if let Peer::Switch { sw: u, port: pu } = *peer {
                nbr.push((u, q as u8, pu));
            }
        }
        start.push(nbr.len() as u32);
    }
    (start, nbr)
}

impl Layers {
    /// The layers from one destination switch, whose row of the distance matrix is `row`.
    fn build(&mut self, g: &Graph, row: &[u8]) {
        let n = g.n;
        // Reachable switches by distance, ties in index order (a counting sort: stable).
        let mut at = [0u32; 257];
        for &d in row.iter().filter(|&&d| d != u8::MAX) {
            at[d as usize + 1] += 1;
        }
        for d in 1..257 {
            at[d] += at[d - 1];
        }
        self.order.clear();
        self.order.resize(at[255] as usize, 0);
        for (v, &d) in row.iter().enumerate().filter(|(_, &d)| d != u8::MAX) {
            self.order[at[d as usize] as usize] = v as u32;
            at[d as usize] += 1;
        }
        self.dist.clear();
        self.dist.extend(row.iter().take(n).map(|&d| d as u16));
        self.start.clear();
        // Every neighbour entry may be a predecessor: write each, keep those that are.
        if self.pred.len() < g.nbr.len() {
            self.pred.resize(g.nbr.len(), Pred { u: 0, link: 0, port: 0, u_port: 0 });
        }
        let mut k = 0;
        for &v in &self.order {
            self.start.push(k as u32);
            let dv = row[v as usize];
            let base = g.base[v as usize];
            for &(u, q, pu) in &g.nbr[g.nbr_start[v as usize] as usize..g.nbr_start[v as usize + 1] as usize] {
                let du = row[u as usize];
                self.pred[k] = Pred { u, link: (base + q as usize) as u32, port: q, u_port: pu };
                k += usize::from(du != u8::MAX && du + 1 == dv);
            }
        }
        self.start.push(k as u32);
    }
}

/// Min-hop layers from `src`, least accumulated load per switch (exact while the P² term
/// dominates). Ties: the lowest port of the receiving switch.
fn layered(g: &Graph, src: usize, l: &Layers, tree: &mut Tree) {
    tree.order.clear();
    tree.order.extend_from_slice(&l.order);
    tree.dist.copy_from_slice(&l.dist);
    for (i, &v) in l.order.iter().enumerate() {
        let v = v as usize;
        tree.port[v] = NO_PATH;
        tree.edge[v] = usize::MAX;
        tree.pred[v] = NONE;
        if v == src {
            tree.acc[v] = 0;
            continue;
        }
        let preds = &l.pred[l.start[i] as usize..l.start[i + 1] as usize];
        // Sums stay far below u64::MAX: every accumulated load is under the diameter
        // times P² (P < 2^16 LIDs), so plain additions; the choice is made without a
        // branch, as the least of 16 loads is unpredictable.
        let (mut best, mut at) = (u64::MAX, usize::MAX);
        for (k, p) in preds.iter().enumerate() {
            let a = tree.acc[p.u as usize] + g.load[p.link as usize];
            let better = a < best;
            best = if better { a } else { best };
            at = if better { k } else { at };
        }
        if let Some(p) = preds.get(at) {
            tree.port[v] = p.port;
            tree.edge[v] = p.link as usize;
            tree.pred[v] = p.u;
            tree.pred_port[v] = p.u_port;
        }
        tree.acc[v] = best;
    }
}

/// Plain Dijkstra on weights P² + load, for when the layered shortcut is not exact.
fn heap_dijkstra(f: &Fabric, g: &Graph, src: usize, tree: &mut Tree) {
    let n = g.n;
    let mut dist = vec![u64::MAX; n];
    let mut hops = vec![u16::MAX; n];
    let mut done = vec![false; n];
    for v in 0..n {
        tree.port[v] = NO_PATH;
        tree.edge[v] = usize::MAX;
        tree.pred[v] = NONE;
    }
    dist[src] = 0;
    hops[src] = 0;
    let mut h = BinaryHeap::new();
    h.push(Reverse((0u64, src)));
    while let Some(Reverse((d, u))) = h.pop() {
        if done[u] || d != dist[u] {
            continue;
        }
        done[u] = true;
        for (pu, peer) in f.adj[u].iter().enumerate() {
            let Peer::Switch { sw: v, port: q } = *peer else { continue };
            let v = v as usize;
            let e = g.base[v] + q as usize;
            let nd = d + g.p2 + g.load[e];
            if !done[v] && nd < dist[v] {
                dist[v] = nd;
                hops[v] = hops[u] + 1;
                tree.port[v] = q;
                tree.edge[v] = e;
                tree.pred[v] = u as u32;
                tree.pred_port[v] = pu as u8;
                h.push(Reverse((nd, v)));
            }
        }
    }
    // Re-sort by the hop count of the tree actually found (parents before children).
    tree.order.clear();
    tree.order.extend((0..n as u32).filter(|&v| hops[v as usize] != u16::MAX));
    tree.order.sort_by_key(|&v| hops[v as usize]);
    tree.dist[..n].copy_from_slice(&hops[..n]);
}

/// Dependency counts per switch: (in port, out port) → paths, for one VL.
struct DepCounts {
    off: Vec<usize>,
    np: Vec<usize>,
    c: Vec<u64>,
}

impl DepCounts {
    fn new(f: &Fabric) -> DepCounts {
        let mut off = vec![];
        let mut np = vec![];
        let mut total = 0;
        for &p in &f.nports {
            let k = p as usize + 1;
            off.push(total);
            np.push(k);
            total += k * k;
        }
        DepCounts { off, np, c: vec![0; total] }
    }
    /// The count of (switch `n`, in port `q`, out port `r`), stored out-port-major: the
    /// paths to one destination leave a switch on one port, so the in ports they come
    /// from are side by side.
    #[inline]
    fn at(&mut self, n: usize, q: u8, r: u8) -> &mut u64 {
        let i = self.off[n] + r as usize * self.np[n] + q as usize;
        &mut self.c[i]
    }
    fn graph(&self, f: &Fabric) -> DepGraph {
        let mut g = DepGraph::new(f);
        for n in 0..self.np.len() {
            let k = self.np[n];
            for q in 0..k {
                for r in 0..k {
                    if self.c[self.off[n] + r * k + q] > 0 {
                        g.set(n, q as u8, r as u8);
                    }
                }
            }
        }
        g
    }
}

/// The switch-to-switch dependencies of the path from `src` to `lid`: (switch n, in port
/// q, out port r) for every switch the path crosses between two switch links.
fn path_deps(f: &Fabric, t: &Tables, src: usize, lid: usize, out: &mut Vec<(usize, u8, u8)>) {
    out.clear();
    let mut s = src;
    for _ in 0..64 {
        let p = t.get(s, lid);
        let Some(Peer::Switch { sw: nx, port: q }) = f.adj[s].get(p as usize).copied() else { return };
        let nx = nx as usize;
        let r = t.get(nx, lid);
        if matches!(f.adj[nx].get(r as usize), Some(Peer::Switch { .. })) {
            out.push((nx, q, r));
        }
        s = nx;
    }
}

/// OpenSM's `dfsssp_remove_deadlocks`, in named steps: every path starts on VL 0
/// ([`Vl0`], counted while routing); while a VL's dependency graph has a cycle, the paths
/// through its weakest dependency ([`weakest_dependency`]) move up one VL; spare VLs then
/// go to the busiest ([`split_spare_vls`]). `Err` when the last VL keeps a cycle.
fn remove_deadlocks(f: &Fabric, t: &Tables, vl_avail: u8, vl0: Vl0) -> Result<SlTable, String> {
    let n = f.nsw();
    let nlid = f.nlid;
    let weight = vl0.weight;
    let dst_lids: Vec<usize> = (1..nlid).filter(|&l| matches!(f.owner[l], Owner::Ep(_)) && f.lid_switch(l).is_some()).collect();
    let mut vl = vec![0u8; n * nlid];
    let mut paths_per_vl = vec![0u64; vl_avail as usize];
    let mut counts: Vec<DepCounts> = vec![vl0.counts];
    paths_per_vl[0] = vl0.paths;
    let mut vl_needed = 1u8;
    let mut deps = vec![];
    for test_vl in 0..vl_avail as usize - 1 {
        if counts.len() <= test_vl + 1 {
            counts.push(DepCounts::new(f));
        }
        loop {
            let g = counts[test_vl].graph(f);
            let Some(cycle) = find_cycle(f, &g) else { break };
            vl_needed = test_vl as u8 + 2;
            let (wn, wq, wr) = weakest_dependency(f, &mut counts[test_vl], &cycle);
            // Move every path of this VL that uses it.
            let mut moved = false;
            let (lo, hi) = counts.split_at_mut(test_vl + 1);
            let (cur, next) = (&mut lo[test_vl], &mut hi[0]);
            for &lid in &dst_lids {
                if t.get(wn, lid) != wr {
                    continue;
                }
                for src in 0..n {
                    if weight[src] == 0 || vl[src * nlid + lid] as usize != test_vl {
                        continue;
                    }
                    path_deps(f, t, src, lid, &mut deps);
                    if !deps.contains(&(wn, wq, wr)) {
                        continue;
                    }
                    for &(a, b, c) in &deps {
                        *cur.at(a, b, c) -= weight[src];
                        *next.at(a, b, c) += weight[src];
                    }
                    vl[src * nlid + lid] = test_vl as u8 + 1;
                    moved = true;
                    paths_per_vl[test_vl] -= weight[src];
                    paths_per_vl[test_vl + 1] += weight[src];
                }
            }
            if !moved {
                // Counts and tables disagree (cannot happen with consistent tables);
                // drop the dependency rather than loop forever.
                debug_assert!(false, "no path uses the weakest dependency");
                *cur.at(wn, wq, wr) = 0;
            }
        }
    }
    if let Some(last) = counts.get(vl_avail as usize - 1) {
        if find_cycle(f, &last.graph(f)).is_some() {
            return Err(format!("dfsssp: {vl_avail} VLs are not enough to break every dependency cycle"));
        }
    }
    let split = split_spare_vls(&mut vl, &paths_per_vl, vl_needed, vl_avail);
    Ok(SlTable { nlid, vl, vls_needed: vl_needed, split })
}

/// Every path on VL 0: the dependencies of all CA-to-CA paths, counted per destination
/// CA LID over its routing tree as the tree is found (a switch's paths to it weigh its
/// source LIDs), and how many paths there are. The tree is what the tables hold for that
/// LID, so this is the count OpenSM makes from the tables before `dfsssp_remove_deadlocks`.
struct Vl0 {
    counts: DepCounts,
    paths: u64,
    /// Per switch: its CAs' LIDs (the paths leaving it to one destination).
    weight: Vec<u64>,
    /// Per switch, for the current destination: the source LIDs whose paths cross it.
    sub: Vec<u64>,
}

impl Vl0 {
    fn new(f: &Fabric) -> Vl0 {
        let n = f.nsw();
        let weight = (0..n).map(|s| f.sw_eps[s].iter().map(|&e| 1u64 << f.eps[e as usize].lmc).sum()).collect();
        Vl0 { counts: DepCounts::new(f), paths: 0, weight, sub: vec![0; n] }
    }

    /// Adds the paths to CA LID `d` over its tree: every switch's own LIDs flow to its
    /// parent (farthest first), and where a switch's parent is not `d`'s switch, the
    /// parent's (in port from this switch, out port) dependency carries them.
    fn add(&mut self, f: &Fabric, d: &Dst, tree: &Tree) {
        let own = match f.owner[d.lid] {
            Owner::Ep(e) => 1u64 << f.eps[e as usize].lmc,
            _ => 0,
        };
        for &v in tree.order.iter().rev() {
            self.sub[v as usize] = self.weight[v as usize];
        }
        for &v in tree.order.iter().rev() {
            let v = v as usize;
            self.paths += self.weight[v] - if v == d.sw { own } else { 0 };
            if v == d.sw || tree.edge[v] == usize::MAX {
                continue;
            }
            let p = tree.pred[v] as usize;
            self.sub[p] += self.sub[v];
            if p == d.sw || self.sub[v] == 0 {
                continue;
            }
            *self.counts.at(p, tree.pred_port[v], tree.port[p]) += self.sub[v];
        }
    }
}

/// The weakest dependency on `cycle`: the (channel i → channel i+1) that the fewest paths
/// use, as (switch, in port, out port).
fn weakest_dependency(f: &Fabric, counts: &mut DepCounts, cycle: &[(u32, u8)]) -> (usize, u8, u8) {
    let mut weakest = None;
    let mut wc = u64::MAX;
    for i in 0..cycle.len() {
        let (s, p) = cycle[i];
        let (nx, r) = cycle[(i + 1) % cycle.len()];
        let Peer::Switch { port: q, .. } = f.adj[s as usize][p as usize] else { continue };
        let c = *counts.at(nx as usize, q, r);
        if c < wc {
            wc = c;
            weakest = Some((nx as usize, q, r));
        }
    }
    weakest.expect("a cycle has dependencies")
}

/// Shares the spare VLs out (OpenSM `vl_split_count`): each goes to the needed VL with the
/// most paths per VL so far, and the VL numbers of `vl` move up to make room. Returns how
/// many VLs each needed VL is split over.
fn split_spare_vls(vl: &mut [u8], paths_per_vl: &[u64], vl_needed: u8, vl_avail: u8) -> Vec<u8> {
    let mut split = vec![0u8; vl_avail as usize];
    for s in split.iter_mut().take(vl_needed.min(vl_avail) as usize) {
        *s = 1;
    }
    if vl_needed < vl_avail {
        for _ in vl_needed..vl_avail {
            let mut best = 0;
            let mut most = 0.0;
            for v in 0..vl_needed as usize {
                let avg = paths_per_vl[v] as f64 / split[v] as f64;
                if most < avg {
                    best = v;
                    most = avg;
                }
            }
            split[best] += 1;
        }
        for from in (1..vl_needed as usize).rev() {
            let to: usize = split[..from].iter().map(|&x| x as usize).sum();
            if to == from {
                continue;
            }
            for x in vl.iter_mut() {
                if *x as usize == from {
                    *x = to as u8;
                }
            }
            split[to] = split[from];
            split[from] = 0;
        }
    }
    split
}
