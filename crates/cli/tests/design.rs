//! `fabriclab design`: the SuperPOD presets' counts in JSON, the readable table and
//! `--explain`, an emitted scenario that `run` and `compare` complete, and errors that
//! name the flag.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn fabriclab(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_fabriclab")).args(args).output().expect("runs");
    let err: String = String::from_utf8_lossy(&out.stderr).into();
    assert!(!err.contains("panicked"), "{err}");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into(), err)
}

fn ok(args: &[&str]) -> String {
    let (code, out, err) = fabriclab(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    out
}

fn json(args: &[&str]) -> Value {
    let out = ok(args);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}\n{out}"))
}

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("design-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// (name, count) pairs.
type Named = Vec<(String, u64)>;

/// (switches per tier, cables per link layer) by name.
fn counts(v: &Value) -> (Named, Named) {
    let pairs = |key: &str, field: &str| -> Named {
        v[key].as_array().unwrap().iter().map(|t| (t["name"].as_str().unwrap().to_string(), t[field].as_u64().unwrap())).collect()
    };
    (pairs("switch_tiers", "switches"), pairs("link_layers", "cables"))
}

fn named(v: &[(&str, u64)]) -> Named {
    v.iter().map(|(n, c)| (n.to_string(), *c)).collect()
}

#[test]
fn superpod_h100_4_sus_json() {
    let v = json(&["design", "--superpod", "h100", "--sus", "4", "--json"]);
    // RA-11333-001 Table 4, 4 SUs: 127 nodes, 1016 GPUs, 32 leaves, 16 spines, 1020
    // compute + UFM cables, 1024 spine-leaf cables.
    assert_eq!((v["tiers"].as_u64(), v["nodes"].as_u64(), v["endpoints"].as_u64(), v["ufm_ports"].as_u64()), (Some(2), Some(127), Some(1016), Some(4)));
    let (switches, cables) = counts(&v);
    assert_eq!(switches, named(&[("leaf", 32), ("spine", 16)]));
    assert_eq!(cables, named(&[("node-leaf", 1020), ("leaf-spine", 1024)]));
    assert_eq!(v["totals"]["switches"].as_u64(), Some(48));
    assert_eq!(v["bisection"]["gbps"].as_f64(), Some(203_200.0));
    assert_eq!(v["input"]["speed_gbps"].as_f64(), Some(400.0));
    assert_eq!(v["input"]["leaf_oversubscription"].as_str(), Some("1:1"));
    assert!(v["formulas"].as_array().unwrap().iter().all(|f| !f["source"].as_str().unwrap().is_empty()));
    assert!(v["choice"].as_str().unwrap().starts_with("2 tiers"));
}

#[test]
fn superpod_b200_three_tiers() {
    let v = json(&["design", "--superpod", "b200", "--sus", "64", "--json"]);
    let (switches, cables) = counts(&v);
    assert_eq!(switches, named(&[("leaf", 512), ("spine", 512), ("core", 256)]));
    assert_eq!(cables, named(&[("node-leaf", 16384), ("leaf-spine", 16384), ("spine-core", 16384)]));
    assert_eq!((v["hops"]["same_leaf"].as_u64(), v["hops"]["same_pod"].as_u64(), v["hops"]["across_pods"].as_u64()), (Some(1), Some(3), Some(5)));
}

/// The generic flags the issue names give the same fabric as the preset's inputs.
#[test]
fn generic_flags() {
    let v = json(&[
        "design",
        "--gpus",
        "1024",
        "--nics-per-node",
        "8",
        "--speed",
        "400Gbps",
        "--radix",
        "64",
        "--rail-optimised",
        "--su-nodes",
        "32",
        "--oversubscription",
        "1",
        "--json",
    ]);
    let (switches, cables) = counts(&v);
    assert_eq!(switches, named(&[("leaf", 32), ("spine", 16)]));
    assert_eq!(cables, named(&[("node-leaf", 1024), ("leaf-spine", 1024)]));
    // 3:1 leaves on a fat tree's worth of hosts: 48 down, 16 up.
    let v = json(&["design", "--gpus", "3072", "--oversubscription", "3:1", "--json"]);
    assert_eq!((v["switch_tiers"][0]["ports_down"].as_u64(), v["switch_tiers"][0]["ports_up"].as_u64()), (Some(48), Some(16)));
    assert_eq!(v["bisection"]["oversubscription"].as_f64(), Some(3.0));
}

#[test]
fn text_and_explain() {
    let out = ok(&["design", "--superpod", "h100", "--sus", "3"]);
    for want in ["DGX SuperPOD H100, 3 SUs", "2 tiers: 24 leaves", "leaf         24", "spine        16", "node-leaf     764", "bisection", "switch hops"] {
        assert!(out.contains(want), "`{want}` missing:\n{out}");
    }
    assert!(!out.contains("source:"), "{out}");
    let out = ok(&["design", "--superpod", "b200", "--sus", "16", "--explain"]);
    for want in ["How each number was derived:", "source: ", "RA-11333-001", "Al-Fares", "QM9700", "cores per plane", "Conventions:", "one cable per link"] {
        assert!(out.contains(want), "`{want}` missing:\n{out}");
    }
}

/// `--emit-scenario` writes a file `run` and `compare` complete (a 16-host leaf-spine, and
/// a small rail-optimised fabric of 4-NIC nodes).
#[test]
fn emitted_scenario_runs() {
    let dir = scratch("emit");
    let small = dir.join("small.toml");
    let s = small.to_str().unwrap();
    let out = ok(&["design", "--gpus", "16", "--radix", "8", "--emit-scenario", s]);
    assert!(out.contains("2 tiers"), "{out}");
    let src = std::fs::read_to_string(&small).unwrap();
    assert!(src.starts_with("# Generated by `fabriclab design --gpus 16 --radix 8 --emit-scenario"), "{src}");
    assert!(src.contains("kind = \"leaf-spine\"") && src.contains("[roce]") && src.contains("[infiniband]"), "{src}");
    let v = json(&["run", s, "--json"]);
    assert_eq!(v["flows"]["failed"].as_u64(), Some(0));
    assert_eq!(v["flows"]["completed"], v["flows"]["count"]);
    assert_eq!(v["collectives"].as_array().unwrap().len(), 1);
    let cmp = ok(&["compare", s]);
    assert!(cmp.contains("InfiniBand") && cmp.contains("RoCEv2") && cmp.contains("16 ranks"), "{cmp}");

    let rail = dir.join("rail.toml");
    let r = rail.to_str().unwrap();
    ok(&[
        "design",
        "--gpus",
        "32",
        "--nics-per-node",
        "4",
        "--rail-optimised",
        "--su-nodes",
        "4",
        "--radix",
        "8",
        "--technology",
        "infiniband",
        "--emit-scenario",
        r,
        "--json",
    ]);
    let src = std::fs::read_to_string(&rail).unwrap();
    assert!(src.contains("nics_per_host = 4") && src.contains("technology = \"infiniband\"") && src.contains("placement = \"rail-aligned\""), "{src}");
    let v = json(&["run", r, "--json"]);
    assert_eq!(v["flows"]["failed"].as_u64(), Some(0));
    assert_eq!(v["fabric"].as_str(), Some("infiniband"));
}

#[test]
fn errors_name_the_flag() {
    let dir = scratch("errors");
    let f = dir.join("x.toml");
    let cases: [(&[&str], &str); 10] = [
        (&["design", "--gpus", "64", "--radix", "63"], "--radix: expected an even number"),
        (&["design", "--gpus", "64", "--speed", "5Gbps"], "--speed: expected a port speed from 10Gbps to 800Gbps"),
        (&["design", "--gpus", "64", "--speed", "400"], "--speed 400"),
        (&["design", "--gpus", "64", "--oversubscription", "1:2"], "--oversubscription: expected DOWN:UP"),
        (&["design", "--gpus", "64", "--oversubscription", "lots"], "--oversubscription lots: expected a ratio"),
        (&["design", "--gpus", "1000", "--nics-per-node", "8", "--su-nodes", "32", "--rail-optimised"], "--gpus: 125 nodes do not fill whole scalable units"),
        (&["design", "--gpus", "1001", "--nics-per-node", "8"], "--gpus: 1001 endpoints are not whole nodes"),
        (&["design", "--superpod", "h100"], "--superpod needs --sus"),
        (&["design", "--radix", "64"], "give the fabric's size"),
        (
            &["design", "--gpus", "16", "--speed", "25Gbps", "--technology", "infiniband", "--emit-scenario", f.to_str().unwrap()],
            "--speed: 25Gbps is not an InfiniBand",
        ),
    ];
    for (args, says) in cases {
        let (code, out, err) = fabriclab(args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains(says), "{args:?}: `{err}` does not say `{says}`");
    }
    assert!(!f.exists(), "nothing written on an error");
    let (code, _, err) = fabriclab(&["design", "--superpod", "a100", "--sus", "1"]);
    assert_eq!(code, 2);
    assert!(err.contains("expected h100 or b200"), "{err}");
}
