//! `plan::roce`: worked headroom examples for both models, and every risk flag shown firing
//! and not firing.
//!
//! IEEE rows are worked by hand from IEEE 802.1Qbb Annex N's terms (as in
//! `model::headroom`): W = reverse max frame + PFC frame (84 wire B) + 2 × cable (5 ns/m) +
//! peer response (IEEE 802.3 Annex 31B quanta × 512 bit times); frames = ceil(W/P) (the
//! planned trigger is static, so the frame crossing it stays below it; a dynamic trigger
//! needs one more); cells = frames × cells of one maximum frame. The RoCE frame at path MTU m is m + 78 B (Ethernet 14, IPv4 20, UDP 8,
//! BTH 12, RETH 16, ICRC 4, FCS 4; no VLAN tag).
//!
//! SONiC rows are the two worked by hand in `model/tests/sonic_headroom.rs` from the Lua's
//! arithmetic (and checked there against the Lua itself), plus a grid of speeds × cables ×
//! MTUs checked against `model::sonic::mellanox_headroom` (itself checked against the Lua).

use plan::roce::*;
use units::{BitRate, Length};

fn link(speed: &str, cable: &str) -> Option<LinkConfig> {
    Some(LinkConfig { speed: Some(speed.into()), cable: Some(cable.into()), lanes: None })
}

/// A small leaf-spine with one host-leaf and one leaf-spine speed and cable.
fn cfg(speed: &str, host_cable: &str, fabric_cable: &str, mtu: &str) -> RoceConfig {
    RoceConfig {
        mtu: Some(mtu.into()),
        incast: Some(8),
        leaves: Some(4),
        spines: Some(2),
        hosts_per_leaf: Some(8),
        host_leaf: link(speed, host_cable),
        leaf_spine: link(speed, fabric_cable),
        buffer: Some(BufferConfig { total: Some("64MiB".into()), cell: Some("256B".into()), reserved: None, dynamic_th: None }),
        ..Default::default()
    }
}

/// A k = 4 fat tree: 3 m host cables, 30 m to the aggregation, 100 m to the core.
fn fat_tree(speed: &str) -> RoceConfig {
    RoceConfig { leaves: None, spines: None, hosts_per_leaf: None, fat_tree_k: Some(4), spine_core: link(speed, "100m"), ..cfg(speed, "3m", "30m", "4096B") }
}

fn planned(c: &RoceConfig) -> RocePlan {
    plan(&validate(c).expect("valid")).expect("plans")
}

fn risk<'a>(p: &'a RocePlan, id: &str) -> &'a Risk {
    p.risks.iter().find(|r| r.id == id).expect("risk listed")
}

#[test]
fn ieee_worked_examples() {
    // (speed, cable, path MTU) -> (W in ps, frames, cells of 256 B).
    let rows = [
        // 100G, 100 m, 4096: frame 4174 B, wire 4194 B = 335.52 ns; PFC 6.72 ns; cable 500 ns
        // each way; response 394 x 5.12 ns = 2017.28 ns. W = 3359.52 ns; W/P = 10.013 -> 11
        // frames of 17 cells.
        ("100Gbps", "100m", "4096B", 3_359_520, 11, 187),
        // 400G, 3 m, 4096: P = 83.88 ns, PFC 1.68 ns, cable 15 ns, response 905 x 1.28 ns =
        // 1158.4 ns. W = 1273.96 ns; W/P = 15.19 -> 16 frames of 17 cells.
        ("400Gbps", "3m", "4096B", 1_273_960, 16, 272),
        // 25G, 10 m, 1024: frame 1102 B, wire 1122 B = 359.04 ns; PFC 26.88 ns; cable 50 ns;
        // response 80 x 20.48 ns = 1638.4 ns. W = 2124.32 ns; W/P = 5.92 -> 6 frames of 5 cells.
        ("25Gbps", "10m", "1024B", 2_124_320, 6, 30),
    ];
    for (speed, cable, mtu, w, frames, cells) in rows {
        let p = planned(&cfg(speed, cable, cable, mtu));
        let t = &p.tiers[0];
        assert_eq!(t.frames, Some(frames), "{speed} {cable} {mtu}");
        assert_eq!(t.headroom_cells, cells, "{speed} {cable} {mtu}");
        assert_eq!(t.headroom_bytes, cells * 256, "{speed} {cable} {mtu}");
        // The window: trigger delay, reverse frame, PFC frame, interface and cable delay to
        // the peer, its response, cable and interface delay back (interface delays 0 here).
        let window: u64 = t.terms.iter().take(8).filter_map(|x| x.time_ps).sum();
        assert_eq!(window, w, "{speed} {cable} {mtu}: W");
        // Resume two maximum frames below the trigger; PG size = headroom.
        assert_eq!(t.xon_offset_bytes, 2 * t.max_frame_cells.unwrap() / frames * 256, "{speed}");
        assert_eq!(t.pg_size_bytes, t.headroom_bytes);
        assert!(t.all_short_cells.unwrap() > cells, "all-small worst case is larger");
        assert_eq!(t.dynamic_trigger_cells, Some(cells + cells / frames), "a dynamic trigger: one frame more");
    }
}

