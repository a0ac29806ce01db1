//! The switch MMU (RoCEv2): buffer accounting in cells per (ingress port, PG) — reserved,
//! shared under a dynamic threshold α·free (Choudhury & Hahne, IEEE/ACM ToN 1998), and
//! headroom (dedicated per PG or a shared headroom pool) — and when a lossless PG must
//! pause its peer (shared part at its limit, or headroom in use) and may resume
//! (headroom empty and occupancy back at the resume point). The cell counts and
//! thresholds follow SONiC's BUFFER_PROFILE/BUFFER_PG model (`model::buffer`).
//!
//! Leaves out: egress admission of lossy queues separately (a lossy packet is dropped at
//! ingress when its PG is over the dynamic threshold or the pool is full), and multiple
//! pools per switch.

use crate::params::Buffer;

use super::*;

/// One (ingress port, PG)'s cells: reserved, shared and headroom, whether it has paused
/// its peer (XOFF sent), the generation that makes stale refreshes of an old pause go
/// stale, and peaks for the report.
#[derive(Default, Clone, Copy)]
pub(super) struct PgState {
    resv: u64,
    shared: u64,
    pub(super) hdrm: u64,
    pub(super) paused: bool,
    pub(super) gen: u32,
    peak_hdrm: u64,
    peak_total: u64,
}

/// One switch's buffer: the shared pool, the shared headroom pool if any, and all cells
/// in use.
#[derive(Default, Clone, Copy)]
pub(super) struct Pool {
    shared_total: u64,
    shared_used: u64,
    hdrm_pool: u64,
    hdrm_pool_used: u64,
    used: u64,
    peak_used: u64,
}

/// The switches' MMUs: per-(ingress port, PG) accounting, per-switch pools, the headroom
/// cap of each (port, PG), and the buffer parameters they apply.
pub(super) struct Mmu {
    pgs: Vec<PgState>,
    pools: Vec<Pool>,
    /// Headroom cap per (port, PG), in cells.
    hdrm_cap: Vec<u64>,
    /// Priority groups that hold a lossless class (bit per PG).
    lossless_pg_mask: u8,
    /// Ports, for the PG-major index.
    np: usize,
    b: Buffer,
}

/// Where an admitted packet's cells went.
pub(super) enum Admit {
    /// Admitted; `xoff`: the PG has just reached its pause trigger (lossless only).
    Taken {
        xoff: bool,
    },
    Dropped(DropCause),
}

/// The PGs of a bit mask, lowest first.
pub(super) fn lossless_pgs(mask: u8) -> impl Iterator<Item = u8> {
    (0..8u8).filter(move |pg| mask & (1 << pg) != 0)
}

impl Mmu {
    /// Each switch's pools from the buffer parameters: the shared pool is what is left of
    /// the buffer after the reserves of every (port, PG) and the headroom of every
    /// lossless (port, PG) (or the shared headroom pool).
    pub(super) fn new(topo: &Topology, p: &Params, headroom: &[u64]) -> Mmu {
        let b = &p.buffer;
        let np = topo.ports.len();
        let mut pools = vec![Pool::default(); topo.nodes.len()];
        let lossless_pg_mask = (0..8).filter(|&tc| p.lossless[tc]).fold(0u8, |m, tc| m | 1 << p.tc_to_pg[tc]);
        let lossless: Vec<u8> = lossless_pgs(lossless_pg_mask).collect();
        for (i, n) in topo.nodes.iter().enumerate() {
            if n.kind != NodeKind::Switch {
                continue;
            }
            let ports_range = n.first_port as usize..(n.first_port + n.nports) as usize;
            let reserved = b.reserved_cells * 8 * n.nports as u64;
            let hdrm: u64 = if b.shared_headroom_pool.is_some() { 0 } else { ports_range.clone().map(|pi| headroom[pi] * lossless.len() as u64).sum() };
            let pool = b.shared_headroom_pool.unwrap_or(0);
            pools[i] = Pool { shared_total: b.total_cells.saturating_sub(reserved + hdrm + pool), hdrm_pool: pool, ..Pool::default() };
        }
        let mut hdrm_cap = vec![0u64; np * 8];
        for pi in 0..np {
            for &pg in &lossless {
                hdrm_cap[pg as usize * np + pi] = headroom[pi];
            }
        }
        Mmu { pgs: vec![PgState::default(); np * 8], pools, hdrm_cap, lossless_pg_mask, np, b: b.clone() }
    }

