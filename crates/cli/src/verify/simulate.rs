//! `verify --simulate`: builds the scenario (`plan::verify::simulate`), writes it for
//! `--emit-scenario`, runs it on the engine and says what it showed on the configuration's
//! names: drops by cause and by port, PFC frames sent and time paused per port, the peak
//! headroom each lossless ingress used. Read from the engine's report
//! (`report::Report`), never re-derived.

use std::fmt::Write;
use std::path::Path;

use serde::Serialize;

use plan::verify::simulate::{build, SimOptions, Simulation};
use plan::verify::{Input, Options};

/// One port with drops or pauses: a switch port (`switch`, `port` are SONiC's names) or a
/// host NIC (`switch` empty, `port` the host).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PortOutcome {
    pub switch: String,
    pub port: String,
    /// The lossless profile simulated on it.
    pub profile: Option<String>,
    pub drops: Vec<(String, u64)>,
    /// PFC frames this port sent (it paused its peer), over all priorities.
    pub pfc_sent: u64,
    /// Time this port was paused by its peer, summed over priorities (ps).
    pub paused_ps: u64,
    pub peak_headroom_bytes: u64,
    pub headroom_bytes: u64,
}

/// The run's outcome.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Outcome {
    /// Packets the lossless classes lost (the report's `lossless_drops`).
    pub lossless_drops: u64,
    pub drops_by_cause: Vec<(String, u64)>,
    pub pfc_frames: u64,
    pub ecn_marks: u64,
    pub flows: usize,
    pub flows_completed: usize,
    pub end_ps: u64,
    /// Ports with drops or pauses, in port order.
    pub ports: Vec<PortOutcome>,
}

/// The outcome of `rep`, a run of `sim`'s scenario with cell size `cell` (bytes).
pub fn outcome(sim: &Simulation, rep: &report::Report, cell: u64) -> Outcome {
    let mut ports = vec![];
    for p in &rep.ports {
        let pfc_sent: u64 = p.pfc_tx.iter().sum();
        let paused_ps: u64 = p.paused_ps.iter().sum();
        let drops: Vec<(String, u64)> = p.drops.iter().filter(|(_, n)| *n > 0).cloned().collect();
        if drops.is_empty() && pfc_sent == 0 && paused_ps == 0 {
            continue;
        }
        let (switch, port, profile) = match sim.ports.iter().find(|s| s.node == p.node && s.index == p.port) {
            Some(s) => (s.switch.clone(), s.port.clone(), s.profile.clone()),
            None => (String::new(), p.node.clone(), None),
        };
        ports.push(PortOutcome {
            switch,
            port,
            profile,
            drops,
            pfc_sent,
            paused_ps,
            peak_headroom_bytes: p.peak_headroom_cells * cell,
            headroom_bytes: p.headroom_cells * cell,
        });
    }
    Outcome {
        lossless_drops: rep.totals.lossless_drops,
        drops_by_cause: rep.totals.drops_by_cause.iter().filter(|(_, n)| *n > 0).cloned().collect(),
        pfc_frames: rep.totals.pfc_frames,
        ecn_marks: rep.totals.ecn_marks,
        flows: rep.flows.count,
        flows_completed: rep.flows.completed,
        end_ps: rep.end_ps,
        ports,
    }
}

/// The simulation and its outcome, as `--json` prints them.
#[derive(Debug, Serialize)]
pub struct SimResult {
    #[serde(flatten)]
    pub sim: Simulation,
    pub outcome: Outcome,
    /// The headroom worst case per port type ([`super::headroom`]).
    pub headroom: Vec<super::headroom::WorstCase>,
}

impl SimResult {
    /// Packets lost in a lossless class, in the incast and the headroom worst cases.
    pub fn lossless_drops(&self) -> u64 {
        self.outcome.lossless_drops + self.headroom.iter().map(|h| h.lossless_drops).sum::<u64>()
    }
}

