//! Lossless buffers: cable lengths, the PG profiles buffermgrd would create (and whether
//! the switch's pg_profile_lookup.ini lets it), headroom against the IEEE 802.1Qbb worst
//! case, and `dynamic_th` against the ASIC's range. The comparison with SONiC's own
//! headroom is `headroom_sonic`; what SONiC makes at run time is `sonic_profile`.

use super::sonic_profile::*;
use super::*;

/// Cable length in metres as SONiC writes it (`"5m"`).
pub(super) fn metres(s: &str) -> Option<u64> {
    s.trim().strip_suffix('m')?.parse().ok()
}

/// (f) buffermgrd needs each lossless port's cable length to create its headroom profile.
pub(super) fn cable_length(
    sw: &Switch,
    lossless: &BTreeMap<String, BTreeSet<u32>>,
    found: &mut Vec<Finding>,
    nc: &mut Vec<NotChecked>,
) -> Result<(), ReadError> {
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

/// (c, part) A lossless PG's BUFFER_PG entry must name a profile with headroom (`xoff`).
///
/// A lossless PG without a BUFFER_PG entry is [`pg_lookup_missing`]'s (the traditional model
/// creates its profile at run time), and an entry with profile `NULL` is the dynamic
/// model's "computed at run time". In the traditional model an entry may name
/// buffermgrd's own `pg_lossless_<speed>_<cable>_profile` without defining it: buffermgrd
/// creates it from the switch's pg_profile_lookup.ini row, so that is flagged only when the
/// switch's table is known and has no row. The fix names the profile buffermgrd would
/// create for the port and, when the switch's table is known, its values.
pub(super) fn pg_profile(sw: &Switch, lossless: &BTreeMap<String, BTreeSet<u32>>, found: &mut Vec<Finding>, nc: &mut Vec<NotChecked>) -> Result<(), ReadError> {
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
            let own = traditional_profile_name(sw, port);
            let row = lookup_row(sw, port);
            let created_at_run_time = !is_dynamic(sw) && own.as_deref() == Some(name) && row.is_some();
            let would = match (&own, row) {
                (Some(n), Some((t, r))) => format!(" (buffermgrd's profile for this port: {n:?}, {} from {})", row_text(r), t.source()),
                (Some(n), None) => format!(" (buffermgrd's name for this port's lossless profile: {n:?})"),
                (None, _) => String::new(),
            };
            let what = match profiles.and_then(|t| t.get(name)) {
                None if created_at_run_time => continue,
                None => format!("lossless PG {pg} names BUFFER_PROFILE {name:?}, which no file of this switch defines"),
                Some(e) if !e.fields.contains_key("xoff") => format!("lossless PG {pg} uses profile {name:?}, which has no xoff (headroom)"),
                Some(_) => continue,
            };
            found.push(Finding {
                severity: Severity::Error,
                id: "pg-headroom-profile",
                switch: sw.name().to_string(),
                place: sw.place("BUFFER_PG", key, "profile"),
                ports: vec![port.clone()],
                what,
                failure: FAIL.into(),
                fix: format!("BUFFER_PG|{key}|profile = a lossless profile with xon and xoff{would}, or delete the entry so buffermgrd creates it"),
            });
        }
    }
    Ok(())
}