/// Cisco's IEEE 802.3 interface delay bound for 100G ("D-Intf", 122880 bit times =
/// 1228.8 ns), counted to the peer and back: 100 m at 100G grows from W = 3359.52 ns to
/// 3359.52 + 2 x 1228.8 = 5817.12 ns; W/P = 17.34 -> 18 frames of 17 cells.
#[test]
fn ieee_interface_delay_counts_both_ways() {
    let mut c = cfg("100Gbps", "100m", "100m", "4096B");
    c.interface_delay = Some("1228800ps".into());
    let p = planned(&c);
    let t = &p.tiers[0];
    let names: Vec<&str> = t.terms.iter().map(|x| x.name.as_str()).collect();
    assert!(names.contains(&"interface delay to peer") && names.contains(&"interface delay back"), "{names:?}");
    let window: u64 = t.terms.iter().take(8).filter_map(|x| x.time_ps).sum();
    assert_eq!(window, 5_817_120);
    assert_eq!((t.frames, t.headroom_cells), (Some(18), 306));
}

#[test]
fn ieee_short_frames_and_port_mtu_add_what_the_model_says() {
    let mut c = cfg("100Gbps", "100m", "100m", "4096B");
    let base = planned(&c).tiers[0].headroom_cells;
    c.short_frames = Some(1);
    let one = planned(&c);
    assert_eq!(one.tiers[0].headroom_cells, base + one.tiers[0].short_frame_cells.unwrap());
    c.short_frames = None;
    // A 9100 B port MTU: the reverse frame is 9122 B (729.76 ns at 100G instead of 335.52).
    c.port_mtu = Some("9100B".into());
    let jumbo = planned(&c);
    assert_eq!(jumbo.reverse_frame_bytes, 9122);
    // W = 3359.52 + 394.24 = 3753.76 ns -> 11.19 -> 12 frames.
    assert_eq!(jumbo.tiers[0].frames, Some(12));
}

#[test]
fn sonic_worked_examples() {
    // (asic, speed, cable) -> (xon, xoff, size) from model/tests/sonic_headroom.rs.
    for (asic, speed, cable, xon, xoff, size) in
        [("spectrum-3", "100Gbps", "5m", 19_456, 48_128, 67_584), ("spectrum-4", "400Gbps", "40m", 19_456, 119_808, 139_264)]
    {
        let mut c = cfg(speed, cable, cable, "4096B");
        c.model = Some("sonic".into());
        c.asic = Some(asic.into());
        c.buffer.as_mut().unwrap().cell = None;
        let p = planned(&c);
        let t = &p.tiers[0];
        assert_eq!((t.xon_offset_bytes, t.headroom_bytes, t.pg_size_bytes), (xon, xoff, size), "{asic} {speed} {cable}");
    }
}

#[test]
fn sonic_grid_matches_the_model() {
    use model::sonic::{mellanox_headroom, DynamicHeadroomInput, LosslessTrafficPattern, Spectrum};
    for (asic, g) in [("spectrum-2", Spectrum::Spectrum2), ("spectrum-4", Spectrum::Spectrum4)] {
        for speed in [25u64, 100, 400] {
            for cable in [1u64, 5, 40, 300] {
                for port_mtu in [1500u64, 9100] {
                    let s = format!("{speed}Gbps");
                    let cb = format!("{cable}m");
                    let mut c = cfg(&s, &cb, &cb, "4096B");
                    c.model = Some("sonic".into());
                    c.asic = Some(asic.into());
                    c.port_mtu = Some(format!("{port_mtu}B"));
                    c.buffer.as_mut().unwrap().cell = None;
                    let p = planned(&c);
                    let want = mellanox_headroom(&DynamicHeadroomInput {
                        port_mtu: units::Bytes(port_mtu),
                        pattern: LosslessTrafficPattern::default(),
                        ..DynamicHeadroomInput::new(BitRate::from_gbps(speed), Length::from_m(cable), g)
                    })
                    .unwrap();
                    let t = &p.tiers[0];
                    assert_eq!((t.headroom_bytes, t.xon_offset_bytes, t.pg_size_bytes), (want.xoff.0, want.xon.0, want.size.0), "{asic} {s} {cb} {port_mtu}");
                }
            }
        }
    }
}

