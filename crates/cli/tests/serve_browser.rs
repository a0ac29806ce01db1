//! `fabriclab serve` in a real browser: Debian's Chromium driven through chromedriver
//! (WebDriver, the fantoccini client). The planner form's headroom equals `plan roce
//! --json` for the same inputs; changing the cable length updates it without a reload; a
//! bad value shows the CLI's message at its field; the designer draws its Clos and the
//! burst planner its plot, with the simulated peak after "Prove it"; a small compare runs to the end with both fabrics' charts
//! drawn in the report; a long job is cancelled.
//!
//! Without chromium and chromedriver the test says how to install them and passes, except
//! in CI (`CI=true`), where it fails. With `FABRICLAB_SCREENSHOTS=DIR` it also saves the
//! README's screenshots there.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};

mod common;
use common::{without, ROCE_100G};

const BIN: &str = env!("CARGO_BIN_EXE_fabriclab");

/// The named program on PATH.
fn on_path(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    names.iter().flat_map(|n| std::env::split_paths(&path).map(move |d| d.join(n))).find(|p| p.is_file())
}

/// (chromium, chromedriver), or `None` with a message where they are missing and this is
/// not CI.
fn tools() -> Option<(PathBuf, PathBuf)> {
    let browser = on_path(&["chromium", "chromium-browser", "google-chrome"]);
    let driver = on_path(&["chromedriver"]);
    match (browser, driver) {
        (Some(b), Some(d)) => Some((b, d)),
        _ if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("no chromium or chromedriver on PATH; install them: apt-get install chromium chromium-driver")
        }
        _ => {
            eprintln!("skipping the browser test: no chromium or chromedriver on PATH (install them: apt-get install chromium chromium-driver)");
            None
        }
    }
}

/// A child process killed when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `fabriclab serve --port 0` and the port it chose (from its first line on stderr).
fn serve() -> (Killed, u16) {
    let mut child = Command::new(BIN).args(["serve", "--port", "0"]).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().expect("starts");
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap()).read_line(&mut line).unwrap();
    let port =
        line.split("127.0.0.1:").nth(1).and_then(|r| r.split('/').next()).and_then(|p| p.parse().ok()).unwrap_or_else(|| panic!("no address in `{line}`"));
    (Killed(child), port)
}

/// chromedriver on a free port.
fn chromedriver(driver: &Path) -> (Killed, u16) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new(driver)
        .arg(format!("--port={port}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromedriver starts");
    let t0 = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(t0.elapsed() < Duration::from_secs(20), "chromedriver did not listen on {port}");
        std::thread::sleep(Duration::from_millis(100));
    }
    (Killed(child), port)
}

/// The CLI's `plan roce --json` headroom of the host-leaf tier for these flags.
fn cli_headroom(args: &[String]) -> u64 {
    let o = Command::new(BIN).args(["plan", "roce"]).args(args).arg("--json").output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["plan"]["tiers"][0]["headroom_bytes"].as_u64().unwrap()
}

