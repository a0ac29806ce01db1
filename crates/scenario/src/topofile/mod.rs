//! Real InfiniBand topology files: `ibnetdiscover` output ([`ibnetdiscover`]) and ibsim
//! net files ([`ibsim`]), read into a [`Topology`] plus the [`IbLayout`] that keeps the
//! file's names, GUIDs and port numbers for output; and the ibsim writer.
//!
//! Both formats share one grammar (ibsim reads ibnetdiscover output as a net file,
//! `ibsim/net-examples/examples.README`): records of a header line
//! `Switch|Ca|Hca N "id" [# "description" ...]` followed by one line per cabled port,
//! `[port](port-guid) "peer-id"[peer-port](peer-guid) [options] [# comment]`, the parts in
//! parentheses optional, and assignment lines (`vendid=`, `devid=`, `sysimgguid=`,
//! `switchguid=`, `caguid=`). A link may be listed from one end or from both; when from
//! both, the two must agree.
//!
//! Names: a node's name is its quoted id exactly as written (`"S-0002c903..."` in
//! ibnetdiscover output, `"Switch1"` in an ibsim file); a CA port is named after its CA,
//! or `id:port` for the second and further cabled ports of a multi-port CA. Ports keep
//! their file numbers (switch port `n` is topology port `n − 1`).
//!
//! Link rates come from the file where it says (`4xEDR` in ibnetdiscover comments,
//! ibsim's `w=`/`s=`/`e=` enable masks); otherwise [`DEFAULT_RATE`]. Left out: routers
//! (`Rt`), chassis grouping, ibsim aliases (`@`), `do` commands and `module` prefixes.

pub mod ibnetdiscover;
pub mod ibsim;

use std::collections::HashMap;

use units::{BitRate, SimDuration};

use fabric::subnet_manager::layout::{IbLayout, IbNode};
use fabric::topology::{LinkSpec, PortId, Topology};

/// Link rate when a file gives none: 4x NDR, 400 Gb/s (IBTA Vol. 1 release 1.5, NDR
/// 100 Gb/s per lane; ibsim itself would assume 4x SDR, which no current fabric runs).
pub const DEFAULT_RATE: BitRate = BitRate::from_gbps(400);
/// Cable propagation when a file gives none: 1 m at 5 ns/m (DESIGN: ~5 ns per metre).
pub const DEFAULT_PROP: SimDuration = SimDuration::from_ns(5);

/// A topology file error: file, line and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {msg}")]
pub struct TopoFileError {
    pub file: String,
    pub line: usize,
    pub msg: String,
}

/// A read topology: the simulator's [`Topology`] and the IB view with the file's names.
#[derive(Clone, Debug)]
pub struct IbTopology {
    pub topo: Topology,
    pub layout: IbLayout,
}

/// Per-lane data rates in Gb/s of the InfiniBand speed names (IBTA Vol. 1 §5.2 and
/// Volume 2 link speeds: SDR 2.5, DDR 5, QDR 10 Gbaud with 8b/10b; FDR 14.0625, EDR
/// 25.78125 Gbaud with 64b/66b; HDR, NDR, XDR 50, 100, 200 Gb/s per lane).
pub fn lane_rate(speed: &str) -> Option<BitRate> {
    Some(match speed {
        "SDR" => BitRate::from_gbps(2),
        "DDR" => BitRate::from_gbps(4),
        "QDR" => BitRate::from_gbps(8),
        "FDR10" => BitRate::from_gbps(10),
        "FDR" => BitRate(13_636_363_636),
        "EDR" => BitRate::from_gbps(25),
        "HDR" => BitRate::from_gbps(50),
        "NDR" => BitRate::from_gbps(100),
        "XDR" => BitRate::from_gbps(200),
        _ => return None,
    })
}

