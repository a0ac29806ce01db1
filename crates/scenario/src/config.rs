//! Scenario files (TOML): the schema, and its validation into a compiled [`World`].
//!
//! Every quantity carries its unit (see the `units` crate); unknown fields are errors;
//! every error names the file, the line where it can be located, the field and what is
//! expected. `auto` values are filled from the `model` crate's formulas here, once.

use serde::Deserialize;
use std::collections::BTreeMap;

use model::dcqcn::{CnpScope, CnpTransport, DcqcnParams, DcqcnPreset, IncreaseRule, ReduceTiming};
use model::ecn::Red;
use model::frame::{roce_frame, Encap, Transport, IB_MTUS};
use model::headroom::{ieee_8021qbb, pause_response_quanta, quantum, HeadroomInput};
use model::switch_latency::{EthernetSwitch, SwitchLatency};
use units::{propagation, BitRate, Bytes, Length, SimDuration, SimTime, DEFAULT_PROPAGATION_PS_PER_M};

use fabric::params::{Buffer, FlowSpec, Forwarding, Ib, Params, Pfc, Resume, Sched, Tech, Trigger};
use fabric::topology::{LinkSpec, NodeId, NodeKind, PortId, Topology};

/// An error in a scenario file, with where and what was expected.
#[derive(Debug, thiserror::Error)]
#[error("{file}{}: {field}: {msg}", .line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct ConfigError {
    pub file: String,
    pub line: Option<usize>,
    pub field: String,
    pub msg: String,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    pub scenario: ScenarioSection,
    pub topology: TopologySection,
    pub roce: Option<RoceSection>,
    pub buffer: Option<BufferSection>,
    pub infiniband: Option<IbSection>,
    #[serde(default)]
    pub traffic: Vec<Traffic>,
    #[serde(default)]
    pub faults: Vec<FaultCfg>,
    #[serde(default)]
    pub output: OutputSection,
}

/// Something that goes wrong at a given time, for a given duration (absent: for the rest
/// of the run). Kinds and their fields:
/// * `link-down` / `link-up`: `link`, one end of the link: "node:port" or a host name;
/// * `switch-down`: `node`, a switch: every link of it fails and what it holds is lost;
/// * `stuck-receiver`: `node`, a host: its NIC stops draining what it receives and keeps
///   every lossless priority paused (pause refreshed) — the classic PFC storm source; an
///   InfiniBand HCA stops returning credits instead;
/// * `slow-receiver`: `node`, a host; `drain_rate` (what it absorbs) and `buffer` (its
///   receive buffer; optional on InfiniBand): a RoCE NIC pauses its switch when the
///   backlog nears the buffer's end; an IB HCA returns credits while the buffer has room,
///   then only as fast as it drains;
/// * `misconfigured-port`: `port` ("node:port" or a host name) and one of `pfc = false`
///   (the port neither sends nor honours PFC), `headroom` (its lossless headroom),
///   `dscp_to_tc` (the DSCP → class map the switch applies to what arrives on it);
/// * `sm-failure` (InfiniBand): the master subnet manager dies; `standby` says whether a
///   standby SM runs to take over (after OpenSM's polling timeout × (retries + 1));
/// * `route-override`: switch `node` forwards everything for host `dst` to `port` (one of
///   its own), whatever its tables say: a static route or a stale FIB/LFT entry, which can
///   make a routing loop (RoCEv2 packets then lose one IP TTL per hop).
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct FaultCfg {
    pub kind: String,
    pub at: SimDuration,
    #[serde(default)]
    pub duration: Option<SimDuration>,
    #[serde(default)]
    pub link: Option<String>,
    #[serde(default)]
    pub node: Option<String>,
    #[serde(default)]
    pub port: Option<String>,
    #[serde(default)]
    pub drain_rate: Option<BitRate>,
    #[serde(default)]
    pub buffer: Option<Bytes>,
    #[serde(default)]
    pub pfc: Option<bool>,
    #[serde(default)]
    pub headroom: Option<Bytes>,
    #[serde(default)]
    pub dscp_to_tc: Option<BTreeMap<String, u8>>,
    #[serde(default)]
    pub standby: Option<bool>,
    #[serde(default)]
    pub dst: Option<String>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct ScenarioSection {
    pub name: String,
    pub seed: u64,
    /// Stop at this simulated time; absent: when all traffic has completed.
    pub stop_time: Option<SimDuration>,
    /// "roce" or "infiniband": which section to run. May be left out when the file has
    /// only one of `[roce]` and `[infiniband]`.
    pub technology: Option<String>,
    /// Deadlock detector: a cycle of blocked queues, none of which dequeued for this long,
    /// is reported as a deadlock (default 1 ms).
    #[serde(default)]
    pub deadlock_timeout: Option<SimDuration>,
}

/// The InfiniBand fabric: credit-based flow control per VL, subnet-manager routing.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct IbSection {
    pub mtu: Bytes,
    /// Carry a GRH on every packet (40 bytes; needed only across subnets).
    #[serde(default)]
    pub grh: bool,
    /// Data VLs the ports operate (1..8; VL15 is management).
    pub data_vls: u8,
    /// SL → VL; unlisted SLs map to VL 0.
    #[serde(default)]
    pub sl_to_vl: BTreeMap<String, u8>,
    /// Port tables that differ from `sl_to_vl`: on a switch for an (input, output) port
    /// pair (either port left out: every port), on a host's HCA for its port.
    #[serde(default)]
    pub sl_to_vl_ports: Vec<SlToVlPortCfg>,
    /// VLs served by the high-priority VL arbitration table (strict); the rest share the
    /// low-priority table with equal weights.
    #[serde(default)]
    pub high_priority_vls: Vec<u8>,
    /// Receive buffer per input port and data VL; bounds the credits it advertises.
    pub vl_buffer: Bytes,
    /// Head-of-queue lifetime: "auto" (OpenSM's default), "infinite", or a time.
    pub hoq_lifetime: String,
    /// Head-of-queue lifetime of switch ports that drive a CA: "auto" (OpenSM's
    /// leaf_head_of_queue_lifetime), "infinite", or a time; absent: as `hoq_lifetime`
    /// when that is a time or "infinite", OpenSM's leaf default when it is "auto".
    #[serde(default)]
    pub leaf_hoq_lifetime: Option<String>,
    /// Switch lifetime limit: "auto" (OpenSM's default), "infinite", or a time.
    pub switch_lifetime: String,
    /// Head-of-queue discards in a row before a switch port's VL stalls (1..7; OpenSM's
    /// `vl_stall_count` and `leaf_vl_stall_count` default to 7); absent: 7.
    #[serde(default)]
    pub vl_stall_count: Option<u8>,
    /// Routing: the subnet manager's engine.
    pub routing: String,
    /// Local ACK timeout exponent: 4.096 µs × 2^timeout (NCCL's default is 20).
    pub timeout: u32,
    /// Retransmissions before the QP fails (NCCL's default is 7).
    pub retry_cnt: u32,
    #[serde(default = "one")]
    pub ack_every: u32,
    pub forwarding: Forwarding,
    /// "auto" (the switch generation's datasheet latency for the fabric's speed) or a time.
    pub switch_latency: Auto<SimDuration>,
    /// After a link change, new forwarding tables take effect this long after the fault:
    /// "auto" is the subnet manager's modelled trap delivery, re-sweep, routing and LFT
    /// programming time (needs an SM routing engine); or a time. Required with faults.
    pub reroute_delay: Option<Auto<SimDuration>>,
    /// IB congestion control (Annex A10); absent: off, and congestion spreads by credits.
    pub congestion_control: Option<IbCcCfg>,
}

/// One SL→VL table of a port (pair): `node` a switch or a host NIC name, ports 0-based as
/// everywhere in scenario files.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct SlToVlPortCfg {
    pub node: String,
    #[serde(default)]
    pub in_port: Option<u32>,
    #[serde(default)]
    pub out_port: Option<u32>,
    /// SL → VL; SLs not listed keep the default table's VL.
    pub map: BTreeMap<String, u8>,
}

/// IB congestion control settings (see `ibcc`): every value explicit, as OpenSM ships
/// none.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct IbCcCfg {
    pub threshold: Bytes,
    pub marking_rate: u32,
    pub packet_size: Bytes,
    /// Credit-starved ports mark too (VictimMask); OpenSM's default is false.
    #[serde(default)]
    pub mark_victims: bool,
    pub ccti_increase: u32,
    pub ccti_min: u32,
    pub ccti_timer: SimDuration,
    /// A linear table: CCT[i] = i × cct_step (injection delay in packet times) …
    pub cct_step: f64,
    /// … with this many entries (CCTI_Limit + 1).
    pub cct_entries: u32,
}

#[derive(Deserialize, Debug, Clone, Copy)]
#[serde(deny_unknown_fields)]
pub struct LinkCfg {
    pub speed: BitRate,
    /// Cable length (propagation 5 ns/m) …
    pub cable: Option<Length>,
    /// … or an explicit one-way propagation delay.
    pub delay: Option<SimDuration>,
}

#[derive(Deserialize, Debug)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum TopologySection {
    LeafSpine {
        leaves: u32,
        spines: u32,
        hosts_per_leaf: u32,
        #[serde(default = "one")]
        nics_per_host: u32,
        /// Parallel links from each leaf to each spine (default 1) …
        uplinks_per_spine: Option<u32>,
        /// … or the oversubscription (host bandwidth / uplink bandwidth) they must give.
        oversubscription: Option<f64>,
        host_link: LinkCfg,
        fabric_link: LinkCfg,
    },
    FatTree {
        k: u32,
        host_link: LinkCfg,
        fabric_link: LinkCfg,
    },
    Explicit {
        nodes: Vec<NodeCfg>,
        links: Vec<ExplicitLink>,
    },
    /// A real fabric: `ibnetdiscover` output or an ibsim net file (path relative to the
    /// scenario file). Speeds come from the file; cable length is not in either format.
    File {
        path: String,
        cable: Length,
    },
}

