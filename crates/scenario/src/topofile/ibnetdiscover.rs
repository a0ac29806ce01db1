//! `ibnetdiscover` output (infiniband-diags `ibnetdiscover.c`: `out_switch`, `out_ca`,
//! `out_switch_port`, `out_ca_port`).
//!
//! GUIDs are the file's: a node's GUID from the `switchguid=`/`caguid=` line before its
//! record, else from its id (`"S-<16 hex>"`, `"H-<16 hex>"`); CA port GUIDs from the
//! `[port](guid)` of the CA's own lines or the `"H-…"[port](guid)` of the switch's, else
//! NodeGUID + port; `sysimgguid=` gives the system image GUID. The SM runs where
//! `# Initiated from node … port <port guid>` says (else on the first CA port).
//! Node names are the quoted ids (`S-…`/`H-…`), unique by construction; the quoted node
//! descriptions are kept as descriptions.

use std::path::Path;

use super::{build, err, parse, read_text, Guids, IbTopology, TopoFileError};

/// True when the text looks like ibnetdiscover output rather than a hand-written net file.
pub fn looks_like(src: &str) -> bool {
    src.lines().any(|l| {
        let t = l.trim_start();
        (t.starts_with("switchguid=") && t.contains('('))
            || guid_id(t.split('"').nth(1).unwrap_or("")).is_some() && (t.starts_with("Switch") || t.starts_with("Ca"))
    })
}

/// `S-0002c90200402fd0` → 0x0002c90200402fd0.
fn guid_id(id: &str) -> Option<u64> {
    let (k, hex) = id.split_once('-')?;
    if !matches!(k, "S" | "H" | "R") || hex.len() != 16 {
        return None;
    }
    u64::from_str_radix(hex, 16).ok()
}

/// Reads an ibnetdiscover output file.
pub fn read(path: &Path) -> Result<IbTopology, TopoFileError> {
    let src = read_text(path)?;
    read_str(&path.display().to_string(), &src)
}

/// Reads ibnetdiscover output from text; `file` names it in errors.
pub fn read_str(file: &str, src: &str) -> Result<IbTopology, TopoFileError> {
    let raw = parse(file, src, &mut |f, l, _| Err(err(f, l, "`include` is an ibsim extension, not ibnetdiscover output")))?;
    if raw.nodes.is_empty() {
        return Err(err(file, 1, "no Switch or Ca records found; expected ibnetdiscover output"));
    }
    let mut node = vec![];
    let mut sys = vec![];
    let mut owner: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
    for (i, n) in raw.nodes.iter().enumerate() {
        let from_line = n.guid_lines.iter().rev().find(|g| g.0 == n.switch).map(|g| g.1);
        let g = from_line.or_else(|| guid_id(&n.id)).ok_or_else(|| {
            err(
                &n.file,
                n.line,
                format!(
                    "cannot tell the GUID of \"{}\": expected a `{}=0x…` line before it or an id like \"{}-0002c90200402fd0\"",
                    n.id,
                    if n.switch { "switchguid" } else { "caguid" },
                    if n.switch { "S" } else { "H" }
                ),
            )
        })?;
        // NodeGUIDs are unique (each node's own EUI-64); the subnet manager keys nodes by them.
        if let Some(&j) = owner.get(&g) {
            let first = &raw.nodes[j];
            return Err(err(
                &n.file,
                n.line,
                format!("\"{}\" has GUID {g:#x}, already the GUID of \"{}\" (line {}); node GUIDs are unique", n.id, first.id, first.line),
            ));
        }
        if !n.switch && g.checked_add(n.nports as u64).is_none() {
            return Err(err(&n.file, n.line, format!("\"{}\" has GUID {g:#x}: its port GUIDs (GUID + port) pass 0xffffffffffffffff", n.id)));
        }
        owner.insert(g, i);
        node.push(g);
        sys.push(n.sysimgguid.unwrap_or(g));
    }
    let mut port: Vec<Vec<u64>> =
        raw.nodes.iter().zip(&node).map(|(n, &g)| (0..=n.nports as u64).map(|p| if n.switch { g } else { g + p }).collect()).collect();
    let ids: std::collections::HashMap<&str, usize> = raw.nodes.iter().enumerate().map(|(i, n)| (n.id.as_str(), i)).collect();
    for (i, n) in raw.nodes.iter().enumerate() {
        for p in &n.ports {
            if !n.switch {
                if let Some(g) = p.guid {
                    port[i][p.num as usize] = g;
                }
            }
            if let (Some(g), Some(&j)) = (p.peer_guid, ids.get(p.peer.as_str())) {
                if !raw.nodes[j].switch && (p.peer_port as usize) < port[j].len() {
                    port[j][p.peer_port as usize] = g;
                }
            }
        }
    }
    let sm = raw.initiated_from.and_then(|pg| {
        raw.nodes.iter().enumerate().find_map(|(i, n)| {
            if n.switch {
                (node[i] == pg).then_some((i, 0u8))
            } else {
                (1..=n.nports).find(|&p| port[i][p as usize] == pg).map(|p| (i, p))
            }
        })
    });
    build(&raw, Guids { node, port, sys }, sm)
}
