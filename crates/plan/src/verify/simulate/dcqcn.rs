//! The scenario's DCQCN from the NIC files' `[roce_rp]` / `[roce_np]` (the ConnectX sysfs
//! values, `nic.rs`): the preset `nvidia-default` (the ConnectX firmware defaults,
//! `model::dcqcn::NVIDIA_DEFAULT`) with every value a NIC file gives as an override, read
//! as that preset reads the firmware's (`model::dcqcn::NVIDIA_FIRMWARE`'s doc):
//!
//! | NIC field | unit | scenario `[roce.dcqcn]` |
//! |---|---|---|
//! | `rpg_time_reset` | µs | `rate_timer` |
//! | `rpg_byte_reset` | bytes | `byte_counter` |
//! | `rpg_threshold` | count | `fast_recovery_steps` |
//! | `rpg_ai_rate`, `rpg_hai_rate`, `rpg_min_rate` | Mb/s | `rate_ai`, `rate_hai`, `min_rate` |
//! | `dce_tcp_g` | 1/1024 | `g` = (1024 − dce_tcp_g)/1024 |
//! | `dce_tcp_rtt` | µs | `alpha_timer` |
//! | `rate_reduce_monitor_period` | µs | `rate_reduce_interval` |
//! | `clamp_tgt_rate`, `clamp_tgt_rate_after_time_inc` | 0/1 | the same, as booleans |
//! | `min_time_between_cnps` (`[roce_np]`) | µs | `cnp_interval` |
//!
//! Left out (no scenario field; a note names them when given): `rpg_gd`,
//! `rpg_min_dec_fac`, `rpg_max_rate`, `rate_to_set_on_first_cnp`, `initial_alpha_value`.
//! The scenario has one DCQCN for every NIC: the first NIC file with values is used, and a
//! note names the files whose values differ. Without any, the preset alone, said so.

use super::super::nic::NicConfig;
use super::toml::Origin;

/// The preset and its overrides: (scenario field, TOML value, origin).
pub struct Dcqcn {
    pub preset: (&'static str, Origin),
    pub overrides: Vec<(&'static str, String, Origin)>,
}

/// (NIC field, scenario field, the NIC's value, how the scenario writes it).
type Pair<'a> = (&'static str, &'static str, Option<u64>, &'a dyn Fn(u64) -> String);

/// The overrides one NIC file gives, and the names it gives that the scenario lacks.
fn overrides(file: &str, n: &NicConfig) -> (Vec<(&'static str, String, Origin)>, Vec<&'static str>) {
    let mut out = vec![];
    let mut left_out = vec![];
    let o = |sect: &str, f: &str| Origin::Given(format!("{file} [{sect}] {f}"));
    if let Some(rp) = &n.roce_rp {
        let us = |v: u64| format!("\"{v}us\"");
        let mbps = |v: u64| format!("\"{v}Mbps\"");
        let pairs: [Pair; 11] = [
            ("rpg_time_reset", "rate_timer", rp.rpg_time_reset, &us),
            ("rpg_byte_reset", "byte_counter", rp.rpg_byte_reset, &|v| format!("\"{v}B\"")),
            ("rpg_threshold", "fast_recovery_steps", rp.rpg_threshold, &|v| v.to_string()),
            ("rpg_ai_rate", "rate_ai", rp.rpg_ai_rate, &mbps),
            ("rpg_hai_rate", "rate_hai", rp.rpg_hai_rate, &mbps),
            ("rpg_min_rate", "min_rate", rp.rpg_min_rate, &mbps),
            ("dce_tcp_g", "g", rp.dce_tcp_g.filter(|&g| g < 1024), &|v| format!("{:?}", (1024 - v) as f64 / 1024.0)),
            ("dce_tcp_rtt", "alpha_timer", rp.dce_tcp_rtt, &us),
            ("rate_reduce_monitor_period", "rate_reduce_interval", rp.rate_reduce_monitor_period, &us),
            ("clamp_tgt_rate", "clamp_tgt_rate", rp.clamp_tgt_rate, &|v| (v != 0).to_string()),
            ("clamp_tgt_rate_after_time_inc", "clamp_tgt_rate_after_time_inc", rp.clamp_tgt_rate_after_time_inc, &|v| (v != 0).to_string()),
        ];
        for (nic_name, field, v, fmt) in pairs {
            if let Some(v) = v {
                out.push((field, fmt(v), o("roce_rp", nic_name)));
            }
        }
        for (name, given) in [
            ("rpg_gd", rp.rpg_gd.is_some()),
            ("rpg_min_dec_fac", rp.rpg_min_dec_fac.is_some()),
            ("rpg_max_rate", rp.rpg_max_rate.is_some()),
            ("rate_to_set_on_first_cnp", rp.rate_to_set_on_first_cnp.is_some()),
            ("initial_alpha_value", rp.initial_alpha_value.is_some()),
        ] {
            if given {
                left_out.push(name);
            }
        }
    }
    if let Some(v) = n.roce_np.as_ref().and_then(|np| np.min_time_between_cnps) {
        out.push(("cnp_interval", format!("\"{v}us\""), o("roce_np", "min_time_between_cnps")));
    }
    (out, left_out)
}

/// The scenario's DCQCN from the NIC files, with notes.
pub fn dcqcn(nics: &[(String, NicConfig)], notes: &mut Vec<String>) -> Dcqcn {
    let with: Vec<(&String, (Vec<_>, Vec<_>))> = nics.iter().map(|(f, n)| (f, overrides(f, n))).filter(|(_, (o, l))| !o.is_empty() || !l.is_empty()).collect();
    let Some((file, (first, left_out))) = with.first() else {
        return Dcqcn {
            preset: ("nvidia-default", Origin::Assumed("no NIC file gives [roce_rp]/[roce_np]: the ConnectX firmware defaults".into())),
            overrides: vec![],
        };
    };
    if !left_out.is_empty() {
        notes.push(format!("{file}: {} not simulated (the scenario's DCQCN has no such parameter)", left_out.join(", ")));
    }
    let values = |o: &Vec<(&'static str, String, Origin)>| o.iter().map(|(f, v, _)| (*f, v.clone())).collect::<Vec<_>>();
    for (other, (o, _)) in &with[1..] {
        if values(o) != values(first) {
            notes.push(format!("{other}: DCQCN values differ from {file}'s; the scenario has one DCQCN for every NIC, {file}'s"));
        }
    }
    Dcqcn { preset: ("nvidia-default", Origin::Given(format!("{file}: [roce_rp]/[roce_np] over the ConnectX firmware defaults"))), overrides: first.clone() }
}
