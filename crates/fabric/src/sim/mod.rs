//! The packet-level simulation of both fabrics: links, switches, NICs/HCAs running the RC
//! transport. RoCEv2: a shared-buffer MMU with PFC, ECN marking, DCQCN. InfiniBand:
//! credit-based link-level flow control per virtual lane, subnet-manager forwarding tables,
//! lifetime discards, optionally IB congestion control.
//!
//! [`Sim`] owns the event loop and the arrays every mechanism shares: ports
//! (`link::PortState`, a 128-byte aligned pair of cache lines each), egress queues (`sched::ClassQ`, one
//! cache line each), the packet slab (`packet::Packets`, 32-byte packets), the event
//! queue and the statistics. Each mechanism is one file that owns a sub-state whose
//! fields are private to it (`pub(super)` at most):
//!
//! | file | mechanism | owns |
//! |---|---|---|
//! | `event.rs` | what can happen, packed for the heap | `Events` |
//! | `packet.rs` | packets, the slab, drops | `Packets` |
//! | `link.rs` | serialise, propagate, arrive, pick the next frame; links up/down | `Links` |
//! | `sched.rs` | class queues, may-send gate, strict priority + DRR | `Scheduler` |
//! | `forward.rs` | next hop; a switch's receive path as named steps | `Forwarding` |
//! | `load_balance.rs` | RoCEv2 flowlet, packet spraying, adaptive choice of ECMP member | `LoadBalancer` |
//! | `mmu.rs` | cells, dynamic threshold, headroom, XOFF/XON decision | `Mmu` |
//! | `pfc.rs` | PFC frames sent and obeyed | `PfcState` |
//! | `ecn.rs` | RED marking at egress | `EcnMarker` |
//! | `ib/credits.rs`, `ib/vl.rs`, `ib/cc.rs` | IB credits; VLs, lifetimes, VL stall; FECN | `Option<IbState>` |
//! | `nic/requester.rs`, `nic/responder.rs`, `nic/dcqcn.rs` | the RC transport, DCQCN reaction point | `Hosts` |
//! | `nic/impaired_rx.rs` | stuck and slow receivers | `ImpairedRx` |
//! | `flows.rs` | flow dependencies (generated as the run goes), delivery, failure | `Flows` |
//! | `faults.rs`, `control_plane.rs` | scenario faults; re-routing after them | `Faults`, `Control` |
//! | `pfc_watchdog.rs` | SONiC's PFC watchdog | `PfcWatchdog` |
//! | `deadlock.rs` | the deadlock detector | `DeadlockDetector` |
//! | `observe.rs` | samples, the incident timeline, end-of-run accounting | `Observer` |
//! | `capture.rs` | the capture tap: frames on watched ports, for pcap files | `Option<Capture>` |
//! | `footprint.rs` | the memory a simulator of a given shape will hold, before it is built | — |
//! | `watch.rs` | progress and cancel, seen from outside the run | — |
//! | `invariants.rs` | accounting invariants the tests check | — |
//!
//! How a packet flows through these files is drawn in `docs/architecture.md`. Each file's
//! doc states its model and what it leaves out.

mod capture;
mod control_plane;
mod deadlock;
mod ecn;
mod event;
mod faults;
mod flows;
mod footprint;
mod forward;
mod ib;
mod invariants;
mod link;
mod load_balance;
mod mmu;
mod nic;
mod observe;
mod packet;
mod pfc;
mod pfc_watchdog;
mod prefetch;
mod sched;
mod watch;

use crate::dcqcn::{paced_next_tx, Dcqcn};
use crate::lft::Lft;
use crate::params::{EcnMarking, FlowPart, FlowSource, FlowSpec, Params, Resume, Sched, Tech, Trigger};
use crate::routing::Routes;
use crate::stats::{Deadlock, DropCause, FlowRecord, IncidentKind, Stats};
use crate::subnet_manager::ar::ArTable;
use crate::timing::{frame_of, wire_of, Hop};
use crate::topology::{NodeId, NodeKind, PortId, Topology};
use engine::{EventQueue, Rng};
use model::dcqcn::{CnpScope, CnpTransport};
use model::frame::{segments, Transport, PFC_FRAME};
use std::collections::VecDeque;
use units::{serialization, BitRate, Bytes, SimDuration, SimTime};

