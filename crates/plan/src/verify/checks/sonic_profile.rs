//! The headroom a lossless PG actually gets, including the profiles SONiC makes at run
//! time, which config_db does not hold:
//!
//! * **traditional model** (`DEVICE_METADATA|localhost|buffer_model` absent or
//!   "traditional"): a PG without a BUFFER_PG entry gets `pg_lossless_<speed>_<cable>_profile`,
//!   which buffermgrd reuses from config_db or creates from the switch's
//!   `pg_profile_lookup.ini` row ([`crate::verify::pg_lookup`]);
//! * **dynamic model** on an NVIDIA Spectrum switch: a PG whose BUFFER_PG profile is `NULL`
//!   gets the headroom Lua's values ([`model::sonic::mellanox_headroom`]), with the port's
//!   speed, cable, MTU and lanes, LOSSLESS_TRAFFIC_PATTERN and the shared headroom pool.
//!
//! Left out: the gearbox delay (taken as none), ports that are admin down (buffermgrd then
//! removes the PG on Mellanox and Barefoot), cable "0m" (buffermgrd deliberately creates no
//! profile), the dynamic model's PGs without a BUFFER_PG entry and on other ASICs.

use model::sonic::{mellanox_headroom, DynamicHeadroom, DynamicHeadroomInput, LosslessTrafficPattern, SharedHeadroom, Spectrum};
use units::{BitRate, Bytes, Length};

use super::headroom::{metres, profile_name};
use super::*;
use crate::verify::pg_lookup::{self, Row, Table};

/// `DEVICE_METADATA|localhost|buffer_model`; SONiC's default is "traditional"
/// (buffermgrd.sh starts the dynamic buffermgrd only for "dynamic").
pub(super) fn buffer_model(sw: &Switch) -> &str {
    sw.field("DEVICE_METADATA", "localhost", "buffer_model").unwrap_or("traditional")
}

pub(super) fn is_dynamic(sw: &Switch) -> bool {
    buffer_model(sw) == "dynamic"
}

/// The switch's pg_profile_lookup.ini, or why it is not known here.
pub(super) fn lookup_table(sw: &Switch) -> Result<&'static Table, String> {
    let (p, h) = (sw.field("DEVICE_METADATA", "localhost", "platform"), sw.field("DEVICE_METADATA", "localhost", "hwsku"));
    let (Some(p), Some(h)) = (p, h) else {
        return Err("DEVICE_METADATA|localhost has no platform and hwsku, which locate the switch's pg_profile_lookup.ini".into());
    };
    pg_lookup::for_switch(p, h).ok_or_else(|| format!("no pg_profile_lookup.ini here for platform {p:?}, hwsku {h:?}"))
}

/// A port's PORT `speed` and its CABLE_LENGTH (table key, value), as strings.
pub(super) fn speed_and_cable<'a>(sw: &'a Switch, port: &str) -> Option<(&'a str, &'a str, &'a str)> {
    let speed = sw.field("PORT", port, "speed")?;
    let (key, cable) = sw.table("CABLE_LENGTH")?.iter().find_map(|(k, e)| e.fields.get(port).map(|c| (k.as_str(), c.as_str())))?;
    Some((speed, key, cable))
}

/// The name buffermgrd gives the lossless profile it creates for a port in the traditional
/// model: `pg_lossless_<speed>_<cable>_profile` (sonic-swss `cfgmgr/buffermgr.cpp`; e.g.
/// `pg_lossless_40000_5m_profile` in sonic-utilities' `tests/counterpoll_input/config_db.json`),
/// when the port's speed and cable length are known.
pub(super) fn traditional_profile_name(sw: &Switch, port: &str) -> Option<String> {
    let (speed, _, cable) = speed_and_cable(sw, port)?;
    Some(format!("pg_lossless_{speed}_{cable}_profile"))
}

/// The pg_profile_lookup row buffermgrd would use for a port (traditional model).
pub(super) fn lookup_row(sw: &Switch, port: &str) -> Option<(&'static Table, &'static Row)> {
    let t = lookup_table(sw).ok()?;
    let (speed, _, cable) = speed_and_cable(sw, port)?;
    t.row(speed, cable).map(|r| (t, r))
}

