//! Impossible and oversized scenarios are refused before anything is built: the cases a
//! fuzzing session found ending in an allocator abort (SIGABRT) or running for minutes
//! with no sign of life each end with exit code 2 and a message naming the field, the
//! estimate and the limit, within seconds. Also `--max-memory`, `--max-events`,
//! `--force` and `run --estimate`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// A copy of example `name` with `from` replaced by `to`, in a fresh directory (relative
/// paths in it are not used by the examples this takes).
fn mutated(name: &str, edits: &[(&str, &str)]) -> PathBuf {
    let mut src = std::fs::read_to_string(examples().join(name)).expect("example");
    for (from, to) in edits {
        assert!(src.contains(from), "{name} has no `{from}`");
        src = src.replacen(from, to, 1);
    }
    let dir = std::env::temp_dir().join(format!("fabriclab-limits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{}-{}", edits.len(), name));
    std::fs::write(&path, src).unwrap();
    path
}

/// Runs `fabriclab ARGS`, killing it after a minute (a refusal takes milliseconds).
fn fabriclab(args: &[&str]) -> (Option<i32>, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fabriclab")).args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("runs");
    let t0 = Instant::now();
    while child.try_wait().expect("waits").is_none() {
        if t0.elapsed() > Duration::from_secs(60) {
            child.kill().ok();
            panic!("fabriclab {args:?} still running after 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = child.wait_with_output().expect("output");
    (o.status.code(), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

fn refused(file: &Path, extra: &[&str], expect: &[&str]) {
    let f = file.to_str().unwrap();
    let mut args = vec!["run", f];
    args.extend_from_slice(extra);
    let (code, _, err) = fabriclab(&args);
    assert_eq!(code, Some(2), "{f}: expected a refusal, got {code:?}: {err}");
    assert!(err.starts_with("error: ") && err.contains(f), "{err}");
    for e in expect {
        assert!(err.contains(e), "`{e}` missing from: {err}");
    }
}

#[test]
fn a_65536_leaf_fabric_is_refused_before_it_is_built() {
    // InfiniBand: the subnet manager's tables alone are 65,538 × 524,288 entries.
    let ib = mutated("ib-incast.toml", &[("leaves = 4", "leaves = 65536")]);
    refused(&ib, &[], &["topology", "forwarding tables (65538 switches × 524288 destinations)", "--max-memory"]);
    // RoCEv2 under a limit it cannot meet: the estimate names the topology.
    let roce = mutated("roce-incast.toml", &[("leaves = 4", "leaves = 65536")]);
    refused(&roce, &["--max-memory", "1GiB"], &["topology.leaves", "above the limit of 1.1 GB"]);
}

#[test]
fn a_99999999999_mib_message_is_refused() {
    let f = mutated("roce-incast.toml", &[("size = \"1MB\"", "size = \"99999999999MiB\"")]);
    refused(&f, &[], &["traffic[0].size", "events", "--max-events"]);
    // Under --force the estimate no longer stops it, but no RDMA message is that large.
    refused(&f, &["--force"], &["traffic[0].size", "largest RDMA message, 2^31 bytes"]);
}

#[test]
fn a_4294967296_mib_sharp_job_is_refused() {
    let f = mutated("ib-sharp-allreduce.toml", &[("size = \"64MiB\"", "size = \"4294967296MiB\"")]);
    refused(&f, &[], &["traffic[0]", "TB of memory", "--max-memory"]);
}

#[test]
fn limits_are_flags_and_force_overrides_them() {
    let f = examples().join("roce-incast.toml");
    let f = f.to_str().unwrap();
    // 62,848 events estimated: a limit of 1,000 refuses it, naming the traffic entry.
    let (code, _, err) = fabriclab(&["run", f, "--max-events", "1e3"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("traffic[0].size") && err.contains("above the limit of 1000"), "{err}");
    let (code, _, err) = fabriclab(&["run", f, "--max-events", "1e3", "--force", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let (code, _, err) = fabriclab(&["run", f, "--max-memory", "1MB"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("the process itself") || err.contains("memory"), "{err}");
    let (code, _, err) = fabriclab(&["run", f, "--max-events", "lots"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--max-events") && err.contains("expected a positive count"), "{err}");
}

#[test]
fn estimate_prints_terms_and_json() {
    let f = examples().join("roce-incast.toml");
    let f = f.to_str().unwrap();
    let (code, out, err) = fabriclab(&["run", f, "--estimate", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let terms = v["memory_terms"].as_array().expect("terms");
    let total: u64 = terms.iter().map(|t| t["bytes"].as_u64().unwrap()).sum();
    assert_eq!(total, v["memory_bytes"].as_u64().unwrap());
    assert!(terms.iter().any(|t| t["what"].as_str().unwrap().contains("per-port state")));
    // 16 senders × 1 MB in 4096-byte frames over 4 links, each ACKed: 62,848 events.
    assert_eq!(v["events"].as_u64(), Some(62_848));
    let (code, out, _) = fabriclab(&["run", f, "--estimate"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("estimated peak memory") && out.contains("(topology)"), "{out}");
}

#[test]
fn out_of_memory_is_an_error_not_an_abort() {
    // Past the estimate (--force) on a machine that cannot hold the run (an address-space
    // limit of 100 MB against allreduce1024's 150 MB while its simulator is built): exit 2
    // with a message, no SIGABRT.
    let bench = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../benches/allreduce1024.toml");
    let cmd = format!("ulimit -v 100000 && exec '{}' run '{}' --force", env!("CARGO_BIN_EXE_fabriclab"), bench.display());
    let o = Command::new("sh").arg("-c").arg(&cmd).output().expect("sh runs");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("error: out of memory: this machine refused an allocation of") && err.contains("--estimate"), "{err}");
}

#[test]
fn compare_counts_both_fabrics_at_once() {
    let f = examples().join("allreduce-compare.toml");
    let f = f.to_str().unwrap();
    // The file runs RoCEv2 by itself (`technology = "roce"`).
    let (_, out, _) = fabriclab(&["run", f, "--estimate", "--json"]);
    let roce = serde_json::from_str::<serde_json::Value>(&out).unwrap()["memory_bytes"].as_u64().unwrap();
    // A limit above the RoCEv2 side alone but below both sides together: the InfiniBand
    // side adds its scenario's 3 MB (its flows, ports and report; the process baseline is
    // counted once), so 1 MiB over the RoCEv2 side is not enough for both.
    let limit = format!("{}B", roce + (1 << 20));
    let (code, _, err) = fabriclab(&["compare", f, "--max-memory", &limit]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("compare runs both fabrics at once") && err.contains("InfiniBand") && err.contains("RoCEv2"), "{err}");
}

/// A long sampled run keeps a bounded time series: past `fabric::sim::MAX_SAMPLES` (65,536)
/// samples every other one goes and the period doubles. roce-incast with a 1 ns period for
/// 300 µs would take 300,001 samples; it keeps between 32,768 and 65,536, evenly spaced
/// at a power-of-two multiple of 1 ns, the first at 0.
#[test]
fn the_sampled_time_series_is_bounded() {
    let f = mutated("roce-incast.toml", &[("[scenario]", "[output]\nsample_period = \"1ns\"\n\n[scenario]\nstop_time = \"300us\"")]);
    let out = f.with_extension("out");
    let (code, _, err) = fabriclab(&["run", f.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    let csv = std::fs::read_to_string(out.join("queue_bytes.csv")).expect("written");
    let t: Vec<u64> = csv.lines().skip(1).map(|l| l.split(',').next().unwrap().parse().unwrap()).collect();
    assert!((32_768..=65_536).contains(&t.len()), "{} samples", t.len());
    let step = t[1] - t[0];
    // 300,001 samples of 1 ns halve three times to fit: 8 ns apart.
    assert_eq!(step, 8_000, "{step} ps");
    assert_eq!(t[0], 0);
    assert!(t.windows(2).all(|w| w[1] - w[0] == step), "unevenly spaced");
    assert!(*t.last().unwrap() + step > 299_000_000, "ends at {} ps", t.last().unwrap());
}
