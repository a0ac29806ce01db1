//! `fabriclab plan roce`: the binary's human and JSON output, errors naming the flag or the
//! file's field, `--config` with flags over it, and `--prove` (IEEE: zero lossless drops
//! at the plan, drops attributed to headroom overflow one MTU short; SONiC: a margin).

use std::process::{Command, Output};

mod common;
use common::{without, ROCE_100G, SONIC_SPECTRUM3_400G};

fn plan(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fabriclab")).args(["plan", "roce"]).args(args).output().expect("runs")
}

fn with(extra: &[&str]) -> Vec<String> {
    ROCE_100G.iter().chain(extra).map(|s| s.to_string()).collect()
}

fn run(args: &[String]) -> (String, String, Option<i32>) {
    let a: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    let o = plan(&a);
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned(), o.status.code())
}

fn json(args: &[String]) -> serde_json::Value {
    let (out, err, code) = run(args);
    assert_eq!(code, Some(0), "{err}");
    serde_json::from_str(&out).expect("one JSON document")
}

#[test]
fn human_output_shows_terms_budget_ecn_dcqcn_and_risks() {
    let (out, err, code) = run(&with(&["--explain"]));
    assert_eq!(code, Some(0), "{err}");
    for s in [
        "host-leaf",
        "leaf-spine",
        "peer response time (394 quanta",
        "cable delay to peer",
        "reverse max frame ahead of the PFC frame",
        "= 187 cells",
        "Lossless buffer against the budget",
        "Kmin 400000 B",
        "DCQCN starting parameters (NvidiaDefault)",
        "[ ok  ] cyclic buffer dependency possible",
        "Formulas and sources:",
        "IEEE 802.1Qbb",
    ] {
        assert!(out.contains(s), "missing `{s}` in:\n{out}");
    }
}

#[test]
fn json_has_every_part() {
    let v = json(&with(&["--json", "--pfc-watchdog", "off"]));
    let p = &v["plan"];
    assert_eq!(p["tiers"][1]["tier"], "leaf-spine");
    assert_eq!(p["tiers"][1]["headroom_cells"], 187);
    assert_eq!(p["tiers"][1]["frames"], 11);
    assert_eq!(p["budgets"][0]["role"], "leaf");
    assert!(p["ecn"]["kmax_bytes"].as_u64().unwrap() < p["ecn"]["pfc_queue_bytes"].as_u64().unwrap());
    let risks = p["risks"].as_array().unwrap();
    assert_eq!(risks.len(), 7);
    let wd = risks.iter().find(|r| r["id"] == "no-pfc-watchdog").unwrap();
    assert_eq!((wd["fired"].as_bool(), wd["evaluated"].as_str()), (Some(true), Some("operator")));
    assert_eq!(v["input"]["incast"], 8);
}