/// A record header: `Switch 36 "id" # "desc" ...`.
#[derive(Clone, Debug)]
pub(crate) struct RawNode {
    pub switch: bool,
    pub nports: u8,
    pub id: String,
    pub desc: Option<String>,
    pub file: String,
    pub line: usize,
    pub ports: Vec<RawPort>,
    /// GUID assignments seen since the previous record: (for switches?, value, relative).
    pub guid_lines: Vec<(bool, u64, bool)>,
    pub sysimgguid: Option<u64>,
}

/// A port line.
#[derive(Clone, Debug)]
pub(crate) struct RawPort {
    pub num: u8,
    pub guid: Option<u64>,
    pub peer: String,
    pub peer_port: u8,
    pub peer_guid: Option<u64>,
    /// Width in lanes and per-lane rate, from `4xEDR` or ibsim masks.
    pub width: Option<u32>,
    pub lane: Option<BitRate>,
    /// ibsim enable masks, if given: (w, s, e).
    pub masks: (Option<u32>, Option<u32>, Option<u32>),
    pub line: usize,
}

/// One parsed file (with includes expanded).
#[derive(Clone, Debug, Default)]
pub(crate) struct RawFile {
    pub nodes: Vec<RawNode>,
    /// `# Initiated from node <guid> port <port guid>` (ibnetdiscover).
    pub initiated_from: Option<u64>,
}

pub(crate) fn err(file: &str, line: usize, msg: impl Into<String>) -> TopoFileError {
    TopoFileError { file: file.to_string(), line, msg: msg.into() }
}

fn parse_num(s: &str) -> Option<u64> {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else {
        s.parse().ok()
    }
}

/// Parses the shared grammar. `include` resolves nested files (ibsim only).
pub(crate) fn parse(file: &str, src: &str, include: &mut dyn FnMut(&str, usize, &str) -> Result<RawFile, TopoFileError>) -> Result<RawFile, TopoFileError> {
    let mut out = RawFile::default();
    let lines: Vec<&str> = src.lines().collect();
    let mut i = 0;
    let mut pending_guid: Vec<(bool, u64, bool)> = vec![];
    let mut pending_sys: Option<u64> = None;
    while i < lines.len() {
        let ln = i + 1;
        let raw = lines[i];
        let line = raw.trim_end();
        i += 1;
        let t = line.trim_start();
        if t.is_empty() {
            continue;
        }
        if let Some(rest) = t.strip_prefix('#') {
            if let Some(r) = rest.trim().strip_prefix("Initiated from node") {
                // "<node guid> port <port guid>"
                let parts: Vec<&str> = r.split_whitespace().collect();
                if parts.len() >= 3 && parts[1] == "port" {
                    out.initiated_from = u64::from_str_radix(parts[2], 16).ok();
                }
            }
            continue;
        }
        let word = t.split(|c: char| c.is_whitespace() || c == '=').next().unwrap_or("");
        match word {
            "Switch" | "Ca" | "Hca" => {
                let mut node = header(file, ln, t, word == "Switch")?;
                node.guid_lines = std::mem::take(&mut pending_guid);
                node.sysimgguid = pending_sys.take();
                i = port_lines(file, &lines, i, &mut node)?;
                out.nodes.push(node);
            }
            "Rt" => return Err(err(file, ln, "routers (`Rt` records) are not supported; expected Switch, Ca or Hca")),
            "switchguid" | "caguid" | "hcaguids" => pending_guid.push(guid_line(file, ln, t, word)?),
            "sysimgguid" => {
                let v = t.split_once('=').map(|x| x.1).unwrap_or("");
                pending_sys = Some(parse_num(v).ok_or_else(|| err(file, ln, format!("sysimgguid: `{}` is not a GUID; expected 0x<hex>", v.trim())))?);
            }
            "vendid" | "devid" | "width" | "speed" | "extspeed" | "pdebug" => {
                if !t.contains('=') {
                    return Err(err(file, ln, format!("`{word}`: expected `{word}=<value>`")));
                }
            }
            "include" => {
                let name = t.split('"').nth(1).ok_or_else(|| err(file, ln, "include: expected `include \"<file>\"`"))?;
                let inc = include(file, ln, name)?;
                out.nodes.extend(inc.nodes);
            }
            "do" | "module" => return Err(err(file, ln, format!("ibsim `{word}` lines are not supported"))),
            "Non-Chassis" | "Chassis" | "Hostname:" => {}
            _ => {
                if t.starts_with('[') {
                    return Err(err(file, ln, "port line outside a node record; expected a `Switch`, `Ca` or `Hca` line first"));
                }
                return Err(err(
                    file,
                    ln,
                    format!(
                        "unexpected `{}`; expected a `Switch N \"id\"`, `Ca N \"id\"` record or an assignment such as `switchguid=`",
                        t.chars().take(40).collect::<String>()
                    ),
                ));
            }
        }
    }
    Ok(out)
}

