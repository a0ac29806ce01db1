//! What the routing engines work on and what they produce: the SM's switch graph with
//! LIDs ([`Fabric`]) and LID-indexed forwarding tables per switch ([`Tables`]), plus the
//! checks every engine's output gets (reachability, path lengths, per-port load).
//!
//! Switches are indexed in OpenSM's `sw_guid_tbl` order and endports in `port_guid_tbl`
//! order ([`super::lid::guid_order`]), because several OpenSM engines break ties by
//! iteration order. An LFT entry is an IB port number: 0 delivers to the switch itself,
//! [`NO_PATH`] drops (IBTA Vol. 1 §14.2.5.10; OpenSM's OSM_NO_PATH).

use super::discovery::Subnet;
use super::lid::guid_order;
use super::mad::NO_PATH;

/// What is behind a switch port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    None,
    Switch { sw: u32, port: u8 },
    Ep { ep: u32 },
}

/// A CA port with its LIDs.
#[derive(Clone, Copy, Debug)]
pub struct Ep {
    /// Subnet node and port number.
    pub node: u32,
    pub port: u8,
    pub guid: u64,
    pub node_guid: u64,
    pub sys_guid: u64,
    pub lid: u16,
    pub lmc: u8,
    /// The switch (index) and switch port it is cabled to.
    pub sw: Option<(u32, u8)>,
    /// A SHARP aggregation node (its NodeDescription says [`AN_DESC`]).
    pub an: bool,
}

/// What the NodeDescription of a SHARP aggregation node contains.
pub const AN_DESC: &str = "Aggregation Node";

/// Who owns a LID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    None,
    Switch(u32),
    Ep(u32),
}

/// The switch graph the engines route on.
#[derive(Clone, Debug, Default)]
pub struct Fabric {
    /// Switch index → subnet node.
    pub sw_node: Vec<u32>,
    pub sw_guid: Vec<u64>,
    pub sw_lid: Vec<u16>,
    /// Physical ports of each switch (ports `1..=n`).
    pub nports: Vec<u8>,
    /// `adj[s][p]`: what is behind port `p` of switch `s` (`p` in `0..=n`; 0 is `None`).
    pub adj: Vec<Vec<Peer>>,
    pub eps: Vec<Ep>,
    /// Endports on each switch, in port order.
    pub sw_eps: Vec<Vec<u32>>,
    /// Number of LIDs including 0 (`max LID + 1`).
    pub nlid: usize,
    pub owner: Vec<Owner>,
    /// Data VLs every port supports (min VLCap).
    pub data_vls: u8,
    /// `adj` flattened for hot loops: `peer_flat[port_base[s] + p]` is the peer switch
    /// index, [`PEER_EP`]` | ep` for a CA port, or [`PEER_NONE`].
    pub port_base: Vec<u32>,
    pub peer_flat: Vec<u32>,
}

/// Flag of a CA port in [`Fabric::peer_flat`].
pub const PEER_EP: u32 = 1 << 31;
/// Nothing behind the port, in [`Fabric::peer_flat`].
pub const PEER_NONE: u32 = u32::MAX;

/// The subnet's switches in OpenSM's `sw_guid_tbl` order, and each node's switch index
/// (`u32::MAX` for a CA).
fn switch_order(sub: &Subnet) -> (Vec<u32>, Vec<u32>) {
    let mut sws: Vec<u32> = (0..sub.nodes.len() as u32).filter(|&i| sub.nodes[i as usize].switch).collect();
    sws.sort_by_key(|&i| guid_order(sub.nodes[i as usize].guid));
    let mut sw_of = vec![u32::MAX; sub.nodes.len()];
    for (k, &i) in sws.iter().enumerate() {
        sw_of[i as usize] = k as u32;
    }
    (sws, sw_of)
}

/// The cabled CA ports that have a LID, in OpenSM's `port_guid_tbl` order, each with the
/// switch port it is cabled to.
fn endports(sub: &Subnet, sw_of: &[u32]) -> Vec<Ep> {
    let mut eps: Vec<Ep> = vec![];
    for (i, n) in sub.nodes.iter().enumerate() {
        if n.switch {
            continue;
        }
        for (p, port) in n.ports.iter().enumerate().skip(1) {
            if port.lid == 0 || port.peer.is_none() {
                continue;
            }
            let sw = port.peer.and_then(|(pn, pp)| (sw_of[pn as usize] != u32::MAX).then_some((sw_of[pn as usize], pp)));
            let an = n.desc.contains(AN_DESC);
            eps.push(Ep { node: i as u32, port: p as u8, guid: port.guid, node_guid: n.guid, sys_guid: n.sys_guid, lid: port.lid, lmc: port.lmc, sw, an });
        }
    }
    eps.sort_by_key(|e| guid_order(e.guid));
    eps
}

