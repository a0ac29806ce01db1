//! Adaptive-routing groups: per switch and destination LID, the output ports a switch may
//! choose among when InfiniBand adaptive routing (AR) is on, programmed alongside the LFT.
//!
//! What this follows: NVIDIA's subnet manager (MLNX OpenSM / UFM, routing engines
//! `ar_updn`, `ar_ftree`) "configures the AR groups and AR LFTs tables to allow switches to
//! select an output port out of an AR group for a specific destination LID"; with its
//! TREE group algorithm "all ports with minimal hops to destination are in the same AR
//! group" (NVIDIA, *InfiniBand Cluster Bring-up Procedure v1.0*, section "Adaptive
//! Routing", docs.nvidia.com/networking/display/ibclusterbringupprocedure/adaptive+routing;
//! MLNXSM release notes v5.14.0: "ARLFT tables are set prior to setting the AR Group
//! tables"). So a group here is the LFT's port plus every port to a neighbour switch one
//! hop closer to the destination's switch (the LFT's port stays in even where the engine
//! routed off the minimum, e.g. up*/down*, as the static fall-back).
//!
//! Deadlock freedom: a group member that the static routes never use adds channel
//! dependencies. Each group is restricted to members that keep the per-VL channel
//! dependency graph acyclic (Dally & Seitz 1987, [`super::cdg`]). The dependencies are
//! those of every path the groups allow: a packet entering a switch from a neighbour
//! whose group reaches it may leave by any member of the switch's group, on the VLs
//! (dfsssp's SL per source switch, SL2VL the identity, every VL of its split) of every
//! source whose paths reach that neighbour through the groups. First every candidate is
//! taken and the graphs are checked with [`cdg::find_cycle`]: on trees (fat trees with
//! up/down minimum-hop routes) they are acyclic and every group is kept whole. Otherwise
//! the groups start as the LFT and members are added one at a time, in (LID, switch far
//! from the destination first, port) order, each kept only when every VL's graph stays
//! acyclic: a greedy restriction that depends on that order and costs a cycle search per
//! member that adds a dependency (fine for the rings and small meshes that need it). Where
//! the LFT's own routes are cyclic (minhop on a ring), only members that add no
//! dependency join.
//!
//! Leaves out: NVIDIA's other group algorithms (LAG, DF_PLUS), AR group sharing across
//! LIDs as a table-size limit (every group here is stored once per distinct port set),
//! SL masks (AR applies to every data SL), and regrouping after a re-sweep: the groups are
//! computed at bring-up; a member whose link later fails is skipped by the switch (see
//! `sim/load_balance.rs`).

use std::collections::HashMap;

use super::cdg::{self, DepGraph};
use super::mad::NO_PATH;
use super::tables::{Fabric, Owner, Peer, SlTable, Tables};
use crate::topology::{NodeId, PortId, Topology};

/// AR groups in the SM's terms: per (switch index, LID) the IB port numbers of the group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArGroups {
    pub nlid: usize,
    /// `(s · nlid + lid)` → range in `ports`.
    start: Vec<u32>,
    ports: Vec<u8>,
    /// Minimum-hop members left out to keep the channel dependency graph acyclic.
    pub restricted: u64,
}

impl ArGroups {
    /// The group of switch `s` for `lid` (empty when the LID is not routed there).
    pub fn group(&self, s: usize, lid: usize) -> &[u8] {
        let i = s * self.nlid + lid;
        &self.ports[self.start[i] as usize..self.start[i + 1] as usize]
    }
}

/// The candidate members at every switch for one LID delivered by switch `dsw`: the LFT's
/// port, then the minimum-hop ports to other switches, in port order.
fn candidates(f: &Fabric, t: &Tables, dist: &[u8], dsw: usize, lid: usize) -> Vec<Vec<u8>> {
    let n = f.nsw();
    (0..n)
        .map(|s| {
            let p0 = t.get(s, lid);
            let mut g = vec![];
            if p0 != NO_PATH && p0 != 0 {
                g.push(p0);
            }
            let here = dist[s * n + dsw];
            if s != dsw && here != u8::MAX {
                for (p, w, _) in f.sw_links(s) {
                    if p != p0 && dist[w as usize * n + dsw] as u32 + 1 == here as u32 {
                        g.push(p);
                    }
                }
            }
            g
        })
        .collect()
}