/// Builds, emits (to `emit`) and runs the scenario of `input`. Errors: unreadable input
/// (exit 2) or a scenario the engine refuses (a bug here, also exit 2).
pub fn simulate(input: &Input, opts: &Options, emit: Option<&Path>) -> Result<SimResult, String> {
    let sim = build(input, opts, &SimOptions::default()).map_err(|e| e.to_string())?;
    if let Some(p) = emit {
        std::fs::write(p, &sim.scenario).map_err(|e| format!("--emit-scenario {}: {e}", p.display()))?;
    }
    let name = emit.map_or("verify-simulate.toml".to_string(), |p| p.display().to_string());
    let w = scenario::load_str(&name, &sim.scenario).map_err(|e| format!("--simulate: the generated scenario: {e}"))?;
    let (_sim, rep) = report::run_watched(&w, false, &mut crate::progress::CancelOnly);
    if rep.incomplete.is_some() {
        return Err("--simulate: cancelled (Ctrl-C)".into());
    }
    let cell = opts.cell.map_or(1, |c| c.0);
    let outcome = outcome(&sim, &rep, cell);
    let headroom = super::headroom::worst_cases(&sim, opts)?;
    Ok(SimResult { sim, outcome, headroom })
}

/// Picoseconds as microseconds with three decimals.
fn us(ps: u64) -> String {
    format!("{}.{:03} us", ps / 1_000_000, ps % 1_000_000 / 1_000)
}

/// The human report of the run.
pub fn text(r: &SimResult) -> String {
    let (s, o) = (&r.sim, &r.outcome);
    let mut t = String::new();
    let _ = writeln!(t, "\nsimulation ({} switch ports, {} hosts; DCQCN {}):", s.ports.len(), s.hosts.len(), s.dcqcn);
    let _ = writeln!(t, "  incast: {} -> {}", s.senders.join(", "), s.receiver);
    let _ = writeln!(t, "  flows: {} of {} completed; simulated {}", o.flows_completed, o.flows, us(o.end_ps));
    let causes =
        if o.drops_by_cause.is_empty() { "none".to_string() } else { o.drops_by_cause.iter().map(|(c, n)| format!("{n} {c}")).collect::<Vec<_>>().join(", ") };
    let _ = writeln!(t, "  drops: {causes} ({} in lossless classes); {} PFC frames, {} ECN marks", o.lossless_drops, o.pfc_frames, o.ecn_marks);
    for p in &o.ports {
        let name = if p.switch.is_empty() { format!("host {}", p.port) } else { format!("{} {}", p.switch, p.port) };
        let profile = p.profile.as_ref().map_or(String::new(), |n| format!(" (profile {n})"));
        let mut what = vec![];
        if !p.drops.is_empty() {
            what.push(format!("dropped {}", p.drops.iter().map(|(c, n)| format!("{n} {c}")).collect::<Vec<_>>().join(", ")));
        }
        if p.pfc_sent > 0 {
            what.push(format!("sent {} PFC frames, peak headroom {} of {} B", p.pfc_sent, p.peak_headroom_bytes, p.headroom_bytes));
        }
        if p.paused_ps > 0 {
            what.push(format!("paused {}", us(p.paused_ps)));
        }
        let _ = writeln!(t, "  {name}{profile}: {}", what.join("; "));
    }
    for n in &s.notes {
        let _ = writeln!(t, "  note: {n}");
    }
    let _ = writeln!(t, "\nheadroom worst case (plan roce --prove's scenario on one switch, per lossless port type):");
    for h in &r.headroom {
        let ports = h.ports.iter().map(|(s, p)| format!("{s} {p}")).collect::<Vec<_>>().join(", ");
        let _ = writeln!(
            t,
            "  {} Mb/s, {} m, {} xoff {} B ({ports}): peak {} of {} B, {} lossless drops ({} reverse pattern(s) tried)",
            h.speed_mbps, h.cable_m, h.profile, h.xoff_bytes, h.peak_headroom_bytes, h.headroom_bytes, h.lossless_drops, h.patterns_tried
        );
    }
    if r.lossless_drops() > 0 {
        let _ = writeln!(t, "  lossless drops: the configuration loses RoCE packets in the simulation");
    }
    t
}
