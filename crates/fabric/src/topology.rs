//! Fabric topology: nodes (switches and NIC endpoints), ports and point-to-point links.
//!
//! A host with several NICs (rails) is several endpoints that share a host index; each
//! NIC has one port cabled to its own leaf. Ports are numbered densely across the whole
//! fabric; each node owns a contiguous range. Generators build 2-tier leaf-spine (with
//! rails and parallel uplinks) and k-ary fat trees (Al-Fares et al., SIGCOMM 2008);
//! an explicit list of nodes and links covers everything else.
//!
//! A SHARP aggregation node (AN) is an endpoint inside a switch
//! ([`Topology::with_aggregation_nodes`]): NVIDIA's Quantum switches expose theirs as a
//! channel adapter on an internal switch port, which the subnet manager gives a LID and
//! routes to like any CA (NVIDIA SHARP documentation, "SHARP Aggregation Node"). Here it
//! is a one-port endpoint on an extra, last port of its switch, with no cable. Its port
//! is faster than the switch's others, which does not make a cut-through switch
//! store-and-forward (the simulator leaves AN ports out of that check); so a packet cut
//! through onto it may reach the AN up to one serialisation early, as latency only (the
//! input link still paces the stream).

use units::{BitRate, SimDuration};

/// A node (switch or NIC endpoint), numbered densely in the order nodes were added.
/// Serialises as its number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
#[repr(transparent)]
pub struct NodeId(pub u32);

/// A port, numbered densely across the whole fabric (each node owns a contiguous range).
/// Serialises as its number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
#[repr(transparent)]
pub struct PortId(pub u32);

impl NodeId {
    /// Its index into per-node arrays.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

impl PortId {
    /// Its index into per-port arrays.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Switch,
    /// One NIC: endpoint index, host index, rail.
    Nic {
        ep: u32,
        host: u32,
        rail: u32,
    },
    /// A SHARP aggregation node: endpoint index and the switch it lives in.
    Aggregator {
        ep: u32,
        switch: NodeId,
    },
}

#[derive(Clone, Debug)]
pub struct Node {
    pub name: String,
    pub kind: NodeKind,
    /// Ports `first_port .. first_port + nports`.
    pub first_port: u32,
    pub nports: u32,
    /// Tier for generated fabrics (0 = NIC, 1 = leaf/edge, 2 = spine/agg, 3 = core).
    pub tier: u8,
}

#[derive(Clone, Copy, Debug)]
pub struct Port {
    pub node: NodeId,
    /// Port number on its node, as written in the topology (0-based here).
    pub index: u32,
    pub peer: Option<PortId>,
    pub rate: BitRate,
    /// One-way propagation delay of the attached cable.
    pub prop: SimDuration,
}

#[derive(Clone, Debug, Default)]
pub struct Topology {
    pub nodes: Vec<Node>,
    pub ports: Vec<Port>,
    /// Endpoint index → NIC node.
    pub endpoints: Vec<NodeId>,
    pub hosts: u32,
}

/// How big a topology is, for the memory estimate checked before building one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Size {
    pub nodes: u128,
    pub ports: u128,
    pub endpoints: u128,
}

impl Size {
    /// The size of a built topology.
    pub fn of(t: &Topology) -> Size {
        Size { nodes: t.nodes.len() as u128, ports: t.ports.len() as u128, endpoints: t.endpoints.len() as u128 }
    }

    /// Node and port ids are 32 bits ([`NodeId`], [`PortId`]): a fabric with more nodes or
    /// ports cannot be built, and is refused before anything counts or multiplies them.
    pub fn check(&self) -> Result<(), TopoError> {
        let max = u32::MAX as u128;
        if self.nodes > max || self.ports > max {
            return Err(TopoError::Invalid(format!(
                "the fabric would have {} nodes and {} ports; at most {max} of each (node and port ids are 32 bits)",
                self.nodes, self.ports
            )));
        }
        Ok(())
    }
}

