//! The scenario file's schema: one serde struct per TOML section, as written in the file.
//!
//! Owns the field names, which fields are optional, their serde defaults and what each
//! one means (the doc comments are the reference for scenario files). Unknown fields are
//! errors (`deny_unknown_fields`); quantities carry their units (`units` parses them).
//! Leaves out every check beyond a value's type and unit, and every `auto` value: those
//! are `compile`'s and the section modules' ([`crate::roce`], [`crate::ib`], ...).

use serde::Deserialize;
use std::collections::BTreeMap;

use fabric::params::Forwarding;
use model::dcqcn::{CnpScope, CnpTransport, IncreaseRule, ReduceTiming};
use units::{BitRate, Bytes, Length, SimDuration};

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
    /// Adaptive routing (NVIDIA Quantum AR over the subnet manager's AR groups); absent:
    /// off, every packet follows the LFT.
    #[serde(default)]
    pub adaptive_routing: Option<IbArCfg>,
    /// HCAs place out-of-order packets (ConnectX-5 and later, RC: NVIDIA out-of-order data
    /// placement); default false.
    #[serde(default)]
    pub ooo: bool,
    /// With `ooo`: a packet this many PSNs ahead of the expected one makes the responder
    /// NAK the gap. Default: no window (only the timeout).
    #[serde(default)]
    pub ooo_nak_window: Option<u32>,
    /// With `ooo`: a gap that lasts this long is NAKed. Default: the local ACK timeout.
    #[serde(default)]
    pub ooo_nak_timeout: Option<SimDuration>,
}

/// `[infiniband] adaptive_routing = { mode = ..., ... }`.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct IbArCfg {
    /// "per-packet", "per-flowlet" or "off".
    pub mode: String,
    /// `per-flowlet`: the idle gap after which a flow's next packet may take another port.
    #[serde(default)]
    pub flowlet_gap: Option<SimDuration>,
    /// Queue bytes per load grade (ports within one grade count as equally loaded).
    /// Default: eight full-MTU packets.
    #[serde(default)]
    pub grade: Option<Bytes>,
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
    /// How switches spread data packets over equal-cost next hops: "ecmp" (default: the
    /// 5-tuple hash), "flowlet", "packet-spray" or "adaptive" (`fabric::params::LoadBalancing`).
    #[serde(default)]
    pub load_balancing: Option<String>,
    /// `flowlet`: the idle gap after which a flow is re-hashed. Required with "flowlet".
    #[serde(default)]
    pub flowlet_gap: Option<SimDuration>,
    /// `adaptive`: queue bytes per load grade (ports within one grade count as equally
    /// loaded). Default: eight full-MTU frames.
    #[serde(default)]
    pub adaptive_grade: Option<Bytes>,
    /// `packet-spray`: "round-robin" (default) or "random".
    #[serde(default)]
    pub spray: Option<String>,
    /// NICs place out-of-order packets (NVIDIA out-of-order data placement); default false.
    #[serde(default)]
    pub ooo: bool,
    /// With `ooo`: a packet this many PSNs ahead of the expected one makes the responder
    /// NAK the gap. Default: no window (only the timeout).
    #[serde(default)]
    pub ooo_nak_window: Option<u32>,
    /// With `ooo`: a gap that lasts this long is NAKed. Default: the local ACK timeout.
    #[serde(default)]
    pub ooo_nak_timeout: Option<SimDuration>,
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
