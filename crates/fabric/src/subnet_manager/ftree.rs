//! `ftree`: OpenSM's fat-tree routing (`osm_ucast_ftree.c`; Zahavi et al., "Optimized
//! InfiniBand fat-tree routing for shift all-to-all communication patterns", CCPE 2010).
//!
//! 1. Ranking: with given roots, breadth-first distance from them; otherwise distance from
//!    the nearest CA-attached switch, reversed, so roots have rank 0 and leaves the highest
//!    rank. Every CA-attached switch must be at the leaf rank, and the tree rank
//!    (leaf rank + 1) must be 2..8; without given roots, switches of one rank must look
//!    alike (same numbers of up and down port groups and of ports per group —
//!    `fabric_validate_topology`). Otherwise the engine fails and the SM falls back to
//!    minhop, as OpenSM does. LMC > 0 is refused, as in OpenSM.
//! 2. Port groups: a switch's ports to the same neighbour form a group; groups are up
//!    (lower rank), down (higher rank or a CA) or siblings.
//! 3. Indexing: every switch gets a tuple `[rank, i1, i2, …]` by a breadth-first walk from
//!    the first leaf in GUID order (`fabric_get_new_tuple`: going down, position rank+1
//!    takes the lowest free value; going up, position rank does); port groups are sorted by
//!    the remote switch's tuple, and leaves are routed in tuple order.
//! 4. Routing, for every leaf in index order and every CA on it in port order
//!    (`fabric_route_to_cns`): going *up* from the leaf, each step takes the up group
//!    with the fewest down-going routes (ties by remote index) and its least loaded port,
//!    programming the upper switch to come back down that way; at every switch on the
//!    way, going *down* the other subtrees (`fabric_route_upgoing_by_going_down`), each
//!    lower switch is programmed to go up towards it through the least loaded port with
//!    the fewest up-going routes. Leaves with fewer CAs than the largest leaf route dummy
//!    targets so that counters stay aligned. Switch LIDs are routed the same way without
//!    touching the counters.
//!
//! Left out: compute-node and I/O guid files (every CA is a compute node), reverse hops,
//! `connect_roots`, quasi-fat-tree indexing, sibling links are handled only as OpenSM does
//! on secondary paths.

use std::collections::HashSet;

use super::ftree_hops::{quick_tables, HopColumn, Quick, HAS_CA, HAS_DOWN, HAS_SIB, MAX_SWITCHES, ONLY_CA, SORT_DOWN};
use super::mad::NO_PATH;
use super::tables::{Fabric, Peer, Tables};

const TUPLE_LEN: usize = 8;
type Tuple = [u8; TUPLE_LEN];
const UNSET: Tuple = [0xFF; TUPLE_LEN];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Remote {
    Switch(usize),
    Ca(u32),
}

#[derive(Debug)]
struct Group {
    remote: Remote,
    remote_lid: u16,
    /// (local port, remote port), in port order.
    ports: Vec<(u8, u8)>,
}

#[derive(Debug)]
struct Sw {
    rank: u32,
    tuple: Tuple,
    lid: u16,
    up: Vec<usize>,
    /// Down and sibling groups while the tree is indexed; routing moves them into
    /// [`Ft::lower`] ([`Ft::lower_lists`]) and leaves these empty.
    down: Vec<usize>,
    sib: Vec<usize>,
    is_leaf: bool,
}

/// A down or sibling group as the up-going recursion (`fabric_route_upgoing_by_going_down`)
/// walks and sorts it: the sort key and the remote switch travel with the group, so the
/// routing loop and the insertion sort read one record per group, in order.
#[derive(Clone, Copy, Debug)]
struct Lower {
    /// Routes going up through the group (OpenSM's `counter_up`) in the high 32 bits and
    /// the remote switch's [`Ft::tuple_rank`] in the low ones: OpenSM's
    /// `port_group_compare_load_up` (fewest up-going routes, then index) as one integer.
    key: u64,
    /// The remote switch, or [`CA`].
    remote: u32,
    group: u32,
    /// The group's ports, `first_port..end_port` in the flat port arrays
    /// ([`Ft::port_start`]).
    first_port: u32,
    end_port: u32,
}

/// Where a switch's [`Lower`] records are: its down groups at `start..start + down`, its
/// sibling groups right after them, so that routing a LID other than 0 walks one range.
#[derive(Clone, Copy, Debug, Default)]
struct LowerRange {
    start: u32,
    down: u32,
    sib: u32,
}

