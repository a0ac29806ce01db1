//! What the run records besides the counters the mechanisms keep: periodic samples of
//! queues, QP rates and paused classes; the incident timeline; and the end-of-run
//! accounting (open pauses and credit waits closed at the end, peaks, headroom caps,
//! each flow's final path) that `report` reads from `Stats` without the simulator.

use super::*;

/// The most samples a run keeps: when one more would pass it, every other sample is
/// dropped and the period doubles, so a long run (a 60 s failure scenario sampled every
/// 10 µs) keeps a bounded time series at a coarser period instead of millions of samples
/// (gigabytes of memory and `--out` CSVs). Runs with fewer samples are not affected.
pub const MAX_SAMPLES: usize = 1 << 16;

/// What the run records besides counters: queue and rate samples every
/// `sample_period` (doubled each time [`MAX_SAMPLES`] is reached), and which ports' first
/// pause (or credit wait) is in the timeline.
pub(super) struct Observer {
    pub(super) first_block: Vec<bool>,
    sample_period: Option<SimDuration>,
    /// Samples taken (kept or decimated): the sampler's own events, which
    /// `Stats::events` leaves out so that asking for charts changes no number.
    samples_taken: u64,
}

impl Observer {
    pub(super) fn new(np: usize, sample_period: Option<SimDuration>, q: &mut Events) -> Observer {
        if sample_period.is_some_and(|sp| sp.ps() > 0) {
            q.schedule(SimTime::ZERO, Ev::Sample);
        }
        Observer { first_block: vec![false; np], sample_period, samples_taken: 0 }
    }
}

impl Sim {
    /// Takes a sample, and schedules the next while the run goes on. At [`MAX_SAMPLES`]
    /// the samples at odd positions go and the period doubles: the kept ones are
    /// `2 × period` apart, and the next comes `2 × period` after the last kept.
    pub(super) fn on_sample(&mut self, now: SimTime) {
        self.observe.samples_taken += 1;
        self.sample(now);
        let mut sp = self.observe.sample_period.expect("sampling");
        let mut next = now + sp;
        if self.stats.samples.len() >= MAX_SAMPLES {
            let mut i = 0;
            self.stats.samples.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            sp = SimDuration::from_ps(2 * sp.ps());
            self.observe.sample_period = Some(sp);
            next = SimTime(self.stats.samples.last().expect("kept").t) + sp;
        }
        if self.flows.remaining > 0 || self.stop.is_some_and(|s| now < s) {
            self.q.schedule(next, Ev::Sample);
        }
    }

    pub(super) fn sample(&mut self, now: SimTime) {
        let ports: Vec<u64> = self.ports.iter().map(|p| p.qtotal).collect();
        let rates: Vec<u64> = self.hosts.qps.iter().map(Qp::rate_bps).collect();
        // RoCE: priorities paused; IB: VLs whose head waits for credits.
        let paused: Vec<u8> = self
            .port_ids()
            .map(|port| {
                (0..8).fold(0u8, |m, tc| {
                    let b = if self.ib.is_none() { self.paused(port, tc, now) } else { self.head_blocked(port, tc, now) };
                    if b {
                        m | 1 << tc
                    } else {
                        m
                    }
                })
            })
            .collect();
        self.stats.samples.push(crate::stats::Sample { t: now.ps(), queue: ports, qp_rate: rates, paused });
    }

    pub(super) fn finish(&mut self, end: SimTime) {
        if let Some(ib) = &mut self.ib {
            for (pi, st) in ib.ports_mut().enumerate() {
                if st.wait_from != NEVER && st.wait_from < end {
                    self.stats.ports[pi].xmit_wait_ps += (end - st.wait_from).ps();
                    st.wait_from = end;
                }
            }
        }
        for port in self.port_ids() {
            self.account_queue(end, port);
        }
        self.fold_port_counters();
        for port in self.port_ids() {
            let pi = port.index();
            for p in 0..8 {
                let c = &self.cls[pi * 8 + p];
                self.stats.ports[pi].paused_ps[p] += c.paused_through(end).ps();
            }
        }
        for (i, n) in self.topo.nodes.iter().enumerate() {
            if n.kind == NodeKind::Switch {
                let node = NodeId(i as u32);
                self.stats.switch_peak_cells.push((node, self.mmu.switch_cells(node).0));
            }
        }
        for port in self.port_ids() {
            let (hdrm, total) = self.mmu.peaks(port);
            let st = &mut self.stats.ports[port.index()];
            st.peak_headroom_cells = st.peak_headroom_cells.max(hdrm);
            st.peak_pg_cells = st.peak_pg_cells.max(total);
        }
        for port in self.port_ids() {
            for p in 0..8 {
                let c = &self.cls[port.index() * 8 + p];
                if c.paused(end) {
                    self.stats.paused_at_end.push((port, p as u8));
                }
            }
        }
        self.stats.unrecovered = self.hosts.lost.iter().enumerate().filter(|(_, l)| l.0 != NEVER).map(|(q, l)| (QpId(q as u32), l.0.ps())).collect();
        let in_flight: u64 = self.port_ids().map(|port| self.on_link(port).count() as u64).sum();
        self.stats.end = end.ps();
        self.stats.events = self.q.popped() - self.observe.samples_taken;
        self.stats.frames_in_flight_at_end = in_flight;
        self.stats.buffer_cells_at_end = self.mmu.cells_in_use();
        for port in self.port_ids() {
            self.stats.ports[port.index()].headroom_cap_cells = self.headroom_of(port);
        }
        // One path per QP, traced from its first flow (its flows share its source, its
        // destination and so its route).
        let mut first_flow = vec![u32::MAX; self.hosts.qps.len()];
        for (f, qp) in self.flows.qp.iter().enumerate() {
            if *qp != NO_QP && first_flow[qp.index()] == u32::MAX {
                first_flow[qp.index()] = f as u32;
            }
        }
        self.stats.qp_paths = first_flow.iter().map(|&f| if f == u32::MAX { None } else { self.flow_path(f) }).collect();
        self.stats.flow_qp = self.flows.qp.clone();
    }

    /// Adds an entry to the incident timeline.
    pub(super) fn incident(&mut self, t: SimTime, event: IncidentKind, port: Option<PortId>, class: Option<u8>, detail: String) {
        self.stats.timeline.push(crate::stats::Incident { t_ps: t.ps(), event, port, class, detail });
    }
}
