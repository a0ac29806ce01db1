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
//! Dijkstra otherwise (`dfsssp/tree.rs`); ties go to the lowest port (OpenSM's 4-ary heap breaks
//! them in its own order, so tie choices can differ). One pass over each tree, farthest
//! switch first, charges the loads (`charge`). Source: linux-rdma/opensm
//! `opensm/osm_ucast_dfsssp.c` at fa74b98 (`dijkstra`, `update_weights`,
//! `dfsssp_remove_deadlocks`).
//!
//! Threads: only the loads feed the next destination, so the trees are found and charged
//! one after another on the calling thread, and the rest goes to a helper
//! (`dfsssp/pipeline.rs`): building the layers of the next destination switches ahead
//! (they do not depend on loads) and writing each tree out — the LFT entries and VL 0's
//! dependencies (`dfsssp/writer.rs`) — from the chosen links `charge` records. With two
//! or more hardware threads the helper runs on a second thread, else inline. Either way
//! it computes the same pure functions of the same inputs in the same order (the
//! layers of one switch, the trees in destination order), so no table, VL or SL can
//! depend on the thread count (a unit test compares both).
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

mod pipeline;
mod tree;
mod writer;

use std::cmp::Reverse;

use super::cdg::{find_cycle, DepGraph, DstTree, NONE};
use super::tables::{Fabric, Owner, Peer, SlTable, Tables};
use pipeline::Helper;
use tree::{Graph, Layers, Tree};
use writer::{Batch, EntryOut, Routed, Writer};

/// A destination of the Dijkstra passes: a LID and the switch its traffic ends at.
#[derive(Clone, Copy)]
struct Dst {
    lid: usize,
    sw: usize,
    /// The port at `sw` that delivers (0 for the switch itself).
    port: u8,
}

/// DFSSSP tables and SLs. `vls`: data VLs available on every port.
pub fn route(f: &Fabric, vls: u8) -> Result<(Tables, SlTable), String> {
    route_on(f, vls, std::thread::available_parallelism().map_or(1, |t| t.get()))
}

/// [`route`] with the helper ([`pipeline`]) inline (`threads` ≤ 1) or on a second thread.
fn route_on(f: &Fabric, vls: u8, threads: usize) -> Result<(Tables, SlTable), String> {
    let n = f.nsw();
    if n == 0 {
        return Err("dfsssp: no switches".into());
    }
    if n > tree::MAX_SWITCHES {
        return Err(format!("dfsssp: {n} switches; switch positions are 16-bit here"));
    }
    let total_lids: u64 = f.eps.iter().map(|e| 1u64 << e.lmc).sum::<u64>() + n as u64;
    // Per switch: the LIDs it and its CAs own (OpenSM `num_hca`), and its CAs' LIDs.
    let own: Vec<(u64, u64)> = (0..n)
        .map(|s| {
            let cas = f.sw_eps[s].iter().map(|&e| 1u64 << f.eps[e as usize].lmc).sum::<u64>();
            (1 + cas, cas)
        })
        .collect();
    let (g, mut keys) = switch_graph(f, total_lids * total_lids);

    // Connectivity (OpenSM's dry run from the SM): every switch must be reachable.
    let dist = f.switch_distances();
    if dist[..n].contains(&u8::MAX) {
        return Err("dfsssp: the subnet is not connected (some switch unreachable)".into());
    }
    let diameter = dist.iter().copied().filter(|&d| d != u8::MAX).max().unwrap_or(0) as u64;

    // OpenSM's destination order.
    let mut sws: Vec<usize> = (0..n).collect();
    sws.sort_by_key(|&s| Reverse(own[s].0));
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

    // The destination switches whose layers pay off, in order: each run's first.
    let schedule: Vec<usize> = (0..dsts.len()).filter(|&x| layers_pay_off(&dsts, x) && (x == 0 || dsts[x - 1].sw != dsts[x].sw)).map(|x| dsts[x].sw).collect();
    let plan = Plan { f, lids: own.iter().map(|o| o.0).collect(), ca_lids: own.iter().map(|o| o.1).sum(), dist, diameter, dsts };
    let builder = pipeline::Builder { g: &g, dist: &plan.dist, lids: &plan.lids };
    let deps = DepGraph::new(f);
    let entry = entry_out(&g, &deps);
    let make_writer = || Writer::new(f, entry, deps, own.iter().map(|o| o.1).collect());
    let (paths, w) = pipeline::run(threads, builder, &schedule, make_writer, |h| route_all(&plan, &g, &mut keys, BATCH, h));
    let vl0 = Vl0::new(w.deps, paths, &own);
    let t = w.tables;

    let sl = remove_deadlocks(f, &t, vls.clamp(1, 15), vl0)?;
    Ok((t, sl))
}