impl LowerRange {
    fn down(self) -> std::ops::Range<usize> {
        self.start as usize..(self.start + self.down) as usize
    }

    fn sib(self) -> std::ops::Range<usize> {
        (self.start + self.down) as usize..(self.start + self.down + self.sib) as usize
    }
}

/// Working state. `lft` is LID-major (`lid · n + switch`): routing one LID touches every
/// switch's entry for it, so this keeps those accesses together.
struct Ft<'a> {
    f: &'a Fabric,
    sw: Vec<Sw>,
    g: Vec<Group>,
    /// Hop counts to the LID being routed, and the quick test over them.
    hops: HopColumn,
    lft: Vec<u8>,
    n: usize,
    /// Per group: the remote switch, or `CA` (kept apart from `g` for the hot loops).
    gr: Vec<u32>,
    /// Per group: the position of the remote switch's tuple in tuple order (`CA` for a
    /// CA), so that comparing two groups by index is comparing two integers. Set by
    /// [`Ft::index`].
    tuple_rank: Vec<u32>,
    /// Every switch's down and sibling groups, at [`Ft::lower_at`], in the order of the
    /// last up-going sort.
    lower: Vec<Lower>,
    lower_at: Vec<LowerRange>,
    /// Reused by [`Ft::sort_up_groups`].
    sort_buf: Vec<DownLoad>,
    /// Per group: routes going down through it (OpenSM's `counter_down`); per switch, the
    /// least of its down groups' (`min_counter_down`, 0 until first recomputed).
    counter_down: Vec<u32>,
    min_counter_down: Vec<u32>,
    /// Per switch, what the entry of [`Ft::up_by_down`] reads: flags first, then, if they
    /// leave it open, the quick test.
    flags: Vec<u8>,
    quick: Vec<Quick>,
    /// The groups' ports flattened: group `g`'s are `port_start[g]..port_start[g + 1]`,
    /// each with its remote port number and its up- and down-going route counts.
    port_start: Vec<u32>,
    remote_port: Vec<u8>,
    port_up: Vec<u32>,
    port_down: Vec<u32>,
}

const CA: u32 = u32::MAX;

/// Fat-tree tables. `roots`: switch indices, empty = rank from the CAs.
pub fn route(f: &Fabric, roots: &[usize], lmc: u8) -> Result<(Tables, Vec<usize>), String> {
    if lmc > 0 {
        return Err("ftree: LMC > 0 is not supported (as in OpenSM)".into());
    }
    let n = f.nsw();
    if n < 2 {
        return Err("ftree: fewer than 2 switches".into());
    }
    if f.eps.len() < 2 {
        return Err("ftree: fewer than 2 CA ports".into());
    }
    if n > MAX_SWITCHES {
        return Err(format!("ftree: {n} switches; switch indices are 16-bit here"));
    }
    let rank = ranking(f, roots)?;
    let mut ft = Ft::new(f, rank);
    let leaf_rank = ft.leaf_rank(!roots.is_empty())?;
    if leaf_rank + 1 < 2 || leaf_rank + 1 > 8 {
        return Err(format!("ftree: tree rank {} is outside 2..8", leaf_rank + 1));
    }
    for s in 0..n {
        if !f.sw_eps[s].is_empty() {
            if ft.sw[s].rank != leaf_rank {
                return Err(format!("ftree: a CA is attached to switch {:#x} at rank {}, but the leaf rank is {leaf_rank}", f.sw_guid[s], ft.sw[s].rank));
            }
            ft.sw[s].is_leaf = true;
        }
    }
    if roots.is_empty() {
        ft.validate(leaf_rank)?;
    }
    ft.index(leaf_rank)?;
    let leaves = ft.leaf_array(leaf_rank)?;
    ft.lower_lists();
    let cas = |ft: &Ft, s: usize| -> Vec<usize> { ft.lower[ft.lower_at[s].down()].iter().filter(|x| x.remote == CA).map(|x| x.group as usize).collect() };
    let max_cn = leaves.iter().map(|&s| cas(&ft, s).len()).max().unwrap_or(0);
    // Compute nodes, leaf by leaf.
    for &leaf in &leaves {
        let mut routed = 0;
        for g in cas(&ft, leaf) {
            let lid = ft.g[g].remote_lid as usize;
            let port = ft.g[g].ports[0].0;
            ft.start_lid();
            ft.set_route(leaf, lid, port, 1);
            ft.down_by_up(leaf, None, lid, true, 1);
            routed += 1;
        }
        for _ in routed..max_cn {
            ft.start_lid();
            ft.hops.set(leaf, 1);
            ft.down_by_up(leaf, None, 0, true, 1);
            ft.lft[..n].fill(NO_PATH);
        }
    }
    // Switch LIDs, in GUID order, without counters.
    let mut by_guid: Vec<usize> = (0..n).collect();
    by_guid.sort_by_key(|&s| super::lid::guid_order(f.sw_guid[s]));
    for s in by_guid {
        let lid = ft.sw[s].lid as usize;
        if lid == 0 || lid >= f.nlid {
            continue;
        }
        ft.start_lid();
        ft.set_route(s, lid, 0, 0);
        ft.down_by_up(s, None, lid, false, 0);
    }
    let roots_used: Vec<usize> = (0..n).filter(|&s| ft.sw[s].rank == 0).collect();
    ft.lft[..n].fill(NO_PATH);
    Ok((Tables::from_columns(n, f.nlid, &ft.lft), roots_used))
}

