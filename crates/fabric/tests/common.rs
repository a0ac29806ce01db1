//! Scenario text builders shared by the integration tests.
#![allow(dead_code)]

/// A scenario with the given topology, RoCE extras and traffic sections.
pub fn scenario(topology: &str, roce_extra: &str, buffer: &str, traffic: &str) -> String {
    format!(
        r#"
[scenario]
name = "test"
seed = 7

{topology}

[roce]
mtu = "4096B"
lossless_priorities = [3]
dscp_to_tc = {{ 26 = 3, 48 = 6 }}
cnp_dscp = 48
timeout = 14
retry_cnt = 7
switch_latency = "0ns"
pfc = {{ enabled = true, quanta = 65535, refresh = "auto", response = "auto" }}
{roce_extra}

{buffer}

{traffic}
"#
    )
}

pub const LEAF_SPINE: &str = r#"
[topology]
kind = "leaf-spine"
leaves = 2
spines = 2
hosts_per_leaf = 8
host_link = { speed = "100Gbps", cable = "3m" }
fabric_link = { speed = "100Gbps", cable = "20m" }
"#;

/// 16 ranks on 4 leaves × 2 spines: 4 hosts of 100 Gb/s per leaf over 2 uplinks of
/// 100 Gb/s (one per spine), 2:1. The load-balancing tests of both fabrics run their
/// all-to-all on it.
pub const LEAF_SPINE_2TO1: &str = r#"
[topology]
kind = "leaf-spine"
leaves = 4
spines = 2
hosts_per_leaf = 4
host_link = { speed = "100Gbps", cable = "3m" }
fabric_link = { speed = "100Gbps", cable = "20m" }
"#;

pub const BUFFER: &str = r#"
[buffer]
total = "16MiB"
cell = "256B"
dynamic_th = 0
reserved = "0B"
headroom = "auto"
xoff = "dynamic"
"#;

pub fn load(s: &str) -> scenario::World {
    match scenario::load_str("test.toml", s) {
        Ok(w) => w,
        Err(e) => panic!("scenario does not load: {e}"),
    }
}

/// An InfiniBand scenario with the given topology, `[infiniband]` overrides and traffic.
/// Overrides replace the default line with the same key.
pub fn ib_scenario(topology: &str, overrides: &[(&str, &str)], traffic: &str) -> String {
    let mut ib = vec![
        ("mtu", "\"4096B\""),
        ("data_vls", "1"),
        ("vl_buffer", "\"128KiB\""),
        ("hoq_lifetime", "\"auto\""),
        ("switch_lifetime", "\"auto\""),
        ("routing", "\"dest-hash\""),
        ("timeout", "20"),
        ("retry_cnt", "7"),
        ("forwarding", "\"cut-through\""),
        ("switch_latency", "\"0ns\""),
    ];
    for &(k, v) in overrides {
        match ib.iter_mut().find(|(key, _)| *key == k) {
            Some(e) => e.1 = v,
            None => ib.push((k, v)),
        }
    }
    let body: Vec<String> = ib.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    format!("[scenario]\nname = \"test\"\nseed = 7\n\n{topology}\n\n[infiniband]\n{}\n\n{traffic}\n", body.join("\n"))
}

/// A ring of `n` switches, one host each; port 1 goes clockwise, port 2 anticlockwise.
/// Hosts attach at HDR (200 Gb/s), the ring runs at EDR (100 Gb/s), so the ring is the
/// bottleneck and its buffers fill.
pub fn ring(n: usize, cable: &str) -> String {
    let mut s = String::from("[topology]\nkind = \"explicit\"\nnodes = [\n");
    for i in 0..n {
        s += &format!("  {{ name = \"s{i}\", kind = \"switch\", ports = 3 }},\n  {{ name = \"h{i}\", kind = \"host\" }},\n");
    }
    s += "]\nlinks = [\n";
    for i in 0..n {
        s += &format!("  {{ a = \"s{i}:0\", b = \"h{i}\", speed = \"200Gbps\", cable = \"{cable}\" }},\n");
        s += &format!("  {{ a = \"s{i}:1\", b = \"s{}:2\", speed = \"100Gbps\", cable = \"{cable}\" }},\n", (i + 1) % n);
    }
    s + "]\n"
}
