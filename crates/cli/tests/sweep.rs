//! `fabriclab sweep` and `fabriclab merge`: the CSV and SVG an ECN Kmin sweep writes,
//! shards merged into byte-identical files, determinism, and errors named.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("sweep-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// roce-incast.toml cut down to run in a blink: 8 senders of 256 KB on 2 leaves.
fn quick(dir: &Path) -> PathBuf {
    let src = std::fs::read_to_string(root().join("examples/roce-incast.toml")).expect("example");
    let src = src
        .replace("leaves = 4", "leaves = 2")
        .replace("senders = [8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23]", "senders = [8, 9, 10, 11, 12, 13, 14, 15]")
        .replace("size = \"1MB\"", "size = \"256KB\"");
    assert!(src.contains("senders = [8, 9, 10, 11, 12, 13, 14, 15]\n"));
    let p = dir.join("quick.toml");
    std::fs::write(&p, src).expect("write scenario");
    p
}

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

const KMIN: &str = "roce.ecn[0].kmin=20KB,100KB,400KB";

fn sweep(file: &Path, out: &Path, extra: &[&str]) -> String {
    let mut a = vec!["sweep", file.to_str().unwrap(), "--vary", KMIN, "--out", out.to_str().unwrap()];
    a.extend_from_slice(extra);
    ok(&a)
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// (key, value) or (column, cell) pairs.
type Pairs = Vec<(String, String)>;

/// The `# key=value` lines, and the rows as (column name, cell) pairs.
fn parse(csv: &str) -> (Pairs, Vec<Pairs>) {
    let meta = csv.lines().take_while(|l| l.starts_with('#')).filter_map(|l| l[1..].trim().split_once('=')).map(|(k, v)| (k.into(), v.into())).collect();
    let mut body = csv.lines().skip_while(|l| l.starts_with('#'));
    let head: Vec<&str> = body.next().expect("header row").split(',').collect();
    let rows = body.map(|l| head.iter().zip(l.split(',')).map(|(h, c)| (h.to_string(), c.to_string())).collect()).collect();
    (meta, rows)
}

fn cell<'a>(row: &'a [(String, String)], col: &str) -> &'a str {
    &row.iter().find(|(h, _)| h == col).unwrap_or_else(|| panic!("no column {col}")).1
}

#[test]
fn kmin_sweep_writes_rows_in_order_an_ib_reference_and_a_plot() {
    let dir = scratch("kmin");
    let file = quick(&dir);
    let out = dir.join("out");
    let table = sweep(&file, &out, &[]);
    assert!(table.contains("20KB") && table.contains("InfiniBand"), "{table}");

    let csv = read(&out.join("sweep.csv"));
    let (meta, rows) = parse(&csv);
    assert!(meta.contains(&("metric".into(), "fct-p99".into())), "{meta:?}");
    assert!(meta.contains(&("variants".into(), "3".into())));
    assert!(meta.contains(&("infiniband".into(), "once".into())));
    assert!(csv.lines().find(|l| !l.starts_with('#')).unwrap().starts_with("variant,roce.ecn[0].kmin,fabric,busbw_gbs,fct_p50_us,fct_p99_us,"));
    let roce: Vec<_> = rows.iter().filter(|r| cell(r, "fabric") == "roce").collect();
    let ib: Vec<_> = rows.iter().filter(|r| cell(r, "fabric") == "infiniband").collect();
    assert_eq!((roce.len(), ib.len()), (3, 1));
    assert_eq!(roce.iter().map(|r| cell(r, "variant")).collect::<Vec<_>>(), ["0", "1", "2"]);
    assert_eq!(roce.iter().map(|r| cell(r, "roce.ecn[0].kmin")).collect::<Vec<_>>(), ["20KB", "100KB", "400KB"]);
    assert_eq!((cell(ib[0], "variant"), cell(ib[0], "roce.ecn[0].kmin")), ("ref", ""));
    // Kmin changes where the receiver's leaf starts marking: the marks differ, the lossless
    // class never drops, and InfiniBand has no ECN at all.
    let marks: Vec<u64> = roce.iter().map(|r| cell(r, "ecn_marks").parse().unwrap()).collect();
    assert!(marks.iter().any(|&m| m != marks[0]) && marks.iter().all(|&m| m > 0), "{marks:?}");
    assert!(marks[2] < marks[0], "a higher Kmin marks less: {marks:?}");
    for r in &rows {
        assert_eq!(cell(r, "lossless_drops"), "0");
        assert!(cell(r, "fct_p99_us").parse::<f64>().unwrap() > 0.0);
        assert!(cell(r, "busbw_gbs").is_empty(), "no collective, no busbw");
    }
    assert_eq!(cell(ib[0], "ecn_marks"), "0");
    assert!(cell(ib[0], "xmit_wait_us").parse::<f64>().unwrap() > 0.0, "IB waits for credits at the incast");

    let svg = read(&out.join("sweep.svg"));
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    let line = svg.lines().find(|l| l.starts_with("<polyline class=\"roce\"")).expect("RoCE polyline");
    let points = line.split("points=\"").nth(1).unwrap().split('"').next().unwrap();
    assert_eq!(points.split(' ').count(), 3, "{line}");
    assert!(svg.contains("class=\"infiniband reference\""), "IB as a horizontal reference line");
    for label in ["20KB", "100KB", "400KB", "roce.ecn[0].kmin", "flow completion time p99 (µs)", "InfiniBand (reference)"] {
        assert!(svg.contains(label), "{label}");
    }

    let json: serde_json::Value = serde_json::from_str(&sweep(&file, &dir.join("json"), &["--json", "--metric", "ecn-marks"])).expect("JSON");
    assert_eq!(json["metric"], "ecn-marks");
    assert_eq!(json["rows"].as_array().unwrap().len(), 4);
    assert_eq!(json["rows"][1]["values"]["roce.ecn[0].kmin"], "100KB");
    assert_eq!(json["rows"][1]["ecn_marks"].as_f64().unwrap() as u64, marks[1]);
    assert!(json["rows"][3]["variant"].is_null());
}

