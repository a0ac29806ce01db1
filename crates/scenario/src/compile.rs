//! Loading a scenario file: parse the TOML ([`crate::schema`]), then compile it into a
//! [`World`] in named steps: topology, technology, SHARP aggregation nodes, the fabric's
//! parameters ([`crate::roce`] or [`crate::ib`]), traffic, faults and re-routing.
//!
//! Owns the order of the steps (which decides which error a file with several gets) and
//! the checks that span sections (technology, deadlock timeout, re-route delay). Leaves
//! out each section's own checks and `auto` values: those are the step modules'.

use fabric::lft::Lft;
use fabric::params::{Params, Tech};
use fabric::sim::FaultKind;
use fabric::subnet_manager::ar::ArTable;
use fabric::subnet_manager::{Engine, SmConfig};
use fabric::topology::Topology;
use model::switch_latency::SwitchLatency;
use units::{SimDuration, SimTime};

use crate::error::{ConfigError, Ctx};
use crate::estimate::{Estimate, Limits};
use crate::schema::{Auto, ScenarioFile, Traffic};
use crate::{faults, ib, roce, topology, traffic, World};

/// Parses and validates a scenario file's text; relative paths in it start from `file`'s
/// directory. Refuses scenarios beyond the process's limits ([`Limits::for_process`]).
pub fn load_str(file: &str, src: &str) -> Result<World, ConfigError> {
    load_str_at(file, src, std::path::Path::new(file).parent().unwrap_or(std::path::Path::new(".")))
}

/// [`load_str`] with the directory relative paths start from (a variant's label is not a
/// path).
pub fn load_str_at(file: &str, src: &str, base: &std::path::Path) -> Result<World, ConfigError> {
    load_str_limited(file, src, base, &Limits::for_process())
}

/// [`load_str_at`] against the given limits.
pub fn load_str_limited(file: &str, src: &str, base: &std::path::Path, limits: &Limits) -> Result<World, ConfigError> {
    let cfg = parse(file, src)?;
    compile(&Ctx { file, src, base }, cfg, limits)
}

/// What the file would cost, built only as far as its topology (which is checked against
/// the process's limits first); an error when it does not compile that far.
pub fn estimate_str(file: &str, src: &str, base: &std::path::Path, sample: bool) -> Result<Estimate, ConfigError> {
    let c = Ctx { file, src, base };
    let cfg = parse(file, src)?;
    crate::estimate::check_topology(&c, &cfg.topology, &Limits::for_process())?;
    let (topo, layout) = topology::compile(&c, &cfg.topology)?;
    let tech = technology(&c, &cfg)?;
    let (topo, _) = sharp_nodes(&c, &cfg.traffic, tech, topo, layout.is_some())?;
    Ok(crate::estimate::estimate(&cfg, &topo, base, sample))
}

/// The TOML parsed into the schema; errors name the line and field.
fn parse(file: &str, src: &str) -> Result<ScenarioFile, ConfigError> {
    let de = toml::Deserializer::new(src);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let mut line = inner.span().map(|s| src[..s.start.min(src.len())].matches('\n').count() + 1);
        let msg = inner.message().to_string();
        // Inside a tagged enum (a traffic entry) the span covers the whole table; narrow
        // it to the line holding the offending bare number.
        if let (Some(l), Some(num)) = (line, msg.strip_prefix("bare number ").and_then(|r| r.split(' ').next())) {
            let needle = format!("= {num}");
            if let Some(off) = src.lines().skip(l - 1).position(|x| x.contains(&needle)) {
                line = Some(l + off);
            }
        }
        ConfigError { file: file.to_string(), line, field: path, msg }
    })
}

/// Reads, parses and validates a scenario file.
pub fn load(path: &std::path::Path) -> Result<World, ConfigError> {
    let file = path.display().to_string();
    let src = std::fs::read_to_string(path).map_err(|e| ConfigError { file: file.clone(), line: None, field: "-".into(), msg: format!("cannot read: {e}") })?;
    load_str(&file, &src)
}

/// What [`crate::roce`] or [`crate::ib`] compiles from its section: the simulator's
/// parameters and what goes with them.
pub(crate) struct FabricParams {
    pub params: Params,
    /// Lossless headroom of each port, in cells (RoCE; zeros on InfiniBand).
    pub headroom_cells: Vec<u64>,
    /// How `auto` values were resolved.
    pub notes: Vec<String>,
    /// InfiniBand: the forwarding tables.
    pub lft: Option<Lft>,
    /// InfiniBand with adaptive routing: the SM's AR groups.
    pub ar: Option<ArTable>,
    /// InfiniBand routed by a subnet manager: its configuration.
    pub sm: Option<SmConfig>,
    pub switch_latency: SwitchLatency,
}

