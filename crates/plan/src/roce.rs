//! The RoCEv2 lossless planner (`fabriclab plan roce`): PFC headroom, XOFF and XON per port
//! type, the lossless buffer against the ASIC's budget, ECN thresholds, DCQCN starting
//! parameters, and the risks a reviewer would raise.
//!
//! Every number comes from a formula in `model`, the same functions that fill the
//! simulator's `auto` values:
//! * headroom: [`model::headroom::ieee_8021qbb`] (IEEE 802.1Qbb-2011 Annex N worst case,
//!   counted in cells as the simulator admits frames) or [`model::sonic::mellanox_headroom`]
//!   (SONiC's `buffer_headroom_mellanox.lua`, reproduced exactly);
//! * ECN: [`model::ecn::hpcc_thresholds`], kept below the queue at which PFC fires;
//! * DCQCN: [`model::dcqcn`] presets by NIC family;
//! * cyclic buffer dependency: the simulator's own ECMP routes
//!   ([`fabric::routing::Routes`]) on the planned Clos, checked with the subnet manager's
//!   channel-dependency checker, intact and after every single switch-to-switch link
//!   failure (routes recomputed over the surviving links, as BGP would).
//!
//! Conventions: the planned port admits whole frames (as the simulator does). The IEEE plan
//! pauses on a static XOFF level (the dynamic threshold's equilibrium under the worst
//! incast), so the frame that crosses it is admitted below it; a dynamic trigger needs one
//! frame more (shown). The SONiC plan pauses on SONiC's dynamic threshold. The lossless class carries maximum-size frames unless
//! `short_frames` says how many shorter ones a pause window may hold. PFC is DSCP-based
//! (no VLAN tag). Three quantities are kept apart: the pause *trigger* (dynamic), the
//! *headroom* above it (SONiC's `xoff`) and the *resume* offset below it (SONiC's `xon`).
//!
//! Left out: per-queue egress limits, the shared headroom pool's over-subscription sizing
//! (`buffer_pool_mellanox.lua`), PFC on NIC receive buffers, and any routing other than
//! shortest-path ECMP.

use std::collections::BTreeMap;

use fabric::routing::Routes;
use fabric::subnet_manager::cdg::dependency_cycle;
use fabric::topology::{PortId, Topology};
use model::dcqcn::{DcqcnParams, DcqcnPreset};
use model::ecn::{hpcc_thresholds, Red};
use model::frame::{roce_frame, Encap, Transport, ETH_HEADER, FCS, VLAN_TAG};
use model::headroom::{all_short_cells, ieee_8021qbb, pause_response_quanta, quantum, HeadroomInput};
use model::sonic::{self, DynamicHeadroomInput, LosslessTrafficPattern, Spectrum};
use serde::{Deserialize, Serialize};
use units::{propagation, BitRate, Bytes, Length, SimDuration, DEFAULT_PROPAGATION_PS_PER_M};

const SRC_QBB: &str = "IEEE 802.1Qbb-2011 Annex N, whole-frame cells (model::headroom)";
const SRC_XON: &str = "two maximum frames below the trigger: fabriclab's `xon_offset = \"auto\"` (a choice: \
     one frame of hysteresis is the least that stops pause/resume on every frame)";

// ------------------------------------------------------------------ inputs

/// The planner's inputs as a TOML file (or flags) gives them: every size and rate a string
/// with its unit, checked by [`validate`]. Unknown fields are errors.
#[derive(Deserialize, Serialize, Debug, Default, Clone)]
#[serde(deny_unknown_fields)]
pub struct RoceConfig {
    /// "ieee" (IEEE 802.1Qbb worst case) or "sonic" (SONiC's Spectrum model).
    pub model: Option<String>,
    /// Spectrum generation for the SONiC model: "spectrum-1" .. "spectrum-6".
    pub asic: Option<String>,
    /// RoCE path MTU (IB MTU: payload per packet), 256..4096.
    pub mtu: Option<String>,
    /// Ethernet port MTU (IP MTU) if larger frames of any class share the links.
    pub port_mtu: Option<String>,
    pub lossless_priorities: Option<u8>,
    /// Worst incast degree (senders to one receiver).
    pub incast: Option<u32>,
    /// NIC family for DCQCN defaults: "connectx" or "paper".
    pub nic: Option<String>,
    /// Frames shorter than the maximum a pause window may hold (message tails, ACKs).
    pub short_frames: Option<u64>,
    /// Interface (PHY/FEC) latency of one direction of a link, beyond the cable (default 0;
    /// see `model::headroom::HeadroomInput::interface_delay` for IEEE 802.3's bounds).
    pub interface_delay: Option<String>,
    pub leaves: Option<u32>,
    pub spines: Option<u32>,
    pub hosts_per_leaf: Option<u32>,
    /// A three-tier k-ary fat tree instead of a leaf-spine.
    pub fat_tree_k: Option<u32>,
    pub host_leaf: Option<LinkConfig>,
    pub leaf_spine: Option<LinkConfig>,
    pub spine_core: Option<LinkConfig>,
    pub buffer: Option<BufferConfig>,
    pub sonic: Option<SonicConfig>,
    /// The operator's current settings, evaluated instead of the plan's where given.
    pub operator: Option<OperatorConfig>,
}

#[derive(Deserialize, Serialize, Debug, Default, Clone)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    pub speed: Option<String>,
    /// Longest cable of the tier.
    pub cable: Option<String>,
}

#[derive(Deserialize, Serialize, Debug, Default, Clone)]
#[serde(deny_unknown_fields)]
pub struct BufferConfig {
    pub total: Option<String>,
    pub cell: Option<String>,
    /// Reserved per (ingress port, priority group), as the simulator's `buffer.reserved`.
    pub reserved: Option<String>,
    pub dynamic_th: Option<i8>,
}

#[derive(Deserialize, Serialize, Debug, Default, Clone)]
#[serde(deny_unknown_fields)]
pub struct SonicConfig {
    /// LOSSLESS_TRAFFIC_PATTERN small_packet_percentage.
    pub small_packet_percentage: Option<u8>,
    /// LOSSLESS_TRAFFIC_PATTERN mtu.
    pub lossless_mtu: Option<String>,
}

#[derive(Deserialize, Serialize, Debug, Default, Clone)]
#[serde(deny_unknown_fields)]
pub struct OperatorConfig {
    /// Headroom configured per lossless PG (SONiC `xoff`).
    pub headroom: Option<String>,
    pub ecn_kmin: Option<String>,
    pub ecn_kmax: Option<String>,
    pub ecn_pmax: Option<f64>,
    pub pfc_watchdog: Option<bool>,
    /// PFC storm protection on host-facing ports (switch watchdog there and NIC pause-storm
    /// prevention).
    pub storm_protection: Option<bool>,
    /// Priorities the switch treats as lossless.
    pub lossless: Option<Vec<u8>>,
    /// DSCP → priority on the switch and on the NIC.
    pub switch_dscp_map: Option<BTreeMap<String, u8>>,
    pub nic_dscp_map: Option<BTreeMap<String, u8>>,
    /// DSCP of RoCE data and of CNPs (the NIC's settings).
    pub roce_dscp: Option<u8>,
    pub cnp_dscp: Option<u8>,
}

