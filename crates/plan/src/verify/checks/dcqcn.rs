//! The NICs' DCQCN parameters (`[roce_rp]`, `[roce_np]` of `--nic` files, read from
//! `/sys/class/net/<if>/ecn/roce_rp|roce_np/`): the same on every NIC, rates consistent with
//! the port's speed, and a notification point quick enough that a sender can slow down
//! before PFC fires.
//!
//! * `nic-dcqcn-mismatch`: DCQCN's fairness rests on every reaction point running the same
//!   algorithm with the same parameters (Zhu et al., SIGCOMM 2015, §4: the fluid model and
//!   its fixed point are derived for N flows with identical g, R_AI, timers); a NIC with a
//!   larger R_AI, a shorter timer or a smaller cut takes more than its share from the others
//!   on the same bottleneck.
//! * `nic-dcqcn-rates`: `rpg_max_rate` (Mb/s, 0 = full speed) is where the reaction point
//!   stops rate limiting a QP: "Maximum rate at which reaction point node can transmit. Once
//!   this limit is reached, RP is no longer rate limited" (linux-rdma patch "IB/mlx5: Add
//!   np_min_time_between_cnps and rp_max_rate debug params", Parav Pandit, 2020-03-03). Below
//!   the port's speed, a recovering QP jumps from that rate to line rate. `rpg_min_rate` and
//!   `rate_to_set_on_first_cnp` must not exceed line rate (NVIDIA DOCA 3.4 "DCQCN CC
//!   Parameters": values "1…line rate" and "0, 1…line rate").
//! * `nic-cnp-interval`: the notification point sends at most one CNP per
//!   `min_time_between_cnps` µs from the port ([`model::dcqcn::CnpScope::Port`]), and the
//!   reaction point cuts at most once per `rate_reduce_monitor_period` µs, deferring a CNP
//!   inside it ([`model::dcqcn::ReduceTiming::Deferred`]). So a sender's first cut can come
//!   N + M after the first mark, wire and queueing delay aside. A 2:1 incast at line rate C
//!   fills the egress queue facing this NIC from ECN's Kmin to the PFC point P in
//!   (P − Kmin)/C. P is `ecn-after-pfc`'s upper bound ([`super::ecn::marking_vs_pfc`]) and a
//!   2:1 incast the slowest fill, so when N + M ≥ (P − Kmin)/C, PFC can fire before DCQCN
//!   acts on any incast through the port. The NIC is the notification point of traffic to it
//!   and its own `rate_reduce_monitor_period` stands for its senders' (the mismatch check
//!   covers senders that differ); an absent value is NVIDIA's default
//!   ([`model::dcqcn::NVIDIA_FIRMWARE`]).
//!
//! Left out: α's gain and period against the CNP interval, the increase timers against the
//! RTT, and fairness between QPs of one NIC.

use model::dcqcn::NVIDIA_FIRMWARE;
use serde_json::Value;

use super::ecn::{marking_vs_pfc, queues};
use super::headroom::pg_keys;
use super::*;

/// `[roce_rp]` and `[roce_np]` of a NIC as `("roce_rp.<name>", value)` pairs, set fields only.
fn dcqcn_fields(nic: &NicConfig) -> Vec<(String, u64)> {
    let mut out = vec![];
    for (section, v) in [("roce_rp", serde_json::to_value(&nic.roce_rp)), ("roce_np", serde_json::to_value(&nic.roce_np))] {
        let Ok(Value::Object(m)) = v else { continue };
        out.extend(m.into_iter().filter_map(|(k, v)| v.as_u64().map(|x| (format!("{section}.{k}"), x))));
    }
    out
}

