//! `plan roce --prove`: simulates, per tier, the headroom worst case on one switch and
//! holds the simulated peak against the plan (see `plan/mod.rs`'s module doc for the
//! scenario and why it is built so). IEEE: the plan, then one maximum frame less, trying up
//! to [`PROVE_ATTEMPTS`] reverse-traffic patterns until one reaches the planned headroom;
//! SONiC: its margin over the simulated peak.
//!
//! Left out: ECN and DCQCN (the scenario runs PFC alone) and multi-switch paths.

use crate::prove::LOSSLESS_TC;
use plan::roce::{self as r, HeadroomModel, RoceInput, RocePlan, TierPlan};

/// What one simulated run showed at the pausing port.
#[derive(serde::Serialize, Debug, Clone)]
pub struct Run {
    pub headroom_bytes: u64,
    pub headroom_cells: u64,
    pub lossless_drops: u64,
    pub headroom_overflow_drops: u64,
    pub peak_headroom_cells: u64,
    /// PFC XOFF frames the switch sent to h0, and how long h0 was paused in total.
    pub pfc_frames_to_peer: u64,
    pub peer_paused_ps: u64,
    /// PFC frames sent anywhere, and the longest any sender was paused in total.
    pub pfc_frames_total: u64,
    pub end_ps: u64,
}

/// The proof of one tier.
#[derive(serde::Serialize, Debug, Clone)]
pub struct TierProof {
    pub tier: &'static str,
    pub at_plan: Run,
    /// IEEE: the same case with one maximum frame's cells less.
    pub one_mtu_short: Option<Run>,
    /// IEEE: how often the worst phase can occur: the last frame of the bound starts only if
    /// the PFC frame waits longer than `rev − slack` behind a reverse frame, a window of
    /// `slack` out of the reverse frame's `rev` (both ps).
    pub worst_phase_window_ps: Option<(u64, u64)>,
    /// Reverse-traffic patterns tried (IEEE: until one reaches the bound, at most
    /// PROVE_ATTEMPTS), and the one reported.
    pub attempts: u64,
    /// SONiC: headroom over the simulated need (cells and bytes).
    pub margin_cells: Option<i64>,
    pub margin_bytes: Option<i64>,
    /// SONiC with a shared headroom pool: the switch's pool as simulated (bytes, whole
    /// cells; see `headroom_pool_cells`), shared by every PG that pauses.
    pub shared_headroom_pool_bytes: Option<u64>,
    pub scenario: String,
}

/// IEEE: reverse-traffic patterns (seeds of its sizes and gaps) `--prove` tries until the
/// simulated peak reaches the planned headroom; the one-MTU-short run uses the same one.
pub(crate) const PROVE_ATTEMPTS: u64 = 8;

/// Pause cycles `--prove` aims at (a cycle takes about half the headroom's frames plus
/// one): enough for the reverse frame to take the rare phases the bound's last frame needs
/// on most inputs ...
const PROVE_CYCLES: u64 = 900;
/// ... but no more than this many packets from h0 (and as many from h2), to keep a run
/// near a second in a debug build.
const PROVE_MAX_FRAMES: u64 = 4_000;
/// Packets each other sender of the incast sends at the start.
const PROVE_BURST_FRAMES: u64 = 64;
/// The static trigger `--prove` uses with the IEEE plan, in maximum frames.
pub(super) const PROVE_XOFF_FRAMES: u64 = 8;

/// xorshift64* (Vigna 2016): the reverse traffic's sizes and gaps, fixed by the seed.
fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    x.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

