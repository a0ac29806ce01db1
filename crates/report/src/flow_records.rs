//! The report's per-flow records ([`FlowRecords`]): every flow's completion (barriers
//! left out), held in 40 bytes a flow and read as [`FlowReport`]s, which `run --json`
//! prints one by one.
//!
//! Model: a row keeps what is measured (endpoints as indices, size, start, completion
//! time, the ideal time, failure); the endpoints' names are shared and the slowdown is
//! derived on reading (completion over ideal, by the same division the summaries use),
//! so a [`FlowReport`] read back is the one a held record would be. allreduce1024's
//! 2.1 M flows take 84 MB instead of 201 MB. Leaves out the figures' definitions
//! ([`build`](fn@crate::build)).

use std::sync::Arc;

use serde::ser::SerializeSeq;
use serde::Serialize;

use crate::types::{EndpointName, FlowReport};

/// Every flow's record, in flow order.
#[derive(Clone, Debug, Default)]
pub struct FlowRecords {
    /// Each endpoint's name.
    names: Arc<[EndpointName]>,
    rows: Vec<Row>,
}

/// One flow: 40 bytes, pinned below.
#[derive(Clone, Copy, Debug)]
struct Row {
    /// Its flow index (below 2^29, the simulator's event encoding, so bit 31 is free)
    /// and, in bit 31, whether it failed.
    flow_failed: u32,
    src: u32,
    dst: u32,
    /// Bytes: an RDMA message is at most 2^31.
    size: u32,
    start_ps: u64,
    /// [`NOT_DONE`] when it did not complete.
    fct_ps: u64,
    ideal_ps: u64,
}

/// A row's size (the memory estimate counts it, `scenario::estimate::REPORT_BYTES_PER_FLOW`).
pub(crate) const ROW_BYTES: usize = std::mem::size_of::<Row>();
const _: () = assert!(ROW_BYTES == 40);

const FAILED: u32 = 1 << 31;
const NOT_DONE: u64 = u64::MAX;

/// A record's figures, as [`FlowRecords::figures`] reads them.
pub(crate) struct Figures {
    pub flow: u32,
    pub size: u64,
    pub start_ps: u64,
    pub fct_ps: Option<u64>,
    pub slowdown: Option<f64>,
    pub failed: bool,
}

/// What [`FlowRecords::push`] is given: one flow's measured figures.
pub(crate) struct FlowRow {
    pub flow: u32,
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub start_ps: u64,
    pub fct_ps: Option<u64>,
    pub ideal_ps: u64,
    pub failed: bool,
}

impl FlowRecords {
    /// No records yet, for `flows` flows between endpoints named `names`.
    pub(crate) fn new(names: Vec<EndpointName>, flows: usize) -> FlowRecords {
        FlowRecords { names: names.into(), rows: Vec::with_capacity(flows) }
    }

    pub(crate) fn push(&mut self, r: FlowRow) {
        assert!(r.flow < FAILED, "flow indices are below 2^29");
        self.rows.push(Row {
            flow_failed: r.flow | if r.failed { FAILED } else { 0 },
            src: r.src,
            dst: r.dst,
            size: u32::try_from(r.size).expect("an RDMA message is at most 2^31 bytes"),
            start_ps: r.start_ps,
            fct_ps: r.fct_ps.unwrap_or(NOT_DONE),
            ideal_ps: r.ideal_ps,
        });
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Record `i` (in flow order, barriers left out; not flow index `i`).
    pub fn get(&self, i: usize) -> Option<FlowReport> {
        self.rows.get(i).map(|r| self.report(r))
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = FlowReport> + '_ {
        self.rows.iter().map(|r| self.report(r))
    }

    /// Each record's figures without its endpoints' names: what the summaries read.
    pub(crate) fn figures(&self) -> impl Iterator<Item = Figures> + '_ {
        self.rows.iter().map(figures)
    }

    fn report(&self, r: &Row) -> FlowReport {
        let f = figures(r);
        FlowReport {
            flow: f.flow,
            src: self.names[r.src as usize].clone(),
            dst: self.names[r.dst as usize].clone(),
            size_bytes: f.size,
            start_ps: f.start_ps,
            fct_ps: f.fct_ps,
            ideal_ps: r.ideal_ps,
            slowdown: f.slowdown,
            failed: f.failed,
        }
    }
}

/// A row's figures, decoded.
fn figures(r: &Row) -> Figures {
    let fct_ps = (r.fct_ps != NOT_DONE).then_some(r.fct_ps);
    Figures {
        flow: r.flow_failed & !FAILED,
        size: r.size as u64,
        start_ps: r.start_ps,
        fct_ps,
        // Completion time over the ideal time (0 when there is no ideal: no path).
        slowdown: fct_ps.map(|x| if r.ideal_ps > 0 { x as f64 / r.ideal_ps as f64 } else { 0.0 }),
        failed: r.flow_failed & FAILED != 0,
    }
}

/// As the list of [`FlowReport`]s it holds, each made as it is written.
impl Serialize for FlowRecords {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.rows.len()))?;
        for r in &self.rows {
            seq.serialize_element(&self.report(r))?;
        }
        seq.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back_as_pushed() {
        let mut recs = FlowRecords::new(vec![EndpointName::new("h0"), EndpointName::new("h1")], 2);
        recs.push(FlowRow { flow: 3, src: 1, dst: 0, size: 1 << 31, start_ps: 5, fct_ps: Some(300), ideal_ps: 200, failed: false });
        recs.push(FlowRow { flow: 4, src: 0, dst: 1, size: 7, start_ps: 6, fct_ps: None, ideal_ps: 0, failed: true });
        let a = recs.get(0).unwrap();
        assert_eq!(
            (a.flow, &*a.src, &*a.dst, a.size_bytes, a.start_ps, a.fct_ps, a.ideal_ps, a.slowdown, a.failed),
            (3, "h1", "h0", 1 << 31, 5, Some(300), 200, Some(1.5), false)
        );
        let b = recs.get(1).unwrap();
        assert_eq!((b.flow, b.size_bytes, b.fct_ps, b.slowdown, b.failed), (4, 7, None, None, true));
        assert_eq!(recs.figures().map(|f| f.size).collect::<Vec<_>>(), [1 << 31, 7]);
        let json = serde_json::to_string(&recs).unwrap();
        assert_eq!(json, serde_json::to_string(&vec![a, b]).unwrap());
    }
}
