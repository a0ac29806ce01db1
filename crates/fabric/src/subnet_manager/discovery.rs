//! Subnet discovery: a directed-route breadth-first sweep from the SM's port.
//!
//! Follows OpenSM's heavy sweep (`osm_node_info_rcv.c`, `osm_port_info_rcv.c`): the SM
//! asks its own node for NodeInfo (empty route); every *new* node is asked for
//! NodeDescription, SwitchInfo (switches), and PortInfo — of ports 0..N on a switch, of
//! the port the SMP arrived through on a CA; then, through every switch port whose state is
//! Init or better other than the one the SMP arrived through, the SM extends the route by
//! that port and asks for NodeInfo of whatever is on the other side. A node reached again
//! by another route is recognised by its GUID: only the link is recorded (and, for a CA
//! reached on another port, that port's PortInfo is read). IBTA Vol. 1 §14.2.2 (directed
//! routes, at most 63 hops), §14.2.5 (attributes).
//!
//! The number of SMPs is therefore fixed by the topology: one NodeInfo for the SM's node
//! plus one per (up switch port, except arrival ports) plus the SM's own CA port; one
//! NodeDescription per node; one SwitchInfo per switch; N+1 PortInfo per switch and one
//! per cabled CA port. `tests/sm_discovery.rs` checks this formula.

use std::collections::{HashMap, VecDeque};

use units::BitRate;

use super::mad::{Counted, NodeType, PortState, SmInfo, Smi, SmpCounts};

/// Longest directed route (IBTA Vol. 1 §14.2.2.1: HopCount is 6 bits).
pub const MAX_HOPS: usize = 63;

/// A port as the SM knows it.
#[derive(Clone, Debug, Default)]
pub struct SPort {
    pub guid: u64,
    /// `None` until PortInfo was read.
    pub state: Option<PortState>,
    /// Peer (node index, port number), when the link was followed.
    pub peer: Option<(u32, u8)>,
    pub lid: u16,
    pub lmc: u8,
    pub rate: BitRate,
    pub is_sm: bool,
    pub data_vls: u8,
}

/// A node as the SM knows it.
#[derive(Clone, Debug)]
pub struct SNode {
    pub guid: u64,
    pub sys_guid: u64,
    pub switch: bool,
    pub nports: u8,
    pub desc: String,
    /// The directed route the SM reaches it by.
    pub path: Vec<u8>,
    /// Ports by number, `0..=nports` (CA port 0 unused).
    pub ports: Vec<SPort>,
    /// SwitchInfo.PortStateChange was set (the SM clears it while programming).
    pub port_state_change: bool,
}

/// The SM's picture of the subnet after a sweep.
#[derive(Clone, Debug, Default)]
pub struct Subnet {
    pub nodes: Vec<SNode>,
    pub by_guid: HashMap<u64, u32>,
    /// The SM's own node and port.
    pub sm_node: u32,
    pub sm_port: u8,
    /// Longest directed route used (the sweep's dependency depth).
    pub depth: usize,
    /// Other SMs found behind IsSM ports: (node, port, their SMInfo).
    pub sms: Vec<(u32, u8, SmInfo)>,
    pub smps: SmpCounts,
}

impl Subnet {
    /// Links (each once, from the lower (node, port)), for checks and output.
    pub fn links(&self) -> Vec<((u32, u8), (u32, u8))> {
        let mut v = vec![];
        for (i, n) in self.nodes.iter().enumerate() {
            for (p, port) in n.ports.iter().enumerate() {
                if let Some(peer) = port.peer {
                    let me = (i as u32, p as u8);
                    if me < peer {
                        v.push((me, peer));
                    }
                }
            }
        }
        v
    }
}

/// Sweeps the subnet from the SM's port. `sm_port` is the port the SM uses on its node
/// (0 when it runs on a switch). Nodes that do not answer are simply not found.
pub fn discover(smi: &mut dyn Smi, sm_port: u8) -> Subnet {
    let mut c = Counted::new(smi);
    let mut sub = Subnet { sm_port, ..Default::default() };
    let Ok(me) = c.node_info(&[]) else {
        sub.smps = c.counts;
        return sub;
    };
    let root = add_node(&mut c, &mut sub, me.node_type, me.num_ports, me.node_guid, me.sys_guid, vec![]);
    sub.sm_node = root;
    let mut queue = VecDeque::new();
    if me.node_type == NodeType::Switch {
        read_switch_ports(&mut c, &mut sub, root, me.port_guid);
        queue.push_back((root, 0u8));
    } else {
        read_ca_port(&mut c, &mut sub, root, sm_port, me.port_guid);
        // The SM's CA sends through its port; the node behind it is the first hop.
        if sub.nodes[root as usize].ports[sm_port as usize].state.is_some_and(|s| s >= PortState::Init) {
            probe(&mut c, &mut sub, &mut queue, root, sm_port);
        }
    }
    while let Some((n, arrived)) = queue.pop_front() {
        let nports = sub.nodes[n as usize].nports;
        for p in 1..=nports {
            if p == arrived {
                continue;
            }
            let up = sub.nodes[n as usize].ports[p as usize].state.is_some_and(|s| s >= PortState::Init);
            if up && sub.nodes[n as usize].path.len() < MAX_HOPS {
                probe(&mut c, &mut sub, &mut queue, n, p);
            }
        }
    }
    // Ask every other SM found for its SMInfo (SM election, IBTA Vol. 1 §14.4.1).
    let mut sms = vec![];
    for (i, node) in sub.nodes.iter().enumerate() {
        for (p, port) in node.ports.iter().enumerate() {
            if port.is_sm && (i as u32, p as u8) != (sub.sm_node, sub.sm_port) {
                let path = route_to_port(&sub, i as u32, p as u8);
                if let Ok(info) = c.sm_info(&path) {
                    sms.push((i as u32, p as u8, info));
                }
            }
        }
    }
    sub.sms = sms;
    sub.smps = c.counts;
    sub
}