/// An input that is missing or wrong: the field (TOML path) and what is expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {msg}")]
pub struct InputError {
    pub field: String,
    pub msg: String,
}

fn err<T>(field: &str, msg: impl Into<String>) -> Result<T, InputError> {
    Err(InputError { field: field.to_string(), msg: msg.into() })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HeadroomModel {
    Ieee,
    Sonic(Spectrum),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Nic {
    /// NVIDIA ConnectX firmware defaults.
    Connectx,
    /// The DCQCN paper's values.
    Paper,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Topo {
    LeafSpine { leaves: u32, spines: u32, hosts_per_leaf: u32 },
    FatTree { k: u32 },
}

/// One tier of links: its speed and longest cable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct TierInput {
    /// "host-leaf", "leaf-spine" or "spine-core".
    pub tier: &'static str,
    pub speed: BitRate,
    pub cable: Length,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct BufferInput {
    pub total: Bytes,
    pub cell: Bytes,
    pub reserved: Bytes,
    pub dynamic_th: i8,
}

/// The operator's settings, validated; `None` where not given (the plan's are evaluated).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Operator {
    pub headroom: Option<Bytes>,
    pub ecn: Option<Red>,
    pub pfc_watchdog: Option<bool>,
    pub storm_protection: Option<bool>,
    pub lossless: Option<Vec<u8>>,
    pub switch_dscp_map: Option<BTreeMap<u8, u8>>,
    pub nic_dscp_map: Option<BTreeMap<u8, u8>>,
    pub roce_dscp: u8,
    pub cnp_dscp: u8,
}

/// The validated inputs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RoceInput {
    pub model: HeadroomModel,
    pub mtu: Bytes,
    pub port_mtu: Option<Bytes>,
    pub lossless_priorities: u8,
    pub incast: u32,
    pub nic: Nic,
    pub short_frames: u64,
    pub interface_delay: SimDuration,
    pub topology: Topo,
    pub tiers: Vec<TierInput>,
    pub buffer: BufferInput,
    pub sonic_pattern: LosslessTrafficPattern,
    pub operator: Operator,
}

fn parse<T: std::str::FromStr>(field: &str, v: &Option<String>, what: &str) -> Result<Option<T>, InputError>
where
    T::Err: std::fmt::Display,
{
    v.as_deref().map(|s| s.parse::<T>().map_err(|e| InputError { field: field.into(), msg: format!("`{s}`: {e}; expected {what}") })).transpose()
}

fn need<T>(field: &str, v: Option<T>, what: &str) -> Result<T, InputError> {
    v.ok_or_else(|| InputError { field: field.into(), msg: format!("missing; expected {what}") })
}

fn dscp_map(field: &str, m: &Option<BTreeMap<String, u8>>) -> Result<Option<BTreeMap<u8, u8>>, InputError> {
    let Some(m) = m else { return Ok(None) };
    let mut out = BTreeMap::new();
    for (k, &v) in m {
        let d = k.trim().parse::<u8>().ok().filter(|&d| d < 64);
        let Some(d) = d else { return err(field, format!("DSCP `{k}`: expected 0..63")) };
        if v > 7 {
            return err(field, format!("DSCP {d} maps to priority {v}; expected 0..7"));
        }
        out.insert(d, v);
    }
    Ok(Some(out))
}

/// Checks the raw inputs and resolves every unit. Errors name the field (TOML path).
pub fn validate(c: &RoceConfig) -> Result<RoceInput, InputError> {
    let model = match c.model.as_deref().unwrap_or("ieee") {
        "ieee" => {
            if c.asic.is_some() {
                return err("asic", "only the sonic model takes an ASIC (use model = \"sonic\")");
            }
            HeadroomModel::Ieee
        }
        "sonic" => {
            let a = need("asic", c.asic.as_deref(), "spectrum-1 .. spectrum-6 for the sonic model")?;
            let g = Spectrum::from_name(a).ok_or_else(|| InputError { field: "asic".into(), msg: format!("`{a}`: expected spectrum-1 .. spectrum-6") })?;
            HeadroomModel::Sonic(g)
        }
        o => return err("model", format!("`{o}`: expected ieee or sonic")),
    };
    let mtu = need("mtu", parse::<Bytes>("mtu", &c.mtu, "an IB path MTU such as 4096B")?, "an IB path MTU: 256B, 512B, 1024B, 2048B or 4096B")?;
    if !model::frame::IB_MTUS.contains(&mtu.0) {
        return err("mtu", format!("{mtu}: expected an IB path MTU: 256B, 512B, 1024B, 2048B or 4096B"));
    }
    let port_mtu = parse::<Bytes>("port_mtu", &c.port_mtu, "an Ethernet MTU such as 9100B")?;
    let interface_delay = parse::<SimDuration>("interface_delay", &c.interface_delay, "a time such as 120ns")?.unwrap_or(SimDuration::ZERO);
    if let Some(p) = port_mtu {
        if !(1500..=16_000).contains(&p.0) {
            return err("port_mtu", format!("{p}: expected an Ethernet (IP) MTU between 1500B and 16000B"));
        }
    }
    let lossless_priorities = c.lossless_priorities.unwrap_or(1);
    if !(1..=8).contains(&lossless_priorities) {
        return err("lossless_priorities", format!("{lossless_priorities}: expected 1..8"));
    }
    let incast = need("incast", c.incast, "the worst incast degree (senders to one receiver), at least 2")?;
    if incast < 2 {
        return err("incast", format!("{incast}: expected at least 2 senders"));
    }
    let nic = match c.nic.as_deref().unwrap_or("connectx") {
        "connectx" => Nic::Connectx,
        "paper" => Nic::Paper,
        o => return err("nic", format!("`{o}`: expected connectx (NVIDIA ConnectX firmware defaults) or paper (DCQCN paper)")),
    };
    let topology = match (c.fat_tree_k, c.leaves, c.spines, c.hosts_per_leaf) {
        (Some(k), None, None, None) => {
            if k < 4 || k % 2 != 0 || k > 254 {
                return err("fat_tree_k", format!("{k}: expected an even radix 4..254"));
            }
            Topo::FatTree { k }
        }
        (Some(_), ..) => return err("fat_tree_k", "give either fat_tree_k (three tiers) or leaves/spines/hosts_per_leaf (two tiers), not both"),
        (None, l, s, h) => {
            let leaves = need("leaves", l, "the number of leaf switches (or fat_tree_k for three tiers)")?;
            let spines = need("spines", s, "the number of spine switches")?;
            let hosts_per_leaf = need("hosts_per_leaf", h, "hosts (NIC ports) per leaf")?;
            for (f, v) in [("leaves", leaves), ("spines", spines), ("hosts_per_leaf", hosts_per_leaf)] {
                if v == 0 || v > 254 {
                    return err(f, format!("{v}: expected 1..254"));
                }
            }
            if leaves < 2 {
                return err("leaves", "expected at least 2 leaves");
            }
            if hosts_per_leaf + spines > 254 {
                return err("hosts_per_leaf", format!("a leaf would have {} ports; at most 254", hosts_per_leaf + spines));
            }
            Topo::LeafSpine { leaves, spines, hosts_per_leaf }
        }
    };
    let three = matches!(topology, Topo::FatTree { .. });
    let mut tiers = vec![];
    for (key, name, present) in [("host_leaf", "host-leaf", true), ("leaf_spine", "leaf-spine", true), ("spine_core", "spine-core", three)] {
        let l = match key {
            "host_leaf" => &c.host_leaf,
            "leaf_spine" => &c.leaf_spine,
            _ => &c.spine_core,
        };
        match (l, present) {
            (Some(_), false) => return err(key, "a leaf-spine has no spine-core tier (give fat_tree_k for three tiers)"),
            (None, false) => continue,
            (None, true) => return err(&format!("{key}.speed"), "missing; expected a rate such as 400Gbps"),
            (Some(l), true) => {
                let sf = format!("{key}.speed");
                let cf = format!("{key}.cable");
                let speed = need(&sf, parse::<BitRate>(&sf, &l.speed, "a rate such as 400Gbps")?, "a rate such as 400Gbps")?;
                if speed.0 == 0 || speed.0 % 1_000_000 != 0 || speed > BitRate::from_gbps(1600) {
                    return err(&sf, format!("{speed}: expected a whole number of Mb/s up to 1600Gbps"));
                }
                let cable = need(&cf, parse::<Length>(&cf, &l.cable, "a length such as 30m")?, "the tier's longest cable, such as 30m")?;
                if cable > Length::from_m(10_000) {
                    return err(&cf, format!("{cable}: expected at most 10km"));
                }
                tiers.push(TierInput { tier: name, speed, cable });
            }
        }
    }
    let b = c.buffer.clone().unwrap_or_default();
    let total = need("buffer.total", parse::<Bytes>("buffer.total", &b.total, "a size such as 64MiB")?, "the switch buffer, such as 64MiB")?;
    let cell = parse::<Bytes>("buffer.cell", &b.cell, "a cell size such as 256B")?;
    let cell = match (model, cell) {
        (HeadroomModel::Sonic(g), Some(c)) if c != g.asic().cell_size => {
            return err(
                "buffer.cell",
                format!("{c}: {} cells are {} (sonic-buildimage asic_table.j2); leave it out or give that", g.asic_table_key(), g.asic().cell_size),
            )
        }
        (HeadroomModel::Sonic(g), _) => g.asic().cell_size,
        (HeadroomModel::Ieee, c) => need("buffer.cell", c, "the ASIC's buffer cell size, such as 256B")?,
    };
    if cell.0 == 0 || cell.0 > 1024 {
        return err("buffer.cell", format!("{cell}: expected 1B..1024B (real ASICs: 96..256 B)"));
    }
    let reserved = parse::<Bytes>("buffer.reserved", &b.reserved, "a size such as 0B")?.unwrap_or(Bytes(0));
    let dynamic_th = b.dynamic_th.unwrap_or(0);
    if !(-7..=3).contains(&dynamic_th) {
        return err("buffer.dynamic_th", format!("{dynamic_th}: expected -7..3 (alpha = 2^dynamic_th, as in SONiC)"));
    }
    let s = c.sonic.clone().unwrap_or_default();
    if model == HeadroomModel::Ieee && c.sonic.is_some() {
        return err("sonic", "the [sonic] traffic pattern applies to the sonic model only");
    }
    let d = LosslessTrafficPattern::default();
    let sonic_pattern = LosslessTrafficPattern {
        mtu: parse::<Bytes>("sonic.lossless_mtu", &s.lossless_mtu, "a size such as 1024B")?.unwrap_or(d.mtu),
        small_packet_percentage: s.small_packet_percentage.unwrap_or(d.small_packet_percentage),
    };
    if sonic_pattern.small_packet_percentage > 100 {
        return err("sonic.small_packet_percentage", format!("{}: expected 0..100", sonic_pattern.small_packet_percentage));
    }
    if sonic_pattern.mtu.0 == 0 {
        return err("sonic.lossless_mtu", "expected a positive size");
    }
    let o = c.operator.clone().unwrap_or_default();
    let kmin = parse::<Bytes>("operator.ecn_kmin", &o.ecn_kmin, "a size such as 150KB")?;
    let kmax = parse::<Bytes>("operator.ecn_kmax", &o.ecn_kmax, "a size such as 1500KB")?;
    let ecn = match (kmin, kmax) {
        (None, None) => {
            if o.ecn_pmax.is_some() {
                return err("operator.ecn_pmax", "give ecn_kmin and ecn_kmax with it");
            }
            None
        }
        (Some(kmin), Some(kmax)) => {
            if kmin > kmax {
                return err("operator.ecn_kmin", format!("{kmin} is above ecn_kmax {kmax}"));
            }
            let pmax = need("operator.ecn_pmax", o.ecn_pmax, "the marking probability at Kmax, 0..1")?;
            if !(0.0..=1.0).contains(&pmax) {
                return err("operator.ecn_pmax", format!("{pmax}: expected a probability 0..1"));
            }
            Some(Red { kmin, kmax, pmax })
        }
        (None, Some(_)) => return err("operator.ecn_kmin", "missing; give both ecn_kmin and ecn_kmax"),
        (Some(_), None) => return err("operator.ecn_kmax", "missing; give both ecn_kmin and ecn_kmax"),
    };
    if let Some(l) = &o.lossless {
        if l.is_empty() || l.iter().any(|&p| p > 7) {
            return err("operator.lossless", "expected a list of priorities 0..7");
        }
    }
    let roce_dscp = o.roce_dscp.unwrap_or(26);
    let cnp_dscp = o.cnp_dscp.unwrap_or(48);
    for (f, v) in [("operator.roce_dscp", roce_dscp), ("operator.cnp_dscp", cnp_dscp)] {
        if v > 63 {
            return err(f, format!("{v}: expected 0..63"));
        }
    }
    let operator = Operator {
        headroom: parse::<Bytes>("operator.headroom", &o.headroom, "a size such as 100KB")?,
        ecn,
        pfc_watchdog: o.pfc_watchdog,
        storm_protection: o.storm_protection,
        lossless: o.lossless.clone(),
        switch_dscp_map: dscp_map("operator.switch_dscp_map", &o.switch_dscp_map)?,
        nic_dscp_map: dscp_map("operator.nic_dscp_map", &o.nic_dscp_map)?,
        roce_dscp,
        cnp_dscp,
    };
    Ok(RoceInput {
        model,
        mtu,
        port_mtu,
        lossless_priorities,
        incast,
        nic,
        short_frames: c.short_frames.unwrap_or(0),
        interface_delay,
        topology,
        tiers,
        buffer: BufferInput { total, cell, reserved, dynamic_th },
        sonic_pattern,
        operator,
    })
}

// ------------------------------------------------------------------ outputs

/// One line of a derivation: a time (if it is one), the bytes it stands for, its source.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlanTerm {
    pub name: String,
    pub time_ps: Option<u64>,
    pub bytes: f64,
    pub source: String,
}

