//! The `[topology]` section compiled: a generated leaf-spine or fat tree, an explicit
//! list of nodes and links, or a fabric read from a topology file; and how the rest of
//! the file names its ports ("node:port", or a host by name).
//!
//! Owns link checks (speed range, cable or delay), the oversubscription arithmetic and
//! explicit-topology names. Leaves out the topology itself (`fabric::topology`, which
//! generates the shapes and wires the ports) and reading files ([`crate::topofile`]).

use std::collections::BTreeMap;

use fabric::subnet_manager::layout::IbLayout;
use fabric::topology::{LinkSpec, NodeId, PortId, Topology};
use units::{propagation, BitRate, Length, SimDuration, DEFAULT_PROPAGATION_PS_PER_M};

use crate::error::{ConfigError, Ctx};
use crate::schema::{ExplicitLink, LinkCfg, NodeCfg, TopologySection};

/// The topology, and the names, GUIDs and port numbers of a fabric read from a file.
pub(crate) fn compile(c: &Ctx, t: &TopologySection) -> Result<(Topology, Option<IbLayout>), ConfigError> {
    Ok(match t {
        TopologySection::File { path, cable } => {
            let full = c.base.join(path);
            let mut ibt = crate::topofile::read_any(&full).map_err(|e| c.err("topology.path", e.to_string()))?;
            let prop = cable_propagation(c, "topology.cable", *cable)?;
            for p in &mut ibt.topo.ports {
                p.prop = prop;
            }
            (ibt.topo, Some(ibt.layout))
        }
        t => (generated(c, t)?, None),
    })
}

/// A link's speed and one-way propagation delay (from its cable length, or given).
fn link(c: &Ctx, field: &str, l: &LinkCfg) -> Result<(BitRate, SimDuration), ConfigError> {
    check_speed(c, &format!("{field}.speed"), l.speed)?;
    let prop = match (l.cable, l.delay) {
        (Some(len), None) => cable_propagation(c, &format!("{field}.cable"), len)?,
        (None, Some(d)) if d > MAX_PROPAGATION => {
            return Err(c.err(&format!("{field}.delay"), format!("a propagation delay of {d}; expected at most {MAX_PROPAGATION} (1000 km of fibre)")))
        }
        (None, Some(d)) => d,
        _ => return Err(c.err(field, "give exactly one of `cable` (a length) or `delay` (a propagation time)")),
    };
    Ok((l.speed, prop))
}

/// The longest cable a link may have: 1000 km, 5 ms one way at 5 ns/m. Far beyond any
/// fabric's (InfiniBand and Ethernet data-centre links run metres to a few km), it keeps
/// the arithmetic on times and bytes in flight in range (headroom, bandwidth-delay).
const MAX_CABLE: Length = Length::from_m(1_000_000);
/// [`MAX_CABLE`]'s propagation delay.
const MAX_PROPAGATION: SimDuration = SimDuration::from_ms(5);

/// A cable's one-way propagation delay, checked against [`MAX_CABLE`].
fn cable_propagation(c: &Ctx, field: &str, len: Length) -> Result<SimDuration, ConfigError> {
    if len > MAX_CABLE {
        return Err(c.err(field, format!("a cable of {len}; expected at most {MAX_CABLE}")));
    }
    Ok(propagation(len, DEFAULT_PROPAGATION_PS_PER_M))
}

/// Link speeds fabriclab models: 10 to 800 Gb/s.
fn check_speed(c: &Ctx, field: &str, s: BitRate) -> Result<(), ConfigError> {
    if s < BitRate::from_gbps(10) || s > BitRate::from_gbps(800) {
        return Err(c.err(field, format!("link speed {s} is outside 10Gbps..800Gbps")));
    }
    Ok(())
}

/// Uplinks from each leaf to each spine of a leaf-spine: `uplinks_per_spine`, or what
/// `oversubscription` implies (hosts' bandwidth down over the spines' up), or 1.
pub(crate) fn uplinks_per_spine_of(c: &Ctx, t: &TopologySection) -> Result<u32, ConfigError> {
    let TopologySection::LeafSpine { spines, hosts_per_leaf, uplinks_per_spine, oversubscription, host_link, fabric_link, .. } = t else {
        return Ok(1);
    };
    let h = link(c, "topology.host_link", host_link)?;
    let f = link(c, "topology.fabric_link", fabric_link)?;
    Ok(match (uplinks_per_spine, oversubscription) {
        (Some(_), Some(_)) => return Err(c.err("topology.oversubscription", "give either uplinks_per_spine or oversubscription, not both")),
        (Some(u), None) => *u,
        (None, None) => 1,
        (None, Some(o)) => {
            // NaN and infinity too: neither gives a number of uplinks.
            if !(*o > 0.0 && o.is_finite()) {
                return Err(c.err("topology.oversubscription", format!("{o}; expected a positive ratio such as 1 or 2")));
            }
            let down = *hosts_per_leaf as f64 * h.0 .0 as f64;
            let per_spine = down / o / (*spines as f64 * f.0 .0 as f64);
            if (per_spine - per_spine.round()).abs() > 1e-9 || per_spine.round() < 1.0 {
                return Err(c.err("topology.oversubscription", format!("{o}:1 needs {per_spine:.3} uplinks per spine; choose values that give a whole number")));
            }
            // A float cast to u32 saturates: more uplinks than that is an error.
            if per_spine > u32::MAX as f64 {
                return Err(c.err("topology.oversubscription", format!("{o:e}:1 needs {per_spine:.3e} uplinks per spine; at most {}", u32::MAX)));
            }
            per_spine.round() as u32
        }
    })
}

