//! What a scenario will cost before anything is built: its peak memory, term by term,
//! and its events, from the shape of the topology and the volume of its traffic; and
//! the limits ([`Limits`]) a scenario is refused beyond, with an error naming the
//! dominant term, its field and the limit.
//!
//! The checks run twice while compiling: once on the topology section alone, counted
//! without building it (`fabric::topology::Topology::leaf_spine_size`), so that a
//! 65,536-leaf fabric is refused in microseconds; and once with the built topology and
//! the traffic counted without generating it (`workload::Spec::volume` for collectives),
//! before the forwarding tables, the flows and the simulator are allocated.
//!
//! The model:
//! * memory = the process's own baseline + the topology + the scenario's flow specs (a
//!   collective has none: its transfers are generated as the simulator needs them,
//!   `FlowList`) + the simulator's terms from `fabric::sim::footprint` (sizes of what it
//!   stores) + the report's flow records. `--json` output is streamed, not held;
//! * events = two per frame per link (its transmission ends, it arrives), for every data
//!   frame on a path of two links per switch tier and for the ACKs coming back (one per
//!   `ack_every` frames), plus a handful per flow (post, completion, timers). PFC
//!   frames, CNPs and retransmissions are left out. incast128 and perm1024 come within
//!   1 % of the simulator's count; allreduce1024 is 2.7× over, because its ring
//!   neighbours are mostly one switch apart, not two tiers;
//! * the simulated time, for the sample count: the slowest entry's start plus its
//!   bottleneck host's bytes at that host's link rate, plus one local ACK timeout when a
//!   class is lossy (a drop waits for it). Otherwise a lower bound: congestion, DCQCN and
//!   dependencies only lengthen it.
//!
//! `tests/estimate.rs` (crate `fabriclab`) holds the estimate to within 2× of the
//! measured peak RSS on every bench and example.

use fabric::sim::{footprint, SimShape};
use fabric::topology::{NodeKind, Size, Topology};
use units::BitRate;
use workload::{Algorithm, Collective};

use crate::error::{ConfigError, Ctx};
use crate::schema::{ScenarioFile, TopologySection, Traffic};

/// The largest RDMA message: 2^31 bytes, the architectural maximum (a RETH's DMA length
/// is 32 bits; ConnectX reports `max_msg_sz` = 2^`log_max_msg` = 2^31, Linux
/// drivers/infiniband/hw/mlx5/mad.c `props->max_msg_sz = 1 << MLX5_CAP_GEN(mdev,
/// log_max_msg)`). Larger transfers are several messages (NCCL's chunks).
pub const MAX_MESSAGE: u64 = 1 << 31;

/// What the process needs before the scenario adds anything: the binary, the allocator
/// and the standard library's buffers (measured on Linux x86-64: `fabriclab run` of the
/// smallest example peaks at 5.5–6.4 MB in a release build and 14–15 MB in a debug one,
/// whose binary is larger and unoptimised).
const PROCESS_BASELINE: u128 = if cfg!(debug_assertions) { 14 << 20 } else { 6 << 20 };

/// The report's memory per flow: its record (`report::FlowRecords`, 40 B in a vector of
/// exactly the flows' length) and the two per-flow vectors its summaries sort while it
/// is built (completion times and slowdowns, overall and then per traffic entry: 16 B).
/// `report`'s tests hold the record to this.
pub const REPORT_BYTES_PER_FLOW: u128 = 56;

/// How many events the simulator runs per second on the machine the default limit was
/// set on (`docs/speed.md`: 5–15 M/s); used only to say how long a refused run would take.
const EVENTS_PER_SECOND: u128 = 10_000_000;

/// The limits a scenario is checked against before it is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Refuse scenarios whose memory estimate is above this many bytes.
    pub max_memory: u64,
    /// Refuse scenarios whose event estimate is above this.
    pub max_events: u64,
    /// Run anyway: the estimates are only reported.
    pub force: bool,
}

impl Limits {
    /// The default event limit: 10^11 events, two to five hours at this machine's 5–15 M
    /// events/s.
    pub const DEFAULT_MAX_EVENTS: u64 = 100_000_000_000;