/// The port lines of a record from `lines[i]` on (comments skipped), added to `node`;
/// returns the index of the first line after them.
fn port_lines(file: &str, lines: &[&str], mut i: usize, node: &mut RawNode) -> Result<usize, TopoFileError> {
    while i < lines.len() {
        let pl = lines[i].trim();
        if pl.starts_with('#') {
            i += 1;
            continue;
        }
        if !pl.starts_with('[') {
            if pl.starts_with('@') {
                return Err(err(file, i + 1, "ibsim port aliases (`@`) are not supported"));
            }
            break;
        }
        node.ports.push(port_line(file, i + 1, pl, node.nports)?);
        i += 1;
    }
    Ok(i)
}

/// A `switchguid=`, `caguid=` or `hcaguids=` line (`+` instead of `=`: relative to the
/// previous one): (for a switch?, value, relative).
fn guid_line(file: &str, ln: usize, t: &str, word: &str) -> Result<(bool, u64, bool), TopoFileError> {
    let v = t.split_once(['=', '+']).map(|x| x.1).ok_or_else(|| err(file, ln, format!("`{word}`: expected `{word}=0x<guid>`")))?;
    let relative = t.contains('+') && !t.contains('=');
    let g = v.split('(').next().unwrap_or("");
    let g = parse_num(g).ok_or_else(|| err(file, ln, format!("`{word}`: `{}` is not a GUID; expected 0x<hex>", g.trim())))?;
    Ok((word == "switchguid", g, relative))
}

fn quoted(s: &str) -> Option<(&str, &str)> {
    let a = s.find('"')?;
    let b = s[a + 1..].find('"')? + a + 1;
    Some((&s[a + 1..b], &s[b + 1..]))
}

fn header(file: &str, ln: usize, t: &str, switch: bool) -> Result<RawNode, TopoFileError> {
    let kind = if switch { "Switch" } else { "Ca" };
    let rest = t.split_once(char::is_whitespace).map(|x| x.1).unwrap_or("").trim_start();
    let n: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    let nports: u32 = n.parse().map_err(|_| err(file, ln, format!("{kind}: expected the number of ports, e.g. `{kind} 36 \"name\"`")))?;
    if nports == 0 || nports > 254 {
        return Err(err(file, ln, format!("{kind}: {nports} ports; expected 1..254")));
    }
    let (id, after) = quoted(rest).ok_or_else(|| err(file, ln, format!("{kind}: expected a quoted node id, e.g. `{kind} {nports} \"name\"`")))?;
    if id.is_empty() {
        return Err(err(file, ln, format!("{kind}: empty node id")));
    }
    let desc = after.split_once('#').and_then(|(_, c)| quoted(c).map(|q| q.0.to_string()));
    Ok(RawNode {
        switch,
        nports: nports as u8,
        id: id.to_string(),
        desc,
        file: file.to_string(),
        line: ln,
        ports: vec![],
        guid_lines: vec![],
        sysimgguid: None,
    })
}

