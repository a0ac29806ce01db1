//! TODO doc

use super::*;

impl Sim {
    pub(super) fn sample(&mut self, now: u64) {
        let ports: Vec<u64> = self.ports.iter().map(|p| p.qtotal).collect();
        let rates: Vec<u64> = self.qps.iter().map(|q| q.cc.as_ref().map(|c| c.rate_bps()).unwrap_or(0)).collect();
        // RoCE: priorities paused; IB: VLs whose head waits for credits.
        let paused: Vec<u8> = (0..self.ports.len())
            .map(|pi| {
                (0..8).fold(0u8, |m, tc| {
                    let b = if self.ib.is_empty() { self.paused(pi, tc, now) } else { self.head_blocked(pi, tc, now) };
                    if b {
                        m | 1 << tc
                    } else {
                        m
                    }
                })
            })
            .collect();
        self.stats.samples.push(crate::stats::Sample { t: now, queue: ports, qp_rate: rates, paused });
    }

    pub(super) fn finish(&mut self, end: u64) {
        for pi in 0..self.ib.len() {
            let st = &mut self.ib[pi];
            if st.wait_from != NEVER && st.wait_from < end {
                self.stats.ports[pi].xmit_wait_ps += end - st.wait_from;
                st.wait_from = end;
            }
        }
        for pi in 0..self.ports.len() {
            self.account_queue(end, pi);
            for p in 0..8 {
                let c = &self.cls[pi * 8 + p];
                let (from, until) = (c.pause_from, c.pause_until);
                if from < until && from < end {
                    self.stats.ports[pi].paused_ps[p] += until.min(end) - from;
                }
            }
        }
        for (i, n) in self.topo.nodes.iter().enumerate() {
            if n.kind == NodeKind::Switch {
                self.stats.switch_peak_cells.push((i as u32, self.mmus[i].peak_used));
            }
        }
        for pi in 0..self.ports.len() {
            for pg in 0..8 {
                let s = self.pgs[self.pg_index(pi as u32, pg as u8)];
                let st = &mut self.stats.ports[pi];
                st.peak_headroom_cells = st.peak_headroom_cells.max(s.peak_hdrm);
                st.peak_pg_cells = st.peak_pg_cells.max(s.peak_total);
            }
        }
        for pi in 0..self.ports.len() {
            for p in 0..8 {
                let c = &self.cls[pi * 8 + p];
                if c.pause_from <= end && end < c.pause_until {
                    self.stats.paused_at_end.push((pi as u32, p as u8));
                }
            }
        }
        self.stats.unrecovered = self.lost.iter().enumerate().filter(|(_, l)| l.0 != NEVER).map(|(q, l)| (q as u32, l.0)).collect();
        let in_flight: u64 = (0..self.ports.len()).map(|pi| self.on_link(pi).count() as u64).sum();
        self.stats.end = end;
        self.stats.events = self.q.popped();
        self.stats.frames_in_flight_at_end = in_flight;
        self.stats.buffer_cells_at_end = self.mmus.iter().map(|m| m.used).sum();
        for pi in 0..self.ports.len() {
            self.stats.ports[pi].headroom_cap_cells = self.headroom_of(PortId(pi as u32));
        }
        self.stats.flow_paths = (0..self.flow_qp.len() as u32).map(|f| self.flow_path(f)).collect();
    }

    /// Adds an entry to the incident timeline.
    pub(super) fn incident(&mut self, t: u64, event: &'static str, port: Option<u32>, class: Option<u8>, detail: String) {
        self.stats.timeline.push(crate::stats::Incident { t_ps: t, event, port, class, detail });
    }
}