/// Destinations per [`Batch`] handed to the writer: on the k=32 tree about 0.4 ms of
/// routing and 160 KB of entries, few enough messages that the channel costs nothing.
const BATCH: usize = 32;

/// What [`route_all`] routes, fixed before it starts.
struct Plan<'a> {
    f: &'a Fabric,
    /// Per switch: the LIDs it and its CAs own (OpenSM `num_hca`).
    lids: Vec<u64>,
    /// All CA LIDs: the paths to one destination CA LID, its own included.
    ca_lids: u64,
    /// Switch-to-switch hop counts (`u8::MAX`: unreachable), and the largest.
    dist: Vec<u8>,
    diameter: u64,
    /// OpenSM's destination order.
    dsts: Vec<Dst>,
}

/// Every destination's tree in order, each charged onto the link loads `keys` (per entry
/// of `g`, see [`Graph`]) and handed to the helper in batches of `batch`. Returns the
/// number of CA-to-CA paths (VL 0's).
fn route_all(plan: &Plan, g: &Graph, keys: &mut [u64], batch: usize, h: &mut Helper) -> u64 {
    let Plan { f, lids, ca_lids: total_ca_lids, dist, diameter, dsts } = plan;
    let (f, total_ca_lids, diameter) = (*f, *total_ca_lids, *diameter);
    let n = f.nsw();
    // The layers of the destination switch `built.src` (from the helper, keys current),
    // and those `scan` and `heap_dijkstra` leave their one tree in.
    let mut built = Box::new(Layers::new(g));
    let mut scratch = Layers::new(g);
    let mut tree = Tree::new(n);
    let mut max_load = 0u64;
    let mut paths = 0u64;
    let mut b = Batch::default();
    for (x, d) in dsts.iter().enumerate() {
        if d.lid == 0 || d.lid >= f.nlid {
            continue;
        }
        let row = &dist[d.sw * n..(d.sw + 1) * n];
        let l = if diameter * max_load < g.p2 {
            if built.src == d.sw {
                tree::layered(&built, &mut tree);
                &mut *built
            } else if layers_pay_off(dsts, x) {
                h.layers(&mut built, d.sw);
                built.load_keys(keys);
                tree::layered(&built, &mut tree);
                &mut *built
            } else {
                // `built`'s keys would go stale.
                built.src = usize::MAX;
                tree::scan(g, keys, d.sw, row, lids, &mut scratch, &mut tree);
                &mut scratch
            }
        } else {
            built.src = usize::MAX;
            tree::heap_dijkstra(g, keys, d.sw, lids, &mut scratch, &mut tree);
            &mut scratch
        };
        let ca = matches!(f.owner[d.lid], Owner::Ep(_));
        let first = b.routed.last().map_or(0, |r| r.end as usize);
        let (most, end) = charge(keys, l, &mut tree, &mut b, first);
        max_load = max_load.max(most);
        b.routed.push(Routed { lid: d.lid as u32, sw: d.sw as u32, port: d.port, ca, end: end as u32 });
        if ca {
            // Every CA LID but the destination's own sends one path to it.
            paths += total_ca_lids - ca_lids(f, d.lid);
        }
        if b.routed.len() == batch {
            b = h.write(b);
        }
    }
    if !b.routed.is_empty() {
        h.write(b);
    }
    paths
}

/// Whether destination `x`'s switch gets [`Layers`]: the next destination is on the same
/// switch (its CA LIDs come in a row), so they are reused; a switch's own LID, alone, is
/// scanned. Either gives the same tree.
fn layers_pay_off(dsts: &[Dst], x: usize) -> bool {
    dsts.get(x + 1).is_some_and(|next| next.sw == dsts[x].sw)
}

/// The LIDs of the CA port owning `lid` (2^LMC), 0 for a switch LID.
fn ca_lids(f: &Fabric, lid: usize) -> u64 {
    match f.owner[lid] {
        Owner::Ep(e) => 1u64 << f.eps[e as usize].lmc,
        _ => 0,
    }
}

