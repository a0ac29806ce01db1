//! `plan::verify` on real SONiC configurations and on broken variants of them: each broken
//! variant must be flagged at exactly one place (file, `TABLE|key|field`) and nowhere else.
//!
//! Data (verbatim, see tests/data/sonic/SOURCE.md):
//! * FDB: sonic-utilities `tests/filter_fdb_input/config_db.json` at 691b1bbc4fd2b71657d1b0b334c37136deb51526
//!   (Force10-S6000, pfc_enable "3,4", PFC_WD on every lossless port).
//! * COUNTERPOLL: sonic-utilities `tests/counterpoll_input/config_db.json` at the same commit
//!   (no PFC_WD table).
//! * QOS_4600C / BUFFERS_4600C: sonic-buildimage `src/sonic-config-engine/tests/sample_output/py3/
//!   qos-mellanox4600c-c64.json` and `buffers-mellanox4600c-t1.json` at
//!   086b03bd70f9e211aaaf5f6aefe0790b508d2a94 (the templates' output, no hostname, no PORT).
//!
//! SONiC's AZURE maps make DSCP 3 and 4 lossless, so the clean runs pass `roce_dscp` 3.

use plan::verify::{verify, Finding, Options, ReadError, Report, Severity};
use serde_json::{json, Value};

const FDB: &str = "sonic-utilities__tests__filter_fdb_input__config_db.json";
const COUNTERPOLL: &str = "sonic-utilities__tests__counterpoll_input__config_db.json";
const QOS_4600C: &str = "sonic-buildimage__sample_output__qos-mellanox4600c-c64.json";
const BUFFERS_4600C: &str = "sonic-buildimage__sample_output__buffers-mellanox4600c-t1.json";

fn data(name: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/data/sonic/{name}", env!("CARGO_MANIFEST_DIR"))).expect("test data")
}

/// DSCP 3 (lossless under AZURE) and a 256 B cell: an assumption of these tests (as in
/// `plan roce`'s examples), since config_db does not hold the ASIC's cell size.
fn dscp3() -> Options {
    Options { roce_dscp: 3, cell: Some(units::Bytes(256)), ..Options::default() }
}

fn run(files: &[(&str, String)], o: &Options) -> Result<Report, ReadError> {
    let s: Vec<(String, String)> = files.iter().map(|(n, t)| (n.to_string(), t.clone())).collect();
    verify(&s, o)
}

/// FDB with `edit` applied to its JSON.
fn fdb_with(edit: impl FnOnce(&mut Value)) -> Report {
    let mut v: Value = serde_json::from_str(&data(FDB)).unwrap();
    edit(&mut v);
    run(&[(FDB, v.to_string())], &dscp3()).unwrap()
}

/// The report has exactly one finding: this check, severity and place.
fn only<'a>(r: &'a Report, id: &str, sev: Severity, path: &str) -> &'a Finding {
    let got: Vec<_> = r.findings.iter().map(|f| (f.id, f.severity, f.place.path.as_str())).collect();
    assert_eq!(got, vec![(id, sev, path)], "{:#?}", r.findings);
    &r.findings[0]
}

const LOSSLESS_PORTS: usize = 28;

#[test]
fn real_configs_verify_clean() {
    let r = run(&[(FDB, data(FDB))], &dscp3()).unwrap();
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    // No lossless PG has a BUFFER_PG entry (buffermgrd creates them at run time), and a
    // Broadcom (Dell S6000, Trident2) switch: pool accounting is Mellanox's only (its
    // dynamic_th values -3 and 3 are checked against Trident2's alphas, verify_buffers.rs).
    let nc: Vec<_> = r.not_checked.iter().map(|n| (n.check, n.missing_table)).collect();
    assert_eq!(nc, [("buffer-overcommit", "(pool semantics)"), ("ecn-after-pfc", "(lossless PG profiles)")]);
    assert!(r.not_checked[0].note.contains("x86_64-dell_s6000_s1220-r0"), "{}", r.not_checked[0].note);
    assert!(r.ignored_tables.iter().any(|i| i.table == "ACL_TABLE" && i.file == FDB));
    assert_eq!(r.switches, vec![("str-s6000-acs-14".to_string(), vec![FDB.to_string()])]);

    let r = run(&[(COUNTERPOLL, data(COUNTERPOLL))], &dscp3()).unwrap();
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    let nc: Vec<_> = r.not_checked.iter().map(|n| (n.check, n.missing_table)).collect();
    // Its pg_lossless_40000_{5m,40m,300m}_profile equal the Force10-S6000 pg_profile_lookup.ini
    // rows (headroom-vs-sonic checked, clean; see verify_buffers.rs).
    assert_eq!(nc, [("buffer-overcommit", "(pool semantics)"), ("pfc-watchdog-missing", "PFC_WD")]);
    assert!(r.not_checked[1].note.contains("default_pfcwd_status is disable"));

    // The template outputs: one switch without a hostname, in two files.
    let r = run(&[(QOS_4600C, data(QOS_4600C)), (BUFFERS_4600C, data(BUFFERS_4600C))], &dscp3()).unwrap();
    assert_eq!(r.switches.len(), 1);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    let nc: Vec<_> = r.not_checked.iter().map(|n| (n.check, n.missing_table)).collect();
    assert_eq!(
        nc,
        [
            ("port-mtu", "PORT"),
            ("pg-profile-lookup-missing", "(pg_profile_lookup.ini)"),
            ("headroom-below-ieee", "PORT"),
            ("buffer-overcommit", "(pool semantics)"),
            ("ecn-after-pfc", "(lossless PG profiles)"),
            ("pfc-watchdog-missing", "PFC_WD"),
            ("dynamic-th-range", "(dynamic_th range)")
        ]
    );
    assert!(r.not_checked[6].note.contains("platform is absent"), "{}", r.not_checked[6].note);

    // Without --cell the IEEE headroom and ECN checks use the platform's (the S6000's
    // Trident2: 208 B, verify_buffers.rs): clean, with the same not-checked as with --cell.
    let r = run(&[(FDB, data(FDB))], &Options { roce_dscp: 3, ..Options::default() }).unwrap();
    assert!(r.findings.is_empty());
    let nc: Vec<_> = r.not_checked.iter().map(|n| (n.check, n.missing_table)).collect();
    assert_eq!(nc, [("buffer-overcommit", "(pool semantics)"), ("ecn-after-pfc", "(lossless PG profiles)")]);
}