/// (c, rest) In the traditional model buffermgrd creates the profile of a lossless PG
/// without a BUFFER_PG entry from the switch's pg_profile_lookup.ini row for the port's PORT
/// `speed` and CABLE_LENGTH, matched as exact strings; without such a row it logs "No PG
/// profile configured for speed ... and cable length ..." and creates neither the profile
/// nor the BUFFER_PG entry (sonic-swss `cfgmgr/buffermgr.cpp` `doSpeedUpdateTask`, which
/// checks the row before it looks for an existing profile). So the PG is lossless with no
/// headroom: an error, `pg-profile-lookup-missing`. It is placed at the port's CABLE_LENGTH
/// when the table has rows for the speed (the fix: the shortest listed length at least as
/// long, or the longest), else at PORT `speed`.
///
/// Not checked: the dynamic model (no table), switches whose table is not known here
/// ([`crate::verify::pg_lookup`]), cable "0m" (buffermgrd skips such ports on purpose) and
/// ports without a speed or cable length ([`cable_length`]'s finding).
pub(super) fn pg_lookup_missing(
    sw: &Switch,
    lossless: &BTreeMap<String, BTreeSet<u32>>,
    found: &mut Vec<Finding>,
    nc: &mut Vec<NotChecked>,
) -> Result<(), ReadError> {
    if is_dynamic(sw) || sw.table("BUFFER_PG").is_none() {
        return Ok(());
    }
    let by_pg = pg_keys(sw)?;
    let runtime: Vec<(&String, Vec<u32>)> = lossless
        .iter()
        .map(|(p, pfc)| (p, pfc.iter().copied().filter(|&pg| !by_pg.contains_key(&(p.clone(), pg))).collect::<Vec<_>>()))
        .filter(|(_, v)| !v.is_empty())
        .collect();
    if runtime.is_empty() {
        return Ok(());
    }
    let table = match lookup_table(sw) {
        Ok(t) => t,
        Err(why) => {
            not(nc, sw, "pg-profile-lookup-missing", "(pg_profile_lookup.ini)", &why);
            return Ok(());
        }
    };
    for (port, pgs) in runtime {
        let Some((speed, cable_key, cable)) = speed_and_cable(sw, port) else { continue };
        if cable == "0m" || table.row(speed, cable).is_some() {
            continue;
        }
        let listed = table.cables_for(speed);
        let pgs = pgs.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
        let (place, fix) = if listed.is_empty() {
            (
                sw.place("PORT", port, "speed"),
                format!("add rows for speed {speed} to the switch's {} (or give BUFFER_PG|{port}|{pgs} a lossless profile)", table.source()),
            )
        } else {
            let m = metres(cable).unwrap_or(0);
            let pick = listed.iter().find(|c| metres(c).is_some_and(|l| l >= m)).or(listed.last()).copied().unwrap_or_default();
            (
                sw.place("CABLE_LENGTH", cable_key, port),
                format!("CABLE_LENGTH|{cable_key}|{port} = \"{pick}\" (the table lists {} for {speed}), or add a row for {speed} {cable}", listed.join(", ")),
            )
        };
        found.push(Finding {
            severity: Severity::Error,
            id: "pg-profile-lookup-missing",
            switch: sw.name().to_string(),
            place,
            ports: vec![port.clone()],
            what: format!("lossless PG {pgs} has no BUFFER_PG entry, and {} has no row for speed {speed}, cable {cable}", table.source()),
            failure: "buffermgrd creates no headroom profile and no BUFFER_PG entry for the port: its lossless PGs have no headroom, frames in flight after XOFF are dropped".into(),
            fix,
        });
    }
    Ok(())
}

/// BUFFER_PG entries by (port, PG): the key each came from.
pub(super) fn pg_keys(sw: &Switch) -> Result<BTreeMap<(String, u32), String>, ReadError> {
    keys_by_port(sw, "BUFFER_PG", "PGS")
}

/// A BUFFER_PG `profile` value without the old `[BUFFER_PROFILE|...]` wrapping.
pub(super) fn profile_name(raw: &str) -> &str {
    crate::verify::config_db::reference(raw, "BUFFER_PROFILE")
}

/// One port's IEEE 802.1Qbb worst case in bytes, and its terms for the finding.
fn ieee_need(sw: &Switch, port: &str, opts: &Options, cell: units::Bytes) -> Result<Option<(u64, String)>, ReadError> {
    use crate::roce::{ieee_port_input, reverse_frame_for, ENCAP};
    use model::frame::{roce_frame, Transport};
    use model::headroom::ieee_8021qbb;
    use units::{BitRate, Bytes, Length, SimDuration};

    let Some((speed, _, cable)) = speed_and_cable(sw, port) else { return Ok(None) };
    let speed_mbps = num(sw, "PORT", port, "speed", speed)?;
    let Some(cable) = metres(cable) else { return Ok(None) };
    let port_mtu = match sw.field("PORT", port, "mtu") {
        Some(v) => Bytes(num(sw, "PORT", port, "mtu", v)?),
        None => DEFAULT_PORT_MTU,
    };
    let Some(rate) = speed_mbps.checked_mul(1_000_000).filter(|&r| r > 0).map(BitRate) else {
        return Err(shape(sw.place("PORT", port, "speed"), format!("{speed:?} is not a positive speed in Mb/s")));
    };
    let lossless_frame = roce_frame(ENCAP, Transport::WriteFirst, opts.path_mtu);
    let inp = ieee_port_input(rate, Length::from_m(cable), lossless_frame, reverse_frame_for(lossless_frame, Some(port_mtu)), SimDuration::ZERO, cell, 0);
    let d = ieee_8021qbb(&inp);
    let why = format!(
        "{port}: {speed_mbps} Mb/s, {cable} m, port MTU {} B: {} frames of {} B x {} cells of {} B",
        port_mtu.0,
        d.frames,
        lossless_frame.0,
        lossless_frame.cells(cell),
        cell.0
    );
    Ok(Some((d.bytes.0, why)))
}

