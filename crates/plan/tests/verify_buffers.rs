//! `plan::verify`'s buffer and headroom slice on real SONiC configurations: the traditional
//! model's pg_profile_lookup.ini, SONiC's run-time profiles in the IEEE check, per-platform
//! cell sizes, buffer accounting and the shared headroom pool. Each broken variant is
//! changed in one field and must be flagged at exactly that place and nowhere else.
//!
//! Data (verbatim, see tests/data/sonic/SOURCE.md):
//! * FDB, COUNTERPOLL: sonic-utilities `tests/{filter_fdb,counterpoll}_input/config_db.json`
//!   at 691b1bbc4fd2b71657d1b0b334c37136deb51526 (Force10-S6000, platform
//!   x86_64-dell_s6000_s1220-r0; its pg_profile_lookup.ini is sonic-buildimage
//!   `device/common/profiles/td2/6000/BALANCED/pg_profile_lookup.ini` at 086b03bd70f9, every
//!   row size 56368, xon 18432, xoff 55120, dynamic_th -3, xon_offset 2496).
//! * QOS_4600C, BUFFERS_4600C, DYNAMIC_4600C: sonic-buildimage `src/sonic-config-engine/tests/
//!   sample_output/py3/{qos-mellanox4600c-c64,buffers-mellanox4600c-t1,buffers-mellanox4600c-t1-dynamic}.json`
//!   at 086b03bd70f9e211aaaf5f6aefe0790b508d2a94 (template outputs without DEVICE_METADATA or PORT).

use plan::verify::{verify, Finding, Options, Report, Severity};
use serde_json::{json, Value};
use units::Bytes;

const FDB: &str = "sonic-utilities__tests__filter_fdb_input__config_db.json";
const COUNTERPOLL: &str = "sonic-utilities__tests__counterpoll_input__config_db.json";
const QOS_4600C: &str = "sonic-buildimage__sample_output__qos-mellanox4600c-c64.json";
const BUFFERS_4600C: &str = "sonic-buildimage__sample_output__buffers-mellanox4600c-t1.json";
const DYNAMIC_4600C: &str = "sonic-buildimage__sample_output__buffers-mellanox4600c-t1-dynamic.json";
const S6000_TABLE: &str = "sonic-buildimage device/common/profiles/td2/6000/BALANCED/pg_profile_lookup.ini at 086b03bd70f9";

fn data(name: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/data/sonic/{name}", env!("CARGO_MANIFEST_DIR"))).expect("test data")
}

/// DSCP 3 (lossless under SONiC's AZURE maps); no cell size unless a test gives one.
fn dscp3() -> Options {
    Options { roce_dscp: 3, ..Options::default() }
}

fn run(files: &[(&str, String)], o: &Options) -> Report {
    let s: Vec<(String, String)> = files.iter().map(|(n, t)| (n.to_string(), t.clone())).collect();
    verify(&s, o).unwrap()
}

fn edited(name: &str, edit: impl FnOnce(&mut Value)) -> String {
    let mut v: Value = serde_json::from_str(&data(name)).unwrap();
    edit(&mut v);
    v.to_string()
}

/// The report has exactly one finding: this check, severity and place.
fn only<'a>(r: &'a Report, id: &str, sev: Severity, path: &str) -> &'a Finding {
    let got: Vec<_> = r.findings.iter().map(|f| (f.id, f.severity, f.place.path.as_str())).collect();
    assert_eq!(got, vec![(id, sev, path)], "{:#?}", r.findings);
    &r.findings[0]
}

fn checked(r: &Report, check: &str) -> bool {
    !r.not_checked.iter().any(|n| n.check == check)
}

const S6000_ROW: &str = "size 56368, xon 18432, xoff 55120, threshold -3, xon_offset 2496";

#[test]
fn s6000_configs_match_their_pg_profile_lookup() {
    // COUNTERPOLL's three pg_lossless_40000_*_profile are exactly the Force10-S6000 rows:
    // headroom-vs-sonic runs (the traditional model, the table known) and finds nothing.
    let r = run(&[(COUNTERPOLL, data(COUNTERPOLL))], &dscp3());
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert!(checked(&r, "headroom-vs-sonic") && checked(&r, "pg-profile-lookup-missing"), "{:#?}", r.not_checked);
    // FDB has no lossless BUFFER_PG entries: buffermgrd creates them, and the table has rows
    // for all its ports (40000 Mb/s; 5m, 40m, 300m).
    let r = run(&[(FDB, data(FDB))], &dscp3());
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert!(checked(&r, "pg-profile-lookup-missing"), "{:#?}", r.not_checked);
}

