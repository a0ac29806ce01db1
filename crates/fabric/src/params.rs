//! The compiled, immutable parameters of a run: every unit resolved, every `auto` filled.

use model::dcqcn::DcqcnParams;
use model::ecn::Red;
use model::frame::Encap;
use units::{Bytes, SimDuration, SimTime};

/// Switch forwarding mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Forwarding {
    /// A hop forwards a packet once its last bit has arrived.
    StoreAndForward,
    /// A hop may start forwarding once the headers (the first 64 bytes) have arrived, when
    /// the output is idle and no faster than the input; otherwise store-and-forward.
    CutThrough,
}

/// When an egress queue marks ECN: on the queue a packet joins, or on the queue it leaves
/// behind. Marking at dequeue tells the sender about the queue *now*, not the queue its
/// packet waited in; DCQCN's and HPCC's ns-3 simulators mark at dequeue (HPCC
/// `switch-node.cc`, `SwitchNotifyDequeue`), the RED rule itself is the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EcnMarking {
    Enqueue,
    Dequeue,
}

/// Egress scheduling class of a queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sched {
    /// Served before every weighted queue; among strict queues the higher index first.
    Strict,
    /// Deficit round robin with this weight (quantum = weight × 4096 bytes).
    Weighted(u32),
}

/// When a lossless priority group asks its peer to pause.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// When the PG's shared-pool use reaches the dynamic threshold α·free (the usual
    /// setting on shared-buffer ASICs and SONiC's dynamic_th profiles).
    Dynamic,
    /// When the PG's occupancy (reserved + shared) reaches this many cells.
    Static(u64),
}

/// When a paused lossless PG resumes its peer (SONiC `xon` / `xon_offset`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resume {
    /// Resume when occupancy (reserved + shared) is at most the trigger level minus this.
    Offset(u64),
    /// Resume when occupancy (reserved + shared) is at most this many cells.
    Absolute(u64),
}

/// The switch buffer (MMU), in cells.
#[derive(Clone, Debug)]
pub struct Buffer {
    pub cell: Bytes,
    pub total_cells: u64,
    /// α = 2^dynamic_th for the shared pool's dynamic threshold (SONiC BUFFER_PROFILE).
    pub dynamic_th: i8,
    /// Guaranteed cells per (ingress port, PG).
    pub reserved_cells: u64,
    /// Headroom per (port, lossless PG), in cells; `None` means computed per port (auto).
    pub headroom_cells: Option<u64>,
    pub trigger: Trigger,
    pub resume: Resume,
    /// A shared headroom pool of this many cells instead of dedicated headroom.
    pub shared_headroom_pool: Option<u64>,
}

#[derive(Clone, Debug)]
pub struct Pfc {
    pub enabled: bool,
    /// Pause time sent in XOFF frames, in 512-bit quanta.
    pub quanta: u16,
    /// While still congested, an XOFF is re-sent after this long.
    pub refresh: Option<SimDuration>,
    /// Time from receiving a PFC frame to acting on it; `None`: IEEE 802.3 Table 31B-1 value.
    pub response: Option<SimDuration>,
    /// The switches' PFC watchdog, or none.
    pub watchdog: Option<PfcWatchdog>,
}

/// SONiC's PFC watchdog (pfcwd), per lossless (switch egress port, priority): a queue that
/// has been paused by its peer without a break for `detection` is declared in a storm
/// and mitigated; when no PFC frame has arrived on it for `restoration`, it is restored.
/// Semantics from SONiC's PFC watchdog design (sonic-mgmt `docs/pfcwd/PFCWD_MMU_Change.md`,
/// the SONiC wiki "PFC Watchdog"): *drop* discards what the queue holds, every later packet
/// for it, and every packet arriving on the same port and priority (so the switch stops
/// pausing that neighbour), and ignores the pause frames it receives; *forward* ignores
/// the pause frames and keeps transmitting. SONiC polls the queues every poll interval;
/// this model detects at the exact instant, i.e. a poll interval of 0. SONiC's
/// `pfcwd start_default` uses detection 200 ms, restoration 200 ms, poll 200 ms, action
/// drop, each time multiplied by `max(1, (ports - 1) / 32 + 1)` (sonic-utilities
/// `pfcwd/main.py`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PfcWatchdog {
    pub detection: SimDuration,
    pub restoration: SimDuration,
    pub action: WatchdogAction,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WatchdogAction {
    Drop,
    Forward,
}

