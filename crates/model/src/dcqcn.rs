//! DCQCN parameter sets (Zhu et al., "Congestion Control for Large-Scale RDMA
//! Deployments", SIGCOMM 2015) and the vendor defaults that differ from the paper.
//!
//! Three named sets ([`DcqcnPreset`]): the paper's, NVIDIA ConnectX firmware defaults, and the
//! HPCC authors' ns-3 setting. Each constant says which of its values were confirmed
//! against which source, and which were not.
//!
//! The algorithm itself lives in the fabric crate (`congestion::dcqcn`); this module
//! holds only numbers and their sources, so the planner can print and reason about them.
//!
//! Symbols as in the paper: RC current rate, RT target rate, α congestion estimate,
//! g its EWMA gain, K the α-decay period, T the rate-increase timer, B the byte counter,
//! F the number of fast-recovery steps, R_AI / R_HAI the additive and hyper increase steps,
//! N the notification point's minimum interval between CNPs (of one QP or of one port,
//! [`CnpScope`]).
//!
//! Besides numbers, a set names the *rules* the three implementations differ in (when the
//! target rate follows the current rate, when a CNP inside the reduce interval is acted on,
//! how the rate climbs back, how a CNP travels, and whether a paced send is re-timed). Each
//! rule's variants cite where they come from.

use serde::{Deserialize, Serialize};
use units::{BitRate, Bytes, SimDuration};

/// A complete DCQCN parameter set.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DcqcnParams {
    /// EWMA gain g of α (α ← (1−g)α + g on a CNP; α ← (1−g)α each K without one).
    pub g: f64,
    /// α at QP creation.
    pub alpha_init: f64,
    /// K: α decays once per this period when no CNP arrived in it.
    pub alpha_timer: SimDuration,
    /// T: rate-increase timer period.
    pub rate_timer: SimDuration,
    /// B: a rate-increase event every this many bytes sent.
    pub byte_counter: Bytes,
    /// F: increase events (per timer and per byte counter) spent in fast recovery.
    pub fast_recovery_steps: u32,
    /// R_AI: target-rate step in additive increase.
    pub rate_ai: BitRate,
    /// R_HAI: target-rate step in hyper increase.
    pub rate_hai: BitRate,
    /// Floor of the current rate.
    pub min_rate: BitRate,
    /// N: notification point sends at most one CNP per this interval, per QP or per port
    /// as `cnp_scope` says (0: one for every marked packet).
    pub cnp_interval: SimDuration,
    /// Reaction point cuts the rate at most once per this interval (0: on every CNP).
    /// NVIDIA's `rate_reduce_monitor_period`, ns-3's `RATE_DECREASE_INTERVAL` (t_dec).
    pub rate_reduce_interval: SimDuration,
    /// RT ← RC at every cut (the paper; mlxconfig `CLAMP_TGT_RATE`).
    pub clamp_tgt_rate: bool,
    /// RT ← RC also at the first cut after a timer-driven increase, not only after a
    /// byte-counter one (mlxconfig `CLAMP_TGT_RATE_AFTER_TIME_INC`: "the target rate should
    /// be updated if the transmission rate was increased due to the timer, and not only due
    /// to the byte counter" — so a byte-counter increase always clamps at the next cut, as
    /// in the DCQCN authors' simulator, `rpr_cnm_received`; ns-3 `CheckRateDecreaseMlx`,
    /// which has no byte counter, clamps when `m_rpTimeStage != 0`). Ignored when
    /// `clamp_tgt_rate` is set.
    pub clamp_tgt_rate_after_time_inc: bool,
    /// When a CNP inside `rate_reduce_interval` is acted on.
    pub rate_reduce_timing: ReduceTiming,
    /// How the rate climbs back after a cut.
    pub increase: IncreaseRule,
    /// How the notification point signals congestion to the reaction point.
    pub cnp: CnpTransport,
    /// What `cnp_interval` counts: CNPs of one QP, or all CNPs leaving the port.
    pub cnp_scope: CnpScope,
    /// A QP's pending paced send moves when its rate changes (up or down). Without it the
    /// gap fixed when the previous packet left stands (ns-3: `m_nextAvail` is set at send
    /// time only).
    pub retime: bool,
}

