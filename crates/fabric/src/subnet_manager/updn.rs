//! `updn`: up*/down* routing (Schroeder et al., "Autonet", IEEE JSAC 9(8), 1991), as
//! OpenSM's `osm_ucast_updn.c` does it.
//!
//! Roots are given (switch GUIDs, OpenSM `root_guid_file`) or found from the min-hop
//! tables: a switch is a root when, over all CA ports, the histogram of its hop distances
//! to their switches has exactly one bar above 90 % of the CAs and exactly one above 5 %
//! (`updn_find_root_nodes_by_min_hop`). Ranks are breadth-first distances from the nearest
//! root. A link between ranks r and r' is *up* towards the smaller rank, between equal
//! ranks towards the smaller GUID (`updn_get_dir`: "bigger == UP direction" is the step
//! from the bigger GUID); a link between two roots counts as down both ways
//! (OpenSM's `updn_get_dir` hack), so roots may be crossed freely. A legal path goes up
//! zero or more times, then down; never down then up.
//!
//! OpenSM computes per-port hop counts with one breadth-first search per switch that
//! remembers a single direction per switch; this implementation computes the legal
//! distances exactly with two quantities per (switch, destination switch): `down[s]`,
//! the shortest all-down path, and `best[s]`, the shortest legal path. A switch from which
//! the destination is reachable going only down always routes down (`down[s]`), so a
//! packet that went down into it never has to go up; otherwise it routes up to a
//! neighbour with the least `best`. On fat trees this gives OpenSM's hop counts; on
//! irregular fabrics where OpenSM's single-direction search mixes the two it may differ,
//! and this version never produces a down→up turn. Routes are then chosen by the minhop
//! table builder (port load balancing). With no roots found the engine fails and the
//! SM falls back to minhop, as OpenSM does.

use super::minhop::{build_lfts, Hops, MinHops};
use super::tables::{Fabric, Tables};

const INF: u8 = u8::MAX;

/// Up/down hop tables.
pub struct UpDownHops {
    n: usize,
    /// `down[s·n + t]`: shortest all-down path from `s` to `t`.
    down: Vec<u8>,
    /// `best[s·n + t]`: the hop count of the route `s` uses towards `t`.
    best: Vec<u8>,
    rank: Vec<u32>,
    guid: Vec<u64>,
}

impl UpDownHops {
    /// True when a packet moving from `a` to neighbour `b` goes down (OpenSM
    /// `updn_get_dir(b, a) == UP` seen from the packet).
    #[inline]
    fn is_down(&self, a: usize, b: usize) -> bool {
        let (ra, rb) = (self.rank[a], self.rank[b]);
        if ra == 0 && rb == 0 {
            return true;
        }
        rb > ra || (rb == ra && self.guid[b] > self.guid[a])
    }
}

impl Hops for UpDownHops {
    #[inline]
    fn least(&self, s: usize, t: usize) -> u8 {
        self.best[s * self.n + t]
    }
    #[inline]
    fn via(&self, s: usize, u: usize, t: usize) -> u8 {
        let n = self.n;
        if self.down[s * n + t] != INF {
            // Down mode: only down steps to switches that are themselves in down mode.
            if self.is_down(s, u) {
                self.down[u * n + t].saturating_add(1)
            } else {
                INF
            }
        } else if !self.is_down(s, u) {
            self.best[u * n + t].saturating_add(1)
        } else {
            INF
        }
    }
    fn masks(&self, f: &Fabric, s: usize, masks: &mut [u128]) {
        let n = self.n;
        masks.fill(0);
        let (ds, bs) = (&self.down[s * n..(s + 1) * n], &self.best[s * n..(s + 1) * n]);
        for (p, u, _) in f.sw_links(s) {
            let u = u as usize;
            let bit = 1u128 << p;
            if self.is_down(s, u) {
                let du = &self.down[u * n..(u + 1) * n];
                for ((m, &a), &b) in masks.iter_mut().zip(du).zip(ds) {
                    if b != INF && a.wrapping_add(1) == b {
                        *m |= bit;
                    }
                }
            } else {
                let bu = &self.best[u * n..(u + 1) * n];
                for (((m, &a), &b), &dsv) in masks.iter_mut().zip(bu).zip(bs).zip(ds) {
                    if dsv == INF && b != INF && a.wrapping_add(1) == b {
                        *m |= bit;
                    }
                }
            }
        }
    }
}

