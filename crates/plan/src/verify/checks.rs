//! The findings, one function per check, in the order they are reported.
//!
//! A port is *lossless* when `PORT_QOS_MAP|port|pfc_enable` lists a priority. SONiC uses
//! the same numbers for the lossless priorities, their priority groups (buffermgrd creates
//! `BUFFER_PG|port|3-4` from `pfc_enable "3,4"`) and, through the identity
//! `MAP_PFC_PRIORITY_TO_QUEUE`, the queues a PFC frame pauses; so the RoCE DSCP's TC, its
//! PG and its queue must each be in `pfc_enable` (sonic-buildimage
//! `files/build_templates/qos_config.j2`, sonic-swss `cfgmgr/buffermgr.cpp`).
//!
//! Map-level findings (a DSCP_TO_TC_MAP entry, a WRED_PROFILE) are reported once, with every
//! lossless port that uses them.
//!
//! Left out: the MAP_PFC_PRIORITY_TO_QUEUE map (assumed identity, SONiC's default), the
//! scheduler class of CNPs (SCHEDULER), per-port global maps other than `PORT_QOS_MAP|global`.

use std::collections::{BTreeMap, BTreeSet};

use model::frame::{BTH, ICRC, IPV4_HEADER, RETH, UDP_HEADER};
use model::sonic::DEFAULT_PORT_MTU;
use serde::Serialize;

use super::config_db::{parse_list, split_port_key, Place, ReadError, Switch};
use super::nic::{NicConfig, Trust};
use super::{NotChecked, Options};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub severity: Severity,
    /// Stable identifier of the check (`dscp-chain`, `cnp-class`, `pfc-peer-mismatch`,
    /// `port-mtu`, `cable-length-missing`, `pg-headroom-profile`, `headroom-below-ieee`, `ecn-missing`,
    /// `headroom-vs-sonic`, `ecn-after-pfc`, `pfc-watchdog-missing`, `watchdog-after-retry`, `dynamic-th-range`,
    /// `nic-pfc-mismatch`, `nic-trust`, `nic-cnp-priority`, `nic-dcqcn-off`).
    pub id: &'static str,
    pub switch: String,
    pub place: Place,
    /// The lossless ports this finding affects.
    pub ports: Vec<String>,
    pub what: String,
    pub failure: String,
    pub fix: String,
}

/// RoCEv2 bytes above the IB payload that an IP MTU must hold: IPv4 20, UDP 8, BTH 12,
/// RETH 16, immediate data 4, ICRC 4 = 64 (IBTA Annex A17 RoCEv2; the largest header set,
/// an RDMA WRITE first-or-only packet with immediate). PORT `mtu` is an IP MTU: orchagent
/// adds the 22 B of L2 header itself.
pub const ROCE_IP_OVERHEAD: u64 = IPV4_HEADER + UDP_HEADER + BTH + RETH + IMM_DT + ICRC;
/// The Immediate Data extended transport header (ImmDt, IBTA InfiniBand Architecture
/// Specification Vol. 1): 4 bytes.
const IMM_DT: u64 = 4;

/// SONiC's PFC watchdog defaults (`pfcwd start_default`, sonic-utilities `pfcwd/main.py`:
/// detection and restoration 200 ms, action drop); also in the sonic-utilities test
/// configuration `tests/filter_fdb_input/config_db.json`.
const PFCWD_DEFAULT_FIX: &str = "action \"drop\", detection_time \"200\", restoration_time \"200\" (SONiC's `pfcwd start_default`)";

type Out = (Vec<Finding>, Vec<NotChecked>);

/// Runs every check on every switch.
pub(super) fn run(switches: &[Switch], nics: &[(String, NicConfig)], opts: &Options) -> Result<Out, ReadError> {
    let mut found: Vec<Finding> = vec![];
    let mut not_checked = vec![];
    for (file, nic) in nics {
        if !switches.iter().any(|s| s.hostname.as_deref() == Some(nic.switch.as_str())) {
            not_checked.push(NotChecked {
                switch: nic.switch.clone(),
                check: "nic",
                missing_table: "(switch)",
                note: format!("{file} names switch {:?}, which no config_db file given has as its hostname", nic.switch),
            });
        }
    }
    for sw in switches {
        let Some(lossless) = lossless_ports(sw, &mut not_checked)? else { continue };
        let my_nics: Vec<&(String, NicConfig)> = nics.iter().filter(|(_, n)| sw.hostname.as_deref() == Some(n.switch.as_str())).collect();
        dscp_chain(sw, &lossless, opts, &mut found, &mut not_checked)?;
        port_mtu(sw, &lossless, opts, &mut found, &mut not_checked)?;
        cable_length(sw, &lossless, &mut found, &mut not_checked)?;
        pg_profile(sw, &lossless, &mut found, &mut not_checked)?;
        headroom_ieee(sw, &lossless, opts, &mut found, &mut not_checked)?;
        headroom_sonic(sw, &lossless, &mut found, &mut not_checked)?;
        ecn(sw, &lossless, &mut found, &mut not_checked)?;
        ecn_after_pfc(sw, &lossless, opts, &mut found, &mut not_checked)?;
        pfc_watchdog(sw, &lossless, &mut found, &mut not_checked);
        watchdog_vs_retry(sw, &lossless, opts, &my_nics, &mut found)?;
        for (file, nic) in &my_nics {
            nic_checks(sw, file, nic, opts, &mut found)?;
        }
        dynamic_th(sw, &mut found, &mut not_checked)?;
    }
    pfc_peers(switches, &mut found)?;
    // One finding per place; errors first (stable, so check order holds within each).
    let mut merged: Vec<Finding> = vec![];
    for f in found {
        match merged.iter_mut().find(|m| m.id == f.id && m.place == f.place && m.switch == f.switch) {
            Some(m) => {
                for p in f.ports {
                    if !m.ports.contains(&p) {
                        m.ports.push(p);
                    }
                }
            }
            None => merged.push(f),
        }
    }
    merged.sort_by_key(|f| f.severity);
    Ok((merged, not_checked))
}

fn not(out: &mut Vec<NotChecked>, sw: &Switch, check: &'static str, missing_table: &'static str, note: &str) {
    out.push(NotChecked { switch: sw.name().to_string(), check, missing_table, note: note.to_string() });
}

fn shape(p: Place, msg: String) -> ReadError {
    ReadError::Shape { file: p.file, place: p.path, msg }
}

fn num(sw: &Switch, t: &str, key: &str, field: &str, v: &str) -> Result<u64, ReadError> {
    v.trim().parse().map_err(|_| shape(sw.place(t, key, field), format!("{v:?} is not a whole number")))
}