/// The `--prove` scenario for one tier with `headroom_cells` of headroom.
///
/// h0 (the tier's speed and longest cable) and h2 write to h1 for PROVE_CYCLES cycles' packets
/// each, 2:1 on h1's slow port, so h0's PG pauses and resumes again and again; h3..hN join at
/// the start with a burst each (the named incast). h_rev writes to h0 in a lossy class:
/// messages of 4..24 maximum packets and a random tail, with random gaps (about 80% of the
/// link), so the maximum frame a PFC frame waits behind starts at every phase. (Regular
/// reverse frames lock the phase: the XON that resumes h0 waits behind one too, so every
/// pause cycle would see the same residual.) h0 ACKs only every 64 packets and each
/// message's last, so its own ACKs rarely shift its data frames.
pub(crate) fn scenario(i: &RoceInput, t: &r::TierInput, p: &TierPlan, headroom_cells: u64, attempt: u64) -> String {
    let n = i.incast as u64;
    let cell = i.buffer.cell.0;
    let nports = n + 2;
    let resv_cells = i.buffer.reserved.0.div_ceil(cell);
    let shp = headroom_pool_cells(i, p, nports);
    let (xoff, total) = pool(i, headroom_cells, shp);
    let (nodes, links) = hosts(i, t, nports);
    // Whole packets only: no short tail frames.
    let fc = r::lossless_frame(i).cells(i.buffer.cell);
    let frames = (PROVE_CYCLES * (headroom_cells / fc / 2 + 1)).min(PROVE_MAX_FRAMES);
    let a = frames * i.mtu.0;
    let burst = incast_burst(n, PROVE_BURST_FRAMES * i.mtu.0);
    let reverse = reverse_traffic(i, t, frames, attempt);
    format!(
        r#"[scenario]
name = "plan-roce-prove-{tier}"
seed = 1

[topology]
kind = "explicit"
nodes = [
{nodes}
  {{ name = "s0", kind = "switch", ports = {nports} }},
]
links = [
{links}
]

{sections}
[[traffic]]
kind = "message"
src = 0
dst = 1
size = "{a}B"
at = "0us"
dscp = 26

[[traffic]]
kind = "message"
src = 2
dst = 1
size = "{a}B"
at = "0us"
dscp = 26
{burst}{reverse}"#,
        tier = t.tier,
        nodes = nodes.join("\n"),
        links = links.join("\n"),
        sections = crate::prove::PfcOnly {
            mtu: i.mtu.0,
            timeout: 8,
            total: total * cell,
            cell,
            dynamic_th: i.buffer.dynamic_th,
            reserved: resv_cells * cell,
            headroom: headroom_cells * cell,
            xoff: &xoff,
            xon_offset: p.xon_offset_bytes.div_ceil(cell) * cell,
            ack_every: Some(64),
        }
        .sections()
            + &shp.map_or(String::new(), |c| format!("shared_headroom_pool = \"{}B\"\n", c * cell)),
    )
}

/// SONiC with the shared headroom pool on: the headroom `buffer_pool_mellanox.lua` sets
/// aside for this one-switch scenario (its `nports` ports, each with one lossless PG of
/// the tier's profile, at the plan's ratio or configured xoff): the pool's xoff plus the
/// 10 KiB private headroom per port, in whole cells. The simulator has one headroom pool per
/// switch and no per-port private headroom, so the private part joins the pool (generous
/// to SONiC when the pausing PGs are on few ports). `None` without a pool.
pub(super) fn headroom_pool_cells(i: &RoceInput, p: &TierPlan, nports: u64) -> Option<u64> {
    use model::sonic_pool::{mellanox_shared_headroom_pool, ProfileUse};
    use units::Bytes;
    if !p.shared_headroom_pool {
        return None;
    }
    let profile = ProfileUse { xon: Bytes(p.xon_offset_bytes), xoff: Bytes(p.headroom_bytes), size: Bytes(p.pg_size_bytes), pgs: nports };
    // The plan has already evaluated these settings, so this cannot fail; no pool if it did.
    let pool = mellanox_shared_headroom_pool(&[profile], nports, &i.shared_headroom).ok()?;
    Some((pool.pool_xoff.0 + pool.private_headroom.0).div_ceil(i.buffer.cell.0))
}

