//! ibsim net files (`ibsim/sim_net.c`, `parse_netconf`), and writing any topology as one.
//!
//! GUIDs are allocated as ibsim does, in file order: switches from 0x200000, one GUID each;
//! CAs from 0x100000, reserving `nports + 1` each, port `p` having NodeGUID + p;
//! `switchguid=`/`caguid=` set the next GUID (`+` adds to the base), `sysimgguid=` applies
//! to the next node. The SM attaches to the first port of the first node (ibsim's default
//! port: port 0 of a switch, port 1 of a CA). `include "file"` is followed (relative to the
//! including file, nine levels deep like ibsim). Width/speed options `w=`, `s=`, `e=` are
//! ibsim's enable masks (`w`: 1 = 1x, 2 = 4x, 4 = 8x, 8 = 12x, 16 = 2x; `s`: 1 SDR,
//! 2 DDR, 4 QDR; `e`: 1 FDR, 2 EDR, 4 HDR, 8 NDR); the link runs at the highest enabled.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::{build, err, parse, read_text, Guids, IbTopology, RawFile, TopoFileError};
use fabric::subnet_manager::layout::{IbLayout, IBSIM_CA_GUID_BASE, IBSIM_SWITCH_GUID_BASE};
use fabric::topology::Topology;

/// ibsim's include depth limit (`sim_net.c`: MAX_INCLUDE 9).
const MAX_INCLUDE: usize = 9;

/// Reads an ibsim net file (following includes).
pub fn read(path: &Path) -> Result<IbTopology, TopoFileError> {
    let raw = parse_file(path, 0)?;
    finish(&path.display().to_string(), raw)
}

/// Reads an ibsim net file from text (includes are resolved relative to the working
/// directory); `file` names it in errors.
pub fn read_str(file: &str, src: &str) -> Result<IbTopology, TopoFileError> {
    let mut inc = |f: &str, l: usize, name: &str| include(Path::new(f).parent().unwrap_or(Path::new(".")), f, l, name, 1);
    let raw = parse(file, src, &mut inc)?;
    finish(file, raw)
}

fn parse_file(path: &Path, depth: usize) -> Result<RawFile, TopoFileError> {
    let src = read_text(path)?;
    let file = path.display().to_string();
    let dir: PathBuf = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut inc = |f: &str, l: usize, name: &str| include(&dir, f, l, name, depth + 1);
    parse(&file, &src, &mut inc)
}

fn include(dir: &Path, from: &str, line: usize, name: &str, depth: usize) -> Result<RawFile, TopoFileError> {
    if depth > MAX_INCLUDE {
        return Err(err(from, line, format!("include nested deeper than {MAX_INCLUDE} levels")));
    }
    let p = dir.join(name);
    if !p.exists() {
        return Err(err(from, line, format!("include: cannot find \"{}\"", p.display())));
    }
    if p.is_dir() {
        return Err(err(from, line, format!("include: \"{}\" is a directory; expected a net file", p.display())));
    }
    parse_file(&p, depth)
}

