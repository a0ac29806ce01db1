//! `fabriclab serve`'s API, in process (`web::router` through tower's `oneshot`): every
//! planner endpoint's body equals the CLI's `--json` for the same inputs byte for byte,
//! errors carry the CLI's message, refused and unknown inputs, the Host/Origin guard, the
//! body limit, the pages and the forms; jobs: a compare run to its end whose outputs are
//! the CLI's, a scenario error at its line, cancel (the child is killed), the queue and
//! 429, the wall-clock and memory limits, progress read from the child, a child that
//! panics or dies of a signal, and finished jobs forgotten after their keep time.

use std::process::Command;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::Request;
use tower::ServiceExt;

mod common;
use common::{ROCE_100G, SONIC_SPECTRUM3_400G};

const BIN: &str = env!("CARGO_BIN_EXE_fabriclab");
const PORT: u16 = 8080;

/// Jobs run this test's fabriclab binary, in a directory of each server's own.
fn jobs_config() -> web::JobConfig {
    static SERVERS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = SERVERS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    web::JobConfig {
        exe: BIN.into(),
        slots: 1,
        queue: 1,
        wall: Duration::from_secs(300),
        keep: Duration::from_secs(300),
        memory: 4 << 30,
        dir: std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("serve-jobs-{}-{n}", std::process::id())),
    }
}

/// A server in process: one router (so one set of jobs) on one runtime. The runtime's
/// tasks (the jobs' supervisors) advance while a request or [`Server::wait`] runs.
struct Server {
    rt: tokio::runtime::Runtime,
    router: axum::Router,
}

impl Server {
    fn new(jobs: web::JobConfig) -> Server {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let router = {
            let _in = rt.enter();
            web::router(web::State::new(PORT, jobs))
        };
        Server { rt, router }
    }

    /// One request: (status, content type, body).
    fn call(&self, method: &str, uri: &str, headers: &[(&str, &str)], body: Vec<u8>) -> (u16, String, String) {
        let mut req = Request::builder().method(method).uri(uri);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let req = req.body(Body::from(body)).unwrap();
        self.rt.block_on(async {
            let resp = self.router.clone().oneshot(req).await.unwrap();
            let status = resp.status().as_u16();
            let ty = resp.headers().get("content-type").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
            let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX).await.unwrap();
            (status, ty, String::from_utf8(bytes.to_vec()).unwrap())
        })
    }

    fn post(&self, path: &str, json: &str) -> (u16, serde_json::Value) {
        let (status, _, body) = self.call("POST", path, &[LOCAL, ("content-type", "application/json")], json.as_bytes().to_vec());
        (status, serde_json::from_str(&body).unwrap_or_else(|e| panic!("{body}: {e}")))
    }

    fn get(&self, path: &str) -> serde_json::Value {
        let (status, _, body) = self.call("GET", path, &[LOCAL], vec![]);
        assert_eq!(status, 200, "{path}: {body}");
        serde_json::from_str(&body).unwrap()
    }

    fn wait(&self, d: Duration) {
        self.rt.block_on(async { tokio::time::sleep(d).await });
    }

    /// Polls job `id` until `done(status)` or `limit` passes.
    fn until(&self, id: u64, limit: Duration, done: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
        let t0 = Instant::now();
        loop {
            let v = self.get(&format!("/api/jobs/{id}"));
            if done(&v) {
                return v;
            }
            assert!(t0.elapsed() < limit, "job {id} still {v} after {limit:?}");
            self.wait(Duration::from_millis(50));
        }
    }
}

/// One request to a fresh server.
fn call(method: &str, uri: &str, headers: &[(&str, &str)], body: Vec<u8>) -> (u16, String, String) {
    Server::new(jobs_config()).call(method, uri, headers, body)
}

const LOCAL: (&str, &str) = ("host", "127.0.0.1:8080");

fn post(path: &str, json: &str) -> (u16, String, String) {
    call("POST", path, &[LOCAL, ("content-type", "application/json")], json.as_bytes().to_vec())
}

/// The CLI's (exit code, stdout, stderr).
fn cli(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(BIN).args(args).output().expect("runs");
    (o.status.code().unwrap_or(-1), String::from_utf8(o.stdout).unwrap(), String::from_utf8(o.stderr).unwrap())
}

