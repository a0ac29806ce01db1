//! `plan::verify` on complete configs of a small leaf-spine (2 leaves, 2 spines, 4 servers
//! per leaf) that sonic-cfggen generated from sonic-buildimage's own templates, outside
//! this repository, so that "clean" is not defined by the verifier: how they were made, the
//! commits and the exact commands are in `tests/data/sonic/cfggen/SOURCE.md`.
//!
//! Three sets, each one `config_db.json` per switch:
//! * `mellanox-sn2700/traditional`: NVIDIA SN2700 (Spectrum-1, HwSku Mellanox-SN2700) after
//!   `config load_minigraph` (traditional buffer model: buffermgrd creates the lossless PG
//!   profiles at run time from pg_profile_lookup.ini, so BUFFER_PG holds only PG 0);
//! * `mellanox-sn2700/dynamic`: the same after `config qos reload` (dynamic model: PGs 3-4
//!   get profile "NULL", which buffermgrd fills in from the headroom Lua);
//! * `arista-7060cx-32s-c32/traditional`: Arista 7060CX-32S (Broadcom Tomahawk).
//!
//! SONiC's AZURE maps make DSCP 3 and 4 lossless, so RoCE runs on DSCP 3 here. Spectrum-1's
//! cell is 96 B (sonic-buildimage `platform/mellanox/asic_table.j2`, as
//! `model::sonic::Spectrum::asic`); the Tomahawk's, 208 B, the verifier takes from the
//! platform (`verify::platform`, OpenBCM's headers), so the Arista set runs without `--cell`.
//!
//! # What the verifier reports
//! No finding on the dynamic SN2700 set and the Arista set. On the traditional SN2700 set,
//! one error per lossless profile buffermgrd would create, `headroom-below-ieee`, and it is
//! real: the hwsku's `pg_profile_lookup.ini` (a symlink to Mellanox-SN2700-D48C8's, a
//! shared-headroom-pool table) gives 100G ports xoff 23552 B at 5 m and 29696 B at 40 m,
//! while the IEEE 802.1Qbb worst case in Spectrum-1's 96 B cells is 38016 B and 42240 B
//! (9 and 10 frames of 4174 B, 44 cells each, with a 9100 B reverse frame). The dynamic
//! model's headroom Lua, on the same ports, gives enough (that set is clean): the static
//! table is below SONiC's own newer formula as well ([`expected_findings`]).
//!
//! A minigraph names a link's far end by the peer's port *alias*
//! (`etp1` on the SN2700, `Ethernet1/1` on the Arista), and minigraph.py copies that into
//! `DEVICE_NEIGHBOR|<port>|port` unchanged (sonic-buildimage
//! `src/sonic-config-engine/minigraph.py` `parse_png`: only the local port goes through
//! `port_alias_map`), which is also what a SONiC peer advertises over LLDP (sonic-buildimage
//! `dockers/docker-lldp/lldpmgrd`: `portidsubtype local <alias>`). `pfc-peer-mismatch`
//! resolves it through the peer's `PORT|*|alias` (`Switch::port_key`); these files first
//! showed that it did not (four false errors on the leaves' uplinks). The same files with
//! each `DEVICE_NEIGHBOR` port replaced by the port's name verify the same way.
//!
//! "Not checked", per switch, and why:
//! * `pfc-watchdog-missing`: no PFC_WD table, because a default image's init_cfg.json has
//!   `default_pfcwd_status` "disable", so `pfcwd start_default` writes nothing;
//! * `ecn-after-pfc`: no lossless PG has a profile in config_db (traditional: created at
//!   run time; dynamic: "NULL");
//! * `shared-headroom-pool` (traditional SN2700 and Arista): their pools have an `xoff`,
//!   but no DEFAULT_LOSSLESS_BUFFER_PARAMETER `over_subscribe_ratio` to check it by;
//! * Arista only: `buffer-overcommit` (Broadcom's pool semantics are not public).

use std::collections::BTreeMap;

use plan::verify::{verify, Options, Report, Severity};
use serde_json::Value;

const SETS: [&str; 3] = ["mellanox-sn2700/traditional", "mellanox-sn2700/dynamic", "arista-7060cx-32s-c32/traditional"];
const HOSTS: [&str; 4] = ["leaf1", "leaf2", "spine1", "spine2"];