    /// 80 % of this machine's physical memory (`MemTotal` of /proc/meminfo; where that
    /// cannot be read, 80 % of 8 GiB, which a refusal then says), and the default event
    /// limit.
    pub fn for_this_machine() -> Limits {
        Limits { max_memory: physical_memory().unwrap_or(8 << 30) / 10 * 8, max_events: Self::DEFAULT_MAX_EVENTS, force: false }
    }

    /// No limits (for tests of the estimate itself).
    pub fn none() -> Limits {
        Limits { max_memory: u64::MAX, max_events: u64::MAX, force: true }
    }

    /// The limits every load of this process is checked against: those set by
    /// [`Limits::set_for_process`] (the command line's flags), else this machine's.
    pub fn for_process() -> Limits {
        *PROCESS_LIMITS.get_or_init(Limits::for_this_machine)
    }

    /// Sets [`Limits::for_process`], once, before the first load (a later call, or one
    /// after a load, is refused).
    pub fn set_for_process(self) -> Result<(), Limits> {
        PROCESS_LIMITS.set(self)
    }
}

/// The limits of this process: set once from the command line, so that every path that
/// loads a scenario (`run`, `compare`'s two sides, a sweep's points, a planner's proof)
/// is checked against the same ones without threading them through each.
static PROCESS_LIMITS: std::sync::OnceLock<Limits> = std::sync::OnceLock::new();

/// Bytes of physical memory (Linux), if known.
pub fn physical_memory() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kb: u64 = s.lines().find_map(|l| l.strip_prefix("MemTotal:"))?.trim().trim_end_matches("kB").trim().parse().ok()?;
    kb.checked_mul(1024)
}

/// One part of the memory estimate: what it is, the field of the scenario that sizes it,
/// and its bytes.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Term {
    pub what: String,
    pub field: String,
    pub bytes: u128,
}

/// A scenario's estimated cost.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Estimate {
    pub memory_terms: Vec<Term>,
    pub events: u128,
    /// The field that sizes the event count (the traffic entry with the most).
    pub events_field: String,
    /// When the last flow should end, at the earliest (`stop_time` when given).
    pub sim_time_ps: u128,
}

impl Estimate {
    /// Total bytes.
    pub fn memory(&self) -> u128 {
        self.memory_terms.iter().map(|t| t.bytes).sum()
    }

    /// The largest memory term.
    pub fn dominant(&self) -> Option<&Term> {
        self.memory_terms.iter().max_by_key(|t| t.bytes)
    }

    /// An error naming `file` when the estimate is beyond `limits`.
    pub fn check_file(&self, file: &str, src: &str, limits: &Limits) -> Result<(), ConfigError> {
        self.check(&Ctx { file, src, base: std::path::Path::new(".") }, limits)
    }

    /// An error when the estimate is beyond `limits` (none with `force`).
    pub(crate) fn check(&self, c: &Ctx, limits: &Limits) -> Result<(), ConfigError> {
        if limits.force {
            return Ok(());
        }
        let mem = self.memory();
        if mem > limits.max_memory as u128 {
            let d = self.dominant().expect("a memory over the limit has terms");
            return Err(c.err(
                &d.field,
                format!(
                    "the scenario needs an estimated {} of memory, above the limit of {} (--max-memory; {}); \
                     most of it is {}: {}. Make it smaller, or raise --max-memory (--force runs it anyway)",
                    human(mem),
                    human(limits.max_memory as u128),
                    if physical_memory().is_some() { "default 80 % of this machine's" } else { "default 80 % of 8 GiB: this machine's memory is unknown" },
                    d.what,
                    human(d.bytes)
                ),
            ));
        }
        if self.events > limits.max_events as u128 {
            return Err(c.err(
                &self.events_field,
                format!(
                    "the scenario needs an estimated {} events (about {} here at {} M events/s), above the limit of {} (--max-events); \
                     most of them come from this traffic. Make it smaller, or raise --max-events (--force runs it anyway)",
                    sci(self.events),
                    duration(self.events / EVENTS_PER_SECOND),
                    EVENTS_PER_SECOND / 1_000_000,
                    sci(limits.max_events as u128)
                ),
            ));
        }
        Ok(())
    }
}

