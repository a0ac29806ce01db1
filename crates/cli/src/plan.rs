//! `fabriclab plan roce`: the RoCEv2 lossless planner (see `plan::roce` for the models and
//! their sources). Inputs come from `--config FILE.toml`, flags, or both: a flag overrides
//! the file's field of the same name. Errors name the flag, or the file and field, and what
//! is expected (exit code 2).
//!
//! `--prove` simulates, per tier, the headroom worst case on one switch: the sender h0 on
//! the tier's speed and longest cable shares the receiver h1 2:1 with h2 for up to 4000
//! packets (so its ingress PG pauses again and again; h1's link is a tenth as fast, so the PG
//! barely drains while its headroom fills) and the rest of the named incast joins at the
//! start; h_rev writes to h0 in a lossy class with random gaps (so PFC
//! frames to h0 wait behind maximum frames at every phase, and h0 is part-way through a
//! frame when a pause arrives), buffers counted
//! in cells with the plan's reserved, alpha, headroom and resume offset, ECN and DCQCN off
//! (PFC alone). The trigger is scaled down (IEEE: static, 8 maximum frames; SONiC: its
//! dynamic threshold over a small pool) so the PGs pause often; headroom does not depend
//! on the trigger level. IEEE: the plan, then one maximum frame less; SONiC: its margin
//! over the simulated peak. The bound's last frame needs a phase some pause cycles lack:
//! IEEE runs try up to PROVE_ATTEMPTS reverse-traffic patterns until one reaches the
//! planned headroom, and run one MTU short with that pattern; if none does, the output
//! says how rare the phase is.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use plan::roce::{self as r, HeadroomModel, LinkConfig, RoceConfig, RoceInput, RocePlan, TierPlan};
use units::SimDuration;

#[derive(Args, Debug)]
pub struct PlanArgs {
    #[command(subcommand)]
    pub cmd: PlanCmd,
}

#[derive(Subcommand, Debug)]
pub enum PlanCmd {
    /// RoCEv2 lossless planner: PFC headroom/XOFF/XON per port type, buffer budget, ECN,
    /// DCQCN, risk flags; --prove simulates the headroom worst case.
    Roce(Box<RoceArgs>),
}

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
    /// Leaf-spine port speed. [leaf_spine.speed]
    #[arg(long, value_name = "RATE")]
    pub leaf_spine_speed: Option<String>,
    /// Longest leaf-spine cable. [leaf_spine.cable]
    #[arg(long, value_name = "LENGTH")]
    pub leaf_spine_cable: Option<String>,
    /// Spine-core port speed (fat tree). [spine_core.speed]
    #[arg(long, value_name = "RATE")]
    pub spine_core_speed: Option<String>,
    /// Longest spine-core cable (fat tree). [spine_core.cable]
    #[arg(long, value_name = "LENGTH")]
    pub spine_core_cable: Option<String>,
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
    ("leaves", "--leaves"),
    ("spines", "--spines"),
    ("hosts_per_leaf", "--hosts-per-leaf"),
    ("fat_tree_k", "--fat-tree-k"),
    ("host_leaf.speed", "--host-leaf-speed"),
    ("host_leaf.cable", "--host-leaf-cable"),
    ("leaf_spine.speed", "--leaf-spine-speed"),
    ("leaf_spine.cable", "--leaf-spine-cable"),
    ("spine_core.speed", "--spine-core-speed"),
    ("spine_core.cable", "--spine-core-cable"),
    ("host_leaf", "--host-leaf-speed/--host-leaf-cable"),
    ("leaf_spine", "--leaf-spine-speed/--leaf-spine-cable"),
    ("spine_core", "--spine-core-speed/--spine-core-cable"),
    ("buffer.total", "--buffer-total"),
    ("buffer.cell", "--cell"),
    ("buffer.reserved", "--reserved"),
    ("buffer.dynamic_th", "--dynamic-th"),
    ("sonic", "--small-packet-percentage/--sonic-lossless-mtu"),
    ("sonic.small_packet_percentage", "--small-packet-percentage"),
    ("sonic.lossless_mtu", "--sonic-lossless-mtu"),
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

