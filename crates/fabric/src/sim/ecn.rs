//! ECN marking at a RoCEv2 switch egress (RFC 3168 CE) by the RED rule on the
//! instantaneous queue (`model::ecn::Red`), when a packet joins the queue or when it
//! leaves it (`EcnMarking`), with one random stream per port.
//!
//! The measured marking curve (arrivals and marks per queue-length bin,
//! `PortStats::ecn_seen` and `ecn_marked_bins`) is counted only when asked
//! ([`Sim::record_ecn_curve`]): no report shows it, and its count was a cache line of
//! its own per marked-class packet, 4 % of the 8,192-host DCQCN run (docs/speed.md).
//!
//! Leaves out: marking on the average queue (RED's EWMA; data-centre switches mark on
//! the instantaneous queue), and per-flow or per-port-group marking variants.

use super::*;

/// The marking draws: one random stream per egress port.
pub(super) struct EcnMarker {
    rng: Vec<Rng>,
    /// Count the marking curve per port.
    pub(super) curve: bool,
}

impl EcnMarker {
    pub(super) fn new(np: usize, seed: u64) -> EcnMarker {
        EcnMarker { rng: (0..np as u64).map(|i| Rng::new(seed, engine::stream::ECN_MARKING + i)).collect(), curve: false }
    }
}

impl Sim {
    /// Counts each port's ECN marking curve (`PortStats::ecn_seen`, `ecn_marked_bins`)
    /// from now on. Changes no other number: the marking draws are the same either way.
    pub fn record_ecn_curve(&mut self) {
        self.ecn.curve = true;
    }

    /// ECN at egress by the RED rule on the instantaneous queue of (`port`, `tc`): the
    /// queue the packet joins (enqueue marking) or leaves behind (dequeue marking).
    pub(super) fn ecn_mark(&mut self, port: PortId, tc: usize, id: u32) {
        let pi = port.index();
        let Some(red) = self.p.ecn[tc] else { return };
        let p = &self.pkts[id as usize];
        if !p.has(ECN_CAPABLE) || p.has(CE) {
            return;
        }
        let qlen = Bytes(self.cls[pi * 8 + tc].qbytes);
        let prob = red.mark_probability(qlen);
        let marked = prob > 0.0 && (prob >= 1.0 || self.ecn.rng[pi].f64() < prob);
        if marked {
            self.pkts[id as usize].flags |= CE;
            self.stats.ports[pi].ecn_marked += 1;
        }
        if self.ecn.curve {
            let bin = crate::stats::ecn_bin(qlen, red.kmax);
            let st = &mut self.stats.ports[pi];
            st.ecn_seen[bin] += 1;
            st.ecn_marked_bins[bin] += u64::from(marked);
        }
    }
}
