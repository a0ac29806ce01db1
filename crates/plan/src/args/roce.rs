//! `fabriclab plan roce`'s inputs: the flags ([`RoceArgs`]), laid over `--config FILE.toml`
//! (a flag overrides the file's field of the same name), then validated by
//! `plan::roce::validate`. An error names the flag, or the file and field, and what is
//! expected. [`planned`] and [`json_value`] are the command's answer without `--prove`, as
//! the CLI prints it and `fabriclab serve` returns it.
//!
//! Left out: the planning itself (`plan::roce`) and `--prove` (a simulation, in the CLI).

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::roce::{self as r, LinkConfig, RoceConfig, RoceInput, RocePlan};
use clap::Args;

/// `fabriclab plan roce` arguments. Every input may also come from `--config` (TOML, the
/// field named in each flag's help); a flag overrides the file.
#[derive(Args, Debug, Default)]
pub struct RoceArgs {
    /// TOML file with the inputs (fields as in the flags' help, e.g. host_leaf.speed).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Headroom model: ieee (IEEE 802.1Qbb worst case) or sonic (SONiC's Spectrum Lua). [model]
    #[arg(long, value_name = "ieee|sonic")]
    pub model: Option<String>,
    /// Spectrum generation for --model sonic: spectrum-1 .. spectrum-6. [asic]
    #[arg(long, value_name = "spectrum-N")]
    pub asic: Option<String>,
    /// RoCE path MTU: 256B .. 4096B. [mtu]
    #[arg(long, value_name = "BYTES")]
    pub mtu: Option<String>,
    /// Ethernet port MTU when larger frames of any class share the links. [port_mtu]
    #[arg(long, value_name = "BYTES")]
    pub port_mtu: Option<String>,
    /// Number of lossless priorities (default 1). [lossless_priorities]
    #[arg(long, value_name = "N")]
    pub lossless_priorities: Option<u8>,
    /// Worst incast degree (senders to one receiver). [incast]
    #[arg(long, value_name = "N")]
    pub incast: Option<u32>,
    /// NIC family for DCQCN defaults: connectx (default) or paper. [nic]
    #[arg(long, value_name = "connectx|paper")]
    pub nic: Option<String>,
    /// Frames shorter than the maximum one pause window may hold (default 0). [short_frames]
    #[arg(long, value_name = "N")]
    pub short_frames: Option<u64>,
    /// Interface (PHY/FEC) latency of one direction of a link, beyond the cable (default
    /// 0ns; IEEE 802.3 bounds it at 1.23us for 100GBASE-R). [interface_delay]
    #[arg(long, value_name = "TIME")]
    pub interface_delay: Option<String>,
    /// Lanes of every tier's ports for --model sonic: 1, 2, 4 (default) or 8; 8 doubles
    /// xon and adds the port MTU to size. [lanes]
    #[arg(long, value_name = "N")]
    pub lanes: Option<u32>,
    /// Leaf switches (two tiers). [leaves]
    #[arg(long, value_name = "N")]
    pub leaves: Option<u32>,
    /// Spine switches (two tiers). [spines]
    #[arg(long, value_name = "N")]
    pub spines: Option<u32>,
    /// Hosts per leaf (two tiers). [hosts_per_leaf]
    #[arg(long, value_name = "N")]
    pub hosts_per_leaf: Option<u32>,
    /// Radix of a three-tier k-ary fat tree instead of a leaf-spine. [fat_tree_k]
    #[arg(long, value_name = "K")]
    pub fat_tree_k: Option<u32>,
    /// Host-leaf port speed. [host_leaf.speed]
    #[arg(long, value_name = "RATE")]
    pub host_leaf_speed: Option<String>,
    /// Longest host-leaf cable. [host_leaf.cable]
    #[arg(long, value_name = "LENGTH")]
    pub host_leaf_cable: Option<String>,
    /// Lanes of the host-leaf ports, overriding --lanes. [host_leaf.lanes]
    #[arg(long, value_name = "N")]
    pub host_leaf_lanes: Option<u32>,
    /// Leaf-spine port speed. [leaf_spine.speed]
    #[arg(long, value_name = "RATE")]
    pub leaf_spine_speed: Option<String>,
    /// Longest leaf-spine cable. [leaf_spine.cable]
    #[arg(long, value_name = "LENGTH")]
    pub leaf_spine_cable: Option<String>,
    /// Lanes of the leaf-spine ports, overriding --lanes. [leaf_spine.lanes]
    #[arg(long, value_name = "N")]
    pub leaf_spine_lanes: Option<u32>,
    /// Spine-core port speed (fat tree). [spine_core.speed]
    #[arg(long, value_name = "RATE")]
    pub spine_core_speed: Option<String>,
    /// Longest spine-core cable (fat tree). [spine_core.cable]
    #[arg(long, value_name = "LENGTH")]
    pub spine_core_cable: Option<String>,
    /// Lanes of the spine-core ports (fat tree), overriding --lanes. [spine_core.lanes]
    #[arg(long, value_name = "N")]
    pub spine_core_lanes: Option<u32>,
    /// Switch ASIC buffer. [buffer.total]
    #[arg(long, value_name = "BYTES")]
    pub buffer_total: Option<String>,
    /// Buffer cell size (sonic: the ASIC's). [buffer.cell]
    #[arg(long, value_name = "BYTES")]
    pub cell: Option<String>,
    /// Reserved buffer per (port, priority group) (default 0B). [buffer.reserved]
    #[arg(long, value_name = "BYTES")]
    pub reserved: Option<String>,
    /// alpha = 2^dynamic_th of the shared pool (default 0). [buffer.dynamic_th]
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub dynamic_th: Option<i8>,
    /// SONiC LOSSLESS_TRAFFIC_PATTERN small_packet_percentage (default 50). [sonic.small_packet_percentage]
    #[arg(long, value_name = "PERCENT")]
    pub small_packet_percentage: Option<u8>,
    /// SONiC LOSSLESS_TRAFFIC_PATTERN mtu (default 1024B). [sonic.lossless_mtu]
    #[arg(long, value_name = "BYTES")]
    pub sonic_lossless_mtu: Option<String>,
    /// SONiC shared headroom pool: DEFAULT_LOSSLESS_BUFFER_PARAMETER over_subscribe_ratio;
    /// size = xon and the plan gives each switch's pool xoff. [sonic.over_subscribe_ratio]
    #[arg(long, value_name = "R")]
    pub over_subscribe_ratio: Option<f64>,
    /// SONiC shared headroom pool of a configured size (BUFFER_POOL ingress_lossless_pool
    /// xoff). [sonic.shared_headroom_pool_xoff]
    #[arg(long, value_name = "BYTES")]
    pub shared_headroom_pool_xoff: Option<String>,
    /// Operator: headroom configured per lossless PG, to check. [operator.headroom]
    #[arg(long, value_name = "BYTES")]
    pub headroom: Option<String>,
    /// Operator: ECN Kmin. [operator.ecn_kmin]
    #[arg(long, value_name = "BYTES")]
    pub ecn_kmin: Option<String>,
    /// Operator: ECN Kmax. [operator.ecn_kmax]
    #[arg(long, value_name = "BYTES")]
    pub ecn_kmax: Option<String>,
    /// Operator: ECN Pmax. [operator.ecn_pmax]
    #[arg(long, value_name = "P")]
    pub ecn_pmax: Option<f64>,
    /// Operator: PFC watchdog on|off. [operator.pfc_watchdog]
    #[arg(long, value_name = "on|off")]
    pub pfc_watchdog: Option<String>,
    /// Operator: PFC storm protection on host-facing ports on|off. [operator.storm_protection]
    #[arg(long, value_name = "on|off")]
    pub storm_protection: Option<String>,
    /// Operator: lossless priorities on the switch, e.g. 3,4. [operator.lossless]
    #[arg(long, value_name = "LIST")]
    pub lossless: Option<String>,
    /// Operator: switch DSCP->priority map, e.g. 26=3,48=6. [operator.switch_dscp_map]
    #[arg(long, value_name = "MAP")]
    pub switch_dscp_map: Option<String>,
    /// Operator: NIC DSCP->priority map. [operator.nic_dscp_map]
    #[arg(long, value_name = "MAP")]
    pub nic_dscp_map: Option<String>,
    /// Operator: DSCP of RoCE data (default 26). [operator.roce_dscp]
    #[arg(long, value_name = "DSCP")]
    pub roce_dscp: Option<u8>,
    /// Operator: DSCP of CNPs (default 48). [operator.cnp_dscp]
    #[arg(long, value_name = "DSCP")]
    pub cnp_dscp: Option<u8>,
    /// Print one JSON document.
    #[arg(long)]
    pub json: bool,
    /// Print every formula and default with its source.
    #[arg(long)]
    pub explain: bool,
    /// Simulate the headroom worst case and the worst incast per tier.
    #[arg(long)]
    pub prove: bool,
}

