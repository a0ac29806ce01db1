//! Writing dfsssp's trees out (OpenSM `update_lft`, and the VL 0 channel dependencies
//! that `dfsssp_remove_deadlocks` starts from), on a second thread when there is one.
//!
//! Only the link loads feed the next destination's tree: [`super::charge`] adds them,
//! and records per tree position the [`Graph`](super::tree::Graph) entry each switch
//! chose (its link to its parent) and its parent's position. Everything else derived from a tree — the switch's
//! forwarding-table entry, and VL 0's (in port, out port) dependency at its parent —
//! is written here from that record, in destination order. A [`Writer`] is a pure
//! function of the records it is given in order, so the tables and dependencies do not
//! depend on whether it runs inline or on the helper thread ([`super::pipeline`]), nor
//! on how destinations are grouped into [`Batch`]es.
//!
//! Tables are written switch-major directly (`lft[switch · nlid + lid]`), with no
//! LID-major columns to transpose: a destination touches one byte in each switch's row,
//! and destinations with neighbouring LIDs (a switch's CA LIDs, when assigned in port
//! order) share those rows' cache lines (1,280 on the k=32 tree, 80 KB).

use super::super::cdg::DepGraph;
use super::super::tables::{Fabric, Tables};

/// One routed destination in a [`Batch`]: its tree is `Batch::entries[previous end..end]`
/// and `Batch::parents[previous end..end]`, by position 1, 2, … (parents before children).
#[derive(Clone, Copy)]
pub(super) struct Routed {
    pub lid: u32,
    /// The destination switch, and its port that delivers (0 for the switch itself).
    pub sw: u32,
    pub port: u8,
    /// A CA LID: its paths are on VL 0 and mark dependencies.
    pub ca: bool,
    pub end: u32,
}

/// Several destinations' trees, handed from the router to the writer in one message.
#[derive(Default)]
pub(super) struct Batch {
    pub routed: Vec<Routed>,
    /// Per destination, per tree position from 1: the [`Graph`](super::tree::Graph) entry
    /// of the switch's link to its parent, and the parent's position. Only
    /// `..routed.last().end` is meaningful: a reused batch keeps its length, so that it is
    /// not zeroed again for every use.
    pub entries: Vec<u32>,
    pub parents: Vec<u16>,
}

impl Batch {
    /// Empties the batch for reuse.
    pub fn clear(&mut self) {
        self.routed.clear();
    }
}

/// Per graph entry (the link `u → v` as `v`'s row lists it), what the writer reads.
#[derive(Clone, Copy)]
pub(super) struct EntryOut {
    /// The [`DepGraph::row`] of the channel `v → u` as it enters `u`, where a path that
    /// goes on from `u` marks its dependency.
    pub dep_row: u32,
    /// The switch whose row holds the entry (the child; its neighbour is the parent).
    pub v: u16,
    /// `v`'s port to `u`: `v`'s forwarding entry when `u` is its next hop.
    pub port: u8,
}

/// The forwarding tables and VL 0's dependency graph, as the trees are written out.
pub(super) struct Writer {
    pub tables: Tables,
    pub deps: DepGraph,
    entry: Vec<EntryOut>,
    /// Per switch: its CA LIDs (the paths that leave it for one destination).
    cas: Vec<u64>,
    /// Per tree position, scratch for one destination: the CA LIDs its children have
    /// passed up so far (zero between destinations).
    sub: Vec<u64>,
}

impl Writer {
    /// A writer for `f`'s tables, marking dependencies in `deps` (empty), whose rows
    /// `entry` names.
    pub fn new(f: &Fabric, entry: Vec<EntryOut>, deps: DepGraph, cas: Vec<u64>) -> Writer {
        let n = f.nsw();
        Writer { tables: Tables::new(n, f.nlid), deps, entry, cas, sub: vec![0; n] }
    }

    /// Writes every destination of `b`, in order.
    pub fn write(&mut self, b: &Batch) {
        let mut start = 0;
        for r in &b.routed {
            let end = r.end as usize;
            self.write_one(r, &b.entries[start..end], &b.parents[start..end]);
            start = r.end as usize;
        }
    }

    /// One destination: each switch's entry for `r.lid`, and with a CA LID the parent's
    /// (in port, out port) dependency wherever the parent is not the destination switch
    /// and the subtree below the link holds CA LIDs (paths from them use it).
    fn write_one(&mut self, r: &Routed, chosen: &[u32], parents: &[u16]) {
        let (lid, nlid) = (r.lid as usize, self.tables.nlid);
        let (lft, entry) = (&mut self.tables.lft, &self.entry[..]);
        lft[r.sw as usize * nlid + lid] = r.port;
        if !r.ca {
            for &k in chosen {
                let e = entry[k as usize];
                lft[e.v as usize * nlid + lid] = e.port;
            }
            return;
        }
        // One pass, farthest first; position i is at i - 1 in `chosen`. Taking `sub`
        // leaves it zero for the next destination.
        let (cas, sub) = (&self.cas[..], &mut self.sub[..chosen.len() + 1]);
        for (i, (&k, &p)) in chosen.iter().zip(parents).enumerate().rev() {
            let e = entry[k as usize];
            lft[e.v as usize * nlid + lid] = e.port;
            let below = cas[e.v as usize] + std::mem::take(&mut sub[i + 1]);
            let p = p as usize;
            sub[p] += below;
            if p != 0 && below != 0 {
                // The parent's forwarding port: its own chosen entry's.
                let out = entry[chosen[p - 1] as usize].port;
                self.deps.set_in_row(e.dep_row as usize, out);
            }
        }
        sub[0] = 0;
    }
}