/// The topology section's cost, counted without building it: refuses a fabric whose
/// ports, tables or per-port state alone are beyond the limits. Topology files are read
/// first (their size bounds what they describe).
pub(crate) fn check_topology(c: &Ctx, t: &TopologySection, limits: &Limits) -> Result<(), ConfigError> {
    let (size, field) = match t {
        TopologySection::LeafSpine { leaves, spines, hosts_per_leaf, .. } => {
            let uplinks = crate::topology::uplinks_per_spine_of(c, t)?;
            (fabric::topology::Topology::leaf_spine_size(*leaves, *spines, *hosts_per_leaf, uplinks), "topology.leaves")
        }
        TopologySection::FatTree { k, .. } => (fabric::topology::Topology::fat_tree_size(*k), "topology.k"),
        TopologySection::Explicit { nodes, .. } => {
            let ports = nodes.iter().map(|n| if n.kind == "switch" { n.ports.unwrap_or(0) as u128 } else { n.nics.unwrap_or(1) as u128 }).sum();
            let endpoints = nodes.iter().filter(|n| n.kind == "host").map(|n| n.nics.unwrap_or(1) as u128).sum();
            (Size { nodes: nodes.len() as u128 + endpoints, ports, endpoints }, "topology.nodes")
        }
        TopologySection::File { .. } => return Ok(()),
    };
    // First: beyond 32-bit ids the footprint's products would overflow even u128.
    size.check().map_err(|e| c.err(field, e.to_string()))?;
    let switches = size.nodes - size.endpoints;
    let shape = SimShape { nodes: size.nodes, switches, leaf_switches: switches, ports: size.ports, endpoints: size.endpoints, ..SimShape::default() };
    let e = Estimate { memory_terms: fabric_terms(&size, &shape, field), ..Estimate::default() };
    e.check(c, limits)
}

/// The topology's and the simulator's terms for a fabric of `shape`.
fn fabric_terms(size: &Size, shape: &SimShape, field: &str) -> Vec<Term> {
    let node = (std::mem::size_of::<fabric::topology::Node>() + 16) as u128; // its name
    let port = std::mem::size_of::<fabric::topology::Port>() as u128;
    // The topology is held by the compiled world and copied into the simulator.
    let mut terms = vec![
        Term { what: "the process itself".into(), field: "-".into(), bytes: PROCESS_BASELINE },
        Term {
            what: format!("the topology ({} nodes, {} ports)", size.nodes, size.ports),
            field: field.into(),
            bytes: 2 * (size.nodes * node + size.ports * port),
        },
    ];
    for t in footprint(shape) {
        let what = match t.what {
            "forwarding tables" => format!("forwarding tables ({} switches × {} destinations)", shape.switches, shape.endpoints),
            w => w.to_string(),
        };
        terms.push(Term { what, field: field.into(), bytes: t.bytes });
    }
    terms
}

/// The traffic of one `[[traffic]]` entry, counted.
#[derive(Clone, Copy, Debug, Default)]
struct Volume {
    flows: u128,
    qps: u128,
    bytes: u128,
    /// Transfers of a collective's graph (generated, never held).
    transfers: u128,
    /// A collective's flows the simulator's dependency graph may hold at once.
    window: u128,
    /// Bytes through its busiest host link, and when it starts.
    bottleneck_bytes: u128,
    start_ps: u128,
}

