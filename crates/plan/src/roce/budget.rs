//! The lossless buffer of each switch role against the ASIC's budget (reserved and
//! headroom per port and PG, what is left to the shared pool), and the egress queue at
//! which PFC fires under the worst incast: the level the leaf's dynamic threshold settles
//! at (Choudhury & Hahne 1998, `model::buffer`).
//!
//! With SONiC's shared headroom pool, each lossless PG reserves only its `size` (= xon)
//! and the PGs' xoff comes from one pool per switch, sized as `buffer_pool_mellanox.lua`
//! does ([`model::sonic_pool::mellanox_shared_headroom_pool`]) from this role's ports and
//! the tiers' planned profiles; the pool and the Lua's private headroom (10 KiB per
//! lossless port) are taken from the shared buffer.
//!
//! Left out: per-queue egress limits, and the rest of `buffer_pool_mellanox.lua`'s
//! reservations (lossy and management PGs, egress mirror headroom, the management pool).

use model::sonic::SharedHeadroom;
use model::sonic_pool::{mellanox_shared_headroom_pool, ProfileUse, SharedHeadroomPool};
use serde::Serialize;
use units::Bytes;

use super::{lossless_frame, InputError, RoceInput, TierPlan, Topo};

/// Lossless buffer of one switch role against its buffer.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Budget {
    pub role: &'static str,
    pub switches: u32,
    /// (tier, ports of that tier on one switch).
    pub ports: Vec<(&'static str, u32)>,
    pub reserved_bytes: u64,
    /// Σ PG size over the role's ports and lossless PGs (with a shared headroom pool: xon).
    pub headroom_bytes: u64,
    pub total_bytes: u64,
    /// What is left for the shared pool (0 when over budget).
    pub shared_bytes: u64,
    /// (headroom + shared headroom pool xoff + private headroom) / total.
    pub headroom_share: f64,
    /// SONiC with the shared headroom pool on: the pool `buffer_pool_mellanox.lua` gives
    /// one switch of this role, with its workings.
    pub shared_headroom_pool: Option<SharedHeadroomPool>,
    /// With the pool on: Σ PG xoff − private headroom, the sum the Lua divides by the ratio
    /// (computed also when the pool's xoff is configured, where the Lua skips it), and that
    /// sum over the pool's xoff: the over-subscription the pool gives.
    pub pool_xoff_demand_bytes: Option<u64>,
    pub pool_over_subscription: Option<f64>,
}

impl Budget {
    /// The shared headroom pool's xoff plus the private headroom it comes with (0 without
    /// a pool).
    pub fn pool_bytes(&self) -> u64 {
        self.shared_headroom_pool.map_or(0, |p| p.pool_xoff.0 + p.private_headroom.0)
    }
}

fn tier_of<'a>(plans: &'a [TierPlan], name: &str) -> &'a TierPlan {
    plans.iter().find(|p| p.tier == name).expect("tier planned")
}

/// Switch roles: name, how many, and (tier, ports of that tier on one switch).
type Roles = Vec<(&'static str, u32, Vec<(&'static str, u32)>)>;