/// Field (TOML path) → flag, for error messages.
const FLAGS: &[(&str, &str)] = &[
    ("model", "--model"),
    ("asic", "--asic"),
    ("mtu", "--mtu"),
    ("port_mtu", "--port-mtu"),
    ("lossless_priorities", "--lossless-priorities"),
    ("incast", "--incast"),
    ("nic", "--nic"),
    ("short_frames", "--short-frames"),
    ("interface_delay", "--interface-delay"),
    ("lanes", "--lanes"),
    ("leaves", "--leaves"),
    ("spines", "--spines"),
    ("hosts_per_leaf", "--hosts-per-leaf"),
    ("fat_tree_k", "--fat-tree-k"),
    ("host_leaf.speed", "--host-leaf-speed"),
    ("host_leaf.cable", "--host-leaf-cable"),
    ("host_leaf.lanes", "--host-leaf-lanes"),
    ("leaf_spine.speed", "--leaf-spine-speed"),
    ("leaf_spine.cable", "--leaf-spine-cable"),
    ("leaf_spine.lanes", "--leaf-spine-lanes"),
    ("spine_core.speed", "--spine-core-speed"),
    ("spine_core.cable", "--spine-core-cable"),
    ("spine_core.lanes", "--spine-core-lanes"),
    ("host_leaf", "--host-leaf-speed/--host-leaf-cable"),
    ("leaf_spine", "--leaf-spine-speed/--leaf-spine-cable"),
    ("spine_core", "--spine-core-speed/--spine-core-cable"),
    ("buffer.total", "--buffer-total"),
    ("buffer.cell", "--cell"),
    ("buffer.reserved", "--reserved"),
    ("buffer.dynamic_th", "--dynamic-th"),
    ("sonic", "--small-packet-percentage/--sonic-lossless-mtu/--over-subscribe-ratio/--shared-headroom-pool-xoff"),
    ("sonic.small_packet_percentage", "--small-packet-percentage"),
    ("sonic.lossless_mtu", "--sonic-lossless-mtu"),
    ("sonic.over_subscribe_ratio", "--over-subscribe-ratio"),
    ("sonic.shared_headroom_pool_xoff", "--shared-headroom-pool-xoff"),
    ("operator.headroom", "--headroom"),
    ("operator.ecn_kmin", "--ecn-kmin"),
    ("operator.ecn_kmax", "--ecn-kmax"),
    ("operator.ecn_pmax", "--ecn-pmax"),
    ("operator.pfc_watchdog", "--pfc-watchdog"),
    ("operator.storm_protection", "--storm-protection"),
    ("operator.lossless", "--lossless"),
    ("operator.switch_dscp_map", "--switch-dscp-map"),
    ("operator.nic_dscp_map", "--nic-dscp-map"),
    ("operator.roce_dscp", "--roce-dscp"),
    ("operator.cnp_dscp", "--cnp-dscp"),
];

