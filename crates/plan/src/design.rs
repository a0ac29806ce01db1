//! The fabric designer: from what a cluster needs to a sized Clos fabric.
//!
//! Inputs ([`DesignInput`]): the compute endpoints (GPUs, one NIC each), or nodes, or
//! scalable units (SUs); NICs per node (rails); port speed; switch radix; oversubscription
//! of the leaf and spine tiers; rail-optimised or not; SU size; UFM ports; how many ports
//! share a transceiver module. Output ([`Design`]): the tier count and why, switches and
//! ports per tier, links, cables and transceivers per tier, bisection bandwidth, switch hop
//! counts, every formula with its source ([`Design::formulas`], `--explain`), and a
//! scenario file the simulator runs ([`scenario`]).
//!
//! Every count comes from `model::sizing` ([`sizing::fabric`] places the nodes and sizes
//! the tiers; see its module doc for the rules and how they reproduce NVIDIA's DGX
//! SuperPOD tables and Al-Fares' fat tree). This module adds no switch or link count of
//! its own: it validates inputs, reads the counts out per tier, and applies the stated
//! conventions:
//!
//! * Cables: one per link, as NVIDIA's reference-architecture tables count them (the
//!   H100 table's 1024 spine–leaf cables are 32 leaves × 32 NDR uplinks).
//! * Transceivers: every link is counted as optical, a transceiver at each end. On a
//!   switch, `switch_ports_per_transceiver` ports share one module (2 for the QM9700: 64
//!   NDR ports in 32 twin-port OSFP cages, per the SuperPOD data); on a node,
//!   `node_ports_per_transceiver` NIC ports do (1 by default); each UFM port has its own.
//!   A module serves ports of one switch, so a switch needs ⌈ports used / ports per
//!   module⌉. A copper (DAC/ACC) link needs none: subtract those yourself.
//! * Bisection bandwidth: one direction, across a cut of the endpoints into equal halves
//!   along switch boundaries (Al-Fares et al. 2008 §2.1): the least of half the
//!   endpoints' links and half of each tier's uplinks, times the port speed
//!   ([`sizing::Fabric::bisection`]). All links run at the one port speed.
//! * Hop counts: switches a packet crosses between two endpoints, on shortest paths.
//!
//! Left out: cable lengths and types, port-by-port rail and plane wiring beyond the
//! simple one [`wiring`] builds, the storage, in-band and out-of-band management fabrics,
//! NVLink domains, and designs that need a fourth tier.

use std::fmt::{self, Write as _};

pub use model::sizing::Oversubscription;
use model::sizing::{self, Fabric, FabricInput, SizingError};
use serde::{Serialize, Serializer};
use units::BitRate;

/// Where each formula and default comes from.
pub mod sources {
    pub const AL_FARES: &str = "Al-Fares, Loukissas, Vahdat, \"A Scalable, Commodity Data Center Network Architecture\", SIGCOMM 2008";
    pub const RA_H100: &str = "NVIDIA DGX SuperPOD H100 reference architecture RA-11333-001, \"Network Fabrics\", Table 4";
    pub const RA_B200: &str = "NVIDIA DGX SuperPOD B200 reference architecture, compute fabric table";
    pub const QM9700: &str = "NVIDIA Quantum-2 QM9700: 64 NDR 400Gb/s ports in 32 twin-port OSFP cages (shared/data/superpod-reference-architectures.md)";
    pub const SIZING: &str = "model::sizing (module doc): the rule that reproduces both SuperPOD tables";
    pub const INPUT: &str = "input";
}

/// Port speeds the designer accepts (those the simulator models, see the `units` crate).
pub const MIN_SPEED: BitRate = BitRate::from_gbps(10);
pub const MAX_SPEED: BitRate = BitRate::from_gbps(800);

/// A DGX SuperPOD whose compute fabric the designer can reproduce.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SuperPod {
    H100,
    B200,
}

impl std::str::FromStr for SuperPod {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "h100" => Ok(SuperPod::H100),
            "b200" => Ok(SuperPod::B200),
            _ => Err(format!("unknown SuperPOD `{s}`; expected h100 or b200")),
        }
    }
}

impl fmt::Display for SuperPod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SuperPod::H100 => "DGX SuperPOD H100",
            SuperPod::B200 => "DGX SuperPOD B200",
        })
    }
}

/// What the fabric must connect, and with what.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DesignInput {
    /// The SuperPOD these inputs reproduce, if any (for display only).
    pub preset: Option<SuperPod>,
    /// Give exactly one of `endpoints`, `nodes` and `scalable_units`.
    pub endpoints: Option<u64>,
    pub nodes: Option<u64>,
    pub scalable_units: Option<u32>,
    /// Compute NICs (rails) per node, one GPU each.
    pub nics_per_node: u32,
    #[serde(rename = "speed_gbps", serialize_with = "gbps")]
    pub speed: BitRate,
    /// Ports per switch, every tier alike.
    pub radix: u32,
    /// Leaf ports down:up.
    #[serde(serialize_with = "ratio")]
    pub leaf_oversubscription: Oversubscription,
    /// Spine ports down:up (three tiers only).
    #[serde(serialize_with = "ratio")]
    pub spine_oversubscription: Oversubscription,
    /// One leaf per rail per SU; else a node's NICs share a leaf.
    pub rail_optimised: bool,
    /// Nodes per SU. None: rail-optimised, as many as a leaf has downlinks; otherwise the
    /// whole fabric is one SU.
    pub su_nodes: Option<u32>,
    /// UFM (subnet manager) ports on the compute fabric; they take node slots in the first SU.
    pub ufm_ports: u32,
    pub switch_ports_per_transceiver: u32,
    pub node_ports_per_transceiver: u32,
}

impl DesignInput {
    /// `endpoints` single-NIC endpoints on 64-port 400 Gb/s switches, non-blocking, not
    /// rail-optimised, one SU, no UFM ports, one port per transceiver module.
    pub fn endpoints(endpoints: u64) -> DesignInput {
        DesignInput {
            preset: None,
            endpoints: Some(endpoints),
            nodes: None,
            scalable_units: None,
            nics_per_node: 1,
            speed: BitRate::from_gbps(400),
            radix: 64,
            leaf_oversubscription: Oversubscription::NON_BLOCKING,
            spine_oversubscription: Oversubscription::NON_BLOCKING,
            rail_optimised: false,
            su_nodes: None,
            ufm_ports: 0,
            switch_ports_per_transceiver: 1,
            node_ports_per_transceiver: 1,
        }
    }

    /// The SuperPOD's compute-fabric inputs with `sus` scalable units: QM9700 (64 × 400
    /// Gb/s NDR, twin-port OSFP), 32 nodes per SU, 8 rails, rail-optimised, non-blocking;
    /// the H100 fabric has 4 UFM ports in the first SU (31 nodes there), the B200 tables
    /// count none.
    pub fn superpod(p: SuperPod, sus: u32) -> DesignInput {
        DesignInput {
            preset: Some(p),
            endpoints: None,
            scalable_units: Some(sus),
            nics_per_node: 8,
            rail_optimised: true,
            su_nodes: Some(32),
            ufm_ports: match p {
                SuperPod::H100 => 4,
                SuperPod::B200 => 0,
            },
            switch_ports_per_transceiver: 2,
            ..DesignInput::endpoints(1)
        }
    }
}