    /// Index of (ingress port, PG) in `pgs` and `hdrm_cap`: PG-major, so the state of the
    /// PGs in use (usually one lossless PG) is dense.
    #[inline]
    pub(super) fn pg_index(&self, port: PortId, pg: u8) -> usize {
        pg as usize * self.np + port.index()
    }

    pub(super) fn pg(&self, port: PortId, pg: u8) -> &PgState {
        &self.pgs[self.pg_index(port, pg)]
    }

    /// The lossless PGs, lowest first (a copy of the mask: iterating does not borrow the MMU).
    pub(super) fn lossless_pgs(&self) -> impl Iterator<Item = u8> {
        lossless_pgs(self.lossless_pg_mask)
    }

    /// The dynamic threshold: α · free, α = 2^dynamic_th (Choudhury & Hahne 1998).
    #[inline]
    fn alpha_limit(&self, free: u64) -> u64 {
        let th = self.b.dynamic_th;
        if th >= 0 {
            free << th
        } else {
            free >> (-th)
        }
    }

    /// Shared-pool cells a PG of switch `node` may use now.
    #[inline]
    fn shared_limit(&self, node: NodeId, lossless: bool) -> u64 {
        let m = &self.pools[node.index()];
        let dynamic = self.alpha_limit(m.shared_total - m.shared_used);
        match (lossless, self.b.trigger) {
            (true, Trigger::Static(s)) => s.saturating_sub(self.b.reserved_cells).min(dynamic.max(1)),
            _ => dynamic,
        }
    }

    /// Ingress admission of `cells` at switch `node`, PG index `gi`: the PG's reserve
    /// first, then the shared pool under the dynamic threshold, then (lossless) headroom;
    /// else a drop, with its cause. `pfc_disabled`: the class is lossless but PFC is off on
    /// the ingress port (a misconfiguration), so it is admitted as lossy.
    #[inline]
    pub(super) fn admit(&mut self, node: NodeId, gi: usize, cells: u64, lossless: bool, pfc_disabled: bool) -> Admit {
        let limit = self.shared_limit(node, lossless);
        let ni = node.index();
        let st = self.pgs[gi];
        let m = self.pools[ni];
        let b = &self.b;
        if st.resv + cells <= b.reserved_cells {
            self.pgs[gi].resv += cells;
        } else if st.shared < limit && m.shared_used + cells <= m.shared_total {
            self.pgs[gi].shared += cells;
            self.pools[ni].shared_used += cells;
        } else if lossless && st.hdrm + cells <= self.hdrm_cap[gi] && (b.shared_headroom_pool.is_none() || m.hdrm_pool_used + cells <= m.hdrm_pool) {
            self.pgs[gi].hdrm += cells;
            if b.shared_headroom_pool.is_some() {
                self.pools[ni].hdrm_pool_used += cells;
            }
        } else {
            let cause = if lossless {
                DropCause::HeadroomOverflow
            } else if pfc_disabled {
                DropCause::PfcDisabled
            } else if m.shared_used + cells > m.shared_total {
                DropCause::BufferFull
            } else {
                DropCause::DynamicThreshold
            };
            return Admit::Dropped(cause);
        }
        let mm = &mut self.pools[ni];
        mm.used += cells;
        mm.peak_used = mm.peak_used.max(mm.used);
        let s = &mut self.pgs[gi];
        s.peak_hdrm = s.peak_hdrm.max(s.hdrm);
        s.peak_total = s.peak_total.max(s.resv + s.shared + s.hdrm);
        let s = self.pgs[gi];
        let xoff = lossless && !s.paused && (s.hdrm > 0 || s.shared >= self.shared_limit(node, true));
        Admit::Taken { xoff }
    }

    /// Frees `cells` of PG index `gi` at switch `node`: headroom first, then shared, then
    /// reserved. `true` when the PG is paused and may now resume: headroom empty and
    /// occupancy at the resume level.
    #[inline]
    pub(super) fn release(&mut self, node: NodeId, gi: usize, cells: u64) -> bool {
        let mut c = cells;
        let s = &mut self.pgs[gi];
        let h = c.min(s.hdrm);
        s.hdrm -= h;
        c -= h;
        let sh = c.min(s.shared);
        s.shared -= sh;
        c -= sh;
        s.resv -= c;
        let m = &mut self.pools[node.index()];
        m.used -= cells;
        m.shared_used -= sh;
        if self.b.shared_headroom_pool.is_some() {
            m.hdrm_pool_used -= h;
        }
        let s = self.pgs[gi];
        if !s.paused || s.hdrm != 0 {
            return false;
        }
        // The trigger fires at shared >= limit, i.e. at occupancy resv + limit with the
        // reserve this PG holds now: a frame larger than what is left of the reserve goes
        // to the shared pool whole, so resv may stay below `reserved_cells`.
        let level = match self.b.resume {
            Resume::Absolute(a) => a,
            Resume::Offset(o) => (s.resv + self.shared_limit(node, true)).saturating_sub(o),
        };
        s.resv + s.shared <= level
    }