/// Lossless ports and their `pfc_enable` priorities; `None` (all checks "not checked")
/// without PORT_QOS_MAP.
fn lossless_ports(sw: &Switch, nc: &mut Vec<NotChecked>) -> Result<Option<BTreeMap<String, BTreeSet<u32>>>, ReadError> {
    let Some(t) = sw.table("PORT_QOS_MAP") else {
        not(nc, sw, "all checks", "PORT_QOS_MAP", "without pfc_enable no port is known to be lossless");
        return Ok(None);
    };
    let mut out = BTreeMap::new();
    for (port, e) in t {
        let Some(v) = e.fields.get("pfc_enable") else { continue };
        let set =
            parse_list(v).ok_or_else(|| shape(sw.place("PORT_QOS_MAP", port, "pfc_enable"), format!("{v:?} is not a list of priorities such as \"3,4\"")))?;
        if let Some(bad) = set.iter().find(|&&p| p > 7) {
            return Err(shape(sw.place("PORT_QOS_MAP", port, "pfc_enable"), format!("priority {bad} is not 0..7")));
        }
        if !set.is_empty() {
            out.insert(port.clone(), set);
        }
    }
    Ok(Some(out))
}

fn fmt_set(s: &BTreeSet<u32>) -> String {
    s.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
}

/// The map a port uses: its own `PORT_QOS_MAP|port|field`, else `PORT_QOS_MAP|global|field`.
fn port_map<'a>(sw: &'a Switch, port: &str, field: &str) -> Option<(&'a str, Place)> {
    for key in [port, "global"] {
        if let Some(v) = sw.field("PORT_QOS_MAP", key, field) {
            return Some((v, sw.place("PORT_QOS_MAP", key, field)));
        }
    }
    None
}

/// One step of the chain: the value `TABLE|map|from`, parsed, or a finding.
enum Step {
    To(u32),
    /// The map has no entry for the value (the ASIC default, 0, applies).
    Missing,
    /// The port's map is absent or undefined (already reported).
    Broken,
}

#[allow(clippy::too_many_arguments)]
fn map_step(sw: &Switch, port: &str, qos_field: &str, table: &'static str, from: u32, what_from: &str, found: &mut Vec<Finding>) -> Result<Step, ReadError> {
    let f = |severity, place, what: String, failure: &str, fix: String| Finding {
        severity,
        id: "dscp-chain",
        switch: sw.name().to_string(),
        place,
        ports: vec![port.to_string()],
        what,
        failure: failure.to_string(),
        fix,
    };
    let Some((name, qplace)) = port_map(sw, port, qos_field) else {
        found.push(f(
            Severity::Error,
            sw.place("PORT_QOS_MAP", port, qos_field),
            format!("lossless port has no {qos_field}, so {what_from} {from} follows the ASIC default"),
            "RoCE traffic may leave the lossless class: drops under congestion",
            format!("set PORT_QOS_MAP|{port}|{qos_field} to the {table} map of the other lossless ports"),
        ));
        return Ok(Step::Broken);
    };
    let Some(entries) = sw.table(table).and_then(|t| t.get(name)) else {
        found.push(f(
            Severity::Error,
            qplace,
            format!("names {table} map {name:?}, which no file of this switch defines"),
            "orchagent cannot bind the map: the port keeps the ASIC default mapping and RoCE traffic may be lossy",
            format!("define {table}|{name} or name an existing map"),
        ));
        return Ok(Step::Broken);
    };
    let key = from.to_string();
    let Some(v) = entries.fields.get(&key) else {
        return Ok(Step::Missing);
    };
    let to: u32 = v.trim().parse().map_err(|_| shape(sw.place(table, name, &key), format!("{v:?} is not a whole number")))?;
    Ok(Step::To(to))
}

/// (a) The RoCE DSCP's TC, PG and queue must be lossless; CNPs must not share a paused class.
fn dscp_chain(
    sw: &Switch,
    lossless: &BTreeMap<String, BTreeSet<u32>>,
    opts: &Options,
    found: &mut Vec<Finding>,
    nc: &mut Vec<NotChecked>,
) -> Result<(), ReadError> {
    for t in ["DSCP_TO_TC_MAP", "TC_TO_PRIORITY_GROUP_MAP", "TC_TO_QUEUE_MAP"] {
        if sw.table(t).is_none() {
            not(nc, sw, "dscp-chain", t, "the RoCE DSCP's path to a lossless PG and queue is unknown");
            return Ok(());
        }
    }
    let name_of = |port: &str, f: &str| port_map(sw, port, f).map(|(n, _)| n.to_string()).unwrap_or_default();
    for (port, pfc) in lossless {
        let lossless_tc = *pfc.iter().next().expect("lossless ports have a priority");
        let err = |place: Place, what: String, failure: &str, fix: String| Finding {
            severity: Severity::Error,
            id: "dscp-chain",
            switch: sw.name().to_string(),
            place,
            ports: vec![port.clone()],
            what,
            failure: failure.to_string(),
            fix,
        };
        let d = u32::from(opts.roce_dscp);
        let dmap = name_of(port, "dscp_to_tc_map");
        let tc = match map_step(sw, port, "dscp_to_tc_map", "DSCP_TO_TC_MAP", d, "DSCP", found)? {
            Step::Broken => continue,
            Step::Missing => {
                found.push(err(
                    sw.place("DSCP_TO_TC_MAP", &dmap, &d.to_string()),
                    format!("RoCE DSCP {d} has no entry, so it lands in TC 0, not in pfc_enable {{{}}}", fmt_set(pfc)),
                    "RoCE packets travel in a lossy class: dropped under congestion, and go-back-N retransmission collapses throughput",
                    format!("DSCP_TO_TC_MAP|{dmap}|{d} = \"{lossless_tc}\""),
                ));
                continue;
            }
            Step::To(tc) => tc,
        };
        if !pfc.contains(&tc) {
            found.push(err(
                sw.place("DSCP_TO_TC_MAP", &dmap, &d.to_string()),
                format!("RoCE DSCP {d} maps to TC {tc}, which is not in pfc_enable {{{}}}", fmt_set(pfc)),
                "RoCE packets travel in a lossy class: dropped under congestion, and go-back-N retransmission collapses throughput",
                format!("DSCP_TO_TC_MAP|{dmap}|{d} = \"{lossless_tc}\""),
            ));
            continue;
        }
        for (field, table, what, failure) in [
            (
                "tc_to_pg_map",
                "TC_TO_PRIORITY_GROUP_MAP",
                "priority group",
                "RoCE packets are admitted to a PG without lossless headroom and XOFF: ingress drops once the buffer fills",
            ),
            (
                "tc_to_queue_map",
                "TC_TO_QUEUE_MAP",
                "queue",
                "RoCE packets wait in a queue the peer's PFC frames do not pause and egress admission treats as lossy: drops, and pauses that stop the wrong queue",
            ),
        ] {
            let map = name_of(port, field);
            let (to, got) = match map_step(sw, port, field, table, tc, "TC", found)? {
                Step::Broken => break,
                Step::Missing => (0, "has no entry (default 0)".to_string()),
                Step::To(t) => (t, format!("maps to {what} {t}")),
            };
            if !pfc.contains(&to) {
                found.push(err(
                    sw.place(table, &map, &tc.to_string()),
                    format!("the RoCE TC {tc} {got}, which is not in pfc_enable {{{}}}", fmt_set(pfc)),
                    failure,
                    format!("{table}|{map}|{tc} = \"{tc}\""),
                ));
                break;
            }
        }
        // CNPs: not in a paused class, not unmapped.
        let c = u32::from(opts.cnp_dscp);
        let cnp = map_step(sw, port, "dscp_to_tc_map", "DSCP_TO_TC_MAP", c, "DSCP", &mut vec![])?;
        if !matches!(cnp, Step::Broken) {
            let free_tc = if !pfc.contains(&6) { 6 } else { (0..8).rev().find(|t| !pfc.contains(t)).unwrap_or(0) };
            let warn = |what: String, failure: &str| {
                Finding {
                severity: Severity::Warning,
                id: "cnp-class",
                switch: sw.name().to_string(),
                place: sw.place("DSCP_TO_TC_MAP", &dmap, &c.to_string()),
                ports: vec![port.clone()],
                what,
                failure: failure.to_string(),
                fix: format!("DSCP_TO_TC_MAP|{dmap}|{c} = \"{free_tc}\" (a class outside pfc_enable; NVIDIA's default CNP priority is 6) with a strict-priority scheduler"),
            }
            };
            match cnp {
                Step::Missing => found.push(warn(
                    format!("CNP DSCP {c} has no entry, so CNPs land in TC 0 with bulk traffic"),
                    "CNPs queue behind best-effort traffic: DCQCN senders slow down late, queues reach the PFC point and pause",
                )),
                Step::To(ctc) if pfc.contains(&ctc) => found.push(warn(
                    format!("CNP DSCP {c} maps to TC {ctc}, a lossless (paused) class"),
                    "CNPs stop whenever that class is paused, exactly when the sender must slow down: congestion control starves and pauses spread",
                )),
                Step::To(_) | Step::Broken => {}
            }
        }
    }
    Ok(())
}

