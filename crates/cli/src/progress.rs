//! Progress and Ctrl-C for the subcommands that simulate: a bar on stderr (drawn only
//! when stderr is a terminal, never into `--json` output, which goes to stdout) showing
//! the simulated time against the stop time or the payload delivered against all of
//! it, events/s and wall time; and a process-wide cancel flag that the first Ctrl-C
//! raises (the run stops at its next check, `fabric::sim::CHECK_EVERY` events, and its
//! partial report is printed) and a second Ctrl-C turns into an immediate exit.
//!
//! Both reach the simulator only through its one hook, `fabric::sim::Watch`.
//!
//! For programs rather than people (`fabriclab serve` runs jobs as child processes),
//! `FABRICLAB_PROGRESS=json` in the environment makes each bar also print one JSON line on
//! stderr at most every [`JSON_EVERY`] of wall time: `{"progress": {"label": "RoCEv2",
//! "fraction": 0.42, "now_ps": .., "stop_ps": .. or null, "events": .., "message": ".."}}`.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use fabric::sim::{Progress, Watch};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The exit code of a run stopped by Ctrl-C (128 + SIGINT, as shells report it).
pub const EXIT_CANCELLED: u8 = 130;

static CANCEL: AtomicBool = AtomicBool::new(false);

/// Makes Ctrl-C cancel the run in progress; a second Ctrl-C exits at once.
pub fn install_ctrlc() {
    // A handler already set (a second call) is fine: it is the same one.
    let _ = ctrlc::set_handler(|| {
        if CANCEL.swap(true, Ordering::SeqCst) {
            std::process::exit(EXIT_CANCELLED as i32);
        }
        eprintln!("\ninterrupted: stopping the run (Ctrl-C again to quit at once)");
    });
}

/// Whether Ctrl-C was pressed.
pub fn cancelled() -> bool {
    CANCEL.load(Ordering::SeqCst)
}

/// The environment variable that turns on the JSON progress lines, and its value.
pub const JSON_ENV: (&str, &str) = ("FABRICLAB_PROGRESS", "json");

/// The least wall time between two JSON progress lines of one bar.
pub const JSON_EVERY: Duration = Duration::from_millis(200);

/// A run's progress bar, which also passes on Ctrl-C.
pub struct Bar {
    bar: ProgressBar,
    label: String,
    /// With `FABRICLAB_PROGRESS=json`: the wall time of the last JSON line.
    json: Option<Option<Duration>>,
}

impl Bar {
    /// A bar labelled `label` on stderr; hidden unless stderr is a terminal.
    pub fn new(label: &str) -> Bar {
        Bar::styled(
            if std::io::stderr().is_terminal() { ProgressBar::with_draw_target(Some(1000), ProgressDrawTarget::stderr()) } else { ProgressBar::hidden() },
            label,
        )
    }

    /// A bar in `multi` (compare's two sides).
    pub fn in_multi(multi: &MultiProgress, label: &str) -> Bar {
        let bar = if std::io::stderr().is_terminal() { multi.add(ProgressBar::new(1000)) } else { ProgressBar::hidden() };
        Bar::styled(bar, label)
    }

    fn styled(bar: ProgressBar, label: &str) -> Bar {
        bar.set_style(
            ProgressStyle::with_template("{prefix:>12} [{bar:30}] {percent:>3}% (eta {eta}) {wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        bar.set_prefix(label.to_string());
        let json = (std::env::var(JSON_ENV.0).as_deref() == Ok(JSON_ENV.1)).then_some(None);
        Bar { bar, label: label.to_string(), json }
    }

    /// One JSON progress line, unless the last was less than [`JSON_EVERY`] ago.
    fn json_line(&mut self, p: &Progress) {
        let Some(last) = &mut self.json else { return };
        if last.is_some_and(|t| p.wall < t + JSON_EVERY) {
            return;
        }
        *last = Some(p.wall);
        let line = serde_json::json!({ "progress": {
            "label": self.label,
            "fraction": p.fraction(),
            "now_ps": p.now.0,
            "stop_ps": p.stop.map(|s| s.0),
            "events": p.events,
            "message": describe(p),
        }});
        eprintln!("{line}");
    }
}

impl Watch for Bar {
    fn check(&mut self, p: &Progress) -> bool {
        self.bar.set_position((p.fraction() * 1000.0) as u64);
        self.bar.set_message(describe(p));
        self.json_line(p);
        !cancelled()
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// "simulated 1.2ms of 10ms, 12.3 M events/s, wall 4 s".
pub fn describe(p: &Progress) -> String {
    let of = match p.stop {
        Some(s) => format!(" of {}", units::SimDuration(s.0)),
        None => format!(", {} of {} flows done", p.flows - p.flows_left, p.flows),
    };
    let secs = p.wall.as_secs_f64().max(1e-9);
    format!("simulated {}{of}, {:.1} M events/s, wall {:.0} s", units::SimDuration(p.now.0), p.events as f64 / secs / 1e6, secs)
}

/// No bar: only Ctrl-C (sweeps' points, planners' proofs).
pub struct CancelOnly;

impl Watch for CancelOnly {
    fn check(&mut self, _: &Progress) -> bool {
        !cancelled()
    }
}