/// A row's values as buffermgrd writes them into the profile.
pub(super) fn row_text(r: &Row) -> String {
    let offset = r.xon_offset.map(|o| format!(", xon_offset {o}")).unwrap_or_default();
    format!("size {}, xon {}, xoff {}, threshold {}{offset}", r.size, r.xon, r.xoff, r.threshold)
}

/// The switch-wide inputs of the headroom Lua.
#[derive(Clone, Copy, Debug)]
pub(super) struct LuaSwitch {
    pub gen: Spectrum,
    pub pattern: LosslessTrafficPattern,
    pub shared: SharedHeadroom,
}

/// The Lua's switch-wide inputs: LOSSLESS_TRAFFIC_PATTERN (sonic-buildimage
/// `buffers_config.j2`'s mtu 1024 / 50 % small packets when absent), BUFFER_POOL
/// `ingress_lossless_pool` `xoff` and DEFAULT_LOSSLESS_BUFFER_PARAMETER
/// `over_subscribe_ratio` (the shared headroom pool). `None` when the switch is not an
/// NVIDIA Spectrum one in the dynamic model.
pub(super) fn lua_switch(sw: &Switch) -> Result<Option<LuaSwitch>, ReadError> {
    let Some(gen) = sw.field("DEVICE_METADATA", "localhost", "platform").and_then(Spectrum::from_platform).filter(|_| is_dynamic(sw)) else {
        return Ok(None);
    };
    let t = "LOSSLESS_TRAFFIC_PATTERN";
    let pattern = match (sw.field(t, "AZURE", "mtu"), sw.field(t, "AZURE", "small_packet_percentage")) {
        (Some(m), Some(p)) => {
            let mtu = Bytes(num(sw, t, "AZURE", "mtu", m)?);
            let pct = num(sw, t, "AZURE", "small_packet_percentage", p)?;
            let pct = u8::try_from(pct)
                .ok()
                .filter(|&p| p <= 100)
                .ok_or_else(|| shape(sw.place(t, "AZURE", "small_packet_percentage"), format!("{p:?} is not a percentage 0..100")))?;
            LosslessTrafficPattern { mtu, small_packet_percentage: pct }
        }
        _ => LosslessTrafficPattern::default(),
    };
    let pool_xoff = match sw.field("BUFFER_POOL", "ingress_lossless_pool", "xoff") {
        Some(v) => Bytes(num(sw, "BUFFER_POOL", "ingress_lossless_pool", "xoff", v)?),
        None => Bytes(0),
    };
    let over_subscribe_ratio = over_subscribe_ratio(sw)?.unwrap_or(0.0);
    Ok(Some(LuaSwitch { gen, pattern, shared: SharedHeadroom { over_subscribe_ratio, pool_xoff } }))
}

/// DEFAULT_LOSSLESS_BUFFER_PARAMETER|AZURE|over_subscribe_ratio, if set.
pub(super) fn over_subscribe_ratio(sw: &Switch) -> Result<Option<f64>, ReadError> {
    let (t, k, f) = ("DEFAULT_LOSSLESS_BUFFER_PARAMETER", "AZURE", "over_subscribe_ratio");
    let Some(v) = sw.field(t, k, f) else { return Ok(None) };
    let r = v.trim().parse::<f64>().ok().filter(|r| r.is_finite() && *r >= 0.0);
    r.map(Some).ok_or_else(|| shape(sw.place(t, k, f), format!("{v:?} is not a ratio")))
}

/// The Lua's profile for one port, with its input; `None` without the port's speed or cable.
pub(super) fn lua_for_port(sw: &Switch, port: &str, l: &LuaSwitch) -> Result<Option<(DynamicHeadroom, DynamicHeadroomInput)>, ReadError> {
    let Some((speed, _, cable)) = speed_and_cable(sw, port) else { return Ok(None) };
    let speed_mbps = num(sw, "PORT", port, "speed", speed)?;
    let Some(m) = metres(cable) else { return Ok(None) };
    let mut inp = DynamicHeadroomInput::new(BitRate(speed_mbps.saturating_mul(1_000_000)), Length::from_m(m), l.gen);
    if let Some(v) = sw.field("PORT", port, "mtu") {
        inp.port_mtu = Bytes(num(sw, "PORT", port, "mtu", v)?);
    }
    if let Some(lanes) = sw.field("PORT", port, "lanes") {
        inp.lane_count = lanes.split(',').count() as u32;
    }
    inp.pattern = l.pattern;
    inp.shared_headroom = l.shared;
    let h = mellanox_headroom(&inp).map_err(|e| shape(sw.place("PORT", port, "speed"), format!("SONiC's headroom formula rejects this port: {e}")))?;
    Ok(Some((h, inp)))
}