/// Ranks: BFS distance from the nearest root (`u32::MAX` if unreachable).
pub fn ranks(f: &Fabric, roots: &[usize]) -> Vec<u32> {
    let n = f.nsw();
    let mut rank = vec![u32::MAX; n];
    let mut q = std::collections::VecDeque::new();
    for &r in roots {
        rank[r] = 0;
        q.push_back(r);
    }
    while let Some(u) = q.pop_front() {
        for (_, v, _) in f.sw_links(u) {
            if rank[v as usize] > rank[u] + 1 {
                rank[v as usize] = rank[u] + 1;
                q.push_back(v as usize);
            }
        }
    }
    rank
}

/// OpenSM's automatic root detection from min-hop distances.
pub fn auto_roots(f: &Fabric, minhop: &MinHops) -> Vec<usize> {
    let n = f.nsw();
    let cas_per_sw: Vec<u64> = f.sw_eps.iter().map(|v| v.len() as u64).collect();
    let cas: u64 = cas_per_sw.iter().sum();
    let (thd1, thd2) = (cas as f64 * 0.9, cas as f64 * 0.05);
    let mut roots = vec![];
    let mut hist = [0u64; 64];
    for s in 0..n {
        hist.fill(0);
        for (t, &cas) in cas_per_sw.iter().enumerate() {
            if cas == 0 {
                continue;
            }
            let h = minhop.least(s, t);
            if (h as usize) < hist.len() {
                hist[h as usize] += cas;
            }
        }
        let over1 = hist.iter().filter(|&&c| c as f64 > thd1).count();
        let over2 = hist.iter().filter(|&&c| c as f64 > thd2).count();
        if over1 == 1 && over2 == 1 {
            roots.push(s);
        }
    }
    roots
}

impl UpDownHops {
    pub fn new(f: &Fabric, roots: &[usize]) -> UpDownHops {
        let n = f.nsw();
        let rank = ranks(f, roots);
        let mut h = UpDownHops { n, down: vec![INF; n * n], best: vec![INF; n * n], rank, guid: f.sw_guid.clone() };
        let links: Vec<Vec<usize>> = (0..n).map(|s| f.sw_links(s).map(|l| l.1 as usize).collect()).collect();
        // Switches in (rank, GUID) order: up steps always go to an earlier one.
        let mut order: Vec<usize> = (0..n).filter(|&s| h.rank[s] != u32::MAX).collect();
        order.sort_by_key(|&s| (h.rank[s], h.guid[s]));
        let mut q = Vec::with_capacity(n);
        let mut down_col = vec![INF; n];
        let mut best_col = vec![INF; n];
        for t in 0..n {
            if h.rank[t] == u32::MAX {
                continue;
            }
            // All-down distances: BFS from t against down steps (v → x down).
            down_col.fill(INF);
            down_col[t] = 0;
            q.clear();
            q.push(t);
            let mut head = 0;
            while head < q.len() {
                let x = q[head];
                head += 1;
                for &v in &links[x] {
                    if down_col[v] == INF && h.rank[v] != u32::MAX && h.is_down(v, x) {
                        down_col[v] = down_col[x] + 1;
                        q.push(v);
                    }
                }
            }
            // Best legal distance: down mode where possible, else one up step to the
            // neighbour with the least best (earlier in the order).
            for &v in &order {
                best_col[v] = if down_col[v] != INF {
                    down_col[v]
                } else {
                    links[v].iter().filter(|&&x| !h.is_down(v, x) && h.rank[x] != u32::MAX).map(|&x| best_col[x]).min().map_or(INF, |b| b.saturating_add(1))
                };
            }
            for s in 0..n {
                h.down[s * n + t] = down_col[s];
                h.best[s * n + t] = best_col[s];
            }
        }
        h
    }
}

/// Up/down tables. `roots`: switch indices, empty = detect automatically. Fails (for the
/// minhop fallback) when there are no roots.
pub fn route(f: &Fabric, roots: &[usize], old: Option<&Tables>, lmc: u8) -> Result<(Tables, Vec<usize>), String> {
    let roots = if roots.is_empty() { auto_roots(f, &MinHops::new(f)) } else { roots.to_vec() };
    if roots.is_empty() {
        return Err("updn: no root switches found (OpenSM: \"disabling UPDN algorithm, no root nodes were found\")".into());
    }
    let h = UpDownHops::new(f, &roots);
    Ok((build_lfts(f, &h, old, lmc), roots))
}