/// The switch behind port `p` of switch `s`, and the port it is entered by.
fn peer_switch(f: &Fabric, s: usize, p: u8) -> Option<(usize, u8)> {
    match f.adj[s].get(p as usize) {
        Some(&Peer::Switch { sw, port }) => Some((sw as usize, port)),
        _ => None,
    }
}

/// Per switch, the VLs of the paths to `lid` that reach it through the groups `kept`
/// (a fixpoint over the groups: masks only grow, 16 bits each).
fn vl_masks(f: &Fabric, kept: &[Vec<u8>], lid: usize, sl: Option<&SlTable>) -> Vec<u16> {
    let n = f.nsw();
    let mut mask: Vec<u16> = (0..n).map(|s| if kept[s].is_empty() { 0 } else { cdg::source_vls(f, s, lid, sl) }).collect();
    let mut work: Vec<usize> = (0..n).filter(|&s| mask[s] != 0).collect();
    while let Some(s) = work.pop() {
        for &p in &kept[s] {
            if let Some((w, _)) = peer_switch(f, s, p) {
                if mask[w] | mask[s] != mask[w] {
                    mask[w] |= mask[s];
                    work.push(w);
                }
            }
        }
    }
    mask
}

/// The channel dependencies of every path to `lid` the groups `kept` allow, as (VL mask,
/// switch, in port, out port): a packet that enters switch `x` from a neighbour whose
/// group reaches `x` may leave by any member of `x`'s group that leads to another switch,
/// on every VL of the paths through that neighbour.
fn path_deps(f: &Fabric, kept: &[Vec<u8>], lid: usize, sl: Option<&SlTable>) -> Vec<(u16, usize, u8, u8)> {
    let mask = vl_masks(f, kept, lid, sl);
    let mut out = vec![];
    for x in 0..f.nsw() {
        for (q, p, pp) in f.sw_links(x) {
            let m = mask[p as usize];
            if m == 0 || !kept[p as usize].contains(&pp) {
                continue;
            }
            for &r in &kept[x] {
                if peer_switch(f, x, r).is_some() {
                    out.push((m, x, q, r));
                }
            }
        }
    }
    out
}

fn set_deps(g: &mut [DepGraph], deps: &[(u16, usize, u8, u8)]) {
    for &(mut m, n, q, r) in deps {
        while m != 0 {
            let v = m.trailing_zeros() as usize;
            m &= m - 1;
            if v < g.len() {
                g[v].set(n, q, r);
            }
        }
    }
}

/// The AR groups for the routed tables `t` (with dfsssp's per-path SLs `sl`), restricted
/// to keep every VL's channel dependency graph acyclic (see the module doc).
pub fn groups(f: &Fabric, t: &Tables, sl: Option<&SlTable>) -> ArGroups {
    let n = f.nsw();
    let nvl = sl.map_or(1, |s| s.split.len().clamp(1, 16));
    let dist = f.switch_distances();
    let lids: Vec<(usize, usize)> = (1..f.nlid)
        .filter_map(|lid| match f.owner[lid] {
            Owner::Ep(_) => f.lid_switch(lid).map(|d| (lid, d as usize)),
            _ => None,
        })
        .collect();
    let cand: Vec<Vec<Vec<u8>>> = lids.iter().map(|&(lid, d)| candidates(f, t, &dist, d, lid)).collect();
    let acyclic = |g: &[DepGraph]| g.iter().all(|g| cdg::find_cycle(f, g).is_none());
    // Every candidate at once: the whole group where that is deadlock-free.
    let mut whole = vec![DepGraph::new(f); nvl];
    for (c, &(lid, _)) in cand.iter().zip(&lids) {
        set_deps(&mut whole, &path_deps(f, c, lid, sl));
    }
    let kept = if acyclic(&whole) { cand.clone() } else { restrict(f, t, &lids, &cand, sl, &dist) };
    let total = |g: &[Vec<Vec<u8>>]| g.iter().flatten().map(|m| m.len() as u64).sum::<u64>();
    let restricted = total(&cand) - total(&kept);
    let mut start = vec![0u32; n * f.nlid + 1];
    let mut by_slot: Vec<Option<&Vec<u8>>> = vec![None; n * f.nlid];
    for (k, &(lid, _)) in lids.iter().enumerate() {
        for s in 0..n {
            by_slot[s * f.nlid + lid] = Some(&kept[k][s]);
        }
    }
    let mut ports = vec![];
    for (i, g) in by_slot.iter().enumerate() {
        if let Some(g) = g {
            ports.extend_from_slice(g);
        }
        start[i + 1] = ports.len() as u32;
    }
    ArGroups { nlid: f.nlid, start, ports, restricted }
}