fn gbps<S: Serializer>(r: &BitRate, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(r.as_gbps_f64())
}

fn ratio<S: Serializer>(o: &Oversubscription, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(&format_args!("{}:{}", o.down, o.up))
}

/// An input that cannot be designed for: which input, and what is expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{input}: {msg}")]
pub struct DesignError {
    /// The [`DesignInput`] field at fault.
    pub input: &'static str,
    pub msg: String,
}

fn err<T>(input: &'static str, msg: impl Into<String>) -> Result<T, DesignError> {
    Err(DesignError { input, msg: msg.into() })
}

/// One switch tier.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Tier {
    /// "leaf", "spine" or "core".
    pub name: &'static str,
    pub switches: u64,
    /// Ports of each switch reserved for the tier below and the tier above.
    pub ports_down: u32,
    pub ports_up: u32,
    /// Ports cabled, over the whole tier, and left free.
    pub ports_used: u64,
    pub ports_free: u64,
    /// The most ports cabled on one switch of the tier.
    pub max_ports_used: u64,
    pub links_down: u64,
    pub links_up: u64,
    /// Transceiver modules in the tier's switches.
    pub transceivers: u64,
}

/// The links between two tiers (or nodes and leaves).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LinkLayer {
    /// "node-leaf", "leaf-spine" or "spine-core".
    pub name: &'static str,
    pub links: u64,
    /// One per link.
    pub cables: u64,
    /// Links between one switch (or node) below and one switch above, in a full pod or
    /// plane: the uplinks spread evenly.
    pub links_per_pair: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Bisection {
    #[serde(rename = "gbps", serialize_with = "gbps")]
    pub bandwidth: BitRate,
    /// Endpoints' bandwidth over bisection bandwidth (1 = full bisection).
    pub oversubscription: f64,
    pub convention: &'static str,
}

/// Switches a packet crosses between two endpoints.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Hops {
    /// Both on one leaf (in a rail-optimised fabric: one rail of one SU).
    pub same_leaf: u32,
    /// Different leaves of one pod (two tiers: the whole fabric is one pod).
    pub same_pod: u32,
    /// Different pods (three tiers), else as `same_pod`.
    pub across_pods: u32,
    pub note: String,
}

/// A formula as used: what it computes, with the numbers in, and where it comes from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Formula {
    pub quantity: String,
    pub formula: String,
    pub source: &'static str,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Totals {
    pub switches: u64,
    pub ports_used: u64,
    pub links: u64,
    pub cables: u64,
    pub node_transceivers: u64,
    pub switch_transceivers: u64,
    pub transceivers: u64,
}

/// A sized fabric.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Design {
    pub input: DesignInput,
    pub tiers: u8,
    /// Why this many tiers.
    pub choice: String,
    pub nodes: u64,
    /// Compute endpoints (GPUs / NICs).
    pub endpoints: u64,
    pub ufm_ports: u32,
    pub scalable_units: u64,
    pub nodes_per_su: u64,
    pub spare_node_slots: u64,
    /// Leaf, spine, core (as many as there are tiers).
    pub switch_tiers: Vec<Tier>,
    /// Node–leaf, leaf–spine, spine–core.
    pub link_layers: Vec<LinkLayer>,
    pub totals: Totals,
    pub bisection: Bisection,
    pub hops: Hops,
    pub conventions: Vec<&'static str>,
    pub formulas: Vec<Formula>,
    /// The counts as `model::sizing` computed them.
    pub sizing: Fabric,
}

impl Design {
    pub fn tier(&self, name: &str) -> Option<&Tier> {
        self.switch_tiers.iter().find(|t| t.name == name)
    }
    pub fn layer(&self, name: &str) -> Option<&LinkLayer> {
        self.link_layers.iter().find(|t| t.name == name)
    }
    /// Switches of a tier (0 if the design has no such tier).
    pub fn switches(&self, name: &str) -> u64 {
        self.tier(name).map_or(0, |t| t.switches)
    }
    /// Cables of a link layer (0 if the design has no such layer).
    pub fn cables(&self, name: &str) -> u64 {
        self.layer(name).map_or(0, |l| l.cables)
    }
}

const CABLES: &str = "one cable per link, as NVIDIA's SuperPOD tables count them";
const TRANSCEIVERS: &str = "every link optical, a transceiver at each end; a switch needs ceil(ports used / switch ports per module) modules, a node ceil(NICs / node ports per module), a UFM port one; copper (DAC/ACC) links need none";
const BISECTION: &str = "one direction, across a cut of the endpoints into equal halves along switch boundaries (Al-Fares et al. 2008 sec. 2.1): min(endpoints, leaf uplinks, spine uplinks) / 2 x port speed";
const HOPS: &str = "switches crossed between two endpoints on a shortest path";

