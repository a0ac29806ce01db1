//! Flows and their dependencies: a flow is posted when every flow it depends on has
//! been delivered (at its start time if that is later), and a flow whose QP failed fails
//! every flow that depends on it, directly or not (collectives are DAGs of flows,
//! `workload`).
//!
//! Model: the dependency graph is built as the run goes, from the source's parts
//! ([`FlowPart`]), and holds per part a window of 12-byte slots, from the oldest flow
//! neither delivered nor failed to the last handed out. A flow handed out is posted at
//! its start if it depends on nothing (only while the simulator is built: a part is
//! generated then until no flow to come may depend on nothing), fails at once if a flow
//! it depends on failed, and otherwise waits, counted, on its dependencies not yet
//! delivered, each of which lists the flows waiting on it, in flow order. Before a flow
//! is delivered or fails, its part is generated until no flow to come may depend on it,
//! so every flow waiting on it is known; a collective of millions of transfers holds
//! the few steps around the ones in flight. What a post needs of a flow (size, earliest
//! start) is in its statistics record. Leaves out any time between a dependency's
//! delivery and the post (a GPU's reduction, a launch latency).

use super::*;
use std::collections::{HashMap, VecDeque};

/// The flows and the part of their dependency graph that is held: each flow's QP, the
/// parts still to generate and, per part, the window of flows from its oldest not yet
/// delivered (nor failed) to the last handed out; and how many flows have not ended.
pub(super) struct Flows {
    /// The QP each flow is posted on (`NO_QP`: a SHARP join, done when released).
    pub(super) qp: Vec<QpId>,
    parts: Vec<Box<dyn FlowPart>>,
    /// Per part: its first flow, and its window.
    part_first: Vec<u32>,
    windows: Vec<Window>,
    /// The flows waiting on a flow past the two its slot holds, in flow order.
    more_dependents: HashMap<u32, Vec<u32>>,
    /// The stage being taken in: each flow's dependencies' span in `stage_deps` (kept to
    /// reuse their memory).
    stage: Vec<(u32, u32)>,
    stage_deps: Vec<u32>,
    /// Flows neither completed nor failed.
    pub(super) remaining: usize,
}

/// A part's flows `base..base + slots.len()`: every flow handed out but those before
/// the oldest not yet delivered nor failed (which nothing can wait on any more).
struct Window {
    base: u32,
    slots: VecDeque<Slot>,
}

/// A held flow: how many of its dependencies are not yet delivered (0 once it is
/// released), and the first two flows waiting on it, in flow order (`NONE`: no more).
#[derive(Clone, Copy)]
pub(super) struct Slot {
    waiting: u32,
    dependents: [u32; 2],
}

impl Window {
    fn slot(&mut self, f: u32) -> &mut Slot {
        &mut self.slots[(f - self.base) as usize]
    }

    /// The next flow the part hands out.
    fn next(&self) -> u32 {
        self.base + self.slots.len() as u32
    }
}

impl Flows {
    /// The flows of `source`, whose QPs are `qp` and whose records are in `stats`: each
    /// part generated until no flow to come may depend on nothing, and the flows that
    /// depend on nothing scheduled to post (in flow order, at their start).
    pub(super) fn new(source: std::sync::Arc<dyn FlowSource>, qp: Vec<QpId>, stats: &mut Stats, q: &mut Events) -> Flows {
        let nf = source.len();
        let parts = source.parts();
        let part_first: Vec<u32> = parts.iter().map(|p| p.range().start).collect();
        let mut end = 0;
        for p in &parts {
            assert_eq!(p.range().start, end, "the flow source's parts cover its flows in order");
            end = p.range().end;
        }
        assert_eq!(end as usize, nf, "the flow source's parts cover its flows");
        let windows = part_first.iter().map(|&base| Window { base, slots: VecDeque::new() }).collect();
        let mut flows = Flows { qp, parts, part_first, windows, more_dependents: HashMap::new(), stage: vec![], stage_deps: vec![], remaining: nf };
        let mut failing = vec![];
        for i in 0..flows.parts.len() {
            while flows.parts[i].free_ahead() && flows.take_stage(i, stats, q, &mut failing) {}
        }
        assert!(failing.is_empty(), "no flow has failed yet");
        flows
    }

    /// The part flow `f` is in.
    fn part_of(&self, f: u32) -> usize {
        self.part_first.partition_point(|&first| first <= f) - 1
    }

    /// Takes in part `i`'s next stage (see [`Flows::admit`]); `false` when it had none.
    fn take_stage(&mut self, i: usize, stats: &mut Stats, q: &mut Events, failing: &mut Vec<u32>) -> bool {
        let Flows { parts, stage, stage_deps, .. } = self;
        stage.clear();
        stage_deps.clear();
        let more = parts[i].next_stage(&mut |f| {
            let a = stage_deps.len() as u32;
            stage_deps.extend_from_slice(&f.after);
            stage.push((a, stage_deps.len() as u32));
        });
        for k in 0..self.stage.len() {
            let (a, b) = self.stage[k];
            self.admit(i, a as usize..b as usize, stats, q, failing);
        }
        more
    }

