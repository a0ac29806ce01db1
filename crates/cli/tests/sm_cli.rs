//! `fabriclab sm`: the JSON contract, --emit-net consistency, --down re-sweeps, errors.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn sm(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_fabriclab")).arg("sm").args(args).output().expect("runs");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

fn sm_json(args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.push("--json");
    let (code, out, err) = sm(&a);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).expect("valid JSON")
}

#[test]
fn json_contract_on_an_ibsim_file() {
    let net = root().join("crates/scenario/tests/data/ibsim-2sw.net");
    let j = sm_json(&[net.to_str().unwrap()]);
    assert_eq!(j["routing"], "minhop");
    let lids = j["lids"].as_object().unwrap();
    for name in ["Switch1", "Switch2", "H_1", "H_2", "H_3", "H_4"] {
        assert!(lids[name].as_u64().unwrap() > 0, "{name}");
    }
    let lft = j["lft"].as_object().unwrap();
    let s1 = lft["Switch1"].as_object().unwrap();
    // Own LID → port 0; H_1 hangs on Switch1 port 1, H_2 on Switch1 port 2 (file numbering).
    assert_eq!(s1[&lids["Switch1"].to_string()], 0);
    assert_eq!(s1[&lids["H_1"].to_string()], 1);
    assert_eq!(s1[&lids["H_2"].to_string()], 2);
    let to_h3 = s1[&lids["H_3"].to_string()].as_u64().unwrap();
    assert!(to_h3 == 3 || to_h3 == 4);
    assert_eq!(j["unreachable"].as_array().unwrap().len(), 0);
    assert_eq!(j["cdg_acyclic"], true);
    assert!(j["cycle"].is_null());
    assert!(j["path_hops"].as_object().unwrap().contains_key("2"));
    assert!(j["port_routes"]["Switch1"].is_object());
    assert!(j["bring_up"]["smps_total"].as_u64().unwrap() > 0);
}

#[test]
fn emitted_net_file_gives_the_same_lids_and_tables() {
    let toml = root().join("examples/roce-incast.toml");
    let dir = std::env::temp_dir().join(format!("fabriclab-sm-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let net = dir.join("incast.net");
    let a = sm_json(&[toml.to_str().unwrap(), "--emit-net", net.to_str().unwrap()]);
    let b = sm_json(&[net.to_str().unwrap()]);
    assert_eq!(a["lids"], b["lids"]);
    assert_eq!(a["lft"], b["lft"]);
    for engine in ["updn", "ftree", "dfsssp"] {
        let a = sm_json(&[toml.to_str().unwrap(), "--routing", engine]);
        let b = sm_json(&[net.to_str().unwrap(), "--routing", engine]);
        assert_eq!(a["lft"], b["lft"], "{engine}");
        assert_eq!(a["routing"], engine, "{engine}: {}", a["fallback"]);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn down_link_reports_unreachable_pairs_and_a_ring_cycle_is_named() {
    let net = root().join("crates/scenario/tests/data/ibsim-2sw.net");
    // H_3 hangs only on Switch2 port 5.
    let j = sm_json(&[net.to_str().unwrap(), "--down", "Switch2:5"]);
    let un: Vec<(String, String)> =
        j["unreachable"].as_array().unwrap().iter().map(|p| (p[0].as_str().unwrap().into(), p[1].as_str().unwrap().into())).collect();
    assert_eq!(un.len(), 6, "{un:?}");
    assert!(un.contains(&("H_1".into(), "H_3".into())));
    assert!(un.contains(&("H_3".into(), "H_4".into())));
    assert!(j["resweep"]["smps_total"].as_u64().unwrap() > 0);
    // Both inter-switch links down except one: still reachable.
    let j = sm_json(&[net.to_str().unwrap(), "--down", "Switch1:3"]);
    assert_eq!(j["unreachable_count"], 0);
    assert_ne!(j["lft"]["Switch1"][j["lids"]["H_3"].to_string()], 3);

    // A ring: minhop's CDG is cyclic and the cycle is a list of [switch, port].
    let dir = std::env::temp_dir().join(format!("fabriclab-sm-ring-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut text = String::new();
    for i in 0..5 {
        text +=
            &format!("Switch 3 \"sw{i}\"\n[1] \"h{i}\"[1]\n[2] \"sw{}\"[3]\n[3] \"sw{}\"[2]\n\nHca 1 \"h{i}\"\n[1] \"sw{i}\"[1]\n\n", (i + 1) % 5, (i + 4) % 5);
    }
    let ring = dir.join("ring.net");
    std::fs::write(&ring, text).unwrap();
    let j = sm_json(&[ring.to_str().unwrap()]);
    assert_eq!(j["cdg_acyclic"], false);
    let cycle = j["cycle"].as_array().unwrap();
    assert!(cycle.len() >= 3);
    assert!(cycle.iter().all(|c| c[0].as_str().unwrap().starts_with("sw") && c[1].as_u64().unwrap() >= 2));
    let j = sm_json(&[ring.to_str().unwrap(), "--routing", "dfsssp"]);
    assert_eq!(j["routing"], "dfsssp");
    assert_eq!(j["cdg_acyclic"], true);
    assert!(j["vls"]["needed"].as_u64().unwrap() >= 2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_is_a_file_line_error() {
    let dir = std::env::temp_dir().join(format!("fabriclab-sm-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("bad.net");
    std::fs::write(&f, "Switch 4 \"a\"\n[7] \"b\"[1]\n").unwrap();
    let (code, _, err) = sm(&[f.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("bad.net:2: port 7 does not exist"), "{err}");
    let net = root().join("crates/scenario/tests/data/ibsim-2sw.net");
    let (code, _, err) = sm(&[net.to_str().unwrap(), "--root", "nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("--root: no node named `nope`"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