pub fn flag_of(field: &str) -> &'static str {
    FLAGS.iter().find(|f| f.0 == field).map_or("--config", |f| f.1)
}

fn on_off(flag: &str, v: &str) -> Result<bool, String> {
    match v {
        "on" | "true" | "yes" => Ok(true),
        "off" | "false" | "no" => Ok(false),
        o => Err(format!("{flag} {o}: expected on or off")),
    }
}

fn map_flag(flag: &str, v: &str) -> Result<BTreeMap<String, u8>, String> {
    v.split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|kv| {
            let (k, p) = kv.split_once('=').ok_or_else(|| format!("{flag} {v}: `{kv}` is not DSCP=PRIORITY; expected e.g. 26=3,48=6"))?;
            let p = p.trim().parse::<u8>().map_err(|_| format!("{flag} {v}: priority `{p}` is not 0..7"))?;
            Ok((k.trim().to_string(), p))
        })
        .collect()
}

/// Sets `dst` from a flag given as `src`, and notes the field as set by a flag.
fn over<T: Clone>(set: &mut Vec<&'static str>, field: &'static str, src: &Option<T>, dst: &mut Option<T>) {
    if let Some(v) = src.clone() {
        *dst = Some(v);
        set.push(field);
    }
}

/// Reads `--config` and lays the flags over it. Returns the merged inputs and the fields
/// set by flags (so errors can name the flag).
pub fn merged(a: &RoceArgs) -> Result<(RoceConfig, Vec<&'static str>, Option<String>), String> {
    let (mut c, file) = match &a.config {
        Some(p) => {
            let name = p.display().to_string();
            let src = std::fs::read_to_string(p).map_err(|e| format!("--config {name}: {e}"))?;
            let c: RoceConfig = toml::from_str(&src).map_err(|e| format!("{name}: {}", e.to_string().trim_end()))?;
            (c, Some(name))
        }
        None => (RoceConfig::default(), None),
    };
    let mut set = vec![];
    over_fabric(a, &mut c, &mut set);
    over_buffer(a, &mut c, &mut set);
    over_operator(a, &mut c, &mut set)?;
    Ok((c, set, file))
}