/// `["--mtu", "4096B", "--explain"]` as the API's JSON object `{"mtu":"4096B","explain":true}`.
fn as_json(args: &[&str]) -> String {
    let mut m = serde_json::Map::new();
    let mut i = 0;
    while i < args.len() {
        let k = args[i].trim_start_matches("--");
        match args.get(i + 1) {
            Some(v) if !v.starts_with("--") => {
                m.insert(k.into(), serde_json::Value::String(v.to_string()));
                i += 2;
            }
            _ => {
                m.insert(k.into(), serde_json::Value::Bool(true));
                i += 1;
            }
        }
    }
    serde_json::Value::Object(m).to_string()
}

const BURST: &[&str] = &["--senders", "4", "--burst", "64KB", "--in-speed", "100Gbps", "--out-speed", "100Gbps", "--buffer", "16MiB"];

/// (API path, CLI subcommand words, inputs).
fn cases() -> Vec<(&'static str, Vec<&'static str>, Vec<&'static str>)> {
    let with = |base: &[&'static str], extra: &[&'static str]| base.iter().chain(extra).copied().collect::<Vec<_>>();
    vec![
        ("/api/plan/roce", vec!["plan", "roce"], ROCE_100G.to_vec()),
        (
            "/api/plan/roce",
            vec!["plan", "roce"],
            with(ROCE_100G, &["--explain", "--pfc-watchdog", "off", "--ecn-kmin", "100KB", "--ecn-kmax", "400KB", "--ecn-pmax", "0.2"]),
        ),
        ("/api/plan/roce", vec!["plan", "roce"], with(SONIC_SPECTRUM3_400G, &["--over-subscribe-ratio", "2", "--explain"])),
        ("/api/design", vec!["design"], vec!["--superpod", "h100", "--sus", "4"]),
        ("/api/design", vec!["design"], vec!["--superpod", "b200", "--sus", "16", "--oversubscription", "1.5"]),
        (
            "/api/design",
            vec!["design"],
            vec!["--gpus", "1024", "--nics-per-node", "8", "--speed", "400Gbps", "--radix", "64", "--rail-optimised", "--su-nodes", "32"],
        ),
        ("/api/burst", vec!["burst"], with(BURST, &["--explain"])),
        (
            "/api/burst",
            vec!["burst"],
            vec![
                "--senders",
                "16",
                "--burst",
                "2MB",
                "--in-speed",
                "100Gbps",
                "--out-speed",
                "400Gbps",
                "--buffer",
                "128KiB",
                "--class",
                "lossy",
                "--dynamic-th",
                "-2",
            ],
        ),
    ]
}

#[test]
fn planner_bodies_are_the_clis_json_byte_for_byte() {
    for (path, cmd, args) in cases() {
        let full: Vec<&str> = cmd.iter().chain(&args).chain(&["--json"]).copied().collect();
        let (code, out, err) = cli(&full);
        assert_eq!(code, 0, "{full:?}: {err}");
        let (status, ty, body) = post(path, &as_json(&args));
        assert_eq!((status, ty.as_str()), (200, "application/json"), "{path} {args:?}: {body}");
        assert!(body == out, "{path} {args:?}: the API's body differs from `fabriclab {}`", full.join(" "));
        // The same as a query string.
        let q: Vec<String> = as_json(&args)
            .parse::<serde_json::Value>()
            .unwrap()
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| match v {
                serde_json::Value::Bool(_) => k.clone(),
                v => format!("{k}={}", v.as_str().unwrap().replace(':', "%3A")),
            })
            .collect();
        let (status, _, body) = call("GET", &format!("{path}?{}", q.join("&")), &[LOCAL], vec![]);
        assert_eq!(status, 200, "{path}?{}: {body}", q.join("&"));
        assert!(body == out, "GET {path}: the API's body differs from the CLI's");
    }
}

#[test]
fn errors_carry_the_clis_message() {
    let bad: Vec<(&str, Vec<&str>, Vec<&str>)> = vec![
        ("/api/design", vec!["design"], vec!["--gpus", "64", "--radix", "63"]),
        ("/api/design", vec!["design"], vec!["--superpod", "h100"]),
        ("/api/design", vec!["design"], vec!["--gpus", "64", "--oversubscription", "lots"]),
        ("/api/burst", vec!["burst"], vec!["--senders", "4", "--burst", "64KB", "--in-speed", "100", "--out-speed", "100Gbps", "--buffer", "1MiB"]),
        ("/api/burst", vec!["burst"], BURST.iter().chain(&["--class", "best-effort"]).copied().collect()),
        ("/api/plan/roce", vec!["plan", "roce"], vec!["--mtu", "4096B"]),
        ("/api/plan/roce", vec!["plan", "roce"], ROCE_100G.iter().chain(&["--model", "cisco"]).copied().collect()),
        ("/api/plan/roce", vec!["plan", "roce"], ROCE_100G.iter().chain(&["--ecn-kmin", "100KB"]).copied().collect()),
    ];
    for (path, cmd, args) in bad {
        let full: Vec<&str> = cmd.iter().chain(&args).chain(&["--json"]).copied().collect();
        let (code, _, err) = cli(&full);
        assert_eq!(code, 2, "{full:?}");
        let (status, _, body) = post(path, &as_json(&args));
        assert_eq!(status, 400, "{path} {args:?}: {body}");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(format!("error: {}\n", v["error"].as_str().unwrap()), err, "{path} {args:?}");
    }
}