fn ranking(f: &Fabric, roots: &[usize]) -> Result<Vec<u32>, String> {
    let n = f.nsw();
    let mut rank = vec![u32::MAX; n];
    let mut q = std::collections::VecDeque::new();
    let from_roots = !roots.is_empty();
    let starts: Vec<usize> = if from_roots { roots.to_vec() } else { (0..n).filter(|&s| !f.sw_eps[s].is_empty()).collect() };
    for s in starts {
        rank[s] = 0;
        q.push_back(s);
    }
    let mut max = 0;
    while let Some(u) = q.pop_front() {
        for (_, v, _) in f.sw_links(u) {
            let v = v as usize;
            if rank[v] == u32::MAX || rank[v] > rank[u] + 1 {
                rank[v] = rank[u] + 1;
                max = max.max(rank[v]);
                q.push_back(v);
            }
        }
    }
    if !from_roots {
        for r in rank.iter_mut() {
            if *r != u32::MAX {
                *r = max - *r;
            }
        }
        if max == 0 {
            return Err("ftree: every switch has CAs (max rank 0)".into());
        }
    }
    if let Some(s) = rank.iter().position(|&r| r == u32::MAX) {
        return Err(format!("ftree: switch {:#x} is not connected to the tree", f.sw_guid[s]));
    }
    Ok(rank)
}

fn cmp_tuple(a: &Tuple, b: &Tuple) -> std::cmp::Ordering {
    a.cmp(b)
}