/// A link to build: `(node, port index)` on each side.
#[derive(Clone, Copy, Debug)]
pub struct LinkSpec {
    pub a: (NodeId, u32),
    pub b: (NodeId, u32),
    pub rate: BitRate,
    pub prop: SimDuration,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TopoError {
    #[error("port {port} of `{node}` is used by two links")]
    PortTwice { node: String, port: u32 },
    #[error("`{node}` has {nports} ports; port {port} does not exist")]
    NoSuchPort { node: String, port: u32, nports: u32 },
    #[error("NIC `{0}` is not cabled to a switch")]
    NicUncabled(String),
    #[error("{0}")]
    Invalid(String),
}

impl Topology {
    pub fn add_switch(&mut self, name: String, nports: u32, tier: u8) -> NodeId {
        self.add_node(name, NodeKind::Switch, nports, tier)
    }

    pub fn add_nic(&mut self, name: String, host: u32, rail: u32) -> NodeId {
        let ep = self.endpoints.len() as u32;
        let id = self.add_node(name, NodeKind::Nic { ep, host, rail }, 1, 0);
        self.endpoints.push(id);
        self.hosts = self.hosts.max(host + 1);
        id
    }

    fn add_node(&mut self, name: String, kind: NodeKind, nports: u32, tier: u8) -> NodeId {
        let id = NodeId(self.nodes.len() as u32);
        let first = self.ports.len() as u32;
        for index in 0..nports {
            self.ports.push(Port { node: id, index, peer: None, rate: BitRate(0), prop: SimDuration::ZERO });
        }
        self.nodes.push(Node { name, kind, first_port: first, nports, tier });
        id
    }

    pub fn port_of(&self, node: NodeId, index: u32) -> PortId {
        PortId(self.nodes[node.0 as usize].first_port + index)
    }

    pub fn connect(&mut self, l: LinkSpec) -> Result<(), TopoError> {
        let mut ids = [PortId(0); 2];
        for (k, (n, p)) in [l.a, l.b].into_iter().enumerate() {
            let node = &self.nodes[n.0 as usize];
            if p >= node.nports {
                return Err(TopoError::NoSuchPort { node: node.name.clone(), port: p, nports: node.nports });
            }
            let id = self.port_of(n, p);
            if self.ports[id.0 as usize].peer.is_some() {
                return Err(TopoError::PortTwice { node: node.name.clone(), port: p });
            }
            ids[k] = id;
        }
        if ids[0] == ids[1] {
            return Err(TopoError::Invalid("a link cannot join a port to itself".into()));
        }
        for (me, other) in [(ids[0], ids[1]), (ids[1], ids[0])] {
            let p = &mut self.ports[me.0 as usize];
            p.peer = Some(other);
            p.rate = l.rate;
            p.prop = l.prop;
        }
        Ok(())
    }

    pub fn node(&self, n: NodeId) -> &Node {
        &self.nodes[n.0 as usize]
    }
    pub fn port(&self, p: PortId) -> &Port {
        &self.ports[p.0 as usize]
    }
    /// "node:port" (0-based), as scenario files, reports and CSV files name ports.
    pub fn port_name(&self, p: PortId) -> String {
        let pt = self.port(p);
        format!("{}:{}", self.node(pt.node).name, pt.index)
    }
    pub fn is_switch(&self, n: NodeId) -> bool {
        matches!(self.nodes[n.0 as usize].kind, NodeKind::Switch)
    }
    /// Whether `p` is the internal switch port of an aggregation node, or the node's own.
    pub fn is_aggregator_port(&self, p: PortId) -> bool {
        let pt = self.port(p);
        [Some(pt.node), pt.peer.map(|q| self.port(q).node)].into_iter().flatten().any(|n| matches!(self.node(n).kind, NodeKind::Aggregator { .. }))
    }
    /// The aggregation node of switch `sw`, as an endpoint index.
    pub fn aggregator_of(&self, sw: NodeId) -> Option<u32> {
        let n = self.node(sw);
        let last = n.nports.checked_sub(1)?;
        let peer = self.port(self.port_of(sw, last)).peer?;
        match self.node(self.port(peer).node).kind {
            NodeKind::Aggregator { ep, .. } => Some(ep),
            _ => None,
        }
    }

