//! The PFC watchdog on lossless ports, and its detection time against the NICs' RC retry
//! budget.

use super::*;

/// (h) Every lossless port needs a PFC watchdog, covering each lossless queue.
pub(super) fn pfc_watchdog(sw: &Switch, lossless: &BTreeMap<String, BTreeSet<u32>>, found: &mut Vec<Finding>, nc: &mut Vec<NotChecked>) {
    let Some(wd) = sw.table("PFC_WD") else {
        let status = sw.field("DEVICE_METADATA", "localhost", "default_pfcwd_status").unwrap_or("not set");
        not(nc, sw, "pfc-watchdog-missing", "PFC_WD", &format!("DEVICE_METADATA|localhost|default_pfcwd_status is {status}"));
        return;
    };
    const FAIL: &str = "a peer that keeps pausing (a stuck NIC, a deadlock) holds the lossless queue forever: the pause spreads upstream as a pause storm";
    for (port, pfc) in lossless {
        if !wd.contains_key(port) {
            found.push(Finding {
                severity: Severity::Warning,
                id: "pfc-watchdog-missing",
                switch: sw.name().to_string(),
                place: sw.place("PFC_WD", port, ""),
                ports: vec![port.clone()],
                what: "lossless port without a PFC watchdog".into(),
                failure: FAIL.into(),
                fix: format!("PFC_WD|{port}: {PFCWD_DEFAULT_FIX}"),
            });
            continue;
        }
        let Some(v) = sw.field("PORT_QOS_MAP", port, "pfcwd_sw_enable") else { continue };
        let covered = parse_list(v).unwrap_or_default();
        let missing: BTreeSet<u32> = pfc.difference(&covered).copied().collect();
        if !missing.is_empty() {
            found.push(Finding {
                severity: Severity::Warning,
                id: "pfc-watchdog-missing",
                switch: sw.name().to_string(),
                place: sw.place("PORT_QOS_MAP", port, "pfcwd_sw_enable"),
                ports: vec![port.clone()],
                what: format!("the watchdog covers queues {{{}}} but not lossless {{{}}}", fmt_set(&covered), fmt_set(&missing)),
                failure: FAIL.into(),
                fix: format!("PORT_QOS_MAP|{port}|pfcwd_sw_enable = \"{}\"", fmt_set(&covered.union(pfc).copied().collect())),
            });
        }
    }
}

/// A lossless port's PFC watchdog must detect a pause storm before the NICs' RC QPs give up:
/// `PFC_WD|port|detection_time` (ms) below the retry budget,
/// [`model::ib::retry_budget`] = 4.096 µs × 2^timeout × (retry_cnt + 1), with the NIC's
/// `timeout` and `retry_cnt` from the options or, absent them, NCCL's defaults (20 and 7:
/// 34.4 s), said in the finding. Otherwise a storm errors every QP through the port
/// before the watchdog drops the paused queue's packets and lets the rest flow.
///
/// Left out: the watchdog's polling interval (`PFC_WD|GLOBAL|POLL_INTERVAL`), which can add
/// up to one interval to the detection.
pub(super) fn watchdog_vs_retry(
    sw: &Switch,
    lossless: &BTreeMap<String, BTreeSet<u32>>,
    opts: &Options,
    nics: &[&(String, NicConfig)],
    found: &mut Vec<Finding>,
) -> Result<(), ReadError> {
    use model::ib::{retry_budget, NCCL_IB_RETRY_CNT, NCCL_IB_TIMEOUT};
    use units::SimDuration;

    let Some(wd) = sw.table("PFC_WD") else { return Ok(()) }; // pfc-watchdog-missing says so
    for port in lossless.keys() {
        // A NIC file on this port overrides the options.
        let nic = nics.iter().find(|(_, n)| &n.port == port);
        let (t, r) = (nic.and_then(|(_, n)| n.timeout).or(opts.ib_timeout), nic.and_then(|(_, n)| n.retry_cnt).or(opts.retry_cnt));
        let (timeout, retry) = (t.unwrap_or(NCCL_IB_TIMEOUT), r.unwrap_or(NCCL_IB_RETRY_CNT));
        let whose = nic.map_or("the NIC's".to_string(), |(f, _)| format!("{f}'s"));
        let from = match (t, r) {
            (Some(_), Some(_)) => whose,
            (None, None) => "NCCL's defaults,".to_string(),
            _ => format!("{whose} and NCCL's defaults,"),
        };
        let budget = retry_budget(timeout, retry);
        let Some(e) = wd.get(port) else { continue };
        let Some(v) = e.fields.get("detection_time") else { continue };
        let ms = num(sw, "PFC_WD", port, "detection_time", v)?;
        if SimDuration::from_ms(ms) < budget {
            continue;
        }
        let max_ms = (budget.0 - 1) / SimDuration::from_ms(1).0;
        found.push(Finding {
            severity: Severity::Error,
            id: "watchdog-after-retry",
            switch: sw.name().to_string(),
            place: sw.place("PFC_WD", port, "detection_time"),
            ports: vec![port.clone()],
            what: format!(
                "the PFC watchdog detects a storm after {ms} ms, not before the RC retry budget of {budget} \
                 ({from} timeout {timeout}, retry_cnt {retry}: 4.096 us x 2^{timeout} x {})",
                retry + 1
            ),
            failure: "a pause storm on this port outlasts every retransmission: the QPs through it move to the error state (NCCL aborts the job) before the watchdog breaks the storm".into(),
            fix: if max_ms >= 200 {
                format!("PFC_WD|{port}|detection_time at most \"{max_ms}\" (ms), e.g. SONiC's default \"200\", or raise the NICs' timeout/retry_cnt")
            } else {
                format!("PFC_WD|{port}|detection_time at most \"{max_ms}\" (ms), or raise the NICs' timeout/retry_cnt so the budget exceeds the watchdog's {ms} ms")
            },
        });
    }
    Ok(())
}