/// (b) Both ends of a link between two given switches must agree on `pfc_enable`.
fn pfc_peers(switches: &[Switch], found: &mut Vec<Finding>) -> Result<(), ReadError> {
    let pfc_of = |sw: &Switch, port: &str| -> Result<BTreeSet<u32>, ReadError> {
        match sw.field("PORT_QOS_MAP", port, "pfc_enable") {
            Some(v) => parse_list(v).ok_or_else(|| shape(sw.place("PORT_QOS_MAP", port, "pfc_enable"), format!("{v:?} is not a list of priorities"))),
            None => Ok(BTreeSet::new()),
        }
    };
    for sw in switches {
        let (Some(me), Some(nb)) = (&sw.hostname, sw.table("DEVICE_NEIGHBOR")) else { continue };
        if sw.table("PORT_QOS_MAP").is_none() {
            continue;
        }
        for (port, e) in nb {
            let (Some(peer_name), Some(peer_port)) = (e.fields.get("name"), e.fields.get("port")) else { continue };
            let Some(peer) = switches.iter().find(|s| s.hostname.as_ref() == Some(peer_name)) else { continue };
            if peer.table("PORT_QOS_MAP").is_none() || (peer_name.as_str(), peer_port.as_str()) < (me.as_str(), port.as_str()) {
                continue; // the peer reports the link (or cannot be compared)
            }
            let (mine, theirs) = (pfc_of(sw, port)?, pfc_of(peer, peer_port)?);
            if mine == theirs {
                continue;
            }
            let union: BTreeSet<u32> = mine.union(&theirs).copied().collect();
            let peer_place = peer.place("PORT_QOS_MAP", peer_port, "pfc_enable");
            found.push(Finding {
                severity: Severity::Error,
                id: "pfc-peer-mismatch",
                switch: me.clone(),
                place: sw.place("PORT_QOS_MAP", port, "pfc_enable"),
                ports: vec![port.clone()],
                what: format!("pfc_enable {{{}}} here, {{{}}} on the link peer {peer_name} {peer_port} ({peer_place})", fmt_set(&mine), fmt_set(&theirs)),
                failure:
                    "a priority lossless on one end only: that end's PFC frames are ignored by the other, so its headroom overflows and lossless packets drop"
                        .into(),
                fix: format!("pfc_enable \"{}\" on both ends", fmt_set(&union)),
            });
        }
    }
    Ok(())
}

/// (e) A lossless port's IP MTU must hold a full RoCE packet: path MTU + 64 B.
fn port_mtu(
    sw: &Switch,
    lossless: &BTreeMap<String, BTreeSet<u32>>,
    opts: &Options,
    found: &mut Vec<Finding>,
    nc: &mut Vec<NotChecked>,
) -> Result<(), ReadError> {
    let Some(ports) = sw.table("PORT") else {
        not(nc, sw, "port-mtu", "PORT", "port MTUs unknown");
        return Ok(());
    };
    let need = opts.path_mtu.0 + ROCE_IP_OVERHEAD;
    for port in lossless.keys() {
        let Some(e) = ports.get(port) else { continue };
        let mtu = match e.fields.get("mtu") {
            Some(v) => num(sw, "PORT", port, "mtu", v)?,
            None => DEFAULT_PORT_MTU.0,
        };
        if mtu < need {
            found.push(Finding {
                severity: Severity::Error,
                id: "port-mtu",
                switch: sw.name().to_string(),
                place: sw.place("PORT", port, "mtu"),
                ports: vec![port.clone()],
                what: format!(
                    "IP MTU {mtu} B is below the RoCE path MTU {} B + {ROCE_IP_OVERHEAD} B of IPv4/UDP/BTH/RETH/ImmDt/ICRC = {need} B",
                    opts.path_mtu.0
                ),
                failure: "full-size RoCE packets are dropped at this port: transfers stall in retransmission until the QP fails".into(),
                fix: format!("PORT|{port}|mtu >= \"{need}\" (SONiC's default is \"9100\")"),
            });
        }
    }
    Ok(())
}

/// Cable length in metres as SONiC writes it (`"5m"`).
fn metres(s: &str) -> Option<u64> {
    s.trim().strip_suffix('m')?.parse().ok()
}

