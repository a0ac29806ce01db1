//! The classes of the scenario's `[roce]` section from PORT_QOS_MAP and the maps it names:
//! the lossless priorities (`pfc_enable`), DSCP → TC (DSCP_TO_TC_MAP, a port's own map or
//! `PORT_QOS_MAP|global`'s), TC → PG (TC_TO_PRIORITY_GROUP_MAP), and ECN per lossless queue
//! (QUEUE `wred_profile` → WRED_PROFILE).
//!
//! The scenario has one set of each for the fabric: the *base* is what most simulated
//! switch ports have; a port whose DSCP map differs gets a `misconfigured-port`
//! `dscp_to_tc` fault at t = 0 (the map it applies to what arrives), a lossy port on a
//! switch-to-switch link gets `pfc = false`. Differences the scenario cannot express
//! (another non-empty `pfc_enable`, TC → PG map or WRED profile on one port, a TC → queue
//! map other than the identity the simulator uses) are notes.
//!
//! ECN: a WRED profile with `ecn` other than `ecn_none` marks with Kmin
//! `green_min_threshold`, Kmax `green_max_threshold`, Pmax `green_drop_probability` %
//! (SAI's WRED attributes, sonic-swss `orchagent/qosorch.cpp`); yellow and red are left out
//! (RoCE traffic is green).

use std::collections::{BTreeMap, BTreeSet};

use super::super::config_db::{reference, split_port_key, ReadError, Switch};
use super::toml::Origin;

/// A map with the place it came from (`TABLE|name`), or `None` for no map.
pub type Map = (BTreeMap<u8, u8>, Option<Origin>);

/// One simulated switch port's classes.
#[derive(Clone, Debug)]
pub struct PortClasses {
    pub pfc: BTreeSet<u32>,
    pub pfc_origin: Origin,
    pub dscp_to_tc: Map,
    pub tc_to_pg: Map,
    pub tc_to_queue: Map,
}

fn shape(sw: &Switch, t: &str, key: &str, field: &str, msg: String) -> ReadError {
    let p = sw.place(t, key, field);
    ReadError::Shape { file: p.file, place: p.path, msg }
}

/// A port's map of kind `field` (`dscp_to_tc_map`, ...) from table `table`, falling back to
/// `PORT_QOS_MAP|global`.
fn map(sw: &Switch, port: &str, field: &str, table: &str, max_key: u8) -> Result<Map, ReadError> {
    let (qkey, name) = match sw.field("PORT_QOS_MAP", port, field) {
        Some(n) => (port, n),
        None => match sw.field("PORT_QOS_MAP", "global", field) {
            Some(n) => ("global", n),
            None => return Ok((BTreeMap::new(), None)),
        },
    };
    let name = reference(name, table).to_string();
    let Some(entry) = sw.table(table).and_then(|t| t.get(&name)) else {
        return Err(shape(sw, "PORT_QOS_MAP", qkey, field, format!("{name:?}: no {table}|{name} in config_db")));
    };
    let mut m = BTreeMap::new();
    for (k, v) in &entry.fields {
        let key: Option<u8> = k.trim().parse().ok().filter(|&x| x <= max_key);
        let val: Option<u8> = v.trim().parse().ok().filter(|&x| x < 8);
        match (key, val) {
            (Some(a), Some(b)) => {
                m.insert(a, b);
            }
            _ => return Err(shape(sw, table, &name, k, format!("{k:?} -> {v:?} is not an entry 0..{max_key} -> 0..7"))),
        }
    }
    Ok((m, Some(Origin::Config(sw.place(table, &name, "")))))
}

/// The classes of a simulated switch port.
pub fn port_classes(sw: &Switch, port: &str) -> Result<PortClasses, ReadError> {
    let pfc = match sw.field("PORT_QOS_MAP", port, "pfc_enable") {
        Some(v) => super::super::config_db::parse_list(v)
            .filter(|s| s.iter().all(|&p| p < 8))
            .ok_or_else(|| shape(sw, "PORT_QOS_MAP", port, "pfc_enable", format!("{v:?} is not a list of priorities 0..7")))?,
        None => BTreeSet::new(),
    };
    Ok(PortClasses {
        pfc,
        pfc_origin: Origin::of(sw, "PORT_QOS_MAP", port, "pfc_enable"),
        dscp_to_tc: map(sw, port, "dscp_to_tc_map", "DSCP_TO_TC_MAP", 63)?,
        tc_to_pg: map(sw, port, "tc_to_pg_map", "TC_TO_PRIORITY_GROUP_MAP", 7)?,
        tc_to_queue: map(sw, port, "tc_to_queue_map", "TC_TO_QUEUE_MAP", 7)?,
    })
}

/// The value most ports have (the first such on a tie), by `key`.
pub fn most_common<T, K: Ord>(items: &[T], key: impl Fn(&T) -> K) -> Option<&T> {
    let mut count: BTreeMap<K, (usize, usize)> = BTreeMap::new();
    for (i, it) in items.iter().enumerate() {
        count.entry(key(it)).or_insert((0, i)).0 += 1;
    }
    count.values().max_by_key(|(n, first)| (*n, std::cmp::Reverse(*first))).map(|&(_, i)| &items[i])
}

/// RED marking of one lossless queue: Kmin, Kmax (bytes), Pmax, with the WRED profile's place.
#[derive(Clone, Debug, PartialEq)]
pub struct Ecn {
    pub kmin: (u64, Origin),
    pub kmax: (u64, Origin),
    pub pmax_percent: (u64, Origin),
}

/// The ECN marking of queue `q` of a port, if its WRED profile marks.
pub fn queue_ecn(sw: &Switch, port: &str, q: u32) -> Result<Option<Ecn>, ReadError> {
    let mut profile = None;
    for key in sw.table("QUEUE").into_iter().flat_map(|t| t.keys()) {
        let Some((ports, idx)) = split_port_key(key) else { continue };
        if ports.contains(&port) && idx.contains(&q) {
            profile = sw.field("QUEUE", key, "wred_profile").map(|p| reference(p, "WRED_PROFILE").to_string());
        }
    }
    let Some(name) = profile else { return Ok(None) };
    let t = "WRED_PROFILE";
    if sw.table(t).and_then(|w| w.get(&name)).is_none() {
        return Ok(None);
    }
    if !sw.field(t, &name, "ecn").is_some_and(|e| e.trim() != "ecn_none") {
        return Ok(None);
    }
    let n = |field: &str| -> Result<(u64, Origin), ReadError> {
        let v = sw.field(t, &name, field).ok_or_else(|| shape(sw, t, &name, field, "absent: the profile marks ECN but its threshold is unknown".into()))?;
        let x = v.trim().parse().map_err(|_| shape(sw, t, &name, field, format!("{v:?} is not a whole number")))?;
        Ok((x, Origin::of(sw, t, &name, field)))
    };
    let (kmin, kmax, p) = (n("green_min_threshold")?, n("green_max_threshold")?, n("green_drop_probability")?);
    if kmin.0 > kmax.0 {
        return Err(shape(sw, t, &name, "green_min_threshold", format!("{} is above green_max_threshold {}", kmin.0, kmax.0)));
    }
    if p.0 > 100 {
        return Err(shape(sw, t, &name, "green_drop_probability", format!("{} is not a percentage 0..100", p.0)));
    }
    Ok(Some(Ecn { kmin, kmax, pmax_percent: p }))
}