#[test]
fn traditional_profile_differs_from_the_table() {
    // Ethernet112..124 use pg_lossless_40000_40m_profile (CABLE_LENGTH 40m; the 300m ports
    // are not lossless).
    let r = run(&[(COUNTERPOLL, edited(COUNTERPOLL, |v| v["BUFFER_PROFILE"]["pg_lossless_40000_40m_profile"]["xoff"] = json!("50000")))], &dscp3());
    let f = only(&r, "headroom-vs-sonic", Severity::Warning, "BUFFER_PROFILE|pg_lossless_40000_40m_profile|xoff");
    assert_eq!(f.place.file, COUNTERPOLL);
    assert_eq!(f.ports, ["Ethernet112", "Ethernet116", "Ethernet120", "Ethernet124"]);
    assert!(f.what.starts_with("xoff 50000 B differs from the 55120 B SONiC computes for "), "{}", f.what);
    assert!(f.what.contains("(pg_profile_lookup.ini row 40000 40m)"), "{}", f.what);
    assert!(f.failure.starts_with("less headroom"), "{}", f.failure);
    assert_eq!(
        f.fix,
        format!("BUFFER_PROFILE|pg_lossless_40000_40m_profile|xoff = \"55120\" (xon \"18432\", size \"56368\"; {S6000_TABLE}), or delete the profile so buffermgrd creates it from the table")
    );

    // Only size differs: the finding is at size.
    let r = run(&[(COUNTERPOLL, edited(COUNTERPOLL, |v| v["BUFFER_PROFILE"]["pg_lossless_40000_5m_profile"]["size"] = json!("60000")))], &dscp3());
    let f = only(&r, "headroom-vs-sonic", Severity::Warning, "BUFFER_PROFILE|pg_lossless_40000_5m_profile|size");
    assert!(f.what.starts_with("size 60000 B differs from the 56368 B"), "{}", f.what);
    assert!(f.failure.starts_with("not the buffer SONiC reserves"), "{}", f.failure);

    // xoff and xon both differ: one finding, at xoff, naming both.
    let r = run(
        &[(
            COUNTERPOLL,
            edited(COUNTERPOLL, |v| {
                v["BUFFER_PROFILE"]["pg_lossless_40000_5m_profile"]["xoff"] = json!("60000");
                v["BUFFER_PROFILE"]["pg_lossless_40000_5m_profile"]["xon"] = json!("20000");
            }),
        )],
        &dscp3(),
    );
    let f = only(&r, "headroom-vs-sonic", Severity::Warning, "BUFFER_PROFILE|pg_lossless_40000_5m_profile|xoff");
    assert_eq!(f.ports.len(), 24);
    assert!(f.what.ends_with("; xon 20000 B, SONiC 18432 B"), "{}", f.what);
}

