//! DCQCN reaction point: the per-QP rate controller of RoCEv2 NICs.
//!
//! Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015, §3 and
//! Fig. 6, with the rules in which NVIDIA ConnectX firmware and HPCC's ns-3 (`rdma-hw.cc`,
//! alibaba-edu/High-Precision-Congestion-Control 0b41ed27) differ from it selected by the
//! parameter set ([`DcqcnParams`]; sources of each rule at its type in `model::dcqcn`).
//! A pure state machine: the caller passes `now`, schedules the events it is told about
//! ([`Arm`]) and re-times the QP's paced send when [`Arm::rate_changed`] says so. Rates are
//! in bit/s as `f64` internally (the arithmetic is multiplicative), rounded to whole bit/s
//! when read.
//!
//! * **Cut** (at a CNP, or when a deferred or grid check finds one arrived): RT ← RC if
//!   `clamp_tgt_rate`, or if the byte counter raised the rate since the last cut, or if
//!   `clamp_tgt_rate_after_time_inc` and the rate timer did; then RC ← max(min_rate, RC·(1 − α/2)); counters reset and the
//!   rate timer restarts. When a cut may happen is [`ReduceTiming`]: at once unless one
//!   happened less than `rate_reduce_interval` ago (then at that interval's end), or on
//!   ns-3's grid of checks every `rate_reduce_interval` from the first CNP.
//! * **α** every K: α ← (1 − g)α + g if a CNP arrived in the period, else α ← (1 − g)α.
//!   The K timer starts at the first CNP. Evaluated lazily: the periods elapsed since the
//!   last look are applied in closed form ((1 − g)^n), exactly the timer's result without
//!   one event per period.
//! * **Increase** ([`IncreaseRule`]): the paper's timer-and-byte-counter stages with
//!   i·R_HAI, or ns-3's timer-only stages with a constant R_HAI. RT and RC never exceed
//!   the line rate.
//!
//! Left out: the rate limiter's granularity (rates are exact), the firmware's fixed-point
//! rounding of α and of the rates. The rate timer stops once the QP is back at line rate
//! (it restarts at the next cut), which changes nothing observable: at line rate an
//! increase event leaves RC and RT where they are, and the stage count only matters as
//! "raised since the last cut" and above F, both already true by then.

use model::dcqcn::{DcqcnParams, IncreaseRule, ReduceTiming};
use units::{serialization, BitRate, Bytes, SimDuration};

/// ns-3 schedules its first rate-decrease check 1 ns after the interval
/// (`cnp_received_mlx`: `MicroSeconds(m_rateDecreaseInterval) + NanoSeconds(1)`), so a
/// check never coincides with the CNP-driven events scheduled at whole microseconds.
const NS3_GRID_OFFSET_PS: u64 = 1_000;

/// The rate limiter: a frame of `wire` bytes that started at `start` lets the QP's next
/// frame start once it would have taken at `rate_bps` (ns-3 `UpdateNextAvail`: now +
/// size / rate). At line rate the QP is not paced (0: at once).
pub fn paced_next_tx(start: u64, wire: u32, rate_bps: u64, line_bps: u64) -> u64 {
    if rate_bps >= line_bps {
        0
    } else {
        start + serialization(Bytes(wire as u64), BitRate(rate_bps)).ps()
    }
}

#[derive(Clone, Debug)]
pub struct Dcqcn {
    pub rc: f64,
    pub rt: f64,
    pub alpha: f64,
    line: f64,
    /// Rate-timer increase events since the last cut (ns-3's `m_rpTimeStage`).
    t_stage: u32,
    /// Byte-counter increase events since the last cut.
    b_stage: u32,
    bytes: u64,
    /// A CNP arrived in the current α period.
    alpha_cnp: bool,
    /// Start of the current α period (None until the first CNP starts the α timer).
    alpha_epoch: Option<u64>,
    /// Time of the last cut.
    last_cut: Option<u64>,
    /// A cut is scheduled (deferred, or the next grid check) and a CNP arrived for it.
    cut_pending: bool,
    /// ns-3 grid: time of the first check; checks follow every `rate_reduce_interval`.
    grid_origin: Option<u64>,
    /// Whether the rate timer is running (the caller owns its events).
    pub rate_running: bool,
}