/// The place of a `TABLE|key|field` no file defines yet: in the file that holds the table's
/// other entries (the switch's first file without the table).
pub(super) fn new_entry_place(sw: &Switch, table: &str, key: &str, field: &str) -> Place {
    let file = sw.table(table).and_then(|t| t.values().next()).map(|e| e.file.clone());
    let p = sw.place(table, key, field);
    Place { file: file.unwrap_or(p.file), path: p.path }
}

/// The headroom a lossless PG gets (its profile's xoff and size), where to change it and
/// where it comes from.
#[derive(Clone, Debug)]
pub(super) struct PgHeadroom {
    pub xoff: u64,
    /// The profile's `size`: the PG's reserved buffer (0 when the profile has none).
    pub size: u64,
    /// The config_db place that sets the xoff (or would, for a run-time profile).
    pub place: Place,
    /// The BUFFER_PROFILE name (buffermgrd's for a run-time profile, "NULL" for the Lua's).
    pub profile: String,
    /// Empty for a configured profile; else how SONiC computes it, for the finding's text.
    pub origin: String,
}

/// The headroom of one lossless PG (`key`: its BUFFER_PG key, if it has one). `None` when
/// the PG gets no headroom (another check's finding) or its value is not known here.
pub(super) fn pg_headroom(sw: &Switch, port: &str, key: Option<&str>, lua: Option<&LuaSwitch>) -> Result<Option<PgHeadroom>, ReadError> {
    let configured = |name: &str| -> Result<Option<PgHeadroom>, ReadError> {
        let Some(v) = sw.field("BUFFER_PROFILE", name, "xoff") else { return Ok(None) };
        let xoff = num(sw, "BUFFER_PROFILE", name, "xoff", v)?;
        let size = profile_size(sw, name)?.unwrap_or(0);
        Ok(Some(PgHeadroom { xoff, size, place: sw.place("BUFFER_PROFILE", name, "xoff"), profile: name.into(), origin: String::new() }))
    };
    let raw = key.and_then(|k| sw.field("BUFFER_PG", k, "profile"));
    match (key, raw.map(profile_name)) {
        (Some(k), Some("NULL")) => {
            let Some((h, _)) = lua.map(|l| lua_for_port(sw, port, l)).transpose()?.flatten() else { return Ok(None) };
            let origin = format!("computed at run time by SONiC's headroom Lua ({})", lua.map_or("", |l| l.gen.name()));
            Ok(Some(PgHeadroom { xoff: h.xoff.0, size: h.size.0, place: sw.place("BUFFER_PG", k, "profile"), profile: "NULL".into(), origin }))
        }
        (Some(_), Some(name)) => configured(name),
        (Some(_), None) => Ok(None),
        (None, _) if is_dynamic(sw) => Ok(None),
        (None, _) => {
            let Some(name) = traditional_profile_name(sw, port) else { return Ok(None) };
            if sw.table("BUFFER_PROFILE").is_some_and(|t| t.contains_key(&name)) {
                return configured(&name);
            }
            let Some((t, r)) = lookup_row(sw, port) else { return Ok(None) };
            let origin = format!("created at run time by buffermgrd from {}", t.source());
            Ok(Some(PgHeadroom { xoff: r.xoff, size: r.size, place: new_entry_place(sw, "BUFFER_PROFILE", &name, "xoff"), profile: name, origin }))
        }
    }
}

/// A BUFFER_PROFILE's `size`, if it has one.
pub(super) fn profile_size(sw: &Switch, name: &str) -> Result<Option<u64>, ReadError> {
    sw.field("BUFFER_PROFILE", name, "size").map(|v| num(sw, "BUFFER_PROFILE", name, "size", v)).transpose()
}