#[test]
fn no_table_row_for_a_runtime_profile() {
    // FDB's Ethernet4 (40000 Mb/s) with a 7 m cable: no row, buffermgrd creates nothing.
    let r = run(&[(FDB, edited(FDB, |v| v["CABLE_LENGTH"]["AZURE"]["Ethernet4"] = json!("7m")))], &dscp3());
    let f = only(&r, "pg-profile-lookup-missing", Severity::Error, "CABLE_LENGTH|AZURE|Ethernet4");
    assert_eq!((f.place.file.as_str(), f.ports.as_slice()), (FDB, ["Ethernet4".to_string()].as_slice()));
    assert_eq!(f.what, format!("lossless PG 3,4 has no BUFFER_PG entry, and {S6000_TABLE} has no row for speed 40000, cable 7m"));
    assert_eq!(f.fix, "CABLE_LENGTH|AZURE|Ethernet4 = \"40m\" (the table lists 5m, 40m, 300m for 40000), or add a row for 40000 7m");
    // Longer than any row: the longest.
    let r = run(&[(FDB, edited(FDB, |v| v["CABLE_LENGTH"]["AZURE"]["Ethernet4"] = json!("500m")))], &dscp3());
    assert!(only(&r, "pg-profile-lookup-missing", Severity::Error, "CABLE_LENGTH|AZURE|Ethernet4").fix.starts_with("CABLE_LENGTH|AZURE|Ethernet4 = \"300m\""));
    // A speed the table has no rows for: placed at the speed.
    let r = run(&[(FDB, edited(FDB, |v| v["PORT"]["Ethernet4"]["speed"] = json!("1000")))], &dscp3());
    let f = only(&r, "pg-profile-lookup-missing", Severity::Error, "PORT|Ethernet4|speed");
    assert!(f.fix.starts_with(&format!("add rows for speed 1000 to the switch's {S6000_TABLE}")), "{}", f.fix);
    // Cable "0m": buffermgrd skips the port on purpose; not flagged.
    let r = run(&[(FDB, edited(FDB, |v| v["CABLE_LENGTH"]["AZURE"]["Ethernet4"] = json!("0m")))], &dscp3());
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    // The dynamic model has no table: not this check's.
    let r = run(
        &[(
            FDB,
            edited(FDB, |v| {
                v["CABLE_LENGTH"]["AZURE"]["Ethernet4"] = json!("7m");
                v["DEVICE_METADATA"]["localhost"]["buffer_model"] = json!("dynamic");
            }),
        )],
        &dscp3(),
    );
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    // A platform/hwsku whose table is not known: not checked, said.
    let r = run(&[(FDB, edited(FDB, |v| v["DEVICE_METADATA"]["localhost"]["hwsku"] = json!("Force10-S6000-Q24S32")))], &dscp3());
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    let n = r.not_checked.iter().find(|n| n.check == "pg-profile-lookup-missing").expect("not checked");
    assert!(n.note.contains("hwsku \"Force10-S6000-Q24S32\""), "{}", n.note);
}

#[test]
fn pg_profile_fix_gives_the_tables_values() {
    let r = run(&[(COUNTERPOLL, edited(COUNTERPOLL, |v| v["BUFFER_PG"]["Ethernet56|3-4"]["profile"] = json!("ingress_lossy_profile")))], &dscp3());
    let f = only(&r, "pg-headroom-profile", Severity::Error, "BUFFER_PG|Ethernet56|3-4|profile");
    assert_eq!(
        f.fix,
        format!("BUFFER_PG|Ethernet56|3-4|profile = a lossless profile with xon and xoff (buffermgrd's profile for this port: \"pg_lossless_40000_5m_profile\", {S6000_ROW} from {S6000_TABLE}), or delete the entry so buffermgrd creates it")
    );
    // A BUFFER_PG entry naming buffermgrd's own profile, which no file defines: buffermgrd
    // creates it from the table row, so it is fine...
    let drop_5m = |v: &mut Value| {
        v["BUFFER_PROFILE"].as_object_mut().unwrap().remove("pg_lossless_40000_5m_profile");
    };
    let r = run(&[(COUNTERPOLL, edited(COUNTERPOLL, drop_5m))], &dscp3());
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    // ...unless the port's cable has no row (Ethernet56: 5m made 6m, profile name to match).
    let r = run(
        &[(
            COUNTERPOLL,
            edited(COUNTERPOLL, |v| {
                v["CABLE_LENGTH"]["AZURE"]["Ethernet56"] = json!("6m");
                v["BUFFER_PG"]["Ethernet56|3-4"]["profile"] = json!("pg_lossless_40000_6m_profile");
            }),
        )],
        &dscp3(),
    );
    let f = only(&r, "pg-headroom-profile", Severity::Error, "BUFFER_PG|Ethernet56|3-4|profile");
    assert!(f.what.contains("\"pg_lossless_40000_6m_profile\", which no file of this switch defines"), "{}", f.what);
}

/// The SN4600C template outputs as one switch: BUFFERS (traditional) or DYNAMIC with its
/// platform and hwsku (sonic-buildimage `device/mellanox/x86_64-mlnx_msn4600c-r0/
/// Mellanox-SN4600C-C64`, whose pg_profile_lookup.ini is its sibling D112C8's) and one
/// lossless port, Ethernet0 (100G, 4 lanes, MTU 9100; PORT added, as the templates have
/// none), with `edit` applied to the buffers file.
fn sn4600c(buffers: &str, model: &str, edit: impl FnOnce(&mut Value)) -> Report {
    sn4600c_with(buffers, model, &dscp3(), edit)
}

