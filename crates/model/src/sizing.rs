//! Fabric sizing: how many switches and cables a topology needs, from its inputs.
//!
//! * [`fat_tree`]: the k-ary fat tree of Al-Fares, Loukissas and Vahdat, "A Scalable,
//!   Commodity Data Center Network Architecture", SIGCOMM 2008, §3: k pods of k/2 edge and
//!   k/2 aggregation switches, (k/2)² core switches, k³/4 hosts, 5k²/4 switches, k³/4 links
//!   in each of the three tiers. A three-tier non-blocking Clos of radix-R switches is the
//!   same count with k = R (R³/4 hosts).
//! * [`leaf_spine`] / [`leaf_spine_for`]: a two-tier leaf-spine of radix-R switches with a
//!   leaf oversubscription o = down:up, so a leaf has R·o/(o+1) ports down and R/(o+1) up;
//!   the largest non-blocking one has R leaves, R/2 spines and R²/2 hosts.
//! * [`superpod`]: NVIDIA's rail-optimised DGX SuperPOD compute fabric, built of scalable
//!   units (SUs) of `nodes_per_su` nodes with `rails` NICs each and one leaf per rail per
//!   SU, derived so that it reproduces the DGX H100 (RA-11333-001 "Network Fabrics",
//!   Table 4) and DGX B200 reference-architecture tables (copied in
//!   `shared/data/superpod-reference-architectures.md`) from their inputs alone.
//!
//! Spine counts in two tiers follow one rule: a leaf spreads its uplinks evenly over the
//! spines, so the spine count divides the leaf's uplink count, and it is the smallest such
//! count whose ports hold all uplinks. That is why the 3-SU H100 fabric has 16 spines, not
//! the 12 that would hold its 768 uplinks. A two-tier design is possible while every spine
//! can take an equal share from every leaf; beyond that [`superpod`] goes to three tiers,
//! where spines have R/2 ports down and R/2 up and cores R ports down.
//!
//! Left out: which port goes where (rail and plane wiring), cable lengths and types,
//! the out-of-band, storage and in-band management fabrics, and NVLink domains. Counts
//! are for a fully populated design: the last SU is not allowed to be partial.

use std::fmt;

use serde::Serialize;

/// Why a design is impossible with these inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizingError {
    /// Switch radix must be even and at least 2 (half the ports face each way).
    Radix(u32),
    /// A count that must be positive is zero.
    Zero(&'static str),
    /// Oversubscription with a zero term.
    Oversubscription { down: u32, up: u32 },
    /// The SU has more nodes than a leaf has downlinks (R/2).
    NodesPerSu { nodes_per_su: u32, leaf_downlinks: u32 },
    /// UFM ports need more node slots than the first SU has.
    UfmPorts(u32),
    /// More leaves than the topology can connect at this radix.
    TooLarge { leaves: u64, max_leaves: u64 },
    /// A count overflowed 64 bits.
    Overflow,
}

impl fmt::Display for SizingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SizingError::Radix(r) => write!(f, "switch radix {r} must be even and at least 2"),
            SizingError::Zero(what) => write!(f, "{what} must be at least 1"),
            SizingError::Oversubscription { down, up } => {
                write!(f, "oversubscription {down}:{up} needs both terms positive")
            }
            SizingError::NodesPerSu { nodes_per_su, leaf_downlinks } => write!(
                f,
                "{nodes_per_su} nodes per scalable unit do not fit a leaf's {leaf_downlinks} downlinks"
            ),
            SizingError::UfmPorts(p) => write!(f, "{p} UFM ports need more node slots than one scalable unit has"),
            SizingError::TooLarge { leaves, max_leaves } => {
                write!(f, "{leaves} leaves exceed the {max_leaves} this radix can connect")
            }
            SizingError::Overflow => f.write_str("switch or cable count overflows"),
        }
    }
}

impl std::error::Error for SizingError {}

fn check_radix(r: u32) -> Result<u64, SizingError> {
    if r < 2 || r % 2 != 0 {
        Err(SizingError::Radix(r))
    } else {
        Ok(r as u64)
    }
}

