//! `minhop`: OpenSM's default routing engine (`osm_ucast_mgr.c`, `osm_switch.c`).
//!
//! 1. Hop tables: the least number of switch hops from every switch to every switch
//!    (OpenSM relaxes neighbour tables `switches − 1` times; a breadth-first search per
//!    switch gives the same numbers). A CA's LID is routed like its switch's LID.
//! 2. Port order (`sort_ports_by_switch_load`): switches by number of attached CA ports,
//!    most first, each contributing its CA ports in port order; then the remaining ports
//!    (switch port 0s) in GUID order.
//! 3. For every switch, for LID offset 0..2^LMC, for every port in that order: among the
//!    ports with the least hop count to the destination, take the one that already carries
//!    the fewest routes, scanning from port `start_from` (1, or for LMC offsets the port
//!    after the one the previous LID of the same port took) — OpenSM's static port load
//!    balancing (`osm_switch_recommend_path`). Routes to switch LIDs are not counted
//!    (`port_profile_switch_nodes` off). With LMC > 0 a port whose remote system, then
//!    remote node, is not yet used by this destination's LIDs is preferred, so the 2^LMC
//!    paths leave through different neighbours.
//! 4. On a re-sweep an existing entry is kept when its port is still up and still on a
//!    least-hop path (`ignore_existing_lfts` off), so routes that survive a failure do
//!    not move.
//!
//! The same table builder serves `updn`, which only changes the hop tables ([`Hops`]).
//! Left out: hop weights, port search ordering, scatter ports, port shifting, the
//! port-profile ignore file, DOR.

use std::collections::HashMap;

use super::mad::NO_PATH;
use super::tables::{Fabric, Peer, Tables};

/// Hop counts the table builder selects by.
pub trait Hops: Sync {
    /// Least hops from switch `s` to switch `t` (`u8::MAX` if none).
    fn least(&self, s: usize, t: usize) -> u8;
    /// Hops from `s` to `t` leaving through port `p` that leads to switch `u`
    /// (`u8::MAX` if that port may not be used).
    fn via(&self, s: usize, u: usize, t: usize) -> u8;

    /// For switch `s` (fewer than 64 ports) and every destination switch `t`: bit `p`
    /// of `masks[t]` set when port `p` is on a least-hop path. Row-wise, for speed; the
    /// default goes through [`Hops::via`].
    fn masks(&self, f: &Fabric, s: usize, masks: &mut [u128]) {
        masks.fill(0);
        for (t, m) in masks.iter_mut().enumerate().take(f.nsw()) {
            let least = self.least(s, t);
            if least == u8::MAX {
                continue;
            }
            for (p, u, _) in f.sw_links(s) {
                if self.via(s, u as usize, t) == least {
                    *m |= 1 << p;
                }
            }
        }
    }
}

/// Plain shortest-path hop counts.
pub struct MinHops {
    pub n: usize,
    pub d: Vec<u8>,
}

impl MinHops {
    pub fn new(f: &Fabric) -> MinHops {
        MinHops { n: f.nsw(), d: f.switch_distances() }
    }
}

impl Hops for MinHops {
    #[inline]
    fn least(&self, s: usize, t: usize) -> u8 {
        self.d[s * self.n + t]
    }
    #[inline]
    fn via(&self, _s: usize, u: usize, t: usize) -> u8 {
        self.d[u * self.n + t].saturating_add(1)
    }
    fn masks(&self, f: &Fabric, s: usize, masks: &mut [u128]) {
        let n = self.n;
        masks.fill(0);
        let rs = &self.d[s * n..(s + 1) * n];
        for (p, u, _) in f.sw_links(s) {
            let ru = &self.d[u as usize * n..(u as usize + 1) * n];
            let bit = 1u128 << p;
            for ((m, &a), &b) in masks.iter_mut().zip(ru).zip(rs) {
                if a.wrapping_add(1) == b && b != u8::MAX {
                    *m |= bit;
                }
            }
        }
    }
}

/// One item of OpenSM's port order: an endport or a switch's port 0.
#[derive(Clone, Copy, Debug)]
enum Target {
    Ep(u32),
    Switch(u32),
}

