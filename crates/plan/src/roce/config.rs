//! The planner's raw inputs, as a TOML file (`--config`) or the flags give them: every
//! size and rate a string with its unit, every field optional. [`super::validate`] checks
//! them and resolves the units; nothing here is checked or defaulted.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The planner's inputs as a TOML file (or flags) gives them: every size and rate a string
/// with its unit, checked by [`validate`](super::validate). Unknown fields are errors.
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
    /// Lanes of every tier's ports (1, 2, 4 or 8; default 4) unless the tier gives its own
    /// `lanes`. The SONiC model doubles xon and adds the port MTU to size on 8-lane ports.
    pub lanes: Option<u32>,
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
    /// Lanes of the tier's ports (1, 2, 4 or 8), overriding the top-level `lanes`.
    pub lanes: Option<u32>,
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
    /// DEFAULT_LOSSLESS_BUFFER_PARAMETER over_subscribe_ratio: turns the shared headroom pool
    /// on (size = xon) and sizes the pool's xoff as buffer_pool_mellanox.lua does.
    pub over_subscribe_ratio: Option<f64>,
    /// BUFFER_POOL ingress_lossless_pool xoff: a configured shared headroom pool (turns it
    /// on; the plan reports the over-subscription it gives).
    pub shared_headroom_pool_xoff: Option<String>,
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