/// When the reaction point acts on a CNP.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReduceTiming {
    /// A CNP cuts at once unless a cut happened less than `rate_reduce_interval` ago; then
    /// it cuts at that interval's end (one pending cut, however many CNPs come). NVIDIA
    /// (mlxconfig `RPG_GD` help, Mellanox/mstflint): "if a CNP is received, the flow rate is
    /// reduced at the beginning of the next rate_reduce_monitor_period interval";
    /// `RATE_REDUCE_MONITOR_PERIOD`: "the minimum time between 2 consecutive rate reductions
    /// for a single flow". With an interval of 0 every CNP cuts (the paper).
    Deferred,
    /// HPCC's ns-3 (`rdma-hw.cc`, `cnp_received_mlx` / `CheckRateDecreaseMlx`): the first
    /// CNP sets α to 1 without cutting and starts a check every `rate_reduce_interval`
    /// (first at +interval + 1 ns); each check cuts if a CNP arrived since the last one.
    /// The first α period does not count that CNP (`m_alpha_cnp_arrived = false`).
    Grid,
}

/// How the target and current rates climb back after a cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IncreaseRule {
    /// SIGCOMM 2015 Fig. 6: timer T and byte counter B each count increase events; fast
    /// recovery while both are ≤ F, additive (RT += R_AI) once one exceeds F, hyper
    /// (RT += i·R_HAI, i = min(counters) − F) once both do; RC ← (RT + RC)/2 each time.
    Paper,
    /// HPCC's ns-3 (`RateIncEventTimerMlx`): the timer alone; stage < F fast recovery,
    /// = F additive, > F hyper with a constant R_HAI; the stage counts timer events since
    /// the last cut and the timer keeps running.
    Ns3,
}

/// How a notification point's congestion signal reaches the reaction point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CnpTransport {
    /// A RoCEv2 CNP packet (BTH opcode 0x81) on the CNP priority (RoCEv2 Annex A17.9.3).
    Packet,
    /// A flag on the ACK (or NAK) of a marked packet: HPCC's ns-3 `ReceiveUdp` sets
    /// `SetCnp()` on the ACK when the packet it acknowledges carried ECN bits.
    AckFlag,
}

/// What `cnp_interval` limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CnpScope {
    /// At most one CNP per QP per interval (the paper's N, §3.1: "per flow").
    Qp,
    /// At most one CNP per interval from the port, whatever the QP: "Minimum time between
    /// sending CNPs from the port" (mlxconfig `MIN_TIME_BETWEEN_CNPS` help in
    /// Mellanox/mstflint; upstream mlx5 debugfs `np_min_time_between_cnps`, patch "IB/mlx5:
    /// Add np_min_time_between_cnps and rp_max_rate debug params", linux-rdma, 2020-02-27).
    Port,
}

/// Named parameter sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DcqcnPreset {
    /// Values of the SIGCOMM 2015 paper (§5 and its ns-3 release).
    Paper,
    /// NVIDIA ConnectX (mlx5) firmware defaults.
    NvidiaDefault,
    /// The `dcqcn` setting of the HPCC authors' ns-3 simulator at its default `--bw 50`
    /// (see [`hpcc_ns3`]).
    HpccNs3,
}

