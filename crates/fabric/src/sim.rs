//! The packet-level simulation of both fabrics: links, switches, NICs/HCAs running the RC
//! transport. RoCEv2: a shared-buffer MMU with PFC, ECN marking, DCQCN. InfiniBand:
//! credit-based link-level flow control per virtual lane, subnet-manager forwarding tables,
//! lifetime discards, optionally IB congestion control.
//!
//! Model, and what it leaves out:
//! * A link is a FIFO in each direction. A port serialises one frame at a time at line
//!   rate, counting preamble, SFD and inter-frame gap; the frame reaches the peer after the
//!   cable's propagation delay (plus the switch pipeline latency when the peer is a
//!   switch); a switch whose ports all run at one speed may forward cut-through. These
//!   per-hop rules are `timing`'s, which the reports' ideal completion times share. A
//!   link keeps its frames in flight in its own FIFO and has at most one event in the
//!   global queue.
//! * PFC frames (IEEE 802.1Qbb) are inserted at the next frame boundary, ahead of any
//!   queued data; they are never paused and take no buffer. A received pause takes effect
//!   after the configured response time; a port that is already sending finishes the frame.
//! * The switch MMU counts cells: per (ingress port, PG) reserved, shared (dynamic
//!   threshold α·free) and headroom, optionally a shared headroom pool. Lossless PGs pause
//!   their peer when the shared part reaches its limit or headroom is in use, and resume
//!   when headroom is empty and occupancy is back at the resume point. Egress admission
//!   of lossy queues is not modelled separately: a lossy packet is dropped at ingress when
//!   its PG is over the dynamic threshold or the pool is full.
//! * NICs drain received packets at once, unless a fault makes one slow (it drains at a
//!   set rate into a bounded buffer and pauses its switch near the end of it; an IB HCA
//!   returns credits as it drains) or stuck (it drains nothing: a RoCE NIC drops what
//!   arrives and keeps every lossless priority paused, an IB HCA withholds credits).
//! * InfiniBand (IBTA Vol. 1 §7.9, arithmetic in `model::ib`): every port keeps, per VL,
//!   FCTBS and the last FCCL heard as a sender, ABR and its free blocks as a receiver.
//!   A packet leaves only when the peer's advertised credits cover its 64-byte blocks, so
//!   no more than 2048 blocks are ever outstanding per VL. Input buffers are per (input
//!   port, VL), `vl_buffer_blocks` each; blocks are freed when the packet leaves the
//!   switch (HCAs free them on arrival) and a flow-control packet carrying the new FCCL is
//!   inserted at the next packet boundary, like a PFC frame. The periodic FCP refresh the
//!   spec requires (to repair lost FCPs) is not simulated: this model never loses one, and
//!   a 6-byte FCP every 65,536 symbol times costs under 0.1% of a link. Packets are switched
//!   at packet granularity, not flits. Each packet carries its QP's SL; an HCA maps it to
//!   the VL it injects on by its port's SL→VL table, and a switch to the VL of each hop by
//!   the table of the (input, output) port pair (IBTA Vol. 1 §7.6.6): one default table,
//!   overridden per port pair or HCA port by the scenario. VL arbitration uses the same scheduler as Ethernet
//!   queues: high-priority VLs strict, low-priority VLs weighted (LimitOfHighPriority is
//!   not modelled). A packet at the head of an output VL queue longer than the HOQ lifetime,
//!   or in a switch longer than the switch lifetime, is discarded when the port next looks
//!   at it; packets forwarded to a port whose link is down are discarded.
//! * Faults (`Fault`): links and switches fail and return, NIC receivers stall or slow
//!   down, ports lose PFC, headroom or their DSCP map, the master SM dies. On RoCEv2 the
//!   switches at a dead link's ends drop it from their ECMP groups at once; the control
//!   plane installs new tables after its delay.
//! * SONiC's PFC watchdog (`params::PfcWatchdog`) per switch egress queue, and on
//!   InfiniBand the VL stall after repeated head-of-queue discards.
//! * A deadlock detector, every `deadlock_timeout`: a cycle of blocked queues (paused, or
//!   without credits) none of which dequeued for that long is recorded with the time the
//!   last of them moved; the run stops there unless a watchdog or lifetime discards can
//!   still break it.
//! * Every incident goes into a timeline (`stats::Incident`).

use std::collections::VecDeque;

use engine::{EventQueue, Rng};
use model::frame::{segments, Transport, PFC_FRAME};
use model::ib;
use units::{serialization, BitRate, Bytes, SimDuration, SimTime};

use crate::dcqcn::{paced_next_tx, Dcqcn};
use crate::params::{EcnMarking, FlowSpec, Params, Resume, Sched, Tech, Trigger};
use crate::routing::{Lft, Routes};
use crate::stats::{Deadlock, DropCause, FlowRecord, Stats};
use crate::timing::{frame_of, wire_of, Hop};
use crate::topology::{NodeId, NodeKind, PortId, Topology};
use model::dcqcn::{CnpScope, CnpTransport};

const NONE: u32 = u32::MAX;
const NEVER: u64 = u64::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Data,
    Ack,
    Nak,
    Cnp,
    /// A PFC frame: `tc` holds its priority-enable vector; its pause times wait, in link
    /// order, in the sending port's `pfc_sent`.
    Pfc,
    /// An IB flow-control packet: `tc` is its VL, `psn` its FCCL (its FCTBS is implied:
    /// links never lose packets here).
    Fcp,
}

/// Packet flags.
const ECN_CAPABLE: u8 = 1;
const CE: u8 = 2;
const FIRST: u8 = 4; // read by the pcap tap (planned)
const LAST: u8 = 8;
/// IB: an impaired HCA already returned this packet's credits (it sits in host memory).
const CREDITED: u8 = 16;
/// RoCE ACK/NAK: carries a congestion notification (DCQCN `cnp = "ack-flag"`, ns-3's
/// `SetCnp()` on the ACK of a marked packet).
const CNP_FLAG: u8 = 32;

/// A frame in the simulation: header fields that matter, no bytes. Frames live in a slab
/// (`Sim::pkts`) and move by id; a port's class queues and the frames on its link are
/// singly linked lists through `next`. 32 bytes, two to a cache line: addresses and the
/// UDP source port are the QP's ([`Sim::addr`]), not copied into every packet.
#[derive(Clone, Copy, Debug)]
struct Packet {
    kind: Kind,
    /// Traffic class (IB: VL).
    tc: u8,
    /// Ingress PG at the switch currently holding it (for buffer release).
    in_pg: u8,
    flags: u8,
    frame: u16,
    payload: u16,
    qp: u32,
    psn: u32,
    /// Ingress port at the switch currently holding it (`NONE` elsewhere).
    in_port: u32,
    /// The next frame in the same queue or on the same link.
    next: u32,
    /// On a link: when the frame behind it (`next`) arrives. In an IB switch: when it
    /// entered (lifetime limits).
    t: u64,
}

const _: () = assert!(std::mem::size_of::<Packet>() == 32);

impl Packet {
    fn ctrl(kind: Kind, tc: u8, psn: u32) -> Packet {
        Packet { kind, tc, in_pg: 0, flags: 0, frame: 0, payload: 0, qp: NONE, psn, in_port: NONE, next: NONE, t: 0 }
    }
    #[inline]
    fn is_pkt(&self) -> bool {
        !matches!(self.kind, Kind::Pfc | Kind::Fcp)
    }
    #[inline]
    fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
}

#[derive(Clone, Copy, Debug)]
enum Ev {
    /// The head of the link leaving `port` reaches the peer.
    Arrive(u32),
    /// `port` finished serialising a frame.
    TxDone(u32),
    /// Re-check whether `port` can send (pause expiry, pacing).
    Kick(u32),
    PfcRefresh {
        port: u32,
        pg: u8,
        gen: u32,
    },
    Post(u32),
    Rto(u32),
    RateTimer {
        qp: u32,
        gen: u32,
    },
    /// DCQCN: a deferred or grid-scheduled rate cut of QP `qp` is due.
    RateCut(u32),
    /// IB CC: a QP's CCTI timer.
    CctiTimer {
        qp: u32,
        gen: u32,
    },
    Sample,
    Watchdog,
    /// Scenario fault `i` happens.
    Fault(u32),
    /// The control plane installs the forwarding state it computed (stale if `gen` moved on).
    Install {
        gen: u32,
    },
    /// An impaired NIC finished absorbing the head of its receive backlog.
    NicDrain {
        ep: u32,
        gen: u32,
    },
    /// PFC watchdog: has queue (`port`, `tc`) been paused for the detection time?
    WdCheck {
        port: u32,
        tc: u8,
    },
    /// PFC watchdog: has queue (`port`, `tc`) heard no PFC for the restoration time?
    WdRestore {
        port: u32,
        tc: u8,
    },
}

/// The event queue, with events packed into 32 bits for its 16-byte entries: a 3-bit
/// kind and a port, flow or QP number; events with more fields wait in a slab and the
/// queue holds their slot.
struct Events {
    q: EventQueue<u32>,
    slab: Vec<Ev>,
    free: Vec<u32>,
}

const ID_BITS: u32 = 29;
const ID_MASK: u32 = (1 << ID_BITS) - 1;

impl Events {
    fn new() -> Events {
        Events { q: EventQueue::new(), slab: vec![], free: vec![] }
    }

    #[inline]
    fn schedule(&mut self, at: SimTime, ev: Ev) {
        let (kind, id) = match ev {
            Ev::Arrive(p) => (0, p),
            Ev::TxDone(p) => (1, p),
            Ev::Kick(p) => (2, p),
            Ev::Post(f) => (3, f),
            Ev::Rto(q) => (4, q),
            _ => {
                let slot = match self.free.pop() {
                    Some(s) => {
                        self.slab[s as usize] = ev;
                        s
                    }
                    None => {
                        self.slab.push(ev);
                        self.slab.len() as u32 - 1
                    }
                };
                (7, slot)
            }
        };
        debug_assert!(id <= ID_MASK);
        self.q.schedule(at, kind << ID_BITS | id);
    }

    #[inline]
    fn pop(&mut self) -> Option<(SimTime, Ev)> {
        let (t, code) = self.q.pop()?;
        let id = code & ID_MASK;
        let ev = match code >> ID_BITS {
            0 => Ev::Arrive(id),
            1 => Ev::TxDone(id),
            2 => Ev::Kick(id),
            3 => Ev::Post(id),
            4 => Ev::Rto(id),
            _ => {
                self.free.push(id);
                self.slab[id as usize]
            }
        };
        Some((t, ev))
    }

    fn peek_time(&self) -> Option<SimTime> {
        self.q.peek_time()
    }
    fn now(&self) -> SimTime {
        self.q.now()
    }
    fn popped(&self) -> u64 {
        self.q.popped()
    }
}

/// One edge of a scenario fault: its start, or the end that undoes it.
#[derive(Clone, Debug)]
pub struct Fault {
    pub at: SimTime,
    pub kind: FaultKind,
    /// What the scenario called it, for the timeline (e.g. "link-down leaf0:3").
    pub label: String,
    /// This edge ends the fault (restores what its start changed).
    pub ends: bool,
}

/// What a fault edge changes.
#[derive(Clone, Debug)]
pub enum FaultKind {
    /// These ports' links (both directions) go down or come back: one link, or every
    /// link of a switch.
    Links { ports: Vec<PortId>, up: bool },
    /// A NIC's receive side becomes impaired as `rx` says, or healthy again (`None`).
    NicRx { ep: u32, rx: Option<RxFault> },
    /// A port stops (or starts again) sending and honouring PFC.
    PortPfc { port: PortId, enabled: bool },
    /// A port's lossless headroom becomes this many cells.
    PortHeadroom { port: PortId, cells: u64 },
    /// The DSCP → class map a switch applies to packets arriving on a port (`None`: the
    /// fabric's own map again).
    PortDscpMap { port: PortId, map: Option<Box<[u8; 64]>> },
    /// InfiniBand: the master subnet manager dies; a standby takes over if there is one.
    SmFailure { standby: bool },
    /// A switch forwards packets for endpoint `dst` to `port` whatever its tables say (a
    /// static route or a stale FIB/LFT entry; `None`: back to the tables). Can loop.
    RouteOverride { node: NodeId, dst: u32, port: Option<PortId> },
}

/// RoCEv2: the IP TTL a NIC sets (Linux `ip_default_ttl` 64, RFC 1700's recommended
/// default); every switch hop decrements it and a packet whose TTL runs out is dropped.
/// InfiniBand packets carry no hop limit inside a subnet.
const IP_TTL: u8 = 64;

/// An impaired NIC receiver: it absorbs `drain_bps` (0: nothing — stuck), holds a backlog
/// of at most `buffer` bytes, pauses its switch (every lossless priority) when the backlog
/// reaches `xoff` bytes and resumes at `xon`. A stuck receiver pauses at once and keeps
/// refreshing the pause for as long as it is stuck.
#[derive(Clone, Copy, Debug)]
pub struct RxFault {
    pub drain_bps: u64,
    pub buffer: u64,
    pub xoff: u64,
    pub xon: u64,
}

/// The control plane's reaction to link changes: forwarding state for the links now up,
/// and how long the reaction takes (IP routing convergence, or an IB subnet manager's
/// detect/sweep/route/program time). Runs at fault time only, never per packet.
pub trait ControlPlane {
    fn on_link_change(&mut self, now: SimTime, topo: &Topology, up: &[bool]) -> Reaction;
    /// The master SM died (InfiniBand); returns when a standby becomes master, if one does.
    fn on_sm_failure(&mut self, _now: SimTime, _standby: bool) -> Option<SimTime> {
        None
    }
}

/// What a control plane does about a link change.
pub struct Reaction {
    /// From the change to the new forwarding state taking effect (`None`: never — no
    /// subnet manager is left to re-route).
    pub delay: Option<SimDuration>,
    pub fwd: Forwarder,
    /// The timed steps of that delay (e.g. the SM's detect, sweep, route, program).
    pub steps: Vec<crate::stats::ControlStep>,
}

/// ECMP routing rebuilt over the links that are up, after a fixed convergence delay
/// (BGP withdraw + FIB update; the scenario states the delay).
pub struct EcmpControl {
    pub seed: u64,
    pub delay: SimDuration,
    /// Build destination-based tables (an SM-like fabric) instead of hashed ECMP groups.
    pub destination_tables: bool,
}

impl ControlPlane for EcmpControl {
    fn on_link_change(&mut self, _now: SimTime, topo: &Topology, up: &[bool]) -> Reaction {
        let r = Routes::build(topo, self.seed, |p| up[p.0 as usize]);
        let fwd = if self.destination_tables { Forwarder::Lft(r.destination_lft(topo)) } else { Forwarder::Ecmp(r) };
        let steps = vec![crate::stats::ControlStep { step: "converge".into(), start_ps: 0, duration_ps: self.delay.ps(), smps: 0 }];
        Reaction { delay: Some(self.delay), fwd, steps }
    }
}

/// Port flags (fixed by the topology).
const P_SWITCH: u8 = 1;
const P_PEER_SWITCH: u8 = 2;
const P_PEER_CUT_THROUGH: u8 = 4;

/// What every frame through a port touches, in one cache line; per-class state is in
/// [`ClassQ`], rarely used state in separate arrays.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct PortState {
    /// Bytes queued at this egress (all classes), and when that last changed.
    qtotal: u64,
    q_changed: u64,
    /// Cable propagation delay, plus the pipeline latency when the peer is a switch
    /// ([`Hop::delay`]).
    delay: u64,
    rate: u64,
    /// Frames on the link, oldest first (a list through `Packet::next`).
    chan_head: u32,
    chan_tail: u32,
    /// The node of a switch port, the endpoint of a NIC port.
    owner: u32,
    /// The peer port (`NONE`: uncabled) and the peer's node (switch) or endpoint (NIC).
    peer: u32,
    peer_owner: u32,
    busy: bool,
    flags: u8,
    pfc_mask: u8,
    rr: u8,
    /// Classes with queued frames.
    nonempty: u8,
    /// Classes with a non-zero DRR deficit.
    deficit_nz: u8,
}

