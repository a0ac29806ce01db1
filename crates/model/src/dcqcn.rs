//! DCQCN parameter sets (Zhu et al., "Congestion Control for Large-Scale RDMA
//! Deployments", SIGCOMM 2015) and the vendor defaults that differ from the paper.
//!
//! The algorithm itself lives in the fabric crate (`congestion::dcqcn`); this module
//! holds only numbers and their sources, so the planner can print and reason about them.
//!
//! Symbols as in the paper: RC current rate, RT target rate, α congestion estimate,
//! g its EWMA gain, K the α-decay period, T the rate-increase timer, B the byte counter,
//! F the number of fast-recovery steps, R_AI / R_HAI the additive and hyper increase steps,
//! N the notification point's minimum interval between CNPs of one QP.

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
    /// N: notification point sends at most one CNP per QP per this interval.
    pub cnp_interval: SimDuration,
    /// Reaction point cuts the rate at most once per this interval (0: on every CNP).
    pub rate_reduce_interval: SimDuration,
}

/// Named parameter sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DcqcnPreset {
    /// Values of the SIGCOMM 2015 paper (§5 and its ns-3 release).
    Paper,
    /// NVIDIA ConnectX (mlx5) firmware defaults.
    NvidiaDefault,
}

impl DcqcnPreset {
    pub fn params(self) -> DcqcnParams {
        match self {
            DcqcnPreset::Paper => PAPER,
            DcqcnPreset::NvidiaDefault => NVIDIA_DEFAULT,
        }
    }
    pub fn source(self) -> &'static str {
        match self {
            DcqcnPreset::Paper => "Zhu et al., SIGCOMM 2015, §5 (g=1/256, K=55us, T=55us, B=10MB, F=5, R_AI=40Mbps)",
            DcqcnPreset::NvidiaDefault => {
                "NVIDIA mlx5 DCQCN defaults (MLNX_OFED/DOCA 'DCQCN parameters': rpg_time_reset=300us, \
                 rpg_byte_reset=32767B, rpg_threshold=1, rpg_ai_rate=5Mbps, rpg_hai_rate=50Mbps, \
                 min_time_between_cnps=4us, rate_reduce_monitor_period=4us, rpg_min_rate=1Mbps)"
            }
        }
    }
}

/// The paper's values. R_HAI is not stated in the paper's text; 200 Mb/s is the value
/// of the authors' ns-3 release (5 × R_AI).
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
};

/// NVIDIA ConnectX defaults. `dce_tcp_g` = 1019 in units of 1/1024 is the weight kept,
/// so g = 5/1024; `dce_tcp_rtt` (the α update period) defaults to 1 µs.
pub const NVIDIA_DEFAULT: DcqcnParams = DcqcnParams {
    g: 5.0 / 1024.0,
    alpha_init: 1.0,
    alpha_timer: SimDuration::from_us(1),
    rate_timer: SimDuration::from_us(300),
    byte_counter: Bytes(32_767),
    fast_recovery_steps: 1,
    rate_ai: BitRate::from_mbps(5),
    rate_hai: BitRate::from_mbps(50),
    min_rate: BitRate::from_mbps(1),
    cnp_interval: SimDuration::from_us(4),
    rate_reduce_interval: SimDuration::from_us(4),
};