/// Validates the inputs and sizes the fabric.
pub fn design(inp: &DesignInput) -> Result<Design, DesignError> {
    let (nodes, size_input) = validate(inp)?;
    let r = inp.radix;
    let sized = sizing::fabric(&FabricInput {
        radix: r,
        nodes,
        rails: inp.nics_per_node,
        rail_optimised: inp.rail_optimised,
        nodes_per_su: inp.su_nodes,
        ufm_ports: inp.ufm_ports,
        leaf: inp.leaf_oversubscription,
        spine: inp.spine_oversubscription,
    })
    .map_err(|e| sizing_error(e, inp, size_input))?;
    if let Some(su) = inp.su_nodes {
        if inp.scalable_units.is_none() && sized.spare_node_slots != 0 {
            let per = su as u64;
            let full = sized.scalable_units * per - sized.ufm_slots;
            let fewer = full - per;
            let unit = if size_input == "endpoints" { inp.nics_per_node as u64 } else { 1 };
            let what = if size_input == "endpoints" { "endpoints" } else { "nodes" };
            let ufm = if sized.ufm_slots > 0 { format!(" and {} UFM slot(s)", sized.ufm_slots) } else { String::new() };
            let alt = if fewer > 0 { format!("{} {what} ({} SUs) or ", fewer * unit, sized.scalable_units - 1) } else { String::new() };
            return err(
                size_input,
                format!(
                    "{nodes} nodes{ufm} do not fill whole scalable units of {su} nodes; expected {alt}{} {what} ({} SUs), or leave out su_nodes",
                    full * unit,
                    sized.scalable_units
                ),
            );
        }
    }
    let c = sized.clos;
    let f = &sized;
    let mut fx = Explain::default();
    explain_inputs(&mut fx, inp, f);

    let loads = leaf_loads(f);
    let ppt = inp.switch_ports_per_transceiver as u64;
    let modules = |groups: &[(u64, u64)]| groups.iter().map(|&(n, used)| n * used.div_ceil(ppt)).sum::<u64>();
    let mut tiers = vec![];
    let leaf_groups: Vec<(u64, u64)> = loads.iter().map(|&l| (1, l + c.leaf_uplinks as u64)).collect();
    tiers.push(Tier {
        name: "leaf",
        switches: c.leaves,
        ports_down: f.leaf_downlinks,
        ports_up: c.leaf_uplinks,
        ports_used: f.node_leaf_links + c.leaf_spine_links,
        ports_free: c.leaves * r as u64 - f.node_leaf_links - c.leaf_spine_links,
        max_ports_used: leaf_groups.iter().map(|g| g.1).max().unwrap_or(0),
        links_down: f.node_leaf_links,
        links_up: c.leaf_spine_links,
        transceivers: modules(&leaf_groups),
    });
    let (lpp, lpp_last) = c.links_per_leaf_spine();
    let (lpc, lpc_short) = c.links_per_spine_core();
    if c.tiers >= 2 {
        let sup = c.spine_uplinks as u64;
        let groups = [(c.spines - c.last_pod_spines, c.pod_leaves * lpp + sup), (c.last_pod_spines, c.last_pod_leaves * lpp_last + sup)];
        tiers.push(Tier {
            name: "spine",
            switches: c.spines,
            ports_down: c.spine_downlinks,
            ports_up: c.spine_uplinks,
            ports_used: c.leaf_spine_links + c.spine_core_links,
            ports_free: c.spines * r as u64 - c.leaf_spine_links - c.spine_core_links,
            max_ports_used: groups.iter().filter(|g| g.0 > 0).map(|g| g.1).max().unwrap_or(0),
            links_down: c.leaf_spine_links,
            links_up: c.spine_core_links,
            transceivers: modules(&groups),
        });
    }
    if c.tiers >= 3 {
        let full = c.full_planes() * c.plane_cores;
        let groups = [(full, c.pods * lpc), (c.cores - full, (c.pods - 1) * lpc_short)];
        tiers.push(Tier {
            name: "core",
            switches: c.cores,
            ports_down: r,
            ports_up: 0,
            ports_used: c.spine_core_links,
            ports_free: c.cores * r as u64 - c.spine_core_links,
            max_ports_used: groups.iter().filter(|g| g.0 > 0).map(|g| g.1).max().unwrap_or(0),
            links_down: c.spine_core_links,
            links_up: 0,
            transceivers: modules(&groups),
        });
    }
    let mut layers = vec![LinkLayer { name: "node-leaf", links: f.node_leaf_links, cables: f.node_leaf_links, links_per_pair: 1 }];
    if c.tiers >= 2 {
        layers.push(LinkLayer { name: "leaf-spine", links: c.leaf_spine_links, cables: c.leaf_spine_links, links_per_pair: lpp });
    }
    if c.tiers >= 3 {
        layers.push(LinkLayer { name: "spine-core", links: c.spine_core_links, cables: c.spine_core_links, links_per_pair: lpc });
    }
    let node_transceivers = f.nodes * (f.rails as u64).div_ceil(inp.node_ports_per_transceiver as u64) + f.ufm_ports as u64;
    let switch_transceivers: u64 = tiers.iter().map(|t| t.transceivers).sum();
    let links: u64 = layers.iter().map(|l| l.links).sum();
    let totals = Totals {
        switches: c.switches(),
        ports_used: tiers.iter().map(|t| t.ports_used).sum(),
        links,
        cables: links,
        node_transceivers,
        switch_transceivers,
        transceivers: node_transceivers + switch_transceivers,
    };
    let half = f.bisection_half_links();
    let bisection = Bisection { bandwidth: f.bisection(inp.speed), oversubscription: f.endpoints as f64 / half as f64, convention: BISECTION };
    let hops = hops(f);
    let choice = choice(f, inp);
    explain_tiers(&mut fx, inp, f, &choice);
    explain_outputs(&mut fx, inp, f, &tiers, &totals, &bisection, &hops);
    Ok(Design {
        input: inp.clone(),
        tiers: c.tiers,
        choice,
        nodes: f.nodes,
        endpoints: f.endpoints,
        ufm_ports: f.ufm_ports,
        scalable_units: f.scalable_units,
        nodes_per_su: f.nodes_per_su,
        spare_node_slots: f.spare_node_slots,
        switch_tiers: tiers,
        link_layers: layers,
        totals,
        bisection,
        hops,
        conventions: vec![CABLES, TRANSCEIVERS, BISECTION, HOPS],
        formulas: fx.0,
        sizing: sized,
    })
}

/// Checks every input; returns the node count and the name of the size input given.
fn validate(i: &DesignInput) -> Result<(u64, &'static str), DesignError> {
    if i.radix < 4 || i.radix % 2 != 0 {
        return err("radix", format!("expected an even number of ports, at least 4 (half face each way); got {}", i.radix));
    }
    if i.speed < MIN_SPEED || i.speed > MAX_SPEED {
        return err("speed", format!("expected a port speed from {MIN_SPEED} to {MAX_SPEED}; got {}", i.speed));
    }
    for (name, o) in [("leaf_oversubscription", i.leaf_oversubscription), ("spine_oversubscription", i.spine_oversubscription)] {
        if o.up == 0 || o.down < o.up {
            return err(name, format!("expected DOWN:UP with DOWN >= UP >= 1 (1:1 is non-blocking, 3:1 three times oversubscribed); got {}:{}", o.down, o.up));
        }
        let (down, up) = o.split(i.radix).map_err(|e| DesignError { input: name, msg: e.to_string() })?;
        if down == 0 || up == 0 {
            return err(name, format!("{}:{} leaves no {} port on a {}-port switch", o.down, o.up, if up == 0 { "up" } else { "down" }, i.radix));
        }
    }
    if i.nics_per_node == 0 {
        return err("nics_per_node", "expected at least 1");
    }
    for (name, v) in [("switch_ports_per_transceiver", i.switch_ports_per_transceiver), ("node_ports_per_transceiver", i.node_ports_per_transceiver)] {
        if !(1..=8).contains(&v) {
            return err(name, format!("expected 1 to 8 ports per transceiver module (2 for a twin-port OSFP); got {v}"));
        }
    }
    if i.su_nodes == Some(0) {
        return err("su_nodes", "expected at least 1 node per scalable unit");
    }
    let given = [i.endpoints.is_some(), i.nodes.is_some(), i.scalable_units.is_some()].iter().filter(|&&g| g).count();
    if given != 1 {
        return err("endpoints", "give exactly one of endpoints (GPUs), nodes or scalable_units");
    }
    let rails = i.nics_per_node as u64;
    let ufm_slots = (i.ufm_ports as u64).div_ceil(rails);
    if let Some(e) = i.endpoints {
        if e == 0 {
            return err("endpoints", "expected at least 1");
        }
        if e % rails != 0 {
            return err("endpoints", format!("{e} endpoints are not whole nodes of {rails} NICs (nics_per_node); expected a multiple of {rails}"));
        }
        return Ok((e / rails, "endpoints"));
    }
    if let Some(n) = i.nodes {
        if n == 0 {
            return err("nodes", "expected at least 1");
        }
        return Ok((n, "nodes"));
    }
    let sus = i.scalable_units.unwrap_or(0) as u64;
    if sus == 0 {
        return err("scalable_units", "expected at least 1");
    }
    let per = match (i.su_nodes, i.rail_optimised && rails > 1) {
        (Some(s), _) => s as u64,
        (None, true) => i.leaf_oversubscription.split(i.radix).map(|(d, _)| d as u64).unwrap_or(0),
        (None, false) => return err("su_nodes", "scalable_units needs su_nodes (nodes per SU) unless the fabric is rail-optimised"),
    };
    if ufm_slots > per {
        return err("ufm_ports", format!("{} UFM ports take {ufm_slots} node slots; an SU has {per}", i.ufm_ports));
    }
    Ok((sus * per - ufm_slots, "scalable_units"))
}