fn flag_of(field: &str) -> &'static str {
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
    macro_rules! over {
        ($field:literal, $src:expr, $dst:expr) => {
            if let Some(v) = $src.clone() {
                $dst = Some(v);
                set.push($field);
            }
        };
    }
    over!("model", a.model, c.model);
    over!("asic", a.asic, c.asic);
    over!("mtu", a.mtu, c.mtu);
    over!("port_mtu", a.port_mtu, c.port_mtu);
    over!("lossless_priorities", a.lossless_priorities, c.lossless_priorities);
    over!("incast", a.incast, c.incast);
    over!("nic", a.nic, c.nic);
    over!("short_frames", a.short_frames, c.short_frames);
    over!("interface_delay", a.interface_delay, c.interface_delay);
    over!("leaves", a.leaves, c.leaves);
    over!("spines", a.spines, c.spines);
    over!("hosts_per_leaf", a.hosts_per_leaf, c.hosts_per_leaf);
    over!("fat_tree_k", a.fat_tree_k, c.fat_tree_k);
    for (speed, cable, link, names) in [
        (&a.host_leaf_speed, &a.host_leaf_cable, &mut c.host_leaf, ("host_leaf.speed", "host_leaf.cable")),
        (&a.leaf_spine_speed, &a.leaf_spine_cable, &mut c.leaf_spine, ("leaf_spine.speed", "leaf_spine.cable")),
        (&a.spine_core_speed, &a.spine_core_cable, &mut c.spine_core, ("spine_core.speed", "spine_core.cable")),
    ] {
        if speed.is_some() || cable.is_some() {
            let l = link.get_or_insert_with(LinkConfig::default);
            over!("", speed, l.speed);
            over!("", cable, l.cable);
            set.retain(|f| !f.is_empty());
            if speed.is_some() {
                set.push(names.0);
            }
            if cable.is_some() {
                set.push(names.1);
            }
        }
    }
    if a.buffer_total.is_some() || a.cell.is_some() || a.reserved.is_some() || a.dynamic_th.is_some() {
        let b = c.buffer.get_or_insert_with(Default::default);
        over!("buffer.total", a.buffer_total, b.total);
        over!("buffer.cell", a.cell, b.cell);
        over!("buffer.reserved", a.reserved, b.reserved);
        over!("buffer.dynamic_th", a.dynamic_th, b.dynamic_th);
    }
    if a.small_packet_percentage.is_some() || a.sonic_lossless_mtu.is_some() {
        let s = c.sonic.get_or_insert_with(Default::default);
        over!("sonic.small_packet_percentage", a.small_packet_percentage, s.small_packet_percentage);
        over!("sonic.lossless_mtu", a.sonic_lossless_mtu, s.lossless_mtu);
    }
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
        over!("operator.headroom", a.headroom, o.headroom);
        over!("operator.ecn_kmin", a.ecn_kmin, o.ecn_kmin);
        over!("operator.ecn_kmax", a.ecn_kmax, o.ecn_kmax);
        over!("operator.ecn_pmax", a.ecn_pmax, o.ecn_pmax);
        over!("operator.pfc_watchdog", pfcwd, o.pfc_watchdog);
        over!("operator.storm_protection", storm, o.storm_protection);
        over!("operator.lossless", lossless, o.lossless);
        over!("operator.switch_dscp_map", sw_map, o.switch_dscp_map);
        over!("operator.nic_dscp_map", nic_map, o.nic_dscp_map);
        over!("operator.roce_dscp", a.roce_dscp, o.roce_dscp);
        over!("operator.cnp_dscp", a.cnp_dscp, o.cnp_dscp);
    }
    Ok((c, set, file))
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

// ------------------------------------------------------------------ --prove

