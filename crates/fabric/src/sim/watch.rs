//! Watching a run from outside: the one hook through which `run`, `compare`, `sweep`,
//! `bench`, the planners' proofs and web jobs see a run's progress and stop it.
//!
//! Every [`CHECK_EVERY`] events the run loop hands a [`Progress`] to the caller's
//! [`Watch`]; a `false` answer cancels the run, which then ends as if its stop time had
//! come (statistics finalised at the current time) and is marked incomplete
//! (`Stats::cancelled`). Checking every 2^16 events costs one mask test per event; at
//! 5–15 M events/s the watcher runs 75–230 times a second, often enough for a progress
//! bar and for Ctrl-C to feel immediate. Watching reads the wall clock but never feeds
//! it back: a run's results do not depend on who watched it.

use std::time::Duration;

use units::SimTime;

/// Events between two calls of the watcher (a power of two: the test is a mask).
pub const CHECK_EVERY: u64 = 1 << 16;

/// Where a run is.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// Simulated time now.
    pub now: SimTime,
    /// The scenario's stop time, if it has one.
    pub stop: Option<SimTime>,
    pub events: u64,
    /// Wall time since the run started.
    pub wall: Duration,
    /// Payload delivered to receivers so far, and the payload of all flows.
    pub delivered_bytes: u64,
    pub total_bytes: u64,
    /// Flows neither completed nor failed, of all flows.
    pub flows_left: usize,
    pub flows: usize,
}

impl Progress {
    /// How far the run is, 0 to 1: simulated time against the stop time, or the payload
    /// delivered against all of it (whichever is further).
    pub fn fraction(&self) -> f64 {
        let by_time = self.stop.map_or(0.0, |s| self.now.0 as f64 / s.0.max(1) as f64);
        let by_bytes = if self.total_bytes > 0 { self.delivered_bytes as f64 / self.total_bytes as f64 } else { 0.0 };
        by_time.max(by_bytes).clamp(0.0, 1.0)
    }
}

/// Who watches a run: sees its progress, and says whether it goes on.
pub trait Watch {
    /// `false` cancels the run.
    fn check(&mut self, p: &Progress) -> bool;
}

/// Nobody watches: the run goes to its end.
pub struct Unwatched;

impl Watch for Unwatched {
    fn check(&mut self, _: &Progress) -> bool {
        true
    }
}

/// A closure watches.
impl<F: FnMut(&Progress) -> bool> Watch for F {
    fn check(&mut self, p: &Progress) -> bool {
        self(p)
    }
}
