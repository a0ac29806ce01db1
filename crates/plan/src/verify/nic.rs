//! NIC settings (`--nic NIC.toml`): one NVIDIA ConnectX port as its tools print it, and
//! the switch port it is cabled to. Every field but `switch` and `port` is optional; a
//! check whose field is absent does not run. Unknown fields are an error naming the file
//! and the field.
//!
//! Where each field comes from (MLNX_OFED / DOCA host tools):
//! * `trust`, `pfc`: `mlnx_qos -i <if>` prints "Priority trust state: dscp|pcp" and
//!   "PFC configuration: priority 0..7 / enabled 0|1" (NVIDIA community "mlnx_qos",
//!   <https://community.mellanox.com/docs/DOC-2792>, MLNX_OFED 4.2).
//! * `roce_dscp`: the DSCP of RoCE traffic, the traffic class >> 2 of
//!   `/sys/class/infiniband/<dev>/tc/<port>/traffic_class` or `cma_roce_tos` (106 = DSCP 26
//!   with ECN bits 2, as in the sample output of att/netarbiter
//!   `nvmf/OUTPUTSAMPLE.setup-nic-lossless-layer3.sh.md`); ConnectX default 26.
//! * `roce_priority`: the priority RoCE traffic leaves on, the `mlnx_qos` dscp2prio entry of
//!   `roce_dscp` (default map: DSCP >> 3, so 26 → 3).
//! * `cnp_dscp`, `cnp_priority`: `/sys/class/net/<if>/ecn/roce_np/cnp_dscp` and
//!   `.../roce_np/cnp_802p_prio`; ConnectX defaults 48 and 6.
//! * `ecn_rp`, `ecn_np`: the priorities X with `/sys/class/net/<if>/ecn/roce_rp/enable/X`
//!   (reaction point: DCQCN rate control) and `.../roce_np/enable/X` (notification point:
//!   sends CNPs) set to 1 (NVIDIA DOCA "Explicit Congestion Notification",
//!   <https://docs.nvidia.com/doca/sdk/explicit+congestion+notification/index.html>; the
//!   same bits are `mlxconfig` `ROCE_CC_PRIO_MASK`, NVIDIA community "DCQCN Parameters",
//!   <https://community.mellanox.com/docs/DOC-2790>).
//! * `[roce_rp]`, `[roce_np]`: the DCQCN parameters under
//!   `/sys/class/net/<if>/ecn/roce_rp|roce_np/` with the names the driver prints (same
//!   sources), checked by `checks::dcqcn`. The ranges NVIDIA documents are enforced when the
//!   file is read (DOCA 3.4 "DCQCN CC Parameters"): `dce_tcp_g` 0..1023, `dce_tcp_rtt`
//!   1..131071 µs, `initial_alpha_value` 1..1023, `rpg_min_dec_fac` 0..100 %, `rpg_min_rate`
//!   at least 1 Mb/s (its upper bound, line rate, is a finding).
//! * `timeout`, `retry_cnt`: the RC QPs' local ACK timeout exponent and retry count, as the
//!   application sets them (NCCL: `NCCL_IB_TIMEOUT`, `NCCL_IB_RETRY_CNT`).

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::config_db::ReadError;

/// One NIC port's settings (an example is in docs/verify.md).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NicConfig {
    /// The switch's `DEVICE_METADATA|localhost|hostname`.
    pub switch: String,
    /// The switch port the NIC is cabled to, such as `Ethernet4`.
    pub port: String,
    /// `mlnx_qos` "Priority trust state": `dscp` or `pcp`.
    pub trust: Option<Trust>,
    /// `mlnx_qos` "PFC configuration": the priorities with PFC enabled.
    pub pfc: Option<BTreeSet<u32>>,
    pub roce_dscp: Option<u8>,
    pub roce_priority: Option<u32>,
    pub cnp_dscp: Option<u8>,
    pub cnp_priority: Option<u32>,
    /// Priorities with `ecn/roce_rp/enable/X` = 1.
    pub ecn_rp: Option<BTreeSet<u32>>,
    /// Priorities with `ecn/roce_np/enable/X` = 1.
    pub ecn_np: Option<BTreeSet<u32>>,
    pub roce_rp: Option<RoceRp>,
    pub roce_np: Option<RoceNp>,
    pub timeout: Option<u32>,
    pub retry_cnt: Option<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Trust {
    Dscp,
    Pcp,
}