impl<'a> Ft<'a> {
    fn new(f: &'a Fabric, rank: Vec<u32>) -> Ft<'a> {
        let n = f.nsw();
        let mut sw: Vec<Sw> =
            (0..n).map(|s| Sw { rank: rank[s], tuple: UNSET, lid: f.sw_lid[s], up: vec![], down: vec![], sib: vec![], is_leaf: false }).collect();
        let mut g: Vec<Group> = vec![];
        for s in 0..n {
            for p in 1..=f.nports[s] as usize {
                let (remote, remote_lid, rport) = match f.adj[s][p] {
                    Peer::Switch { sw: r, port } => (Remote::Switch(r as usize), f.sw_lid[r as usize], port),
                    Peer::Ep { ep } => (Remote::Ca(ep), f.eps[ep as usize].lid, f.eps[ep as usize].port),
                    Peer::None => continue,
                };
                let dir = match remote {
                    Remote::Ca(_) => 1,
                    Remote::Switch(r) => (sw[r].rank as i64 - sw[s].rank as i64).signum(),
                };
                let list = match dir {
                    -1 => &sw[s].up,
                    0 => &sw[s].sib,
                    _ => &sw[s].down,
                };
                let existing = list.iter().copied().find(|&gi| g[gi].remote_lid == remote_lid && g[gi].remote == remote);
                let gi = match existing {
                    Some(gi) => gi,
                    None => {
                        g.push(Group { remote, remote_lid, ports: vec![] });
                        let gi = g.len() - 1;
                        match dir {
                            -1 => sw[s].up.push(gi),
                            0 => sw[s].sib.push(gi),
                            _ => sw[s].down.push(gi),
                        }
                        gi
                    }
                };
                g[gi].ports.push((p as u8, rport));
            }
        }
        let nlid = f.nlid;
        let gr: Vec<u32> = g.iter().map(|x| if let Remote::Switch(r) = x.remote { r as u32 } else { CA }).collect();
        let downs: Vec<(Vec<u32>, Vec<u32>)> = sw.iter().map(|x| (x.down.iter().map(|&k| gr[k]).collect(), x.sib.iter().map(|&k| gr[k]).collect())).collect();
        let (quick, flags, hops) = quick_tables(&downs);
        let tuple_rank = vec![CA; g.len()];
        let counter_down = vec![0; g.len()];
        let min_counter_down = vec![0; n];
        let mut port_start = vec![0u32];
        let mut remote_port = vec![];
        for x in &g {
            remote_port.extend(x.ports.iter().map(|p| p.1));
            port_start.push(remote_port.len() as u32);
        }
        let (port_up, port_down) = (vec![0; remote_port.len()], vec![0; remote_port.len()]);
        Ft {
            f,
            sw,
            g,
            hops,
            lft: vec![NO_PATH; n * nlid],
            n,
            gr,
            tuple_rank,
            lower: vec![],
            lower_at: vec![],
            sort_buf: vec![],
            counter_down,
            min_counter_down,
            flags,
            quick,
            port_start,
            remote_port,
            port_up,
            port_down,
        }
    }

    fn leaf_rank(&self, roots_given: bool) -> Result<u32, String> {
        if !roots_given {
            return Ok(self.sw.iter().map(|s| s.rank).max().unwrap_or(0));
        }
        // The rank of the switch of the first CA in GUID order.
        let ep = self.f.eps.iter().find(|e| e.sw.is_some()).ok_or("ftree: no CA is attached to a switch")?;
        Ok(self.sw[ep.sw.expect("filtered").0 as usize].rank)
    }

    fn validate(&self, leaf_rank: u32) -> Result<(), String> {
        let mut order: Vec<usize> = (0..self.sw.len()).collect();
        order.sort_by_key(|&s| super::lid::guid_order(self.f.sw_guid[s]));
        let mut reference: Vec<Option<usize>> = vec![None; leaf_rank as usize + 1];
        for s in order {
            let r = self.sw[s].rank as usize;
            let Some(rf) = reference[r] else {
                reference[r] = Some(s);
                continue;
            };
            let (a, b) = (&self.sw[rf], &self.sw[s]);
            let bad = a.up.len() != b.up.len()
                || (r as u32 != leaf_rank && a.down.len() != b.down.len())
                || (!a.up.is_empty() && b.up.iter().any(|&g| self.g[g].ports.len() != self.g[a.up[0]].ports.len()))
                || (!a.down.is_empty() && r as u32 != leaf_rank && !b.down.is_empty() && self.g[b.down[0]].ports.len() != self.g[a.down[0]].ports.len());
            if bad {
                return Err(format!(
                    "ftree: switch {:#x} (rank {r}) differs from {:#x}: the fabric is not a pure fat tree",
                    self.f.sw_guid[s], self.f.sw_guid[rf]
                ));
            }
        }
        Ok(())
    }

    /// OpenSM's tuple indexing (`fabric_make_indexing`, `bfs_fabric_indexing`).
    fn index(&mut self, leaf_rank: u32) -> Result<(), String> {
        let n = self.sw.len();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&s| super::lid::guid_order(self.f.sw_guid[s]));
        let first = order.into_iter().find(|&s| self.sw[s].is_leaf).ok_or("ftree: no leaf switch")?;
        if leaf_rank as usize >= TUPLE_LEN {
            return Err("ftree: tree too deep for 8-byte tuples".into());
        }
        let mut used: HashSet<Tuple> = HashSet::new();
        let mut t = UNSET;
        t[0] = self.sw[first].rank as u8;
        for x in t.iter_mut().take(leaf_rank as usize + 1).skip(1) {
            *x = 0;
        }
        self.sw[first].tuple = t;
        used.insert(t);
        let mut q = std::collections::VecDeque::from([first]);
        while let Some(s) = q.pop_front() {
            if self.sw[s].rank < leaf_rank {
                let downs = self.sw[s].down.clone();
                for gi in downs {
                    let Remote::Switch(r) = self.g[gi].remote else { continue };
                    if self.sw[r].tuple[0] != 0xFF {
                        continue;
                    }
                    let nt = new_tuple(&used, &self.sw[s].tuple, true)?;
                    self.sw[r].tuple = nt;
                    used.insert(nt);
                    q.push_back(r);
                }
                self.sort_groups(s, false);
            }
            if self.sw[s].rank != 0 {
                let ups = self.sw[s].up.clone();
                for gi in ups {
                    let Remote::Switch(r) = self.g[gi].remote else { continue };
                    if self.sw[r].tuple[0] != 0xFF {
                        continue;
                    }
                    let nt = new_tuple(&used, &self.sw[s].tuple, false)?;
                    self.sw[r].tuple = nt;
                    used.insert(nt);
                    q.push_back(r);
                }
                self.sort_groups(s, true);
            }
        }
        if let Some(s) = self.sw.iter().position(|s| s.tuple[0] == 0xFF) {
            return Err(format!("ftree: switch {:#x} was not indexed", self.f.sw_guid[s]));
        }
        self.rank_tuples();
        Ok(())
    }