/// Waits until `script` (a JS expression) is truthy, and returns its value.
async fn until(c: &Client, script: &str, limit: Duration) -> Value {
    let t0 = Instant::now();
    loop {
        let v = c.execute(&format!("return ({script});"), vec![]).await.unwrap();
        if !matches!(v, Value::Null | Value::Bool(false)) && v != json!("") && v != json!(0) {
            return v;
        }
        assert!(t0.elapsed() < limit, "still not true after {limit:?}: {script}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn shot(c: &Client, name: &str) {
    if let Some(dir) = std::env::var_os("FABRICLAB_SCREENSHOTS") {
        let png = c.screenshot().await.unwrap();
        std::fs::write(Path::new(&dir).join(format!("{name}.png")), png).unwrap();
    }
}

/// Sets a form input as a person would: clear it, type.
async fn type_into(c: &Client, name: &str, text: &str) {
    let e = c.find(Locator::Id(&format!("in-{name}"))).await.unwrap();
    e.clear().await.unwrap();
    e.send_keys(text).await.unwrap();
}

async fn planners(c: &Client, base: &str) {
    // The RoCE planner: its headroom is the CLI's; the cable length updates it in place.
    c.goto(&format!("{base}/roce")).await.unwrap();
    let shown =
        until(c, "document.getElementById('headroom-host-leaf') && document.getElementById('headroom-host-leaf').textContent", Duration::from_secs(20)).await;
    let flags = |speed: &str, cable: &str| {
        without(ROCE_100G, "--host-leaf")
            .iter()
            .chain(&["--host-leaf-speed", speed, "--host-leaf-cable", cable])
            .map(|s| s.to_string())
            .collect::<Vec<String>>()
    };
    let with = |cable: &str| flags("100Gbps", cable);
    assert_eq!(shown.as_str().unwrap().parse::<u64>().unwrap(), cli_headroom(&with("3m")));
    shot(c, "roce").await;
    c.execute("window.__same_page = true; return 0;", vec![]).await.unwrap();
    type_into(c, "host-leaf-cable", "300m").await;
    let want = cli_headroom(&with("300m"));
    assert_ne!(want, cli_headroom(&with("3m")));
    until(
        c,
        &format!("document.getElementById('headroom-host-leaf') && document.getElementById('headroom-host-leaf').textContent === '{want}'"),
        Duration::from_secs(20),
    )
    .await;
    assert_eq!(c.execute("return window.__same_page === true;", vec![]).await.unwrap(), json!(true), "the page reloaded");
    // A bad value: the CLI's message, at its field.
    type_into(c, "host-leaf-speed", "fast").await;
    let msg = until(
        c,
        "document.querySelector('#field-host-leaf-speed.bad') && document.getElementById('err-host-leaf-speed').textContent.includes('fast') && document.getElementById('err-host-leaf-speed').textContent",
        Duration::from_secs(20),
    )
    .await;
    let o = Command::new(BIN).args(["plan", "roce"]).args(flags("fast", "300m")).arg("--json").output().unwrap();
    assert_eq!(format!("error: {}\n", msg.as_str().unwrap()), String::from_utf8_lossy(&o.stderr));
    // The designer's drawing and the burst plot.
    c.goto(&format!("{base}/design")).await.unwrap();
    until(c, "document.querySelectorAll('#clos rect').length", Duration::from_secs(20)).await;
    shot(c, "design").await;
    c.goto(&format!("{base}/burst")).await.unwrap();
    until(c, "document.querySelector('#occupancy polyline') && document.getElementById('pause')", Duration::from_secs(20)).await;
    c.find(Locator::Id("prove")).await.unwrap().click().await.unwrap();
    // Prove it: the simulated queue over time drawn on the same axes, with the pause.
    let points = until(
        c,
        "document.getElementById('simulated') && document.getElementById('simulated').getAttribute('points').trim().split(' ').length",
        Duration::from_secs(120),
    )
    .await;
    assert!(points.as_u64().unwrap() > 100, "{points} simulated samples drawn");
    until(c, "document.getElementById('simulated-pause')", Duration::from_secs(5)).await;
    shot(c, "burst").await;
}

async fn jobs(c: &Client, base: &str) {
    // A small compare to its end: the report shows both fabrics' charts, drawn.
    c.goto(&format!("{base}/scenario")).await.unwrap();
    until(c, "document.querySelectorAll('#example option').length > 1", Duration::from_secs(20)).await;
    c.find(Locator::Id("example")).await.unwrap().select_by_value("roce-incast").await.unwrap();
    c.find(Locator::Id("compare")).await.unwrap().click().await.unwrap();
    until(c, "document.getElementById('report')", Duration::from_secs(180)).await;
    c.find(Locator::Id("report")).await.unwrap().enter_frame().await.unwrap();
    let drawn = "['ib-queue','roce-queue'].map(id => { const s = document.querySelector('#' + id + ' svg.chart'); \
        return s ? [...s.querySelectorAll('polyline,path')].filter(e => { const b = e.getBBox(); return b.width > 0 || b.height > 0; }).length : 0; })";
    let v = until(c, &format!("{drawn}.every(n => n > 0) && {drawn}"), Duration::from_secs(30)).await;
    assert!(v.as_array().unwrap().iter().all(|n| n.as_u64().unwrap() > 0), "{v}");
    c.enter_parent_frame().await.unwrap();
    shot(c, "compare").await;
    // A long job, cancelled.
    c.find(Locator::Id("example")).await.unwrap().select_by_value("allreduce-compare").await.unwrap();
    c.find(Locator::Id("compare")).await.unwrap().click().await.unwrap();
    until(c, "document.getElementById('state').textContent.startsWith('running')", Duration::from_secs(30)).await;
    c.find(Locator::Id("cancel")).await.unwrap().click().await.unwrap();
    until(c, "document.getElementById('state').textContent.startsWith('cancelled')", Duration::from_secs(30)).await;
}

#[test]
fn the_pages_in_chromium() {
    let Some((browser, driver)) = tools() else { return };
    let (_server, port) = serve();
    let (_driver, dport) = chromedriver(&driver);
    let profile = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("serve-chromium-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&profile);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            json!({
                "binary": browser,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                         "--disable-background-networking", "--disable-component-update", "--window-size=1200,1000",
                         "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", format!("--user-data-dir={}", profile.display())],
            }),
        );
        let c = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{dport}"))
            .await
            .expect("a Chromium session");
        let base = format!("http://127.0.0.1:{port}");
        planners(&c, &base).await;
        jobs(&c, &base).await;
        c.close().await.unwrap();
    });
}
