//! Which egress queue a PFC frame pauses, and how CNPs are queued and scheduled.
//!
//! * The RoCE class is paused only if the queue it waits in is the queue its priority's PFC
//!   frame stops: on a lossless port, `MAP_PFC_PRIORITY_TO_QUEUE[p]` (the port's
//!   `pfc_to_queue_map`) must equal `TC_TO_QUEUE_MAP[p]` (its `tc_to_queue_map`) for every
//!   `p` in `pfc_enable`. SONiC uses one number for the lossless priority, its TC and its PG
//!   (see the module doc of `checks`), so TC `p`'s traffic is what the peer's PFC frames for
//!   priority `p` are about. SAI leaves the port without a map by default
//!   (`SAI_PORT_ATTR_QOS_PFC_PRIORITY_TO_QUEUE_MAP`, "Default no map", opencomputeproject/SAI
//!   `inc/saiport.h`), and what the ASIC then pauses is its own choice; SONiC's templates
//!   always bind one (`MAP_PFC_PRIORITY_TO_QUEUE|AZURE`, the identity, sonic-buildimage
//!   `files/build_templates/qos_config.j2`).
//! * CNPs must not wait in a queue that PFC pauses (the same map), nor behind a
//!   strict-priority queue when their own queue is weighted: a strict-priority queue is served
//!   whenever it holds a frame, before any weighted one (IEEE 802.1Q-2018 §8.6.8, the strict
//!   priority algorithm of transmission selection ahead of ETS; SAI `SAI_SCHEDULING_TYPE_STRICT`
//!   against `_WRR`/`_DWRR`, `inc/saischeduler.h`). SONiC's SCHEDULER `type` is `STRICT`,
//!   `WRR` or `DWRR` (sonic-swss `orchagent/qosorch.cpp`, `scheduling_type_map`). NVIDIA's
//!   own RoCE default puts CNPs (traffic class 6) in a strict-priority class and RoCE and
//!   other traffic in WRR 50 % each (Cumulus Linux 5.x user guide, "RDMA over Converged
//!   Ethernet - RoCE", "Default RoCE Configuration": "Traffic class 6 (CNP) - Strict").
//!
//! Left out: the order among several strict-priority queues (vendor-specific), schedulers
//! bound at the port level (`PORT_QOS_MAP|port|scheduler`), `PFC_PRIORITY_TO_PRIORITY_GROUP_MAP`
//! (the PG whose XOFF sends priority `p`, taken as PG `p`) and shaping (`meter_type`, `pir`).

use super::chain::{map_step, port_map, Step};
use super::ecn::queues;
use super::*;

/// The queue a PFC frame for `priority` pauses on `port`, with the place it comes from;
/// `None` when the port names no `pfc_to_queue_map`, or the map no entry for `priority`.
fn paused_queue(sw: &Switch, port: &str, priority: u32) -> Result<Option<(u32, Place)>, ReadError> {
    let Some((name, _)) = port_map(sw, port, "pfc_to_queue_map") else { return Ok(None) };
    let key = priority.to_string();
    let Some(v) = sw.field("MAP_PFC_PRIORITY_TO_QUEUE", name, &key) else { return Ok(None) };
    let place = sw.place("MAP_PFC_PRIORITY_TO_QUEUE", name, &key);
    let q = v.trim().parse().map_err(|_| shape(place.clone(), format!("{v:?} is not a queue number")))?;
    Ok(Some((q, place)))
}

/// The queue TC `tc` waits in on `port` (`TC_TO_QUEUE_MAP`; an unmapped TC goes to queue 0);
/// `None` when the port's map is absent or undefined (`dscp-chain` reports that).
fn tc_queue(sw: &Switch, port: &str, tc: u32) -> Result<Option<u32>, ReadError> {
    Ok(match map_step(sw, port, "tc_to_queue_map", "TC_TO_QUEUE_MAP", tc, "TC", &mut vec![])? {
        Step::To(q) => Some(q),
        Step::Missing => Some(0),
        Step::Broken => None,
    })
}

