//! Simulation jobs: `POST /api/jobs` queues a `run` or `compare` of a bundled example (by
//! name) or of a scenario's text; `GET /api/jobs/{id}` reports its state, queue position
//! and progress; `GET /api/jobs/{id}/{output}` returns an output (`result.json`,
//! `report.html`, a CSV of `run --out`, the scenario); `DELETE /api/jobs/{id}` cancels it
//! (kills the child) or forgets a finished one. `GET /api/examples` lists the examples.
//!
//! Each job is a child `fabriclab` process (`child.rs`), so a job that panics, runs out of
//! memory or is killed is reported failed and the server goes on. At most
//! [`JobConfig::slots`] run at once (one per core by default); up to
//! [`JobConfig::queue`] more wait in order (a tokio semaphore is first come, first
//! served), and beyond that a request gets 429. A finished job and its outputs are kept
//! for [`JobConfig::keep`], then forgotten.
//!
//! No request names a file: an uploaded scenario is text, and one that names a file
//! (`topology.path`, a flow-size `cdf`) is refused; examples come from the embedded list
//! with their data files.
//!
//! Left out: persistence across restarts; per-client quotas.

mod child;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::rejection::JsonRejection;
use axum::extract::{Json, Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use tokio::sync::{oneshot, Semaphore};

use crate::error::ApiError;
use crate::examples;
use crate::forms::Planner;

/// What a job runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Run,
    Compare,
    /// A planner's `--prove` (`plan roce` or `burst`): it simulates, so it is a job.
    Prove(Planner),
}

impl Kind {
    /// The name in requests and answers.
    fn name(self) -> &'static str {
        match self {
            Kind::Run => "run",
            Kind::Compare => "compare",
            Kind::Prove(Planner::Roce) => "prove-roce",
            Kind::Prove(_) => "prove-burst",
        }
    }
}

/// The limits and resources of the jobs.
#[derive(Clone, Debug)]
pub struct JobConfig {
    /// The `fabriclab` binary the children run (the server's own, `current_exe`).
    pub exe: PathBuf,
    /// Jobs running at once.
    pub slots: usize,
    /// Jobs waiting, beyond which a request gets 429.
    pub queue: usize,
    /// Wall-clock limit of one job.
    pub wall: Duration,
    /// How long a finished job's outputs are kept.
    pub keep: Duration,
    /// Each job's `--max-memory` (bytes).
    pub memory: u64,
    /// Where the jobs' directories go (removed when each job ends).
    pub dir: PathBuf,
}

impl JobConfig {
    /// One job per core, 16 waiting, 1 hour each, kept 1 hour, each allowed this
    /// machine's memory limit (`scenario::Limits`: 80 % of physical memory) shared by the
    /// slots.
    pub fn for_this_machine() -> Result<JobConfig, String> {
        let slots = std::thread::available_parallelism().map_or(1, |n| n.get());
        Ok(JobConfig {
            exe: std::env::current_exe().map_err(|e| format!("cannot find the fabriclab binary to run jobs: {e}"))?,
            slots,
            queue: 16,
            wall: Duration::from_secs(3600),
            keep: Duration::from_secs(3600),
            memory: scenario::Limits::for_this_machine().max_memory / slots as u64,
            dir: std::env::temp_dir().join(format!("fabriclab-serve-{}", std::process::id())),
        })
    }
}

/// A job's file, kept in memory.
#[derive(Clone, Debug)]
pub struct Output {
    pub content_type: &'static str,
    pub bytes: Vec<u8>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum JobState {
    Queued,
    Running,
    Done,
    Failed,
    Cancelled,
}

impl JobState {
    fn name(self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Running => "running",
            JobState::Done => "done",
            JobState::Failed => "failed",
            JobState::Cancelled => "cancelled",
        }
    }

    fn finished(self) -> bool {
        matches!(self, JobState::Done | JobState::Failed | JobState::Cancelled)
    }
}

struct Job {
    kind: Kind,
    file: String,
    state: JobState,
    /// The last progress line of each side ("InfiniBand", "RoCEv2", or the scenario's name).
    progress: BTreeMap<String, Value>,
    error: Option<String>,
    outputs: BTreeMap<String, Output>,
    finished: Option<Instant>,
    /// Dropping or sending it kills the child.
    cancel: Option<oneshot::Sender<()>>,
}

