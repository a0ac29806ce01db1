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
//! * [`clos`]: the tiers above a given number of leaves: two tiers while every spine can
//!   reach every leaf, else three (pods and core planes, as the fat tree builds them).
//! * [`fabric`]: a whole compute fabric from its nodes: NICs per node (rails), rail-optimised
//!   or not, scalable units, UFM ports, oversubscription per tier; it places nodes on leaves
//!   and calls [`clos`] for the rest.
//! * [`superpod`]: NVIDIA's rail-optimised DGX SuperPOD compute fabric, built of scalable
//!   units (SUs) of `nodes_per_su` nodes with `rails` NICs each and one leaf per rail per
//!   SU, derived so that it reproduces the DGX H100 (RA-11333-001 "Network Fabrics",
//!   Table 4) and DGX B200 reference-architecture tables (copied in
//!   `shared/data/superpod-reference-architectures.md`) from their inputs alone. It is
//!   [`fabric`] with the SuperPOD's inputs.
//!
//! Spine counts in two tiers follow one rule: a leaf spreads its uplinks evenly over the
//! spines, so the spine count divides the leaf's uplink count, and it is the smallest such
//! count whose ports hold all uplinks. That is why the 3-SU H100 fabric has 16 spines, not
//! the 12 that would hold its 768 uplinks. A two-tier design is possible while every spine
//! can take an equal share from every leaf (at most R leaves).
//!
//! Beyond that the fabric has three tiers, built as Al-Fares' fat tree builds them: spines
//! split their ports by the spine oversubscription (R/2 down and R/2 up when
//! non-blocking), and leaves form pods of at most "spine downlinks" leaves, each pod a
//! two-tier block with its own spines (the same rule as above, with the spine's downlinks
//! as its ports; a full pod has one spine per leaf uplink). Spine j of every pod belongs
//! to core plane j; a plane's cores are the smallest divisor of the spine's uplink count
//! whose ports hold the uplinks of the plane's spines, so every spine spreads its uplinks
//! evenly and every core reaches every pod of its plane. A full design with radix-R
//! switches is then exactly the k = R fat tree, and the B200 rows of 16, 32 and 64 SUs
//! come out as published. At most R pods fit (a core needs a port for each), so three
//! tiers hold at most R × spine-downlinks leaves; more needs a fourth tier, which is not
//! sized here.
//!
//! Left out: which port goes where (rail and plane wiring), cable lengths and types,
//! the out-of-band, storage and in-band management fabrics, and NVLink domains.
//! [`superpod`] counts a fully populated design: its last SU is never partial ([`fabric`]
//! allows one).

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
    /// Without rail optimisation a node's NICs share a leaf, and they do not fit one.
    NicsPerLeaf { rails: u32, leaf_downlinks: u32 },
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
            SizingError::NodesPerSu { nodes_per_su, leaf_downlinks } => {
                write!(f, "{nodes_per_su} nodes per scalable unit do not fit a leaf's {leaf_downlinks} downlinks")
            }
            SizingError::UfmPorts(p) => write!(f, "{p} UFM ports need more node slots than one scalable unit has"),
            SizingError::TooLarge { leaves, max_leaves } => {
                write!(f, "{leaves} leaves exceed the {max_leaves} this radix can connect")
            }
            SizingError::NicsPerLeaf { rails, leaf_downlinks } => {
                write!(f, "a node's {rails} NICs do not fit a leaf's {leaf_downlinks} downlinks")
            }
            SizingError::Overflow => f.write_str("switch or cable count overflows"),
        }
    }
}

impl std::error::Error for SizingError {}

