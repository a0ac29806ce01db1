//! The microburst buffer planner (`fabriclab burst`): N synchronised senders, each at
//! R_in, write B bytes at the same instant through one egress port at R_out on a
//! shared-buffer switch with a dynamic threshold α. It answers: peak occupancy, time to
//! drain, the largest burst absorbed without loss, and what happens beyond it (drops on
//! a lossy class, PFC pause on a lossless one).
//!
//! # Model (a fluid model; every size in on-wire bytes unless said otherwise)
//! * **Wire bytes.** A sender's burst is an RDMA WRITE of B payload bytes cut into path-MTU
//!   packets; its link time is `W = model::frame::write_wire_bytes` (RoCEv2/IPv4, no VLAN:
//!   Ethernet + IP + UDP + BTH (+RETH on the first) + ICRC + FCS + preamble/SFD + IFG;
//!   IEEE 802.3 clause 3/4, RoCEv2 annex A17). Buffer and queue sizes convert wire bytes
//!   with the full-MTU packet's ratios: frame `F`, wire `F+20`, cells `k = ⌈F/C⌉` (a frame
//!   is rounded **up** to whole cells, as the simulator does). This is first-order: the
//!   first packet's RETH and a partial last packet are not weighted separately.
//! * **Peak occupancy** (queueing of a fluid N·R_in into R_out): while all send, the queue
//!   grows at N·R_in − R_out; the senders finish at `t₁ = 8W/R_in`, so
//!   `Q = N·W·(1 − R_out/(N·R_in)) = N·W − W·R_out/R_in`, drained `8Q/R_out` after t₁;
//!   the last byte leaves at `8·N·W/R_out` (the egress never idles). If N·R_in ≤ R_out
//!   there is no queue.
//! * **Admission: dynamic threshold** (Choudhury & Hahne, "Dynamic queue length thresholds
//!   for shared-memory packet switches", IEEE/ACM ToN 6(2), 1998; SONiC stores α as
//!   2^dynamic_th): a queue may take another shared cell while its shared use
//!   `s < α·(S − used)`. The simulator (crates/fabric `switch_rx`) applies this per
//!   **ingress (port, PG)**, after each (port, PG)'s `reserved` cells, and this planner
//!   uses the same accounting: the burst's N ingress ports each hold 1/N of the egress
//!   queue, so m = N congested queues share the pool and each stops at
//!   `s* = α·S/(1 + N·α)`. The egress queue then holds at most
//!   `L = N·(r + α·S/(1+N·α))` cells (with one congested queue this is Choudhury &
//!   Hahne's α·S/(1+α)). S is the shared pool after reserved and headroom.
//! * **Largest burst absorbed**: the largest B with `Q(B) ≤ L`, i.e.
//!   `W_max = L·R_in/(N·R_in − R_out)` (closed form), then the largest B whose exact W
//!   fits (search over `write_wire_bytes`, which is monotone in B).
//! * **Lossy beyond it**: drops start when Q reaches L, at `t_d = 8L/(N·R_in − R_out)`,
//!   and first-order `Q − L` bytes are dropped (RC go-back-N retransmissions add more
//!   later; not modelled).
//! * **Lossless beyond it** (IEEE 802.1Qbb, SONiC's dynamic XOFF): every ingress PG hits
//!   s* at the same time, so the first XOFF fires at t_d on all N ports. A pause lasts
//!   until the PG falls to the resume point `xon_offset` below its (growing) threshold:
//!   `s ≤ (α·S − o)/(1+N·α)`, i.e. the queue drains `N·o/(1+N·α)` cells plus whatever
//!   landed in headroom, taking at least `8·N·o/((1+N·α)·R_out)` per cycle. Since the
//!   egress never idles, the last byte still leaves at `8·N·W/R_out`; the senders finish
//!   sending at `t_s = 8(N·W − L)/R_out`, so each sender is paused in total
//!   `t_s − 8W/R_in`. **Propagation**: the senders here are hosts attached to the
//!   congested switch, so the pause stops at their NICs (one hop). Senders behind another
//!   switch would see that switch's egress paused for the same total time while its
//!   ingress keeps arriving at R_in per port; it pauses further only if that fills its
//!   own dynamic threshold (not modelled here).
//!
//! Leaves out: propagation and switch latency, PFC response time and headroom (the
//! in-flight bytes after an XOFF), ECN/DCQCN, other traffic sharing the pool.

use model::frame::{roce_frame, wire, write_wire_bytes, Encap, Transport};
use serde::Serialize;
use units::{serialization, BitRate, Bytes, SimDuration};

/// Traffic class of the burst.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    Lossy,
    Lossless,
}

