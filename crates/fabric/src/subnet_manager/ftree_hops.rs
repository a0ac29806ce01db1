//! `ftree`'s hop counts to the LID being routed, and the quick test its down-going
//! recursion (`fabric_route_upgoing_by_going_down`, [`super::ftree`]) makes before the
//! routing loop: does any down (or sibling) group of this switch lead to a switch that
//! has no route yet or a longer one than through here?
//!
//! OpenSM answers that group by group inside the loop. On a fat tree most calls route
//! nothing (on the k=32 tree 1,174 of the 1,221 calls per LID), so asking it of all
//! groups at once, from a packed list of remote switches, and remembering the answer per
//! distinct set of remote switches (all aggregation switches of a pod lead to the same
//! edge switches, all cores of a row to the same aggregation switches) saves most of the
//! work without changing a result: the test has no side effects, and the loop still makes
//! its own checks whenever the answer is yes.
//!
//! The remembered answer is an upper bound on the largest hop count of the set: the
//! largest count a scan that found nothing to route saw, or, after a routing loop,
//! `hops + 1` (every remote switch other than the one the recursion came from now has at
//! most that) with that one's count. A scan that finds a switch to route stops there. Hop
//! counts only fall while one LID is routed, except when ftree re-routes a leaf on its
//! dummy LID 0 through a sibling link; that, and every new LID, starts a new epoch, which
//! forgets every bound.

use std::collections::HashMap;

use super::mad::NO_PATH;

/// Switch indices are below this: they are 16-bit here (a subnet has fewer than 49,152
/// unicast LIDs, IBTA Vol. 1 §4.1.3, so fewer switches).
pub(super) const MAX_SWITCHES: usize = 1 << 16;

/// What the entry of the down-going recursion reads of a switch before it knows whether
/// it routes anything, packed.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Quick {
    /// The remote switches of the down groups are `remotes[start..down_end]`, of the
    /// sibling groups `[down_end..sib_end]`, in construction order (the test needs none).
    start: u32,
    down_end: u32,
    sib_end: u32,
    /// The distinct set of remote switches of the down groups, and of the down and
    /// sibling groups together.
    set_down: u32,
    set_all: u32,
}

/// Per switch, what the down-going recursion tests before anything else (a byte per
/// switch, apart from [`Quick`], which it reads only when these leave the answer open):
/// the switch has down groups.
pub(super) const HAS_DOWN: u8 = 1;
/// Has sibling groups.
pub(super) const HAS_SIB: u8 = 2;
/// Some down group leads to a CA.
pub(super) const HAS_CA: u8 = 4;
/// Every down group leads to a CA (a leaf): going down ends here at once.
pub(super) const ONLY_CA: u8 = 8;
/// A down group's up-going counter changed since the down groups were last sorted
/// (OpenSM's `counter_up_changed`).
pub(super) const SORT_DOWN: u8 = 16;

/// Hop counts to the LID being routed, per switch ([`NO_PATH`]: none yet). LIDs are routed
/// one after the other and none reads another's hop counts, so one column serves them all.
pub(super) struct HopColumn {
    /// Spans every 16-bit index, so indexing it by one needs no bounds check.
    hops: Box<[u8; MAX_SWITCHES]>,
    /// Remote switches of every switch's down and sibling groups ([`Quick::start`]).
    remotes: Vec<u16>,
    /// Per set of remote switches ([`Quick::set_down`]): the epoch and the largest hop
    /// count found when it was last scanned.
    set_max: Vec<(u64, u8)>,
    epoch: u64,
}

impl HopColumn {
    #[inline]
    pub fn get(&self, s: usize) -> u8 {
        self.hops[s]
    }

    #[inline]
    pub fn set(&mut self, s: usize, hops: u8) {
        if hops > self.hops[s] {
            self.epoch += 1;
        }
        self.hops[s] = hops;
    }

    /// [`HopColumn::set`] where the caller knows that `hops` is no larger than the count
    /// it replaces, so every bound stays valid.
    #[inline]
    pub fn lower(&mut self, s: usize, hops: u8) {
        debug_assert!(hops <= self.hops[s]);
        self.hops[s] = hops;
    }

    /// Forgets the hop counts of the LID routed before (switches `0..n`).
    pub fn start_lid(&mut self, n: usize) {
        self.hops[..n].fill(NO_PATH);
        self.epoch += 1;
    }