    /// Fills [`Ft::tuple_rank`]. Tuples are unique (`new_tuple` never reuses one) and a
    /// switch's is never [`UNSET`] (its first byte is a rank below 8), so the position in
    /// tuple order compares exactly as the tuples do, and CAs (all [`UNSET`]) tie after
    /// every switch.
    fn rank_tuples(&mut self) {
        let mut order: Vec<usize> = (0..self.sw.len()).collect();
        order.sort_by(|&a, &b| cmp_tuple(&self.sw[a].tuple, &self.sw[b].tuple));
        let mut pos = vec![0u32; self.sw.len()];
        for (i, &s) in order.iter().enumerate() {
            pos[s] = i as u32;
        }
        for (gi, r) in self.gr.iter().enumerate() {
            self.tuple_rank[gi] = if *r == CA { CA } else { pos[*r as usize] };
        }
    }

    /// Moves every switch's down and sibling groups, in their indexed order, into
    /// [`Ft::lower`] with no up-going routes counted yet.
    fn lower_lists(&mut self) {
        for s in 0..self.sw.len() {
            let (down, sib) = (std::mem::take(&mut self.sw[s].down), std::mem::take(&mut self.sw[s].sib));
            self.lower_at.push(LowerRange { start: self.lower.len() as u32, down: down.len() as u32, sib: sib.len() as u32 });
            for g in down.into_iter().chain(sib) {
                let (first_port, end_port) = (self.port_start[g], self.port_start[g + 1]);
                self.lower.push(Lower { key: self.tuple_rank[g] as u64, remote: self.gr[g], group: g as u32, first_port, end_port });
            }
        }
    }

    fn remote_tuple(&self, gi: usize) -> Tuple {
        match self.g[gi].remote {
            Remote::Switch(r) => self.sw[r].tuple,
            Remote::Ca(_) => UNSET,
        }
    }

    fn sort_groups(&mut self, s: usize, up: bool) {
        let mut v = if up { std::mem::take(&mut self.sw[s].up) } else { std::mem::take(&mut self.sw[s].down) };
        v.sort_by(|&a, &b| cmp_tuple(&self.remote_tuple(a), &self.remote_tuple(b)));
        if up {
            self.sw[s].up = v;
        } else {
            self.sw[s].down = v;
        }
    }

    fn leaf_array(&self, leaf_rank: u32) -> Result<Vec<usize>, String> {
        let mut all: Vec<usize> = (0..self.sw.len()).filter(|&s| self.sw[s].rank == leaf_rank).collect();
        all.sort_by(|&a, &b| cmp_tuple(&self.sw[a].tuple, &self.sw[b].tuple));
        let first = all.iter().position(|&s| self.sw[s].is_leaf);
        let last = all.iter().rposition(|&s| self.sw[s].is_leaf);
        match (first, last) {
            (Some(a), Some(b)) if a < b => Ok(all[a..=b].to_vec()),
            _ => Err("ftree: failed to find leaf switches - topology is not fat-tree".into()),
        }
    }

    #[inline]
    fn hop(&self, s: usize) -> u8 {
        self.hops.get(s)
    }

    #[inline]
    fn entry(&self, s: usize, lid: usize) -> u8 {
        self.lft[lid * self.n + s]
    }

    /// Forgets the hop counts of the LID routed before.
    fn start_lid(&mut self) {
        self.hops.start_lid(self.n);
    }

    #[inline]
    fn set_route(&mut self, s: usize, lid: usize, port: u8, hops: u8) {
        self.lft[lid * self.n + s] = port;
        self.hops.set(s, hops);
    }