fn dir(set: &str) -> String {
    format!("{}/tests/data/sonic/cfggen/{set}", env!("CARGO_MANIFEST_DIR"))
}

/// The set's four files, as (name, text).
fn files(set: &str) -> Vec<(String, String)> {
    HOSTS
        .iter()
        .map(|h| (format!("{set}/{h}.config_db.json"), std::fs::read_to_string(format!("{}/{h}.config_db.json", dir(set))).expect("test data")))
        .collect()
}

/// RoCE on DSCP 3 (lossless under AZURE); Spectrum-1's 96 B cell on the SN2700.
fn options(set: &str) -> Options {
    let cell = set.starts_with("mellanox").then(|| model::sonic::Spectrum::Spectrum1.asic().cell_size);
    Options { roce_dscp: 3, cell, ..Options::default() }
}

fn run(set: &str, files: &[(String, String)]) -> Report {
    verify(files, &options(set)).unwrap_or_else(|e| panic!("{set}: {e}"))
}

/// (switch, check, missing table) of every "not checked".
fn not_checked(r: &Report) -> Vec<(String, &'static str, &'static str)> {
    r.not_checked.iter().map(|n| (n.switch.clone(), n.check, n.missing_table)).collect()
}

/// (check, severity, switch, place) of every finding on the set as generated: the static
/// table's 100G profiles below the IEEE worst case (module doc), on the leaves' 40 m uplinks
/// and 5 m server ports and the spines' 40 m ports.
fn expected_findings(set: &str) -> Vec<(&'static str, Severity, &'static str, &'static str)> {
    if set != "mellanox-sn2700/traditional" {
        return vec![];
    }
    let (m40, m5) = ("BUFFER_PROFILE|pg_lossless_100000_40m_profile|xoff", "BUFFER_PROFILE|pg_lossless_100000_5m_profile|xoff");
    [("leaf1", m40), ("leaf1", m5), ("leaf2", m40), ("leaf2", m5), ("spine1", m40), ("spine2", m40)]
        .into_iter()
        .map(|(sw, p)| ("headroom-below-ieee", Severity::Error, sw, p))
        .collect()
}

fn findings(r: &Report) -> Vec<(&'static str, Severity, &str, &str)> {
    r.findings.iter().map(|f| (f.id, f.severity, f.switch.as_str(), f.place.path.as_str())).collect()
}

fn expected_not_checked(set: &str) -> Vec<(String, &'static str, &'static str)> {
    let per_switch: &[(&str, &str)] = if set == "mellanox-sn2700/traditional" {
        // The SKU's buffers have a shared headroom pool (ingress_lossless_pool xoff), but
        // the traditional model has no DEFAULT_LOSSLESS_BUFFER_PARAMETER ratio to check it by.
        &[("shared-headroom-pool", "DEFAULT_LOSSLESS_BUFFER_PARAMETER"), ("ecn-after-pfc", "(lossless PG profiles)"), ("pfc-watchdog-missing", "PFC_WD")]
    } else if set.starts_with("mellanox") {
        &[("ecn-after-pfc", "(lossless PG profiles)"), ("pfc-watchdog-missing", "PFC_WD")]
    } else {
        // Tomahawk: no public pool semantics for the accounting, and no
        // DEFAULT_LOSSLESS_BUFFER_PARAMETER ratio for the headroom pool.
        &[
            ("shared-headroom-pool", "DEFAULT_LOSSLESS_BUFFER_PARAMETER"),
            ("buffer-overcommit", "(pool semantics)"),
            ("ecn-after-pfc", "(lossless PG profiles)"),
            ("pfc-watchdog-missing", "PFC_WD"),
        ]
    };
    HOSTS.iter().flat_map(|h| per_switch.iter().map(move |&(c, t)| (h.to_string(), c, t))).collect()
}

#[test]
fn cfggen_configs_as_generated() {
    for set in SETS {
        let r = run(set, &files(set));
        assert_eq!(r.switches.iter().map(|s| s.0.as_str()).collect::<Vec<_>>(), HOSTS, "{set}");
        assert_eq!(findings(&r), expected_findings(set), "{set}: {:#?}", r.findings);
        if let Some(f) = r.findings.first() {
            assert!(f.what.contains("Mellanox-SN2700-D48C8/pg_profile_lookup.ini") && f.what.contains("IEEE 802.1Qbb worst case 42240 B"), "{}", f.what);
        }
        assert_eq!(not_checked(&r), expected_not_checked(set), "{set}");
        assert!(r.not_checked.iter().filter(|n| n.check == "pfc-watchdog-missing").all(|n| n.note.contains("default_pfcwd_status is disable")));
    }
}