fn sn4600c_with(buffers: &str, model: &str, o: &Options, edit: impl FnOnce(&mut Value)) -> Report {
    let meta = json!({"localhost": {"platform": "x86_64-mlnx_msn4600c-r0", "hwsku": "Mellanox-SN4600C-C64", "buffer_model": model}});
    let port = json!({"speed": "100000", "lanes": "0,1,2,3", "mtu": "9100"});
    one_lossless_port(QOS_4600C, buffers, meta, port, o, edit)
}

/// A template output pair (QoS, buffers) as one switch with DEVICE_METADATA `meta` and one
/// lossless port, Ethernet0 (PORT `port`; its PORT_QOS_MAP entry kept, the others dropped),
/// with `edit` applied to the buffers file.
fn one_lossless_port(qos: &str, buffers: &str, meta: Value, port: Value, o: &Options, edit: impl FnOnce(&mut Value)) -> Report {
    let b = edited(buffers, |v| {
        v["DEVICE_METADATA"] = meta;
        v["PORT"] = json!({ "Ethernet0": port });
        edit(v);
    });
    let q = edited(qos, |q| {
        let e0 = q["PORT_QOS_MAP"]["Ethernet0"].clone();
        q["PORT_QOS_MAP"] = json!({ "Ethernet0": e0 });
    });
    run(&[(qos, q), (buffers, b)], o)
}

#[test]
fn ieee_check_covers_runtime_profiles_with_the_platforms_cell() {
    // Traditional model, no lossless BUFFER_PG entry: buffermgrd creates
    // pg_lossless_100000_<cable>_profile from the D112C8 table, and the IEEE check uses its
    // xoff with Spectrum-3's 144 B cell (no --cell). 300m (xoff 120832) is enough.
    let r = sn4600c(BUFFERS_4600C, "traditional", |_| {});
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert!(checked(&r, "headroom-below-ieee") && checked(&r, "pg-profile-lookup-missing"), "{:#?}", r.not_checked);
    // 2000m: the row's xoff 234496 is short. By hand, 100 Gb/s: reverse frame 9122 B (9142 on
    // the wire) 731.36 ns, PFC frame 6.72 ns, 2000 m twice at 5 ns/m 20000 ns, 394 quanta
    // 2017.28 ns: W = 22755.36 ns; a 4174 B frame (4194 on the wire) takes 335.52 ns, so 68
    // frames of 29 cells of 144 B = 283968 B.
    let r = sn4600c(BUFFERS_4600C, "traditional", |v| v["CABLE_LENGTH"]["AZURE"]["Ethernet0"] = json!("2000m"));
    let f = only(&r, "headroom-below-ieee", Severity::Error, "BUFFER_PROFILE|pg_lossless_100000_2000m_profile|xoff");
    assert_eq!(f.place.file, BUFFERS_4600C);
    assert!(
        f.what.starts_with("xoff 234496 B (created at run time by buffermgrd from sonic-buildimage device/mellanox/x86_64-mlnx_msn4600c-r0/Mellanox-SN4600C-D112C8/pg_profile_lookup.ini at 086b03bd70f9) is below the IEEE 802.1Qbb worst case 283968 B"),
        "{}",
        f.what
    );
    assert!(f.what.contains("68 frames of 4174 B x 29 cells of 144 B; cell size 144 B: spectrum-3 cell_size"), "{}", f.what);
    assert_eq!(f.fix, "define BUFFER_PROFILE|pg_lossless_100000_2000m_profile with xoff >= \"283968\" (buffermgrd then reuses it instead of the table row)");
}

