//! PFC headroom: how much buffer a lossless priority group needs above its pause trigger.
//!
//! When an ingress priority group crosses its XOFF trigger, everything already on its way
//! from the peer still arrives. The IEEE 802.1Qbb-2011 worst case (clause 36 and the
//! delay model of Annex N, also Cisco's and NVIDIA's headroom guides) adds up, from the
//! instant the trigger is crossed:
//!
//! 1. the largest frame the pausing port may have just started on the reverse direction
//!    (the PFC frame is inserted at the next frame boundary, so it waits behind it);
//! 2. the PFC frame itself;
//! 3. the cable delay towards the peer;
//! 4. the peer's response time, bounded in pause quanta per speed (IEEE 802.3 Table 31B-1; see
//!    [`pause_response_quanta`] for what was and was not confirmed);
//! 5. the cable delay back: bits already on the wire keep arriving;
//! 6. the largest lossless frame the peer may have just started when it reacts
//!    (it finishes that frame before it stops).
//!
//! Terms 1–5 are a window `W` during which the peer keeps sending at line rate; term 6 adds
//! one maximum frame. In bytes, `rate·W + max_frame` is the classic figure. A switch stores
//! whole frames in whole cells, so [`Derivation::frames`] counts the maximum number of
//! maximum-size frames that can arrive after the trigger and [`Derivation::cells`] charges
//! each its cells. The peer starts frames during an interval of length `W` (from the end
//! of the frame that crossed the trigger to the moment it acts on the pause), at most one
//! every `P` (one frame's wire time): `ceil(W/P)` frames when the trigger is evaluated on
//! whole-frame arrival and the frame that crosses it is admitted below it. That frame lands
//! in headroom too, `ceil(W/P) + 1`, when admission is per bit or cell (the trigger falls
//! inside a frame) or when the trigger moves between arrivals: a dynamic threshold α·free
//! falls as other ports fill the shared pool, and the next frame finds its PG already over
//! it ([`HeadroomInput::trigger_frame_in_headroom`]).
//! That is the tight bound for maximum-size frames.
//!
//! Short frames (message tails, ACKs) waste partial cells: a 64-byte frame takes a whole
//! cell for 84 wire bytes, a maximum frame 17 cells of 256 B for 4194. So a window that
//! holds some short frames can need more cells than the same window of maximum frames.
//! [`HeadroomInput::short_frames`] says how many frames of the window may be shorter than
//! the maximum; [`short_frame_allowance`] charges them exactly: it maximises, over every
//! choice of that many frames of any size (64 B up to the maximum) plus as many maximum
//! frames as still start inside the window, the cells they take, and reports the excess
//! over the maximum-frames bound. Allowing every frame to be short gives the all-small
//! worst case ([`all_short_cells`]), two to three times the maximum-frame figure; nobody
//! provisions that, which is why SONiC's model weighs a small-packet share instead
//! ([`crate::sonic`]).

use serde::Serialize;
use units::{serialization, BitRate, Bytes, SimDuration};

use crate::frame::{wire, MIN_FRAME, PFC_FRAME};

