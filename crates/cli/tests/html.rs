//! `compare --html` and `run --html`: the page loads in headless Chromium (Debian's
//! `chromium`) without console errors, every chart is drawn with data, the charts a reader
//! expects are there, and the same scenario gives the same bytes.
//!
//! Without a Chromium binary the browser tests print how to install it and pass, except
//! in CI (`CI=true`), where they fail.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_fabriclab");
const INCAST: &str = "examples/roce-incast.toml";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// An empty directory of this test's own.
fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("html-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn fabriclab(args: &[&str]) -> Output {
    let out = Command::new(BIN).args(args).current_dir(root()).output().expect("run fabriclab");
    assert!(out.status.success(), "fabriclab {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    out
}

/// The Chromium binary, or `None` (with a message) where there is none and this is not CI.
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"] {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("no Chromium binary (chromium, chromium-browser, google-chrome) on PATH; install it: apt-get install chromium");
    }
    eprintln!("skipping the browser check: no Chromium binary on PATH (install it: apt-get install chromium)");
    None
}

/// What headless Chromium made of a page: the DOM after scripts ran and its log.
struct Load {
    dom: String,
    log: String,
}

/// Loads `page` with the network unreachable (`--host-resolver-rules`), so a page that
/// needs anything from outside logs an error.
fn load(browser: &Path, page: &Path, dir: &Path, tag: &str) -> Load {
    let dom_path = dir.join(format!("{tag}.dom.html"));
    let log_path = dir.join(format!("{tag}.log"));
    let url = format!("file://{}", page.canonicalize().unwrap().display());
    let mut child = Command::new(browser)
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=2000",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--window-size=1400,3000",
        ])
        .arg(format!("--user-data-dir={}", dir.join(format!("{tag}.profile")).display()))
        .arg("--dump-dom")
        .arg(&url)
        .stdin(Stdio::null())
        .stdout(File::create(&dom_path).unwrap())
        .stderr(File::create(&log_path).unwrap())
        .spawn()
        .expect("start chromium");
    let t0 = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if t0.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish loading {url} in 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let load = Load { dom: std::fs::read_to_string(&dom_path).unwrap(), log: std::fs::read_to_string(&log_path).unwrap() };
    assert!(load.dom.contains("</html>"), "chromium dumped no DOM for {url}; its log:\n{}", load.log);
    load
}

/// Console messages in Chromium's log. With `--enable-logging=stderr` Chromium logs
/// every console message as `INFO:CONSOLE(line)] "text", source: url (line)` whatever its
/// level, and an uncaught exception as such a line starting `"Uncaught`. Our pages log
/// nothing, so any console line is a failure (an error, or a resource it could not load).
fn console_errors(log: &str) -> Vec<&str> {
    log.lines().filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught")).collect()
}

/// Runs after the page's own script: records errors the page raises or logs, and, once
/// loaded, how many shapes of each chart the browser laid out with a non-empty box.
const PROBE: &str = "<script>\
window.__errors=[];\
addEventListener('error',e=>__errors.push(String(e.message)));\
addEventListener('unhandledrejection',e=>__errors.push(String(e.reason)));\
{const ce=console.error;console.error=(...a)=>{__errors.push(a.join(' '));ce(...a)};}\
addEventListener('load',()=>{for(const s of document.querySelectorAll('svg.chart')){let n=0;\
for(const e of s.querySelectorAll('polyline,path,rect.bar')){const b=e.getBBox();if(b.width>0||b.height>0)n++}\
const r=s.getBoundingClientRect();s.setAttribute('data-drawn',n);s.setAttribute('data-box',Math.round(r.width)+'x'+Math.round(r.height))}\
document.documentElement.setAttribute('data-errors',JSON.stringify(__errors))});\
</script>";

/// `page` with [`PROBE`] as the first thing in its head.
fn probed(page: &Path, dir: &Path, tag: &str) -> PathBuf {
    let html = std::fs::read_to_string(page).unwrap();
    let at = html.find("<head>").expect("a <head>") + "<head>".len();
    let p = dir.join(format!("{tag}.probed.html"));
    std::fs::write(&p, format!("{}{PROBE}{}", &html[..at], &html[at..])).unwrap();
    p
}