fn check_radix(r: u32) -> Result<u64, SizingError> {
    if r < 2 || !r.is_multiple_of(2) {
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

/// The smallest divisor of `n` that is at least `min`, in O(sqrt(n)); None if `min > n`.
fn smallest_divisor_at_least(n: u64, min: u64) -> Option<u64> {
    let mut best: Option<u64> = None;
    let mut i = 1u64;
    while i <= n / i {
        if n.is_multiple_of(i) {
            for d in [i, n / i] {
                if d >= min && best.is_none_or(|b| d < b) {
                    best = Some(d);
                }
            }
        }
        i += 1;
    }
    best
}

/// The smallest spine count that divides `uplinks` and has ports for all leaves' uplinks,
/// or None when even one link per leaf–spine pair does not fit (leaves > radix).
fn two_tier_spines(leaves: u64, uplinks: u64, radix: u64) -> Option<u64> {
    let total = leaves.checked_mul(uplinks)?;
    smallest_divisor_at_least(uplinks, total.div_ceil(radix).max(1))
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
    let spines = two_tier_spines(leaves, up as u64, radix as u64).ok_or(SizingError::TooLarge { leaves, max_leaves: radix as u64 })?;
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

/// The switch tiers of a folded Clos above its leaves: leaf-spine or leaf-spine-core.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Clos {
    pub radix: u32,
    /// 1 (a single switch), 2 (leaf-spine) or 3 (leaf-spine-core).
    pub tiers: u8,
    pub leaves: u64,
    /// Uplinks each leaf cables (0 with one tier).
    pub leaf_uplinks: u32,
    pub spines: u64,
    /// Ports of a spine reserved for leaves: all R in two tiers, the spine split's
    /// R·o/(o+1) in three.
    pub spine_downlinks: u32,
    /// Ports of a spine cabled to cores: R/(o+1) in three tiers, else 0.
    pub spine_uplinks: u32,
    pub cores: u64,
    /// Groups of leaves with their own spines, every leaf linked to every spine of its
    /// pod. Two tiers are one pod; one tier has none.
    pub pods: u64,
    /// Leaves and spines of a full pod …
    pub pod_leaves: u64,
    pub pod_spines: u64,
    /// … and of the last pod (the same when every pod is full).
    pub last_pod_leaves: u64,
    pub last_pod_spines: u64,
    /// Core planes (three tiers): spine j of every pod is in plane j.
    pub planes: u64,
    /// Cores of a plane with a spine in every pod …
    pub plane_cores: u64,
    /// … and of a plane without one in a partial last pod (0 if there is no such plane).
    pub short_plane_cores: u64,
    pub leaf_spine_links: u64,
    pub spine_core_links: u64,
}

impl Clos {
    /// One switch: every endpoint on the same leaf, nothing above it.
    pub fn single(radix: u32) -> Clos {
        Clos {
            radix,
            tiers: 1,
            leaves: 1,
            leaf_uplinks: 0,
            spines: 0,
            spine_downlinks: 0,
            spine_uplinks: 0,
            cores: 0,
            pods: 0,
            pod_leaves: 0,
            pod_spines: 0,
            last_pod_leaves: 0,
            last_pod_spines: 0,
            planes: 0,
            plane_cores: 0,
            short_plane_cores: 0,
            leaf_spine_links: 0,
            spine_core_links: 0,
        }
    }

    pub fn switches(&self) -> u64 {
        self.leaves + self.spines + self.cores
    }

    /// Links between one leaf and one spine of its pod (full pod, last pod).
    pub fn links_per_leaf_spine(&self) -> (u64, u64) {
        if self.tiers < 2 {
            return (0, 0);
        }
        let up = self.leaf_uplinks as u64;
        (up / self.pod_spines, up / self.last_pod_spines)
    }

    /// Links between one spine and one core of its plane (full plane, short plane).
    pub fn links_per_spine_core(&self) -> (u64, u64) {
        if self.tiers < 3 {
            return (0, 0);
        }
        let up = self.spine_uplinks as u64;
        (up / self.plane_cores, up.checked_div(self.short_plane_cores).unwrap_or(0))
    }

    /// Planes with a spine in every pod (the others miss the partial last pod).
    pub fn full_planes(&self) -> u64 {
        self.last_pod_spines
    }
}

/// The tiers above `leaves` leaves of `leaf_uplinks` uplinks each, with radix-`radix`
/// switches and spines split by `spine` in three tiers (see the module doc).
pub fn clos(radix: u32, leaves: u64, leaf_uplinks: u32, spine: Oversubscription) -> Result<Clos, SizingError> {
    let r = check_radix(radix)?;
    if leaves == 0 {
        return Err(SizingError::Zero("leaves"));
    }
    if leaf_uplinks == 0 {
        return Err(SizingError::Zero("leaf uplinks"));
    }
    let up = leaf_uplinks as u64;
    let leaf_spine_links = mul(leaves, up)?;
    if let Some(spines) = two_tier_spines(leaves, up, r) {
        return Ok(Clos {
            tiers: 2,
            leaves,
            leaf_uplinks,
            spines,
            spine_downlinks: radix,
            pods: 1,
            pod_leaves: leaves,
            pod_spines: spines,
            last_pod_leaves: leaves,
            last_pod_spines: spines,
            leaf_spine_links,
            ..Clos::single(radix)
        });
    }
    let (sd, su) = spine.split(radix)?;
    if sd == 0 || su == 0 {
        return Err(SizingError::Oversubscription { down: spine.down, up: spine.up });
    }
    // A full pod: one link from each of its leaves to each of its spines, so as many
    // leaves as a spine has downlinks and as many spines as a leaf has uplinks.
    let pod_leaves = sd as u64;
    let pods = leaves.div_ceil(pod_leaves);
    let max_leaves = mul(r, pod_leaves)?;
    if pods > r {
        return Err(SizingError::TooLarge { leaves, max_leaves });
    }
    let last_pod_leaves = leaves - (pods - 1) * pod_leaves;
    let last_pod_spines = two_tier_spines(last_pod_leaves, up, pod_leaves).ok_or(SizingError::Overflow)?;
    let spines = (pods - 1) * up + last_pod_spines;
    let sup = su as u64;
    let spine_core_links = mul(spines, sup)?;
    let plane_cores =
        |pods_in_plane: u64| smallest_divisor_at_least(sup, (pods_in_plane * sup).div_ceil(r)).ok_or(SizingError::TooLarge { leaves, max_leaves });
    let full = plane_cores(pods)?;
    let short = if last_pod_spines < up { plane_cores(pods - 1)? } else { 0 };
    let cores = last_pod_spines * full + (up - last_pod_spines) * short;
    Ok(Clos {
        radix,
        tiers: 3,
        leaves,
        leaf_uplinks,
        spines,
        spine_downlinks: sd,
        spine_uplinks: su,
        cores,
        pods,
        pod_leaves,
        pod_spines: up,
        last_pod_leaves,
        last_pod_spines,
        planes: up,
        plane_cores: full,
        short_plane_cores: short,
        leaf_spine_links,
        spine_core_links,
    })
}

/// Inputs of a compute fabric built of scalable units.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct FabricInput {
    /// Ports per switch (leaf, spine and core alike).
    pub radix: u32,
    /// Compute nodes.
    pub nodes: u64,
    /// Compute NICs per node (rails).
    pub rails: u32,
    /// One leaf per rail per SU (NIC r of every node of an SU on the SU's leaf r); else a
    /// node's NICs share a leaf.
    pub rail_optimised: bool,
    /// Node slots per SU. None: rail-optimised, as many as a leaf has downlinks; otherwise
    /// the whole fabric is one SU.
    pub nodes_per_su: Option<u32>,
    /// UFM (subnet manager) ports on the compute fabric; they take node slots in the first
    /// SU, `rails` ports per slot.
    pub ufm_ports: u32,
    pub leaf: Oversubscription,
    pub spine: Oversubscription,
}

/// A sized compute fabric: where the nodes go, and the [`Clos`] above them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Fabric {
    pub nodes: u64,
    /// Compute endpoints (GPUs, one NIC each): nodes × rails.
    pub endpoints: u64,
    pub rails: u32,
    pub rail_optimised: bool,
    pub ufm_ports: u32,
    /// Node slots the UFM ports take: ⌈ufm_ports / rails⌉.
    pub ufm_slots: u64,
    pub scalable_units: u64,
    pub nodes_per_su: u64,
    /// Node slots left empty in the last SU.
    pub spare_node_slots: u64,
    /// Leaf ports reserved for endpoints (R·o/(o+1); R with one tier).
    pub leaf_downlinks: u32,
    /// Node slots one leaf serves: a rail-optimised leaf takes one NIC of each of the
    /// SU's nodes; otherwise ⌊leaf_downlinks / rails⌋ whole nodes.
    pub nodes_per_leaf: u64,
    /// Leaves of a full SU.
    pub leaves_per_su: u64,
    /// Node–leaf links: one per compute NIC and per UFM port.
    pub node_leaf_links: u64,
    pub clos: Clos,
}