/// `/sys/class/net/<if>/ecn/roce_rp/<name>`: DCQCN's reaction point.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RoceRp {
    pub clamp_tgt_rate: Option<u64>,
    pub clamp_tgt_rate_after_time_inc: Option<u64>,
    pub rpg_time_reset: Option<u64>,
    pub rpg_byte_reset: Option<u64>,
    pub rpg_threshold: Option<u64>,
    pub rpg_max_rate: Option<u64>,
    pub rpg_ai_rate: Option<u64>,
    pub rpg_hai_rate: Option<u64>,
    pub rpg_gd: Option<u64>,
    pub rpg_min_dec_fac: Option<u64>,
    pub rpg_min_rate: Option<u64>,
    pub rate_to_set_on_first_cnp: Option<u64>,
    pub dce_tcp_g: Option<u64>,
    pub dce_tcp_rtt: Option<u64>,
    pub rate_reduce_monitor_period: Option<u64>,
    pub initial_alpha_value: Option<u64>,
}

/// `/sys/class/net/<if>/ecn/roce_np/<name>`: DCQCN's notification point (the CNP's DSCP and
/// priority are the top-level `cnp_dscp`, `cnp_priority`).
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RoceNp {
    pub min_time_between_cnps: Option<u64>,
}

impl NicConfig {
    /// Parses one NIC file; errors name the file and the field.
    pub fn parse(file: &str, text: &str) -> Result<NicConfig, ReadError> {
        let nic: NicConfig = toml::from_str(text).map_err(|e| ReadError::Nic { file: file.into(), msg: e.to_string() })?;
        let bad = |field: &str, msg: String| Err(ReadError::Nic { file: file.into(), msg: format!("{field}: {msg}") });
        for (field, set) in [("pfc", &nic.pfc), ("ecn_rp", &nic.ecn_rp), ("ecn_np", &nic.ecn_np)] {
            if let Some(p) = set.as_ref().and_then(|s| s.iter().find(|&&p| p > 7)) {
                return bad(field, format!("priority {p} is not 0..7"));
            }
        }
        for (field, v) in [("roce_priority", nic.roce_priority), ("cnp_priority", nic.cnp_priority)] {
            if let Some(p) = v.filter(|&p| p > 7) {
                return bad(field, format!("priority {p} is not 0..7"));
            }
        }
        for (field, v) in [("roce_dscp", nic.roce_dscp), ("cnp_dscp", nic.cnp_dscp)] {
            if let Some(d) = v.filter(|&d| d > 63) {
                return bad(field, format!("DSCP {d} is not 0..63"));
            }
        }
        if let Some(t) = nic.timeout.filter(|t| !(1..=31).contains(t)) {
            return bad("timeout", format!("{t} is not 1..31 (0, infinite, has no retry budget)"));
        }
        if let Some(r) = nic.retry_cnt.filter(|&r| r > 7) {
            return bad("retry_cnt", format!("{r} is not 0..7"));
        }
        if let Some(rp) = &nic.roce_rp {
            for (field, v, lo, hi) in [
                ("dce_tcp_g", rp.dce_tcp_g, 0, 1023),
                ("dce_tcp_rtt", rp.dce_tcp_rtt, 1, 131_071),
                ("initial_alpha_value", rp.initial_alpha_value, 1, 1023),
                ("rpg_min_dec_fac", rp.rpg_min_dec_fac, 0, 100),
                ("rpg_min_rate", rp.rpg_min_rate, 1, u64::MAX),
            ] {
                if let Some(v) = v.filter(|v| !(lo..=hi).contains(v)) {
                    let range = if hi == u64::MAX { format!("at least {lo}") } else { format!("{lo}..{hi}") };
                    return bad(&format!("roce_rp.{field}"), format!("{v} is not {range} (NVIDIA DOCA \"DCQCN CC Parameters\")"));
                }
            }
        }
        Ok(nic)
    }
}
