//! `fabriclab serve`: a local web app over the planners (and, as jobs, the simulator) with
//! a JSON API behind every page. The CLI calls [`serve`]; this is the only crate that
//! knows about tokio or HTTP, and the simulator and planners stay synchronous.
//!
//! * `api.rs`: `/api/plan/roce`, `/api/design`, `/api/burst`: the planners' flags as a
//!   JSON object (or a query string) in, the CLI's `--json` bytes out, through the same
//!   `plan::args` code the CLI runs.
//! * `forms.rs`: `/api/forms`: each planner flag's name, value, default and help, read
//!   from the clap structs the CLI parses (one source for both).
//! * `guard.rs`: the Host and Origin checks (DNS rebinding, cross-site requests).
//! * `jobs/`: `/api/jobs`: `run` and `compare` as child processes, queued, limited,
//!   cancellable; `examples.rs`: the bundled examples they may name.
//! * `error.rs`: every error as `{"error": "..."}` with the CLI's message.
//! * `assets.rs`: the pages, embedded in the binary; nothing is loaded from the network.
//!
//! Safe by construction: request bodies are limited to [`BODY_LIMIT`]; no request names a
//! file (the planners' `--config` and `--emit-scenario` are refused); a panic in a
//! planner becomes a JSON error, never a dropped connection or a stack trace.
//!
//! Left out (issue 20, not built yet): the scenario and compare page, `--prove` from the
//! pages.

mod api;
mod assets;
mod error;
mod examples;
mod forms;
mod guard;
mod jobs;

pub use jobs::JobConfig;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::routing::get;
use axum::Router;

/// The largest request body accepted: 1 MiB (a scenario file is a few KB; the planners'
/// inputs far less).
pub const BODY_LIMIT: usize = 1 << 20;

/// Where and how to serve.
#[derive(Clone, Debug)]
pub struct Options {
    pub bind: IpAddr,
    /// 0 picks a free port.
    pub port: u16,
    /// Open the app in the desktop's browser (`xdg-open`).
    pub open: bool,
}

/// What the handlers share: the port the Host and Origin checks expect, and the jobs.
#[derive(Clone)]
pub struct State {
    pub port: u16,
    jobs: Arc<jobs::Jobs>,
}

impl State {
    pub fn new(port: u16, jobs: JobConfig) -> State {
        State { port, jobs: Arc::new(jobs::Jobs::new(jobs)) }
    }
}

/// The app: pages, API, the guard and the body limit.
pub fn router(state: State) -> Router {
    Router::new()
        .merge(assets::routes())
        .route("/api/forms", get(forms::all))
        .route("/api/plan/roce", get(api::roce_query).post(api::roce_json))
        .route("/api/design", get(api::design_query).post(api::design_json))
        .route("/api/burst", get(api::burst_query).post(api::burst_json))
        .route("/api/design/scenario", axum::routing::post(api::design_scenario))
        .route("/api/examples", get(jobs::list_examples))
        .route("/api/examples/{name}", get(jobs::example))
        .route("/api/jobs", get(jobs::list).post(jobs::create))
        .route("/api/jobs/{id}", get(jobs::get).delete(jobs::cancel))
        .route("/api/jobs/{id}/{output}", get(jobs::output))
        .fallback(error::not_found)
        .layer(axum::middleware::from_fn_with_state(state.clone(), guard::check))
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .with_state(state)
}

/// Serves until the process is stopped. Binding anywhere but a loopback address prints a
/// warning: the app has no authentication.
pub fn serve(o: &Options) -> Result<(), String> {
    if !o.bind.is_loopback() {
        eprintln!(
            "warning: serving on {} makes the app (which has no login) reachable from other machines; \
             the default, 127.0.0.1, keeps it to this one",
            o.bind
        );
    }
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| format!("cannot start the server: {e}"))?;
    rt.block_on(async {
        let addr = SocketAddr::new(o.bind, o.port);
        let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| format!("--bind {} --port {}: {e}", o.bind, o.port))?;
        let local = listener.local_addr().map_err(|e| e.to_string())?;
        let url =
            format!("http://{}/", if o.bind.is_unspecified() || o.bind.is_loopback() { format!("127.0.0.1:{}", local.port()) } else { local.to_string() });
        eprintln!("fabriclab serve: {url} (Ctrl-C stops it)");
        if o.open {
            open_browser(&url);
        }
        let jobs = JobConfig::for_this_machine()?;
        let dir = jobs.dir.clone();
        let served = axum::serve(listener, router(State::new(local.port(), jobs))).await.map_err(|e| format!("server: {e}"));
        let _ = std::fs::remove_dir_all(dir);
        served
    })
}

/// Best effort: the page's address is printed either way.
fn open_browser(url: &str) {
    match std::process::Command::new("xdg-open").arg(url).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn() {
        Ok(_) => {}
        Err(e) => eprintln!("--open: cannot start xdg-open ({e}); open {url} yourself"),
    }
}
