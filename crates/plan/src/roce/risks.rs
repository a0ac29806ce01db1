//! The risks a reviewer would raise, each evaluated on the operator's settings where given
//! and on the plan's otherwise: headroom short of need, the lossless buffer over budget,
//! ECN thresholds above the PFC point, no PFC watchdog, host-facing ports without storm
//! protection, a cyclic buffer dependency, and mismatched DSCP/priority maps. One function
//! per risk, in the order they are reported.
//!
//! Left out: risks of settings the planner does not take (VLAN PCP maps, per-queue limits).

use serde::Serialize;

use super::ecn::{ecn_vs_pfc, EcnVsPfc};
use super::{Budget, CdgReport, EcnPlan, RoceInput, TierPlan};

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Risk {
    pub id: &'static str,
    pub title: &'static str,
    pub fired: bool,
    /// "operator" when the operator's settings were evaluated, "plan" otherwise.
    pub evaluated: &'static str,
    pub detail: String,
}

/// Every risk, in the order they are reported.
pub(super) fn risks(i: &RoceInput, plans: &[TierPlan], budgets: &[Budget], ecn: &EcnPlan, cdg: &CdgReport) -> Vec<Risk> {
    vec![
        headroom_short(i, plans),
        buffer_over_budget(i, budgets),
        pfc_before_ecn(i, ecn),
        no_pfc_watchdog(i),
        host_storm_protection(i),
        cyclic_buffer_dependency(cdg),
        dscp_risk(i),
    ]
}

/// "operator" when the operator gave the setting a risk looks at, "plan" otherwise.
fn by(given: bool) -> &'static str {
    if given {
        "operator"
    } else {
        "plan"
    }
}

fn headroom_short(i: &RoceInput, plans: &[TierPlan]) -> Risk {
    let op = &i.operator;
    let (fired, detail) = match op.headroom {
        Some(h) => {
            let short: Vec<String> = plans
                .iter()
                .filter(|p| h.0 < p.headroom_bytes)
                .map(|p| format!("{} needs {} B, configured {} B ({} B short)", p.tier, p.headroom_bytes, h.0, p.headroom_bytes - h.0))
                .collect();
            (!short.is_empty(), if short.is_empty() { format!("configured {} B covers every tier", h.0) } else { short.join("; ") })
        }
        None => (false, "the plan's headroom is the need of each tier".into()),
    };
    Risk { id: "headroom-short", title: "headroom short of need", fired, evaluated: by(op.headroom.is_some()), detail }
}

fn buffer_over_budget(i: &RoceInput, budgets: &[Budget]) -> Risk {
    let op = &i.operator;
    let over: Vec<String> = budgets
        .iter()
        .filter(|b| b.reserved_bytes + b.headroom_bytes + b.pool_bytes() >= b.total_bytes)
        .map(|b| {
            let pool = if b.shared_headroom_pool.is_some() { format!(" + shared headroom pool {} B", b.pool_bytes()) } else { String::new() };
            format!("{}: reserved {} B + headroom {} B{pool} >= buffer {} B", b.role, b.reserved_bytes, b.headroom_bytes, b.total_bytes)
        })
        .collect();
    let detail = if over.is_empty() {
        budgets.iter().map(|b| format!("{}: headroom {:.1}% of the buffer", b.role, 100.0 * b.headroom_share)).collect::<Vec<_>>().join("; ")
    } else {
        over.join("; ")
    };
    Risk { id: "buffer-over-budget", title: "lossless buffer over budget", fired: !over.is_empty(), evaluated: by(op.headroom.is_some()), detail }
}

fn pfc_before_ecn(i: &RoceInput, ecn: &EcnPlan) -> Risk {
    let op = &i.operator;
    let (kmin, kmax) = op.ecn.map_or((ecn.kmin_bytes, ecn.kmax_bytes), |r| (r.kmin.0, r.kmax.0));
    let vs = ecn_vs_pfc(kmin, kmax, ecn.pfc_queue_bytes);
    Risk {
        id: "pfc-before-ecn",
        title: "ECN thresholds so high that PFC fires before ECN",
        fired: vs == EcnVsPfc::PfcFirst,
        evaluated: by(op.ecn.is_some()),
        detail: format!(
            "Kmin {kmin} B, Kmax {kmax} B; PFC fires at an egress queue of {} B under the {}:1 incast{}",
            ecn.pfc_queue_bytes,
            i.incast,
            if vs == EcnVsPfc::NoPmax { " (marking never reaches Pmax before pausing)" } else { "" }
        ),
    }
}

