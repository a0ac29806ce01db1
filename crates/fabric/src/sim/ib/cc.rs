//! InfiniBand congestion control at the switch (IBTA Vol. 1 Annex A10.2.1): FECN on
//! every `marking_rate`-th eligible packet entering an output VL queue at or above the
//! threshold, only at the root of congestion unless victim marking is on. The HCA's
//! reaction (BECN, CCT index, CCTI timer) is `crate::ibcc`.

use super::*;

impl Sim {
    /// IB CC (Annex A10.2.1): FECN on every `marking_rate`-th eligible packet entering an
    /// output VL queue at or above the threshold.
    pub(in crate::sim) fn fecn_mark(&mut self, port: PortId, id: u32) {
        let Some(cc) = self.p.ib.as_ref().and_then(|i| i.cc.as_ref()) else { return };
        let pk = self.pkts[id as usize];
        if pk.kind != Kind::Data || (pk.frame as u64) < cc.packet_size_bytes {
            return;
        }
        let pi = port.index();
        if self.cls[pi * 8 + pk.tc as usize].qbytes < cc.threshold_bytes {
            return;
        }
        // Only the root of congestion marks: a port that has credits (A10.2.1.1). A port
        // waiting for credits is a victim of congestion further on and marks only when its
        // victim-mask bit is set (OpenSM's default mask is all zero).
        if !cc.mark_victims && self.may_send(port, pk.tc as usize, pk.frame as u32, SimTime::ZERO).is_err() {
            return;
        }
        let ib = self.ib.as_mut().expect("ib");
        ib.fecn_count[pi] += 1;
        if ib.fecn_count[pi] >= cc.marking_rate.max(1) {
            ib.fecn_count[pi] = 0;
            self.pkts[id as usize].flags |= CE;
            self.stats.ports[pi].ecn_marked += 1;
        }
    }
}
