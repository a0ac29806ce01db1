//! Where every NIC sits and how the switches are cabled, port by port: [`Placement`] puts
//! node slots on leaf ports (as NVIDIA's SuperPOD does, UFM ports in the first SU's last
//! slots), and [`wiring`] cables a whole design, the one the emitted scenario's `explicit`
//! topology uses and a check that the counts are realisable.
//!
//! Left out: UFM ports in the wiring, cable lengths and types, rail and plane layouts other
//! than the simple one described at [`wiring`].

use model::sizing::Fabric;

use super::Design;

/// Where endpoints sit: node slots fill the SUs in order; the UFM ports take the last
/// slots of the first SU (the H100 SuperPOD's 32nd slot, RA-11333-001); in a
/// rail-optimised SU, slot j is port j of each of the SU's rail leaves, otherwise slots
/// fill a leaf's downlinks node by node.
pub(super) struct Placement<'a>(pub(super) &'a Fabric);

impl Placement<'_> {
    /// (leaf, leaf port) of slot `slot`'s NIC `rail`.
    fn slot(&self, slot: u64, rail: u64) -> (u64, u64) {
        let f = self.0;
        let rails = f.rails as u64;
        if f.clos.tiers == 1 {
            return (0, slot * rails + rail);
        }
        let (su, j) = (slot / f.nodes_per_su, slot % f.nodes_per_su);
        if f.rail_optimised {
            (su * rails + rail, j)
        } else {
            (su * f.leaves_per_su + j / f.nodes_per_leaf, (j % f.nodes_per_leaf) * rails + rail)
        }
    }
    pub(super) fn node(&self, n: u64, rail: u64) -> (u64, u64) {
        let f = self.0;
        let before_ufm = f.nodes_per_su - f.ufm_slots;
        self.slot(if n < before_ufm { n } else { n + f.ufm_slots }, rail)
    }
    pub(super) fn ufm(&self, port: u64) -> (u64, u64) {
        let f = self.0;
        let rails = f.rails as u64;
        self.slot(f.nodes_per_su - f.ufm_slots + port / rails, port % rails)
    }
}

/// One end of a wired link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// NIC `rail` of node `node`.
    Nic { node: u64, rail: u64 },
    /// Port `port` (0-based) of switch `switch` (leaves, then spines, then cores).
    Port { switch: u64, port: u64 },
}

/// A concrete port-by-port wiring of a design (UFM ports left out): the one the emitted
/// scenario uses, and a check that the counts are realisable.
#[derive(Clone, Debug, Default)]
pub struct Wiring {
    /// Switch names and tiers (1 leaf, 2 spine, 3 core), in index order.
    pub switches: Vec<(String, u8)>,
    /// (below, above, layer index: 0 node-leaf, 1 leaf-spine, 2 spine-core).
    pub links: Vec<(End, End, u8)>,
}

/// Wires the design: nodes on leaves as [`Placement`] says; in each pod every leaf to
/// every spine with equal link counts (its uplinks in order); spine j of every pod to
/// every core of plane j with equal link counts.
pub fn wiring(d: &Design) -> Wiring {
    let f = &d.sizing;
    let c = f.clos;
    let p = Placement(f);
    let mut w = Wiring::default();
    for l in 0..c.leaves {
        w.switches.push((format!("leaf{l}"), 1));
    }
    for s in 0..c.spines {
        w.switches.push((format!("spine{s}"), 2));
    }
    for k in 0..c.cores {
        w.switches.push((format!("core{k}"), 3));
    }
    for n in 0..f.nodes {
        for r in 0..f.rails as u64 {
            let (leaf, port) = p.node(n, r);
            w.links.push((End::Nic { node: n, rail: r }, End::Port { switch: leaf, port }, 0));
        }
    }
    if c.tiers < 2 {
        return w;
    }
    let up = c.leaf_uplinks as u64;
    let down = f.leaf_downlinks as u64;
    for l in 0..c.leaves {
        let (pod, local) = (l / c.pod_leaves, l % c.pod_leaves);
        let spines = if pod == c.pods - 1 { c.last_pod_spines } else { c.pod_spines };
        let per = up / spines;
        for s in 0..spines {
            for u in 0..per {
                let spine = c.leaves + pod * c.pod_spines + s;
                w.links.push((End::Port { switch: l, port: down + s * per + u }, End::Port { switch: spine, port: local * per + u }, 1));
            }
        }
    }
    if c.tiers < 3 {
        return w;
    }
    let sup = c.spine_uplinks as u64;
    let sd = c.spine_downlinks as u64;
    let plane_cores = |j: u64| if j < c.full_planes() { c.plane_cores } else { c.short_plane_cores };
    let mut base = vec![0u64; c.planes as usize + 1];
    for j in 0..c.planes {
        base[j as usize + 1] = base[j as usize] + plane_cores(j);
    }
    let first_core = c.leaves + c.spines;
    for s in 0..c.spines {
        let (pod, j) = (s / c.pod_spines, s % c.pod_spines);
        let cores = plane_cores(j);
        let per = sup / cores;
        for k in 0..cores {
            for u in 0..per {
                w.links.push((
                    End::Port { switch: c.leaves + s, port: sd + k * per + u },
                    End::Port { switch: first_core + base[j as usize] + k, port: pod * per + u },
                    2,
                ));
            }
        }
    }
    w
}