impl DcqcnPreset {
    pub fn params(self) -> DcqcnParams {
        match self {
            DcqcnPreset::Paper => PAPER,
            DcqcnPreset::NvidiaDefault => NVIDIA_DEFAULT,
            DcqcnPreset::HpccNs3 => hpcc_ns3(HPCC_NS3_DEFAULT_BW_GBPS),
        }
    }
    pub fn source(self) -> &'static str {
        match self {
            DcqcnPreset::Paper => "Zhu et al., SIGCOMM 2015, §5 (g=1/256, K=55us, T=55us, B=10MB, F=5, R_AI=40Mbps)",
            DcqcnPreset::NvidiaDefault => {
                "NVIDIA ConnectX firmware defaults (DOCA 3.4 'DCQCN CC Parameters' and mlxconfig query of \
                 ConnectX-5 fw 16.35: rpg_time_reset=300us, rpg_byte_reset=32767, rpg_threshold=1, \
                 rpg_ai_rate=5Mbps, rpg_hai_rate=50Mbps, rpg_gd=11, rpg_min_dec_fac=50, rpg_min_rate=1Mbps, \
                 dce_tcp_g=1019, dce_tcp_rtt=1us, initial_alpha_value=1023, rate_reduce_monitor_period=4us, \
                 min_time_between_cnps=4us)"
            }
            DcqcnPreset::HpccNs3 => {
                "alibaba-edu/High-Precision-Congestion-Control simulation/run.py --cc dcqcn --bw 50 \
                 (9f4be2a9): t_alpha=1us, t_dec=4us, t_inc=300us, g=1/256, F=1, ai=5*bw/25 Mbps, \
                 hai=50*bw/25 Mbps, MIN_RATE 1000Mbps; no byte counter, CNP on every ECN-marked ACK"
            }
        }
    }
}

/// The paper's values (its §5 guidelines for 40 Gb/s: g = 1/256, timer and α period 55 µs,
/// byte counter 10 MB, F = 5, R_AI = 40 Mb/s; N = 50 µs CNP interval).
///
/// Not re-checked against the paper's text in this revision: we could not read the paper
/// itself here. R_HAI is not stated in the paper's text; 200 Mb/s (5 × R_AI) is believed to
/// be the value of the authors' ns-3 release, unconfirmed. For comparison, HPCC's
/// `run.py --cc dcqcn_paper` (see [`hpcc_ns3`]) reads the paper as α period 50 µs, rate-cut
/// interval 50 µs, timer 55 µs, g = 1/256, with R_AI/R_HAI 5/50 Mb/s per 25 Gb/s and F = 1.
pub const PAPER: DcqcnParams = DcqcnParams {
    g: 1.0 / 256.0,
    alpha_init: 1.0,
    alpha_timer: SimDuration::from_us(55),
    rate_timer: SimDuration::from_us(55),
    byte_counter: Bytes(10_000_000),
    fast_recovery_steps: 5,
    rate_ai: BitRate::from_mbps(40),
    rate_hai: BitRate::from_mbps(200),
    min_rate: BitRate::from_mbps(10),
    cnp_interval: SimDuration::from_us(50),
    rate_reduce_interval: SimDuration::ZERO,
    clamp_tgt_rate: true,
    clamp_tgt_rate_after_time_inc: false,
    rate_reduce_timing: ReduceTiming::Deferred,
    increase: IncreaseRule::Paper,
    cnp: CnpTransport::Packet,
    cnp_scope: CnpScope::Qp,
    retime: true,
};