/// The owner of every LID from 0 to the highest in use (a CA owns its LMC range).
fn lid_owners(eps: &[Ep], sw_lid: &[u16]) -> Vec<Owner> {
    let max_lid = eps.iter().map(|e| e.lid as usize + (1usize << e.lmc) - 1).chain(sw_lid.iter().map(|&l| l as usize)).max().unwrap_or(0);
    let mut owner = vec![Owner::None; max_lid + 1];
    for (s, &l) in sw_lid.iter().enumerate() {
        if l != 0 {
            owner[l as usize] = Owner::Switch(s as u32);
        }
    }
    for (k, e) in eps.iter().enumerate() {
        for l in e.lid..e.lid + (1 << e.lmc) {
            owner[l as usize] = Owner::Ep(k as u32);
        }
    }
    owner
}

/// `adj` flattened for hot loops ([`Fabric::peer_flat`], [`Fabric::port_base`]).
fn flat_peers(adj: &[Vec<Peer>]) -> (Vec<u32>, Vec<u32>) {
    let mut port_base = vec![];
    let mut peer_flat = vec![];
    for row in adj {
        port_base.push(peer_flat.len() as u32);
        peer_flat.extend(row.iter().map(|p| match *p {
            Peer::Switch { sw, .. } => sw,
            Peer::Ep { ep } => PEER_EP | ep,
            Peer::None => PEER_NONE,
        }));
    }
    (port_base, peer_flat)
}

impl Fabric {
    /// Builds the graph from a swept subnet whose LIDs are assigned, in named steps: the
    /// switches and the endports in OpenSM's order (`switch_order`, `endports`), each
    /// switch's ports, the owner of every LID (`lid_owners`) and the flat peer table
    /// (`flat_peers`).
    pub fn from_subnet(sub: &Subnet) -> Fabric {
        let (sws, sw_of) = switch_order(sub);
        let eps = endports(sub, &sw_of);
        let mut ep_of = std::collections::HashMap::new();
        for (k, e) in eps.iter().enumerate() {
            ep_of.insert((e.node, e.port), k as u32);
        }
        let mut adj = vec![];
        let mut nports = vec![];
        let mut sw_lid = vec![];
        let mut sw_guid = vec![];
        let mut data_vls = u8::MAX;
        for &i in &sws {
            let n = &sub.nodes[i as usize];
            let mut row = vec![Peer::None; n.nports as usize + 1];
            for (p, port) in n.ports.iter().enumerate().skip(1) {
                if let Some((pn, pp)) = port.peer {
                    if pn == i {
                        continue; // loopback cable: never routed through (OpenSM skips it)
                    }
                    row[p] = if sw_of[pn as usize] != u32::MAX {
                        Peer::Switch { sw: sw_of[pn as usize], port: pp }
                    } else if let Some(&e) = ep_of.get(&(pn, pp)) {
                        Peer::Ep { ep: e }
                    } else {
                        Peer::None
                    };
                    if port.data_vls > 0 {
                        data_vls = data_vls.min(port.data_vls);
                    }
                }
            }
            adj.push(row);
            nports.push(n.nports);
            sw_lid.push(n.ports[0].lid);
            sw_guid.push(n.guid);
        }
        let mut sw_eps = vec![vec![]; sws.len()];
        for (s, row) in adj.iter().enumerate() {
            for peer in row {
                if let Peer::Ep { ep } = *peer {
                    sw_eps[s].push(ep);
                }
            }
        }
        let owner = lid_owners(&eps, &sw_lid);
        let (port_base, peer_flat) = flat_peers(&adj);
        Fabric {
            port_base,
            peer_flat,
            sw_node: sws,
            sw_guid,
            sw_lid,
            nports,
            adj,
            eps,
            sw_eps,
            nlid: owner.len(),
            owner,
            data_vls: if data_vls == u8::MAX { super::mad::DEFAULT_DATA_VLS } else { data_vls },
        }
    }

    pub fn nsw(&self) -> usize {
        self.sw_node.len()
    }