/// Everything: the built topology (with any SHARP aggregation nodes) and the traffic,
/// counted without generating it. `sample`: time series will be recorded.
pub(crate) fn estimate(cfg: &ScenarioFile, topo: &Topology, base: &std::path::Path, sample: bool) -> Estimate {
    let volumes: Vec<Volume> = cfg.traffic.iter().map(|t| volume(t, topo, base)).collect();
    let sum = |f: fn(&Volume) -> u128| volumes.iter().map(f).sum::<u128>();
    let switches = topo.nodes.iter().filter(|n| n.kind == NodeKind::Switch).count() as u128;
    let leaf_switches = topo.nodes.iter().filter(|n| n.kind == NodeKind::Switch && n.tier <= 1).count().max(1) as u128;
    let max_tier = topo.nodes.iter().map(|n| n.tier as u128).max().unwrap_or(1).max(1);
    let host_rate = topo.endpoints.first().map_or(BitRate::from_gbps(100), |&n| topo.port(topo.port_of(n, 0)).rate).0.max(1) as u128;
    let (mtu, ack_every, infiniband) = match (&cfg.roce, &cfg.infiniband, cfg.scenario.technology.as_deref()) {
        (Some(r), _, Some("roce")) | (Some(r), None, _) => (r.mtu.0, r.ack_every, false),
        (_, Some(i), _) => (i.mtu.0, i.ack_every, true),
        _ => (4096, 1, false),
    };
    let mtu = mtu.max(256) as u128;
    // A lossy class may drop; the RC transport then waits one local ACK timeout before
    // it retransmits, which the run's end waits for.
    let lossy_tail = match &cfg.roce {
        Some(r) if !infiniband && cfg.traffic.iter().any(|t| lossy(t, r)) => model::ib::local_ack_timeout(r.timeout.min(31)).ps() as u128,
        _ => 0,
    };
    let sim_time_ps = match cfg.scenario.stop_time {
        Some(s) => s.ps() as u128,
        None => volumes.iter().map(|v| v.start_ps + v.bottleneck_bytes * 8 * 1_000_000_000_000 / host_rate).max().unwrap_or(0) + lossy_tail,
    };
    // Frames that exist at once: at most what the buffers hold (the shared buffers on
    // RoCEv2, every VL's credits on InfiniBand), and never more than the traffic has.
    let buffer_frames = match (&cfg.buffer, infiniband) {
        (Some(b), false) => switches * b.total.0 as u128 / mtu,
        _ => topo.ports.len() as u128 * cfg.infiniband.as_ref().map_or(0, |i| i.vl_buffer.0 as u128 * i.data_vls.max(1) as u128) / mtu,
    };
    let traffic_frames: u128 = volumes.iter().map(|v| v.bytes / mtu + v.flows).sum();
    let buffered_frames = buffer_frames.min(traffic_frames);
    let period = cfg.output.sample_period.ps().max(1) as u128;
    let size = Size::of(topo);
    let shape = SimShape {
        nodes: size.nodes,
        switches,
        leaf_switches,
        ports: size.ports,
        endpoints: size.endpoints,
        flows: sum(|v| v.flows),
        // Flows held as specs are all handed out at the start.
        held_flows: sum(|v| if v.transfers == 0 { v.flows } else { v.window }),
        qps: sum(|v| v.qps),
        buffered_frames,
        samples: if sample { (sim_time_ps / period + 1).min(fabric::sim::MAX_SAMPLES as u128) } else { 0 },
        infiniband,
        pfc_watchdog: cfg.roce.as_ref().is_some_and(|r| r.pfc.watchdog.is_some()),
    };
    let mut memory_terms = memory_terms(&volumes, &size, &shape);
    // Route the memory a flow's share takes in the simulator to the entry with the most.
    let busiest = volumes.iter().enumerate().max_by_key(|(_, v)| v.flows).map(|(i, _)| format!("traffic[{i}]"));
    if let Some(f) = &busiest {
        for t in memory_terms.iter_mut().filter(|t| t.what.starts_with("flows") || t.what.starts_with("queue pairs") || t.field == "traffic") {
            t.field = f.clone();
        }
    }
    if sample {
        for t in memory_terms.iter_mut().filter(|t| t.what.starts_with("time-series")) {
            t.field = if cfg.scenario.stop_time.is_some() { "scenario.stop_time".into() } else { "output.sample_period".into() };
        }
    }
    // Events: two per frame per link, data out and ACKs back, plus a few per flow.
    let links = 2 * max_tier;
    let frames = |v: &Volume| v.bytes / mtu + v.flows;
    debug_assert_eq!(volumes.iter().map(frames).sum::<u128>(), traffic_frames);
    let events_of = |v: &Volume| 2 * links * frames(v) * (ack_every.max(1) as u128 + 1) / ack_every.max(1) as u128 + 6 * v.flows;
    let events = volumes.iter().map(events_of).sum();
    let events_field = volumes.iter().enumerate().max_by_key(|(_, v)| events_of(v)).map_or("traffic".to_string(), |(i, _)| format!("traffic[{i}].size"));
    Estimate { memory_terms, events, events_field, sim_time_ps }
}