    /// This topology with a SHARP aggregation node in every switch: each switch gets one
    /// more port (the last), cabled with no propagation delay to a one-port aggregation
    /// endpoint. Node ids, NIC endpoint indices and port numbers within a node are kept;
    /// aggregation endpoints come after every NIC. The internal port's rate is the sum of
    /// the switch's other ports' rates: an AN can take every port's data at line rate at
    /// once, so it never limits a tree (SHARPv2 aggregates at wire speed, Hot
    /// Interconnects 2020; the number of trees and of concurrent streams an ASIC supports
    /// is not modelled).
    pub fn with_aggregation_nodes(&self) -> Result<Topology, TopoError> {
        if self.nodes.iter().any(|n| matches!(n.kind, NodeKind::Aggregator { .. })) {
            return Err(TopoError::Invalid("the topology already has aggregation nodes".into()));
        }
        let mut t = Topology::default();
        for n in &self.nodes {
            match n.kind {
                NodeKind::Switch => t.add_switch(n.name.clone(), n.nports + 1, n.tier),
                NodeKind::Nic { host, rail, .. } => t.add_nic(n.name.clone(), host, rail),
                NodeKind::Aggregator { .. } => unreachable!("refused above"),
            };
        }
        for (i, p) in self.ports.iter().enumerate() {
            let Some(q) = p.peer else { continue };
            if (q.0 as usize) < i {
                continue;
            }
            let other = self.port(q);
            t.connect(LinkSpec { a: (p.node, p.index), b: (other.node, other.index), rate: p.rate, prop: p.prop })?;
        }
        for (i, n) in self.nodes.iter().enumerate() {
            if n.kind != NodeKind::Switch {
                continue;
            }
            let sw = NodeId(i as u32);
            let rate = (n.first_port..n.first_port + n.nports).map(|pi| &self.ports[pi as usize]).filter(|p| p.peer.is_some()).map(|p| p.rate.0).sum();
            let ep = t.endpoints.len() as u32;
            let an = t.add_node(format!("{}.an", n.name), NodeKind::Aggregator { ep, switch: sw }, 1, 0);
            t.endpoints.push(an);
            t.connect(LinkSpec { a: (an, 0), b: (sw, n.nports), rate: BitRate(rate), prop: SimDuration::ZERO })?;
        }
        Ok(t)
    }
    /// The NIC port of endpoint `ep`.
    pub fn ep_port(&self, ep: u32) -> PortId {
        PortId(self.nodes[self.endpoints[ep as usize].0 as usize].first_port)
    }

    /// Checks that every NIC is cabled to a switch.
    pub fn check(&self) -> Result<(), TopoError> {
        for &n in &self.endpoints {
            let p = self.port(self.port_of(n, 0));
            match p.peer {
                Some(peer) if self.is_switch(self.port(peer).node) => {}
                _ => return Err(TopoError::NicUncabled(self.node(n).name.clone())),
            }
        }
        Ok(())
    }

    /// Nodes, ports and endpoints [`Topology::leaf_spine`] would build, counted without
    /// building it (`u128`: no input overflows the count).
    pub fn leaf_spine_size(leaves: u32, spines: u32, hosts_per_leaf: u32, uplinks: u32) -> Size {
        let (l, s, h, u) = (leaves as u128, spines as u128, hosts_per_leaf as u128, uplinks as u128);
        // Every leaf has one NIC per host port (rails spread hosts' NICs over leaves).
        let nics = l * h;
        Size { nodes: l + s + nics, ports: l * (h + s * u) + s * l * u + nics, endpoints: nics }
    }

    /// 2-tier leaf-spine. `rails` NICs per host, NIC r of a host on leaf `group·rails + r`;
    /// each leaf has `uplinks` parallel links to every spine.
    #[allow(clippy::too_many_arguments)]
    pub fn leaf_spine(
        leaves: u32,
        spines: u32,
        hosts_per_leaf: u32,
        rails: u32,
        uplinks: u32,
        host: (BitRate, SimDuration),
        fabric: (BitRate, SimDuration),
    ) -> Result<Topology, TopoError> {
        if leaves == 0 || spines == 0 || hosts_per_leaf == 0 || rails == 0 || uplinks == 0 {
            return Err(TopoError::Invalid("leaves, spines, hosts_per_leaf, rails and uplinks must be at least 1".into()));
        }
        if !leaves.is_multiple_of(rails) {
            return Err(TopoError::Invalid(format!(
                "leaves ({leaves}) must be a multiple of nics_per_host ({rails}): each NIC of a host is cabled to its own leaf"
            )));
        }
        // Every product below is at most the fabric's port count, which fits 32 bits.
        Self::leaf_spine_size(leaves, spines, hosts_per_leaf, uplinks).check()?;
        let mut t = Topology::default();
        let leaf_ids: Vec<NodeId> = (0..leaves).map(|l| t.add_switch(format!("leaf{l}"), hosts_per_leaf + spines * uplinks, 1)).collect();
        let spine_ids: Vec<NodeId> = (0..spines).map(|s| t.add_switch(format!("spine{s}"), leaves * uplinks, 2)).collect();
        let groups = leaves / rails;
        for g in 0..groups {
            for j in 0..hosts_per_leaf {
                let h = g * hosts_per_leaf + j;
                for r in 0..rails {
                    let name = if rails == 1 { format!("h{h}") } else { format!("h{h}-nic{r}") };
                    let nic = t.add_nic(name, h, r);
                    let leaf = leaf_ids[(g * rails + r) as usize];
                    t.connect(LinkSpec { a: (nic, 0), b: (leaf, j), rate: host.0, prop: host.1 })?;
                }
            }
        }
        for (l, &leaf) in leaf_ids.iter().enumerate() {
            for (s, &spine) in spine_ids.iter().enumerate() {
                for u in 0..uplinks {
                    t.connect(LinkSpec {
                        a: (leaf, hosts_per_leaf + s as u32 * uplinks + u),
                        b: (spine, l as u32 * uplinks + u),
                        rate: fabric.0,
                        prop: fabric.1,
                    })?;
                }
            }
        }
        Ok(t)
    }