fn mul(a: u64, b: u64) -> Result<u64, SizingError> {
    a.checked_mul(b).ok_or(SizingError::Overflow)
}

/// A k-ary fat tree (Al-Fares et al. 2008).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct FatTree {
    pub k: u32,
    /// k³/4.
    pub hosts: u64,
    /// k²/2 (k pods × k/2).
    pub edge_switches: u64,
    /// k²/2.
    pub aggregation_switches: u64,
    /// (k/2)² = k²/4.
    pub core_switches: u64,
    /// 5k²/4.
    pub switches: u64,
    /// Host–edge links, k³/4.
    pub host_links: u64,
    /// Edge–aggregation links, k³/4.
    pub edge_aggregation_links: u64,
    /// Aggregation–core links, k³/4.
    pub aggregation_core_links: u64,
}

/// Sizes the k-ary fat tree built of k-port switches (k even).
pub fn fat_tree(k: u32) -> Result<FatTree, SizingError> {
    let k64 = check_radix(k)?;
    let half = k64 / 2;
    let hosts = mul(mul(k64, half)?, half)?;
    let edge = mul(k64, half)?;
    let core = mul(half, half)?;
    Ok(FatTree {
        k,
        hosts,
        edge_switches: edge,
        aggregation_switches: edge,
        core_switches: core,
        switches: 2 * edge + core,
        host_links: hosts,
        edge_aggregation_links: hosts,
        aggregation_core_links: hosts,
    })
}

/// Hosts of a three-tier non-blocking Clos of radix-`r` switches: r³/4 (a fat tree, k = r).
pub fn three_tier_max_hosts(r: u32) -> Result<u64, SizingError> {
    fat_tree(r).map(|t| t.hosts)
}

/// Leaf oversubscription, downlink bandwidth : uplink bandwidth (1:1 is non-blocking).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Oversubscription {
    pub down: u32,
    pub up: u32,
}

impl Oversubscription {
    pub const NON_BLOCKING: Oversubscription = Oversubscription { down: 1, up: 1 };

    /// Splits `radix` ports into (down, up) = (R·o/(o+1), R/(o+1)) with o = down/up.
    ///
    /// When R·o/(o+1) is not a whole number the downlinks are rounded down (the rest go
    /// up), so the built leaf is never more oversubscribed than asked.
    pub fn split(self, radix: u32) -> Result<(u32, u32), SizingError> {
        let r = check_radix(radix)?;
        if self.down == 0 || self.up == 0 {
            return Err(SizingError::Oversubscription { down: self.down, up: self.up });
        }
        let down = r * self.down as u64 / (self.down as u64 + self.up as u64);
        let down = down as u32;
        Ok((down, radix - down))
    }
}

/// A two-tier leaf-spine fabric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LeafSpine {
    pub radix: u32,
    pub leaf_downlinks: u32,
    pub leaf_uplinks: u32,
    pub leaves: u64,
    pub spines: u64,
    /// Host ports the leaves offer (`leaves × leaf_downlinks`).
    pub hosts: u64,
    /// Links between each leaf and each spine.
    pub links_per_leaf_spine: u64,
    pub host_links: u64,
    pub leaf_spine_links: u64,
}

/// The smallest spine count that divides `uplinks` and has ports for all leaves' uplinks,
/// or None when even one link per leaf–spine pair does not fit (leaves > radix).
fn two_tier_spines(leaves: u64, uplinks: u64, radix: u64) -> Option<u64> {
    let total = leaves.checked_mul(uplinks)?;
    let min = total.div_ceil(radix).max(1);
    // Smallest divisor of `uplinks` that is >= min, in O(sqrt(uplinks)).
    let mut best: Option<u64> = None;
    let mut i = 1u64;
    while i <= uplinks / i {
        if uplinks % i == 0 {
            for d in [i, uplinks / i] {
                if d >= min && best.map_or(true, |b| d < b) {
                    best = Some(d);
                }
            }
        }
        i += 1;
    }
    best
}

