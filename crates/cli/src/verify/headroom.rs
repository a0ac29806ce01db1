//! `verify --simulate`'s headroom worst case: per lossless port type (link speed, cable,
//! profile values; `plan::verify::simulate::PortType`), `plan roce --prove`'s IEEE scenario
//! (`crate::plan::prove::scenario`, reused, not copied) with the configured `xoff` as the
//! headroom: h0 on the port's speed and cable shares a slow receiver with h2 so its PG
//! pauses again and again, the rest of the incast joins, and lossy reverse traffic delays
//! the PFC frames at every phase. Up to `PROVE_ATTEMPTS` reverse patterns, stopping at the
//! first that drops or fills the headroom; the run with the highest peak is kept.
//!
//! The planner inputs it builds: the port's speed and cable for both tiers (`--prove`
//! simulates one), the profile's reserved and `dynamic_th`, the pool `size` as the buffer
//! total (`--prove` sizes its own pool from the headroom), the incast's senders as the
//! incast degree, a two-leaf one-spine topology (the plan needs one; `--prove` does not use
//! it). Left out: the SONiC model's variant of `--prove` (the IEEE one stresses the
//! headroom hardest), ECN and DCQCN (`--prove` runs PFC alone).

use serde::Serialize;

use plan::roce::{self as r, BufferConfig, LinkConfig, RoceConfig};
use plan::verify::simulate::{PortType, Simulation};
use plan::verify::Options;
use units::Bytes;

use crate::plan::prove::{scenario, simulate, PROVE_ATTEMPTS};

/// The worst case of one port type.
#[derive(Debug, Clone, Serialize)]
pub struct WorstCase {
    pub speed_mbps: u64,
    pub cable_m: u64,
    pub profile: String,
    pub xoff_bytes: u64,
    pub ports: Vec<(String, String)>,
    pub headroom_bytes: u64,
    pub peak_headroom_bytes: u64,
    pub lossless_drops: u64,
    pub headroom_overflow_drops: u64,
    pub patterns_tried: u64,
}

/// The planner input of one port type.
fn input(t: &PortType, sim: &Simulation, opts: &Options, cell: u64) -> Result<r::RoceInput, String> {
    let link = LinkConfig { speed: Some(format!("{}Mbps", t.speed_mbps)), cable: Some(format!("{}m", t.cable_m)), lanes: None };
    let c = RoceConfig {
        mtu: Some(format!("{}B", opts.path_mtu.0)),
        incast: Some((sim.senders.len() as u32).max(2)),
        leaves: Some(2),
        spines: Some(1),
        hosts_per_leaf: Some(1),
        host_leaf: Some(link.clone()),
        leaf_spine: Some(link),
        buffer: Some(BufferConfig {
            total: Some(format!("{}B", t.pool)),
            cell: Some(format!("{cell}B")),
            reserved: Some(format!("{}B", t.reserved)),
            dynamic_th: Some(t.dynamic_th),
        }),
        ..RoceConfig::default()
    };
    r::validate(&c).map_err(|e| format!("--simulate: the headroom worst case of profile {}: {}: {}", t.profile, e.field, e.msg))
}

/// Runs the worst case of every port type of `sim`.
pub fn worst_cases(sim: &Simulation, opts: &Options) -> Result<Vec<WorstCase>, String> {
    let cell = opts.cell.map_or(1, |c| c.0);
    let mut out = vec![];
    for t in &sim.port_types {
        let i = input(t, sim, opts, cell)?;
        let p = r::plan(&i).map_err(|e| format!("--simulate: the headroom worst case of profile {}: {}: {}", t.profile, e.field, e.msg))?;
        let headroom_cells = Bytes(t.xoff).cells(Bytes(cell));
        let mut best: Option<(u64, crate::plan::prove::Run)> = None;
        let mut tried = 0;
        for attempt in 0..PROVE_ATTEMPTS {
            tried += 1;
            let run = simulate(&scenario(&i, &i.tiers[0], &p.tiers[0], headroom_cells, attempt))?;
            let done = run.lossless_drops > 0 || run.peak_headroom_cells >= headroom_cells;
            if best.as_ref().is_none_or(|b| (run.lossless_drops, run.peak_headroom_cells) > (b.1.lossless_drops, b.1.peak_headroom_cells)) {
                best = Some((attempt, run));
            }
            if done {
                break;
            }
        }
        let (_, run) = best.expect("at least one attempt");
        out.push(WorstCase {
            speed_mbps: t.speed_mbps,
            cable_m: t.cable_m,
            profile: t.profile.clone(),
            xoff_bytes: t.xoff,
            ports: t.ports.clone(),
            headroom_bytes: run.headroom_bytes,
            peak_headroom_bytes: run.peak_headroom_cells * cell,
            lossless_drops: run.lossless_drops,
            headroom_overflow_drops: run.headroom_overflow_drops,
            patterns_tried: tried,
        });
    }
    Ok(out)
}