/// NVIDIA ConnectX (ConnectX-4 and later) firmware defaults, from [`NVIDIA_FIRMWARE`].
///
/// Sources, checked for this table:
/// * NVIDIA DOCA SDK 3.4.0 documentation, "DCQCN CC Parameters"
///   (networking-docs.nvidia.com/doca/archive/3-4-0/dcqcn-cc-parameters): `dce_tcp_g` 1019
///   (fixed point, 10 fractional bits), `dce_tcp_rtt` 1 µs, `initial_alpha_value` 1023
///   (10 fractional bits), `rate_to_set_on_first_cnp` 0, `rpg_min_dec_fac` 50 %,
///   `rpg_min_rate` 1 Mb/s, `rpg_gd` 11, `rate_reduce_monitor_period` 4 µs.
/// * `mlxconfig -d <dev> query` of a ConnectX-5 (MCX555A-ECA, firmware 16.35.4506) reproduced
///   in a public HPC administration guide, which also lists RPG_TIME_RESET 300,
///   RPG_BYTE_RESET 32767, RPG_THRESHOLD 1, RPG_AI_RATE 5, RPG_HAI_RATE 50 and
///   MIN_TIME_BETWEEN_CNPS 4, CLAMP_TGT_RATE False, CLAMP_TGT_RATE_AFTER_TIME_INC True. An
///   older dump (ConnectX-5 Ex fw 16.27.2008, posted to the xdp-newbies list on 2020-06-22)
///   agrees on every value except MIN_TIME_BETWEEN_CNPS 2, so the CNP interval may differ
///   by firmware release (or that card was configured); 4 µs is kept here.
///
/// Readings that are ours, not NVIDIA's wording: on a CNP the firmware sets
/// α ← (dce_tcp_g/1024)·α + (1024−dce_tcp_g)/1024 and without one α ← (dce_tcp_g/1024)·α, so
/// the paper's g is (1024 − 1019)/1024 = 5/1024 (the formula as printed in Mellanox's
/// community page "DCQCN Parameters", DOC-2790). `rpg_gd` = 11 with α in 10-bit fixed point
/// makes the cut RC·(1 − α/2), the paper's. `rpg_byte_reset` is in bytes (mlxconfig help:
/// "Given in Bytes").
///
/// The gain has a second reading. mlxconfig's help text (Mellanox/mstflint) prints
/// "Alpha = (cnp_received * dceTcpG) + (1 - dceTcpG) * alpha, dceTcpG is divided by 2^10",
/// which read literally makes g = 1019/1024 (α ≈ 1 in any µs with a CNP, ≈ 0 a µs after
/// one without). We take 5/1024 per 1 µs step because HPCC's "Mellanox version" of DCQCN
/// (`rdma-hw.cc`, `UpdateAlphaMlx`, run.py `--cc dcqcn`) updates α every 1 µs with
/// g = 1/256, the same order; docs/roce.md shows both readings on the 2:1 all-to-all.
///
/// Rules (see [`ReduceTiming`], [`CnpScope`]): the target rate is clamped only on the first
/// cut after an increase, by the byte counter or the timer (`CLAMP_TGT_RATE` False,
/// `CLAMP_TGT_RATE_AFTER_TIME_INC` True, as queried above); a CNP inside the monitor period is deferred to its end, not
/// dropped; the CNP interval counts every CNP from the port, as mlxconfig's and upstream
/// mlx5's texts describe it (newer firmware has a `ROCE_CC_CNP_MODERATION` setting with a
/// per-flow mode; its default is not published). The increase machine is the paper's
/// (timer and byte counter; mlxconfig names `rpByteStage`/`rpTimeStage` and
/// `RPR_ACTIVE_INCREASE`/`RPR_HYPER_INCREASE`); a paced send is re-timed when the rate
/// changes.
pub const NVIDIA_DEFAULT: DcqcnParams = DcqcnParams {
    g: (1024 - NVIDIA_FIRMWARE.dce_tcp_g) as f64 / 1024.0,
    alpha_init: NVIDIA_FIRMWARE.initial_alpha_value as f64 / 1024.0,
    alpha_timer: SimDuration::from_us(NVIDIA_FIRMWARE.dce_tcp_rtt_us as u64),
    rate_timer: SimDuration::from_us(NVIDIA_FIRMWARE.rpg_time_reset_us as u64),
    byte_counter: Bytes(NVIDIA_FIRMWARE.rpg_byte_reset as u64),
    fast_recovery_steps: NVIDIA_FIRMWARE.rpg_threshold,
    rate_ai: BitRate::from_mbps(NVIDIA_FIRMWARE.rpg_ai_rate_mbps as u64),
    rate_hai: BitRate::from_mbps(NVIDIA_FIRMWARE.rpg_hai_rate_mbps as u64),
    min_rate: BitRate::from_mbps(NVIDIA_FIRMWARE.rpg_min_rate_mbps as u64),
    cnp_interval: SimDuration::from_us(NVIDIA_FIRMWARE.min_time_between_cnps_us as u64),
    rate_reduce_interval: SimDuration::from_us(NVIDIA_FIRMWARE.rate_reduce_monitor_period_us as u64),
    clamp_tgt_rate: NVIDIA_FIRMWARE.clamp_tgt_rate,
    clamp_tgt_rate_after_time_inc: NVIDIA_FIRMWARE.clamp_tgt_rate_after_time_inc,
    rate_reduce_timing: ReduceTiming::Deferred,
    increase: IncreaseRule::Paper,
    cnp: CnpTransport::Packet,
    cnp_scope: CnpScope::Port,
    retime: true,
};