#[test]
fn budget_counts_ports_pgs_and_cells() {
    let mut c = cfg("100Gbps", "100m", "100m", "4096B");
    c.lossless_priorities = Some(2);
    c.buffer.as_mut().unwrap().reserved = Some("1000B".into()); // 4 cells
    let p = planned(&c);
    let leaf = &p.budgets[0];
    assert_eq!(leaf.role, "leaf");
    // 10 ports x 8 PGs x 4 cells; headroom 10 ports x 2 PGs x 187 cells.
    assert_eq!(leaf.reserved_bytes, 10 * 8 * 4 * 256);
    assert_eq!(leaf.headroom_bytes, 10 * 2 * 187 * 256);
    assert_eq!(leaf.shared_bytes, 64 * 1024 * 1024 - leaf.reserved_bytes - leaf.headroom_bytes);
    let spine = &p.budgets[1];
    assert_eq!(spine.headroom_bytes, 4 * 2 * 187 * 256);
}

#[test]
fn fat_tree_has_three_tiers_and_roles() {
    let p = planned(&fat_tree("400Gbps"));
    assert_eq!(p.tiers.iter().map(|t| t.tier).collect::<Vec<_>>(), ["host-leaf", "leaf-spine", "spine-core"]);
    assert_eq!(p.budgets.iter().map(|b| (b.role, b.switches)).collect::<Vec<_>>(), [("edge", 8), ("aggregation", 8), ("core", 4)]);
    assert!(p.tiers[2].headroom_cells > p.tiers[1].headroom_cells && p.tiers[1].headroom_cells > p.tiers[0].headroom_cells);
    assert_eq!(p.cdg.links, 32);
}

#[test]
fn risks_fire_and_do_not_fire() {
    let base = cfg("100Gbps", "100m", "100m", "4096B");
    let plan0 = planned(&base);
    for r in &plan0.risks {
        assert!(!r.fired, "the plan's own settings raise no flag: {r:?}");
        assert_eq!(r.evaluated, "plan", "{}", r.id);
    }
    type Op = fn(&mut OperatorConfig);
    let cases: [(&str, Op, Op); 5] = [
        ("headroom-short", |o| o.headroom = Some("40KB".into()), |o| o.headroom = Some("50KB".into())),
        (
            "pfc-before-ecn",
            |o| {
                o.ecn_kmin = Some("60MB".into());
                o.ecn_kmax = Some("70MB".into());
                o.ecn_pmax = Some(0.1);
            },
            |o| {
                o.ecn_kmin = Some("150KB".into());
                o.ecn_kmax = Some("1500KB".into());
                o.ecn_pmax = Some(0.1);
            },
        ),
        ("no-pfc-watchdog", |o| o.pfc_watchdog = Some(false), |o| o.pfc_watchdog = Some(true)),
        ("host-storm-protection", |o| o.storm_protection = Some(false), |o| o.storm_protection = Some(true)),
        (
            "dscp-map-mismatch",
            |o| {
                o.switch_dscp_map = Some([("26".to_string(), 3), ("48".to_string(), 6)].into());
                o.nic_dscp_map = Some([("26".to_string(), 4), ("48".to_string(), 6)].into());
            },
            |o| {
                o.switch_dscp_map = Some([("26".to_string(), 3), ("48".to_string(), 6)].into());
                o.nic_dscp_map = Some([("26".to_string(), 3), ("48".to_string(), 6)].into());
                o.lossless = Some(vec![3]);
            },
        ),
    ];
    for (id, fire, calm) in cases {
        for (f, want) in [(fire, true), (calm, false)] {
            let mut c = base.clone();
            f(c.operator.get_or_insert_with(Default::default));
            let p = planned(&c);
            let r = risk(&p, id);
            assert_eq!(r.fired, want, "{id}: {r:?}");
            assert_eq!(r.evaluated, "operator", "{id}");
        }
    }
    // RoCE data mapped to a priority the switch does not make lossless.
    let mut c = base.clone();
    let o = c.operator.get_or_insert_with(Default::default);
    o.switch_dscp_map = Some([("26".to_string(), 2)].into());
    assert!(risk(&planned(&c), "dscp-map-mismatch").fired);
    // Over budget: a 2 MiB buffer cannot hold 10 ports of 52 KB headroom for 8 priorities.
    let mut c = base.clone();
    c.buffer.as_mut().unwrap().total = Some("2MiB".into());
    c.lossless_priorities = Some(8);
    assert!(risk(&planned(&c), "buffer-over-budget").fired);
    assert!(!risk(&plan0, "buffer-over-budget").fired);
}