#[test]
fn ieee_check_covers_the_dynamic_models_null_profiles() {
    // Dynamic model: Ethernet0|3-4 is "NULL", the Lua computes it. Spectrum-3, 100G, 300 m,
    // MTU 9100, 1024 B / 50 % small packets, no shared headroom pool: propagation 9100 +
    // 37878.8 (cable) + 819.2 + 25216 (394 quanta) = 73014 B; 64 B packets are 11.76 % of
    // the bytes, 3 cells each, occupancy 1.2353: xoff ceil_1024(1024 + 90195) = 92160, plus
    // the 2 KiB compensation = 94208. With the platform's 144 B cell the IEEE need is below.
    let r = sn4600c(DYNAMIC_4600C, "dynamic", |_| {});
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert!(checked(&r, "headroom-below-ieee"), "{:#?}", r.not_checked);
    // --cell 2048 (overriding the platform's): W = 731.36 + 6.72 + 2 x 1500 + 2017.28 =
    // 5755.36 ns, 18 frames of 3 cells of 2048 B = 110592 B.
    let o = Options { cell: Some(Bytes(2048)), ..dscp3() };
    let r = sn4600c_with(DYNAMIC_4600C, "dynamic", &o, |_| {});
    let f = only(&r, "headroom-below-ieee", Severity::Error, "BUFFER_PG|Ethernet0|3-4|profile");
    assert_eq!(f.place.file, DYNAMIC_4600C);
    assert!(
        f.what.starts_with("xoff 94208 B (computed at run time by SONiC's headroom Lua (spectrum-3)) is below the IEEE 802.1Qbb worst case 110592 B"),
        "{}",
        f.what
    );
    assert!(f.what.ends_with("18 frames of 4174 B x 3 cells of 2048 B)"), "--cell given: no platform note: {}", f.what);
    assert_eq!(f.fix, "BUFFER_PG|Ethernet0|3-4|profile = a lossless profile with xoff >= \"110592\" (a headroom override of SONiC's Lua)");
}

#[test]
fn cell_size_from_broadcom_platforms() {
    // FDB, a Force10-S6000 (Trident2), without --cell: the SDK's 208 B cell. Its run-time
    // pg_lossless_40000_*_profile (xoff 55120) cover its lossless ports' worst case, 40 m
    // (W = 3755.6 ns, 838.8 ns per 4174 B frame, as in verify.rs): 5 frames of 21 cells of
    // 208 B = 21840 B.
    let r = run(&[(FDB, data(FDB))], &dscp3());
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert!(checked(&r, "headroom-below-ieee"), "{:#?}", r.not_checked);
    // A configured profile below the worst case, with the platform's cell: COUNTERPOLL's
    // 40 m profile (Ethernet112..124) at 21839 B.
    let r = run(&[(COUNTERPOLL, edited(COUNTERPOLL, |v| v["BUFFER_PROFILE"]["pg_lossless_40000_40m_profile"]["xoff"] = json!("21839")))], &dscp3());
    let f = r.findings.iter().find(|f| f.id == "headroom-below-ieee").expect("finding");
    assert_eq!(f.place.path, "BUFFER_PROFILE|pg_lossless_40000_40m_profile|xoff");
    assert!(
        f.what.contains("worst case 21840 B")
            && f.what.contains("5 frames of 4174 B x 21 cells of 208 B; cell size 208 B: Broadcom Trident2 (Force10-S6000/sai.profile"),
        "{}",
        f.what
    );
    // (and the headroom-vs-sonic warning at the same place: 21839 is not the table's 55120)
    assert!(r.findings.iter().all(|f| f.place.path == "BUFFER_PROFILE|pg_lossless_40000_40m_profile|xoff"), "{:#?}", r.findings);
    // A Broadcom chip without a known cell (the Arista 7260CX3's Tomahawk-2): not checked.
    let r = arista(&dscp3(), |_| {});
    let n = r.not_checked.iter().find(|n| n.check == "headroom-below-ieee").expect("not checked");
    assert_eq!(
        n.note,
        "no cell size known for platform \"x86_64-arista_7260cx3_64\" (NVIDIA Spectrum, Broadcom Trident2, Tomahawk and Trident3 only): pass --cell"
    );
}
const ARISTA_BUFFERS: &str = "sonic-buildimage__sample_output__buffer-arista7260-t1.json";
const ARISTA_QOS: &str = "sonic-buildimage__sample_output__qos-arista7260-t1.json";

/// The Arista 7260CX3 (Broadcom Tomahawk-2) template outputs as one switch with its
/// platform and hwsku (sonic-buildimage `device/arista/x86_64-arista_7260cx3_64/
/// Arista-7260CX3-C64`, pg_profile_lookup.ini from `device/common/profiles/th2/7260/BALANCED`)
/// and one lossless port, Ethernet0 (100G; PORT added).
fn arista(o: &Options, edit: impl FnOnce(&mut Value)) -> Report {
    let meta = json!({"localhost": {"platform": "x86_64-arista_7260cx3_64", "hwsku": "Arista-7260CX3-C64"}});
    one_lossless_port(ARISTA_QOS, ARISTA_BUFFERS, meta, json!({"speed": "100000", "mtu": "9100"}), o, edit)
}

