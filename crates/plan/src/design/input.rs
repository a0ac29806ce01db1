//! What the designer takes: [`DesignInput`] (with the SuperPOD presets and a generic
//! default), its checks ([`validate`]) and the error that names the input at fault, also
//! for what `model::sizing` refuses.
//!
//! Left out: the sizing itself (`model::sizing`) and everything read out of it.

use std::fmt;

use model::sizing::{self, Oversubscription, SizingError};
use serde::{Serialize, Serializer};
use units::BitRate;

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

pub(super) fn gbps<S: Serializer>(r: &BitRate, s: S) -> Result<S::Ok, S::Error> {
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

pub(super) fn err<T>(input: &'static str, msg: impl Into<String>) -> Result<T, DesignError> {
    Err(DesignError { input, msg: msg.into() })
}

/// Checks every input; returns the node count and the name of the size input given.
pub(super) fn validate(i: &DesignInput) -> Result<(u64, &'static str), DesignError> {
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

pub(super) fn sizing_error(e: SizingError, i: &DesignInput, size: &'static str) -> DesignError {
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