/// A leaf-spine or fat tree from its parameters, or an explicit topology.
fn generated(c: &Ctx, t: &TopologySection) -> Result<Topology, ConfigError> {
    let topo = match t {
        TopologySection::LeafSpine { leaves, spines, hosts_per_leaf, nics_per_host, host_link, fabric_link, .. } => {
            let h = link(c, "topology.host_link", host_link)?;
            let f = link(c, "topology.fabric_link", fabric_link)?;
            let uplinks = uplinks_per_spine_of(c, t)?;
            Topology::leaf_spine(*leaves, *spines, *hosts_per_leaf, *nics_per_host, uplinks, h, f)
        }
        TopologySection::FatTree { k, host_link, fabric_link } => {
            let h = link(c, "topology.host_link", host_link)?;
            let f = link(c, "topology.fabric_link", fabric_link)?;
            Topology::fat_tree(*k, h, f)
        }
        TopologySection::Explicit { nodes, links } => return explicit(c, nodes, links),
        TopologySection::File { .. } => unreachable!("read in `compile`"),
    };
    topo.map_err(|e| c.err("topology", e.to_string()))
}

/// An explicit topology: switches with port counts, hosts with NICs, and links between
/// "switch:port" and "host" or "host:nicN" ends.
fn explicit(c: &Ctx, nodes: &[NodeCfg], links: &[ExplicitLink]) -> Result<Topology, ConfigError> {
    let mut t = Topology::default();
    let mut by_name: BTreeMap<String, (NodeId, bool)> = BTreeMap::new();
    let mut nic_of: BTreeMap<String, NodeId> = BTreeMap::new();
    let mut host = 0;
    for (i, n) in nodes.iter().enumerate() {
        let f = format!("topology.nodes[{i}]");
        if by_name.contains_key(&n.name) {
            return Err(c.err(&format!("{f}.name"), format!("node `{}` is defined twice", n.name)));
        }
        match n.kind.as_str() {
            "switch" => {
                let p = n.ports.ok_or_else(|| c.err(&format!("{f}.ports"), "a switch needs `ports`"))?;
                let id = t.add_switch(n.name.clone(), p, 1);
                by_name.insert(n.name.clone(), (id, true));
            }
            "host" => {
                let k = n.nics.unwrap_or(1);
                for r in 0..k {
                    let name = if k == 1 { n.name.clone() } else { format!("{}:nic{r}", n.name) };
                    let id = t.add_nic(name.clone(), host, r);
                    nic_of.insert(name, id);
                    if r == 0 {
                        nic_of.insert(format!("{}:nic0", n.name), id);
                        by_name.insert(n.name.clone(), (id, false));
                    }
                }
                host += 1;
            }
            other => return Err(c.err(&format!("{f}.kind"), format!("unknown kind `{other}`; expected \"switch\" or \"host\""))),
        }
    }
    for (i, l) in links.iter().enumerate() {
        let f = format!("topology.links[{i}]");
        let end = |s: &str, side: &str| -> Result<(NodeId, u32), ConfigError> {
            if let Some(&id) = nic_of.get(s) {
                return Ok((id, 0));
            }
            let (name, port) = s.split_once(':').ok_or_else(|| c.err(&format!("{f}.{side}"), format!("`{s}`: expected \"switch:port\" or a host name")))?;
            let &(id, is_sw) = by_name.get(name).ok_or_else(|| c.err(&format!("{f}.{side}"), format!("no node named `{name}`")))?;
            if !is_sw {
                return Err(c.err(&format!("{f}.{side}"), format!("`{s}`: host NICs are named \"host\" or \"host:nicN\"")));
            }
            let p: u32 = port.parse().map_err(|_| c.err(&format!("{f}.{side}"), format!("`{port}` is not a port number")))?;
            Ok((id, p))
        };
        let a = end(&l.a, "a")?;
        let b = end(&l.b, "b")?;
        let (rate, prop) = link(c, &f, &LinkCfg { speed: l.speed, cable: l.cable, delay: l.delay })?;
        t.connect(LinkSpec { a, b, rate, prop }).map_err(|e| c.err(&f, e.to_string()))?;
    }
    t.check().map_err(|e| c.err("topology.links", e.to_string()))?;
    Ok(t)
}

/// A port named "node:port" (0-based), or a host's NIC by the host's name.
pub(crate) fn named_port(c: &Ctx, field: &str, spec: &str, topo: &Topology) -> Result<PortId, ConfigError> {
    let (name, port) = match spec.rsplit_once(':') {
        Some((n, p)) => {
            let p: u32 = p.parse().map_err(|_| c.err(field, format!("`{spec}`: the port after ':' must be a number")))?;
            (n, p)
        }
        None => (spec, 0),
    };
    let node = topo.nodes.iter().position(|n| n.name == name).ok_or_else(|| c.err(field, format!("no node `{name}` in the topology")))?;
    let n = &topo.nodes[node];
    if port >= n.nports {
        return Err(c.err(field, format!("`{name}` has {}; port {port} does not exist", ports_of(n.nports))));
    }
    let pid = PortId(n.first_port + port);
    if topo.port(pid).peer.is_none() {
        return Err(c.err(field, format!("`{spec}` is not cabled")));
    }
    Ok(pid)
}

/// "3 ports (0..2)", or "no ports": how errors name a node's ports.
pub(crate) fn ports_of(nports: u32) -> String {
    match nports {
        0 => "no ports".into(),
        n => format!("{n} ports (0..{})", n - 1),
    }
}

/// The rate of the fabric's fastest link (aggregation nodes' internal ports left out):
/// the generation `switch_latency = "auto"` goes by.
pub(crate) fn fastest_rate(topo: &Topology) -> BitRate {
    (0..topo.ports.len() as u32).filter(|&pi| !topo.is_aggregator_port(PortId(pi))).map(|pi| topo.port(PortId(pi)).rate).max().unwrap_or_default()
}