    /// Whether the down-going recursion at a switch (`q`), reached from `prev` with
    /// `hops`, routes anything: some down group's (and with `siblings`, for a LID other
    /// than 0, sibling group's) remote switch other than `prev` has no route yet
    /// ([`NO_PATH`], the largest hop count) or a longer one than `hops + 1`. The scan
    /// stops at the first such switch (the routing loop then runs and
    /// [`HopColumn::note_routed`] bounds the set); a scan that finds none remembers the
    /// largest count it saw.
    #[inline(always)]
    pub fn any_to_route(&mut self, q: &Quick, prev: Option<usize>, siblings: bool, hops: u8) -> bool {
        let (end, set) = if siblings { (q.sib_end, q.set_all) } else { (q.down_end, q.set_down) };
        let limit = hops as u16 + 1;
        let (epoch, bound) = self.set_max[set as usize];
        if epoch == self.epoch && bound as u16 <= limit {
            return false;
        }
        let col = &*self.hops;
        let prev = prev.map_or(u32::MAX, |p| p as u32);
        let mut most = 0u8;
        for &r in &self.remotes[q.start as usize..end as usize] {
            let h = col[r as usize];
            if h as u16 > limit && r as u32 != prev {
                return true;
            }
            most = most.max(h);
        }
        self.set_max[set as usize] = (self.epoch, most);
        false
    }

    /// The current epoch, for [`HopColumn::note_routed`].
    #[inline]
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// After the routing loop at a switch (`q`), reached from `prev` with `hops`, that
    /// started in `epoch` ([`HopColumn::any_to_route`] said yes): every remote switch of
    /// the set other than `prev` now has a route of at most `hops + 1` hops (it had one,
    /// or the loop gave it one), so that bounds the set together with `prev`'s count. Only
    /// while no count has risen since the loop started (the loop's recursion only lowers
    /// counts; the epoch check does not rely on it).
    #[inline]
    pub fn note_routed(&mut self, q: &Quick, prev: Option<usize>, siblings: bool, hops: u8, epoch: u64) {
        if self.epoch != epoch {
            return;
        }
        let set = if siblings { q.set_all } else { q.set_down };
        let bound = prev.map_or(hops + 1, |p| self.hops[p].max(hops + 1));
        self.set_max[set as usize] = (epoch, bound);
    }
}

/// Each switch's [`Quick`] and flags ([`HAS_DOWN`]…) and the hop column with the remote
/// switches they list, from
/// every switch's (down groups, sibling groups) as remote switch indices (`u32::MAX`: a
/// CA). Indices must be below [`MAX_SWITCHES`].
pub(super) fn quick_tables(groups: &[(Vec<u32>, Vec<u32>)]) -> (Vec<Quick>, Vec<u8>, HopColumn) {
    const CA: u32 = u32::MAX;
    let mut quick = Vec::with_capacity(groups.len());
    let mut all_flags = Vec::with_capacity(groups.len());
    let mut remotes = vec![];
    let mut sets: HashMap<Vec<u16>, u32> = HashMap::new();
    let mut set_of = |list: &[u16]| {
        let mut key = list.to_vec();
        key.sort_unstable();
        let next = sets.len() as u32;
        *sets.entry(key).or_insert(next)
    };
    for (down, sib) in groups {
        let start = remotes.len() as u32;
        remotes.extend(down.iter().filter(|&&r| r != CA).map(|&r| r as u16));
        let down_end = remotes.len() as u32;
        remotes.extend(sib.iter().filter(|&&r| r != CA).map(|&r| r as u16));
        let sib_end = remotes.len() as u32;
        let mut flags = SORT_DOWN;
        for (on, flag) in [
            (!down.is_empty(), HAS_DOWN),
            (!sib.is_empty(), HAS_SIB),
            (down.contains(&CA), HAS_CA),
            (!down.is_empty() && sib.is_empty() && down.iter().all(|&r| r == CA), ONLY_CA),
        ] {
            if on {
                flags |= flag;
            }
        }
        let set_down = set_of(&remotes[start as usize..down_end as usize]);
        let set_all = set_of(&remotes[start as usize..sib_end as usize]);
        quick.push(Quick { start, down_end, sib_end, set_down, set_all });
        all_flags.push(flags);
    }
    let nsets = sets.len();
    (quick, all_flags, HopColumn { hops: Box::new([NO_PATH; MAX_SWITCHES]), remotes, set_max: vec![(0, NO_PATH); nsets], epoch: 0 })
}