/// Charges one destination's tree onto the link loads, farthest switch first: the LIDs
/// of each switch's subtree onto the link to its parent (OpenSM `update_weights`: every
/// source LID's path crosses it), in the graph and in the layers' copy of the loads.
/// Records each position's chosen [`Graph`] entry and parent position (position 1
/// first) in `b` from `first` on (growing its columns as needed; what lies beyond is
/// left as it is, stale), from which the [`Writer`] derives everything else. Returns the
/// largest load charged and where the records end.
#[inline(never)] // once per destination; kept apart in profiles
fn charge(keys: &mut [u64], l: &mut Layers, t: &mut Tree, b: &mut Batch, first: usize) -> (u64, usize) {
    let mut max_key = 0;
    // `t.sub` holds what a position's children have passed up so far; taking it leaves
    // it zero for the next destination.
    // Columns cut to one length each (per position, per candidate, per entry), so that an
    // index is checked once for all the columns it reads.
    let len = l.order.len();
    let (own, choice, sub) = (&l.own[..len], &t.choice[..len], &mut t.sub[..len]);
    let m = l.parent.len();
    let (parent, entry, lkey) = (&l.parent[..m], &l.entry[..m], &mut l.key[..m]);
    let gkey = keys;
    let end = first + len - 1;
    if b.entries.len() < end {
        b.entries.resize(end, 0);
        b.parents.resize(end, 0);
    }
    let out = b.entries[first..end].iter_mut().zip(&mut b.parents[first..end]);
    for (i, (out, out_parent)) in out.enumerate().rev() {
        let i = i + 1;
        let c = choice[i] as usize;
        let (k, p) = (entry[c] as usize, parent[c] as usize);
        (*out, *out_parent) = (k as u32, p as u16);
        let lids = own[i] + std::mem::take(&mut sub[i]);
        lkey[c] += lids << 8;
        gkey[k] += lids << 8;
        max_key = max_key.max(gkey[k]);
        sub[p] += lids;
    }
    t.sub[0] = 0;
    (max_key >> 8, end)
}

/// The switch-to-switch links as a [`Graph`], `p2` its base weight, and its keys with no
/// load yet.
fn switch_graph(f: &Fabric, p2: u64) -> (Graph, Vec<u64>) {
    let n = f.nsw();
    let mut g = Graph { n, nbr_start: vec![0], nb: vec![], port: vec![], up: vec![], rev: vec![], p2 };
    let mut keys = vec![];
    // Flat (switch, port) → entry, for the opposite links.
    let mut port_base = vec![0usize; n + 1];
    for s in 0..n {
        port_base[s + 1] = port_base[s] + f.adj[s].len();
    }
    let mut entry_at = vec![NONE; port_base[n]];
    for s in 0..n {
        let first = g.nb.len();
        for (q, u, pu) in f.sw_links(s) {
            entry_at[port_base[s] + q as usize] = g.nb.len() as u32;
            g.nb.push(u as u16);
            g.port.push(q);
            g.up.push(pu);
            keys.push((g.nb.len() - 1 - first) as u64);
        }
        g.nbr_start.push(g.nb.len() as u32);
    }
    for k in 0..g.nb.len() {
        let (u, pu) = (g.nb[k] as usize, g.up[k]);
        g.rev.push(entry_at[port_base[u] + pu as usize]);
    }
    (g, keys)
}