pub use capture::{endpoint_ip, endpoint_mac, port_mac, qpn, CaptureSink, CaptureSpec, Captured, Direction, Ecn, FrameKind, FIRST_QPN};
pub use control_plane::{ControlPlane, EcmpControl, Reaction};
pub use faults::{Fault, FaultKind};
pub use footprint::{footprint, SimShape, Term, HEAP_BLOCK};
pub use forward::Forwarder;
pub use nic::impaired_rx::RxFault;
pub use nic::QpId;
pub use observe::MAX_SAMPLES;
pub use watch::{Progress, Unwatched, Watch, CHECK_EVERY};

use capture::Capture;
use control_plane::Control;
use deadlock::*;
use ecn::*;
use event::*;
use faults::Faults;
use flows::*;
use forward::*;
use ib::*;
use link::*;
use load_balance::*;
use mmu::*;
use nic::impaired_rx::*;
use nic::*;
use observe::*;
use packet::*;
use pfc::*;
use pfc_watchdog::*;
use sched::*;

const NONE: u32 = u32::MAX;

/// No port (an uncabled port's peer; a packet not held by a switch).
const NO_PORT: PortId = PortId(NONE);

/// No QP (PFC and FCP frames; a SHARP join).
const NO_QP: QpId = QpId(NONE);

/// A time that never comes (no pending timer, no deadline, blocked until credits arrive).
const NEVER: SimTime = SimTime::MAX;

/// What a simulator is built from: the compiled scenario (`scenario::World` makes one).
pub struct SimInput {
    pub topo: Topology,
    pub params: Params,
    /// Shared with the caller (a scenario keeps them for its report): the simulator
    /// reads them while it is built and keeps only what it needs.
    pub flows: std::sync::Arc<dyn FlowSource>,
    /// The scenario's seed: every random stream derives from it (`engine::stream`).
    pub seed: u64,
    /// Headroom cells of each port, from the scenario or the `auto` formula.
    pub headroom: Vec<u64>,
    /// Stop at this time instead of when every flow has ended.
    pub stop: Option<SimTime>,
    /// Record time series at this period.
    pub sample_period: Option<SimDuration>,
    /// The subnet manager's tables (InfiniBand); `None`: ECMP.
    pub lft: Option<Lft>,
    /// The subnet manager's adaptive-routing groups (InfiniBand with `adaptive_routing`).
    pub ar: Option<ArTable>,
    pub faults: Vec<Fault>,
    /// Who re-routes after faults.
    pub control: Option<Box<dyn ControlPlane>>,
}

/// A fabric ready to run: the shared arrays every mechanism reads (ports, egress queues,
/// the packet slab, the event queue, the statistics) and one sub-state per mechanism,
/// owned by that mechanism's file.
pub struct Sim {
    q: Events,
    topo: Topology,
    p: Params,
    /// Per port: what every frame through it touches (two cache lines, fetched together).
    ports: Vec<PortState>,
    /// Egress queues, `port * 8 + class`.
    cls: Vec<ClassQ>,
    pkts: Packets,
    pub stats: Stats,
    links: Links,
    sched: Scheduler,
    forwarding: Forwarding,
    mmu: Mmu,
    pfc: PfcState,
    ecn: EcnMarker,
    /// InfiniBand's credit and VL state (`None` on RoCEv2).
    ib: Option<IbState>,
    hosts: Hosts,
    impaired: ImpairedRx,
    flows: Flows,
    faults: Faults,
    control: Control,
    watchdog: PfcWatchdog,
    deadlock: DeadlockDetector,
    observe: Observer,
    /// The capture tap (`None`: off; `Sim::send` tests only this).
    capture: Option<Box<Capture>>,
    /// The run stops at this time (else when every flow completed or failed).
    stop: Option<SimTime>,
    /// The deadlock detector stopped the run.
    halted: bool,
}

