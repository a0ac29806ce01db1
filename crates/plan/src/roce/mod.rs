//! The RoCEv2 lossless planner (`fabriclab plan roce`): PFC headroom, XOFF and XON per port
//! type, the lossless buffer against the ASIC's budget, ECN thresholds, DCQCN starting
//! parameters, and the risks a reviewer would raise.
//!
//! Every number comes from a formula in `model`, the same functions that fill the
//! simulator's `auto` values:
//! * headroom: [`model::headroom::ieee_8021qbb`] (IEEE 802.1Qbb-2011 Annex N worst case,
//!   counted in cells as the simulator admits frames) or [`model::sonic::mellanox_headroom`]
//!   (SONiC's `buffer_headroom_mellanox.lua`, reproduced exactly);
//! * ECN: [`model::ecn::hpcc_thresholds`], kept below the queue at which PFC fires;
//! * DCQCN: [`model::dcqcn`] presets by NIC family;
//! * cyclic buffer dependency: the simulator's own ECMP routes
//!   ([`fabric::routing::Routes`]) on the planned Clos, checked with the subnet manager's
//!   channel-dependency checker, intact and after every single switch-to-switch link
//!   failure (routes recomputed over the surviving links, as BGP would).
//!
//! Conventions: the planned port admits whole frames (as the simulator does). The IEEE plan
//! pauses on a static XOFF level (the dynamic threshold's equilibrium under the worst
//! incast), so the frame that crosses it is admitted below it; a dynamic trigger needs one
//! frame more (shown). The SONiC plan pauses on SONiC's dynamic threshold. The lossless class carries maximum-size frames unless
//! `short_frames` says how many shorter ones a pause window may hold. PFC is DSCP-based
//! (no VLAN tag). Three quantities are kept apart: the pause *trigger* (dynamic), the
//! *headroom* above it (SONiC's `xoff`) and the *resume* offset below it (SONiC's `xon`).
//!
//! SONiC ports may have 1, 2, 4 or 8 lanes per tier (8 doubles xon and adds the port MTU
//! to size), and a shared headroom pool (`[sonic] over_subscribe_ratio` or
//! `shared_headroom_pool_xoff`): size = xon, and each switch role's pool xoff as
//! `buffer_pool_mellanox.lua` computes it ([`model::sonic_pool`]).
//!
//! Left out: per-queue egress limits, PFC on NIC receive buffers, and any routing other
//! than shortest-path ECMP.
//!
//! Files, in the order the plan is computed:
//! * `config.rs`: the raw inputs (TOML or flags); `input.rs`: [`validate`] and the
//!   validated [`RoceInput`];
//! * `headroom.rs`: PFC headroom, XOFF and XON per tier ([`TierPlan`]);
//! * `budget.rs`: the lossless buffer per switch role and the queue at which PFC fires;
//! * `ecn.rs`, `dcqcn.rs`: ECN thresholds and DCQCN starting parameters;
//! * `cdg.rs`: the cyclic-buffer-dependency check;
//! * `risks.rs`: the risk flags; `explain.rs`: every formula with its source.
//!
//! This file keeps [`plan`], which runs those steps, the frame sizes they share, and the
//! [`RocePlan`] they fill.

mod budget;
mod cdg;
mod config;
mod dcqcn;
mod ecn;
mod explain;
mod headroom;
mod input;
mod risks;

use model::frame::{roce_frame, Encap, Transport, ETH_HEADER, FCS, VLAN_TAG};
use model::sonic;
use serde::Serialize;
use units::Bytes;

pub use budget::{pfc_point, Budget, PfcPoint};
pub use cdg::{cdg_check, topology, CdgReport, CDG_EVERY_LINK};
pub use config::{BufferConfig, LinkConfig, OperatorConfig, RoceConfig, SonicConfig};
pub use dcqcn::DcqcnPlan;
pub use ecn::{ecn_vs_pfc, lowered_below_pfc, EcnPlan, EcnVsPfc};
pub use explain::explain;
pub use headroom::{ieee_input, ieee_port_input, sonic_input, PlanTerm, TierPlan};
pub use input::{validate, BufferInput, HeadroomModel, InputError, Nic, Operator, RoceInput, TierInput, Topo};
pub use risks::Risk;

