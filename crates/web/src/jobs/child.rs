//! One job as a child `fabriclab` process: its scenario (and, for an example, the data
//! files beside it) written into a directory of the server's own, `fabriclab run` or
//! `compare` with `--json`, `--html` (and `run --out` for the CSVs) under the job's
//! memory limit, progress read from its stderr (`FABRICLAB_PROGRESS=json`), and its
//! outputs read back into memory before the directory is removed.
//!
//! Limits: the child refuses a scenario whose memory estimate is above `--max-memory`
//! before it builds anything (`scenario::estimate`, docs/limits.md); RLIMIT_AS
//! (setrlimit(2)) at twice that plus 1 GiB bounds the address space if the estimate is
//! wrong (fabriclab's allocator turns a failed allocation into an error, `oom.rs`);
//! the wall-clock limit and cancel kill it (SIGKILL).
//!
//! Left out: CPU pinning and niceness; the child's threads are not limited.

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Stdio;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::sync::oneshot;

use super::{JobConfig, Kind, Output};

/// What a job asks for.
pub struct Spec {
    pub kind: Kind,
    /// The scenario's file name (it names the file in errors and the report).
    pub file: String,
    pub scenario: String,
    /// Files the scenario reads, by relative path (an example's data).
    pub data: &'static [(&'static str, &'static str)],
    /// A planner's flags (`Kind::Prove`), checked by the planner.
    pub args: Vec<String>,
}

/// How a child ended.
pub enum Outcome {
    Done(BTreeMap<String, Output>),
    Failed(String),
    Cancelled,
}

/// The most of the child's stderr (besides progress lines) kept for the error message.
const STDERR_KEEP: usize = 64 << 10;

/// Runs the job to its end, calling `progress(label, line)` for each progress line.
pub async fn run(cfg: &JobConfig, id: u64, spec: &Spec, progress: &(dyn Fn(String, serde_json::Value) + Sync), cancel: &mut oneshot::Receiver<()>) -> Outcome {
    let dir = cfg.dir.join(format!("job-{id}"));
    let outcome = match prepare(&dir, spec) {
        Ok(()) => supervise(cfg, &dir, spec, progress, cancel).await,
        Err(e) => Outcome::Failed(format!("cannot prepare the job's directory: {e}")),
    };
    let _ = std::fs::remove_dir_all(&dir);
    outcome
}

fn prepare(dir: &Path, spec: &Spec) -> std::io::Result<()> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir.join("out"))?;
    for (rel, text) in spec.data {
        let p = dir.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(p, text)?;
    }
    if spec.file.is_empty() {
        return Ok(());
    }
    std::fs::write(dir.join(&spec.file), &spec.scenario)
}

/// The child's arguments.
fn args(cfg: &JobConfig, spec: &Spec) -> Vec<String> {
    let command = match spec.kind {
        Kind::Prove(p) => {
            return p.subcommand().iter().map(|s| s.to_string()).chain(spec.args.iter().cloned()).chain(["--json".into(), "--prove".into()]).collect()
        }
        Kind::Run => "run",
        Kind::Compare => "compare",
    };
    let mut a = vec![command.to_string(), spec.file.clone(), "--json".into(), "--html".into(), "report.html".into()];
    if spec.kind == Kind::Run {
        a.extend(["--out".into(), "out".into()]);
    }
    a.extend(["--max-memory".into(), format!("{}B", cfg.memory)]);
    a
}

