//! Load balancing beyond static routes: which member of a group a switch gives each data
//! packet. RoCEv2 (`[roce] load_balancing`) balances over the ECMP group
//! ([`crate::routing::Routes::next_hops`]); InfiniBand with `[infiniband]
//! adaptive_routing` over the subnet manager's AR group
//! ([`crate::subnet_manager::ar::ArTable::group`]: the LFT's port and the other
//! minimum-hop ports that keep the channel dependency graph acyclic), per packet
//! (`adaptive`) or per flowlet (`adaptive-flowlet`). One selection serves both fabrics.
//!
//! - `flowlet`: a flow keeps its port while its packets follow each other closely; a
//!   packet that comes at least `flowlet_gap` after the flow's previous one at this
//!   switch starts a new flowlet, hashed again with the flowlet's number mixed into the
//!   switch's seed (Kandula et al., "Dynamic load balancing without packet reordering",
//!   SIGCOMM CCR 37(2), 2007). The first flowlet hashes as ECMP does.
//! - `packet-spray`: every packet of a flow goes to the next member of the group, round
//!   robin per (switch, flow) — so each flow spreads evenly over every member at every
//!   switch; a pointer per group instead would pin flows whose packets interleave in a
//!   fixed rotation — or to a member drawn by a counter-based hash of the switch's seed
//!   and the flow (`spray = "random"`).
//! - `adaptive`: every packet goes to the member with the lowest load grade — bytes
//!   queued at egress, all classes, divided by `adaptive_grade` — and ties go to the first
//!   such member from the flow's round-robin pointer at this switch, which then moves on
//!   one. Below a grade, ports count as equally loaded and the round robin keeps each flow
//!   evenly spread, which keeps links downstream, which the switch cannot see, balanced:
//!   on a k = 8 fat-tree permutation (the test `adaptive_permutation_near_line_rate`) a
//!   grade of one frame lets one-frame transients skew flows onto one path, max slowdown
//!   1.56, against 1.04 with the default of eight frames. NVIDIA Spectrum-X's adaptive routing picks by
//!   egress queue load as well (its exact metric and tie-break are not published).
//! - `adaptive-flowlet` (InfiniBand AR per flowlet): a flow keeps its port while its
//!   packets follow each other within `gap`; a new flowlet goes to the least-loaded
//!   member as `adaptive` picks it (ties from the flow's pointer, which moves one per
//!   flowlet). NVIDIA Quantum switches "select the output port based on the port's load"
//!   (NVIDIA, *InfiniBand Cluster Bring-up Procedure*, "Adaptive Routing"); their load
//!   metric and flowlet timer are not published, so both are this model's.
//!
//! InfiniBand's groups are computed once at bring-up and never pruned: a member whose
//! link is down is passed over, and the SL→VL mapping and credits of the chosen hop are
//! the static path's (`ib::vl`).
//!
//! ACKs, NAKs and CNPs keep the 5-tuple hash (InfiniBand: the LFT); route overrides and pinned routes win over
//! every mode. Leaves out: flowlet and pointer tables of a fixed size with hash
//! collisions (one entry per (switch, QP) here), the bytes of the frame being serialised (not counted as
//! queued), and remote congestion signals (CONGA's leaf-to-leaf feedback): every decision
//! is local to the switch.

use std::collections::HashMap;

use super::*;
use crate::params::{LoadBalancing, Spray};
use crate::routing::{hash5, pick};

/// Xored into a switch's seed for random spraying, so its draws differ from its ECMP hash.
const SPRAY_SALT: u64 = 0x5EED_5B8A_7000_0000;

/// Xored into a switch's seed for the start of a flow's round-robin pointer.
const ROTATION_SALT: u64 = 0x0DD5_EED0_0000_0001;

/// Xored, times the flowlet number, into a switch's seed for a flowlet's re-hash.
const FLOWLET_SALT: u64 = 0x9E37_79B9_7F4A_7C15;

/// Xored into the scenario's seed for InfiniBand switches' flow hashes (they have no ECMP
/// seeds): the start of each flow's round-robin pointer.
const AR_SALT: u64 = 0xA0A0_5EED_0000_0018;

/// The load balancer's state: per (switch, QP), what the mode remembers of the flow.
pub(super) struct LoadBalancer {
    mode: LoadBalancing,
    /// InfiniBand: the seed of the switches' flow hashes (RoCEv2 uses the ECMP seeds).
    ib_seed: u64,
    /// Per (switch, QP). Lookup only.
    flows: HashMap<(NodeId, QpId), FlowAtSwitch>,
}

/// A flow at one switch: its packets balanced so far (spraying's and adaptive's
/// round-robin pointer, started at a hash of the switch's seed and the QP so flows do not
/// move in lockstep), and for flowlets the current flowlet's port, last packet and number.
struct FlowAtSwitch {
    count: u64,
    last: SimTime,
    port: PortId,
}