/// The switch's trigger and its buffer in cells, headroom included. IEEE: a static trigger
/// (as planned) scaled down to PROVE_XOFF_FRAMES so h0's PG pauses every few frames, with a
/// pool large enough that alpha*free never falls under it. SONiC: its dynamic threshold
/// over a small pool, so the PGs pause often. Headroom does not depend on the trigger
/// level.
/// With a shared headroom pool (`shp`, cells) the PGs' headroom is that pool, not
/// per-port headroom.
fn pool(i: &RoceInput, headroom_cells: u64, shp: Option<u64>) -> (String, u64) {
    let n = i.incast as u64;
    let cell = i.buffer.cell.0;
    let frame = r::lossless_frame(i);
    let nports = n + 2;
    let resv_cells = i.buffer.reserved.0.div_ceil(cell);
    let fc = frame.cells(i.buffer.cell);
    let trig = resv_cells + PROVE_XOFF_FRAMES * fc;
    let th = i.buffer.dynamic_th;
    let (xoff, shared) = match i.model {
        HeadroomModel::Ieee => (format!("{}B", trig * cell), (n + 2) * trig + ((2 * trig) << (-th).max(0))),
        HeadroomModel::Sonic(_) => ("dynamic".to_string(), (128 * 1024u64).max(8 * n * frame.0).div_ceil(cell)),
    };
    (xoff, nports * 8 * resv_cells + shp.unwrap_or(nports * headroom_cells) + shared)
}

/// h1's link is slow (a tenth of the tier's speed, at least 10 Gb/s), so h0's PG hardly
/// drains while its headroom fills: the simulator frees a departing packet's headroom
/// cells first, and the worst case is the one with nothing leaving.
fn slow_mbps(t: &r::TierInput) -> u64 {
    (t.speed.0 / 10_000_000).max(10_000)
}

/// The hosts h0..h{nports-1} and their links to s0: h0 on the tier's speed and longest
/// cable, h1 on the slow link, the others on the tier's speed and 2 m.
fn hosts(i: &RoceInput, t: &r::TierInput, nports: u64) -> (Vec<String>, Vec<String>) {
    let speed = format!("{}Mbps", t.speed.0 / 1_000_000);
    let cable = format!("{}mm", t.cable.mm().max(1));
    let mut nodes = vec![];
    let mut links = vec![];
    let slow = format!("{}Mbps", slow_mbps(t));
    for h in 0..nports {
        nodes.push(format!("  {{ name = \"h{h}\", kind = \"host\" }},"));
        let (sp, c) = match h {
            0 => (&speed, cable.as_str()),
            1 => (&slow, "2m"),
            _ => (&speed, "2m"),
        };
        // The simulator's links carry only a propagation delay: h0's carries the cable's
        // plus the planned interface delay, so the worst case has the plan's window.
        let delay = if h == 0 && i.interface_delay.ps() > 0 {
            let d = units::propagation(t.cable, units::DEFAULT_PROPAGATION_PS_PER_M).ps() + i.interface_delay.ps();
            format!("delay = \"{d}ps\"")
        } else {
            format!("cable = \"{c}\"")
        };
        links.push(format!("  {{ a = \"h{h}\", b = \"s0:{h}\", speed = \"{sp}\", {delay} }},"));
    }
    (nodes, links)
}

/// h3..hN join the incast with a burst of `size` bytes each at the start.
fn incast_burst(n: u64, b: u64) -> String {
    let senders: Vec<String> = (3..=n).map(|h| h.to_string()).collect();
    if senders.is_empty() {
        String::new()
    } else {
        format!("\n[[traffic]]\nkind = \"incast\"\nreceiver = 1\nsenders = [{}]\nsize = \"{b}B\"\ndscp = 26\n", senders.join(", "))
    }
}

/// Lossy messages from h_rev to h0 until h0 and h2 are done (2 x `frames` packets at h1's
/// speed, plus the burst): 4..24 maximum packets and a random tail each, with random gaps,
/// fixed by the tier and `attempt`.
fn reverse_traffic(i: &RoceInput, t: &r::TierInput, frames: u64, attempt: u64) -> String {
    let n = i.incast as u64;
    let rev = n + 1;
    let frame = r::lossless_frame(i);
    let pkt = units::serialization(model::frame::wire(frame), t.speed).ps();
    let end = (2 * frames + (n - 2) * PROVE_BURST_FRAMES) * pkt * t.speed.0.div_ceil(slow_mbps(t) * 1_000_000);
    let mut reverse = String::new();
    let (mut at, mut x) = (0u64, 0x9e37_79b9_7f4a_7c15 ^ t.speed.0 ^ t.cable.mm() ^ attempt.wrapping_mul(0xd1b5_4a32_d192_ed03));
    while at < end {
        let k = 4 + xorshift(&mut x) % 21;
        let tail = 1 + xorshift(&mut x) % i.mtu.0;
        reverse.push_str(&format!("\n[[traffic]]\nkind = \"message\"\nsrc = {rev}\ndst = 0\nsize = \"{}B\"\nat = \"{at}ps\"\ndscp = 0\n", k * i.mtu.0 + tail));
        at += k * pkt + xorshift(&mut x) % (16 * pkt);
    }
    reverse
}