/// Inputs of the IEEE 802.1Qbb worst-case headroom model, all explicit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct HeadroomInput {
    /// Link rate.
    pub rate: BitRate,
    /// One-way propagation delay of the cable.
    pub cable: SimDuration,
    /// Largest frame (header to FCS) the pausing port may send on the reverse direction,
    /// of any class (a lossy jumbo frame delays the pause just as well).
    pub max_frame_reverse: Bytes,
    /// Largest frame (header to FCS) the peer may send in the lossless class.
    pub max_frame_lossless: Bytes,
    /// Time from the PFC frame's arrival at the peer to the peer stopping (not counting
    /// the frame it finishes). See [`pause_response_quanta`].
    pub response: SimDuration,
    /// Delay inside the pausing switch from crossing the trigger to the PFC frame being
    /// ready to send (0 for an ideal MAC).
    pub trigger_delay: SimDuration,
    /// Interface (PHY, FEC) latency of one direction of the link: the sending end's
    /// transmit path plus the receiving end's receive path, beyond the cable. IEEE 802.1Qbb
    /// Annex N counts it on the way to the peer and on the way back. IEEE 802.3's upper
    /// bounds (as Cisco's headroom guide lists them, "D-Intf"): 8192 bit times at 10G, 6144
    /// at 25G, 24576 at 40G, 122880 at 100G (1.23 µs). The simulator's links carry only
    /// the cable's delay, so its `auto` headroom takes 0 here.
    pub interface_delay: SimDuration,
    /// Buffer cell size.
    pub cell: Bytes,
    /// The frame whose arrival finds the PG at its trigger lands in headroom itself, on top
    /// of the `ceil(W/P)` frames the peer starts after it. True with bit- or cell-level
    /// admission (the trigger falls inside a frame) and with a trigger that moves between
    /// arrivals (a dynamic threshold α·free falls as other ports fill the pool, so the next
    /// frame finds its PG already over it). False for whole-frame admission against a static
    /// trigger: the crossing frame is admitted below it and only the frames after it count.
    pub trigger_frame_in_headroom: bool,
    /// How many frames arriving after the trigger may be shorter than the maximum (each
    /// charged its worst case, see [`short_frame_allowance`]); 0: maximum-size frames only.
    pub short_frames: u64,
}

/// One term of a derivation: a time span and the bytes the line rate moves in it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Term {
    pub name: &'static str,
    pub time: SimDuration,
    /// Wire bytes (including preamble and inter-frame gap) the peer sends in `time`.
    pub wire_bytes: Bytes,
    pub source: &'static str,
}

/// The worked result: every term, and the totals in bytes, frames and cells.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Derivation {
    pub terms: Vec<Term>,
    /// Window `W` during which the peer keeps sending (terms 1–5).
    pub window: SimDuration,
    /// `rate·W + one maximum frame`, in wire bytes: the textbook number.
    pub wire_bytes: Bytes,
    /// Maximum number of maximum-size lossless frames that can arrive after the trigger.
    pub frames: u64,
    /// Cells of the maximum-frames bound: `frames` × the cells of one maximum frame.
    pub max_frame_cells: u64,
    /// Extra cells the allowed short frames can cost beyond that ([`short_frame_allowance`]).
    pub short_frame_cells: u64,
    /// Headroom in cells: `max_frame_cells + short_frame_cells`.
    pub cells: u64,
    /// `cells × cell`: the headroom to configure, in bytes.
    pub bytes: Bytes,
}

const SRC_QBB: &str = "IEEE 802.1Qbb-2011 Annex N (PFC delay model)";
const SRC_INTF: &str = "IEEE 802.1Qbb-2011 Annex N; IEEE 802.3 PHY delay bounds (HeadroomInput::interface_delay)";

