//! TODO doc

use super::*;

#[derive(Default, Clone, Copy)]
pub(super) struct PgState {
    pub(super) resv: u64,
    pub(super) shared: u64,
    pub(super) hdrm: u64,
    pub(super) paused: bool,
    pub(super) gen: u32,
    pub(super) peak_hdrm: u64,
    pub(super) peak_total: u64,
}

#[derive(Default, Clone, Copy)]
pub(super) struct Mmu {
    pub(super) shared_total: u64,
    pub(super) shared_used: u64,
    pub(super) hdrm_pool: u64,
    pub(super) hdrm_pool_used: u64,
    pub(super) used: u64,
    pub(super) peak_used: u64,
}

/// The PGs of a bit mask, lowest first.
pub(super) fn lossless_pgs(mask: u8) -> impl Iterator<Item = u8> {
    (0..8u8).filter(move |pg| mask & (1 << pg) != 0)
}

impl Sim {
    pub(super) fn alpha_limit(&self, free: u64) -> u64 {
        let th = self.p.buffer.dynamic_th;
        if th >= 0 {
            free << th
        } else {
            free >> (-th)
        }
    }

    /// Index of (ingress port, PG) in `pgs` and `hdrm_cap`: PG-major, so the state of the
    /// PGs in use (usually one lossless PG) is dense.
    #[inline]
    pub(super) fn pg_index(&self, port: u32, pg: u8) -> usize {
        pg as usize * self.np + port as usize
    }

    /// Shared-pool cells PG `pg` may use now.
    pub(super) fn shared_limit(&self, node: usize, lossless: bool) -> u64 {
        let m = &self.mmus[node];
        let dynamic = self.alpha_limit(m.shared_total - m.shared_used);
        match (lossless, self.p.buffer.trigger) {
            (true, Trigger::Static(s)) => s.saturating_sub(self.p.buffer.reserved_cells).min(dynamic.max(1)),
            _ => dynamic,
        }
    }

    /// Buffer cells a packet holds in a switch (none on InfiniBand, which counts blocks).
    #[inline]
    pub(super) fn cells_of(&self, pk: &Packet) -> u64 {
        if self.ib.is_empty() {
            Bytes(pk.frame as u64).cells(self.p.buffer.cell)
        } else {
            0
        }
    }

    /// Frees a departing packet's ingress cells: headroom first, then shared, then reserved.
    /// (RoCEv2; InfiniBand frees input blocks in [`Sim::ib_release`].)
    /// `ni`: the switch holding the packet.
    pub(super) fn release(&mut self, now: u64, ni: usize, pk: Packet) {
        let gi = self.pg_index(pk.in_port, pk.in_pg);
        let cells = self.cells_of(&pk);
        let mut c = cells;
        let s = &mut self.pgs[gi];
        let h = c.min(s.hdrm);
        s.hdrm -= h;
        c -= h;
        let sh = c.min(s.shared);
        s.shared -= sh;
        c -= sh;
        s.resv -= c;
        let m = &mut self.mmus[ni];
        m.used -= cells;
        m.shared_used -= sh;
        if self.p.buffer.shared_headroom_pool.is_some() {
            m.hdrm_pool_used -= h;
        }
        let s = self.pgs[gi];
        if s.paused && s.hdrm == 0 {
            let occ = s.resv + s.shared;
            // The trigger fires at shared >= limit, i.e. at occupancy resv + limit with the
            // reserve this PG holds now: a frame larger than what is left of the reserve goes
            // to the shared pool whole, so resv may stay below `reserved_cells`.
            let level = match self.p.buffer.resume {
                Resume::Absolute(a) => a,
                Resume::Offset(o) => (s.resv + self.shared_limit(ni, true)).saturating_sub(o),
            };
            if occ <= level {
                self.pgs[gi].paused = false;
                self.queue_pfc(now, pk.in_port, pk.in_pg, 0);
            }
        }
    }

    /// Headroom cap of each port (cells), for reporting.
    pub fn headroom_of(&self, port: PortId) -> u64 {
        (0..8).map(|pg| self.hdrm_cap[self.pg_index(port.0, pg)]).max().unwrap_or(0)
    }
}