/// What one simulated run showed at the pausing port.
#[derive(serde::Serialize, Debug, Clone)]
pub struct Run {
    pub headroom_bytes: u64,
    pub headroom_cells: u64,
    pub lossless_drops: u64,
    pub headroom_overflow_drops: u64,
    pub peak_headroom_cells: u64,
    /// PFC XOFF frames the switch sent to h0, and how long h0 was paused in total.
    pub pfc_frames_to_peer: u64,
    pub peer_paused_ps: u64,
    /// PFC frames sent anywhere, and the longest any sender was paused in total.
    pub pfc_frames_total: u64,
    pub end_ps: u64,
}

/// The proof of one tier.
#[derive(serde::Serialize, Debug, Clone)]
pub struct TierProof {
    pub tier: &'static str,
    pub at_plan: Run,
    /// IEEE: the same case with one maximum frame's cells less.
    pub one_mtu_short: Option<Run>,
    /// IEEE: how often the worst phase can occur: the last frame of the bound starts only if
    /// the PFC frame waits longer than `rev − slack` behind a reverse frame, a window of
    /// `slack` out of the reverse frame's `rev` (both ps).
    pub worst_phase_window_ps: Option<(u64, u64)>,
    /// Reverse-traffic patterns tried (IEEE: until one reaches the bound, at most
    /// PROVE_ATTEMPTS), and the one reported.
    pub attempts: u64,
    /// SONiC: headroom over the simulated need (cells and bytes).
    pub margin_cells: Option<i64>,
    pub margin_bytes: Option<i64>,
    pub scenario: String,
}

/// IEEE: reverse-traffic patterns (seeds of its sizes and gaps) `--prove` tries until the
/// simulated peak reaches the planned headroom; the one-MTU-short run uses the same one.
const PROVE_ATTEMPTS: u64 = 8;

/// Pause cycles `--prove` aims at (a cycle takes about half the headroom's frames plus
/// one): enough for the reverse frame to take the rare phases the bound's last frame needs
/// on most inputs ...
const PROVE_CYCLES: u64 = 900;
/// ... but no more than this many packets from h0 (and as many from h2), to keep a run
/// near a second in a debug build.
const PROVE_MAX_FRAMES: u64 = 4_000;
/// Packets each other sender of the incast sends at the start.
const PROVE_BURST_FRAMES: u64 = 64;
/// The static trigger `--prove` uses with the IEEE plan, in maximum frames.
const PROVE_XOFF_FRAMES: u64 = 8;

/// xorshift64* (Vigna 2016): the reverse traffic's sizes and gaps, fixed by the seed.
fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    x.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