/// What the caller must do after an input.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Arm {
    /// (Re)start the rate timer: its next event is this long from now; older ones are stale.
    pub rate_timer: Option<SimDuration>,
    /// Schedule a cut check at this time ([`Dcqcn::on_cut_due`]).
    pub cut_at: Option<u64>,
    /// RC changed: re-time the pending send if the rule says so.
    pub rate_changed: bool,
}

impl Dcqcn {
    pub fn new(line_bps: u64, p: &DcqcnParams) -> Self {
        Dcqcn {
            rc: line_bps as f64,
            rt: line_bps as f64,
            alpha: p.alpha_init,
            line: line_bps as f64,
            t_stage: 0,
            b_stage: 0,
            bytes: 0,
            alpha_cnp: false,
            alpha_epoch: None,
            last_cut: None,
            cut_pending: false,
            grid_origin: None,
            rate_running: false,
        }
    }

    /// Current sending rate in bit/s.
    pub fn rate_bps(&self) -> u64 {
        self.rc.max(1.0) as u64
    }

    /// Applies the α periods that ended by `now`.
    fn advance_alpha(&mut self, now: u64, p: &DcqcnParams) {
        let Some(epoch) = self.alpha_epoch else {
            return;
        };
        let k = p.alpha_timer.ps();
        if now < epoch + k {
            return;
        }
        let n = (now - epoch) / k;
        self.alpha = (1.0 - p.g) * self.alpha + if self.alpha_cnp { p.g } else { 0.0 };
        self.alpha_cnp = false;
        if n > 1 {
            self.alpha *= (1.0 - p.g).powi((n - 1).min(i32::MAX as u64) as i32);
        }
        self.alpha_epoch = Some(epoch + n * k);
    }

    /// α as the K timer would have left it at `now`.
    pub fn alpha_at(&mut self, now: u64, p: &DcqcnParams) -> f64 {
        self.advance_alpha(now, p);
        self.alpha
    }

    /// A CNP (or a CNP-flagged ACK) reached the reaction point.
    pub fn on_cnp(&mut self, now: u64, p: &DcqcnParams) -> Arm {
        self.advance_alpha(now, p);
        let interval = p.rate_reduce_interval.ps();
        match p.rate_reduce_timing {
            ReduceTiming::Deferred => {
                if self.alpha_epoch.is_none() {
                    self.alpha_epoch = Some(now);
                }
                self.alpha_cnp = true;
                if self.cut_pending {
                    return Arm::default();
                }
                match self.last_cut.map(|t| t + interval) {
                    Some(due) if due > now => {
                        self.cut_pending = true;
                        Arm { cut_at: Some(due), ..Arm::default() }
                    }
                    _ => self.cut(now, p),
                }
            }
            ReduceTiming::Grid => {
                let origin = match self.grid_origin {
                    Some(o) => {
                        self.alpha_cnp = true;
                        o
                    }
                    None => {
                        // The first CNP: α = 1, this period does not count it, no cut yet.
                        self.alpha = 1.0;
                        self.alpha_epoch = Some(now);
                        let o = now + interval + NS3_GRID_OFFSET_PS;
                        self.grid_origin = Some(o);
                        o
                    }
                };
                if self.cut_pending {
                    return Arm::default();
                }
                self.cut_pending = true;
                let due = if now <= origin { origin } else { origin + (now - origin).div_ceil(interval.max(1)) * interval };
                Arm { cut_at: Some(due), ..Arm::default() }
            }
        }
    }

