//! `headroom-vs-sonic`: a lossless PG's configured profile against what SONiC itself would
//! configure for the port: the switch's `pg_profile_lookup.ini` row in the traditional
//! buffer model, the headroom Lua on an NVIDIA Spectrum switch in the dynamic one
//! ([`super::sonic_profile`]). A profile that differs is allowed (SONiC calls it a headroom
//! override), so the finding is a warning. Once per profile, with every port that uses it.
//!
//! Left out: the gearbox delay (taken as none); the traditional rows' `threshold` and
//! `xon_offset` (only `xoff`, `xon` and `size` are compared); other ASICs in the dynamic
//! model and switches whose table is not known here ("not checked").

use model::sonic::LUA_SOURCE;

use super::headroom::{pg_keys, profile_name};
use super::sonic_profile::*;
use super::*;

/// SONiC's own values for one port: (xoff, xon, size), what they were computed from, and the
/// source to name in the fix.
type Expected = ((u64, u64, u64), String, String);

/// Lossless PGs whose configured profile has an `xoff`: (port, profile), once each.
fn configured_lossless(sw: &Switch, lossless: &BTreeMap<String, BTreeSet<u32>>) -> Result<Vec<(String, String)>, ReadError> {
    let pgs = pg_keys(sw)?;
    let mut out: Vec<(String, String)> = vec![];
    for (port, pfc) in lossless {
        for &pg in pfc {
            // Without a BUFFER_PG entry, buffermgrd reuses a profile of its own name.
            let name = match pgs.get(&(port.clone(), pg)) {
                Some(key) => sw.field("BUFFER_PG", key, "profile").map(|raw| profile_name(raw).to_string()),
                None if !is_dynamic(sw) => traditional_profile_name(sw, port),
                None => None,
            };
            let Some(name) = name.filter(|n| sw.field("BUFFER_PROFILE", n, "xoff").is_some()) else { continue };
            if !out.iter().any(|(p, n)| p == port && *n == name) {
                out.push((port.clone(), name));
            }
        }
    }
    Ok(out)
}

/// SONiC's values for a port, `None` when they are not known (no row, no speed or cable).
fn expected(sw: &Switch, port: &str, lua: Option<&LuaSwitch>) -> Result<Option<Expected>, ReadError> {
    if let Some(l) = lua {
        let Some((h, inp)) = lua_for_port(sw, port, l)? else { return Ok(None) };
        let from = format!(
            "{} {} Mb/s, {} m, port MTU {} B, {} lanes, lossless MTU {} B with {} % small packets, shared headroom pool {}",
            l.gen.name(),
            inp.speed.0 / 1_000_000,
            inp.cable_length.as_m_f64(),
            inp.port_mtu.0,
            inp.lane_count,
            l.pattern.mtu.0,
            l.pattern.small_packet_percentage,
            if inp.shared_headroom.enabled() { "on" } else { "off" }
        );
        return Ok(Some(((h.xoff.0, h.xon.0, h.size.0), from, LUA_SOURCE.to_string())));
    }
    let Some((t, r)) = lookup_row(sw, port) else { return Ok(None) };
    Ok(Some(((r.xoff, r.xon, r.size), format!("pg_profile_lookup.ini row {} {}", r.speed, r.cable), t.source())))
}

/// Why SONiC's own values are not known on this switch, or `None` when they are.
fn why_unknown(sw: &Switch, lua: Option<&LuaSwitch>) -> Option<String> {
    if lua.is_some() {
        return None;
    }
    if is_dynamic(sw) {
        let p = sw.field("DEVICE_METADATA", "localhost", "platform");
        return Some(match p {
            Some(p) => format!("platform {p:?} has no SONiC headroom formula here (the dynamic model on NVIDIA Spectrum only)"),
            None => "DEVICE_METADATA|localhost|platform is absent".into(),
        });
    }
    lookup_table(sw).err()
}

/// (d, second half) See the module doc.
pub(super) fn headroom_sonic(
    sw: &Switch,
    lossless: &BTreeMap<String, BTreeSet<u32>>,
    found: &mut Vec<Finding>,
    nc: &mut Vec<NotChecked>,
) -> Result<(), ReadError> {
    let with_xoff = configured_lossless(sw, lossless)?;
    if with_xoff.is_empty() {
        return Ok(());
    }
    let lua = lua_switch(sw)?;
    if let Some(why) = why_unknown(sw, lua.as_ref()) {
        not(nc, sw, "headroom-vs-sonic", "(SONiC headroom model)", &why);
        return Ok(());
    }
    for (port, name) in with_xoff {
        let Some(((xoff, xon, size), from, source)) = expected(sw, &port, lua.as_ref())? else { continue };
        let mut have = [("xoff", xoff), ("xon", xon), ("size", size)].map(|(f, want)| (f, want, sw.field("BUFFER_PROFILE", &name, f)));
        let mut differ = vec![];
        for (field, want, got) in &mut have {
            let Some(v) = got else { continue };
            let got = num(sw, "BUFFER_PROFILE", &name, field, v)?;
            if got != *want {
                differ.push((*field, got, *want));
            }
        }
        let Some(&(first, got0, want0)) = differ.first() else { continue };
        let place = sw.place("BUFFER_PROFILE", &name, first);
        if let Some(f) = found.iter_mut().find(|f| f.id == "headroom-vs-sonic" && f.switch == sw.name() && f.place == place) {
            if !f.ports.contains(&port) {
                f.ports.push(port.clone());
            }
            continue;
        }
        let also = differ[1..].iter().map(|(f, g, w)| format!("; {f} {g} B, SONiC {w} B")).collect::<String>();
        let xoff_short = differ.iter().any(|&(f, g, w)| f == "xoff" && g < w);
        found.push(Finding {
            severity: Severity::Warning,
            id: "headroom-vs-sonic",
            switch: sw.name().to_string(),
            place,
            ports: vec![port.clone()],
            what: format!("{first} {got0} B differs from the {want0} B SONiC computes for {port} ({from}){also}"),
            failure: if xoff_short {
                "less headroom than SONiC's own model reserves for this port: frames in flight after XOFF may be dropped in the lossless class".into()
            } else {
                "not the buffer SONiC reserves for this port: headroom or shared buffer taken or given for no modelled reason".into()
            },
            fix: format!(
                "BUFFER_PROFILE|{name}|xoff = \"{xoff}\" (xon \"{xon}\", size \"{size}\"; {source}){}",
                if lua.is_some() {
                    ", or point the PG at NULL so buffermgrd computes it"
                } else {
                    ", or delete the profile so buffermgrd creates it from the table"
                }
            ),
        });
    }
    Ok(())
}