/// What the planner needs.
#[derive(Clone, Debug)]
pub struct BurstInput {
    pub senders: u32,
    /// Payload bytes per sender.
    pub burst: Bytes,
    pub in_speed: BitRate,
    pub out_speed: BitRate,
    /// Shared pool S (after reserved and headroom).
    pub shared: Bytes,
    pub cell: Bytes,
    /// α = 2^dynamic_th.
    pub dynamic_th: i8,
    /// Reserved (guaranteed) bytes per ingress (port, PG).
    pub reserved: Bytes,
    pub class: Class,
    /// IB path MTU (payload per packet).
    pub mtu: Bytes,
    /// PFC resume point below the trigger; `None`: two maximum frames (the simulator's auto).
    pub xon_offset: Option<Bytes>,
}

/// An input the planner refuses, naming it.
#[derive(Debug, thiserror::Error)]
#[error("{input}: {msg}")]
pub struct BurstError {
    pub input: &'static str,
    pub msg: String,
}

fn err(input: &'static str, msg: impl Into<String>) -> BurstError {
    BurstError { input, msg: msg.into() }
}

/// Beyond the largest absorbed burst.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "class", rename_all = "kebab-case")]
pub enum Beyond {
    /// The burst fits: nothing is dropped or paused.
    Absorbed,
    Lossy {
        drops_start_ps: u64,
        dropped_bytes: u64,
        dropped_packets: u64,
    },
    Lossless {
        first_xoff_ps: u64,
        /// Shortest single pause (hysteresis drain without headroom).
        min_pause_ps: u64,
        /// Total paused time of each sender's link.
        paused_per_sender_ps: u64,
        senders_finish_ps: u64,
        propagation: String,
    },
}

/// The planner's answer.
#[derive(Clone, Debug, Serialize)]
pub struct BurstPlan {
    pub senders: u32,
    pub burst_bytes: u64,
    pub class: Class,
    pub frame_bytes: u64,
    pub wire_bytes_per_frame: u64,
    pub cells_per_frame: u64,
    pub wire_bytes_per_sender: u64,
    /// Peak egress queue without a buffer limit: wire bytes, frame bytes, cells.
    pub peak_wire_bytes: u64,
    pub peak_frame_bytes: u64,
    pub peak_cells: u64,
    pub senders_done_ps: u64,
    pub drain_after_peak_ps: u64,
    pub last_byte_out_ps: u64,
    pub alpha: f64,
    pub shared_cells: u64,
    pub reserved_cells: u64,
    /// Per ingress PG shared-cell limit α·S/(1+N·α) and egress-queue limit L.
    pub per_pg_limit_cells: u64,
    pub limit_cells: u64,
    pub limit_wire_bytes: u64,
    pub limit_frame_bytes: u64,
    /// Largest payload per sender absorbed without loss/pause; `None`: any (no queue).
    pub max_burst_bytes: Option<u64>,
    pub xon_offset_cells: u64,
    pub beyond: Beyond,
}

/// α as a fraction num/den (α = 2^th).
fn alpha_frac(th: i8) -> (u128, u128) {
    if th >= 0 {
        (1u128 << th, 1)
    } else {
        (1, 1u128 << (-th))
    }
}

/// The wire encapsulation the planner and `--prove` assume (RoCEv2, IPv4, no VLAN).
pub const ENCAP: Encap = Encap { vlan: false, ipv6: false };

/// The full-MTU packet's sizes, which convert between wire bytes, frame bytes and cells.
struct Sizes {
    /// Frame bytes (MAC header to FCS).
    f: u64,
    /// Wire bytes (with preamble/SFD and IFG).
    fw: u64,
    /// Cells (rounded up).
    k: u64,
}

impl Sizes {
    fn wire_to_frame(&self, x: u128) -> u64 {
        (x * self.f as u128 / self.fw as u128) as u64
    }
    fn wire_to_cells(&self, x: u128) -> u64 {
        (x * self.k as u128).div_ceil(self.fw as u128) as u64
    }
    fn cells_to_wire(&self, c: u128) -> u64 {
        (c * self.fw as u128 / self.k as u128) as u64
    }
}