fn port_order(f: &Fabric) -> Vec<Target> {
    let mut sws: Vec<usize> = (0..f.nsw()).collect();
    // glibc's qsort is a merge sort here, so ties keep sw_guid_tbl order.
    sws.sort_by_key(|&s| std::cmp::Reverse(f.sw_eps[s].len()));
    let mut v: Vec<Target> = vec![];
    for s in sws {
        v.extend(f.sw_eps[s].iter().map(|&e| Target::Ep(e)));
    }
    // Then everything not yet listed, in port GUID order.
    let mut rest: Vec<(u64, Target)> = (0..f.nsw()).map(|s| (super::lid::guid_order(f.sw_guid[s]), Target::Switch(s as u32))).collect();
    rest.extend(f.eps.iter().enumerate().filter(|(_, e)| e.sw.is_none()).map(|(i, e)| (super::lid::guid_order(e.guid), Target::Ep(i as u32))));
    rest.sort_by_key(|r| r.0);
    v.extend(rest.into_iter().map(|r| r.1));
    v
}

/// Builds LFTs OpenSM's way from hop tables. `old`: the tables currently programmed
/// (kept where still least-hop); `lmc`: the subnet's LMC.
pub fn build_lfts(f: &Fabric, hops: &dyn Hops, old: Option<&Tables>, lmc: u8) -> Tables {
    let nsw = f.nsw();
    let mut t = Tables::new(nsw, f.nlid);
    let order = port_order(f);
    let rows: Vec<&mut [u8]> = t.lft.chunks_mut(f.nlid.max(1)).collect();
    let work = |s: usize, row: &mut [u8]| build_switch(f, hops, old, lmc, &order, s, row);
    par_rows(rows, &work);
    t
}

/// Runs `work(s, row)` for every switch row, on up to `available_parallelism` threads.
/// Rows are independent, so the result does not depend on the thread count.
pub(crate) fn par_rows(rows: Vec<&mut [u8]>, work: &(dyn Fn(usize, &mut [u8]) + Sync)) {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
    if threads <= 1 || rows.len() < 64 {
        for (s, row) in rows.into_iter().enumerate() {
            work(s, row);
        }
        return;
    }
    let mut buckets: Vec<Vec<(usize, &mut [u8])>> = (0..threads).map(|_| vec![]).collect();
    for (s, row) in rows.into_iter().enumerate() {
        buckets[s % threads].push((s, row));
    }
    std::thread::scope(|sc| {
        for b in buckets {
            sc.spawn(move || {
                for (s, row) in b {
                    work(s, row);
                }
            });
        }
    });
}

/// Remote systems/nodes already used by one destination port's LIDs at one switch
/// (OpenSM `struct osm_remote_guids_count`).
#[derive(Default)]
struct Used {
    v: Vec<(u64, u64, u32)>, // (node guid, sys guid, forwarded_to)
}

impl Used {
    /// One more LID of the destination forwarded to the remote (node guid, sys guid).
    fn note(&mut self, (ng, sg): (u64, u64)) {
        match self.v.iter_mut().find(|x| x.0 == ng) {
            Some(x) => x.2 += 1,
            None => self.v.push((ng, sg, 1)),
        }
    }
}

/// The switch a target CA port is cabled to (`None` for a switch target or an uncabled CA).
fn ca_switch(f: &Fabric, tg: Target) -> Option<u32> {
    match tg {
        Target::Ep(e) => f.eps[e as usize].sw.map(|(w, _)| w),
        Target::Switch(_) => None,
    }
}

/// A target's LID at LMC `offset` and whether it is a switch's; `None` when it has no LID
/// there (a CA's LMC is smaller; a switch has one LID).
fn target_lid(f: &Fabric, tg: Target, offset: u16) -> Option<(usize, bool)> {
    match tg {
        Target::Ep(e) => {
            let ep = &f.eps[e as usize];
            (offset < 1 << ep.lmc).then_some((ep.lid as usize + offset as usize, false))
        }
        Target::Switch(w) => (offset == 0).then_some((f.sw_lid[w as usize] as usize, true)),
    }
}