#[test]
fn cyclic_dependency_check() {
    // A two-tier Clos routed on shortest paths stays acyclic after any single failure.
    let p = planned(&cfg("100Gbps", "3m", "30m", "4096B"));
    let r = risk(&p, "cyclic-buffer-dependency");
    assert!(!r.fired, "{r:?}");
    assert_eq!(p.cdg.failures_checked, 8);
    // So does a k = 4 fat tree: a failed link's traffic bounces down and up once, which
    // adds dependencies but closes no cycle while every other link is up.
    let p = planned(&fat_tree("100Gbps"));
    assert!(p.cdg.intact_cycle.is_none() && p.cdg.failures_with_cycle.is_empty(), "{:?}", p.cdg);
    assert_eq!(p.cdg.failures_checked, 32);
    assert!(!p.cdg.by_symmetry);
    // Above 1024 switch-to-switch links, one failure per class of link stands for its class.
    let big = RoceConfig { leaves: Some(40), spines: Some(30), ..cfg("100Gbps", "3m", "30m", "4096B") };
    let p = planned(&big);
    assert_eq!((p.cdg.links, p.cdg.failures_checked, p.cdg.by_symmetry), (1200, 1, true));
    assert!(!risk(&p, "cyclic-buffer-dependency").fired);
    // The same check fires where shortest paths do close a cycle: a ring of six switches
    // (ECMP both ways round at distance 3; Dally & Seitz's classic case).
    let l = (BitRate::from_gbps(100), units::SimDuration::from_ns(5));
    let ring = fabric::topology::Topology::ring(6, 1, l, l).unwrap();
    let c = cdg_check(&ring).unwrap();
    let cycle = c.intact_cycle.expect("a ring's shortest paths are cyclic");
    assert!(cycle.len() >= 3, "{cycle:?}");
    assert!(c.failures_checked == 6);
}

#[test]
fn errors_name_the_field() {
    let ok = cfg("100Gbps", "100m", "100m", "4096B");
    type Edit = Box<dyn Fn(&mut RoceConfig)>;
    let cases: Vec<(Edit, &str, &str)> = vec![
        (Box::new(|c| c.mtu = None), "mtu", "missing"),
        (Box::new(|c| c.mtu = Some("9000B".into())), "mtu", "IB path MTU"),
        (Box::new(|c| c.host_leaf.as_mut().unwrap().speed = Some("fast".into())), "host_leaf.speed", "expected a rate"),
        (Box::new(|c| c.leaf_spine.as_mut().unwrap().cable = None), "leaf_spine.cable", "missing"),
        (Box::new(|c| c.spine_core = link("100Gbps", "1m")), "spine_core", "no spine-core tier"),
        (Box::new(|c| c.model = Some("cisco".into())), "model", "ieee or sonic"),
        (Box::new(|c| c.model = Some("sonic".into())), "asic", "missing"),
        (Box::new(|c| c.incast = Some(1)), "incast", "at least 2"),
        (Box::new(|c| c.nic = Some("e810".into())), "nic", "connectx"),
        (Box::new(|c| c.buffer.as_mut().unwrap().cell = None), "buffer.cell", "missing"),
        (Box::new(|c| c.buffer.as_mut().unwrap().dynamic_th = Some(9)), "buffer.dynamic_th", "-7..3"),
        (
            Box::new(|c| {
                c.operator = Some(OperatorConfig { ecn_kmin: Some("1MB".into()), ..Default::default() });
            }),
            "operator.ecn_kmax",
            "missing",
        ),
        (
            Box::new(|c| {
                c.operator = Some(OperatorConfig { switch_dscp_map: Some([("77".to_string(), 3)].into()), ..Default::default() });
            }),
            "operator.switch_dscp_map",
            "0..63",
        ),
    ];
    for (f, field, msg) in cases {
        let mut c = ok.clone();
        f(&mut c);
        let e = validate(&c).expect_err(field);
        assert_eq!(e.field, field, "{e}");
        assert!(e.msg.contains(msg), "{field}: {e}");
    }
}