fn sizing_error(e: SizingError, i: &DesignInput, size: &'static str) -> DesignError {
    let (input, msg) = match e {
        SizingError::Radix(_) => ("radix", e.to_string()),
        SizingError::Zero(_) | SizingError::Overflow => (size, e.to_string()),
        SizingError::Oversubscription { .. } => ("spine_oversubscription", e.to_string()),
        SizingError::NodesPerSu { nodes_per_su, leaf_downlinks } => (
            "su_nodes",
            format!("a rail-optimised SU puts one NIC of each of its nodes on a leaf: {nodes_per_su} nodes need {nodes_per_su} downlinks, a {}-port leaf at {}:{} has {leaf_downlinks}", i.radix, i.leaf_oversubscription.down, i.leaf_oversubscription.up),
        ),
        SizingError::UfmPorts(p) => ("ufm_ports", format!("{p} UFM ports take more node slots than a scalable unit has")),
        SizingError::TooLarge { leaves, max_leaves } => (
            size,
            format!(
                "needs {leaves} leaves; three tiers of {}-port switches connect at most {max_leaves} (R pods of one leaf per spine downlink; R³/4 = {} endpoints at 1:1): a fourth tier is not designed here; use a larger radix or fewer endpoints",
                i.radix,
                sizing::three_tier_max_hosts(i.radix).unwrap_or(0)
            ),
        ),
        SizingError::NicsPerLeaf { rails, leaf_downlinks } => (
            "nics_per_node",
            format!("without rail optimisation a node's {rails} NICs share a leaf, which has {leaf_downlinks} downlinks; use rail_optimised or fewer NICs per node"),
        ),
    };
    DesignError { input, msg }
}

/// Endpoint ports (NICs and UFM) cabled to each leaf, in leaf order.
fn leaf_loads(f: &Fabric) -> Vec<u64> {
    let p = Placement(f);
    let mut loads = vec![0u64; f.clos.leaves as usize];
    for n in 0..f.nodes {
        for r in 0..f.rails as u64 {
            loads[p.node(n, r).0 as usize] += 1;
        }
    }
    for u in 0..f.ufm_ports as u64 {
        loads[p.ufm(u).0 as usize] += 1;
    }
    loads
}

/// Where endpoints sit: node slots fill the SUs in order; the UFM ports take the last
/// slots of the first SU (the H100 SuperPOD's 32nd slot, RA-11333-001); in a
/// rail-optimised SU, slot j is port j of each of the SU's rail leaves, otherwise slots
/// fill a leaf's downlinks node by node.
struct Placement<'a>(&'a Fabric);

impl Placement<'_> {
    /// (leaf, leaf port) of slot `slot`'s NIC `rail`.
    fn slot(&self, slot: u64, rail: u64) -> (u64, u64) {
        let f = self.0;
        let rails = f.rails as u64;
        if f.clos.tiers == 1 {
            return (0, slot * rails + rail);
        }
        let (su, j) = (slot / f.nodes_per_su, slot % f.nodes_per_su);
        if f.rail_optimised {
            (su * rails + rail, j)
        } else {
            (su * f.leaves_per_su + j / f.nodes_per_leaf, (j % f.nodes_per_leaf) * rails + rail)
        }
    }
    fn node(&self, n: u64, rail: u64) -> (u64, u64) {
        let f = self.0;
        let before_ufm = f.nodes_per_su - f.ufm_slots;
        self.slot(if n < before_ufm { n } else { n + f.ufm_slots }, rail)
    }
    fn ufm(&self, port: u64) -> (u64, u64) {
        let f = self.0;
        let rails = f.rails as u64;
        self.slot(f.nodes_per_su - f.ufm_slots + port / rails, port % rails)
    }
}

fn hops(f: &Fabric) -> Hops {
    let c = f.clos;
    let (pod, across) = match c.tiers {
        1 => (1, 1),
        2 => (3, 3),
        _ => (3, 5),
    };
    let mut note = match c.tiers {
        1 => "one switch: every pair is one switch apart".to_string(),
        2 => "leaf-spine-leaf between leaves; the fabric is one pod".to_string(),
        _ => format!("leaf-spine-leaf within a pod of {} leaves, leaf-spine-core-spine-leaf between pods", c.pod_leaves),
    };
    if f.rail_optimised {
        note.push_str("; rail-optimised: GPUs with the same rail index in one SU share a leaf, other pairs cross a spine (or NVLink first, with PXN)");
    }
    Hops { same_leaf: 1, same_pod: pod, across_pods: across, note }
}

fn choice(f: &Fabric, i: &DesignInput) -> String {
    let c = f.clos;
    let r = i.radix as u64;
    let two_max = r * f.leaf_downlinks as u64;
    match c.tiers {
        1 => format!("1 tier: all {} endpoint ports fit one {r}-port switch", f.node_leaf_links),
        2 => format!(
            "2 tiers: {} leaves <= radix {r}, so every leaf links to every spine; two tiers of {r}-port switches hold at most {r} leaves = {two_max} endpoints at this leaf split (R²/2 = {} non-blocking)",
            c.leaves,
            r * r / 2
        ),
        _ => format!(
            "3 tiers: {} leaves > radix {r}: a spine cannot reach every leaf (two tiers hold at most {r} leaves = {two_max} endpoints at this leaf split, R²/2 = {} non-blocking); pods of {} leaves and {} spines joined by {} core planes; three tiers hold at most {} leaves (R³/4 = {} endpoints non-blocking)",
            c.leaves,
            r * r / 2,
            c.pod_leaves,
            c.pod_spines,
            c.planes,
            r * c.pod_leaves,
            r * r * r / 4
        ),
    }
}

#[derive(Default)]
struct Explain(Vec<Formula>);

impl Explain {
    fn push(&mut self, quantity: impl Into<String>, formula: impl Into<String>, source: &'static str) {
        self.0.push(Formula { quantity: quantity.into(), formula: formula.into(), source });
    }
}

/// The reference architecture whose table a SuperPOD rule reproduces.
fn ra(i: &DesignInput) -> &'static str {
    match i.preset {
        Some(SuperPod::B200) => sources::RA_B200,
        _ => sources::RA_H100,
    }
}

fn ovs(o: Oversubscription) -> String {
    format!("{}:{}", o.down, o.up)
}

