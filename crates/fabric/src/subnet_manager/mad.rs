//! The management interface: subnet management packets (SMPs) as the subnet manager sends
//! them, and the subnet management agents (SMAs) of every node that answer them.
//!
//! The subnet manager sees the fabric only through [`Smi`]: SubnGet/SubnSet of NodeInfo,
//! NodeDescription, PortInfo, SwitchInfo, SMInfo and LinearForwardingTable, addressed by a
//! *directed route* — the output port at each hop, starting at the SM's own node (IBTA
//! Vol. 1 §14.2.2, directed-route SMPs; attribute layouts §14.2.5). [`Agents`] implements
//! it over a [`Topology`]: it walks the route hop by hop, refuses to forward through a CA
//! (only switches forward directed-route SMPs, §14.2.2.2) or a dead link (the SMP is lost:
//! the SM sees a timeout), and keeps what the SM programmed — LIDs, port states, the
//! switches' forwarding tables — so the data plane forwards with exactly what was written.
//!
//! Modelled: the attributes' fields the SM uses; port states Down/Init/Armed/Active; SwitchInfo.PortStateChange for light sweeps; SMInfo of
//! every SM for election and polling. Left out: M_Key/SM_Key protection, the MAD wire
//! format (no bytes are built), VL15 buffering and SMP loss other than on dead links.

use units::BitRate;

use super::layout::IbLayout;
use crate::lft::Lft;
use crate::topology::{PortId, Topology};

/// NodeInfo.NodeType (IBTA Vol. 1 §14.2.5.3): 1 channel adapter, 2 switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeType {
    Ca,
    Switch,
}

/// NodeInfo (IBTA Vol. 1 §14.2.5.3), the fields the SM uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeInfo {
    pub node_type: NodeType,
    pub num_ports: u8,
    pub sys_guid: u64,
    pub node_guid: u64,
    pub port_guid: u64,
    /// The port the SMP arrived through (0 for a switch addressed by the empty path).
    pub local_port: u8,
}

/// PortInfo.PortState (IBTA Vol. 1 §14.2.5.6 and the link state machine of §7.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PortState {
    Down,
    Init,
    Armed,
    Active,
}

/// PortInfo (IBTA Vol. 1 §14.2.5.6), the fields the SM uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortInfo {
    pub state: PortState,
    pub lid: u16,
    pub lmc: u8,
    /// CapabilityMask.IsSM: an SM runs behind this port.
    pub is_sm: bool,
    /// Active width in lanes (1, 2, 4, 8, 12).
    pub width: u8,
    /// Active data rate of the link (width × lane rate).
    pub rate: BitRate,
    /// VLCap: number of data VLs the port supports.
    pub data_vls: u8,
}

/// SwitchInfo (IBTA Vol. 1 §14.2.5.4), the fields the SM uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwitchInfo {
    /// LinearFDBCap.
    pub lft_cap: u16,
    /// LinearFDBTop.
    pub lft_top: u16,
    /// PortStateChange: some port changed state since the bit was last cleared.
    pub port_state_change: bool,
}

/// SMInfo.SMState (IBTA Vol. 1 §14.4.1, Table 190).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SmState {
    NotActive,
    Discovering,
    Standby,
    Master,
}

/// SMInfo (IBTA Vol. 1 §14.2.5.13).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SmInfo {
    pub guid: u64,
    pub priority: u8,
    pub state: SmState,
    pub act_count: u32,
}

/// Why an SMP got no answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SmpError {
    /// No response (dead link or node on the route, or a CA asked to forward): the SM's
    /// transaction timer expires.
    #[error("SMP timed out")]
    Timeout,
    /// The attribute does not exist at the addressed node (bad port number, no SM).
    #[error("attribute not supported by the addressed node")]
    Invalid,
}

/// Entries per LinearForwardingTable block (IBTA Vol. 1 §14.2.5.10).
pub const LFT_BLOCK: usize = 64;
/// LFT entry meaning "no route" (OpenSM's OSM_NO_PATH; IBTA: ports above NumPorts drop).
pub const NO_PATH: u8 = 0xFF;
/// Top of the unicast LID range (IBTA Vol. 1 §4.1.3: unicast LIDs 0x0001–0xBFFF).
pub const MAX_UCAST_LID: u16 = 0xBFFF;