/// The largest two-tier leaf-spine of radix-`radix` switches at oversubscription `o`:
/// R leaves, R/(o+1) spines, R·R·o/(o+1) hosts (R²/2 non-blocking).
pub fn leaf_spine(radix: u32, o: Oversubscription) -> Result<LeafSpine, SizingError> {
    let (down, _) = o.split(radix)?;
    leaf_spine_for(radix, o, radix as u64 * down as u64)
}

/// The smallest two-tier leaf-spine with at least `hosts` host ports.
pub fn leaf_spine_for(radix: u32, o: Oversubscription, hosts: u64) -> Result<LeafSpine, SizingError> {
    let (down, up) = o.split(radix)?;
    if hosts == 0 {
        return Err(SizingError::Zero("hosts"));
    }
    if down == 0 || up == 0 {
        return Err(SizingError::Oversubscription { down: o.down, up: o.up });
    }
    let leaves = hosts.div_ceil(down as u64);
    let spines = two_tier_spines(leaves, up as u64, radix as u64)
        .ok_or(SizingError::TooLarge { leaves, max_leaves: radix as u64 })?;
    Ok(LeafSpine {
        radix,
        leaf_downlinks: down,
        leaf_uplinks: up,
        leaves,
        spines,
        hosts: mul(leaves, down as u64)?,
        links_per_leaf_spine: up as u64 / spines,
        host_links: hosts,
        leaf_spine_links: mul(leaves, up as u64)?,
    })
}

/// Inputs of a rail-optimised DGX SuperPOD compute fabric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SuperPodInput {
    /// Ports per switch (leaf, spine and core alike).
    pub radix: u32,
    pub scalable_units: u32,
    /// Node slots per SU, one leaf downlink each.
    pub nodes_per_su: u32,
    /// Compute NICs (and GPUs) per node; one leaf per rail per SU.
    pub rails: u32,
    /// UFM (subnet manager) ports on the compute fabric; they take node slots in the first
    /// SU, `rails` ports per slot.
    pub ufm_ports: u32,
}

impl SuperPodInput {
    /// DGX H100 SuperPOD (RA-11333-001): QM9700 (64 × NDR), 32-node SUs, 8 rails, and 4 UFM
    /// ports that take the 32nd node slot of the first SU.
    pub fn dgx_h100(scalable_units: u32) -> Self {
        SuperPodInput { radix: 64, scalable_units, nodes_per_su: 32, rails: 8, ufm_ports: 4 }
    }

    /// DGX B200 SuperPOD: the same NDR compute fabric, 32-node SUs, 8 rails; its tables
    /// count no UFM ports on the compute leaves.
    pub fn dgx_b200(scalable_units: u32) -> Self {
        SuperPodInput { radix: 64, scalable_units, nodes_per_su: 32, rails: 8, ufm_ports: 0 }
    }
}

/// A sized SuperPOD compute fabric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SuperPod {
    /// 2 (leaf-spine) or 3 (leaf-spine-core).
    pub tiers: u8,
    pub nodes: u64,
    pub gpus: u64,
    pub leaves: u64,
    pub spines: u64,
    pub cores: u64,
    /// Node–leaf cables plus UFM cables ("compute + UFM cables" in the H100 table).
    pub node_leaf_cables: u64,
    pub leaf_spine_cables: u64,
    pub spine_core_cables: u64,
    /// Uplinks of each leaf (R/2: a leaf is non-blocking).
    pub leaf_uplinks: u64,
}

impl SuperPod {
    pub fn switches(&self) -> u64 {
        self.leaves + self.spines + self.cores
    }
}