/// The value of attribute `name` in the start tag `tag`.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let pat = format!(" {name}=\"");
    let i = tag.find(&pat)? + pat.len();
    Some(&tag[i..i + tag[i..].find('"')?])
}

/// One `<svg class="chart">` of a page.
#[derive(Debug)]
struct Chart {
    /// Id of the enclosing figure.
    figure: String,
    points: usize,
    /// Polylines with at least two vertices and timeline bars with a width.
    shapes: usize,
    /// From [`PROBE`]: shapes the browser laid out with a non-empty box.
    drawn: Option<usize>,
    title: String,
    axis_labels: usize,
}

fn charts(dom: &str) -> Vec<Chart> {
    let mut out = vec![];
    let mut from = 0;
    while let Some(i) = dom[from..].find("<svg").map(|i| i + from) {
        let tag_end = i + dom[i..].find('>').unwrap();
        let tag = &dom[i..tag_end];
        let end = tag_end + dom[tag_end..].find("</svg>").expect("</svg>");
        let body = &dom[tag_end..end];
        from = end;
        if attr(tag, "class") != Some("chart") {
            continue;
        }
        let figure = dom[..i].rfind("<figure").map(|f| &dom[f..f + dom[f..].find('>').unwrap()]).and_then(|t| attr(t, "id")).unwrap_or("");
        let polylines = body
            .split("<polyline")
            .skip(1)
            .filter(|p| attr(p.split('>').next().unwrap(), "points").is_some_and(|pts| pts.split_whitespace().count() >= 2))
            .count();
        let bars = body
            .split("<rect")
            .skip(1)
            .map(|r| r.split('>').next().unwrap())
            .filter(|t| attr(t, "class") == Some("bar") && attr(t, "width").and_then(|w| w.parse::<f64>().ok()).is_some_and(|w| w > 0.0))
            .count();
        let title = body.split("<text class=\"title\"").nth(1).and_then(|t| t.split('>').nth(1)).and_then(|t| t.split('<').next()).unwrap_or("");
        out.push(Chart {
            figure: figure.to_string(),
            points: attr(tag, "data-points").and_then(|n| n.parse().ok()).unwrap_or(0),
            shapes: polylines + bars,
            drawn: attr(tag, "data-drawn").and_then(|n| n.parse().ok()),
            title: title.to_string(),
            axis_labels: body.matches("class=\"axl\"").count(),
        });
    }
    out
}

/// Ids of the page's figures, each with whether it holds a chart or a "no data" note.
fn figures(dom: &str) -> Vec<(String, bool, bool)> {
    dom.split("<figure")
        .skip(1)
        .map(|f| {
            let f = &f[..f.find("</figure>").unwrap_or(f.len())];
            let id = attr(f.split('>').next().unwrap(), "id").unwrap_or("").to_string();
            (id, f.contains("class=\"chart\""), f.contains("class=\"nodata\""))
        })
        .collect()
}

/// What is wrong with a page's charts: empty charts, charts without title or axis labels,
/// figures with neither a chart nor an explanation.
fn chart_problems(dom: &str) -> Vec<String> {
    let mut bad = vec![];
    for c in charts(dom) {
        if c.points == 0 || c.shapes == 0 || c.drawn == Some(0) {
            bad.push(format!("chart in #{} has no data: {c:?}", c.figure));
        }
        if c.title.trim().is_empty() || c.axis_labels < 2 {
            bad.push(format!("chart in #{} lacks a title or axis labels: {c:?}", c.figure));
        }
    }
    for (id, chart, nodata) in figures(dom) {
        if chart == nodata {
            bad.push(format!("figure #{id} must hold either a chart or a nodata note (chart {chart}, note {nodata})"));
        }
    }
    bad
}