/// (d, first half) A lossless PG's `xoff` must cover the IEEE 802.1Qbb worst case in cells
/// ([`model::headroom::ieee_8021qbb`] with [`crate::roce::ieee_port_input`], the
/// planner's `ieee` model): the port's speed (PORT `speed`, Mb/s) and cable (CABLE_LENGTH),
/// the RoCE path MTU's largest frame (an RDMA WRITE first packet, IPv4, no VLAN tag) in the
/// lossless class, the port MTU's frame (PORT `mtu` + MAC header, VLAN tag, FCS) on the
/// reverse direction, no interface delay. The xoff is the configured profile's, or the one
/// SONiC makes at run time ([`pg_headroom`]: the pg_profile_lookup row in the traditional
/// model, the Lua's for a `NULL` profile on Spectrum). The cell size is `--cell` or the
/// platform's ([`crate::verify::platform::cell_size`]), said in the finding. Reported once
/// per place, with the largest need among the ports there.
///
/// Left out: the shared headroom pool (a profile's xoff then draws on BUFFER_POOL `xoff`,
/// see the `shared-headroom-pool` check).
pub(super) fn headroom_ieee(
    sw: &Switch,
    lossless: &BTreeMap<String, BTreeSet<u32>>,
    opts: &Options,
    found: &mut Vec<Finding>,
    nc: &mut Vec<NotChecked>,
) -> Result<(), ReadError> {
    let cell = match crate::verify::platform::cell_size(sw, opts) {
        Ok(c) => c,
        Err(why) => {
            not(nc, sw, "headroom-below-ieee", "(cell size)", &why);
            return Ok(());
        }
    };
    let inputs = ["BUFFER_PG", "BUFFER_PROFILE", "PORT", "CABLE_LENGTH"];
    if !tables_present(sw, nc, "headroom-below-ieee", &inputs, "a lossless PG's headroom or its inputs are unknown") {
        return Ok(());
    }
    let pgs = pg_keys(sw)?;
    let lua = lua_switch(sw)?;
    // place -> (need, its terms, the PG's xoff and origin, ports short)
    let mut short: BTreeMap<Place, (u64, String, PgHeadroom, Vec<String>)> = BTreeMap::new();
    for (port, pfc) in lossless {
        let Some((need, why)) = ieee_need(sw, port, opts, cell.bytes)? else { continue };
        for &pg in pfc {
            let Some(x) = pg_headroom(sw, port, pgs.get(&(port.clone(), pg)).map(String::as_str), lua.as_ref())? else { continue };
            if x.xoff >= need {
                continue;
            }
            let e = short.entry(x.place.clone()).or_insert((0, String::new(), x, vec![]));
            if need > e.0 {
                (e.0, e.1) = (need, why.clone());
            }
            if !e.3.contains(port) {
                e.3.push(port.clone());
            }
        }
    }
    let cell_note = if cell.source == "--cell" { String::new() } else { format!("; cell size {} B: {}", cell.bytes.0, cell.source) };
    for (place, (need, why, x, ports)) in short {
        let origin = if x.origin.is_empty() { String::new() } else { format!(" ({})", x.origin) };
        let fix = if x.profile == "NULL" {
            format!("{} = a lossless profile with xoff >= \"{need}\" (a headroom override of SONiC's Lua)", place.path)
        } else if x.origin.is_empty() {
            format!("BUFFER_PROFILE|{}|xoff >= \"{need}\" (and size grown by as much)", x.profile)
        } else {
            format!("define BUFFER_PROFILE|{} with xoff >= \"{need}\" (buffermgrd then reuses it instead of the table row)", x.profile)
        };
        found.push(Finding {
            severity: Severity::Error,
            id: "headroom-below-ieee",
            switch: sw.name().to_string(),
            place,
            ports,
            what: format!("xoff {} B{origin} is below the IEEE 802.1Qbb worst case {need} B ({why}{cell_note})", x.xoff),
            failure: "when the PG pauses its peer, more can still arrive than the headroom holds: drops in the lossless class".into(),
            fix,
        });
    }
    Ok(())
}

/// Mellanox SAI's range of `dynamic_th`, the log2 of the dynamic threshold's alpha: -8
/// means alpha 0 (no shared buffer), -7..6 alpha 1/128..64, 7 unlimited; values below -8 are
/// read as 0 and values above 7 as unlimited (`sai_buffer_alpha_bounds_t`,
/// Mellanox/SAI-Implementation `mlnx_sai/src/mlnx_sai_buffer.c` at
/// 91c3f7bf987ccab46e14fce9152a9790e6c99daa).
pub const MELLANOX_DYNAMIC_TH: std::ops::RangeInclusive<i64> = -8..=7;