const _: () = assert!(std::mem::size_of::<PortState>() == 64);

/// One egress queue (port, class): a list through `Packet::next`, its bytes, DRR deficit
/// and PFC pause interval. One cache line.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct ClassQ {
    head: u32,
    tail: u32,
    qbytes: u64,
    deficit: i64,
    pause_from: u64,
    pause_until: u64,
    /// The last dequeue, or when the current head arrived at an empty queue (deadlock
    /// detector: how long the queue has not moved).
    moved: u64,
}

impl Default for ClassQ {
    fn default() -> Self {
        ClassQ { head: NONE, tail: NONE, qbytes: 0, deficit: 0, pause_from: 0, pause_until: 0, moved: 0 }
    }
}

/// A QP's addresses as its packets carry them (data requester → responder; ACK, NAK and
/// CNP the other way) and its UDP source port (ECMP entropy).
#[derive(Clone, Copy)]
struct QpAddr {
    src: u32,
    dst: u32,
    sport: u16,
}

/// One port's credit state per VL (IBTA Vol. 1 §7.9): as a sender towards its peer (FCTBS,
/// the last FCCL received) and as a receiver from it (ABR, free blocks of its input buffer).
#[derive(Clone, Copy, Default)]
struct IbPort {
    fctbs: [u16; 8],
    fccl: [u16; 8],
    abr: [u16; 8],
    free: [u32; 8],
    /// VLs whose new FCCL still has to be sent to the peer.
    fcp_pending: u8,
    /// Since when the port has had a packet but no credits (NEVER: not waiting).
    wait_from: u64,
    /// When each VL queue's current head became the head (HOQ lifetime).
    head_since: [u64; 8],
    /// Head-of-queue discards in a row per VL, and until when the VL is stalled.
    hoq_run: [u8; 8],
    stalled_until: [u64; 8],
}

/// How switches pick an output port.
pub enum Forwarder {
    /// RoCEv2: ECMP over shortest paths, hashing the 5-tuple.
    Ecmp(Routes),
    /// InfiniBand: the subnet manager's linear forwarding tables.
    Lft(Lft),
}

/// The PGs of a bit mask, lowest first.
fn lossless_pgs(mask: u8) -> impl Iterator<Item = u8> {
    (0..8u8).filter(move |pg| mask & (1 << pg) != 0)
}

/// The deadlock detector's period: the scenario's timeout (1 ms when unset).
fn deadlock_period(p: &Params) -> u64 {
    match p.deadlock_timeout.ps() {
        0 => 1_000_000_000,
        t => t,
    }
}

/// An impaired NIC receiver's state (see [`RxFault`]).
#[derive(Default)]
struct NicRx {
    fault: Option<RxFault>,
    /// Packets received and not yet absorbed, oldest first.
    backlog: VecDeque<u32>,
    bytes: u64,
    /// Bumped when the fault changes, so that a pending drain event goes stale.
    gen: u32,
    draining: bool,
}

/// PFC watchdog state of one (switch egress port, priority).
#[derive(Default, Clone, Copy)]
struct WdQueue {
    storm: bool,
    /// A detection check is pending.
    armed: bool,
    /// The last PFC frame received on this queue.
    last_pfc: u64,
    /// Index of its current storm in `Stats::storms`.
    storm_idx: u32,
}

#[derive(Default, Clone, Copy)]
struct PgState {
    resv: u64,
    shared: u64,
    hdrm: u64,
    paused: bool,
    gen: u32,
    peak_hdrm: u64,
    peak_total: u64,
}

#[derive(Default, Clone, Copy)]
struct Mmu {
    shared_total: u64,
    shared_used: u64,
    hdrm_pool: u64,
    hdrm_pool_used: u64,
    used: u64,
    peak_used: u64,
}

struct Msg {
    flow: u32,
    first_psn: u32,
    npkts: u32,
    size: u64,
    last_payload: u32,
}

/// The posted message holding `psn`. Messages are posted back to back in PSN order (each
/// at least one packet) and leave from the front, so a binary search finds it however
/// many a QP holds.
fn msg_at(msgs: &VecDeque<Msg>, psn: u32) -> &Msg {
    let i = msgs.partition_point(|m| m.first_psn + m.npkts <= psn);
    let m = msgs.get(i).expect("snd_nxt inside a posted message");
    debug_assert!(m.first_psn <= psn);
    m
}

struct Qp {
    src: u32,
    dst: u32,
    tc: u8,
    /// InfiniBand service level (a switch maps it to the VL of each hop).
    sl: u8,
    /// RoCEv2 DSCP of its packets (data and ACKs; CNPs carry the CNP DSCP).
    dscp: u8,
    sport: u16,
    msgs: VecDeque<Msg>,
    snd_una: u32,
    snd_nxt: u32,
    snd_max: u32,
    max_sent: u32,
    rto_deadline: u64,
    rto_pending: bool,
    retries: u32,
    failed: bool,
    next_tx: u64,
    /// When the QP's last data frame started, and its wire bytes (DCQCN re-timing).
    last_tx: u64,
    last_wire: u32,
    active: bool,
    cc: Option<Dcqcn>,
    rate_gen: u32,
    cca: crate::ibcc::Cca,
    // responder side
    epsn: u32,
    nak_sent: bool,
    unacked: u32,
    last_cnp: u64,
    /// Flows posted on this QP and not yet fully received, in PSN order.
    rx_msgs: VecDeque<u32>,
}

struct Nic {
    port: u32,
    active: Vec<u32>,
    rr: usize,
    line_bps: u64,
    /// Last CNP this NIC sent (DCQCN `cnp_scope = "port"`).
    last_cnp: u64,
}

/// A RoCEv2 fabric ready to run.
pub struct Sim {
    q: Events,
    topo: Topology,
    fwd: Forwarder,
    p: Params,
    ib: Vec<IbPort>,
    /// IB CC: eligible packets seen above threshold, per port (marking_rate counter).
    fecn_count: Vec<u32>,
    link_up: Vec<bool>,
    halted: bool,
    /// Per endpoint, when some NIC receiver is impaired during the run (else empty).
    rx: Vec<NicRx>,
    /// Per port, when some port's PFC is switched off during the run (else empty).
    pfc_off: Vec<bool>,
    /// Per port: a DSCP → class map for packets arriving on it (misconfiguration).
    port_dscp: Vec<Option<Box<[u8; 64]>>>,
    /// Whether any port has its own DSCP map now.
    port_dscp_any: bool,
    /// PFC watchdog state per (port, priority) (empty without a watchdog), and how many
    /// queues are in storm now.
    wd: Vec<WdQueue>,
    storms_active: u32,
    /// Ports whose first pause (credit wait on IB) is in the timeline.
    first_block: Vec<bool>,
    /// Per QP, a data loss not yet recovered: (when, lowest PSN lost).
    lost: Vec<(u64, u32)>,
    /// Route overrides in force: (switch, destination endpoint) → output port.
    route_override: std::collections::HashMap<(u32, u32), PortId>,
    /// Paths pinned per QP ([`Sim::pin_route`]): (switch, QP, data or not) → output port.
    pinned: std::collections::HashMap<(u32, u32, bool), PortId>,
    /// Switch hops per packet (by packet id), kept only when a route override can loop.
    hops: Vec<u8>,
    ttl_on: bool,
    deadlock_checked: bool,
    /// The port whose `try_tx` is picking a frame (NONE: none); see `try_tx`.
    picking: u32,
    /// Priority groups that hold a lossless class (bit per PG).
    lossless_pg_mask: u8,
    faults: Vec<Fault>,
    control: Option<Box<dyn ControlPlane>>,
    pending_fwd: Option<Forwarder>,
    fwd_gen: u32,
    ports: Vec<PortState>,
    /// Egress queues, `port * 8 + class`.
    cls: Vec<ClassQ>,
    /// Number of ports.
    np: usize,
    /// Per port: the earliest pending Kick (NEVER: none).
    kick: Vec<u64>,
    /// Per port: pause times of the next PFC frame, and those of PFC frames on the link.
    pfc_quanta: Vec<[u16; 8]>,
    pfc_sent: Vec<VecDeque<[u16; 8]>>,
    /// Classes served strictly / by DRR.
    strict_mask: u8,
    weighted_mask: u8,
    pgs: Vec<PgState>,
    mmus: Vec<Mmu>,
    /// Headroom cap per (port, PG), in cells.
    hdrm_cap: Vec<u64>,
    response: Vec<u64>,
    quantum: Vec<u64>,
    nics: Vec<Nic>,
    qps: Vec<Qp>,
    qp_addr: Vec<QpAddr>,
    flows: Vec<FlowSpec>,
    /// The QP each flow is posted on.
    flow_qp: Vec<u32>,
    /// Dependencies of each flow not yet delivered, and the flows waiting on each flow
    /// (`dependents[dep_first[f]..dep_first[f + 1]]`).
    waiting: Vec<u32>,
    dep_first: Vec<u32>,
    dependents: Vec<u32>,
    pkts: Vec<Packet>,
    free: Vec<u32>,
    ecn_rng: Vec<Rng>,
    pub stats: Stats,
    stop: Option<SimTime>,
    remaining: usize,
    sample_period: Option<SimDuration>,
}