/// The management interface the subnet manager talks to. Every call is one SMP.
pub trait Smi {
    fn node_info(&mut self, path: &[u8]) -> Result<NodeInfo, SmpError>;
    fn node_desc(&mut self, path: &[u8]) -> Result<String, SmpError>;
    fn port_info(&mut self, path: &[u8], port: u8) -> Result<PortInfo, SmpError>;
    fn switch_info(&mut self, path: &[u8]) -> Result<SwitchInfo, SmpError>;
    fn sm_info(&mut self, path: &[u8]) -> Result<SmInfo, SmpError>;
    /// SubnSet(PortInfo): LID/LMC (CA ports and switch port 0), SM LID, and port state.
    fn set_port_info(&mut self, path: &[u8], port: u8, lid: u16, lmc: u8, sm_lid: u16, state: PortState) -> Result<(), SmpError>;
    /// SubnSet(SwitchInfo): LinearFDBTop; also clears PortStateChange.
    fn set_switch_info(&mut self, path: &[u8], lft_top: u16) -> Result<(), SmpError>;
    /// SubnSet(LinearForwardingTable) block `block` (LIDs `64·block ..`).
    fn set_lft_block(&mut self, path: &[u8], block: u16, ports: &[u8; LFT_BLOCK]) -> Result<(), SmpError>;
}

/// SMPs sent, by attribute and method.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct SmpCounts {
    pub get_node_info: u64,
    pub get_node_desc: u64,
    pub get_port_info: u64,
    pub get_switch_info: u64,
    pub get_sm_info: u64,
    pub set_port_info: u64,
    pub set_switch_info: u64,
    pub set_lft: u64,
    /// SMPs that got no answer (included in the counts above).
    pub timeouts: u64,
}

impl SmpCounts {
    pub fn total(&self) -> u64 {
        self.get_node_info
            + self.get_node_desc
            + self.get_port_info
            + self.get_switch_info
            + self.get_sm_info
            + self.set_port_info
            + self.set_switch_info
            + self.set_lft
    }
    pub fn add(&mut self, o: &SmpCounts) {
        self.get_node_info += o.get_node_info;
        self.get_node_desc += o.get_node_desc;
        self.get_port_info += o.get_port_info;
        self.get_switch_info += o.get_switch_info;
        self.get_sm_info += o.get_sm_info;
        self.set_port_info += o.set_port_info;
        self.set_switch_info += o.set_switch_info;
        self.set_lft += o.set_lft;
        self.timeouts += o.timeouts;
    }
}

/// An [`Smi`] that counts every SMP sent through it (a decorator around the fabric).
pub struct Counted<'a> {
    pub inner: &'a mut dyn Smi,
    pub counts: SmpCounts,
}

impl<'a> Counted<'a> {
    pub fn new(inner: &'a mut dyn Smi) -> Self {
        Counted { inner, counts: SmpCounts::default() }
    }
    fn note<T>(&mut self, r: Result<T, SmpError>) -> Result<T, SmpError> {
        if r.is_err() {
            self.counts.timeouts += 1;
        }
        r
    }
}

impl Smi for Counted<'_> {
    fn node_info(&mut self, path: &[u8]) -> Result<NodeInfo, SmpError> {
        self.counts.get_node_info += 1;
        let r = self.inner.node_info(path);
        self.note(r)
    }
    fn node_desc(&mut self, path: &[u8]) -> Result<String, SmpError> {
        self.counts.get_node_desc += 1;
        let r = self.inner.node_desc(path);
        self.note(r)
    }
    fn port_info(&mut self, path: &[u8], port: u8) -> Result<PortInfo, SmpError> {
        self.counts.get_port_info += 1;
        let r = self.inner.port_info(path, port);
        self.note(r)
    }
    fn switch_info(&mut self, path: &[u8]) -> Result<SwitchInfo, SmpError> {
        self.counts.get_switch_info += 1;
        let r = self.inner.switch_info(path);
        self.note(r)
    }
    fn sm_info(&mut self, path: &[u8]) -> Result<SmInfo, SmpError> {
        self.counts.get_sm_info += 1;
        let r = self.inner.sm_info(path);
        self.note(r)
    }
    fn set_port_info(&mut self, path: &[u8], port: u8, lid: u16, lmc: u8, sm_lid: u16, state: PortState) -> Result<(), SmpError> {
        self.counts.set_port_info += 1;
        let r = self.inner.set_port_info(path, port, lid, lmc, sm_lid, state);
        self.note(r)
    }
    fn set_switch_info(&mut self, path: &[u8], lft_top: u16) -> Result<(), SmpError> {
        self.counts.set_switch_info += 1;
        let r = self.inner.set_switch_info(path, lft_top);
        self.note(r)
    }
    fn set_lft_block(&mut self, path: &[u8], block: u16, ports: &[u8; LFT_BLOCK]) -> Result<(), SmpError> {
        self.counts.set_lft += 1;
        let r = self.inner.set_lft_block(path, block, ports);
        self.note(r)
    }
}