fn explain_inputs(x: &mut Explain, i: &DesignInput, f: &Fabric) {
    let rails = f.rails;
    if let Some(e) = i.endpoints {
        x.push("nodes", format!("endpoints / NICs per node = {e} / {rails} = {}", f.nodes), sources::INPUT);
    }
    if let Some(s) = i.scalable_units {
        x.push("nodes", format!("SUs × nodes per SU - UFM slots = {s} × {} - {} = {}", f.nodes_per_su, f.ufm_slots, f.nodes), ra(i));
    }
    x.push("endpoints", format!("nodes × NICs per node = {} × {rails} = {}", f.nodes, f.endpoints), sources::INPUT);
    if f.ufm_ports > 0 {
        x.push(
            "UFM node slots",
            format!("ceil(UFM ports / rails) = ceil({} / {rails}) = {}, the last slots of the first SU", f.ufm_ports, f.ufm_slots),
            sources::RA_H100,
        );
    }
    if f.clos.tiers == 1 {
        return;
    }
    let (d, u) = (f.leaf_downlinks, f.clos.leaf_uplinks);
    let o = i.leaf_oversubscription;
    x.push(
        "leaf ports down / up",
        format!("floor(R·o/(o+1)) / R - down with R = {}, o = {} : {d} / {u}", i.radix, ovs(o)),
        "Clos leaf split; oversubscription as defined by Al-Fares et al. 2008 sec. 2.1",
    );
    x.push(
        "scalable units",
        format!(
            "ceil((nodes + UFM slots) / nodes per SU) = ceil(({} + {}) / {}) = {} ({} spare node slots)",
            f.nodes, f.ufm_slots, f.nodes_per_su, f.scalable_units, f.spare_node_slots
        ),
        if i.su_nodes.is_some() { ra(i) } else { "default: rail-optimised, one SU per leaf's downlinks; else the whole fabric is one SU" },
    );
    if f.rail_optimised {
        x.push("leaves", format!("SUs × rails = {} × {rails} = {} (one leaf per rail per SU)", f.scalable_units, f.clos.leaves), ra(i));
    } else {
        x.push(
            "leaves",
            format!(
                "nodes per leaf = floor(leaf down / NICs) = floor({d} / {rails}) = {}; leaves = ceil(node slots per SU / nodes per leaf) per SU = {}",
                f.nodes_per_leaf, f.clos.leaves
            ),
            "a node's NICs share a leaf (not rail-optimised)",
        );
    }
}

fn explain_tiers(x: &mut Explain, i: &DesignInput, f: &Fabric, choice: &str) {
    let c = f.clos;
    let r = i.radix as u64;
    x.push("tiers", choice.to_string(), sources::AL_FARES);
    match c.tiers {
        1 => {}
        2 => {
            let up = c.leaf_uplinks as u64;
            x.push(
                "spines",
                format!(
                    "smallest divisor of leaf uplinks {up} that is >= ceil(leaves × uplinks / R) = ceil({} × {up} / {r}) = {}: {} spines, {} links from each leaf to each",
                    c.leaves,
                    (c.leaves * up).div_ceil(r),
                    c.spines,
                    up / c.spines
                ),
                "model::sizing; reproduces RA-11333-001 Table 4 (3 SUs: 16 spines, not 12)",
            );
        }
        _ => {
            let up = c.leaf_uplinks as u64;
            x.push(
                "spine ports down / up",
                format!("floor(R·o/(o+1)) / R - down with o = {} : {} / {}", ovs(i.spine_oversubscription), c.spine_downlinks, c.spine_uplinks),
                sources::AL_FARES,
            );
            x.push(
                "pods",
                format!(
                    "ceil(leaves / spine downlinks) = ceil({} / {}) = {}; a full pod has {} leaves and {} spines (one link each pair){}",
                    c.leaves,
                    c.spine_downlinks,
                    c.pods,
                    c.pod_leaves,
                    c.pod_spines,
                    if c.last_pod_leaves < c.pod_leaves {
                        format!(
                            ", the last {} leaves and {} spines (the smallest divisor of {} whose ports hold its uplinks)",
                            c.last_pod_leaves, c.last_pod_spines, c.leaf_uplinks
                        )
                    } else {
                        String::new()
                    }
                ),
                "Al-Fares et al. 2008 sec. 3 (k pods of k/2 edge and k/2 aggregation switches)",
            );
            x.push("spines", format!("(pods - 1) × leaf uplinks + last pod's = {} × {up} + {} = {}", c.pods - 1, c.last_pod_spines, c.spines), sources::SIZING);
            x.push(
                "cores",
                format!(
                    "{} planes (spine j of each pod in plane j); cores per plane = smallest divisor of spine uplinks {} that is >= ceil(pods × {} / R) = {}{}; total {}",
                    c.planes,
                    c.spine_uplinks,
                    c.spine_uplinks,
                    c.plane_cores,
                    if c.short_plane_cores > 0 { format!(" ({} in the {} planes without a spine in the last pod)", c.short_plane_cores, c.planes - c.full_planes()) } else { String::new() },
                    c.cores
                ),
                "Al-Fares et al. 2008 sec. 3 ((k/2)² cores); reproduces the B200 table (16 SUs: 64 cores)",
            );
        }
    }
}

fn explain_outputs(x: &mut Explain, i: &DesignInput, f: &Fabric, tiers: &[Tier], t: &Totals, b: &Bisection, h: &Hops) {
    let c = f.clos;
    x.push(
        "node-leaf links",
        format!("endpoints + UFM ports = {} + {} = {}", f.endpoints, f.ufm_ports, f.node_leaf_links),
        "one link per NIC port and per UFM port (RA-11333-001 Table 4: compute + UFM cables)",
    );
    if c.tiers >= 2 {
        x.push("leaf-spine links", format!("leaves × leaf uplinks = {} × {} = {}", c.leaves, c.leaf_uplinks, c.leaf_spine_links), ra(i));
    }
    if c.tiers >= 3 {
        x.push("spine-core links", format!("spines × spine uplinks = {} × {} = {}", c.spines, c.spine_uplinks, c.spine_core_links), sources::RA_B200);
    }
    x.push("cables", format!("one per link = {}", t.cables), ra(i));
    let ppt = i.switch_ports_per_transceiver;
    x.push(
        "switch transceivers",
        format!(
            "sum over switches of ceil(ports used / {ppt}) = {} = {}",
            tiers.iter().map(|t| format!("{} ({})", t.transceivers, t.name)).collect::<Vec<_>>().join(" + "),
            t.switch_transceivers
        ),
        if ppt == 2 { sources::QM9700 } else { "input: switch ports per transceiver module" },
    );
    x.push(
        "node transceivers",
        format!(
            "nodes × ceil(NICs / {}) + UFM ports = {} × {} + {} = {}",
            i.node_ports_per_transceiver,
            f.nodes,
            (f.rails as u64).div_ceil(i.node_ports_per_transceiver as u64),
            f.ufm_ports,
            t.node_transceivers
        ),
        "input: node ports per transceiver module (default one per NIC port)",
    );
    let mut terms = vec![format!("endpoints {}", f.endpoints)];
    if c.tiers >= 2 {
        terms.push(format!("leaf uplinks {}", c.leaf_spine_links));
    }
    if c.tiers >= 3 {
        terms.push(format!("spine uplinks {}", c.spine_core_links));
    }
    x.push(
        "bisection bandwidth",
        format!("min({}) / 2 × {} = {:.1} (oversubscription {:.2}:1)", terms.join(", "), i.speed, b.bandwidth, b.oversubscription),
        sources::AL_FARES,
    );
    x.push("switch hops", format!("same leaf {}, same pod {}, across pods {}", h.same_leaf, h.same_pod, h.across_pods), "the topology's shortest paths");
}