/// `nic-dcqcn-mismatch`: every DCQCN field set by two or more NIC files must agree; each
/// file that differs from the most common value (the first file's on a tie) is flagged there.
pub(super) fn dcqcn_mismatch(nics: &[(String, NicConfig)], found: &mut Vec<Finding>) {
    let mut by_field: BTreeMap<String, Vec<(usize, u64)>> = BTreeMap::new();
    for (i, (_, nic)) in nics.iter().enumerate() {
        for (field, v) in dcqcn_fields(nic) {
            by_field.entry(field).or_default().push((i, v));
        }
    }
    for (field, vals) in by_field {
        let mut count: Vec<(u64, usize, usize)> = vec![]; // value, files, first file
        for &(i, v) in &vals {
            match count.iter_mut().find(|c| c.0 == v) {
                Some(c) => c.1 += 1,
                None => count.push((v, 1, i)),
            }
        }
        if count.len() < 2 {
            continue;
        }
        let (common, n_common, _) = *count.iter().max_by(|a, b| a.1.cmp(&b.1).then(b.2.cmp(&a.2))).expect("two values");
        for &(i, v) in vals.iter().filter(|(_, v)| *v != common) {
            let (file, nic) = &nics[i];
            found.push(Finding {
                severity: Severity::Warning,
                id: "nic-dcqcn-mismatch",
                switch: nic.switch.clone(),
                place: Place { file: file.clone(), path: field.clone() },
                ports: vec![nic.port.clone()],
                what: format!("{field} is {v} here and {common} on {n_common} of the {} NIC files that set it", vals.len()),
                failure: "DCQCN converges to a fair share only when every sender reacts alike: on a shared bottleneck this NIC takes more or less than its share, and the unfair flows keep the queue near the PFC point".into(),
                fix: format!("{field} = {common} (/sys/class/net/<if>/ecn/{}), as on the other NICs", field.replace('.', "/")),
            });
        }
    }
}

/// `nic-dcqcn-rates`: the NIC's rate parameters against its switch port's `speed` (Mb/s).
pub(super) fn dcqcn_rates(sw: &Switch, file: &str, nic: &NicConfig, found: &mut Vec<Finding>) -> Result<(), ReadError> {
    let (Some(rp), Some(speed)) = (&nic.roce_rp, sw.field("PORT", &nic.port, "speed")) else { return Ok(()) };
    let line = num(sw, "PORT", &nic.port, "speed", speed)?;
    let mut push = |severity, field: &str, what: String, failure: &str, fix: String| {
        found.push(Finding {
            severity,
            id: "nic-dcqcn-rates",
            switch: sw.name().to_string(),
            place: Place { file: file.to_string(), path: format!("roce_rp.{field}") },
            ports: vec![nic.port.clone()],
            what,
            failure: failure.into(),
            fix,
        })
    };
    if let Some(m) = rp.rpg_max_rate.filter(|&m| m > 0 && m < line) {
        push(
            Severity::Warning,
            "rpg_max_rate",
            format!("rpg_max_rate {m} Mb/s is below the port's {line} Mb/s: once a QP's rate climbs back to {m} Mb/s the NIC stops rate limiting it"),
            "recovering QPs jump from that rate to line rate at once instead of probing up: the queue they left refills in a step, and the next cut comes only after ECN marks and PFC may fire first",
            "rpg_max_rate = 0 (full speed, the default)".into(),
        );
    }
    for (field, v) in [("rpg_min_rate", rp.rpg_min_rate), ("rate_to_set_on_first_cnp", rp.rate_to_set_on_first_cnp)] {
        if let Some(v) = v.filter(|&v| v > line) {
            push(
                Severity::Error,
                field,
                format!("{field} {v} Mb/s is above the port's line rate {line} Mb/s (NVIDIA documents 1..line rate)"),
                "the rate limiter cannot go that low or set that rate: DCQCN's cuts stop at a rate the port cannot exceed anyway, so it never slows the QP and PFC is the only brake",
                format!("{field} = {} (NVIDIA's default)", if field == "rpg_min_rate" { NVIDIA_FIRMWARE.rpg_min_rate_mbps } else { NVIDIA_FIRMWARE.rate_to_set_on_first_cnp_mbps }),
            );
        }
    }
    Ok(())
}