/// (f) buffermgrd needs each lossless port's cable length to create its headroom profile.
fn cable_length(sw: &Switch, lossless: &BTreeMap<String, BTreeSet<u32>>, found: &mut Vec<Finding>, nc: &mut Vec<NotChecked>) -> Result<(), ReadError> {
    let Some(t) = sw.table("CABLE_LENGTH") else {
        not(nc, sw, "cable-length-missing", "CABLE_LENGTH", "cable lengths unknown");
        return Ok(());
    };
    for (key, e) in t {
        for (port, v) in &e.fields {
            if metres(v).is_none() {
                return Err(shape(sw.place("CABLE_LENGTH", key, port), format!("{v:?} is not a length in metres such as \"5m\"")));
            }
        }
    }
    let table_key = t.keys().next().cloned().unwrap_or_else(|| "AZURE".into());
    for port in lossless.keys() {
        if t.values().any(|e| e.fields.contains_key(port)) {
            continue;
        }
        found.push(Finding {
            severity: Severity::Error,
            id: "cable-length-missing",
            switch: sw.name().to_string(),
            place: sw.place("CABLE_LENGTH", &table_key, port),
            ports: vec![port.clone()],
            what: "lossless port without a cable length".into(),
            failure: "buffermgrd (sonic-swss cfgmgr/buffermgr.cpp) cannot look the port up in pg_profile_lookup.ini without it, so the lossless PG gets no headroom profile: drops in the lossless class".into(),
            fix: format!("CABLE_LENGTH|{table_key}|{port} = the longest cable on the port in metres, e.g. \"5m\" for a rack-local host link"),
        });
    }
    Ok(())
}

/// The name buffermgrd gives the lossless profile it creates for a port in the traditional
/// model: `pg_lossless_<speed>_<cable>_profile` (sonic-swss `cfgmgr/buffermgr.cpp`; e.g.
/// `pg_lossless_40000_5m_profile` in sonic-utilities' `tests/counterpoll_input/config_db.json`),
/// when the port's speed and cable length are known.
fn traditional_profile_name(sw: &Switch, port: &str) -> Option<String> {
    let speed = sw.field("PORT", port, "speed")?;
    let cable = sw.table("CABLE_LENGTH")?.values().find_map(|e| e.fields.get(port))?;
    Some(format!("pg_lossless_{speed}_{cable}_profile"))
}

/// (c, part) A lossless PG's BUFFER_PG entry must name a profile with headroom (`xoff`).
///
/// A lossless PG without a BUFFER_PG entry is not flagged: in the traditional model
/// buffermgrd creates it from pg_profile_lookup.ini at run time (provided the port has a
/// cable length, see [`cable_length`]), and in the dynamic model from the Lua. An entry with
/// profile `NULL` is the dynamic model's "computed at run time". Not checked yet: whether
/// pg_profile_lookup.ini has a row for the port's speed and cable length.
fn pg_profile(sw: &Switch, lossless: &BTreeMap<String, BTreeSet<u32>>, found: &mut Vec<Finding>, nc: &mut Vec<NotChecked>) -> Result<(), ReadError> {
    if sw.table("BUFFER_PG").is_none() {
        not(nc, sw, "pg-headroom-profile", "BUFFER_PG", "which profile each lossless PG uses is unknown");
        return Ok(());
    }
    let profiles = sw.table("BUFFER_PROFILE");
    let by_pg = pg_keys(sw)?;
    const FAIL: &str = "the lossless PG has no headroom above its pause point: frames in flight after XOFF are dropped in the lossless class";
    for (port, pfc) in lossless {
        for &pg in pfc {
            let Some(key) = by_pg.get(&(port.clone(), pg)) else { continue };
            let Some(raw) = sw.field("BUFFER_PG", key, "profile") else { continue };
            // Older configs write references as "[BUFFER_PROFILE|name]".
            let name = profile_name(raw);
            if name == "NULL" {
                continue;
            }
            let would = traditional_profile_name(sw, port).map(|n| format!(" (buffermgrd's name for this port's lossless profile: {n:?})")).unwrap_or_default();
            let mut push = |what: String| {
                found.push(Finding {
                    severity: Severity::Error,
                    id: "pg-headroom-profile",
                    switch: sw.name().to_string(),
                    place: sw.place("BUFFER_PG", key, "profile"),
                    ports: vec![port.clone()],
                    what,
                    failure: FAIL.into(),
                    fix: format!("BUFFER_PG|{key}|profile = a lossless profile with xon and xoff{would}, or delete the entry so buffermgrd creates it"),
                })
            };
            match profiles.and_then(|t| t.get(name)) {
                None => push(format!("lossless PG {pg} names BUFFER_PROFILE {name:?}, which no file of this switch defines")),
                Some(e) if !e.fields.contains_key("xoff") => push(format!("lossless PG {pg} uses profile {name:?}, which has no xoff (headroom)")),
                Some(_) => {}
            }
        }
    }
    Ok(())
}

/// BUFFER_PG entries by (port, PG): the key each came from.
fn pg_keys(sw: &Switch) -> Result<BTreeMap<(String, u32), String>, ReadError> {
    let mut out = BTreeMap::new();
    for key in sw.table("BUFFER_PG").into_iter().flat_map(|t| t.keys()) {
        let (ports, idx) = split_port_key(key).ok_or_else(|| shape(sw.place("BUFFER_PG", key, ""), "expected a key PORT|PGS such as Ethernet0|3-4".into()))?;
        for p in ports {
            for &i in &idx {
                out.insert((p.to_string(), i), key.clone());
            }
        }
    }
    Ok(out)
}

/// A BUFFER_PG `profile` value without the old `[BUFFER_PROFILE|...]` wrapping.
fn profile_name(raw: &str) -> &str {
    raw.trim().trim_start_matches('[').trim_end_matches(']').trim_start_matches("BUFFER_PROFILE|")
}