/// The `--prove` scenario for one tier with `headroom_cells` of headroom.
///
/// h0 (the tier's speed and longest cable) and h2 write to h1 for PROVE_CYCLES cycles' packets
/// each, 2:1 on h1's slow port, so h0's PG pauses and resumes again and again; h3..hN join at
/// the start with a burst each (the named incast). h_rev writes to h0 in a lossy class:
/// messages of 4..24 maximum packets and a random tail, with random gaps (about 80% of the
/// link), so the maximum frame a PFC frame waits behind starts at every phase. (Regular
/// reverse frames lock the phase: the XON that resumes h0 waits behind one too, so every
/// pause cycle would see the same residual.) h0 ACKs only every 64 packets and each
/// message's last, so its own ACKs rarely shift its data frames.
pub fn scenario(i: &RoceInput, t: &r::TierInput, p: &TierPlan, headroom_cells: u64, attempt: u64) -> String {
    let n = i.incast as u64;
    let cell = i.buffer.cell.0;
    let frame = r::lossless_frame(i);
    let rev = n + 1;
    let nports = n + 2;
    let resv_cells = i.buffer.reserved.0.div_ceil(cell);
    // IEEE: a static trigger (as planned) scaled down to PROVE_XOFF_FRAMES so h0's PG
    // pauses every few frames, with a pool large enough that alpha*free never falls under
    // it. SONiC: its dynamic threshold over a small pool, so the PGs pause often. Headroom
    // does not depend on the trigger level.
    let fc = frame.cells(i.buffer.cell);
    let trig = resv_cells + PROVE_XOFF_FRAMES * fc;
    let th = i.buffer.dynamic_th;
    let (xoff, shared) = match i.model {
        HeadroomModel::Ieee => (format!("{}B", trig * cell), (n + 2) * trig + ((2 * trig) << (-th).max(0))),
        HeadroomModel::Sonic(_) => ("dynamic".to_string(), (128 * 1024u64).max(8 * n * frame.0).div_ceil(cell)),
    };
    let total = nports * 8 * resv_cells + nports * headroom_cells + shared;
    let speed = format!("{}Mbps", t.speed.0 / 1_000_000);
    let cable = format!("{}mm", t.cable.mm().max(1));
    let mut nodes = vec![];
    let mut links = vec![];
    // h1's link is slow (a tenth of the tier's speed, at least 10 Gb/s), so h0's PG hardly
    // drains while its headroom fills: the simulator frees a departing packet's headroom
    // cells first, and the worst case is the one with nothing leaving.
    let slow_mbps = (t.speed.0 / 10_000_000).max(10_000);
    let slow = format!("{slow_mbps}Mbps");
    for h in 0..nports {
        nodes.push(format!("  {{ name = \"h{h}\", kind = \"host\" }},"));
        let (sp, c) = match h {
            0 => (&speed, cable.as_str()),
            1 => (&slow, "2m"),
            _ => (&speed, "2m"),
        };
        // The simulator's links carry only a propagation delay: h0's carries the cable's
        // plus the planned interface delay, so the worst case has the plan's window.
        let delay = if h == 0 && i.interface_delay.ps() > 0 {
            let d = units::propagation(t.cable, units::DEFAULT_PROPAGATION_PS_PER_M).ps() + i.interface_delay.ps();
            format!("delay = \"{d}ps\"")
        } else {
            format!("cable = \"{c}\"")
        };
        links.push(format!("  {{ a = \"h{h}\", b = \"s0:{h}\", speed = \"{sp}\", {delay} }},"));
    }
    // Whole packets only: no short tail frames.
    let frames = (PROVE_CYCLES * (headroom_cells / fc / 2 + 1)).min(PROVE_MAX_FRAMES);
    let a = frames * i.mtu.0;
    let b = PROVE_BURST_FRAMES * i.mtu.0;
    let senders: Vec<String> = (3..=n).map(|h| h.to_string()).collect();
    let burst = if senders.is_empty() {
        String::new()
    } else {
        format!("\n[[traffic]]\nkind = \"incast\"\nreceiver = 1\nsenders = [{}]\nsize = \"{b}B\"\ndscp = 26\n", senders.join(", "))
    };
    // Reverse messages until h0 and h2 are done (2 x `frames` packets at h1's speed, plus the burst).
    let pkt = units::serialization(model::frame::wire(frame), t.speed).ps();
    let end = (2 * frames + (n - 2) * PROVE_BURST_FRAMES) * pkt * t.speed.0.div_ceil(slow_mbps * 1_000_000);
    let mut reverse = String::new();
    let (mut at, mut x) = (0u64, 0x9e37_79b9_7f4a_7c15 ^ t.speed.0 ^ t.cable.mm() ^ attempt.wrapping_mul(0xd1b5_4a32_d192_ed03));
    while at < end {
        let k = 4 + xorshift(&mut x) % 21;
        let tail = 1 + xorshift(&mut x) % i.mtu.0;
        reverse.push_str(&format!("\n[[traffic]]\nkind = \"message\"\nsrc = {rev}\ndst = 0\nsize = \"{}B\"\nat = \"{at}ps\"\ndscp = 0\n", k * i.mtu.0 + tail));
        at += k * pkt + xorshift(&mut x) % (16 * pkt);
    }
    format!(
        r#"[scenario]
name = "plan-roce-prove-{tier}"
seed = 1

[topology]
kind = "explicit"
nodes = [
{nodes}
  {{ name = "s0", kind = "switch", ports = {nports} }},
]
links = [
{links}
]

{sections}
[[traffic]]
kind = "message"
src = 0
dst = 1
size = "{a}B"
at = "0us"
dscp = 26

[[traffic]]
kind = "message"
src = 2
dst = 1
size = "{a}B"
at = "0us"
dscp = 26
{burst}{reverse}"#,
        tier = t.tier,
        nodes = nodes.join("\n"),
        links = links.join("\n"),
        sections = crate::prove::PfcOnly {
            mtu: i.mtu.0,
            timeout: 8,
            total: total * cell,
            cell,
            dynamic_th: i.buffer.dynamic_th,
            reserved: resv_cells * cell,
            headroom: headroom_cells * cell,
            xoff: &xoff,
            xon_offset: p.xon_offset_bytes.div_ceil(cell) * cell,
            ack_every: Some(64),
        }
        .sections(),
    )
}