/// PFC settings of one port type (a tier's links; both ends alike).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TierPlan {
    pub tier: &'static str,
    pub speed_gbps: f64,
    pub cable_m: f64,
    pub one_way_delay_ps: u64,
    /// When the PG pauses its peer.
    pub trigger: String,
    /// Bytes that may arrive after XOFF (SONiC `xoff`), in whole cells.
    pub headroom_bytes: u64,
    pub headroom_cells: u64,
    /// Resume this far below the trigger (SONiC `xon`).
    pub xon_offset_bytes: u64,
    /// Buffer reserved per lossless PG (SONiC `size`).
    pub pg_size_bytes: u64,
    pub terms: Vec<PlanTerm>,
    /// IEEE: the static XOFF trigger, PG occupancy at which the PG pauses its peer.
    pub xoff_trigger_bytes: Option<u64>,
    /// IEEE: maximum frames in flight after the trigger.
    pub frames: Option<u64>,
    /// IEEE: headroom cells if the trigger were dynamic instead (one frame more).
    pub dynamic_trigger_cells: Option<u64>,
    pub max_frame_cells: Option<u64>,
    pub short_frame_cells: Option<u64>,
    /// IEEE: cells if every frame of the window were short (the all-small worst case).
    pub all_short_cells: Option<u64>,
}