/// The IEEE 802.1Qbb worst-case headroom for one lossless priority group on one port.
pub fn ieee_8021qbb(inp: &HeadroomInput) -> Derivation {
    let t = |b: Bytes| serialization(b, inp.rate);
    let rev = t(wire(inp.max_frame_reverse));
    let pfc = t(wire(Bytes(PFC_FRAME)));
    let lossless_frame = t(wire(inp.max_frame_lossless));
    let mut terms = vec![
        Term { name: "pause trigger to PFC ready", time: inp.trigger_delay, wire_bytes: Bytes(0), source: "switch parameter" },
        Term { name: "reverse max frame ahead of the PFC frame", time: rev, wire_bytes: Bytes(0), source: SRC_QBB },
        Term { name: "PFC frame", time: pfc, wire_bytes: Bytes(0), source: "IEEE 802.3 Annex 31D: 64-byte MAC control frame" },
        Term { name: "interface delay to peer", time: inp.interface_delay, wire_bytes: Bytes(0), source: SRC_INTF },
        Term { name: "cable delay to peer", time: inp.cable, wire_bytes: Bytes(0), source: SRC_QBB },
        Term { name: "peer response time", time: inp.response, wire_bytes: Bytes(0), source: "IEEE 802.3 Annex 31B.3.7 (see pause_response_quanta)" },
        Term { name: "cable delay back (bits in flight)", time: inp.cable, wire_bytes: Bytes(0), source: SRC_QBB },
        Term { name: "interface delay back", time: inp.interface_delay, wire_bytes: Bytes(0), source: SRC_INTF },
    ];
    for term in &mut terms {
        term.wire_bytes = inp.rate.bytes_in(term.time);
    }
    let window: SimDuration = terms.iter().map(|x| x.time).sum();
    terms.push(Term { name: "peer's max lossless frame in progress", time: lossless_frame, wire_bytes: wire(inp.max_frame_lossless), source: SRC_QBB });
    let wire_bytes = inp.rate.bytes_in(window) + wire(inp.max_frame_lossless);
    let frames = window.0.div_ceil(lossless_frame.0) + u64::from(inp.trigger_frame_in_headroom);
    let max_frame_cells = frames * inp.max_frame_lossless.cells(inp.cell);
    let short_frame_cells = short_frame_allowance(inp, window, inp.short_frames);
    let cells = max_frame_cells + short_frame_cells;
    Derivation { terms, window, wire_bytes, frames, max_frame_cells, short_frame_cells, cells, bytes: inp.cell * cells }
}

/// Extra cells (over `ceil(W/P)` maximum frames, plus the trigger frame when it counts) that
/// up to `n` frames shorter than the maximum can cost in the window `w`.
///
/// Frames start back to back; all but the last must start inside the window, so the last is
/// best a maximum frame and the rest satisfy `Σ wire time < W`. For `j ≤ n` short frames
/// the fewest wire picoseconds that buy `x` cells is a bounded knapsack over the cheapest
/// frame of each cell count (`max(64, (k−1)·cell + 1)` bytes for `k` cells); the maximum
/// frames fill what is left. The result is exact for the frame model here (whole frames,
/// each in whole cells); `n` above the window's frame count means "any mix".
pub fn short_frame_allowance(inp: &HeadroomInput, w: SimDuration, n: u64) -> u64 {
    let c = inp.cell;
    let max_cells = inp.max_frame_lossless.cells(c);
    let p = serialization(wire(inp.max_frame_lossless), inp.rate).0;
    let fit = |left: u64| left.div_ceil(p); // maximum frames starting in `left` ps
    let base = fit(w.0) * max_cells;
    // Cheapest frame (shorter than the maximum) for each cell count.
    let mut cand: Vec<(u64, u64)> = vec![];
    for k in 1..=max_cells {
        let size = ((k - 1) * c.0 + 1).max(MIN_FRAME);
        if size >= inp.max_frame_lossless.0 || Bytes(size).cells(c) != k {
            continue;
        }
        cand.push((k, serialization(wire(Bytes(size)), inp.rate).0));
    }
    let Some(&(_, t_min)) = cand.first() else { return 0 };
    let any = w.0 / t_min + 1; // no more short frames than that start in the window
    let n = n.min(any) as usize;
    if n == 0 {
        return 0;
    }
    // best[x]: fewest ps of short frames that take x cells; no mix of short frames that
    // starts inside the window takes more than the best single size repeated.
    let top = cand.iter().map(|&(k, t)| (w.0 / t + 1) * k).max().unwrap_or(0).min(n as u64 * max_cells) as usize;
    let mut best = vec![u64::MAX; top + 1];
    best[0] = 0;
    if n as u64 == any {
        // Any number: an unbounded knapsack, one pass.
        for x in 1..=top {
            for &(k, t) in &cand {
                if let Some(&t0) = best.get(x.wrapping_sub(k as usize)).filter(|&&t0| t0 != u64::MAX) {
                    best[x] = best[x].min(t0 + t);
                }
            }
        }
    } else {
        // At most n: one round per short frame.
        for _ in 0..n {
            let prev = best.clone();
            for (x, &t0) in prev.iter().enumerate().filter(|(_, &t0)| t0 < w.0) {
                for &(k, t) in &cand {
                    let y = x + k as usize;
                    if y <= top {
                        best[y] = best[y].min(t0 + t);
                    }
                }
            }
        }
    }
    let most = best.iter().enumerate().filter(|(_, &t)| t < w.0).map(|(x, &t)| x as u64 + fit(w.0 - t) * max_cells).max().unwrap_or(base);
    most - base
}