fn simulate(src: &str) -> Result<Run, String> {
    let w = scenario::load_str("plan-roce-prove.toml", src).map_err(|e| format!("--prove: the generated scenario: {e}"))?;
    let (_sim, rep) = report::run(&w, false);
    let s0_h0 = rep.ports.iter().find(|p| p.node == "s0" && p.peer.starts_with("h0:")).ok_or("--prove: no switch port to h0")?;
    let h0 = rep.ports.iter().find(|p| p.node == "h0").ok_or("--prove: no port of h0")?;
    Ok(Run {
        headroom_bytes: s0_h0.headroom_cells * w.params.buffer.cell.0,
        headroom_cells: s0_h0.headroom_cells,
        lossless_drops: rep.totals.lossless_drops,
        headroom_overflow_drops: rep.totals.drops_by_cause.iter().find(|(c, _)| c == "headroom-overflow").map_or(0, |c| c.1),
        peak_headroom_cells: s0_h0.peak_headroom_cells,
        pfc_frames_to_peer: s0_h0.pfc_tx[3],
        peer_paused_ps: h0.paused_ps[3],
        pfc_frames_total: rep.totals.pfc_frames,
        end_ps: rep.end_ps,
    })
}

/// Simulates every tier's worst case (`--prove`).
pub fn prove(i: &RoceInput, p: &RocePlan) -> Result<Vec<TierProof>, String> {
    let frame_cells = r::lossless_frame(i).cells(i.buffer.cell);
    i.tiers
        .iter()
        .zip(&p.tiers)
        .map(|(t, tp)| {
            // IEEE: the bound's last frame needs a rare phase; try reverse patterns until
            // one reaches the planned headroom (or keep the one that came closest).
            let tries = if i.model == HeadroomModel::Ieee { PROVE_ATTEMPTS } else { 1 };
            let mut best: Option<(u64, String, Run)> = None;
            for k in 0..tries {
                let src = scenario(i, t, tp, tp.headroom_cells, k);
                let run = simulate(&src)?;
                let reached = run.peak_headroom_cells >= run.headroom_cells;
                if best.as_ref().is_none_or(|b| run.peak_headroom_cells > b.2.peak_headroom_cells) {
                    best = Some((k, src, run));
                }
                if reached {
                    break;
                }
            }
            let (attempt, src, at_plan) = best.expect("at least one attempt");
            let (one_mtu_short, margin_cells) = match i.model {
                HeadroomModel::Ieee => (Some(simulate(&scenario(i, t, tp, tp.headroom_cells.saturating_sub(frame_cells), attempt))?), None),
                HeadroomModel::Sonic(_) => (None, Some(tp.headroom_cells as i64 - at_plan.peak_headroom_cells as i64)),
            };
            let worst_phase_window_ps = (i.model == HeadroomModel::Ieee).then(|| {
                let d = model::headroom::ieee_8021qbb(&r::ieee_input(i, t));
                let p = units::serialization(model::frame::wire(r::lossless_frame(i)), t.speed).ps();
                let rev = units::serialization(model::frame::wire(r::reverse_frame(i)), t.speed).ps();
                ((d.window.ps() - (d.frames - 1) * p).min(rev), rev)
            });
            Ok(TierProof {
                tier: t.tier,
                worst_phase_window_ps,
                attempts: attempt + 1,
                at_plan,
                one_mtu_short,
                margin_cells,
                margin_bytes: margin_cells.map(|m| m * i.buffer.cell.0 as i64),
                scenario: src,
            })
        })
        .collect()
}