/// The 4600C template outputs with `edit` applied to the buffers file, which also gets the
/// platform of that SKU (`x86_64-mlnx_msn4600c-r0`, sonic-buildimage
/// `device/mellanox/x86_64-mlnx_msn4600c-r0/Mellanox-SN4600C-C64`): the template output has
/// no DEVICE_METADATA.
fn mellanox_with(edit: impl FnOnce(&mut Value)) -> Report {
    let mut v: Value = serde_json::from_str(&data(BUFFERS_4600C)).unwrap();
    v["DEVICE_METADATA"] = json!({"localhost": {"platform": "x86_64-mlnx_msn4600c-r0"}});
    edit(&mut v);
    run(&[(QOS_4600C, data(QOS_4600C)), (BUFFERS_4600C, v.to_string())], &dscp3()).unwrap()
}

#[test]
fn dynamic_th_outside_mellanox_sai_range_warns() {
    // SONiC's own values (-8, 3, 7) are at or inside the bounds: clean, and checked.
    let r = mellanox_with(|_| {});
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert!(!r.not_checked.iter().any(|n| n.check == "dynamic-th-range"), "{:#?}", r.not_checked);

    let r = mellanox_with(|v| v["BUFFER_PROFILE"]["egress_lossless_profile"]["dynamic_th"] = json!("8"));
    let f = only(&r, "dynamic-th-range", Severity::Warning, "BUFFER_PROFILE|egress_lossless_profile|dynamic_th");
    assert_eq!(f.place.file, BUFFERS_4600C);
    assert!(f.what.contains("reads it as 7 (unlimited)"), "{}", f.what);

    let r = mellanox_with(|v| v["BUFFER_PROFILE"]["q_lossy_profile"]["dynamic_th"] = json!("-9"));
    let f = only(&r, "dynamic-th-range", Severity::Warning, "BUFFER_PROFILE|q_lossy_profile|dynamic_th");
    assert!(f.what.contains("reads it as -8 (alpha 0)"), "{}", f.what);

    // A platform whose range is not known (Arista 7260CX3, Broadcom Tomahawk-2): not
    // checked, even with a value out of Mellanox's.
    let r = mellanox_with(|v| {
        v["DEVICE_METADATA"]["localhost"]["platform"] = json!("x86_64-arista_7260cx3_64");
        v["BUFFER_PROFILE"]["q_lossy_profile"]["dynamic_th"] = json!("-9");
    });
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert!(r.not_checked.iter().any(|n| n.check == "dynamic-th-range"));

    // Not a number: an input error at the field.
    let mut v: Value = serde_json::from_str(&data(BUFFERS_4600C)).unwrap();
    v["DEVICE_METADATA"] = json!({"localhost": {"platform": "x86_64-mlnx_msn4600c-r0"}});
    v["BUFFER_PROFILE"]["q_lossy_profile"]["dynamic_th"] = json!("three");
    let e = run(&[(QOS_4600C, data(QOS_4600C)), (BUFFERS_4600C, v.to_string())], &dscp3()).unwrap_err();
    assert!(e.to_string().contains("BUFFER_PROFILE|q_lossy_profile|dynamic_th"), "{e}");
}

#[test]
fn nvidia_default_dscp_is_lossy_under_azure_maps() {
    // DSCP 26 (ConnectX's default) maps to TC 1 in SONiC's AZURE map: one finding, at the
    // map entry, for every lossless port.
    let r = run(&[(COUNTERPOLL, data(COUNTERPOLL))], &Options::default()).unwrap();
    let f = only(&r, "dscp-chain", Severity::Error, "DSCP_TO_TC_MAP|AZURE|26");
    assert_eq!(f.place.file, COUNTERPOLL);
    assert_eq!(f.ports.len(), LOSSLESS_PORTS);
    assert_eq!(f.fix, "DSCP_TO_TC_MAP|AZURE|26 = \"3\"");
    assert!(f.what.contains("TC 1"), "{}", f.what);
}

#[test]
fn dscp_chain_breaks_are_placed() {
    let r = fdb_with(|v| v["DSCP_TO_TC_MAP"]["AZURE"]["3"] = json!("1"));
    assert_eq!(only(&r, "dscp-chain", Severity::Error, "DSCP_TO_TC_MAP|AZURE|3").ports.len(), LOSSLESS_PORTS);

    let r = fdb_with(|v| {
        v["DSCP_TO_TC_MAP"]["AZURE"].as_object_mut().unwrap().remove("3");
    });
    assert!(only(&r, "dscp-chain", Severity::Error, "DSCP_TO_TC_MAP|AZURE|3").what.contains("no entry"));

    let r = fdb_with(|v| v["TC_TO_PRIORITY_GROUP_MAP"]["AZURE"]["3"] = json!("0"));
    let f = only(&r, "dscp-chain", Severity::Error, "TC_TO_PRIORITY_GROUP_MAP|AZURE|3");
    assert_eq!(f.fix, "TC_TO_PRIORITY_GROUP_MAP|AZURE|3 = \"3\"");

    let r = fdb_with(|v| v["TC_TO_QUEUE_MAP"]["AZURE"]["3"] = json!("1"));
    only(&r, "dscp-chain", Severity::Error, "TC_TO_QUEUE_MAP|AZURE|3");

    let r = fdb_with(|v| v["PORT_QOS_MAP"]["Ethernet4"]["dscp_to_tc_map"] = json!("NOPE"));
    let f = only(&r, "dscp-chain", Severity::Error, "PORT_QOS_MAP|Ethernet4|dscp_to_tc_map");
    assert_eq!(f.ports, ["Ethernet4"]);
}

#[test]
fn cnp_in_a_paused_or_unmapped_class_warns() {
    let r = fdb_with(|v| v["DSCP_TO_TC_MAP"]["AZURE"]["48"] = json!("4"));
    let f = only(&r, "cnp-class", Severity::Warning, "DSCP_TO_TC_MAP|AZURE|48");
    assert_eq!(f.ports.len(), LOSSLESS_PORTS);
    assert!(f.fix.starts_with("DSCP_TO_TC_MAP|AZURE|48 = \"6\""), "{}", f.fix);

    let r = fdb_with(|v| {
        v["DSCP_TO_TC_MAP"]["AZURE"].as_object_mut().unwrap().remove("48");
    });
    assert!(only(&r, "cnp-class", Severity::Warning, "DSCP_TO_TC_MAP|AZURE|48").what.contains("TC 0"));
}