#[test]
fn buffer_accounting_on_spectrum() {
    // SN4600C: mmu_size = egress_lossless_pool 60817392 (buffer_pool_mellanox.lua). Ingress
    // pools 44130304 (ingress_lossless_pool) + 0 (ingress_zero_pool), shared headroom pool
    // 8790016, Ethernet0's two run-time lossless PGs 2 x 19456 (the D112C8 row 100000 300m:
    // size = xon), lossy PGs and queues size 0: 52959232, 7858160 B to spare.
    let r = sn4600c(BUFFERS_4600C, "traditional", |_| {});
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert!(checked(&r, "buffer-overcommit"), "{:#?}", r.not_checked);
    // The pool may grow to 60817392 - 8790016 - 38912 = 51988464, not a byte more.
    let pool = |size: &str| sn4600c(BUFFERS_4600C, "traditional", |v| v["BUFFER_POOL"]["ingress_lossless_pool"]["size"] = json!(size));
    assert!(pool("51988464").findings.is_empty());
    let r = pool("51988465");
    let f = only(&r, "buffer-overcommit", Severity::Error, "BUFFER_POOL|ingress_lossless_pool|size");
    assert_eq!(f.place.file, BUFFERS_4600C);
    assert_eq!(
        f.what,
        "ingress pools 51988465 B (ingress_lossless_pool, ingress_zero_pool) + shared headroom pool 8790016 B + PG reservations 38912 B + queue reservations 0 B = \
         60817393 B, above the 60817392 B buffer (spectrum-3: BUFFER_POOL|egress_lossless_pool|size, the mmu_size of sonic-swss buffer_pool_mellanox.lua) by 1 B"
    );
    assert!(f.fix.starts_with("BUFFER_POOL|ingress_lossless_pool|size <= \"51988464\""), "{}", f.fix);
    // --mmu-size overrides the platform's.
    let o = Options { mmu_size: Some(Bytes(52959231)), ..dscp3() };
    let r = sn4600c_with(BUFFERS_4600C, "traditional", &o, |_| {});
    assert!(only(&r, "buffer-overcommit", Severity::Error, "BUFFER_POOL|ingress_lossless_pool|size")
        .what
        .contains("above the 52959231 B buffer (--mmu-size) by 1 B"));
}

#[test]
fn buffer_accounting_is_not_run_off_spectrum() {
    // Broadcom pool sizes do not exclude the reservations the way Mellanox's do (the
    // Force10-S6000 template's ingress_lossless_pool is its whole egress_lossless_pool,
    // 12766208 B): not checked, even with --mmu-size, and said why.
    let o = Options { mmu_size: Some(Bytes(12766208)), ..dscp3() };
    for r in [arista(&o, |_| {}), run(&[(FDB, data(FDB))], &o)] {
        assert!(r.findings.is_empty(), "{:#?}", r.findings);
        let n = r.not_checked.iter().find(|n| n.check == "buffer-overcommit").expect("not checked");
        assert_eq!(n.missing_table, "(pool semantics)");
        assert!(n.note.contains("is not an NVIDIA Spectrum one"), "{}", n.note);
    }
}

