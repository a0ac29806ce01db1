//! TODO doc

use super::*;
use model::ib;

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

impl Sim {
    pub(super) fn on_fault(&mut self, now: u64, i: u32) {
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
    pub(super) fn links_change(&mut self, now: u64, ports: &[PortId], up: bool) {
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
}
