//! ECN on lossless queues: a WRED profile with marking on, and marking that starts before
//! PFC fires.

use super::*;

/// QUEUE entries by (port, queue): the key each came from.
pub(super) fn queues(sw: &Switch) -> Result<BTreeMap<(String, u32), String>, ReadError> {
    keys_by_port(sw, "QUEUE", "QUEUES")
}

/// (g) Every lossless queue needs a WRED profile with ECN marking on.
pub(super) fn ecn(sw: &Switch, lossless: &BTreeMap<String, BTreeSet<u32>>, found: &mut Vec<Finding>, nc: &mut Vec<NotChecked>) -> Result<(), ReadError> {
    if sw.table("QUEUE").is_none() {
        not(nc, sw, "ecn-missing", "QUEUE", "which WRED profile each queue uses is unknown");
        return Ok(());
    }
    let q = queues(sw)?;
    let profiles = sw.table("WRED_PROFILE");
    const FAIL: &str = "no ECN marks on the lossless queue, so DCQCN never slows senders: PFC becomes the only brake, with head-of-line blocking and pause storms under incast";
    for (port, pfc) in lossless {
        for &queue in pfc {
            let key = q.get(&(port.clone(), queue)).cloned().unwrap_or_else(|| format!("{port}|{queue}"));
            let mut w = |severity, place, what: String, fix: String| {
                found.push(Finding {
                    severity,
                    id: "ecn-missing",
                    switch: sw.name().to_string(),
                    place,
                    ports: vec![port.clone()],
                    what,
                    failure: FAIL.into(),
                    fix,
                })
            };
            let Some(name) = sw.field("QUEUE", &key, "wred_profile") else {
                let fix = match profiles.and_then(|t| t.keys().find(|n| n.contains("LOSSLESS")).or(t.keys().next())) {
                    Some(n) => format!("QUEUE|{key}|wred_profile = \"{n}\""),
                    None => format!("define a WRED_PROFILE with ecn \"ecn_all\" and set QUEUE|{key}|wred_profile to it"),
                };
                w(Severity::Warning, sw.place("QUEUE", &key, "wred_profile"), format!("lossless queue {queue} has no WRED/ECN profile"), fix);
                continue;
            };
            let Some(p) = profiles.and_then(|t| t.get(name)) else {
                w(
                    Severity::Error,
                    sw.place("QUEUE", &key, "wred_profile"),
                    format!("names WRED_PROFILE {name:?}, which no file of this switch defines"),
                    format!("define WRED_PROFILE|{name} with ecn \"ecn_all\", or name an existing profile"),
                );
                continue;
            };
            let ecn = p.fields.get("ecn").map(String::as_str).unwrap_or("ecn_none");
            if ecn == "ecn_none" {
                w(
                    Severity::Warning,
                    sw.place("WRED_PROFILE", name, "ecn"),
                    format!("WRED profile {name:?} used by lossless queue {queue} has ECN off ({ecn:?})"),
                    format!("WRED_PROFILE|{name}|ecn = \"ecn_all\""),
                );
            }
        }
    }
    Ok(())
}

