//! Counters the simulation updates in place; no formatting in the hot loop. Ports, nodes
//! and QPs are the simulator's typed ids (they serialise as their numbers); times are
//! integer picoseconds (`_ps`, or `u64` where the field says so).

use crate::sim::QpId;
use crate::topology::{NodeId, PortId, Topology};

/// Why a packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DropCause {
    /// Lossless PG: its headroom (or the shared headroom pool) was full.
    HeadroomOverflow = 0,
    /// Lossy PG over its dynamic threshold α·free.
    DynamicThreshold = 1,
    /// The shared pool itself was full.
    BufferFull = 2,
    /// No route to the destination (e.g. every path down).
    NoRoute = 3,
    /// Forwarded to a port whose link is down (IB: counted in PortXmitDiscards).
    PortDown = 4,
    /// IB: at the head of an output VL queue longer than the HOQ lifetime (PortXmitDiscards,
    /// PortSwHOQLifetimeLimitDiscards).
    HoqLifetime = 5,
    /// IB: in the switch longer than its lifetime limit (PortSwLifetimeLimitDiscards).
    SwitchLifetime = 6,
    /// IB: a packet arrived without credits for it. Never happens unless the credit
    /// accounting is broken; counted so that tests catch it.
    CreditOverrun = 7,
    /// Discarded by the PFC watchdog's drop action (a queue declared in a PFC storm).
    PfcWatchdog = 8,
    /// A lossless-class packet at a port with PFC off (misconfigured): dropped where the
    /// port should have paused its peer.
    PfcDisabled = 9,
    /// Arrived at a NIC whose receive side is stuck (it drains nothing).
    ReceiverStuck = 10,
    /// Arrived at a slow NIC whose receive buffer was full.
    ReceiverOverflow = 11,
    /// RoCEv2: the IP TTL ran out (a routing loop).
    TtlExpired = 12,
}

pub const DROP_CAUSES: [DropCause; 13] = [
    DropCause::HeadroomOverflow,
    DropCause::DynamicThreshold,
    DropCause::BufferFull,
    DropCause::NoRoute,
    DropCause::PortDown,
    DropCause::HoqLifetime,
    DropCause::SwitchLifetime,
    DropCause::CreditOverrun,
    DropCause::PfcWatchdog,
    DropCause::PfcDisabled,
    DropCause::ReceiverStuck,
    DropCause::ReceiverOverflow,
    DropCause::TtlExpired,
];

pub const PAUSE_LOG_CAP: usize = 100_000;

pub const ECN_BINS: usize = 16;

/// Bin of queue length `q` in the ECN marking curve: width Kmax/12, the last bin open.
pub fn ecn_bin(q: units::Bytes, kmax: units::Bytes) -> usize {
    if kmax.0 == 0 {
        return ECN_BINS - 1;
    }
    ((q.0 as u128 * 12 / kmax.0 as u128) as usize).min(ECN_BINS - 1)
}

#[derive(Clone, Debug, Default)]
pub struct PortStats {
    pub tx_frames: u64,
    pub tx_bytes: u64,
    pub busy_ps: u64,
    /// Bytes queued at this egress: maximum, and ∫ queue dt in byte·ps.
    pub max_queue: u64,
    pub queue_area: u128,
    pub pfc_tx: [u64; 8],
    pub pfc_rx: [u64; 8],
    pub paused_ps: [u64; 8],
    pub ecn_marked: u64,
    /// ECN-capable arrivals and marks by the queue length they saw, in bins of Kmax/12
    /// ([`ecn_bin`]): the measured marking curve, to hold against the RED rule. Counted
    /// only after `Sim::record_ecn_curve` (zero otherwise).
    pub ecn_seen: [u64; ECN_BINS],
    pub ecn_marked_bins: [u64; ECN_BINS],
    pub drops: [u64; DROP_CAUSES.len()],
    pub drop_bytes: u64,
    pub lossless_drops: u64,
    /// Ingress: peak headroom use and peak total PG occupancy (cells), over PGs.
    pub peak_headroom_cells: u64,
    pub peak_pg_cells: u64,
    /// IB PortXmitWait: time this port had a packet to send but no credits for it, in ps
    /// (the counter counts ticks of the port's clock; time is reported here).
    pub xmit_wait_ps: u64,
    /// IB flow-control packets sent and received.
    pub fcp_tx: u64,
    pub fcp_rx: u64,
    /// IB: peak blocks held in each input VL buffer (max over VLs).
    pub peak_vl_blocks: u32,
    /// Headroom cap of this ingress (cells, the largest over its PGs) at the end.
    pub headroom_cap_cells: u64,
}

