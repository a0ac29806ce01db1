//! DCQCN starting parameters by NIC family ([`model::dcqcn`] presets): NVIDIA ConnectX
//! firmware defaults or the DCQCN paper's values, each with the reason it was chosen.
//!
//! Left out: tuning from measurements; the plan gives a starting point only.

use model::dcqcn::{DcqcnParams, DcqcnPreset};
use serde::Serialize;
use units::SimDuration;

use super::{Nic, RoceInput};

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DcqcnPlan {
    pub preset: String,
    pub source: String,
    pub params: DcqcnParams,
    /// (parameter, value, why).
    pub reasons: Vec<(String, String, String)>,
}

pub(super) fn dcqcn_plan(i: &RoceInput) -> DcqcnPlan {
    let preset = match i.nic {
        Nic::Connectx => DcqcnPreset::NvidiaDefault,
        Nic::Paper => DcqcnPreset::Paper,
    };
    let p = preset.params();
    let us = |d: SimDuration| format!("{} us", d.as_us_f64());
    let why: [(&str, String, &str, &str); 9] = [
        ("g", format!("{:.6}", p.g), "dce_tcp_g = 1019/1024 fixed point: alpha moves 5/1024 per step", "the paper's 1/256 (§5)"),
        ("K (alpha timer)", us(p.alpha_timer), "dce_tcp_rtt: alpha decays every 1 us without CNP", "55 us (§5)"),
        ("T (rate timer)", us(p.rate_timer), "rpg_time_reset: a rate-increase event every 300 us", "55 us (§5)"),
        ("B (byte counter)", format!("{}", p.byte_counter), "rpg_byte_reset 32767 B", "10 MB (§5)"),
        ("F (fast recovery)", p.fast_recovery_steps.to_string(), "rpg_threshold 1", "5 (§5)"),
        ("R_AI", format!("{}", p.rate_ai), "rpg_ai_rate 5 Mb/s", "40 Mb/s (§5)"),
        ("R_HAI", format!("{}", p.rate_hai), "rpg_hai_rate 50 Mb/s", "5 x R_AI, unconfirmed (see model::dcqcn::PAPER)"),
        ("min rate", format!("{}", p.min_rate), "rpg_min_rate 1 Mb/s", "floor of the paper's ns-3 release"),
        ("N (CNP interval)", us(p.cnp_interval), "min_time_between_cnps 4 us", "50 us (§5)"),
    ];
    let reasons = why
        .into_iter()
        .map(|(n, v, cx, paper)| {
            let r = match i.nic {
                Nic::Connectx => format!("the NIC's firmware default ({cx}); start from what the NIC runs and tune ECN first"),
                Nic::Paper => format!("the DCQCN paper's value ({paper}), for NICs without vendor defaults"),
            };
            (n.to_string(), v, r)
        })
        .collect();
    DcqcnPlan { preset: format!("{preset:?}"), source: preset.source().to_string(), params: p, reasons }
}