/// Per entry of `g`, what the [`Writer`] needs of a chosen link (`deps`: the graph it
/// marks VL 0's dependencies in).
fn entry_out(g: &Graph, deps: &DepGraph) -> Vec<EntryOut> {
    let mut out = Vec::with_capacity(g.nb.len());
    for v in 0..g.n {
        for k in g.nbr_start[v] as usize..g.nbr_start[v + 1] as usize {
            let (u, pu) = (g.nb[k], g.up[k]);
            out.push(EntryOut { dep_row: deps.row(u as usize, pu) as u32, v: v as u16, port: g.port[k] });
        }
    }
    out
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
/// ([`Vl0`], its dependencies found while routing); while a VL's dependency graph has a
/// cycle, the paths through its weakest dependency ([`weakest_dependency`]) move up one
/// VL; spare VLs then go to the busiest ([`split_spare_vls`]). `Err` when the last VL keeps
/// a cycle. The per-dependency path counts that the weakest dependency needs are only
/// counted ([`count_vl0`]) when VL 0 has a cycle: on a fat tree it has none.
fn remove_deadlocks(f: &Fabric, t: &Tables, vl_avail: u8, vl0: Vl0) -> Result<SlTable, String> {
    let n = f.nsw();
    let nlid = f.nlid;
    let weight = vl0.weight;
    let dst_lids: Vec<usize> = (1..nlid).filter(|&l| matches!(f.owner[l], Owner::Ep(_)) && f.lid_switch(l).is_some()).collect();
    let mut vl = vec![0u8; n * nlid];
    let mut paths_per_vl = vec![0u64; vl_avail as usize];
    paths_per_vl[0] = vl0.paths;
    if find_cycle(f, &vl0.deps).is_none() {
        let split = split_spare_vls(&mut vl, &paths_per_vl, 1, vl_avail);
        return Ok(SlTable { nlid, vl, vls_needed: 1, split });
    }
    let mut counts: Vec<DepCounts> = vec![count_vl0(f, t, &weight, &dst_lids)];
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

/// Every path on VL 0: the dependencies of all CA-to-CA paths, taken from each
/// destination CA LID's routing tree as the tree is found ([`charge`]), and how many paths
/// there are (a switch's paths to a destination weigh its CA LIDs). The tree is what the
/// tables hold for that LID, so this is the graph OpenSM builds from the tables before
/// `dfsssp_remove_deadlocks`.
struct Vl0 {
    deps: DepGraph,
    paths: u64,
    /// Per switch: its CAs' LIDs (the paths leaving it to one destination).
    weight: Vec<u64>,
}

impl Vl0 {
    /// VL 0 as the writer found it: its dependency graph and its number of paths.
    fn new(deps: DepGraph, paths: u64, own: &[(u64, u64)]) -> Vl0 {
        Vl0 { deps, paths, weight: own.iter().map(|o| o.1).collect() }
    }
}

/// The paths per VL 0 dependency, counted from the tables (for [`weakest_dependency`]):
/// per destination CA LID its tree ([`DstTree`]), each switch's CA LIDs flowing to the
/// next switch, farthest first, and the (in port, out port) dependency at the next switch
/// carrying them when that switch forwards to another switch.
fn count_vl0(f: &Fabric, t: &Tables, weight: &[u64], dst_lids: &[usize]) -> DepCounts {
    let n = f.nsw();
    let mut counts = DepCounts::new(f);
    let mut tree = DstTree::new(n);
    let mut sub = vec![0u64; n];
    let cols = t.columns();
    for &lid in dst_lids {
        let Owner::Ep(e) = f.owner[lid] else { continue };
        tree.build_col(f, &cols[lid * n..(lid + 1) * n], Some(e));
        for &s in &tree.far_first {
            sub[s as usize] = weight[s as usize];
        }
        for &s in &tree.far_first {
            let s = s as usize;
            let nx = tree.next[s];
            if nx == NONE {
                continue;
            }
            sub[nx as usize] += sub[s];
            if tree.next[nx as usize] == NONE || sub[s] == 0 {
                continue;
            }
            let Peer::Switch { port: q, .. } = f.adj[s][tree.port[s] as usize] else { continue };
            *counts.at(nx as usize, q, tree.port[nx as usize]) += sub[s];
        }
    }
    counts
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subnet_manager::{Engine, SmConfig, SubnetManager};
    use crate::topology::Topology;
    use units::{BitRate, SimDuration};

    /// The helper inline and on its own thread give the same tables and SLs: on fat trees
    /// (several batches, layers built ahead, LMC 2's runs of four LIDs) and on a ring and
    /// a torus (VL 0 cyclic, so the dependency counts come from the tables).
    #[test]
    fn the_helper_thread_changes_nothing() {
        let l = (BitRate::from_gbps(200), SimDuration::from_ns(5));
        for (t, lmc) in [
            (Topology::fat_tree(8, l, l).unwrap(), 0),
            (Topology::fat_tree(4, l, l).unwrap(), 2),
            (Topology::ring(9, 2, l, l).unwrap(), 0),
            (Topology::torus_2d(5, 3, 2, l, l).unwrap(), 0),
        ] {
            let mut sm = SubnetManager::new(&t, SmConfig { engine: Engine::Dfsssp, lmc, ..Default::default() });
            sm.bring_up();
            let f = &sm.state().expect("brought up").fabric;
            let (t1, sl1) = route_on(f, 4, 1).expect("routes inline");
            let (t2, sl2) = route_on(f, 4, 2).expect("routes with the helper thread");
            assert_eq!(t1, t2, "tables, {} switches, LMC {lmc}", f.nsw());
            assert_eq!((sl1.vl, sl1.vls_needed, sl1.split), (sl2.vl, sl2.vls_needed, sl2.split), "SLs, {} switches", f.nsw());
        }
    }
}
