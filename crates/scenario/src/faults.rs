//! `[[faults]]` compiled into the simulator's fault edges: each fault starts at `at`, and
//! ends `duration` later (its undo edge) when one is given.
//!
//! Owns which fields each kind takes and needs, and resolving names (links, switches,
//! NICs, ports) against the topology; a slow RoCE receiver's pause points come from the
//! same headroom formula as the switches' ([`crate::roce::auto_headroom`]). Leaves out
//! what a fault does once it happens (`fabric::sim`) and how the control plane reacts
//! (`fabric::control`).

use model::frame::Transport;
use units::{Bytes, SimDuration, SimTime};

use fabric::params::{Params, Tech};
use fabric::sim::{Fault, FaultKind, RxFault};
use fabric::topology::{NodeId, NodeKind, PortId, Topology};

use crate::error::{ConfigError, Ctx};
use crate::roce::auto_headroom;
use crate::schema::FaultCfg;
use crate::topology::named_port;

/// One fault compiled: what happens at its start, what undoes it at its end (`None`: it
/// cannot be undone, or is its own undoing), and how the timeline names it.
type Edge = (FaultKind, Option<FaultKind>, String);

/// The scenario's faults as edges (start, and end when a duration is given), checked
/// against the topology and the technology.
pub(crate) fn compile(c: &Ctx, cfg: &[FaultCfg], topo: &Topology, params: &Params, headroom_cells: &[u64]) -> Result<Vec<Fault>, ConfigError> {
    let mut out = vec![];
    for (i, f) in cfg.iter().enumerate() {
        let one = One { c, i, f, kind: f.kind.as_str() };
        one.check_fields()?;
        let at = SimTime(f.at.ps());
        let end = match f.duration {
            None => None,
            Some(d) => Some(SimTime(f.at.ps().checked_add(d.ps()).ok_or_else(|| {
                c.err(&one.field("duration"), format!("at {} + duration {d} ends after the last time there is, {}", f.at, SimTime(u64::MAX)))
            })?)),
        };
        if one.kind == "link-up" && end.is_some() {
            return Err(c.err(&one.field("duration"), "a link-up has no duration (give the link-down a duration instead)"));
        }
        let (kind, undo, label) = match one.kind {
            "link-down" | "link-up" => one.link(topo)?,
            "switch-down" => one.switch_down(topo)?,
            "stuck-receiver" | "slow-receiver" => one.receiver(topo, params)?,
            "misconfigured-port" => one.misconfigured_port(topo, params, headroom_cells)?,
            "route-override" => one.route_override(topo)?,
            "sm-failure" => one.sm_failure(params, end.is_some())?,
            _ => unreachable!("kinds checked in `check_fields`"),
        };
        if let (Some(e), Some(u)) = (end, undo) {
            out.push(Fault { at, kind, label: label.clone(), ends: false });
            out.push(Fault { at: e, kind: u, label, ends: true });
        } else {
            out.push(Fault { at, kind, label, ends: false });
        }
    }
    Ok(out)
}

/// The `i`th `[[faults]]` entry being compiled.
struct One<'a> {
    c: &'a Ctx<'a>,
    i: usize,
    f: &'a FaultCfg,
    kind: &'a str,
}