    /// A cut scheduled by [`Arm::cut_at`] is due.
    pub fn on_cut_due(&mut self, now: u64, p: &DcqcnParams) -> Arm {
        if !self.cut_pending {
            return Arm::default();
        }
        self.cut_pending = false;
        self.advance_alpha(now, p);
        self.cut(now, p)
    }

    fn cut(&mut self, now: u64, p: &DcqcnParams) -> Arm {
        // RT ← RC if the byte counter raised the rate since the last cut, or (with the "after
        // time inc" flag) the timer did, or at every cut with `clamp_tgt_rate`.
        let clamp = p.clamp_tgt_rate || self.b_stage > 0 || (p.clamp_tgt_rate_after_time_inc && self.t_stage > 0);
        if clamp {
            self.rt = self.rc;
        }
        self.rc = (self.rc * (1.0 - self.alpha / 2.0)).max(p.min_rate.bps() as f64);
        self.t_stage = 0;
        self.b_stage = 0;
        self.bytes = 0;
        self.last_cut = Some(now);
        // The rate timer restarts from this cut.
        self.rate_running = true;
        Arm { rate_timer: Some(p.rate_timer), cut_at: None, rate_changed: true }
    }

    /// Rate timer fired. Returns whether to re-arm it; the rate changed.
    pub fn on_rate_timer(&mut self, p: &DcqcnParams) -> bool {
        match p.increase {
            IncreaseRule::Paper => {
                self.t_stage += 1;
                self.increase_paper(p);
            }
            IncreaseRule::Ns3 => {
                self.increase_ns3(p);
                self.t_stage += 1;
            }
        }
        let keep = self.rc < self.line;
        self.rate_running = keep;
        keep
    }

    /// `n` bytes were sent; may trigger a byte-counter increase event (paper rule only).
    pub fn on_sent(&mut self, n: u64, p: &DcqcnParams) {
        if p.increase != IncreaseRule::Paper || self.rc >= self.line {
            return;
        }
        self.bytes += n;
        if self.bytes >= p.byte_counter.0 {
            self.bytes = 0;
            self.b_stage += 1;
            self.increase_paper(p);
        }
    }

    fn increase_paper(&mut self, p: &DcqcnParams) {
        let f = p.fast_recovery_steps;
        let (hi, lo) = (self.t_stage.max(self.b_stage), self.t_stage.min(self.b_stage));
        if hi <= f {
            // fast recovery: RT stays, RC moves halfway towards it
        } else if lo <= f {
            self.rt += p.rate_ai.bps() as f64;
        } else {
            self.rt += (lo - f) as f64 * p.rate_hai.bps() as f64;
        }
        self.rt = self.rt.min(self.line);
        self.rc = ((self.rt + self.rc) / 2.0).min(self.line);
    }