/// The jobs of one server.
pub struct Jobs {
    cfg: JobConfig,
    slots: Arc<Semaphore>,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    next: u64,
    jobs: BTreeMap<u64, Job>,
}

impl Jobs {
    pub fn new(cfg: JobConfig) -> Jobs {
        Jobs { slots: Arc::new(Semaphore::new(cfg.slots.max(1))), cfg, inner: Mutex::new(Inner::default()) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves plain data; go on with it.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Forgets finished jobs older than `keep`.
    fn expire(&self) {
        let keep = self.cfg.keep;
        self.lock().jobs.retain(|_, j| j.finished.map_or(true, |t| t.elapsed() < keep));
    }

    /// The job's place in the queue (1 = next), if it waits for a slot; a job about to
    /// take a free slot has none.
    fn position(&self, inner: &Inner, id: u64) -> Option<usize> {
        let running = inner.jobs.values().filter(|j| j.state == JobState::Running).count();
        let free = self.cfg.slots.saturating_sub(running);
        let waiting: Vec<u64> = inner.jobs.iter().filter(|(_, j)| j.state == JobState::Queued).map(|(i, _)| *i).collect();
        waiting.iter().position(|&i| i == id).map(|p| p + 1).filter(|&p| p > free).map(|p| p - free)
    }

    fn status(&self, inner: &Inner, id: u64) -> Option<Value> {
        let j = inner.jobs.get(&id)?;
        Some(json!({
            "id": id,
            "kind": j.kind.name(),
            "scenario": j.file,
            "state": j.state.name(),
            "position": self.position(inner, id),
            "progress": j.progress,
            "error": j.error,
            "outputs": j.outputs.keys().collect::<Vec<_>>(),
        }))
    }

    /// Queues a job, or refuses it when the queue is full.
    fn submit(self: &Arc<Self>, spec: child::Spec) -> Result<Value, ApiError> {
        self.expire();
        let (tx, mut rx) = oneshot::channel();
        let id = {
            let mut g = self.lock();
            let waiting = g.jobs.values().filter(|j| j.state == JobState::Queued).count();
            let running = g.jobs.values().filter(|j| j.state == JobState::Running).count();
            if running + waiting >= self.cfg.slots + self.cfg.queue {
                return Err(ApiError {
                    status: StatusCode::TOO_MANY_REQUESTS,
                    msg: format!("all {} job slots are busy and {} jobs wait: try again later", self.cfg.slots, waiting),
                });
            }
            g.next += 1;
            let id = g.next;
            let job = Job {
                kind: spec.kind,
                file: spec.file.clone(),
                state: JobState::Queued,
                progress: BTreeMap::new(),
                error: None,
                outputs: BTreeMap::new(),
                finished: None,
                cancel: Some(tx),
            };
            g.jobs.insert(id, job);
            id
        };
        let jobs = self.clone();
        tokio::spawn(async move { jobs.drive(id, spec, &mut rx).await });
        let g = self.lock();
        Ok(self.status(&g, id).unwrap_or(Value::Null))
    }

    /// Waits for a slot, runs the child, records how it ended.
    async fn drive(self: Arc<Self>, id: u64, spec: child::Spec, cancel: &mut oneshot::Receiver<()>) {
        let permit = tokio::select! {
            p = self.slots.clone().acquire_owned() => p,
            _ = &mut *cancel => return self.finish(id, child::Outcome::Cancelled),
        };
        {
            let mut g = self.lock();
            match g.jobs.get_mut(&id) {
                Some(j) if j.state == JobState::Queued => j.state = JobState::Running,
                _ => return,
            }
        }
        let progress = |label: String, v: Value| {
            if let Some(j) = self.lock().jobs.get_mut(&id) {
                j.progress.insert(label, v);
            }
        };
        let outcome = child::run(&self.cfg, id, &spec, &progress, cancel).await;
        drop(permit);
        self.finish(id, outcome);
    }

    fn finish(&self, id: u64, outcome: child::Outcome) {
        let mut g = self.lock();
        let Some(j) = g.jobs.get_mut(&id) else { return };
        j.finished = Some(Instant::now());
        j.cancel = None;
        match outcome {
            child::Outcome::Done(o) => {
                j.state = JobState::Done;
                j.outputs = o;
            }
            child::Outcome::Failed(e) => {
                j.state = JobState::Failed;
                j.error = Some(e);
            }
            child::Outcome::Cancelled => j.state = JobState::Cancelled,
        }
    }
}

/// Refuses a scenario text that names files (`path`, `cdf` keys) or is not TOML.
fn check_upload(text: &str) -> Result<(), String> {
    let v: toml::Value = text.parse().map_err(|e: toml::de::Error| format!("the scenario is not TOML: {}", e.to_string().trim_end()))?;
    fn walk(v: &toml::Value, at: &str) -> Result<(), String> {
        match v {
            toml::Value::Table(t) => t.iter().try_for_each(|(k, v)| {
                let here = if at.is_empty() { k.clone() } else { format!("{at}.{k}") };
                if k == "path" || k == "cdf" {
                    return Err(format!("`{here}`: an uploaded scenario cannot name files on the server; run a bundled example that does"));
                }
                walk(v, &here)
            }),
            toml::Value::Array(a) => a.iter().enumerate().try_for_each(|(i, v)| walk(v, &format!("{at}[{i}]"))),
            _ => Ok(()),
        }
    }
    walk(&v, "")
}

/// A file name for an uploaded scenario: letters, digits, `-`, `_`, `.`, ending `.toml`.
fn upload_name(name: Option<&str>) -> Result<String, String> {
    match name {
        None => Ok("scenario.toml".into()),
        Some(n)
            if n.len() <= 64
                && n.ends_with(".toml")
                && n.len() > 5
                && !n.starts_with('.')
                && n.bytes().all(|c| c.is_ascii_alphanumeric() || b"-_.".contains(&c)) =>
        {
            Ok(n.to_string())
        }
        Some(n) => Err(format!("name `{n}`: expected a file name such as my-fabric.toml (letters, digits, - _ .; no directories)")),
    }
}

/// The job a request body asks for.
fn spec(body: &Value) -> Result<child::Spec, String> {
    let obj = body.as_object().ok_or("expected a JSON object such as {\"kind\": \"compare\", \"example\": \"roce-incast\"}")?;
    if let Some(k) = obj.keys().find(|k| !["kind", "example", "scenario", "name", "inputs"].contains(&k.as_str())) {
        return Err(format!("unknown field `{k}`; expected kind, example, or scenario (and name), or inputs"));
    }
    let kind = match obj.get("kind").and_then(Value::as_str) {
        Some("run") => Kind::Run,
        Some("compare") => Kind::Compare,
        Some("prove-roce") => return prove(Planner::Roce, obj.get("inputs")),
        Some("prove-burst") => return prove(Planner::Burst, obj.get("inputs")),
        _ => return Err("kind: expected \"run\", \"compare\", \"prove-roce\" or \"prove-burst\"".into()),
    };
    match (obj.get("example"), obj.get("scenario")) {
        (Some(e), None) => {
            let name = e.as_str().unwrap_or("");
            let (file, text) = examples::find(name).ok_or_else(|| format!("example `{name}`: expected one of {}", examples::names().join(", ")))?;
            Ok(child::Spec { kind, file: file.to_string(), scenario: text.to_string(), data: examples::DATA, args: vec![] })
        }
        (None, Some(s)) => {
            let text = s.as_str().ok_or("scenario: expected the scenario file's text (TOML) as a string")?;
            check_upload(text)?;
            let file = upload_name(obj.get("name").and_then(Value::as_str))?;
            Ok(child::Spec { kind, file, scenario: text.to_string(), data: &[], args: vec![] })
        }
        _ => Err("give either example (a bundled example's name) or scenario (a scenario file's text)".into()),
    }
}

/// A planner's `--prove` job: its inputs (as `/api/plan/roce` or `/api/burst` takes them)
/// are checked by the planner first, so bad input is a 400 at once, not a failed job.
fn prove(p: Planner, inputs: Option<&Value>) -> Result<child::Spec, String> {
    let empty = serde_json::Map::new();
    let inputs = match inputs {
        None => &empty,
        Some(Value::Object(m)) => m,
        Some(v) => return Err(format!("inputs: expected a JSON object of the planner's inputs, not {v}")),
    };
    let args = crate::api::checked_argv(p, inputs)?;
    Ok(child::Spec { kind: Kind::Prove(p), file: String::new(), scenario: String::new(), data: &[], args })
}

fn json_response(status: StatusCode, v: Value) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], v.to_string()).into_response()
}