fn port_line(file: &str, ln: usize, t: &str, nports: u8) -> Result<RawPort, TopoFileError> {
    let close = t.find(']').ok_or_else(|| err(file, ln, "port line: expected `[port] \"peer\"[port]`"))?;
    let num: u32 = t[1..close].trim().parse().map_err(|_| err(file, ln, format!("port line: `{}` is not a port number", &t[1..close])))?;
    if num == 0 || num > nports as u32 {
        return Err(err(file, ln, format!("port {num} does not exist: the node has ports 1..{nports}")));
    }
    let mut rest = &t[close + 1..];
    let mut guid = None;
    if let Some(r) = rest.strip_prefix('(') {
        let e = r.find(')').ok_or_else(|| err(file, ln, "port line: unclosed `(` after the port number"))?;
        guid = Some(u64::from_str_radix(&r[..e], 16).map_err(|_| err(file, ln, format!("port GUID `{}` is not hex", &r[..e])))?);
        rest = &r[e + 1..];
    }
    let rest_t = rest.trim_start();
    let rest_t = if rest_t.starts_with("[ext") { rest_t.split_once(']').map(|x| x.1).unwrap_or("").trim_start() } else { rest_t };
    let (peer, after) = quoted(rest_t).ok_or_else(|| err(file, ln, "port line: expected the peer's quoted id after the port, e.g. `[1] \"Switch2\"[3]`"))?;
    let mut after = after;
    let mut peer_port = 1u32; // ibsim: remote port 1 by default
    if let Some(r) = after.strip_prefix('[') {
        let e = r.find(']').ok_or_else(|| err(file, ln, "port line: unclosed `[` after the peer id"))?;
        peer_port = r[..e].trim().parse().map_err(|_| err(file, ln, format!("peer port `{}` is not a number", &r[..e])))?;
        after = &r[e + 1..];
    }
    if peer_port == 0 || peer_port > 254 {
        return Err(err(file, ln, format!("peer port {peer_port}: expected 1..254")));
    }
    let after = after.trim_start();
    let after = if after.starts_with("[ext") { after.split_once(']').map(|x| x.1).unwrap_or("") } else { after };
    let after = after.trim_start();
    let mut peer_guid = None;
    let mut tail = after;
    if let Some(r) = after.strip_prefix('(') {
        if let Some(e) = r.find(')') {
            peer_guid = u64::from_str_radix(&r[..e], 16).ok();
            tail = &r[e + 1..];
        }
    }
    let (opts, comment) = match tail.split_once('#') {
        Some((a, b)) => (a, b),
        None => (tail, ""),
    };
    let mut masks = (None, None, None);
    for tok in opts.split_whitespace() {
        let Some((k, v)) = tok.split_once('=') else { continue };
        let val = parse_num(v).ok_or_else(|| err(file, ln, format!("option `{tok}`: expected a number")))?;
        let val = u32::try_from(val).map_err(|_| err(file, ln, format!("option `{tok}`: {val} is above 2^32 − 1; expected a mask")))?;
        match k {
            "w" => {
                if !(1..=31).contains(&val) {
                    return Err(err(file, ln, format!("w={val}: ibsim's link width enable mask must be 1..31")));
                }
                masks.0 = Some(val)
            }
            "s" => masks.1 = Some(if val == 0 { 4 } else { val }),
            "e" => {
                if val > 15 {
                    return Err(err(file, ln, format!("e={val}: ibsim's extended speed mask must be 0..15")));
                }
                masks.2 = Some(val)
            }
            _ => {}
        }
    }
    // ibnetdiscover: "... lid 4 4xEDR" at the end of the comment.
    let (mut width, mut lane) = (None, None);
    for tok in comment.split_whitespace() {
        if let Some((w, sp)) = tok.split_once('x') {
            if let (true, Some(r)) = (!w.is_empty() && w.bytes().all(|c| c.is_ascii_digit()), lane_rate(sp)) {
                // The widths InfiniBand defines (the same as ibsim's `w=` mask, `masks_rate`).
                let w = w
                    .parse::<u32>()
                    .ok()
                    .filter(|w| [1, 2, 4, 8, 12].contains(w))
                    .ok_or_else(|| err(file, ln, format!("link width `{tok}`: expected 1x, 2x, 4x, 8x or 12x lanes")))?;
                width = Some(w);
                lane = Some(r);
            }
        }
    }
    Ok(RawPort { num: num as u8, guid, peer: peer.to_string(), peer_port: peer_port as u8, peer_guid, width, lane, masks, line: ln })
}