// ------------------------------------------------------------------ output

fn us(ps: u64) -> String {
    format!("{:.3} us", SimDuration(ps).as_us_f64())
}

fn kb(b: u64) -> String {
    format!("{b} B ({:.1} KiB)", b as f64 / 1024.0)
}

fn print_plan(i: &RoceInput, p: &RocePlan) {
    let topo = match i.topology {
        r::Topo::LeafSpine { leaves, spines, hosts_per_leaf } => format!("leaf-spine: {leaves} leaves x {spines} spines, {hosts_per_leaf} hosts per leaf"),
        r::Topo::FatTree { k } => format!("fat tree k = {k}"),
    };
    println!("RoCEv2 lossless plan ({topo})");
    println!(
        "  model {}; path MTU {} B (lossless frame {} B, reverse frame {} B); buffer {} in {} B cells, reserved {} B per PG, alpha 2^{}; {} lossless priorit{}; incast {}:1; NIC {:?}; short frames per window {}",
        p.model,
        i.mtu.0,
        p.lossless_frame_bytes,
        p.reverse_frame_bytes,
        kb(i.buffer.total.0),
        p.cell_bytes,
        i.buffer.reserved.0,
        i.buffer.dynamic_th,
        i.lossless_priorities,
        if i.lossless_priorities == 1 { "y" } else { "ies" },
        i.incast,
        i.nic,
        i.short_frames
    );
    println!("\nPFC per port type (both ends of a tier's links alike)");
    for t in &p.tiers {
        println!(
            "  {:<10} {:>6} Gb/s, {:>6} m: headroom (SONiC xoff) {} = {} cells; XOFF trigger {}; XON {} below it; PG size {}",
            t.tier,
            t.speed_gbps,
            t.cable_m,
            kb(t.headroom_bytes),
            t.headroom_cells,
            t.trigger,
            kb(t.xon_offset_bytes),
            kb(t.pg_size_bytes)
        );
        for x in &t.terms {
            let time = x.time_ps.map_or(String::new(), |ps| format!("{:>11.2} ns", ps as f64 / 1000.0));
            println!("      {:<72} {:>14} {:>12.1} B   [{}]", x.name, time, x.bytes, x.source);
        }
        if let (Some(f), Some(a)) = (t.frames, t.all_short_cells) {
            println!("      = {f} maximum frames; if every frame in the window were short (64 B), {a} cells would be needed");
        }
    }
    println!("\nLossless buffer against the budget");
    for b in &p.budgets {
        let ports: Vec<String> = b.ports.iter().map(|(t, n)| format!("{n} {t}")).collect();
        println!(
            "  {:<11} x{:<4} ports {}: reserved {} + headroom {} of {} ({:.1}%), shared left {}",
            b.role,
            b.switches,
            ports.join(" + "),
            kb(b.reserved_bytes),
            kb(b.headroom_bytes),
            kb(b.total_bytes),
            100.0 * b.headroom_share,
            kb(b.shared_bytes)
        );
    }
    println!("\nECN (lossless queue, RED at egress)");
    println!("  Kmin {}  Kmax {}  Pmax {}", kb(p.ecn.kmin_bytes), kb(p.ecn.kmax_bytes), p.ecn.pmax);
    println!("  why: {}", p.ecn.reason);
    println!("  PFC fires at an egress queue of {}", kb(p.ecn.pfc_queue_bytes));
    println!("\nDCQCN starting parameters ({})", p.dcqcn.preset);
    for (n, v, why) in &p.dcqcn.reasons {
        println!("  {n:<18} {v:>14}  {why}");
    }
    println!("\nRisks");
    for x in &p.risks {
        println!("  [{}] {} ({}): {}", if x.fired { "FIRED" } else { " ok  " }, x.title, x.evaluated, x.detail);
    }
}