/// The steps, in the order their errors are reported. The estimate is checked against
/// `limits` twice: on the topology section before the topology is built, and on
/// everything before the forwarding tables, flows and simulator are.
fn compile(c: &Ctx, cfg: ScenarioFile, limits: &Limits) -> Result<World, ConfigError> {
    crate::estimate::check_topology(c, &cfg.topology, limits)?;
    let (topo, layout) = topology::compile(c, &cfg.topology)?;
    let tech = technology(c, &cfg)?;
    let (topo, sharp_notes) = sharp_nodes(c, &cfg.traffic, tech, topo, layout.is_some())?;
    // Time series are recorded only for --out/--html, which the limits cannot know: the
    // check leaves them out, `fabriclab run` checks again with them.
    let estimate = crate::estimate::estimate(&cfg, &topo, c.base, false);
    estimate.check(c, limits)?;
    let FabricParams { mut params, headroom_cells, mut notes, lft, ar, sm, switch_latency } = match tech {
        Tech::Roce => {
            let buffer = cfg.buffer.as_ref().ok_or_else(|| c.err("buffer", "a RoCE fabric needs a [buffer] section (the switch MMU)"))?;
            roce::compile(c, cfg.roce.as_ref().expect("matched"), buffer, &topo)?
        }
        Tech::Infiniband => ib::compile(c, cfg.infiniband.as_ref().expect("matched"), &topo, layout.as_ref(), cfg.scenario.seed)?,
    };
    params.deadlock_timeout = match cfg.scenario.deadlock_timeout {
        Some(d) if d.ps() == 0 => return Err(c.err("scenario.deadlock_timeout", "expected a time above zero")),
        Some(d) => d,
        None => SimDuration::from_ms(1),
    };
    let (mut flows, jobs) = traffic::compile(c, &cfg, &topo, tech)?;
    notes.extend(sharp_notes);
    if let (Some(sm), Some(ib)) = (&sm, &params.ib) {
        if sm.engine == Engine::Dfsssp {
            ib::path_sls(&topo, layout.as_ref(), sm, ib.data_vls, &mut flows);
            notes.push("dfsssp: each flow uses the SL the subnet manager assigned to its path (SL = VL)".into());
        }
    }
    let faults = faults::compile(c, &cfg.faults, &topo, &params, &headroom_cells)?;
    if faults.iter().any(|f| matches!(f.kind, FaultKind::SmFailure { .. })) && sm.is_none() {
        return Err(c.err("faults", "an `sm-failure` needs a subnet manager (an SM routing engine, not `dest-hash`)"));
    }
    let reroute_delay = reroute_delay(c, &cfg, tech, sm.is_some(), !faults.is_empty())?;
    // Either fabric's section: a comparison then shows both sides' uplinks.
    let load_balance_stated = cfg.roce.as_ref().is_some_and(|r| r.load_balancing.is_some() || r.ooo)
        || cfg.infiniband.as_ref().is_some_and(|r| r.adaptive_routing.is_some() || r.ooo);
    Ok(World {
        load_balance_stated,
        estimate,
        layout,
        faults,
        reroute_delay,
        sm,
        name: cfg.scenario.name,
        seed: cfg.scenario.seed,
        topo,
        params,
        lft,
        ar,
        flows: std::sync::Arc::new(flows),
        jobs,
        traffic_kinds: traffic::kinds(&cfg.traffic),
        headroom_cells,
        stop: cfg.scenario.stop_time.map(|d| SimTime(d.ps())),
        sample_period: cfg.output.sample_period,
        top_ports: cfg.output.top_ports,
        notes,
        switch_latency,
    })
}