fn no_job(id: u64) -> ApiError {
    ApiError { status: StatusCode::NOT_FOUND, msg: format!("job {id}: no such job (finished jobs are kept for a while, then forgotten)") }
}

/// `POST /api/jobs`.
pub async fn create(State(s): State<crate::State>, body: Result<Json<Value>, JsonRejection>) -> Response {
    let body = match body {
        Ok(Json(b)) => b,
        Err(r) => return ApiError { status: r.status(), msg: r.body_text() }.into_response(),
    };
    let spec = match spec(&body) {
        Ok(sp) => sp,
        Err(e) => return ApiError::input(e).into_response(),
    };
    match s.jobs.submit(spec) {
        Ok(v) => json_response(StatusCode::ACCEPTED, v),
        Err(e) => e.into_response(),
    }
}

/// `GET /api/jobs`.
pub async fn list(State(s): State<crate::State>) -> Response {
    s.jobs.expire();
    let g = s.jobs.lock();
    let all: Vec<Value> = g.jobs.keys().filter_map(|&id| s.jobs.status(&g, id)).collect();
    json_response(StatusCode::OK, Value::Array(all))
}

/// `GET /api/jobs/{id}`.
pub async fn get(State(s): State<crate::State>, Path(id): Path<u64>) -> Response {
    s.jobs.expire();
    let g = s.jobs.lock();
    match s.jobs.status(&g, id) {
        Some(v) => json_response(StatusCode::OK, v),
        None => no_job(id).into_response(),
    }
}