/// The shared headroom pool of one switch with these ports (tier, count), if the plan's
/// profiles use one: every port carries `lossless_priorities` PGs of its tier's profile.
/// Also returns the pool's demand (Σ PG xoff − private headroom, the Lua's sum at ratio 1).
fn headroom_pool(i: &RoceInput, plans: &[TierPlan], ports: &[(&'static str, u32)]) -> Result<Option<(SharedHeadroomPool, u64)>, InputError> {
    if !plans.iter().any(|p| p.shared_headroom_pool) {
        return Ok(None);
    }
    let pgs = i.lossless_priorities as u64;
    let uses: Vec<ProfileUse> = ports
        .iter()
        .map(|&(t, n)| {
            let p = tier_of(plans, t);
            ProfileUse { xon: Bytes(p.xon_offset_bytes), xoff: Bytes(p.headroom_bytes), size: Bytes(p.pg_size_bytes), pgs: n as u64 * pgs }
        })
        .collect();
    let lossless_ports = ports.iter().map(|p| p.1 as u64).sum();
    let e = |e: model::sonic::SonicError| InputError { field: "sonic.over_subscribe_ratio".into(), msg: e.to_string() };
    let pool = mellanox_shared_headroom_pool(&uses, lossless_ports, &i.shared_headroom).map_err(e)?;
    let demand = mellanox_shared_headroom_pool(&uses, lossless_ports, &SharedHeadroom { over_subscribe_ratio: 1.0, pool_xoff: Bytes(0) }).map_err(e)?;
    Ok(Some((pool, demand.accumulative_xoff.0)))
}

pub(super) fn budgets(i: &RoceInput, plans: &[TierPlan]) -> Result<Vec<Budget>, InputError> {
    let roles: Roles = match i.topology {
        Topo::LeafSpine { leaves, spines, hosts_per_leaf } => {
            vec![("leaf", leaves, vec![("host-leaf", hosts_per_leaf), ("leaf-spine", spines)]), ("spine", spines, vec![("leaf-spine", leaves)])]
        }
        Topo::FatTree { k } => vec![
            ("edge", k * k / 2, vec![("host-leaf", k / 2), ("leaf-spine", k / 2)]),
            ("aggregation", k * k / 2, vec![("leaf-spine", k / 2), ("spine-core", k / 2)]),
            ("core", k * k / 4, vec![("spine-core", k)]),
        ],
    };
    let pgs = i.lossless_priorities as u64;
    roles
        .into_iter()
        .map(|(role, switches, ports)| {
            let nports: u64 = ports.iter().map(|p| p.1 as u64).sum();
            let reserved = nports * 8 * i.buffer.reserved.0.div_ceil(i.buffer.cell.0) * i.buffer.cell.0;
            let headroom: u64 = ports
                .iter()
                .map(|&(t, n)| {
                    let per_pg = match i.operator.headroom {
                        Some(h) => h.cells(i.buffer.cell) * i.buffer.cell.0,
                        None => tier_of(plans, t).pg_size_bytes.div_ceil(i.buffer.cell.0) * i.buffer.cell.0,
                    };
                    n as u64 * pgs * per_pg
                })
                .sum();
            let total = i.buffer.total.0;
            let pool = headroom_pool(i, plans, &ports)?;
            let mut b = Budget {
                role,
                switches,
                ports,
                reserved_bytes: reserved,
                headroom_bytes: headroom,
                total_bytes: total,
                shared_bytes: 0,
                headroom_share: 0.0,
                shared_headroom_pool: pool.map(|p| p.0),
                pool_xoff_demand_bytes: pool.map(|p| p.1),
                pool_over_subscription: pool.map(|(p, d)| d as f64 / p.pool_xoff.0 as f64),
            };
            b.shared_bytes = total.saturating_sub(reserved + headroom + b.pool_bytes());
            b.headroom_share = (headroom + b.pool_bytes()) as f64 / total as f64;
            Ok(b)
        })
        .collect()
}

/// Where PFC fires when `n` ingress PGs send into one egress queue together: each PG
/// settles at its reserved cells plus its dynamic-threshold share of the shared pool,
/// reserved + alpha*S/(1+n*alpha) (`model::buffer`: Choudhury & Hahne 1998), and pauses its
/// peer there; the egress queue holds their sum. Used by the planner (`plan roce`'s ECN
/// thresholds and its `pfc-before-ecn` risk) and by `verify`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PfcPoint {
    /// Shared cells S.
    pub shared_cells: u64,
    /// Reserved cells per PG.
    pub reserved_cells: u64,
    /// Each PG's share of the shared pool, alpha*S/(1+n*alpha), in cells.
    pub share_cells: u64,
    /// One PG's occupancy when it pauses, in bytes ((reserved + share) cells).
    pub pg_bytes: u64,
    /// The egress queue then, in frame bytes: n PGs of maximum frames.
    pub queue_bytes: u64,
    /// Frame bytes per cell of maximum frames.
    pub per_cell: f64,
}

/// [`PfcPoint`] for `n` PGs, a shared pool of `shared` bytes, alpha = 2^`dynamic_th`, a
/// per-PG reservation of `reserved` bytes and maximum frames of `frame` bytes in `cell`-byte
/// cells.
pub fn pfc_point(cell: Bytes, n: u64, shared: Bytes, dynamic_th: i8, reserved: Bytes, frame: Bytes) -> PfcPoint {
    let s = shared.0 / cell.0;
    let x = model::buffer::dynamic_threshold_share(s, n, dynamic_th);
    let resv = reserved.0.div_ceil(cell.0);
    let per_cell = frame.0 as f64 / frame.cells(cell) as f64;
    let q = (n as f64 * (resv + x) as f64 * per_cell) as u64;
    PfcPoint { shared_cells: s, reserved_cells: resv, share_cells: x, pg_bytes: (resv + x) * cell.0, queue_bytes: q, per_cell }
}

/// The egress queue at which PFC fires under the worst incast, in frame bytes.
pub(super) fn pfc_queue(i: &RoceInput, leaf: &Budget) -> (u64, u64, String) {
    let leaf_ports: u32 = leaf.ports.iter().map(|p| p.1).sum();
    let n = i.incast.min(leaf_ports - 1) as u64;
    let th = i.buffer.dynamic_th;
    let p = pfc_point(i.buffer.cell, n, Bytes(leaf.shared_bytes), th, i.buffer.reserved, lossless_frame(i));
    let (s, resv, x, q, per_cell) = (p.shared_cells, p.reserved_cells, p.share_cells, p.queue_bytes, p.per_cell);
    (
        p.pg_bytes,
        q,
        format!(
            "n = min(incast {}, leaf ports - 1) = {n} ingress PGs each reach reserved {resv} + alpha*S/(1+n*alpha) = {x} cells \
             (S = {s} shared cells of the leaf, alpha = 2^{th}); the egress queue holds their sum, \
             {} cells = {q} frame bytes at {per_cell:.1} B per cell of maximum frames (model::buffer: Choudhury & Hahne 1998)",
            i.incast,
            n * (resv + x)
        ),
    )
}