#[test]
fn pfc_peers_must_agree() {
    // FDB's Ethernet112 faces ARISTA01T1 Ethernet1 (DEVICE_NEIGHBOR); give that peer a file.
    let peer = |pfc: &str| {
        json!({
            "DEVICE_METADATA": {"localhost": {"hostname": "ARISTA01T1"}},
            "PORT_QOS_MAP": {"Ethernet1": {"pfc_enable": pfc}},
            "DEVICE_NEIGHBOR": {"Ethernet1": {"name": "str-s6000-acs-14", "port": "Ethernet112"}}
        })
        .to_string()
    };
    let r = run(&[(FDB, data(FDB)), ("arista01t1.json", peer("3,4"))], &dscp3()).unwrap();
    assert!(r.findings.is_empty(), "{:#?}", r.findings);

    let r = run(&[(FDB, data(FDB)), ("arista01t1.json", peer("3"))], &dscp3()).unwrap();
    let f = only(&r, "pfc-peer-mismatch", Severity::Error, "PORT_QOS_MAP|Ethernet1|pfc_enable");
    assert_eq!(f.place.file, "arista01t1.json");
    assert!(f.what.contains(&format!("str-s6000-acs-14 Ethernet112 ({FDB}: PORT_QOS_MAP|Ethernet112|pfc_enable)")), "{}", f.what);
    assert_eq!(f.fix, "pfc_enable \"3,4\" on both ends");
}

#[test]
fn port_mtu_below_path_mtu_plus_64() {
    // 4096 + 64 = 4160 is exactly enough.
    assert!(fdb_with(|v| v["PORT"]["Ethernet4"]["mtu"] = json!("4160")).findings.is_empty());
    let r = fdb_with(|v| v["PORT"]["Ethernet4"]["mtu"] = json!("4159"));
    let f = only(&r, "port-mtu", Severity::Error, "PORT|Ethernet4|mtu");
    assert!(f.fix.contains("4160"), "{}", f.fix);
    // A smaller path MTU fits.
    let mut v: Value = serde_json::from_str(&data(FDB)).unwrap();
    v["PORT"]["Ethernet4"]["mtu"] = json!("1500");
    let o = Options { path_mtu: units::Bytes(1024), ..dscp3() };
    assert!(run(&[(FDB, v.to_string())], &o).unwrap().findings.is_empty());
}

#[test]
fn missing_cable_length() {
    let r = fdb_with(|v| {
        v["CABLE_LENGTH"]["AZURE"].as_object_mut().unwrap().remove("Ethernet4");
    });
    only(&r, "cable-length-missing", Severity::Error, "CABLE_LENGTH|AZURE|Ethernet4");
}

#[test]
fn ecn_on_lossless_queues() {
    let r = fdb_with(|v| {
        v["QUEUE"]["Ethernet4|3"].as_object_mut().unwrap().remove("wred_profile");
    });
    let f = only(&r, "ecn-missing", Severity::Warning, "QUEUE|Ethernet4|3|wred_profile");
    assert_eq!(f.fix, "QUEUE|Ethernet4|3|wred_profile = \"AZURE_LOSSLESS\"");

    let r = fdb_with(|v| v["WRED_PROFILE"]["AZURE_LOSSLESS"]["ecn"] = json!("ecn_none"));
    assert_eq!(only(&r, "ecn-missing", Severity::Warning, "WRED_PROFILE|AZURE_LOSSLESS|ecn").ports.len(), LOSSLESS_PORTS);

    let r = fdb_with(|v| v["QUEUE"]["Ethernet4|4"]["wred_profile"] = json!("NOPE"));
    only(&r, "ecn-missing", Severity::Error, "QUEUE|Ethernet4|4|wred_profile");
}

#[test]
fn pfc_watchdog_on_lossless_ports() {
    let r = fdb_with(|v| {
        v["PFC_WD"].as_object_mut().unwrap().remove("Ethernet4");
    });
    let f = only(&r, "pfc-watchdog-missing", Severity::Warning, "PFC_WD|Ethernet4");
    assert!(f.fix.contains("detection_time \"200\""));

    assert!(fdb_with(|v| v["PORT_QOS_MAP"]["Ethernet8"]["pfcwd_sw_enable"] = json!("3,4")).findings.is_empty());
    let r = fdb_with(|v| v["PORT_QOS_MAP"]["Ethernet8"]["pfcwd_sw_enable"] = json!("3"));
    let f = only(&r, "pfc-watchdog-missing", Severity::Warning, "PORT_QOS_MAP|Ethernet8|pfcwd_sw_enable");
    assert_eq!(f.fix, "PORT_QOS_MAP|Ethernet8|pfcwd_sw_enable = \"3,4\"");
}

#[test]
fn bad_input_names_file_and_place() {
    let edit = |f: &dyn Fn(&mut Value)| {
        let mut v: Value = serde_json::from_str(&data(FDB)).unwrap();
        f(&mut v);
        run(&[(FDB, v.to_string())], &dscp3()).unwrap_err().to_string()
    };
    assert_eq!(
        edit(&|v| v["PORT"]["Ethernet4"]["mtu"] = json!(9100)),
        format!("{FDB}: PORT|Ethernet4|mtu: expected a string (config_db stores every field as one), found a number")
    );
    assert_eq!(edit(&|v| v["PORT"]["Ethernet4"]["mtu"] = json!("nine")), format!("{FDB}: PORT|Ethernet4|mtu: \"nine\" is not a whole number"));
    assert!(edit(&|v| v["PORT_QOS_MAP"]["Ethernet4"]["pfc_enable"] = json!("3,x")).starts_with(&format!("{FDB}: PORT_QOS_MAP|Ethernet4|pfc_enable: ")));
    assert!(edit(&|v| v["PORT_QOS_MAP"]["Ethernet4"]["pfc_enable"] = json!("3,9")).ends_with("priority 9 is not 0..7"));
    assert!(edit(&|v| v["CABLE_LENGTH"]["AZURE"]["Ethernet4"] = json!("5 metres")).starts_with(&format!("{FDB}: CABLE_LENGTH|AZURE|Ethernet4: ")));
    assert!(edit(&|v| v["DSCP_TO_TC_MAP"]["AZURE"]["3"] = json!("three")).starts_with(&format!("{FDB}: DSCP_TO_TC_MAP|AZURE|3: ")));
    assert!(edit(&|v| v["QUEUE"]["Ethernet4"] = json!({})).starts_with(&format!("{FDB}: QUEUE|Ethernet4: ")));

    // Truncated at every 997th byte: always an error naming the file, never a panic.
    let text = data(FDB);
    for cut in (0..text.len()).step_by(997) {
        let e = run(&[(FDB, text[..cut].to_string())], &dscp3()).unwrap_err();
        assert!(e.to_string().starts_with(&format!("{FDB}: not valid JSON")), "{e}");
    }
}

