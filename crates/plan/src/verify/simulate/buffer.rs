//! The switches' lossless buffer settings for the scenario's `[buffer]` section, from each
//! simulated lossless port's BUFFER_PG → BUFFER_PROFILE → BUFFER_POOL.
//!
//! The simulator's MMU (`fabric::sim::mmu`) has per (ingress port, PG) a reserved part, a
//! share of one pool under a dynamic (α·free) or static trigger, and a headroom above the
//! trigger; one set of values for the whole fabric, except the headroom, which a
//! `misconfigured-port` fault at t = 0 sets per port. So:
//!
//! * headroom = the profile's `xoff` (both vendors: the bytes a PG may take after it sent
//!   XOFF); the fabric's value is the *base* profile's (the one most simulated lossless
//!   ports use), every port whose profile has another `xoff` gets it by a fault at t = 0;
//! * reserved = the part of `size` below the trigger: on Mellanox/NVIDIA platforms size =
//!   xon + xoff, so `size − xoff`; on others (Broadcom) `size` is the PG's guaranteed
//!   minimum and the headroom is apart from it, so `size` (issue 16's vendor semantics;
//!   sonic-buildimage `device/*/pg_profile_lookup.ini` columns size, xon, xoff);
//! * trigger = `dynamic_th` (α = 2^dynamic_th, clamped to the simulator's −7..3 with a note:
//!   SONiC's 7 means "unlimited") or `static_th` (a static trigger);
//! * resume = `xon_offset` below the trigger (Broadcom's XON_OFFSET_TH), else `xon` as an
//!   absolute occupancy, else the simulator's auto (two frames) with a note;
//! * the shared pool = the profile's BUFFER_POOL `size` (pools exclude reserved and
//!   headroom, as Mellanox's do; on Broadcom this counts the guaranteed minima twice, a
//!   note says so), and a pool `xoff` is the shared headroom pool. The scenario's `total` is
//!   that pool plus every switch's reserves and headroom, so the simulator's shared part
//!   (`total − reserved − headroom`) is the pool; every switch gets as many ports as the
//!   largest one, so each has the same shared part.
//!
//! Left out: per-port reserved, trigger and resume (the base profile's for all, with a note
//! naming the ports that differ), egress (BUFFER_QUEUE) limits, lossy PG profiles.

use std::collections::BTreeMap;

use units::Bytes;

use super::super::config_db::{reference, split_port_key, ReadError, Switch};
use super::toml::Origin;