/// The memory terms: the world's flow specs (a collective's transfers have none: they
/// are generated as the simulator needs them, `FlowList`), shared with the simulator,
/// its state, and the report.
fn memory_terms(volumes: &[Volume], size: &Size, shape: &SimShape) -> Vec<Term> {
    let mut memory_terms = fabric_terms(size, shape, "topology");
    let running = memory_terms.split_off(2);
    let spec = std::mem::size_of::<fabric::params::FlowSpec>() as u128;
    let mut specs = vec![];
    for (i, v) in volumes.iter().enumerate() {
        if v.flows > 0 && v.transfers == 0 {
            // Entries held as specs have no dependencies (an empty vector owns no memory).
            let bytes = v.flows * spec;
            specs.push(Term { what: format!("traffic[{i}]'s {} flow specs", v.flows), field: format!("traffic[{i}]"), bytes });
        }
    }
    let report = Term { what: "the report's flow records".into(), field: "traffic".into(), bytes: shape.flows * REPORT_BYTES_PER_FLOW };
    memory_terms.extend(specs);
    memory_terms.extend(running);
    memory_terms.push(report);
    memory_terms
}

/// Whether entry `t` runs in a RoCEv2 class without PFC (its DSCP's traffic class is not
/// a lossless priority).
fn lossy(t: &Traffic, r: &crate::schema::RoceSection) -> bool {
    let dscp = match t {
        Traffic::Incast { dscp, .. }
        | Traffic::Permutation { dscp, .. }
        | Traffic::AllToAll { dscp, .. }
        | Traffic::Message { dscp, .. }
        | Traffic::Background { dscp, .. } => *dscp,
        Traffic::Collective(j) => j.dscp,
    };
    let tc = dscp.and_then(|d| r.dscp_to_tc.get(&d.to_string()).copied()).unwrap_or(0);
    !r.lossless_priorities.contains(&tc)
}