    /// OpenSM's sorts on entering `fabric_route_upgoing_by_going_down`: the down groups
    /// when their counters changed, the sibling groups always.
    #[cold]
    fn sort_for_up(&mut self, s: usize) {
        let at = self.lower_at[s];
        if self.flags[s] & SORT_DOWN != 0 {
            sort_up(&mut self.lower[at.down()]);
            self.flags[s] &= !SORT_DOWN;
        }
        if self.flags[s] & HAS_SIB != 0 {
            sort_up(&mut self.lower[at.sib()]);
        }
    }

    /// What `port_group_compare_load_down` reads of group `g`, with the caller's `item`
    /// ([`DownLoad::item`]).
    fn down_load(&self, g: usize, item: usize) -> DownLoad {
        let remote_load = match self.gr[g] {
            CA => 0,
            r => self.min_counter_down[r as usize],
        };
        DownLoad { counter: self.counter_down[g], remote_load, index: self.tuple_rank[g], item: item as u32 }
    }

    /// OpenSM's bubble sort of `s`'s up groups by `port_group_compare_load_down`, on
    /// copies of what it compares (nothing changes them during the sort).
    fn sort_up_groups(&mut self, s: usize) {
        let mut v = std::mem::take(&mut self.sort_buf);
        v.clear();
        v.extend(self.sw[s].up.iter().map(|&g| self.down_load(g, g)));
        bubble(&mut v, DownLoad::before);
        for (dst, x) in self.sw[s].up.iter_mut().zip(&v) {
            *dst = x.item as usize;
        }
        self.sort_buf = v;
    }

    /// The same sort of `s`'s sibling groups.
    fn sort_sib_groups(&mut self, s: usize) {
        let sib = self.lower_at[s].sib();
        let old = self.lower[sib.clone()].to_vec();
        let mut v: Vec<DownLoad> = old.iter().enumerate().map(|(k, x)| self.down_load(x.group as usize, k)).collect();
        bubble(&mut v, DownLoad::before);
        for (dst, x) in self.lower[sib].iter_mut().zip(&v) {
            *dst = old[x.item as usize];
        }
    }

    /// The first of group `g`'s ports with the fewest routes by `counts` (`port_up` or
    /// `port_down`), as a flat port index.
    #[inline]
    fn least_loaded(&self, g: usize, counts: &[u32]) -> usize {
        least_loaded(counts, self.port_start[g], self.port_start[g + 1])
    }

    fn recalc_min_down(&mut self, s: usize) {
        self.min_counter_down[s] = self.lower[self.lower_at[s].down()].iter().map(|x| self.counter_down[x.group as usize]).min().unwrap_or(1 << 30);
    }

    /// `fabric_route_upgoing_by_going_down`: sorts as OpenSM does, then routes through
    /// the down groups ([`Ft::route_down_groups`]) unless [`HopColumn::any_to_route`]
    /// says that would only note the CA groups. Most calls end here (on the k=32 fat tree
    /// 1,221 calls per LID, 47 of which reach the loop), so this part is inlined into the
    /// callers.
    #[inline(always)]
    fn up_by_down(&mut self, s: usize, prev: Option<usize>, lid: usize, hops: u8) -> bool {
        let flags = self.flags[s];
        // A switch whose down groups all lead to CAs (a leaf) routes nothing here, and
        // OpenSM's sort would not change their order: no up-going route is ever counted on
        // a CA group, so their keys tie, and the sort is stable.
        if flags & ONLY_CA != 0 {
            return true;
        }
        if flags & HAS_DOWN == 0 {
            return false;
        }
        if flags & (SORT_DOWN | HAS_SIB) != 0 {
            self.sort_for_up(s);
        }
        if !self.hops.any_to_route(&self.quick[s], prev, lid != 0, hops) {
            return flags & HAS_CA != 0;
        }
        let epoch = self.hops.epoch();
        let created = self.route_down_groups(s, prev, lid, hops);
        self.hops.note_routed(&self.quick[s], prev, lid != 0, hops, epoch);
        created
    }