impl Fabric {
    /// Bisection bandwidth at `speed` per link: the bandwidth, one way, across a cut of the
    /// endpoints into two equal halves along switch boundaries (Al-Fares et al. 2008 §2.1),
    /// the least of half the compute endpoints' links and half of each tier's uplinks
    /// (the traffic one half can send the other passes up every tier). A non-blocking
    /// Clos gives endpoints/2 × speed.
    pub fn bisection(&self, speed: units::BitRate) -> units::BitRate {
        units::BitRate(speed.0.saturating_mul(self.bisection_half_links()) / 2)
    }

    /// Twice the links across the worst balanced cut: min(endpoints, leaf–spine links,
    /// spine–core links) over the tiers present.
    pub fn bisection_half_links(&self) -> u64 {
        let mut m = self.endpoints;
        if self.clos.tiers >= 2 {
            m = m.min(self.clos.leaf_spine_links);
        }
        if self.clos.tiers >= 3 {
            m = m.min(self.clos.spine_core_links);
        }
        m
    }
}

/// Places the nodes on leaves and sizes the tiers above (see the module doc and
/// [`FabricInput`]). One switch suffices when every endpoint fits its ports and the
/// design is not split into rails or SUs.
pub fn fabric(inp: &FabricInput) -> Result<Fabric, SizingError> {
    let r = check_radix(inp.radix)?;
    if inp.nodes == 0 {
        return Err(SizingError::Zero("nodes"));
    }
    if inp.rails == 0 {
        return Err(SizingError::Zero("rails"));
    }
    if inp.nodes_per_su == Some(0) {
        return Err(SizingError::Zero("nodes_per_su"));
    }
    let rails = inp.rails as u64;
    let endpoints = mul(inp.nodes, rails)?;
    let ufm_slots = (inp.ufm_ports as u64).div_ceil(rails);
    let slots = inp.nodes.checked_add(ufm_slots).ok_or(SizingError::Overflow)?;
    let (down, up) = inp.leaf.split(inp.radix)?;
    let railed = inp.rail_optimised && rails > 1;
    let nodes_per_leaf = if railed { down as u64 } else { down as u64 / rails };
    if !railed && nodes_per_leaf == 0 {
        return Err(SizingError::NicsPerLeaf { rails: inp.rails, leaf_downlinks: down });
    }
    let nodes_per_su = match inp.nodes_per_su {
        Some(n) => n as u64,
        None if railed => down as u64,
        None => slots,
    };
    if railed && nodes_per_su > down as u64 {
        return Err(SizingError::NodesPerSu { nodes_per_su: nodes_per_su as u32, leaf_downlinks: down });
    }
    if ufm_slots > nodes_per_su {
        return Err(SizingError::UfmPorts(inp.ufm_ports));
    }
    let sus = slots.div_ceil(nodes_per_su);
    let last_su_slots = slots - (sus - 1) * nodes_per_su;
    let node_leaf_links = endpoints.checked_add(inp.ufm_ports as u64).ok_or(SizingError::Overflow)?;
    let base = Fabric {
        nodes: inp.nodes,
        endpoints,
        rails: inp.rails,
        rail_optimised: railed,
        ufm_ports: inp.ufm_ports,
        ufm_slots,
        scalable_units: sus,
        nodes_per_su,
        spare_node_slots: nodes_per_su - last_su_slots,
        leaf_downlinks: down,
        nodes_per_leaf,
        leaves_per_su: 1,
        node_leaf_links,
        clos: Clos::single(inp.radix),
    };
    if !railed && sus == 1 && node_leaf_links <= r {
        return Ok(Fabric { leaf_downlinks: inp.radix, nodes_per_leaf: r / rails, ..base });
    }
    let (leaves_per_su, leaves) = if railed {
        (rails, mul(sus, rails)?)
    } else {
        let per_su = nodes_per_su.div_ceil(nodes_per_leaf);
        (per_su, mul(sus - 1, per_su)? + last_su_slots.div_ceil(nodes_per_leaf))
    };
    let clos = clos(inp.radix, leaves, up, inp.spine)?;
    Ok(Fabric { leaves_per_su, clos, ..base })
}