/// ibsim masks → (lanes, lane rate): the highest enabled width and speed
/// (`ibsim/sim_net.c`, `get_active_linkwidth`/`get_active_linkspeed*`).
pub(crate) fn masks_rate(w: Option<u32>, s: Option<u32>, e: Option<u32>) -> (Option<u32>, Option<BitRate>) {
    let width = w.map(|w| match w {
        w if w & 8 != 0 => 12,
        w if w & 4 != 0 => 8,
        w if w & 2 != 0 => 4,
        w if w & 16 != 0 => 2,
        _ => 1,
    });
    let lane = match e {
        Some(e) if e & 8 != 0 => lane_rate("NDR"),
        Some(e) if e & 4 != 0 => lane_rate("HDR"),
        Some(e) if e & 2 != 0 => lane_rate("EDR"),
        Some(e) if e & 1 != 0 => lane_rate("FDR"),
        _ => s
            .map(|s| {
                if s & 4 != 0 {
                    lane_rate("QDR")
                } else if s & 2 != 0 {
                    lane_rate("DDR")
                } else {
                    lane_rate("SDR")
                }
            })
            .and_then(|x| x),
    };
    (width, lane)
}

/// How GUIDs are found: from the file (ibnetdiscover) or allocated as ibsim does.
pub(crate) struct Guids {
    pub node: Vec<u64>,
    pub port: Vec<Vec<u64>>,
    pub sys: Vec<u64>,
}

/// One end's view of a link: peer (node, port), width, lane rate, ibsim masks, line.
type Listing = (usize, u8, Option<u32>, Option<BitRate>, (Option<u32>, Option<u32>, Option<u32>), usize);

/// Builds the topology and layout from parsed records.
pub(crate) fn build(raw: &RawFile, guids: Guids, sm: Option<(usize, u8)>) -> Result<IbTopology, TopoFileError> {
    let peer = links(raw)?;
    let mut t = Topology::default();
    let (nodes, ports_of, ep_names) = add_nodes(raw, &guids, &peer, &mut t);
    cable(raw, &peer, &ports_of, &mut t)?;
    let mut port_ib = vec![(0u32, 0u8); t.ports.len()];
    let mut node_ib = vec![0u32; t.nodes.len()];
    for (i, n) in nodes.iter().enumerate() {
        for (p, tp) in n.ports.iter().enumerate() {
            if let Some(tp) = tp {
                port_ib[tp.0 as usize] = (i as u32, p as u8);
            }
        }
        for &tn in &n.topo_nodes {
            node_ib[tn.0 as usize] = i as u32;
        }
    }
    let sm = match sm {
        Some((n, p)) => (n as u32, p),
        None => {
            // The first CA port that is cabled, else the first switch.
            let ca = nodes
                .iter()
                .enumerate()
                .find_map(|(i, n)| (!n.switch).then(|| n.ports.iter().position(|p| p.is_some()).map(|p| (i as u32, p as u8))).flatten());
            ca.or_else(|| nodes.iter().position(|n| n.switch).map(|i| (i as u32, 0))).unwrap_or((0, 0))
        }
    };
    Ok(IbTopology { topo: t, layout: IbLayout { nodes, port_ib, node_ib, sm, ep_names } })
}