#[test]
fn shards_merge_into_the_unsharded_files_byte_for_byte() {
    let dir = scratch("shards");
    let file = quick(&dir);
    // One RoCE-only parameter (IB once, in shard 0), and a grid where IB runs per variant.
    let grids: [&[&str]; 2] = [&["--vary", KMIN], &["--vary", "roce.ecn[0].kmin=20KB,400KB", "--vary", "incast-degree=2,4,8"]];
    for (g, vary) in grids.iter().enumerate() {
        let whole = dir.join(format!("whole{g}"));
        let parts = dir.join(format!("parts{g}"));
        let run = |out: &Path, extra: &[&str]| {
            let mut a = vec!["sweep", file.to_str().unwrap(), "--out", out.to_str().unwrap()];
            a.extend_from_slice(vary);
            a.extend_from_slice(extra);
            ok(&a)
        };
        run(&whole, &[]);
        let n = 2 + g;
        for i in 0..n {
            run(&parts, &["--shard", &format!("{i}/{n}")]);
            assert!(parts.join(format!("sweep.shard-{i}-of-{n}.csv")).exists());
        }
        assert!(!parts.join("sweep.csv").exists(), "a shard writes only its own file");
        let merged = ok(&["merge", parts.to_str().unwrap()]);
        assert!(merged.contains("wrote"), "{merged}");
        assert_eq!(read(&parts.join("sweep.csv")), read(&whole.join("sweep.csv")), "grid {g}");
        assert_eq!(read(&parts.join("sweep.svg")), read(&whole.join("sweep.svg")), "grid {g}");
        // Shard files named one by one, into another directory, give the same.
        let files: Vec<String> = (0..n).rev().map(|i| parts.join(format!("sweep.shard-{i}-of-{n}.csv")).display().to_string()).collect();
        let again = dir.join(format!("again{g}"));
        let mut a: Vec<&str> = vec!["merge"];
        a.extend(files.iter().map(String::as_str));
        a.extend(["--out", again.to_str().unwrap()]);
        ok(&a);
        assert_eq!(read(&again.join("sweep.csv")), read(&whole.join("sweep.csv")));
    }
    // The second grid runs InfiniBand per variant: two curves, 6 variants x 2 fabrics,
    // and IB rows the same for both Kmin values (Kmin is not an IB setting).
    let (meta, rows) = parse(&read(&dir.join("whole1/sweep.csv")));
    assert!(meta.contains(&("infiniband".into(), "per-variant".into())));
    assert_eq!(rows.len(), 12);
    let ib: Vec<_> = rows.iter().filter(|r| cell(r, "fabric") == "infiniband").collect();
    for k in 0..3 {
        assert_eq!(cell(ib[k], "fct_p99_us"), cell(ib[k + 3], "fct_p99_us"));
    }
    assert!(cell(ib[0], "fct_p99_us") != cell(ib[2], "fct_p99_us"), "incast degree changes IB's completion time");
    let svg = read(&dir.join("whole1/sweep.svg"));
    assert_eq!(svg.matches("<polyline class=\"infiniband\"").count(), 3, "an IB curve per incast degree");
}