#[derive(Clone, Debug, Default)]
pub struct NicStats {
    pub tx_data_pkts: u64,
    /// Payload bytes transmitted, retransmissions included.
    pub tx_payload: u64,
    /// Payload the responder discarded (out of sequence or duplicate).
    pub rx_discarded_payload: u64,
    pub rx_payload: u64,
    pub retx_bytes: u64,
    pub cnp_tx: u64,
    pub cnp_rx: u64,
    pub ce_rx: u64,
    pub nak_tx: u64,
    pub nak_rx: u64,
    pub timeouts: u64,
}

/// What a QP's responder saw of its data packets' order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QpRx {
    /// The QP's requester and responder endpoints.
    pub src: u32,
    pub dst: u32,
    /// Data packets that arrived ahead of the expected PSN (placed with out-of-order
    /// placement, discarded without it).
    pub out_of_order: u64,
    /// Data packets whose PSN had arrived already (discarded).
    pub duplicate: u64,
    /// Out-of-order placement: first transmissions that arrived after the responder had
    /// NAKed their PSN or an earlier one and before any retransmission it asked for (the
    /// NAK was premature for them: they were reordered, not lost).
    pub late: u64,
}

/// One flow's outcome, in 40 bytes: a collective has millions of flows, so times not
/// reached yet are a sentinel instead of an `Option` (16 bytes each) and the flags share
/// a byte. Read it through its methods.
#[derive(Clone, Debug)]
pub struct FlowRecord {
    pub src: u32,
    pub dst: u32,
    /// Bytes: an RDMA message is at most 2^31 (IBTA Vol. 1 §9.4, the largest DMA length).
    size: u32,
    flags: u8,
    /// When it was posted (for a dependent flow: when its dependencies allowed it; before
    /// then, the earliest it may be).
    pub start: u64,
    /// When the requester saw the last ACK (the send completion); [`NOT_YET`] before.
    finish: u64,
    /// When the responder had received all of it in order (what a dependent waits for);
    /// [`NOT_YET`] before.
    delivered: u64,
}

const _: () = assert!(std::mem::size_of::<FlowRecord>() == 40);

/// A flow time not reached (yet): no run reaches the last picosecond there is.
const NOT_YET: u64 = u64::MAX;
const FAILED: u8 = 1;
const JOIN: u8 = 2;

impl FlowRecord {
    /// A flow not posted yet: `start` is the earliest it may be. `join`: a workload
    /// barrier, not a transfer (left out of completion-time statistics).
    pub fn new(src: u32, dst: u32, size: u64, start: u64, join: bool) -> FlowRecord {
        let size = u32::try_from(size).expect("an RDMA message is at most 2^31 bytes");
        FlowRecord { src, dst, size, flags: if join { JOIN } else { 0 }, start, finish: NOT_YET, delivered: NOT_YET }
    }
    pub fn size(&self) -> u64 {
        self.size as u64
    }
    /// When the requester saw the last ACK (the send completion).
    pub fn finish(&self) -> Option<u64> {
        (self.finish != NOT_YET).then_some(self.finish)
    }
    /// When the responder had received all of it in order (what a dependent waits for).
    pub fn delivered(&self) -> Option<u64> {
        (self.delivered != NOT_YET).then_some(self.delivered)
    }
    /// Its QP failed (or a flow it depends on did): it never completes.
    pub fn failed(&self) -> bool {
        self.flags & FAILED != 0
    }
    /// A workload barrier, not a transfer.
    pub fn join(&self) -> bool {
        self.flags & JOIN != 0
    }
    pub(crate) fn set_finish(&mut self, t: u64) {
        self.finish = t;
    }
    pub(crate) fn set_delivered(&mut self, t: u64) {
        self.delivered = t;
    }
    pub(crate) fn set_failed(&mut self) {
        self.flags |= FAILED;
    }
}