fn one() -> u32 {
    1
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct NodeCfg {
    pub name: String,
    /// "switch" or "host".
    pub kind: String,
    pub ports: Option<u32>,
    pub nics: Option<u32>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct ExplicitLink {
    /// "switch:port" or "host" / "host:nicN".
    pub a: String,
    pub b: String,
    pub speed: BitRate,
    pub cable: Option<Length>,
    pub delay: Option<SimDuration>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct RoceSection {
    pub mtu: Bytes,
    #[serde(default)]
    pub vlan: bool,
    pub lossless_priorities: Vec<u8>,
    /// DSCP → traffic class; unlisted DSCPs map to class 0.
    pub dscp_to_tc: BTreeMap<String, u8>,
    /// Traffic class → priority group; unlisted classes map to PG 0.
    #[serde(default)]
    pub tc_to_pg: Option<BTreeMap<String, u8>>,
    pub cnp_dscp: u8,
    #[serde(default = "one")]
    pub ack_every: u32,
    /// IB local ACK timeout exponent: RTO = 4.096 µs × 2^timeout (IBTA Vol. 1 §9.7.6.1.3).
    pub timeout: u32,
    pub retry_cnt: u32,
    pub forwarding: Forwarding,
    /// Port-to-port pipeline latency of every switch: "auto" (also when left out) or a
    /// time. "auto" is the published figure of `switch` where there is one, otherwise
    /// InfiniBand's figure at the fabric's fastest link speed, said so in every output
    /// (`model::switch_latency`).
    #[serde(default)]
    pub switch_latency: Option<Auto<SimDuration>>,
    /// The switch ASIC, for `switch_latency = "auto"`: one of
    /// `model::switch_latency::EthernetSwitch::NAMES` ("spectrum-4", "tomahawk-5", ...).
    #[serde(default)]
    pub switch: Option<String>,
    #[serde(default)]
    pub strict_queues: Option<Vec<u8>>,
    pub pfc: PfcCfg,
    #[serde(default)]
    pub ecn: Vec<EcnCfg>,
    /// "enqueue" (default) or "dequeue": which queue length ECN marking looks at.
    #[serde(default)]
    pub ecn_marking: Option<String>,
    pub dcqcn: DcqcnCfg,
    /// After a link change, ECMP routes are rebuilt over the remaining links this long
    /// after the fault (routing-protocol convergence). Required when there are faults.
    pub reroute_delay: Option<SimDuration>,
}

/// A value or the keyword `"auto"`.
#[derive(Debug, Clone, Copy)]
pub enum Auto<T> {
    Auto,
    Value(T),
}

impl<'de, T: std::str::FromStr<Err = units::ParseError>> Deserialize<'de> for Auto<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s == "auto" {
            Ok(Auto::Auto)
        } else {
            s.parse().map(Auto::Value).map_err(|e| serde::de::Error::custom(format!("{e}; expected \"auto\" or a value with a unit")))
        }
    }
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct PfcCfg {
    pub enabled: bool,
    pub quanta: u16,
    pub refresh: Auto<SimDuration>,
    pub response: Auto<SimDuration>,
    /// The switches' PFC watchdog (SONiC pfcwd); absent: none.
    #[serde(default)]
    pub watchdog: Option<WatchdogCfg>,
}

/// SONiC `config pfcwd start --action drop|forward --restoration-time T1 DETECTION_TIME`
/// (`pfcwd start_default` uses 200 ms and 200 ms with action drop).
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct WatchdogCfg {
    pub detection_time: SimDuration,
    pub restoration_time: SimDuration,
    /// "drop" or "forward".
    pub action: String,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct EcnCfg {
    pub queue: u8,
    pub kmin: Bytes,
    pub kmax: Bytes,
    pub pmax: f64,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct DcqcnCfg {
    /// "paper", "nvidia-default", "hpcc-ns3" or "off".
    pub preset: String,
    pub g: Option<f64>,
    pub alpha_timer: Option<SimDuration>,
    pub rate_timer: Option<SimDuration>,
    pub byte_counter: Option<Bytes>,
    pub fast_recovery_steps: Option<u32>,
    pub rate_ai: Option<BitRate>,
    pub rate_hai: Option<BitRate>,
    pub min_rate: Option<BitRate>,
    pub cnp_interval: Option<SimDuration>,
    pub rate_reduce_interval: Option<SimDuration>,
    pub clamp_tgt_rate: Option<bool>,
    pub clamp_tgt_rate_after_time_inc: Option<bool>,
    pub rate_reduce_timing: Option<ReduceTiming>,
    pub increase: Option<IncreaseRule>,
    pub cnp: Option<CnpTransport>,
    pub cnp_scope: Option<CnpScope>,
    pub retime: Option<bool>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct BufferSection {
    pub total: Bytes,
    pub cell: Bytes,
    pub dynamic_th: i8,
    pub reserved: Bytes,
    /// Headroom per lossless PG (SONiC `xoff`), or "auto" (IEEE 802.1Qbb worst case per port).
    pub headroom: Auto<Bytes>,
    /// Pause trigger: "dynamic" or a static PG occupancy such as "200KB".
    pub xoff: String,
    /// Resume point: "auto" (2 maximum frames below the trigger) or an offset below it …
    pub xon_offset: Option<Auto<Bytes>>,
    /// … or an absolute PG occupancy.
    pub xon: Option<Bytes>,
    pub shared_headroom_pool: Option<Bytes>,
}

#[derive(Deserialize, Debug)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Traffic {
    /// N-to-1: every sender writes `size` to `receiver`.
    Incast {
        receiver: u32,
        senders: Vec<u32>,
        size: Bytes,
        #[serde(default)]
        start: Option<SimDuration>,
        /// Sender i starts `i × stagger` after `start` (0: synchronised).
        #[serde(default)]
        stagger: Option<SimDuration>,
        dscp: Option<u8>,
        sl: Option<u8>,
    },
    /// Every host sends `size` to one other host, a random permutation (from the seed).
    Permutation { size: Bytes, start: Option<SimDuration>, dscp: Option<u8>, sl: Option<u8> },
    /// Every host sends `size` to every other host.
    AllToAll { size: Bytes, start: Option<SimDuration>, dscp: Option<u8>, sl: Option<u8> },
    /// One RDMA WRITE.
    Message { src: u32, dst: u32, size: Bytes, at: SimDuration, dscp: Option<u8>, sl: Option<u8> },
    /// A collective job (NCCL's algorithms, see the `workload` crate).
    Collective(CollectiveCfg),
    /// Poisson background traffic with flow sizes from a CDF file (`workload::flowsize`).
    Background {
        /// `<size in bytes> <cumulative percent>` per line (shared/data/flow-size-cdfs),
        /// relative to the scenario file.
        cdf: String,
        /// Offered load per host, as a fraction of its link rate (0 < load ≤ 1).
        load: f64,
        #[serde(default)]
        hosts: Option<Vec<u32>>,
        #[serde(default)]
        start: Option<SimDuration>,
        /// Flows arrive during this long after `start`.
        duration: SimDuration,
        dscp: Option<u8>,
        sl: Option<u8>,
    },
}

/// A collective job: which operation, on which hosts, how NCCL would run it.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct CollectiveCfg {
    /// "all-reduce", "all-gather", "reduce-scatter", "broadcast" or "all-to-all".
    pub op: String,
    /// "ring" (default), "tree" (all-reduce only) or "sharp" (in-network all-reduce on
    /// the switches' aggregation nodes; InfiniBand only: the scenario's switches then get
    /// aggregation nodes, see `topology` and `sharp`).
    #[serde(default)]
    pub algorithm: Option<String>,
    /// nccl-tests' S: see `workload::Collective` for what it means per operation.
    pub size: Bytes,
    /// Hosts the job runs on (default: all), each with all its NICs.
    #[serde(default)]
    pub hosts: Option<Vec<u32>>,
    /// Ranks (default: one per NIC of the job's hosts).
    #[serde(default)]
    pub ranks: Option<u32>,
    /// "linear" (default), "rail-aligned" or "random" (from the scenario seed).
    #[serde(default)]
    pub placement: Option<String>,
    #[serde(default)]
    pub channels: Option<u32>,
    /// Largest single transfer (NCCL's buffer step; default 512KiB).
    #[serde(default)]
    pub chunk: Option<Bytes>,
    /// Receive slots per connection (NCCL_STEPS; default 8).
    #[serde(default)]
    pub window: Option<u32>,
    #[serde(default)]
    pub root: Option<u32>,
    #[serde(default)]
    pub iterations: Option<u32>,
    #[serde(default)]
    pub start: Option<SimDuration>,
    pub dscp: Option<u8>,
    pub sl: Option<u8>,
}

/// A collective job as compiled: what it is and which flows carry it.
#[derive(Clone, Debug)]
pub struct Job {
    /// Index of its `[[traffic]]` entry.
    pub group: u32,
    pub op: workload::Collective,
    pub algorithm: workload::Algorithm,
    pub ranks: u32,
    pub size: u64,
    pub channels: u32,
    pub chunk: u64,
    pub start: SimTime,
    /// The barrier flow closing each iteration.
    pub iteration_ends: Vec<u32>,
    /// Endpoint of each rank.
    pub endpoints: Vec<u32>,
    /// Bytes the busiest rank's link carries per iteration in one direction (the most a
    /// rank sends or receives): with busbw's meaning of "bus", S × 2(n−1)/n for ring,
    /// S for SHARP.
    pub rank_link_bytes: u64,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct OutputSection {
    #[serde(default = "default_sample")]
    pub sample_period: SimDuration,
    #[serde(default = "default_top")]
    pub top_ports: usize,
}

impl Default for OutputSection {
    fn default() -> Self {
        OutputSection { sample_period: default_sample(), top_ports: default_top() }
    }
}
fn default_sample() -> SimDuration {
    SimDuration::from_us(10)
}
fn default_top() -> usize {
    8
}

/// A validated scenario, ready to simulate.
#[derive(Clone)]
pub struct World {
    pub name: String,
    pub seed: u64,
    pub topo: Topology,
    pub params: Params,
    /// InfiniBand: the forwarding tables the subnet manager programmed.
    pub lft: Option<fabric::routing::Lft>,
    pub faults: Vec<fabric::sim::Fault>,
    /// How long the control plane takes to re-route after a fault ("auto": the SM's time).
    pub reroute_delay: Option<Auto<SimDuration>>,
    /// InfiniBand routed by a subnet manager: its configuration.
    pub sm: Option<fabric::subnet_manager::SmConfig>,
    /// Names, GUIDs and port numbers of a fabric read from a topology file.
    pub layout: Option<fabric::subnet_manager::layout::IbLayout>,
    pub flows: Vec<FlowSpec>,
    /// Collective jobs among the flows.
    pub jobs: Vec<Job>,
    /// A label for each `[[traffic]]` entry (the flows' `group`), e.g. "incast", "background".
    pub traffic_kinds: Vec<String>,
    pub headroom_cells: Vec<u64>,
    pub stop: Option<SimTime>,
    pub sample_period: SimDuration,
    pub top_ports: usize,
    /// Human-readable notes on how `auto` values were resolved.
    pub notes: Vec<String>,
    /// The switch latency in `params` and where it comes from (a datasheet, a launch
    /// figure, InfiniBand's for lack of one, or the scenario file).
    pub switch_latency: model::switch_latency::SwitchLatency,
}

struct Ctx<'a> {
    file: &'a str,
    src: &'a str,
    /// Directory that relative paths in the file (topology, CDF files) start from.
    base: &'a std::path::Path,
}

impl Ctx<'_> {
    fn err(&self, field: &str, msg: impl Into<String>) -> ConfigError {
        ConfigError { file: self.file.to_string(), line: locate(self.src, field), field: field.to_string(), msg: msg.into() }
    }
}

/// The line of `src` where `field` (a dotted path) is most likely written.
pub fn locate(src: &str, field: &str) -> Option<usize> {
    let key = field.rsplit('.').next().unwrap_or(field);
    let key = key.split('[').next().unwrap_or(key);
    src.lines()
        .position(|l| {
            // Comments do not count: a key named in one is not where the value is.
            let t = l.split('#').next().unwrap_or("").trim_start();
            t.starts_with(key) && t[key.len()..].trim_start().starts_with('=') || t.contains(&format!("{key} =")) || t.starts_with(&format!("[{key}"))
        })
        .map(|i| i + 1)
}

/// Parses and validates a scenario file's text; relative paths in it start from `file`'s
/// directory.
pub fn load_str(file: &str, src: &str) -> Result<World, ConfigError> {
    load_str_at(file, src, std::path::Path::new(file).parent().unwrap_or(std::path::Path::new(".")))
}

/// [`load_str`] with the directory relative paths start from (a variant's label is not a
/// path).
pub fn load_str_at(file: &str, src: &str, base: &std::path::Path) -> Result<World, ConfigError> {
    let de = toml::Deserializer::new(src);
    let cfg: ScenarioFile = serde_path_to_error::deserialize(de).map_err(|e| {
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
    })?;
    compile(&Ctx { file, src, base }, cfg)
}

/// Reads, parses and validates a scenario file.
pub fn load(path: &std::path::Path) -> Result<World, ConfigError> {
    let file = path.display().to_string();
    let src = std::fs::read_to_string(path).map_err(|e| ConfigError { file: file.clone(), line: None, field: "-".into(), msg: format!("cannot read: {e}") })?;
    load_str(&file, &src)
}

fn link(c: &Ctx, field: &str, l: &LinkCfg) -> Result<(BitRate, SimDuration), ConfigError> {
    check_speed(c, &format!("{field}.speed"), l.speed)?;
    let prop = match (l.cable, l.delay) {
        (Some(len), None) => propagation(len, DEFAULT_PROPAGATION_PS_PER_M),
        (None, Some(d)) => d,
        _ => return Err(c.err(field, "give exactly one of `cable` (a length) or `delay` (a propagation time)")),
    };
    Ok((l.speed, prop))
}

fn check_speed(c: &Ctx, field: &str, s: BitRate) -> Result<(), ConfigError> {
    if s < BitRate::from_gbps(10) || s > BitRate::from_gbps(800) {
        return Err(c.err(field, format!("link speed {s} is outside 10Gbps..800Gbps")));
    }
    Ok(())
}

fn compile(c: &Ctx, cfg: ScenarioFile) -> Result<World, ConfigError> {
    let (topo, layout) = match &cfg.topology {
        TopologySection::File { path, cable } => {
            let full = c.base.join(path);
            let mut ibt = crate::topofile::read_any(&full).map_err(|e| c.err("topology.path", e.to_string()))?;
            let prop = propagation(*cable, DEFAULT_PROPAGATION_PS_PER_M);
            for p in &mut ibt.topo.ports {
                p.prop = prop;
            }
            (ibt.topo, Some(ibt.layout))
        }
        t => (build_topology(c, t)?, None),
    };
    let tech = match (cfg.scenario.technology.as_deref(), &cfg.roce, &cfg.infiniband) {
        (Some("roce"), Some(_), _) | (None, Some(_), None) => Tech::Roce,
        (Some("infiniband"), _, Some(_)) | (None, None, Some(_)) => Tech::Infiniband,
        (Some("roce"), None, _) => return Err(c.err("scenario.technology", "\"roce\" needs a [roce] section")),
        (Some("infiniband"), _, None) => return Err(c.err("scenario.technology", "\"infiniband\" needs an [infiniband] section")),
        (Some(other), _, _) => return Err(c.err("scenario.technology", format!("unknown technology `{other}`; expected \"roce\" or \"infiniband\""))),
        (None, Some(_), Some(_)) => {
            return Err(c.err("scenario.technology", "the file has both [roce] and [infiniband]; say which one to run (`fabriclab compare` runs both)"))
        }
        (None, None, None) => return Err(c.err("scenario", "expected a [roce] or an [infiniband] section")),
    };
    let mut sharp_notes = vec![];
    let sharp = cfg.traffic.iter().position(|t| matches!(t, Traffic::Collective(j) if j.algorithm.as_deref() == Some("sharp")));
    let topo = match sharp {
        None => topo,
        Some(i) => {
            let field = format!("traffic[{i}].algorithm");
            if tech == Tech::Roce {
                return Err(c.err(
                    &field,
                    "SHARP aggregates in InfiniBand switches (aggregation nodes); RoCEv2 has no in-network reduction: use \"ring\" or \"tree\" \
                     (`fabriclab compare` runs the RoCEv2 side with ring)",
                ));
            }
            if layout.is_some() {
                return Err(c.err(&field, "SHARP needs aggregation nodes in the switches; a fabric read from a topology file has none listed"));
            }
            let t = topo.with_aggregation_nodes().map_err(|e| c.err("topology", e.to_string()))?;
            let first = topo.endpoints.len();
            sharp_notes.push(format!(
                "SHARP: an aggregation node in each of the {} switches (endpoints {first}..{}, on each switch's last port, rate = the sum of its other ports')",
                t.endpoints.len() - first,
                t.endpoints.len() - 1
            ));
            t
        }
    };
    let (mut params, headroom_cells, notes, lft, sm, switch_latency) = match tech {
        Tech::Roce => {
            let buffer = cfg.buffer.as_ref().ok_or_else(|| c.err("buffer", "a RoCE fabric needs a [buffer] section (the switch MMU)"))?;
            let (p, h, n, l) = compile_roce(c, cfg.roce.as_ref().expect("matched"), buffer, &topo)?;
            (p, h, n, None, None, l)
        }
        Tech::Infiniband => {
            let (p, n, lft, sm, l) = compile_ib(c, cfg.infiniband.as_ref().expect("matched"), &topo, layout.as_ref(), cfg.scenario.seed)?;
            (p, vec![0; topo.ports.len()], n, Some(lft), sm, l)
        }
    };
    params.deadlock_timeout = match cfg.scenario.deadlock_timeout {
        Some(d) if d.ps() == 0 => return Err(c.err("scenario.deadlock_timeout", "expected a time above zero")),
        Some(d) => d,
        None => SimDuration::from_ms(1),
    };
    let (flows, jobs) = traffic(c, &cfg, &topo, tech)?;
    let mut flows = flows;
    let mut notes = notes;
    notes.extend(sharp_notes);
    if let (Some(sm), Some(ib)) = (&sm, &params.ib) {
        if sm.engine == fabric::subnet_manager::Engine::Dfsssp {
            // dfsssp hands every path its SL (path records); SL2VL is the identity.
            let mgr = sm_bring_up(&topo, layout.as_ref(), sm, ib.data_vls);
            for f in &mut flows {
                f.sl = mgr.path_sl(f.src, f.dst);
            }
            notes.push("dfsssp: each flow uses the SL the subnet manager assigned to its path (SL = VL)".into());
        }
    }
    let faults = faults(c, &cfg.faults, &topo, &params, &headroom_cells)?;
    if faults.iter().any(|f| matches!(f.kind, fabric::sim::FaultKind::SmFailure { .. })) && sm.is_none() {
        return Err(c.err("faults", "an `sm-failure` needs a subnet manager (an SM routing engine, not `dest-hash`)"));
    }
    let reroute_delay = match tech {
        Tech::Roce => cfg.roce.as_ref().and_then(|r| r.reroute_delay).map(Auto::Value),
        Tech::Infiniband => cfg.infiniband.as_ref().and_then(|r| r.reroute_delay),
    };
    if matches!(reroute_delay, Some(Auto::Auto)) && sm.is_none() {
        return Err(c.err("infiniband.reroute_delay", "\"auto\" is the subnet manager's re-sweep time; `dest-hash` routing has no SM: give a time"));
    }
    if !faults.is_empty() && reroute_delay.is_none() {
        let f = if tech == Tech::Roce { "roce.reroute_delay" } else { "infiniband.reroute_delay" };
        return Err(c.err(f, "the scenario has faults: say how long re-routing takes after one (a time)"));
    }
    Ok(World {
        layout,
        faults,
        reroute_delay,
        sm,
        name: cfg.scenario.name,
        seed: cfg.scenario.seed,
        topo,
        params,
        lft,
        flows,
        jobs,
        traffic_kinds: cfg
            .traffic
            .iter()
            .map(|t| match t {
                Traffic::Incast { .. } => "incast".to_string(),
                Traffic::Permutation { .. } => "permutation".into(),
                Traffic::AllToAll { .. } => "all-to-all".into(),
                Traffic::Message { .. } => "message".into(),
                Traffic::Collective(j) => format!("collective {}", j.op),
                Traffic::Background { cdf, load, .. } => {
                    let name = std::path::Path::new(cdf).file_stem().map_or(cdf.clone(), |s| s.to_string_lossy().into_owned());
                    format!("background {name} at load {load}")
                }
            })
            .collect(),
        headroom_cells,
        stop: cfg.scenario.stop_time.map(|d| SimTime(d.ps())),
        sample_period: cfg.output.sample_period,
        top_ports: cfg.output.top_ports,
        notes,
        switch_latency,
    })
}

type PortTables = (std::collections::HashMap<(u32, u32), [u8; 16]>, std::collections::HashMap<u32, [u8; 16]>);

/// The `sl_to_vl_ports` entries as tables keyed by port ids (switch pairs) and endpoints.
fn port_tables(c: &Ctx, r: &IbSection, topo: &Topology, default: &[u8; 16]) -> Result<PortTables, ConfigError> {
    let mut pairs = std::collections::HashMap::new();
    let mut hcas = std::collections::HashMap::new();
    for (i, e) in r.sl_to_vl_ports.iter().enumerate() {
        let f = format!("infiniband.sl_to_vl_ports[{i}]");
        let Some(ni) = topo.nodes.iter().position(|n| n.name == e.node) else {
            return Err(c.err(&format!("{f}.node"), format!("no node named `{}`", e.node)));
        };
        let node = &topo.nodes[ni];
        let mut map = *default;
        for (k, &vl) in &e.map {
            let sl: u8 =
                k.parse().ok().filter(|&x: &u8| x < 16).ok_or_else(|| c.err(&format!("{f}.map"), format!("key `{k}` is not a service level 0..15")))?;
            if vl >= r.data_vls {
                return Err(c.err(&format!("{f}.map"), format!("SL {sl} maps to VL {vl}, but only VL0..VL{} are operational", r.data_vls - 1)));
            }
            map[sl as usize] = vl;
        }
        match node.kind {
            NodeKind::Nic { ep, .. } | NodeKind::Aggregator { ep, .. } => {
                if e.in_port.is_some() || e.out_port.is_some() {
                    return Err(c.err(&f, format!("`{}` is an HCA: it has one table, give no in_port/out_port", e.node)));
                }
                hcas.insert(ep, map);
            }
            NodeKind::Switch => {
                let ports = |p: Option<u32>, field: &str| -> Result<Vec<u32>, ConfigError> {
                    match p {
                        Some(x) if x < node.nports => Ok(vec![node.first_port + x]),
                        Some(x) => Err(c.err(&format!("{f}.{field}"), format!("`{}` has ports 0..{}; {x} does not exist", e.node, node.nports - 1))),
                        None => Ok((node.first_port..node.first_port + node.nports).collect()),
                    }
                };
                for a in ports(e.in_port, "in_port")? {
                    for b in ports(e.out_port, "out_port")? {
                        if a != b {
                            pairs.insert((a, b), map);
                        }
                    }
                }
            }
        }
    }
    Ok((pairs, hcas))
}

/// OpenSM's defaults (opensm/osm_subnet.c, `osm_subn_set_default_opt`): head_of_queue_lifetime
/// 0x12 and packet_life_time 0x12, i.e. 4.096 µs × 2^18 ≈ 1.07 s (IBTA Vol. 1 §14.2.5.6,
/// HOQLife and LifeTimeValue encode 4.096 µs × 2^value; values above 19 mean infinite).
const OPENSM_LIFETIME_EXP: u32 = 18;
/// OpenSM's leaf_head_of_queue_lifetime for switch ports that drive a CA
/// (OSM_DEFAULT_LEAF_HEAD_OF_QUEUE_LIFE 0x10: 4.096 µs × 2^16 ≈ 268 ms).
const OPENSM_LEAF_HOQ_EXP: u32 = 16;

fn lifetime(c: &Ctx, field: &str, v: &str) -> Result<Option<SimDuration>, ConfigError> {
    match v {
        "auto" => Ok(Some(model::ib::local_ack_timeout(OPENSM_LIFETIME_EXP))),
        "infinite" => Ok(None),
        s => s.parse::<SimDuration>().map(Some).map_err(|e| c.err(field, format!("{e}; expected \"auto\", \"infinite\" or a time"))),
    }
}

/// Brings the fabric up with a subnet manager: discovery, LIDs, routing, LFTs.
pub fn sm_bring_up(
    topo: &Topology,
    layout: Option<&fabric::subnet_manager::layout::IbLayout>,
    cfg: &fabric::subnet_manager::SmConfig,
    data_vls: u8,
) -> fabric::subnet_manager::SubnetManager {
    let mut sm = match layout {
        Some(l) => fabric::subnet_manager::SubnetManager::with_layout(topo.clone(), l.clone(), cfg.clone()),
        None => fabric::subnet_manager::SubnetManager::new(topo, cfg.clone()),
    };
    sm.agents.data_vls = data_vls;
    sm.bring_up();
    sm
}

#[allow(clippy::type_complexity)]
fn compile_ib(
    c: &Ctx,
    r: &IbSection,
    topo: &Topology,
    layout: Option<&fabric::subnet_manager::layout::IbLayout>,
    seed: u64,
) -> Result<(Params, Vec<String>, fabric::routing::Lft, Option<fabric::subnet_manager::SmConfig>, SwitchLatency), ConfigError> {
    if !IB_MTUS.contains(&r.mtu.0) {
        return Err(c.err("infiniband.mtu", format!("{} is not an IB path MTU; expected one of 256B, 512B, 1024B, 2048B, 4096B", r.mtu)));
    }
    if !(1..=8).contains(&r.data_vls) {
        return Err(c.err("infiniband.data_vls", "expected 1..8 data VLs (VL15 is for management)"));
    }
    let mut sl_to_vl = [0u8; 16];
    for (k, &vl) in &r.sl_to_vl {
        let sl: u8 = k.parse().ok().filter(|&x: &u8| x < 16).ok_or_else(|| c.err("infiniband.sl_to_vl", format!("key `{k}` is not a service level 0..15")))?;
        if vl >= r.data_vls {
            return Err(c.err("infiniband.sl_to_vl", format!("SL {sl} maps to VL {vl}, but only VL0..VL{} are operational", r.data_vls - 1)));
        }
        sl_to_vl[sl as usize] = vl;
    }
    let mut sched = [Sched::Weighted(1); 8];
    for &v in &r.high_priority_vls {
        if v >= r.data_vls {
            return Err(c.err("infiniband.high_priority_vls", format!("VL {v} is not an operational data VL")));
        }
        sched[v as usize] = Sched::Strict;
    }
    let mtu_blocks = model::ib::blocks(model::ib::ib_packet(r.grh, Transport::WriteFirst, r.mtu));
    let vl_buffer_blocks = (r.vl_buffer.0 / model::ib::BLOCK) as u32;
    if vl_buffer_blocks < mtu_blocks {
        return Err(c.err("infiniband.vl_buffer", format!("{} holds {vl_buffer_blocks} blocks of 64 B; a maximum packet needs {mtu_blocks}", r.vl_buffer)));
    }
    if r.ack_every == 0 {
        return Err(c.err("infiniband.ack_every", "expected at least 1"));
    }
    if !(1..=31).contains(&r.timeout) {
        return Err(c.err("infiniband.timeout", "the local ACK timeout exponent is 1..31 (0 would mean infinite)"));
    }
    if r.retry_cnt > 7 {
        return Err(c.err("infiniband.retry_cnt", "retry_cnt is a 3-bit field: 0..7"));
    }
    let mut notes = vec![];
    for (pi, p) in topo.ports.iter().enumerate() {
        if p.rate.0 > 0 && model::ib::Generation::of(p.rate).is_none() && !topo.is_aggregator_port(PortId(pi as u32)) {
            return Err(
                c.err("topology", format!("{} is not an InfiniBand 4x speed; expected 100Gbps (EDR), 200Gbps (HDR), 400Gbps (NDR) or 800Gbps (XDR)", p.rate))
            );
        }
    }
    let latency = match r.switch_latency {
        Auto::Value(v) => from_file(v),
        Auto::Auto => {
            let g = model::ib::Generation::of(fastest_rate(topo)).expect("checked above");
            let l = model::switch_latency::infiniband(g);
            notes.push(format!("switch latency auto: {} ({})", l.latency, l.source));
            l
        }
    };
    let switch_latency = latency.latency;
    let (lft, sm) = match r.routing.as_str() {
        "dest-hash" => (fabric::routing::Routes::build(topo, seed, |_| true).destination_lft(topo), None),
        name => {
            let engine: fabric::subnet_manager::Engine = name
                .parse()
                .map_err(|e: String| c.err("infiniband.routing", format!("{e}, or \"dest-hash\" (shortest paths hashed by destination, no SM)")))?;
            let cfg = fabric::subnet_manager::SmConfig { engine, ..Default::default() };
            let mut mgr = match layout {
                Some(l) => fabric::subnet_manager::SubnetManager::with_layout(topo.clone(), l.clone(), cfg.clone()),
                None => fabric::subnet_manager::SubnetManager::new(topo, cfg.clone()),
            };
            mgr.agents.data_vls = r.data_vls;
            let res = mgr.bring_up();
            if let Some(why) = &res.fallback {
                notes.push(format!("subnet manager: {name} could not route this fabric ({why}); fell back to minhop, as OpenSM does"));
            }
            notes.push(format!(
                "subnet manager: {} on {} nodes and {} links, {} SMPs, bring-up {} (simulated)",
                res.engine,
                res.nodes,
                res.links,
                res.smps.total(),
                res.total
            ));
            (mgr.lft().clone(), Some(cfg))
        }
    };
    if matches!(r.routing.as_str(), "dfsssp") {
        for (sl, vl) in sl_to_vl.iter_mut().enumerate() {
            *vl = if sl < r.data_vls as usize { sl as u8 } else { 0 };
        }
    }
    let (sl_to_vl_ports, sl_to_vl_hca) = port_tables(c, r, topo, &sl_to_vl)?;
    let ib = Ib {
        grh: r.grh,
        sl_to_vl,
        sl_to_vl_ports,
        sl_to_vl_hca,
        data_vls: r.data_vls,
        vl_buffer_blocks,
        hoq_lifetime: lifetime(c, "infiniband.hoq_lifetime", &r.hoq_lifetime)?,
        leaf_hoq_lifetime: match r.leaf_hoq_lifetime.as_deref().unwrap_or(&r.hoq_lifetime) {
            "auto" => Some(model::ib::local_ack_timeout(OPENSM_LEAF_HOQ_EXP)),
            v => lifetime(c, "infiniband.leaf_hoq_lifetime", v)?,
        },
        vl_stall_count: match r.vl_stall_count {
            None => 7,
            Some(n @ 1..=7) => n,
            Some(n) => return Err(c.err("infiniband.vl_stall_count", format!("{n}: PortInfo:VLStallCount is 3 bits, expected 1..7"))),
        },
        switch_lifetime: lifetime(c, "infiniband.switch_lifetime", &r.switch_lifetime)?,
        routing: r.routing.clone(),
        cc: match &r.congestion_control {
            None => None,
            Some(cc) => {
                let f = "infiniband.congestion_control";
                if cc.marking_rate == 0 {
                    return Err(c.err(&format!("{f}.marking_rate"), "expected at least 1 (mark one in every n eligible packets)"));
                }
                if !(1..=16384).contains(&cc.cct_entries) {
                    return Err(c.err(&format!("{f}.cct_entries"), "expected 1..16384 entries"));
                }
                if !(cc.cct_step.is_finite() && cc.cct_step >= 0.0) {
                    return Err(c.err(&format!("{f}.cct_step"), "expected a non-negative delay factor"));
                }
                if cc.ccti_min >= cc.cct_entries {
                    return Err(c.err(&format!("{f}.ccti_min"), "must be below cct_entries"));
                }
                if cc.ccti_timer.ps() == 0 {
                    return Err(c.err(&format!("{f}.ccti_timer"), "expected a positive time"));
                }
                Some(fabric::ibcc::IbCcParams {
                    threshold_bytes: cc.threshold.0,
                    marking_rate: cc.marking_rate,
                    packet_size_bytes: cc.packet_size.0,
                    mark_victims: cc.mark_victims,
                    ccti_increase: cc.ccti_increase,
                    ccti_min: cc.ccti_min,
                    ccti_timer: cc.ccti_timer,
                    cct: (0..cc.cct_entries).map(|i| i as f64 * cc.cct_step).collect(),
                })
            }
        },
    };
    let params = Params {
        tech: Tech::Infiniband,
        mtu: r.mtu,
        // The Ethernet-side fields are unused on InfiniBand.
        encap: Encap { vlan: false, ipv6: false },
        dscp_to_tc: [0; 64],
        tc_to_pg: [0; 8],
        // Every VL is lossless by design: any discard counts as a lossless-class drop.
        lossless: [true; 8],
        ecn: [None; 8],
        ecn_marking: fabric::params::EcnMarking::Enqueue,
        sched,
        cnp_dscp: 0,
        pfc: Pfc { enabled: false, quanta: 0, refresh: None, response: None, watchdog: None },
        dcqcn: None,
        ack_every: r.ack_every,
        rto: model::ib::local_ack_timeout(r.timeout),
        retry_cnt: r.retry_cnt,
        forwarding: r.forwarding,
        switch_latency,
        buffer: Buffer {
            cell: Bytes(model::ib::BLOCK),
            total_cells: 0,
            dynamic_th: 0,
            reserved_cells: 0,
            headroom_cells: None,
            trigger: Trigger::Dynamic,
            resume: Resume::Offset(0),
            shared_headroom_pool: None,
        },
        ib: Some(ib),
        deadlock_timeout: SimDuration::ZERO,
    };
    Ok((params, notes, lft, sm, latency))
}

/// The rate of the fabric's fastest link (aggregation nodes' internal ports left out):
/// the generation `switch_latency = "auto"` goes by.
fn fastest_rate(topo: &Topology) -> BitRate {
    (0..topo.ports.len() as u32).filter(|&pi| !topo.is_aggregator_port(PortId(pi))).map(|pi| topo.port(PortId(pi)).rate).max().unwrap_or_default()
}

/// A switch latency the scenario gives as a time.
fn from_file(v: SimDuration) -> SwitchLatency {
    SwitchLatency { latency: v, source: "set in the scenario file".into(), same_as_infiniband: false }
}

/// `[roce] switch_latency` and `switch`, resolved (`model::switch_latency::roce`).
fn roce_switch_latency(c: &Ctx, r: &RoceSection, topo: &Topology) -> Result<SwitchLatency, ConfigError> {
    let switch = match r.switch.as_deref() {
        None => None,
        Some(s) => Some(EthernetSwitch::from_name(s).ok_or_else(|| {
            c.err(
                "roce.switch",
                format!("unknown switch `{s}`; expected one of {} (\"spectrum\" and \"tomahawk\" mean the first generation)", EthernetSwitch::NAMES.join(", ")),
            )
        })?),
    };
    match r.switch_latency.unwrap_or(Auto::Auto) {
        Auto::Value(v) => Ok(from_file(v)),
        Auto::Auto => model::switch_latency::roce(switch, fastest_rate(topo)).map_err(|m| c.err("roce.switch_latency", m)),
    }
}

fn compile_roce(c: &Ctx, r: &RoceSection, b: &BufferSection, topo: &Topology) -> Result<(Params, Vec<u64>, Vec<String>, SwitchLatency), ConfigError> {
    if !IB_MTUS.contains(&r.mtu.0) {
        return Err(c.err("roce.mtu", format!("{} is not an IB path MTU; expected one of 256B, 512B, 1024B, 2048B, 4096B", r.mtu)));
    }
    let mut dscp_to_tc = [0u8; 64];
    for (k, &tc) in &r.dscp_to_tc {
        let d: u8 = k.parse().ok().filter(|&d: &u8| d < 64).ok_or_else(|| c.err("roce.dscp_to_tc", format!("key `{k}` is not a DSCP value 0..63")))?;
        if tc > 7 {
            return Err(c.err("roce.dscp_to_tc", format!("traffic class {tc} for DSCP {d} is not 0..7")));
        }
        dscp_to_tc[d as usize] = tc;
    }
    let mut tc_to_pg = [0u8; 8];
    match &r.tc_to_pg {
        None => {
            for &p in &r.lossless_priorities {
                if p < 8 {
                    tc_to_pg[p as usize] = p;
                }
            }
        }
        Some(m) => {
            for (k, &pg) in m {
                let tc: u8 = k.parse().ok().filter(|&t: &u8| t < 8).ok_or_else(|| c.err("roce.tc_to_pg", format!("key `{k}` is not a traffic class 0..7")))?;
                if pg > 7 {
                    return Err(c.err("roce.tc_to_pg", format!("priority group {pg} is not 0..7")));
                }
                tc_to_pg[tc as usize] = pg;
            }
        }
    }
    let mut lossless = [false; 8];
    for &p in &r.lossless_priorities {
        if p > 7 {
            return Err(c.err("roce.lossless_priorities", format!("priority {p} is not 0..7")));
        }
        lossless[p as usize] = true;
    }
    for tc in 0..8 {
        for tc2 in 0..8 {
            if tc_to_pg[tc] == tc_to_pg[tc2] && lossless[tc] != lossless[tc2] && tc != tc2 {
                return Err(c.err("roce.tc_to_pg", format!("lossless class {tc} shares PG {} with lossy class {tc2}", tc_to_pg[tc])));
            }
        }
    }
    if r.cnp_dscp > 63 {
        return Err(c.err("roce.cnp_dscp", "expected a DSCP value 0..63"));
    }
    let mut ecn = [None; 8];
    for (i, e) in r.ecn.iter().enumerate() {
        let f = format!("roce.ecn[{i}]");
        if e.queue > 7 {
            return Err(c.err(&format!("{f}.queue"), "expected a queue 0..7"));
        }
        if e.kmin > e.kmax {
            return Err(c.err(&format!("{f}.kmin"), format!("kmin {} is above kmax {}", e.kmin, e.kmax)));
        }
        if !(0.0..=1.0).contains(&e.pmax) {
            return Err(c.err(&format!("{f}.pmax"), "expected a probability in [0, 1]"));
        }
        ecn[e.queue as usize] = Some(Red { kmin: e.kmin, kmax: e.kmax, pmax: e.pmax });
    }
    let mut sched = [Sched::Weighted(1); 8];
    for &q in r.strict_queues.as_deref().unwrap_or(&[6, 7]) {
        if q > 7 {
            return Err(c.err("roce.strict_queues", "expected queues 0..7"));
        }
        sched[q as usize] = Sched::Strict;
    }
    let dcqcn = dcqcn(c, &r.dcqcn, topo)?;
    if r.ack_every == 0 {
        return Err(c.err("roce.ack_every", "expected at least 1"));
    }
    if r.timeout > 31 {
        return Err(c.err("roce.timeout", "the local ACK timeout exponent is 0..31"));
    }
    if r.retry_cnt > 7 {
        return Err(c.err("roce.retry_cnt", "retry_cnt is a 3-bit field: 0..7"));
    }
    let encap = Encap { vlan: r.vlan, ipv6: false };
    if b.cell.0 == 0 || b.cell.0 > 1024 {
        return Err(c.err("buffer.cell", "expected a cell size between 1B and 1024B (real ASICs: 96..256 B)"));
    }
    if !(-7..=3).contains(&b.dynamic_th) {
        return Err(c.err("buffer.dynamic_th", "expected -7..3 (alpha = 2^dynamic_th, as in SONiC)"));
    }
    let cells = |x: Bytes| x.cells(b.cell);
    let max_frame = roce_frame(encap, Transport::WriteFirst, r.mtu);
    let trigger = match b.xoff.as_str() {
        "dynamic" => Trigger::Dynamic,
        s => Trigger::Static(cells(s.parse::<Bytes>().map_err(|e| c.err("buffer.xoff", format!("{e}; expected \"dynamic\" or a size")))?)),
    };
    let resume = match (b.xon_offset, b.xon) {
        (Some(_), Some(_)) => return Err(c.err("buffer.xon", "give either `xon` or `xon_offset`, not both")),
        (None, Some(x)) => Resume::Absolute(cells(x)),
        (Some(Auto::Value(o)), None) => Resume::Offset(cells(o)),
        (Some(Auto::Auto), None) | (None, None) => Resume::Offset(2 * cells(max_frame)),
    };
    let pfc = Pfc {
        enabled: r.pfc.enabled,
        quanta: r.pfc.quanta,
        refresh: match r.pfc.refresh {
            Auto::Auto => None,
            Auto::Value(v) => Some(v),
        },
        response: match r.pfc.response {
            Auto::Auto => None,
            Auto::Value(v) => Some(v),
        },
        watchdog: match &r.pfc.watchdog {
            None => None,
            Some(w) => {
                let action = match w.action.as_str() {
                    "drop" => fabric::params::WatchdogAction::Drop,
                    "forward" => fabric::params::WatchdogAction::Forward,
                    o => return Err(c.err("roce.pfc.watchdog.action", format!("unknown action `{o}`; expected \"drop\" or \"forward\""))),
                };
                if w.detection_time.ps() == 0 || w.restoration_time.ps() == 0 {
                    return Err(c.err("roce.pfc.watchdog", "detection_time and restoration_time must be above zero"));
                }
                Some(fabric::params::PfcWatchdog { detection: w.detection_time, restoration: w.restoration_time, action })
            }
        },
    };
    if pfc.enabled && pfc.quanta == 0 {
        return Err(c.err("roce.pfc.quanta", "pause quanta must be 1..65535 (0 means resume)"));
    }
    let mut notes = vec![];
    let latency = roce_switch_latency(c, r, topo)?;
    if matches!(r.switch_latency, None | Some(Auto::Auto)) {
        notes.push(format!("switch latency auto: {} ({})", latency.latency, latency.source));
    }
    // Headroom per port: configured, or the IEEE 802.1Qbb worst case of that port's link.
    let headroom_cells: Vec<u64> = match b.headroom {
        Auto::Value(h) => vec![cells(h); topo.ports.len()],
        Auto::Auto => {
            let mut worst = 0;
            let v: Vec<u64> = topo
                .ports
                .iter()
                .map(|p| {
                    if p.rate.0 == 0 || !topo.is_switch(p.node) {
                        return 0;
                    }
                    let d = auto_headroom(p.rate, p.prop, max_frame, pfc.response, latency.latency, b.cell, trigger == Trigger::Dynamic);
                    worst = worst.max(d.cells);
                    d.cells
                })
                .collect();
            notes.push(format!("headroom auto: IEEE 802.1Qbb worst case per port (largest {} = {} cells of {})", b.cell * worst, worst, b.cell));
            v
        }
    };
    // Budget: reserved + headroom must fit in each switch's buffer.
    let total_cells = cells(b.total);
    let lossless_pgs = (0..8u8).filter(|&pg| (0..8).any(|tc| lossless[tc] && tc_to_pg[tc] == pg)).count() as u64;
    for n in &topo.nodes {
        if !matches!(n.kind, fabric::topology::NodeKind::Switch) {
            continue;
        }
        let reserved = cells(b.reserved) * 8 * n.nports as u64;
        let hdrm: u64 = match b.shared_headroom_pool {
            Some(p) => cells(p),
            None => (n.first_port..n.first_port + n.nports).map(|p| headroom_cells[p as usize] * lossless_pgs).sum(),
        };
        if reserved + hdrm >= total_cells {
            return Err(c.err(
                "buffer.total",
                format!(
                    "switch `{}`: reserved ({}) + headroom ({}) leave no shared buffer in {} ({} ports)",
                    n.name,
                    b.cell * reserved,
                    b.cell * hdrm,
                    b.total,
                    n.nports
                ),
            ));
        }
    }
    let buffer = Buffer {
        cell: b.cell,
        total_cells,
        dynamic_th: b.dynamic_th,
        reserved_cells: cells(b.reserved),
        headroom_cells: match b.headroom {
            Auto::Value(h) => Some(cells(h)),
            Auto::Auto => None,
        },
        trigger,
        resume,
        shared_headroom_pool: b.shared_headroom_pool.map(cells),
    };
    let params = Params {
        tech: Tech::Roce,
        mtu: r.mtu,
        encap,
        dscp_to_tc,
        tc_to_pg,
        lossless,
        ecn,
        ecn_marking: match r.ecn_marking.as_deref() {
            None | Some("enqueue") => fabric::params::EcnMarking::Enqueue,
            Some("dequeue") => fabric::params::EcnMarking::Dequeue,
            Some(o) => return Err(c.err("roce.ecn_marking", format!("unknown marking point `{o}`; expected \"enqueue\" or \"dequeue\""))),
        },
        sched,
        cnp_dscp: r.cnp_dscp,
        pfc,
        dcqcn,
        ack_every: r.ack_every,
        rto: SimDuration(4_096_000 << r.timeout),
        retry_cnt: r.retry_cnt,
        forwarding: r.forwarding,
        switch_latency: latency.latency,
        buffer,
        ib: None,
        deadlock_timeout: SimDuration::ZERO,
    };
    Ok((params, headroom_cells, notes, latency))
}

/// The `auto` headroom of one lossless switch ingress: the IEEE 802.1Qbb worst case for the
/// link's rate and cable (`model::headroom`), counted the way the simulator admits frames.
/// The one formula behind `headroom = "auto"`, `fabriclab burst --prove` and a slow NIC's
/// pause point. `response`: the peer's reaction time (`None`: IEEE 802.3 Table 31B-1).
pub fn auto_headroom(
    rate: BitRate,
    cable: SimDuration,
    max_frame: Bytes,
    response: Option<SimDuration>,
    trigger_delay: SimDuration,
    cell: Bytes,
    dynamic_trigger: bool,
) -> model::headroom::Derivation {
    let response = response.unwrap_or(SimDuration(pause_response_quanta(rate) * quantum(rate).ps()));
    ieee_8021qbb(&HeadroomInput {
        rate,
        cable,
        max_frame_reverse: max_frame,
        max_frame_lossless: max_frame,
        response,
        trigger_delay,
        interface_delay: SimDuration::ZERO,
        cell,
        // The simulator admits a frame whole (on its last bit, or on its header when
        // cutting through), so ceil(W/P) maximum frames follow the trigger; the frame that
        // crosses it lands in headroom too when the trigger is dynamic (α·free falls between
        // this PG's arrivals). A static trigger leaves it in the shared part, unless the
        // pool runs so low that α·free falls under the static level. Maximum-size frames
        // only: short frames cost more cells (`fabriclab plan roce --short-frames`).
        trigger_frame_in_headroom: dynamic_trigger,
        short_frames: 0,
    })
}

/// The DCQCN parameter set: a preset, then every field the scenario overrides (the name
/// lists them). `hpcc-ns3` scales R_AI and R_HAI with the hosts' NIC speed, as HPCC's
/// `run.py --bw` does.
fn dcqcn(c: &Ctx, d: &DcqcnCfg, topo: &Topology) -> Result<Option<(String, DcqcnParams)>, ConfigError> {
    let mut p = match d.preset.as_str() {
        "off" => return Ok(None),
        "paper" => DcqcnPreset::Paper.params(),
        "nvidia-default" => DcqcnPreset::NvidiaDefault.params(),
        "hpcc-ns3" => {
            let mut speeds: Vec<u64> = (0..topo.hosts).map(|e| topo.port(topo.ep_port(e)).rate.0).collect();
            speeds.sort_unstable();
            speeds.dedup();
            match speeds.as_slice() {
                [bps] => model::dcqcn::hpcc_ns3(bps / 1_000_000_000),
                _ if d.rate_ai.is_some() && d.rate_hai.is_some() => DcqcnPreset::HpccNs3.params(),
                _ => {
                    return Err(c.err(
                        "roce.dcqcn.preset",
                        "hpcc-ns3 scales rate_ai and rate_hai with the NIC speed (run.py --bw), but the hosts here run at \
                         more than one speed: set rate_ai and rate_hai",
                    ))
                }
            }
        }
        other => return Err(c.err("roce.dcqcn.preset", format!("unknown preset `{other}`; expected \"paper\", \"nvidia-default\", \"hpcc-ns3\" or \"off\""))),
    };
    let mut name = d.preset.clone();
    let mut set = |what: &str| name.push_str(&format!(" +{what}"));
    macro_rules! over {
        ($f:ident) => {
            if let Some(v) = d.$f {
                p.$f = v;
                set(stringify!($f));
            }
        };
    }
    over!(g);
    over!(alpha_timer);
    over!(rate_timer);
    over!(byte_counter);
    over!(fast_recovery_steps);
    over!(rate_ai);
    over!(rate_hai);
    over!(min_rate);
    over!(cnp_interval);
    over!(rate_reduce_interval);
    over!(clamp_tgt_rate);
    over!(clamp_tgt_rate_after_time_inc);
    over!(rate_reduce_timing);
    over!(increase);
    over!(cnp);
    over!(cnp_scope);
    over!(retime);
    if !(0.0..=1.0).contains(&p.g) || p.g == 0.0 {
        return Err(c.err("roce.dcqcn.g", "expected 0 < g <= 1"));
    }
    if p.alpha_timer.ps() == 0 || p.rate_timer.ps() == 0 || p.byte_counter.0 == 0 {
        return Err(c.err("roce.dcqcn", "alpha_timer, rate_timer and byte_counter must be positive"));
    }
    if p.rate_reduce_timing == ReduceTiming::Grid && p.rate_reduce_interval.ps() == 0 {
        return Err(c.err("roce.dcqcn.rate_reduce_interval", "rate_reduce_timing = \"grid\" checks every rate_reduce_interval: expected > 0"));
    }
    Ok(Some((name, p)))
}

fn build_topology(c: &Ctx, t: &TopologySection) -> Result<Topology, ConfigError> {
    let topo = match t {
        TopologySection::LeafSpine { leaves, spines, hosts_per_leaf, nics_per_host, uplinks_per_spine, oversubscription, host_link, fabric_link } => {
            let h = link(c, "topology.host_link", host_link)?;
            let f = link(c, "topology.fabric_link", fabric_link)?;
            let uplinks = match (uplinks_per_spine, oversubscription) {
                (Some(_), Some(_)) => return Err(c.err("topology.oversubscription", "give either uplinks_per_spine or oversubscription, not both")),
                (Some(u), None) => *u,
                (None, None) => 1,
                (None, Some(o)) => {
                    if *o <= 0.0 {
                        return Err(c.err("topology.oversubscription", "expected a positive ratio such as 1 or 2"));
                    }
                    let down = *hosts_per_leaf as f64 * h.0 .0 as f64;
                    let per_spine = down / o / (*spines as f64 * f.0 .0 as f64);
                    if (per_spine - per_spine.round()).abs() > 1e-9 || per_spine.round() < 1.0 {
                        return Err(c.err(
                            "topology.oversubscription",
                            format!("{o}:1 needs {per_spine:.3} uplinks per spine; choose values that give a whole number"),
                        ));
                    }
                    per_spine.round() as u32
                }
            };
            Topology::leaf_spine(*leaves, *spines, *hosts_per_leaf, *nics_per_host, uplinks, h, f)
        }
        TopologySection::FatTree { k, host_link, fabric_link } => {
            let h = link(c, "topology.host_link", host_link)?;
            let f = link(c, "topology.fabric_link", fabric_link)?;
            Topology::fat_tree(*k, h, f)
        }
        TopologySection::Explicit { nodes, links } => return explicit(c, nodes, links),
        TopologySection::File { .. } => unreachable!("read in compile"),
    };
    topo.map_err(|e| c.err("topology", e.to_string()))
}

fn explicit(c: &Ctx, nodes: &[NodeCfg], links: &[ExplicitLink]) -> Result<Topology, ConfigError> {
    let mut t = Topology::default();
    let mut by_name: BTreeMap<String, (NodeId, bool)> = BTreeMap::new();
    let mut nic_of: BTreeMap<String, NodeId> = BTreeMap::new();
    let mut host = 0;
    for (i, n) in nodes.iter().enumerate() {
        let f = format!("topology.nodes[{i}]");
        if by_name.contains_key(&n.name) {
            return Err(c.err(&format!("{f}.name"), format!("node `{}` is defined twice", n.name)));
        }
        match n.kind.as_str() {
            "switch" => {
                let p = n.ports.ok_or_else(|| c.err(&format!("{f}.ports"), "a switch needs `ports`"))?;
                let id = t.add_switch(n.name.clone(), p, 1);
                by_name.insert(n.name.clone(), (id, true));
            }
            "host" => {
                let k = n.nics.unwrap_or(1);
                for r in 0..k {
                    let name = if k == 1 { n.name.clone() } else { format!("{}:nic{r}", n.name) };
                    let id = t.add_nic(name.clone(), host, r);
                    nic_of.insert(name, id);
                    if r == 0 {
                        nic_of.insert(format!("{}:nic0", n.name), id);
                        by_name.insert(n.name.clone(), (id, false));
                    }
                }
                host += 1;
            }
            other => return Err(c.err(&format!("{f}.kind"), format!("unknown kind `{other}`; expected \"switch\" or \"host\""))),
        }
    }
    for (i, l) in links.iter().enumerate() {
        let f = format!("topology.links[{i}]");
        let end = |s: &str, side: &str| -> Result<(NodeId, u32), ConfigError> {
            if let Some(&id) = nic_of.get(s) {
                return Ok((id, 0));
            }
            let (name, port) = s.split_once(':').ok_or_else(|| c.err(&format!("{f}.{side}"), format!("`{s}`: expected \"switch:port\" or a host name")))?;
            let &(id, is_sw) = by_name.get(name).ok_or_else(|| c.err(&format!("{f}.{side}"), format!("no node named `{name}`")))?;
            if !is_sw {
                return Err(c.err(&format!("{f}.{side}"), format!("`{s}`: host NICs are named \"host\" or \"host:nicN\"")));
            }
            let p: u32 = port.parse().map_err(|_| c.err(&format!("{f}.{side}"), format!("`{port}` is not a port number")))?;
            Ok((id, p))
        };
        let a = end(&l.a, "a")?;
        let b = end(&l.b, "b")?;
        let (rate, prop) = link(c, &f, &LinkCfg { speed: l.speed, cable: l.cable, delay: l.delay })?;
        t.connect(LinkSpec { a, b, rate, prop }).map_err(|e| c.err(&f, e.to_string()))?;
    }
    t.check().map_err(|e| c.err("topology.links", e.to_string()))?;
    Ok(t)
}

/// A port named "node:port" (0-based), or a host's NIC by the host's name.
fn named_port(c: &Ctx, field: &str, spec: &str, topo: &Topology) -> Result<PortId, ConfigError> {
    let (name, port) = match spec.rsplit_once(':') {
        Some((n, p)) => {
            let p: u32 = p.parse().map_err(|_| c.err(field, format!("`{spec}`: the port after ':' must be a number")))?;
            (n, p)
        }
        None => (spec, 0),
    };
    let node = topo.nodes.iter().position(|n| n.name == name).ok_or_else(|| c.err(field, format!("no node `{name}` in the topology")))?;
    let n = &topo.nodes[node];
    if port >= n.nports {
        return Err(c.err(field, format!("`{name}` has {} ports (0..{}); port {port} does not exist", n.nports, n.nports - 1)));
    }
    let pid = PortId(n.first_port + port);
    if topo.port(pid).peer.is_none() {
        return Err(c.err(field, format!("`{spec}` is not cabled")));
    }
    Ok(pid)
}

/// The scenario's faults as edges (start, and end when a duration is given), checked
/// against the topology and the technology.
fn faults(c: &Ctx, cfg: &[FaultCfg], topo: &Topology, params: &Params, headroom_cells: &[u64]) -> Result<Vec<fabric::sim::Fault>, ConfigError> {
    use fabric::sim::{Fault, FaultKind, RxFault};
    let roce = params.tech == Tech::Roce;
    let mut out = vec![];
    for (i, f) in cfg.iter().enumerate() {
        let field = |name: &str| format!("faults[{i}].{name}");
        let kind = f.kind.as_str();
        // Which optional fields each kind takes; any other one is an error.
        let allowed: &[&str] = match kind {
            "link-down" | "link-up" => &["link"],
            "switch-down" => &["node"],
            "stuck-receiver" => &["node"],
            "slow-receiver" => &["node", "drain_rate", "buffer"],
            "misconfigured-port" => &["port", "pfc", "headroom", "dscp_to_tc"],
            "sm-failure" => &["standby"],
            "route-override" => &["node", "dst", "port"],
            other => {
                return Err(c.err(
                    &field("kind"),
                    format!("unknown fault `{other}`; expected \"link-down\", \"link-up\", \"switch-down\", \"stuck-receiver\", \"slow-receiver\", \"misconfigured-port\", \"route-override\" or \"sm-failure\""),
                ))
            }
        };
        let given = [
            ("link", f.link.is_some()),
            ("node", f.node.is_some()),
            ("port", f.port.is_some()),
            ("drain_rate", f.drain_rate.is_some()),
            ("buffer", f.buffer.is_some()),
            ("pfc", f.pfc.is_some()),
            ("headroom", f.headroom.is_some()),
            ("dscp_to_tc", f.dscp_to_tc.is_some()),
            ("standby", f.standby.is_some()),
            ("dst", f.dst.is_some()),
        ];
        for (name, is) in given {
            if is && !allowed.contains(&name) {
                return Err(c.err(&field(name), format!("a `{kind}` fault takes only {}", allowed.join(", "))));
            }
        }
        let need = |o: bool, name: &str| if o { Ok(()) } else { Err(c.err(&field(name), format!("a `{kind}` fault needs `{name}`"))) };
        let at = SimTime(f.at.ps());
        let end = f.duration.map(|d| at + d);
        if kind == "link-up" && end.is_some() {
            return Err(c.err(&field("duration"), "a link-up has no duration (give the link-down a duration instead)"));
        }
        let mut push = |kind: FaultKind, undo: Option<FaultKind>, label: String| {
            if let (Some(e), Some(u)) = (end, undo) {
                out.push(Fault { at, kind, label: label.clone(), ends: false });
                out.push(Fault { at: e, kind: u, label, ends: true });
            } else {
                out.push(Fault { at, kind, label, ends: false });
            }
        };
        match kind {
            "link-down" | "link-up" => {
                need(f.link.is_some(), "link")?;
                let spec = f.link.as_deref().expect("checked");
                let pid = named_port(c, &field("link"), spec, topo)?;
                let up = kind == "link-up";
                push(FaultKind::Links { ports: vec![pid], up }, Some(FaultKind::Links { ports: vec![pid], up: true }), format!("{kind} {spec}"));
            }
            "switch-down" => {
                need(f.node.is_some(), "node")?;
                let name = f.node.as_deref().expect("checked");
                let n = topo.nodes.iter().find(|n| n.name == name).ok_or_else(|| c.err(&field("node"), format!("no node `{name}` in the topology")))?;
                if n.kind != fabric::topology::NodeKind::Switch {
                    return Err(c.err(&field("node"), format!("`{name}` is not a switch")));
                }
                let ports: Vec<PortId> = (n.first_port..n.first_port + n.nports).map(PortId).filter(|&p| topo.port(p).peer.is_some()).collect();
                push(FaultKind::Links { ports: ports.clone(), up: false }, Some(FaultKind::Links { ports, up: true }), format!("switch-down {name}"));
            }
            "stuck-receiver" | "slow-receiver" => {
                need(f.node.is_some(), "node")?;
                let name = f.node.as_deref().expect("checked");
                let n = topo.nodes.iter().find(|n| n.name == name).ok_or_else(|| c.err(&field("node"), format!("no node `{name}` in the topology")))?;
                let fabric::topology::NodeKind::Nic { ep, .. } = n.kind else {
                    return Err(c.err(&field("node"), format!("`{name}` is not a host NIC")));
                };
                let rx = if kind == "stuck-receiver" {
                    RxFault { drain_bps: 0, buffer: 0, xoff: 0, xon: 0 }
                } else if !roce {
                    // An HCA returns credits while its receive buffer (`buffer`, absent: none
                    // beyond the port's VL buffer) has room, then withholds them; there is no
                    // pause threshold to set.
                    need(f.drain_rate.is_some(), "drain_rate")?;
                    let rate = f.drain_rate.expect("checked");
                    if rate.0 == 0 {
                        return Err(c.err(&field("drain_rate"), "a receiver that drains nothing is a `stuck-receiver`"));
                    }
                    RxFault { drain_bps: rate.0, buffer: f.buffer.map_or(0, |b| b.0), xoff: u64::MAX, xon: 0 }
                } else {
                    need(f.drain_rate.is_some(), "drain_rate")?;
                    need(f.buffer.is_some(), "buffer")?;
                    let (rate, buffer) = (f.drain_rate.expect("checked"), f.buffer.expect("checked"));
                    if rate.0 == 0 {
                        return Err(c.err(&field("drain_rate"), "a receiver that drains nothing is a `stuck-receiver`"));
                    }
                    // The NIC pauses early enough for its own headroom: the IEEE 802.1Qbb
                    // worst case of its link, counted in bytes; it resumes two frames lower.
                    let link = topo.port(topo.port_of(topo.endpoints[ep as usize], 0));
                    let max_frame = model::frame::roce_frame(params.encap, Transport::WriteFirst, params.mtu);
                    // The NIC counts its backlog in bytes (1-byte cells): the trigger falls
                    // inside a frame, like a dynamic one.
                    let d = auto_headroom(link.rate, link.prop, max_frame, params.pfc.response, SimDuration::ZERO, Bytes(1), true);
                    let headroom = d.cells;
                    if buffer.0 < headroom + 2 * max_frame.0 {
                        return Err(c.err(&field("buffer"), format!("{buffer} is below the NIC's PFC headroom ({headroom} B) plus two frames")));
                    }
                    let xoff = buffer.0 - headroom;
                    RxFault { drain_bps: rate.0, buffer: buffer.0, xoff, xon: xoff - 2 * max_frame.0 }
                };
                push(FaultKind::NicRx { ep, rx: Some(rx) }, Some(FaultKind::NicRx { ep, rx: None }), format!("{kind} {name}"));
            }
            "misconfigured-port" => {
                need(f.port.is_some(), "port")?;
                if !roce {
                    return Err(c.err(
                        &field("kind"),
                        "`misconfigured-port` changes PFC, headroom or the DSCP map: RoCEv2 settings (InfiniBand has none to get wrong)",
                    ));
                }
                let spec = f.port.as_deref().expect("checked");
                let pid = named_port(c, &field("port"), spec, topo)?;
                let n = [f.pfc.is_some(), f.headroom.is_some(), f.dscp_to_tc.is_some()].iter().filter(|&&b| b).count();
                if n != 1 {
                    return Err(c.err(&field("port"), "a `misconfigured-port` fault takes exactly one of `pfc = false`, `headroom`, `dscp_to_tc`"));
                }
                if let Some(p) = f.pfc {
                    if p {
                        return Err(c.err(&field("pfc"), "expected false (PFC off on this port); true is the fabric's own setting"));
                    }
                    push(FaultKind::PortPfc { port: pid, enabled: false }, Some(FaultKind::PortPfc { port: pid, enabled: true }), format!("PFC off on {spec}"));
                } else if let Some(h) = f.headroom {
                    if !topo.is_switch(topo.port(pid).node) {
                        return Err(c.err(&field("headroom"), format!("`{spec}` is a NIC port; headroom is a switch ingress setting")));
                    }
                    let cells = h.cells(params.buffer.cell);
                    let before = headroom_cells[pid.0 as usize];
                    push(
                        FaultKind::PortHeadroom { port: pid, cells },
                        Some(FaultKind::PortHeadroom { port: pid, cells: before }),
                        format!("headroom {h} on {spec}"),
                    );
                } else if let Some(m) = &f.dscp_to_tc {
                    if !topo.is_switch(topo.port(pid).node) {
                        return Err(c.err(&field("dscp_to_tc"), format!("`{spec}` is a NIC port; give a switch port (the map it applies to what arrives)")));
                    }
                    let mut map = params.dscp_to_tc;
                    for (k, &tc) in m {
                        let d: u8 = k.parse().ok().filter(|&d| d < 64).ok_or_else(|| c.err(&field("dscp_to_tc"), format!("`{k}` is not a DSCP (0..63)")))?;
                        if tc > 7 {
                            return Err(c.err(&field("dscp_to_tc"), format!("class {tc} for DSCP {d}: expected 0..7")));
                        }
                        map[d as usize] = tc;
                    }
                    push(
                        FaultKind::PortDscpMap { port: pid, map: Some(Box::new(map)) },
                        Some(FaultKind::PortDscpMap { port: pid, map: None }),
                        format!("DSCP map changed on {spec}"),
                    );
                }
            }
            "route-override" => {
                need(f.node.is_some(), "node")?;
                need(f.dst.is_some(), "dst")?;
                need(f.port.is_some(), "port")?;
                let name = f.node.as_deref().expect("checked");
                let sw = topo.nodes.iter().position(|n| n.name == name).ok_or_else(|| c.err(&field("node"), format!("no node `{name}` in the topology")))?;
                if topo.nodes[sw].kind != fabric::topology::NodeKind::Switch {
                    return Err(c.err(&field("node"), format!("`{name}` is not a switch")));
                }
                let dst_name = f.dst.as_deref().expect("checked");
                let ep = match topo.nodes.iter().find(|n| n.name == dst_name).map(|n| n.kind) {
                    Some(fabric::topology::NodeKind::Nic { ep, .. }) => ep,
                    _ => return Err(c.err(&field("dst"), format!("`{dst_name}` is not a host NIC"))),
                };
                let spec = f.port.as_deref().expect("checked");
                let pid = named_port(c, &field("port"), spec, topo)?;
                if topo.port(pid).node.0 as usize != sw {
                    return Err(c.err(&field("port"), format!("`{spec}` is not a port of `{name}`")));
                }
                let node = fabric::topology::NodeId(sw as u32);
                push(
                    FaultKind::RouteOverride { node, dst: ep, port: Some(pid) },
                    Some(FaultKind::RouteOverride { node, dst: ep, port: None }),
                    format!("route override: {name} sends {dst_name}'s traffic to {spec}"),
                );
            }
            "sm-failure" => {
                if roce {
                    return Err(c.err(&field("kind"), "`sm-failure` is an InfiniBand fault (a RoCE fabric has no subnet manager)"));
                }
                if end.is_some() {
                    return Err(c.err(&field("duration"), "an SM failure has no duration: a standby takes over, or nothing does"));
                }
                need(f.standby.is_some(), "standby")?;
                let standby = f.standby.expect("checked");
                push(FaultKind::SmFailure { standby }, None, format!("master SM fails ({})", if standby { "a standby runs" } else { "no standby" }));
            }
            _ => unreachable!("kinds checked above"),
        }
    }
    Ok(out)
}

fn traffic(c: &Ctx, cfg: &ScenarioFile, topo: &Topology, tech: Tech) -> Result<(Vec<FlowSpec>, Vec<Job>), ConfigError> {
    let hosts = topo.hosts;
    // Rail-0 NIC of each host.
    let mut ep_of_host = vec![u32::MAX; hosts as usize];
    for (ep, &n) in topo.endpoints.iter().enumerate() {
        if let fabric::topology::NodeKind::Nic { host, rail: 0, .. } = topo.node(n).kind {
            ep_of_host[host as usize] = ep as u32;
        }
    }
    let mut flows = vec![];
    let mut jobs = vec![];
    let mut rng = engine::Rng::new(cfg.scenario.seed, 0x7AFF_1C00);
    let mut place_rng = engine::Rng::new(cfg.scenario.seed, 0x7AFF_1C01);
    for (g, t) in cfg.traffic.iter().enumerate() {
        let f = format!("traffic[{g}]");
        let host = |h: u32, field: &str| -> Result<u32, ConfigError> {
            if h >= hosts {
                return Err(c.err(&format!("{f}.{field}"), format!("host {h} does not exist (the topology has {hosts} hosts, numbered from 0)")));
            }
            Ok(ep_of_host[h as usize])
        };
        // The class: a DSCP on RoCE, a service level on InfiniBand; the other may be given
        // too (so one file runs on both) and is then ignored.
        let class = |dscp: &Option<u8>, sl: &Option<u8>| -> Result<(u8, u8), ConfigError> {
            match tech {
                Tech::Roce => match *dscp {
                    Some(d) if d < 64 => Ok((d, 0)),
                    Some(_) => Err(c.err(&format!("{f}.dscp"), "expected a DSCP value 0..63")),
                    None => Err(c.err(&format!("{f}.dscp"), "RoCE traffic needs a `dscp` (its traffic class)")),
                },
                Tech::Infiniband => match *sl {
                    Some(s) if s < 15 => Ok((0, s)),
                    Some(_) => Err(c.err(&format!("{f}.sl"), "expected a data service level 0..14")),
                    None => Err(c.err(&format!("{f}.sl"), "InfiniBand traffic needs an `sl` (its service level)")),
                },
            }
        };
        if let Traffic::Collective(j) = t {
            let job = collective(c, &f, j, topo, &mut place_rng, g as u32, class(&j.dscp, &j.sl)?, &mut flows)?;
            jobs.push(job);
            continue;
        }
        let mut push = |src: u32, dst: u32, size: Bytes, start: SimDuration, (dscp, sl): (u8, u8)| {
            flows.push(FlowSpec::new(src, dst, size, SimTime(start.ps()), dscp, sl, g as u32));
        };
        match t {
            Traffic::Collective(_) => unreachable!("handled above"),
            Traffic::Background { cdf, load, hosts: which, start, duration, dscp, sl } => {
                let dscp = class(dscp, sl)?;
                let path = c.base.join(cdf);
                let text = std::fs::read_to_string(&path).map_err(|e| c.err(&format!("{f}.cdf"), format!("cannot read {}: {e}", path.display())))?;
                let dist = workload::flowsize::Cdf::parse(&text).map_err(|e| c.err(&format!("{f}.cdf"), format!("{}: {e}", path.display())))?;
                if !(*load > 0.0 && *load <= 1.0) {
                    return Err(c.err(&format!("{f}.load"), format!("expected a fraction of the link rate in (0, 1], got {load}")));
                }
                if duration.ps() == 0 {
                    return Err(c.err(&format!("{f}.duration"), "expected a positive time"));
                }
                let members: Vec<u32> = match which {
                    Some(h) => {
                        for &x in h {
                            host(x, "hosts")?;
                        }
                        h.clone()
                    }
                    None => (0..hosts).collect(),
                };
                if members.len() < 2 {
                    return Err(c.err(&format!("{f}.hosts"), "background traffic needs at least 2 hosts"));
                }
                let eps: Vec<u32> = members.iter().map(|&h| ep_of_host[h as usize]).collect();
                let rate = eps.iter().map(|&e| topo.port(topo.ep_port(e)).rate.0).min().unwrap_or(0);
                let mut bg = engine::Rng::new(cfg.scenario.seed, 0x7AFF_2000 + g as u64);
                let t0 = start.unwrap_or_default();
                for a in workload::flowsize::poisson(&dist, eps.len() as u32, *load, rate, duration.ps(), &mut || bg.f64()) {
                    push(eps[a.src as usize], eps[a.dst as usize], Bytes(a.bytes), t0 + SimDuration(a.at_ps), dscp);
                }
            }
            Traffic::Incast { receiver, senders, size, start, stagger, dscp, sl } => {
                let d = host(*receiver, "receiver")?;
                let dscp = class(dscp, sl)?;
                if senders.is_empty() {
                    return Err(c.err(&format!("{f}.senders"), "expected at least one sender"));
                }
                for (i, &s) in senders.iter().enumerate() {
                    if s == *receiver {
                        return Err(c.err(&format!("{f}.senders"), format!("host {s} is also the receiver")));
                    }
                    let st = start.unwrap_or_default() + stagger.unwrap_or_default() * i as u64;
                    push(host(s, "senders")?, d, *size, st, dscp);
                }
            }
            Traffic::Permutation { size, start, dscp, sl } => {
                let dscp = class(dscp, sl)?;
                if hosts < 2 {
                    return Err(c.err(&f, "a permutation needs at least 2 hosts"));
                }
                // A random derangement: shuffle until no host maps to itself (Sattolo's
                // algorithm gives a single cycle, a derangement in one pass).
                let mut perm: Vec<u32> = (0..hosts).collect();
                for i in (1..hosts as usize).rev() {
                    let j = rng.below(i as u64) as usize;
                    perm.swap(i, j);
                }
                for (s, &d) in perm.iter().enumerate() {
                    push(host(s as u32, "src")?, host(d, "dst")?, *size, start.unwrap_or_default(), dscp);
                }
            }
            Traffic::AllToAll { size, start, dscp, sl } => {
                let dscp = class(dscp, sl)?;
                for s in 0..hosts {
                    for d in 0..hosts {
                        if s != d {
                            push(host(s, "src")?, host(d, "dst")?, *size, start.unwrap_or_default(), dscp);
                        }
                    }
                }
            }
            Traffic::Message { src, dst, size, at, dscp, sl } => {
                if src == dst {
                    return Err(c.err(&format!("{f}.dst"), "source and destination are the same host"));
                }
                let dscp = class(dscp, sl)?;
                push(host(*src, "src")?, host(*dst, "dst")?, *size, *at, dscp);
            }
        }
    }
    if flows.is_empty() && cfg.scenario.stop_time.is_none() {
        return Err(c.err("traffic", "no traffic and no scenario.stop_time: nothing would ever happen"));
    }
    Ok((flows, jobs))
}

/// Compiles a collective job into flows (appended to `flows`).
#[allow(clippy::too_many_arguments)]
fn collective(
    c: &Ctx,
    f: &str,
    j: &CollectiveCfg,
    topo: &Topology,
    rng: &mut engine::Rng,
    group: u32,
    (dscp, sl): (u8, u8),
    flows: &mut Vec<FlowSpec>,
) -> Result<Job, ConfigError> {
    use workload::{Algorithm, Collective};
    let op = Collective::parse(&j.op).ok_or_else(|| {
        c.err(&format!("{f}.op"), format!("unknown collective `{}`; expected all-reduce, all-gather, reduce-scatter, broadcast or all-to-all", j.op))
    })?;
    let algorithm = match j.algorithm.as_deref() {
        None | Some("ring") => Algorithm::Ring,
        Some("tree") => Algorithm::Tree,
        Some("sharp") => Algorithm::Sharp,
        Some(o) => return Err(c.err(&format!("{f}.algorithm"), format!("unknown algorithm `{o}`; expected \"ring\", \"tree\" or \"sharp\""))),
    };
    let hosts: Vec<u32> = match &j.hosts {
        Some(h) => {
            let mut seen = std::collections::BTreeSet::new();
            for &x in h {
                if x >= topo.hosts {
                    return Err(c.err(&format!("{f}.hosts"), format!("host {x} does not exist (the topology has {} hosts, numbered from 0)", topo.hosts)));
                }
                if !seen.insert(x) {
                    return Err(c.err(&format!("{f}.hosts"), format!("host {x} is listed twice")));
                }
            }
            h.clone()
        }
        None => (0..topo.hosts).collect(),
    };
    let placement = match j.placement.as_deref() {
        None => crate::driver::Placement::Linear,
        Some(p) => crate::driver::Placement::parse(p)
            .ok_or_else(|| c.err(&format!("{f}.placement"), format!("unknown placement `{p}`; expected \"linear\", \"rail-aligned\" or \"random\"")))?,
    };
    let slots = crate::driver::host_nics(topo, &hosts).iter().map(|v| v.len() as u32).sum::<u32>();
    let ranks = j.ranks.unwrap_or(slots);
    let eps = crate::driver::place(topo, &hosts, ranks, placement, rng).map_err(|e| c.err(&format!("{f}.ranks"), e))?;
    let mut spec = workload::Spec::new(op, algorithm, ranks, j.size.0);
    spec.channels = j.channels.unwrap_or(spec.channels);
    spec.chunk = j.chunk.map_or(spec.chunk, |b| b.0);
    spec.window = j.window.unwrap_or(spec.window);
    spec.root = j.root.unwrap_or(spec.root);
    spec.iterations = j.iterations.unwrap_or(spec.iterations);
    // SHARP: the aggregation manager's tree over the switches above the placed ranks;
    // its aggregation vertices run on those switches' aggregation nodes.
    let mut vertices = eps.clone();
    if algorithm == Algorithm::Sharp && op == Collective::AllReduce && ranks >= 2 {
        let jt = crate::sharp::job_tree(topo, &eps).map_err(|e| c.err(&format!("{f}.algorithm"), e))?;
        spec.tree = Some(jt.tree);
        vertices = jt.endpoints;
    }
    let dag = workload::build(&spec).map_err(|e| c.err(f, e))?;
    let sent = dag.bytes_sent();
    let received = dag.bytes_received();
    let rank_link_bytes = sent.iter().chain(&received).copied().max().unwrap_or(0) / spec.iterations as u64;
    let start = SimTime(j.start.unwrap_or_default().ps());
    // Jobs get disjoint connection ids: one QP per (job, lane, peer pair).
    let conn_base = flows.iter().filter_map(|x| x.conn).max().map_or(0, |m| m + 1);
    let ids = crate::driver::append(flows, &dag, &vertices, start, dscp, sl, group, conn_base);
    Ok(Job {
        group,
        op,
        algorithm,
        ranks,
        size: spec.size,
        channels: spec.channels,
        chunk: spec.chunk,
        start,
        iteration_ends: dag.iteration_ends.iter().map(|&i| ids[i as usize]).collect(),
        endpoints: eps,
        rank_link_bytes,
    })
}