/// Which fabric a run simulates. Both share the engine, topology, switch queues and the RC
/// transport; they differ in link-level flow control (PFC vs credits), congestion control
/// (DCQCN vs IB CC), routing (ECMP hashing vs subnet-manager tables) and encapsulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tech {
    Roce,
    Infiniband,
}

/// InfiniBand link-layer parameters (credit-based flow control per virtual lane).
#[derive(Clone, Debug)]
pub struct Ib {
    /// Packets carry a GRH (needed across subnets; off inside one subnet).
    pub grh: bool,
    /// SL → VL: the table of every port that has no table of its own.
    pub sl_to_vl: [u8; 16],
    /// SL → VL tables of switch (input port, output port) pairs that differ from
    /// `sl_to_vl` (IBTA Vol. 1 §7.6.6, SLtoVLMappingTable per port pair). Lookup only.
    pub sl_to_vl_ports: std::collections::HashMap<(u32, u32), [u8; 16]>,
    /// SL → VL tables of HCA ports (by endpoint) that differ from `sl_to_vl`.
    pub sl_to_vl_hca: std::collections::HashMap<u32, [u8; 16]>,
    /// Data VLs in use (VL0..data_vls-1).
    pub data_vls: u8,
    /// Receive buffer per (input port, data VL), in 64-byte blocks.
    pub vl_buffer_blocks: u32,
    /// Head-of-queue lifetime: a packet at the head of an output VL queue longer than this
    /// is discarded (IBTA Vol. 1 §18.2.5.4, PortInfo:HOQLife). `None`: infinite.
    pub hoq_lifetime: Option<SimDuration>,
    /// The same on switch ports that drive a CA (OpenSM's leaf_head_of_queue_lifetime).
    pub leaf_hoq_lifetime: Option<SimDuration>,
    /// Head-of-queue discards in a row after which a switch port's VL stalls (discards
    /// everything for 8 × HOQ lifetime; IBTA Vol. 1 §18.2.5.4). 0: never.
    pub vl_stall_count: u8,
    /// Switch lifetime limit: a packet in a switch longer than this is discarded
    /// (§18.2.5.4, SwitchInfo:LifeTimeValue). `None`: infinite.
    pub switch_lifetime: Option<SimDuration>,
    /// The subnet manager's routing engine that filled the forwarding tables.
    pub routing: String,
    /// IB congestion control (Annex A10), or none.
    pub cc: Option<crate::ibcc::IbCcParams>,
}

/// The compiled parameters of one fabric: the RC transport and switch fields are shared by
/// both technologies; `encap`, the DSCP/PFC/ECN/DCQCN fields and `buffer` are RoCEv2's
/// (unused with InfiniBand, where `ib` holds the credit link layer and "class" means VL).
#[derive(Clone, Debug)]
pub struct Params {
    pub tech: Tech,
    /// IB path MTU (payload bytes per packet).
    pub mtu: Bytes,
    pub encap: Encap,
    pub dscp_to_tc: [u8; 64],
    pub tc_to_pg: [u8; 8],
    pub lossless: [bool; 8],
    pub ecn: [Option<Red>; 8],
    /// Where switches take the queue length the RED rule marks on.
    pub ecn_marking: EcnMarking,
    pub sched: [Sched; 8],
    pub cnp_dscp: u8,
    pub pfc: Pfc,
    pub dcqcn: Option<(String, DcqcnParams)>,
    /// Responder ACKs every this many packets (and always the last of a message).
    pub ack_every: u32,
    /// Requester retransmission timeout (IB local ACK timeout: 4.096 µs × 2^timeout).
    pub rto: SimDuration,
    pub retry_cnt: u32,
    /// How the source port (ECMP entropy) of each QP is chosen.
    pub forwarding: Forwarding,
    pub switch_latency: SimDuration,
    pub buffer: Buffer,
    /// InfiniBand link layer; `Some` exactly when `tech` is `Infiniband`.
    pub ib: Option<Ib>,
    /// Deadlock detector: a cycle of blocked queues none of which has dequeued for this
    /// long is a deadlock (`[scenario] deadlock_timeout`, default 1 ms).
    pub deadlock_timeout: SimDuration,
    /// How switches spread data packets: RoCEv2 over an ECMP group (`[roce]
    /// load_balancing`), InfiniBand over the subnet manager's adaptive-routing groups
    /// (`[infiniband] adaptive_routing`: `Adaptive` per packet, `AdaptiveFlowlet` per
    /// flowlet; `Ecmp` means AR off, the LFT alone).
    pub load_balancing: LoadBalancing,
    /// Out-of-order placement at the responder (`[roce] ooo`); `None`: a PSN gap is a loss
    /// (NAK on the first out-of-order packet, go-back-N).
    pub ooo: Option<OutOfOrder>,
}