/// (d, first half) A lossless PG's `xoff` must cover the IEEE 802.1Qbb worst case in cells
/// ([`model::headroom::ieee_8021qbb`] with [`crate::roce::ieee_port_input`], the
/// planner's `ieee` model): the port's speed (PORT `speed`, Mb/s) and cable (CABLE_LENGTH),
/// the RoCE path MTU's largest frame (an RDMA WRITE first packet, IPv4, no VLAN tag) in the
/// lossless class, the port MTU's frame (PORT `mtu` + MAC header, VLAN tag, FCS) on the
/// reverse direction, no interface delay. Reported once per profile, with the largest need
/// among the ports that use it.
///
/// Left out: the comparison with SONiC's own value (pg_profile_lookup, the Lua) and the
/// shared headroom pool (a profile's xoff then draws on BUFFER_POOL `xoff`).
fn headroom_ieee(
    sw: &Switch,
    lossless: &BTreeMap<String, BTreeSet<u32>>,
    opts: &Options,
    found: &mut Vec<Finding>,
    nc: &mut Vec<NotChecked>,
) -> Result<(), ReadError> {
    use crate::roce::{ieee_port_input, reverse_frame_for, ENCAP};
    use model::frame::{roce_frame, Transport};
    use model::headroom::ieee_8021qbb;
    use units::{BitRate, Bytes, Length, SimDuration};

    let Some(cell) = opts.cell else {
        not(nc, sw, "headroom-below-ieee", "(cell size)", "config_db has no buffer cell size: pass --cell");
        return Ok(());
    };
    for t in ["BUFFER_PG", "BUFFER_PROFILE", "PORT", "CABLE_LENGTH"] {
        if sw.table(t).is_none() {
            not(nc, sw, "headroom-below-ieee", t, "a lossless PG's headroom or its inputs are unknown");
            return Ok(());
        }
    }
    let pgs = pg_keys(sw)?;
    let lossless_frame = roce_frame(ENCAP, Transport::WriteFirst, opts.path_mtu);
    // profile -> (need, port giving it, its terms, ports short)
    let mut short: BTreeMap<String, (u64, u64, String, String, Vec<String>)> = BTreeMap::new();
    for (port, pfc) in lossless {
        let Some(speed) = sw.field("PORT", port, "speed") else { continue };
        let speed_mbps = num(sw, "PORT", port, "speed", speed)?;
        let Some(cable) = sw.table("CABLE_LENGTH").and_then(|t| t.values().find_map(|e| e.fields.get(port))).and_then(|c| metres(c)) else { continue };
        let port_mtu = match sw.field("PORT", port, "mtu") {
            Some(v) => Bytes(num(sw, "PORT", port, "mtu", v)?),
            None => DEFAULT_PORT_MTU,
        };
        let Some(rate) = speed_mbps.checked_mul(1_000_000).filter(|&r| r > 0).map(BitRate) else {
            return Err(shape(sw.place("PORT", port, "speed"), format!("{speed:?} is not a positive speed in Mb/s")));
        };
        let inp = ieee_port_input(rate, Length::from_m(cable), lossless_frame, reverse_frame_for(lossless_frame, Some(port_mtu)), SimDuration::ZERO, cell, 0);
        let d = ieee_8021qbb(&inp);
        for &pg in pfc {
            let Some(key) = pgs.get(&(port.clone(), pg)) else { continue };
            let Some(raw) = sw.field("BUFFER_PG", key, "profile") else { continue };
            let name = profile_name(raw);
            let Some(xoff) = sw.field("BUFFER_PROFILE", name, "xoff") else { continue };
            let xoff = num(sw, "BUFFER_PROFILE", name, "xoff", xoff)?;
            if xoff >= d.bytes.0 {
                continue;
            }
            let why = format!(
                "{port}: {speed_mbps} Mb/s, {cable} m, port MTU {} B: {} frames of {} B x {} cells of {} B",
                port_mtu.0,
                d.frames,
                lossless_frame.0,
                lossless_frame.cells(cell),
                cell.0
            );
            let e = short.entry(name.to_string()).or_insert((0, xoff, String::new(), String::new(), vec![]));
            if d.bytes.0 > e.0 {
                (e.0, e.2) = (d.bytes.0, why);
                e.3 = key.clone();
            }
            if !e.4.contains(port) {
                e.4.push(port.clone());
            }
        }
    }
    for (name, (need, xoff, why, _key, ports)) in short {
        found.push(Finding {
            severity: Severity::Error,
            id: "headroom-below-ieee",
            switch: sw.name().to_string(),
            place: sw.place("BUFFER_PROFILE", &name, "xoff"),
            ports,
            what: format!("xoff {xoff} B is below the IEEE 802.1Qbb worst case {need} B ({why})"),
            failure: "when the PG pauses its peer, more can still arrive than the headroom holds: drops in the lossless class".into(),
            fix: format!("BUFFER_PROFILE|{name}|xoff >= \"{need}\" (and size grown by as much)"),
        });
    }
    Ok(())
}

