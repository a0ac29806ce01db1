//! RoCEv2 load balancing beyond the 5-tuple hash (`[roce] load_balancing`): which member
//! of an ECMP group ([`crate::routing::Routes::next_hops`]) a switch gives each data
//! packet.
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
//!
//! ACKs, NAKs and CNPs keep the 5-tuple hash; route overrides and pinned routes win over
//! every mode. Leaves out: flowlet and pointer tables of a fixed size with hash
//! collisions (one entry per (switch, QP) here), the bytes of the frame being serialised (not counted as
//! queued), and remote congestion signals (CONGA's leaf-to-leaf feedback): every decision
//! is local to the switch.

use std::collections::HashMap;

use super::*;
use crate::params::{LoadBalancing, Spray};
use crate::routing::pick;

/// Xored into a switch's seed for random spraying, so its draws differ from its ECMP hash.
const SPRAY_SALT: u64 = 0x5EED_5B8A_7000_0000;

/// Xored into a switch's seed for the start of a flow's round-robin pointer.
const ROTATION_SALT: u64 = 0x0DD5_EED0_0000_0001;

/// Xored, times the flowlet number, into a switch's seed for a flowlet's re-hash.
const FLOWLET_SALT: u64 = 0x9E37_79B9_7F4A_7C15;

/// The load balancer's state: per (switch, QP), what the mode remembers of the flow.
pub(super) struct LoadBalancer {
    mode: LoadBalancing,
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
    /// The balancer for `mode`; `None` for ECMP, which needs none, and for LFTs.
    pub(super) fn new(mode: LoadBalancing, table: &Forwarder) -> Option<LoadBalancer> {
        let ecmp = matches!(table, Forwarder::Ecmp(_));
        (ecmp && mode != LoadBalancing::Ecmp).then(|| LoadBalancer { mode, flows: HashMap::new() })
    }
}

impl Sim {
    /// The output port a load-balancing switch `node` gives data packet `pk` (see the
    /// module doc); a route override or pin first, as [`Sim::next_hop`]. Kept out of
    /// line: the ECMP path never calls it.
    #[inline(never)]
    pub(super) fn balanced_hop(&mut self, now: SimTime, node: NodeId, pk: &Packet) -> Option<PortId> {
        let (src, dst, sport) = self.addr(pk);
        if let Some(p) = self.fixed_hop(node, pk.qp, true, dst) {
            return Some(p);
        }
        let Forwarder::Ecmp(routes) = &self.forwarding.table else { return self.forward(node, pk.qp, true, src, dst, sport) };
        let members = routes.next_hops(node, dst);
        if members.len() <= 1 {
            return members.first().copied();
        }
        let lb = self.forwarding.balance.as_mut().expect("balanced_hop without a balancer");
        let len = members.len();
        let f = lb.flows.entry((node, pk.qp)).or_insert_with(|| FlowAtSwitch {
            count: routes.hash(node, ROTATION_SALT, src, dst, sport),
            last: NEVER,
            port: NO_PORT,
        });
        let port = match lb.mode {
            LoadBalancing::Ecmp => members[pick(routes.hash(node, 0, src, dst, sport), len)],
            LoadBalancing::Flowlet { gap } => {
                let fresh = f.last == NEVER;
                if fresh || now >= f.last + gap || !members.contains(&f.port) {
                    let number = if fresh { 0 } else { f.count.wrapping_add(1) };
                    f.count = number;
                    f.port = members[pick(routes.hash(node, FLOWLET_SALT.wrapping_mul(number), src, dst, sport), len)];
                }
                f.last = now;
                f.port
            }
            LoadBalancing::PacketSpray { order } => {
                f.count = f.count.wrapping_add(1);
                match order {
                    Spray::RoundRobin => members[(f.count % len as u64) as usize],
                    Spray::Random => members[pick(routes.hash(node, SPRAY_SALT.wrapping_add(f.count), src, dst, sport), len)],
                }
            }
            LoadBalancing::Adaptive { grade } => {
                f.count = f.count.wrapping_add(1);
                let start = (f.count % len as u64) as usize;
                let queued = |p: PortId| self.cls[p.index() * 8..p.index() * 8 + 8].iter().map(|c| c.qbytes).sum::<u64>() / grade.0;
                let mut best = members[start];
                let mut least = queued(best);
                for i in 1..len {
                    let p = members[(start + i) % len];
                    let q = queued(p);
                    if q < least {
                        (best, least) = (p, q);
                    }
                }
                best
            }
        };
        Some(port)
    }
}
