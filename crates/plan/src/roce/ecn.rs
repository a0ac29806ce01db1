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
    if let Some((lo, hi)) = lowered_below_pfc(kmin, kmax, q_pfc) {
        (kmin, kmax) = (lo, hi);
        reason
            .push_str(&format!("; lowered to Kmax = half the queue at which PFC fires ({q_pfc} B) and Kmin <= Kmax/4, so marking starts well before pausing"));
    }
    EcnPlan { kmin_bytes: kmin, kmax_bytes: kmax, pmax: base.pmax, reason, pfc_queue_bytes: q_pfc, pfc_queue_derivation: why_q }
}

/// The planner's rule for thresholds too close to the PFC point `q_pfc` (the egress queue
/// at which PFC fires, [`super::budget::pfc_point`]): when Kmax reaches half of it, Kmax
/// becomes half of it and Kmin at most a quarter of that, so marking starts well before
/// pausing. `None` when `kmax` is already below half.
pub fn lowered_below_pfc(kmin: u64, kmax: u64, q_pfc: u64) -> Option<(u64, u64)> {
    if kmax < q_pfc / 2 {
        return None;
    }
    let kmax = q_pfc / 2;
    Some((kmin.min(kmax / 4), kmax))
}

/// ECN marking (Kmin..Kmax, bytes of egress queue) against the queue at which PFC fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnVsPfc {
    /// Marking reaches Pmax before PFC fires.
    Before,
    /// Marking starts before PFC fires but never reaches Pmax (Kmin < q_pfc <= Kmax).
    NoPmax,
    /// PFC fires first (Kmin >= q_pfc): DCQCN never hears of the congestion PFC pauses for.
    PfcFirst,
}

/// The planner's `pfc-before-ecn` test, also `verify`'s `ecn-after-pfc`.
pub fn ecn_vs_pfc(kmin: u64, kmax: u64, q_pfc: u64) -> EcnVsPfc {
    if kmin >= q_pfc {
        EcnVsPfc::PfcFirst
    } else if kmax >= q_pfc {
        EcnVsPfc::NoPmax
    } else {
        EcnVsPfc::Before
    }
}