/// (g, second half) A lossless queue's ECN marking must start before PFC fires: the
/// planner's test ([`crate::roce::ecn_vs_pfc`], `plan roce`'s `pfc-before-ecn` risk) on the
/// queue's WRED `green_min_threshold`/`green_max_threshold` (RoCE packets are green) and
/// the egress queue at which PFC fires ([`crate::roce::pfc_point`], the planner's formula):
/// n ingress PGs each at reserved + alpha*S/(1+n*alpha) cells, with alpha = 2^`dynamic_th`
/// of the PG's BUFFER_PROFILE, S its BUFFER_POOL's `size`, n = the switch's lossless ports
/// minus one, the RoCE path MTU's largest frame.
///
/// Each term is an upper bound, so a finding holds for every incast on the switch: n is the
/// largest incast (the PFC point grows with n), the PG's whole `size` counts as reserved
/// (vendors differ on what `size` includes) and the pool's whole `size` as shared. Reported
/// once per WRED profile, with the largest PFC point among the ports short.
///
/// Mellanox's `dynamic_th` 7 ("unlimited", [`MELLANOX_DYNAMIC_TH`]) is taken as alpha 2^7,
/// whose share S/(1/alpha + n) is within 1/(128 n) of an unlimited PG's S/n.
///
/// Not checked: PGs whose profile has no `dynamic_th` (a static threshold) or no BUFFER_PG
/// entry (buffermgrd creates it at run time), and without a cell size (`--cell`, else the
/// platform's, [`crate::verify::platform::cell_size`]).
///
/// It stays one function (83 lines): the upper bound of each planner input is taken in
/// one place, next to the reason it is an upper bound.
pub(super) fn ecn_after_pfc(
    sw: &Switch,
    lossless: &BTreeMap<String, BTreeSet<u32>>,
    opts: &Options,
    found: &mut Vec<Finding>,
    nc: &mut Vec<NotChecked>,
) -> Result<(), ReadError> {
    use crate::roce::{ecn_vs_pfc, lowered_below_pfc, EcnVsPfc};

    let cell = match crate::verify::platform::cell_size(sw, opts) {
        Ok(c) => c.bytes,
        Err(why) => {
            not(nc, sw, "ecn-after-pfc", "(cell size)", &why);
            return Ok(());
        }
    };
    for t in ["QUEUE", "WRED_PROFILE", "BUFFER_PG", "BUFFER_PROFILE", "BUFFER_POOL"] {
        if sw.table(t).is_none() {
            not(nc, sw, "ecn-after-pfc", t, "the ECN thresholds or the PFC point of a lossless queue are unknown");
            return Ok(());
        }
    }
    let q = queues(sw)?;
    let pgs = pg_keys(sw)?;
    let n = (lossless.len() as u64).saturating_sub(1).max(1);
    let mut evaluated = false;
    // WRED profile -> (Kmin, Kmax, largest PFC point, its derivation, ports short)
    let mut short: BTreeMap<String, (u64, u64, u64, String, Vec<String>)> = BTreeMap::new();
    for (port, pfc) in lossless {
        for &queue in pfc {
            let Some(m) = marking_vs_pfc(sw, &q, &pgs, port, queue, n, cell, opts)? else { continue };
            evaluated = true;
            if ecn_vs_pfc(m.kmin, m.kmax, m.pfc.queue_bytes) != EcnVsPfc::PfcFirst {
                continue;
            }
            let e = short.entry(m.wred.clone()).or_insert((m.kmin, m.kmax, 0, String::new(), vec![]));
            if m.pfc.queue_bytes > e.2 {
                (e.2, e.3) = (m.pfc.queue_bytes, m.why);
            }
            if !e.4.contains(port) {
                e.4.push(port.clone());
            }
        }
    }
    if !evaluated {
        not(nc, sw, "ecn-after-pfc", "(lossless PG profiles)", "no ECN-marked lossless queue has a BUFFER_PG profile with dynamic_th and a pool size");
    }
    for (name, (kmin, kmax, q_pfc, why, ports)) in short {
        let fix = match lowered_below_pfc(kmin, kmax, q_pfc) {
            Some((lo, hi)) => format!("WRED_PROFILE|{name}|green_min_threshold = \"{lo}\" and green_max_threshold = \"{hi}\" (plan roce's rule: Kmax half the PFC point, Kmin at most a quarter of that)"),
            None => format!("WRED_PROFILE|{name}|green_min_threshold below {q_pfc} B"),
        };
        found.push(Finding {
            severity: Severity::Warning,
            id: "ecn-after-pfc",
            switch: sw.name().to_string(),
            place: sw.place("WRED_PROFILE", &name, "green_min_threshold"),
            ports,
            what: format!("ECN marking starts at {kmin} B of egress queue, at or above the {q_pfc} B at which PFC fires ({why})"),
            failure: "PFC pauses the senders before any packet is marked, so DCQCN never slows them: PFC becomes the only brake, with head-of-line blocking and pause storms under incast".into(),
            fix,
        });
    }
    Ok(())
}

