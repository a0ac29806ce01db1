//! The planner's validated inputs: every unit resolved, every default applied, and the
//! error that names the field (TOML path) at fault. [`validate`] checks a
//! [`RoceConfig`] in a fixed order (model, frames, topology, tiers, buffer, SONiC pattern,
//! operator settings), so the first error reported is always the same one.
//!
//! Left out: anything derived from the inputs (that is the plan's).

use std::collections::BTreeMap;

use model::ecn::Red;
use model::sonic::{LosslessTrafficPattern, SharedHeadroom, Spectrum};
use serde::Serialize;
use units::{BitRate, Bytes, Length, SimDuration};

use super::config::{LinkConfig, RoceConfig};

/// An input that is missing or wrong: the field (TOML path) and what is expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {msg}")]
pub struct InputError {
    pub field: String,
    pub msg: String,
}

pub(super) fn err<T>(field: &str, msg: impl Into<String>) -> Result<T, InputError> {
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
    /// Lanes of the tier's ports: 1, 2, 4 or 8 (4 unless given; the SONiC model only).
    pub lanes: u32,
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
    /// The shared headroom pool settings (both 0: off); the SONiC model only.
    pub shared_headroom: SharedHeadroom,
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
    let model = headroom_model(c)?;
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
    let topology = topology_of(c)?;
    let tiers = tiers_of(c, matches!(topology, Topo::FatTree { .. }), model)?;
    let buffer = buffer_of(c, model)?;
    let sonic_pattern = sonic_pattern_of(c, model)?;
    let shared_headroom = shared_headroom_of(c)?;
    let operator = operator_of(c)?;
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
        buffer,
        sonic_pattern,
        shared_headroom,
        operator,
    })
}

/// `model` (default ieee) and, for the SONiC model, its `asic`.
fn headroom_model(c: &RoceConfig) -> Result<HeadroomModel, InputError> {
    Ok(match c.model.as_deref().unwrap_or("ieee") {
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
    })
}

/// A three-tier fat tree (`fat_tree_k`) or a leaf-spine (`leaves`, `spines`,
/// `hosts_per_leaf`), never both.
fn topology_of(c: &RoceConfig) -> Result<Topo, InputError> {
    Ok(match (c.fat_tree_k, c.leaves, c.spines, c.hosts_per_leaf) {
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
    })
}

/// The lane counts SONiC ports have (`PORT|lanes` lists 1, 2, 4 or 8 SerDes lanes).
pub const LANE_COUNTS: [u32; 4] = [1, 2, 4, 8];

/// A lane count given in `field`, checked; the SONiC model only (the IEEE worst case has no
/// lane term).
fn lanes_in(field: &str, v: Option<u32>, model: HeadroomModel) -> Result<Option<u32>, InputError> {
    match v {
        None => Ok(None),
        Some(_) if model == HeadroomModel::Ieee => err(field, "lanes apply to the sonic model only (the IEEE 802.1Qbb worst case has no lane term)"),
        Some(n) if !LANE_COUNTS.contains(&n) => err(field, format!("{n}: expected 1, 2, 4 or 8 lanes")),
        Some(n) => Ok(Some(n)),
    }
}

/// The tiers' speeds, longest cables and lanes: host-leaf and leaf-spine always,
/// spine-core in a fat tree (`three`) only. A tier's `lanes` overrides the top-level one.
fn tiers_of(c: &RoceConfig, three: bool, model: HeadroomModel) -> Result<Vec<TierInput>, InputError> {
    let lanes = lanes_in("lanes", c.lanes, model)?.unwrap_or(4);
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
                let mut t = tier_input(key, name, l)?;
                t.lanes = lanes_in(&format!("{key}.lanes"), l.lanes, model)?.unwrap_or(lanes);
                tiers.push(t);
            }
        }
    }
    Ok(tiers)
}

/// One tier's `KEY.speed` and `KEY.cable` (4 lanes; [`tiers_of`] sets them).
fn tier_input(key: &str, name: &'static str, l: &LinkConfig) -> Result<TierInput, InputError> {
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
    Ok(TierInput { tier: name, speed, cable, lanes: 4 })
}

/// `[buffer]`: the total, the cell (the ASIC's under the SONiC model), reserved and alpha.
fn buffer_of(c: &RoceConfig, model: HeadroomModel) -> Result<BufferInput, InputError> {
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
    Ok(BufferInput { total, cell, reserved, dynamic_th })
}

/// `[sonic]`: SONiC's LOSSLESS_TRAFFIC_PATTERN (its defaults where not given); the SONiC
/// model only.
fn sonic_pattern_of(c: &RoceConfig, model: HeadroomModel) -> Result<LosslessTrafficPattern, InputError> {
    let s = c.sonic.clone().unwrap_or_default();
    if model == HeadroomModel::Ieee && c.sonic.is_some() {
        return err("sonic", "the [sonic] settings (traffic pattern, shared headroom pool) apply to the sonic model only");
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
    Ok(sonic_pattern)
}

/// `[sonic]` `over_subscribe_ratio` and `shared_headroom_pool_xoff`: the shared headroom
/// pool (off when neither is given; [`sonic_pattern_of`] has already refused `[sonic]`
/// under the IEEE model).
fn shared_headroom_of(c: &RoceConfig) -> Result<SharedHeadroom, InputError> {
    let s = c.sonic.clone().unwrap_or_default();
    let over_subscribe_ratio = match s.over_subscribe_ratio {
        None => 0.0,
        Some(r) if r.is_finite() && r > 0.0 => r,
        Some(r) => return err("sonic.over_subscribe_ratio", format!("{r}: expected a ratio above 0 (leave it out for no shared headroom pool)")),
    };
    let f = "sonic.shared_headroom_pool_xoff";
    let pool_xoff = parse::<Bytes>(f, &s.shared_headroom_pool_xoff, "a size such as 2MiB")?.unwrap_or(Bytes(0));
    if s.shared_headroom_pool_xoff.is_some() && pool_xoff.0 == 0 {
        return err(f, "expected a positive size (leave it out for no configured pool)");
    }
    Ok(SharedHeadroom { over_subscribe_ratio, pool_xoff })
}

/// `[operator]`: the settings to evaluate instead of the plan's.
fn operator_of(c: &RoceConfig) -> Result<Operator, InputError> {
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
    Ok(Operator {
        headroom: parse::<Bytes>("operator.headroom", &o.headroom, "a size such as 100KB")?,
        ecn,
        pfc_watchdog: o.pfc_watchdog,
        storm_protection: o.storm_protection,
        lossless: o.lossless.clone(),
        switch_dscp_map: dscp_map("operator.switch_dscp_map", &o.switch_dscp_map)?,
        nic_dscp_map: dscp_map("operator.nic_dscp_map", &o.nic_dscp_map)?,
        roce_dscp,
        cnp_dscp,
    })
}