/// The greedy restriction: the LFT's routes first, then each further candidate member
/// kept only if every VL's graph stays acyclic.
fn restrict(f: &Fabric, t: &Tables, lids: &[(usize, usize)], cand: &[Vec<Vec<u8>>], sl: Option<&SlTable>, dist: &[u8]) -> Vec<Vec<Vec<u8>>> {
    let n = f.nsw();
    let nvl = sl.map_or(1, |s| s.split.len().clamp(1, 16));
    // The LFT's own port, where it has one, is each group's first member and is kept.
    let mut kept: Vec<Vec<Vec<u8>>> =
        lids.iter().zip(cand).map(|(&(lid, _), c)| (0..n).map(|s| c[s].iter().take(1).copied().filter(|&p| p == t.get(s, lid)).collect()).collect()).collect();
    let mut g = vec![DepGraph::new(f); nvl];
    for (k, &(lid, _)) in lids.iter().enumerate() {
        set_deps(&mut g, &path_deps(f, &kept[k], lid, sl));
    }
    for (k, &(lid, dsw)) in lids.iter().enumerate() {
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&s| (std::cmp::Reverse(dist[s * n + dsw]), s));
        for &s in &order {
            for &r in &cand[k][s][kept[k][s].len()..] {
                kept[k][s].push(r);
                let deps = path_deps(f, &kept[k], lid, sl);
                let new = deps.iter().any(|&(m, x, q, r2)| (0..nvl).any(|v| m & (1 << v) != 0 && !g[v].get(x, q, r2)));
                if !new {
                    continue;
                }
                let mut trial = g.clone();
                set_deps(&mut trial, &deps);
                if trial.iter().all(|x| cdg::find_cycle(f, x).is_none()) {
                    g = trial;
                } else {
                    kept[k][s].pop();
                }
            }
        }
    }
    kept
}

/// AR groups in the simulator's terms, beside its [`crate::lft::Lft`]: per switch and destination
/// endpoint (base LID), the topology ports of the group. Distinct port sets are stored
/// once; the per-entry index is 4 bytes, as an LFT entry.
#[derive(Clone, Debug)]
pub struct ArTable {
    neps: usize,
    /// Node → row (u32::MAX for NICs), as the LFT's rows.
    row: Vec<u32>,
    /// `(row · neps + dst)` → index in `sets` (0: no group).
    entry: Vec<u32>,
    /// Distinct groups: range in `ports`.
    sets: Vec<(u32, u32)>,
    ports: Vec<PortId>,
    /// Minimum-hop members the SM left out to keep the channel dependency graph acyclic.
    pub restricted: u64,
}