/// NVIDIA's DCQCN knobs as the firmware and `mlxconfig` name and count them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct NvidiaFirmwareDcqcn {
    /// Rate-increase timer, µs.
    pub rpg_time_reset_us: u32,
    /// Bytes sent between rate-increase events.
    pub rpg_byte_reset: u32,
    /// Increase events spent in fast recovery (the paper's F).
    pub rpg_threshold: u32,
    pub rpg_ai_rate_mbps: u32,
    pub rpg_hai_rate_mbps: u32,
    /// log2 of the divisor of α in the rate cut, fixed point as NVIDIA documents it.
    pub rpg_gd: u32,
    /// Largest single cut, percent of the current rate.
    pub rpg_min_dec_fac_percent: u32,
    pub rpg_min_rate_mbps: u32,
    /// 0: the first CNP does not set the rate directly.
    pub rate_to_set_on_first_cnp_mbps: u32,
    /// α weight kept on each update, in 1/1024.
    pub dce_tcp_g: u32,
    /// α update period, µs.
    pub dce_tcp_rtt_us: u32,
    /// α at the first CNP, in 1/1024.
    pub initial_alpha_value: u32,
    pub rate_reduce_monitor_period_us: u32,
    /// Notification point: at most one CNP from the port per this many µs ([`CnpScope::Port`]).
    pub min_time_between_cnps_us: u32,
    /// RT ← RC at every cut.
    pub clamp_tgt_rate: bool,
    /// RT ← RC at the first cut after a timer increase too (a byte-counter increase
    /// always clamps).
    pub clamp_tgt_rate_after_time_inc: bool,
}

/// The defaults of [`NVIDIA_DEFAULT`], as the firmware holds them (sources there).
pub const NVIDIA_FIRMWARE: NvidiaFirmwareDcqcn = NvidiaFirmwareDcqcn {
    rpg_time_reset_us: 300,
    rpg_byte_reset: 32_767,
    rpg_threshold: 1,
    rpg_ai_rate_mbps: 5,
    rpg_hai_rate_mbps: 50,
    rpg_gd: 11,
    rpg_min_dec_fac_percent: 50,
    rpg_min_rate_mbps: 1,
    rate_to_set_on_first_cnp_mbps: 0,
    dce_tcp_g: 1019,
    dce_tcp_rtt_us: 1,
    initial_alpha_value: 1023,
    rate_reduce_monitor_period_us: 4,
    min_time_between_cnps_us: 4,
    clamp_tgt_rate: false,
    clamp_tgt_rate_after_time_inc: true,
};

/// `--bw` default of HPCC's `simulation/run.py` (Gb/s), used by [`DcqcnPreset::HpccNs3`].
pub const HPCC_NS3_DEFAULT_BW_GBPS: u64 = 50;