/// Which fabric the file runs: `scenario.technology`, or the one section it has.
fn technology(c: &Ctx, cfg: &ScenarioFile) -> Result<Tech, ConfigError> {
    Ok(match (cfg.scenario.technology.as_deref(), &cfg.roce, &cfg.infiniband) {
        (Some("roce"), Some(_), _) | (None, Some(_), None) => Tech::Roce,
        (Some("infiniband"), _, Some(_)) | (None, None, Some(_)) => Tech::Infiniband,
        (Some("roce"), None, _) => return Err(c.err("scenario.technology", "\"roce\" needs a [roce] section")),
        (Some("infiniband"), _, None) => return Err(c.err("scenario.technology", "\"infiniband\" needs an [infiniband] section")),
        (Some(other), _, _) => return Err(c.err("scenario.technology", format!("unknown technology `{other}`; expected \"roce\" or \"infiniband\""))),
        (None, Some(_), Some(_)) => {
            return Err(c.err("scenario.technology", "the file has both [roce] and [infiniband]; say which one to run (`fabriclab compare` runs both)"))
        }
        (None, None, None) => return Err(c.err("scenario", "expected a [roce] or an [infiniband] section")),
    })
}

/// The topology with an aggregation node in every switch when a collective uses SHARP
/// (InfiniBand only, and not on a fabric read from a file), and a note saying so.
fn sharp_nodes(c: &Ctx, traffic: &[Traffic], tech: Tech, topo: Topology, from_file: bool) -> Result<(Topology, Vec<String>), ConfigError> {
    let Some(i) = traffic.iter().position(|t| matches!(t, Traffic::Collective(j) if j.algorithm.as_deref() == Some("sharp"))) else {
        return Ok((topo, vec![]));
    };
    let field = format!("traffic[{i}].algorithm");
    if tech == Tech::Roce {
        return Err(c.err(
            &field,
            "SHARP aggregates in InfiniBand switches (aggregation nodes); RoCEv2 has no in-network reduction: use \"ring\" or \"tree\" \
             (`fabriclab compare` runs the RoCEv2 side with ring)",
        ));
    }
    if from_file {
        return Err(c.err(&field, "SHARP needs aggregation nodes in the switches; a fabric read from a topology file has none listed"));
    }
    let t = topo.with_aggregation_nodes().map_err(|e| c.err("topology", e.to_string()))?;
    let first = topo.endpoints.len();
    let note = format!(
        "SHARP: an aggregation node in each of the {} switches (endpoints {first}..{}, on each switch's last port, rate = the sum of its other ports')",
        t.endpoints.len() - first,
        t.endpoints.len() - 1
    );
    Ok((t, vec![note]))
}

/// How long re-routing takes after a fault: `[roce] reroute_delay` (a time) or
/// `[infiniband] reroute_delay` (a time, or "auto": the subnet manager's). Required when
/// there are faults.
fn reroute_delay(c: &Ctx, cfg: &ScenarioFile, tech: Tech, has_sm: bool, has_faults: bool) -> Result<Option<Auto<SimDuration>>, ConfigError> {
    let reroute_delay = match tech {
        Tech::Roce => cfg.roce.as_ref().and_then(|r| r.reroute_delay).map(Auto::Value),
        Tech::Infiniband => cfg.infiniband.as_ref().and_then(|r| r.reroute_delay),
    };
    if matches!(reroute_delay, Some(Auto::Auto)) && !has_sm {
        return Err(c.err("infiniband.reroute_delay", "\"auto\" is the subnet manager's re-sweep time; `dest-hash` routing has no SM: give a time"));
    }
    if has_faults && reroute_delay.is_none() {
        let f = if tech == Tech::Roce { "roce.reroute_delay" } else { "infiniband.reroute_delay" };
        return Err(c.err(f, "the scenario has faults: say how long re-routing takes after one (a time)"));
    }
    Ok(reroute_delay)
}

/// A switch latency the scenario gives as a time (`field`), at most [`MAX_SWITCH_LATENCY`].
pub(crate) fn latency_from_file(c: &Ctx, field: &str, v: SimDuration) -> Result<SwitchLatency, ConfigError> {
    if v > MAX_SWITCH_LATENCY {
        return Err(c.err(field, format!("a switch latency of {v}; expected at most {MAX_SWITCH_LATENCY}")));
    }
    Ok(SwitchLatency { latency: v, source: "set in the scenario file".into(), same_as_infiniband: false })
}

/// The longest switch latency a file may give: 1 ms, a thousand times the slowest
/// published port-to-port figure (`model::switch_latency`: 90–300 ns). It keeps the
/// arithmetic on times in range (the headroom's window adds it to the cable delays).
const MAX_SWITCH_LATENCY: SimDuration = SimDuration::from_ms(1);