/// The directed route that reaches (node, port): for a CA port, the route to the switch
/// port facing it plus one hop (so each port of a multi-port CA is addressed through its
/// own link); a switch and the SM's own node are addressed by their own route.
pub fn route_to_port(sub: &Subnet, node: u32, port: u8) -> Vec<u8> {
    let n = &sub.nodes[node as usize];
    if n.switch || n.path.is_empty() {
        return n.path.clone();
    }
    // A CA reached on another port than this one: go through the switch on this port.
    if let Some((sw, sp)) = n.ports[port as usize].peer {
        let mut p = sub.nodes[sw as usize].path.clone();
        p.push(sp);
        return p;
    }
    n.path.clone()
}

fn add_node(c: &mut Counted, sub: &mut Subnet, t: NodeType, nports: u8, guid: u64, sys_guid: u64, path: Vec<u8>) -> u32 {
    let desc = c.node_desc(&path).unwrap_or_default();
    let switch = t == NodeType::Switch;
    let psc = switch && c.switch_info(&path).is_ok_and(|si| si.port_state_change);
    let i = sub.nodes.len() as u32;
    sub.depth = sub.depth.max(path.len());
    sub.nodes.push(SNode { guid, sys_guid, switch, nports, desc, path, ports: vec![SPort::default(); nports as usize + 1], port_state_change: psc });
    sub.by_guid.insert(guid, i);
    i
}

fn read_switch_ports(c: &mut Counted, sub: &mut Subnet, n: u32, guid: u64) {
    let path = sub.nodes[n as usize].path.clone();
    for p in 0..=sub.nodes[n as usize].nports {
        if let Ok(pi) = c.port_info(&path, p) {
            let port = &mut sub.nodes[n as usize].ports[p as usize];
            *port = SPort { guid, state: Some(pi.state), peer: None, lid: pi.lid, lmc: pi.lmc, rate: pi.rate, is_sm: pi.is_sm, data_vls: pi.data_vls };
        }
    }
}

fn read_ca_port(c: &mut Counted, sub: &mut Subnet, n: u32, p: u8, port_guid: u64) {
    let path = sub.nodes[n as usize].path.clone();
    if p as usize >= sub.nodes[n as usize].ports.len() {
        return;
    }
    if let Ok(pi) = c.port_info(&path, p) {
        let port = &mut sub.nodes[n as usize].ports[p as usize];
        let peer = port.peer;
        *port = SPort { guid: port_guid, state: Some(pi.state), peer, lid: pi.lid, lmc: pi.lmc, rate: pi.rate, is_sm: pi.is_sm, data_vls: pi.data_vls };
    }
}

/// NodeInfo through port `p` of node `n`; records the link and queues new switches.
fn probe(c: &mut Counted, sub: &mut Subnet, queue: &mut VecDeque<(u32, u8)>, n: u32, p: u8) {
    let mut path = sub.nodes[n as usize].path.clone();
    path.push(p);
    let Ok(ni) = c.node_info(&path) else { return };
    let peer = match sub.by_guid.get(&ni.node_guid) {
        Some(&known) => {
            let kn = &sub.nodes[known as usize];
            if !kn.switch && (ni.local_port as usize) < kn.ports.len() && kn.ports[ni.local_port as usize].state.is_none() {
                // A known CA reached on another of its ports: read that port. Its route is
                // through this switch port.
                if let Ok(pi) = c.port_info(&path, ni.local_port) {
                    let port = &mut sub.nodes[known as usize].ports[ni.local_port as usize];
                    *port = SPort {
                        guid: ni.port_guid,
                        state: Some(pi.state),
                        peer: None,
                        lid: pi.lid,
                        lmc: pi.lmc,
                        rate: pi.rate,
                        is_sm: pi.is_sm,
                        data_vls: pi.data_vls,
                    };
                }
            }
            known
        }
        None => {
            let new = add_node(c, sub, ni.node_type, ni.num_ports, ni.node_guid, ni.sys_guid, path);
            if ni.node_type == NodeType::Switch {
                read_switch_ports(c, sub, new, ni.port_guid);
                queue.push_back((new, ni.local_port));
            } else {
                read_ca_port(c, sub, new, ni.local_port, ni.port_guid);
            }
            new
        }
    };
    let lp = ni.local_port;
    if (lp as usize) < sub.nodes[peer as usize].ports.len() {
        sub.nodes[n as usize].ports[p as usize].peer = Some((peer, lp));
        sub.nodes[peer as usize].ports[lp as usize].peer = Some((n, p));
    }
}