/// Every link, from both ends: (node, port) → the other end as listed. Node ids are
/// unique, peers exist, no CA-to-CA or self links, and two listings of a link agree.
fn links(raw: &RawFile) -> Result<HashMap<(usize, u8), Listing>, TopoFileError> {
    let mut by_id: HashMap<&str, usize> = HashMap::new();
    for (i, n) in raw.nodes.iter().enumerate() {
        if let Some(&j) = by_id.get(n.id.as_str()) {
            return Err(err(&n.file, n.line, format!("node \"{}\" is defined twice (first at line {})", n.id, raw.nodes[j].line)));
        }
        by_id.insert(&n.id, i);
    }
    // Links: (node, port) → (node, port, rate, line); both listings must agree.
    let mut peer: HashMap<(usize, u8), Listing> = HashMap::new();
    for (i, n) in raw.nodes.iter().enumerate() {
        for p in &n.ports {
            let &j = by_id
                .get(p.peer.as_str())
                .ok_or_else(|| err(&n.file, p.line, format!("no node \"{}\" in this file; expected the id of a Switch or Ca record", p.peer)))?;
            let pn = &raw.nodes[j];
            if p.peer_port > pn.nports {
                return Err(err(&n.file, p.line, format!("\"{}\" has ports 1..{}; port {} does not exist", pn.id, pn.nports, p.peer_port)));
            }
            if !n.switch && !pn.switch {
                return Err(err(
                    &n.file,
                    p.line,
                    format!("CA \"{}\" is cabled to CA \"{}\"; only CA-to-switch and switch-to-switch links are supported", n.id, pn.id),
                ));
            }
            if (i, p.num) == (j, p.peer_port) {
                return Err(err(&n.file, p.line, "a port cannot be cabled to itself"));
            }
            let me = (i, p.num);
            if let Some(prev) = peer.get(&me) {
                if (prev.0, prev.1) != (j, p.peer_port) {
                    return Err(err(
                        &n.file,
                        p.line,
                        format!(
                            "\"{}\"[{}] is cabled to \"{}\"[{}] here, but line {} cables it to \"{}\"[{}]",
                            n.id, p.num, pn.id, p.peer_port, prev.5, raw.nodes[prev.0].id, prev.1
                        ),
                    ));
                }
            }
            peer.insert(me, (j, p.peer_port, p.width, p.lane, p.masks, p.line));
            let back = (j, p.peer_port);
            match peer.get(&back) {
                Some(b) if (b.0, b.1) != me => {
                    return Err(err(
                        &n.file,
                        p.line,
                        format!(
                            "\"{}\"[{}] says its peer is \"{}\"[{}] (line {}), not \"{}\"[{}]",
                            pn.id, p.peer_port, raw.nodes[b.0].id, b.1, b.5, n.id, p.num
                        ),
                    ))
                }
                Some(_) => {}
                None => {
                    peer.insert(back, (i, p.num, p.width, p.lane, p.masks, p.line));
                }
            }
        }
    }
    Ok(peer)
}