/// (d, second half) A lossless PG's profile `xoff` should equal what SONiC itself would
/// configure for the port: on an NVIDIA Spectrum switch in the dynamic buffer model
/// (`DEVICE_METADATA|localhost|buffer_model` "dynamic", the generation from its `platform`,
/// [`model::sonic::Spectrum::from_platform`]), the headroom Lua's xoff,
/// [`model::sonic::mellanox_headroom`] ([`model::sonic::LUA_SOURCE`]), for the port's speed,
/// cable length, MTU and lane count (PORT `lanes`), LOSSLESS_TRAFFIC_PATTERN (sonic-buildimage
/// `buffers_config.j2`'s mtu 1024 / 50 % small packets when absent) and the shared headroom
/// pool (BUFFER_POOL `ingress_lossless_pool` `xoff`, DEFAULT_LOSSLESS_BUFFER_PARAMETER
/// `over_subscribe_ratio`). A profile that differs is SONiC's "headroom override": allowed,
/// but not what SONiC computed, so a warning. Once per profile, with the first port's value.
///
/// Left out: the gearbox delay (taken as none), and the traditional model's
/// `pg_profile_lookup.ini` (a file on the switch, not in config_db): on other switches
/// with lossless profiles the check is "not checked".
fn headroom_sonic(sw: &Switch, lossless: &BTreeMap<String, BTreeSet<u32>>, found: &mut Vec<Finding>, nc: &mut Vec<NotChecked>) -> Result<(), ReadError> {
    use model::sonic::{mellanox_headroom, DynamicHeadroomInput, LosslessTrafficPattern, SharedHeadroom, Spectrum, LUA_SOURCE};
    use units::{BitRate, Bytes, Length};

    let pgs = pg_keys(sw)?;
    // (port, PG key, profile) of each lossless PG whose profile has an xoff.
    let mut with_xoff = vec![];
    for (port, pfc) in lossless {
        for &pg in pfc {
            let Some(key) = pgs.get(&(port.clone(), pg)) else { continue };
            let Some(raw) = sw.field("BUFFER_PG", key, "profile") else { continue };
            let name = profile_name(raw).to_string();
            if sw.field("BUFFER_PROFILE", &name, "xoff").is_some() && !with_xoff.iter().any(|(p, _, n): &(String, String, String)| p == port && *n == name) {
                with_xoff.push((port.clone(), key.clone(), name));
            }
        }
    }
    if with_xoff.is_empty() {
        return Ok(());
    }
    let platform = sw.field("DEVICE_METADATA", "localhost", "platform");
    let model = sw.field("DEVICE_METADATA", "localhost", "buffer_model").unwrap_or("traditional");
    let gen = platform.and_then(Spectrum::from_platform);
    let Some(gen) = gen.filter(|_| model == "dynamic") else {
        let why = match (gen, platform) {
            (Some(_), _) => format!("buffer_model {model:?}: SONiC's values are the switch's pg_profile_lookup.ini, which config_db does not hold"),
            (None, Some(p)) => format!("platform {p:?} has no SONiC headroom formula here (NVIDIA Spectrum in the dynamic model only)"),
            (None, None) => "DEVICE_METADATA|localhost|platform is absent".to_string(),
        };
        not(nc, sw, "headroom-vs-sonic", "(SONiC headroom model)", &why);
        return Ok(());
    };
    let pattern = match (sw.field("LOSSLESS_TRAFFIC_PATTERN", "AZURE", "mtu"), sw.field("LOSSLESS_TRAFFIC_PATTERN", "AZURE", "small_packet_percentage")) {
        (Some(m), Some(p)) => {
            let mtu = Bytes(num(sw, "LOSSLESS_TRAFFIC_PATTERN", "AZURE", "mtu", m)?);
            let pct = num(sw, "LOSSLESS_TRAFFIC_PATTERN", "AZURE", "small_packet_percentage", p)?;
            let pct = u8::try_from(pct)
                .ok()
                .filter(|&p| p <= 100)
                .ok_or_else(|| shape(sw.place("LOSSLESS_TRAFFIC_PATTERN", "AZURE", "small_packet_percentage"), format!("{p:?} is not a percentage 0..100")))?;
            LosslessTrafficPattern { mtu, small_packet_percentage: pct }
        }
        _ => LosslessTrafficPattern::default(),
    };
    let pool_xoff = match sw.field("BUFFER_POOL", "ingress_lossless_pool", "xoff") {
        Some(v) => Bytes(num(sw, "BUFFER_POOL", "ingress_lossless_pool", "xoff", v)?),
        None => Bytes(0),
    };
    let ratio = match sw.field("DEFAULT_LOSSLESS_BUFFER_PARAMETER", "AZURE", "over_subscribe_ratio") {
        Some(v) => v
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|r| r.is_finite() && *r >= 0.0)
            .ok_or_else(|| shape(sw.place("DEFAULT_LOSSLESS_BUFFER_PARAMETER", "AZURE", "over_subscribe_ratio"), format!("{v:?} is not a ratio")))?,
        None => 0.0,
    };
    for (port, _key, name) in with_xoff {
        let (Some(speed), Some(cable)) =
            (sw.field("PORT", &port, "speed"), sw.table("CABLE_LENGTH").and_then(|t| t.values().find_map(|e| e.fields.get(&port))))
        else {
            continue;
        };
        let speed_mbps = num(sw, "PORT", &port, "speed", speed)?;
        let Some(m) = metres(cable) else { continue };
        let mut inp = DynamicHeadroomInput::new(BitRate(speed_mbps.saturating_mul(1_000_000)), Length::from_m(m), gen);
        if let Some(v) = sw.field("PORT", &port, "mtu") {
            inp.port_mtu = Bytes(num(sw, "PORT", &port, "mtu", v)?);
        }
        if let Some(l) = sw.field("PORT", &port, "lanes") {
            inp.lane_count = l.split(',').count() as u32;
        }
        inp.pattern = pattern;
        inp.shared_headroom = SharedHeadroom { over_subscribe_ratio: ratio, pool_xoff };
        let h = mellanox_headroom(&inp).map_err(|e| shape(sw.place("PORT", &port, "speed"), format!("SONiC's headroom formula rejects this port: {e:?}")))?;
        let xoff_v = sw.field("BUFFER_PROFILE", &name, "xoff").unwrap_or_default();
        let xoff = num(sw, "BUFFER_PROFILE", &name, "xoff", xoff_v)?;
        if xoff == h.xoff.0 {
            continue;
        }
        let place = sw.place("BUFFER_PROFILE", &name, "xoff");
        if let Some(f) = found.iter_mut().find(|f| f.id == "headroom-vs-sonic" && f.switch == sw.name() && f.place == place) {
            if !f.ports.contains(&port) {
                f.ports.push(port.clone());
            }
            continue;
        }
        found.push(Finding {
            severity: Severity::Warning,
            id: "headroom-vs-sonic",
            switch: sw.name().to_string(),
            place,
            ports: vec![port.clone()],
            what: format!(
                "xoff {xoff} B differs from the {} B SONiC computes for {port} ({} {speed_mbps} Mb/s, {m} m, port MTU {} B, {} lanes, lossless MTU {} B with {} % small packets, shared headroom pool {})",
                h.xoff.0,
                gen.name(),
                inp.port_mtu.0,
                inp.lane_count,
                pattern.mtu.0,
                pattern.small_packet_percentage,
                if inp.shared_headroom.enabled() { "on" } else { "off" }
            ),
            failure: if xoff < h.xoff.0 {
                "less headroom than SONiC's own model reserves for this port: frames in flight after XOFF may be dropped in the lossless class".into()
            } else {
                "more headroom than SONiC reserves: buffer taken from the shared pool for no gain".into()
            },
            fix: format!("BUFFER_PROFILE|{name}|xoff = \"{}\" (xon \"{}\", size \"{}\"; {LUA_SOURCE}), or point the PG at NULL so buffermgrd computes it", h.xoff.0, h.xon.0, h.size.0),
        });
    }
    Ok(())
}

/// QUEUE entries by (port, queue): the key they came from and their fields.
fn queues(sw: &Switch) -> Result<BTreeMap<(String, u32), String>, ReadError> {
    let mut out = BTreeMap::new();
    for key in sw.table("QUEUE").into_iter().flat_map(|t| t.keys()) {
        let (ports, idx) = split_port_key(key).ok_or_else(|| shape(sw.place("QUEUE", key, ""), "expected a key PORT|QUEUES such as Ethernet0|3-4".into()))?;
        for p in ports {
            for &q in &idx {
                out.insert((p.to_string(), q), key.clone());
            }
        }
    }
    Ok(out)
}