/// A BUFFER_PROFILE's `dynamic_th` must be inside the ASIC's range. Mellanox SAI
/// ([`MELLANOX_DYNAMIC_TH`]) clamps a value outside silently, so the profile gets either no
/// shared buffer or all of it, not the share written. The Broadcom chips of
/// [`crate::verify::platform::broadcom`] have alphas for -7..3 only
/// ([`crate::verify::platform::BROADCOM_DYNAMIC_TH`]); what their closed SAI does with
/// another value is not documented publicly, so the finding says the threshold written is
/// not one the chip has. Every profile is checked, lossless or not: a lossy queue with an
/// unlimited threshold takes the shared buffer from the lossless PGs as well.
///
/// Other platforms (or no `DEVICE_METADATA|localhost|platform`): "not checked". A value
/// that is not a whole number is an input error.
pub(super) fn dynamic_th(sw: &Switch, found: &mut Vec<Finding>, nc: &mut Vec<NotChecked>) -> Result<(), ReadError> {
    use crate::verify::platform::{broadcom, broadcom_source, BROADCOM_DYNAMIC_TH};
    let Some(profiles) = sw.table("BUFFER_PROFILE") else {
        not(nc, sw, "dynamic-th-range", "BUFFER_PROFILE", "no buffer profiles to check");
        return Ok(());
    };
    if !profiles.values().any(|e| e.fields.contains_key("dynamic_th")) {
        return Ok(());
    }
    let platform = sw.field("DEVICE_METADATA", "localhost", "platform");
    let bcm = broadcom(sw);
    if !platform.is_some_and(crate::verify::platform::is_mellanox) && bcm.is_none() {
        let why = match platform {
            Some(p) => format!("known only for Mellanox SAI (x86_64-mlnx_*, x86_64-nvidia_*) and Broadcom Trident2, Tomahawk and Trident3, not platform {p:?}"),
            None => "DEVICE_METADATA|localhost|platform is absent, so the ASIC is unknown".to_string(),
        };
        not(nc, sw, "dynamic-th-range", "(dynamic_th range)", &why);
        return Ok(());
    }
    for (name, e) in profiles {
        let Some(v) = e.fields.get("dynamic_th") else { continue };
        let th: i64 = v.trim().parse().map_err(|_| shape(sw.place("BUFFER_PROFILE", name, "dynamic_th"), format!("{v:?} is not a whole number")))?;
        let place = sw.place("BUFFER_PROFILE", name, "dynamic_th");
        let (what, failure, fix) = match bcm {
            Some((chip, why)) if !BROADCOM_DYNAMIC_TH.contains(&th) => {
                let (lo, hi) = (*BROADCOM_DYNAMIC_TH.start(), *BROADCOM_DYNAMIC_TH.end());
                (
                    format!("dynamic_th {th} is outside the {lo}..{hi} for which the {} has an alpha (1/128..8; {})", chip.name(), broadcom_source(chip, why)),
                    "the threshold written is not one the chip has: the SAI rejects the profile or applies another alpha, so the PG or queue gets a share of the pool nobody chose".to_string(),
                    format!("BUFFER_PROFILE|{name}|dynamic_th = a value in {lo}..{hi}"),
                )
            }
            Some(_) => continue,
            None => match mellanox_out_of_range(name, th) {
                Some(t) => t,
                None => continue,
            },
        };
        found.push(Finding { severity: Severity::Warning, id: "dynamic-th-range", switch: sw.name().to_string(), place, ports: vec![], what, failure, fix });
    }
    Ok(())
}

/// The finding's what, failure and fix for a Mellanox `dynamic_th` outside
/// [`MELLANOX_DYNAMIC_TH`], `None` inside it.
fn mellanox_out_of_range(name: &str, th: i64) -> Option<(String, String, String)> {
    let (lo, hi) = (*MELLANOX_DYNAMIC_TH.start(), *MELLANOX_DYNAMIC_TH.end());
    if MELLANOX_DYNAMIC_TH.contains(&th) {
        return None;
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
    Some((
        format!("dynamic_th {th} is outside Mellanox SAI's {lo}..{hi}; the SAI reads it as {read_as}"),
        failure.into(),
        format!("BUFFER_PROFILE|{name}|dynamic_th = a value in {lo}..{hi} (\"{fix}\" is what the ASIC applies now)"),
    ))
}