pub fn plan(i: &BurstInput) -> Result<BurstPlan, BurstError> {
    check(i)?;
    let n = i.senders as u128;
    let f = roce_frame(ENCAP, Transport::WriteRest, i.mtu).0;
    let sz = Sizes { f, fw: wire(Bytes(f)).0, k: Bytes(f).cells(i.cell) };
    let w = write_wire_bytes(ENCAP, i.burst, i.mtu).0;
    let rin = i.in_speed.0 as u128;
    let rout = i.out_speed.0 as u128;
    let congested = n * rin > rout;
    // Q = N·W − W·R_out/R_in (floor).
    let peak_w: u128 = if congested { n * w as u128 - (w as u128 * rout).div_ceil(rin) } else { 0 };
    let senders_done = serialization(Bytes(w), i.in_speed);
    let drain = serialization(Bytes(peak_w as u64), i.out_speed);
    let last = if congested { serialization(Bytes((n * w as u128) as u64), i.out_speed) } else { senders_done };

    let (an, ad) = alpha_frac(i.dynamic_th);
    let s_cells = i.shared.0 / i.cell.0;
    let r_cells = i.reserved.cells(i.cell);
    // s* = α·S/(1+N·α)
    let per_pg = model::buffer::dynamic_threshold_share(s_cells, n as u64, i.dynamic_th);
    let limit_c = n * (r_cells as u128 + per_pg as u128);
    let limit_w = sz.cells_to_wire(limit_c) as u128;

    let max_burst = if congested { Some(largest_absorbed(i, limit_w)) } else { None };
    let o_cells = i.xon_offset.map(|o| o.cells(i.cell)).unwrap_or(2 * sz.k);
    let over = congested && peak_w > limit_w;
    let beyond = if !over { Beyond::Absorbed } else { beyond_limit(i, &sz, w, peak_w, limit_w, o_cells, senders_done) };
    Ok(BurstPlan {
        senders: i.senders,
        burst_bytes: i.burst.0,
        class: i.class,
        frame_bytes: f,
        wire_bytes_per_frame: sz.fw,
        cells_per_frame: sz.k,
        wire_bytes_per_sender: w,
        peak_wire_bytes: peak_w as u64,
        peak_frame_bytes: sz.wire_to_frame(peak_w),
        peak_cells: sz.wire_to_cells(peak_w),
        senders_done_ps: senders_done.0,
        drain_after_peak_ps: drain.0,
        last_byte_out_ps: last.0,
        alpha: an as f64 / ad as f64,
        shared_cells: s_cells,
        reserved_cells: r_cells,
        per_pg_limit_cells: per_pg,
        limit_cells: limit_c as u64,
        limit_wire_bytes: limit_w as u64,
        limit_frame_bytes: (limit_c * f as u128 / sz.k as u128) as u64,
        max_burst_bytes: max_burst,
        xon_offset_cells: o_cells,
        beyond,
    })
}

/// The inputs the model needs, each named when refused.
fn check(i: &BurstInput) -> Result<(), BurstError> {
    if i.senders == 0 {
        return Err(err("senders", "must be at least 1"));
    }
    if i.burst.0 == 0 {
        return Err(err("burst", "must be more than 0 B"));
    }
    if i.in_speed.0 == 0 {
        return Err(err("in-speed", "must be more than 0 bps"));
    }
    if i.out_speed.0 == 0 {
        return Err(err("out-speed", "must be more than 0 bps"));
    }
    if i.cell.0 == 0 {
        return Err(err("cell", "must be more than 0 B"));
    }
    if i.shared.0 < i.cell.0 {
        return Err(err("buffer", format!("must hold at least one cell ({} B)", i.cell.0)));
    }
    if !(-7..=7).contains(&i.dynamic_th) {
        return Err(err("dynamic-th", "must be between -7 and 7 (α = 2^dynamic_th)"));
    }
    if !model::frame::IB_MTUS.contains(&i.mtu.0) {
        return Err(err("mtu", "must be an IB path MTU: 256B, 512B, 1024B, 2048B or 4096B"));
    }
    Ok(())
}

/// The largest payload per sender whose queue fits the limit (`limit_w` wire bytes) of a
/// congested port: W_max = L·R_in/(N·R_in − R_out), then the largest B whose W fits.
fn largest_absorbed(i: &BurstInput, limit_w: u128) -> u64 {
    let n = i.senders as u128;
    let rin = i.in_speed.0 as u128;
    let rout = i.out_speed.0 as u128;
    let w_max = limit_w * rin / (n * rin - rout);
    let fits = |b: u64| (write_wire_bytes(ENCAP, Bytes(b), i.mtu).0 as u128) <= w_max;
    if !fits(1) {
        0
    } else {
        let (mut lo, mut hi) = (1u64, (w_max as u64).max(1) + 1);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if fits(mid) {
                lo = mid
            } else {
                hi = mid
            }
        }
        lo
    }
}