impl One<'_> {
    fn field(&self, name: &str) -> String {
        format!("faults[{}].{name}", self.i)
    }

    fn err(&self, name: &str, msg: impl Into<String>) -> ConfigError {
        self.c.err(&self.field(name), msg)
    }

    /// The kind is known and only the optional fields it takes are given.
    fn check_fields(&self) -> Result<(), ConfigError> {
        let f = self.f;
        let allowed: &[&str] = match self.kind {
            "link-down" | "link-up" => &["link"],
            "switch-down" => &["node"],
            "stuck-receiver" => &["node"],
            "slow-receiver" => &["node", "drain_rate", "buffer"],
            "misconfigured-port" => &["port", "pfc", "headroom", "dscp_to_tc"],
            "sm-failure" => &["standby"],
            "route-override" => &["node", "dst", "port"],
            other => {
                return Err(self.err(
                    "kind",
                    format!("unknown fault `{other}`; expected \"link-down\", \"link-up\", \"switch-down\", \"stuck-receiver\", \"slow-receiver\", \"misconfigured-port\", \"route-override\" or \"sm-failure\""),
                ))
            }
        };
        let given = [
            ("link", f.link.is_some()),
            ("node", f.node.is_some()),
            ("port", f.port.is_some()),
            ("drain_rate", f.drain_rate.is_some()),
            ("buffer", f.buffer.is_some()),
            ("pfc", f.pfc.is_some()),
            ("headroom", f.headroom.is_some()),
            ("dscp_to_tc", f.dscp_to_tc.is_some()),
            ("standby", f.standby.is_some()),
            ("dst", f.dst.is_some()),
        ];
        for (name, is) in given {
            if is && !allowed.contains(&name) {
                return Err(self.err(name, format!("a `{}` fault takes only {}", self.kind, allowed.join(", "))));
            }
        }
        Ok(())
    }

    /// A field this kind needs is given.
    fn need(&self, given: bool, name: &str) -> Result<(), ConfigError> {
        if given {
            Ok(())
        } else {
            Err(self.err(name, format!("a `{}` fault needs `{name}`", self.kind)))
        }
    }

    /// `link-down` / `link-up`: one end of a link.
    fn link(&self, topo: &Topology) -> Result<Edge, ConfigError> {
        self.need(self.f.link.is_some(), "link")?;
        let spec = self.f.link.as_deref().expect("checked");
        let pid = named_port(self.c, &self.field("link"), spec, topo)?;
        let up = self.kind == "link-up";
        Ok((FaultKind::Links { ports: vec![pid], up }, Some(FaultKind::Links { ports: vec![pid], up: true }), format!("{} {spec}", self.kind)))
    }

    /// `switch-down`: every cabled port of a switch.
    fn switch_down(&self, topo: &Topology) -> Result<Edge, ConfigError> {
        self.need(self.f.node.is_some(), "node")?;
        let name = self.f.node.as_deref().expect("checked");
        let n = topo.nodes.iter().find(|n| n.name == name).ok_or_else(|| self.err("node", format!("no node `{name}` in the topology")))?;
        if n.kind != NodeKind::Switch {
            return Err(self.err("node", format!("`{name}` is not a switch")));
        }
        let ports: Vec<PortId> = (n.first_port..n.first_port + n.nports).map(PortId).filter(|&p| topo.port(p).peer.is_some()).collect();
        Ok((FaultKind::Links { ports: ports.clone(), up: false }, Some(FaultKind::Links { ports, up: true }), format!("switch-down {name}")))
    }

    /// `stuck-receiver` / `slow-receiver`: a host NIC that drains nothing, or only
    /// `drain_rate`.
    fn receiver(&self, topo: &Topology, params: &Params) -> Result<Edge, ConfigError> {
        let f = self.f;
        self.need(f.node.is_some(), "node")?;
        let name = f.node.as_deref().expect("checked");
        let n = topo.nodes.iter().find(|n| n.name == name).ok_or_else(|| self.err("node", format!("no node `{name}` in the topology")))?;
        let NodeKind::Nic { ep, .. } = n.kind else {
            return Err(self.err("node", format!("`{name}` is not a host NIC")));
        };
        let rx = if self.kind == "stuck-receiver" {
            RxFault { drain_bps: 0, buffer: 0, xoff: 0, xon: 0 }
        } else if params.tech != Tech::Roce {
            // An HCA returns credits while its receive buffer (`buffer`, absent: none
            // beyond the port's VL buffer) has room, then withholds them; there is no
            // pause threshold to set.
            self.need(f.drain_rate.is_some(), "drain_rate")?;
            let rate = f.drain_rate.expect("checked");
            if rate.0 == 0 {
                return Err(self.err("drain_rate", "a receiver that drains nothing is a `stuck-receiver`"));
            }
            RxFault { drain_bps: rate.0, buffer: f.buffer.map_or(0, |b| b.0), xoff: u64::MAX, xon: 0 }
        } else {
            self.slow_roce_nic(topo, params, ep)?
        };
        Ok((FaultKind::NicRx { ep, rx: Some(rx) }, Some(FaultKind::NicRx { ep, rx: None }), format!("{} {name}", self.kind)))
    }

    /// A slow RoCE NIC: it pauses its switch early enough for its own headroom (the IEEE
    /// 802.1Qbb worst case of its link, counted in bytes) and resumes two frames lower.
    fn slow_roce_nic(&self, topo: &Topology, params: &Params, ep: u32) -> Result<RxFault, ConfigError> {
        let f = self.f;
        self.need(f.drain_rate.is_some(), "drain_rate")?;
        self.need(f.buffer.is_some(), "buffer")?;
        let (rate, buffer) = (f.drain_rate.expect("checked"), f.buffer.expect("checked"));
        if rate.0 == 0 {
            return Err(self.err("drain_rate", "a receiver that drains nothing is a `stuck-receiver`"));
        }
        let link = topo.port(topo.port_of(topo.endpoints[ep as usize], 0));
        let max_frame = model::frame::roce_frame(params.encap, Transport::WriteFirst, params.mtu);
        // The NIC counts its backlog in bytes (1-byte cells): the trigger falls inside a
        // frame, like a dynamic one.
        let d = auto_headroom(link.rate, link.prop, max_frame, params.pfc.response, SimDuration::ZERO, Bytes(1), true);
        let headroom = d.cells;
        if buffer.0 < headroom + 2 * max_frame.0 {
            return Err(self.err("buffer", format!("{buffer} is below the NIC's PFC headroom ({headroom} B) plus two frames")));
        }
        let xoff = buffer.0 - headroom;
        Ok(RxFault { drain_bps: rate.0, buffer: buffer.0, xoff, xon: xoff - 2 * max_frame.0 })
    }

    /// `misconfigured-port` (RoCE): PFC off, another headroom, or another DSCP map on one
    /// port.
    fn misconfigured_port(&self, topo: &Topology, params: &Params, headroom_cells: &[u64]) -> Result<Edge, ConfigError> {
        let f = self.f;
        self.need(f.port.is_some(), "port")?;
        if params.tech != Tech::Roce {
            return Err(self.err("kind", "`misconfigured-port` changes PFC, headroom or the DSCP map: RoCEv2 settings (InfiniBand has none to get wrong)"));
        }
        let spec = f.port.as_deref().expect("checked");
        let pid = named_port(self.c, &self.field("port"), spec, topo)?;
        let n = [f.pfc.is_some(), f.headroom.is_some(), f.dscp_to_tc.is_some()].iter().filter(|&&b| b).count();
        if n != 1 {
            return Err(self.err("port", "a `misconfigured-port` fault takes exactly one of `pfc = false`, `headroom`, `dscp_to_tc`"));
        }
        if let Some(p) = f.pfc {
            if p {
                return Err(self.err("pfc", "expected false (PFC off on this port); true is the fabric's own setting"));
            }
            return Ok((FaultKind::PortPfc { port: pid, enabled: false }, Some(FaultKind::PortPfc { port: pid, enabled: true }), format!("PFC off on {spec}")));
        }
        if let Some(h) = f.headroom {
            if !topo.is_switch(topo.port(pid).node) {
                return Err(self.err("headroom", format!("`{spec}` is a NIC port; headroom is a switch ingress setting")));
            }
            let cells = h.cells(params.buffer.cell);
            let before = headroom_cells[pid.0 as usize];
            return Ok((
                FaultKind::PortHeadroom { port: pid, cells },
                Some(FaultKind::PortHeadroom { port: pid, cells: before }),
                format!("headroom {h} on {spec}"),
            ));
        }
        let m = f.dscp_to_tc.as_ref().expect("exactly one of the three is given");
        if !topo.is_switch(topo.port(pid).node) {
            return Err(self.err("dscp_to_tc", format!("`{spec}` is a NIC port; give a switch port (the map it applies to what arrives)")));
        }
        let mut map = params.dscp_to_tc;
        for (k, &tc) in m {
            let d: u8 = k.parse().ok().filter(|&d| d < 64).ok_or_else(|| self.err("dscp_to_tc", format!("`{k}` is not a DSCP (0..63)")))?;
            if tc > 7 {
                return Err(self.err("dscp_to_tc", format!("class {tc} for DSCP {d}: expected 0..7")));
            }
            map[d as usize] = tc;
        }
        Ok((
            FaultKind::PortDscpMap { port: pid, map: Some(Box::new(map)) },
            Some(FaultKind::PortDscpMap { port: pid, map: None }),
            format!("DSCP map changed on {spec}"),
        ))
    }

    /// `route-override`: switch `node` sends everything for host `dst` out of its `port`.
    fn route_override(&self, topo: &Topology) -> Result<Edge, ConfigError> {
        let f = self.f;
        self.need(f.node.is_some(), "node")?;
        self.need(f.dst.is_some(), "dst")?;
        self.need(f.port.is_some(), "port")?;
        let name = f.node.as_deref().expect("checked");
        let sw = topo.nodes.iter().position(|n| n.name == name).ok_or_else(|| self.err("node", format!("no node `{name}` in the topology")))?;
        if topo.nodes[sw].kind != NodeKind::Switch {
            return Err(self.err("node", format!("`{name}` is not a switch")));
        }
        let dst_name = f.dst.as_deref().expect("checked");
        let ep = match topo.nodes.iter().find(|n| n.name == dst_name).map(|n| n.kind) {
            Some(NodeKind::Nic { ep, .. }) => ep,
            _ => return Err(self.err("dst", format!("`{dst_name}` is not a host NIC"))),
        };
        let spec = f.port.as_deref().expect("checked");
        let pid = named_port(self.c, &self.field("port"), spec, topo)?;
        if topo.port(pid).node.0 as usize != sw {
            return Err(self.err("port", format!("`{spec}` is not a port of `{name}`")));
        }
        let node = NodeId(sw as u32);
        Ok((
            FaultKind::RouteOverride { node, dst: ep, port: Some(pid) },
            Some(FaultKind::RouteOverride { node, dst: ep, port: None }),
            format!("route override: {name} sends {dst_name}'s traffic to {spec}"),
        ))
    }

    /// `sm-failure` (InfiniBand): the master subnet manager dies, with or without a
    /// standby to take over. It has no end.
    fn sm_failure(&self, params: &Params, has_end: bool) -> Result<Edge, ConfigError> {
        if params.tech == Tech::Roce {
            return Err(self.err("kind", "`sm-failure` is an InfiniBand fault (a RoCE fabric has no subnet manager)"));
        }
        if has_end {
            return Err(self.err("duration", "an SM failure has no duration: a standby takes over, or nothing does"));
        }
        self.need(self.f.standby.is_some(), "standby")?;
        let standby = self.f.standby.expect("checked");
        Ok((FaultKind::SmFailure { standby }, None, format!("master SM fails ({})", if standby { "a standby runs" } else { "no standby" })))
    }
}