#[test]
fn bad_input_names_the_flag_or_field() {
    for (extra, want) in [
        (vec!["--mtu", "9000B"], "--mtu"),
        (vec!["--host-leaf-speed", "fast"], "--host-leaf-speed"),
        (vec!["--model", "cisco"], "--model"),
        (vec!["--nic", "e810"], "--nic"),
        (vec!["--pfc-watchdog", "maybe"], "--pfc-watchdog"),
        (vec!["--switch-dscp-map", "26:3"], "--switch-dscp-map"),
        (vec!["--spine-core-speed", "100Gbps", "--spine-core-cable", "1m"], "--spine-core-speed/--spine-core-cable"),
        (vec!["--ecn-kmin", "100KB"], "--ecn-kmax"),
    ] {
        let (_, err, code) = run(&with(&extra));
        assert_eq!(code, Some(2), "{extra:?}: {err}");
        assert!(err.contains(want), "{extra:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    // A missing input names the flag.
    let (_, err, code) = run(&["--mtu".into(), "4096B".into()]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--incast") && err.contains("missing"), "{err}");
}

#[test]
fn config_file_with_flags_over_it() {
    let dir = std::env::temp_dir().join(format!("plan-roce-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("fabric.toml");
    std::fs::write(
        &f,
        r#"
model = "sonic"
asic = "spectrum-3"
mtu = "4096B"
incast = 8
leaves = 4
spines = 2
hosts_per_leaf = 8
host_leaf = { speed = "100Gbps", cable = "5m" }
leaf_spine = { speed = "100Gbps", cable = "5m" }
buffer = { total = "32MiB" }
"#,
    )
    .unwrap();
    let cfg = f.display().to_string();
    // SONiC's Lua at Spectrum-3, 100G, 5 m: xoff 48128, xon 19456, size 67584.
    let v = json(&["--config".into(), cfg.clone(), "--json".into()]);
    let t = &v["plan"]["tiers"][0];
    assert_eq!((t["headroom_bytes"].as_u64(), t["xon_offset_bytes"].as_u64(), t["pg_size_bytes"].as_u64()), (Some(48128), Some(19456), Some(67584)));
    // A flag overrides the file.
    let v = json(&["--config".into(), cfg.clone(), "--json".into(), "--incast".into(), "4".into()]);
    assert_eq!(v["input"]["incast"], 4);
    // A bad field in the file names the file and the field.
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, std::fs::read_to_string(&f).unwrap().replace("\"5m\" }\nbuffer", "\"far\" }\nbuffer")).unwrap();
    let (_, err, code) = run(&["--config".into(), bad.display().to_string()]);
    assert_eq!(code, Some(2));
    assert!(err.contains("bad.toml") && err.contains("leaf_spine.cable"), "{err}");
    // Unknown fields are errors.
    let unk = dir.join("unknown.toml");
    std::fs::write(&unk, std::fs::read_to_string(&f).unwrap() + "colour = \"blue\"\n").unwrap();
    let (_, err, code) = run(&["--config".into(), unk.display().to_string()]);
    assert_eq!(code, Some(2));
    assert!(err.contains("unknown.toml") && err.contains("colour"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn prove_ieee_zero_drops_at_plan_and_drops_one_mtu_short() {
    // The host-leaf worst case (100G, 3 m): W = 2389.52 ns, P = 335.52 ns: 8 maximum frames
    // (136 cells), the last needing a PFC frame delayed by a reverse frame that started at
    // most 40.9 ns (12% of phases) before XOFF, which the run meets.
    let v = json(&with(&["--json", "--prove"]));
    let pr = &v["prove"][0];
    assert_eq!(pr["tier"], "host-leaf");
    let at = &pr["at_plan"];
    assert_eq!(at["headroom_cells"], 136);
    assert_eq!(at["lossless_drops"], 0);
    assert_eq!(at["peak_headroom_cells"], 136, "the simulated peak reaches the plan");
    assert!(at["pfc_frames_to_peer"].as_u64().unwrap() > 100);
    assert!(at["peer_paused_ps"].as_u64().unwrap() > 0);
    let short = &pr["one_mtu_short"];
    assert_eq!(short["headroom_cells"], 119);
    assert!(short["lossless_drops"].as_u64().unwrap() > 0, "{short}");
    assert_eq!(short["lossless_drops"], short["headroom_overflow_drops"]);
    // The leaf-spine tier (100 m): 11 frames (187 cells), the last needing a phase 1.3% of
    // pause cycles have; the run meets it too.
    let pr = &v["prove"][1];
    assert_eq!(pr["tier"], "leaf-spine");
    assert_eq!((pr["at_plan"]["lossless_drops"].as_u64(), pr["at_plan"]["peak_headroom_cells"].as_u64()), (Some(0), Some(187)));
    assert!(pr["one_mtu_short"]["headroom_overflow_drops"].as_u64().unwrap() > 0, "{pr}");
}

/// At 400G and 200G the bound's last frame needs a phase few pause cycles have; `--prove`
/// tries other reverse-traffic patterns until one reaches the plan, and the same pattern
/// one MTU short drops.
#[test]
fn prove_reaches_the_bound_at_400g_and_200g_too() {
    for (speed, host_cable, fabric_cable) in [("400Gbps", "3m", "30m"), ("200Gbps", "5m", "50m")] {
        let args: Vec<String> = [
            "--mtu",
            "4096B",
            "--incast",
            "8",
            "--leaves",
            "2",
            "--spines",
            "2",
            "--hosts-per-leaf",
            "8",
            "--host-leaf-speed",
            speed,
            "--host-leaf-cable",
            host_cable,
            "--leaf-spine-speed",
            speed,
            "--leaf-spine-cable",
            fabric_cable,
            "--buffer-total",
            "64MiB",
            "--cell",
            "256B",
            "--json",
            "--prove",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let v = json(&args);
        for pr in v["prove"].as_array().unwrap() {
            let at = &pr["at_plan"];
            assert_eq!(at["lossless_drops"], 0, "{speed}: {pr}");
            assert_eq!(at["peak_headroom_cells"], at["headroom_cells"], "{speed}: the peak reaches the plan: {pr}");
            let short = &pr["one_mtu_short"];
            assert!(short["headroom_overflow_drops"].as_u64().unwrap() > 0, "{speed}: {pr}");
            assert_eq!(short["lossless_drops"], short["headroom_overflow_drops"]);
            assert!((1..=8).contains(&pr["attempts"].as_u64().unwrap()));
        }
    }
}

#[test]
fn prove_sonic_reports_a_margin() {
    let (_, err, code) = run(&with(&["--model", "sonic", "--asic", "spectrum-3"]));
    assert_eq!(code, Some(2));
    assert!(err.contains("--cell") && err.contains("144"), "{err}");
    // SONiC takes the ASIC's cell (144 B on Spectrum-3): the base's --cell 256B goes.
    let sonic = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = without(ROCE_100G, "--cell").iter().map(|s| s.to_string()).collect();
        v.extend(["--model", "sonic", "--asic", "spectrum-3"].iter().chain(extra).map(|s| s.to_string()));
        v
    };
    let v = json(&sonic(&["--json", "--prove"]));
    for pr in v["prove"].as_array().unwrap() {
        let at = &pr["at_plan"];
        assert_eq!(at["lossless_drops"], 0);
        let m = pr["margin_cells"].as_i64().unwrap();
        assert!(m > 0, "SONiC's headroom exceeds the simulated need: {pr}");
        assert_eq!(m, at["headroom_cells"].as_i64().unwrap() - at["peak_headroom_cells"].as_i64().unwrap());
        assert!(pr["one_mtu_short"].is_null());
    }
    let (out, _, _) = run(&sonic(&["--prove"]));
    assert!(out.contains("SONiC margin over the simulated need"), "{out}");
}

fn shp(extra: &[&str]) -> Vec<String> {
    SONIC_SPECTRUM3_400G.iter().chain(extra).map(|s| s.to_string()).collect()
}

/// The values are SONiC's own Lua's on these inputs (the commands are in
/// `crates/plan/tests/roce.rs`, `sonic_lanes_and_shared_headroom_pool_match_the_lua`):
/// 8 lanes double xon to 38912; with over_subscribe_ratio 2, size = xon and the leaf's pool
/// xoff is 542720, the spine's 210944.
#[test]
fn lanes_and_shared_headroom_pool_in_json_text_and_prove() {
    let v = json(&shp(&["--json"]));
    let t = &v["plan"]["tiers"];
    assert_eq!(
        (t[0]["lanes"].as_u64(), t[0]["xon_offset_bytes"].as_u64(), t[0]["headroom_bytes"].as_u64(), t[0]["pg_size_bytes"].as_u64()),
        (Some(8), Some(38912), Some(90112), Some(138_240))
    );
    assert_eq!(t[0]["shared_headroom_pool"], false);
    assert!(v["plan"]["budgets"][0]["shared_headroom_pool"].is_null());

    let v = json(&shp(&["--json", "--over-subscribe-ratio", "2", "--prove"]));
    let t = &v["plan"]["tiers"];
    assert_eq!(
        (t[1]["lanes"].as_u64(), t[1]["xon_offset_bytes"].as_u64(), t[1]["headroom_bytes"].as_u64(), t[1]["pg_size_bytes"].as_u64()),
        (Some(8), Some(38912), Some(110_592), Some(38912))
    );
    assert_eq!(t[1]["shared_headroom_pool"], true);
    let b = &v["plan"]["budgets"];
    assert_eq!((b[0]["shared_headroom_pool"]["pool_xoff"].as_str(), b[1]["shared_headroom_pool"]["pool_xoff"].as_str()), (Some("542720B"), Some("210944B")));
    assert_eq!(b[0]["pool_xoff_demand_bytes"], 1_085_440);
    assert_eq!(v["input"]["shared_headroom"]["over_subscribe_ratio"], 2.0);
    // --prove: the 6-port switch's pool, (6 x xoff - 6 x 10 KiB) / 2 + 6 x 10 KiB in 144 B
    // cells: host-leaf 294912 B (2048 cells), leaf-spine 362496 B -> 2518 cells.
    let pr = v["prove"].as_array().unwrap();
    assert_eq!((pr[0]["shared_headroom_pool_bytes"].as_u64(), pr[1]["shared_headroom_pool_bytes"].as_u64()), (Some(294_912), Some(2518 * 144)));
    for p in pr {
        assert_eq!(p["at_plan"]["lossless_drops"], 0, "{p}");
        assert!(p["scenario"].as_str().unwrap().contains("shared_headroom_pool = "), "{p}");
    }

    let (out, err, code) = run(&shp(&["--over-subscribe-ratio", "2", "--explain"]));
    assert_eq!(code, Some(0), "{err}");
    for s in [
        "8 lanes: headroom (SONiC xoff) 88064 B",
        "(from the shared headroom pool)",
        "shared headroom pool xoff 542720 B",
        "buffer_pool_mellanox.lua at commit e6b0c5b5",
    ] {
        assert!(out.contains(s), "missing `{s}` in:\n{out}");
    }
}

#[test]
fn lanes_and_pool_errors_name_the_flag() {
    for (extra, want) in [
        (vec!["--lanes", "3"], "--lanes: 3: expected 1, 2, 4 or 8 lanes"),
        (vec!["--leaf-spine-lanes", "16"], "--leaf-spine-lanes: 16"),
        (vec!["--over-subscribe-ratio", "0"], "--over-subscribe-ratio: 0"),
        (vec!["--shared-headroom-pool-xoff", "many"], "--shared-headroom-pool-xoff"),
    ] {
        // Without the base's `--lanes 8`, so the case's own flags are the only ones.
        let args: Vec<String> = without(SONIC_SPECTRUM3_400G, "--lanes").iter().chain(&extra).map(|s| s.to_string()).collect();
        let (_, err, code) = run(&args);
        assert_eq!(code, Some(2), "{extra:?}: {err}");
        assert!(err.contains(want), "{extra:?}: {err}");
    }
    // The IEEE model has no lane term.
    let (_, err, code) = run(&with(&["--lanes", "8"]));
    assert_eq!(code, Some(2));
    assert!(err.contains("--lanes") && err.contains("sonic model only"), "{err}");
}

#[test]
fn lanes_and_pool_from_the_config_file() {
    let dir = std::env::temp_dir().join(format!("plan-roce-lanes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("fabric.toml");
    std::fs::write(
        &f,
        r#"
model = "sonic"
asic = "spectrum-3"
mtu = "4096B"
incast = 4
leaves = 2
spines = 2
hosts_per_leaf = 4
lossless_priorities = 2
lanes = 8
host_leaf = { speed = "400Gbps", cable = "5m" }
leaf_spine = { speed = "400Gbps", cable = "40m", lanes = 4 }
buffer = { total = "40MiB" }
sonic = { over_subscribe_ratio = 2.0 }
"#,
    )
    .unwrap();
    let v = json(&["--config".into(), f.display().to_string(), "--json".into()]);
    let t = &v["plan"]["tiers"];
    // host-leaf: 8 lanes (SONiC's Lua: xon 38912, xoff 88064, size 38912 with the pool);
    // leaf-spine: its own 4 lanes, xon 19456.
    assert_eq!((t[0]["lanes"].as_u64(), t[0]["xon_offset_bytes"].as_u64(), t[0]["pg_size_bytes"].as_u64()), (Some(8), Some(38912), Some(38912)));
    assert_eq!((t[1]["lanes"].as_u64(), t[1]["xon_offset_bytes"].as_u64(), t[1]["pg_size_bytes"].as_u64()), (Some(4), Some(19456), Some(19456)));
    // A flag overrides the tier's lanes in the file.
    let v = json(&["--config".into(), f.display().to_string(), "--json".into(), "--leaf-spine-lanes".into(), "8".into()]);
    assert_eq!(v["plan"]["tiers"][1]["xon_offset_bytes"], 38912);
    std::fs::remove_dir_all(&dir).ok();
}
