//! The fabric designer: from what a cluster needs to a sized Clos fabric.
//!
//! Inputs ([`DesignInput`]): the compute endpoints (GPUs, one NIC each), or nodes, or
//! scalable units (SUs); NICs per node (rails); port speed; switch radix; oversubscription
//! of the leaf and spine tiers; rail-optimised or not; SU size; UFM ports; how many ports
//! share a transceiver module. Output ([`Design`]): the tier count and why, switches and
//! ports per tier, links, cables and transceivers per tier, bisection bandwidth, switch hop
//! counts, every formula with its source ([`Design::formulas`], `--explain`), and a
//! scenario file the simulator runs ([`scenario()`]).
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
//! simple one [`wiring()`] builds, the storage, in-band and out-of-band management fabrics,
//! NVLink domains, and designs that need a fourth tier.
//!
//! Files: `input.rs` (the inputs and their checks), `tiers.rs` (the counts per tier and
//! layer), `wiring.rs` (where each NIC sits, the port-by-port cabling), `explain.rs` (every
//! formula with its source), `text.rs` (the report), `scenario.rs` (the scenario file).
//! This file keeps [`design`], which runs them, and the [`Design`] it returns.

mod explain;
mod input;
mod scenario;
mod text;
mod tiers;
mod wiring;

pub use model::sizing::Oversubscription;
use model::sizing::{self, Fabric, FabricInput};
use serde::Serialize;
use units::BitRate;

pub use explain::explain_text;
pub use input::{DesignError, DesignInput, SuperPod, MAX_SPEED, MIN_SPEED};
pub use scenario::{scenario, Technology, QUICK_ENDPOINTS};
pub use text::text;
pub use wiring::{wiring, End, Wiring};

use explain::{explain_inputs, explain_outputs, explain_tiers, Explain};
use input::{err, gbps, sizing_error, validate};

/// Where each formula and default comes from.
pub mod sources {
    pub const AL_FARES: &str = "Al-Fares, Loukissas, Vahdat, \"A Scalable, Commodity Data Center Network Architecture\", SIGCOMM 2008";
    pub const RA_H100: &str = "NVIDIA DGX SuperPOD H100 reference architecture RA-11333-001, \"Network Fabrics\", Table 4";
    pub const RA_B200: &str = "NVIDIA DGX SuperPOD B200 reference architecture, compute fabric table";
    pub const QM9700: &str = "NVIDIA Quantum-2 QM9700: 64 NDR 400Gb/s ports in 32 twin-port OSFP cages (shared/data/superpod-reference-architectures.md)";
    pub const SIZING: &str = "model::sizing (module doc): the rule that reproduces both SuperPOD tables";
    pub const INPUT: &str = "input";
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
    let sized = sizing::fabric(&FabricInput {
        radix: inp.radix,
        nodes,
        rails: inp.nics_per_node,
        rail_optimised: inp.rail_optimised,
        nodes_per_su: inp.su_nodes,
        ufm_ports: inp.ufm_ports,
        leaf: inp.leaf_oversubscription,
        spine: inp.spine_oversubscription,
    })
    .map_err(|e| sizing_error(e, inp, size_input))?;
    whole_scalable_units(inp, nodes, size_input, &sized)?;
    let c = sized.clos;
    let f = &sized;
    let mut fx = Explain::default();
    explain_inputs(&mut fx, inp, f);
    let tiers = tiers::switch_tiers(inp, f);
    let layers = tiers::link_layers(f);
    let totals = tiers::totals(inp, f, &tiers, &layers);
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

/// With `su_nodes` and a size given as endpoints or nodes, the nodes must fill whole
/// scalable units; the error names the nearest sizes that do.
fn whole_scalable_units(inp: &DesignInput, nodes: u64, size_input: &'static str, sized: &Fabric) -> Result<(), DesignError> {
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
    Ok(())
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