/// The model, frames, incast, topology and the tiers' links.
fn over_fabric(a: &RoceArgs, c: &mut RoceConfig, set: &mut Vec<&'static str>) {
    over(set, "model", &a.model, &mut c.model);
    over(set, "asic", &a.asic, &mut c.asic);
    over(set, "mtu", &a.mtu, &mut c.mtu);
    over(set, "port_mtu", &a.port_mtu, &mut c.port_mtu);
    over(set, "lossless_priorities", &a.lossless_priorities, &mut c.lossless_priorities);
    over(set, "incast", &a.incast, &mut c.incast);
    over(set, "nic", &a.nic, &mut c.nic);
    over(set, "short_frames", &a.short_frames, &mut c.short_frames);
    over(set, "interface_delay", &a.interface_delay, &mut c.interface_delay);
    over(set, "lanes", &a.lanes, &mut c.lanes);
    over(set, "leaves", &a.leaves, &mut c.leaves);
    over(set, "spines", &a.spines, &mut c.spines);
    over(set, "hosts_per_leaf", &a.hosts_per_leaf, &mut c.hosts_per_leaf);
    over(set, "fat_tree_k", &a.fat_tree_k, &mut c.fat_tree_k);
    for (speed, cable, lanes, link, names) in [
        (&a.host_leaf_speed, &a.host_leaf_cable, &a.host_leaf_lanes, &mut c.host_leaf, ("host_leaf.speed", "host_leaf.cable", "host_leaf.lanes")),
        (&a.leaf_spine_speed, &a.leaf_spine_cable, &a.leaf_spine_lanes, &mut c.leaf_spine, ("leaf_spine.speed", "leaf_spine.cable", "leaf_spine.lanes")),
        (&a.spine_core_speed, &a.spine_core_cable, &a.spine_core_lanes, &mut c.spine_core, ("spine_core.speed", "spine_core.cable", "spine_core.lanes")),
    ] {
        if speed.is_some() || cable.is_some() || lanes.is_some() {
            let l = link.get_or_insert_with(LinkConfig::default);
            over(set, names.0, speed, &mut l.speed);
            over(set, names.1, cable, &mut l.cable);
            over(set, names.2, lanes, &mut l.lanes);
        }
    }
}

/// `[buffer]` and `[sonic]`.
fn over_buffer(a: &RoceArgs, c: &mut RoceConfig, set: &mut Vec<&'static str>) {
    if a.buffer_total.is_some() || a.cell.is_some() || a.reserved.is_some() || a.dynamic_th.is_some() {
        let b = c.buffer.get_or_insert_with(Default::default);
        over(set, "buffer.total", &a.buffer_total, &mut b.total);
        over(set, "buffer.cell", &a.cell, &mut b.cell);
        over(set, "buffer.reserved", &a.reserved, &mut b.reserved);
        over(set, "buffer.dynamic_th", &a.dynamic_th, &mut b.dynamic_th);
    }
    if a.small_packet_percentage.is_some() || a.sonic_lossless_mtu.is_some() || a.over_subscribe_ratio.is_some() || a.shared_headroom_pool_xoff.is_some() {
        let s = c.sonic.get_or_insert_with(Default::default);
        over(set, "sonic.small_packet_percentage", &a.small_packet_percentage, &mut s.small_packet_percentage);
        over(set, "sonic.lossless_mtu", &a.sonic_lossless_mtu, &mut s.lossless_mtu);
        over(set, "sonic.over_subscribe_ratio", &a.over_subscribe_ratio, &mut s.over_subscribe_ratio);
        over(set, "sonic.shared_headroom_pool_xoff", &a.shared_headroom_pool_xoff, &mut s.shared_headroom_pool_xoff);
    }
}