fn no_pfc_watchdog(i: &RoceInput) -> Risk {
    let op = &i.operator;
    Risk {
        id: "no-pfc-watchdog",
        title: "no PFC watchdog",
        fired: op.pfc_watchdog == Some(false),
        evaluated: by(op.pfc_watchdog.is_some()),
        detail: match op.pfc_watchdog {
            Some(false) => "a stuck receiver pauses its peer forever and the pause spreads (PFC storm); enable the switch PFC watchdog (SONiC pfcwd)".into(),
            Some(true) => "PFC watchdog on".into(),
            None => "plan: enable the PFC watchdog on every lossless port (SONiC `pfcwd start_default`: detection 200 ms, restoration 200 ms, action drop, \
                     times scaled up per 32 ports; sonic-utilities pfcwd/main.py). `fabriclab run` models it: `[roce.pfc] watchdog`, examples/roce-pfc-storm.toml"
                .into(),
        },
    }
}

fn host_storm_protection(i: &RoceInput) -> Risk {
    let op = &i.operator;
    Risk {
        id: "host-storm-protection",
        title: "lossless class on host-facing ports without storm protection",
        fired: op.storm_protection == Some(false),
        evaluated: by(op.storm_protection.is_some()),
        detail: match op.storm_protection {
            Some(false) => format!(
                "{} lossless priorit{} on host-facing ports with no storm protection: one hung NIC can pause the leaf",
                i.lossless_priorities,
                if i.lossless_priorities == 1 { "y" } else { "ies" }
            ),
            Some(true) => "storm protection on host-facing ports".into(),
            None => "plan: enable NIC pause-storm prevention and the switch watchdog on host-facing ports".into(),
        },
    }
}

fn cyclic_buffer_dependency(cdg: &CdgReport) -> Risk {
    let fired = cdg.intact_cycle.is_some() || !cdg.failures_with_cycle.is_empty();
    let detail = match (&cdg.intact_cycle, cdg.failures_with_cycle.first()) {
        (Some(c), _) => format!("the intact fabric's routes have a cycle: {}", c.join(" => ")),
        (None, Some((f, c))) => {
            format!("{} of {} single link failures leave a cycle, e.g. with {f} down: {}", cdg.failures_with_cycle.len(), cdg.failures_checked, c.join(" => "))
        }
        (None, None) if cdg.by_symmetry => format!(
            "no cycle: intact and after a single failure of each class of switch-to-switch link ({} checked of {}; the Clos is symmetric within a class)",
            cdg.failures_checked, cdg.links
        ),
        (None, None) => format!("no cycle: intact and after each of the {} single switch-to-switch link failures", cdg.failures_checked),
    };
    Risk { id: "cyclic-buffer-dependency", title: "cyclic buffer dependency possible", fired, evaluated: "plan", detail }
}

fn dscp_risk(i: &RoceInput) -> Risk {
    let op = &i.operator;
    let given = op.switch_dscp_map.is_some() || op.nic_dscp_map.is_some() || op.lossless.is_some();
    let mut problems = vec![];
    let lossless = op.lossless.clone().unwrap_or_else(|| (3..3 + i.lossless_priorities).collect());
    if let Some(l) = &op.lossless {
        if l.len() != i.lossless_priorities as usize {
            problems.push(format!("{} lossless priorities configured, {} planned", l.len(), i.lossless_priorities));
        }
    }
    for (what, d) in [("RoCE data", op.roce_dscp), ("CNP", op.cnp_dscp)] {
        let sw = op.switch_dscp_map.as_ref().map(|m| m.get(&d).copied());
        let nic = op.nic_dscp_map.as_ref().map(|m| m.get(&d).copied());
        match (sw, nic) {
            (Some(a), Some(b)) if a != b => {
                let p = |x: Option<u8>| x.map_or("none".to_string(), |v| v.to_string());
                problems.push(format!("{what} DSCP {d}: switch priority {}, NIC priority {}", p(a), p(b)))
            }
            _ => {}
        }
        if what == "RoCE data" {
            match sw {
                Some(None) => problems.push(format!("the switch map has no entry for RoCE DSCP {d} (it lands in the default, lossy class)")),
                Some(Some(p)) if !lossless.contains(&p) => problems.push(format!("RoCE DSCP {d} maps to priority {p}, which is not lossless ({lossless:?})")),
                _ => {}
            }
        }
    }
    Risk {
        id: "dscp-map-mismatch",
        title: "mismatched priority/DSCP maps",
        fired: !problems.is_empty(),
        evaluated: if given { "operator" } else { "plan" },
        detail: if problems.is_empty() {
            if given {
                format!("RoCE DSCP {} and CNP DSCP {} map alike on switch and NIC; RoCE is lossless", op.roce_dscp, op.cnp_dscp)
            } else {
                format!("plan: DSCP {} -> priority 3 (lossless) and CNP DSCP {} -> priority 6 on switch and NIC alike", op.roce_dscp, op.cnp_dscp)
            }
        } else {
            problems.join("; ")
        },
    }
}
