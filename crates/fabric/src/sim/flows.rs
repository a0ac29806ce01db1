//! TODO doc

use super::*;

impl Sim {
    /// Flow `f`'s data is all at its receiver: release the flows waiting for it.
    pub(super) fn on_delivered(&mut self, now: u64, f: u32) {
        self.stats.flows[f as usize].delivered = Some(now);
        let (a, b) = (self.dep_first[f as usize] as usize, self.dep_first[f as usize + 1] as usize);
        for i in a..b {
            let d = self.dependents[i] as usize;
            self.waiting[d] -= 1;
            if self.waiting[d] == 0 {
                let fl = &self.flows[d];
                let at = (now + fl.delay.ps()).max(fl.start.0);
                self.q.schedule(SimTime(at), Ev::Post(d as u32));
            }
        }
    }

    /// Marks flows failed (their QP went to the error state), and every flow that depends
    /// on them, directly or not: those will never be posted.
    pub(super) fn fail_flows(&mut self, failed: &[u32]) {
        let mut stack = failed.to_vec();
        while let Some(f) = stack.pop() {
            let rec = &mut self.stats.flows[f as usize];
            if rec.failed {
                continue;
            }
            rec.failed = true;
            self.remaining -= 1;
            let (a, b) = (self.dep_first[f as usize] as usize, self.dep_first[f as usize + 1] as usize);
            stack.extend_from_slice(&self.dependents[a..b]);
        }
    }
}