/// (g) Every lossless queue needs a WRED profile with ECN marking on.
fn ecn(sw: &Switch, lossless: &BTreeMap<String, BTreeSet<u32>>, found: &mut Vec<Finding>, nc: &mut Vec<NotChecked>) -> Result<(), ReadError> {
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
/// entry (buffermgrd creates it at run time), and without `--cell`.
fn ecn_after_pfc(
    sw: &Switch,
    lossless: &BTreeMap<String, BTreeSet<u32>>,
    opts: &Options,
    found: &mut Vec<Finding>,
    nc: &mut Vec<NotChecked>,
) -> Result<(), ReadError> {
    use crate::roce::{ecn_vs_pfc, lowered_below_pfc, pfc_point, EcnVsPfc, ENCAP};
    use model::frame::{roce_frame, Transport};
    use units::Bytes;

    let Some(cell) = opts.cell else {
        not(nc, sw, "ecn-after-pfc", "(cell size)", "config_db has no buffer cell size: pass --cell");
        return Ok(());
    };
    for t in ["QUEUE", "WRED_PROFILE", "BUFFER_PG", "BUFFER_PROFILE", "BUFFER_POOL"] {
        if sw.table(t).is_none() {
            not(nc, sw, "ecn-after-pfc", t, "the ECN thresholds or the PFC point of a lossless queue are unknown");
            return Ok(());
        }
    }
    let q = queues(sw)?;
    let pgs = pg_keys(sw)?;
    let frame = roce_frame(ENCAP, Transport::WriteFirst, opts.path_mtu);
    let n = (lossless.len() as u64).saturating_sub(1).max(1);
    let mut evaluated = false;
    // WRED profile -> (Kmin, Kmax, largest PFC point, its derivation, ports short)
    let mut short: BTreeMap<String, (u64, u64, u64, String, Vec<String>)> = BTreeMap::new();
    for (port, pfc) in lossless {
        for &queue in pfc {
            let qkey = q.get(&(port.clone(), queue)).cloned().unwrap_or_else(|| format!("{port}|{queue}"));
            let Some(wred) = sw.field("QUEUE", &qkey, "wred_profile") else { continue };
            if sw.field("WRED_PROFILE", wred, "ecn").unwrap_or("ecn_none") == "ecn_none" {
                continue; // ecn-missing's finding
            }
            let Some(kmin) = sw.field("WRED_PROFILE", wred, "green_min_threshold") else { continue };
            let kmin = num(sw, "WRED_PROFILE", wred, "green_min_threshold", kmin)?;
            let kmax = match sw.field("WRED_PROFILE", wred, "green_max_threshold") {
                Some(v) => num(sw, "WRED_PROFILE", wred, "green_max_threshold", v)?,
                None => kmin,
            };
            let Some(pgkey) = pgs.get(&(port.clone(), queue)) else { continue };
            let Some(raw) = sw.field("BUFFER_PG", pgkey, "profile") else { continue };
            let prof = profile_name(raw);
            let (Some(th), Some(pool)) = (sw.field("BUFFER_PROFILE", prof, "dynamic_th"), sw.field("BUFFER_PROFILE", prof, "pool")) else { continue };
            let th: i8 =
                th.trim().parse().map_err(|_| shape(sw.place("BUFFER_PROFILE", prof, "dynamic_th"), format!("{th:?} is not a whole number in -128..127")))?;
            let size = match sw.field("BUFFER_PROFILE", prof, "size") {
                Some(v) => num(sw, "BUFFER_PROFILE", prof, "size", v)?,
                None => 0,
            };
            let Some(pool_size) = sw.field("BUFFER_POOL", pool, "size") else { continue };
            let pool_size = num(sw, "BUFFER_POOL", pool, "size", pool_size)?;
            evaluated = true;
            let p = pfc_point(cell, n, Bytes(pool_size), th, Bytes(size), frame);
            if ecn_vs_pfc(kmin, kmax, p.queue_bytes) != EcnVsPfc::PfcFirst {
                continue;
            }
            let why = format!(
                "{port} PG {queue} ({prof}): {n} ingress PGs each at {} + {} cells (size {size} B as reserved, alpha = 2^{th} of pool {pool}'s {pool_size} B), \
                 {:.1} B per {} B cell of {} B frames",
                p.reserved_cells, p.share_cells, p.per_cell, cell.0, frame.0
            );
            let e = short.entry(wred.to_string()).or_insert((kmin, kmax, 0, String::new(), vec![]));
            if p.queue_bytes > e.2 {
                (e.2, e.3) = (p.queue_bytes, why);
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

/// (h) Every lossless port needs a PFC watchdog, covering each lossless queue.
fn pfc_watchdog(sw: &Switch, lossless: &BTreeMap<String, BTreeSet<u32>>, found: &mut Vec<Finding>, nc: &mut Vec<NotChecked>) {
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
fn watchdog_vs_retry(
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

/// The NIC on `nic.port` against the switch: PFC priorities equal on both ends, DSCP trust
/// when the switch classifies by DSCP, the NIC's RoCE and CNP DSCPs through the switch's
/// maps ([`dscp_chain`] with the NIC's values: a RoCE DSCP outside the lossless class is a
/// `dscp-chain` error at the switch's map entry, a CNP DSCP in a paused class a `cnp-class`
/// warning), the CNP priority outside `pfc_enable`, and DCQCN enabled on the RoCE priority.
/// NIC-side findings are placed in the NIC file, at the field.
fn nic_checks(sw: &Switch, file: &str, nic: &NicConfig, opts: &Options, found: &mut Vec<Finding>) -> Result<(), ReadError> {
    let port = nic.port.as_str();
    let switch_pfc = match sw.field("PORT_QOS_MAP", port, "pfc_enable") {
        Some(v) => parse_list(v).ok_or_else(|| shape(sw.place("PORT_QOS_MAP", port, "pfc_enable"), format!("{v:?} is not a list of priorities")))?,
        None => BTreeSet::new(),
    };
    let at = |field: &str| Place { file: file.to_string(), path: field.to_string() };
    let list = |s: &BTreeSet<u32>| format!("[{}]", s.iter().map(u32::to_string).collect::<Vec<_>>().join(", "));
    let mut push = |severity, id, place, what: String, failure: &str, fix: String| {
        found.push(Finding { severity, id, switch: sw.name().to_string(), place, ports: vec![port.to_string()], what, failure: failure.into(), fix })
    };
    if let Some(pfc) = nic.pfc.as_ref().filter(|p| **p != switch_pfc) {
        push(
            Severity::Error,
            "nic-pfc-mismatch",
            at("pfc"),
            format!("the NIC pauses and honours PFC on {{{}}}, the switch port on pfc_enable {{{}}}", fmt_set(pfc), fmt_set(&switch_pfc)),
            "a priority lossless on one end only: the switch drops what the NIC expects it to pause for, or the NIC ignores the switch's pause frames and the switch's headroom overflows",
            format!("pfc = {} (mlnx_qos -i <if> --pfc with 1 at those priorities), the switch's pfc_enable", list(&switch_pfc)),
        );
    }
    if nic.trust == Some(Trust::Pcp) && port_map(sw, port, "dscp_to_tc_map").is_some() {
        push(
            Severity::Error,
            "nic-trust",
            at("trust"),
            "the NIC trusts PCP while the switch port classifies by DSCP (dscp_to_tc_map)".into(),
            "the NIC queues and pauses RoCE by VLAN priority, which an untagged RoCEv2 packet does not carry: RoCE leaves the NIC in priority 0, not the lossless one",
            "trust = \"dscp\" (mlnx_qos -i <if> --trust dscp)".into(),
        );
    }
    if let Some(c) = nic.cnp_priority.filter(|c| switch_pfc.contains(c)) {
        let free = (0..8).rev().find(|p| !switch_pfc.contains(p)).unwrap_or(0);
        push(
            Severity::Warning,
            "nic-cnp-priority",
            at("cnp_priority"),
            format!("the NIC sends CNPs on priority {c}, which the switch port pauses (pfc_enable {{{}}})", fmt_set(&switch_pfc)),
            "CNPs wait behind the pause exactly when the sender must slow down: congestion control starves and pauses spread",
            format!("cnp_priority = {free} (a priority outside pfc_enable; /sys/class/net/<if>/ecn/roce_np/cnp_802p_prio)"),
        );
    }
    let roce_prio = nic.roce_priority.or_else(|| nic.pfc.as_ref().and_then(|p| p.iter().next().copied()));
    for (field, set, role) in [("ecn_rp", &nic.ecn_rp, "reaction point (rate control)"), ("ecn_np", &nic.ecn_np, "notification point (CNPs)")] {
        let (Some(set), Some(p)) = (set, roce_prio) else { continue };
        if !set.contains(&p) {
            let mut with = set.clone();
            with.insert(p);
            push(
                Severity::Warning,
                "nic-dcqcn-off",
                at(field),
                format!("DCQCN's {role} is off on the RoCE priority {p} (enabled on {{{}}})", fmt_set(set)),
                "ECN marks on RoCE are ignored: senders never slow down and PFC becomes the only brake",
                format!("{field} = {} (echo 1 > /sys/class/net/<if>/ecn/{}/enable/{p})", list(&with), if field == "ecn_rp" { "roce_rp" } else { "roce_np" }),
            );
        }
    }
    // The NIC's DSCPs through the switch's maps, for its port only.
    if (nic.roce_dscp.is_some() || nic.cnp_dscp.is_some()) && !switch_pfc.is_empty() {
        let o = Options { roce_dscp: nic.roce_dscp.unwrap_or(opts.roce_dscp), cnp_dscp: nic.cnp_dscp.unwrap_or(opts.cnp_dscp), ..*opts };
        let one = BTreeMap::from([(port.to_string(), switch_pfc.clone())]);
        let mut mine = vec![];
        // A missing map table is already "not checked" for the switch.
        dscp_chain(sw, &one, &o, &mut mine, &mut vec![])?;
        for mut f in mine {
            f.what = format!("{file} (NIC on {port}): {}", f.what);
            found.push(f);
        }
    }
    Ok(())
}

/// Mellanox SAI's range of `dynamic_th`, the log2 of the dynamic threshold's alpha: -8
/// means alpha 0 (no shared buffer), -7..6 alpha 1/128..64, 7 unlimited; values below -8 are
/// read as 0 and values above 7 as unlimited (`sai_buffer_alpha_bounds_t`,
/// Mellanox/SAI-Implementation `mlnx_sai/src/mlnx_sai_buffer.c` at
/// 91c3f7bf987ccab46e14fce9152a9790e6c99daa).
pub const MELLANOX_DYNAMIC_TH: std::ops::RangeInclusive<i64> = -8..=7;

/// Whether the switch's platform is an NVIDIA (Mellanox) Spectrum one: SONiC names those
/// platforms `x86_64-mlnx_msn*` (e.g. `x86_64-mlnx_msn2700-r0`) and, for newer ones,
/// `x86_64-nvidia_sn*` (sonic-buildimage `device/mellanox/`).
fn is_mellanox(platform: &str) -> bool {
    platform.starts_with("x86_64-mlnx_") || platform.starts_with("x86_64-nvidia_")
}

/// A BUFFER_PROFILE's `dynamic_th` must be inside the ASIC's SAI range
/// ([`MELLANOX_DYNAMIC_TH`]); outside it the SAI clamps the value silently, so the profile
/// gets either no shared buffer or all of it, not the share written. Every profile is
/// checked, lossless or not: a lossy queue with an unlimited threshold takes the shared
/// buffer from the lossless PGs as well.
///
/// Only the Mellanox range has a cited source here; on another platform (or without
/// `DEVICE_METADATA|localhost|platform`) the check is "not checked". A value that is not a
/// whole number is an input error.
fn dynamic_th(sw: &Switch, found: &mut Vec<Finding>, nc: &mut Vec<NotChecked>) -> Result<(), ReadError> {
    let Some(profiles) = sw.table("BUFFER_PROFILE") else {
        not(nc, sw, "dynamic-th-range", "BUFFER_PROFILE", "no buffer profiles to check");
        return Ok(());
    };
    if !profiles.values().any(|e| e.fields.contains_key("dynamic_th")) {
        return Ok(());
    }
    let platform = sw.field("DEVICE_METADATA", "localhost", "platform");
    if !platform.is_some_and(is_mellanox) {
        let why = match platform {
            Some(p) => format!("known only for Mellanox SAI (x86_64-mlnx_*, x86_64-nvidia_*), not platform {p:?}"),
            None => "DEVICE_METADATA|localhost|platform is absent, so the ASIC is unknown".to_string(),
        };
        not(nc, sw, "dynamic-th-range", "(dynamic_th range)", &why);
        return Ok(());
    }
    let (lo, hi) = (*MELLANOX_DYNAMIC_TH.start(), *MELLANOX_DYNAMIC_TH.end());
    for (name, e) in profiles {
        let Some(v) = e.fields.get("dynamic_th") else { continue };
        let th: i64 = v.trim().parse().map_err(|_| shape(sw.place("BUFFER_PROFILE", name, "dynamic_th"), format!("{v:?} is not a whole number")))?;
        if MELLANOX_DYNAMIC_TH.contains(&th) {
            continue;
        }
        let (read_as, failure, fix) = if th < lo {
            (
                format!("{lo} (alpha 0)"),
                "the profile gets no shared buffer: its PG or queue holds only its reserved size and pauses (lossless) or drops (lossy) early",
                lo,
            )
        } else {
            (format!("{hi} (unlimited)"), "the profile may take the whole shared pool: one congested PG or queue starves the others of buffer", hi)
        };
        found.push(Finding {
            severity: Severity::Warning,
            id: "dynamic-th-range",
            switch: sw.name().to_string(),
            place: sw.place("BUFFER_PROFILE", name, "dynamic_th"),
            ports: vec![],
            what: format!("dynamic_th {th} is outside Mellanox SAI's {lo}..{hi}; the SAI reads it as {read_as}"),
            failure: failure.into(),
            fix: format!("BUFFER_PROFILE|{name}|dynamic_th = a value in {lo}..{hi} (\"{fix}\" is what the ASIC applies now)"),
        });
    }
    Ok(())
}