/// Lossless buffer of one switch role against its buffer.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Budget {
    pub role: &'static str,
    pub switches: u32,
    /// (tier, ports of that tier on one switch).
    pub ports: Vec<(&'static str, u32)>,
    pub reserved_bytes: u64,
    pub headroom_bytes: u64,
    pub total_bytes: u64,
    /// What is left for the shared pool (0 when over budget).
    pub shared_bytes: u64,
    pub headroom_share: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EcnPlan {
    pub kmin_bytes: u64,
    pub kmax_bytes: u64,
    pub pmax: f64,
    pub reason: String,
    /// Egress queue (frame bytes) at which the worst incast's ingress PGs reach their
    /// dynamic threshold and PFC fires.
    pub pfc_queue_bytes: u64,
    pub pfc_queue_derivation: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DcqcnPlan {
    pub preset: String,
    pub source: String,
    pub params: DcqcnParams,
    /// (parameter, value, why).
    pub reasons: Vec<(String, String, String)>,
}

/// The cyclic-buffer-dependency check of the planned Clos under ECMP.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CdgReport {
    pub switches: usize,
    pub links: usize,
    pub intact_cycle: Option<Vec<String>>,
    /// Single switch-to-switch link failures checked and those leaving a cycle.
    pub failures_checked: usize,
    /// Only one failure per class of link was checked (large fabrics; see [`cdg_check`]).
    pub by_symmetry: bool,
    pub failures_with_cycle: Vec<(String, Vec<String>)>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Risk {
    pub id: &'static str,
    pub title: &'static str,
    pub fired: bool,
    /// "operator" when the operator's settings were evaluated, "plan" otherwise.
    pub evaluated: &'static str,
    pub detail: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RocePlan {
    pub model: String,
    pub model_source: String,
    pub lossless_frame_bytes: u64,
    pub reverse_frame_bytes: u64,
    pub cell_bytes: u64,
    pub tiers: Vec<TierPlan>,
    pub budgets: Vec<Budget>,
    pub ecn: EcnPlan,
    pub dcqcn: DcqcnPlan,
    pub cdg: CdgReport,
    pub risks: Vec<Risk>,
}

/// The encapsulation the plan assumes: IPv4, DSCP-based PFC (no VLAN tag).
pub const ENCAP: Encap = Encap { vlan: false, ipv6: false };

/// Largest lossless frame (MAC header to FCS): an RDMA WRITE first packet at the path MTU.
pub fn lossless_frame(i: &RoceInput) -> Bytes {
    roce_frame(ENCAP, Transport::WriteFirst, i.mtu)
}

/// Largest frame of any class on the links: the port MTU's frame if given, else the
/// lossless frame.
pub fn reverse_frame(i: &RoceInput) -> Bytes {
    let l = lossless_frame(i);
    i.port_mtu.map_or(l, |m| Bytes(m.0 + ETH_HEADER + VLAN_TAG + FCS).max(l))
}

/// The IEEE model's input for one tier (also what `--prove`'s scenario reproduces).
pub fn ieee_input(i: &RoceInput, t: &TierInput) -> HeadroomInput {
    HeadroomInput {
        rate: t.speed,
        cable: propagation(t.cable, DEFAULT_PROPAGATION_PS_PER_M),
        max_frame_reverse: reverse_frame(i),
        max_frame_lossless: lossless_frame(i),
        response: SimDuration(pause_response_quanta(t.speed) * quantum(t.speed).ps()),
        trigger_delay: SimDuration::ZERO,
        interface_delay: i.interface_delay,
        cell: i.buffer.cell,
        trigger_frame_in_headroom: false,
        short_frames: i.short_frames,
    }
}

/// SONiC's input for one tier.
pub fn sonic_input(i: &RoceInput, t: &TierInput, g: Spectrum) -> DynamicHeadroomInput {
    DynamicHeadroomInput { port_mtu: i.port_mtu.unwrap_or(sonic::DEFAULT_PORT_MTU), pattern: i.sonic_pattern, ..DynamicHeadroomInput::new(t.speed, t.cable, g) }
}

fn tier_plan(i: &RoceInput, t: &TierInput) -> Result<TierPlan, InputError> {
    let cell = i.buffer.cell;
    let prop = propagation(t.cable, DEFAULT_PROPAGATION_PS_PER_M);
    let base = |terms, headroom: Bytes, xon: Bytes, size: Bytes, trigger: String| TierPlan {
        tier: t.tier,
        speed_gbps: t.speed.as_gbps_f64(),
        cable_m: t.cable.as_m_f64(),
        one_way_delay_ps: prop.ps(),
        trigger,
        headroom_bytes: headroom.0,
        headroom_cells: headroom.cells(cell),
        xon_offset_bytes: xon.0,
        pg_size_bytes: size.0,
        terms,
        xoff_trigger_bytes: None,
        frames: None,
        dynamic_trigger_cells: None,
        max_frame_cells: None,
        short_frame_cells: None,
        all_short_cells: None,
    };
    match i.model {
        HeadroomModel::Ieee => {
            let hi = ieee_input(i, t);
            let d = ieee_8021qbb(&hi);
            let mut terms: Vec<PlanTerm> = d
                .terms
                .iter()
                .map(|x| PlanTerm { name: x.name.to_string(), time_ps: Some(x.time.ps()), bytes: x.wire_bytes.0 as f64, source: x.source.to_string() })
                .collect();
            if let Some(r) = terms.iter_mut().find(|x| x.name == "peer response time") {
                r.name = format!("peer response time ({} quanta of {} ps)", pause_response_quanta(t.speed), quantum(t.speed).ps());
            }
            let fc = lossless_frame(i).cells(cell);
            terms.push(PlanTerm {
                name: format!("frames in flight: ceil(W/P) = {} after the (static) trigger, x {fc} cells", d.frames),
                time_ps: Some(d.window.ps()),
                bytes: (d.max_frame_cells * cell.0) as f64,
                source: SRC_QBB.into(),
            });
            if i.short_frames > 0 {
                terms.push(PlanTerm {
                    name: format!("{} short frame(s) in the window, worst case", i.short_frames),
                    time_ps: None,
                    bytes: (d.short_frame_cells * cell.0) as f64,
                    source: "model::headroom::short_frame_allowance (exact over frame sizes)".into(),
                });
            }
            let xon = cell * (2 * fc);
            let mut p = base(terms, d.bytes, xon, d.bytes, String::new());
            p.frames = Some(d.frames);
            p.dynamic_trigger_cells = Some(d.cells + fc);
            p.max_frame_cells = Some(d.max_frame_cells);
            p.short_frame_cells = Some(d.short_frame_cells);
            p.all_short_cells = Some(all_short_cells(&hi));
            Ok(p)
        }
        HeadroomModel::Sonic(g) => {
            let h = sonic::mellanox_headroom(&sonic_input(i, t, g))
                .map_err(|e| InputError { field: format!("{}.speed", t.tier.replace('-', "_")), msg: e.to_string() })?;
            let terms = h
                .byte_terms()
                .into_iter()
                .map(|x| PlanTerm { name: x.name.to_string(), time_ps: None, bytes: x.exact, source: sonic::LUA_SOURCE.into() })
                .chain([
                    PlanTerm { name: "cell_occupancy (factor)".into(), time_ps: None, bytes: h.terms.cell_occupancy, source: sonic::LUA_SOURCE.into() },
                    PlanTerm {
                        name: "xoff before compensation (rounded to 1 KiB)".into(),
                        time_ps: None,
                        bytes: h.xoff_rounded.0 as f64,
                        source: sonic::LUA_SOURCE.into(),
                    },
                ])
                .collect();
            let trigger = format!("dynamic: pause when the PG's shared use reaches alpha*free, alpha = 2^{} (SONiC profile dynamic_th)", h.dynamic_th);
            Ok(base(terms, h.xoff, h.xon, h.size, trigger))
        }
    }
}

fn tier_of<'a>(plans: &'a [TierPlan], name: &str) -> &'a TierPlan {
    plans.iter().find(|p| p.tier == name).expect("tier planned")
}

/// Switch roles: name, how many, and (tier, ports of that tier on one switch).
type Roles = Vec<(&'static str, u32, Vec<(&'static str, u32)>)>;