/// Cells the window can take when any frame may be short: the all-small worst case.
pub fn all_short_cells(inp: &HeadroomInput) -> u64 {
    let d = ieee_8021qbb(&HeadroomInput { short_frames: 0, ..*inp });
    d.max_frame_cells + short_frame_allowance(inp, d.window, u64::MAX)
}

/// Duration of one pause quantum (512 bit times) at `rate` (IEEE 802.3 clause 31B.2).
pub fn quantum(rate: BitRate) -> SimDuration {
    serialization(Bytes(64), rate)
}

/// The longest a MAC may take to act on a received pause, in quanta, by speed.
///
/// IEEE 802.3 Annex 31B (31B.3.7, Table 31B-1 "PAUSE reaction timing") bounds, per operating
/// speed, how many pause quanta a MAC may keep transmitting after a PAUSE/PFC frame arrives.
/// We could not read the standard itself here; the values below are those SONiC uses and
/// attributes to that clause (sonic-swss `cfgmgr/buffer_headroom_mellanox.lua`,
/// `pause_quanta_per_speed`, at commit e6b0c5b5d2ab; reproduced in [`crate::sonic`]):
///
/// | speed | 100M | 1G | 10G | 25G | 40G | 50G | 100G | 200G | 400G | 800G |
/// |---|---|---|---|---|---|---|---|---|---|---|
/// | quanta | 1 | 2 | 67 | 80 | 118 | 147 | 394 | 453 | 905 | 905 |
///
/// 800G reuses the 400G value in SONiC (its commit 4957df86d "Fix error in peer response
/// time ... for 800G"), not a figure we found in the standard. The 10GBASE-T PHY is said to
/// allow more (74 quanta), which is not confirmed here and not used. A speed between two
/// listed ones takes the next listed speed up, which errs towards more headroom; above
/// 800G the 800G value is used, which may be too small and is unconfirmed.
pub fn pause_response_quanta(rate: BitRate) -> u64 {
    let mbps = rate.0 / 1_000_000;
    match mbps {
        0..=100 => 1,
        101..=1_000 => 2,
        1_001..=10_000 => 67,
        10_001..=25_000 => 80,
        25_001..=40_000 => 118,
        40_001..=50_000 => 147,
        50_001..=100_000 => 394,
        100_001..=200_000 => 453,
        _ => 905,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inp() -> HeadroomInput {
        HeadroomInput {
            rate: BitRate::from_gbps(100),
            cable: SimDuration::from_ns(500), // 100 m at 5 ns/m
            max_frame_reverse: Bytes(4174),
            max_frame_lossless: Bytes(4174),
            response: SimDuration::ZERO,
            trigger_delay: SimDuration::ZERO,
            interface_delay: SimDuration::ZERO,
            cell: Bytes(256),
            trigger_frame_in_headroom: true,
            short_frames: 0,
        }
    }

    #[test]
    fn textbook_terms_at_100g() {
        let d = ieee_8021qbb(&inp());
        // Reverse frame 4194 wire B = 335.52 ns; PFC 84 B = 6.72 ns; 2 × 500 ns.
        assert_eq!(d.window, SimDuration(335_520 + 6_720 + 1_000_000));
        // rate·W = 12.5 B/ns × 1342.24 ns = 16778 B (rounded down), + 4194.
        assert_eq!(d.wire_bytes, Bytes(16_778 + 4_194));
        // W / P = 1342.24 / 335.52 = 4.0005 -> 5 frames + 1 in progress.
        assert_eq!(d.frames, 6);
        assert_eq!(d.cells, 6 * 17);
        assert_eq!(d.bytes, Bytes(6 * 17 * 256));
        let whole = ieee_8021qbb(&HeadroomInput { trigger_frame_in_headroom: false, ..inp() });
        assert_eq!(whole.frames, 5, "the frame in progress is inside ceil(W/P)");
    }

    #[test]
    fn frames_cover_textbook_bytes() {
        // For any cable, the frame count covers the textbook byte figure and overshoots
        // it by less than one frame plus one frame of rounding.
        for m in 0..400 {
            let mut i = inp();
            i.cable = SimDuration::from_ns(5 * m);
            let d = ieee_8021qbb(&i);
            let fw = wire(i.max_frame_lossless).0;
            assert!(d.frames * fw >= d.wire_bytes.0, "{m} m");
            assert!(d.frames * fw < d.wire_bytes.0 + 2 * fw, "{m} m");
        }
    }

    #[test]
    fn short_frames_are_charged_exactly() {
        // Textbook case: the window ends 0.16 ns after the 4th frame starts, so no short
        // frame fits without pushing a maximum frame out.
        let i = inp();
        let w = ieee_8021qbb(&i).window;
        assert_eq!(short_frame_allowance(&i, w, 1), 0);
        // Any mix: 199 minimum frames (64 B, one cell, 6.72 ns each) then a maximum frame.
        assert_eq!(all_short_cells(&HeadroomInput { trigger_frame_in_headroom: false, ..i }), 199 + 17);
        // 300 m and the 100G response time: W = 5359.52 ns, 16 maximum frames, and the
        // last starts 326.72 ns (4084 wire B) before the window closes: a 3841..4063 B
        // frame (16 cells) fits ahead of it; two short frames can make 17.
        let i = HeadroomInput { cable: SimDuration::from_ns(1500), response: SimDuration(394 * 5_120), trigger_frame_in_headroom: false, ..inp() };
        let d = ieee_8021qbb(&i);
        assert_eq!((d.window, d.frames, d.short_frame_cells), (SimDuration(5_359_520), 16, 0));
        assert_eq!(short_frame_allowance(&i, d.window, 1), 16);
        assert_eq!(short_frame_allowance(&i, d.window, 2), 17);
        let one = ieee_8021qbb(&HeadroomInput { short_frames: 1, ..i });
        assert_eq!((one.max_frame_cells, one.short_frame_cells, one.cells), (16 * 17, 16, 16 * 17 + 16));
    }

    #[test]
    fn pause_quanta_match_sonic_table() {
        for (g, q) in [(10, 67), (25, 80), (40, 118), (50, 147), (100, 394), (200, 453), (400, 905), (800, 905)] {
            let r = BitRate::from_gbps(g);
            assert_eq!(pause_response_quanta(r), q, "{g}G");
            assert_eq!(Some(q as u32), crate::sonic::lua_pause_quanta(g * 1000), "{g}G");
        }
        assert_eq!(pause_response_quanta(BitRate::from_mbps(1000)), 2);
        assert_eq!(pause_response_quanta(BitRate::from_mbps(100)), 1);
        assert_eq!(pause_response_quanta(BitRate::from_gbps(56)), 394);
    }

    #[test]
    fn quantum_is_512_bits() {
        assert_eq!(quantum(BitRate::from_gbps(100)), SimDuration(5_120));
        assert_eq!(quantum(BitRate::from_gbps(400)), SimDuration(1_280));
    }
}