    /// ns-3 `RateIncEventMlx` with the stage before this event counted.
    fn increase_ns3(&mut self, p: &DcqcnParams) {
        let f = p.fast_recovery_steps;
        if self.t_stage == f {
            self.rt += p.rate_ai.bps() as f64;
        } else if self.t_stage > f {
            self.rt += p.rate_hai.bps() as f64;
        }
        self.rt = self.rt.min(self.line);
        self.rc = ((self.rt + self.rc) / 2.0).min(self.line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::dcqcn::{hpcc_ns3, NVIDIA_DEFAULT, PAPER};

    const G100: u64 = 100_000_000_000;

    #[test]
    fn first_cnp_halves_and_recovers() {
        let p = PAPER;
        let line = 100e9;
        let mut d = Dcqcn::new(G100, &p);
        let arm = d.on_cnp(0, &p);
        assert_eq!(arm.rate_timer, Some(p.rate_timer));
        assert!(arm.rate_changed);
        assert_eq!(d.rc, line / 2.0, "alpha_init = 1 halves the rate");
        assert_eq!(d.rt, line);
        // Fast recovery: F timer events each halve the gap to RT.
        for i in 1..=p.fast_recovery_steps {
            d.on_rate_timer(&p);
            let gap = line / 2.0 / 2f64.powi(i as i32);
            assert!((line - d.rc - gap).abs() < 1.0, "step {i}: {}", d.rc);
        }
        // α: the period with the CNP adds g, each later one decays by (1 − g).
        let k = p.alpha_timer.ps();
        let a = d.alpha_at(3 * k, &p);
        let want = ((1.0 - p.g) * 1.0 + p.g) * (1.0 - p.g).powi(2);
        assert!((a - want).abs() < 1e-12, "{a} vs {want}");
        assert_eq!(d.alpha_at(3 * k + k / 2, &p), a, "no change within a period");
    }

    #[test]
    fn additive_then_hyper() {
        let p = PAPER;
        let mut d = Dcqcn::new(G100, &p);
        d.on_cnp(0, &p);
        d.on_cnp(100_000_000, &p); // second cut: the paper clamps, RT = RC = 50G
        let rt0 = d.rt;
        assert_eq!(rt0, 50e9);
        for _ in 0..p.fast_recovery_steps {
            d.on_rate_timer(&p);
        }
        assert_eq!(d.rt, rt0, "fast recovery leaves RT");
        d.on_rate_timer(&p);
        assert_eq!(d.rt, rt0 + p.rate_ai.bps() as f64, "additive");
        // Byte counter reaches F too -> hyper.
        for _ in 0..p.fast_recovery_steps {
            d.on_sent(p.byte_counter.0, &p);
        }
        let before = d.rt;
        d.on_sent(p.byte_counter.0, &p);
        assert!(d.rt > before + p.rate_ai.bps() as f64, "hyper increase");
    }

    /// ConnectX: cuts with no increase in between leave RT where it was; the first cut
    /// after an increase clamps it: after a byte-counter increase always, after a timer
    /// increase with `clamp_tgt_rate_after_time_inc`.
    #[test]
    fn target_rate_clamps_only_after_an_increase() {
        let p = NVIDIA_DEFAULT;
        let us = 1_000_000;
        let mut d = Dcqcn::new(G100, &p);
        d.on_cnp(0, &p);
        assert_eq!(d.rt, 100e9, "no increase yet: RT stays at line rate");
        // Cuts 4 µs apart (the monitor period) with no increase between them.
        for i in 1..=5u64 {
            let a = d.on_cnp(i * 4 * us, &p);
            assert!(a.rate_changed && a.cut_at.is_none(), "cut {i} is due at once");
            assert_eq!(d.rt, 100e9, "cut {i}: RT not clamped");
        }
        let rc = d.rc;
        d.on_sent(p.byte_counter.0, &p); // a byte-counter increase...
        let rc_after_bytes = d.rc;
        assert!(rc_after_bytes > rc);
        d.on_cnp(40 * us, &p); // ...so this cut clamps RT to RC first
        assert_eq!(d.rt, rc_after_bytes);
        let rc = d.rc;
        d.on_rate_timer(&p); // a timer increase...
        let rc_after_timer = d.rc;
        assert!(rc_after_timer > rc);
        d.on_cnp(200 * us, &p); // ...clamps too, with the "after time inc" flag
        assert_eq!(d.rt, rc_after_timer);
        // Without the flag a timer increase does not clamp.
        let no_ati = DcqcnParams { clamp_tgt_rate_after_time_inc: false, ..NVIDIA_DEFAULT };
        let mut e = Dcqcn::new(G100, &no_ati);
        e.on_cnp(0, &no_ati);
        e.on_rate_timer(&no_ati);
        e.on_cnp(200 * us, &no_ati);
        assert_eq!(e.rt, 100e9, "a timer increase alone leaves RT without the flag");
        // The paper clamps at every cut.
        let mut q = Dcqcn::new(G100, &PAPER);
        q.on_cnp(0, &PAPER);
        q.on_sent(PAPER.byte_counter.0, &PAPER);
        let rc = q.rc;
        q.on_cnp(us, &PAPER);
        assert_eq!(q.rt, rc);
    }

    /// A CNP inside the monitor period is acted on at the period's end, once, however many
    /// arrive; never dropped.
    #[test]
    fn cnps_inside_the_monitor_period_are_deferred() {
        let p = NVIDIA_DEFAULT;
        let period = p.rate_reduce_interval.ps();
        let mut d = Dcqcn::new(G100, &p);
        d.on_cnp(0, &p);
        let rc1 = d.rc;
        let a = d.on_cnp(period / 4, &p);
        assert_eq!(a.cut_at, Some(period), "deferred to the period's end");
        assert!(!a.rate_changed);
        assert_eq!(d.rc, rc1, "no cut inside the period");
        assert_eq!(d.on_cnp(period / 2, &p), Arm::default(), "one pending cut only");
        let a = d.on_cut_due(period, &p);
        assert!(a.rate_changed);
        let alpha = d.alpha;
        assert!(d.rc < rc1 && (d.rc - rc1 * (1.0 - alpha / 2.0)).abs() < 1.0);
        assert_eq!(d.on_cut_due(period, &p), Arm::default(), "a stale check does nothing");
        // The next CNP after a full period cuts at once again.
        assert!(d.on_cnp(2 * period, &p).rate_changed);
    }

    /// ns-3: the first CNP sets α = 1 and cuts nothing; checks every t_dec from then cut
    /// when a CNP arrived; increases come from the timer alone, F = 1: fast recovery,
    /// additive, then constant hyper steps.
    #[test]
    fn ns3_stage_machine() {
        let p = hpcc_ns3(100);
        let us = 1_000_000;
        let mut d = Dcqcn::new(G100, &p);
        let a = d.on_cnp(10 * us, &p);
        assert_eq!(d.rc, 100e9, "first CNP: no cut");
        assert_eq!(d.alpha, 1.0);
        let due = 14 * us + 1_000;
        assert_eq!(a.cut_at, Some(due), "first check at +t_dec + 1 ns");
        // Four α periods without a counted CNP: α = (1 − g)^4.
        let a = d.on_cut_due(due, &p);
        assert!(a.rate_changed);
        let alpha = (1.0 - p.g).powi(4);
        assert!((d.rc - 100e9 * (1.0 - alpha / 2.0)).abs() < 1.0, "{}", d.rc);
        assert_eq!(d.rt, 100e9, "stage 0 at the cut: no clamp");
        // A CNP between checks waits for the next grid point.
        assert_eq!(d.on_cnp(15 * us, &p).cut_at, Some(18 * us + 1_000));
        d.on_cut_due(18 * us + 1_000, &p);
        // No byte counter.
        let rc = d.rc;
        d.on_sent(1 << 40, &p);
        assert_eq!(d.rc, rc);
        // Timer: stage 0 < F fast recovery, stage 1 = F additive, stage 2 > F hyper.
        d.on_rate_timer(&p);
        assert_eq!((d.rt, d.rc), (100e9, (rc + 100e9) / 2.0));
        let mut q = Dcqcn::new(G100, &p);
        q.rt = 50e9;
        q.rc = 40e9;
        q.on_rate_timer(&p);
        assert_eq!((q.rt, q.rc), (50e9, 45e9), "fast recovery");
        q.on_rate_timer(&p);
        assert_eq!(q.rt, 50e9 + p.rate_ai.bps() as f64, "additive");
        let rt = q.rt;
        q.on_rate_timer(&p);
        q.on_rate_timer(&p);
        assert_eq!(q.rt, rt + 2.0 * p.rate_hai.bps() as f64, "hyper: constant steps");
        // A cut after timer increases clamps RT.
        let rc = q.rc;
        q.grid_origin = Some(0);
        q.cut_pending = true;
        q.on_cut_due(100 * us, &p);
        assert_eq!(q.rt, rc);
    }
}