/// The design as a readable report.
pub fn text(d: &Design) -> String {
    let i = &d.input;
    let mut s = String::new();
    let what = match (i.preset, i.scalable_units) {
        (Some(p), Some(n)) => format!("{p}, {n} SU{}: ", if n == 1 { "" } else { "s" }),
        _ => String::new(),
    };
    let ufm = if d.ufm_ports > 0 { format!(" + {} UFM ports", d.ufm_ports) } else { String::new() };
    let _ = writeln!(
        s,
        "{what}{}{ufm}, {}, radix {}, leaf {}{}{}",
        if i.nics_per_node == 1 {
            format!("{} endpoints", d.endpoints)
        } else {
            format!("{} nodes × {} NICs = {} endpoints", d.nodes, i.nics_per_node, d.endpoints)
        },
        i.speed,
        i.radix,
        ovs(i.leaf_oversubscription),
        if d.tiers == 3 { format!(", spine {}", ovs(i.spine_oversubscription)) } else { String::new() },
        if d.sizing.rail_optimised { format!(", rail-optimised, {} SUs of {} nodes", d.scalable_units, d.nodes_per_su) } else { String::new() },
    );
    if d.spare_node_slots > 0 {
        let _ = writeln!(s, "{} node slots spare in the last SU", d.spare_node_slots);
    }
    let _ = writeln!(s, "{}\n", d.choice);

    let mut rows = vec![vec!["switches".to_string(), "count".into(), "down+up".into(), "ports used".into(), "free".into(), "transceivers".into()]];
    for t in &d.switch_tiers {
        rows.push(vec![
            t.name.into(),
            t.switches.to_string(),
            format!("{}+{}", t.ports_down, t.ports_up),
            t.ports_used.to_string(),
            t.ports_free.to_string(),
            t.transceivers.to_string(),
        ]);
    }
    let free: u64 = d.switch_tiers.iter().map(|t| t.ports_free).sum();
    rows.push(vec![
        "total".into(),
        d.totals.switches.to_string(),
        String::new(),
        d.totals.ports_used.to_string(),
        free.to_string(),
        d.totals.switch_transceivers.to_string(),
    ]);
    table(&mut s, &rows);
    s.push('\n');

    let mut rows = vec![vec!["links".to_string(), "count".into(), "cables".into(), "per pair".into()]];
    for l in &d.link_layers {
        rows.push(vec![l.name.into(), l.links.to_string(), l.cables.to_string(), l.links_per_pair.to_string()]);
    }
    rows.push(vec!["total".into(), d.totals.links.to_string(), d.totals.cables.to_string(), String::new()]);
    table(&mut s, &rows);
    s.push('\n');

    let _ = writeln!(
        s,
        "transceivers  {} = {} switch side (switch ports per module: {}) + {} node side (NIC ports per module: {}{})",
        d.totals.transceivers,
        d.totals.switch_transceivers,
        i.switch_ports_per_transceiver,
        d.totals.node_transceivers,
        i.node_ports_per_transceiver,
        if d.ufm_ports > 0 { "; one per UFM port" } else { "" },
    );
    let _ = writeln!(
        s,
        "bisection     {:.1} one way ({} endpoints × {} / 2{})",
        d.bisection.bandwidth,
        d.endpoints,
        i.speed,
        if d.bisection.oversubscription > 1.0 { format!(" / {:.2} oversubscription", d.bisection.oversubscription) } else { ", full bisection".into() },
    );
    let _ = writeln!(s, "switch hops   {} same leaf, {} same pod, {} across pods ({})", d.hops.same_leaf, d.hops.same_pod, d.hops.across_pods, d.hops.note);
    s
}

/// Every formula used, with its numbers and source (`--explain`).
pub fn explain_text(d: &Design) -> String {
    let mut s = String::from("How each number was derived:\n");
    for (n, f) in d.formulas.iter().enumerate() {
        let _ = writeln!(s, "{:>2}. {}: {}\n    source: {}", n + 1, f.quantity, f.formula, f.source);
    }
    s.push_str("Conventions:\n");
    for c in &d.conventions {
        let _ = writeln!(s, "  - {c}");
    }
    s
}

/// Left column left-aligned, the rest right-aligned, two spaces apart.
fn table(s: &mut String, rows: &[Vec<String>]) {
    let cols = rows[0].len();
    let w: Vec<usize> = (0..cols).map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
    for r in rows {
        let mut line = String::new();
        for (c, cell) in r.iter().enumerate() {
            if c == 0 {
                let _ = write!(line, "{cell:<w$}", w = w[0]);
            } else {
                let _ = write!(line, "  {cell:>w$}", w = w[c]);
            }
        }
        let _ = writeln!(s, "{}", line.trim_end());
    }
}

/// One end of a wired link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// NIC `rail` of node `node`.
    Nic { node: u64, rail: u64 },
    /// Port `port` (0-based) of switch `switch` (leaves, then spines, then cores).
    Port { switch: u64, port: u64 },
}

/// A concrete port-by-port wiring of a design (UFM ports left out): the one the emitted
/// scenario uses, and a check that the counts are realisable.
#[derive(Clone, Debug, Default)]
pub struct Wiring {
    /// Switch names and tiers (1 leaf, 2 spine, 3 core), in index order.
    pub switches: Vec<(String, u8)>,
    /// (below, above, layer index: 0 node-leaf, 1 leaf-spine, 2 spine-core).
    pub links: Vec<(End, End, u8)>,
}

/// Wires the design: nodes on leaves as [`Placement`] says; in each pod every leaf to
/// every spine with equal link counts (its uplinks in order); spine j of every pod to
/// every core of plane j with equal link counts.
pub fn wiring(d: &Design) -> Wiring {
    let f = &d.sizing;
    let c = f.clos;
    let p = Placement(f);
    let mut w = Wiring::default();
    for l in 0..c.leaves {
        w.switches.push((format!("leaf{l}"), 1));
    }
    for s in 0..c.spines {
        w.switches.push((format!("spine{s}"), 2));
    }
    for k in 0..c.cores {
        w.switches.push((format!("core{k}"), 3));
    }
    for n in 0..f.nodes {
        for r in 0..f.rails as u64 {
            let (leaf, port) = p.node(n, r);
            w.links.push((End::Nic { node: n, rail: r }, End::Port { switch: leaf, port }, 0));
        }
    }
    if c.tiers < 2 {
        return w;
    }
    let up = c.leaf_uplinks as u64;
    let down = f.leaf_downlinks as u64;
    for l in 0..c.leaves {
        let (pod, local) = (l / c.pod_leaves, l % c.pod_leaves);
        let spines = if pod == c.pods - 1 { c.last_pod_spines } else { c.pod_spines };
        let per = up / spines;
        for s in 0..spines {
            for u in 0..per {
                let spine = c.leaves + pod * c.pod_spines + s;
                w.links.push((End::Port { switch: l, port: down + s * per + u }, End::Port { switch: spine, port: local * per + u }, 1));
            }
        }
    }
    if c.tiers < 3 {
        return w;
    }
    let sup = c.spine_uplinks as u64;
    let sd = c.spine_downlinks as u64;
    let plane_cores = |j: u64| if j < c.full_planes() { c.plane_cores } else { c.short_plane_cores };
    let mut base = vec![0u64; c.planes as usize + 1];
    for j in 0..c.planes {
        base[j as usize + 1] = base[j as usize] + plane_cores(j);
    }
    let first_core = c.leaves + c.spines;
    for s in 0..c.spines {
        let (pod, j) = (s / c.pod_spines, s % c.pod_spines);
        let cores = plane_cores(j);
        let per = sup / cores;
        for k in 0..cores {
            for u in 0..per {
                w.links.push((
                    End::Port { switch: c.leaves + s, port: sd + k * per + u },
                    End::Port { switch: first_core + base[j as usize] + k, port: pod * per + u },
                    2,
                ));
            }
        }
    }
    w
}

