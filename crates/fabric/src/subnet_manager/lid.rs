//! LID assignment (IBTA Vol. 1 §4.1.3 LIDs, §7.11.1 LMC; OpenSM `osm_lid_mgr.c`).
//!
//! Every CA port gets 2^LMC consecutive LIDs aligned to 2^LMC (a packet's DLID selects
//! one of the port's paths: the port matches DLID with its low LMC bits masked); a
//! switch gets one LID on its management port 0 (a *base* port 0 has no LMC, as OpenSM
//! treats it unless `lmc_esp0`). As in OpenSM: the SM's own port is served first, then
//! every port in port-GUID order; a port keeps a LID it already has (from the SM's own
//! guid→LID table, else from PortInfo) when that LID is valid, aligned and unused;
//! otherwise it gets the first free aligned range, lowest LIDs first.
//!
//! OpenSM keeps its GUID tables in `cl_qmap`s keyed by the GUID in network byte order and
//! compared as a host integer, so on x86 "GUID order" is the order of the byte-swapped
//! GUID; [`guid_order`] reproduces that, so LIDs equal OpenSM's on the same fabric.
//! Left out: the guid2lid file, `reassign_lids`, enhanced switch port 0.

use std::collections::HashMap;

use super::discovery::Subnet;
use super::mad::MAX_UCAST_LID;

/// OpenSM's iteration order of GUID-keyed tables on a little-endian host.
pub fn guid_order(guid: u64) -> u64 {
    guid.swap_bytes()
}

/// The SM's persistent guid→LID table (OpenSM's guid2lid db, kept in memory).
#[derive(Clone, Debug, Default)]
pub struct LidManager {
    pub guid2lid: HashMap<u64, u16>,
}

/// The outcome of one assignment: per (node, port) its base LID and LMC were written into
/// the subnet; `changed` lists ports whose LID or LMC differs from what PortInfo said.
#[derive(Clone, Debug, Default)]
pub struct LidOutcome {
    pub changed: Vec<(u32, u8)>,
    pub max_lid: u16,
}

impl LidManager {
    /// Assigns LIDs to every discovered endport. `lmc` applies to CA ports.
    pub fn assign(&mut self, sub: &mut Subnet, lmc: u8) -> LidOutcome {
        // Endports: CA ports that were read (and are up), and every switch's port 0.
        let mut ports: Vec<(u32, u8, u64, u16)> = vec![]; // (node, port, guid, nlids)
        for (i, n) in sub.nodes.iter().enumerate() {
            if n.switch {
                ports.push((i as u32, 0, n.guid, 1));
            } else {
                for (p, port) in n.ports.iter().enumerate().skip(1) {
                    if port.state.is_some() && port.peer.is_some() {
                        ports.push((i as u32, p as u8, port.guid, 1 << lmc));
                    }
                }
            }
        }
        let sm = (sub.sm_node, if sub.nodes.get(sub.sm_node as usize).is_some_and(|n| n.switch) { 0 } else { sub.sm_port });
        ports.sort_by_key(|&(n, p, g, _)| ((n, p) != sm, guid_order(g)));

        let mut used = vec![false; MAX_UCAST_LID as usize + 1];
        used[0] = true;
        // Persistent entries are reserved first (OpenSM `lid_mgr_init_sweep`).
        for &(_, _, g, k) in &ports {
            if let Some(&l) = self.guid2lid.get(&g) {
                if valid(l, k) {
                    mark(&mut used, l, k);
                }
            }
        }
        let mut out = LidOutcome::default();
        let mut assigned: Vec<Option<u16>> = vec![None; ports.len()];
        for (i, &(n, p, g, k)) in ports.iter().enumerate() {
            if let Some(&l) = self.guid2lid.get(&g) {
                if valid(l, k) {
                    assigned[i] = Some(l);
                    continue;
                }
            }
            let have = sub.nodes[n as usize].ports[p as usize].lid;
            if have != 0 && valid(have, k) && free(&used, have, k) {
                mark(&mut used, have, k);
                assigned[i] = Some(have);
            }
        }
        let mut cursor: HashMap<u16, u16> = HashMap::new();
        for (i, &(_, _, _, k)) in ports.iter().enumerate() {
            if assigned[i].is_none() {
                let c = cursor.entry(k).or_insert(k);
                assigned[i] = first_free(&used, k, c);
                if let Some(l) = assigned[i] {
                    mark(&mut used, l, k);
                }
            }
        }
        for (i, &(n, p, g, k)) in ports.iter().enumerate() {
            let Some(l) = assigned[i] else { continue };
            self.guid2lid.insert(g, l);
            let port_lmc = if k > 1 { lmc } else { 0 };
            let sp = &mut sub.nodes[n as usize].ports[p as usize];
            if sp.lid != l || sp.lmc != port_lmc {
                out.changed.push((n, p));
            }
            sp.lid = l;
            sp.lmc = port_lmc;
            out.max_lid = out.max_lid.max(l + k - 1);
        }
        out
    }
}

fn valid(l: u16, k: u16) -> bool {
    // k is a power of two (2^LMC): aligned means the low LMC bits are zero.
    l != 0 && l & (k - 1) == 0 && l as u32 + k as u32 - 1 <= MAX_UCAST_LID as u32
}

fn free(used: &[bool], l: u16, k: u16) -> bool {
    (l..l + k).all(|x| !used[x as usize])
}

fn mark(used: &mut [bool], l: u16, k: u16) {
    for x in l..l + k {
        used[x as usize] = true;
    }
}

/// First free aligned range at or after `*cursor` (lower ones are known to be used:
/// the used set only grows during one assignment).
fn first_free(used: &[bool], k: u16, cursor: &mut u16) -> Option<u16> {
    let mut l = *cursor;
    while l as u32 + k as u32 - 1 <= MAX_UCAST_LID as u32 {
        if free(used, l, k) {
            *cursor = l;
            return Some(l);
        }
        l += k;
    }
    None
}
