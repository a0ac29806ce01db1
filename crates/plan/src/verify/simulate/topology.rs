//! The simulated fabric's shape from DEVICE_NEIGHBOR across the switches given.
//!
//! * A DEVICE_NEIGHBOR entry `PORT: {name, port}` whose `name` is a switch given (its
//!   hostname or `--switch` name) is a switch-to-switch link; the neighbour must have that
//!   `port` in its PORT table, and if it has a DEVICE_NEIGHBOR entry for it, that entry must
//!   name this switch and port back. Each link is taken once.
//! * A neighbour that is not a switch given but whose `port` is a switch port (named
//!   `Ethernet...`, as SONiC and EOS name front-panel ports) is a switch missing from the
//!   input: an error, since simulating it as a host would end every path there.
//! * A lossless port (PORT_QOS_MAP `pfc_enable` not empty) without a switch neighbour is a
//!   host port: a host is attached (named `<switch>-<port>`; the DEVICE_NEIGHBOR name, such
//!   as `Servers0`, is kept in the scenario's comment).
//! * A link's speed is PORT `speed` (Mb/s; the slower end's if the two ends differ, with a
//!   note) and its cable the longer of the two ends' CABLE_LENGTH (one end's if only one has
//!   it).
//!
//! Left out: lossy ports without a switch neighbour (no RoCE traffic enters there), port
//! channels (each member is its own link), breakout and lanes.

use std::collections::{BTreeMap, BTreeSet};

use super::super::config_db::{parse_list, ReadError, Switch};
use super::toml::Origin;

/// One end of a simulated link on a switch: the switch (index into the input's switches)
/// and its SONiC port name.
pub type SwitchPort = (usize, String);

/// A link of the scenario.
#[derive(Clone, Debug)]
pub struct Link {
    pub a: SwitchPort,
    /// The other switch end, or `None` for a host port (the host is in [`Fabric::hosts`]).
    pub b: Option<SwitchPort>,
    pub speed_mbps: u64,
    pub speed_origin: Origin,
    pub cable_m: u64,
    pub cable_origin: Origin,
}

/// A host attached to a lossless switch port without a switch neighbour.
#[derive(Clone, Debug)]
pub struct Host {
    pub name: String,
    pub at: SwitchPort,
    /// The DEVICE_NEIGHBOR `name` of the port, if it has one.
    pub neighbour: Option<String>,
}

/// The fabric: per switch its simulated ports (scenario port i is `ports[sw][i]`), links
/// and hosts.
#[derive(Clone, Debug, Default)]
pub struct Fabric {
    pub ports: Vec<Vec<String>>,
    pub links: Vec<Link>,
    pub hosts: Vec<Host>,
    pub notes: Vec<String>,
}

fn shape(sw: &Switch, t: &str, key: &str, field: &str, msg: String) -> ReadError {
    let p = sw.place(t, key, field);
    ReadError::Shape { file: p.file, place: p.path, msg }
}

/// Lossless ports of a switch (PORT_QOS_MAP `pfc_enable` not empty).
pub fn lossless_ports(sw: &Switch) -> Result<BTreeMap<String, BTreeSet<u32>>, ReadError> {
    let mut out = BTreeMap::new();
    for (port, e) in sw.table("PORT_QOS_MAP").into_iter().flatten() {
        let Some(v) = e.fields.get("pfc_enable") else { continue };
        let set = parse_list(v)
            .filter(|s| s.iter().all(|&p| p < 8))
            .ok_or_else(|| shape(sw, "PORT_QOS_MAP", port, "pfc_enable", format!("{v:?} is not a list of priorities 0..7 such as \"3,4\"")))?;
        if !set.is_empty() {
            out.insert(port.clone(), set);
        }
    }
    Ok(out)
}

/// SONiC's port order: by the number at the end of the name (`Ethernet8` before
/// `Ethernet112`), then by name.
pub fn port_order(name: &str) -> (u64, String) {
    let digits: String = name.chars().rev().take_while(char::is_ascii_digit).collect::<Vec<_>>().into_iter().rev().collect();
    (digits.parse().unwrap_or(u64::MAX), name.to_string())
}