    /// The one XOFF/XON transition of PG index `gi`: sets whether it pauses its peer and,
    /// when that changes, starts a new generation (pending refreshes of the old pause go
    /// stale). Returns the new generation if it changed.
    pub(super) fn set_paused(&mut self, gi: usize, on: bool) -> Option<u32> {
        let s = &mut self.pgs[gi];
        if s.paused == on {
            return None;
        }
        s.paused = on;
        s.gen += 1;
        Some(s.gen)
    }

    /// A fault sets the headroom of every lossless PG of `port` to `cells`.
    pub(super) fn set_headroom(&mut self, port: PortId, cells: u64) {
        for pg in lossless_pgs(self.lossless_pg_mask) {
            let gi = self.pg_index(port, pg);
            self.hdrm_cap[gi] = cells;
        }
    }

    /// Headroom cap of a port (cells, the largest over its PGs).
    pub(super) fn headroom_of(&self, port: PortId) -> u64 {
        (0..8).map(|pg| self.hdrm_cap[self.pg_index(port, pg)]).max().unwrap_or(0)
    }

    /// Peak headroom and peak total cells of `port`, over its PGs.
    pub(super) fn peaks(&self, port: PortId) -> (u64, u64) {
        (0..8).map(|pg| self.pgs[self.pg_index(port, pg)]).fold((0, 0), |(h, t), s| (h.max(s.peak_hdrm), t.max(s.peak_total)))
    }

    /// Cells in use in every switch.
    pub(super) fn cells_in_use(&self) -> u64 {
        self.pools.iter().map(|m| m.used).sum()
    }

    /// Peak and current cells in use at switch `node`.
    pub(super) fn switch_cells(&self, node: NodeId) -> (u64, u64) {
        let m = &self.pools[node.index()];
        (m.peak_used, m.used)
    }

    /// The accounting invariant of switch `node` (`n`): the PGs' cells add up to the
    /// pool's, none over its headroom cap, and the queued packets hold exactly the cells in
    /// use (`queued_cells`).
    pub(super) fn check(&self, node: NodeId, n: &crate::topology::Node, queued_cells: u64) -> Result<(), String> {
        let (mut used, mut shared, mut hdrm) = (0, 0, 0);
        for pi in n.first_port..n.first_port + n.nports {
            for pg in 0..8 {
                let gi = self.pg_index(PortId(pi), pg as u8);
                let s = self.pgs[gi];
                used += s.resv + s.shared + s.hdrm;
                shared += s.shared;
                hdrm += s.hdrm;
                if s.hdrm > self.hdrm_cap[gi] {
                    return Err(format!("headroom over its cap at port {pi} pg {pg}"));
                }
            }
        }
        let m = &self.pools[node.index()];
        if used != m.used || shared != m.shared_used || queued_cells != m.used {
            return Err(format!("switch {}: PG cells {used} / pool {}, shared {shared} / {}, queued {queued_cells}", n.name, m.used, m.shared_used));
        }
        if self.b.shared_headroom_pool.is_some() && hdrm != m.hdrm_pool_used {
            return Err(format!("switch {}: headroom pool mismatch", n.name));
        }
        Ok(())
    }
}

impl Sim {
    /// Buffer cells a packet holds in a switch (none on InfiniBand, which counts blocks).
    #[inline]
    pub(super) fn cells_of(&self, pk: &Packet) -> u64 {
        if self.ib.is_none() {
            Bytes(pk.frame as u64).cells(self.p.buffer.cell)
        } else {
            0
        }
    }

    /// Frees a departing packet's ingress cells and resumes its PG's peer when that lets
    /// it (RoCEv2; InfiniBand frees input blocks in [`Sim::ib_release`]). `node`: the
    /// switch holding the packet.
    #[inline]
    pub(super) fn release(&mut self, now: SimTime, node: NodeId, pk: Packet) {
        let gi = self.mmu.pg_index(pk.in_port, pk.in_pg);
        let cells = self.cells_of(&pk);
        if self.mmu.release(node, gi, cells) {
            self.set_pg_paused(now, pk.in_port, pk.in_pg, false, true);
        }
    }

    /// Headroom cap of each port (cells), for reporting.
    pub fn headroom_of(&self, port: PortId) -> u64 {
        self.mmu.headroom_of(port)
    }
}
