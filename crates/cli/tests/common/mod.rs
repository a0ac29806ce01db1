//! Planner inputs the CLI's tests share: `plan roce`'s own tests, and `serve`'s API and
//! browser tests, which must give the web app exactly what they give the CLI.
//!
//! Each test binary compiles this module on its own and uses a part of it.
#![allow(dead_code)]

/// `plan roce` on a 100G leaf-spine (4 leaves × 2 spines, 8 hosts per leaf), 3 m host
/// cables, 100 m leaf-spine cables, an 8:1 incast, 16 MiB of 256 B cells.
pub const ROCE_100G: &[&str] = &[
    "--mtu",
    "4096B",
    "--incast",
    "8",
    "--leaves",
    "4",
    "--spines",
    "2",
    "--hosts-per-leaf",
    "8",
    "--host-leaf-speed",
    "100Gbps",
    "--host-leaf-cable",
    "3m",
    "--leaf-spine-speed",
    "100Gbps",
    "--leaf-spine-cable",
    "100m",
    "--buffer-total",
    "16MiB",
    "--cell",
    "256B",
];

/// `plan roce --model sonic` on Spectrum-3: 2 leaves × 2 spines, 4 hosts per leaf, 400G on
/// 8-lane ports (5 m to hosts, 40 m to spines), PGs 3-4 lossless, a 4:1 incast.
pub const SONIC_SPECTRUM3_400G: &[&str] = &[
    "--model",
    "sonic",
    "--asic",
    "spectrum-3",
    "--mtu",
    "4096B",
    "--incast",
    "4",
    "--leaves",
    "2",
    "--spines",
    "2",
    "--hosts-per-leaf",
    "4",
    "--host-leaf-speed",
    "400Gbps",
    "--host-leaf-cable",
    "5m",
    "--leaf-spine-speed",
    "400Gbps",
    "--leaf-spine-cable",
    "40m",
    "--buffer-total",
    "40MiB",
    "--lossless-priorities",
    "2",
    "--lanes",
    "8",
];

/// `inputs` without the flags (and their values) whose name starts with `prefix`.
pub fn without(inputs: &[&'static str], prefix: &str) -> Vec<&'static str> {
    inputs.chunks(2).filter(|flag_value| !flag_value[0].starts_with(prefix)).flatten().copied().collect()
}