/// The switch ports of the simulation and how they are linked.
pub fn fabric(switches: &[Switch]) -> Result<Fabric, ReadError> {
    let by_name: BTreeMap<&str, usize> = switches.iter().enumerate().filter_map(|(i, s)| Some((s.hostname.as_deref()?, i))).collect();
    let mut f = Fabric { ports: vec![vec![]; switches.len()], ..Fabric::default() };
    let mut seen: BTreeSet<(SwitchPort, SwitchPort)> = BTreeSet::new();
    for (i, sw) in switches.iter().enumerate() {
        if sw.table("PORT_QOS_MAP").is_none() {
            return Err(ReadError::Shape {
                file: sw.files.first().cloned().unwrap_or_default(),
                place: "PORT_QOS_MAP".into(),
                msg: "absent: --simulate needs each port's pfc_enable to know the lossless ports".into(),
            });
        }
        let lossless = lossless_ports(sw)?;
        let mut with_switch_peer = BTreeSet::new();
        for (port, e) in sw.table("DEVICE_NEIGHBOR").into_iter().flatten() {
            let Some(peer) = switch_neighbour(switches, &by_name, i, port, e.fields.get("name"), e.fields.get("port"))? else { continue };
            with_switch_peer.insert(port.clone());
            let key = if (i, port.clone()) <= peer { ((i, port.clone()), peer.clone()) } else { (peer.clone(), (i, port.clone())) };
            if seen.insert(key) {
                let (speed_mbps, speed_origin) = link_speed(switches, &(i, port.clone()), Some(&peer), &mut f.notes)?;
                let (cable_m, cable_origin) = link_cable(switches, &(i, port.clone()), Some(&peer))?;
                f.links.push(Link { a: (i, port.clone()), b: Some(peer), speed_mbps, speed_origin, cable_m, cable_origin });
            }
        }
        for port in lossless.keys().filter(|p| !with_switch_peer.contains(*p)) {
            let at = (i, port.clone());
            let (speed_mbps, speed_origin) = link_speed(switches, &at, None, &mut f.notes)?;
            let (cable_m, cable_origin) = link_cable(switches, &at, None)?;
            let neighbour = sw.field("DEVICE_NEIGHBOR", port, "name").map(str::to_string);
            f.hosts.push(Host { name: format!("{}-{port}", sw.name()), at: at.clone(), neighbour });
            f.links.push(Link { a: at, b: None, speed_mbps, speed_origin, cable_m, cable_origin });
        }
    }
    f.finish(switches)?;
    Ok(f)
}

impl Fabric {
    /// Each switch's simulated ports from the links, in SONiC order; at least two hosts.
    pub fn finish(&mut self, switches: &[Switch]) -> Result<(), ReadError> {
        for l in &self.links {
            for (s, p) in [Some(&l.a), l.b.as_ref()].into_iter().flatten() {
                if !self.ports[*s].contains(p) {
                    self.ports[*s].push(p.clone());
                }
            }
        }
        for p in &mut self.ports {
            p.sort_by_key(|n| port_order(n));
        }
        if self.hosts.len() < 2 {
            return Err(ReadError::Shape {
                file: switches.first().and_then(|s| s.files.first()).cloned().unwrap_or_default(),
                place: "PORT_QOS_MAP".into(),
                msg: format!("{} host port(s) (lossless ports without a switch neighbour): an incast needs at least 2", self.hosts.len()),
            });
        }
        Ok(())
    }
}