impl ArTable {
    /// The table for `t` from the SM's groups: `switch(s)` is the topology node of switch
    /// index `s`, `port(s, p)` the topology port of its IB port `p`, `lid(ep)` the base LID
    /// of endpoint `ep` if it has one.
    pub fn build(
        t: &Topology,
        g: &ArGroups,
        nsw: usize,
        switch: impl Fn(usize) -> NodeId,
        port: impl Fn(usize, u8) -> Option<PortId>,
        lid: impl Fn(u32) -> Option<u16>,
    ) -> ArTable {
        let mut row = vec![u32::MAX; t.nodes.len()];
        let mut r = 0u32;
        for (i, node) in t.nodes.iter().enumerate() {
            if node.kind == crate::topology::NodeKind::Switch {
                row[i] = r;
                r += 1;
            }
        }
        let neps = t.endpoints.len();
        let mut table = ArTable { neps, row, entry: vec![0; r as usize * neps], sets: vec![(0, 0)], ports: vec![], restricted: g.restricted };
        let mut seen: HashMap<Vec<PortId>, u32> = HashMap::new();
        let lids: Vec<Option<u16>> = (0..neps as u32).map(&lid).collect();
        for s in 0..nsw {
            let node = switch(s);
            let rw = table.row[node.0 as usize] as usize;
            for (ep, l) in lids.iter().enumerate() {
                let Some(l) = l.filter(|&l| (l as usize) < g.nlid) else { continue };
                let set: Vec<PortId> = g.group(s, l as usize).iter().filter_map(|&p| port(s, p)).collect();
                if set.is_empty() {
                    continue;
                }
                let id = *seen.entry(set).or_insert_with_key(|set| {
                    table.sets.push((table.ports.len() as u32, set.len() as u32));
                    table.ports.extend_from_slice(set);
                    (table.sets.len() - 1) as u32
                });
                table.entry[rw * neps + ep] = id;
            }
        }
        table
    }

    /// Entries (switch, destination) whose group has more than one member.
    pub fn alternatives(&self) -> usize {
        self.entry.iter().filter(|&&e| self.sets[e as usize].1 > 1).count()
    }