/// A lossless queue's ECN thresholds and the upper bound of the egress queue at which PFC
/// fires, as [`ecn_after_pfc`] derives them (its doc gives the terms).
pub(super) struct MarkingVsPfc {
    pub wred: String,
    pub kmin: u64,
    pub kmax: u64,
    pub pfc: crate::roce::PfcPoint,
    /// The derivation of `pfc`, for a finding's text.
    pub why: String,
}

/// [`MarkingVsPfc`] of `port`'s lossless `queue` (`q`: QUEUE keys, `pgs`: BUFFER_PG keys, `n`:
/// the incast's ingress PGs); `None` when the queue has no ECN-marking WRED profile with a
/// `green_min_threshold`, or its PG no BUFFER_PG profile with `dynamic_th` and a pool size.
#[allow(clippy::too_many_arguments)]
pub(super) fn marking_vs_pfc(
    sw: &Switch,
    q: &BTreeMap<(String, u32), String>,
    pgs: &BTreeMap<(String, u32), String>,
    port: &str,
    queue: u32,
    n: u64,
    cell: units::Bytes,
    opts: &Options,
) -> Result<Option<MarkingVsPfc>, ReadError> {
    use crate::roce::{pfc_point, ENCAP};
    use model::frame::{roce_frame, Transport};
    use units::Bytes;

    let qkey = q.get(&(port.to_string(), queue)).cloned().unwrap_or_else(|| format!("{port}|{queue}"));
    let Some(wred) = sw.field("QUEUE", &qkey, "wred_profile") else { return Ok(None) };
    if sw.field("WRED_PROFILE", wred, "ecn").unwrap_or("ecn_none") == "ecn_none" {
        return Ok(None); // ecn-missing's finding
    }
    let Some(kmin) = sw.field("WRED_PROFILE", wred, "green_min_threshold") else { return Ok(None) };
    let kmin = num(sw, "WRED_PROFILE", wred, "green_min_threshold", kmin)?;
    let kmax = match sw.field("WRED_PROFILE", wred, "green_max_threshold") {
        Some(v) => num(sw, "WRED_PROFILE", wred, "green_max_threshold", v)?,
        None => kmin,
    };
    let Some(pgkey) = pgs.get(&(port.to_string(), queue)) else { return Ok(None) };
    let Some(raw) = sw.field("BUFFER_PG", pgkey, "profile") else { return Ok(None) };
    let prof = profile_name(raw);
    let (Some(th), Some(pool)) = (sw.field("BUFFER_PROFILE", prof, "dynamic_th"), sw.field("BUFFER_PROFILE", prof, "pool")) else { return Ok(None) };
    let th: i8 = th.trim().parse().map_err(|_| shape(sw.place("BUFFER_PROFILE", prof, "dynamic_th"), format!("{th:?} is not a whole number in -128..127")))?;
    let size = match sw.field("BUFFER_PROFILE", prof, "size") {
        Some(v) => num(sw, "BUFFER_PROFILE", prof, "size", v)?,
        None => 0,
    };
    let pool = crate::verify::config_db::reference(pool, "BUFFER_POOL");
    let Some(pool_size) = sw.field("BUFFER_POOL", pool, "size") else { return Ok(None) };
    let pool_size = num(sw, "BUFFER_POOL", pool, "size", pool_size)?;
    let frame = roce_frame(ENCAP, Transport::WriteFirst, opts.path_mtu);
    let p = pfc_point(cell, n, Bytes(pool_size), th, Bytes(size), frame);
    let why = format!(
        "{port} PG {queue} ({prof}): {n} ingress PGs each at {} + {} cells (size {size} B as reserved, alpha = 2^{th} of pool {pool}'s {pool_size} B), \
         {:.1} B per {} B cell of {} B frames",
        p.reserved_cells, p.share_cells, p.per_cell, cell.0, frame.0
    );
    Ok(Some(MarkingVsPfc { wred: wred.to_string(), kmin, kmax, pfc: p, why }))
}