#[test]
fn lossless_pg_without_headroom_profile() {
    // COUNTERPOLL's lossless PGs use pg_lossless_40000_*_profile, which have xoff.
    let counterpoll_with = |edit: &dyn Fn(&mut Value)| {
        let mut v: Value = serde_json::from_str(&data(COUNTERPOLL)).unwrap();
        edit(&mut v);
        run(&[(COUNTERPOLL, v.to_string())], &dscp3()).unwrap()
    };
    let r = counterpoll_with(&|v| v["BUFFER_PG"]["Ethernet56|3-4"]["profile"] = json!("ingress_lossy_profile"));
    let f = only(&r, "pg-headroom-profile", Severity::Error, "BUFFER_PG|Ethernet56|3-4|profile");
    assert_eq!(f.ports, ["Ethernet56"]);
    assert!(f.what.contains("no xoff"), "{}", f.what);
    // Ethernet56: 40000 Mb/s, CABLE_LENGTH 5m.
    assert!(f.fix.contains("\"pg_lossless_40000_5m_profile\""), "{}", f.fix);

    let r = counterpoll_with(&|v| v["BUFFER_PG"]["Ethernet56|3-4"]["profile"] = json!("[BUFFER_PROFILE|pg_lossless_nope]"));
    assert!(only(&r, "pg-headroom-profile", Severity::Error, "BUFFER_PG|Ethernet56|3-4|profile").what.contains("\"pg_lossless_nope\""));

    // The dynamic model's NULL profile and the old bracketed reference form are fine.
    assert!(counterpoll_with(&|v| v["BUFFER_PG"]["Ethernet56|3-4"]["profile"] = json!("NULL")).findings.is_empty());
    assert!(counterpoll_with(&|v| v["BUFFER_PG"]["Ethernet56|3-4"]["profile"] = json!("[BUFFER_PROFILE|pg_lossless_40000_5m_profile]")).findings.is_empty());
}

#[test]
fn xoff_below_the_ieee_worst_case() {
    // COUNTERPOLL's Ethernet112..124 are 40000 Mb/s ports with 40 m cables, MTU 9100, using
    // pg_lossless_40000_40m_profile (xoff 55120). IEEE 802.1Qbb worst case by hand, 256 B
    // cells, path MTU 4096:
    //   reverse frame 9100 + 14 + 4 + 4 = 9122 B, on the wire 9142 B: 1828.4 ns at 40 Gb/s
    //   PFC frame 64 + 20 B: 16.8 ns; cable 40 m at 5 ns/m, both ways: 400 ns
    //   peer response 118 quanta x 12.8 ns = 1510.4 ns (IEEE 802.3 Annex 31B, 40G)
    //   W = 3755.6 ns; lossless frame 4174 B (4096 + 78), 4194 B on the wire: 838.8 ns
    //   frames = ceil(3755.6 / 838.8) = 5, each 17 cells: 85 cells = 21760 B.
    let counterpoll_xoff = |xoff: &str| {
        let mut v: Value = serde_json::from_str(&data(COUNTERPOLL)).unwrap();
        v["BUFFER_PROFILE"]["pg_lossless_40000_40m_profile"]["xoff"] = json!(xoff);
        run(&[(COUNTERPOLL, v.to_string())], &dscp3()).unwrap()
    };
    // Any xoff but the Force10-S6000 pg_profile_lookup.ini's 55120 also draws the
    // headroom-vs-sonic warning, at the same place (verify_buffers.rs).
    let sonic_warning_only =
        |r: &Report| r.findings.iter().all(|f| f.id == "headroom-vs-sonic" && f.place.path == "BUFFER_PROFILE|pg_lossless_40000_40m_profile|xoff");
    let r = counterpoll_xoff("21760");
    assert!(r.errors() == 0 && sonic_warning_only(&r), "{:#?}", r.findings);
    let mut r = counterpoll_xoff("21759");
    assert_eq!(r.warnings(), 1);
    assert!(sonic_warning_only(&Report { findings: r.findings.split_off(1), ..r.clone() }));
    let f = only(&r, "headroom-below-ieee", Severity::Error, "BUFFER_PROFILE|pg_lossless_40000_40m_profile|xoff");
    assert_eq!(f.ports, ["Ethernet112", "Ethernet116", "Ethernet120", "Ethernet124"]);
    assert!(f.what.contains("worst case 21760 B") && f.what.contains("5 frames of 4174 B x 17 cells of 256 B"), "{}", f.what);
    assert_eq!(f.fix, "BUFFER_PROFILE|pg_lossless_40000_40m_profile|xoff >= \"21760\" (and size grown by as much)");

    let mut v: Value = serde_json::from_str(&data(COUNTERPOLL)).unwrap();
    v["BUFFER_PROFILE"]["pg_lossless_40000_40m_profile"]["xoff"] = json!("lots");
    let e = run(&[(COUNTERPOLL, v.to_string())], &dscp3()).unwrap_err();
    assert_eq!(e.to_string(), format!("{COUNTERPOLL}: BUFFER_PROFILE|pg_lossless_40000_40m_profile|xoff: \"lots\" is not a whole number"));
}

/// COUNTERPOLL (lossless PGs with profiles) with `edit` applied.
fn counterpoll_with(edit: impl FnOnce(&mut Value)) -> Report {
    let mut v: Value = serde_json::from_str(&data(COUNTERPOLL)).unwrap();
    edit(&mut v);
    run(&[(COUNTERPOLL, v.to_string())], &dscp3()).unwrap()
}

