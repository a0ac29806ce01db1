//! PFC per port type: the headroom above the pause trigger, the resume offset below it and
//! the PG size of one tier's ports (both ends of its links alike), by the IEEE 802.1Qbb
//! worst case ([`model::headroom::ieee_8021qbb`], in whole-frame cells) or SONiC's
//! Spectrum model ([`model::sonic::mellanox_headroom`]), with every term of the
//! derivation and its source.
//!
//! Left out: the IEEE plan's static trigger level, which depends on the leaf's buffer
//! budget; [`super::plan`] fills it in once the budget is known.

use model::headroom::{all_short_cells, ieee_8021qbb, pause_response_quanta, quantum, HeadroomInput};
use model::sonic::{self, DynamicHeadroomInput, Spectrum};
use serde::Serialize;
use units::{propagation, BitRate, Bytes, Length, SimDuration, DEFAULT_PROPAGATION_PS_PER_M};

use super::{lossless_frame, reverse_frame, HeadroomModel, InputError, RoceInput, TierInput, SRC_QBB};

/// One line of a derivation: a time (if it is one), the bytes it stands for, its source.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlanTerm {
    pub name: String,
    pub time_ps: Option<u64>,
    pub bytes: f64,
    pub source: String,
}

/// PFC settings of one port type (a tier's links; both ends alike).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TierPlan {
    pub tier: &'static str,
    pub speed_gbps: f64,
    pub cable_m: f64,
    /// Lanes of the tier's ports (SONiC: 8 doubles xon and adds the port MTU to size).
    pub lanes: u32,
    /// SONiC: the shared headroom pool is on, so size = xon and xoff comes from the pool
    /// (the budget's `shared_headroom_pool`).
    pub shared_headroom_pool: bool,
    pub one_way_delay_ps: u64,
    /// When the PG pauses its peer.
    pub trigger: String,
    /// Bytes that may arrive after XOFF (SONiC `xoff`), in whole cells.
    pub headroom_bytes: u64,
    pub headroom_cells: u64,
    /// Resume this far below the trigger (SONiC `xon`).
    pub xon_offset_bytes: u64,
    /// Buffer reserved per lossless PG (SONiC `size`).
    pub pg_size_bytes: u64,
    pub terms: Vec<PlanTerm>,
    /// IEEE: the static XOFF trigger, PG occupancy at which the PG pauses its peer.
    pub xoff_trigger_bytes: Option<u64>,
    /// IEEE: maximum frames in flight after the trigger.
    pub frames: Option<u64>,
    /// IEEE: headroom cells if the trigger were dynamic instead (one frame more).
    pub dynamic_trigger_cells: Option<u64>,
    pub max_frame_cells: Option<u64>,
    pub short_frame_cells: Option<u64>,
    /// IEEE: cells if every frame of the window were short (the all-small worst case).
    pub all_short_cells: Option<u64>,
}

/// The IEEE model's input for one tier (also what `--prove`'s scenario reproduces).
pub fn ieee_input(i: &RoceInput, t: &TierInput) -> HeadroomInput {
    ieee_port_input(t.speed, t.cable, lossless_frame(i), reverse_frame(i), i.interface_delay, i.buffer.cell, i.short_frames)
}

/// The IEEE model's input for one port (the planner's tiers and the verifier's ports alike):
/// the cable at [`DEFAULT_PROPAGATION_PS_PER_M`], the peer's response in pause quanta
/// ([`pause_response_quanta`]), no trigger delay, a static trigger.
pub fn ieee_port_input(
    speed: BitRate,
    cable: Length,
    max_frame_lossless: Bytes,
    max_frame_reverse: Bytes,
    interface_delay: SimDuration,
    cell: Bytes,
    short_frames: u64,
) -> HeadroomInput {
    HeadroomInput {
        rate: speed,
        cable: propagation(cable, DEFAULT_PROPAGATION_PS_PER_M),
        max_frame_reverse,
        max_frame_lossless,
        response: SimDuration(pause_response_quanta(speed) * quantum(speed).ps()),
        trigger_delay: SimDuration::ZERO,
        interface_delay,
        cell,
        trigger_frame_in_headroom: false,
        short_frames,
    }
}

/// SONiC's input for one tier: its lanes, the port MTU, the lossless pattern and the
/// shared headroom pool settings.
pub fn sonic_input(i: &RoceInput, t: &TierInput, g: Spectrum) -> DynamicHeadroomInput {
    DynamicHeadroomInput {
        port_mtu: i.port_mtu.unwrap_or(sonic::DEFAULT_PORT_MTU),
        pattern: i.sonic_pattern,
        lane_count: t.lanes,
        shared_headroom: i.shared_headroom,
        ..DynamicHeadroomInput::new(t.speed, t.cable, g)
    }
}