    /// The graph without SHARP aggregation nodes: their ports look empty and their LIDs
    /// unowned; LIDs and table sizes are kept. Other endports are renumbered in order.
    pub fn without_aggregation_nodes(&self) -> Fabric {
        let mut new_ep = vec![u32::MAX; self.eps.len()];
        let mut eps = vec![];
        for (k, e) in self.eps.iter().enumerate() {
            if !e.an {
                new_ep[k] = eps.len() as u32;
                eps.push(*e);
            }
        }
        let adj: Vec<Vec<Peer>> = self
            .adj
            .iter()
            .map(|row| {
                row.iter()
                    .map(|p| match *p {
                        Peer::Ep { ep } if new_ep[ep as usize] == u32::MAX => Peer::None,
                        Peer::Ep { ep } => Peer::Ep { ep: new_ep[ep as usize] },
                        other => other,
                    })
                    .collect()
            })
            .collect();
        let sw_eps = self.sw_eps.iter().map(|v| v.iter().map(|&e| new_ep[e as usize]).filter(|&e| e != u32::MAX).collect()).collect();
        let owner = self
            .owner
            .iter()
            .map(|o| match *o {
                Owner::Ep(e) if new_ep[e as usize] == u32::MAX => Owner::None,
                Owner::Ep(e) => Owner::Ep(new_ep[e as usize]),
                other => other,
            })
            .collect();
        let peer_flat = self
            .peer_flat
            .iter()
            .map(|&x| match x {
                PEER_NONE => PEER_NONE,
                x if x & PEER_EP != 0 && new_ep[(x & !PEER_EP) as usize] == u32::MAX => PEER_NONE,
                x if x & PEER_EP != 0 => PEER_EP | new_ep[(x & !PEER_EP) as usize],
                x => x,
            })
            .collect();
        Fabric { adj, eps, sw_eps, owner, peer_flat, ..self.clone() }
    }

    /// Adds routes to every SHARP aggregation node of `self` to tables computed without
    /// them: each switch forwards an AN's LID as it forwards the LID of the AN's switch,
    /// and that switch delivers it on the AN's port.
    pub fn route_aggregation_nodes(&self, t: &mut Tables) {
        for e in self.eps.iter().filter(|e| e.an) {
            let Some((home, port)) = e.sw else { continue };
            let home_lid = self.sw_lid[home as usize] as usize;
            for s in 0..self.nsw() {
                let out = if s == home as usize { port } else { t.get(s, home_lid) };
                for l in e.lid..e.lid + (1 << e.lmc) {
                    t.set(s, l as usize, out);
                }
            }
        }
    }

    /// Switch-to-switch links of switch `s`: (local port, peer switch, peer port).
    pub fn sw_links(&self, s: usize) -> impl Iterator<Item = (u8, u32, u8)> + '_ {
        self.adj[s].iter().enumerate().filter_map(|(p, peer)| match *peer {
            Peer::Switch { sw, port } => Some((p as u8, sw, port)),
            _ => None,
        })
    }

    /// The switch a LID's packets are delivered by (its own switch, or the CA's switch).
    pub fn lid_switch(&self, lid: usize) -> Option<u32> {
        match self.owner[lid] {
            Owner::Switch(s) => Some(s),
            Owner::Ep(e) => self.eps[e as usize].sw.map(|x| x.0),
            Owner::None => None,
        }
    }

    /// Hop distances between switches (`u8::MAX` = unreachable, at most 254), `nsw ×
    /// nsw`, row = from (links are bidirectional, so the matrix is symmetric).
    /// Breadth-first search from 64 sources at once, one bit per source.
    pub fn switch_distances(&self) -> Vec<u8> {
        let n = self.nsw();
        let nbrs: Vec<Vec<u32>> = (0..n).map(|s| self.sw_links(s).map(|l| l.1).collect()).collect();
        let mut d = vec![u8::MAX; n * n];
        let mut visited = vec![0u64; n];
        let mut frontier = vec![0u64; n];
        let mut next = vec![0u64; n];
        for b0 in (0..n).step_by(64) {
            let bn = (n - b0).min(64);
            visited.fill(0);
            frontier.fill(0);
            for k in 0..bn {
                visited[b0 + k] = 1 << k;
                frontier[b0 + k] = 1 << k;
                d[(b0 + k) * n + b0 + k] = 0;
            }
            let mut level = 0u8;
            loop {
                level = level.saturating_add(1).min(u8::MAX - 1);
                let mut any = false;
                for v in 0..n {
                    let mut x = 0u64;
                    for &u in &nbrs[v] {
                        x |= frontier[u as usize];
                    }
                    next[v] = x & !visited[v];
                    any |= next[v] != 0;
                }
                if !any {
                    break;
                }
                for v in 0..n {
                    let mut x = next[v];
                    visited[v] |= x;
                    // Symmetric: write row v at the sources' columns.
                    while x != 0 {
                        let k = x.trailing_zeros() as usize;
                        x &= x - 1;
                        d[v * n + b0 + k] = level;
                    }
                }
                std::mem::swap(&mut frontier, &mut next);
            }
        }
        d
    }
}