#[test]
fn a_missing_or_duplicate_shard_is_named() {
    let dir = scratch("missing");
    let file = quick(&dir);
    let parts = dir.join("parts");
    sweep(&file, &parts, &["--shard", "0/2"]);
    let (code, _, err) = fabriclab(&["merge", parts.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("missing shard 1/2") && err.contains("sweep.shard-1-of-2.csv") && err.contains("variant 1 "), "{err}");
    let s0 = parts.join("sweep.shard-0-of-2.csv");
    let (code, _, err) = fabriclab(&["merge", s0.to_str().unwrap(), s0.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("both shard 0/2"), "{err}");
    // A shard of another sweep (other values) does not join.
    let other = dir.join("other");
    ok(&["sweep", file.to_str().unwrap(), "--vary", "roce.ecn[0].kmin=30KB,60KB,90KB", "--out", other.to_str().unwrap(), "--shard", "1/2"]);
    let s1 = other.join("sweep.shard-1-of-2.csv");
    let (code, _, err) = fabriclab(&["merge", s0.to_str().unwrap(), s1.to_str().unwrap(), "--out", dir.join("m").to_str().unwrap()]);
    assert_eq!(code, 0, "same header, disjoint shards: {err}");
    let (code, _, err) = fabriclab(&["merge", dir.join("m/sweep.csv").to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("not a shard file"), "{err}");
}

#[test]
fn bad_arguments_are_errors_that_name_the_problem() {
    let dir = scratch("errors");
    let file = quick(&dir);
    let f = file.to_str().unwrap();
    let out = dir.join("out");
    let o = out.to_str().unwrap();
    for (args, needle) in [
        (vec!["--vary", "roce.ecn[0].kmin"], "expected PATH=V1,V2"),
        (vec!["--vary", "roce.ecn[0].kmin=1KB,,2KB"], "empty value"),
        (vec!["--vary", "roce.ecn[0].kmin=[1KB"], "unbalanced"),
        (vec!["--vary", "roce.ecn[0].kmin=1KB,1KB"], "given twice"),
        (vec!["--vary", "roce.ecn[0].kmn=1KB,2KB"], "unknown field `kmn`"),
        (vec!["--vary", "roce.ecn[0].kmin=20KB,2000KB"], "variant 1 (roce.ecn[0].kmin=2000KB)"),
        (vec!["--vary", "roce.ecn[3].kmin=20KB"], "out of range"),
        (vec!["--vary", "incast-degree=9"], "expected a whole number 1..8"),
        (vec!["--vary", "pfc=maybe"], "expected on or off"),
        (vec!["--vary", KMIN, "--shard", "2/2"], "0 <= I < N"),
        (vec!["--vary", KMIN, "--shard", "1"], "expected I/N"),
        (vec!["--vary", KMIN, "--metric", "busbw"], "no collective"),
        (vec!["--vary", KMIN, "--jobs", "0"], "at least 1"),
    ] {
        let mut a = vec!["sweep", f, "--out", o];
        a.extend(args.iter().copied());
        let (code, _, err) = fabriclab(&a);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: expected `{needle}` in: {err}");
    }
    assert!(!out.join("sweep.csv").exists(), "nothing written on errors");
    let (code, _, err) = fabriclab(&["merge", dir.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("no shard files"), "{err}");
}

#[test]
fn a_file_without_an_infiniband_side_is_swept_on_roce_alone() {
    let dir = scratch("no-ib");
    let file = quick(&dir);
    // 25 Gb/s is no InfiniBand speed: the IB side cannot be compiled.
    std::fs::write(&file, read(&file).replace("100Gbps", "25Gbps")).unwrap();
    let out = dir.join("out");
    let (code, _, err) = fabriclab(&["sweep", file.to_str().unwrap(), "--vary", KMIN, "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("no InfiniBand side") && err.contains("25Gbps"), "{err}");
    let (meta, rows) = parse(&read(&out.join("sweep.csv")));
    assert!(meta.contains(&("infiniband".into(), "off".into())));
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|r| cell(r, "fabric") == "roce"));
    assert!(!read(&out.join("sweep.svg")).contains("infiniband"));
}

#[test]
fn the_same_sweep_twice_writes_the_same_bytes() {
    let dir = scratch("determinism");
    let file = quick(&dir);
    let (a, b) = (dir.join("a"), dir.join("b"));
    let ta = sweep(&file, &a, &["--jobs", "1"]);
    let tb = sweep(&file, &b, &["--jobs", "3"]);
    assert_eq!(read(&a.join("sweep.csv")), read(&b.join("sweep.csv")));
    assert_eq!(read(&a.join("sweep.svg")), read(&b.join("sweep.svg")));
    assert_eq!(ta.replace(a.to_str().unwrap(), ""), tb.replace(b.to_str().unwrap(), ""));
}

#[test]
fn the_sweep_example_loads_with_its_documented_sweep() {
    let dir = scratch("example");
    let file = root().join("examples/roce-sweep-kmin.toml");
    let out = dir.join("out");
    ok(&["sweep", file.to_str().unwrap(), "--vary", "roce.ecn[0].kmin=5KB,1000KB", "--out", out.to_str().unwrap()]);
    let (_, rows) = parse(&read(&out.join("sweep.csv")));
    let roce: Vec<_> = rows.iter().filter(|r| cell(r, "fabric") == "roce").collect();
    assert!(roce.iter().all(|r| cell(r, "pause_frames") != "0"), "the shallow buffer pauses");
    let cnps: Vec<u64> = roce.iter().map(|r| cell(r, "cnps").parse().unwrap()).collect();
    assert!(cnps[1] < cnps[0], "a higher Kmin marks less: {cnps:?}");
}

/// The failure-mode curve: the later the PFC watchdog fires, the longer the storm's
/// victim waits (it is stuck from the pause's arrival until the watchdog drops).
#[test]
fn a_watchdog_sweep_shows_the_victim_waiting_longer() {
    let dir = scratch("watchdog");
    let file = root().join("examples/roce-pfc-storm.toml");
    ok(&[
        "sweep",
        file.to_str().unwrap(),
        "--vary",
        "roce.pfc.watchdog.detection_time=400us,1600us",
        "--metric",
        "victim-slowdown",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let (meta, rows) = parse(&read(&dir.join("sweep.csv")));
    assert!(meta.iter().any(|(k, v)| k == "metric" && v == "victim-slowdown"));
    let slow: Vec<f64> = rows.iter().filter(|r| cell(r, "fabric") == "roce").map(|r| cell(r, "victim_slowdown_max").parse().unwrap()).collect();
    assert_eq!(slow.len(), 2);
    assert!(slow[1] > slow[0] + 1.0, "{slow:?}");
    let rec: Vec<f64> = rows.iter().filter(|r| cell(r, "fabric") == "roce").map(|r| cell(r, "recovery_us").parse().unwrap()).collect();
    assert!(rec.iter().all(|&r| r > 3000.0), "the watchdog's drops are recovered after the stuck NIC returns: {rec:?}");
}

#[test]
fn load_balancing_varies_on_both_fabrics() {
    // Issue 18: a sweep varies InfiniBand's adaptive routing and RoCEv2's load balancing
    // together; each fabric's rows follow its own field and ignore the other's.
    let dir = scratch("lb");
    let file = quick(&dir);
    let out = dir.join("out");
    let vary = ["--vary", "infiniband.adaptive_routing.mode=off,per-packet", "--vary", "roce.load_balancing=ecmp,adaptive"];
    let mut a = vec!["sweep", file.to_str().unwrap(), "--out", out.to_str().unwrap()];
    a.extend_from_slice(&vary);
    ok(&a);
    let (meta, rows) = parse(&read(&out.join("sweep.csv")));
    assert!(meta.contains(&("infiniband".into(), "per-variant".into())), "{meta:?}");
    let metrics = |fabric: &str, ar: &str, lb: &str| -> Vec<String> {
        let r = rows
            .iter()
            .find(|r| cell(r, "fabric") == fabric && cell(r, "infiniband.adaptive_routing.mode") == ar && cell(r, "roce.load_balancing") == lb)
            .unwrap_or_else(|| panic!("no {fabric} row for {ar}, {lb}"));
        ["fct_p99_us", "xmit_wait_us", "retransmitted_bytes"].iter().filter(|c| r.iter().any(|(h, _)| h == *c)).map(|c| cell(r, c).to_string()).collect()
    };
    assert_eq!(rows.len(), 8);
    // InfiniBand follows adaptive_routing (credit waits move), not the RoCE field.
    assert_eq!(metrics("infiniband", "off", "ecmp"), metrics("infiniband", "off", "adaptive"));
    assert_ne!(metrics("infiniband", "off", "ecmp"), metrics("infiniband", "per-packet", "ecmp"));
    // RoCEv2 follows load_balancing, not the InfiniBand field.
    assert_eq!(metrics("roce", "off", "adaptive"), metrics("roce", "per-packet", "adaptive"));
    assert_ne!(metrics("roce", "off", "ecmp"), metrics("roce", "off", "adaptive"));
}