fn budgets(i: &RoceInput, plans: &[TierPlan]) -> Vec<Budget> {
    let roles: Roles = match i.topology {
        Topo::LeafSpine { leaves, spines, hosts_per_leaf } => {
            vec![("leaf", leaves, vec![("host-leaf", hosts_per_leaf), ("leaf-spine", spines)]), ("spine", spines, vec![("leaf-spine", leaves)])]
        }
        Topo::FatTree { k } => vec![
            ("edge", k * k / 2, vec![("host-leaf", k / 2), ("leaf-spine", k / 2)]),
            ("aggregation", k * k / 2, vec![("leaf-spine", k / 2), ("spine-core", k / 2)]),
            ("core", k * k / 4, vec![("spine-core", k)]),
        ],
    };
    let pgs = i.lossless_priorities as u64;
    roles
        .into_iter()
        .map(|(role, switches, ports)| {
            let nports: u64 = ports.iter().map(|p| p.1 as u64).sum();
            let reserved = nports * 8 * i.buffer.reserved.0.div_ceil(i.buffer.cell.0) * i.buffer.cell.0;
            let headroom: u64 = ports
                .iter()
                .map(|&(t, n)| {
                    let per_pg = match i.operator.headroom {
                        Some(h) => h.cells(i.buffer.cell) * i.buffer.cell.0,
                        None => tier_of(plans, t).pg_size_bytes.div_ceil(i.buffer.cell.0) * i.buffer.cell.0,
                    };
                    n as u64 * pgs * per_pg
                })
                .sum();
            let total = i.buffer.total.0;
            Budget {
                role,
                switches,
                ports,
                reserved_bytes: reserved,
                headroom_bytes: headroom,
                total_bytes: total,
                shared_bytes: total.saturating_sub(reserved + headroom),
                headroom_share: headroom as f64 / total as f64,
            }
        })
        .collect()
}

/// The egress queue at which PFC fires under the worst incast, in frame bytes.
fn pfc_queue(i: &RoceInput, leaf: &Budget) -> (u64, u64, String) {
    let cell = i.buffer.cell.0;
    let leaf_ports: u32 = leaf.ports.iter().map(|p| p.1).sum();
    let n = i.incast.min(leaf_ports - 1) as u64;
    let s = leaf.shared_bytes / cell;
    let th = i.buffer.dynamic_th;
    let x = model::buffer::dynamic_threshold_share(s, n, th);
    let resv = i.buffer.reserved.0.div_ceil(cell);
    let frame = lossless_frame(i);
    let per_cell = frame.0 as f64 / frame.cells(i.buffer.cell) as f64;
    let q = (n as f64 * (resv + x) as f64 * per_cell) as u64;
    (
        (resv + x) * cell,
        q,
        format!(
            "n = min(incast {}, leaf ports - 1) = {n} ingress PGs each reach reserved {resv} + alpha*S/(1+n*alpha) = {x} cells \
             (S = {s} shared cells of the leaf, alpha = 2^{th}); the egress queue holds their sum, \
             {} cells = {q} frame bytes at {per_cell:.1} B per cell of maximum frames (model::buffer: Choudhury & Hahne 1998)",
            i.incast,
            n * (resv + x)
        ),
    )
}