/// Per-port state an SMA keeps.
#[derive(Clone, Copy, Debug, Default)]
struct PortCfg {
    lid: u16,
    lmc: u8,
    /// Highest state the SM moved the port to (Init until then).
    state: Option<PortState>,
}

/// The subnet management agents of every node of a topology: answers SMPs, keeps what
/// the SM programmed. Failures (dead links, dead nodes) are applied here.
#[derive(Clone, Debug)]
pub struct Agents {
    pub topo: Topology,
    pub layout: IbLayout,
    port_up: Vec<bool>,
    node_alive: Vec<bool>,
    /// Per IB node: index of its port 0 in `cfg`.
    cfg_base: Vec<u32>,
    cfg: Vec<PortCfg>,
    /// Per IB node: programmed LFT (switches only; empty for CAs).
    lft: Vec<Vec<u8>>,
    lft_top: Vec<u16>,
    port_state_change: Vec<bool>,
    /// SMs behind ports: (IB node, port, SMInfo).
    sms: Vec<(u32, u8, SmInfo)>,
    /// VLCap reported by every port (data VLs).
    pub data_vls: u8,
}

/// VLCap of ConnectX HCAs and Quantum switches: VL0–VL7 (IBTA Vol. 1 §14.2.5.6 VLCap = 4
/// means 8 data VLs); OpenSM uses min(VLCap, max_op_vls) (`osm_base.h`:
/// OSM_DEFAULT_MAX_OP_VLS 5 = 15 VLs, so VLCap is the limit).
pub const DEFAULT_DATA_VLS: u8 = 8;

impl Agents {
    pub fn new(topo: Topology, layout: IbLayout) -> Agents {
        let mut cfg_base = Vec::with_capacity(layout.nodes.len());
        let mut n = 0u32;
        for node in &layout.nodes {
            cfg_base.push(n);
            n += node.nports as u32 + 1;
        }
        let nn = layout.nodes.len();
        let lft = layout.nodes.iter().map(|_| Vec::new()).collect();
        Agents {
            port_up: vec![true; topo.ports.len()],
            node_alive: vec![true; nn],
            cfg_base,
            cfg: vec![PortCfg::default(); n as usize],
            lft,
            lft_top: vec![0; nn],
            port_state_change: vec![false; nn],
            sms: vec![],
            data_vls: DEFAULT_DATA_VLS,
            topo,
            layout,
        }
    }