#[derive(Clone, Debug)]
pub struct Sample {
    pub t: u64,
    pub queue: Vec<u64>,
    pub qp_rate: Vec<u64>,
    pub paused: Vec<u8>,
}

#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub ports: Vec<PortStats>,
    pub nics: Vec<NicStats>,
    pub flows: Vec<FlowRecord>,
    pub dropped_payload: u64,
    /// (time ps, receiving port, priority, quanta) of every PFC frame received (capped).
    pub pause_log: Vec<(u64, PortId, u8, u16)>,
    pub samples: Vec<Sample>,
    pub switch_peak_cells: Vec<(NodeId, u64)>,
    pub end: u64,
    /// Events the simulation dispatched, not counting the sampler's (so `--html` and
    /// `--out`, which sample, report the same number as a run that does not).
    pub events: u64,
    pub frames_in_flight_at_end: u64,
    pub buffer_cells_at_end: u64,
    /// A deadlock the detector found: when, and the cycle of blocked (port, class) queues.
    pub deadlock: Option<Deadlock>,
    /// What happened when, for the incident timeline (unsorted; the report sorts it).
    pub timeline: Vec<Incident>,
    /// PFC watchdog storms: one per (port, priority) detection.
    pub storms: Vec<Storm>,
    /// Losses the RC transport recovered from: (QP, first loss, first in-order delivery
    /// of the lost PSN or a later one).
    pub recoveries: Vec<(QpId, u64, u64)>,
    /// Per QP: out-of-order, duplicate and late data arrivals at its responder.
    pub qp_rx: Vec<QpRx>,
    /// QPs with a loss not yet recovered at the end: (QP, first loss).
    pub unrecovered: Vec<(QpId, u64)>,
    /// (port, class) queues still paused when the run ended.
    pub paused_at_end: Vec<(PortId, u8)>,
    /// When the control plane installed new forwarding state after a fault.
    pub reroutes: Vec<u64>,
    /// For each fault (its time): the control plane's timed steps.
    pub reroute_steps: Vec<(u64, Vec<ControlStep>)>,
    /// Each QP's path under the forwarding state at the end: the egress ports its data
    /// packets leave by, from its NIC to the last switch; `None` when the route is broken
    /// or loops. Flows on one QP share it: read a flow's with [`Stats::flow_path`] (one
    /// path per QP instead of one per flow: a collective has millions of flows on a few
    /// thousand QPs).
    pub qp_paths: Vec<Option<Vec<PortId>>>,
    /// The QP each flow was posted on (`QpId(u32::MAX)` for a SHARP join, which has none).
    pub flow_qp: Vec<QpId>,
    /// The run was cancelled (Ctrl-C, a web job stopped) at this time, ps: every
    /// figure covers the run up to then only.
    pub cancelled: Option<u64>,
}

/// One timed step of a control plane's reaction, from the fault.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ControlStep {
    pub step: String,
    pub start_ps: u64,
    pub duration_ps: u64,
    /// Management packets it took (SMPs), where that applies.
    pub smps: u64,
}

