//! `fabriclab design`'s inputs: the flags ([`DesignArgs`]) over a `--superpod` preset, read
//! into a `plan::design::DesignInput`. An error names the flag and what it expects.
//! [`planned`] is the command's answer as the CLI prints it with `--json` and `fabriclab
//! serve` returns it.
//!
//! Left out: the sizing itself (`plan::design`), writing `--emit-scenario` (the CLI).

use std::path::PathBuf;

use clap::Args;
use units::BitRate;

use crate::design::{self as d, Design, DesignInput, Oversubscription, SuperPod};

const AFTER: &str = "\
Examples:
  fabriclab design --superpod h100 --sus 4             NVIDIA's DGX SuperPOD H100, 4 SUs
  fabriclab design --gpus 1024 --nics-per-node 8 --speed 400Gbps --radix 64 \\
                   --rail-optimised --su-nodes 32 --oversubscription 1
  fabriclab design --gpus 16 --radix 8 --emit-scenario small.toml && fabriclab compare small.toml
Defaults without a preset: 1 NIC per node, 400Gbps, radix 64, 1:1, not rail-optimised, no
UFM ports, one port per transceiver module. --superpod h100|b200 sets QM9700 (64 x 400Gbps,
twin-port OSFP: 2 switch ports per module), 32 nodes per SU, 8 rails, rail-optimised, and
4 UFM ports (H100; the B200 tables count none). --explain prints every formula and source.";

/// `fabriclab design` arguments.
#[derive(Args, Debug)]
#[command(after_help = AFTER)]
pub struct DesignArgs {
    /// Start from a DGX SuperPOD's compute-fabric inputs: h100 or b200.
    #[arg(long, value_name = "h100|b200")]
    pub superpod: Option<SuperPod>,
    /// Scalable units (with --superpod, --rail-optimised or --su-nodes).
    #[arg(long, value_name = "N")]
    pub sus: Option<u32>,
    /// Compute endpoints: GPUs, one NIC each.
    #[arg(long, visible_alias = "endpoints", value_name = "N")]
    pub gpus: Option<u64>,
    /// Compute nodes (instead of --gpus).
    #[arg(long, value_name = "N")]
    pub nodes: Option<u64>,
    /// NICs (rails) per node.
    #[arg(long, value_name = "N")]
    pub nics_per_node: Option<u32>,
    /// Port speed of every link (10Gbps..800Gbps).
    #[arg(long, value_name = "RATE")]
    pub speed: Option<String>,
    /// Ports per switch (even, at least 4).
    #[arg(long, value_name = "PORTS")]
    pub radix: Option<u32>,
    /// Leaf oversubscription, down:up bandwidth: 1 (non-blocking), 2, 3:1, 1.5.
    #[arg(long, value_name = "RATIO")]
    pub oversubscription: Option<String>,
    /// Spine oversubscription in three tiers (default 1).
    #[arg(long, value_name = "RATIO")]
    pub spine_oversubscription: Option<String>,
    /// One leaf per rail per SU (`--rail-optimised false` turns a preset's off).
    #[arg(long, visible_alias = "rail-optimized", value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub rail_optimised: Option<bool>,
    /// Nodes per scalable unit; then the nodes must fill whole SUs.
    #[arg(long, value_name = "N")]
    pub su_nodes: Option<u32>,
    /// UFM (subnet manager) ports on the compute fabric; they take node slots in SU 1.
    #[arg(long, value_name = "N")]
    pub ufm_ports: Option<u32>,
    /// Switch ports per transceiver module (2 for twin-port OSFP).
    #[arg(long, value_name = "N")]
    pub switch_ports_per_transceiver: Option<u32>,
    /// NIC ports per transceiver module on a node.
    #[arg(long, value_name = "N")]
    pub node_ports_per_transceiver: Option<u32>,
    /// Print one JSON document instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Also print every formula used, with its numbers and source.
    #[arg(long)]
    pub explain: bool,
    /// Write a scenario file of the designed fabric for `fabriclab run` / `compare`.
    #[arg(long, value_name = "FILE")]
    pub emit_scenario: Option<PathBuf>,
    /// What `run` simulates in the emitted file (`compare` runs both).
    #[arg(long, default_value = "roce", value_parser = ["roce", "infiniband"])]
    pub technology: String,
}