/// (a, queues) On every lossless port, each lossless priority's PFC frame must pause the
/// queue that priority's TC waits in.
/// The RoCE TC's queue outside `pfc_enable` is `dscp-chain`'s finding, not repeated here.
pub(super) fn pfc_queue_map(
    sw: &Switch,
    lossless: &BTreeMap<String, BTreeSet<u32>>,
    opts: &Options,
    found: &mut Vec<Finding>,
    nc: &mut Vec<NotChecked>,
) -> Result<(), ReadError> {
    for t in ["TC_TO_QUEUE_MAP", "MAP_PFC_PRIORITY_TO_QUEUE"] {
        if sw.table(t).is_none() {
            not(nc, sw, "pfc-queue-map", t, "which queue a lossless priority's PFC frame pauses is unknown");
            return Ok(());
        }
    }
    for (port, pfc) in lossless {
        let mut push = |severity, place, what: String, fix: String| {
            found.push(Finding {
                severity,
                id: "pfc-queue-map",
                switch: sw.name().to_string(),
                place,
                ports: vec![port.clone()],
                what,
                failure: "PFC frames stop another queue than the one the lossless class waits in: the peer's pauses do not stop RoCE, its headroom overflows and lossless packets drop, while an innocent queue is paused".into(),
                fix,
            })
        };
        if port_map(sw, port, "pfc_to_queue_map").is_none() {
            push(
                Severity::Warning,
                sw.place("PORT_QOS_MAP", port, "pfc_to_queue_map"),
                format!("lossless port (pfc_enable {{{}}}) names no pfc_to_queue_map: SAI's default is no map, so the queue a PFC frame pauses is the ASIC's choice", fmt_set(pfc)),
                format!("PORT_QOS_MAP|{port}|pfc_to_queue_map = a MAP_PFC_PRIORITY_TO_QUEUE map sending each lossless priority to its TC's queue (SONiC's AZURE: the identity)"),
            );
            continue;
        }
        let roce_tc = match map_step(sw, port, "dscp_to_tc_map", "DSCP_TO_TC_MAP", u32::from(opts.roce_dscp), "DSCP", &mut vec![])? {
            Step::To(t) => Some(t),
            Step::Missing => Some(0),
            Step::Broken => None,
        };
        for &p in pfc {
            let Some(q) = tc_queue(sw, port, p)? else { continue };
            if Some(p) == roce_tc && !pfc.contains(&q) {
                continue;
            }
            let name = port_map(sw, port, "pfc_to_queue_map").map(|(n, _)| n).unwrap_or_default();
            match paused_queue(sw, port, p)? {
                Some((paused, _)) if paused == q => {}
                Some((paused, place)) => push(
                    Severity::Error,
                    place,
                    format!("a PFC frame for lossless priority {p} pauses queue {paused}, but TC {p} waits in queue {q} (TC_TO_QUEUE_MAP)"),
                    format!("MAP_PFC_PRIORITY_TO_QUEUE|{name}|{p} = \"{q}\""),
                ),
                None => push(
                    Severity::Error,
                    sw.place("MAP_PFC_PRIORITY_TO_QUEUE", name, &p.to_string()),
                    format!("MAP_PFC_PRIORITY_TO_QUEUE map {name:?} has no entry for lossless priority {p} (or no file defines the map), so its PFC frames pause no known queue"),
                    format!("MAP_PFC_PRIORITY_TO_QUEUE|{name}|{p} = \"{q}\""),
                ),
            }
        }
    }
    Ok(())
}

/// The CNP DSCP's queue on `port`: the DSCP's TC (an unmapped DSCP is TC 0) through
/// `TC_TO_QUEUE_MAP`, with the TC; `None` when a map is missing (reported elsewhere).
fn cnp_queue(sw: &Switch, port: &str, cnp_dscp: u8) -> Result<Option<(u32, u32)>, ReadError> {
    let tc = match map_step(sw, port, "dscp_to_tc_map", "DSCP_TO_TC_MAP", u32::from(cnp_dscp), "DSCP", &mut vec![])? {
        Step::To(t) => t,
        Step::Missing => 0,
        Step::Broken => return Ok(None),
    };
    Ok(tc_queue(sw, port, tc)?.map(|q| (tc, q)))
}

