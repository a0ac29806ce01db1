//! What a simulator holds in memory, from the shape of its inputs, counted before it is
//! built: the memory estimate a scenario is checked against (`scenario::estimate`)
//! takes its simulator terms from here, so that they follow the data layout when it
//! changes.
//!
//! Each term is a count times the `size_of` of what is stored, plus the allocator's
//! bookkeeping for the small vectors every flow and sample owns. Left out: the packet
//! slab's growth beyond what the buffers hold (frames are bounded by the buffers, the
//! links' bandwidth-delay products and the NICs' windows), incidents and the pause log
//! (capped), and the control plane's re-routing state (built after a fault).

use super::*;
use crate::stats::{FlowRecord, NicStats, PortStats};
use std::mem::size_of;

/// The allocator's cost of one small heap block beyond its payload (glibc malloc: a
/// 16-byte header and 16-byte alignment, malloc/malloc.c `MINSIZE`), and a vector's own
/// header.
pub const HEAP_BLOCK: u128 = 16 + size_of::<Vec<u32>>() as u128;

/// The inputs' shape, as far as memory goes.
#[derive(Clone, Copy, Debug, Default)]
pub struct SimShape {
    pub nodes: u128,
    pub switches: u128,
    /// Switches with endpoints below them (the ECMP table's columns).
    pub leaf_switches: u128,
    pub ports: u128,
    pub endpoints: u128,
    pub flows: u128,
    /// Flows the dependency graph may hold at once (`flows::Window`): every flow held as
    /// a spec, and the window of each collective.
    pub held_flows: u128,
    /// RC queue pairs (flows on a shared connection share one).
    pub qps: u128,
    /// Frames the buffers can hold at once, over the whole fabric.
    pub buffered_frames: u128,
    /// Time-series samples taken (0 without `--out`/`--html`).
    pub samples: u128,
    /// InfiniBand (credits, VLs; forwarding tables from the subnet manager).
    pub infiniband: bool,
    /// SONiC's PFC watchdog runs (one state per queue).
    pub pfc_watchdog: bool,
}

/// One named part of the estimate, in bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Term {
    pub what: &'static str,
    pub bytes: u128,
}

/// The simulator's memory, term by term.
pub fn footprint(s: &SimShape) -> Vec<Term> {
    let sz = |n: usize| n as u128;
    let per_port = sz(size_of::<PortState>())
        + 8 * sz(size_of::<ClassQ>())
        + 8 * sz(size_of::<PgState>())
        + 8 * 8 // headroom caps
        + sz(size_of::<[u64; 8]>()) // PFC quanta
        + sz(size_of::<VecDeque<u32>>()) + 8 // PFC frames on the link, quantum
        + sz(size_of::<Rng>()) // ECN marking
        + 1 + 8 + 1 // link up, kick time, first block
        + sz(size_of::<PortStats>())
        + if s.infiniband { sz(size_of::<ib::credits::IbPort>()) + 8 } else { 0 }
        + if s.pfc_watchdog { 8 * sz(size_of::<pfc_watchdog::WdQueue>()) } else { 0 };
    let forwarding = if s.infiniband {
        // The subnet manager's linear forwarding tables: a u32 out-port per switch and
        // destination (`lft::Lft`), twice while the SM builds them.
        2 * s.switches * s.endpoints * 4
    } else {
        // ECMP: a group per switch and destination leaf (`routing::Routes`, u16 when
        // wide), with the build's per-switch distances and group maps.
        s.switches * s.leaf_switches * 2 + s.switches * (4 + HEAP_BLOCK) * 4
    };
    // The flow specs themselves are the caller's to count (the simulator reads them while
    // it is built; what a post needs is in the flow's record).
    let per_flow = sz(size_of::<FlowRecord>()) + 2 * 4; // QP (and its copy in the stats at the end)
                                                        // A flow in the dependency graph's windows (`flows::Slot`), a dependent listed past a
                                                        // slot's two for each (a gate's, a tree root's), and its message on its QP (a flow
                                                        // posted and not yet acknowledged is in a window, or just past its front).
    let per_held = sz(size_of::<flows::Slot>()) + 4 + sz(size_of::<Msg>());
    let per_qp = sz(size_of::<Qp>()) + sz(size_of::<QpAddr>()) + 16 + 3 * 16 // lost; RTO, rate and CNP timers in the heap
        + sz(size_of::<Option<Vec<PortId>>>()) + HEAP_BLOCK + 8 * 4; // its path at the end (its flows share it)
    let per_sample = sz(size_of::<crate::stats::Sample>()) + 3 * 16 + s.ports * 9 + s.qps * 8;
    vec![
        Term { what: "per-port state (queues, MMU, PFC, counters)", bytes: s.ports * per_port + s.nodes * sz(size_of::<Pool>()) },
        Term { what: "forwarding tables", bytes: forwarding },
        Term { what: "NICs", bytes: s.endpoints * (sz(size_of::<Nic>()) + sz(size_of::<NicStats>())) },
        Term { what: "flows (records, dependencies)", bytes: s.flows * per_flow + s.held_flows * per_held },
        Term { what: "queue pairs (and their paths)", bytes: s.qps * per_qp },
        Term { what: "frames in flight", bytes: (s.buffered_frames + s.ports * 4) * sz(size_of::<Packet>()) + (s.ports + s.flows) * 16 },
        Term { what: "time-series samples (--out, --html)", bytes: s.samples * per_sample },
    ]
}