/// What `run` simulates in the emitted file (`compare` runs both fabrics).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Technology {
    Roce,
    Infiniband,
}

impl std::str::FromStr for Technology {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "roce" => Ok(Technology::Roce),
            "infiniband" | "ib" => Ok(Technology::Infiniband),
            _ => Err(format!("unknown technology `{s}`; expected roce or infiniband")),
        }
    }
}

/// Endpoints above which the emitted file warns that a packet-level run takes long.
pub const QUICK_ENDPOINTS: u64 = 256;

/// Cable lengths written into the scenario: placeholders that set propagation delay and
/// PFC headroom, not part of the design.
const HOST_CABLE: &str = "3m";
const LEAF_SPINE_CABLE: &str = "20m";
const SPINE_CORE_CABLE: &str = "50m";

/// The design as a scenario file for `fabriclab run` / `compare`: a `leaf-spine` or
/// `fat-tree` topology when the simulator's generators build exactly this fabric, else
/// an `explicit` one from [`wiring`]; `[roce]`, `[buffer]` and (at an InfiniBand speed)
/// `[infiniband]` as in `examples/allreduce-compare.toml`; a ring all-reduce over every
/// endpoint. `command` is quoted in the header.
pub fn scenario(d: &Design, tech: Technology, command: &str) -> Result<String, DesignError> {
    let i = &d.input;
    let f = &d.sizing;
    let c = f.clos;
    let ib_speed = model::ib::Generation::of(i.speed).is_some();
    if tech == Technology::Infiniband && !ib_speed {
        return err(
            "speed",
            format!(
                "{} is not an InfiniBand 4x speed; expected 100Gbps (EDR), 200Gbps (HDR), 400Gbps (NDR) or 800Gbps (XDR) for --technology infiniband",
                i.speed
            ),
        );
    }
    let mut s = String::new();
    let _ = writeln!(s, "# Generated by `{command}`: the designed fabric as a scenario for");
    let _ = writeln!(s, "# `fabriclab run` (simulates [scenario] technology) and `fabriclab compare` (both fabrics).");
    for line in text(d).lines().take_while(|l| !l.is_empty()) {
        let _ = writeln!(s, "# {line}");
    }
    let hosts_simulated;
    let topology = if let Some((t, hosts, notes)) = generated_topology(d) {
        hosts_simulated = hosts;
        for n in notes {
            let _ = writeln!(s, "# {n}");
        }
        t
    } else {
        hosts_simulated = f.nodes;
        let _ = writeln!(s, "# Topology: explicit, every switch, node and link of the design as `fabriclab design` wires it");
        let _ = writeln!(s, "# (pods and core planes as in model::sizing); the UFM ports are left out.");
        explicit_topology(d)
    };
    let endpoints = hosts_simulated * f.rails as u64;
    // A ring all-reduce over thousands of ranks takes long even to compile (2(n-1) steps
    // per rank): a large fabric's job runs on hosts spread evenly over it.
    let job_hosts: Option<Vec<u64>> = (endpoints > QUICK_ENDPOINTS).then(|| {
        let n = (QUICK_ENDPOINTS / f.rails as u64).max(2);
        (0..n).map(|k| k * hosts_simulated / n).collect()
    });
    if let Some(h) = &job_hosts {
        let _ = writeln!(s, "# Large: {hosts_simulated} hosts, {endpoints} endpoints and {} switches; a packet-level run takes long.", c.switches());
        let _ = writeln!(s, "# The all-reduce below runs on {} hosts spread evenly over the fabric; delete its `hosts` for all.", h.len());
    }
    let _ =
        writeln!(s, "# Cable lengths ({HOST_CABLE} host, {LEAF_SPINE_CABLE} leaf-spine, {SPINE_CORE_CABLE} spine-core) are placeholders: they set propagation");
    let _ = writeln!(s, "# delay and PFC headroom; put your floor plan's. [roce], [buffer] and [infiniband] are those of");
    let _ = writeln!(s, "# examples/allreduce-compare.toml (NVIDIA's RoCE defaults, a generic 64 MiB shared buffer), except");
    let _ = writeln!(s, "# that no Ethernet switch is named unless the speed needs one (see [roce] switch_latency).");
    if !ib_speed {
        let _ = writeln!(s, "# No [infiniband]: {} is not an InfiniBand speed, so `compare` fills its stated defaults.", i.speed);
    }
    s.push('\n');
    let name = match (i.preset, i.scalable_units) {
        (Some(SuperPod::H100), Some(n)) => format!("dgx-superpod-h100-{n}su"),
        (Some(SuperPod::B200), Some(n)) => format!("dgx-superpod-b200-{n}su"),
        _ => format!("design-{}-tier-{}-endpoints", d.tiers, d.endpoints),
    };
    let tech_name = match tech {
        Technology::Roce => "roce",
        Technology::Infiniband => "infiniband",
    };
    let _ = writeln!(s, "[scenario]\nname = \"{name}\"\nseed = 1\ntechnology = \"{tech_name}\"\n");
    s.push_str(&topology);
    s.push_str(&ROCE.replace("SWITCH_LATENCY\n", &roce_switch_latency(i.speed)));
    if ib_speed {
        // OpenSM's ftree needs at least two switch levels; minhop is what it falls back to.
        let routing = if c.tiers == 1 {
            r#""minhop"             # one switch: OpenSM's ftree needs two levels"#
        } else {
            r#""ftree"              # OpenSM's fat-tree engine"#
        };
        s.push_str(&INFINIBAND.replace("ROUTING", routing));
    }
    let placement = if f.rails > 1 { "rail-aligned" } else { "linear" };
    let _ = write!(
        s,
        "\n[[traffic]]\nkind = \"collective\"\nop = \"all-reduce\"\nalgorithm = \"ring\"\nsize = \"4MiB\"                  # each rank's array (nccl-tests' S)\nchannels = 2\nchunk = \"512KiB\"\nplacement = \"{placement}\"{}\niterations = 1\ndscp = 26\nsl = 0\n",
        if f.rails > 1 { "          # ring order follows the rails, as NCCL's does" } else { "" }
    );
    if let Some(h) = job_hosts {
        let list: Vec<String> = h.iter().map(|x| x.to_string()).collect();
        let _ = writeln!(s, "hosts = [{}]", list.join(", "));
    }
    Ok(s)
}

