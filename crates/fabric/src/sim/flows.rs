//! Flows and their dependencies: a flow is posted when every flow it depends on has
//! been delivered (at its start time if that is later), and a flow whose QP failed fails
//! every flow that depends on it, directly or not (collectives are DAGs of flows,
//! `workload`).
//!
//! Model: the dependency graph is held once, as a compressed adjacency list built in two
//! passes over the flows (the [`FlowSource`] may generate them each time; the first pass
//! is shared with the QPs', [`DependencyCounts`]); what a post
//! needs of a flow (size, earliest start) is in its statistics record, so nothing else
//! is kept per flow. Leaves out any time between a dependency's delivery and the post (a
//! GPU's reduction, a launch latency).

use super::*;

/// The flows and their dependency graph: each flow's QP, how many of its dependencies
/// are not yet delivered, the flows waiting on each flow (a compressed adjacency list:
/// `dependents[dep_first[f]..dep_first[f + 1]]`), and how many have not ended.
pub(super) struct Flows {
    /// The QP each flow is posted on (`NO_QP`: a SHARP join, done when released).
    pub(super) qp: Vec<QpId>,
    waiting: Vec<u32>,
    dep_first: Vec<u32>,
    dependents: Vec<u32>,
    /// Flows neither completed nor failed.
    pub(super) remaining: usize,
}

/// The first of the graph's two passes, taken flow by flow while the caller reads the
/// flows for its own needs (the QPs): each flow's number of dependencies, and how many
/// flows depend on each. A collective's flows are generated each time they are read, so
/// sharing the pass saves generating them once more.
pub(super) struct DependencyCounts {
    waiting: Vec<u32>,
    dep_first: Vec<u32>,
}

impl DependencyCounts {
    pub(super) fn new(nf: usize) -> DependencyCounts {
        DependencyCounts { waiting: Vec::with_capacity(nf), dep_first: vec![0u32; nf + 1] }
    }

    /// Counts the next flow, `f`.
    pub(super) fn count(&mut self, f: &FlowSpec) {
        let (fi, nf) = (self.waiting.len(), self.dep_first.len() - 1);
        self.waiting.push(f.after.len() as u32);
        for &d in &f.after {
            assert!((d as usize) < nf && d as usize != fi, "flow {fi} depends on flow {d}, which does not exist");
            self.dep_first[d as usize + 1] += 1;
        }
    }
}

impl Flows {
    /// The graph of `flows`, whose QPs are `qp` and whose dependencies `counts` has
    /// counted, and the post of every flow that waits for none scheduled (in flow order,
    /// at its start). The second pass places each flow among its dependencies'
    /// dependents.
    pub(super) fn new(flows: &dyn FlowSource, counts: DependencyCounts, qp: Vec<QpId>, q: &mut Events) -> Flows {
        let nf = flows.len();
        let DependencyCounts { waiting, mut dep_first } = counts;
        assert_eq!(waiting.len(), nf, "every flow counted");
        for i in 0..nf {
            dep_first[i + 1] += dep_first[i];
        }
        // `dep_first[d]` is d's fill cursor until every dependent is placed; it then
        // holds d + 1's first, and one shift puts each back.
        let mut dependents = vec![0u32; dep_first[nf] as usize];
        let mut fi = 0u32;
        flows.for_each(&mut |f| {
            for &d in &f.after {
                dependents[dep_first[d as usize] as usize] = fi;
                dep_first[d as usize] += 1;
            }
            if f.after.is_empty() {
                q.schedule(f.start, Ev::Post(fi));
            }
            fi += 1;
        });
        dep_first.copy_within(0..nf, 1);
        dep_first[0] = 0;
        Flows { qp, waiting, dep_first, dependents, remaining: nf }
    }

    /// The flows that wait on flow `f`.
    fn dependents_of(&self, f: u32) -> &[u32] {
        &self.dependents[self.dep_first[f as usize] as usize..self.dep_first[f as usize + 1] as usize]
    }
}

impl Sim {
    /// Flow `f`'s data is all at its receiver: release the flows waiting for it.
    pub(super) fn on_delivered(&mut self, now: SimTime, f: u32) {
        self.stats.flows[f as usize].set_delivered(now.ps());
        let (a, b) = (self.flows.dep_first[f as usize] as usize, self.flows.dep_first[f as usize + 1] as usize);
        for i in a..b {
            let d = self.flows.dependents[i] as usize;
            self.flows.waiting[d] -= 1;
            if self.flows.waiting[d] == 0 {
                // Not posted yet: its record's start is still the earliest it may be.
                let at = now.max(SimTime(self.stats.flows[d].start));
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
            if rec.failed() {
                continue;
            }
            rec.set_failed();
            self.flows.remaining -= 1;
            stack.extend_from_slice(self.flows.dependents_of(f));
        }
    }
}
