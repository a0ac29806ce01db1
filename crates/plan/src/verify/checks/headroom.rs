//! Lossless buffers: cable lengths, the PG profiles buffermgrd would create, headroom against
//! the IEEE 802.1Qbb worst case and against SONiC's own, and `dynamic_th` against the
//! ASIC's range.

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

/// The name buffermgrd gives the lossless profile it creates for a port in the traditional
/// model: `pg_lossless_<speed>_<cable>_profile` (sonic-swss `cfgmgr/buffermgr.cpp`; e.g.
/// `pg_lossless_40000_5m_profile` in sonic-utilities' `tests/counterpoll_input/config_db.json`),
/// when the port's speed and cable length are known.
pub(super) fn traditional_profile_name(sw: &Switch, port: &str) -> Option<String> {
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
pub(super) fn pg_keys(sw: &Switch) -> Result<BTreeMap<(String, u32), String>, ReadError> {
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
pub(super) fn profile_name(raw: &str) -> &str {
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
pub(super) fn headroom_ieee(
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
///
/// It stays one function (about 110 lines): it gathers the Lua's inputs from six tables
/// in the order the Lua reads them, each with its own "not checked" reason, so that a
/// reader can hold it against `buffer_headroom_mellanox.lua` line by line.
pub(super) fn headroom_sonic(
    sw: &Switch,
    lossless: &BTreeMap<String, BTreeSet<u32>>,
    found: &mut Vec<Finding>,
    nc: &mut Vec<NotChecked>,
) -> Result<(), ReadError> {
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

/// Mellanox SAI's range of `dynamic_th`, the log2 of the dynamic threshold's alpha: -8
/// means alpha 0 (no shared buffer), -7..6 alpha 1/128..64, 7 unlimited; values below -8 are
/// read as 0 and values above 7 as unlimited (`sai_buffer_alpha_bounds_t`,
/// Mellanox/SAI-Implementation `mlnx_sai/src/mlnx_sai_buffer.c` at
/// 91c3f7bf987ccab46e14fce9152a9790e6c99daa).
pub const MELLANOX_DYNAMIC_TH: std::ops::RangeInclusive<i64> = -8..=7;

/// Whether the switch's platform is an NVIDIA (Mellanox) Spectrum one: SONiC names those
/// platforms `x86_64-mlnx_msn*` (e.g. `x86_64-mlnx_msn2700-r0`) and, for newer ones,
/// `x86_64-nvidia_sn*` (sonic-buildimage `device/mellanox/`).
pub(super) fn is_mellanox(platform: &str) -> bool {
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
pub(super) fn dynamic_th(sw: &Switch, found: &mut Vec<Finding>, nc: &mut Vec<NotChecked>) -> Result<(), ReadError> {
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