#[test]
fn ecn_stays_below_the_pfc_point_and_dcqcn_follows_the_nic() {
    let p = planned(&cfg("400Gbps", "3m", "30m", "4096B"));
    // HPCC's scaling at 400G: 1.6 MB / 6.4 MB, Pmax 0.2, below the PFC point of a 64 MiB leaf.
    assert_eq!((p.ecn.kmin_bytes, p.ecn.kmax_bytes, p.ecn.pmax), (1_600_000, 6_400_000, 0.2));
    assert!(p.ecn.kmax_bytes < p.ecn.pfc_queue_bytes);
    // A small buffer lowers them below half the PFC point.
    let mut c = cfg("400Gbps", "3m", "30m", "4096B");
    c.buffer.as_mut().unwrap().total = Some("8MiB".into());
    let p = planned(&c);
    assert_eq!(p.ecn.kmax_bytes, p.ecn.pfc_queue_bytes / 2);
    assert!(p.ecn.kmin_bytes <= p.ecn.kmax_bytes / 4);
    assert_eq!(p.dcqcn.preset, "NvidiaDefault");
    assert_eq!(p.dcqcn.params, model::dcqcn::NVIDIA_DEFAULT);
    let mut c = cfg("400Gbps", "3m", "30m", "4096B");
    c.nic = Some("paper".into());
    assert_eq!(planned(&c).dcqcn.params, model::dcqcn::PAPER);
    assert!(planned(&c).dcqcn.reasons.iter().all(|(_, _, why)| why.contains("paper")));
}

/// A SONiC leaf-spine of 2 leaves and 2 spines with `hosts` hosts per leaf, 2 lossless
/// priorities (PGs 3-4) and a 40 MiB (Spectrum-3) or 100 MiB buffer.
fn sonic_fabric(asic: &str, hosts: u32, host: (&str, &str), fabric: (&str, &str)) -> RoceConfig {
    let mut c = cfg(host.0, host.1, fabric.1, "4096B");
    c.leaf_spine = link(fabric.0, fabric.1);
    c.model = Some("sonic".into());
    c.asic = Some(asic.into());
    c.leaves = Some(2);
    c.spines = Some(2);
    c.hosts_per_leaf = Some(hosts);
    c.incast = Some(4);
    c.lossless_priorities = Some(2);
    c.buffer = Some(BufferConfig { total: Some(if asic == "spectrum-3" { "40MiB" } else { "100MiB" }.into()), ..Default::default() });
    c
}

fn tier_values(p: &RocePlan) -> Vec<(&str, u32, u64, u64, u64)> {
    p.tiers.iter().map(|t| (t.tier, t.lanes, t.xon_offset_bytes, t.headroom_bytes, t.pg_size_bytes)).collect()
}

fn pool_xoff(p: &RocePlan) -> Vec<(&str, Option<u64>)> {
    p.budgets.iter().map(|b| (b.role, b.shared_headroom_pool.map(|s| s.pool_xoff.0))).collect()
}