/// A DEVICE_NEIGHBOR port that is neither a port nor an alias of the peer is "not
/// checked", never read as PFC off.
#[test]
fn unknown_peer_port_is_not_checked() {
    let set = SETS[0];
    let mut fs = files(set);
    let mut v: Value = serde_json::from_str(&fs[0].1).unwrap();
    v["DEVICE_NEIGHBOR"]["Ethernet0"]["port"] = Value::String("etp99".into());
    fs[0].1 = v.to_string();
    let r = run(set, &fs);
    assert_eq!(findings(&r), expected_findings(set), "{:#?}", r.findings);
    let n = r.not_checked.iter().find(|n| n.check == "pfc-peer-mismatch").expect("not checked");
    assert_eq!((n.switch.as_str(), n.missing_table), ("leaf1", "(peer port)"));
    assert!(n.note.contains("DEVICE_NEIGHBOR|Ethernet0|port names \"etp99\" on spine1"), "{}", n.note);
}

/// Each switch's port aliases, by hostname: alias -> port name.
fn aliases(files: &[(String, String)]) -> BTreeMap<String, BTreeMap<String, String>> {
    files
        .iter()
        .map(|(_, t)| {
            let v: Value = serde_json::from_str(t).unwrap();
            let host = v["DEVICE_METADATA"]["localhost"]["hostname"].as_str().unwrap().to_string();
            let ports = v["PORT"].as_object().unwrap().iter().map(|(name, e)| (e["alias"].as_str().unwrap().to_string(), name.clone())).collect();
            (host, ports)
        })
        .collect()
}

/// The files with every `DEVICE_NEIGHBOR|<port>|port` naming a given switch's alias
/// replaced by that port's name (servers, which have no file, keep theirs), and `edit`
/// applied to the file of `host`.
fn resolved(set: &str, host: &str, edit: impl Fn(&mut Value)) -> Vec<(String, String)> {
    let fs = files(set);
    let by_host = aliases(&fs);
    fs.into_iter()
        .map(|(name, text)| {
            let mut v: Value = serde_json::from_str(&text).unwrap();
            for e in v["DEVICE_NEIGHBOR"].as_object_mut().unwrap().values_mut() {
                let peer = e["name"].as_str().unwrap().to_string();
                if let Some(port) = by_host.get(&peer).and_then(|a| a.get(e["port"].as_str().unwrap())) {
                    e["port"] = Value::String(port.clone());
                }
            }
            if name.ends_with(&format!("/{host}.config_db.json")) {
                edit(&mut v);
            }
            (name, v.to_string())
        })
        .collect()
}

#[test]
fn clean_once_peer_ports_resolve() {
    for set in SETS {
        let r = run(set, &resolved(set, "", |_| {}));
        assert_eq!(findings(&r), expected_findings(set), "{set}: {:#?}", r.findings);
        assert_eq!(not_checked(&r), expected_not_checked(set), "{set}");
    }
}

/// The comparison is live on these files, with the peer's port named by its alias (as
/// generated) or by its name: spine1 with PFC off on its port to leaf1 is flagged once, at
/// leaf1's uplink (the link is reported from the end whose (switch, port) sorts first).
#[test]
fn one_end_without_pfc_is_flagged_once() {
    let pfc_off = |v: &mut Value| v["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] = Value::String(String::new());
    for set in SETS {
        let mut as_generated = files(set);
        let mut v: Value = serde_json::from_str(&as_generated[2].1).unwrap();
        pfc_off(&mut v);
        as_generated[2].1 = v.to_string();
        for fs in [as_generated, resolved(set, "spine1", pfc_off)] {
            let r = run(set, &fs);
            let mut want = expected_findings(set);
            want.push(("pfc-peer-mismatch", Severity::Error, "leaf1", "PORT_QOS_MAP|Ethernet0|pfc_enable"));
            assert_eq!(findings(&r), want, "{set}: {:#?}", r.findings);
            let f = r.findings.iter().find(|f| f.id == "pfc-peer-mismatch").expect("flagged");
            assert!(f.what.contains("on the link peer spine1 Ethernet0"), "{}", f.what);
        }
    }
}