impl LoadBalancer {
    /// The balancer for `mode`; `None` for ECMP (the hash or the LFT alone), and for LFTs
    /// without adaptive-routing groups (`ar`).
    pub(super) fn new(mode: LoadBalancing, table: &Forwarder, ar: bool, seed: u64) -> Option<LoadBalancer> {
        let groups = match table {
            Forwarder::Ecmp(_) => true,
            Forwarder::Lft(_) => ar,
        };
        (groups && mode != LoadBalancing::Ecmp).then(|| LoadBalancer { mode, ib_seed: seed ^ AR_SALT, flows: HashMap::new() })
    }
}

/// The member with the lowest load grade (bytes queued at egress, all classes, over
/// `grade`), searching from `start` so ties go to the first from there; with `up`, members
/// whose link is down are passed over (`members[start]` if every one is down).
fn least_loaded(cls: &[ClassQ], members: &[PortId], start: usize, grade: Bytes, up: Option<&[bool]>) -> PortId {
    let queued = |p: PortId| cls[p.index() * 8..p.index() * 8 + 8].iter().map(|c| c.qbytes).sum::<u64>() / grade.0;
    let len = members.len();
    let mut best = None;
    for i in 0..len {
        let p = members[(start + i) % len];
        if up.is_some_and(|u| !u[p.index()]) {
            continue;
        }
        let q = queued(p);
        if best.is_none_or(|(_, least)| q < least) {
            best = Some((p, q));
        }
    }
    best.map_or(members[start], |(p, _)| p)
}

impl Sim {
    /// The output port a load-balancing switch `node` gives data packet `pk` (see the
    /// module doc); a route override or pin first, as [`Sim::next_hop`]. Kept out of
    /// line: the ECMP and LFT paths never call it.
    #[inline(never)]
    pub(super) fn balanced_hop(&mut self, now: SimTime, node: NodeId, pk: &Packet) -> Option<PortId> {
        let (src, dst, sport) = self.addr(pk);
        if let Some(p) = self.fixed_hop(node, pk.qp, true, dst) {
            return Some(p);
        }
        let lb = self.forwarding.balance.as_mut().expect("balanced_hop without a balancer");
        // InfiniBand skips group members whose link is down (its groups are not pruned);
        // its switches' seeds spread the node number with the golden-ratio multiplier.
        let (members, seed, up) = match (&self.forwarding.table, &self.forwarding.ar) {
            (Forwarder::Ecmp(routes), _) => (routes.next_hops(node, dst), routes.seed(node), None),
            (Forwarder::Lft(_), Some(ar)) => (ar.group(node, dst), lb.ib_seed ^ u64::from(node.0).wrapping_mul(FLOWLET_SALT), Some(&self.links.up[..])),
            (Forwarder::Lft(l), None) => return l.get(node, dst),
        };
        let hash = |salt: u64| hash5(seed ^ salt, src, dst, sport);
        if members.len() <= 1 {
            return members.first().copied();
        }
        let len = members.len();
        let f = lb.flows.entry((node, pk.qp)).or_insert_with(|| FlowAtSwitch { count: hash(ROTATION_SALT), last: NEVER, port: NO_PORT });
        let port = match lb.mode {
            LoadBalancing::Ecmp => members[pick(hash(0), len)],
            LoadBalancing::Flowlet { gap } => {
                let fresh = f.last == NEVER;
                if fresh || now >= f.last + gap || !members.contains(&f.port) {
                    let number = if fresh { 0 } else { f.count.wrapping_add(1) };
                    f.count = number;
                    f.port = members[pick(hash(FLOWLET_SALT.wrapping_mul(number)), len)];
                }
                f.last = now;
                f.port
            }
            LoadBalancing::PacketSpray { order } => {
                f.count = f.count.wrapping_add(1);
                match order {
                    Spray::RoundRobin => members[(f.count % len as u64) as usize],
                    Spray::Random => members[pick(hash(SPRAY_SALT.wrapping_add(f.count)), len)],
                }
            }
            LoadBalancing::Adaptive { grade } => {
                f.count = f.count.wrapping_add(1);
                least_loaded(&self.cls, members, (f.count % len as u64) as usize, grade, up)
            }
            LoadBalancing::AdaptiveFlowlet { gap, grade } => {
                let stale = !members.contains(&f.port) || up.is_some_and(|u| !u[f.port.index()]);
                if f.last == NEVER || now >= f.last + gap || stale {
                    f.count = f.count.wrapping_add(1);
                    f.port = least_loaded(&self.cls, members, (f.count % len as u64) as usize, grade, up);
                }
                f.last = now;
                f.port
            }
        };
        Some(port)
    }
}