    /// An SM's view of the fabric from IB node `node`, port `port` (0 on a switch).
    pub fn at(&mut self, node: u32, port: u8) -> SmPort<'_> {
        SmPort { agents: self, at: (node, port) }
    }

    /// Takes a topology port (and so its link) down or up. Both switches at the ends see
    /// PortStateChange.
    pub fn set_port_up(&mut self, p: PortId, up: bool) {
        self.port_up[p.0 as usize] = up;
        self.mark_change(p);
        self.retrain(p);
        if let Some(peer) = self.topo.port(p).peer {
            self.mark_change(peer);
            self.retrain(peer);
        }
    }

    /// A link that went down comes back in Init: the SM must activate it again
    /// (IBTA Vol. 1 §7.2, link state machine).
    fn retrain(&mut self, p: PortId) {
        let (n, port) = self.layout.ib_port(p);
        self.cfg_mut(n, port).state = None;
    }

    fn mark_change(&mut self, p: PortId) {
        let (n, _) = self.layout.ib_port(p);
        if self.layout.nodes[n as usize].switch {
            self.port_state_change[n as usize] = true;
        }
    }

    /// Kills (or revives) an IB node: it answers nothing and its links go down.
    pub fn set_node_alive(&mut self, node: u32, alive: bool) {
        self.node_alive[node as usize] = alive;
        let ports: Vec<PortId> = self.layout.nodes[node as usize].ports.iter().flatten().copied().collect();
        for p in ports {
            self.mark_change(p);
            if let Some(peer) = self.topo.port(p).peer {
                self.mark_change(peer);
            }
        }
    }

    pub fn node_alive(&self, node: u32) -> bool {
        self.node_alive[node as usize]
    }

    /// Publishes the SMInfo of an SM behind (node, port) (`None` removes it).
    pub fn publish_sm(&mut self, node: u32, port: u8, info: Option<SmInfo>) {
        self.sms.retain(|s| (s.0, s.1) != (node, port));
        if let Some(i) = info {
            self.sms.push((node, port, i));
        }
    }

    /// Whether a topology port's link carries traffic: both ports up, both nodes alive.
    pub fn link_up(&self, p: PortId) -> bool {
        let Some(peer) = self.topo.port(p).peer else { return false };
        let (a, _) = self.layout.ib_port(p);
        let (b, _) = self.layout.ib_port(peer);
        self.port_up[p.0 as usize] && self.port_up[peer.0 as usize] && self.node_alive[a as usize] && self.node_alive[b as usize]
    }

    /// The LID programmed on IB node `node`'s port (port 0 for a switch).
    pub fn port_lid(&self, node: u32, port: u8) -> (u16, u8) {
        let c = self.cfg[(self.cfg_base[node as usize] + port as u32) as usize];
        (c.lid, c.lmc)
    }

    /// The programmed LFT of IB switch `node` (LID-indexed, [`NO_PATH`] where unset).
    pub fn switch_lft(&self, node: u32) -> &[u8] {
        &self.lft[node as usize]
    }

    /// The data-plane forwarding table for LID offset `k` (0 = base LIDs): for every
    /// switch and endpoint, the output port the programmed LFT gives for the endpoint's
    /// base LID + k (IBTA Vol. 1 §7.11.1: DLID → LFT lookup). Endpoints without a LID, and
    /// entries pointing at a port that does not exist, are unset.
    pub fn data_plane_lft(&self, k: u16) -> Lft {
        let t = &self.topo;
        let mut out = Lft::new(t);
        let ep_lid: Vec<u16> = (0..t.endpoints.len() as u32)
            .map(|ep| {
                let (n, p) = self.layout.ib_port(t.ep_port(ep));
                let (lid, lmc) = self.port_lid(n, p);
                if lid == 0 || k >= 1 << lmc {
                    0
                } else {
                    lid + k
                }
            })
            .collect();
        for (i, node) in self.layout.nodes.iter().enumerate() {
            if !node.switch {
                continue;
            }
            let sw = node.topo_nodes[0];
            let table = &self.lft[i];
            for (ep, &lid) in ep_lid.iter().enumerate() {
                if lid == 0 || lid as usize >= table.len() {
                    continue;
                }
                let port = table[lid as usize];
                if port == NO_PATH || port == 0 {
                    continue;
                }
                out.set(sw, ep as u32, self.layout.topo_port(i as u32, port));
            }
        }
        out
    }

    /// Walks a directed route from (node, port). Returns the node reached and the port it
    /// was entered through.
    fn walk(&self, from: (u32, u8), path: &[u8]) -> Result<(u32, u8), SmpError> {
        let (mut node, mut arrived) = from;
        if !self.node_alive[node as usize] {
            return Err(SmpError::Timeout);
        }
        for (hop, &out) in path.iter().enumerate() {
            let n = &self.layout.nodes[node as usize];
            // The SM's own CA sends through its port; beyond it only switches forward.
            if hop > 0 && !n.switch {
                return Err(SmpError::Timeout);
            }
            if hop == 0 && !n.switch && out != from.1 {
                return Err(SmpError::Invalid);
            }
            let p = self.layout.topo_port(node, out).ok_or(SmpError::Timeout)?;
            if !self.link_up(p) {
                return Err(SmpError::Timeout);
            }
            let peer = self.topo.port(p).peer.expect("link_up implies a peer");
            (node, arrived) = self.layout.ib_port(peer);
        }
        Ok((node, arrived))
    }

    fn cfg_mut(&mut self, node: u32, port: u8) -> &mut PortCfg {
        let i = (self.cfg_base[node as usize] + port as u32) as usize;
        &mut self.cfg[i]
    }
}

/// One SM's handle on the fabric: [`Smi`] with directed routes starting at its port.
pub struct SmPort<'a> {
    agents: &'a mut Agents,
    at: (u32, u8),
}