impl Sim {
    /// Builds the world. `headroom` gives the headroom cells of each port (computed by the
    /// caller, from the scenario or from the `auto` formula). (Ten positional arguments:
    /// the architecture split, issue 13, gives the simulator a compiled world instead.)
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        topo: Topology,
        p: Params,
        flows: Vec<FlowSpec>,
        seed: u64,
        headroom: Vec<u64>,
        stop: Option<SimTime>,
        sample_period: Option<SimDuration>,
        lft: Option<Lft>,
        faults: Vec<Fault>,
        control: Option<Box<dyn ControlPlane>>,
    ) -> Sim {
        let fwd = match lft {
            Some(l) => Forwarder::Lft(l),
            None => Forwarder::Ecmp(Routes::build(&topo, seed, |_| true)),
        };
        let np = topo.ports.len();
        let mut ibp = vec![IbPort { wait_from: NEVER, ..IbPort::default() }; if p.ib.is_some() { np } else { 0 }];
        if let Some(ibc) = &p.ib {
            // Link bring-up exchanges FCPs: each sender starts knowing its peer's full credit.
            let first = ib::fccl(0, ibc.vl_buffer_blocks);
            for st in &mut ibp {
                for vl in 0..ibc.data_vls as usize {
                    st.free[vl] = ibc.vl_buffer_blocks;
                    st.fccl[vl] = first;
                }
            }
        }
        let b = &p.buffer;
        let mut mmus = vec![Mmu::default(); topo.nodes.len()];
        let lossless_pg_mask = (0..8).filter(|&tc| p.lossless[tc]).fold(0u8, |m, tc| m | 1 << p.tc_to_pg[tc]);
        let lossless_pgs: Vec<u8> = lossless_pgs(lossless_pg_mask).collect();
        for (i, n) in topo.nodes.iter().enumerate() {
            if n.kind != NodeKind::Switch {
                continue;
            }
            let ports_range = n.first_port as usize..(n.first_port + n.nports) as usize;
            let reserved = b.reserved_cells * 8 * n.nports as u64;
            let hdrm: u64 = if b.shared_headroom_pool.is_some() { 0 } else { ports_range.clone().map(|pi| headroom[pi] * lossless_pgs.len() as u64).sum() };
            let pool = b.shared_headroom_pool.unwrap_or(0);
            mmus[i] = Mmu { shared_total: b.total_cells.saturating_sub(reserved + hdrm + pool), hdrm_pool: pool, ..Mmu::default() };
        }
        let mut hdrm_cap = vec![0u64; np * 8];
        for pi in 0..np {
            for &pg in &lossless_pgs {
                hdrm_cap[pg as usize * np + pi] = headroom[pi];
            }
        }
        let response = topo
            .ports
            .iter()
            .map(|pt| match p.pfc.response {
                Some(d) => d.ps(),
                None if pt.rate.0 > 0 => model::headroom::pause_response_quanta(pt.rate) * model::headroom::quantum(pt.rate).ps(),
                None => 0,
            })
            .collect();
        let quantum = topo.ports.iter().map(|pt| if pt.rate.0 > 0 { model::headroom::quantum(pt.rate).ps() } else { 0 }).collect();
        let owner = |n: NodeId| match topo.node(n).kind {
            NodeKind::Switch => (n.0, true),
            NodeKind::Nic { ep, .. } | NodeKind::Aggregator { ep, .. } => (ep, false),
        };
        let ports: Vec<PortState> = topo
            .ports
            .iter()
            .enumerate()
            .map(|(pi, pt)| {
                let (own, sw) = owner(pt.node);
                let mut flags = if sw { P_SWITCH } else { 0 };
                let (mut peer, mut peer_owner, mut delay) = (NONE, NONE, pt.prop.ps());
                if let (Some(pp), Some(hop)) = (pt.peer, Hop::out_of(&topo, &p, PortId(pi as u32))) {
                    let (po, psw) = owner(topo.ports[pp.0 as usize].node);
                    peer = pp.0;
                    peer_owner = po;
                    delay = hop.delay.ps();
                    if psw {
                        flags |= P_PEER_SWITCH;
                    }
                    if hop.cut_through {
                        flags |= P_PEER_CUT_THROUGH;
                    }
                }
                PortState {
                    qtotal: 0,
                    q_changed: 0,
                    delay,
                    rate: pt.rate.0,
                    chan_head: NONE,
                    chan_tail: NONE,
                    owner: own,
                    peer,
                    peer_owner,
                    busy: false,
                    flags,
                    pfc_mask: 0,
                    rr: 0,
                    nonempty: 0,
                    deficit_nz: 0,
                }
            })
            .collect();
        let mask = |f: fn(Sched) -> bool| (0..8).filter(|&tc| f(p.sched[tc])).fold(0u8, |m, tc| m | 1 << tc);
        let strict_mask = mask(|s| s == Sched::Strict);
        let weighted_mask = mask(|s| matches!(s, Sched::Weighted(_)));
        // Packets carry frame and payload sizes as u16 (path MTUs are at most 4096 B).
        let max_frame = frame_of(&p, Transport::WriteFirst, p.mtu).0;
        assert!(max_frame <= u16::MAX as u64, "MTU {} too large for the packet model", p.mtu.0);
        let nics = topo
            .endpoints
            .iter()
            .map(|&nid| {
                let port = topo.node(nid).first_port;
                Nic { port, active: vec![], rr: 0, line_bps: topo.ports[port as usize].rate.0, last_cnp: NEVER }
            })
            .collect();
        let mut qps = Vec::with_capacity(flows.len());
        let mut qp_addr = Vec::with_capacity(flows.len());
        assert!(np <= ID_MASK as usize && flows.len() <= ID_MASK as usize, "too many ports or flows for the event encoding");
        let mut q = Events::new();
        let mut qp_rng = Rng::new(seed, 0x0000_9000);
        let mut flow_qp = Vec::with_capacity(flows.len());
        // Lookup only (QP numbers follow flow order): connection id → (QP, its first flow).
        let mut conn_qp: std::collections::HashMap<u32, (u32, usize)> = std::collections::HashMap::new();
        for (fi, f) in flows.iter().enumerate() {
            if f.join {
                flow_qp.push(NONE);
                continue;
            }
            if let Some(c) = f.conn {
                if let Some(&(qi, first)) = conn_qp.get(&c) {
                    let first = &flows[first];
                    assert!(
                        first.src == f.src && first.dst == f.dst && first.dscp == f.dscp && first.sl == f.sl,
                        "flows sharing connection {c} must have one source, destination and class"
                    );
                    flow_qp.push(qi);
                    continue;
                }
                conn_qp.insert(c, (qps.len() as u32, fi));
            }
            flow_qp.push(qps.len() as u32);
            let line = topo.ports[topo.ep_port(f.src).0 as usize].rate.0;
            let class = match &p.ib {
                Some(ibc) => ibc.sl_to_vl_hca.get(&f.src).unwrap_or(&ibc.sl_to_vl)[f.sl as usize],
                None => p.dscp_to_tc[f.dscp as usize],
            };
            // RoCEv2 source ports come from the dynamic range 49152–65535 (Annex A17.5.1.1).
            let sport = 49152 + qp_rng.below(16384) as u16;
            qp_addr.push(QpAddr { src: f.src, dst: f.dst, sport });
            qps.push(Qp {
                src: f.src,
                dst: f.dst,
                tc: class,
                sl: f.sl,
                dscp: f.dscp,
                sport,
                msgs: VecDeque::new(),
                snd_una: 0,
                snd_nxt: 0,
                snd_max: 0,
                max_sent: 0,
                rto_deadline: NEVER,
                rto_pending: false,
                retries: 0,
                failed: false,
                next_tx: 0,
                last_tx: NEVER,
                last_wire: 0,
                active: false,
                cc: p.dcqcn.as_ref().map(|(_, d)| Dcqcn::new(line, d)),
                rate_gen: 0,
                cca: crate::ibcc::Cca::default(),
                epsn: 0,
                nak_sent: false,
                unacked: 0,
                last_cnp: NEVER,
                rx_msgs: VecDeque::new(),
            });
        }
        // The dependency graph, as counts and a compressed adjacency list.
        let nf = flows.len();
        let mut waiting = vec![0u32; nf];
        let mut dep_first = vec![0u32; nf + 1];
        for (fi, f) in flows.iter().enumerate() {
            waiting[fi] = f.after.len() as u32;
            for &d in &f.after {
                assert!((d as usize) < nf && d as usize != fi, "flow {fi} depends on flow {d}, which does not exist");
                dep_first[d as usize + 1] += 1;
            }
        }
        for i in 0..nf {
            dep_first[i + 1] += dep_first[i];
        }
        let mut dependents = vec![0u32; dep_first[nf] as usize];
        let mut fill = dep_first.clone();
        for (fi, f) in flows.iter().enumerate() {
            for &d in &f.after {
                dependents[fill[d as usize] as usize] = fi as u32;
                fill[d as usize] += 1;
            }
            if f.after.is_empty() {
                q.schedule(f.start, Ev::Post(fi as u32));
            }
        }
        let ecn_rng = (0..np as u64).map(|i| Rng::new(seed, 0x0001_0000_0000 + i)).collect();
        let mut stats = Stats::new(&topo, flows.len());
        for (fi, f) in flows.iter().enumerate() {
            stats.flows[fi] = FlowRecord { src: f.src, dst: f.dst, size: f.size.0, start: f.start.0, join: f.join, ..Default::default() };
        }
        if let Some(sp) = sample_period {
            if sp.ps() > 0 {
                q.schedule(SimTime::ZERO, Ev::Sample);
            }
        }
        let remaining = flows.len();
        if remaining > 0 {
            q.schedule(SimTime(deadlock_period(&p)), Ev::Watchdog);
        }
        for (i, f) in faults.iter().enumerate() {
            q.schedule(f.at, Ev::Fault(i as u32));
        }
        let any = |k: fn(&FaultKind) -> bool| faults.iter().any(|f| k(&f.kind));
        let rx = if any(|k| matches!(k, FaultKind::NicRx { .. })) { (0..topo.endpoints.len()).map(|_| NicRx::default()).collect() } else { vec![] };
        let pfc_off = if any(|k| matches!(k, FaultKind::PortPfc { .. })) { vec![false; np] } else { vec![] };
        let port_dscp = if any(|k| matches!(k, FaultKind::PortDscpMap { .. })) { vec![None; np] } else { vec![] };
        let wd = if p.pfc.watchdog.is_some() && p.ib.is_none() { vec![WdQueue::default(); np * 8] } else { vec![] };
        let nqps = qps.len();
        let ttl_on = p.ib.is_none() && any(|k| matches!(k, FaultKind::RouteOverride { .. }));
        Sim {
            q,
            link_up: vec![true; np],
            topo,
            fwd,
            p,
            ib: ibp,
            fecn_count: vec![0; np],
            halted: false,
            rx,
            pfc_off,
            port_dscp,
            port_dscp_any: false,
            wd,
            storms_active: 0,
            first_block: vec![false; np],
            lost: vec![(NEVER, 0); nqps],
            route_override: std::collections::HashMap::new(),
            pinned: std::collections::HashMap::new(),
            hops: vec![],
            ttl_on,
            deadlock_checked: false,
            picking: NONE,
            lossless_pg_mask,
            faults,
            control,
            pending_fwd: None,
            fwd_gen: 0,
            ports,
            cls: vec![ClassQ::default(); np * 8],
            np,
            kick: vec![NEVER; np],
            pfc_quanta: vec![[0; 8]; np],
            pfc_sent: (0..np).map(|_| VecDeque::new()).collect(),
            strict_mask,
            weighted_mask,
            pgs: vec![PgState::default(); np * 8],
            mmus,
            hdrm_cap,
            response,
            quantum,
            nics,
            qps,
            qp_addr,
            flows,
            flow_qp,
            waiting,
            dep_first,
            dependents,
            pkts: Vec::new(),
            free: Vec::new(),
            ecn_rng,
            stats,
            stop,
            remaining,
            sample_period,
        }
    }

    pub fn topology(&self) -> &Topology {
        &self.topo
    }
    pub fn params(&self) -> &Params {
        &self.p
    }
    pub fn events(&self) -> u64 {
        self.q.popped()
    }
    pub fn now(&self) -> SimTime {
        self.q.now()
    }

    /// Runs until every flow completed (or failed), or the stop time.
    pub fn run(&mut self) {
        while let Some(t) = self.q.peek_time() {
            if let Some(stop) = self.stop {
                if t > stop {
                    break;
                }
            }
            if (self.remaining == 0 && self.stop.is_none()) || self.halted {
                break;
            }
            let (now, ev) = self.q.pop().expect("peeked");
            self.dispatch(now.0, ev);
        }
        let end = match self.stop {
            Some(s) if self.remaining > 0 && !self.halted => s.0.max(self.q.now().0),
            _ => self.q.now().0,
        };
        self.finish(end);
    }

    fn dispatch(&mut self, now: u64, ev: Ev) {
        match ev {
            Ev::Arrive(port) => self.on_arrive(now, port),
            Ev::TxDone(port) => {
                self.ports[port as usize].busy = false;
                self.try_tx(now, port);
            }
            Ev::Kick(port) => {
                let k = &mut self.kick[port as usize];
                if *k == now {
                    *k = NEVER;
                }
                self.try_tx(now, port);
            }
            Ev::PfcRefresh { port, pg, gen } => {
                let st = self.pgs[self.pg_index(port, pg)];
                if st.paused && st.gen == gen {
                    self.queue_pfc(now, port, pg, self.p.pfc.quanta);
                    self.schedule_refresh(now, port, pg, gen);
                }
            }
            Ev::Post(f) => self.on_post(now, f),
            Ev::Rto(qp) => self.on_rto(now, qp),
            Ev::RateTimer { qp, gen } => {
                let (_, d) = self.p.dcqcn.as_ref().expect("dcqcn timer without dcqcn");
                let d = *d;
                let q = &mut self.qps[qp as usize];
                let cc = q.cc.as_mut().expect("cc");
                if gen != q.rate_gen || !cc.rate_running {
                    return; // superseded by a later rate cut
                }
                if cc.on_rate_timer(&d) {
                    self.q.schedule(SimTime(now) + d.rate_timer, Ev::RateTimer { qp, gen });
                }
                self.dcqcn_rate_changed(now, qp);
            }
            Ev::RateCut(qp) => {
                let (_, d) = self.p.dcqcn.as_ref().expect("dcqcn cut without dcqcn");
                let d = *d;
                let cc = self.qps[qp as usize].cc.as_mut().expect("cc");
                let arm = cc.on_cut_due(now, &d);
                self.dcqcn_arm(now, qp, arm);
            }
            Ev::Watchdog => self.watchdog(now),
            Ev::CctiTimer { qp, gen } => {
                let p = self.p.ib.as_ref().and_then(|i| i.cc.as_ref()).expect("CCTI timer without IB CC");
                let cca = &mut self.qps[qp as usize].cca;
                if gen == cca.gen && cca.timer_running && cca.on_timer(p) {
                    let t = p.ccti_timer;
                    self.q.schedule(SimTime(now) + t, Ev::CctiTimer { qp, gen });
                }
            }
            Ev::Fault(i) => self.on_fault(now, i),
            Ev::Install { gen } => {
                if gen == self.fwd_gen {
                    if let Some(f) = self.pending_fwd.take() {
                        self.fwd = f;
                        self.stats.reroutes.push(now);
                        self.incident(now, "reroute-installed", None, None, "the control plane's new forwarding tables take effect".into());
                    }
                }
            }
            Ev::NicDrain { ep, gen } => self.on_nic_drain(now, ep, gen),
            Ev::WdCheck { port, tc } => self.on_wd_check(now, port, tc),
            Ev::WdRestore { port, tc } => self.on_wd_restore(now, port, tc),
            Ev::Sample => {
                self.sample(now);
                if self.remaining > 0 || self.stop.is_some_and(|s| now < s.0) {
                    let sp = self.sample_period.expect("sampling");
                    self.q.schedule(SimTime(now) + sp, Ev::Sample);
                }
            }
        }
    }

    // ---------------------------------------------------------------- links

    /// Puts frame `id` (`frame_bytes` long; `pkt`: a packet, not PFC/FCP) on the link.
    fn send(&mut self, now: u64, port: u32, id: u32, frame_bytes: u64, pkt: bool) {
        let pi = port as usize;
        let ps = &self.ports[pi];
        assert!(ps.peer != NONE, "send on an uncabled port");
        let hop = Hop { tech: self.p.tech, rate: BitRate(ps.rate), delay: SimDuration(ps.delay), cut_through: ps.flags & P_PEER_CUT_THROUGH != 0 };
        let transit = hop.transit(Bytes(frame_bytes), pkt);
        let (dur, arrive) = (transit.busy.ps(), now + transit.ready.ps());
        self.pkts[id as usize].next = NONE;
        let ps = &mut self.ports[pi];
        ps.busy = true;
        let tail = ps.chan_tail;
        ps.chan_tail = id;
        if tail == NONE {
            ps.chan_head = id;
            self.q.schedule(SimTime(arrive), Ev::Arrive(port));
        } else {
            let t = &mut self.pkts[tail as usize];
            debug_assert!(self.q.now().0 <= arrive);
            t.next = id;
            t.t = arrive;
        }
        self.q.schedule(SimTime(now + dur), Ev::TxDone(port));
        let st = &mut self.stats.ports[pi];
        st.tx_frames += 1;
        st.tx_bytes += frame_bytes;
        st.busy_ps += dur;
    }

    fn on_arrive(&mut self, now: u64, port: u32) {
        let pi = port as usize;
        let ps = &mut self.ports[pi];
        let id = ps.chan_head;
        assert!(id != NONE, "arrival on an empty link");
        let pk = self.pkts[id as usize];
        ps.chan_head = pk.next;
        if pk.next == NONE {
            ps.chan_tail = NONE;
        } else {
            self.q.schedule(SimTime(pk.t), Ev::Arrive(port));
        }
        let (peer, peer_owner, flags) = (ps.peer, ps.peer_owner, ps.flags);
        if pk.kind == Kind::Pfc {
            let quanta = self.pfc_sent[pi].pop_front().expect("PFC frame on the link");
            self.free_pkt(id);
            if self.link_up[pi] {
                self.on_pfc(now, peer, pk.tc, quanta);
            }
            return;
        }
        if pk.kind == Kind::Fcp {
            self.free_pkt(id);
            if self.link_up[pi] {
                self.on_fcp(now, peer, pk.tc, pk.psn as u16);
            }
            return;
        }
        if !self.link_up[pi] {
            // The link died with this packet on it.
            self.drop_pkt(port, id, DropCause::PortDown);
            return;
        }
        if !self.ib.is_empty() && !self.ib_receive(now, peer, id) {
            return;
        }
        if flags & P_PEER_SWITCH != 0 {
            self.switch_rx(now, NodeId(peer_owner), peer, id);
        } else if !self.rx.is_empty() && self.rx[peer_owner as usize].fault.is_some() {
            self.impaired_rx(now, peer_owner, peer, id);
        } else {
            self.nic_rx(now, peer_owner, id);
        }
    }

    /// Starts the next frame on `port` if it is idle: PFC first, then data.
    fn try_tx(&mut self, now: u64, port: u32) {
        let pi = port as usize;
        let ps = &self.ports[pi];
        // `picking`: this port is choosing its next frame further up the stack. A packet it
        // dequeues may free buffer on its own ingress (hairpin forwarding, as in a routing
        // loop) and ask for a PFC or FCP frame here: that frame waits for the next frame
        // boundary, like any PFC frame, instead of starting a second frame at once.
        if ps.busy || !self.link_up[pi] || self.picking == port {
            return;
        }
        if ps.pfc_mask != 0 {
            let mask = ps.pfc_mask;
            self.ports[pi].pfc_mask = 0;
            for p in 0..8 {
                if mask & (1 << p) != 0 {
                    self.stats.ports[pi].pfc_tx[p] += 1;
                }
            }
            self.pfc_sent[pi].push_back(self.pfc_quanta[pi]);
            let id = self.alloc(Packet::ctrl(Kind::Pfc, mask, 0));
            self.send(now, port, id, PFC_FRAME, false);
            return;
        }
        if !self.ib.is_empty() && self.ib[pi].fcp_pending != 0 {
            let st = &mut self.ib[pi];
            let vl = st.fcp_pending.trailing_zeros() as u8;
            st.fcp_pending &= !(1 << vl);
            let fccl = ib::fccl(st.abr[vl as usize], st.free[vl as usize]);
            self.stats.ports[pi].fcp_tx += 1;
            let id = self.alloc(Packet::ctrl(Kind::Fcp, vl, fccl as u32));
            self.send(now, port, id, ib::FCP, false);
            return;
        }
        let outer = std::mem::replace(&mut self.picking, port);
        let picked = if ps.flags & P_SWITCH != 0 { self.switch_pick(now, port) } else { self.nic_pick(now, ps.owner) };
        self.picking = outer;
        if let Some(id) = picked {
            let frame = self.pkts[id as usize].frame as u64;
            if !self.ib.is_empty() {
                let vl = self.pkts[id as usize].tc as usize;
                let st = &mut self.ib[pi];
                st.fctbs[vl] = ((st.fctbs[vl] as u32 + ib::blocks(Bytes(frame))) % ib::CREDIT_MODULUS) as u16;
                st.hoq_run[vl] = 0;
                if st.wait_from != NEVER {
                    self.stats.ports[pi].xmit_wait_ps += now - st.wait_from;
                    st.wait_from = NEVER;
                }
            }
            self.send(now, port, id, frame, true);
        }
    }

    /// Whether class `tc` at `port` may send `frame` bytes now. `Err(t)`: blocked until
    /// `t` (a PFC pause expiry), or `Err(NEVER)` until credits arrive.
    #[inline]
    fn may_send(&self, pi: usize, tc: usize, frame: u32, now: u64) -> Result<(), u64> {
        if self.ib.is_empty() {
            let c = &self.cls[pi * 8 + tc];
            if c.pause_from <= now && now < c.pause_until {
                return Err(c.pause_until);
            }
            Ok(())
        } else {
            let st = &self.ib[pi];
            if ib::may_send(st.fccl[tc], st.fctbs[tc], ib::blocks(Bytes(frame as u64))) {
                Ok(())
            } else {
                Err(NEVER)
            }
        }
    }

    /// Marks the start of a credit wait (PortXmitWait) on `pi`.
    fn credit_wait(&mut self, pi: usize, now: u64) {
        let st = &mut self.ib[pi];
        if st.wait_from == NEVER {
            st.wait_from = now;
            if !self.first_block[pi] {
                self.first_block[pi] = true;
                self.incident(now, "credit-starved", Some(pi as u32), None, "first wait for credits".into());
            }
        }
    }

    // ---------------------------------------------------------------- IB credits

    /// Takes a packet arriving at `port` into its input VL buffer (IBTA Vol. 1 §7.9.4.3:
    /// ABR counts received blocks). `false` if it had no credits (never, unless broken).
    fn ib_receive(&mut self, now: u64, port: u32, id: u32) -> bool {
        let pk = self.pkts[id as usize];
        let b = ib::blocks(Bytes(pk.frame as u64));
        let vl = pk.tc as usize;
        let pi = port as usize;
        let st = &mut self.ib[pi];
        if st.free[vl] < b {
            self.drop_pkt(port, id, DropCause::CreditOverrun);
            return false;
        }
        let before = ib::fccl(st.abr[vl], st.free[vl]);
        st.abr[vl] = ((st.abr[vl] as u32 + b) % ib::CREDIT_MODULUS) as u16;
        // A switch holds the packet until it leaves; an HCA consumes it at once, unless its
        // receive side is impaired (then it holds the blocks until it absorbs the packet).
        let holds = self.ports[pi].flags & P_SWITCH != 0 || (!self.rx.is_empty() && self.rx[self.ports[pi].owner as usize].fault.is_some());
        if holds {
            st.free[vl] -= b;
            let cap = self.p.ib.as_ref().expect("ib").vl_buffer_blocks;
            let s = &mut self.stats.ports[pi];
            s.peak_vl_blocks = s.peak_vl_blocks.max(cap - st.free[vl]);
        }
        if ib::fccl(st.abr[vl], st.free[vl]) != before {
            st.fcp_pending |= 1 << vl;
            self.try_tx(now, port);
        }
        true
    }

    /// Frees the input-buffer blocks of a packet leaving the switch and schedules an FCP.
    fn ib_release(&mut self, now: u64, in_port: u32, vl: u8, frame: u32) {
        let b = ib::blocks(Bytes(frame as u64));
        let st = &mut self.ib[in_port as usize];
        st.free[vl as usize] += b;
        st.fcp_pending |= 1 << vl;
        self.try_tx(now, in_port);
    }

    fn on_fcp(&mut self, now: u64, port: u32, vl: u8, fccl: u16) {
        let pi = port as usize;
        self.stats.ports[pi].fcp_rx += 1;
        self.ib[pi].fccl[vl as usize] = fccl;
        self.try_tx(now, port);
    }

    fn paused(&self, port: usize, tc: usize, now: u64) -> bool {
        let c = &self.cls[port * 8 + tc];
        c.pause_from <= now && now < c.pause_until
    }

    fn kick_at(&mut self, port: u32, at: u64) {
        let k = &mut self.kick[port as usize];
        if at < *k {
            *k = at;
            self.q.schedule(SimTime(at), Ev::Kick(port));
        }
    }

    // ---------------------------------------------------------------- PFC

    fn on_pfc(&mut self, now: u64, port: u32, mask: u8, quanta: [u16; 8]) {
        let pi = port as usize;
        let x = now + self.response[pi];
        let mut wake = false;
        for (p, &q) in quanta.iter().enumerate() {
            if mask & (1 << p) == 0 {
                continue;
            }
            self.stats.ports[pi].pfc_rx[p] += 1;
            if !self.pfc_off.is_empty() && self.pfc_off[pi] {
                continue; // PFC disabled on this port: pause frames are not honoured
            }
            if !self.wd.is_empty() {
                let w = &mut self.wd[pi * 8 + p];
                w.last_pfc = now;
                if w.storm {
                    continue; // the watchdog ignores pause frames on a queue in storm
                }
            }
            let new_until = x + q as u64 * self.quantum[pi];
            let c = &mut self.cls[pi * 8 + p];
            let (from, until) = (c.pause_from, c.pause_until);
            let starts = from >= until || x >= until;
            if from < until && x >= until {
                self.stats.ports[pi].paused_ps[p] += until - from;
                c.pause_from = x;
            } else if from >= until {
                c.pause_from = x;
            }
            c.pause_until = new_until;
            if quanta[p] == 0 {
                wake = true;
            }
            if starts && quanta[p] > 0 {
                if !self.first_block[pi] {
                    self.first_block[pi] = true;
                    self.incident(x, "paused", Some(port), Some(p as u8), format!("first pause ({} quanta)", quanta[p]));
                }
                if !self.wd.is_empty() && self.ports[pi].flags & P_SWITCH != 0 && !self.wd[pi * 8 + p].armed {
                    self.wd[pi * 8 + p].armed = true;
                    let d = self.p.pfc.watchdog.expect("watchdog").detection.ps();
                    self.q.schedule(SimTime(x + d), Ev::WdCheck { port, tc: p as u8 });
                }
            }
            if self.stats.pause_log.len() < crate::stats::PAUSE_LOG_CAP {
                self.stats.pause_log.push((now, port, p as u8, quanta[p]));
            }
        }
        if wake {
            self.kick_at(port, x);
        }
    }

    fn queue_pfc(&mut self, now: u64, port: u32, pg: u8, quanta: u16) {
        let pi = port as usize;
        for tc in 0..8 {
            if self.p.tc_to_pg[tc] == pg && self.p.lossless[tc] {
                self.ports[pi].pfc_mask |= 1 << tc;
                self.pfc_quanta[pi][tc] = quanta;
            }
        }
        self.try_tx(now, port);
    }

    fn schedule_refresh(&mut self, now: u64, port: u32, pg: u8, gen: u32) {
        let period = match self.p.pfc.refresh {
            Some(r) => r.ps(),
            None => self.p.pfc.quanta as u64 * self.quantum[port as usize] / 2,
        };
        if period > 0 {
            self.q.schedule(SimTime(now + period), Ev::PfcRefresh { port, pg, gen });
        }
    }

    // ---------------------------------------------------------------- switch

    fn alpha_limit(&self, free: u64) -> u64 {
        let th = self.p.buffer.dynamic_th;
        if th >= 0 {
            free << th
        } else {
            free >> (-th)
        }
    }

    /// Index of (ingress port, PG) in `pgs` and `hdrm_cap`: PG-major, so the state of the
    /// PGs in use (usually one lossless PG) is dense.
    #[inline]
    fn pg_index(&self, port: u32, pg: u8) -> usize {
        pg as usize * self.np + port as usize
    }

    /// Shared-pool cells PG `pg` may use now.
    fn shared_limit(&self, node: usize, lossless: bool) -> u64 {
        let m = &self.mmus[node];
        let dynamic = self.alpha_limit(m.shared_total - m.shared_used);
        match (lossless, self.p.buffer.trigger) {
            (true, Trigger::Static(s)) => s.saturating_sub(self.p.buffer.reserved_cells).min(dynamic.max(1)),
            _ => dynamic,
        }
    }

    /// A packet's (source endpoint, destination endpoint, UDP source port).
    #[inline]
    fn addr(&self, pk: &Packet) -> (u32, u32, u16) {
        let a = self.qp_addr[pk.qp as usize];
        if pk.kind == Kind::Data {
            (a.src, a.dst, a.sport)
        } else {
            (a.dst, a.src, a.sport)
        }
    }

    /// The DSCP a packet carries.
    fn dscp_of(&self, pk: &Packet) -> u8 {
        if pk.kind == Kind::Cnp {
            self.p.cnp_dscp
        } else {
            self.qps[pk.qp as usize].dscp
        }
    }

    #[inline]
    fn next_hop(&self, node: NodeId, pk: &Packet) -> Option<PortId> {
        let (src, dst, sport) = self.addr(pk);
        if !self.route_override.is_empty() {
            if let Some(&p) = self.route_override.get(&(node.0, dst)) {
                return Some(p);
            }
        }
        self.forward(node, pk.qp, pk.kind == Kind::Data, src, dst, sport)
    }

    /// Where switch `node` sends a packet of QP `qp` (its data if `data`, else its ACKs,
    /// NAKs and CNPs) from `src` to `dst`: the port pinned for it ([`Sim::pin_route`]), else
    /// the forwarding tables (ECMP on the UDP source port `sport`, or the LFT).
    #[inline]
    fn forward(&self, node: NodeId, qp: u32, data: bool, src: u32, dst: u32, sport: u16) -> Option<PortId> {
        if !self.pinned.is_empty() {
            if let Some(&p) = self.pinned.get(&(node.0, qp, data)) {
                return Some(p);
            }
        }
        match &self.fwd {
            Forwarder::Ecmp(r) => r.next_hop(node, src, dst, sport),
            Forwarder::Lft(l) => l.get(node, dst),
        }
    }

    /// Buffer cells a packet holds in a switch (none on InfiniBand, which counts blocks).
    #[inline]
    fn cells_of(&self, pk: &Packet) -> u64 {
        if self.ib.is_empty() {
            Bytes(pk.frame as u64).cells(self.p.buffer.cell)
        } else {
            0
        }
    }

    fn switch_rx(&mut self, now: u64, node: NodeId, in_port: u32, id: u32) {
        let pk = self.pkts[id as usize];
        if self.ttl_on {
            let h = &mut self.hops[id as usize];
            *h += 1;
            if *h >= IP_TTL {
                self.drop_pkt(in_port, id, DropCause::TtlExpired);
                return;
            }
        }
        let out = match self.next_hop(node, &pk) {
            Some(o) if self.link_up[o.0 as usize] => o,
            hop => {
                if !self.ib.is_empty() {
                    self.ib_release(now, in_port, pk.tc, pk.frame as u32);
                }
                match hop {
                    None => self.drop_pkt(in_port, id, DropCause::NoRoute),
                    Some(o) => self.drop_pkt(o.0, id, DropCause::PortDown),
                }
                return;
            }
        };
        if !self.ib.is_empty() {
            let vl = self.hop_vl(in_port, out.0, &pk);
            let p = &mut self.pkts[id as usize];
            p.in_port = in_port;
            p.in_pg = p.tc;
            p.tc = vl;
            p.t = now;
            self.fecn_mark(out.0, id);
            self.enqueue(now, out.0, id);
            self.try_tx(now, out.0);
            return;
        }
        let mut tc = pk.tc as usize;
        if self.port_dscp_any {
            // Every switch classifies by DSCP; one port's map may differ (misconfigured).
            let map = self.port_dscp[in_port as usize].as_deref().unwrap_or(&self.p.dscp_to_tc);
            tc = map[self.dscp_of(&pk) as usize] as usize;
            self.pkts[id as usize].tc = tc as u8;
        }
        if self.storms_active > 0 && self.p.pfc.watchdog.is_some_and(|w| w.action == crate::params::WatchdogAction::Drop) {
            // The watchdog's drop action: packets for a queue in storm, and packets arriving
            // on the stormed port's priority, are discarded.
            for q in [out.0 as usize * 8 + tc, in_port as usize * 8 + tc] {
                if self.wd[q].storm {
                    let st = &mut self.stats.storms[self.wd[q].storm_idx as usize];
                    st.dropped_pkts += 1;
                    st.dropped_bytes += pk.frame as u64;
                    self.drop_pkt(in_port, id, DropCause::PfcWatchdog);
                    return;
                }
            }
        }
        let pg = self.p.tc_to_pg[tc];
        let mut lossless = self.p.lossless[tc] && self.p.pfc.enabled;
        let pfc_disabled = lossless && !self.pfc_off.is_empty() && self.pfc_off[in_port as usize];
        if pfc_disabled {
            lossless = false;
        }
        let cells = Bytes(pk.frame as u64).cells(self.p.buffer.cell);
        let ni = node.0 as usize;
        let gi = self.pg_index(in_port, pg);
        let limit = self.shared_limit(ni, lossless);
        let st = self.pgs[gi];
        let m = self.mmus[ni];
        let b = &self.p.buffer;
        if st.resv + cells <= b.reserved_cells {
            self.pgs[gi].resv += cells;
        } else if st.shared < limit && m.shared_used + cells <= m.shared_total {
            self.pgs[gi].shared += cells;
            self.mmus[ni].shared_used += cells;
        } else if lossless && st.hdrm + cells <= self.hdrm_cap[gi] && (b.shared_headroom_pool.is_none() || m.hdrm_pool_used + cells <= m.hdrm_pool) {
            self.pgs[gi].hdrm += cells;
            if b.shared_headroom_pool.is_some() {
                self.mmus[ni].hdrm_pool_used += cells;
            }
        } else {
            let cause = if lossless {
                DropCause::HeadroomOverflow
            } else if pfc_disabled {
                DropCause::PfcDisabled
            } else if m.shared_used + cells > m.shared_total {
                DropCause::BufferFull
            } else {
                DropCause::DynamicThreshold
            };
            self.drop_pkt(in_port, id, cause);
            return;
        }
        let mm = &mut self.mmus[ni];
        mm.used += cells;
        mm.peak_used = mm.peak_used.max(mm.used);
        {
            let s = &mut self.pgs[gi];
            s.peak_hdrm = s.peak_hdrm.max(s.hdrm);
            s.peak_total = s.peak_total.max(s.resv + s.shared + s.hdrm);
        }
        if lossless && !self.pgs[gi].paused {
            let s = self.pgs[gi];
            if s.hdrm > 0 || s.shared >= self.shared_limit(ni, true) {
                self.pgs[gi].paused = true;
                self.pgs[gi].gen += 1;
                let gen = self.pgs[gi].gen;
                self.queue_pfc(now, in_port, pg, self.p.pfc.quanta);
                self.schedule_refresh(now, in_port, pg, gen);
            }
        }
        let p = &mut self.pkts[id as usize];
        p.in_port = in_port;
        p.in_pg = pg;
        if self.p.ecn_marking == EcnMarking::Enqueue {
            self.ecn_mark(out.0 as usize, tc, id);
        }
        self.enqueue(now, out.0, id);
        self.try_tx(now, out.0);
    }

    /// ECN at egress by the RED rule on the instantaneous queue of (`pi`, `tc`): the queue
    /// the packet joins (enqueue marking) or leaves behind (dequeue marking).
    fn ecn_mark(&mut self, pi: usize, tc: usize, id: u32) {
        let Some(red) = self.p.ecn[tc] else { return };
        let p = &self.pkts[id as usize];
        if !p.has(ECN_CAPABLE) || p.has(CE) {
            return;
        }
        let qlen = Bytes(self.cls[pi * 8 + tc].qbytes);
        let prob = red.mark_probability(qlen);
        let bin = crate::stats::ecn_bin(qlen, red.kmax);
        let st = &mut self.stats.ports[pi];
        st.ecn_seen[bin] += 1;
        if prob > 0.0 && (prob >= 1.0 || self.ecn_rng[pi].f64() < prob) {
            self.pkts[id as usize].flags |= CE;
            st.ecn_marked += 1;
            st.ecn_marked_bins[bin] += 1;
        }
    }

    /// The VL a packet leaves a switch on: its SL through the SL→VL table of the (input,
    /// output) port pair. With one table everywhere that is the VL it arrived on.
    #[inline]
    fn hop_vl(&self, in_port: u32, out_port: u32, pk: &Packet) -> u8 {
        let ibc = self.p.ib.as_ref().expect("ib");
        if ibc.sl_to_vl_ports.is_empty() && ibc.sl_to_vl_hca.is_empty() {
            return pk.tc;
        }
        let sl = self.qps[pk.qp as usize].sl as usize;
        ibc.sl_to_vl_ports.get(&(in_port, out_port)).unwrap_or(&ibc.sl_to_vl)[sl]
    }

    /// Appends packet `id` to queue (`pi`, `tc`).
    #[inline]
    fn push_q(&mut self, pi: usize, tc: usize, id: u32) {
        self.pkts[id as usize].next = NONE;
        let c = &mut self.cls[pi * 8 + tc];
        if c.tail == NONE {
            c.head = id;
            c.moved = self.q.now().0;
            self.ports[pi].nonempty |= 1 << tc;
        } else {
            self.pkts[c.tail as usize].next = id;
        }
        c.tail = id;
    }

    /// Removes the head of the non-empty queue (`pi`, `tc`).
    #[inline]
    fn pop_q(&mut self, pi: usize, tc: usize) -> u32 {
        let c = &mut self.cls[pi * 8 + tc];
        let id = c.head;
        debug_assert!(id != NONE, "pop from an empty queue");
        let next = self.pkts[id as usize].next;
        c.head = next;
        if next == NONE {
            c.tail = NONE;
            self.ports[pi].nonempty &= !(1 << tc);
        }
        id
    }

    /// The packets queued at (`pi`, `tc`), head first.
    fn queued(&self, pi: usize, tc: usize) -> impl Iterator<Item = u32> + '_ {
        let mut id = self.cls[pi * 8 + tc].head;
        std::iter::from_fn(move || {
            (id != NONE).then(|| {
                let cur = id;
                id = self.pkts[cur as usize].next;
                cur
            })
        })
    }

    /// The frames on the link leaving `pi`, oldest first.
    fn on_link(&self, pi: usize) -> impl Iterator<Item = u32> + '_ {
        let mut id = self.ports[pi].chan_head;
        std::iter::from_fn(move || {
            (id != NONE).then(|| {
                let cur = id;
                id = self.pkts[cur as usize].next;
                cur
            })
        })
    }

    fn enqueue(&mut self, now: u64, port: u32, id: u32) {
        let pk = &self.pkts[id as usize];
        let (tc, bytes) = (pk.tc as usize, pk.frame as u64);
        let pi = port as usize;
        self.account_queue(now, pi);
        if self.cls[pi * 8 + tc].head == NONE && !self.ib.is_empty() {
            self.ib[pi].head_since[tc] = now;
        }
        self.push_q(pi, tc, id);
        self.cls[pi * 8 + tc].qbytes += bytes;
        let ps = &mut self.ports[pi];
        ps.qtotal += bytes;
        let st = &mut self.stats.ports[pi];
        st.max_queue = st.max_queue.max(ps.qtotal);
    }

    fn account_queue(&mut self, now: u64, pi: usize) {
        let ps = &mut self.ports[pi];
        self.stats.ports[pi].queue_area += ps.qtotal as u128 * (now - ps.q_changed) as u128;
        ps.q_changed = now;
    }

    fn switch_pick(&mut self, now: u64, port: u32) -> Option<u32> {
        let pi = port as usize;
        let mut expiry = NEVER;
        if !self.ib.is_empty() {
            expiry = self.expire_heads(now, port);
        }
        let mut blocked_until = NEVER;
        let mut credit_blocked = false;
        let nonempty = self.ports[pi].nonempty;
        // Strict queues (high-priority VLs), highest index first.
        let mut m = nonempty & self.strict_mask;
        while m != 0 {
            let tc = 7 - m.leading_zeros() as usize;
            m &= !(1 << tc);
            let head = self.cls[pi * 8 + tc].head;
            match self.may_send(pi, tc, self.pkts[head as usize].frame as u32, now) {
                Ok(()) => return Some(self.dequeue(now, port, tc)),
                Err(NEVER) => credit_blocked = true,
                Err(t) => blocked_until = blocked_until.min(t),
            }
        }
        // Deficit round robin among weighted queues.
        let mut eligible = 0u8;
        let mut m = nonempty & self.weighted_mask;
        while m != 0 {
            let tc = m.trailing_zeros() as usize;
            m &= m - 1;
            let head = self.cls[pi * 8 + tc].head;
            match self.may_send(pi, tc, self.pkts[head as usize].frame as u32, now) {
                Ok(()) => eligible |= 1 << tc,
                Err(NEVER) => credit_blocked = true,
                Err(t) => blocked_until = blocked_until.min(t),
            }
        }
        if eligible == 0 {
            if credit_blocked {
                self.credit_wait(pi, now);
                blocked_until = blocked_until.min(expiry);
            }
            if blocked_until != NEVER {
                self.kick_at(port, blocked_until);
            }
            return None;
        }
        loop {
            let tc = self.ports[pi].rr as usize;
            if eligible & (1 << tc) != 0 {
                let c = &mut self.cls[pi * 8 + tc];
                let size = self.pkts[c.head as usize].frame as i64;
                if c.deficit >= size {
                    c.deficit -= size;
                    let nz = c.deficit != 0;
                    self.set_deficit_nz(pi, tc, nz);
                    return Some(self.dequeue(now, port, tc));
                }
                let Sched::Weighted(w) = self.p.sched[tc] else { unreachable!() };
                c.deficit += w as i64 * 4096;
                let (d, nz) = (c.deficit, c.deficit != 0);
                self.set_deficit_nz(pi, tc, nz);
                if d >= size {
                    continue;
                }
            } else if nonempty & (1 << tc) == 0 && self.ports[pi].deficit_nz & (1 << tc) != 0 {
                // An empty queue loses its deficit when the round passes it.
                self.cls[pi * 8 + tc].deficit = 0;
                self.ports[pi].deficit_nz &= !(1 << tc);
            }
            self.ports[pi].rr = ((tc + 1) % 8) as u8;
        }
    }

    #[inline]
    fn set_deficit_nz(&mut self, pi: usize, tc: usize, nz: bool) {
        let ps = &mut self.ports[pi];
        if nz {
            ps.deficit_nz |= 1 << tc;
        } else {
            ps.deficit_nz &= !(1 << tc);
        }
    }

    fn dequeue(&mut self, now: u64, port: u32, tc: usize) -> u32 {
        let pi = port as usize;
        self.account_queue(now, pi);
        let id = self.pop_q(pi, tc);
        self.cls[pi * 8 + tc].moved = now;
        let pk = self.pkts[id as usize];
        self.cls[pi * 8 + tc].qbytes -= pk.frame as u64;
        let ps = &mut self.ports[pi];
        ps.qtotal -= pk.frame as u64;
        let node = ps.owner as usize;
        if !self.ib.is_empty() {
            self.ib[pi].head_since[tc] = now;
            self.ib_release(now, pk.in_port, pk.in_pg, pk.frame as u32);
        } else {
            if self.p.ecn_marking == EcnMarking::Dequeue {
                self.ecn_mark(pi, tc, id);
            }
            self.release(now, node, pk);
        }
        id
    }

    /// IB CC (Annex A10.2.1): FECN on every `marking_rate`-th eligible packet entering an
    /// output VL queue at or above the threshold.
    fn fecn_mark(&mut self, port: u32, id: u32) {
        let Some(cc) = self.p.ib.as_ref().and_then(|i| i.cc.as_ref()) else { return };
        let pk = self.pkts[id as usize];
        if pk.kind != Kind::Data || (pk.frame as u64) < cc.packet_size_bytes {
            return;
        }
        let pi = port as usize;
        if self.cls[pi * 8 + pk.tc as usize].qbytes < cc.threshold_bytes {
            return;
        }
        // Only the root of congestion marks: a port that has credits (A10.2.1.1). A port
        // waiting for credits is a victim of congestion further on and marks only when its
        // victim-mask bit is set (OpenSM's default mask is all zero).
        if !cc.mark_victims && self.may_send(pi, pk.tc as usize, pk.frame as u32, 0).is_err() {
            return;
        }
        self.fecn_count[pi] += 1;
        if self.fecn_count[pi] >= cc.marking_rate.max(1) {
            self.fecn_count[pi] = 0;
            self.pkts[id as usize].flags |= CE;
            self.stats.ports[pi].ecn_marked += 1;
        }
    }

    /// IB lifetime limits at output `port`: discards heads older than the HOQ lifetime or
    /// packets older than the switch lifetime (checked at the head). Returns when the
    /// next head would expire.
    fn expire_heads(&mut self, now: u64, port: u32) -> u64 {
        let pi = port as usize;
        let (hoq, life) = (self.hoq_of(pi).map(|d| d.ps()), self.p.ib.as_ref().expect("ib").switch_lifetime.map(|d| d.ps()));
        if hoq.is_none() && life.is_none() {
            return NEVER;
        }
        let mut next = NEVER;
        let mut m = self.ports[pi].nonempty;
        while m != 0 {
            let tc = m.trailing_zeros() as usize;
            m &= m - 1;
            while self.cls[pi * 8 + tc].head != NONE {
                let head = self.cls[pi * 8 + tc].head;
                let since = self.ib[pi].head_since[tc];
                let t_in = self.pkts[head as usize].t;
                let stalled = now < self.ib[pi].stalled_until[tc];
                let hoq_at = if stalled { now } else { hoq.map_or(NEVER, |h| since.saturating_add(h)) };
                let life_at = life.map_or(NEVER, |l| t_in.saturating_add(l));
                if now >= hoq_at || now >= life_at {
                    let cause = if now >= hoq_at { DropCause::HoqLifetime } else { DropCause::SwitchLifetime };
                    let id = self.dequeue(now, port, tc);
                    self.drop_pkt(port, id, cause);
                    if cause == DropCause::HoqLifetime && !stalled {
                        self.hoq_discard(now, port, tc);
                    }
                } else {
                    next = next.min(hoq_at.min(life_at));
                    break;
                }
            }
        }
        next
    }

    /// The head-of-queue lifetime of switch port `pi`: OpenSM sets a shorter one on ports
    /// that drive a CA.
    fn hoq_of(&self, pi: usize) -> Option<SimDuration> {
        let ibc = self.p.ib.as_ref().expect("ib");
        if self.ports[pi].flags & P_PEER_SWITCH != 0 {
            ibc.hoq_lifetime
        } else {
            ibc.leaf_hoq_lifetime
        }
    }

    /// VL stall (IBTA Vol. 1 §18.2.5.4, PortInfo:VLStallCount): after `vl_stall_count`
    /// head-of-queue discards in a row on a VL, the port discards every packet of that VL
    /// for 8 × HOQ lifetime, then starts counting again (OpenSM `osm_base.h`,
    /// OSM_DEFAULT_VL_STALL_COUNT 0x7: "in stalled state, the port is supposed to drop
    /// everything for 8*(head of queue lifetime)"). InfiniBand's own containment of a
    /// receiver that stopped returning credits.
    fn hoq_discard(&mut self, now: u64, port: u32, tc: usize) {
        let pi = port as usize;
        let (Some(hoq), count) = (self.hoq_of(pi), self.p.ib.as_ref().expect("ib").vl_stall_count) else { return };
        let st = &mut self.ib[pi];
        st.hoq_run[tc] = st.hoq_run[tc].saturating_add(1);
        if count > 0 && st.hoq_run[tc] >= count {
            st.hoq_run[tc] = 0;
            st.stalled_until[tc] = now + 8 * hoq.ps();
            self.incident(
                now,
                "vl-stalled",
                Some(port),
                Some(tc as u8),
                format!("{count} head-of-queue discards in a row: every packet of the VL discarded for 8 x HOQ lifetime"),
            );
        }
    }

    /// Frees a departing packet's ingress cells: headroom first, then shared, then reserved.
    /// (RoCEv2; InfiniBand frees input blocks in [`Sim::ib_release`].)
    /// `ni`: the switch holding the packet.
    fn release(&mut self, now: u64, ni: usize, pk: Packet) {
        let gi = self.pg_index(pk.in_port, pk.in_pg);
        let cells = self.cells_of(&pk);
        let mut c = cells;
        let s = &mut self.pgs[gi];
        let h = c.min(s.hdrm);
        s.hdrm -= h;
        c -= h;
        let sh = c.min(s.shared);
        s.shared -= sh;
        c -= sh;
        s.resv -= c;
        let m = &mut self.mmus[ni];
        m.used -= cells;
        m.shared_used -= sh;
        if self.p.buffer.shared_headroom_pool.is_some() {
            m.hdrm_pool_used -= h;
        }
        let s = self.pgs[gi];
        if s.paused && s.hdrm == 0 {
            let occ = s.resv + s.shared;
            // The trigger fires at shared >= limit, i.e. at occupancy resv + limit with the
            // reserve this PG holds now: a frame larger than what is left of the reserve goes
            // to the shared pool whole, so resv may stay below `reserved_cells`.
            let level = match self.p.buffer.resume {
                Resume::Absolute(a) => a,
                Resume::Offset(o) => (s.resv + self.shared_limit(ni, true)).saturating_sub(o),
            };
            if occ <= level {
                self.pgs[gi].paused = false;
                self.queue_pfc(now, pk.in_port, pk.in_pg, 0);
            }
        }
    }

    fn drop_pkt(&mut self, port: u32, id: u32, cause: DropCause) {
        let pk = self.pkts[id as usize];
        let st = &mut self.stats.ports[port as usize];
        st.drops[cause as usize] += 1;
        st.drop_bytes += pk.frame as u64;
        if self.p.lossless[pk.tc as usize] {
            st.lossless_drops += 1;
        }
        if pk.kind == Kind::Data {
            self.stats.dropped_payload += pk.payload as u64;
            let l = &mut self.lost[pk.qp as usize];
            if l.0 == NEVER {
                *l = (self.q.now().0, pk.psn);
            } else {
                l.1 = l.1.min(pk.psn);
            }
        }
        self.free_pkt(id);
    }

    // ---------------------------------------------------------------- packets

    fn alloc(&mut self, p: Packet) -> u32 {
        let id = if let Some(id) = self.free.pop() {
            self.pkts[id as usize] = p;
            id
        } else {
            self.pkts.push(p);
            (self.pkts.len() - 1) as u32
        };
        if self.ttl_on {
            if self.hops.len() <= id as usize {
                self.hops.resize(id as usize + 1, 0);
            }
            self.hops[id as usize] = 0;
        }
        id
    }

    fn free_pkt(&mut self, id: u32) {
        self.free.push(id);
    }

    /// An ACK, NAK or CNP of QP `qp` (from its responder to its requester).
    fn ctrl_packet(&self, kind: Kind, qp: u32, psn: u32, tc: u8) -> Packet {
        let t = if kind == Kind::Cnp { Transport::Cnp } else { Transport::Ack };
        Packet { kind, tc, in_pg: 0, flags: 0, frame: frame_of(&self.p, t, Bytes(0)).0 as u16, payload: 0, qp, psn, in_port: NONE, next: NONE, t: 0 }
    }

    // ---------------------------------------------------------------- NIC / RC

    fn on_post(&mut self, now: u64, f: u32) {
        let fl = &self.flows[f as usize];
        let (n, last) = segments(fl.size, self.p.mtu);
        let qpi = self.flow_qp[f as usize];
        self.stats.flows[f as usize].start = now;
        if qpi == NONE {
            // A barrier: done as soon as it is released.
            self.stats.flows[f as usize].finish = Some(now);
            self.remaining -= 1;
            self.on_delivered(now, f);
            return;
        }
        let qp = &mut self.qps[qpi as usize];
        if qp.failed {
            // The QP is in the error state: the post completes with an error at once.
            self.fail_flows(&[f]);
            return;
        }
        qp.msgs.push_back(Msg { flow: f, first_psn: qp.snd_max, npkts: n as u32, size: fl.size.0, last_payload: last.0 as u32 });
        qp.rx_msgs.push_back(f);
        qp.snd_max += n as u32;
        let ep = qp.src;
        self.activate(ep, qpi);
        let port = self.nics[ep as usize].port;
        self.try_tx(now, port);
    }

    fn activate(&mut self, ep: u32, qp: u32) {
        if !self.qps[qp as usize].active {
            self.qps[qp as usize].active = true;
            self.nics[ep as usize].active.push(qp);
        }
    }

    fn nic_pick(&mut self, now: u64, ep: u32) -> Option<u32> {
        let port = self.nics[ep as usize].port;
        let pi = port as usize;
        let mut wake = NEVER;
        // Control packets (ACK/NAK/CNP) first, by class, honouring pause.
        let mut credit_blocked = false;
        let mut m = self.ports[pi].nonempty;
        while m != 0 {
            let tc = 7 - m.leading_zeros() as usize;
            m &= !(1 << tc);
            let head = self.cls[pi * 8 + tc].head;
            match self.may_send(pi, tc, self.pkts[head as usize].frame as u32, now) {
                Ok(()) => {}
                Err(NEVER) => {
                    credit_blocked = true;
                    continue;
                }
                Err(t) => {
                    wake = wake.min(t);
                    continue;
                }
            }
            let id = self.pop_q(pi, tc);
            self.cls[pi * 8 + tc].qbytes -= self.pkts[id as usize].frame as u64;
            return Some(id);
        }
        // Data: round robin over QPs with work, not paused, allowed by their rate.
        let e = ep as usize;
        let n = self.nics[e].active.len();
        let mut i = 0;
        while i < n.min(self.nics[e].active.len()) {
            let len = self.nics[e].active.len();
            let idx = (self.nics[e].rr + i) % len;
            let qpi = self.nics[e].active[idx];
            let qp = &self.qps[qpi as usize];
            if qp.snd_nxt >= qp.snd_max || qp.failed {
                // Nothing to send: leave the active list (re-added on post or go-back).
                self.qps[qpi as usize].active = false;
                self.nics[e].active.swap_remove(idx);
                continue;
            }
            let tc = qp.tc as usize;
            let next_tx = qp.next_tx;
            if self.ib.is_empty() {
                let c = &self.cls[pi * 8 + tc];
                if c.pause_from <= now && now < c.pause_until {
                    wake = wake.min(c.pause_until);
                    i += 1;
                    continue;
                }
            } else if !self.qp_has_credit(pi, qpi) {
                credit_blocked = true;
                i += 1;
                continue;
            }
            if next_tx > now {
                wake = wake.min(next_tx);
                i += 1;
                continue;
            }
            self.nics[e].rr = (idx + 1) % len;
            let id = self.build_data(now, qpi);
            return Some(id);
        }
        if credit_blocked {
            self.credit_wait(pi, now);
        }
        if wake != NEVER {
            self.kick_at(port, wake);
        }
        None
    }

    /// Whether QP `qpi`'s next packet fits the credits of its VL at port `pi`.
    fn qp_has_credit(&self, pi: usize, qpi: u32) -> bool {
        let qp = &self.qps[qpi as usize];
        let psn = qp.snd_nxt;
        let m = msg_at(&qp.msgs, psn);
        let first = psn == m.first_psn;
        let payload = if psn == m.first_psn + m.npkts - 1 { m.last_payload as u64 } else { self.p.mtu.0 };
        let t = if first { Transport::WriteFirst } else { Transport::WriteRest };
        self.may_send(pi, qp.tc as usize, frame_of(&self.p, t, Bytes(payload)).0 as u32, 0).is_ok()
    }

    fn build_data(&mut self, now: u64, qpi: u32) -> u32 {
        let mtu = self.p.mtu.0 as u32;
        let qp = &mut self.qps[qpi as usize];
        let psn = qp.snd_nxt;
        let m = msg_at(&qp.msgs, psn);
        let first = psn == m.first_psn;
        let last = psn == m.first_psn + m.npkts - 1;
        let payload = if last { m.last_payload } else { mtu };
        let t = if first { Transport::WriteFirst } else { Transport::WriteRest };
        let frame = frame_of(&self.p, t, Bytes(payload as u64)).0 as u32;
        qp.snd_nxt += 1;
        let retx = psn < qp.max_sent;
        qp.max_sent = qp.max_sent.max(psn + 1);
        let line = self.nics[qp.src as usize].line_bps;
        let w = wire_of(self.p.tech, Bytes(frame as u64));
        if let (Some(cc), Some((_, d))) = (qp.cc.as_mut(), self.p.dcqcn.as_ref()) {
            cc.on_sent(w.0, d);
            qp.last_tx = now;
            qp.last_wire = w.0 as u32;
            qp.next_tx = paced_next_tx(now, w.0 as u32, cc.rate_bps(), line);
        } else if let Some(cc) = self.p.ib.as_ref().and_then(|i| i.cc.as_ref()) {
            let t = serialization(w, units::BitRate(line)).ps();
            let gap = qp.cca.gap_ps(cc, t);
            qp.next_tx = if gap == 0 { 0 } else { now + t + gap };
        }
        if !qp.rto_pending {
            qp.rto_pending = true;
            qp.rto_deadline = now + self.p.rto.ps();
            self.q.schedule(SimTime(qp.rto_deadline), Ev::Rto(qpi));
        } else if qp.rto_deadline == NEVER {
            qp.rto_deadline = now + self.p.rto.ps();
        }
        let (src, tc) = (qp.src, qp.tc);
        let ecn_capable = self.p.dcqcn.is_some() || self.p.ecn[tc as usize].is_some() || self.p.ib.as_ref().is_some_and(|i| i.cc.is_some());
        let st = &mut self.stats.nics[src as usize];
        st.tx_data_pkts += 1;
        st.tx_payload += payload as u64;
        if retx {
            st.retx_bytes += payload as u64;
        }
        let flags = if ecn_capable { ECN_CAPABLE } else { 0 } | if first { FIRST } else { 0 } | if last { LAST } else { 0 };
        self.alloc(Packet {
            kind: Kind::Data,
            tc,
            in_pg: 0,
            flags,
            frame: frame as u16,
            payload: payload as u16,
            qp: qpi,
            psn,
            in_port: NONE,
            next: NONE,
            t: 0,
        })
    }

    fn nic_tx_ctrl(&mut self, now: u64, ep: u32, pk: Packet) {
        let port = self.nics[ep as usize].port;
        let id = self.alloc(pk);
        let (pi, tc) = (port as usize, pk.tc as usize);
        self.push_q(pi, tc, id);
        self.cls[pi * 8 + tc].qbytes += pk.frame as u64;
        self.try_tx(now, port);
    }

    fn nic_rx(&mut self, now: u64, ep: u32, id: u32) {
        let pk = self.pkts[id as usize];
        self.free_pkt(id);
        debug_assert_eq!(self.addr(&pk).1, ep);
        match pk.kind {
            Kind::Data => self.responder(now, pk),
            Kind::Ack | Kind::Nak => self.requester_ack(now, pk),
            Kind::Cnp => {
                self.stats.nics[ep as usize].cnp_rx += 1;
                let qpi = pk.qp;
                if let Some(cc) = self.p.ib.as_ref().and_then(|i| i.cc.as_ref()) {
                    let cca = &mut self.qps[qpi as usize].cca;
                    if cca.on_becn(cc) {
                        let gen = cca.gen;
                        let t = cc.ccti_timer;
                        self.q.schedule(SimTime(now) + t, Ev::CctiTimer { qp: qpi, gen });
                    }
                }
                self.dcqcn_cnp(now, qpi);
            }
            Kind::Pfc | Kind::Fcp => unreachable!("link frames are consumed on arrival"),
        }
    }

    /// DCQCN reaction point: a CNP (or a CNP-flagged ACK) reached QP `qpi`'s requester.
    fn dcqcn_cnp(&mut self, now: u64, qpi: u32) {
        let Some((_, d)) = self.p.dcqcn.as_ref() else { return };
        let d = *d;
        if let Some(cc) = self.qps[qpi as usize].cc.as_mut() {
            let arm = cc.on_cnp(now, &d);
            self.dcqcn_arm(now, qpi, arm);
        }
    }

    /// Carries out what the DCQCN state machine of QP `qpi` asked for.
    fn dcqcn_arm(&mut self, now: u64, qpi: u32, arm: crate::dcqcn::Arm) {
        if let Some(t) = arm.rate_timer {
            // The timer restarts from each cut; older events are stale.
            let q = &mut self.qps[qpi as usize];
            q.rate_gen += 1;
            let gen = q.rate_gen;
            self.q.schedule(SimTime(now) + t, Ev::RateTimer { qp: qpi, gen });
        }
        if let Some(at) = arm.cut_at {
            self.q.schedule(SimTime(at), Ev::RateCut(qpi));
        }
        if arm.rate_changed {
            self.dcqcn_rate_changed(now, qpi);
        }
    }

    /// QP `qpi`'s DCQCN rate changed: under `retime`, its pending send moves to the last
    /// frame's start plus that frame at the new rate (the rate limiter's gap, recomputed),
    /// and the NIC looks again if that is earlier than the old time. Without `retime`
    /// (ns-3) the gap fixed at the last send stands.
    fn dcqcn_rate_changed(&mut self, now: u64, qpi: u32) {
        let Some((_, d)) = self.p.dcqcn.as_ref() else { return };
        if !d.retime {
            return;
        }
        let qp = &mut self.qps[qpi as usize];
        let (Some(cc), true) = (qp.cc.as_ref(), qp.last_tx != NEVER) else { return };
        let line = self.nics[qp.src as usize].line_bps;
        let old = qp.next_tx;
        qp.next_tx = paced_next_tx(qp.last_tx, qp.last_wire, cc.rate_bps(), line);
        if qp.active && qp.next_tx < old {
            let (port, at) = (self.nics[qp.src as usize].port, qp.next_tx.max(now));
            self.kick_at(port, at);
        }
    }

    fn responder(&mut self, now: u64, pk: Packet) {
        let qpi = pk.qp;
        let ack_every = self.p.ack_every;
        // DCQCN: at most one CNP per interval (per QP or per port); IB CC: a BECN for every
        // FECN.
        let (cnp_interval, per_port, ack_flag) = match &self.p.ib {
            Some(i) => (i.cc.as_ref().map(|_| 0), false, false),
            None => match self.p.dcqcn.as_ref() {
                Some((_, d)) => (Some(d.cnp_interval.ps()), d.cnp_scope == CnpScope::Port, d.cnp == CnpTransport::AckFlag),
                None => (None, false, false),
            },
        };
        let cnp_tc = self.p.dscp_to_tc[self.p.cnp_dscp as usize];
        let qp = &mut self.qps[qpi as usize];
        // The responder's HCA maps the SL by its own table (RoCE: the QP's class).
        let tc = match &self.p.ib {
            Some(ibc) => ibc.sl_to_vl_hca.get(&qp.dst).unwrap_or(&ibc.sl_to_vl)[qp.sl as usize],
            None => qp.tc,
        };
        let dst = qp.dst;
        let mut send_cnp = false;
        if pk.has(CE) {
            self.stats.nics[dst as usize].ce_rx += 1;
            if let Some(n) = cnp_interval {
                let last = if per_port { &mut self.nics[dst as usize].last_cnp } else { &mut qp.last_cnp };
                if *last == NEVER || now >= *last + n {
                    *last = now;
                    send_cnp = true;
                }
            }
        }
        let mut reply = None;
        if pk.psn == qp.epsn {
            let l = &mut self.lost[qpi as usize];
            if l.0 != NEVER && pk.psn >= l.1 {
                self.stats.recoveries.push((qpi, l.0, now));
                *l = (NEVER, 0);
            }
            qp.epsn += 1;
            qp.nak_sent = false;
            qp.unacked += 1;
            self.stats.nics[dst as usize].rx_payload += pk.payload as u64;
            if pk.has(LAST) || qp.unacked >= ack_every {
                qp.unacked = 0;
                reply = Some((Kind::Ack, qp.epsn - 1));
            }
            if pk.has(LAST) {
                let f = qp.rx_msgs.pop_front().expect("a last packet ends a posted message");
                self.on_delivered(now, f);
            }
        } else if pk.psn > qp.epsn {
            self.stats.nics[dst as usize].rx_discarded_payload += pk.payload as u64;
            if !qp.nak_sent {
                qp.nak_sent = true;
                reply = Some((Kind::Nak, qp.epsn));
            }
        } else {
            self.stats.nics[dst as usize].rx_discarded_payload += pk.payload as u64;
            reply = Some((Kind::Ack, qp.epsn - 1));
        }
        // ns-3 flags the ACK or NAK this packet triggers; a marked packet that triggers
        // none (ack_every > 1) notifies nothing.
        let flag_reply = ack_flag && send_cnp && reply.is_some();
        if send_cnp && !ack_flag {
            self.stats.nics[dst as usize].cnp_tx += 1;
            let c = self.ctrl_packet(Kind::Cnp, qpi, 0, cnp_tc);
            self.nic_tx_ctrl(now, dst, c);
        }
        if let Some((kind, psn)) = reply {
            if kind == Kind::Nak {
                self.stats.nics[dst as usize].nak_tx += 1;
            }
            let mut a = self.ctrl_packet(kind, qpi, psn, tc);
            if flag_reply {
                self.stats.nics[dst as usize].cnp_tx += 1;
                a.flags |= CNP_FLAG;
            }
            self.nic_tx_ctrl(now, dst, a);
        }
    }

    fn requester_ack(&mut self, now: u64, pk: Packet) {
        let qpi = pk.qp;
        if pk.has(CNP_FLAG) {
            self.stats.nics[self.qps[qpi as usize].src as usize].cnp_rx += 1;
            self.dcqcn_cnp(now, qpi);
        }
        let qp = &mut self.qps[qpi as usize];
        let new_una = match pk.kind {
            Kind::Ack => pk.psn + 1,
            _ => pk.psn,
        };
        if new_una > qp.snd_una {
            qp.snd_una = new_una;
            // A late cumulative ACK may overtake a go-back: never resend acknowledged PSNs.
            qp.snd_nxt = qp.snd_nxt.max(new_una);
            qp.retries = 0;
            qp.rto_deadline = if qp.snd_una < qp.snd_nxt.max(qp.max_sent) { now + self.p.rto.ps() } else { NEVER };
            while let Some(m) = qp.msgs.front() {
                if m.first_psn + m.npkts <= qp.snd_una {
                    let m = qp.msgs.pop_front().expect("front");
                    let rec = &mut self.stats.flows[m.flow as usize];
                    rec.finish = Some(now);
                    debug_assert_eq!(rec.size, m.size);
                    self.remaining -= 1;
                } else {
                    break;
                }
            }
        }
        if pk.kind == Kind::Nak && pk.psn < qp.snd_nxt {
            // Go-back-N from the expected PSN.
            qp.snd_nxt = pk.psn.max(qp.snd_una);
            self.stats.nics[qp.src as usize].nak_rx += 1;
            let ep = qp.src;
            self.activate(ep, qpi);
            let port = self.nics[ep as usize].port;
            self.try_tx(now, port);
        }
    }

    /// Flow `f`'s data is all at its receiver: release the flows waiting for it.
    fn on_delivered(&mut self, now: u64, f: u32) {
        self.stats.flows[f as usize].delivered = Some(now);
        let (a, b) = (self.dep_first[f as usize] as usize, self.dep_first[f as usize + 1] as usize);
        for i in a..b {
            let d = self.dependents[i] as usize;
            self.waiting[d] -= 1;
            if self.waiting[d] == 0 {
                let fl = &self.flows[d];
                let at = (now + fl.delay.ps()).max(fl.start.0);
                self.q.schedule(SimTime(at), Ev::Post(d as u32));
            }
        }
    }

    /// Marks flows failed (their QP went to the error state), and every flow that depends
    /// on them, directly or not: those will never be posted.
    fn fail_flows(&mut self, failed: &[u32]) {
        let mut stack = failed.to_vec();
        while let Some(f) = stack.pop() {
            let rec = &mut self.stats.flows[f as usize];
            if rec.failed {
                continue;
            }
            rec.failed = true;
            self.remaining -= 1;
            let (a, b) = (self.dep_first[f as usize] as usize, self.dep_first[f as usize + 1] as usize);
            stack.extend_from_slice(&self.dependents[a..b]);
        }
    }

    fn on_rto(&mut self, now: u64, qpi: u32) {
        let rto = self.p.rto.ps();
        let retry_cnt = self.p.retry_cnt;
        let qp = &mut self.qps[qpi as usize];
        qp.rto_pending = false;
        if qp.rto_deadline == NEVER || qp.failed {
            return;
        }
        if qp.rto_deadline > now {
            qp.rto_pending = true;
            self.q.schedule(SimTime(qp.rto_deadline), Ev::Rto(qpi));
            return;
        }
        if qp.snd_una >= qp.snd_max {
            qp.rto_deadline = NEVER;
            return;
        }
        qp.retries += 1;
        self.stats.nics[qp.src as usize].timeouts += 1;
        if qp.retries > retry_cnt {
            qp.failed = true;
            qp.rto_deadline = NEVER;
            let failed: Vec<u32> = qp.msgs.drain(..).map(|m| m.flow).collect();
            qp.rx_msgs.clear();
            self.fail_flows(&failed);
            return;
        }
        qp.snd_nxt = qp.snd_una;
        qp.rto_deadline = now + rto;
        qp.rto_pending = true;
        self.q.schedule(SimTime(qp.rto_deadline), Ev::Rto(qpi));
        let ep = qp.src;
        self.activate(ep, qpi);
        let port = self.nics[ep as usize].port;
        self.try_tx(now, port);
    }

    // ---------------------------------------------------------------- deadlock

    /// The deadlock detector, every `deadlock_timeout`: a cycle of blocked queues none of
    /// which has dequeued for that long is a deadlock. It is recorded once; the run stops
    /// there unless something can still break it (a PFC watchdog, IB lifetime discards).
    fn watchdog(&mut self, now: u64) {
        if self.remaining == 0 || self.deadlock_checked {
            return;
        }
        let period = deadlock_period(&self.p);
        if let Some(cycle) = self.find_cycle(now, period) {
            let formed = cycle.iter().map(|&(p, c)| self.cls[p as usize * 8 + c as usize].moved).max().unwrap_or(now);
            let hops = cycle.len();
            self.incident(formed, "deadlock-formed", Some(cycle[0].0), Some(cycle[0].1), format!("last dequeue on a cycle of {hops} blocked queues"));
            self.incident(
                now,
                "deadlock-detected",
                Some(cycle[0].0),
                Some(cycle[0].1),
                format!("no queue of the cycle moved for {} us", (now - formed) / 1_000_000),
            );
            self.stats.deadlock = Some(Deadlock { detected_at_ps: now, formed_at_ps: formed, cycle });
            self.deadlock_checked = true;
            let breakable = self.p.pfc.watchdog.is_some()
                || self.p.ib.as_ref().is_some_and(|i| i.hoq_lifetime.is_some() || i.leaf_hoq_lifetime.is_some() || i.switch_lifetime.is_some());
            if !breakable {
                self.halted = true;
            }
            return;
        }
        self.q.schedule(SimTime(now + period), Ev::Watchdog);
    }

    /// Whether the head of egress queue (`pi`, `tc`) is blocked (paused or without credits).
    fn head_blocked(&self, pi: usize, tc: usize, now: u64) -> bool {
        match self.cls[pi * 8 + tc].head {
            NONE => false,
            h => self.may_send(pi, tc, self.pkts[h as usize].frame as u32, now).is_err(),
        }
    }

    /// A cycle of blocked switch egress queues, each waiting for buffer at the next hop's
    /// input that is held by packets queued behind the next one: the channel dependency
    /// cycle of a deadlock (Dally & Seitz 1987; for PFC, Hu et al., HotNets 2016).
    fn find_cycle(&self, now: u64, stale: u64) -> Option<Vec<(u32, u8)>> {
        use std::collections::BTreeMap;
        // Queues that are blocked and have not moved for `stale`.
        let stuck = |pi: usize, tc: usize| self.head_blocked(pi, tc, now) && now.saturating_sub(self.cls[pi * 8 + tc].moved) >= stale;
        // Edge (u, c) → (q, c): upstream egress u feeds the input whose packets wait at q.
        let mut adj: BTreeMap<(u32, u8), Vec<(u32, u8)>> = BTreeMap::new();
        for (ni, n) in self.topo.nodes.iter().enumerate() {
            if n.kind != NodeKind::Switch {
                continue;
            }
            let _ = ni;
            for q in n.first_port..n.first_port + n.nports {
                for tc in 0..8 {
                    if !stuck(q as usize, tc) {
                        continue;
                    }
                    for id in self.queued(q as usize, tc) {
                        let i = self.pkts[id as usize].in_port;
                        let Some(u) = self.topo.ports[i as usize].peer else { continue };
                        // The class it held upstream: the same priority on RoCE; on IB the
                        // VL it arrived on (SL→VL tables may move it to another VL here).
                        let utc = if self.ib.is_empty() { tc } else { self.pkts[id as usize].in_pg as usize };
                        if self.topo.is_switch(self.topo.ports[u.0 as usize].node) && stuck(u.0 as usize, utc) {
                            let e = adj.entry((u.0, utc as u8)).or_default();
                            if !e.contains(&(q, tc as u8)) {
                                e.push((q, tc as u8));
                            }
                        }
                    }
                }
            }
        }
        // Iterative DFS with colours; a grey successor closes a cycle.
        let mut colour: BTreeMap<(u32, u8), u8> = BTreeMap::new();
        for &start in adj.keys() {
            if colour.contains_key(&start) {
                continue;
            }
            let mut stack: Vec<((u32, u8), usize)> = vec![(start, 0)];
            colour.insert(start, 1);
            while let Some(&mut (v, ref mut i)) = stack.last_mut() {
                let succ = adj.get(&v).map(|s| s.as_slice()).unwrap_or(&[]);
                if *i < succ.len() {
                    let w = succ[*i];
                    *i += 1;
                    match colour.get(&w) {
                        None => {
                            colour.insert(w, 1);
                            stack.push((w, 0));
                        }
                        Some(1) => {
                            let from = stack.iter().position(|&(x, _)| x == w).expect("grey is on the stack");
                            return Some(stack[from..].iter().map(|&(x, _)| x).collect());
                        }
                        _ => {}
                    }
                } else {
                    colour.insert(v, 2);
                    stack.pop();
                }
            }
        }
        None
    }

    // ---------------------------------------------------------------- stats

    fn sample(&mut self, now: u64) {
        let ports: Vec<u64> = self.ports.iter().map(|p| p.qtotal).collect();
        let rates: Vec<u64> = self.qps.iter().map(|q| q.cc.as_ref().map(|c| c.rate_bps()).unwrap_or(0)).collect();
        // RoCE: priorities paused; IB: VLs whose head waits for credits.
        let paused: Vec<u8> = (0..self.ports.len())
            .map(|pi| {
                (0..8).fold(0u8, |m, tc| {
                    let b = if self.ib.is_empty() { self.paused(pi, tc, now) } else { self.head_blocked(pi, tc, now) };
                    if b {
                        m | 1 << tc
                    } else {
                        m
                    }
                })
            })
            .collect();
        self.stats.samples.push(crate::stats::Sample { t: now, queue: ports, qp_rate: rates, paused });
    }

    fn finish(&mut self, end: u64) {
        for pi in 0..self.ib.len() {
            let st = &mut self.ib[pi];
            if st.wait_from != NEVER && st.wait_from < end {
                self.stats.ports[pi].xmit_wait_ps += end - st.wait_from;
                st.wait_from = end;
            }
        }
        for pi in 0..self.ports.len() {
            self.account_queue(end, pi);
            for p in 0..8 {
                let c = &self.cls[pi * 8 + p];
                let (from, until) = (c.pause_from, c.pause_until);
                if from < until && from < end {
                    self.stats.ports[pi].paused_ps[p] += until.min(end) - from;
                }
            }
        }
        for (i, n) in self.topo.nodes.iter().enumerate() {
            if n.kind == NodeKind::Switch {
                self.stats.switch_peak_cells.push((i as u32, self.mmus[i].peak_used));
            }
        }
        for pi in 0..self.ports.len() {
            for pg in 0..8 {
                let s = self.pgs[self.pg_index(pi as u32, pg as u8)];
                let st = &mut self.stats.ports[pi];
                st.peak_headroom_cells = st.peak_headroom_cells.max(s.peak_hdrm);
                st.peak_pg_cells = st.peak_pg_cells.max(s.peak_total);
            }
        }
        for pi in 0..self.ports.len() {
            for p in 0..8 {
                let c = &self.cls[pi * 8 + p];
                if c.pause_from <= end && end < c.pause_until {
                    self.stats.paused_at_end.push((pi as u32, p as u8));
                }
            }
        }
        self.stats.unrecovered = self.lost.iter().enumerate().filter(|(_, l)| l.0 != NEVER).map(|(q, l)| (q as u32, l.0)).collect();
        let in_flight: u64 = (0..self.ports.len()).map(|pi| self.on_link(pi).count() as u64).sum();
        self.stats.end = end;
        self.stats.events = self.q.popped();
        self.stats.frames_in_flight_at_end = in_flight;
        self.stats.buffer_cells_at_end = self.mmus.iter().map(|m| m.used).sum();
        for pi in 0..self.ports.len() {
            self.stats.ports[pi].headroom_cap_cells = self.headroom_of(PortId(pi as u32));
        }
        self.stats.flow_paths = (0..self.flow_qp.len() as u32).map(|f| self.flow_path(f)).collect();
    }

    /// The egress ports flow `flow`'s data packets leave by, from its NIC to the last switch,
    /// under the forwarding state now; `None` for a SHARP join, or if the route is broken
    /// or loops.
    fn flow_path(&self, flow: u32) -> Option<Vec<PortId>> {
        if self.flow_qp[flow as usize] == NONE {
            return None;
        }
        let t = &self.topo;
        let mut path = vec![];
        let mut port = t.ep_port(self.stats.flows[flow as usize].src);
        loop {
            path.push(port);
            let node = t.port(t.port(port).peer?).node;
            if !t.is_switch(node) || path.len() > 64 {
                return (!t.is_switch(node)).then_some(path);
            }
            port = self.route(node, flow)?;
        }
    }

    /// Checks the accounting invariants: per-PG counters add up to the pool counters.
    /// Used by tests after every event via [`Sim::step`].
    pub fn check_invariants(&self) -> Result<(), String> {
        for (ni, n) in self.topo.nodes.iter().enumerate() {
            if n.kind != NodeKind::Switch {
                continue;
            }
            let (mut used, mut shared, mut hdrm) = (0, 0, 0);
            let mut queued_cells = 0u64;
            for pi in n.first_port..n.first_port + n.nports {
                for pg in 0..8 {
                    let s = self.pgs[self.pg_index(pi, pg as u8)];
                    used += s.resv + s.shared + s.hdrm;
                    shared += s.shared;
                    hdrm += s.hdrm;
                    if s.hdrm > self.hdrm_cap[self.pg_index(pi, pg as u8)] {
                        return Err(format!("headroom over its cap at port {pi} pg {pg}"));
                    }
                }
                for tc in 0..8 {
                    queued_cells += self.queued(pi as usize, tc).map(|id| self.cells_of(&self.pkts[id as usize])).sum::<u64>();
                }
            }
            let m = &self.mmus[ni];
            if used != m.used || shared != m.shared_used || queued_cells != m.used {
                return Err(format!("switch {}: PG cells {used} / pool {}, shared {shared} / {}, queued {queued_cells}", n.name, m.used, m.shared_used));
            }
            if self.p.buffer.shared_headroom_pool.is_some() && hdrm != m.hdrm_pool_used {
                return Err(format!("switch {}: headroom pool mismatch", n.name));
            }
        }
        self.check_credits()?;
        self.check_payload()
    }

    /// IB credits (IBTA Vol. 1 §7.9): per VL, a sender's credits are within [0, 2048]; its
    /// credits plus the blocks on the wire towards the receiver never exceed the
    /// receiver's free blocks (so no packet can overrun); a switch input buffer's used
    /// blocks equal those of the packets it holds.
    fn check_credits(&self) -> Result<(), String> {
        let Some(ibc) = &self.p.ib else { return Ok(()) };
        let mut held = vec![0u64; self.ports.len() * 8];
        for pi in 0..self.ports.len() {
            for tc in 0..8 {
                for id in self.queued(pi, tc) {
                    let pk = &self.pkts[id as usize];
                    if pk.in_port != NONE {
                        held[pk.in_port as usize * 8 + pk.in_pg as usize] += ib::blocks(Bytes(pk.frame as u64)) as u64;
                    }
                }
            }
        }
        for (pi, pt) in self.topo.ports.iter().enumerate() {
            let Some(peer) = pt.peer else { continue };
            let rx = peer.0 as usize;
            for vl in 0..ibc.data_vls as usize {
                let tx = &self.ib[pi];
                let credits = (tx.fccl[vl] as u32 + ib::CREDIT_MODULUS - tx.fctbs[vl] as u32) % ib::CREDIT_MODULUS;
                if credits > ib::MAX_CREDITS {
                    return Err(format!("port {pi} vl {vl}: {credits} credits outstanding, above 2048"));
                }
                let on_wire: u64 = self
                    .on_link(pi)
                    .map(|id| &self.pkts[id as usize])
                    .filter(|pk| pk.is_pkt() && pk.tc as usize == vl)
                    .map(|pk| ib::blocks(Bytes(pk.frame as u64)) as u64)
                    .sum();
                let free = self.ib[rx].free[vl] as u64;
                if credits as u64 + on_wire > free {
                    return Err(format!("port {pi} vl {vl}: {credits} credits + {on_wire} blocks on the wire > {free} free at the peer"));
                }
                if self.topo.is_switch(self.topo.ports[rx].node) && ibc.vl_buffer_blocks as u64 - free != held[rx * 8 + vl] {
                    return Err(format!("port {rx} vl {vl}: {} blocks used, packets hold {}", ibc.vl_buffer_blocks as u64 - free, held[rx * 8 + vl]));
                }
            }
        }
        Ok(())
    }

    /// Payload conservation: every payload byte a NIC transmitted (retransmissions
    /// included) was delivered in order, discarded by the responder as out of order or
    /// duplicate, dropped in the fabric, or is still on a link or in a switch queue.
    fn check_payload(&self) -> Result<(), String> {
        let tx: u64 = self.stats.nics.iter().map(|n| n.tx_payload).sum();
        let rx: u64 = self.stats.nics.iter().map(|n| n.rx_payload + n.rx_discarded_payload).sum();
        let mut in_flight = 0u64;
        for pi in 0..self.ports.len() {
            in_flight += self.on_link(pi).map(|id| &self.pkts[id as usize]).filter(|pk| pk.is_pkt()).map(|pk| pk.payload as u64).sum::<u64>();
            for tc in 0..8 {
                in_flight += self.queued(pi, tc).map(|id| self.pkts[id as usize].payload as u64).sum::<u64>();
            }
        }
        for r in &self.rx {
            in_flight += r.backlog.iter().map(|&id| self.pkts[id as usize].payload as u64).sum::<u64>();
        }
        if tx != rx + self.stats.dropped_payload + in_flight {
            return Err(format!("payload: sent {tx} != received {rx} + dropped {} + in flight {in_flight}", self.stats.dropped_payload));
        }
        Ok(())
    }

    /// Runs one event; `false` when the run is over. For invariant tests.
    pub fn step(&mut self) -> bool {
        let Some(t) = self.q.peek_time() else { return false };
        if self.stop.is_some_and(|s| t > s) || (self.remaining == 0 && self.stop.is_none()) {
            return false;
        }
        let (now, ev) = self.q.pop().expect("peeked");
        self.dispatch(now.0, ev);
        true
    }

    /// Payload bytes posted, delivered in order to responders, and dropped so far.
    pub fn payload_accounting(&self) -> (u64, u64, u64) {
        let delivered = self.stats.nics.iter().map(|n| n.rx_payload).sum();
        let sent: u64 = self.qps.iter().map(|q| q.msgs.iter().map(|m| m.size).sum::<u64>()).sum();
        (sent, delivered, self.stats.dropped_payload)
    }

    /// Finalises statistics after [`Sim::step`]-driven runs.
    pub fn finish_now(&mut self) {
        let end = self.q.now().0;
        self.finish(end);
    }

    /// The output port a switch picks for the packets of flow `flow`.
    pub fn route(&self, sw: NodeId, flow: u32) -> Option<PortId> {
        let qi = self.flow_qp[flow as usize];
        let q = &self.qps[qi as usize];
        self.forward(sw, qi, true, q.src, q.dst, q.sport)
    }

    /// Pins the port switch `sw` sends flow `flow`'s data packets (`data`) or its ACKs, NAKs
    /// and CNPs (`!data`) out of, whatever ECMP would pick: to replay another simulator's
    /// paths (the ns-3 cross-check). Call before running; a flow sharing a QP shares its pins.
    pub fn pin_route(&mut self, flow: u32, sw: NodeId, port: PortId, data: bool) {
        assert!(self.topo.is_switch(sw) && self.topo.port(port).node == sw, "pin_route: {port:?} is not a port of switch {sw:?}");
        self.pinned.insert((sw.0, self.flow_qp[flow as usize], data), port);
    }

    // ---------------------------------------------------------------- faults

    fn on_fault(&mut self, now: u64, i: u32) {
        let f = self.faults[i as usize].clone();
        let ev = if f.ends { "fault-ended" } else { "fault" };
        self.incident(now, ev, None, None, f.label.clone());
        match f.kind {
            FaultKind::Links { ports, up } => self.links_change(now, &ports, up),
            FaultKind::NicRx { ep, rx } => self.set_nic_rx(now, ep, rx),
            FaultKind::PortPfc { port, enabled } => {
                let pi = port.0 as usize;
                self.pfc_off[pi] = !enabled;
                if !enabled {
                    // The port forgets any pause it was obeying and stops pausing its peer.
                    for tc in 0..8 {
                        let c = &mut self.cls[pi * 8 + tc];
                        if c.pause_from < c.pause_until && c.pause_until > now {
                            self.stats.ports[pi].paused_ps[tc] += now.saturating_sub(c.pause_from);
                            c.pause_until = now;
                            c.pause_from = now;
                        }
                    }
                    for pg in 0..8u8 {
                        let gi = self.pg_index(port.0, pg);
                        if self.pgs[gi].paused {
                            self.pgs[gi].paused = false;
                            self.pgs[gi].gen += 1;
                        }
                    }
                }
                self.try_tx(now, port.0);
            }
            FaultKind::PortHeadroom { port, cells } => {
                for pg in lossless_pgs(self.lossless_pg_mask) {
                    let gi = self.pg_index(port.0, pg);
                    self.hdrm_cap[gi] = cells;
                }
            }
            FaultKind::PortDscpMap { port, map } => {
                self.port_dscp[port.0 as usize] = map;
                self.port_dscp_any = self.port_dscp.iter().any(Option::is_some);
            }
            FaultKind::RouteOverride { node, dst, port } => match port {
                Some(p) => {
                    self.route_override.insert((node.0, dst), p);
                }
                None => {
                    self.route_override.remove(&(node.0, dst));
                }
            },
            FaultKind::SmFailure { standby } => {
                if let Some(mut cp) = self.control.take() {
                    if let Some(t) = cp.on_sm_failure(SimTime(now), standby) {
                        self.incident(t.0, "sm-takeover", None, None, "the standby subnet manager becomes master".into());
                    }
                    self.control = Some(cp);
                }
            }
        }
    }

    /// Links of `ports` go down or come back (both directions): what waits at a dead
    /// egress is discarded; on RoCEv2 the switches next to a dead link drop it from their
    /// ECMP groups at once; the control plane re-routes after its delay.
    fn links_change(&mut self, now: u64, ports: &[PortId], up: bool) {
        for &port in ports {
            self.set_link(port, up);
        }
        for &port in ports {
            let ends = [Some(port), self.topo.ports[port.0 as usize].peer];
            for p in ends.into_iter().flatten() {
                let pi = p.0 as usize;
                if up {
                    if !self.ib.is_empty() {
                        // Link (re)training exchanges FCPs: the sender resynchronises to what
                        // the peer has received and has free (IBTA Vol. 1 §7.9.4).
                        let peer = self.topo.ports[pi].peer.expect("cabled").0 as usize;
                        for vl in 0..8 {
                            let (abr, free) = (self.ib[peer].abr[vl], self.ib[peer].free[vl]);
                            self.ib[pi].fctbs[vl] = abr;
                            self.ib[pi].fccl[vl] = ib::fccl(abr, free);
                        }
                    }
                    self.try_tx(now, p.0);
                } else {
                    // Whatever waits at a dead egress is discarded (PortXmitDiscards).
                    for tc in 0..8 {
                        while self.cls[pi * 8 + tc].head != NONE {
                            let id = if self.ports[pi].flags & P_SWITCH != 0 {
                                self.dequeue(now, p.0, tc)
                            } else {
                                let id = self.pop_q(pi, tc);
                                self.cls[pi * 8 + tc].qbytes -= self.pkts[id as usize].frame as u64;
                                id
                            };
                            self.drop_pkt(p.0, id, DropCause::PortDown);
                        }
                    }
                    // A switch that lost every link (a dead switch) repairs nothing.
                    let node = self.topo.node(self.topo.ports[pi].node);
                    let alive =
                        (node.first_port..node.first_port + node.nports).any(|q| self.link_up[q as usize] && self.topo.ports[q as usize].peer.is_some());
                    if let Forwarder::Ecmp(r) = &mut self.fwd {
                        if alive && self.ports[pi].flags & P_SWITCH != 0 && r.prune(&self.topo, p) {
                            let name = self.topo.node(self.topo.ports[pi].node).name.clone();
                            self.incident(now, "local-repair", Some(p.0), None, format!("{name} removes the dead link from its ECMP groups"));
                        }
                    }
                }
            }
        }
        if let Some(mut cp) = self.control.take() {
            let re = cp.on_link_change(SimTime(now), &self.topo, &self.link_up);
            self.control = Some(cp);
            self.fwd_gen += 1;
            self.stats.reroute_steps.push((now, re.steps));
            match re.delay {
                Some(d) => {
                    self.pending_fwd = Some(re.fwd);
                    self.q.schedule(SimTime(now) + d, Ev::Install { gen: self.fwd_gen });
                }
                None => {
                    self.pending_fwd = None;
                    self.incident(now, "no-reroute", None, None, "no subnet manager is master: the forwarding tables stay as they are".into());
                }
            }
        }
    }

    /// Impairs (or heals) the receive side of endpoint `ep`'s NIC.
    fn set_nic_rx(&mut self, now: u64, ep: u32, rx: Option<RxFault>) {
        let e = ep as usize;
        self.rx[e].fault = rx;
        self.rx[e].gen += 1;
        self.rx[e].draining = false;
        match rx {
            Some(f) if f.drain_bps == 0 => self.nic_pause(now, ep, true),
            Some(_) => {
                if !self.rx[e].backlog.is_empty() {
                    self.schedule_drain(now, ep);
                }
            }
            None => {
                // Healthy again: it absorbs its backlog at once and releases the pause.
                let backlog: Vec<u32> = self.rx[e].backlog.drain(..).collect();
                self.rx[e].bytes = 0;
                self.nic_pause(now, ep, false);
                for id in backlog {
                    self.hca_release(now, ep, id);
                    self.nic_rx(now, ep, id);
                }
            }
        }
    }

    /// A packet reaches an impaired NIC receiver: held in its backlog, or dropped when the
    /// receiver is stuck or its buffer full; crossing XOFF pauses the switch.
    fn impaired_rx(&mut self, now: u64, ep: u32, port: u32, id: u32) {
        let e = ep as usize;
        let f = self.rx[e].fault.expect("impaired");
        let frame = self.pkts[id as usize].frame as u64;
        if !self.ib.is_empty() {
            // InfiniBand: the HCA moves the packet into its receive buffer (`buffer` bytes
            // beyond the port's VL buffer) and returns its credits; once that is full it
            // holds packets in the VL buffer and returns no credits until it absorbs them.
            // Credits bound the backlog: nothing is dropped.
            self.rx[e].backlog.push_back(id);
            self.rx[e].bytes += frame;
            if self.rx[e].bytes <= f.buffer {
                self.hca_release(now, ep, id);
                self.pkts[id as usize].flags |= CREDITED;
            }
            if f.drain_bps > 0 && !self.rx[e].draining {
                self.schedule_drain(now, ep);
            }
            return;
        }
        if f.drain_bps == 0 {
            self.drop_pkt(port, id, DropCause::ReceiverStuck);
            return;
        }
        if self.rx[e].bytes + frame > f.buffer {
            self.drop_pkt(port, id, DropCause::ReceiverOverflow);
            return;
        }
        self.rx[e].backlog.push_back(id);
        self.rx[e].bytes += frame;
        if self.rx[e].bytes >= f.xoff {
            self.nic_pause(now, ep, true);
        }
        if !self.rx[e].draining {
            self.schedule_drain(now, ep);
        }
    }

    fn schedule_drain(&mut self, now: u64, ep: u32) {
        let e = ep as usize;
        let f = self.rx[e].fault.expect("impaired");
        let head = *self.rx[e].backlog.front().expect("backlog");
        let t = serialization(Bytes(self.pkts[head as usize].frame as u64), BitRate(f.drain_bps)).ps();
        self.rx[e].draining = true;
        let gen = self.rx[e].gen;
        self.q.schedule(SimTime(now + t), Ev::NicDrain { ep, gen });
    }

    fn on_nic_drain(&mut self, now: u64, ep: u32, gen: u32) {
        let e = ep as usize;
        if self.rx[e].gen != gen || !self.rx[e].draining {
            return;
        }
        self.rx[e].draining = false;
        let Some(id) = self.rx[e].backlog.pop_front() else { return };
        self.rx[e].bytes -= self.pkts[id as usize].frame as u64;
        self.hca_release(now, ep, id);
        let f = self.rx[e].fault.expect("impaired");
        if self.rx[e].bytes <= f.xon {
            self.nic_pause(now, ep, false);
        }
        self.nic_rx(now, ep, id);
        if !self.rx[e].backlog.is_empty() {
            self.schedule_drain(now, ep);
        }
    }

    /// InfiniBand: an impaired HCA returns a held packet's credits (once).
    fn hca_release(&mut self, now: u64, ep: u32, id: u32) {
        if !self.ib.is_empty() && !self.pkts[id as usize].has(CREDITED) {
            let pk = self.pkts[id as usize];
            self.ib_release(now, self.nics[ep as usize].port, pk.tc, pk.frame as u32);
        }
    }

    /// A NIC asserts (or releases) pause on every lossless priority towards its switch
    /// (RoCEv2; an InfiniBand HCA withholds credits instead).
    fn nic_pause(&mut self, now: u64, ep: u32, on: bool) {
        if !self.ib.is_empty() {
            return;
        }
        let port = self.nics[ep as usize].port;
        for pg in lossless_pgs(self.lossless_pg_mask) {
            let gi = self.pg_index(port, pg);
            if self.pgs[gi].paused == on {
                continue;
            }
            self.pgs[gi].paused = on;
            self.pgs[gi].gen += 1;
            let gen = self.pgs[gi].gen;
            if on {
                self.queue_pfc(now, port, pg, self.p.pfc.quanta);
                self.schedule_refresh(now, port, pg, gen);
            } else {
                self.queue_pfc(now, port, pg, 0);
            }
        }
    }

    /// PFC watchdog: declares a storm on (`port`, `tc`) if it has been paused without a
    /// break for the detection time, and mitigates it.
    fn on_wd_check(&mut self, now: u64, port: u32, tc: u8) {
        let w = self.p.pfc.watchdog.expect("watchdog");
        let (pi, t) = (port as usize, tc as usize);
        let q = pi * 8 + t;
        self.wd[q].armed = false;
        if self.wd[q].storm || !self.paused(pi, t, now) {
            return;
        }
        let since = self.cls[q].pause_from;
        if now < since + w.detection.ps() {
            self.wd[q].armed = true;
            self.q.schedule(SimTime(since + w.detection.ps()), Ev::WdCheck { port, tc });
            return;
        }
        // Storm: the queue stops obeying pause frames.
        self.stats.ports[pi].paused_ps[t] += now - since;
        let c = &mut self.cls[q];
        c.pause_from = now;
        c.pause_until = now;
        self.wd[q].storm = true;
        self.wd[q].storm_idx = self.stats.storms.len() as u32;
        self.storms_active += 1;
        self.stats.storms.push(crate::stats::Storm {
            port,
            priority: tc,
            paused_from_ps: since,
            detected_ps: now,
            restored_ps: None,
            dropped_pkts: 0,
            dropped_bytes: 0,
        });
        let action = w.action;
        let verb = if action == crate::params::WatchdogAction::Drop { "drop" } else { "forward" };
        self.incident(now, "watchdog-fired", Some(port), Some(tc), format!("paused for {} us without a break: action {verb}", (now - since) / 1_000_000));
        if action == crate::params::WatchdogAction::Drop {
            while self.cls[q].head != NONE {
                let id = self.dequeue(now, port, t);
                let st = &mut self.stats.storms[self.wd[q].storm_idx as usize];
                st.dropped_pkts += 1;
                st.dropped_bytes += self.pkts[id as usize].frame as u64;
                self.drop_pkt(port, id, DropCause::PfcWatchdog);
            }
            // The drop action also stops pausing that neighbour on this priority.
            let pg = self.p.tc_to_pg[t];
            let gi = self.pg_index(port, pg);
            if self.pgs[gi].paused && self.pgs[gi].hdrm == 0 {
                self.pgs[gi].paused = false;
                self.pgs[gi].gen += 1;
                self.queue_pfc(now, port, pg, 0);
            }
        }
        let at = self.wd[q].last_pfc.max(now) + w.restoration.ps();
        self.q.schedule(SimTime(at), Ev::WdRestore { port, tc });
        self.try_tx(now, port);
    }

    /// PFC watchdog: restores (`port`, `tc`) once no pause frame has arrived on it for the
    /// restoration time.
    fn on_wd_restore(&mut self, now: u64, port: u32, tc: u8) {
        let w = self.p.pfc.watchdog.expect("watchdog");
        let q = port as usize * 8 + tc as usize;
        if !self.wd[q].storm {
            return;
        }
        let at = self.wd[q].last_pfc + w.restoration.ps();
        if now < at {
            self.q.schedule(SimTime(at), Ev::WdRestore { port, tc });
            return;
        }
        self.wd[q].storm = false;
        self.storms_active -= 1;
        let st = &mut self.stats.storms[self.wd[q].storm_idx as usize];
        st.restored_ps = Some(now);
        let dropped = st.dropped_pkts;
        self.incident(
            now,
            "watchdog-restored",
            Some(port),
            Some(tc),
            format!("no pause frame for the restoration time; {dropped} packets dropped in the storm"),
        );
        self.try_tx(now, port);
    }

    /// Adds an entry to the incident timeline.
    fn incident(&mut self, t: u64, event: &'static str, port: Option<u32>, class: Option<u8>, detail: String) {
        self.stats.timeline.push(crate::stats::Incident { t_ps: t, event, port, class, detail });
    }

    /// Replaces the forwarding state while the simulation runs (a re-sweep, re-routing).
    pub fn set_forwarder(&mut self, fwd: Forwarder) {
        self.fwd = fwd;
    }

    /// Takes the link at `port` (both directions) down or up. Packets later forwarded to a
    /// down port are discarded; routing does not change until [`Sim::set_forwarder`].
    pub fn set_link(&mut self, port: PortId, up: bool) {
        self.link_up[port.0 as usize] = up;
        if let Some(peer) = self.topo.ports[port.0 as usize].peer {
            self.link_up[peer.0 as usize] = up;
        }
    }

    /// Which technology this simulator runs.
    pub fn tech(&self) -> Tech {
        self.p.tech
    }

    /// Headroom cap of each port (cells), for reporting.
    pub fn headroom_of(&self, port: PortId) -> u64 {
        (0..8).map(|pg| self.hdrm_cap[self.pg_index(port.0, pg)]).max().unwrap_or(0)
    }
}