/// Sizes a rail-optimised SuperPOD compute fabric (see the module doc for the rules).
pub fn superpod(inp: &SuperPodInput) -> Result<SuperPod, SizingError> {
    let r = check_radix(inp.radix)?;
    if inp.scalable_units == 0 {
        return Err(SizingError::Zero("scalable_units"));
    }
    if inp.nodes_per_su == 0 {
        return Err(SizingError::Zero("nodes_per_su"));
    }
    if inp.rails == 0 {
        return Err(SizingError::Zero("rails"));
    }
    let half = r / 2;
    if inp.nodes_per_su as u64 > half {
        return Err(SizingError::NodesPerSu { nodes_per_su: inp.nodes_per_su, leaf_downlinks: half as u32 });
    }
    let su = inp.scalable_units as u64;
    let rails = inp.rails as u64;
    let ufm_slots = (inp.ufm_ports as u64).div_ceil(rails);
    if ufm_slots > inp.nodes_per_su as u64 {
        return Err(SizingError::UfmPorts(inp.ufm_ports));
    }
    let nodes = mul(su, inp.nodes_per_su as u64)? - ufm_slots;
    let gpus = mul(nodes, rails)?;
    let leaves = mul(su, rails)?;
    let leaf_uplinks = half;
    let leaf_spine_cables = mul(leaves, leaf_uplinks)?;
    let node_leaf_cables = gpus + inp.ufm_ports as u64;

    if let Some(spines) = two_tier_spines(leaves, leaf_uplinks, r) {
        return Ok(SuperPod {
            tiers: 2,
            nodes,
            gpus,
            leaves,
            spines,
            cores: 0,
            node_leaf_cables,
            leaf_spine_cables,
            spine_core_cables: 0,
            leaf_uplinks,
        });
    }
    // Three tiers: spines R/2 down and R/2 up, cores R down; at most a k = R fat tree's
    // R²/2 edge (leaf) switches.
    let max_leaves = mul(r, half)?;
    if leaves > max_leaves {
        return Err(SizingError::TooLarge { leaves, max_leaves });
    }
    let spines = leaf_spine_cables.div_ceil(half);
    let spine_core_cables = mul(spines, half)?;
    let cores = spine_core_cables.div_ceil(r);
    Ok(SuperPod {
        tiers: 3,
        nodes,
        gpus,
        leaves,
        spines,
        cores,
        node_leaf_cables,
        leaf_spine_cables,
        spine_core_cables,
        leaf_uplinks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_not_panics() {
        assert_eq!(fat_tree(7), Err(SizingError::Radix(7)));
        assert_eq!(fat_tree(0), Err(SizingError::Radix(0)));
        assert_eq!(fat_tree(u32::MAX - 1), Err(SizingError::Overflow));
        assert!(leaf_spine(64, Oversubscription { down: 0, up: 1 }).is_err());
        // Radix 2 at 1:3 leaves no downlink.
        assert!(leaf_spine(2, Oversubscription { down: 1, up: 3 }).is_err());
        assert!(leaf_spine_for(64, Oversubscription::NON_BLOCKING, u64::MAX).is_err());
        let mut i = SuperPodInput::dgx_h100(0);
        assert_eq!(superpod(&i), Err(SizingError::Zero("scalable_units")));
        i.scalable_units = u32::MAX;
        assert!(matches!(superpod(&i), Err(SizingError::TooLarge { .. })));
        i = SuperPodInput { radix: 64, scalable_units: 1, nodes_per_su: 33, rails: 8, ufm_ports: 0 };
        assert!(matches!(superpod(&i), Err(SizingError::NodesPerSu { .. })));
        i = SuperPodInput { radix: 64, scalable_units: 1, nodes_per_su: 1, rails: 8, ufm_ports: 9 };
        assert_eq!(superpod(&i), Err(SizingError::UfmPorts(9)));
        i = SuperPodInput { radix: u32::MAX - 1, scalable_units: u32::MAX, nodes_per_su: u32::MAX / 2, rails: u32::MAX, ufm_ports: 0 };
        assert!(superpod(&i).is_err());
    }

    #[test]
    fn oversubscription_split() {
        assert_eq!(Oversubscription::NON_BLOCKING.split(64), Ok((32, 32)));
        assert_eq!(Oversubscription { down: 3, up: 1 }.split(64), Ok((48, 16)));
        // 2:1 at 64 ports: 42.67 down -> 42 down, 22 up (never more than 2:1).
        assert_eq!(Oversubscription { down: 2, up: 1 }.split(64), Ok((42, 22)));
    }
}