impl Smi for SmPort<'_> {
    fn node_info(&mut self, path: &[u8]) -> Result<NodeInfo, SmpError> {
        let (n, arrived) = self.agents.walk(self.at, path)?;
        let node = &self.agents.layout.nodes[n as usize];
        let port_guid = if node.switch { node.guid } else { node.port_guids[arrived as usize] };
        Ok(NodeInfo {
            node_type: if node.switch { NodeType::Switch } else { NodeType::Ca },
            num_ports: node.nports,
            sys_guid: node.sys_guid,
            node_guid: node.guid,
            port_guid,
            local_port: arrived,
        })
    }

    fn node_desc(&mut self, path: &[u8]) -> Result<String, SmpError> {
        let (n, _) = self.agents.walk(self.at, path)?;
        Ok(self.agents.layout.nodes[n as usize].desc.clone())
    }

    fn port_info(&mut self, path: &[u8], port: u8) -> Result<PortInfo, SmpError> {
        let (n, _) = self.agents.walk(self.at, path)?;
        let a = &*self.agents;
        let node = &a.layout.nodes[n as usize];
        if port > node.nports || (!node.switch && port == 0) {
            return Err(SmpError::Invalid);
        }
        let cfg = a.cfg[(a.cfg_base[n as usize] + port as u32) as usize];
        let is_sm = a.sms.iter().any(|s| (s.0, s.1) == (n, port));
        if node.switch && port == 0 {
            // The management port is always up; it holds the switch's LID.
            return Ok(PortInfo { state: PortState::Active, lid: cfg.lid, lmc: cfg.lmc, is_sm, width: 0, rate: BitRate(0), data_vls: a.data_vls });
        }
        let tp = node.ports[port as usize];
        let up = tp.is_some_and(|p| a.link_up(p));
        let state = if !up { PortState::Down } else { cfg.state.unwrap_or(PortState::Init) };
        let rate = tp.map_or(BitRate(0), |p| a.topo.port(p).rate);
        Ok(PortInfo { state, lid: cfg.lid, lmc: cfg.lmc, is_sm, width: 4, rate, data_vls: a.data_vls })
    }

    fn switch_info(&mut self, path: &[u8]) -> Result<SwitchInfo, SmpError> {
        let (n, _) = self.agents.walk(self.at, path)?;
        if !self.agents.layout.nodes[n as usize].switch {
            return Err(SmpError::Invalid);
        }
        Ok(SwitchInfo { lft_cap: MAX_UCAST_LID + 1, lft_top: self.agents.lft_top[n as usize], port_state_change: self.agents.port_state_change[n as usize] })
    }

    fn sm_info(&mut self, path: &[u8]) -> Result<SmInfo, SmpError> {
        let (n, arrived) = self.agents.walk(self.at, path)?;
        let node = &self.agents.layout.nodes[n as usize];
        let port = if node.switch { 0 } else { arrived };
        self.agents.sms.iter().find(|s| (s.0, s.1) == (n, port)).map(|s| s.2).ok_or(SmpError::Invalid)
    }

    fn set_port_info(&mut self, path: &[u8], port: u8, lid: u16, lmc: u8, _sm_lid: u16, state: PortState) -> Result<(), SmpError> {
        let (n, _) = self.agents.walk(self.at, path)?;
        let node = &self.agents.layout.nodes[n as usize];
        if port > node.nports || (!node.switch && port == 0) {
            return Err(SmpError::Invalid);
        }
        let switch = node.switch;
        let c = self.agents.cfg_mut(n, port);
        // Switch ports 1..N carry no LID (IBTA §14.2.5.6: LID is valid on CA ports and
        // switch port 0 only).
        if !switch || port == 0 {
            c.lid = lid;
            c.lmc = lmc;
        }
        if state >= PortState::Armed {
            c.state = Some(state);
        }
        Ok(())
    }

    fn set_switch_info(&mut self, path: &[u8], lft_top: u16) -> Result<(), SmpError> {
        let (n, _) = self.agents.walk(self.at, path)?;
        if !self.agents.layout.nodes[n as usize].switch {
            return Err(SmpError::Invalid);
        }
        self.agents.lft_top[n as usize] = lft_top;
        self.agents.port_state_change[n as usize] = false;
        let t = &mut self.agents.lft[n as usize];
        let want = lft_top as usize + 1;
        if t.len() < want {
            t.resize(want, NO_PATH);
        } else {
            t.truncate(want);
        }
        Ok(())
    }

    fn set_lft_block(&mut self, path: &[u8], block: u16, ports: &[u8; LFT_BLOCK]) -> Result<(), SmpError> {
        let (n, _) = self.agents.walk(self.at, path)?;
        if !self.agents.layout.nodes[n as usize].switch {
            return Err(SmpError::Invalid);
        }
        let base = block as usize * LFT_BLOCK;
        let t = &mut self.agents.lft[n as usize];
        if t.len() < base + LFT_BLOCK {
            t.resize(base + LFT_BLOCK, NO_PATH);
        }
        t[base..base + LFT_BLOCK].copy_from_slice(ports);
        Ok(())
    }
}