/// `m` (`rows × cols` bytes, row-major) transposed: in blocks of 64 × 64 that stay in the
/// cache, each made of 8 × 8 tiles moved as eight `u64`s ([`transpose_8x8`]); the ragged
/// edges byte by byte.
fn transpose(m: &[u8], rows: usize, cols: usize) -> Vec<u8> {
    let mut t = vec![NO_PATH; rows * cols];
    const B: usize = 64;
    let (rows8, cols8) = (rows / 8 * 8, cols / 8 * 8);
    for r0 in (0..rows8).step_by(B) {
        for c0 in (0..cols8).step_by(B) {
            for r in (r0..(r0 + B).min(rows8)).step_by(8) {
                for c in (c0..(c0 + B).min(cols8)).step_by(8) {
                    let mut x = [0u64; 8];
                    for (i, w) in x.iter_mut().enumerate() {
                        let at = (r + i) * cols + c;
                        *w = u64::from_le_bytes(m[at..at + 8].try_into().expect("8 bytes"));
                    }
                    transpose_8x8(&mut x);
                    for (j, w) in x.iter().enumerate() {
                        let at = (c + j) * rows + r;
                        t[at..at + 8].copy_from_slice(&w.to_le_bytes());
                    }
                }
            }
        }
    }
    for r in 0..rows {
        let from = if r < rows8 { cols8 } else { 0 };
        for c in from..cols {
            t[c * rows + r] = m[r * cols + c];
        }
    }
    t
}

/// Transposes the 8 × 8 bytes held as eight little-endian rows: byte `j` of `x[i]` goes to
/// byte `i` of `x[j]`. Three rounds swap 1-, 2- and 4-byte blocks between rows 1, 2 and 4
/// apart (the recursive block transpose; Warren, *Hacker's Delight*, 2nd ed., §7-3).
fn transpose_8x8(x: &mut [u64; 8]) {
    for (step, mask) in [(1, 0x00FF_00FF_00FF_00FFu64), (2, 0x0000_FFFF_0000_FFFF), (4, 0x0000_0000_FFFF_FFFF)] {
        let shift = 8 * step as u32;
        for i in 0..8 {
            if i & step == 0 {
                let t = ((x[i] >> shift) ^ x[i + step]) & mask;
                x[i + step] ^= t;
                x[i] ^= t << shift;
            }
        }
    }
}

/// LID-indexed forwarding tables, one row per switch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tables {
    pub nlid: usize,
    pub lft: Vec<u8>,
}

impl Tables {
    pub fn new(nsw: usize, nlid: usize) -> Tables {
        Tables { nlid, lft: vec![NO_PATH; nsw * nlid] }
    }
    #[inline]
    pub fn get(&self, s: usize, lid: usize) -> u8 {
        self.lft[s * self.nlid + lid]
    }
    #[inline]
    pub fn set(&mut self, s: usize, lid: usize, port: u8) {
        self.lft[s * self.nlid + lid] = port;
    }
    pub fn row(&self, s: usize) -> &[u8] {
        &self.lft[s * self.nlid..(s + 1) * self.nlid]
    }

    /// Tables from LID-major columns (`col[lid · nsw + s]`), the inverse of
    /// [`Tables::columns`].
    pub fn from_columns(nsw: usize, nlid: usize, col: &[u8]) -> Tables {
        Tables { nlid, lft: transpose(col, nlid, nsw) }
    }

    /// The tables transposed, LID-major: `col[lid · nsw + s]`. Walking all switches'
    /// entries for one LID is then sequential (a cache-blocked transpose).
    pub fn columns(&self) -> Vec<u8> {
        let nsw = self.lft.len().checked_div(self.nlid).unwrap_or(0);
        transpose(&self.lft, nsw, self.nlid)
    }
}

