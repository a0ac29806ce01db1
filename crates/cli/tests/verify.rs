//! `fabriclab verify`: exit codes (0 clean or warnings only, 1 on an error, 2 on unreadable
//! input), human output grouped by severity, `--json`. Data: sonic-utilities
//! `tests/filter_fdb_input/config_db.json` and `tests/counterpoll_input/config_db.json` at
//! 691b1bbc4fd2b71657d1b0b334c37136deb51526 (copies in crates/plan/tests/data/sonic, see
//! SOURCE.md there).

use std::process::{Command, Output};

fn data(name: &str) -> String {
    format!("{}/../plan/tests/data/sonic/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn verify(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fabriclab")).arg("verify").args(args).output().expect("runs")
}

const FDB: &str = "sonic-utilities__tests__filter_fdb_input__config_db.json";
const COUNTERPOLL: &str = "sonic-utilities__tests__counterpoll_input__config_db.json";

#[test]
fn clean_config_exits_0() {
    let o = verify(&[&data(FDB), "--roce-dscp", "3", "--cell", "256"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("buffer cell 256 B") && out.contains("switch str-s6000-acs-14:") && out.contains("0 error(s), 0 warning(s)"), "{out}");
    // No lossless PG has a BUFFER_PG entry (buffermgrd creates them at run time), and the
    // Dell S6000 is a Broadcom (Trident2) switch: the pool accounting is Mellanox's only.
    assert!(
        out.contains("not checked (2):")
            && out.contains("str-s6000-acs-14 buffer-overcommit: no pool semantics (platform \"x86_64-dell_s6000_s1220-r0\" is not an NVIDIA Spectrum one")
            && out.contains("str-s6000-acs-14 ecn-after-pfc: no lossless PG profiles ("),
        "{out}"
    );
}

#[test]
fn error_exits_1_with_place_and_fix() {
    // ConnectX's default DSCP 26 is TC 1 (lossy) under SONiC's AZURE map.
    let o = verify(&[&data(COUNTERPOLL)]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("errors (1):"), "{out}");
    assert!(out.contains(&format!("[dscp-chain] str-s6000-acs-14 {}: DSCP_TO_TC_MAP|AZURE|26", data(COUNTERPOLL))), "{out}");
    assert!(out.contains("fix:     DSCP_TO_TC_MAP|AZURE|26 = \"3\""), "{out}");
    assert!(out.contains("not checked (2):") && out.contains("no PFC_WD table") && !out.contains("headroom-below-ieee"), "{out}");

    let o = verify(&[&data(COUNTERPOLL), "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["findings"][0]["severity"], "error");
    assert_eq!(v["findings"][0]["place"]["path"], "DSCP_TO_TC_MAP|AZURE|26");
    assert_eq!(v["not_checked"][1]["missing_table"], "PFC_WD");
}

#[test]
fn warnings_alone_exit_0() {
    let dir = std::env::temp_dir().join(format!("fabriclab-verify-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(data(FDB)).unwrap()).unwrap();
    v["PFC_WD"].as_object_mut().unwrap().remove("Ethernet4");
    let f = dir.join("no-wd.json");
    std::fs::write(&f, v.to_string()).unwrap();
    let o = verify(&[f.to_str().unwrap(), "--roce-dscp", "3"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("warnings (1):") && out.contains("PFC_WD|Ethernet4") && !out.contains("errors ("), "{out}");

    std::fs::write(&f, "{\"PORT\": {\"Ethernet0\": {\"mtu\": 9100}}}").unwrap();
    let o = verify(&[f.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2));
    assert!(err.contains("no-wd.json: PORT|Ethernet0|mtu: expected a string"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn unreadable_input_exits_2() {
    let o = verify(&["/nonexistent/config_db.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).starts_with("error: /nonexistent/config_db.json: "));
    let o = verify(&[&data(FDB), "--path-mtu", "4000"]);
    assert_eq!(o.status.code(), Some(2));
    let o = verify(&[&data(FDB), "--cell", "0"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn nic_retry_budget_flags() {
    // FDB's 200 ms watchdogs against timeout 14 (67 ms) with no retries: every lossless port
    // is flagged at its own PFC_WD entry, exit 1.
    let o = verify(&[&data(FDB), "--roce-dscp", "3", "--ib-timeout", "14", "--retry-cnt", "0"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains(&format!("[watchdog-after-retry] str-s6000-acs-14 {}: PFC_WD|Ethernet8|detection_time", data(FDB))), "{out}");
    assert!(out.contains("the NIC's timeout 14, retry_cnt 0"), "{out}");
    // Out of the QP attribute's range: a usage error.
    let o = verify(&[&data(FDB), "--retry-cnt", "8"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn nic_files() {
    let dir = std::env::temp_dir().join(format!("fabriclab-verify-nic-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("nic1.toml");
    std::fs::write(&good, "switch = \"str-s6000-acs-14\"\nport = \"Ethernet8\"\ntrust = \"pcp\"\npfc = [3, 4]\n").unwrap();
    let o = verify(&[&data(FDB), "--roce-dscp", "3", "--nic", good.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains(&format!("[nic-trust] str-s6000-acs-14 {}: trust", good.display())), "{out}");

    let bad = dir.join("nic2.toml");
    std::fs::write(&bad, "switch = \"str-s6000-acs-14\"\nport = \"Ethernet8\"\npfc_enable = [3]\n").unwrap();
    let o = verify(&[&data(FDB), "--nic", bad.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("{}: ", bad.display())) && err.contains("unknown field `pfc_enable`"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