    /// The routing loop of `fabric_route_upgoing_by_going_down`: every down group (and
    /// sibling group, for a LID other than 0) in sorted order, each remote switch without
    /// a shorter route programmed to come up through this one. The recursion below only
    /// programs switches at more than `hops` hops, so it never enters this switch again
    /// and the records keep their places until the loop ends.
    #[inline(never)]
    fn route_down_groups(&mut self, s: usize, prev: Option<usize>, lid: usize, hops: u8) -> bool {
        let at = self.lower_at[s];
        let end = if lid != 0 { at.sib().end } else { at.down().end };
        // A CA group is noted before this is compared, so CA stands for no switch.
        let prev = prev.map_or(CA, |p| p as u32);
        let row = lid * self.n;
        let (mut created, mut counted) = (false, false);
        for k in at.start as usize..end {
            let x = self.lower[k];
            if x.remote == CA {
                created = true;
                continue;
            }
            if x.remote == prev {
                continue;
            }
            let r = x.remote as usize;
            // OpenSM picks the least loaded port first; checking the hop count first
            // gives the same result without touching the ports of skipped groups.
            let least = self.hop(r);
            if least != NO_PATH && hops as u16 + 1 >= least as u16 {
                continue;
            }
            let best = least_loaded(&self.port_up, x.first_port, x.end_port);
            self.lft[row + r] = self.remote_port[best];
            // `least` is NO_PATH, the largest count, or more than `hops + 1`.
            self.hops.lower(r, hops + 1);
            if self.up_by_down(r, None, lid, hops + 1) {
                debug_assert_eq!(self.lower[k].group, x.group, "the recursion re-sorted this switch's groups");
                created = true;
                counted = true;
                self.port_up[best] += 1;
                self.lower[k].key += 1 << 32; // counter_up
            }
        }
        if counted {
            self.flags[s] |= SORT_DOWN;
        }
        created
    }

    /// `fabric_route_downgoing_by_going_up` (no reverse hops): the down-going part
    /// ([`Ft::up_by_down`]), then, unless `s` is a root or has no up groups (on the k=32
    /// fat tree 256 of the 273 calls per LID are at a root), the up-going part
    /// ([`Ft::route_up_groups`]). Inlined into the callers, so that most calls make none.
    #[inline(always)]
    fn down_by_up(&mut self, s: usize, prev: Option<usize>, lid: usize, main: bool, hops: u8) -> bool {
        let created = self.up_by_down(s, prev, lid, hops);
        if self.sw[s].rank == 0 || self.sw[s].up.is_empty() {
            return created;
        }
        self.route_up_groups(s, lid, main, hops) | created
    }

    /// Whether switch `r` has a route to `lid` yet. For a LID other than 0 the hop count
    /// says so: both are written together and LID 0 is the only one routed more than once.
    /// For LID 0 (the dummy targets) the leaf's own hop count is set without an entry, so
    /// the entry is read.
    #[inline(always)]
    fn has_route(&self, r: usize, lid: usize) -> bool {
        if lid == 0 {
            self.entry(r, 0) != NO_PATH
        } else {
            self.hop(r) != NO_PATH
        }
    }

    /// The up-going part of `fabric_route_downgoing_by_going_up`: `s`'s up groups sorted
    /// by load, the least loaded one (on the main path) counted and programmed to come
    /// down through `s`, then every up group and sibling group whose switch has no shorter
    /// route.
    #[inline(never)]
    fn route_up_groups(&mut self, s: usize, lid: usize, main: bool, hops: u8) -> bool {
        let mut created = false;
        self.sort_up_groups(s);
        let min_g = self.sw[s].up[0];
        if main {
            let bp = self.least_loaded(min_g, &self.port_down);
            let r = self.gr[min_g] as usize;
            debug_assert!(self.gr[min_g] != CA, "up groups lead to switches");
            self.counter_down[min_g] += 1;
            self.port_down[bp] += 1;
            if self.counter_down[min_g] == self.min_counter_down[r] + 1 {
                self.recalc_min_down(r);
            }
            if !self.has_route(r, lid) || (hops as u16 + 1) < self.hop(r) as u16 {
                self.set_route(r, lid, self.remote_port[bp], hops + 1);
            }
            created |= self.down_by_up(r, Some(s), lid, main, hops + 1);
        }
        // Recursion only reaches switches above `s` and below them other subtrees, never
        // `s`'s own up groups, so they can be walked by index.
        for k in usize::from(main)..self.sw[s].up.len() {
            let gi = self.sw[s].up[k];
            let r = self.gr[gi];
            if r == CA {
                continue;
            }
            let r = r as usize;
            if self.has_route(r, lid) && hops as u16 + 1 >= self.hop(r) as u16 {
                continue;
            }
            let bp = self.least_loaded(gi, &self.port_down);
            self.set_route(r, lid, self.remote_port[bp], hops + 1);
            created |= self.down_by_up(r, Some(s), lid, false, hops + 1);
        }
        let sib = self.lower_at[s].sib();
        if !sib.is_empty() {
            self.sort_sib_groups(s);
            for k in sib {
                let gi = self.lower[k].group as usize;
                let r = self.gr[gi];
                if r == CA {
                    continue;
                }
                let r = r as usize;
                if self.has_route(r, lid) && hops as u16 + 1 >= self.hop(r) as u16 {
                    continue;
                }
                let bp = self.least_loaded(gi, &self.port_down);
                self.set_route(r, lid, self.remote_port[bp], hops + 1);
                let routed = self.down_by_up(r, Some(s), lid, false, hops + 1);
                created |= routed;
                if routed && main {
                    self.counter_down[min_g] += 1;
                }
            }
        }
        created
    }
}