/// One tier's PFC settings under the input's headroom model, with the derivation's terms.
pub(super) fn tier_plan(i: &RoceInput, t: &TierInput) -> Result<TierPlan, InputError> {
    let cell = i.buffer.cell;
    let prop = propagation(t.cable, DEFAULT_PROPAGATION_PS_PER_M);
    let base = |terms, headroom: Bytes, xon: Bytes, size: Bytes, trigger: String| TierPlan {
        tier: t.tier,
        speed_gbps: t.speed.as_gbps_f64(),
        cable_m: t.cable.as_m_f64(),
        lanes: t.lanes,
        // The Lua's `shp_enabled`, from the same settings.
        shared_headroom_pool: matches!(i.model, HeadroomModel::Sonic(_)) && i.shared_headroom.enabled(),
        one_way_delay_ps: prop.ps(),
        trigger,
        headroom_bytes: headroom.0,
        headroom_cells: headroom.cells(cell),
        xon_offset_bytes: xon.0,
        pg_size_bytes: size.0,
        terms,
        xoff_trigger_bytes: None,
        frames: None,
        dynamic_trigger_cells: None,
        max_frame_cells: None,
        short_frame_cells: None,
        all_short_cells: None,
    };
    match i.model {
        HeadroomModel::Ieee => {
            let hi = ieee_input(i, t);
            let d = ieee_8021qbb(&hi);
            let mut terms: Vec<PlanTerm> = d
                .terms
                .iter()
                .map(|x| PlanTerm { name: x.name.to_string(), time_ps: Some(x.time.ps()), bytes: x.wire_bytes.0 as f64, source: x.source.to_string() })
                .collect();
            if let Some(r) = terms.iter_mut().find(|x| x.name == "peer response time") {
                r.name = format!("peer response time ({} quanta of {} ps)", pause_response_quanta(t.speed), quantum(t.speed).ps());
            }
            let fc = lossless_frame(i).cells(cell);
            terms.push(PlanTerm {
                name: format!("frames in flight: ceil(W/P) = {} after the (static) trigger, x {fc} cells", d.frames),
                time_ps: Some(d.window.ps()),
                bytes: (d.max_frame_cells * cell.0) as f64,
                source: SRC_QBB.into(),
            });
            if i.short_frames > 0 {
                terms.push(PlanTerm {
                    name: format!("{} short frame(s) in the window, worst case", i.short_frames),
                    time_ps: None,
                    bytes: (d.short_frame_cells * cell.0) as f64,
                    source: "model::headroom::short_frame_allowance (exact over frame sizes)".into(),
                });
            }
            let xon = cell * (2 * fc);
            let mut p = base(terms, d.bytes, xon, d.bytes, String::new());
            p.frames = Some(d.frames);
            p.dynamic_trigger_cells = Some(d.cells + fc);
            p.max_frame_cells = Some(d.max_frame_cells);
            p.short_frame_cells = Some(d.short_frame_cells);
            p.all_short_cells = Some(all_short_cells(&hi));
            Ok(p)
        }
        HeadroomModel::Sonic(g) => {
            let h = sonic::mellanox_headroom(&sonic_input(i, t, g))
                .map_err(|e| InputError { field: format!("{}.speed", t.tier.replace('-', "_")), msg: e.to_string() })?;
            let terms = h
                .byte_terms()
                .into_iter()
                .map(|x| PlanTerm { name: x.name.to_string(), time_ps: None, bytes: x.exact, source: sonic::LUA_SOURCE.into() })
                .chain([
                    PlanTerm { name: "cell_occupancy (factor)".into(), time_ps: None, bytes: h.terms.cell_occupancy, source: sonic::LUA_SOURCE.into() },
                    PlanTerm {
                        name: "xoff before compensation (rounded to 1 KiB)".into(),
                        time_ps: None,
                        bytes: h.xoff_rounded.0 as f64,
                        source: sonic::LUA_SOURCE.into(),
                    },
                ])
                .collect();
            let trigger = format!("dynamic: pause when the PG's shared use reaches alpha*free, alpha = 2^{} (SONiC profile dynamic_th)", h.dynamic_th);
            Ok(base(terms, h.xoff, h.xon, h.size, trigger))
        }
    }
}
