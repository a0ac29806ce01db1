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

mod control_plane;
mod deadlock;
mod ecn;
mod event;
mod faults;
mod flows;
mod forward;
mod ib;
mod invariants;
mod link;
mod mmu;
mod nic;
mod observe;
mod packet;
mod pfc;
mod pfc_watchdog;
mod sched;

use std::collections::VecDeque;
use engine::{EventQueue, Rng};
use model::frame::{segments, Transport, PFC_FRAME};
use units::{serialization, BitRate, Bytes, SimDuration, SimTime};
use crate::dcqcn::{paced_next_tx, Dcqcn};
use crate::params::{EcnMarking, FlowSpec, Params, Resume, Sched, Tech, Trigger};
use crate::routing::{Lft, Routes};
use crate::stats::{Deadlock, DropCause, FlowRecord, Stats};
use crate::timing::{frame_of, wire_of, Hop};
use crate::topology::{NodeId, NodeKind, PortId, Topology};
use model::dcqcn::{CnpScope, CnpTransport};

pub use control_plane::{ControlPlane, EcmpControl, Reaction};
pub use faults::{Fault, FaultKind};
pub use forward::Forwarder;
pub use nic::impaired_rx::RxFault;

use deadlock::*;
use event::*;
use forward::*;
use ib::credits::*;
use link::*;
use mmu::*;
use nic::impaired_rx::*;
use nic::*;
use packet::*;
use pfc_watchdog::*;
use sched::*;

const NONE: u32 = u32::MAX;

const NEVER: u64 = u64::MAX;

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
            let first = model::ib::fccl(0, ibc.vl_buffer_blocks);
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

    /// Which technology this simulator runs.
    pub fn tech(&self) -> Tech {
        self.p.tech
    }
}