/// The switch end a DEVICE_NEIGHBOR entry of switch `i`'s `port` names, if it names a
/// switch given; errors for a neighbour port that does not exist or does not point back,
/// and for a switch port on a switch not given.
fn switch_neighbour(
    switches: &[Switch],
    by_name: &BTreeMap<&str, usize>,
    i: usize,
    port: &str,
    name: Option<&String>,
    peer_port: Option<&String>,
) -> Result<Option<SwitchPort>, ReadError> {
    let sw = &switches[i];
    let (Some(name), Some(peer_port)) = (name, peer_port) else {
        let missing = if name.is_none() { "name" } else { "port" };
        return Err(shape(sw, "DEVICE_NEIGHBOR", port, missing, "absent: a neighbour entry needs name and port".into()));
    };
    if sw.table("PORT").is_some_and(|t| !t.contains_key(port)) {
        return Err(shape(sw, "DEVICE_NEIGHBOR", port, "", format!("{port} is not in this switch's PORT table")));
    }
    let Some(&j) = by_name.get(name.as_str()) else {
        if peer_port.starts_with("Ethernet") {
            return Err(shape(
                sw,
                "DEVICE_NEIGHBOR",
                port,
                "name",
                format!("{name:?} (port {peer_port:?}) is a switch that is not among the switches given: give its config_db (or --switch {name}=FILE)"),
            ));
        }
        return Ok(None);
    };
    let peer = &switches[j];
    if !peer.table("PORT").is_some_and(|t| t.contains_key(peer_port.as_str())) {
        return Err(shape(sw, "DEVICE_NEIGHBOR", port, "port", format!("{peer_port:?} is not a port of switch {name:?} (its PORT table has no such key)")));
    }
    if let Some(back) = peer.table("DEVICE_NEIGHBOR").and_then(|t| t.get(peer_port.as_str())) {
        let (bn, bp) = (back.fields.get("name").map(String::as_str), back.fields.get("port").map(String::as_str));
        if bn != Some(sw.name()) || bp != Some(port) {
            return Err(shape(
                peer,
                "DEVICE_NEIGHBOR",
                peer_port,
                "",
                format!("says {peer_port} goes to {}:{}, but {} says its {port} goes here", bn.unwrap_or("?"), bp.unwrap_or("?"), sw.name()),
            ));
        }
    }
    Ok(Some((j, peer_port.clone())))
}

/// A port's PORT `speed` in Mb/s.
fn port_speed(sw: &Switch, port: &str) -> Result<u64, ReadError> {
    let v =
        sw.field("PORT", port, "speed").ok_or_else(|| shape(sw, "PORT", port, "speed", "absent: --simulate needs the speed of every simulated port".into()))?;
    v.trim().parse().ok().filter(|&s: &u64| s > 0).ok_or_else(|| shape(sw, "PORT", port, "speed", format!("{v:?} is not a speed in Mb/s")))
}

/// The link's speed: its end's, or the slower end's.
pub fn link_speed(switches: &[Switch], a: &SwitchPort, b: Option<&SwitchPort>, notes: &mut Vec<String>) -> Result<(u64, Origin), ReadError> {
    let sa = port_speed(&switches[a.0], &a.1)?;
    let oa = Origin::of(&switches[a.0], "PORT", &a.1, "speed");
    let Some(b) = b else { return Ok((sa, oa)) };
    let sb = port_speed(&switches[b.0], &b.1)?;
    if sa != sb {
        notes.push(format!(
            "{} {} runs at {sa} Mb/s, its peer {} {} at {sb}: the link is simulated at the slower",
            switches[a.0].name(),
            a.1,
            switches[b.0].name(),
            b.1
        ));
    }
    Ok(if sb < sa { (sb, Origin::of(&switches[b.0], "PORT", &b.1, "speed")) } else { (sa, oa) })
}

/// A port's CABLE_LENGTH in metres, with its place.
fn port_cable(sw: &Switch, port: &str) -> Result<Option<(u64, Origin)>, ReadError> {
    for (key, e) in sw.table("CABLE_LENGTH").into_iter().flatten() {
        if let Some(v) = e.fields.get(port) {
            let m = v.trim().strip_suffix('m').and_then(|n| n.parse().ok());
            let m = m.ok_or_else(|| shape(sw, "CABLE_LENGTH", key, port, format!("{v:?} is not a length in metres such as \"5m\"")))?;
            return Ok(Some((m, Origin::of(sw, "CABLE_LENGTH", key, port))));
        }
    }
    Ok(None)
}

/// The link's cable: the longer end's CABLE_LENGTH.
pub fn link_cable(switches: &[Switch], a: &SwitchPort, b: Option<&SwitchPort>) -> Result<(u64, Origin), ReadError> {
    let ca = port_cable(&switches[a.0], &a.1)?;
    let cb = match b {
        Some(b) => port_cable(&switches[b.0], &b.1)?,
        None => None,
    };
    match (ca, cb) {
        (Some(x), Some(y)) => Ok(if y.0 > x.0 { y } else { x }),
        (Some(x), None) | (None, Some(x)) => Ok(x),
        (None, None) => {
            let sw = &switches[a.0];
            let key = sw.table("CABLE_LENGTH").and_then(|t| t.keys().next().cloned()).unwrap_or_else(|| "AZURE".into());
            Err(shape(sw, "CABLE_LENGTH", &key, &a.1, "absent: --simulate needs each simulated link's cable length".into()))
        }
    }
}