/// Sorts `v` by [`Lower::key`], stably. OpenSM bubble-sorts here; any stable sort gives
/// the same order, because keys tie only between CA groups (a switch has one group per
/// remote switch and tuples are unique), whose relative order no stable sort changes.
/// Insertion sort: after one routing pass the list is nearly sorted.
fn sort_up(v: &mut [Lower]) {
    for i in 1..v.len() {
        if v[i - 1].key <= v[i].key {
            continue; // in place already: most are
        }
        let x = v[i];
        let mut j = i;
        while j > 0 && v[j - 1].key > x.key {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
    }
}

/// The first of the ports `first..end` (flat port indices) with the fewest routes by
/// `counts` (`port_up` or `port_down`).
#[inline]
fn least_loaded(counts: &[u32], first: u32, end: u32) -> usize {
    let (a, b) = (first as usize, end as usize);
    if b == a + 1 {
        return a;
    }
    let (mut best, mut load) = (a, u32::MAX);
    for (j, &c) in counts[a..b].iter().enumerate() {
        if c < load {
            best = a + j;
            load = c;
        }
    }
    best
}

/// What OpenSM's `port_group_compare_load_down` compares of a group, copied out for one
/// sort.
#[derive(Clone, Copy, Debug)]
struct DownLoad {
    /// Routes going down through the group (`counter_down`).
    counter: u32,
    /// The remote switch's least loaded down group (`min_counter_down`; 0 for a CA).
    remote_load: u32,
    /// The remote switch's [`Ft::tuple_rank`].
    index: u32,
    /// What the caller puts back in sorted order: the group (up groups) or its position
    /// before the sort (sibling records).
    item: u32,
}

impl DownLoad {
    /// Whether `a` sorts before `b`: fewer down-going routes, then the lower index, but
    /// OpenSM only prefers the less loaded remote when it is strictly less loaded from the
    /// left operand's side, so this is not a consistent order and only OpenSM's own
    /// bubble sort gives its result.
    fn before(a: DownLoad, b: DownLoad) -> bool {
        a.counter < b.counter || (a.counter == b.counter && a.remote_load <= b.remote_load && a.index < b.index)
    }
}

/// OpenSM's bubble sorts, which are stable and stop when a pass swaps nothing.
fn bubble<T: Copy>(v: &mut [T], before: impl Fn(T, T) -> bool) {
    let n = v.len();
    let mut i = 0;
    loop {
        let mut swapped = false;
        for j in 1..n.saturating_sub(i) {
            if before(v[j], v[j - 1]) {
                v.swap(j, j - 1);
                swapped = true;
            }
        }
        i += 1;
        if !swapped {
            break;
        }
    }
}

/// `fabric_get_new_tuple`: copy, step the rank, and give position `var` the lowest value
/// not yet taken.
fn new_tuple(used: &HashSet<Tuple>, from: &Tuple, down: bool) -> Result<Tuple, String> {
    let mut t = *from;
    let var = if down {
        t[0] += 1;
        from[0] as usize + 1
    } else {
        t[0] -= 1;
        from[0] as usize
    };
    if var >= TUPLE_LEN {
        return Err("ftree: tree too deep for 8-byte tuples".into());
    }
    for i in 0..0xFF {
        t[var] = i;
        if !used.contains(&t) {
            return Ok(t);
        }
    }
    Err("ftree: more than 255 switches in one direction".into())
}
