//! Flows and their dependencies: a flow is posted when every flow it depends on has
//! been delivered (plus its delay), and a flow whose QP failed fails every flow that
//! depends on it, directly or not (collectives are DAGs of flows, `workload`).

use super::*;

/// What posting a flow needs of its [`FlowSpec`]: its addresses and class are its QP's,
/// and its dependencies are in the graph ([`Flows`]). 24 bytes instead of a spec's 72
/// and its dependency list's heap block: a collective has millions of flows.
#[derive(Clone, Copy, Debug)]
pub(super) struct PostSpec {
    pub(super) size: Bytes,
    pub(super) start: SimTime,
    /// Between the last dependency's delivery and the post.
    pub(super) delay: SimDuration,
}

/// The flows and their dependency graph: each flow's QP, how many of its dependencies
/// are not yet delivered, the flows waiting on each flow (a compressed adjacency list:
/// `dependents[dep_first[f]..dep_first[f + 1]]`), and how many have not ended.
pub(super) struct Flows {
    pub(super) specs: Vec<PostSpec>,
    /// The QP each flow is posted on (`NO_QP`: a SHARP join, done when released).
    pub(super) qp: Vec<QpId>,
    waiting: Vec<u32>,
    dep_first: Vec<u32>,
    dependents: Vec<u32>,
    /// Flows neither completed nor failed.
    pub(super) remaining: usize,
}

impl Flows {
    /// Builds the dependency graph and schedules the post of every flow that waits for
    /// none.
    pub(super) fn new(specs: &[FlowSpec], qp: Vec<QpId>, q: &mut Events) -> Flows {
        let nf = specs.len();
        let mut waiting = vec![0u32; nf];
        let mut dep_first = vec![0u32; nf + 1];
        for (fi, f) in specs.iter().enumerate() {
            waiting[fi] = f.after.len() as u32;
            for &d in &f.after {
                assert!((d as usize) < nf && d as usize != fi, "flow {fi} depends on flow {d}, which does not exist");
                dep_first[d as usize + 1] += 1;
            }
        }
        for i in 0..nf {
            dep_first[i + 1] += dep_first[i];
        }
        let mut dependents = vec![0u32; dep_first[nf] as usize];
        let mut fill = dep_first.clone();
        for (fi, f) in specs.iter().enumerate() {
            for &d in &f.after {
                dependents[fill[d as usize] as usize] = fi as u32;
                fill[d as usize] += 1;
            }
            if f.after.is_empty() {
                q.schedule(f.start, Ev::Post(fi as u32));
            }
        }
        let specs = specs.iter().map(|f| PostSpec { size: f.size, start: f.start, delay: f.delay }).collect();
        Flows { specs, qp, waiting, dep_first, dependents, remaining: nf }
    }

    /// The flows that wait on flow `f`.
    fn dependents_of(&self, f: u32) -> &[u32] {
        &self.dependents[self.dep_first[f as usize] as usize..self.dep_first[f as usize + 1] as usize]
    }
}

impl Sim {
    /// Flow `f`'s data is all at its receiver: release the flows waiting for it.
    pub(super) fn on_delivered(&mut self, now: SimTime, f: u32) {
        self.stats.flows[f as usize].delivered = Some(now.ps());
        let (a, b) = (self.flows.dep_first[f as usize] as usize, self.flows.dep_first[f as usize + 1] as usize);
        for i in a..b {
            let d = self.flows.dependents[i] as usize;
            self.flows.waiting[d] -= 1;
            if self.flows.waiting[d] == 0 {
                let fl = &self.flows.specs[d];
                let at = (now + fl.delay).max(fl.start);
                self.q.schedule(at, Ev::Post(d as u32));
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
            self.flows.remaining -= 1;
            stack.extend_from_slice(self.flows.dependents_of(f));
        }
    }
}