/// A `leaf-spine` or `fat-tree` section when the simulator's generator builds exactly
/// this fabric (UFM slots as ordinary hosts), with the hosts it has and notes.
fn generated_topology(d: &Design) -> Option<(String, u64, Vec<String>)> {
    let f = &d.sizing;
    let c = f.clos;
    let i = &d.input;
    let speed = i.speed;
    let links =
        format!("host_link = {{ speed = \"{speed}\", cable = \"{HOST_CABLE}\" }}\nfabric_link = {{ speed = \"{speed}\", cable = \"{LEAF_SPINE_CABLE}\" }}\n");
    let mut notes = vec![];
    let slots = f.nodes + f.ufm_slots;
    if f.ufm_slots > 0 {
        notes.push(format!(
            "The {} node slot(s) the UFM ports take are ordinary hosts here (hosts {}..{}): the simulator has no UFM.",
            f.ufm_slots,
            f.nodes_per_su - f.ufm_slots,
            f.nodes_per_su - 1
        ));
    }
    if c.tiers == 2 && (f.rail_optimised || f.rails == 1) && f.spare_node_slots == 0 {
        // The generator fills every leaf: a rail-optimised leaf holds one NIC of each of
        // its SU's nodes; otherwise every SU must fill whole leaves.
        let hosts_per_leaf = if f.rail_optimised { f.nodes_per_su } else { f.nodes_per_leaf };
        let nics = if f.rail_optimised { f.rails } else { 1 };
        if !f.rail_optimised && f.nodes_per_su % f.nodes_per_leaf != 0 {
            return None;
        }
        notes.insert(
            0,
            format!(
                "Topology: the simulator's leaf-spine generator, exactly this design{}.",
                if f.rail_optimised { " (NIC r of every host of a group of leaves on that group's leaf r: rail-optimised)" } else { "" }
            ),
        );
        let t = format!(
            "[topology]\nkind = \"leaf-spine\"\nleaves = {}\nspines = {}\nhosts_per_leaf = {hosts_per_leaf}\nnics_per_host = {nics}\nuplinks_per_spine = {}\n{links}",
            c.leaves,
            c.spines,
            c.leaf_uplinks as u64 / c.spines
        );
        return Some((t, slots, notes));
    }
    if c.tiers == 3 && f.rails == 1 && f.ufm_ports == 0 {
        let t = sizing::fat_tree(i.radix).ok()?;
        let same = (t.hosts, t.edge_switches, t.aggregation_switches, t.core_switches) == (f.endpoints, c.leaves, c.spines, c.cores);
        if same {
            notes.insert(0, format!("Topology: the simulator's k-ary fat-tree generator with k = radix = {}, exactly this design.", i.radix));
            return Some((format!("[topology]\nkind = \"fat-tree\"\nk = {}\n{links}", i.radix), f.nodes, notes));
        }
    }
    None
}

fn explicit_topology(d: &Design) -> String {
    let f = &d.sizing;
    let w = wiring(d);
    let speed = d.input.speed;
    let r = d.input.radix;
    let mut s = String::from("[topology]\nkind = \"explicit\"\nnodes = [\n");
    for (name, _) in &w.switches {
        let _ = writeln!(s, "  {{ name = \"{name}\", kind = \"switch\", ports = {r} }},");
    }
    for n in 0..f.nodes {
        let _ = writeln!(s, "  {{ name = \"h{n}\", kind = \"host\", nics = {} }},", f.rails);
    }
    s.push_str("]\nlinks = [\n");
    let end = |e: End| match e {
        End::Nic { node, rail } if f.rails == 1 => {
            let _ = rail;
            format!("h{node}")
        }
        End::Nic { node, rail } => format!("h{node}:nic{rail}"),
        End::Port { switch, port } => format!("{}:{port}", w.switches[switch as usize].0),
    };
    for &(a, b, layer) in &w.links {
        let cable = [HOST_CABLE, LEAF_SPINE_CABLE, SPINE_CORE_CABLE][layer as usize];
        let _ = writeln!(s, "  {{ a = \"{}\", b = \"{}\", speed = \"{speed}\", cable = \"{cable}\" }},", end(a), end(b));
    }
    s.push_str("]\n");
    s
}

const ROCE: &str = r#"
[roce]
mtu = "4096B"
lossless_priorities = [3]
dscp_to_tc = { 26 = 3, 48 = 6 }  # RoCE data on DSCP 26, CNPs on 48 (NVIDIA defaults)
cnp_dscp = 48
timeout = 14
retry_cnt = 7
forwarding = "cut-through"
SWITCH_LATENCY
pfc = { enabled = true, quanta = 65535, refresh = "auto", response = "auto" }
ecn = [{ queue = 3, kmin = "150KB", kmax = "1500KB", pmax = 0.1 }]
dcqcn = { preset = "nvidia-default" }

[buffer]
total = "64MiB"
cell = "256B"
dynamic_th = 0
reserved = "0B"
headroom = "auto"
xoff = "dynamic"
xon_offset = "auto"
"#;

/// The `[roce]` switch latency lines: `auto` and what it resolves to at `speed`
/// (`model::switch_latency::roce`), with its source as a comment. At a speed InfiniBand
/// lacks there is no InfiniBand figure to share, so the file names Spectrum-1 (10 to
/// 100 GbE) or, faster, Spectrum-2, the generations with a published figure, and says so.
fn roce_switch_latency(speed: BitRate) -> String {
    use model::switch_latency::{roce, EthernetSwitch};
    let (switch, l) = match roce(None, speed) {
        Ok(l) => (None, l),
        Err(_) => {
            let name = if speed <= BitRate::from_gbps(100) { "spectrum-1" } else { "spectrum-2" };
            let s = EthernetSwitch::from_name(name).expect("a known name");
            (Some(name), roce(Some(s), speed).expect("a published figure"))
        }
    };
    let mut out = String::new();
    match switch {
        None => {
            let _ = writeln!(out, "# switch_latency \"auto\" = {}: {}.", l.latency, l.source);
            let _ = writeln!(out, "# Name the Ethernet switch (`switch = \"spectrum-4\"`, \"tomahawk-5\", ...) to use its published figure where one exists.");
        }
        Some(name) => {
            let _ = writeln!(out, "# {speed} has no InfiniBand generation to share a figure with: {name} is named for its published one");
            let _ = writeln!(out, "# ({}); name your switch instead.", l.source);
            let _ = writeln!(out, "switch = \"{name}\"");
        }
    }
    let _ = writeln!(out, "switch_latency = \"auto\"");
    out
}

const INFINIBAND: &str = r#"
[infiniband]
mtu = "4096B"
data_vls = 1
sl_to_vl = { 0 = 0 }
vl_buffer = "128KiB"           # the most credits one VL can advertise (2048 x 64 B)
hoq_lifetime = "auto"
switch_lifetime = "auto"
routing = ROUTING
timeout = 20                   # NCCL_IB_TIMEOUT default
retry_cnt = 7                  # NCCL_IB_RETRY_CNT default
forwarding = "cut-through"
switch_latency = "auto"        # the generation's datasheet latency
"#;