#[test]
fn refused_unknown_and_malformed_inputs_are_json_errors() {
    for (path, json, expect) in [
        ("/api/plan/roce", r#"{"config": "/etc/passwd"}"#, "--config reads a file"),
        ("/api/design", r#"{"gpus": 16, "emit-scenario": "/tmp/x.toml"}"#, "--emit-scenario writes a file"),
        ("/api/burst", r#"{"prove": true}"#, "--prove simulates"),
        ("/api/design", r#"{"gpus": 16, "radixx": 8}"#, "unknown input `radixx`"),
        ("/api/design", r#"{"gpus": [16]}"#, "--gpus: expected a string, number or boolean"),
        ("/api/design", r#"{"gpus": 16, "explain": "yes"}"#, "--explain: a switch"),
        ("/api/design", r#"[1, 2]"#, "expected a JSON object"),
        ("/api/design", r#"{"gpus": "#, "Failed to parse"),
        ("/api/burst", r#"{"senders": "x"}"#, "invalid value 'x' for '--senders <N>'"),
        ("/api/burst", r#"{"senders": 4}"#, "the following required arguments were not provided"),
    ] {
        let (status, ty, body) = post(path, json);
        assert!((400..500).contains(&status), "{path} {json}: {status} {body}");
        assert_eq!(ty, "application/json", "{path} {json}");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{body}: {e}"));
        assert!(v["error"].as_str().unwrap().contains(expect), "{path} {json}: {body}");
    }
    let (status, _, body) = call("POST", "/api/design", &[LOCAL], b"{}".to_vec());
    assert_eq!(status, 415, "{body}");
    let (status, _, body) = call("GET", "/../etc/passwd", &[LOCAL], vec![]);
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("no such page"), "{body}");
}

#[test]
fn host_origin_and_fetch_site_are_checked() {
    let ok = |h: &[(&str, &str)]| call("GET", "/api/forms", h, vec![]).0;
    assert_eq!(ok(&[LOCAL]), 200);
    assert_eq!(ok(&[("host", "localhost:8080")]), 200);
    assert_eq!(ok(&[("host", "[::1]:8080"), ("origin", "http://[::1]:8080")]), 200);
    assert_eq!(ok(&[LOCAL, ("origin", "http://127.0.0.1:8080"), ("sec-fetch-site", "same-origin")]), 200);
    for h in [
        vec![],
        vec![("host", "evil.example:8080")],
        vec![("host", "127.0.0.1:9090")],
        vec![LOCAL, ("origin", "http://evil.example")],
        vec![LOCAL, ("origin", "http://localhost:8080")],
        vec![LOCAL, ("origin", "null")],
        vec![LOCAL, ("sec-fetch-site", "cross-site")],
    ] {
        let (status, _, body) = call("POST", "/api/design", &[h.as_slice(), &[("content-type", "application/json")]].concat(), br#"{"gpus":16}"#.to_vec());
        assert_eq!(status, 403, "{h:?}: {body}");
        assert!(body.contains("\"error\""), "{body}");
    }
}

#[test]
fn bodies_over_the_limit_are_refused() {
    let big = format!("{{\"gpus\": \"{}\"}}", "9".repeat(web::BODY_LIMIT));
    let (status, ty, body) = post("/api/design", &big);
    assert_eq!((status, ty.as_str()), (413, "application/json"), "{body}");
    assert!(body.contains("length limit"), "{body}");
}

#[test]
fn pages_are_served_and_load_nothing_from_the_network() {
    for path in ["/", "/roce", "/design", "/burst", "/app.js", "/app.css"] {
        let (status, _, body) = call("GET", path, &[LOCAL], vec![]);
        assert_eq!(status, 200, "{path}");
        for remote in ["src=\"http", "href=\"http", "src='http", "url(http", "import(\"http", "fetch(\"http"] {
            assert!(!body.contains(remote), "{path} loads something from the network: {remote}");
        }
    }
}

#[test]
fn forms_come_from_the_clis_flags() {
    let (status, _, body) = call("GET", "/api/forms", &[LOCAL], vec![]);
    assert_eq!(status, 200);
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let field = |p: &str, name: &str| v[p].as_array().unwrap().iter().find(|f| f["name"] == name).cloned();
    let cable = field("roce", "host-leaf-cable").unwrap();
    assert_eq!(cable["value"], "LENGTH");
    let (_, help, _) = cli(&["plan", "roce", "--help"]);
    assert!(help.contains(cable["help"].as_str().unwrap()), "{cable}");
    assert_eq!(field("burst", "cell").unwrap()["default"], "256B");
    assert_eq!(field("burst", "senders").unwrap()["required"], true);
    assert_eq!(field("design", "explain").unwrap()["switch"], true);
    for refused in ["config", "prove", "json", "emit-scenario"] {
        for p in ["roce", "design", "burst"] {
            assert!(field(p, refused).is_none(), "{p} {refused}");
        }
    }
}

fn id(v: &serde_json::Value) -> u64 {
    v["id"].as_u64().unwrap_or_else(|| panic!("no id: {v}"))
}

fn finished(v: &serde_json::Value) -> bool {
    ["done", "failed", "cancelled"].contains(&v["state"].as_str().unwrap())
}

#[test]
fn a_compare_job_runs_to_its_end_with_the_clis_outputs() {
    let s = Server::new(jobs_config());
    let (status, v) = s.post("/api/jobs", r#"{"kind": "compare", "example": "roce-incast"}"#);
    assert_eq!(status, 202, "{v}");
    let v = s.until(id(&v), Duration::from_secs(120), finished);
    assert_eq!(v["state"], "done", "{v}");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    // The job writes the HTML report too, and sampling for it counts events: so the same
    // flags.
    let html_path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("serve-compare.html");
    let (code, out, err) = cli(&["compare", root.join("examples/roce-incast.toml").to_str().unwrap(), "--json", "--html", html_path.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let (status, ty, body) = s.call("GET", &format!("/api/jobs/{}/result.json", id(&v)), &[LOCAL], vec![]);
    assert_eq!((status, ty.as_str()), (200, "application/json"));
    assert!(body == out, "the job's result.json differs from `fabriclab compare examples/roce-incast.toml --json --html ..`");
    let (status, ty, html) = s.call("GET", &format!("/api/jobs/{}/report.html", id(&v)), &[LOCAL], vec![]);
    assert_eq!((status, ty.as_str()), (200, "text/html; charset=utf-8"));
    assert!(html.contains("RoCEv2") && html.contains("InfiniBand") && html.len() > 10_000, "{}", &html[..200.min(html.len())]);
    let (_, _, toml) = s.call("GET", &format!("/api/jobs/{}/roce-incast.toml", id(&v)), &[LOCAL], vec![]);
    assert!(toml.contains("name = \"roce-incast\""));
    let (status, _, body) = s.call("GET", &format!("/api/jobs/{}/../../etc/passwd", id(&v)), &[LOCAL], vec![]);
    assert_eq!(status, 404, "{body}");
}

#[test]
fn a_run_job_has_the_csvs_and_a_bad_scenario_fails_at_its_line() {
    let s = Server::new(jobs_config());
    let (_, v) = s.post("/api/jobs", r#"{"kind": "run", "example": "roce-incast"}"#);
    let v = s.until(id(&v), Duration::from_secs(120), finished);
    assert_eq!(v["state"], "done", "{v}");
    let outputs: Vec<&str> = v["outputs"].as_array().unwrap().iter().map(|o| o.as_str().unwrap()).collect();
    assert!(outputs.iter().any(|o| o.ends_with(".csv")), "{outputs:?}");
    // A scenario error: the CLI's message, naming the file and line.
    let bad = "[scenario]\nname = \"x\"\nseed = 1\n\n[topology]\nkind = \"leaf-spine\"\nleaves = \"many\"\n";
    std::fs::create_dir_all(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("bad.toml");
    std::fs::write(&path, bad).unwrap();
    let (code, _, err) = cli(&["run", path.to_str().unwrap(), "--json"]);
    assert_eq!(code, 2);
    let (status, v) = s.post("/api/jobs", &serde_json::json!({"kind": "run", "scenario": bad, "name": "bad.toml"}).to_string());
    assert_eq!(status, 202, "{v}");
    let v = s.until(id(&v), Duration::from_secs(60), finished);
    assert_eq!(v["state"], "failed", "{v}");
    let msg = v["error"].as_str().unwrap();
    assert!(msg.starts_with("bad.toml:5: topology"), "{msg}");
    assert!(err.contains(msg.trim_start_matches("bad.toml")), "job: {msg}\nCLI: {err}");
    // Refused before queueing.
    for (body, expect) in [
        (r#"{"kind": "run", "scenario": "[topology]\nkind = \"file\"\npath = \"/etc/passwd\"\n"}"#, "`topology.path`: an uploaded scenario cannot name files"),
        (r#"{"kind": "run", "example": "../../etc/passwd"}"#, "example `../../etc/passwd`: expected one of"),
        (r#"{"kind": "sweep", "example": "roce-incast"}"#, "kind: expected"),
        (r#"{"kind": "run", "scenario": "x = 1", "name": "../x.toml"}"#, "name `../x.toml`"),
        (r#"{"kind": "run"}"#, "give either example"),
    ] {
        let (status, v) = s.post("/api/jobs", body);
        assert_eq!(status, 400, "{body}: {v}");
        assert!(v["error"].as_str().unwrap().contains(expect), "{body}: {v}");
    }
}

#[test]
fn cancel_kills_the_child_and_the_queue_is_bounded() {
    let s = Server::new(jobs_config());
    let long = r#"{"kind": "compare", "example": "allreduce-compare"}"#;
    let (_, a) = s.post("/api/jobs", long);
    assert!(a["position"].is_null(), "a free slot: no queue position: {a}");
    let a = s.until(id(&a), Duration::from_secs(60), |v| v["progress"].as_object().is_some_and(|p| p.len() == 2));
    assert_eq!(a["state"], "running");
    for side in ["InfiniBand", "RoCEv2"] {
        let f = a["progress"][side]["fraction"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&f), "{a}");
    }
    let (status, b) = s.post("/api/jobs", long);
    assert_eq!((status, b["state"].as_str(), b["position"].as_u64()), (202, Some("queued"), Some(1)), "{b}");
    let (status, c) = s.post("/api/jobs", long);
    assert_eq!(status, 429, "{c}");
    assert!(c["error"].as_str().unwrap().contains("busy"), "{c}");
    // Cancel the running job: it ends at once (killed), and the queued one starts.
    let (status, _, body) = s.call("DELETE", &format!("/api/jobs/{}", id(&a)), &[LOCAL], vec![]);
    assert_eq!(status, 200, "{body}");
    let t0 = Instant::now();
    s.until(id(&a), Duration::from_secs(10), |v| v["state"] == "cancelled");
    s.until(id(&b), Duration::from_secs(10), |v| v["state"] == "running");
    assert!(t0.elapsed() < Duration::from_secs(10));
    let (status, _, _) = s.call("DELETE", &format!("/api/jobs/{}", id(&b)), &[LOCAL], vec![]);
    assert_eq!(status, 200);
    s.until(id(&b), Duration::from_secs(10), |v| v["state"] == "cancelled");
    // The server goes on.
    let (status, v) = s.post("/api/jobs", r#"{"kind": "compare", "example": "roce-incast"}"#);
    assert_eq!(status, 202, "{v}");
    assert_eq!(s.until(id(&v), Duration::from_secs(120), finished)["state"], "done");
    // A forgotten job is gone.
    let (status, _, _) = s.call("DELETE", &format!("/api/jobs/{}", id(&v)), &[LOCAL], vec![]);
    assert_eq!(status, 200);
    let (status, _, body) = s.call("GET", &format!("/api/jobs/{}", id(&v)), &[LOCAL], vec![]);
    assert_eq!(status, 404, "{body}");
}

#[test]
fn the_wall_clock_and_memory_limits_fail_a_job_and_the_server_goes_on() {
    let s = Server::new(web::JobConfig { wall: Duration::from_secs(1), ..jobs_config() });
    let (_, v) = s.post("/api/jobs", r#"{"kind": "compare", "example": "allreduce-compare"}"#);
    let v = s.until(id(&v), Duration::from_secs(30), finished);
    assert_eq!(v["state"], "failed", "{v}");
    assert!(v["error"].as_str().unwrap().contains("wall-clock limit of 1 s"), "{v}");
    // The CLI's refusal by memory estimate, before the child builds anything.
    let s = Server::new(web::JobConfig { memory: 1 << 20, ..jobs_config() });
    let (_, v) = s.post("/api/jobs", r#"{"kind": "run", "example": "roce-incast"}"#);
    let v = s.until(id(&v), Duration::from_secs(30), finished);
    assert_eq!(v["state"], "failed", "{v}");
    let msg = v["error"].as_str().unwrap();
    assert!(msg.contains("above the limit of") && msg.contains("--max-memory"), "{msg}");
    let (status, v) = s.post("/api/jobs", r#"{"kind": "run", "example": "roce-incast"}"#);
    assert_eq!(status, 202, "{v}");
}

#[test]
fn examples_are_listed() {
    let v = Server::new(jobs_config()).get("/api/examples");
    let mut names: Vec<&str> = v.as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    names.sort();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut files: Vec<String> =
        std::fs::read_dir(root).unwrap().filter_map(|e| e.unwrap().file_name().into_string().ok()?.strip_suffix(".toml").map(String::from)).collect();
    files.sort();
    assert_eq!(names, files, "every file in examples/ is bundled, and nothing else");
}

#[test]
fn a_prove_job_is_the_clis_prove() {
    let s = Server::new(jobs_config());
    let args: Vec<&str> = ["burst"].into_iter().chain(BURST.iter().copied()).chain(["--json", "--prove"]).collect();
    let (code, out, err) = cli(&args);
    assert_eq!(code, 0, "{err}");
    let (status, v) = s.post("/api/jobs", &format!(r#"{{"kind": "prove-burst", "inputs": {}}}"#, as_json(BURST)));
    assert_eq!(status, 202, "{v}");
    let v = s.until(id(&v), Duration::from_secs(120), finished);
    assert_eq!(v["state"], "done", "{v}");
    let (_, _, body) = s.call("GET", &format!("/api/jobs/{}/result.json", id(&v)), &[LOCAL], vec![]);
    assert!(body == out, "the prove job's result differs from `fabriclab burst .. --json --prove`");
    // Bad inputs are refused at once, with the planner's message.
    let (status, v) = s.post("/api/jobs", r#"{"kind": "prove-roce", "inputs": {"mtu": "4096B"}}"#);
    assert_eq!(status, 400, "{v}");
    assert!(v["error"].as_str().unwrap().contains("--incast"), "{v}");
}

/// A stand-in for the simulator that fails the way a bug would: `script` is its body.
fn fake_simulator(name: &str, script: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(dir).unwrap();
    let p = dir.join(format!("fake-{name}-{}", std::process::id()));
    std::fs::write(&p, format!("#!/bin/sh\n{script}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

#[test]
fn a_child_that_panics_or_is_killed_is_a_failed_job_and_the_server_goes_on() {
    for (name, script, expect) in [
        ("panic", "echo \"thread 'main' panicked at crates/fabric/src/sim/mod.rs:1:1:\" >&2; exit 101", "the simulator panicked"),
        ("segv", "kill -SEGV $$", "killed by signal 11"),
    ] {
        let s = Server::new(web::JobConfig { exe: fake_simulator(name, script), ..jobs_config() });
        // A script just written may be "busy" while another test thread forks: try again.
        let mut v = serde_json::Value::Null;
        for _ in 0..5 {
            let (_, j) = s.post("/api/jobs", r#"{"kind": "run", "example": "roce-incast"}"#);
            v = s.until(id(&j), Duration::from_secs(30), finished);
            if !v["error"].as_str().unwrap_or("").contains("busy") {
                break;
            }
            s.wait(Duration::from_millis(100));
        }
        assert_eq!(v["state"], "failed", "{v}");
        assert!(v["error"].as_str().unwrap().contains(expect), "{v}");
        assert!(!s.get("/api/examples").as_array().unwrap().is_empty(), "the server answers after a failed job");
    }
}

#[test]
fn finished_jobs_are_forgotten_after_the_keep_time() {
    let s = Server::new(web::JobConfig { keep: Duration::from_millis(300), ..jobs_config() });
    let (_, v) = s.post("/api/jobs", r#"{"kind": "compare", "example": "roce-incast"}"#);
    let done = s.until(id(&v), Duration::from_secs(120), finished);
    assert_eq!(done["state"], "done", "{done}");
    s.wait(Duration::from_millis(400));
    let (status, _, body) = s.call("GET", &format!("/api/jobs/{}", id(&v)), &[LOCAL], vec![]);
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("forgotten"), "{body}");
}