/// One entry's traffic, counted from its parameters (hosts and ranks as the compile
/// step will resolve them; an entry the compile step refuses counts as anything).
fn volume(t: &Traffic, topo: &Topology, base: &std::path::Path) -> Volume {
    let hosts = topo.hosts as u128;
    let ps = |d: Option<units::SimDuration>| d.map_or(0, |d| d.ps() as u128);
    match t {
        Traffic::Incast { senders, size, start, stagger, .. } => {
            let n = senders.len() as u128;
            let b = size.0 as u128;
            Volume { flows: n, qps: n, bytes: n * b, bottleneck_bytes: n * b, start_ps: ps(*start) + ps(*stagger) * n, ..Volume::default() }
        }
        Traffic::Permutation { size, start, .. } => {
            let b = size.0 as u128;
            Volume { flows: hosts, qps: hosts, bytes: hosts * b, bottleneck_bytes: b, start_ps: ps(*start), ..Volume::default() }
        }
        Traffic::AllToAll { size, start, .. } => {
            let n = hosts * hosts.saturating_sub(1);
            let b = size.0 as u128;
            Volume { flows: n, qps: n, bytes: n * b, bottleneck_bytes: hosts.saturating_sub(1) * b, start_ps: ps(*start), ..Volume::default() }
        }
        Traffic::Message { size, at, .. } => {
            let b = size.0 as u128;
            Volume { flows: 1, qps: 1, bytes: b, bottleneck_bytes: b, start_ps: at.ps() as u128, ..Volume::default() }
        }
        Traffic::Background { cdf, load, hosts: which, start, duration, .. } => {
            // Poisson arrivals at `load` of the link: load × rate × time bytes per host,
            // in flows of the CDF's mean size (an unreadable CDF is the compile step's
            // error; it counts as 1 KB flows here).
            let n = which.as_ref().map_or(hosts, |h| h.len() as u128);
            let rate = topo.endpoints.first().map_or(0, |&e| topo.port(topo.port_of(e, 0)).rate.0) as u128;
            let per_host = (load.clamp(0.0, 1.0) * (rate * duration.ps() as u128 / 8 / 1_000_000_000_000) as f64) as u128;
            let mean = std::fs::read_to_string(base.join(cdf)).ok().and_then(|t| workload::flowsize::Cdf::parse(&t).ok()).map_or(1000.0, |d| d.mean());
            let flows = n * (per_host as f64 / mean.max(1.0)) as u128 + n;
            Volume { flows, qps: flows, bytes: n * per_host, bottleneck_bytes: per_host, start_ps: ps(*start), ..Volume::default() }
        }
        Traffic::Collective(j) => {
            let nics_per_host = (topo.endpoints.len() as u128).checked_div(hosts).unwrap_or(1).max(1);
            let job_hosts = j.hosts.as_ref().map_or(hosts, |h| h.len() as u128);
            let ranks = j.ranks.map_or(job_hosts * nics_per_host, |r| r as u128).clamp(2, u32::MAX as u128) as u32;
            let op = Collective::parse(&j.op).unwrap_or(Collective::AllReduce);
            let algorithm = match j.algorithm.as_deref() {
                Some("tree") => Algorithm::Tree,
                Some("sharp") => Algorithm::Sharp,
                _ => Algorithm::Ring,
            };
            let mut spec = workload::Spec::new(op, algorithm, ranks, j.size.0);
            spec.channels = j.channels.unwrap_or(spec.channels);
            spec.chunk = j.chunk.map_or(spec.chunk, |b| b.0);
            spec.iterations = j.iterations.unwrap_or(spec.iterations);
            // SHARP's tree has the ranks and at most every switch's aggregation node.
            let switches = topo.nodes.iter().filter(|n| n.kind == NodeKind::Switch).count() as u128;
            let v = spec.volume_with_vertices((algorithm == Algorithm::Sharp).then_some(ranks as u128 + switches));
            let flows = v.transfers + v.joins;
            // What the simulator holds of the graph (`fabric::sim::flows`): a single ring,
            // chain or SHARP tree, its window's steps and the one being made, a stage
            // being a send per connection; jobs of several lanes (channels, the double
            // tree) generate the lanes one after the other, and an all-to-all's join
            // waits on almost every send, so those hold up to an iteration.
            let lanes = spec.channels as u128 * if algorithm == Algorithm::Tree { 2 } else { 1 };
            let window = if op == Collective::AllToAll || lanes > 1 {
                flows.div_ceil(spec.iterations.max(1) as u128)
            } else {
                (spec.window as u128 + 2) * v.connections
            };
            Volume {
                flows,
                qps: v.connections,
                bytes: v.bytes,
                transfers: flows,
                window: window.min(flows),
                bottleneck_bytes: v.bytes / ranks as u128,
                start_ps: ps(j.start),
            }
        }
    }
}

/// Bytes in SI units ("85.9 GB").
pub fn human(b: u128) -> String {
    let units = [
        (1u128, "B"),
        (1_000, "KB"),
        (1_000_000, "MB"),
        (1_000_000_000, "GB"),
        (1_000_000_000_000, "TB"),
        (1_000_000_000_000_000, "PB"),
        (1_000_000_000_000_000_000, "EB"),
    ];
    let (div, unit) = units.iter().rev().find(|(d, _)| b >= *d).copied().unwrap_or((1, "B"));
    if div == 1 {
        format!("{b} B")
    } else {
        format!("{:.1} {unit}", b as f64 / div as f64)
    }
}

/// A large count, readably ("2.6e13").
fn sci(n: u128) -> String {
    if n < 1_000_000 {
        n.to_string()
    } else {
        format!("{:.1e}", n as f64)
    }
}

/// Seconds, readably ("3 h", "41 years").
fn duration(secs: u128) -> String {
    match secs {
        s if s < 120 => format!("{s} s"),
        s if s < 2 * 3600 => format!("{} min", s / 60),
        s if s < 2 * 86_400 => format!("{} h", s / 3600),
        s if s < 2 * 31_557_600 => format!("{} days", s / 86_400),
        s => format!("{} years", s / 31_557_600),
    }
}