/// 8-lane ports and the shared headroom pool, against SONiC's own Lua (sonic-swss at
/// e6b0c5b5d2ab52354c4ec941f7c9005aeec3f779) run under lua5.1 on the plan's inputs, from
/// `crates/model/tests/lua` with the two scripts of that commit in the current directory:
///
/// ```text
/// H="lua5.1 run_headroom.lua buffer_headroom_mellanox.lua"
/// $H MELLANOX-SPECTRUM-3 144 19 0.8 3.8 1024 50 nil nil 400000 5m 9100 "" 8   # xon:38912 xoff:90112 size:138240
/// $H MELLANOX-SPECTRUM-3 144 19 0.8 3.8 1024 50 nil nil 400000 40m 9100 "" 8  # xon:38912 xoff:112640 size:160768
/// $H MELLANOX-SPECTRUM-3 144 19 0.8 3.8 1024 50 2 nil 400000 5m 9100 "" 8     # xon:38912 xoff:88064 size:38912
/// $H MELLANOX-SPECTRUM-3 144 19 0.8 3.8 1024 50 2 nil 400000 40m 9100 "" 8    # xon:38912 xoff:110592 size:38912
/// $H MELLANOX-SPECTRUM-4 192 19 0.8 3.8 1024 50 1.5 nil 200000 3m 9100 "" 4   # xon:19456 xoff:54272 size:19456
/// $H MELLANOX-SPECTRUM-4 192 19 0.8 3.8 1024 50 1.5 nil 400000 30m 9100 "" 8  # xon:38912 xoff:111616 size:38912
/// P3="lua5.1 run_pool.lua buffer_pool_mellanox.lua MELLANOX-SPECTRUM-3 144 19 41943040"
/// $P3 2 nil 3-4 8:4:38912:88064:38912 8:2:38912:110592:38912   # ingress_lossless_pool:40321024:542720
/// $P3 2 nil 3-4 8:2:38912:110592:38912                         # ingress_lossless_pool:41197568:210944
/// P4="lua5.1 run_pool.lua buffer_pool_mellanox.lua MELLANOX-SPECTRUM-4 192 19 104857600"
/// $P4 1.5 nil 3-4 4:3:19456:54272:19456 8:2:38912:111616:38912 # ingress_lossless_pool:103605930:480598
/// $P4 1.5 nil 3-4 8:2:38912:111616:38912                       # ingress_lossless_pool:104039082:283990
/// $P4 nil 1048576 3-4 4:3:19456:54272:19456 8:2:38912:111616:38912  # ingress_lossless_pool:103037952:1048576
/// ```
///
/// The pool rows describe one switch: a leaf has `hosts` host-leaf ports and 2 leaf-spine
/// ports, a spine 2 leaf-spine ports, each with the tier's profile on PGs 3-4 (the last
/// field of a pool row is the pool's xoff).
#[test]
fn sonic_lanes_and_shared_headroom_pool_match_the_lua() {
    // 8 lanes everywhere, no shared headroom pool: xon doubled, size = xoff + xon + 9100.
    let mut c = sonic_fabric("spectrum-3", 4, ("400Gbps", "5m"), ("400Gbps", "40m"));
    c.lanes = Some(8);
    let p = planned(&c);
    assert_eq!(tier_values(&p), [("host-leaf", 8, 38912, 90112, 138_240), ("leaf-spine", 8, 38912, 112_640, 160_768)]);
    assert_eq!(pool_xoff(&p), [("leaf", None), ("spine", None)]);
    assert!(p.tiers.iter().all(|t| !t.shared_headroom_pool));

    // The same with over_subscribe_ratio 2: size = xon, and the pool per switch.
    c.sonic = Some(SonicConfig { over_subscribe_ratio: Some(2.0), ..Default::default() });
    let p = planned(&c);
    assert_eq!(tier_values(&p), [("host-leaf", 8, 38912, 88064, 38912), ("leaf-spine", 8, 38912, 110_592, 38912)]);
    assert!(p.tiers.iter().all(|t| t.shared_headroom_pool));
    assert_eq!(pool_xoff(&p), [("leaf", Some(542_720)), ("spine", Some(210_944))]);
    let leaf = &p.budgets[0];
    // PG sizes: (4 x 2 + 2 x 2) x 38912 B in 144 B cells (38912 = 270.2 cells -> 271).
    assert_eq!(leaf.headroom_bytes, 12 * 271 * 144);
    assert_eq!(leaf.pool_bytes(), 542_720 + 6 * 10_240);
    assert_eq!(leaf.shared_bytes, 40 * 1024 * 1024 - 12 * 271 * 144 - 542_720 - 61_440);
    assert_eq!(leaf.pool_xoff_demand_bytes, Some(1_085_440));

    // Spectrum-4: 4-lane 200G hosts, 8-lane 400G fabric (the tier's lanes override the
    // top-level ones), ratio 1.5: ceil(720896 / 1.5) = 480598.
    let mut c = sonic_fabric("spectrum-4", 3, ("200Gbps", "3m"), ("400Gbps", "30m"));
    c.lanes = Some(8);
    c.host_leaf.as_mut().unwrap().lanes = Some(4);
    c.sonic = Some(SonicConfig { over_subscribe_ratio: Some(1.5), ..Default::default() });
    let p = planned(&c);
    assert_eq!(tier_values(&p), [("host-leaf", 4, 19456, 54272, 19456), ("leaf-spine", 8, 38912, 111_616, 38912)]);
    assert_eq!(pool_xoff(&p), [("leaf", Some(480_598)), ("spine", Some(283_990))]);

    // A configured pool xoff is the pool (the Lua adds nothing up); the plan reports the
    // over-subscription it gives: 720896 / 1048576.
    c.sonic = Some(SonicConfig { shared_headroom_pool_xoff: Some("1MiB".into()), ..Default::default() });
    let p = planned(&c);
    assert_eq!(tier_values(&p)[1], ("leaf-spine", 8, 38912, 111_616, 38912));
    assert_eq!(pool_xoff(&p), [("leaf", Some(1_048_576)), ("spine", Some(1_048_576))]);
    assert_eq!(p.budgets[0].pool_xoff_demand_bytes, Some(720_896));
    assert_eq!(p.budgets[0].pool_over_subscription, Some(720_896.0 / 1_048_576.0));
}

