//! How a [`Topology`] looks to InfiniBand management: IB nodes with GUIDs, port
//! numbers as the subnet manager sees them, names for output.
//!
//! A fabriclab NIC is one endpoint with one port; an InfiniBand channel adapter (CA) is
//! one node (one NodeGUID) with one or more ports, each with its own PortGUID and LID.
//! Topology-file readers group NICs back into CAs; generated topologies have one CA per
//! NIC. Switch port `i` (0-based in [`Topology`]) is IB port `i + 1`; IB port 0 is the
//! switch's management port (IBTA Vol. 1 §14.2.1, NodeInfo/PortInfo numbering).
//!
//! GUIDs of generated fabrics follow ibsim's allocation (`ibsim/sim_net.c`, `new_node`):
//! switches take consecutive GUIDs from 0x200000, CAs take GUIDs from 0x100000 and reserve
//! `nports + 1` each (port `p` has PortGUID = NodeGUID + p), in the order the nodes are
//! written to an ibsim net file by `scenario::topofile::ibsim::write` — so OpenSM running
//! on ibsim with that file sees exactly the GUIDs this subnet manager uses.

use crate::topology::{NodeId, NodeKind, PortId, Topology};

/// ibsim's first switch GUID (`ibsim/sim_net.c`: `guids[SWITCH_NODE] = 0x200000`).
pub const IBSIM_SWITCH_GUID_BASE: u64 = 0x20_0000;
/// ibsim's first CA GUID (`ibsim/sim_net.c`: `guids[HCA_NODE] = 0x100000`).
pub const IBSIM_CA_GUID_BASE: u64 = 0x10_0000;

/// One InfiniBand node.
#[derive(Clone, Debug)]
pub struct IbNode {
    /// Name as written in the topology file (or the generated name); the key in outputs.
    pub name: String,
    /// NodeDescription (IBTA §14.2.5.2); defaults to the name.
    pub desc: String,
    pub switch: bool,
    pub guid: u64,
    pub sys_guid: u64,
    /// NumPorts of NodeInfo: physical ports, not counting a switch's port 0.
    pub nports: u8,
    /// Topology port behind IB port number `n` (index `n`; index 0 is a switch's
    /// management port and always `None`; unconnected or absent ports are `None`).
    pub ports: Vec<Option<PortId>>,
    /// PortGUID per IB port number (switches: every port carries the NodeGUID).
    pub port_guids: Vec<u64>,
    /// The topology node(s): the switch, or one NIC per cabled CA port.
    pub topo_nodes: Vec<NodeId>,
}

/// The IB view of a topology.
#[derive(Clone, Debug)]
pub struct IbLayout {
    /// IB nodes in file order (the order an ibsim net file lists them).
    pub nodes: Vec<IbNode>,
    /// Per topology port: (IB node index, IB port number).
    pub port_ib: Vec<(u32, u8)>,
    /// Per topology node: IB node index.
    pub node_ib: Vec<u32>,
    /// Where the (first) subnet manager runs: IB node index and port (0 on a switch).
    pub sm: (u32, u8),
    /// Endpoint names for output, per topology endpoint (a CA's name, or `name:port`
    /// when several ports of that CA are cabled).
    pub ep_names: Vec<String>,
}

impl IbLayout {
    /// One CA per NIC (IB port 1), switch port `i` = IB port `i + 1`, ibsim GUIDs in the
    /// order `scenario::topofile::ibsim::write` emits nodes: the SM's node first, then the
    /// topology's node order. The SM runs on endpoint 0's port (on the first switch when
    /// there are no endpoints).
    pub fn synthesize(t: &Topology) -> IbLayout {
        let sm_node = t.endpoints.first().copied().or_else(|| (0..t.nodes.len() as u32).map(NodeId).find(|&n| t.is_switch(n)));
        let order = emit_order(t, sm_node);
        let mut node_ib = vec![0u32; t.nodes.len()];
        let (mut sw_guid, mut ca_guid) = (IBSIM_SWITCH_GUID_BASE, IBSIM_CA_GUID_BASE);
        let mut nodes = Vec::with_capacity(order.len());
        for &n in &order {
            let node = t.node(n);
            let switch = node.kind == NodeKind::Switch;
            let nports = node.nports.min(254) as u8;
            let guid = if switch {
                sw_guid += 1;
                sw_guid - 1
            } else {
                ca_guid += nports as u64 + 1;
                ca_guid - nports as u64 - 1
            };
            let mut ports = vec![None; nports as usize + 1];
            for i in 0..nports as u32 {
                ports[i as usize + 1] = Some(PortId(node.first_port + i));
            }
            let port_guids = (0..=nports as u64).map(|p| if switch { guid } else { guid + p }).collect();
            node_ib[n.0 as usize] = nodes.len() as u32;
            let desc = match node.kind {
                NodeKind::Aggregator { .. } => format!("{} {}", node.name, super::tables::AN_DESC),
                _ => node.name.clone(),
            };
            nodes.push(IbNode { name: node.name.clone(), desc, switch, guid, sys_guid: guid, nports, ports, port_guids, topo_nodes: vec![n] });
        }
        let port_ib = t.ports.iter().map(|p| (node_ib[p.node.0 as usize], p.index as u8 + 1)).collect();
        let sm = match sm_node {
            Some(n) if t.is_switch(n) => (node_ib[n.0 as usize], 0),
            Some(n) => (node_ib[n.0 as usize], 1),
            None => (0, 0),
        };
        let ep_names = t.endpoints.iter().map(|&n| t.node(n).name.clone()).collect();
        IbLayout { nodes, port_ib, node_ib, sm, ep_names }
    }

    /// IB node and port of a topology port.
    pub fn ib_port(&self, p: PortId) -> (u32, u8) {
        self.port_ib[p.0 as usize]
    }

    /// Topology port of (IB node, IB port), if cabled.
    pub fn topo_port(&self, node: u32, port: u8) -> Option<PortId> {
        self.nodes[node as usize].ports.get(port as usize).copied().flatten()
    }

    /// Index of the IB node called `name`.
    pub fn node_by_name(&self, name: &str) -> Option<u32> {
        self.nodes.iter().position(|n| n.name == name).map(|i| i as u32)
    }
}

/// The order in which nodes are written to an ibsim net file (and GUIDs allocated):
/// the SM's node first, then every other node in topology order.
pub fn emit_order(t: &Topology, sm_node: Option<NodeId>) -> Vec<NodeId> {
    let mut v = Vec::with_capacity(t.nodes.len());
    if let Some(s) = sm_node {
        v.push(s);
    }
    v.extend((0..t.nodes.len() as u32).map(NodeId).filter(|&n| Some(n) != sm_node));
    v
}