#[test]
fn ecn_marking_above_the_pfc_point_warns() {
    // The PFC point, by hand: 28 lossless ports, so n = 27 ingress PGs; pool
    // ingress_lossless_pool 12766208 B = 49868 cells of 256 B; alpha = 2^-3, so each PG's
    // share is 49868 / (8 + 27) = 1424 cells, plus size 56368 B = 221 cells; 4174 B RoCE
    // frames (4096 + BTH 12 + RETH 16 + ICRC 4 + Ethernet/IPv4/UDP/FCS 46) take 17 cells,
    // 245.5 B each: 27 x 1645 x 245.53 = 10905188 B. SONiC's 1 MB Kmin is far below.
    const Q_PFC: u64 = 10_905_188;
    let kmin = |k: u64| {
        counterpoll_with(|v| {
            v["WRED_PROFILE"]["AZURE_LOSSLESS"]["green_min_threshold"] = json!(k.to_string());
            v["WRED_PROFILE"]["AZURE_LOSSLESS"]["green_max_threshold"] = json!((2 * k).to_string());
        })
    };
    let r = kmin(Q_PFC);
    let f = only(&r, "ecn-after-pfc", Severity::Warning, "WRED_PROFILE|AZURE_LOSSLESS|green_min_threshold");
    assert_eq!(f.place.file, COUNTERPOLL);
    // Older templates write the pool as a reference, `[BUFFER_POOL|name]`: same finding.
    let r = counterpoll_with(|v| {
        v["WRED_PROFILE"]["AZURE_LOSSLESS"]["green_min_threshold"] = json!(Q_PFC.to_string());
        v["WRED_PROFILE"]["AZURE_LOSSLESS"]["green_max_threshold"] = json!((2 * Q_PFC).to_string());
        v["BUFFER_PROFILE"]["pg_lossless_40000_40m_profile"]["pool"] = json!("[BUFFER_POOL|ingress_lossless_pool]");
    });
    let g = only(&r, "ecn-after-pfc", Severity::Warning, "WRED_PROFILE|AZURE_LOSSLESS|green_min_threshold");
    assert_eq!(g.what, f.what);
    assert_eq!(f.ports.len(), LOSSLESS_PORTS);
    assert!(f.what.contains(&format!("at or above the {Q_PFC} B at which PFC fires")), "{}", f.what);
    // plan roce's rule: Kmax half the PFC point, Kmin at most a quarter of that.
    assert_eq!(
        f.fix,
        format!(
            "WRED_PROFILE|AZURE_LOSSLESS|green_min_threshold = \"{}\" and green_max_threshold = \"{}\" \
             (plan roce's rule: Kmax half the PFC point, Kmin at most a quarter of that)",
            Q_PFC / 2 / 4,
            Q_PFC / 2
        )
    );
    // One byte below the PFC point, marking starts first: no finding (the planner's test is
    // Kmin >= the PFC point).
    let r = kmin(Q_PFC - 1);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);

    // ECN off is ecn-missing's finding, not this one.
    let r = counterpoll_with(|v| {
        v["WRED_PROFILE"]["AZURE_LOSSLESS"]["green_min_threshold"] = json!("16000000");
        v["WRED_PROFILE"]["AZURE_LOSSLESS"]["ecn"] = json!("ecn_none");
    });
    only(&r, "ecn-missing", Severity::Warning, "WRED_PROFILE|AZURE_LOSSLESS|ecn");
}

#[test]
fn watchdog_slower_than_the_nic_retry_budget() {
    // FDB's 200 ms watchdog is far inside NCCL's budget (timeout 20, retry_cnt 7: 34.4 s),
    // and inside timeout 14, retry_cnt 7: 4.096 us x 2^14 x 8 = 536.87 ms.
    let nic = |timeout, retry| Options { ib_timeout: Some(timeout), retry_cnt: Some(retry), ..dscp3() };
    assert!(run(&[(FDB, data(FDB))], &nic(14, 7)).unwrap().findings.is_empty());

    let mut v: Value = serde_json::from_str(&data(FDB)).unwrap();
    v["PFC_WD"]["Ethernet8"]["detection_time"] = json!("537");
    let broken = v.to_string();
    let r = run(&[(FDB, broken.clone())], &nic(14, 7)).unwrap();
    let f = only(&r, "watchdog-after-retry", Severity::Error, "PFC_WD|Ethernet8|detection_time");
    assert_eq!(f.ports, ["Ethernet8"]);
    assert!(f.what.contains("the NIC's timeout 14, retry_cnt 7"), "{}", f.what);
    assert_eq!(f.fix, "PFC_WD|Ethernet8|detection_time at most \"536\" (ms), e.g. SONiC's default \"200\", or raise the NICs' timeout/retry_cnt");
    // 536 ms is inside the budget.
    v["PFC_WD"]["Ethernet8"]["detection_time"] = json!("536");
    assert!(run(&[(FDB, v.to_string())], &nic(14, 7)).unwrap().findings.is_empty());
    // With NCCL's defaults the same 537 ms is fine; 34360 ms is not, and the finding says
    // whose values it used.
    assert!(run(&[(FDB, broken)], &dscp3()).unwrap().findings.is_empty());
    let mut v: Value = serde_json::from_str(&data(FDB)).unwrap();
    v["PFC_WD"]["Ethernet8"]["detection_time"] = json!("34360");
    let r = run(&[(FDB, v.to_string())], &dscp3()).unwrap();
    let f = only(&r, "watchdog-after-retry", Severity::Error, "PFC_WD|Ethernet8|detection_time");
    assert!(f.what.contains("NCCL's defaults, timeout 20, retry_cnt 7"), "{}", f.what);
}

/// A ConnectX port cabled to FDB's Ethernet8, set up as FDB expects (AZURE maps: DSCP 3 to
/// TC 3, lossless; the CNP DSCP 48 to TC 6, not paused; pfc_enable "3,4").
const NIC: &str = r#"
switch = "str-s6000-acs-14"
port = "Ethernet8"
trust = "dscp"
pfc = [3, 4]
roce_dscp = 3
roce_priority = 3
cnp_dscp = 48
cnp_priority = 6
ecn_rp = [3]
ecn_np = [3]
timeout = 14
retry_cnt = 7

[roce_rp]
rpg_min_dec_fac = 50
rpg_ai_rate = 5

[roce_np]
min_time_between_cnps = 4
"#;

/// FDB with one NIC file (`nic.toml`) whose `from` line is replaced by `to`.
fn fdb_nic(from: &str, to: &str) -> Result<Report, ReadError> {
    assert!(NIC.contains(from), "{from}");
    let nic = NIC.replacen(from, to, 1);
    let s = vec![(FDB.to_string(), data(FDB))];
    plan::verify::verify_with_nics(&s, &[("nic.toml".to_string(), nic)], &dscp3())
}