/// One lossless profile's values with their origins.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    pub switch: usize,
    pub name: String,
    pub xoff: (u64, Origin),
    pub reserved: (u64, Origin),
    /// `Some(dynamic_th)` or `None` with a static trigger at `static_th` bytes.
    pub trigger: (Trigger, Origin),
    pub resume: Option<(Resume, Origin)>,
    pub pool: (u64, Origin),
    pub pool_xoff: Option<(u64, Origin)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    Dynamic(i64),
    Static(u64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resume {
    Offset(u64),
    Absolute(u64),
}

fn shape(sw: &Switch, t: &str, key: &str, field: &str, msg: String) -> ReadError {
    let p = sw.place(t, key, field);
    ReadError::Shape { file: p.file, place: p.path, msg }
}

fn num(sw: &Switch, t: &str, key: &str, field: &str) -> Result<Option<(u64, Origin)>, ReadError> {
    let Some(v) = sw.field(t, key, field) else { return Ok(None) };
    let n = v.trim().parse().map_err(|_| shape(sw, t, key, field, format!("{v:?} is not a whole number of bytes")))?;
    Ok(Some((n, Origin::of(sw, t, key, field))))
}

/// Mellanox/NVIDIA Spectrum platforms ([`crate::verify::platform::is_mellanox`]), whose PG
/// `size` includes the headroom.
fn is_mellanox(sw: &Switch) -> bool {
    sw.field("DEVICE_METADATA", "localhost", "platform").is_some_and(crate::verify::platform::is_mellanox)
}

/// The profile of a lossless port's PGs (the lowest PG's; a note if its PGs differ).
pub fn port_profile(switch: usize, sw: &Switch, port: &str, pgs: &[u32], notes: &mut Vec<String>) -> Result<Profile, ReadError> {
    let mut names = vec![];
    for key in sw.table("BUFFER_PG").into_iter().flat_map(|t| t.keys()) {
        let Some((ports, idx)) = split_port_key(key) else {
            return Err(shape(sw, "BUFFER_PG", key, "", "expected a key PORT|PGS such as Ethernet0|3-4".into()));
        };
        if ports.contains(&port) && pgs.iter().any(|p| idx.contains(p)) {
            let raw = sw.field("BUFFER_PG", key, "profile").unwrap_or("");
            let name = reference(raw, "BUFFER_PROFILE").to_string();
            names.push((key.clone(), name));
        }
    }
    let pg_list = pgs.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    let Some((key, name)) = names.first().cloned() else {
        return Err(ReadError::Shape {
            file: sw.files.first().cloned().unwrap_or_default(),
            place: format!("BUFFER_PG|{port}|{pg_list}"),
            msg: "absent: the lossless PG's headroom is created by buffermgrd at run time, which config_db does not hold; --simulate needs the configured profile".into(),
        });
    };
    if names.iter().any(|(_, n)| *n != name) {
        notes.push(format!("{} {port}: its lossless PGs use different profiles; {name} (BUFFER_PG|{key}) is simulated for all", sw.name()));
    }
    if name == "NULL" || name.is_empty() || sw.field("BUFFER_PROFILE", &name, "xoff").is_none() {
        return Err(shape(
            sw,
            "BUFFER_PG",
            &key,
            "profile",
            format!("{name:?} is not a profile with an xoff (headroom) in config_db: nothing to simulate the lossless PG with"),
        ));
    }
    profile(switch, sw, &name)
}

/// One BUFFER_PROFILE's values, read as the module doc says.
fn profile(switch: usize, sw: &Switch, name: &str) -> Result<Profile, ReadError> {
    let t = "BUFFER_PROFILE";
    let xoff = num(sw, t, name, "xoff")?.expect("checked by the caller");
    let size = num(sw, t, name, "size")?.unwrap_or((0, Origin::Assumed(format!("BUFFER_PROFILE|{name} has no size: 0"))));
    let reserved = if is_mellanox(sw) {
        (size.0.saturating_sub(xoff.0), Origin::Given(format!("size - xoff (Mellanox: size = xon + xoff): {} minus {}", size.1.text(), xoff.1.text())))
    } else {
        size
    };
    let trigger = match (sw.field(t, name, "dynamic_th"), num(sw, t, name, "static_th")?) {
        (Some(v), _) => {
            let th: i64 = v.trim().parse().map_err(|_| shape(sw, t, name, "dynamic_th", format!("{v:?} is not a whole number")))?;
            (Trigger::Dynamic(th), Origin::of(sw, t, name, "dynamic_th"))
        }
        (None, Some((s, o))) => (Trigger::Static(s), o),
        (None, None) => return Err(shape(sw, t, name, "dynamic_th", "absent, and no static_th: the PG's pause trigger is unknown".into())),
    };
    let resume = match (num(sw, t, name, "xon_offset")?, num(sw, t, name, "xon")?) {
        (Some((o, orig)), _) => Some((Resume::Offset(o), orig)),
        (None, Some((x, orig))) => Some((Resume::Absolute(x), orig)),
        (None, None) => None,
    };
    let pool_name = sw.field(t, name, "pool").map(|p| reference(p, "BUFFER_POOL").to_string());
    let pool_name = pool_name.ok_or_else(|| shape(sw, t, name, "pool", "absent: the profile's pool (its shared buffer) is unknown".into()))?;
    let pool = num(sw, "BUFFER_POOL", &pool_name, "size")?
        .ok_or_else(|| shape(sw, t, name, "pool", format!("{pool_name:?}: no BUFFER_POOL|{pool_name}|size in config_db")))?;
    let pool_xoff = num(sw, "BUFFER_POOL", &pool_name, "xoff")?.filter(|x| x.0 > 0);
    Ok(Profile { switch, name: name.to_string(), xoff, reserved, trigger, resume, pool, pool_xoff })
}

/// The base profile: the one the most simulated lossless ports use (the first such in
/// switch and port order on a tie).
pub fn base(per_port: &[(usize, String, Profile)]) -> &Profile {
    let mut count: BTreeMap<(usize, &str), (usize, usize)> = BTreeMap::new();
    for (i, (_, _, p)) in per_port.iter().enumerate() {
        count.entry((p.switch, p.name.as_str())).or_insert((0, i)).0 += 1;
    }
    let best = count.values().max_by_key(|(n, first)| (*n, std::cmp::Reverse(*first))).expect("at least one lossless port");
    &per_port[best.1].2
}

/// Bytes as a scenario size.
pub fn b(n: u64) -> String {
    format!("\"{}B\"", Bytes(n).0)
}