fn print_proof(i: &RoceInput, proofs: &[TierProof]) {
    println!(
        "\n--prove: one switch; h0 on the tier's speed and longest cable and h2 write 2:1 to h1 on a slow link (h0's PG barely drains while its headroom fills), the rest of the {}:1 incast joins with a burst; lossy messages back to h0 at random sizes and gaps (~80% of its link); PFC alone (no ECN/DCQCN); {}",
        i.incast,
        match i.model {
            HeadroomModel::Ieee => format!("static XOFF at {PROVE_XOFF_FRAMES} maximum frames"),
            HeadroomModel::Sonic(_) => "SONiC's dynamic threshold".into(),
        }
    );
    for pr in proofs {
        let a = &pr.at_plan;
        println!(
            "  {:<10} plan headroom {} cells: lossless drops {}, peak headroom {} of {} cells; PFC to h0 {} times, h0 paused {} in total (run {}){}",
            pr.tier,
            a.headroom_cells,
            a.lossless_drops,
            a.peak_headroom_cells,
            a.headroom_cells,
            a.pfc_frames_to_peer,
            us(a.peer_paused_ps),
            us(a.end_ps),
            if pr.attempts > 1 { format!("; reverse-traffic pattern {} of up to {PROVE_ATTEMPTS}", pr.attempts) } else { String::new() }
        );
        if let Some(s) = &pr.one_mtu_short {
            println!(
                "  {:<10} one MTU short ({} cells): lossless drops {} ({} headroom overflow), peak {} cells",
                "", s.headroom_cells, s.lossless_drops, s.headroom_overflow_drops, s.peak_headroom_cells
            );
        }
        if let Some((slack, rev)) = pr.worst_phase_window_ps {
            if pr.at_plan.peak_headroom_cells < pr.at_plan.headroom_cells {
                println!(
                    "  {:<10} the bound's last frame needs the PFC frame to wait behind a reverse frame that started at most {:.2} ns before XOFF (a {:.1}% window of its {:.2} ns): not met in {} pause cycles of {} reverse-traffic patterns here",
                    "",
                    slack as f64 / 1000.0,
                    100.0 * slack as f64 / rev as f64,
                    rev as f64 / 1000.0,
                    pr.at_plan.pfc_frames_to_peer,
                    pr.attempts
                );
            }
        }
        if let (Some(c), Some(b)) = (pr.margin_cells, pr.margin_bytes) {
            println!("  {:<10} SONiC margin over the simulated need: {c} cells ({b} B)", "");
        }
    }
}

pub fn run(a: PlanArgs) -> ExitCode {
    let PlanCmd::Roce(a) = a.cmd;
    let i = match input(&a) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let p = match r::plan(&i) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {}: {}", flag_of(&e.field), e.msg);
            return ExitCode::from(2);
        }
    };
    let proofs = if a.prove {
        match prove(&i, &p) {
            Ok(v) => Some(v),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(1);
            }
        }
    } else {
        None
    };
    if a.json {
        let mut v = serde_json::json!({ "input": i, "plan": p });
        if a.explain {
            v["explain"] = serde_json::json!(r::explain(&i, &p));
        }
        if let Some(pr) = &proofs {
            v["prove"] = serde_json::json!(pr);
        }
        println!("{}", serde_json::to_string_pretty(&v).expect("serialisable"));
        return ExitCode::SUCCESS;
    }
    print_plan(&i, &p);
    if let Some(pr) = &proofs {
        print_proof(&i, pr);
    }
    if a.explain {
        println!("\nFormulas and sources:");
        for l in r::explain(&i, &p) {
            println!("  - {l}");
        }
    }
    ExitCode::SUCCESS
}
