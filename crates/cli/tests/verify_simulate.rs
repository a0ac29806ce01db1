//! `fabriclab verify --simulate`, `--emit-scenario`, `--switch` on the 2-leaf / 2-spine
//! fabric in crates/plan/tests/data/sonic/leafspine (made by its make.py from sonic-utilities
//! `tests/counterpoll_input/config_db.json` at 691b1bbc4fd2b71657d1b0b334c37136deb51526, see
//! SOURCE.md there): exit codes, the drops and pauses reported per port, the emitted
//! scenario parsing back, and input errors naming the file and key.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{json, Value};

const SWITCHES: [&str; 4] = ["leaf1", "leaf2", "spine1", "spine2"];

fn fixture(name: &str) -> String {
    format!("{}/../plan/tests/data/sonic/leafspine/{name}.json", env!("CARGO_MANIFEST_DIR"))
}

fn verify(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fabriclab")).arg("verify").args(args).output().expect("runs")
}

/// A scratch directory for this test.
fn scratch(test: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("verify_simulate").join(test);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The four switches' files, `leaf2` with `edit` applied (written to `dir`).
fn files(dir: &Path, edit: impl Fn(&mut Value)) -> Vec<String> {
    SWITCHES
        .iter()
        .map(|s| {
            if *s != "leaf2" {
                return fixture(s);
            }
            let mut v: Value = serde_json::from_str(&std::fs::read_to_string(fixture(s)).unwrap()).unwrap();
            edit(&mut v);
            let p = dir.join("leaf2.json");
            std::fs::write(&p, v.to_string()).unwrap();
            p.display().to_string()
        })
        .collect()
}

/// RoCE on DSCP 3 (lossless under SONiC's AZURE map) and a 256 B cell: config_db has neither.
const ASSUME: [&str; 4] = ["--roce-dscp", "3", "--cell", "256"];

fn args<'a>(files: &'a [String], more: &[&'a str]) -> Vec<&'a str> {
    files.iter().map(String::as_str).chain(ASSUME).chain(more.iter().copied()).collect()
}

#[test]
fn clean_fabric_simulates_clean_and_emits_a_scenario_that_parses() {
    let dir = scratch("clean");
    let fs = files(&dir, |_| {});
    let emit = dir.join("fabric.toml");
    let o = verify(&args(&fs, &["--simulate", "--emit-scenario", emit.to_str().unwrap()]));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}\n{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("0 error(s), 0 warning(s)"), "{out}");
    assert!(out.contains("incast: leaf1-Ethernet4, leaf1-Ethernet8, leaf2-Ethernet4 -> leaf2-Ethernet8"), "{out}");
    assert!(out.contains("flows: 3 of 3 completed"), "{out}");
    assert!(out.contains("drops: none (0 in lossless classes)"), "{out}");
    // The incast pauses: leaf2's uplink from spine1 sends PFC, spine1's port is paused.
    assert!(out.contains("leaf2 Ethernet112 (profile pg_lossless_40000_40m_profile): sent "), "{out}");
    assert!(out.contains("spine1 Ethernet116 (profile pg_lossless_40000_40m_profile): paused "), "{out}");
    // The headroom worst case (plan roce --prove's scenario) per port type: no drop either.
    let worst: Vec<&str> = out.lines().skip_while(|l| !l.starts_with("headroom worst case")).skip(1).collect();
    assert_eq!(worst.len(), 2, "{out}");
    assert!(
        worst[0].starts_with(
            "  40000 Mb/s, 5 m, pg_lossless_40000_5m_profile xoff 55120 B (leaf1 Ethernet4, leaf1 Ethernet8, leaf2 Ethernet4, leaf2 Ethernet8): peak "
        ),
        "{out}"
    );
    assert!(worst[1].starts_with("  40000 Mb/s, 40 m, pg_lossless_40000_40m_profile xoff 55120 B (leaf1 Ethernet112, "), "{out}");
    assert!(worst.iter().all(|l| l.contains(", 0 lossless drops (8 reverse pattern(s) tried)")), "{out}");

    let text = std::fs::read_to_string(&emit).unwrap();
    let w = scenario::load_str(emit.to_str().unwrap(), &text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(w.topo.hosts, 4);
    let leaf1 = fixture("leaf1");
    for want in [
        format!("headroom = \"55120B\"  # {leaf1} BUFFER_PROFILE|pg_lossless_40000_5m_profile|xoff"),
        format!("dynamic_th = -3  # {leaf1} BUFFER_PROFILE|pg_lossless_40000_5m_profile|dynamic_th"),
        format!("kmax = \"2097152B\"  # {leaf1} WRED_PROFILE|AZURE_LOSSLESS|green_max_threshold"),
    ] {
        assert!(text.contains(&want), "missing {want:?}:\n{text}");
    }
}

#[test]
fn short_headroom_drops_at_its_ports_and_exits_1() {
    let dir = scratch("short");
    let fs = files(&dir, |v| v["BUFFER_PROFILE"]["pg_lossless_40000_40m_profile"]["xoff"] = json!("5120"));
    let o = verify(&args(&fs, &["--simulate"]));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("[headroom-below-ieee] leaf2 ") && out.contains("BUFFER_PROFILE|pg_lossless_40000_40m_profile|xoff"), "{out}");
    // The simulation's per-port lines (the findings' text may say "dropped" too).
    let dropped: Vec<&str> = out.lines().filter(|l| l.contains("): dropped ")).collect();
    assert_eq!(dropped.len(), 1, "{out}");
    assert!(
        dropped[0].starts_with("  leaf2 Ethernet112 (profile pg_lossless_40000_40m_profile): dropped ") && dropped[0].contains(" headroom-overflow"),
        "{out}"
    );
    assert!(out.contains("lossless drops: the configuration loses RoCE packets"), "{out}");
    // In the headroom worst case, the short profile's ports (and only they) drop.
    let worst: Vec<&str> = out.lines().skip_while(|l| !l.starts_with("headroom worst case")).skip(1).filter(|l| l.contains(" Mb/s, ")).collect();
    assert_eq!(worst.len(), 3, "{out}");
    let short: Vec<&&str> = worst.iter().filter(|l| !l.contains(", 0 lossless drops")).collect();
    assert_eq!(short.len(), 1, "{out}");
    assert!(short[0].starts_with("  40000 Mb/s, 40 m, pg_lossless_40000_40m_profile xoff 5120 B (leaf2 Ethernet112, leaf2 Ethernet116): peak "), "{out}");

    let o = verify(&args(&fs, &["--simulate", "--json"]));
    assert_eq!(o.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&o.stdout).expect("json");
    let outcome = &v["simulation"]["outcome"];
    assert!(outcome["lossless_drops"].as_u64().unwrap() > 0, "{outcome}");
    let ports: Vec<(&str, &str)> = outcome["ports"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| !p["drops"].as_array().unwrap().is_empty())
        .map(|p| (p["switch"].as_str().unwrap(), p["port"].as_str().unwrap()))
        .collect();
    assert_eq!(ports, [("leaf2", "Ethernet112")]);
    assert_eq!(v["findings"][0]["id"], "headroom-below-ieee");
    let worst = v["simulation"]["headroom"].as_array().unwrap();
    let dropping: Vec<&Value> = worst.iter().filter(|h| h["lossless_drops"].as_u64().unwrap() > 0).collect();
    assert_eq!(dropping.len(), 1);
    assert_eq!(dropping[0]["ports"], json!([["leaf2", "Ethernet112"], ["leaf2", "Ethernet116"]]));
    assert_eq!(dropping[0]["xoff_bytes"], 5120);
}

#[test]
fn switch_groups() {
    let dir = scratch("groups");
    // leaf2's file with another hostname: by hostname its neighbours cannot find it.
    let fs = files(&dir, |v| v["DEVICE_METADATA"]["localhost"]["hostname"] = json!("str-s6000-acs-14"));
    let o = verify(&args(&fs, &["--simulate"]));
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("DEVICE_NEIGHBOR|Ethernet116|name: \"leaf2\" (port \"Ethernet112\") is a switch that is not among the switches given"), "{err}");

    let group = format!("leaf2={}", fs[1]);
    let loose = [fs[0].clone(), fs[2].clone(), fs[3].clone()];
    let o = verify(&args(&loose, &["--switch", &group, "--simulate"]));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains(&format!("switch leaf2: {}", fs[1])), "{out}");

    // A file grouped and loose; a malformed group.
    let o = verify(&args(&fs, &["--switch", &group]));
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is also given as a loose file"));
    let o = verify(&args(&loose, &["--switch", "leaf2"]));
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--switch \"leaf2\": expected NAME=FILE[,FILE...]"));
    // Two hostnames in one group.
    let o = verify(&args(&loose[1..], &["--switch", &format!("leaf2={},{}", fs[1], fs[0])]));
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("DEVICE_METADATA|localhost|hostname: --switch leaf2:"), "{err}");
}