    /// The group switch `sw` adapts over for packets to endpoint `dst` (the LFT's port
    /// first); empty when there is none.
    #[inline]
    pub fn group(&self, sw: NodeId, dst: u32) -> &[PortId] {
        let (start, len) = self.sets[self.entry[self.row[sw.0 as usize] as usize * self.neps + dst as usize] as usize];
        &self.ports[start as usize..(start + len) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Engine, SmConfig, SubnetManager};
    use super::*;
    use units::{BitRate, SimDuration};

    const L: (BitRate, SimDuration) = (BitRate(100_000_000_000), SimDuration(5_000));

    fn routed(t: &Topology, engine: Engine) -> (SubnetManager, ArGroups) {
        let mut sm = SubnetManager::new(t, SmConfig { engine, ..Default::default() });
        sm.agents.data_vls = 8;
        assert_eq!(sm.bring_up().engine, engine);
        let st = sm.state().unwrap();
        let g = groups(&st.fabric, &st.routed.tables, st.routed.sl.as_ref());
        (sm, g)
    }

    /// The dependency graphs of every path the groups allow, by walking each one from its
    /// source switch (independent of `path_deps`'s bookkeeping), per VL.
    pub(super) fn walked_deps(f: &Fabric, g: &ArGroups, sl: Option<&SlTable>) -> Vec<DepGraph> {
        let nvl = sl.map_or(1, |s| s.split.len().clamp(1, 16));
        let mut out = vec![DepGraph::new(f); nvl];
        for lid in 1..f.nlid {
            if !matches!(f.owner[lid], Owner::Ep(_)) {
                continue;
            }
            for src in 0..f.nsw() {
                let vls = cdg::source_vls(f, src, lid, sl);
                // (switch, port entered by or 0 at the source, hops so far)
                let mut stack = vec![(src, 0u8, 0u32)];
                while let Some((s, q, hops)) = stack.pop() {
                    assert!(hops < 64, "a routing loop through the AR groups");
                    for &r in g.group(s, lid) {
                        let Some((w, qw)) = peer_switch(f, s, r) else { continue };
                        if q != 0 {
                            set_deps(&mut out, &[(vls, s, q, r)]);
                        }
                        stack.push((w, qw, hops + 1));
                    }
                }
            }
        }
        out
    }

    #[test]
    fn fat_tree_groups_are_every_up_port_and_unrestricted() {
        let t = Topology::fat_tree(4, L, L).unwrap();
        let (sm, g) = routed(&t, Engine::Ftree);
        let st = sm.state().unwrap();
        let f = &st.fabric;
        assert_eq!(g.restricted, 0);
        let dist = f.switch_distances();
        let n = f.nsw();
        let mut wide = 0;
        for lid in 1..f.nlid {
            let Some(d) = f.lid_switch(lid).filter(|_| matches!(f.owner[lid], Owner::Ep(_))) else { continue };
            for s in 0..n {
                let grp = g.group(s, lid);
                assert_eq!(grp[0], st.routed.tables.get(s, lid), "the LFT's port first");
                let here = dist[s * n + d as usize];
                let min_hop: Vec<u8> = f.sw_links(s).filter(|&(_, w, _)| dist[w as usize * n + d as usize] as u32 + 1 == here as u32).map(|l| l.0).collect();
                if s != d as usize {
                    let mut sorted = grp.to_vec();
                    sorted.sort_unstable();
                    assert_eq!(sorted, min_hop, "switch {s} lid {lid}");
                }
                wide += usize::from(grp.len() > 1);
            }
        }
        assert!(wide > 0);
        assert!(walked_deps(f, &g, None).iter().all(|x| cdg::find_cycle(f, x).is_none()));
    }

    #[test]
    fn ring_groups_are_restricted_to_an_acyclic_graph() {
        // An even ring: the opposite switch is minimum-hop both ways round, and the
        // two-way groups together close the ring's cycle on one VL.
        let mut restricted = 0;
        for t in [Topology::ring(6, 1, L, L).unwrap(), Topology::ring(8, 1, L, L).unwrap(), Topology::torus_2d(4, 4, 1, L, L).unwrap()] {
            let engine = Engine::Dfsssp;
            let (sm, g) = routed(&t, engine);
            let st = sm.state().unwrap();
            let sl = st.routed.sl.as_ref();
            let walked = walked_deps(&st.fabric, &g, sl);
            for (v, x) in walked.iter().enumerate() {
                let c = cdg::find_cycle(&st.fabric, x);
                assert!(c.is_none(), "{engine} on {} switches: AR groups closed a cycle on VL {v}: {c:?}, restricted {}", st.fabric.nsw(), g.restricted);
            }
            let wide = (0..st.fabric.nsw()).flat_map(|s| (1..g.nlid).map(move |l| (s, l))).filter(|&(s, l)| g.group(s, l).len() > 1).count();
            assert!(wide > 0, "{engine}: no group with an alternative");
            restricted += g.restricted;
        }
        assert!(restricted > 0, "every minimum-hop port kept: the restriction was never tested");
    }

    #[test]
    fn cyclic_static_routes_get_no_alternative_that_adds_a_dependency() {
        // minhop on a ring: the two-hop routes alone are cyclic, so a member may only
        // join a group if its paths add no dependency (the way round to the opposite
        // switch uses channel pairs the two-hop routes already chain).
        let t = Topology::ring(6, 1, L, L).unwrap();
        let (sm, g) = routed(&t, Engine::Minhop);
        let st = sm.state().unwrap();
        let f = &st.fabric;
        let base = cdg::build(f, &st.routed.tables, None);
        assert!(cdg::find_cycle(f, &base[0]).is_some());
        let walked = walked_deps(f, &g, None);
        for s in 0..f.nsw() {
            for q in 0..=f.nports[s] {
                for r in 0..=f.nports[s] {
                    assert!(!walked[0].get(s, q, r) || base[0].get(s, q, r), "switch {s}: {q} -> {r} is new");
                }
            }
        }
        assert!((0..f.nsw()).any(|s| (1..g.nlid).any(|l| g.group(s, l).len() > 1)));
    }
}
