//! A switch's forwarding: the packet's next hop (a route override, a pinned path, else
//! ECMP on the 5-tuple — or, for RoCEv2 data with `load_balancing` set, the balancer of
//! `load_balance.rs` — or the subnet manager's LFT, or for InfiniBand data with
//! `adaptive_routing` the same balancer over the SM's AR groups), and a RoCEv2 switch's receive path
//! as named steps: TTL → next hop → classify (DSCP) → watchdog drop → admit (MMU) →
//! ECN mark → enqueue. InfiniBand's path after the next hop is `ib::vl`'s.
//!
//! Leaves out: the switch's internal fabric (a packet moves from ingress to egress at
//! once; the pipeline latency is on the link, `crate::timing`), egress admission of
//! lossy queues separate from ingress, and IP routing beyond ECMP over shortest paths.

use std::collections::HashMap;

use super::*;

/// How switches pick an output port.
pub enum Forwarder {
    /// RoCEv2: ECMP over shortest paths, hashing the 5-tuple.
    Ecmp(Routes),
    /// InfiniBand: the subnet manager's linear forwarding tables.
    Lft(Lft),
}

/// RoCEv2: the IP TTL a NIC sets (Linux `ip_default_ttl` 64, RFC 1700's recommended
/// default); every switch hop decrements it and a packet whose TTL runs out is dropped.
/// InfiniBand packets carry no hop limit inside a subnet.
pub(super) const IP_TTL: u8 = 64;

/// A QP's addresses as its packets carry them (data requester → responder; ACK, NAK and
/// CNP the other way) and its UDP source port (ECMP entropy).
#[derive(Clone, Copy)]
pub(super) struct QpAddr {
    pub(super) src: u32,
    pub(super) dst: u32,
    pub(super) sport: u16,
}

/// A switch's forwarding state: the tables (ECMP groups or LFTs), what faults and tests
/// put in front of them, and the per-ingress DSCP maps a misconfiguration installs.
pub(super) struct Forwarding {
    pub(super) table: Forwarder,
    /// Load balancing of data packets other than ECMP's hash or the LFT (`None`: off).
    pub(super) balance: Option<LoadBalancer>,
    /// Route overrides in force: (switch, destination endpoint) → output port.
    pub(super) overrides: HashMap<(NodeId, u32), PortId>,
    /// Paths pinned per QP ([`Sim::pin_route`]): (switch, QP, data or not) → output port.
    pinned: HashMap<(NodeId, QpId, bool), PortId>,
    /// Switch hops per packet (by packet id), kept only when a route override can loop.
    hops: Vec<u8>,
    ttl_on: bool,
    /// Per port: a DSCP → class map for packets arriving on it (misconfiguration).
    pub(super) port_dscp: Vec<Option<Box<[u8; 64]>>>,
    /// Whether any port has its own DSCP map now.
    pub(super) port_dscp_any: bool,
    /// InfiniBand: the subnet manager's adaptive-routing groups, when AR is on (boxed and
    /// last: the forwarding state the static paths read keeps its layout).
    pub(super) ar: Option<Box<ArTable>>,
}

impl Forwarding {
    pub(super) fn new(topo: &Topology, p: &Params, seed: u64, lft: Option<Lft>, ar: Option<ArTable>, faults: &Faults) -> Forwarding {
        let table = match lft {
            Some(l) => Forwarder::Lft(l),
            None => Forwarder::Ecmp(Routes::build(topo, seed, |_| true)),
        };
        let np = topo.ports.len();
        let port_dscp = if faults.any(|k| matches!(k, FaultKind::PortDscpMap { .. })) { vec![None; np] } else { vec![] };
        let ttl_on = p.ib.is_none() && faults.any(|k| matches!(k, FaultKind::RouteOverride { .. }));
        let balance = LoadBalancer::new(p.load_balancing, &table, ar.is_some(), seed);
        Forwarding {
            table,
            balance,
            overrides: HashMap::new(),
            pinned: HashMap::new(),
            hops: vec![],
            ttl_on,
            port_dscp,
            port_dscp_any: false,
            ar: ar.map(Box::new),
        }
    }

    /// Packet `id` was just allocated: it has crossed no switch yet. Inlined by force: it
    /// runs for every packet and is a test when no TTL is kept.
    #[inline(always)]
    pub(super) fn new_packet(&mut self, id: u32) {
        if self.ttl_on {
            if self.hops.len() <= id as usize {
                self.hops.resize(id as usize + 1, 0);
            }
            self.hops[id as usize] = 0;
        }
    }