#[test]
fn bad_input_exits_2_naming_file_and_key() {
    let dir = scratch("bad");
    let fs = files(&dir, |v| v["DEVICE_NEIGHBOR"]["Ethernet112"]["port"] = json!("Ethernet999"));
    let o = verify(&args(&fs, &["--simulate"]));
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&format!("{}: DEVICE_NEIGHBOR|Ethernet112|port: \"Ethernet999\" is not a port of switch \"spine1\"", fs[1])), "{err}");

    let clean = files(&scratch("bad-cell"), |_| {});
    let mut a: Vec<&str> = clean.iter().map(String::as_str).collect();
    a.extend(["--roce-dscp", "3", "--simulate"]);
    let o = verify(&a);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--cell: --simulate needs the buffer's cell size"));
    let o = verify(&args(&clean, &["--emit-scenario", "x.toml"]));
    assert_eq!(o.status.code(), Some(2), "--emit-scenario needs --simulate");
}

#[test]
fn topology_file() {
    let dir = scratch("topology");
    let fs = files(&dir, |_| {});
    // The leaf-spine's wiring; switch port i is the PORT entry with index i (Ethernet4 1,
    // Ethernet8 2, Ethernet112 28, Ethernet116 29 on the S6000).
    let topo = r#"[topology]
kind = "explicit"
nodes = [
  { name = "leaf1", kind = "switch", ports = 32 }, { name = "leaf2", kind = "switch", ports = 32 },
  { name = "spine1", kind = "switch", ports = 32 }, { name = "spine2", kind = "switch", ports = 32 },
  { name = "h1", kind = "host" }, { name = "h2", kind = "host" }, { name = "h3", kind = "host" }, { name = "h4", kind = "host" },
]
links = [
  { a = "h1", b = "leaf1:1", speed = "40Gbps", cable = "5m" }, { a = "h2", b = "leaf1:2", speed = "40Gbps", cable = "5m" },
  { a = "h3", b = "leaf2:1", speed = "40Gbps", cable = "5m" }, { a = "h4", b = "leaf2:2", speed = "40Gbps", cable = "5m" },
  { a = "leaf1:28", b = "spine1:28", speed = "40Gbps", cable = "40m" }, { a = "leaf1:29", b = "spine2:28", speed = "40Gbps", cable = "40m" },
  { a = "leaf2:28", b = "spine1:29", speed = "40Gbps", cable = "40m" }, { a = "leaf2:29", b = "spine2:29", speed = "40Gbps", cable = "40m" },
]
"#;
    let t = dir.join("fabric.toml");
    std::fs::write(&t, topo).unwrap();
    let o = verify(&args(&fs, &["--simulate", "--topology", t.to_str().unwrap()]));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("incast: h1, h2, h3 -> h4") && out.contains("drops: none (0 in lossless classes)"), "{out}");

    std::fs::write(&t, topo.replace("leaf2:29\", b", "leaf2:30\", b")).unwrap();
    let o = verify(&args(&fs, &["--simulate", "--topology", t.to_str().unwrap()]));
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("fabric.toml: topology.links[7].a: \"leaf2:30\": switch leaf2 has no PORT entry with index \"30\""), "{err}");
    // --topology without --simulate.
    assert_eq!(verify(&args(&fs, &["--topology", t.to_str().unwrap()])).status.code(), Some(2));
}