fn finish(file: &str, raw: RawFile) -> Result<IbTopology, TopoFileError> {
    if raw.nodes.is_empty() {
        return Err(err(file, 1, "no Switch, Hca or Ca records found; expected an ibsim net file"));
    }
    // The next GUID of each kind; `None` once it would pass 2^64 − 1.
    let mut abs = [IBSIM_CA_GUID_BASE, IBSIM_SWITCH_GUID_BASE];
    let mut next = [Some(IBSIM_CA_GUID_BASE), Some(IBSIM_SWITCH_GUID_BASE)];
    let (mut node, mut port, mut sys) = (vec![], vec![], vec![]);
    let mut seen = std::collections::HashSet::new();
    for n in &raw.nodes {
        for &(for_sw, v, relative) in &n.guid_lines {
            let k = for_sw as usize;
            if relative {
                next[k] = abs[k].checked_add(v);
            } else {
                abs[k] = v;
                next[k] = Some(v);
            }
        }
        let k = n.switch as usize;
        let g = next[k].ok_or_else(|| err(&n.file, n.line, format!("no GUID for \"{}\": the one it would get passes 0xffffffffffffffff", n.id)))?;
        if !seen.insert(g) {
            return Err(err(&n.file, n.line, format!("GUID {g:#x} of \"{}\" is already taken (ibsim: \"guid already exists\")", n.id)));
        }
        if !n.switch && g.checked_add(n.nports as u64).is_none() {
            return Err(err(&n.file, n.line, format!("\"{}\" has GUID {g:#x}: its port GUIDs (GUID + port) pass 0xffffffffffffffff", n.id)));
        }
        next[k] = g.checked_add(if n.switch { 1 } else { n.nports as u64 + 1 });
        node.push(g);
        sys.push(n.sysimgguid.unwrap_or(g));
        port.push((0..=n.nports as u64).map(|p| if n.switch { g } else { g + p }).collect());
    }
    let first = &raw.nodes[0];
    let sm = Some((0, if first.switch { 0 } else { 1 }));
    build(&raw, Guids { node, port, sys }, sm)
}

/// ibsim option masks for a 4x link of `rate`, when it is an IB speed ibsim knows.
fn rate_opts(rate: units::BitRate) -> &'static str {
    match rate.0 {
        400_000_000_000 => "\tw=2 e=8",
        200_000_000_000 => "\tw=2 e=4",
        100_000_000_000 => "\tw=2 e=2",
        32_000_000_000 => "\tw=2 s=4",
        _ => "",
    }
}

/// Writes a topology as an ibsim net file, node names exactly as in `layout` (and so as
/// in `fabriclab sm --json`). The SM's node comes first (ibsim attaches the SM to the first
/// node); every node is preceded by its `switchguid=`/`caguid=` so ibsim allocates exactly
/// the layout's NodeGUIDs; every link is listed from both ends with `w=`/`e=` for 4x
/// EDR/HDR/NDR rates.
pub fn write(t: &Topology, layout: &IbLayout) -> Result<String, String> {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# ibsim net file written by fabriclab ({} nodes, {} links).",
        layout.nodes.len(),
        t.ports.iter().filter(|p| p.peer.is_some()).count() / 2
    );
    let _ = writeln!(out, "# Node ids are the names `fabriclab sm --json` uses; ports are IB port numbers.");
    let sm_node = layout.sm.0 as usize;
    let order = std::iter::once(sm_node).chain((0..layout.nodes.len()).filter(|&i| i != sm_node));
    for i in order {
        let n = &layout.nodes[i];
        for name in [&n.name] {
            if name.is_empty() || name.len() > 64 || name.contains(['"', '#', '@', '\n']) {
                return Err(format!("node name `{name}` cannot be written to an ibsim net file (1..64 characters, no '\"', '#' or '@')"));
            }
        }
        let _ = writeln!(out);
        let _ = writeln!(out, "{}={:#x}", if n.switch { "switchguid" } else { "caguid" }, n.guid);
        let kind = if n.switch { "Switch" } else { "Hca" };
        if n.desc != n.name {
            let _ = writeln!(out, "{kind}\t{} \"{}\"\t# \"{}\"", n.nports, n.name, n.desc.replace('"', "'"));
        } else {
            let _ = writeln!(out, "{kind}\t{} \"{}\"", n.nports, n.name);
        }
        for (p, tp) in n.ports.iter().enumerate() {
            let Some(tp) = tp else { continue };
            let Some(peer) = t.port(*tp).peer else { continue };
            let (pn, pp) = layout.ib_port(peer);
            let _ = writeln!(out, "[{p}]\t\"{}\"[{pp}]{}", layout.nodes[pn as usize].name, rate_opts(t.port(*tp).rate));
        }
    }
    Ok(out)
}
