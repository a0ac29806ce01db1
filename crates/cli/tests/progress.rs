//! Progress and Ctrl-C: nothing extra on stderr when it is not a terminal, and SIGINT
//! stops a run cleanly with its partial summary and exit code 130.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn file(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(rel).to_string_lossy().into_owned()
}

#[test]
fn no_progress_bar_when_stderr_is_not_a_terminal() {
    // 9.8 M events: the watcher runs some 150 times.
    let o = Command::new(env!("CARGO_BIN_EXE_fabriclab")).args(["run", &file("examples/allreduce-compare.toml"), "--json"]).output().expect("runs");
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("simulated") && !err.contains("events/s") && !err.contains('\u{1b}'), "stderr: {err}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is only the JSON document");
    assert!(v.get("incomplete").is_none(), "a complete run is not marked incomplete");
}

/// Runs `fabriclab ARGS`, sends SIGINT after `after`, and returns (exit code, stdout,
/// stderr).
fn interrupted(args: &[&str], after: Duration) -> (Option<i32>, String, String) {
    let child = Command::new(env!("CARGO_BIN_EXE_fabriclab")).args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("runs");
    std::thread::sleep(after);
    // SAFETY: signals our own child, which is still running (the run takes minutes).
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) }, 0);
    let t0 = Instant::now();
    let o = child.wait_with_output().expect("output");
    assert!(t0.elapsed() < Duration::from_secs(30), "took {:?} to stop", t0.elapsed());
    (o.status.code(), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn ctrl_c_prints_the_partial_summary_and_exits_130() {
    // allreduce128 runs for seconds (release) to minutes (debug): interrupted after 1 s.
    let f = file("benches/allreduce128.toml");
    let (code, out, err) = interrupted(&["run", &f], Duration::from_secs(1));
    assert_eq!(code, Some(130), "{err}");
    assert!(out.starts_with("INCOMPLETE: the run was cancelled at "), "{out}");
    assert!(out.contains("scenario allreduce128"), "the summary follows: {out}");
    assert!(err.contains("interrupted") && err.contains("cancelled at simulated"), "{err}");
    let (code, out, _) = interrupted(&["run", &f, "--json"], Duration::from_secs(1));
    assert_eq!(code, Some(130));
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["incomplete"]["reason"], "cancelled");
    assert!(v["incomplete"]["at_ps"].as_u64().unwrap() > 0);
    assert_eq!(v["end_ps"], v["incomplete"]["at_ps"], "the figures stop where the run did");
}