    /// Counts a switch hop of packet `id`; `false` when its TTL ran out (RoCEv2, only
    /// while a route override can loop).
    #[inline]
    fn hop(&mut self, id: u32) -> bool {
        if !self.ttl_on {
            return true;
        }
        let h = &mut self.hops[id as usize];
        *h += 1;
        *h < IP_TTL
    }
}

impl Sim {
    /// A packet's (source endpoint, destination endpoint, UDP source port).
    #[inline]
    pub(super) fn addr(&self, pk: &Packet) -> (u32, u32, u16) {
        let a = self.hosts.qp_addr[pk.qp.index()];
        if pk.kind == Kind::Data {
            (a.src, a.dst, a.sport)
        } else {
            (a.dst, a.src, a.sport)
        }
    }

    /// The DSCP a packet carries.
    pub(super) fn dscp_of(&self, pk: &Packet) -> u8 {
        if pk.kind == Kind::Cnp {
            self.p.cnp_dscp
        } else {
            self.hosts.qps[pk.qp.index()].dscp
        }
    }

    /// The port a route override or a pin ([`Sim::pin_route`]) fixes for a packet of QP
    /// `qp` (its data if `data`) to `dst` at switch `node`, if any.
    #[inline]
    pub(super) fn fixed_hop(&self, node: NodeId, qp: QpId, data: bool, dst: u32) -> Option<PortId> {
        if !self.forwarding.overrides.is_empty() {
            if let Some(&p) = self.forwarding.overrides.get(&(node, dst)) {
                return Some(p);
            }
        }
        if !self.forwarding.pinned.is_empty() {
            return self.forwarding.pinned.get(&(node, qp, data)).copied();
        }
        None
    }

    #[inline]
    pub(super) fn next_hop(&self, node: NodeId, pk: &Packet) -> Option<PortId> {
        let (src, dst, sport) = self.addr(pk);
        if !self.forwarding.overrides.is_empty() {
            if let Some(&p) = self.forwarding.overrides.get(&(node, dst)) {
                return Some(p);
            }
        }
        self.forward(node, pk.qp, pk.kind == Kind::Data, src, dst, sport)
    }

    /// Where switch `node` sends a packet of QP `qp` (its data if `data`, else its ACKs,
    /// NAKs and CNPs) from `src` to `dst`: the port pinned for it ([`Sim::pin_route`]), else
    /// the forwarding tables (ECMP on the UDP source port `sport`, or the LFT).
    #[inline]
    pub(super) fn forward(&self, node: NodeId, qp: QpId, data: bool, src: u32, dst: u32, sport: u16) -> Option<PortId> {
        if !self.forwarding.pinned.is_empty() {
            if let Some(&p) = self.forwarding.pinned.get(&(node, qp, data)) {
                return Some(p);
            }
        }
        match &self.forwarding.table {
            Forwarder::Ecmp(r) => r.next_hop(node, src, dst, sport),
            Forwarder::Lft(l) => l.get(node, dst),
        }
    }

    /// A packet arrives at switch `node` on `in_port`, in named steps: TTL → next hop →
    /// (InfiniBand: the VL of the hop, FECN, enqueue) classify → watchdog drop → admit →
    /// ECN mark → enqueue.
    pub(super) fn switch_rx(&mut self, now: SimTime, node: NodeId, in_port: PortId, id: u32) {
        let pk = self.pkts[id as usize];
        if !self.forwarding.hop(id) {
            self.drop_pkt(in_port, id, DropCause::TtlExpired);
            return;
        }
        let Some(out) = self.next_hop_up(now, node, in_port, id, &pk) else { return };
        if self.ib.is_some() {
            self.ib_switch(now, in_port, out, id, &pk);
            return;
        }
        let tc = self.classify(in_port, id, &pk);
        if self.watchdog_drops(in_port, out, tc, id, &pk) {
            return;
        }
        let Some(pg) = self.admit(now, node, in_port, tc, id, &pk) else { return };
        let p = &mut self.pkts[id as usize];
        p.in_port = in_port;
        p.in_pg = pg;
        if self.p.ecn_marking == EcnMarking::Enqueue {
            self.ecn_mark(out, tc, id);
        }
        self.enqueue(now, out, id);
        self.try_tx(now, out);
    }