/// `GET /api/jobs/{id}/{output}`.
pub async fn output(State(s): State<crate::State>, Path((id, name)): Path<(u64, String)>) -> Response {
    let g = s.jobs.lock();
    let Some(j) = g.jobs.get(&id) else { return no_job(id).into_response() };
    match j.outputs.get(&name) {
        Some(o) => ([(header::CONTENT_TYPE, o.content_type)], o.bytes.clone()).into_response(),
        None => ApiError {
            status: StatusCode::NOT_FOUND,
            msg: format!("job {id} has no output `{name}` (it is {}; outputs: {})", j.state.name(), j.outputs.keys().cloned().collect::<Vec<_>>().join(", ")),
        }
        .into_response(),
    }
}

/// `DELETE /api/jobs/{id}`: cancels a waiting or running job (the child is killed), or
/// forgets a finished one.
pub async fn cancel(State(s): State<crate::State>, Path(id): Path<u64>) -> Response {
    let mut g = s.jobs.lock();
    let Some(j) = g.jobs.get_mut(&id) else { return no_job(id).into_response() };
    if j.state.finished() {
        g.jobs.remove(&id);
        return json_response(StatusCode::OK, json!({ "id": id, "state": "forgotten" }));
    }
    if let Some(tx) = j.cancel.take() {
        let _ = tx.send(());
    }
    j.state = JobState::Cancelled;
    j.finished = Some(Instant::now());
    json_response(StatusCode::OK, s.jobs.status(&g, id).unwrap_or(Value::Null))
}

/// `GET /api/examples/{name}`: the example's text.
pub async fn example(Path(name): Path<String>) -> Response {
    match examples::find(&name) {
        Some((_, text)) => ([(header::CONTENT_TYPE, "application/toml; charset=utf-8")], text).into_response(),
        None => ApiError { status: StatusCode::NOT_FOUND, msg: format!("example `{name}`: expected one of {}", examples::names().join(", ")) }.into_response(),
    }
}

/// `GET /api/examples`.
pub async fn list_examples() -> Response {
    json_response(StatusCode::OK, json!(examples::names()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uploads_name_no_files() {
        assert!(check_upload("[topology]\nkind = \"file\"\npath = \"/etc/passwd\"\n").unwrap_err().contains("`topology.path`"));
        assert!(check_upload("[[traffic]]\nkind = \"background\"\ncdf = \"../x\"\n").unwrap_err().contains("`traffic[0].cdf`"));
        assert!(check_upload("[scenario]\nname = \"x\"\n").is_ok());
        assert!(check_upload("[scenario\n").unwrap_err().contains("not TOML"));
        for bad in ["../x.toml", "a/b.toml", ".toml", "x.txt", ".hidden.toml"] {
            assert!(upload_name(Some(bad)).is_err(), "{bad}");
        }
        assert_eq!(upload_name(Some("my-fabric_2.toml")).unwrap(), "my-fabric_2.toml");
    }
}
