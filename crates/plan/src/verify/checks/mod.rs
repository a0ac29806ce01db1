//! The findings, one function per check, in the order they are reported: the classes and
//! MTU (`chain`), the queues PFC pauses and the CNPs' queue and scheduler (`scheduling`),
//! lossless buffers and headroom (`headroom`), ECN (`ecn`), the PFC watchdog (`watchdog`)
//! and the NICs' DCQCN parameters (`dcqcn`); what they share (the lossless ports, parsing helpers) is here.
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
//! Left out: per-port global maps other than `PORT_QOS_MAP|global`.

use std::collections::{BTreeMap, BTreeSet};

use model::frame::{BTH, ICRC, IPV4_HEADER, RETH, UDP_HEADER};
use model::sonic::DEFAULT_PORT_MTU;
use serde::Serialize;

mod buffer;
mod chain;
mod dcqcn;
mod ecn;
mod headroom;
mod headroom_sonic;
mod scheduling;
mod sonic_profile;
mod watchdog;

use buffer::*;
use chain::*;
use dcqcn::*;
use ecn::*;
use headroom::*;
use headroom_sonic::*;
use scheduling::*;
use watchdog::*;

pub use headroom::MELLANOX_DYNAMIC_TH;

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
    /// `headroom-vs-sonic`, `pg-profile-lookup-missing`, `buffer-overcommit`, `shared-headroom-pool`, `ecn-after-pfc`,
    /// `pfc-watchdog-missing`, `watchdog-after-retry`, `dynamic-th-range`, `nic-pfc-mismatch`, `nic-trust`,
    /// `nic-cnp-priority`, `nic-dcqcn-off`, `pfc-queue-map`, `cnp-scheduler`, `nic-dcqcn-mismatch`,
    /// `nic-dcqcn-rates`, `nic-cnp-interval`).
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
        pfc_queue_map(sw, &lossless, opts, &mut found, &mut not_checked)?;
        cnp_queue_checks(sw, &lossless, opts, &mut found, &mut not_checked)?;
        port_mtu(sw, &lossless, opts, &mut found, &mut not_checked)?;
        cable_length(sw, &lossless, &mut found, &mut not_checked)?;
        pg_profile(sw, &lossless, &mut found, &mut not_checked)?;
        pg_lookup_missing(sw, &lossless, &mut found, &mut not_checked)?;
        headroom_ieee(sw, &lossless, opts, &mut found, &mut not_checked)?;
        headroom_sonic(sw, &lossless, &mut found, &mut not_checked)?;
        buffer_accounting(sw, &lossless, opts, &mut found, &mut not_checked)?;
        ecn(sw, &lossless, &mut found, &mut not_checked)?;
        ecn_after_pfc(sw, &lossless, opts, &mut found, &mut not_checked)?;
        pfc_watchdog(sw, &lossless, &mut found, &mut not_checked);
        watchdog_vs_retry(sw, &lossless, opts, &my_nics, &mut found)?;
        for (file, nic) in &my_nics {
            nic_checks(sw, file, nic, opts, &mut found)?;
            dcqcn_rates(sw, file, nic, &mut found)?;
            cnp_interval(sw, &lossless, file, nic, opts, &mut found)?;
        }
        dynamic_th(sw, &mut found, &mut not_checked)?;
    }
    pfc_peers(switches, &mut found, &mut not_checked)?;
    dcqcn_mismatch(nics, &mut found);
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

/// Whether every table a check reads is present; the first absent one is noted as the
/// reason the check did not run.
fn tables_present(sw: &Switch, nc: &mut Vec<NotChecked>, check: &'static str, tables: &[&'static str], why: &str) -> bool {
    match tables.iter().find(|t| sw.table(t).is_none()) {
        Some(t) => {
            not(nc, sw, check, t, why);
            false
        }
        None => true,
    }
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

/// The entries of a `PORTS|INDICES`-keyed table (QUEUE, BUFFER_PG) by (port, index): the
/// key each came from. `indices` names the key's second part in the error.
fn keys_by_port(sw: &Switch, table: &str, indices: &str) -> Result<BTreeMap<(String, u32), String>, ReadError> {
    let mut out = BTreeMap::new();
    for key in sw.table(table).into_iter().flat_map(|t| t.keys()) {
        let (ports, idx) =
            split_port_key(key).ok_or_else(|| shape(sw.place(table, key, ""), format!("expected a key PORT|{indices} such as Ethernet0|3-4")))?;
        for p in ports {
            for &i in &idx {
                out.insert((p.to_string(), i), key.clone());
            }
        }
    }
    Ok(out)
}

fn fmt_set(s: &BTreeSet<u32>) -> String {
    s.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
}