/// One switch's row of the LFT: for every LMC offset, every target in OpenSM's order gets
/// the port [`recommend`] picks; runs of CA ports behind one remote switch go through the
/// fast path ([`assign_run`]) when nothing else (LMC, old tables) bears on the choice.
fn build_switch(f: &Fabric, hops: &dyn Hops, old: Option<&Tables>, lmc: u8, order: &[Target], s: usize, row: &mut [u8]) {
    let np = f.nports[s] as usize;
    let mut counts = vec![0u32; np + 1];
    let mut cands: Vec<u8> = Vec::with_capacity(np);
    let remote = |p: usize| -> (u64, u64) {
        match f.adj[s][p] {
            Peer::Switch { sw, .. } => (f.sw_guid[sw as usize], f.sw_guid[sw as usize]),
            Peer::Ep { ep } => (f.eps[ep as usize].node_guid, f.eps[ep as usize].sys_guid),
            Peer::None => (0, 0),
        }
    };
    let fast = lmc == 0 && old.is_none();
    let mut used: HashMap<u32, Used> = HashMap::new();
    let masks: Option<Vec<u128>> = (np < 128).then(|| {
        let mut m = vec![0u128; f.nsw()];
        hops.masks(f, s, &mut m);
        m
    });
    let masks = masks.as_deref();
    // Switch LIDs are not counted, so while only they remain, a candidate set always
    // picks the same port: remember it.
    let mut memo: Vec<(u128, u8)> = vec![];
    for offset in 0..1u16 << lmc {
        let mut i = 0;
        while i < order.len() {
            // Fast path: a run of CA ports on one remote switch shares its candidate
            // ports; picking "fewest routes, lowest port" k times is a round-robin by
            // levels (see `assign_run`).
            if let Some(t) = ca_switch(f, order[i]).filter(|_| fast) {
                let j = i + order[i..].iter().take_while(|&&tg| ca_switch(f, tg) == Some(t)).count();
                if t as usize != s {
                    candidates(f, hops, masks, s, t as usize, 1, &mut cands);
                    assign_run(f, &order[i..j], &cands, &mut counts, row);
                } else {
                    for tg in &order[i..j] {
                        let Target::Ep(x) = *tg else { unreachable!() };
                        let p = f.eps[x as usize].sw.expect("on this switch").1;
                        row[f.eps[x as usize].lid as usize] = p;
                        counts[p as usize] += 1;
                    }
                }
                i = j;
                continue;
            }
            let tg = order[i];
            i += 1;
            let Some((lid, is_sw)) = target_lid(f, tg, offset) else { continue };
            if lid == 0 || lid >= row.len() {
                continue;
            }
            let start_from = if offset > 0 { row[lid - 1] as usize + 1 } else { 1 };
            let key = match tg {
                Target::Ep(e) => e,
                Target::Switch(_) => u32::MAX,
            };
            let memo_key = match (fast, tg, masks) {
                (true, Target::Switch(w), Some(m)) if w as usize != s => Some(m[w as usize]),
                _ => None,
            };
            let cached = memo_key.and_then(|k| memo.iter().find(|x| x.0 == k).map(|x| x.1));
            let port = match cached {
                Some(p) => p,
                None => {
                    let empty = Used::default();
                    let u = if lmc > 0 { used.entry(key).or_default() } else { &empty };
                    let p = recommend(f, hops, masks, old, lmc, s, tg, lid, start_from, &counts, &mut cands, u, &remote);
                    if let Some(k) = memo_key {
                        memo.push((k, p));
                    }
                    p
                }
            };
            row[lid] = port;
            if !is_sw && port != NO_PATH {
                counts[port as usize] += 1;
                if port > 0 && lmc > 0 {
                    used.entry(key).or_default().note(remote(port as usize));
                }
            }
        }
    }
}

/// Least-hop ports of `s` towards switch `t`, scanned from `start_from` (OpenSM scans
/// `start_from .. start_from + num_ports` modulo `num_ports`, skipping port 0).
fn candidates(f: &Fabric, hops: &dyn Hops, masks: Option<&[u128]>, s: usize, t: usize, start_from: usize, out: &mut Vec<u8>) -> u8 {
    out.clear();
    let least = hops.least(s, t);
    if least == u8::MAX {
        return least;
    }
    let num_ports = f.nports[s] as usize + 1;
    if let Some(m) = masks {
        let m = m[t];
        let start = start_from % num_ports;
        let (hi, lo) = if start == 0 { (m, 0) } else { (m & !((1u128 << start) - 1), m & ((1u128 << start) - 1)) };
        for mut x in [hi, lo] {
            while x != 0 {
                out.push(x.trailing_zeros() as u8);
                x &= x - 1;
            }
        }
        return least;
    }
    for i in start_from..start_from + num_ports {
        let p = i % num_ports;
        if p == 0 {
            continue;
        }
        if let Peer::Switch { sw, .. } = f.adj[s][p] {
            if hops.via(s, sw as usize, t) == least {
                out.push(p as u8);
            }
        }
    }
    least
}

/// Assigns a run of CA LIDs sharing candidate ports: repeatedly the candidate with the
/// fewest routes, ties to the earliest in scan order. Equivalent to the sequential
/// choice: all candidates at the lowest level are taken in scan order, then the next level.
fn assign_run(f: &Fabric, run: &[Target], cands: &[u8], counts: &mut [u32], row: &mut [u8]) {
    if cands.is_empty() {
        for tg in run {
            if let Target::Ep(e) = *tg {
                row[f.eps[e as usize].lid as usize] = NO_PATH;
            }
        }
        return;
    }
    let mut level = cands.iter().map(|&p| counts[p as usize]).min().expect("non-empty");
    let mut k = 0;
    while k < run.len() {
        for &p in cands {
            if k == run.len() {
                break;
            }
            if counts[p as usize] <= level {
                let Target::Ep(e) = run[k] else { unreachable!() };
                row[f.eps[e as usize].lid as usize] = p;
                counts[p as usize] += 1;
                k += 1;
            }
        }
        level += 1;
    }
}

