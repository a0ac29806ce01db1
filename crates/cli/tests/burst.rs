//! `fabriclab burst`: flag validation, `--json` fields, and `--prove` agreement.

use std::process::Command;

fn burst(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_fabriclab")).arg("burst").args(args).output().expect("runs")
}

const BASE: [&str; 8] = ["--senders", "4", "--burst", "64KB", "--in-speed", "100Gbps", "--out-speed", "100Gbps"];

fn with(extra: &[&str]) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = BASE.to_vec();
    v.extend(extra.iter().map(|s| -> &'static str { Box::leak(s.to_string().into_boxed_str()) }));
    v
}

#[test]
fn errors_name_the_flag() {
    for (bad, flag) in [(["--buffer", "16"], "--buffer"), (["--buffer", "16MiB --class"], "--buffer"), (["--cell", "256"], "--cell")] {
        let o = burst(&with(&[bad[0], bad[1]]));
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert!(e.contains(flag), "{e}");
    }
    let o = burst(&with(&["--buffer", "16MiB", "--class", "best-effort"]));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--class"));
    let o = burst(&with(&["--buffer", "16MiB", "--mtu", "1500B"]));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--mtu"));
    let o = burst(&["--senders", "4", "--burst", "64KB", "--in-speed", "100", "--out-speed", "100Gbps", "--buffer", "1MiB"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("--in-speed"));
}

#[test]
fn json_fields() {
    let o = burst(&with(&["--buffer", "16MiB", "--json", "--explain"]));
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for f in ["peak_wire_bytes", "peak_frame_bytes", "peak_cells", "drain_after_peak_ps", "last_byte_out_ps", "limit_cells", "max_burst_bytes", "beyond"] {
        assert!(v["plan"].get(f).is_some(), "missing plan.{f}");
    }
    assert!(v["explain"].as_array().unwrap().iter().any(|l| l.as_str().unwrap().contains("Choudhury")));
}

/// Analytical vs simulated: peak within 2 MTU frames, last flow within 1 % plus one packet
/// time at R_in and two 3 m cable delays (store-and-forward and propagation, which the
/// fluid model leaves out).
fn prove(class: &str) -> serde_json::Value {
    let o = burst(&with(&["--buffer", "16MiB", "--class", class, "--json", "--prove"]));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let p = &v["plan"];
    let s = &v["simulated"];
    let frame = p["frame_bytes"].as_u64().unwrap();
    let (ap, sp) = (p["peak_frame_bytes"].as_u64().unwrap(), s["peak_queue_frame_bytes"].as_u64().unwrap());
    assert!(ap.abs_diff(sp) <= 2 * frame, "peak {ap} vs {sp}");
    let (at, st) = (p["last_byte_out_ps"].as_u64().unwrap(), s["last_flow_done_ps"].as_u64().unwrap());
    let slack = at / 100 + p["wire_bytes_per_frame"].as_u64().unwrap() * 80 + 2 * 15_000;
    assert!(at.abs_diff(st) <= slack, "completion {at} vs {st}");
    assert_eq!(s["drops"], 0);
    v
}

#[test]
fn prove_lossy_agrees() {
    prove("lossy");
}

#[test]
fn prove_lossless_agrees() {
    let v = prove("lossless");
    assert_eq!(v["simulated"]["pfc_frames"], 0);
}

#[test]
fn prove_lossy_beyond_drops() {
    let o = burst(&with(&["--buffer", "128KiB", "--class", "lossy", "--json", "--prove"]));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ana = v["plan"]["beyond"]["dropped_packets"].as_u64().unwrap();
    let sim = v["simulated"]["drops"].as_u64().unwrap();
    // Go-back-N resends after the first loss only add drops to the first-order estimate.
    assert!(ana > 0 && sim >= ana / 2, "dropped {ana} analytical vs {sim} simulated");
}

/// Beyond the limit, lossless: the senders are paused instead of dropped. The simulated
/// fabric drops nothing (its headroom is the simulator's own `auto` formula), the egress
/// stays busy so the last byte leaves when the analysis says (within 1 %), and the time
/// each sender spends paused matches the analysis within 5 %.
#[test]
fn prove_lossless_beyond_pauses_as_analysed() {
    let args = ["--senders", "16", "--burst", "2MB", "--in-speed", "100Gbps", "--out-speed", "100Gbps", "--buffer", "16MiB", "--json", "--prove"];
    let o = burst(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let (p, s) = (&v["plan"], &v["simulated"]);
    assert_eq!(s["drops"], 0, "lossless beyond the limit: pause, not drops");
    assert!(s["pfc_frames"].as_u64().unwrap() > 0);
    let close = |a: f64, b: f64, tol: f64| (a - b).abs() <= tol * a;
    let (ana, sim) = (p["last_byte_out_ps"].as_f64().unwrap(), s["last_flow_done_ps"].as_f64().unwrap());
    assert!(close(ana, sim, 0.01), "last byte {ana} analytical vs {sim} simulated");
    let (ana, sim) = (p["beyond"]["paused_per_sender_ps"].as_f64().unwrap(), s["paused_per_sender_ps"].as_f64().unwrap());
    assert!(close(ana, sim, 0.05), "paused per sender {ana} analytical vs {sim} simulated");
    // The sampled series the planner page draws: evenly spaced over the burst, the queue
    // never above the simulated peak and close to it at its top, every sender paused at
    // some point while the queue is high, none once it has drained.
    let series = s["series"].as_array().unwrap();
    let t: Vec<u64> = series.iter().map(|x| x["t_ps"].as_u64().unwrap()).collect();
    assert!(t.len() >= 200 && t[0] == 0, "{} samples from {}", t.len(), t[0]);
    assert!(t.windows(2).all(|w| w[1] - w[0] == t[1]), "evenly spaced");
    let q: Vec<u64> = series.iter().map(|x| x["queue_frame_bytes"].as_u64().unwrap()).collect();
    let peak = s["peak_queue_frame_bytes"].as_u64().unwrap();
    let top = *q.iter().max().unwrap();
    assert!(top <= peak && peak - top <= peak / 20, "sampled top {top} vs peak {peak}");
    let paused: Vec<u64> = series.iter().map(|x| x["senders_paused"].as_u64().unwrap()).collect();
    assert_eq!(paused.iter().max(), Some(&16));
    assert_eq!(*paused.last().unwrap(), 0);
    let first_pause = paused.iter().position(|&n| n > 0).unwrap();
    assert!(q[first_pause] > top / 2, "paused while the queue is only {} of {top}", q[first_pause]);
}