/// (a, CNPs) On every lossless port, the CNP's queue must not be one a lossless priority's
/// PFC frame pauses (the TC itself being lossless is `cnp-class`'s finding), and must not be
/// weighted while another queue of the port is strict priority.
pub(super) fn cnp_queue_checks(
    sw: &Switch,
    lossless: &BTreeMap<String, BTreeSet<u32>>,
    opts: &Options,
    found: &mut Vec<Finding>,
    nc: &mut Vec<NotChecked>,
) -> Result<(), ReadError> {
    if ["DSCP_TO_TC_MAP", "TC_TO_QUEUE_MAP"].iter().any(|t| sw.table(t).is_none()) {
        return Ok(()); // dscp-chain reports the missing map tables
    }
    let have_sched = sw.table("QUEUE").is_some() && sw.table("SCHEDULER").is_some();
    if !have_sched {
        let t = if sw.table("QUEUE").is_none() { "QUEUE" } else { "SCHEDULER" };
        not(nc, sw, "cnp-scheduler", t, "how the CNP queue is scheduled is unknown");
    }
    let qkeys = if have_sched { queues(sw)? } else { BTreeMap::new() };
    let dmap = |port: &str| port_map(sw, port, "dscp_to_tc_map").map(|(n, _)| n.to_string()).unwrap_or_default();
    for (port, pfc) in lossless {
        let Some((ctc, cq)) = cnp_queue(sw, port, opts.cnp_dscp)? else { continue };
        if !pfc.contains(&ctc) {
            for &p in pfc {
                let Some((paused, place)) = paused_queue(sw, port, p)? else { continue };
                if paused == cq {
                    let tq = port_map(sw, port, "tc_to_queue_map").map(|(n, _)| n).unwrap_or_default();
                    found.push(Finding {
                        severity: Severity::Warning,
                        id: "cnp-class",
                        switch: sw.name().to_string(),
                        place: sw.place("TC_TO_QUEUE_MAP", tq, &ctc.to_string()),
                        ports: vec![port.clone()],
                        what: format!(
                            "CNP DSCP {} (TC {ctc}, DSCP_TO_TC_MAP|{}) waits in queue {cq}, which PFC frames for lossless priority {p} pause ({place})",
                            opts.cnp_dscp,
                            dmap(port)
                        ),
                        failure: "CNPs stop whenever the lossless class is paused, exactly when the sender must slow down: congestion control starves and pauses spread".into(),
                        fix: format!("TC_TO_QUEUE_MAP|{tq}|{ctc} = a queue no lossless priority's PFC frame pauses (NVIDIA's default CNP priority is 6)"),
                    });
                    break;
                }
            }
        }
        if have_sched {
            cnp_scheduler(sw, port, cq, &qkeys, found)?;
        }
    }
    Ok(())
}

/// A SCHEDULER's `type`, checked; `None` for a QUEUE without a scheduler.
fn sched_type<'a>(sw: &'a Switch, qkey: &str) -> Result<Option<(&'a str, &'a str)>, ReadError> {
    let Some(raw) = sw.field("QUEUE", qkey, "scheduler") else { return Ok(None) };
    let name = crate::verify::config_db::reference(raw, "SCHEDULER");
    let Some(t) = sw.field("SCHEDULER", name, "type") else {
        if sw.table("SCHEDULER").and_then(|t| t.get(name)).is_none() {
            return Err(shape(sw.place("QUEUE", qkey, "scheduler"), format!("names SCHEDULER {name:?}, which no file of this switch defines")));
        }
        return Ok(None);
    };
    if !["STRICT", "WRR", "DWRR"].contains(&t) {
        return Err(shape(sw.place("SCHEDULER", name, "type"), format!("{t:?} is not a scheduling type: expected STRICT, WRR or DWRR")));
    }
    Ok(Some((name, t)))
}

/// The CNP queue `cq` of `port` is weighted while another queue of the port is strict.
fn cnp_scheduler(sw: &Switch, port: &str, cq: u32, qkeys: &BTreeMap<(String, u32), String>, found: &mut Vec<Finding>) -> Result<(), ReadError> {
    let Some(ckey) = qkeys.get(&(port.to_string(), cq)) else { return Ok(()) };
    let Some((cname, ctype)) = sched_type(sw, ckey)? else { return Ok(()) };
    if ctype == "STRICT" {
        return Ok(());
    }
    let mut strict = vec![];
    for ((p, q), key) in qkeys.range((port.to_string(), 0)..=(port.to_string(), u32::MAX)) {
        debug_assert_eq!(p, port);
        if *q != cq && matches!(sched_type(sw, key)?, Some((_, "STRICT"))) {
            strict.push(q.to_string());
        }
    }
    if strict.is_empty() {
        return Ok(());
    }
    found.push(Finding {
        severity: Severity::Warning,
        id: "cnp-scheduler",
        switch: sw.name().to_string(),
        place: sw.place("QUEUE", ckey, "scheduler"),
        ports: vec![port.to_string()],
        what: format!(
            "the CNP queue {cq} is scheduled {ctype} ({cname}) while queue(s) {} of the port are STRICT, served first whenever they hold a frame",
            strict.join(", ")
        ),
        failure: "CNPs wait behind strict-priority traffic: under load the senders learn of congestion late or never, queues reach the PFC point and pause"
            .into(),
        fix: format!("QUEUE|{ckey}|scheduler = a SCHEDULER with type \"STRICT\" (NVIDIA's RoCE default: the CNP class strict)"),
    });
    Ok(())
}
