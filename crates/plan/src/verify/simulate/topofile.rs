//! `--topology FILE`: the simulated fabric's wiring from a scenario-format topology instead
//! of DEVICE_NEIGHBOR.
//!
//! The file is a scenario file (or just its `[topology]` section) with `kind = "explicit"`;
//! only `[topology]` is read. Its switches must be the switches given (hostname or
//! `--switch` name); port `i` of a switch is the PORT entry whose `index` field is `i`
//! (SONiC's front-panel index, sonic-buildimage `device/*/port_config.ini`'s `index`
//! column, e.g. Ethernet4 index 1 on the Force10-S6000). Every other node is a host with one
//! NIC. Speeds and cables still come from PORT and CABLE_LENGTH (the configured values);
//! the file's own are not used. Where a port also has a DEVICE_NEIGHBOR entry naming a
//! switch given, it must agree with the file. Errors name the topology file and the
//! `topology.links[i]` end, or the config_db place.
//!
//! Left out: `leaf-spine`, `fat-tree` and `file` topologies (they do not name ports),
//! ibnetdiscover output (InfiniBand's, not a RoCE fabric's), hosts with several NICs.

use std::collections::{BTreeMap, BTreeSet};

use super::super::config_db::{ReadError, Switch};
use super::topology::{link_cable, link_speed, Fabric, Host, Link, SwitchPort};

fn bad(file: &str, place: &str, msg: String) -> ReadError {
    ReadError::Shape { file: file.into(), place: place.into(), msg }
}

/// A string field of a TOML table.
fn string<'a>(file: &str, place: &str, t: &'a toml::Value, key: &str) -> Result<&'a str, ReadError> {
    t.get(key).and_then(toml::Value::as_str).ok_or_else(|| bad(file, &format!("{place}.{key}"), "absent or not a string".into()))
}

/// The PORT entry of `sw` with `index` = `i`.
fn port_by_index(sw: &Switch, i: u64) -> Option<String> {
    sw.table("PORT")?.iter().find(|(_, e)| e.fields.get("index").and_then(|x| x.trim().parse::<u64>().ok()) == Some(i)).map(|(k, _)| k.clone())
}

/// The fabric the topology file `(file, text)` describes over `switches`.
pub fn fabric(switches: &[Switch], file: &str, text: &str) -> Result<Fabric, ReadError> {
    let doc: toml::Value = toml::from_str(text).map_err(|e| bad(file, "(TOML)", e.to_string()))?;
    let topo = doc.get("topology").ok_or_else(|| bad(file, "topology", "absent: expected a [topology] section".into()))?;
    let kind = string(file, "topology", topo, "kind")?;
    if kind != "explicit" {
        return Err(bad(file, "topology.kind", format!("{kind:?}: --topology takes an \"explicit\" topology, whose links name switch ports")));
    }
    let by_name: BTreeMap<&str, usize> = switches.iter().enumerate().filter_map(|(i, s)| Some((s.hostname.as_deref()?, i))).collect();
    let mut hosts: BTreeSet<String> = BTreeSet::new();
    for (n, node) in topo.get("nodes").and_then(toml::Value::as_array).into_iter().flatten().enumerate() {
        let place = format!("topology.nodes[{n}]");
        let name = string(file, &place, node, "name")?;
        match string(file, &place, node, "kind")? {
            "switch" if !by_name.contains_key(name) => {
                return Err(bad(file, &format!("{place}.name"), format!("switch {name:?} is not among the switches given")))
            }
            "switch" => {}
            "host" if node.get("nics").and_then(toml::Value::as_integer).is_some_and(|k| k != 1) => {
                return Err(bad(file, &format!("{place}.nics"), "a host with several NICs: --topology takes one NIC per host".into()))
            }
            "host" => {
                hosts.insert(name.to_string());
            }
            k => return Err(bad(file, &format!("{place}.kind"), format!("{k:?}: expected \"switch\" or \"host\""))),
        }
    }
    let mut f = Fabric { ports: vec![vec![]; switches.len()], ..Fabric::default() };
    let links = topo.get("links").and_then(toml::Value::as_array).ok_or_else(|| bad(file, "topology.links", "absent: expected an array of links".into()))?;
    for (n, l) in links.iter().enumerate() {
        let place = format!("topology.links[{n}]");
        let end = |key: &str| -> Result<Result<SwitchPort, String>, ReadError> {
            let spec = string(file, &place, l, key)?;
            let at = format!("{place}.{key}");
            let Some((name, idx)) = spec.rsplit_once(':') else {
                return if hosts.contains(spec) {
                    Ok(Err(spec.to_string()))
                } else {
                    Err(bad(file, &at, format!("{spec:?} is neither \"switch:port\" nor a host of the file")))
                };
            };
            let &s = by_name.get(name).ok_or_else(|| bad(file, &at, format!("{name:?} is not among the switches given")))?;
            let i: u64 = idx.parse().map_err(|_| bad(file, &at, format!("{spec:?}: the port after ':' must be a number")))?;
            let port = port_by_index(&switches[s], i)
                .ok_or_else(|| bad(file, &at, format!("{spec:?}: switch {name} has no PORT entry with index \"{i}\" ({})", switches[s].files.join(", "))))?;
            Ok(Ok((s, port)))
        };
        let (a, b) = (end("a")?, end("b")?);
        let (a, b) = match (a, b) {
            (Ok(a), Ok(b)) => (a, Some(b)),
            (Ok(a), Err(h)) | (Err(h), Ok(a)) => {
                f.hosts.push(Host { name: h, at: a.clone(), neighbour: None });
                (a, None)
            }
            (Err(_), Err(_)) => return Err(bad(file, &place, "a link between two hosts".into())),
        };
        if let Some(b) = &b {
            agrees(switches, file, &place, &a, b)?;
            agrees(switches, file, &place, b, &a)?;
        }
        let (speed_mbps, speed_origin) = link_speed(switches, &a, b.as_ref(), &mut f.notes)?;
        let (cable_m, cable_origin) = link_cable(switches, &a, b.as_ref())?;
        f.links.push(Link { a, b, speed_mbps, speed_origin, cable_m, cable_origin });
    }
    f.finish(switches)?;
    Ok(f)
}

/// A DEVICE_NEIGHBOR entry of `a` naming a switch given must name `b`.
fn agrees(switches: &[Switch], file: &str, place: &str, a: &SwitchPort, b: &SwitchPort) -> Result<(), ReadError> {
    let sw = &switches[a.0];
    let (Some(name), Some(port)) = (sw.field("DEVICE_NEIGHBOR", &a.1, "name"), sw.field("DEVICE_NEIGHBOR", &a.1, "port")) else { return Ok(()) };
    let names_given = switches.iter().any(|s| s.hostname.as_deref() == Some(name));
    let peer = &switches[b.0];
    if names_given && (name != peer.name() || port != b.1) {
        let p = sw.place("DEVICE_NEIGHBOR", &a.1, "");
        return Err(bad(file, place, format!("links {} {} to {} {}, but {} {} says {name}:{port}", sw.name(), a.1, peer.name(), b.1, p.file, p.path)));
    }
    Ok(())
}