/// What happens once the queue (`peak_w` wire bytes at its peak) passes the limit
/// (`limit_w`): drops on a lossy class, pauses on a lossless one.
fn beyond_limit(i: &BurstInput, sz: &Sizes, w: u64, peak_w: u128, limit_w: u128, o_cells: u64, senders_done: SimDuration) -> Beyond {
    let n = i.senders as u128;
    let rin = i.in_speed.0 as u128;
    let rout = i.out_speed.0 as u128;
    let (an, ad) = alpha_frac(i.dynamic_th);
    let excess = BitRate(((n * rin) - rout) as u64);
    let t_d = serialization(Bytes(limit_w as u64), excess).0;
    match i.class {
        Class::Lossy => {
            let dropped = (peak_w - limit_w) as u64;
            Beyond::Lossy { drops_start_ps: t_d, dropped_bytes: dropped, dropped_packets: dropped.div_ceil(sz.fw) }
        }
        Class::Lossless => {
            let hyst_c = (n * o_cells as u128 * ad).div_ceil(ad + n * an);
            let min_pause = serialization(Bytes(sz.cells_to_wire(hyst_c)), i.out_speed).0;
            let t_s = serialization(Bytes((n * w as u128 - limit_w) as u64), i.out_speed).0;
            Beyond::Lossless {
                first_xoff_ps: t_d,
                min_pause_ps: min_pause,
                paused_per_sender_ps: t_s.saturating_sub(senders_done.0),
                senders_finish_ps: t_s,
                propagation: "one hop: the senders are hosts on the congested switch, so PFC stops at their NICs \
                              (senders behind another switch would pause its egress for the same time, and that \
                              switch pauses further only if the held traffic exceeds its own dynamic threshold)"
                    .into(),
            }
        }
    }
}

/// The formulas with this plan's numbers and their sources (`--explain`).
pub fn explain(i: &BurstInput, p: &BurstPlan) -> Vec<String> {
    let us = |ps: u64| SimDuration(ps).as_us_f64();
    let mut v = vec![
        format!(
            "frame: RoCEv2 WRITE of MTU {} B = {} B frame, {} B on the wire (+8 preamble/SFD, +12 IFG; IEEE 802.3 cl. 4, RoCEv2 A17), \
             {} cells of {} B (frames rounded up to whole cells, as the simulator does)",
            i.mtu.0, p.frame_bytes, p.wire_bytes_per_frame, p.cells_per_frame, i.cell.0
        ),
        format!("W = write_wire_bytes({} B) = {} wire bytes per sender (model::frame)", p.burst_bytes, p.wire_bytes_per_sender),
        format!(
            "peak Q = N·W − W·R_out/R_in = {}·{} − {}·{}/{} = {} wire B (fluid queue of N·R_in into R_out), at t1 = 8W/R_in = {:.3} us",
            p.senders,
            p.wire_bytes_per_sender,
            p.wire_bytes_per_sender,
            i.out_speed.0,
            i.in_speed.0,
            p.peak_wire_bytes,
            us(p.senders_done_ps)
        ),
        format!(
            "drain after peak = 8Q/R_out = {:.3} us; last byte out = 8·N·W/R_out = {:.3} us (egress never idles)",
            us(p.drain_after_peak_ps),
            us(p.last_byte_out_ps)
        ),
        format!(
            "dynamic threshold (Choudhury & Hahne, IEEE/ACM ToN 1998; SONiC α = 2^dynamic_th): per ingress (port, PG), as the simulator: \
             s < α(S − used); N = {} congested PGs ⇒ s* = α·S/(1+N·α) = {}·{}/(1+{}·{}) = {} cells",
            p.senders, p.alpha, p.shared_cells, p.senders, p.alpha, p.per_pg_limit_cells
        ),
        format!(
            "queue limit L = N·(r + s*) = {}·({} + {}) = {} cells = {} wire B (with one congested queue: α·S/(1+α))",
            p.senders, p.reserved_cells, p.per_pg_limit_cells, p.limit_cells, p.limit_wire_bytes
        ),
        "largest burst: W_max = L·R_in/(N·R_in − R_out), then the largest B with write_wire_bytes(B) ≤ W_max".into(),
    ];
    match &p.beyond {
        Beyond::Absorbed => v.push("Q ≤ L: absorbed, nothing dropped or paused".into()),
        Beyond::Lossy { .. } => v.push("lossy: drops start at t_d = 8L/(N·R_in − R_out); dropped ≈ Q − L (first order; go-back-N resends add more)".into()),
        Beyond::Lossless { .. } => v.push(format!(
            "lossless (IEEE 802.1Qbb, SONiC dynamic XOFF): first XOFF at t_d = 8L/(N·R_in − R_out) on all N ingress ports; \
             resume at xon_offset o = {} cells below the threshold ⇒ a pause drains ≥ N·o/(1+N·α) cells; senders finish at \
             t_s = 8(N·W − L)/R_out, paused t_s − 8W/R_in each",
            p.xon_offset_cells
        )),
    }
    v
}