/// How a RoCEv2 switch picks among the equal-cost next hops of a data packet
/// (`crate::sim` `load_balance.rs`). ACKs, NAKs and CNPs always follow the 5-tuple hash.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LoadBalancing {
    /// The 5-tuple hash with the switch's seed: a flow keeps one path.
    #[default]
    Ecmp,
    /// Flowlet switching (Kandula et al., "Dynamic load balancing without packet
    /// reordering", SIGCOMM CCR 2007; CONGA, SIGCOMM 2014): a flow's packets keep the
    /// port of its flowlet; after an idle gap of at least `gap` the flow is re-hashed
    /// (the hash also mixes a per-flow flowlet count).
    Flowlet { gap: SimDuration },
    /// Per-packet spraying over the whole group (Spectrum-X's packet-level load
    /// balancing), in the order `order` says.
    PacketSpray { order: Spray },
    /// Per packet to the member with the fewest bytes queued at egress (all classes)
    /// counted in whole `grade`s; ties go to the first such member from the flow's
    /// round-robin pointer at the switch.
    Adaptive { grade: Bytes },
    /// Per flowlet to the least-loaded member, as `Adaptive` picks it (InfiniBand AR per
    /// flowlet): a flow keeps the port of its flowlet; a packet at least `gap` after the
    /// flow's previous one at the switch starts a new flowlet, placed on the member with
    /// the fewest `grade`s queued then.
    AdaptiveFlowlet { gap: SimDuration, grade: Bytes },
}

/// The member order of packet spraying.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spray {
    /// Each switch steps each flow through the group's members in turn.
    RoundRobin,
    /// Each switch draws a member per packet with a counter-based hash of its seed and
    /// the flow: deterministic for a seed.
    Random,
}

/// Out-of-order data placement at an RC responder: NVIDIA ConnectX-5 and later, RC, XRC
/// and DC QPs (NVIDIA MLNX_OFED and DOCA documentation, "Out-of-Order (OOO) Data
/// Placement": packets of a QP that took different paths "are placed into host memory in
/// an out-of-order manner" instead of being dropped and retransmitted); on Spectrum-X the
/// BlueField-3 SuperNIC does the same for RoCE (NVIDIA Spectrum-X documentation). Each
/// packet of an RDMA WRITE goes to its place in memory on arrival; a message completes
/// once every PSN of it has arrived. The NAK rule below is this model's, not NVIDIA's
/// (which is unpublished). A PSN gap is declared a loss, and NAKed, only when a packet is more
/// than `nak_window` PSNs ahead of the expected one, or when a gap is open and the
/// expected PSN has not moved for `nak_timeout`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutOfOrder {
    /// PSNs ahead of the expected one a packet may be before the gap is NAKed.
    pub nak_window: u32,
    /// How long a gap may last before it is NAKed.
    pub nak_timeout: SimDuration,
}

/// One RDMA WRITE to post.
#[derive(Clone, Debug)]
pub struct FlowSpec {
    pub src: u32,
    pub dst: u32,
    pub size: Bytes,
    pub start: SimTime,
    pub dscp: u8,
    /// InfiniBand service level.
    pub sl: u8,
    /// The traffic entry it came from (index in the scenario's `traffic` list).
    pub group: u32,
    /// Flows (indices into the same list) whose data must all have been delivered to their
    /// receivers before this one is posted: a workload's dependency graph. The flow is
    /// posted at `max(start, last delivery)` (a reduction between a receive and the send
    /// that forwards it takes no time, as in `workload`).
    pub after: Vec<u32>,
    /// Flows with the same `conn` share one RC queue pair (same source, destination and
    /// class; messages go out in posting order, as on one QP of a real NIC). `None`: a QP
    /// of its own.
    pub conn: Option<u32>,
    /// A barrier, not a transfer: it sends nothing and is delivered the moment all of
    /// `after` are (a workload's "iteration done").
    pub join: bool,
}

impl FlowSpec {
    /// A flow with no dependencies on a QP of its own.
    pub fn new(src: u32, dst: u32, size: Bytes, start: SimTime, dscp: u8, sl: u8, group: u32) -> FlowSpec {
        FlowSpec { src, dst, size, start, dscp, sl, group, after: vec![], conn: None, join: false }
    }
}