fn ecn_plan(i: &RoceInput, q_pfc: u64, why_q: String) -> EcnPlan {
    let host = i.tiers[0].speed;
    let gbps = (host.0 / 1_000_000_000).max(1);
    let base = hpcc_thresholds(gbps);
    let (mut kmin, mut kmax) = (base.kmin.0, base.kmax.0);
    let mut reason = format!(
        "HPCC's published DCQCN setting scaled to {gbps} Gb/s host links: Kmin 4 KB and Kmax 16 KB per Gb/s, Pmax 0.2 \
         (Li et al., SIGCOMM 2019, mix/config.txt; model::ecn::hpcc_thresholds)"
    );
    if kmax >= q_pfc / 2 {
        kmax = q_pfc / 2;
        kmin = kmin.min(kmax / 4);
        reason
            .push_str(&format!("; lowered to Kmax = half the queue at which PFC fires ({q_pfc} B) and Kmin <= Kmax/4, so marking starts well before pausing"));
    }
    EcnPlan { kmin_bytes: kmin, kmax_bytes: kmax, pmax: base.pmax, reason, pfc_queue_bytes: q_pfc, pfc_queue_derivation: why_q }
}

fn dcqcn_plan(i: &RoceInput) -> DcqcnPlan {
    let preset = match i.nic {
        Nic::Connectx => DcqcnPreset::NvidiaDefault,
        Nic::Paper => DcqcnPreset::Paper,
    };
    let p = preset.params();
    let us = |d: SimDuration| format!("{} us", d.as_us_f64());
    let why: [(&str, String, &str, &str); 9] = [
        ("g", format!("{:.6}", p.g), "dce_tcp_g = 1019/1024 fixed point: alpha moves 5/1024 per step", "the paper's 1/256 (§5)"),
        ("K (alpha timer)", us(p.alpha_timer), "dce_tcp_rtt: alpha decays every 1 us without CNP", "55 us (§5)"),
        ("T (rate timer)", us(p.rate_timer), "rpg_time_reset: a rate-increase event every 300 us", "55 us (§5)"),
        ("B (byte counter)", format!("{}", p.byte_counter), "rpg_byte_reset 32767 B", "10 MB (§5)"),
        ("F (fast recovery)", p.fast_recovery_steps.to_string(), "rpg_threshold 1", "5 (§5)"),
        ("R_AI", format!("{}", p.rate_ai), "rpg_ai_rate 5 Mb/s", "40 Mb/s (§5)"),
        ("R_HAI", format!("{}", p.rate_hai), "rpg_hai_rate 50 Mb/s", "5 x R_AI, unconfirmed (see model::dcqcn::PAPER)"),
        ("min rate", format!("{}", p.min_rate), "rpg_min_rate 1 Mb/s", "floor of the paper's ns-3 release"),
        ("N (CNP interval)", us(p.cnp_interval), "min_time_between_cnps 4 us", "50 us (§5)"),
    ];
    let reasons = why
        .into_iter()
        .map(|(n, v, cx, paper)| {
            let r = match i.nic {
                Nic::Connectx => format!("the NIC's firmware default ({cx}); start from what the NIC runs and tune ECN first"),
                Nic::Paper => format!("the DCQCN paper's value ({paper}), for NICs without vendor defaults"),
            };
            (n.to_string(), v, r)
        })
        .collect();
    DcqcnPlan { preset: format!("{preset:?}"), source: preset.source().to_string(), params: p, reasons }
}

/// Builds the planned Clos as the simulator would (link speeds and cables do not matter to
/// routing).
pub fn topology(i: &RoceInput) -> Result<Topology, String> {
    let l = (BitRate::from_gbps(100), SimDuration::from_ns(5));
    let t = match i.topology {
        Topo::LeafSpine { leaves, spines, hosts_per_leaf } => Topology::leaf_spine(leaves, spines, hosts_per_leaf, 1, 1, l, l),
        Topo::FatTree { k } => Topology::fat_tree(k, l, l),
    };
    t.map_err(|e| format!("{e:?}"))
}

fn port_name(t: &Topology, p: PortId) -> String {
    let pt = t.port(p);
    let peer = pt.peer.map(|q| t.node(t.port(q).node).name.clone()).unwrap_or_default();
    format!("{}:{}->{}", t.node(pt.node).name, pt.index, peer)
}

/// Fabrics with at most this many switch-to-switch links have every single failure checked.
pub const CDG_EVERY_LINK: usize = 1024;

/// Channel dependency cycles of shortest-path ECMP on the topology: intact, and after each
/// single switch-to-switch link failure (one per class of link above [`CDG_EVERY_LINK`]).
pub fn cdg_check(t: &Topology) -> Result<CdgReport, String> {
    let names = |c: Vec<PortId>| c.into_iter().map(|p| port_name(t, p)).collect::<Vec<_>>();
    let intact = dependency_cycle(t, &Routes::build(t, 1, |_| true), |_| true)?.map(names);
    let mut links = vec![];
    for (pi, p) in t.ports.iter().enumerate() {
        if let Some(q) = p.peer {
            if t.is_switch(p.node) && t.is_switch(t.port(q).node) && (pi as u32) < q.0 {
                links.push((PortId(pi as u32), q));
            }
        }
    }
    // Above CDG_EVERY_LINK links, one failure per class of link (the tiers it joins): the
    // planned Clos is symmetric within a class and every ECMP member counts (no hashing),
    // so one failure stands for its class.
    let checked: Vec<(PortId, PortId)> = if links.len() <= CDG_EVERY_LINK {
        links.clone()
    } else {
        let tier = |p: PortId| t.node(t.port(p).node).tier;
        let mut seen = std::collections::BTreeSet::new();
        links.iter().copied().filter(|&(a, b)| seen.insert((tier(a).min(tier(b)), tier(a).max(tier(b))))).collect()
    };
    let mut failures_with_cycle = vec![];
    for &(a, b) in &checked {
        let up = |x: PortId| x != a && x != b;
        if let Some(c) = dependency_cycle(t, &Routes::build(t, 1, up), up)? {
            failures_with_cycle.push((port_name(t, a), names(c)));
        }
    }
    Ok(CdgReport {
        switches: t.nodes.iter().filter(|n| n.kind == fabric::topology::NodeKind::Switch).count(),
        links: links.len(),
        intact_cycle: intact,
        failures_checked: checked.len(),
        by_symmetry: checked.len() < links.len(),
        failures_with_cycle,
    })
}