/// `osm_switch_recommend_path` without DOR, scatter or port shifting: the least-hop
/// candidates towards the target's switch; the old tables' port if it is still one of
/// them ([`old_port`]); else the least-used candidate ([`least_used`]).
#[allow(clippy::too_many_arguments)]
fn recommend(
    f: &Fabric,
    hops: &dyn Hops,
    masks: Option<&[u128]>,
    old: Option<&Tables>,
    lmc: u8,
    s: usize,
    tg: Target,
    lid: usize,
    start_from: usize,
    counts: &[u32],
    cands: &mut Vec<u8>,
    used: &Used,
    remote: &dyn Fn(usize) -> (u64, u64),
) -> u8 {
    let t = match tg {
        Target::Switch(w) => {
            if w as usize == s {
                return 0;
            }
            w as usize
        }
        Target::Ep(e) => match f.eps[e as usize].sw {
            None => return NO_PATH,
            Some((w, p)) if w as usize == s => return p,
            Some((w, _)) => w as usize,
        },
    };
    let least = candidates(f, hops, masks, s, t, start_from, cands);
    if least == u8::MAX {
        return NO_PATH;
    }
    if let Some(p) = old.and_then(|o| old_port(f, hops, o, s, lid, t, least)) {
        return p;
    }
    least_used(cands, counts, lmc > 0, used, remote)
}

/// The port the old tables give `lid` at switch `s`, if it still leads to switch `t` in
/// the `least` hops (OpenSM keeps existing routes that are still shortest).
fn old_port(f: &Fabric, hops: &dyn Hops, o: &Tables, s: usize, lid: usize, t: usize, least: u8) -> Option<u8> {
    if s >= o.lft.len() / o.nlid.max(1) || lid >= o.nlid {
        return None;
    }
    let p = o.get(s, lid) as usize;
    if p == NO_PATH as usize || p > f.nports[s] as usize {
        return None;
    }
    match f.adj[s][p] {
        Peer::Switch { sw, .. } if hops.via(s, sw as usize, t) == least => Some(p as u8),
        _ => None,
    }
}

/// The candidate with the fewest routes (ties: the first in scan order). With LMC
/// (`routing_for_lmc`), one leading to a system, else a node, that this destination's
/// other LIDs do not use yet goes first; among equals, the one forwarding the fewest of
/// them.
fn least_used(cands: &[u8], counts: &[u32], routing_for_lmc: bool, used: &Used, remote: &dyn Fn(usize) -> (u64, u64)) -> u8 {
    let (mut best, mut least_paths) = (NO_PATH, u32::MAX);
    let (mut best_other_sys, mut least_other_sys) = (0u8, u32::MAX);
    let (mut best_other_node, mut least_other_node) = (0u8, u32::MAX);
    let mut least_fwd = u32::MAX;
    for &p in cands.iter() {
        let c = counts[p as usize];
        let mut rem: Option<u32> = None;
        if routing_for_lmc {
            let (ng, sg) = remote(p as usize);
            match used.v.iter().find(|x| x.1 == sg) {
                None => {
                    if c < least_other_sys {
                        least_other_sys = c;
                        best_other_sys = p;
                        least_fwd = 0;
                    }
                }
                Some(_) => {
                    let by_node = used.v.iter().find(|x| x.0 == ng);
                    if by_node.is_none() && c < least_other_node {
                        least_other_node = c;
                        best_other_node = p;
                        least_fwd = 0;
                    }
                    rem = by_node.map(|x| x.2);
                }
            }
        }
        if c < least_paths {
            best = p;
            least_paths = c;
            if let Some(fw) = rem {
                if fw < least_fwd {
                    least_fwd = fw;
                }
            }
        } else if let Some(fw) = rem {
            if c == least_paths && fw < least_fwd {
                least_fwd = fw;
                best = p;
            }
        }
    }
    if best == NO_PATH {
        return NO_PATH;
    }
    if routing_for_lmc {
        if best_other_sys != 0 {
            best = best_other_sys;
        } else if best_other_node != 0 {
            best = best_other_node;
        }
    }
    best
}

/// Convenience: minhop tables for a fabric.
pub fn route(f: &Fabric, old: Option<&Tables>, lmc: u8) -> Tables {
    let h = MinHops::new(f);
    build_lfts(f, &h, old, lmc)
}