/// What an incident is. Serialises (and prints) as the kebab-case names the timeline
/// has always used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum IncidentKind {
    /// A scenario fault starts.
    Fault,
    /// A scenario fault ends.
    FaultEnded,
    /// A port's first pause (RoCE).
    Paused,
    /// An IB port's first wait for credits.
    CreditStarved,
    /// An IB VL stalls after repeated head-of-queue discards.
    VlStalled,
    /// The PFC watchdog declared a storm.
    WatchdogFired,
    /// The PFC watchdog restored a queue.
    WatchdogRestored,
    /// A switch removed a dead link from its ECMP groups.
    LocalRepair,
    /// The control plane's new forwarding state took effect.
    RerouteInstalled,
    /// No subnet manager is left to re-route.
    NoReroute,
    /// A standby subnet manager became master.
    SmTakeover,
    /// The last dequeue on a cycle of blocked queues.
    DeadlockFormed,
    /// The deadlock detector found the cycle.
    DeadlockDetected,
    /// Traffic through a fault's path recovered (added by the report).
    TrafficRecovered,
}

impl IncidentKind {
    pub const fn as_str(self) -> &'static str {
        match self {
            IncidentKind::Fault => "fault",
            IncidentKind::FaultEnded => "fault-ended",
            IncidentKind::Paused => "paused",
            IncidentKind::CreditStarved => "credit-starved",
            IncidentKind::VlStalled => "vl-stalled",
            IncidentKind::WatchdogFired => "watchdog-fired",
            IncidentKind::WatchdogRestored => "watchdog-restored",
            IncidentKind::LocalRepair => "local-repair",
            IncidentKind::RerouteInstalled => "reroute-installed",
            IncidentKind::NoReroute => "no-reroute",
            IncidentKind::SmTakeover => "sm-takeover",
            IncidentKind::DeadlockFormed => "deadlock-formed",
            IncidentKind::DeadlockDetected => "deadlock-detected",
            IncidentKind::TrafficRecovered => "traffic-recovered",
        }
    }
}

impl std::fmt::Display for IncidentKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

impl serde::Serialize for IncidentKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A kind compares equal to its name.
impl PartialEq<&str> for IncidentKind {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// One entry of the incident timeline.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Incident {
    pub t_ps: u64,
    /// What happened.
    pub event: IncidentKind,
    /// The port concerned, if any (the report names it).
    pub port: Option<PortId>,
    /// Priority (RoCE) or VL (IB), if any.
    pub class: Option<u8>,
    pub detail: String,
}

/// A PFC storm the watchdog detected on a switch egress queue, and what it did.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Storm {
    pub port: PortId,
    pub priority: u8,
    /// When the queue's pause began, when the watchdog declared the storm, and when it
    /// restored the queue (`None`: still in storm at the end).
    pub paused_from_ps: u64,
    pub detected_ps: u64,
    pub restored_ps: Option<u64>,
    /// Packets and bytes the drop action discarded.
    pub dropped_pkts: u64,
    pub dropped_bytes: u64,
}

/// Packets stuck in a cycle of buffers, each waiting for the next to drain.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Deadlock {
    /// When the detector found the cycle.
    pub detected_at_ps: u64,
    /// The last time any queue of the cycle dequeued: from then on none moved.
    pub formed_at_ps: u64,
    /// The cycle: (egress port, class) queues, each blocked by the next one's buffer.
    pub cycle: Vec<(PortId, u8)>,
}

impl Stats {
    /// Flow `flow`'s path under the forwarding state at the end (its QP's, see
    /// [`Stats::qp_paths`]); `None` for a SHARP join, or when the route is broken or loops.
    pub fn flow_path(&self, flow: u32) -> Option<&[PortId]> {
        let qp = *self.flow_qp.get(flow as usize)?;
        self.qp_paths.get(qp.index())?.as_deref()
    }

    /// Counters at zero; room for `flows` flow records (the simulator adds them).
    pub fn new(t: &Topology, flows: usize) -> Stats {
        Stats {
            ports: vec![PortStats::default(); t.ports.len()],
            nics: vec![NicStats::default(); t.endpoints.len()],
            flows: Vec::with_capacity(flows),
            ..Default::default()
        }
    }
}