#[test]
fn shared_headroom_pool_against_the_lossless_xoff() {
    // SN4600C Ethernet0: two lossless PGs of xoff 120832 (D112C8, 100000 300m): 241664 B.
    // Without over_subscribe_ratio the pool must hold one port's PGs at least.
    let xoff = |x: &str| sn4600c(BUFFERS_4600C, "traditional", |v| v["BUFFER_POOL"]["ingress_lossless_pool"]["xoff"] = json!(x));
    let r = xoff("241664");
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    let n = r.not_checked.iter().find(|n| n.check == "shared-headroom-pool").expect("noted");
    assert_eq!(n.note, "no over_subscribe_ratio: the pool holds 100.0 % of Σ lossless xoff 241664 B");
    let r = xoff("241663");
    let f = only(&r, "shared-headroom-pool", Severity::Error, "BUFFER_POOL|ingress_lossless_pool|xoff");
    assert_eq!(f.what, "shared headroom pool 241663 B is below the 241664 B of xoff of one port's lossless PGs (Ethernet0)");

    // With over_subscribe_ratio 2 the pool must hold half of Σ xoff: 120832 B.
    let ratio = |x: &str| {
        sn4600c(BUFFERS_4600C, "traditional", |v| {
            v["DEFAULT_LOSSLESS_BUFFER_PARAMETER"] = json!({"AZURE": {"over_subscribe_ratio": "2"}});
            v["BUFFER_POOL"]["ingress_lossless_pool"]["xoff"] = json!(x);
        })
    };
    assert!(ratio("120832").findings.is_empty());
    let r = ratio("120831");
    let f = only(&r, "shared-headroom-pool", Severity::Warning, "BUFFER_POOL|ingress_lossless_pool|xoff");
    assert_eq!(f.what, "shared headroom pool 120831 B is below Σ lossless xoff 241664 B / over_subscribe_ratio 2 = 120832 B");
    assert_eq!(f.fix, "BUFFER_POOL|ingress_lossless_pool|xoff = \"120832\" (as sonic-swss buffer_pool_mellanox.lua sizes it)");

    // Broadcom (headroom drawn from the pool's xoff): the 7260's 300m row has xoff 101088.
    let r = arista(&dscp3(), |v| v["BUFFER_POOL"]["ingress_lossless_pool"]["xoff"] = json!("202175"));
    assert_eq!(
        only(&r, "shared-headroom-pool", Severity::Error, "BUFFER_POOL|ingress_lossless_pool|xoff").what,
        "shared headroom pool 202175 B is below the 202176 B of xoff of one port's lossless PGs (Ethernet0)"
    );
}

#[test]
fn bad_buffer_numbers_name_the_place() {
    let b = edited(BUFFERS_4600C, |v| {
        v["DEVICE_METADATA"] = json!({"localhost": {"platform": "x86_64-mlnx_msn4600c-r0", "hwsku": "Mellanox-SN4600C-C64"}});
        v["BUFFER_POOL"]["ingress_lossless_pool"]["xoff"] = json!("lots");
    });
    let s = vec![(QOS_4600C.to_string(), data(QOS_4600C)), (BUFFERS_4600C.to_string(), b)];
    let e = verify(&s, &dscp3()).unwrap_err();
    assert_eq!(e.to_string(), format!("{BUFFERS_4600C}: BUFFER_POOL|ingress_lossless_pool|xoff: \"lots\" is not a whole number"));
    // A queue profile's size (q_lossy_profile: the lossy queues of BUFFER_QUEUE).
    let b = edited(BUFFERS_4600C, |v| v["BUFFER_PROFILE"]["q_lossy_profile"]["size"] = json!("9k"));
    let s = vec![(QOS_4600C.to_string(), data(QOS_4600C)), (BUFFERS_4600C.to_string(), b)];
    let e = verify(&s, &dscp3()).unwrap_err();
    assert_eq!(e.to_string(), format!("{BUFFERS_4600C}: BUFFER_PROFILE|q_lossy_profile|size: \"9k\" is not a whole number"));
}

#[test]
fn dynamic_th_against_broadcom_alphas() {
    // FDB is a Force10-S6000 (Trident2: its sai.profile loads td2-s6000-32x40G.config.bcm);
    // its dynamic_th values -3 and 3 have alphas (1/8, 8): checked, clean.
    let r = run(&[(FDB, data(FDB))], &dscp3());
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert!(checked(&r, "dynamic-th-range"), "{:#?}", r.not_checked);
    let th = |v: &str| run(&[(FDB, edited(FDB, |j| j["BUFFER_PROFILE"]["ingress_lossy_profile"]["dynamic_th"] = json!(v)))], &dscp3());
    assert!(th("-7").findings.is_empty());
    let r = th("4");
    let f = only(&r, "dynamic-th-range", Severity::Warning, "BUFFER_PROFILE|ingress_lossy_profile|dynamic_th");
    assert!(
        f.what.starts_with(
            "dynamic_th 4 is outside the -7..3 for which the Broadcom Trident2 has an alpha (1/128..8; Broadcom Trident2 (Force10-S6000/sai.profile"
        ),
        "{}",
        f.what
    );
    assert!(f.what.ends_with("OpenBCM sdk-6.5.21/include/soc at 9ee0371a6bad/trident2.h))"), "{}", f.what);
    assert_eq!(f.fix, "BUFFER_PROFILE|ingress_lossy_profile|dynamic_th = a value in -7..3");
    only(&th("-8"), "dynamic-th-range", Severity::Warning, "BUFFER_PROFILE|ingress_lossy_profile|dynamic_th");
}