/// The nodes added to `t` (a switch as one node, a CA as one NIC per cabled port) and
/// their IB view: the layout's nodes, each node's topology port by IB port number, and
/// the NICs' names.
fn add_nodes(raw: &RawFile, guids: &Guids, peer: &HashMap<(usize, u8), Listing>, t: &mut Topology) -> (Vec<IbNode>, Vec<Vec<Option<PortId>>>, Vec<String>) {
    let mut nodes: Vec<IbNode> = vec![];
    let mut ports_of: Vec<Vec<Option<PortId>>> = vec![];
    let mut ep_names = vec![];
    let mut host = 0;
    for (i, n) in raw.nodes.iter().enumerate() {
        let mut ports = vec![None; n.nports as usize + 1];
        let mut topo_nodes = vec![];
        if n.switch {
            let id = t.add_switch(n.id.clone(), n.nports as u32, 1);
            for p in 1..=n.nports {
                ports[p as usize] = Some(t.port_of(id, p as u32 - 1));
            }
            topo_nodes.push(id);
        } else {
            let cabled: Vec<u8> = (1..=n.nports).filter(|&p| peer.contains_key(&(i, p))).collect();
            for (k, &p) in cabled.iter().enumerate() {
                let name = if k == 0 { n.id.clone() } else { format!("{}:{p}", n.id) };
                let id = t.add_nic(name.clone(), host, k as u32);
                ep_names.push(name);
                ports[p as usize] = Some(t.port_of(id, 0));
                topo_nodes.push(id);
            }
            if !cabled.is_empty() {
                host += 1;
            }
        }
        ports_of.push(ports.clone());
        nodes.push(IbNode {
            name: n.id.clone(),
            desc: n.desc.clone().unwrap_or_else(|| n.id.clone()),
            switch: n.switch,
            guid: guids.node[i],
            sys_guid: guids.sys[i],
            nports: n.nports,
            ports,
            port_guids: guids.port[i].clone(),
            topo_nodes,
        });
    }
    (nodes, ports_of, ep_names)
}

/// Connects every link once, in (node, port) order, at the rate the file gives.
fn cable(raw: &RawFile, peer: &HashMap<(usize, u8), Listing>, ports_of: &[Vec<Option<PortId>>], t: &mut Topology) -> Result<(), TopoFileError> {
    let mut done = std::collections::HashSet::new();
    let mut keys: Vec<&(usize, u8)> = peer.keys().collect();
    keys.sort();
    for &a in keys {
        let (j, q, w, lane, masks, line) = peer[&a];
        let b = (j, q);
        if done.contains(&a) || done.contains(&b) {
            continue;
        }
        done.insert(a);
        done.insert(b);
        let other = peer[&b];
        // Rate: ibnetdiscover's active width×speed, else the ibsim masks (either end), else default.
        let (w2, l2) = masks_rate(masks.0.or(other.4 .0), masks.1.or(other.4 .1), masks.2.or(other.4 .2));
        let width = w.or(other.2).or(w2).unwrap_or(4);
        let rate = match lane.or(other.3).or(l2) {
            Some(l) => BitRate(l.0 * width as u64),
            None if w.or(other.2).or(w2).is_some() => BitRate(DEFAULT_RATE.0 / 4 * width as u64),
            None => DEFAULT_RATE,
        };
        let pa = ports_of[a.0][a.1 as usize].expect("cabled port has a topology port");
        let pb = ports_of[b.0][b.1 as usize].expect("cabled port has a topology port");
        let (na, ia) = (t.port(pa).node, t.port(pa).index);
        let (nb, ib) = (t.port(pb).node, t.port(pb).index);
        let n = &raw.nodes[a.0];
        t.connect(LinkSpec { a: (na, ia), b: (nb, ib), rate, prop: DEFAULT_PROP }).map_err(|e| err(&n.file, line, e.to_string()))?;
    }
    Ok(())
}

/// Reads a file's text, mapping I/O errors to a [`TopoFileError`] at line 0.
pub(crate) fn read_text(path: &std::path::Path) -> Result<String, TopoFileError> {
    std::fs::read_to_string(path).map_err(|e| err(&path.display().to_string(), 0, format!("cannot read: {e}")))
}

/// Reads a topology file, guessing the format: ibnetdiscover output has GUID-style ids
/// (`"S-<16 hex>"`, `"H-<16 hex>"`) or `switchguid=0x…(…)` lines; anything else with
/// `Switch`/`Hca`/`Ca` records is an ibsim net file.
pub fn read_any(path: &std::path::Path) -> Result<IbTopology, TopoFileError> {
    let src = read_text(path)?;
    if ibnetdiscover::looks_like(&src) {
        ibnetdiscover::read_str(&path.display().to_string(), &src)
    } else {
        ibsim::read(path)
    }
}