fn risks(i: &RoceInput, plans: &[TierPlan], budgets: &[Budget], ecn: &EcnPlan, cdg: &CdgReport) -> Vec<Risk> {
    let op = &i.operator;
    let by = |given: bool| if given { "operator" } else { "plan" };
    let mut v = vec![];
    // Headroom short of need.
    let (fired, detail) = match op.headroom {
        Some(h) => {
            let short: Vec<String> = plans
                .iter()
                .filter(|p| h.0 < p.headroom_bytes)
                .map(|p| format!("{} needs {} B, configured {} B ({} B short)", p.tier, p.headroom_bytes, h.0, p.headroom_bytes - h.0))
                .collect();
            (!short.is_empty(), if short.is_empty() { format!("configured {} B covers every tier", h.0) } else { short.join("; ") })
        }
        None => (false, "the plan's headroom is the need of each tier".into()),
    };
    v.push(Risk { id: "headroom-short", title: "headroom short of need", fired, evaluated: by(op.headroom.is_some()), detail });
    // Lossless buffer over budget.
    let over: Vec<String> = budgets
        .iter()
        .filter(|b| b.reserved_bytes + b.headroom_bytes >= b.total_bytes)
        .map(|b| format!("{}: reserved {} B + headroom {} B >= buffer {} B", b.role, b.reserved_bytes, b.headroom_bytes, b.total_bytes))
        .collect();
    let detail = if over.is_empty() {
        budgets.iter().map(|b| format!("{}: headroom {:.1}% of the buffer", b.role, 100.0 * b.headroom_share)).collect::<Vec<_>>().join("; ")
    } else {
        over.join("; ")
    };
    v.push(Risk { id: "buffer-over-budget", title: "lossless buffer over budget", fired: !over.is_empty(), evaluated: by(op.headroom.is_some()), detail });
    // ECN above the PFC point.
    let (kmin, kmax) = op.ecn.map_or((ecn.kmin_bytes, ecn.kmax_bytes), |r| (r.kmin.0, r.kmax.0));
    v.push(Risk {
        id: "pfc-before-ecn",
        title: "ECN thresholds so high that PFC fires before ECN",
        fired: kmin >= ecn.pfc_queue_bytes,
        evaluated: by(op.ecn.is_some()),
        detail: format!(
            "Kmin {kmin} B, Kmax {kmax} B; PFC fires at an egress queue of {} B under the {}:1 incast{}",
            ecn.pfc_queue_bytes,
            i.incast,
            if kmin < ecn.pfc_queue_bytes && kmax >= ecn.pfc_queue_bytes { " (marking never reaches Pmax before pausing)" } else { "" }
        ),
    });
    v.push(Risk {
        id: "no-pfc-watchdog",
        title: "no PFC watchdog",
        fired: op.pfc_watchdog == Some(false),
        evaluated: by(op.pfc_watchdog.is_some()),
        detail: match op.pfc_watchdog {
            Some(false) => "a stuck receiver pauses its peer forever and the pause spreads (PFC storm); enable the switch PFC watchdog (SONiC pfcwd)".into(),
            Some(true) => "PFC watchdog on".into(),
            None => "plan: enable the PFC watchdog on every lossless port (SONiC `pfcwd start_default`: detection 200 ms, restoration 200 ms, action drop, \
                     times scaled up per 32 ports; sonic-utilities pfcwd/main.py). `fabriclab run` models it: `[roce.pfc] watchdog`, examples/roce-pfc-storm.toml"
                .into(),
        },
    });
    v.push(Risk {
        id: "host-storm-protection",
        title: "lossless class on host-facing ports without storm protection",
        fired: op.storm_protection == Some(false),
        evaluated: by(op.storm_protection.is_some()),
        detail: match op.storm_protection {
            Some(false) => format!(
                "{} lossless priorit{} on host-facing ports with no storm protection: one hung NIC can pause the leaf",
                i.lossless_priorities,
                if i.lossless_priorities == 1 { "y" } else { "ies" }
            ),
            Some(true) => "storm protection on host-facing ports".into(),
            None => "plan: enable NIC pause-storm prevention and the switch watchdog on host-facing ports".into(),
        },
    });
    let fired = cdg.intact_cycle.is_some() || !cdg.failures_with_cycle.is_empty();
    let detail = match (&cdg.intact_cycle, cdg.failures_with_cycle.first()) {
        (Some(c), _) => format!("the intact fabric's routes have a cycle: {}", c.join(" => ")),
        (None, Some((f, c))) => {
            format!("{} of {} single link failures leave a cycle, e.g. with {f} down: {}", cdg.failures_with_cycle.len(), cdg.failures_checked, c.join(" => "))
        }
        (None, None) if cdg.by_symmetry => format!(
            "no cycle: intact and after a single failure of each class of switch-to-switch link ({} checked of {}; the Clos is symmetric within a class)",
            cdg.failures_checked, cdg.links
        ),
        (None, None) => format!("no cycle: intact and after each of the {} single switch-to-switch link failures", cdg.failures_checked),
    };
    v.push(Risk { id: "cyclic-buffer-dependency", title: "cyclic buffer dependency possible", fired, evaluated: "plan", detail });
    v.push(dscp_risk(i));
    v
}

fn dscp_risk(i: &RoceInput) -> Risk {
    let op = &i.operator;
    let given = op.switch_dscp_map.is_some() || op.nic_dscp_map.is_some() || op.lossless.is_some();
    let mut problems = vec![];
    let lossless = op.lossless.clone().unwrap_or_else(|| (3..3 + i.lossless_priorities).collect());
    if let Some(l) = &op.lossless {
        if l.len() != i.lossless_priorities as usize {
            problems.push(format!("{} lossless priorities configured, {} planned", l.len(), i.lossless_priorities));
        }
    }
    for (what, d) in [("RoCE data", op.roce_dscp), ("CNP", op.cnp_dscp)] {
        let sw = op.switch_dscp_map.as_ref().map(|m| m.get(&d).copied());
        let nic = op.nic_dscp_map.as_ref().map(|m| m.get(&d).copied());
        match (sw, nic) {
            (Some(a), Some(b)) if a != b => {
                let p = |x: Option<u8>| x.map_or("none".to_string(), |v| v.to_string());
                problems.push(format!("{what} DSCP {d}: switch priority {}, NIC priority {}", p(a), p(b)))
            }
            _ => {}
        }
        if what == "RoCE data" {
            match sw {
                Some(None) => problems.push(format!("the switch map has no entry for RoCE DSCP {d} (it lands in the default, lossy class)")),
                Some(Some(p)) if !lossless.contains(&p) => problems.push(format!("RoCE DSCP {d} maps to priority {p}, which is not lossless ({lossless:?})")),
                _ => {}
            }
        }
    }
    Risk {
        id: "dscp-map-mismatch",
        title: "mismatched priority/DSCP maps",
        fired: !problems.is_empty(),
        evaluated: if given { "operator" } else { "plan" },
        detail: if problems.is_empty() {
            if given {
                format!("RoCE DSCP {} and CNP DSCP {} map alike on switch and NIC; RoCE is lossless", op.roce_dscp, op.cnp_dscp)
            } else {
                format!("plan: DSCP {} -> priority 3 (lossless) and CNP DSCP {} -> priority 6 on switch and NIC alike", op.roce_dscp, op.cnp_dscp)
            }
        } else {
            problems.join("; ")
        },
    }
}