    /// Nodes, ports and endpoints [`Topology::fat_tree`] would build, counted without
    /// building it.
    pub fn fat_tree_size(k: u32) -> Size {
        let k = k as u128;
        let h = k / 2;
        let switches = k * k + h * h;
        let hosts = k * h * h;
        Size { nodes: switches + hosts, ports: switches * k + hosts, endpoints: hosts }
    }

    /// k-ary fat tree: k pods of k/2 edge and k/2 aggregation switches, (k/2)² cores,
    /// k³/4 hosts (Al-Fares et al., SIGCOMM 2008, §3).
    pub fn fat_tree(k: u32, host: (BitRate, SimDuration), fabric: (BitRate, SimDuration)) -> Result<Topology, TopoError> {
        if k < 2 || !k.is_multiple_of(2) {
            return Err(TopoError::Invalid(format!("fat-tree k must be an even number ≥ 2, got {k}")));
        }
        // Every product below is at most the fabric's port count, which fits 32 bits.
        Self::fat_tree_size(k).check()?;
        let h = k / 2;
        let mut t = Topology::default();
        let mut edges = vec![];
        let mut aggs = vec![];
        for p in 0..k {
            for e in 0..h {
                edges.push(t.add_switch(format!("edge{p}-{e}"), k, 1));
            }
            for a in 0..h {
                aggs.push(t.add_switch(format!("agg{p}-{a}"), k, 2));
            }
        }
        let cores: Vec<NodeId> = (0..h * h).map(|c| t.add_switch(format!("core{c}"), k, 3)).collect();
        for (ei, &edge) in edges.iter().enumerate() {
            for j in 0..h {
                let hid = ei as u32 * h + j;
                let nic = t.add_nic(format!("h{hid}"), hid, 0);
                t.connect(LinkSpec { a: (nic, 0), b: (edge, j), rate: host.0, prop: host.1 })?;
            }
        }
        for p in 0..k {
            for e in 0..h {
                for a in 0..h {
                    t.connect(LinkSpec { a: (edges[(p * h + e) as usize], h + a), b: (aggs[(p * h + a) as usize], e), rate: fabric.0, prop: fabric.1 })?;
                }
            }
            for a in 0..h {
                for c in 0..h {
                    // Aggregation switch a of every pod connects to cores a·h .. a·h + h.
                    t.connect(LinkSpec { a: (aggs[(p * h + a) as usize], h + c), b: (cores[(a * h + c) as usize], p), rate: fabric.0, prop: fabric.1 })?;
                }
            }
        }
        Ok(t)
    }
}

impl Topology {
    /// A ring of `switches` switches, each with `hosts_per_switch` NICs on ports
    /// `0..h`, port `h` cabled to the next switch and port `h + 1` to the previous one.
    /// Rings and tori are the classic topologies whose shortest-path routes have cyclic
    /// channel dependencies (Dally & Seitz, IEEE Trans. Computers 1987), so they exercise
    /// the subnet manager's deadlock-free engines.
    pub fn ring(switches: u32, hosts_per_switch: u32, host: (BitRate, SimDuration), fabric: (BitRate, SimDuration)) -> Result<Topology, TopoError> {
        if switches < 3 {
            return Err(TopoError::Invalid(format!("a ring needs at least 3 switches, got {switches}")));
        }
        let h = hosts_per_switch;
        let mut t = Topology::default();
        let sw: Vec<NodeId> = (0..switches).map(|i| t.add_switch(format!("sw{i}"), h + 2, 1)).collect();
        for (i, &s) in sw.iter().enumerate() {
            for j in 0..h {
                let hid = i as u32 * h + j;
                let nic = t.add_nic(format!("h{hid}"), hid, 0);
                t.connect(LinkSpec { a: (nic, 0), b: (s, j), rate: host.0, prop: host.1 })?;
            }
        }
        for i in 0..switches as usize {
            let next = sw[(i + 1) % switches as usize];
            t.connect(LinkSpec { a: (sw[i], h), b: (next, h + 1), rate: fabric.0, prop: fabric.1 })?;
        }
        Ok(t)
    }