impl Sim {
    /// Builds the simulator for a compiled scenario.
    pub fn new(input: SimInput) -> Sim {
        let SimInput { topo, params: p, flows, seed, headroom, stop, sample_period, lft, ar, faults, control } = input;
        let np = topo.ports.len();
        assert!(np <= ID_MASK as usize && flows.len() <= ID_MASK as usize, "too many ports or flows for the event encoding");
        // Packets carry frame and payload sizes as u16 (path MTUs are at most 4096 B).
        let max_frame = frame_of(&p, Transport::WriteFirst, p.mtu).0;
        assert!(max_frame <= u16::MAX as u64, "MTU {} too large for the packet model", p.mtu.0);
        let mut q = Events::new();
        let mut stats = Stats::new(&topo, flows.len());
        let mut flow_qp = Vec::with_capacity(flows.len());
        let hosts = Hosts::new(&topo, &p, &*flows, seed, &mut |f, qp| {
            flow_qp.push(qp);
            stats.flows.push(FlowRecord::new(f.src, f.dst, f.size.0, f.start.0, f.join));
        });
        stats.qp_rx = hosts.qps.iter().map(|q| crate::stats::QpRx { src: q.src, dst: q.dst, ..Default::default() }).collect();
        let flows = Flows::new(flows, flow_qp, &mut stats, &mut q);
        let observe = Observer::new(np, sample_period, &mut q);
        let deadlock = DeadlockDetector::new(&p, flows.remaining, &mut q);
        let faults = Faults::new(faults, &mut q);
        Sim {
            ports: link::port_states(&topo, &p),
            cls: vec![ClassQ::default(); np * 8],
            pkts: Packets::default(),
            links: Links::new(np),
            sched: Scheduler::new(&p),
            forwarding: Forwarding::new(&topo, &p, seed, lft, ar, &faults),
            mmu: Mmu::new(&topo, &p, &headroom),
            pfc: PfcState::new(&topo, &p, &faults),
            ecn: EcnMarker::new(np, seed),
            ib: p.ib.as_ref().map(|ibc| IbState::new(np, ibc)),
            impaired: ImpairedRx::new(&topo, &faults),
            watchdog: PfcWatchdog::new(np, &p),
            control: Control::new(control),
            q,
            topo,
            p,
            stats,
            hosts,
            flows,
            faults,
            deadlock,
            observe,
            capture: None,
            stop,
            halted: false,
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
        self.run_watched(&mut Unwatched);
    }

    /// [`Sim::run`], showing `watch` the progress every [`CHECK_EVERY`] events; when it
    /// answers `false` the run stops there, is finalised at the current time and marked
    /// cancelled (`stats.cancelled`). Returns whether it ran to its end.
    pub fn run_watched(&mut self, watch: &mut dyn Watch) -> bool {
        let started = std::time::Instant::now();
        let total_bytes: u64 = self.stats.flows.iter().map(|f| f.size()).sum();
        while let Some(t) = self.q.peek_time() {
            if let Some(stop) = self.stop {
                if t > stop {
                    break;
                }
            }
            if (self.flows.remaining == 0 && self.stop.is_none()) || self.halted {
                break;
            }
            let (now, ev) = self.q.pop().expect("peeked");
            self.prefetch_ahead();
            self.dispatch(now, ev);
            if self.q.popped() & (CHECK_EVERY - 1) == 0 && !watch.check(&self.progress(started, total_bytes)) {
                self.stats.cancelled = Some(self.q.now().0);
                self.finish(self.q.now());
                return false;
            }
        }
        let end = match self.stop {
            Some(s) if self.flows.remaining > 0 && !self.halted => s.max(self.q.now()),
            _ => self.q.now(),
        };
        self.finish(end);
        true
    }

    /// Where the run is, for a watcher.
    fn progress(&self, started: std::time::Instant, total_bytes: u64) -> Progress {
        Progress {
            now: self.q.now(),
            stop: self.stop,
            events: self.q.popped(),
            wall: started.elapsed(),
            delivered_bytes: self.hosts.delivered,
            total_bytes,
            flows_left: self.flows.remaining,
            flows: self.stats.flows.len(),
        }
    }

    fn dispatch(&mut self, now: SimTime, ev: Ev) {
        match ev {
            Ev::Arrive(port) => self.on_arrive(now, port),
            Ev::TxDone(port) => {
                self.ports[port.index()].busy = false;
                self.try_tx(now, port);
            }
            Ev::Kick(port) => {
                self.links.kicked(port, now);
                self.try_tx(now, port);
            }
            Ev::PfcRefresh { port, pg, gen } => self.on_pfc_refresh(now, port, pg, gen),
            Ev::Post(f) => self.on_post(now, f),
            Ev::Rto(qp) => self.on_rto(now, qp),
            Ev::RateTimer { qp, gen } => {
                let (_, d) = self.p.dcqcn.as_ref().expect("dcqcn timer without dcqcn");
                let d = *d;
                let q = &mut self.hosts.qps[qp.index()];
                let cc = q.cc.as_mut().expect("cc");
                if gen != q.rate_gen || !cc.rate_running {
                    return; // superseded by a later rate cut
                }
                if cc.on_rate_timer(&d) {
                    self.q.schedule(now + d.rate_timer, Ev::RateTimer { qp, gen });
                }
                self.dcqcn_rate_changed(now, qp);
            }
            Ev::RateCut(qp) => {
                let (_, d) = self.p.dcqcn.as_ref().expect("dcqcn cut without dcqcn");
                let d = *d;
                let cc = self.hosts.qps[qp.index()].cc.as_mut().expect("cc");
                let arm = cc.on_cut_due(now.ps(), &d);
                self.dcqcn_arm(now, qp, arm);
            }
            Ev::DeadlockCheck => self.check_deadlock(now),
            Ev::CctiTimer { qp, gen } => {
                let p = self.p.ib.as_ref().and_then(|i| i.cc.as_ref()).expect("CCTI timer without IB CC");
                let cca = &mut self.hosts.qps[qp.index()].cca;
                if gen == cca.gen && cca.timer_running && cca.on_timer(p) {
                    let t = p.ccti_timer;
                    self.q.schedule(now + t, Ev::CctiTimer { qp, gen });
                }
            }
            Ev::Fault(i) => self.on_fault(now, i),
            Ev::Install { gen } => {
                if gen == self.control.gen {
                    if let Some(f) = self.control.pending.take() {
                        self.forwarding.table = f;
                        self.stats.reroutes.push(now.ps());
                        self.incident(now, IncidentKind::RerouteInstalled, None, None, "the control plane's new forwarding tables take effect".into());
                    }
                }
            }
            Ev::NicDrain { ep, gen } => self.on_nic_drain(now, ep, gen),
            Ev::WdCheck { port, tc } => self.on_wd_check(now, port, tc),
            Ev::WdRestore { port, tc } => self.on_wd_restore(now, port, tc),
            Ev::Sample => self.on_sample(now),
            Ev::ReorderTimer { qp, gen } => self.on_reorder_timeout(now, qp, gen),
        }
    }

    /// Runs one event; `false` when the run is over. For invariant tests.
    pub fn step(&mut self) -> bool {
        let Some(t) = self.q.peek_time() else { return false };
        if self.stop.is_some_and(|s| t > s) || (self.flows.remaining == 0 && self.stop.is_none()) {
            return false;
        }
        let (now, ev) = self.q.pop().expect("peeked");
        self.dispatch(now, ev);
        true
    }

    /// Payload bytes posted, delivered in order to responders, and dropped so far.
    pub fn payload_accounting(&self) -> (u64, u64, u64) {
        let delivered = self.stats.nics.iter().map(|n| n.rx_payload).sum();
        let sent: u64 = self.hosts.qps.iter().map(|q| q.msgs.iter().map(|m| m.size).sum::<u64>()).sum();
        (sent, delivered, self.stats.dropped_payload)
    }

    /// Finalises statistics after [`Sim::step`]-driven runs.
    pub fn finish_now(&mut self) {
        self.finish(self.q.now());
    }

    /// Which technology this simulator runs.
    pub fn tech(&self) -> Tech {
        self.p.tech
    }
}