/// The flag that sets a `DesignInput` field.
pub fn flag(input: &str) -> &'static str {
    match input {
        "endpoints" => "--gpus",
        "nodes" => "--nodes",
        "scalable_units" => "--sus",
        "nics_per_node" => "--nics-per-node",
        "speed" => "--speed",
        "radix" => "--radix",
        "leaf_oversubscription" => "--oversubscription",
        "spine_oversubscription" => "--spine-oversubscription",
        "rail_optimised" => "--rail-optimised",
        "su_nodes" => "--su-nodes",
        "ufm_ports" => "--ufm-ports",
        "switch_ports_per_transceiver" => "--switch-ports-per-transceiver",
        "node_ports_per_transceiver" => "--node-ports-per-transceiver",
        _ => "--?",
    }
}

/// "3", "3:1", "1.5" (= 3:2) as down:up.
fn ratio(flag: &str, s: &str) -> Result<Oversubscription, String> {
    let bad = || format!("{flag} {s}: expected a ratio down:up such as 1 (non-blocking), 2, 3:1 or 1.5");
    let int = |t: &str| t.trim().parse::<u32>().map_err(|_| bad());
    if let Some((a, b)) = s.split_once(':') {
        return Ok(Oversubscription { down: int(a)?, up: int(b)? });
    }
    if let Some((whole, frac)) = s.split_once('.') {
        if frac.is_empty() || frac.len() > 3 || !frac.bytes().all(|c| c.is_ascii_digit()) {
            return Err(bad());
        }
        let den = 10u32.pow(frac.len() as u32);
        let num = int(whole)?.checked_mul(den).and_then(|w| w.checked_add(int(frac).ok()?)).ok_or_else(bad)?;
        let g = gcd(num, den);
        return Ok(Oversubscription { down: num / g.max(1), up: den / g.max(1) });
    }
    Ok(Oversubscription { down: int(s)?, up: 1 })
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The design inputs the flags give (a preset first, then every flag given over it).
pub fn input(a: &DesignArgs) -> Result<DesignInput, String> {
    let mut i = match a.superpod {
        Some(p) => DesignInput::superpod(p, a.sus.unwrap_or(0)),
        None => DesignInput::endpoints(0),
    };
    i.endpoints = a.gpus;
    i.nodes = a.nodes;
    i.scalable_units = a.sus;
    if a.gpus.is_none() && a.nodes.is_none() && a.sus.is_none() {
        return Err(match a.superpod {
            Some(_) => "--superpod needs --sus N (scalable units), or --gpus / --nodes".into(),
            None => "give the fabric's size: --gpus N, --nodes N or --sus N (or a --superpod preset)".into(),
        });
    }
    if let Some(n) = a.nics_per_node {
        i.nics_per_node = n;
    }
    if let Some(s) = &a.speed {
        i.speed = s.parse::<BitRate>().map_err(|e| format!("--speed {s}: {e}; expected a rate such as 400Gbps"))?;
    }
    if let Some(r) = a.radix {
        i.radix = r;
    }
    if let Some(o) = &a.oversubscription {
        i.leaf_oversubscription = ratio("--oversubscription", o)?;
    }
    if let Some(o) = &a.spine_oversubscription {
        i.spine_oversubscription = ratio("--spine-oversubscription", o)?;
    }
    if let Some(r) = a.rail_optimised {
        i.rail_optimised = r;
    }
    if a.su_nodes.is_some() {
        i.su_nodes = a.su_nodes;
    }
    if let Some(u) = a.ufm_ports {
        i.ufm_ports = u;
    }
    if let Some(p) = a.switch_ports_per_transceiver {
        i.switch_ports_per_transceiver = p;
    }
    if let Some(p) = a.node_ports_per_transceiver {
        i.node_ports_per_transceiver = p;
    }
    Ok(i)
}

/// The inputs and the design, or the message the CLI prints after `error: ` (exit code 2).
pub fn planned(a: &DesignArgs) -> Result<(DesignInput, Design), String> {
    let i = input(a)?;
    let design = d::design(&i).map_err(|e| format!("{}: {}", flag(e.input), e.msg))?;
    Ok((i, design))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios() {
        let o = |d, u| Ok(Oversubscription { down: d, up: u });
        assert_eq!(ratio("-", "1"), o(1, 1));
        assert_eq!(ratio("-", "3:1"), o(3, 1));
        assert_eq!(ratio("-", "1.5"), o(3, 2));
        assert_eq!(ratio("-", "2.25"), o(9, 4));
        for bad in ["", "x", "1.", "1.2345", "-1", "2:x"] {
            assert!(ratio("--oversubscription", bad).unwrap_err().starts_with("--oversubscription"), "{bad}");
        }
    }
}
