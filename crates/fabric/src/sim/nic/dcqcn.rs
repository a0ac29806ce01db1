//! The DCQCN reaction point's glue to the simulator: a CNP reaching a QP, the timers and
//! deferred cuts the state machine (`crate::dcqcn`) asks for, and re-timing a paced send
//! when the rate changes. The rules and their sources are `model::dcqcn`'s.

use super::super::*;

impl Sim {
    /// DCQCN reaction point: a CNP (or a CNP-flagged ACK) reached QP `qpi`'s requester.
    pub(in crate::sim) fn dcqcn_cnp(&mut self, now: SimTime, qpi: QpId) {
        let Some((_, d)) = self.p.dcqcn.as_ref() else { return };
        let d = *d;
        if let Some(cc) = self.hosts.qps[qpi.index()].cc.as_mut() {
            let arm = cc.on_cnp(now.ps(), &d);
            self.dcqcn_arm(now, qpi, arm);
        }
    }

    /// Carries out what the DCQCN state machine of QP `qpi` asked for.
    pub(in crate::sim) fn dcqcn_arm(&mut self, now: SimTime, qpi: QpId, arm: crate::dcqcn::Arm) {
        if let Some(t) = arm.rate_timer {
            // The timer restarts from each cut; older events are stale.
            let q = &mut self.hosts.qps[qpi.index()];
            q.rate_gen += 1;
            let gen = q.rate_gen;
            self.q.schedule(now + t, Ev::RateTimer { qp: qpi, gen });
        }
        if let Some(at) = arm.cut_at {
            self.q.schedule(SimTime(at), Ev::RateCut(qpi));
        }
        if arm.rate_changed {
            self.dcqcn_rate_changed(now, qpi);
        }
    }

    /// QP `qpi`'s DCQCN rate changed: under `retime`, its pending send moves to the last
    /// frame's start plus that frame at the new rate (the rate limiter's gap, recomputed),
    /// and the NIC looks again if that is earlier than the old time. Without `retime`
    /// (ns-3) the gap fixed at the last send stands.
    pub(in crate::sim) fn dcqcn_rate_changed(&mut self, now: SimTime, qpi: QpId) {
        let Some((_, d)) = self.p.dcqcn.as_ref() else { return };
        if !d.retime {
            return;
        }
        let qp = &mut self.hosts.qps[qpi.index()];
        let (Some(cc), true) = (qp.cc.as_ref(), qp.last_tx != NEVER) else { return };
        let line = self.hosts.nics[qp.src as usize].line_bps;
        let old = qp.next_tx;
        qp.next_tx = SimTime(paced_next_tx(qp.last_tx.ps(), qp.last_wire, cc.rate_bps(), line));
        if qp.active && qp.next_tx < old {
            let (port, at) = (self.hosts.nics[qp.src as usize].port, qp.next_tx.max(now));
            self.kick_at(port, at);
        }
    }
}