/// Plans the fabric: headroom per tier, budget, ECN, DCQCN, the CDG check and the risks.
pub fn plan(i: &RoceInput) -> Result<RocePlan, InputError> {
    let tiers = i.tiers.iter().map(|t| tier_plan(i, t)).collect::<Result<Vec<_>, _>>()?;
    let budgets = budgets(i, &tiers);
    let (level, q, why) = pfc_queue(i, &budgets[0]);
    let ecn = ecn_plan(i, q, why);
    let mut tiers = tiers;
    if i.model == HeadroomModel::Ieee {
        for t in &mut tiers {
            t.xoff_trigger_bytes = Some(level);
            t.trigger = format!(
                "static: pause at {level} B of PG occupancy, the leaf's dynamic equilibrium under the worst incast \
                 (reserved + alpha*S/(1+n*alpha)); a dynamic trigger needs {} cells",
                t.dynamic_trigger_cells.unwrap_or(0)
            );
        }
    }
    let topo = topology(i).map_err(|e| InputError { field: "leaves".into(), msg: e })?;
    let cdg = cdg_check(&topo).map_err(|e| InputError { field: "hosts_per_leaf".into(), msg: e })?;
    let risks = risks(i, &tiers, &budgets, &ecn, &cdg);
    let (model, model_source) = match i.model {
        HeadroomModel::Ieee => ("ieee".to_string(), SRC_QBB.to_string()),
        HeadroomModel::Sonic(g) => (format!("sonic ({})", g.asic_table_key()), format!("{}; ASIC parameters: {}", sonic::LUA_SOURCE, sonic::ASIC_TABLE_SOURCE)),
    };
    Ok(RocePlan {
        model,
        model_source,
        lossless_frame_bytes: lossless_frame(i).0,
        reverse_frame_bytes: reverse_frame(i).0,
        cell_bytes: i.buffer.cell.0,
        tiers,
        budgets,
        ecn,
        dcqcn: dcqcn_plan(i),
        cdg,
        risks,
    })
}

/// Every formula and default the plan used, with its source.
pub fn explain(i: &RoceInput, p: &RocePlan) -> Vec<String> {
    let mut v = vec![
        format!(
            "lossless frame = RoCEv2 RDMA WRITE first packet at path MTU {} B: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + RETH 16 + payload + ICRC 4 + FCS 4 = {} B (no VLAN tag: DSCP-based PFC; model::frame)",
            i.mtu.0, p.lossless_frame_bytes
        ),
        format!(
            "reverse frame (ahead of the PFC frame) = {} B: {}",
            p.reverse_frame_bytes,
            if i.port_mtu.is_some() { "port MTU + 14 + 4 (VLAN) + 4 (FCS)" } else { "no port MTU given, so no larger frame than the lossless one shares the link" }
        ),
        format!("cable delay = length x {} ps/m (IEEE 802.1Qbb Annex N ~2/3 c; units::DEFAULT_PROPAGATION_PS_PER_M)", DEFAULT_PROPAGATION_PS_PER_M),
    ];
    match i.model {
        HeadroomModel::Ieee => {
            v.push("peer response = IEEE 802.3 Annex 31B pause quanta by speed x 512 bit times (model::headroom::pause_response_quanta)".into());
            v.push(format!(
                "headroom = cells of ceil(W/P) maximum frames, W = reverse frame + PFC frame + 2 x cable + peer response, P = a maximum frame's wire time: \
                 {SRC_QBB}. The planned XOFF trigger is static, so the frame that crosses it is admitted below it; with a dynamic trigger \
                 (alpha*free falls between a PG's arrivals) that frame lands in headroom too: one frame more, shown per tier"
            ));
            v.push("XOFF trigger = reserved + alpha*S/(1+n*alpha): the level the leaf's dynamic threshold settles at when n ingress PGs of the worst incast share S, made static (model::buffer::dynamic_threshold_share)".into());
            v.push(format!(
                "short frames: {} allowed per window, each charged exactly (model::headroom::short_frame_allowance); the all-small worst case is shown per tier",
                i.short_frames
            ));
            v.push(format!("xon offset = {SRC_XON}; PG size = headroom (the resume point lies in the shared part)"));
        }
        HeadroomModel::Sonic(g) => {
            v.push(format!("headroom (xoff), xon, size: {}", sonic::LUA_SOURCE));
            v.push(format!("ASIC parameters of {}: {:?} ({})", g.asic_table_key(), g.asic(), sonic::ASIC_TABLE_SOURCE));
            v.push(format!(
                "LOSSLESS_TRAFFIC_PATTERN mtu {} and small_packet_percentage {} (SONiC defaults: files/build_templates/buffers_config.j2 unless given); port MTU {} (SONiC DEFAULT_MTU_STR unless given)",
                i.sonic_pattern.mtu,
                i.sonic_pattern.small_packet_percentage,
                i.port_mtu.unwrap_or(sonic::DEFAULT_PORT_MTU)
            ));
        }
    }
    v.push(format!(
        "budget per switch = ports x 8 PGs x reserved + ports x {} lossless PG(s) x PG size{}, in whole cells of {} B, against buffer {} B",
        i.lossless_priorities,
        if i.operator.headroom.is_some() { " (the operator's headroom)" } else { "" },
        i.buffer.cell.0,
        i.buffer.total.0
    ));
    v.push(format!("PFC point: {}", p.ecn.pfc_queue_derivation));
    v.push(format!("ECN: {}", p.ecn.reason));
    v.push(format!("DCQCN: {}", p.dcqcn.source));
    v.push(
        "cyclic buffer dependency: the simulator's shortest-path ECMP groups (fabric::routing, BGP-like) on the planned Clos; channel dependency graph and cycle search from \
         fabric::subnet_manager::cdg (Dally & Seitz, IEEE Trans. Computers 1987); every ECMP member counts; repeated with each switch-to-switch link down and routes recomputed"
            .into(),
    );
    v
}