const SRC_QBB: &str = "IEEE 802.1Qbb-2011 Annex N, whole-frame cells (model::headroom)";
const SRC_XON: &str = "two maximum frames below the trigger: fabriclab's `xon_offset = \"auto\"` (a choice: \
     one frame of hysteresis is the least that stops pause/resume on every frame)";

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RocePlan {
    pub model: String,
    pub model_source: String,
    pub lossless_frame_bytes: u64,
    pub reverse_frame_bytes: u64,
    pub cell_bytes: u64,
    pub tiers: Vec<TierPlan>,
    pub budgets: Vec<Budget>,
    pub ecn: EcnPlan,
    pub dcqcn: DcqcnPlan,
    pub cdg: CdgReport,
    pub risks: Vec<Risk>,
}

/// The encapsulation the plan assumes: IPv4, DSCP-based PFC (no VLAN tag).
pub const ENCAP: Encap = Encap { vlan: false, ipv6: false };

/// Largest lossless frame (MAC header to FCS): an RDMA WRITE first packet at the path MTU.
pub fn lossless_frame(i: &RoceInput) -> Bytes {
    roce_frame(ENCAP, Transport::WriteFirst, i.mtu)
}

/// Largest frame of any class on the links: the port MTU's frame if given, else the
/// lossless frame.
pub fn reverse_frame(i: &RoceInput) -> Bytes {
    reverse_frame_for(lossless_frame(i), i.port_mtu)
}

/// Largest frame on a link whose lossless frame is `lossless` and whose ports carry IP
/// packets up to `port_mtu` (plus a 14-byte MAC header, a VLAN tag and the FCS).
pub fn reverse_frame_for(lossless: Bytes, port_mtu: Option<Bytes>) -> Bytes {
    port_mtu.map_or(lossless, |m| Bytes(m.0 + ETH_HEADER + VLAN_TAG + FCS).max(lossless))
}

/// Plans the fabric: headroom per tier, budget, ECN, DCQCN, the CDG check and the risks.
pub fn plan(i: &RoceInput) -> Result<RocePlan, InputError> {
    let tiers = i.tiers.iter().map(|t| headroom::tier_plan(i, t)).collect::<Result<Vec<_>, _>>()?;
    let budgets = budget::budgets(i, &tiers)?;
    let (level, q, why) = budget::pfc_queue(i, &budgets[0]);
    let ecn = ecn::ecn_plan(i, q, why);
    let mut tiers = tiers;
    if i.model == HeadroomModel::Ieee {
        for t in &mut tiers {
            t.xoff_trigger_bytes = Some(level);
            t.trigger = format!(
                "static: pause at {level} B of PG occupancy, the leaf's dynamic equilibrium under the worst incast \
                 (reserved + alpha*S/(1+n*alpha)); a dynamic trigger needs {} cells",
                t.dynamic_trigger_cells.unwrap_or(0)
            );
        }
    }
    let topo = topology(i).map_err(|e| InputError { field: "leaves".into(), msg: e })?;
    let cdg = cdg_check(&topo).map_err(|e| InputError { field: "hosts_per_leaf".into(), msg: e })?;
    let risks = risks::risks(i, &tiers, &budgets, &ecn, &cdg);
    let (model, model_source) = match i.model {
        HeadroomModel::Ieee => ("ieee".to_string(), SRC_QBB.to_string()),
        HeadroomModel::Sonic(g) => (format!("sonic ({})", g.asic_table_key()), format!("{}; ASIC parameters: {}", sonic::LUA_SOURCE, sonic::ASIC_TABLE_SOURCE)),
    };
    Ok(RocePlan {
        model,
        model_source,
        lossless_frame_bytes: lossless_frame(i).0,
        reverse_frame_bytes: reverse_frame(i).0,
        cell_bytes: i.buffer.cell.0,
        tiers,
        budgets,
        ecn,
        dcqcn: dcqcn::dcqcn_plan(i),
        cdg,
        risks,
    })
}
