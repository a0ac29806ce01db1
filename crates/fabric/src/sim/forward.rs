//! TODO doc

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

impl Sim {
    /// A packet's (source endpoint, destination endpoint, UDP source port).
    #[inline]
    pub(super) fn addr(&self, pk: &Packet) -> (u32, u32, u16) {
        let a = self.qp_addr[pk.qp as usize];
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
            self.qps[pk.qp as usize].dscp
        }
    }

    #[inline]
    pub(super) fn next_hop(&self, node: NodeId, pk: &Packet) -> Option<PortId> {
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
    pub(super) fn forward(&self, node: NodeId, qp: u32, data: bool, src: u32, dst: u32, sport: u16) -> Option<PortId> {
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

    pub(super) fn switch_rx(&mut self, now: u64, node: NodeId, in_port: u32, id: u32) {
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

    /// Replaces the forwarding state while the simulation runs (a re-sweep, re-routing).
    pub fn set_forwarder(&mut self, fwd: Forwarder) {
        self.fwd = fwd;
    }

    /// The egress ports flow `flow`'s data packets leave by, from its NIC to the last switch,
    /// under the forwarding state now; `None` for a SHARP join, or if the route is broken
    /// or loops.
    pub(super) fn flow_path(&self, flow: u32) -> Option<Vec<PortId>> {
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
}