#[test]
fn nic_settings_against_the_switch() {
    let r = fdb_nic("", "").unwrap();
    assert!(r.findings.is_empty(), "{:#?}", r.findings);

    let r = fdb_nic("pfc = [3, 4]", "pfc = [3]").unwrap();
    let f = only(&r, "nic-pfc-mismatch", Severity::Error, "pfc");
    assert_eq!((f.place.file.as_str(), f.ports.as_slice()), ("nic.toml", ["Ethernet8".to_string()].as_slice()));
    assert!(f.fix.starts_with("pfc = [3, 4]"), "{}", f.fix);

    let r = fdb_nic("trust = \"dscp\"", "trust = \"pcp\"").unwrap();
    assert_eq!(only(&r, "nic-trust", Severity::Error, "trust").place.file, "nic.toml");

    // The NIC's RoCE DSCP is lossy on the switch: the switch's map entry, for this port only.
    let r = fdb_nic("roce_dscp = 3", "roce_dscp = 26").unwrap();
    let f = only(&r, "dscp-chain", Severity::Error, "DSCP_TO_TC_MAP|AZURE|26");
    assert_eq!((f.place.file.as_str(), f.ports.as_slice()), (FDB, ["Ethernet8".to_string()].as_slice()));
    assert!(f.what.starts_with("nic.toml (NIC on Ethernet8): "), "{}", f.what);

    // CNPs on a DSCP the switch maps to a paused class, or on a paused priority.
    let r = fdb_nic("cnp_dscp = 48", "cnp_dscp = 4").unwrap();
    assert_eq!(only(&r, "cnp-class", Severity::Warning, "DSCP_TO_TC_MAP|AZURE|4").ports, ["Ethernet8"]);
    let r = fdb_nic("cnp_priority = 6", "cnp_priority = 4").unwrap();
    let f = only(&r, "nic-cnp-priority", Severity::Warning, "cnp_priority");
    assert!(f.fix.starts_with("cnp_priority = 7"), "{}", f.fix);

    let r = fdb_nic("ecn_np = [3]", "ecn_np = [4]").unwrap();
    assert_eq!(only(&r, "nic-dcqcn-off", Severity::Warning, "ecn_np").fix, "ecn_np = [3, 4] (echo 1 > /sys/class/net/<if>/ecn/roce_np/enable/3)");

    // The NIC's QP timeout: 4.096 us x 2^5 x 8 = 1.05 ms, below FDB's 200 ms watchdog.
    let r = fdb_nic("timeout = 14", "timeout = 5").unwrap();
    let f = only(&r, "watchdog-after-retry", Severity::Error, "PFC_WD|Ethernet8|detection_time");
    assert!(f.what.contains("nic.toml's timeout 5, retry_cnt 7"), "{}", f.what);

    // A NIC on a switch not given: not checked, said.
    let r = fdb_nic("switch = \"str-s6000-acs-14\"", "switch = \"leaf9\"").unwrap();
    assert!(r.findings.is_empty());
    assert!(r.not_checked.iter().any(|n| n.check == "nic" && n.note.contains("nic.toml names switch \"leaf9\"")), "{:#?}", r.not_checked);
}

#[test]
fn bad_nic_file_names_file_and_field() {
    let e = fdb_nic("cnp_priority = 6", "cnp_prio = 6").unwrap_err().to_string();
    assert!(e.starts_with("nic.toml: ") && e.contains("unknown field `cnp_prio`"), "{e}");
    let e = fdb_nic("rpg_ai_rate = 5", "rpg_ai = 5").unwrap_err().to_string();
    assert!(e.contains("unknown field `rpg_ai`"), "{e}");
    let e = fdb_nic("pfc = [3, 4]", "pfc = [3, 9]").unwrap_err().to_string();
    assert_eq!(e, "nic.toml: pfc: priority 9 is not 0..7");
    let e = fdb_nic("trust = \"dscp\"", "trust = \"tos\"").unwrap_err().to_string();
    assert!(e.starts_with("nic.toml: ") && e.contains("trust"), "{e}");
    let e = fdb_nic("retry_cnt = 7", "retry_cnt = 8").unwrap_err().to_string();
    assert_eq!(e, "nic.toml: retry_cnt: 8 is not 0..7");
    let e = fdb_nic("port = \"Ethernet8\"\n", "").unwrap_err().to_string();
    assert!(e.contains("missing field `port`"), "{e}");
}

/// The 4600C template outputs as a dynamic-model switch (`buffer_model` "dynamic", its
/// platform) with one lossless port, Ethernet0 (100G, 4 lanes, 5 m; PORT and CABLE_LENGTH
/// added, as the template output has neither), whose PGs 3-4 use a static profile with
/// `xoff`.
fn dynamic_4600c(xoff: u64) -> Report {
    let mut v: Value = serde_json::from_str(&data(BUFFERS_4600C)).unwrap();
    v["DEVICE_METADATA"] = json!({"localhost": {"platform": "x86_64-mlnx_msn4600c-r0", "buffer_model": "dynamic"}});
    v["PORT"] = json!({"Ethernet0": {"speed": "100000", "lanes": "0,1,2,3", "mtu": "9100"}});
    v["CABLE_LENGTH"] = json!({"AZURE": {"Ethernet0": "5m"}});
    v["BUFFER_PROFILE"]["pg_lossless_override"] =
        json!({"pool": "ingress_lossless_pool", "xon": "19456", "xoff": xoff.to_string(), "size": "19456", "dynamic_th": "0"});
    v["BUFFER_PG"]["Ethernet0|3-4"] = json!({"profile": "pg_lossless_override"});
    let mut q: Value = serde_json::from_str(&data(QOS_4600C)).unwrap();
    let e0 = q["PORT_QOS_MAP"]["Ethernet0"].clone();
    q["PORT_QOS_MAP"] = json!({ "Ethernet0": e0 });
    run(&[(QOS_4600C, q.to_string()), (BUFFERS_4600C, v.to_string())], &dscp3()).unwrap()
}