    /// Takes in part `i`'s next flow, handed out with dependencies `stage_deps[deps]`:
    /// schedules its post at its start if it depends on nothing, pushes it on `failing`
    /// if a flow it depends on failed, and otherwise counts it waiting on its
    /// dependencies not yet delivered.
    fn admit(&mut self, i: usize, deps: std::ops::Range<usize>, stats: &Stats, q: &mut Events, failing: &mut Vec<u32>) {
        let (first, fi) = (self.part_first[i], self.windows[i].next());
        let (mut wait, mut failed) = (0, false);
        for &d in &self.stage_deps[deps.clone()] {
            assert!(first <= d && d < fi, "flow {fi} depends on flow {d}, which is not an earlier flow of its part");
            let r = &stats.flows[d as usize];
            failed |= r.failed();
            wait += u32::from(r.delivered().is_none());
        }
        self.windows[i].slots.push_back(Slot { waiting: 0, dependents: [NONE; 2] });
        let start = SimTime(stats.flows[fi as usize].start);
        if failed {
            failing.push(fi);
        } else if deps.is_empty() {
            assert!(start >= q.now(), "flow {fi}, which depends on nothing, was handed out after its start");
            q.schedule(start, Ev::Post(fi));
        } else {
            assert!(wait > 0, "flow {fi} was handed out after its last dependency was delivered");
            self.windows[i].slot(fi).waiting = wait;
            for k in deps {
                let d = self.stage_deps[k];
                if stats.flows[d as usize].delivered().is_some() {
                    continue;
                }
                let slot = self.windows[i].slot(d);
                match slot.dependents.iter().position(|&x| x == NONE) {
                    Some(j) => slot.dependents[j] = fi,
                    None => self.more_dependents.entry(d).or_default().push(fi),
                }
            }
        }
    }

    /// The flows waiting on flow `f` of part `i` (taken: `f` is delivered or failed), in
    /// flow order; none if `f` has left its window. They are of part `i` too.
    fn take_dependents(&mut self, i: usize, f: u32) -> impl Iterator<Item = u32> {
        let w = &mut self.windows[i];
        let first_two = if f >= w.base { std::mem::replace(&mut w.slot(f).dependents, [NONE; 2]) } else { [NONE; 2] };
        let more = if first_two[1] != NONE { self.more_dependents.remove(&f).unwrap_or_default() } else { vec![] };
        first_two.into_iter().filter(|&d| d != NONE).chain(more)
    }

    /// Drops from part `i`'s window the flows at its front that are delivered or failed.
    fn trim(&mut self, i: usize, stats: &Stats) {
        let w = &mut self.windows[i];
        while !w.slots.is_empty() && {
            let r = &stats.flows[w.base as usize];
            r.delivered().is_some() || r.failed()
        } {
            w.slots.pop_front();
            w.base += 1;
        }
    }
}

impl Sim {
    /// What the dependency graph holds: how many flows the parts have handed out so far,
    /// and how many of those are waiting on a dependency.
    pub fn flows_held(&self) -> (u64, usize) {
        let f = &self.flows;
        let handed = f.windows.iter().zip(&f.part_first).map(|(w, first)| (w.next() - first) as u64).sum();
        (handed, f.windows.iter().flat_map(|w| &w.slots).filter(|s| s.waiting > 0).count())
    }

    /// Generates part `i`, flow `f`'s, until no flow to come may depend on `f` (flows
    /// handed out that depend on a failed flow are pushed on `failing`).
    fn generate_past(&mut self, i: usize, f: u32, failing: &mut Vec<u32>) {
        while self.flows.parts[i].low_water() <= f && self.flows.take_stage(i, &mut self.stats, &mut self.q, failing) {}
    }

    /// Flow `f`'s data is all at its receiver: release the flows waiting for it.
    pub(super) fn on_delivered(&mut self, now: SimTime, f: u32) {
        let (i, mut failing) = (self.flows.part_of(f), vec![]);
        self.generate_past(i, f, &mut failing);
        self.stats.flows[f as usize].set_delivered(now.ps());
        for d in self.flows.take_dependents(i, f) {
            // A flow that failed meanwhile waits no more.
            if self.stats.flows[d as usize].failed() {
                continue;
            }
            let slot = self.flows.windows[i].slot(d);
            slot.waiting -= 1;
            if slot.waiting == 0 {
                // Not posted yet: its record's start is still the earliest it may be.
                let at = now.max(SimTime(self.stats.flows[d as usize].start));
                self.q.schedule(at, Ev::Post(d));
            }
        }
        self.flows.trim(i, &self.stats);
        if !failing.is_empty() {
            self.fail_flows(&failing);
        }
    }

    /// Marks flows failed (their QP went to the error state), and every flow that depends
    /// on them, directly or not: those will never be posted. A flow already delivered
    /// has released the flows waiting on it; they go on.
    pub(super) fn fail_flows(&mut self, failed: &[u32]) {
        let mut stack = failed.to_vec();
        while let Some(f) = stack.pop() {
            let rec = &mut self.stats.flows[f as usize];
            if rec.failed() {
                continue;
            }
            rec.set_failed();
            self.flows.remaining -= 1;
            let i = self.flows.part_of(f);
            self.generate_past(i, f, &mut stack);
            stack.extend(self.flows.take_dependents(i, f));
            self.flows.trim(i, &self.stats);
        }
    }
}