/// Loads `page` as it is (console check, chart structure) and with [`PROBE`] (errors the
/// page raised, shapes laid out); returns the DOM of the first load.
fn check_in_browser(browser: &Path, page: &Path, dir: &Path) -> String {
    let plain = load(browser, page, dir, "plain");
    let errors = console_errors(&plain.log);
    assert!(errors.is_empty(), "console errors loading {}:\n{}", page.display(), errors.join("\n"));
    let problems = chart_problems(&plain.dom);
    assert!(problems.is_empty(), "{}", problems.join("\n"));

    let probe = load(browser, &probed(page, dir, "p"), dir, "probed");
    assert!(console_errors(&probe.log).is_empty(), "console errors with the probe:\n{}", probe.log);
    assert!(probe.dom.contains("data-errors=\"[]\""), "the page raised errors: {:?}", probe.dom.split("data-errors=").nth(1).map(|s| &s[..s.len().min(300)]));
    let laid_out = charts(&probe.dom);
    assert_eq!(laid_out.len(), charts(&plain.dom).len());
    for c in &laid_out {
        assert!(c.drawn.is_some_and(|n| n > 0), "chart in #{} drawn with no visible shape: {c:?}", c.figure);
    }
    let problems = chart_problems(&probe.dom);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    plain.dom
}

/// The page's source refers to nothing outside itself.
fn assert_self_contained(html: &str) {
    for needle in ["src=", "href=", "<link", "<img", "@import", "url(", "http://", "https://"] {
        assert!(!html.contains(needle), "the page is not self-contained: it contains {needle:?}");
    }
}

#[test]
fn compare_page_loads_in_chromium_with_every_chart_drawn() {
    let dir = scratch("compare");
    let page = dir.join("report.html");
    let out = fabriclab(&["compare", INCAST, "--json", "--html", page.to_str().unwrap()]);
    let cmp: serde_json::Value = serde_json::from_slice(&out.stdout).expect("--json still prints the comparison");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_self_contained(&html);

    // What the page must show, from the comparison itself.
    let share = |col: &str| {
        cmp["rows"].as_array().unwrap().iter().find(|r| r["metric"].as_str().unwrap().contains("most-blocked port")).unwrap()[col].as_f64().unwrap_or(0.0)
    };
    let mut want = vec!["cdf", "ib-queue", "roce-queue"];
    if share("infiniband") > 1.0 {
        want.push("ib-fc");
    }
    if share("roce") > 1.0 {
        want.push("roce-fc");
    }
    assert!(want.len() == 4, "one fabric of {INCAST} should have been blocked by flow control: {want:?}");
    if cmp["roce"]["totals"]["cnps"].as_u64().unwrap() > 0 {
        want.push("roce-rate");
    }
    let figs = figures(&html);
    for id in &want {
        assert!(figs.iter().any(|(f, chart, _)| f == id && *chart), "no chart #{id}; figures: {figs:?}");
    }
    let ib_rate = figs.iter().find(|f| f.0 == "ib-rate").expect("#ib-rate");
    assert!(ib_rate.2, "InfiniBand has no DCQCN rates: #ib-rate should explain that");
    for id in ["ib-queue", "roce-queue", "ib-rate", "roce-rate", "ib-fc", "roce-fc", "cdf"] {
        assert!(figs.iter().any(|f| f.0 == id), "figure #{id} missing");
    }
    assert!(html.contains("<table class=\"cmp\">") && html.contains("Limitations"));
    let problems = chart_problems(&html);
    assert!(problems.is_empty(), "{}", problems.join("\n"));

    let Some(browser) = chromium() else { return };
    let dom = check_in_browser(&browser, &page, &dir);
    assert!(charts(&dom).len() >= want.len());
}

#[test]
fn run_page_loads_in_chromium_with_every_chart_drawn() {
    let dir = scratch("run");
    let page = dir.join("run.html");
    let out = fabriclab(&["run", "examples/ib-incast.toml", "--html", page.to_str().unwrap()]);
    assert!(!out.stdout.is_empty(), "run --html still prints the report");
    let html = std::fs::read_to_string(&page).unwrap();
    assert_self_contained(&html);
    let figs = figures(&html);
    for id in ["cdf", "ib-queue", "ib-rate", "ib-fc"] {
        assert!(figs.iter().any(|f| f.0 == id), "figure #{id} missing: {figs:?}");
    }
    assert!(figs.iter().any(|f| f.0 == "ib-queue" && f.1));
    let Some(browser) = chromium() else { return };
    check_in_browser(&browser, &page, &dir);
}

