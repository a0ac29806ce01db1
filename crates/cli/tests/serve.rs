//! `fabriclab serve`'s API, in process (`web::router` through tower's `oneshot`): every
//! planner endpoint's body equals the CLI's `--json` for the same inputs byte for byte,
//! errors carry the CLI's message, refused and unknown inputs, the Host/Origin guard, the
//! body limit, the pages and the forms.

use std::process::Command;

use axum::body::Body;
use axum::http::Request;
use tower::ServiceExt;

const BIN: &str = env!("CARGO_BIN_EXE_fabriclab");
const PORT: u16 = 8080;

/// One request: (status, content type, body).
fn call(method: &str, uri: &str, headers: &[(&str, &str)], body: Vec<u8>) -> (u16, String, String) {
    let mut req = Request::builder().method(method).uri(uri);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let req = req.body(Body::from(body)).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let resp = web::router(web::State { port: PORT }).oneshot(req).await.unwrap();
        let status = resp.status().as_u16();
        let ty = resp.headers().get("content-type").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
        let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX).await.unwrap();
        (status, ty, String::from_utf8(bytes.to_vec()).unwrap())
    })
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

const ROCE: &[&str] = &[
    "--mtu",
    "4096B",
    "--incast",
    "8",
    "--leaves",
    "4",
    "--spines",
    "2",
    "--hosts-per-leaf",
    "8",
    "--host-leaf-speed",
    "100Gbps",
    "--host-leaf-cable",
    "3m",
    "--leaf-spine-speed",
    "100Gbps",
    "--leaf-spine-cable",
    "100m",
    "--buffer-total",
    "16MiB",
    "--cell",
    "256B",
];
const SONIC: &[&str] = &[
    "--model",
    "sonic",
    "--asic",
    "spectrum-3",
    "--mtu",
    "4096B",
    "--incast",
    "4",
    "--leaves",
    "2",
    "--spines",
    "2",
    "--hosts-per-leaf",
    "4",
    "--host-leaf-speed",
    "400Gbps",
    "--host-leaf-cable",
    "5m",
    "--leaf-spine-speed",
    "400Gbps",
    "--leaf-spine-cable",
    "40m",
    "--buffer-total",
    "40MiB",
    "--lossless-priorities",
    "2",
    "--lanes",
    "8",
    "--over-subscribe-ratio",
    "2",
];
const BURST: &[&str] = &["--senders", "4", "--burst", "64KB", "--in-speed", "100Gbps", "--out-speed", "100Gbps", "--buffer", "16MiB"];

/// (API path, CLI subcommand words, inputs).
fn cases() -> Vec<(&'static str, Vec<&'static str>, Vec<&'static str>)> {
    let with = |base: &[&'static str], extra: &[&'static str]| base.iter().chain(extra).copied().collect::<Vec<_>>();
    vec![
        ("/api/plan/roce", vec!["plan", "roce"], ROCE.to_vec()),
        (
            "/api/plan/roce",
            vec!["plan", "roce"],
            with(ROCE, &["--explain", "--pfc-watchdog", "off", "--ecn-kmin", "100KB", "--ecn-kmax", "400KB", "--ecn-pmax", "0.2"]),
        ),
        ("/api/plan/roce", vec!["plan", "roce"], with(SONIC, &["--explain"])),
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
        ("/api/plan/roce", vec!["plan", "roce"], ROCE.iter().chain(&["--model", "cisco"]).copied().collect()),
        ("/api/plan/roce", vec!["plan", "roce"], ROCE.iter().chain(&["--ecn-kmin", "100KB"]).copied().collect()),
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