/// `[operator]`: the flags that take a switch (on|off), a list or a map are parsed here.
fn over_operator(a: &RoceArgs, c: &mut RoceConfig, set: &mut Vec<&'static str>) -> Result<(), String> {
    let pfcwd = a.pfc_watchdog.as_deref().map(|v| on_off("--pfc-watchdog", v)).transpose()?;
    let storm = a.storm_protection.as_deref().map(|v| on_off("--storm-protection", v)).transpose()?;
    let lossless = a
        .lossless
        .as_deref()
        .map(|v| {
            v.split(',').map(|p| p.trim().parse::<u8>().map_err(|_| format!("--lossless {v}: `{p}` is not a priority 0..7"))).collect::<Result<Vec<_>, _>>()
        })
        .transpose()?;
    let sw_map = a.switch_dscp_map.as_deref().map(|v| map_flag("--switch-dscp-map", v)).transpose()?;
    let nic_map = a.nic_dscp_map.as_deref().map(|v| map_flag("--nic-dscp-map", v)).transpose()?;
    let any_op = a.headroom.is_some()
        || a.ecn_kmin.is_some()
        || a.ecn_kmax.is_some()
        || a.ecn_pmax.is_some()
        || pfcwd.is_some()
        || storm.is_some()
        || lossless.is_some()
        || sw_map.is_some()
        || nic_map.is_some()
        || a.roce_dscp.is_some()
        || a.cnp_dscp.is_some();
    if any_op {
        let o = c.operator.get_or_insert_with(Default::default);
        over(set, "operator.headroom", &a.headroom, &mut o.headroom);
        over(set, "operator.ecn_kmin", &a.ecn_kmin, &mut o.ecn_kmin);
        over(set, "operator.ecn_kmax", &a.ecn_kmax, &mut o.ecn_kmax);
        over(set, "operator.ecn_pmax", &a.ecn_pmax, &mut o.ecn_pmax);
        over(set, "operator.pfc_watchdog", &pfcwd, &mut o.pfc_watchdog);
        over(set, "operator.storm_protection", &storm, &mut o.storm_protection);
        over(set, "operator.lossless", &lossless, &mut o.lossless);
        over(set, "operator.switch_dscp_map", &sw_map, &mut o.switch_dscp_map);
        over(set, "operator.nic_dscp_map", &nic_map, &mut o.nic_dscp_map);
        over(set, "operator.roce_dscp", &a.roce_dscp, &mut o.roce_dscp);
        over(set, "operator.cnp_dscp", &a.cnp_dscp, &mut o.cnp_dscp);
    }
    Ok(())
}

/// Validates the merged inputs; the error names the flag or the file's field.
pub fn input(a: &RoceArgs) -> Result<RoceInput, String> {
    let (c, set, file) = merged(a)?;
    r::validate(&c).map_err(|e| {
        let flag = flag_of(&e.field);
        match &file {
            _ if set.contains(&e.field.as_str()) => format!("{flag}: {}", e.msg),
            Some(f) if !e.msg.starts_with("missing") => format!("{f}: {}: {}", e.field, e.msg),
            Some(f) => format!("{flag} (or `{}` in {f}): {}", e.field, e.msg),
            None => format!("{flag}: {}", e.msg),
        }
    })
}

/// The inputs and the plan, or the message the CLI prints after `error: ` (exit code 2).
pub fn planned(a: &RoceArgs) -> Result<(RoceInput, RocePlan), String> {
    let i = input(a)?;
    let p = r::plan(&i).map_err(|e| format!("{}: {}", flag_of(&e.field), e.msg))?;
    Ok((i, p))
}

/// `plan roce --json`'s document without `--prove`: the inputs, the plan and, with
/// `--explain`, every formula and default with its source.
pub fn json_value(a: &RoceArgs, i: &RoceInput, p: &RocePlan) -> serde_json::Value {
    let mut v = serde_json::json!({ "input": i, "plan": p });
    if a.explain {
        v["explain"] = serde_json::json!(r::explain(i, p));
    }
    v
}