#[test]
fn lanes_and_pool_errors_name_the_field() {
    let sonic = sonic_fabric("spectrum-3", 4, ("400Gbps", "5m"), ("400Gbps", "40m"));
    type Edit = Box<dyn Fn(&mut RoceConfig)>;
    let cases: Vec<(Edit, &str, &str)> = vec![
        (Box::new(|c| c.lanes = Some(3)), "lanes", "1, 2, 4 or 8"),
        (Box::new(|c| c.leaf_spine.as_mut().unwrap().lanes = Some(16)), "leaf_spine.lanes", "1, 2, 4 or 8"),
        (Box::new(|c| c.sonic = Some(SonicConfig { over_subscribe_ratio: Some(0.0), ..Default::default() })), "sonic.over_subscribe_ratio", "above 0"),
        (Box::new(|c| c.sonic = Some(SonicConfig { over_subscribe_ratio: Some(f64::NAN), ..Default::default() })), "sonic.over_subscribe_ratio", "above 0"),
        (
            Box::new(|c| c.sonic = Some(SonicConfig { shared_headroom_pool_xoff: Some("0B".into()), ..Default::default() })),
            "sonic.shared_headroom_pool_xoff",
            "positive",
        ),
        (
            Box::new(|c| c.sonic = Some(SonicConfig { shared_headroom_pool_xoff: Some("lots".into()), ..Default::default() })),
            "sonic.shared_headroom_pool_xoff",
            "expected a size",
        ),
    ];
    for (f, field, msg) in cases {
        let mut c = sonic.clone();
        f(&mut c);
        let e = validate(&c).expect_err(field);
        assert_eq!(e.field, field, "{e}");
        assert!(e.msg.contains(msg), "{field}: {e}");
    }
    // The IEEE model has no lane term and no shared headroom pool: an error, not ignored.
    let mut c = cfg("100Gbps", "100m", "100m", "4096B");
    c.sonic = Some(SonicConfig { over_subscribe_ratio: Some(2.0), ..Default::default() });
    let e = validate(&c).expect_err("ieee pool");
    assert_eq!((e.field.as_str(), e.msg.contains("sonic model only")), ("sonic", true), "{e}");
    let mut c = cfg("100Gbps", "100m", "100m", "4096B");
    c.host_leaf.as_mut().unwrap().lanes = Some(8);
    let e = validate(&c).expect_err("ieee lanes");
    assert_eq!((e.field.as_str(), e.msg.contains("sonic model only")), ("host_leaf.lanes", true), "{e}");
    // Lanes default to 4; 1, 2 and 4 plan alike (only 8 changes SONiC's numbers).
    let four = planned(&sonic);
    for n in [1, 2, 4] {
        let mut c = sonic.clone();
        c.lanes = Some(n);
        let p = planned(&c);
        assert_eq!(tier_values(&p).iter().map(|t| (t.2, t.3, t.4)).collect::<Vec<_>>(), tier_values(&four).iter().map(|t| (t.2, t.3, t.4)).collect::<Vec<_>>());
        assert!(p.tiers.iter().all(|t| t.lanes == n));
    }
}
