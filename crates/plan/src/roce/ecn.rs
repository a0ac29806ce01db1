//! ECN thresholds for the lossless queue: HPCC's published DCQCN setting scaled to the
//! host link speed ([`model::ecn::hpcc_thresholds`]), lowered when needed so marking starts
//! well before the queue at which PFC fires.
//!
//! Left out: per-queue tuning beyond that rule, and WRED profiles of other classes.

use model::ecn::hpcc_thresholds;
use serde::Serialize;

use super::RoceInput;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EcnPlan {
    pub kmin_bytes: u64,
    pub kmax_bytes: u64,
    pub pmax: f64,
    pub reason: String,
    /// Egress queue (frame bytes) at which the worst incast's ingress PGs reach their
    /// dynamic threshold and PFC fires.
    pub pfc_queue_bytes: u64,
    pub pfc_queue_derivation: String,
}

pub(super) fn ecn_plan(i: &RoceInput, q_pfc: u64, why_q: String) -> EcnPlan {
    let host = i.tiers[0].speed;
    let gbps = (host.0 / 1_000_000_000).max(1);
    let base = hpcc_thresholds(gbps);
    let (mut kmin, mut kmax) = (base.kmin.0, base.kmax.0);
    let mut reason = format!(
        "HPCC's published DCQCN setting scaled to {gbps} Gb/s host links: Kmin 4 KB and Kmax 16 KB per Gb/s, Pmax 0.2 \
         (Li et al., SIGCOMM 2019, mix/config.txt; model::ecn::hpcc_thresholds)"
    );
    if kmax >= q_pfc / 2 {
        kmax = q_pfc / 2;
        kmin = kmin.min(kmax / 4);
        reason
            .push_str(&format!("; lowered to Kmax = half the queue at which PFC fires ({q_pfc} B) and Kmin <= Kmax/4, so marking starts well before pausing"));
    }
    EcnPlan { kmin_bytes: kmin, kmax_bytes: kmax, pmax: base.pmax, reason, pfc_queue_bytes: q_pfc, pfc_queue_derivation: why_q }
}