pub(crate) fn simulate(src: &str) -> Result<Run, String> {
    let w = scenario::load_str("plan-roce-prove.toml", src).map_err(|e| format!("--prove: the generated scenario: {e}"))?;
    let (_sim, rep) = report::run_watched(&w, false, &mut crate::progress::CancelOnly);
    if rep.incomplete.is_some() {
        return Err("--prove: cancelled (Ctrl-C)".into());
    }
    let s0_h0 = rep.ports.iter().find(|p| p.node == "s0" && p.peer.starts_with("h0:")).ok_or("--prove: no switch port to h0")?;
    let h0 = rep.ports.iter().find(|p| p.node == "h0").ok_or("--prove: no port of h0")?;
    Ok(Run {
        headroom_bytes: s0_h0.headroom_cells * w.params.buffer.cell.0,
        headroom_cells: s0_h0.headroom_cells,
        lossless_drops: rep.totals.lossless_drops,
        headroom_overflow_drops: rep.totals.drops_by_cause.iter().find(|(c, _)| c == "headroom-overflow").map_or(0, |c| c.1),
        peak_headroom_cells: s0_h0.peak_headroom_cells,
        pfc_frames_to_peer: s0_h0.pfc_tx[LOSSLESS_TC],
        peer_paused_ps: h0.paused_ps[LOSSLESS_TC],
        pfc_frames_total: rep.totals.pfc_frames,
        end_ps: rep.end_ps,
    })
}

/// Simulates every tier's worst case (`--prove`).
pub(super) fn prove(i: &RoceInput, p: &RocePlan) -> Result<Vec<TierProof>, String> {
    let frame_cells = r::lossless_frame(i).cells(i.buffer.cell);
    i.tiers
        .iter()
        .zip(&p.tiers)
        .map(|(t, tp)| {
            // IEEE: the bound's last frame needs a rare phase; try reverse patterns until
            // one reaches the planned headroom (or keep the one that came closest).
            let tries = if i.model == HeadroomModel::Ieee { PROVE_ATTEMPTS } else { 1 };
            let mut best: Option<(u64, String, Run)> = None;
            for k in 0..tries {
                let src = scenario(i, t, tp, tp.headroom_cells, k);
                let run = simulate(&src)?;
                let reached = run.peak_headroom_cells >= run.headroom_cells;
                if best.as_ref().is_none_or(|b| run.peak_headroom_cells > b.2.peak_headroom_cells) {
                    best = Some((k, src, run));
                }
                if reached {
                    break;
                }
            }
            let (attempt, src, at_plan) = best.expect("at least one attempt");
            let (one_mtu_short, margin_cells) = match i.model {
                HeadroomModel::Ieee => (Some(simulate(&scenario(i, t, tp, tp.headroom_cells.saturating_sub(frame_cells), attempt))?), None),
                HeadroomModel::Sonic(_) => (None, Some(tp.headroom_cells as i64 - at_plan.peak_headroom_cells as i64)),
            };
            let worst_phase_window_ps = (i.model == HeadroomModel::Ieee).then(|| {
                let d = model::headroom::ieee_8021qbb(&r::ieee_input(i, t));
                let p = units::serialization(model::frame::wire(r::lossless_frame(i)), t.speed).ps();
                let rev = units::serialization(model::frame::wire(r::reverse_frame(i)), t.speed).ps();
                ((d.window.ps() - (d.frames - 1) * p).min(rev), rev)
            });
            Ok(TierProof {
                tier: t.tier,
                worst_phase_window_ps,
                attempts: attempt + 1,
                at_plan,
                one_mtu_short,
                margin_cells,
                margin_bytes: margin_cells.map(|m| m * i.buffer.cell.0 as i64),
                shared_headroom_pool_bytes: headroom_pool_cells(i, tp, i.incast as u64 + 2).map(|c| c * i.buffer.cell.0),
                scenario: src,
            })
        })
        .collect()
}