/// `nic-cnp-interval`: the CNP interval plus the rate-reduce monitor period against the time
/// a 2:1 incast takes to fill the egress queue facing the NIC from Kmin to the PFC point.
pub(super) fn cnp_interval(
    sw: &Switch,
    lossless: &BTreeMap<String, BTreeSet<u32>>,
    file: &str,
    nic: &NicConfig,
    opts: &Options,
    found: &mut Vec<Finding>,
) -> Result<(), ReadError> {
    let (Ok(cell), Some(pfc), Some(speed)) = (crate::verify::platform::cell_size(sw, opts), lossless.get(&nic.port), sw.field("PORT", &nic.port, "speed"))
    else {
        return Ok(()); // ecn-after-pfc says what is missing
    };
    let cell = cell.bytes;
    if ["QUEUE", "WRED_PROFILE", "BUFFER_PG", "BUFFER_PROFILE", "BUFFER_POOL"].iter().any(|t| sw.table(t).is_none()) {
        return Ok(()); // ecn-after-pfc says which table is missing
    }
    let mbps = num(sw, "PORT", &nic.port, "speed", speed)?;
    let n_us = nic.roce_np.as_ref().and_then(|n| n.min_time_between_cnps).unwrap_or(u64::from(NVIDIA_FIRMWARE.min_time_between_cnps_us));
    let m_us = nic.roce_rp.as_ref().and_then(|r| r.rate_reduce_monitor_period).unwrap_or(u64::from(NVIDIA_FIRMWARE.rate_reduce_monitor_period_us));
    let (q, pgs) = (queues(sw)?, pg_keys(sw)?);
    let n = (lossless.len() as u64).saturating_sub(1).max(1);
    let roce_prio = nic.roce_priority.filter(|p| pfc.contains(p)).or_else(|| pfc.iter().next().copied());
    let Some(queue) = roce_prio else { return Ok(()) };
    let Some(m) = marking_vs_pfc(sw, &q, &pgs, &nic.port, queue, n, cell, opts)? else { return Ok(()) };
    if m.kmin >= m.pfc.queue_bytes {
        return Ok(()); // ecn-after-pfc's finding: no mark before PFC at all
    }
    // Bytes a line-rate excess adds in the reaction delay: (N + M) µs × Mb/s / 8 = bytes.
    let reaction_bytes = (n_us + m_us) * mbps / 8;
    let window = m.pfc.queue_bytes - m.kmin;
    if reaction_bytes < window {
        return Ok(());
    }
    let fit_us = (window * 8 / mbps.max(1)).saturating_sub(m_us);
    found.push(Finding {
        severity: Severity::Warning,
        id: "nic-cnp-interval",
        switch: sw.name().to_string(),
        place: Place { file: file.to_string(), path: "roce_np.min_time_between_cnps".into() },
        ports: vec![nic.port.clone()],
        what: format!(
            "a sender's first cut can come {n_us} µs (min_time_between_cnps) + {m_us} µs (rate_reduce_monitor_period) after the first ECN mark, \
             while a 2:1 incast at {mbps} Mb/s fills {}'s queue {queue} from Kmin {} B to the PFC point {} B in {:.2} µs ({}; WRED profile {})",
            nic.port,
            m.kmin,
            m.pfc.queue_bytes,
            window as f64 * 8.0 / mbps as f64,
            m.why,
            m.wred
        ),
        failure: "PFC pauses the senders before DCQCN slows them: under incast the pause comes first, and spreads upstream".into(),
        fix: if fit_us > 0 {
            format!("roce_np.min_time_between_cnps < {fit_us} (µs), or lower WRED_PROFILE|{}|green_min_threshold", m.wred)
        } else {
            format!("lower WRED_PROFILE|{}|green_min_threshold (or rate_reduce_monitor_period): the monitor period alone spans the window", m.wred)
        },
    });
    Ok(())
}
