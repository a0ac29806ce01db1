//! RoCEv2 load balancing beyond the 5-tuple hash (`[roce] load_balancing`): which member
//! of an ECMP group ([`crate::routing::Routes::group_members`]) a switch gives each data
//! packet.
//!
//! - `flowlet`: a flow keeps its port while its packets follow each other closely; a
//!   packet that comes at least `flowlet_gap` after the flow's previous one at this
//!   switch starts a new flowlet, hashed again with the flowlet's number mixed into the
//!   switch's seed (Kandula et al., "Dynamic load balancing without packet reordering",
//!   SIGCOMM CCR 37(2), 2007). The first flowlet hashes as ECMP does.
//! - `packet-spray`: every packet goes to the next member of the group, round robin per
//!   (switch, group), or to a member drawn by a counter-based hash of the switch's seed
//!   (`spray = "random"`).
//! - `adaptive`: every packet goes to the member with the fewest bytes queued at egress,
//!   all classes counted; ties go to the first such member from the group's round-robin
//!   pointer, which then moves on one. NVIDIA Spectrum-X's adaptive routing picks by
//!   egress queue load as well (its exact metric and tie-break are not published).
//!
//! ACKs, NAKs and CNPs keep the 5-tuple hash; route overrides and pinned routes win over
//! every mode. Leaves out: flowlet tables of a fixed size with hash collisions (one entry
//! per (switch, QP) here), the bytes of the frame being serialised (not counted as
//! queued), and remote congestion signals (CONGA's leaf-to-leaf feedback): every decision
//! is local to the switch.

use std::collections::HashMap;

use super::*;
use crate::params::{LoadBalancing, Spray};
use crate::routing::pick;

/// Xored into a switch's seed for random spraying, so its draws differ from its ECMP hash.
const SPRAY_SALT: u64 = 0x5EED_5B8A_7000_0000;

/// Xored, times the flowlet number, into a switch's seed for a flowlet's re-hash.
const FLOWLET_SALT: u64 = 0x9E37_79B9_7F4A_7C15;

/// The load balancer's state: per-group pointers and the flowlet table.
pub(super) struct LoadBalancer {
    mode: LoadBalancing,
    /// Per group slot ([`crate::routing::Routes::group_members`]): packets balanced so far.
    next: Vec<u64>,
    /// Per (switch, QP): its current flowlet. Lookup only.
    flowlets: HashMap<(NodeId, QpId), Flowlet>,
}

struct Flowlet {
    last: SimTime,
    port: PortId,
    number: u64,
}

impl LoadBalancer {
    /// The balancer for `mode`; `None` for ECMP, which needs none.
    pub(super) fn new(mode: LoadBalancing, table: &Forwarder) -> Option<LoadBalancer> {
        let slots = match table {
            Forwarder::Ecmp(r) => r.group_slots(),
            Forwarder::Lft(_) => return None,
        };
        (mode != LoadBalancing::Ecmp).then(|| LoadBalancer { mode, next: vec![0; slots], flowlets: HashMap::new() })
    }

    /// Packets balanced so far in group `slot`, then one more.
    fn bump(&mut self, slot: u32) -> u64 {
        let s = slot as usize;
        if s >= self.next.len() {
            self.next.resize(s + 1, 0); // re-routed tables may have more slots
        }
        let n = self.next[s];
        self.next[s] += 1;
        n
    }
}

impl Sim {
    /// The output port a load-balancing switch `node` gives data packet `pk` (see the
    /// module doc); a route override or pin first, as [`Sim::next_hop`].
    pub(super) fn balanced_hop(&mut self, now: SimTime, node: NodeId, pk: &Packet) -> Option<PortId> {
        let (src, dst, sport) = self.addr(pk);
        if let Some(p) = self.fixed_hop(node, pk.qp, true, dst) {
            return Some(p);
        }
        let Forwarder::Ecmp(routes) = &self.forwarding.table else { return self.next_hop(node, pk) };
        let (slot, members) = routes.group_members(node, dst);
        if members.len() <= 1 {
            return members.first().copied();
        }
        let lb = self.forwarding.balance.as_mut().expect("balanced_hop without a balancer");
        let len = members.len();
        let port = match lb.mode {
            LoadBalancing::Ecmp => members[pick(routes.hash(node, 0, src, dst, sport), len)],
            LoadBalancing::Flowlet { gap } => {
                let f = lb.flowlets.entry((node, pk.qp)).or_insert(Flowlet { last: NEVER, port: NO_PORT, number: 0 });
                let fresh = f.last == NEVER;
                if fresh || now >= f.last + gap || !members.contains(&f.port) {
                    if !fresh {
                        f.number += 1;
                    }
                    f.port = members[pick(routes.hash(node, FLOWLET_SALT.wrapping_mul(f.number), src, dst, sport), len)];
                }
                f.last = now;
                f.port
            }
            LoadBalancing::PacketSpray { order } => {
                let n = lb.bump(slot);
                match order {
                    Spray::RoundRobin => members[(n % len as u64) as usize],
                    Spray::Random => members[pick(routes.hash(node, SPRAY_SALT.wrapping_add(n), 0, 0, 0), len)],
                }
            }
            LoadBalancing::Adaptive => {
                let start = (lb.bump(slot) % len as u64) as usize;
                let queued = |p: PortId| self.cls[p.index() * 8..p.index() * 8 + 8].iter().map(|c| c.qbytes).sum::<u64>();
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