/// The DCQCN parameters HPCC's ns-3 simulator uses with `--cc dcqcn` for a NIC of
/// `bw_gbps` Gb/s.
///
/// Source: alibaba-edu/High-Precision-Congestion-Control at 9f4be2a9ead8,
/// `simulation/run.py` (`--cc dcqcn`: `mode=1, t_alpha=1, t_dec=4, t_inc=300,
/// g=0.00390625`, `ai = 5*bw/25`, `hai = 50*bw/25` Mb/s, template lines
/// `FAST_RECOVERY_TIMES 1`, `MIN_RATE 1000Mb/s`, `CLAMP_TARGET_RATE 0`) and
/// `simulation/src/point-to-point/model/rdma-hw.cc`: α is set to 1 on a QP's first CNP;
/// rate increase is driven by the timer alone (there is no byte counter, so
/// `byte_counter` here is `u64::MAX` bytes, which never fires); the receiver flags a CNP on
/// every ACK of an ECN-marked packet (no notification-point interval, `cnp_interval` 0)
/// and the sender cuts at most once per `t_dec`. `mix/config.txt` in that repository is an
/// HPCC (`CC_MODE 3`) example, not the DCQCN setting.
pub fn hpcc_ns3(bw_gbps: u64) -> DcqcnParams {
    DcqcnParams {
        g: 1.0 / 256.0,
        alpha_init: 1.0,
        alpha_timer: SimDuration::from_us(1),
        rate_timer: SimDuration::from_us(300),
        byte_counter: Bytes(u64::MAX),
        fast_recovery_steps: 1,
        // 5·bw/25 Mb/s = 0.2·bw Mb/s = 200 kb/s per Gb/s of NIC speed.
        rate_ai: BitRate(bw_gbps.saturating_mul(200_000)),
        rate_hai: BitRate(bw_gbps.saturating_mul(2_000_000)),
        min_rate: BitRate::from_mbps(1000),
        cnp_interval: SimDuration::ZERO,
        rate_reduce_interval: SimDuration::from_us(4),
        // `CLAMP_TARGET_RATE 0` in run.py's template; the stage test is the ATI rule.
        clamp_tgt_rate: false,
        clamp_tgt_rate_after_time_inc: true,
        rate_reduce_timing: ReduceTiming::Grid,
        increase: IncreaseRule::Ns3,
        cnp: CnpTransport::AckFlag,
        cnp_scope: CnpScope::Qp,
        retime: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvidia_default_from_firmware_values() {
        let p = NVIDIA_DEFAULT;
        assert_eq!(p.g, 5.0 / 1024.0);
        assert_eq!(p.alpha_init, 1023.0 / 1024.0);
        assert_eq!(p.rate_timer, SimDuration::from_us(300));
        assert_eq!(p.byte_counter, Bytes(32_767));
        assert_eq!(p.fast_recovery_steps, 1);
        assert_eq!((p.rate_ai, p.rate_hai), (BitRate::from_mbps(5), BitRate::from_mbps(50)));
        assert_eq!(p.cnp_interval, SimDuration::from_us(4));
        // rpg_gd = 11 means the cut divides alpha (10-bit fixed point) by 2^11 / 2^10 = 2.
        assert_eq!(1u32 << NVIDIA_FIRMWARE.rpg_gd, 2 * 1024);
    }

    #[test]
    fn hpcc_ns3_scales_with_bandwidth() {
        let p = DcqcnPreset::HpccNs3.params();
        assert_eq!((p.rate_ai, p.rate_hai), (BitRate::from_mbps(10), BitRate::from_mbps(100)));
        let p = hpcc_ns3(100);
        assert_eq!((p.rate_ai, p.rate_hai), (BitRate::from_mbps(20), BitRate::from_mbps(200)));
        assert_eq!(hpcc_ns3(25).rate_ai, BitRate::from_mbps(5));
        assert_eq!(p.g, 0.00390625);
    }
}
