//! Scenario faults, each an edge in time (a start, or the end that undoes it): links and
//! switches fail and return, NIC receivers stall or slow down, ports lose PFC, headroom
//! or their DSCP map, route overrides, the master SM dies. On RoCEv2 the switches at a
//! dead link's ends drop it from their ECMP groups at once; the control plane
//! (`control_plane`) installs new tables after its delay. Whatever waits at a dead
//! egress is discarded.

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

/// The scenario's fault edges, in scenario order; each has an event at its time.
pub(super) struct Faults {
    list: Vec<Fault>,
}

impl Faults {
    pub(super) fn new(list: Vec<Fault>, q: &mut Events) -> Faults {
        for (i, f) in list.iter().enumerate() {
            q.schedule(f.at, Ev::Fault(i as u32));
        }
        Faults { list }
    }

    /// Some fault edge is of a kind `k` accepts (state that only such a fault needs is
    /// kept only then).
    pub(super) fn any(&self, k: impl Fn(&FaultKind) -> bool) -> bool {
        self.list.iter().any(|f| k(&f.kind))
    }
}

impl Sim {
    pub(super) fn on_fault(&mut self, now: SimTime, i: u32) {
        let f = self.faults.list[i as usize].clone();
        let ev = if f.ends { IncidentKind::FaultEnded } else { IncidentKind::Fault };
        self.incident(now, ev, None, None, f.label.clone());
        match f.kind {
            FaultKind::Links { ports, up } => self.links_change(now, &ports, up),
            FaultKind::NicRx { ep, rx } => self.set_nic_rx(now, ep, rx),
            FaultKind::PortPfc { port, enabled } => {
                let pi = port.index();
                self.pfc.set_off(port, !enabled);
                if !enabled {
                    // The port forgets any pause it was obeying and stops pausing its peer.
                    for tc in 0..8 {
                        self.stats.ports[pi].paused_ps[tc] += self.cls[pi * 8 + tc].cut_pause(now).ps();
                    }
                    for pg in 0..8u8 {
                        self.set_pg_paused(now, port, pg, false, false);
                    }
                }
                self.try_tx(now, port);
            }
            FaultKind::PortHeadroom { port, cells } => {
                self.mmu.set_headroom(port, cells);
            }
            FaultKind::PortDscpMap { port, map } => {
                self.forwarding.port_dscp[port.index()] = map;
                self.forwarding.port_dscp_any = self.forwarding.port_dscp.iter().any(Option::is_some);
            }
            FaultKind::RouteOverride { node, dst, port } => match port {
                Some(p) => {
                    self.forwarding.overrides.insert((node, dst), p);
                }
                None => {
                    self.forwarding.overrides.remove(&(node, dst));
                }
            },
            FaultKind::SmFailure { standby } => {
                if let Some(mut cp) = self.control.plane.take() {
                    if let Some(t) = cp.on_sm_failure(now, standby) {
                        self.incident(t, IncidentKind::SmTakeover, None, None, "the standby subnet manager becomes master".into());
                    }
                    self.control.plane = Some(cp);
                }
            }
        }
    }

    /// Links of `ports` go down or come back (both directions): what waits at a dead
    /// egress is discarded; on RoCEv2 the switches next to a dead link drop it from their
    /// ECMP groups at once; the control plane re-routes after its delay.
    pub(super) fn links_change(&mut self, now: SimTime, ports: &[PortId], up: bool) {
        for &port in ports {
            self.set_link(port, up);
        }
        for &port in ports {
            let ends = [Some(port), self.topo.port(port).peer];
            for p in ends.into_iter().flatten() {
                let pi = p.index();
                if up {
                    if let Some(ibs) = &mut self.ib {
                        // Link (re)training exchanges FCPs: the sender resynchronises to what
                        // the peer has received and has free (IBTA Vol. 1 §7.9.4).
                        let peer = self.topo.port(p).peer.expect("cabled");
                        for vl in 0..8 {
                            let (abr, free) = (ibs[peer].abr[vl], ibs[peer].free[vl]);
                            ibs[p].fctbs[vl] = abr;
                            ibs[p].fccl[vl] = ib::fccl(abr, free);
                        }
                    }
                    self.try_tx(now, p);
                } else {
                    // Whatever waits at a dead egress is discarded (PortXmitDiscards).
                    for tc in 0..8 {
                        while self.cls[pi * 8 + tc].head != NONE {
                            let id = if self.ports[pi].flags & P_SWITCH != 0 {
                                self.dequeue(now, p, tc)
                            } else {
                                let id = self.pop_q(p, tc);
                                self.cls[pi * 8 + tc].qbytes -= self.pkts[id as usize].frame as u64;
                                id
                            };
                            self.drop_pkt(p, id, DropCause::PortDown);
                        }
                    }
                    // A switch that lost every link (a dead switch) repairs nothing.
                    let node = self.topo.node(self.topo.ports[pi].node);
                    let alive =
                        (node.first_port..node.first_port + node.nports).any(|q| self.links.up[q as usize] && self.topo.ports[q as usize].peer.is_some());
                    if let Forwarder::Ecmp(r) = &mut self.forwarding.table {
                        if alive && self.ports[pi].flags & P_SWITCH != 0 && r.prune(&self.topo, p) {
                            let name = self.topo.node(self.topo.ports[pi].node).name.clone();
                            self.incident(now, IncidentKind::LocalRepair, Some(p), None, format!("{name} removes the dead link from its ECMP groups"));
                        }
                    }
                }
            }
        }
        if let Some(mut cp) = self.control.plane.take() {
            let re = cp.on_link_change(now, &self.topo, &self.links.up);
            self.control.plane = Some(cp);
            self.control.gen += 1;
            self.stats.reroute_steps.push((now.ps(), re.steps));
            match re.delay {
                Some(d) => {
                    self.control.pending = Some(re.fwd);
                    self.q.schedule(now + d, Ev::Install { gen: self.control.gen });
                }
                None => {
                    self.control.pending = None;
                    self.incident(now, IncidentKind::NoReroute, None, None, "no subnet manager is master: the forwarding tables stay as they are".into());
                }
            }
        }
    }
}