/// Service level (= virtual lane) per path, for engines that spread routes over VLs.
/// Indexed by (source switch, destination LID): every CA port has one switch, so paths
/// from CAs on the same switch share their switch-to-switch channels and their VL.
#[derive(Clone, Debug)]
pub struct SlTable {
    pub nlid: usize,
    pub vl: Vec<u8>,
    /// VLs the deadlock removal needed (before balancing over the spare ones).
    pub vls_needed: u8,
    /// Per VL: how many VLs its paths are spread over (OpenSM `vl_split_count`).
    pub split: Vec<u8>,
}

impl SlTable {
    /// SL of the path from source switch `s` to `dlid`; `spread` picks among split VLs
    /// (deterministically, where OpenSM uses `rand()`).
    pub fn sl(&self, s: usize, dlid: usize, spread: u32) -> u8 {
        let v = self.vl[s * self.nlid + dlid];
        let k = self.split.get(v as usize).copied().unwrap_or(1).max(1);
        v + (spread % k as u32) as u8
    }
}

/// Path statistics over all ordered pairs of distinct endports (base LIDs).
#[derive(Clone, Debug, Default)]
pub struct PathStats {
    /// `hops[h]`: number of pairs whose path crosses `h` links (CA→switch and switch→CA
    /// included, so two CAs on one switch are 2 hops apart).
    pub hops: Vec<u64>,
    /// Unreachable (source endport, destination endport) pairs.
    pub unreachable: Vec<(u32, u32)>,
    /// Per switch, per port: endport LIDs (all of each port's 2^LMC) routed out of it.
    pub port_routes: Vec<Vec<u64>>,
    /// Pairs whose switches both exist but whose route loops or dead-ends.
    pub broken: u64,
}

/// Follows the tables for every destination. Per destination the walk is memoised per
/// switch, so the cost is `switches × endports`, not `endports²`.
pub fn path_stats(f: &Fabric, t: &Tables) -> PathStats {
    let nsw = f.nsw();
    let mut st = PathStats { port_routes: f.nports.iter().map(|&n| vec![0; n as usize + 1]).collect(), ..Default::default() };
    // Per-port route counts, row by row.
    let ca_lids: Vec<usize> = f.eps.iter().flat_map(|e| e.lid as usize..e.lid as usize + (1 << e.lmc)).filter(|&l| l < f.nlid).collect();
    for s in 0..nsw {
        let row = t.row(s);
        let pr = &mut st.port_routes[s];
        for &l in &ca_lids {
            let p = row[l];
            if p != NO_PATH && p != 0 && (p as usize) < pr.len() {
                pr[p as usize] += 1;
            }
        }
    }
    let cols = t.columns();
    let mut tree = super::cdg::DstTree::new(nsw);
    for (d, e) in f.eps.iter().enumerate() {
        let lid = e.lid as usize;
        if lid >= f.nlid {
            continue;
        }
        tree.build_col(f, &cols[lid * nsw..(lid + 1) * nsw], Some(d as u32));
        for (s, on) in f.sw_eps.iter().enumerate() {
            let n = on.len() as u64 - on.contains(&(d as u32)) as u64;
            if n == 0 {
                continue;
            }
            match tree.hops(s) {
                None => {
                    st.unreachable.extend(on.iter().filter(|&&x| x as usize != d).map(|&x| (x, d as u32)));
                    if e.sw.is_some() {
                        st.broken += n;
                    }
                }
                Some(h) => {
                    let links = h as usize + 2;
                    if st.hops.len() <= links {
                        st.hops.resize(links + 1, 0);
                    }
                    st.hops[links] += n;
                }
            }
        }
        for (src, se) in f.eps.iter().enumerate() {
            if se.sw.is_none() && src != d {
                st.unreachable.push((src as u32, d as u32));
            }
        }
    }
    st.unreachable.sort_unstable();
    st
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tiled transpose against the plain definition, on shapes with and without
    /// ragged edges.
    #[test]
    fn transpose_matches_the_definition() {
        for (rows, cols) in [(1, 1), (8, 8), (16, 24), (9, 17), (130, 67), (7, 200), (64, 3)] {
            let m: Vec<u8> = (0..rows * cols).map(|i| (i * 7 + i / 13) as u8).collect();
            let t = transpose(&m, rows, cols);
            for r in 0..rows {
                for c in 0..cols {
                    assert_eq!(t[c * rows + r], m[r * cols + c], "{rows}×{cols} at ({r}, {c})");
                }
            }
        }
    }
}
