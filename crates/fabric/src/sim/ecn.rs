//! ECN marking at a RoCEv2 switch egress (RFC 3168 CE) by the RED rule on the
//! instantaneous queue (`model::ecn::Red`), when a packet joins the queue or when it
//! leaves it (`EcnMarking`), with one random stream per port.
//!
//! Leaves out: marking on the average queue (RED's EWMA; data-centre switches mark on
//! the instantaneous queue), and per-flow or per-port-group marking variants.

use super::*;

/// The marking draws: one random stream per egress port.
pub(super) struct EcnMarker {
    rng: Vec<Rng>,
}

impl EcnMarker {
    pub(super) fn new(np: usize, seed: u64) -> EcnMarker {
        EcnMarker { rng: (0..np as u64).map(|i| Rng::new(seed, engine::stream::ECN_MARKING + i)).collect() }
    }
}

impl Sim {
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
        let bin = crate::stats::ecn_bin(qlen, red.kmax);
        let st = &mut self.stats.ports[pi];
        st.ecn_seen[bin] += 1;
        if prob > 0.0 && (prob >= 1.0 || self.ecn.rng[pi].f64() < prob) {
            self.pkts[id as usize].flags |= CE;
            st.ecn_marked += 1;
            st.ecn_marked_bins[bin] += 1;
        }
    }
}