/// The flows a simulator runs, in flow order (flow `i` is the `i`-th handed out). A
/// simulator reads them once whole while it is built (their QPs and records) and then as
/// [`FlowPart`]s, a stage at a time, as it runs: a source may generate them each time
/// instead of holding them, and a collective's millions of transfers are a few numbers
/// and a generator (`scenario`'s flow list), of which a simulator holds only the
/// transfers whose dependencies are not all delivered.
pub trait FlowSource: Send + Sync {
    /// How many flows there are.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Hands every flow to `f`, in flow order. The reference lives for one call only (a
    /// generator reuses one spec).
    fn for_each(&self, f: &mut dyn FnMut(&FlowSpec));
    /// The flows again, as contiguous parts in flow order that cover them all; a flow
    /// depends only on flows of its own part.
    fn parts(self: std::sync::Arc<Self>) -> Vec<Box<dyn FlowPart>>;
}

/// A run of flows (`range`) handed out a stage at a time, in flow order: what a
/// simulator reads to build its dependency graph as it runs. It generates a part only
/// as far as it must: at its start, until no flow to come may depend on nothing (those
/// are posted at their start, in flow order); before it delivers flow `f`, until no
/// flow to come may depend on `f` (so every flow waiting on `f` is known when `f` is
/// delivered).
pub trait FlowPart: Send {
    /// The flows' indices.
    fn range(&self) -> std::ops::Range<u32>;
    /// Hands the next stage's flows to `f`, in flow order; `false` (nothing handed out)
    /// when every flow was.
    fn next_stage(&mut self, f: &mut dyn FnMut(&FlowSpec)) -> bool;
    /// Between stages: the lowest flow a flow not handed out yet may depend on
    /// (`u32::MAX`: every flow was handed out).
    fn low_water(&mut self) -> u32;
    /// Between stages: whether a flow not handed out yet may depend on nothing.
    fn free_ahead(&self) -> bool;
}

/// Flows held as specs.
impl FlowSource for Vec<FlowSpec> {
    fn len(&self) -> usize {
        self.as_slice().len()
    }
    fn for_each(&self, f: &mut dyn FnMut(&FlowSpec)) {
        self.iter().for_each(f);
    }
    fn parts(self: std::sync::Arc<Self>) -> Vec<Box<dyn FlowPart>> {
        vec![Box::new(HeldPart::new(self, 0))]
    }
}

/// Flows held as specs, as a part: a stage is one flow; what the flows still to hand out
/// depend on is read off two suffix arrays made once (none when no flow depends on
/// another, as for every entry a scenario holds as specs).
pub struct HeldPart {
    specs: std::sync::Arc<Vec<FlowSpec>>,
    first: u32,
    /// The next flow to hand out (an index into `specs`).
    next: usize,
    /// From each flow to the end: the lowest flow one depends on, and whether one
    /// depends on nothing.
    suffix: Option<(Vec<u32>, Vec<bool>)>,
}

impl HeldPart {
    /// `specs` as flows `first..`.
    pub fn new(specs: std::sync::Arc<Vec<FlowSpec>>, first: u32) -> HeldPart {
        let n = specs.len();
        let suffix = specs.iter().any(|f| !f.after.is_empty()).then(|| {
            let (mut lowest, mut free) = (vec![u32::MAX; n + 1], vec![false; n + 1]);
            for (i, f) in specs.iter().enumerate().rev() {
                lowest[i] = lowest[i + 1].min(f.after.iter().copied().min().unwrap_or(u32::MAX));
                free[i] = free[i + 1] || f.after.is_empty();
            }
            (lowest, free)
        });
        HeldPart { specs, first, next: 0, suffix }
    }
}

impl FlowPart for HeldPart {
    fn range(&self) -> std::ops::Range<u32> {
        self.first..self.first + self.specs.len() as u32
    }
    fn next_stage(&mut self, f: &mut dyn FnMut(&FlowSpec)) -> bool {
        let Some(spec) = self.specs.get(self.next) else { return false };
        f(spec);
        self.next += 1;
        true
    }
    fn low_water(&mut self) -> u32 {
        self.suffix.as_ref().map_or(u32::MAX, |(lowest, _)| lowest[self.next])
    }
    fn free_ahead(&self) -> bool {
        match &self.suffix {
            Some((_, free)) => free[self.next],
            None => self.next < self.specs.len(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Output {
    /// Sample period of the time series, when they are recorded.
    pub sample_period: SimDuration,
    /// How many of the busiest ports the time series keep.
    pub top_ports: usize,
}