#[test]
fn headroom_differs_from_sonics_lua() {
    // The real Lua (sonic-swss e6b0c5b5, run under lua5.1; model/tests/sonic_headroom.rs)
    // gives Spectrum-3, 100G, 5 m, port MTU 9100, 4 lanes, 1024 B / 50 % small packets:
    // xoff 46080 before the 2 KiB small-packet compensation, which is not added with the
    // shared headroom pool on (this pool has xoff 8790016).
    let r = dynamic_4600c(46080);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert!(!r.not_checked.iter().any(|n| n.check == "headroom-vs-sonic"), "{:#?}", r.not_checked);

    let r = dynamic_4600c(40960);
    let f = only(&r, "headroom-vs-sonic", Severity::Warning, "BUFFER_PROFILE|pg_lossless_override|xoff");
    assert_eq!((f.place.file.as_str(), f.ports.as_slice()), (BUFFERS_4600C, ["Ethernet0".to_string()].as_slice()));
    assert!(f.what.starts_with("xoff 40960 B differs from the 46080 B SONiC computes for Ethernet0 (spectrum-3"), "{}", f.what);
    assert!(f.what.contains("shared headroom pool on"), "{}", f.what);
    assert!(f.fix.starts_with("BUFFER_PROFILE|pg_lossless_override|xoff = \"46080\" (xon \"19456\", size \"19456\"; sonic-net/sonic-swss"), "{}", f.fix);
}

#[test]
fn headroom_vs_sonic_needs_the_dynamic_model() {
    // The same override on the traditional model: SONiC's values are pg_profile_lookup.ini's.
    let mut v: Value = serde_json::from_str(&data(BUFFERS_4600C)).unwrap();
    v["DEVICE_METADATA"] = json!({"localhost": {"platform": "x86_64-mlnx_msn4600c-r0"}});
    v["PORT"] = json!({"Ethernet0": {"speed": "100000"}});
    v["CABLE_LENGTH"] = json!({"AZURE": {"Ethernet0": "5m"}});
    v["BUFFER_PROFILE"]["pg_lossless_override"] = json!({"pool": "ingress_lossless_pool", "xon": "19456", "xoff": "40960", "size": "19456"});
    v["BUFFER_PG"]["Ethernet0|3-4"] = json!({"profile": "pg_lossless_override"});
    let r = run(&[(QOS_4600C, data(QOS_4600C)), (BUFFERS_4600C, v.to_string())], &dscp3()).unwrap();
    assert!(!r.findings.iter().any(|f| f.id == "headroom-vs-sonic"), "{:#?}", r.findings);
    // Without DEVICE_METADATA hwsku the switch's pg_profile_lookup.ini is unknown (with it,
    // verify_buffers.rs checks the traditional model against the table).
    let n = r.not_checked.iter().find(|n| n.check == "headroom-vs-sonic").expect("not checked");
    assert!(n.note.contains("no platform and hwsku"), "{}", n.note);
}

#[test]
fn pfc_frames_must_pause_the_lossless_queue() {
    // Priority 4's PFC frames pause queue 5 while TC 4 waits in queue 4.
    let r = fdb_with(|v| v["MAP_PFC_PRIORITY_TO_QUEUE"]["AZURE"]["4"] = json!("5"));
    let f = only(&r, "pfc-queue-map", Severity::Error, "MAP_PFC_PRIORITY_TO_QUEUE|AZURE|4");
    assert_eq!((f.ports.len(), f.fix.as_str()), (LOSSLESS_PORTS, "MAP_PFC_PRIORITY_TO_QUEUE|AZURE|4 = \"4\""));
    // The RoCE priority itself.
    let r = fdb_with(|v| v["MAP_PFC_PRIORITY_TO_QUEUE"]["AZURE"]["3"] = json!("1"));
    assert!(only(&r, "pfc-queue-map", Severity::Error, "MAP_PFC_PRIORITY_TO_QUEUE|AZURE|3").what.contains("pauses queue 1, but TC 3 waits in queue 3"));
    // An entry missing from the map.
    let r = fdb_with(|v| {
        v["MAP_PFC_PRIORITY_TO_QUEUE"]["AZURE"].as_object_mut().unwrap().remove("4");
    });
    only(&r, "pfc-queue-map", Severity::Error, "MAP_PFC_PRIORITY_TO_QUEUE|AZURE|4");
    // A lossless port without a map: SAI's default is no map (a warning at the port).
    let r = fdb_with(|v| {
        v["PORT_QOS_MAP"]["Ethernet8"].as_object_mut().unwrap().remove("pfc_to_queue_map");
    });
    assert_eq!(only(&r, "pfc-queue-map", Severity::Warning, "PORT_QOS_MAP|Ethernet8|pfc_to_queue_map").ports, ["Ethernet8"]);
    // TC 3 sent to queue 1 is dscp-chain's finding alone.
    let r = fdb_with(|v| v["TC_TO_QUEUE_MAP"]["AZURE"]["3"] = json!("1"));
    only(&r, "dscp-chain", Severity::Error, "TC_TO_QUEUE_MAP|AZURE|3");
    // Without the table the check is not run, and says so.
    let r = fdb_with(|v| {
        v.as_object_mut().unwrap().remove("MAP_PFC_PRIORITY_TO_QUEUE");
    });
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert!(r.not_checked.iter().any(|n| (n.check, n.missing_table) == ("pfc-queue-map", "MAP_PFC_PRIORITY_TO_QUEUE")));
}

#[test]
fn cnps_in_a_paused_queue_or_behind_a_strict_one_warn() {
    // TC 6 (CNPs, DSCP 48) queued in queue 3, which priority 3's PFC frames pause.
    let r = fdb_with(|v| v["TC_TO_QUEUE_MAP"]["AZURE"]["6"] = json!("3"));
    let f = only(&r, "cnp-class", Severity::Warning, "TC_TO_QUEUE_MAP|AZURE|6");
    assert!(f.what.contains("waits in queue 3, which PFC frames for lossless priority 3 pause"), "{}", f.what);
    assert_eq!(f.ports.len(), LOSSLESS_PORTS);

    // Queue 5 strict on Ethernet8: the CNP queue 6 (DWRR) waits behind it.
    let strict = |queue: &'static str| {
        fdb_with(move |v| {
            v["SCHEDULER"]["strict"] = json!({"type": "STRICT"});
            v["QUEUE"][format!("Ethernet8|{queue}")]["scheduler"] = json!("strict");
        })
    };
    let r = strict("5");
    let f = only(&r, "cnp-scheduler", Severity::Warning, "QUEUE|Ethernet8|6|scheduler");
    assert!(f.what.contains("scheduled DWRR (scheduler.0) while queue(s) 5 of the port are STRICT"), "{}", f.what);
    assert_eq!(f.ports, ["Ethernet8"]);
    // The CNP queue strict itself: clean.
    assert!(strict("6").findings.is_empty());

    // A scheduler type SONiC does not know, a scheduler no file defines: errors naming the place.
    let mut v: Value = serde_json::from_str(&data(FDB)).unwrap();
    v["SCHEDULER"]["scheduler.0"]["type"] = json!("FIFO");
    let e = run(&[(FDB, v.to_string())], &dscp3()).unwrap_err().to_string();
    assert_eq!(e, format!("{FDB}: SCHEDULER|scheduler.0|type: \"FIFO\" is not a scheduling type: expected STRICT, WRR or DWRR"));
    let mut v: Value = serde_json::from_str(&data(FDB)).unwrap();
    v["QUEUE"]["Ethernet8|6"]["scheduler"] = json!("nope");
    let e = run(&[(FDB, v.to_string())], &dscp3()).unwrap_err().to_string();
    assert_eq!(e, format!("{FDB}: QUEUE|Ethernet8|6|scheduler: names SCHEDULER \"nope\", which no file of this switch defines"));
}