#[test]
fn the_same_scenario_gives_the_same_bytes() {
    let dir = scratch("determinism");
    let (a, b) = (dir.join("a.html"), dir.join("b.html"));
    fabriclab(&["compare", INCAST, "--html", a.to_str().unwrap()]);
    fabriclab(&["compare", INCAST, "--html", b.to_str().unwrap()]);
    let (a, b) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert!(a == b, "two compare --html runs of {INCAST} differ");
    let (c, d) = (dir.join("c.html"), dir.join("d.html"));
    fabriclab(&["run", INCAST, "--html", c.to_str().unwrap()]);
    fabriclab(&["run", INCAST, "--html", d.to_str().unwrap()]);
    assert!(std::fs::read(&c).unwrap() == std::fs::read(&d).unwrap(), "two run --html runs differ");
}

#[test]
fn an_unwritable_path_is_named_in_the_error() {
    let dir = scratch("unwritable");
    let page = dir.join("no-such-dir").join("report.html");
    let out = Command::new(BIN).args(["compare", INCAST, "--html", page.to_str().unwrap()]).current_dir(root()).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(page.to_str().unwrap()), "the error should name {}: {err}", page.display());
}

/// The checks can fail: a page that throws is caught by the console check and by the
/// probe.
#[test]
fn a_page_that_throws_is_caught() {
    let Some(browser) = chromium() else { return };
    let dir = scratch("throws");
    let page = dir.join("bad.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>bad</title></head><body>\
         <p>deliberately broken</p><script>console.error('deliberate console.error');throw new Error('deliberate failure');</script>\
         </body></html>\n",
    )
    .unwrap();
    let plain = load(&browser, &page, &dir, "plain");
    let errors = console_errors(&plain.log);
    assert!(errors.iter().any(|l| l.contains("Uncaught Error: deliberate failure")), "the throw was not detected; log:\n{}", plain.log);
    assert!(errors.iter().any(|l| l.contains("deliberate console.error")), "console.error was not detected; log:\n{}", plain.log);
    let probe = load(&browser, &probed(&page, &dir, "p"), &dir, "probed");
    assert!(probe.dom.contains("deliberate failure") && !probe.dom.contains("data-errors=\"[]\""), "the probe missed the throw");
}

/// The chart checks can fail: an empty chart, a chart without axis labels and a figure
/// with neither chart nor note are reported.
#[test]
fn empty_charts_are_caught() {
    let dom = "<figure class=\"fig\" id=\"a\"><svg class=\"chart\" viewBox=\"0 0 10 10\" data-points=\"0\">\
               <text class=\"title\" x=\"0\" y=\"0\">A</text><text class=\"axl\">x</text><text class=\"axl\">y</text></svg></figure>\
               <figure class=\"fig\" id=\"b\"><svg class=\"chart\" data-points=\"3\"><text class=\"title\">B</text>\
               <polyline points=\"1,1 2,2 3,3\"></polyline></svg></figure>\
               <figure class=\"fig\" id=\"c\"></figure>";
    let p = chart_problems(dom);
    assert!(p.iter().any(|m| m.contains("#a has no data")), "{p:?}");
    assert!(p.iter().any(|m| m.contains("#b lacks a title or axis labels")), "{p:?}");
    assert!(p.iter().any(|m| m.contains("figure #c")), "{p:?}");
    assert_eq!(p.len(), 3, "{p:?}");
}

#[test]
fn a_storm_run_page_shows_the_incident_timeline_in_chromium() {
    let dir = scratch("storm");
    let page = dir.join("storm.html");
    fabriclab(&["run", "examples/roce-pfc-storm.toml", "--html", page.to_str().unwrap()]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert_self_contained(&html);
    assert!(html.contains("<h2>Incident timeline</h2>"));
    for event in ["fault", "paused", "watchdog-fired", "watchdog-restored", "fault-ended"] {
        assert!(html.contains(&format!("<td>{event}</td>")), "timeline lacks {event}");
    }
    assert!(html.contains("PFC storm on leaf0:0 priority 3"));
    let Some(browser) = chromium() else { return };
    check_in_browser(&browser, &page, &dir);
}