async fn supervise(
    cfg: &JobConfig,
    dir: &Path,
    spec: &Spec,
    progress: &(dyn Fn(String, serde_json::Value) + Sync),
    cancel: &mut oneshot::Receiver<()>,
) -> Outcome {
    let mut cmd = tokio::process::Command::new(&cfg.exe);
    cmd.args(args(cfg, spec))
        .current_dir(dir)
        .env("FABRICLAB_PROGRESS", "json")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let address_space = cfg.memory.saturating_mul(2).saturating_add(1 << 30);
    // SAFETY: between fork and exec the closure only calls setrlimit(2), which is
    // async-signal-safe, on a local struct.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit { rlim_cur: address_space as libc::rlim_t, rlim_max: address_space as libc::rlim_t };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return Outcome::Failed(format!("cannot start {}: {e}", cfg.exe.display())),
    };
    let mut stdout = child.stdout.take().expect("piped");
    let stderr = child.stderr.take().expect("piped");
    let out_task = tokio::spawn(async move {
        let mut v = vec![];
        let _ = stdout.read_to_end(&mut v).await;
        v
    });
    let err_lines = async {
        let mut lines = BufReader::new(stderr).lines();
        let mut kept = String::new();
        while let Ok(Some(l)) = lines.next_line().await {
            match serde_json::from_str::<serde_json::Value>(&l) {
                Ok(v) if v.get("progress").is_some() => {
                    let p = v["progress"].clone();
                    progress(p["label"].as_str().unwrap_or("").to_string(), p);
                }
                _ if kept.len() < STDERR_KEEP => {
                    kept.push_str(&l);
                    kept.push('\n');
                }
                _ => {}
            }
        }
        kept
    };
    let ended = async {
        let (status, kept) = tokio::join!(child.wait(), err_lines);
        (status, kept)
    };
    tokio::select! {
        (status, kept) = ended => {
            let stdout = out_task.await.unwrap_or_default();
            match status {
                Ok(s) if s.success() => Outcome::Done(outputs(dir, spec, stdout)),
                Ok(s) => Outcome::Failed(failure(s, &kept)),
                Err(e) => Outcome::Failed(format!("cannot wait for the simulator: {e}")),
            }
        }
        _ = tokio::time::sleep(cfg.wall) => Outcome::Failed(format!("killed: the job ran past its wall-clock limit of {} s", cfg.wall.as_secs())),
        _ = cancel => Outcome::Cancelled,
    }
    // Leaving `select!` drops the child when it still runs: `kill_on_drop` kills it.
}

/// The message of a child that failed: the CLI's `error: ` lines, or what killed it.
fn failure(s: std::process::ExitStatus, stderr: &str) -> String {
    let errors: Vec<&str> = stderr.lines().filter_map(|l| l.strip_prefix("error: ")).collect();
    let tail = || stderr.lines().rev().take(20).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n");
    match (s.code(), s.signal()) {
        (Some(101), _) => format!("the simulator panicked (a bug: please report the scenario): {}", tail()),
        (Some(_), _) if !errors.is_empty() => errors.join("\n"),
        (Some(c), _) => format!("the simulator exited with code {c}: {}", tail()),
        (None, Some(sig)) => format!("the simulator was killed by signal {sig} (out of memory or a crash): {}", tail()),
        (None, None) => "the simulator ended without an exit code".into(),
    }
}

/// The job's outputs, read into memory: the JSON document, the HTML report, the CSVs
/// (`run`), the scenario.
fn outputs(dir: &Path, spec: &Spec, stdout: Vec<u8>) -> BTreeMap<String, Output> {
    let mut m = BTreeMap::new();
    m.insert("result.json".to_string(), Output { content_type: "application/json", bytes: stdout });
    if let Ok(b) = std::fs::read(dir.join("report.html")) {
        m.insert("report.html".to_string(), Output { content_type: "text/html; charset=utf-8", bytes: b });
    }
    if let Ok(rd) = std::fs::read_dir(dir.join("out")) {
        let mut files: Vec<_> = rd.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_file()).collect();
        files.sort();
        for p in files {
            let (Some(name), Ok(b)) = (p.file_name().and_then(|n| n.to_str()).map(str::to_string), std::fs::read(&p)) else { continue };
            let ty = if name.ends_with(".csv") { "text/csv; charset=utf-8" } else { "application/octet-stream" };
            m.insert(name, Output { content_type: ty, bytes: b });
        }
    }
    if spec.file.is_empty() {
        return m;
    }
    m.insert(spec.file.clone(), Output { content_type: "application/toml; charset=utf-8", bytes: spec.scenario.clone().into_bytes() });
    m
}