/// `NIC` cabled to `port`, with `from` replaced by `to`.
fn nic_on(port: &str, from: &str, to: &str) -> String {
    assert!(NIC.contains(from), "{from}");
    NIC.replacen("port = \"Ethernet8\"", &format!("port = \"{port}\""), 1).replacen(from, to, 1)
}

fn with_nics(config: &str, text: String, nics: &[(&str, String)], o: &Options) -> Result<Report, ReadError> {
    let n: Vec<(String, String)> = nics.iter().map(|(f, t)| (f.to_string(), t.clone())).collect();
    plan::verify::verify_with_nics(&[(config.to_string(), text)], &n, o)
}

#[test]
fn nic_dcqcn_parameters() {
    let three =
        |b: String| with_nics(FDB, data(FDB), &[("a.toml", nic_on("Ethernet8", "", "")), ("b.toml", b), ("c.toml", nic_on("Ethernet12", "", ""))], &dscp3());
    assert!(three(nic_on("Ethernet4", "", "")).unwrap().findings.is_empty());
    // One NIC of three with a 10x larger additive increase.
    let r = three(nic_on("Ethernet4", "rpg_ai_rate = 5", "rpg_ai_rate = 50")).unwrap();
    let f = only(&r, "nic-dcqcn-mismatch", Severity::Warning, "roce_rp.rpg_ai_rate");
    assert_eq!((f.place.file.as_str(), f.ports.as_slice()), ("b.toml", ["Ethernet4".to_string()].as_slice()));
    assert_eq!(f.what, "roce_rp.rpg_ai_rate is 50 here and 5 on 2 of the 3 NIC files that set it");
    assert_eq!(f.fix, "roce_rp.rpg_ai_rate = 5 (/sys/class/net/<if>/ecn/roce_rp/rpg_ai_rate), as on the other NICs");

    // Rates against the 40 Gb/s port (FDB's PORT speed "40000").
    let r = fdb_nic("rpg_ai_rate = 5", "rpg_ai_rate = 5\nrpg_max_rate = 10000").unwrap();
    assert!(only(&r, "nic-dcqcn-rates", Severity::Warning, "roce_rp.rpg_max_rate").what.contains("below the port's 40000 Mb/s"));
    assert!(fdb_nic("rpg_ai_rate = 5", "rpg_ai_rate = 5\nrpg_max_rate = 0").unwrap().findings.is_empty());
    let r = fdb_nic("rpg_ai_rate = 5", "rpg_ai_rate = 5\nrpg_min_rate = 50000").unwrap();
    assert_eq!(only(&r, "nic-dcqcn-rates", Severity::Error, "roce_rp.rpg_min_rate").fix, "rpg_min_rate = 1 (NVIDIA's default)");

    // NVIDIA's documented ranges are read errors naming the file and the field.
    let e = fdb_nic("rpg_ai_rate = 5", "dce_tcp_g = 1024").unwrap_err().to_string();
    assert_eq!(e, "nic.toml: roce_rp.dce_tcp_g: 1024 is not 0..1023 (NVIDIA DOCA \"DCQCN CC Parameters\")");
    let e = fdb_nic("rpg_min_dec_fac = 50", "rpg_min_dec_fac = 101").unwrap_err().to_string();
    assert!(e.starts_with("nic.toml: roce_rp.rpg_min_dec_fac: 101 is not 0..100"), "{e}");
}

#[test]
fn cnp_interval_against_the_ecn_to_pfc_window() {
    // COUNTERPOLL's PFC point is 10905188 B (ecn_marking_above_the_pfc_point_warns). With
    // NVIDIA's 4 us CNP interval and 4 us monitor period, a 2:1 incast at 40 Gb/s adds
    // 8 us x 5000 B/us = 40000 B before the first cut: a Kmin 40000 B below the PFC point
    // leaves exactly that, one byte more is enough.
    const Q_PFC: u64 = 10_905_188;
    let at = |kmin: u64, np: &str| {
        let mut v: Value = serde_json::from_str(&data(COUNTERPOLL)).unwrap();
        v["WRED_PROFILE"]["AZURE_LOSSLESS"]["green_min_threshold"] = json!(kmin.to_string());
        v["WRED_PROFILE"]["AZURE_LOSSLESS"]["green_max_threshold"] = json!(Q_PFC.to_string());
        let nic = NIC.replacen("min_time_between_cnps = 4", np, 1);
        with_nics(COUNTERPOLL, v.to_string(), &[("nic.toml", nic)], &dscp3()).unwrap()
    };
    let r = at(Q_PFC - 40_000, "min_time_between_cnps = 4");
    let f = only(&r, "nic-cnp-interval", Severity::Warning, "roce_np.min_time_between_cnps");
    assert!(f.what.contains("from Kmin 10865188 B to the PFC point 10905188 B in 8.00 µs"), "{}", f.what);
    assert_eq!(f.fix, "roce_np.min_time_between_cnps < 4 (µs), or lower WRED_PROFILE|AZURE_LOSSLESS|green_min_threshold");
    assert!(at(Q_PFC - 40_001, "min_time_between_cnps = 4").findings.is_empty());
    // The same window with a 50 us CNP interval (the DCQCN paper's N).
    assert!(at(Q_PFC - 40_001, "min_time_between_cnps = 50").findings.iter().any(|f| f.id == "nic-cnp-interval"));
    // Without the value, NVIDIA's default 4 us applies.
    let r = at(Q_PFC - 40_000, "");
    only(&r, "nic-cnp-interval", Severity::Warning, "roce_np.min_time_between_cnps");
}