/// Sizes a rail-optimised SuperPOD compute fabric (see the module doc for the rules).
pub fn superpod(inp: &SuperPodInput) -> Result<SuperPod, SizingError> {
    check_radix(inp.radix)?;
    if inp.scalable_units == 0 {
        return Err(SizingError::Zero("scalable_units"));
    }
    if inp.nodes_per_su == 0 {
        return Err(SizingError::Zero("nodes_per_su"));
    }
    if inp.rails == 0 {
        return Err(SizingError::Zero("rails"));
    }
    let half = inp.radix / 2;
    if inp.nodes_per_su > half {
        return Err(SizingError::NodesPerSu { nodes_per_su: inp.nodes_per_su, leaf_downlinks: half });
    }
    let ufm_slots = (inp.ufm_ports as u64).div_ceil(inp.rails as u64);
    if ufm_slots > inp.nodes_per_su as u64 {
        return Err(SizingError::UfmPorts(inp.ufm_ports));
    }
    let nodes = mul(inp.scalable_units as u64, inp.nodes_per_su as u64)? - ufm_slots;
    let f = fabric(&FabricInput {
        radix: inp.radix,
        nodes,
        rails: inp.rails,
        rail_optimised: true,
        nodes_per_su: Some(inp.nodes_per_su),
        ufm_ports: inp.ufm_ports,
        leaf: Oversubscription::NON_BLOCKING,
        spine: Oversubscription::NON_BLOCKING,
    })?;
    let c = f.clos;
    Ok(SuperPod {
        tiers: c.tiers,
        nodes: f.nodes,
        gpus: f.endpoints,
        leaves: c.leaves,
        spines: c.spines,
        cores: c.cores,
        node_leaf_cables: f.node_leaf_links,
        leaf_spine_cables: c.leaf_spine_links,
        spine_core_cables: c.spine_core_links,
        leaf_uplinks: c.leaf_uplinks as u64,
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