    /// The output port for a packet at switch `node`, if there is one and its link is up;
    /// else the packet is dropped (and on InfiniBand its input blocks freed).
    #[inline]
    fn next_hop_up(&mut self, now: SimTime, node: NodeId, in_port: PortId, id: u32, pk: &Packet) -> Option<PortId> {
        // Load balancing is off the ECMP fast path: one test, and `next_hop` stays inlined.
        let hop = if self.forwarding.balance.is_some() && pk.kind == Kind::Data { self.balanced_hop(now, node, pk) } else { self.next_hop(node, pk) };
        if let Some(o) = hop.filter(|o| self.links.up[o.index()]) {
            return Some(o);
        }
        if self.ib.is_some() {
            self.ib_release(now, in_port, pk.tc, pk.frame as u32);
        }
        match hop {
            None => self.drop_pkt(in_port, id, DropCause::NoRoute),
            Some(o) => self.drop_pkt(o, id, DropCause::PortDown),
        }
        None
    }

    /// The class a RoCEv2 switch gives a packet: by its DSCP, through the map of the port
    /// it arrived on (the fabric's map unless a misconfiguration changed that port's).
    #[inline]
    fn classify(&mut self, in_port: PortId, id: u32, pk: &Packet) -> usize {
        if !self.forwarding.port_dscp_any {
            return pk.tc as usize;
        }
        let map = self.forwarding.port_dscp[in_port.index()].as_deref().unwrap_or(&self.p.dscp_to_tc);
        let tc = map[self.dscp_of(pk) as usize];
        self.pkts[id as usize].tc = tc;
        tc as usize
    }

    /// Ingress admission at a RoCEv2 switch ([`Mmu::admit`]): the packet's PG if it was
    /// admitted (pausing the ingress peer if the PG just reached its trigger), else
    /// dropped with the MMU's cause.
    #[inline]
    fn admit(&mut self, now: SimTime, node: NodeId, in_port: PortId, tc: usize, id: u32, pk: &Packet) -> Option<u8> {
        let pg = self.p.tc_to_pg[tc];
        let lossless = self.p.lossless[tc] && self.p.pfc.enabled;
        let pfc_disabled = lossless && self.pfc.is_off(in_port);
        let cells = Bytes(pk.frame as u64).cells(self.p.buffer.cell);
        let gi = self.mmu.pg_index(in_port, pg);
        match self.mmu.admit(node, gi, cells, lossless && !pfc_disabled, pfc_disabled) {
            Admit::Dropped(cause) => {
                self.drop_pkt(in_port, id, cause);
                None
            }
            Admit::Taken { xoff } => {
                if xoff {
                    self.set_pg_paused(now, in_port, pg, true, true);
                }
                Some(pg)
            }
        }
    }

    /// The output port a switch picks for the packets of flow `flow`.
    pub fn route(&self, sw: NodeId, flow: u32) -> Option<PortId> {
        let qi = self.flows.qp[flow as usize];
        let q = &self.hosts.qps[qi.index()];
        self.forward(sw, qi, true, q.src, q.dst, q.sport)
    }

    /// Pins the port switch `sw` sends flow `flow`'s data packets (`data`) or its ACKs, NAKs
    /// and CNPs (`!data`) out of, whatever ECMP would pick: to replay another simulator's
    /// paths (the ns-3 cross-check). Call before running; a flow sharing a QP shares its pins.
    pub fn pin_route(&mut self, flow: u32, sw: NodeId, port: PortId, data: bool) {
        assert!(self.topo.is_switch(sw) && self.topo.port(port).node == sw, "pin_route: {port:?} is not a port of switch {sw:?}");
        self.forwarding.pinned.insert((sw, self.flows.qp[flow as usize], data), port);
    }

    /// Replaces the forwarding state while the simulation runs (a re-sweep, re-routing).
    pub fn set_forwarder(&mut self, fwd: Forwarder) {
        self.forwarding.table = fwd;
    }

    /// The egress ports flow `flow`'s data packets leave by, from its NIC to the last switch,
    /// under the forwarding state now; `None` for a SHARP join, or if the route is broken
    /// or loops.
    pub(super) fn flow_path(&self, flow: u32) -> Option<Vec<PortId>> {
        if self.flows.qp[flow as usize] == NO_QP {
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
}