    /// A 2-D torus of `x × y` switches named `sw{i}-{j}`, each with `hosts_per_switch`
    /// NICs on ports `0..h`; ports `h, h+1, h+2, h+3` go to the `+x, −x, +y, −y`
    /// neighbours (with wrap-around). A dimension of size 2 gives two parallel links.
    pub fn torus_2d(x: u32, y: u32, hosts_per_switch: u32, host: (BitRate, SimDuration), fabric: (BitRate, SimDuration)) -> Result<Topology, TopoError> {
        if x < 2 || y < 2 {
            return Err(TopoError::Invalid(format!("a 2-D torus needs at least 2 switches per dimension, got {x}×{y}")));
        }
        let h = hosts_per_switch;
        let mut t = Topology::default();
        let id = |i: u32, j: u32| (j * x + i) as usize;
        let mut sw = Vec::with_capacity((x * y) as usize);
        for j in 0..y {
            for i in 0..x {
                sw.push(t.add_switch(format!("sw{i}-{j}"), h + 4, 1));
            }
        }
        for (k, &s) in sw.iter().enumerate() {
            for n in 0..h {
                let hid = k as u32 * h + n;
                let nic = t.add_nic(format!("h{hid}"), hid, 0);
                t.connect(LinkSpec { a: (nic, 0), b: (s, n), rate: host.0, prop: host.1 })?;
            }
        }
        for j in 0..y {
            for i in 0..x {
                let here = sw[id(i, j)];
                t.connect(LinkSpec { a: (here, h), b: (sw[id((i + 1) % x, j)], h + 1), rate: fabric.0, prop: fabric.1 })?;
                t.connect(LinkSpec { a: (here, h + 2), b: (sw[id(i, (j + 1) % y)], h + 3), rate: fabric.0, prop: fabric.1 })?;
            }
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const L: (BitRate, SimDuration) = (BitRate::from_gbps(100), SimDuration::from_ns(5));

    #[test]
    fn fat_tree_counts() {
        for k in [4, 8, 16] {
            let t = Topology::fat_tree(k, L, L).unwrap();
            let sw = t.nodes.iter().filter(|n| n.kind == NodeKind::Switch).count() as u32;
            assert_eq!(t.endpoints.len() as u32, k * k * k / 4);
            assert_eq!(sw, 5 * k * k / 4);
            assert!(t.ports.iter().all(|p| p.peer.is_some()), "every port cabled");
            t.check().unwrap();
        }
    }

    #[test]
    fn sizes_counted_without_building_match_the_built_ones() {
        for k in [2, 4, 8] {
            assert_eq!(Topology::fat_tree_size(k), Size::of(&Topology::fat_tree(k, L, L).unwrap()), "k = {k}");
        }
        for (l, s, h, r, u) in [(4, 2, 8, 1, 1), (8, 4, 3, 2, 2), (6, 1, 1, 3, 4)] {
            let t = Topology::leaf_spine(l, s, h, r, u, L, L).unwrap();
            assert_eq!(Topology::leaf_spine_size(l, s, h, u), Size::of(&t), "{l} leaves, {s} spines, {h} hosts/leaf, {r} rails, {u} uplinks");
        }
        // The fuzz-found 65,536-leaf fabric is counted, not built.
        assert_eq!(Topology::leaf_spine_size(65_536, 65_536, 65_536, 65_536).endpoints, 1 << 32);
    }

    #[test]
    fn port_ids_past_32_bits_are_refused() {
        // 65536 spines × 65536 uplinks: each leaf would have 2^32 + 1 ports.
        let e = Topology::leaf_spine(1, 65536, 1, 1, 65536, L, L).unwrap_err();
        assert!(e.to_string().starts_with("the fabric would have 65538 nodes and 8589934594 ports; at most 4294967295 of each"), "{e}");
        // A k-ary fat tree has 1.5 k³ ports: k = 1420 is the largest that fits.
        assert!(Topology::fat_tree_size(1420).check().is_ok());
        assert!(Topology::fat_tree(1422, L, L).unwrap_err().to_string().contains("(node and port ids are 32 bits)"));
    }

    #[test]
    fn leaf_spine_rails() {
        let t = Topology::leaf_spine(4, 2, 8, 2, 1, L, L).unwrap();
        assert_eq!(t.endpoints.len(), 32);
        assert_eq!(t.hosts, 16);
        assert!(Topology::leaf_spine(3, 2, 8, 2, 1, L, L).is_err());
    }

    #[test]
    fn aggregation_nodes_keep_ids_and_add_one_port_per_switch() {
        let t = Topology::leaf_spine(2, 2, 4, 1, 1, L, L).unwrap();
        let a = t.with_aggregation_nodes().unwrap();
        assert_eq!(a.hosts, t.hosts);
        assert_eq!(a.endpoints.len(), t.endpoints.len() + 4);
        assert_eq!(&a.endpoints[..8], &t.endpoints[..]);
        for (i, n) in t.nodes.iter().enumerate() {
            let m = &a.nodes[i];
            assert_eq!((&m.name, m.kind), (&n.name, n.kind));
            let want = if n.kind == NodeKind::Switch { n.nports + 1 } else { n.nports };
            assert_eq!(m.nports, want);
        }
        // Every original link is still there between the same (node, port) pairs.
        for p in &t.ports {
            let q = t.port(p.peer.unwrap());
            let pa = a.port(a.port_of(p.node, p.index));
            let qa = a.port(pa.peer.unwrap());
            assert_eq!((qa.node, qa.index, pa.rate, pa.prop), (q.node, q.index, p.rate, p.prop));
        }
        // leaf0: 4 hosts + 2 uplinks at 100 Gb/s; its AN is endpoint 8 on port 6.
        let leaf0 = NodeId(0);
        assert_eq!(a.aggregator_of(leaf0), Some(8));
        let an_port = a.ep_port(8);
        assert_eq!(a.port(an_port).rate, BitRate::from_gbps(600));
        assert_eq!(a.port(a.port(an_port).peer.unwrap()).index, 6);
        assert!(a.is_aggregator_port(an_port) && a.is_aggregator_port(a.port_of(leaf0, 6)) && !a.is_aggregator_port(a.port_of(leaf0, 5)));
        assert_eq!(t.aggregator_of(leaf0), None);
        a.check().unwrap();
        assert!(a.with_aggregation_nodes().is_err());
    }

    #[test]
    fn port_twice_is_an_error() {
        let mut t = Topology::default();
        let a = t.add_switch("a".into(), 2, 1);
        let b = t.add_switch("b".into(), 2, 1);
        t.connect(LinkSpec { a: (a, 0), b: (b, 0), rate: L.0, prop: L.1 }).unwrap();
        let e = t.connect(LinkSpec { a: (a, 0), b: (b, 1), rate: L.0, prop: L.1 }).unwrap_err();
        assert_eq!(e, TopoError::PortTwice { node: "a".into(), port: 0 });
    }

    #[test]
    fn ring_and_torus_are_fully_cabled() {
        let r = Topology::ring(5, 2, L, L).unwrap();
        assert_eq!(r.endpoints.len(), 10);
        assert!(r.ports.iter().all(|p| p.peer.is_some()));
        r.check().unwrap();
        let t = Topology::torus_2d(3, 4, 1, L, L).unwrap();
        assert_eq!(t.endpoints.len(), 12);
        assert!(t.ports.iter().all(|p| p.peer.is_some()));
        let t2 = Topology::torus_2d(2, 2, 1, L, L).unwrap();
        assert!(t2.ports.iter().all(|p| p.peer.is_some()));
        assert!(Topology::ring(2, 1, L, L).is_err());
    }
}
