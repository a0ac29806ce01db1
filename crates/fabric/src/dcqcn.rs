//! DCQCN reaction point: the per-QP rate controller of RoCEv2 NICs.
//!
//! Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015, §3 and
//! Fig. 6; structure as in the HPCC ns-3 `rdma-hw.cc` (timers for α and rate increase, a
//! byte counter). A pure state machine: the caller passes `now` and schedules the timers
//! it is told about. Rates are in bit/s as `f64` internally (the paper's arithmetic is
//! multiplicative), rounded to whole bit/s when read.
//!
//! * CNP: RT ← RC, RC ← RC·(1 − α/2), counters reset (at most once per
//!   `rate_reduce_interval`).
//! * α timer K: α ← (1 − g)α + g if a CNP arrived in the period, else α ← (1 − g)α.
//!   Evaluated lazily: the periods elapsed since the last look are applied in closed form
//!   ((1 − g)^n), which is exactly the timer's result without one event per period.
//! * Increase events, from timer T and from every B bytes sent: fast recovery while both
//!   counters are at most F (RC ← (RT + RC)/2); additive once one exceeds F (RT += R_AI);
//!   hyper once both have (RT += i·R_HAI, i = min(counters) − F); each also averages
//!   RC ← (RT + RC)/2. RT and RC never exceed the line rate.
//!
//! Left out: the paper's rate limiter granularity. The rate timer stops once the QP is
//! back at line rate (it restarts on the next CNP).

use model::dcqcn::DcqcnParams;
use units::SimDuration;

#[derive(Clone, Debug)]
pub struct Dcqcn {
    pub rc: f64,
    pub rt: f64,
    pub alpha: f64,
    line: f64,
    t_stage: u32,
    b_stage: u32,
    bytes: u64,
    cnp_seen: bool,
    /// Start of the current α period (None until the first CNP starts the α timer).
    alpha_epoch: Option<u64>,
    last_cut: Option<u64>,
    /// Whether the rate timer is running (the caller owns its events).
    pub rate_running: bool,
}

/// What the caller must do after an input.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Arm {
    pub rate_timer: Option<SimDuration>,
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
            cnp_seen: false,
            alpha_epoch: None,
            last_cut: None,
            rate_running: false,
        }
    }

    /// Current sending rate in bit/s.
    pub fn rate_bps(&self) -> u64 {
        self.rc.max(1.0) as u64
    }

    /// Applies the α periods that ended by `now`.
    fn advance_alpha(&mut self, now: u64, p: &DcqcnParams) {
        let Some(epoch) = self.alpha_epoch else { return };
        let k = p.alpha_timer.ps();
        if now < epoch + k {
            return;
        }
        let n = (now - epoch) / k;
        self.alpha = (1.0 - p.g) * self.alpha + if self.cnp_seen { p.g } else { 0.0 };
        self.cnp_seen = false;
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

    pub fn on_cnp(&mut self, now: u64, p: &DcqcnParams) -> Arm {
        self.advance_alpha(now, p);
        if self.alpha_epoch.is_none() {
            self.alpha_epoch = Some(now);
        }
        self.cnp_seen = true;
        let mut arm = Arm::default();
        if let Some(last) = self.last_cut {
            if now < last + p.rate_reduce_interval.ps() {
                return arm;
            }
        }
        self.last_cut = Some(now);
        self.rt = self.rc;
        self.rc = (self.rc * (1.0 - self.alpha / 2.0)).max(p.min_rate.bps() as f64);
        self.t_stage = 0;
        self.b_stage = 0;
        self.bytes = 0;
        // The rate timer restarts from this cut.
        self.rate_running = true;
        arm.rate_timer = Some(p.rate_timer);
        arm
    }

    /// Rate timer fired. Returns whether to re-arm it.
    pub fn on_rate_timer(&mut self, p: &DcqcnParams) -> bool {
        self.t_stage += 1;
        self.increase(p);
        let keep = self.rc < self.line;
        self.rate_running = keep;
        keep
    }

    /// `n` bytes were sent; may trigger a byte-counter increase event.
    pub fn on_sent(&mut self, n: u64, p: &DcqcnParams) {
        if self.rc >= self.line {
            return;
        }
        self.bytes += n;
        if self.bytes >= p.byte_counter.0 {
            self.bytes = 0;
            self.b_stage += 1;
            self.increase(p);
        }
    }

    fn increase(&mut self, p: &DcqcnParams) {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::dcqcn::PAPER;

    #[test]
    fn first_cnp_halves_and_recovers() {
        let p = PAPER;
        let line = 100e9;
        let mut d = Dcqcn::new(100_000_000_000, &p);
        let arm = d.on_cnp(0, &p);
        assert_eq!(arm.rate_timer, Some(p.rate_timer));
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
        let mut d = Dcqcn::new(100_000_000_000, &p);
        d.on_cnp(0, &p);
        d.on_cnp(100_000_000, &p); // second cut: RT = RC = 50G
        let rt0 = d.rt;
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
}
