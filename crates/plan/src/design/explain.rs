//! The derivation of every number (`--explain`, [`Design::formulas`]): each formula with
//! the numbers that went in and its source, pushed in the order the design computes them.
//!
//! Left out: the numbers themselves (those come from `model::sizing` and `tiers.rs`).

use std::fmt::Write as _;

use model::sizing::{Fabric, Oversubscription};

use super::{sources, Bisection, Design, DesignInput, Formula, Hops, SuperPod, Tier, Totals};

/// The formulas as they are pushed.
#[derive(Default)]
pub(super) struct Explain(pub(super) Vec<Formula>);

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

pub(super) fn ovs(o: Oversubscription) -> String {
    format!("{}:{}", o.down, o.up)
}

pub(super) fn explain_inputs(x: &mut Explain, i: &DesignInput, f: &Fabric) {
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

pub(super) fn explain_tiers(x: &mut Explain, i: &DesignInput, f: &Fabric, choice: &str) {
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

pub(super) fn explain_outputs(x: &mut Explain, i: &DesignInput, f: &Fabric, tiers: &[Tier], t: &Totals, b: &Bisection, h: &Hops) {
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
