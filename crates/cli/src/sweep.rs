//! `fabriclab sweep FILE --vary PATH=V1,V2,..`: one scenario run over a grid of parameter
//! values, every variant in parallel on all cores, written as a CSV table and an SVG plot
//! ("lossless by configuration": the varied RoCEv2 setting against InfiniBand as the
//! reference), and `fabriclab merge`: the shards of a sweep split over machines
//! (`--shard I/N`, one per task of a batch scheduler's job array) joined into the same
//! files an unsharded sweep writes.
//!
//! Fabrics. A file with a `[roce]` section runs every variant on RoCEv2; its InfiniBand
//! side (the file's `[infiniband]`, or stated defaults as `compare` fills them) runs once
//! as a reference when every varied field is a RoCE-only knob (`roce.*`, `buffer.*`), and
//! per variant otherwise, with the edits that apply to it (`roce.*`/`buffer.*` edits are
//! skipped). A file that cannot give an InfiniBand side is swept on RoCEv2 alone; a file
//! with only `[infiniband]` is swept on InfiniBand alone. Identical runs (a fabric whose
//! applicable edits are the same for two variants) are simulated once.
//!
//! Files. The CSV opens with `# key=value` comment lines holding what the plot needs
//! (scenario name, metric, number of variants, how each fabric ran, and in a shard file
//! which shard it is), then one row per (variant, fabric) in a fixed column order; rows
//! of a fabric run once have `ref` as their variant and empty parameter cells. The SVG is
//! drawn from the CSV's text alone, so `merge` reproduces both files byte for byte.
//! Nothing in either file depends on the machine, the thread count or the wall clock.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use clap::Args;
use fabric::params::Tech;
use report::Report;
use scenario::variant::{for_technology, load_variant, Edit};
use toml::{Table, Value};

const SHORTCUTS: &str = "\
Each --vary is PATH=V1,V2,..: a field of the scenario file by its path (roce.ecn[0].kmin,
buffer.headroom, traffic[0].size, topology.leaves; a missing field is added) and its
values, split on commas outside brackets and quotes ([3, 4] is one value). Several --vary
form their Cartesian product, the first outermost; the plot's x axis is the first one.
Shortcuts:
  incast-degree=N     the first incast traffic entry keeps its first N senders
  oversubscription=R  topology.oversubscription (leaf-spine without uplinks_per_spine)
  dcqcn=P             roce.dcqcn.preset: off, paper, nvidia-default or hpcc-ns3
  pfc=on|off          roce.pfc.enabled
  headroom=V          buffer.headroom: \"auto\" or a size per lossless PG (100KB)
  ecn-kmin=V          roce.ecn[i].kmin of every ECN entry
RoCE-only fields (roce.*, buffer.*) leave InfiniBand as a reference line run once.
--shard I/N (0-based: 0 <= I < N) runs the variants whose index % N == I and writes
DIR/sweep.shard-I-of-N.csv; `fabriclab merge DIR` joins the shards.";

/// `fabriclab sweep` arguments.
#[derive(Args, Debug)]
#[command(after_help = SHORTCUTS)]
pub struct SweepArgs {
    /// Scenario file (TOML).
    pub file: PathBuf,
    /// PATH=V1,V2,..: a field (or shortcut, see below) and its values (repeatable).
    #[arg(long = "vary", required = true, value_name = "PATH=V1,V2,..")]
    pub vary: Vec<String>,
    /// Simulations in parallel (default: all cores).
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,
    /// Run only shard I of N (0-based, I = 0..N-1), e.g. ${SLURM_ARRAY_TASK_ID}/16.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Directory for sweep.csv and sweep.svg (or the shard's CSV).
    #[arg(long, default_value = "sweep")]
    pub out: PathBuf,
    /// The plot's y axis (default: busbw with a collective, else fct-p99).
    #[arg(long, value_parser = METRICS.iter().map(|m| m.name).collect::<Vec<_>>())]
    pub metric: Option<String>,
    /// Print one JSON document instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// `fabriclab merge` arguments.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Shard files (sweep.shard-I-of-N.csv) or directories holding them.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Directory for sweep.csv and sweep.svg (default: where the shards are).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Print one JSON document instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// A plottable figure: its `--metric` name, its CSV column and its axis label.
struct Metric {
    name: &'static str,
    column: &'static str,
    label: &'static str,
}

const METRICS: [Metric; 11] = [
    Metric { name: "busbw", column: "busbw_gbs", label: "bus bandwidth, first collective (GB/s)" },
    Metric { name: "fct-p99", column: "fct_p99_us", label: "flow completion time p99 (µs)" },
    Metric { name: "slowdown-p99", column: "slowdown_p99", label: "slowdown p99 (×)" },
    Metric { name: "lossless-drops", column: "lossless_drops", label: "drops in lossless classes (packets)" },
    Metric { name: "pause-frames", column: "pause_frames", label: "PFC pause frames sent" },
    Metric { name: "goodput", column: "goodput_gbps", label: "goodput (Gb/s)" },
    Metric { name: "ecn-marks", column: "ecn_marks", label: "ECN marks (packets)" },
    Metric { name: "drops", column: "drops", label: "drops, all classes (packets)" },
    Metric { name: "paused", column: "paused_us", label: "paused time, summed over ports (µs)" },
    Metric { name: "victim-slowdown", column: "victim_slowdown_max", label: "slowdown of the worst victim flow (×)" },
    Metric { name: "recovery", column: "recovery_us", label: "recovery after a fault, worst (µs)" },
];

/// The figures of one run, after the parameter columns, in this order.
const COLUMNS: [&str; 19] = [
    "busbw_gbs",
    "fct_p50_us",
    "fct_p99_us",
    "slowdown_p99",
    "goodput_gbps",
    "flows_failed",
    "lossless_drops",
    "drops",
    "pause_frames",
    "ecn_marks",
    "cnps",
    "retransmitted_bytes",
    "timeouts",
    "paused_us",
    "xmit_wait_us",
    "deadlock",
    "victim_slowdown_max",
    "recovery_us",
    "end_us",
];

fn metric(name: &str) -> Option<&'static Metric> {
    METRICS.iter().find(|m| m.name == name)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Fabric {
    Roce,
    Infiniband,
}

impl Fabric {
    const ALL: [Fabric; 2] = [Fabric::Roce, Fabric::Infiniband];

    fn key(self) -> &'static str {
        match self {
            Fabric::Roce => "roce",
            Fabric::Infiniband => "infiniband",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Fabric::Roce => "RoCEv2",
            Fabric::Infiniband => "InfiniBand",
        }
    }

    fn tech(self) -> Tech {
        match self {
            Fabric::Roce => Tech::Roce,
            Fabric::Infiniband => Tech::Infiniband,
        }
    }

    fn parse(s: &str) -> Option<Fabric> {
        Fabric::ALL.into_iter().find(|f| f.key() == s)
    }

    /// Whether an edit of `path` changes this fabric's run.
    fn applies(self, path: &str) -> bool {
        let head = path.split(['.', '[']).next().unwrap_or(path);
        match self {
            Fabric::Roce => head != "infiniband",
            Fabric::Infiniband => head != "roce" && head != "buffer",
        }
    }
}

/// How a fabric takes part in a sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// One run per variant.
    PerVariant,
    /// One run, the reference line: no varied field applies to it.
    Once,
    /// Not run.
    Off,
}

impl Mode {
    fn key(self) -> &'static str {
        match self {
            Mode::PerVariant => "per-variant",
            Mode::Once => "once",
            Mode::Off => "off",
        }
    }

    fn parse(s: &str) -> Option<Mode> {
        [Mode::PerVariant, Mode::Once, Mode::Off].into_iter().find(|m| m.key() == s)
    }
}

/// What a sweep's files say about it besides their rows: the CSV's comment lines.
#[derive(Clone, Debug, PartialEq)]
struct Meta {
    scenario: String,
    metric: &'static Metric,
    params: Vec<String>,
    variants: usize,
    modes: [Mode; 2],
}

impl PartialEq for Metric {
    fn eq(&self, o: &Metric) -> bool {
        self.name == o.name
    }
}

impl std::fmt::Debug for Metric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl Meta {
    fn mode(&self, f: Fabric) -> Mode {
        self.modes[f as usize]
    }

    fn header(&self) -> Vec<String> {
        let mut h = vec!["variant".to_string()];
        h.extend(self.params.iter().cloned());
        h.push("fabric".into());
        h.extend(COLUMNS.iter().map(|c| c.to_string()));
        h
    }

    fn column(&self, name: &str) -> usize {
        COLUMNS.iter().position(|c| *c == name).expect("a known column")
    }
}

/// One CSV row: a fabric's run of a variant (`None`: the fabric's single run).
#[derive(Clone, Debug)]
struct Row {
    variant: Option<usize>,
    values: Vec<String>,
    fabric: Fabric,
    cells: Vec<String>,
}

impl Row {
    fn order(&self) -> (usize, Fabric) {
        (self.variant.unwrap_or(usize::MAX), self.fabric)
    }
}

fn fail(m: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {m}");
    ExitCode::from(2)
}

/// A `--vary`: the name as given (a path or a shortcut), its values, and the edits each
/// value stands for.
struct Param {
    name: String,
    values: Vec<String>,
    edits: Vec<Vec<Edit>>,
}

/// Splits `V1,V2,..` on commas outside brackets, braces and quotes.
fn split_values(s: &str) -> Result<Vec<String>, String> {
    let mut out = vec![];
    let mut cur = String::new();
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    for ch in s.chars() {
        match (quote, ch) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(ch),
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => {
                depth -= 1;
                if depth < 0 {
                    return Err(format!("`{s}`: unbalanced `{ch}`"));
                }
            }
            (None, ',') if depth == 0 => {
                out.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    if depth != 0 {
        return Err(format!("`{s}`: unbalanced brackets"));
    }
    if quote.is_some() {
        return Err(format!("`{s}`: unterminated quote"));
    }
    out.push(cur.trim().to_string());
    if out.iter().any(|v| v.is_empty()) {
        return Err(format!("`{s}`: an empty value (two commas in a row, or a comma at an end?)"));
    }
    Ok(out)
}

fn senders_of_first_incast(t: &Table) -> Option<(usize, Vec<i64>)> {
    let Some(Value::Array(tr)) = t.get("traffic") else { return None };
    tr.iter().enumerate().find_map(|(i, x)| {
        (x.get("kind").and_then(Value::as_str) == Some("incast"))
            .then(|| (i, x.get("senders").and_then(Value::as_array).map(|a| a.iter().filter_map(Value::as_integer).collect()).unwrap_or_default()))
    })
}

/// The edits one value of a `--vary` stands for.
fn expand(name: &str, value: &str, t: &Table) -> Result<Vec<Edit>, String> {
    let one = |path: &str, v: &str| Ok(vec![Edit::new(path, v)]);
    match name {
        "incast-degree" => {
            let (i, senders) = senders_of_first_incast(t).ok_or("incast-degree: the file has no incast traffic entry")?;
            let n =
                value.parse::<usize>().ok().filter(|n| (1..=senders.len()).contains(n)).ok_or_else(|| {
                    format!("incast-degree={value}: traffic[{i}] has {} senders; expected a whole number 1..{}", senders.len(), senders.len())
                })?;
            let list = senders[..n].iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", ");
            one(&format!("traffic[{i}].senders"), &format!("[{list}]"))
        }
        "oversubscription" => {
            let topo = t.get("topology");
            if topo.and_then(|x| x.get("kind")).and_then(Value::as_str) != Some("leaf-spine") {
                return Err("oversubscription: only a leaf-spine topology has one".into());
            }
            if topo.and_then(|x| x.get("uplinks_per_spine")).is_some() {
                return Err("oversubscription: the file sets topology.uplinks_per_spine; remove it to sweep oversubscription".into());
            }
            if !value.parse::<f64>().is_ok_and(|x| x > 0.0) {
                return Err(format!("oversubscription={value}: expected a positive ratio such as 1, 2 or 1.5"));
            }
            one("topology.oversubscription", value)
        }
        "dcqcn" => one("roce.dcqcn.preset", value),
        "pfc" => match value {
            "on" | "true" => one("roce.pfc.enabled", "true"),
            "off" | "false" => one("roce.pfc.enabled", "false"),
            _ => Err(format!("pfc={value}: expected on or off")),
        },
        "headroom" => one("buffer.headroom", value),
        "ecn-kmin" => {
            let n = t.get("roce").and_then(|r| r.get("ecn")).and_then(Value::as_array).map_or(0, |a| a.len());
            if n == 0 {
                return Err("ecn-kmin: the file has no roce.ecn entries".into());
            }
            Ok((0..n).map(|i| Edit::new(format!("roce.ecn[{i}].kmin"), value)).collect())
        }
        path => {
            if !path.chars().all(|c| c.is_ascii_alphanumeric() || "_-.[]".contains(c)) {
                return Err(format!("`{path}` is neither a field path (roce.ecn[0].kmin) nor a shortcut (see --help)"));
            }
            one(path, value)
        }
    }
}

fn parse_vary(s: &str, t: &Table) -> Result<Param, String> {
    let (name, vals) = s.split_once('=').ok_or_else(|| format!("--vary `{s}`: expected PATH=V1,V2,.."))?;
    let name = name.trim();
    if name.is_empty() {
        return Err(format!("--vary `{s}`: empty field path"));
    }
    let values = split_values(vals).map_err(|m| format!("--vary {name}: {m}"))?;
    let mut seen = BTreeSet::new();
    for v in &values {
        if !seen.insert(v) {
            return Err(format!("--vary {name}: the value `{v}` is given twice"));
        }
    }
    let edits = values.iter().map(|v| expand(name, v, t)).collect::<Result<Vec<_>, _>>().map_err(|m| format!("--vary {m}"))?;
    Ok(Param { name: name.to_string(), values, edits })
}

fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("--shard {s}: expected I/N with 0 <= I < N (0-based, as SLURM_ARRAY_TASK_ID runs 0..N-1 with --array=0-N-1)");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n) = (i.trim().parse::<usize>().map_err(|_| bad())?, n.trim().parse::<usize>().map_err(|_| bad())?);
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

/// The parameter values of variant `v` (mixed radix, the last parameter fastest).
fn combo(params: &[Param], mut v: usize) -> Vec<usize> {
    let mut idx = vec![0; params.len()];
    for (k, p) in params.iter().enumerate().rev() {
        idx[k] = v % p.values.len();
        v /= p.values.len();
    }
    idx
}

/// Maps `work` over `0..n` on `workers` threads; results in index order.
fn par_map<T: Send>(workers: usize, n: usize, work: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<T>>> = (0..n).map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..workers.clamp(1, n.max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let r = work(i);
                *slots[i].lock().expect("a worker panicked") = Some(r);
            });
        }
    });
    slots.into_iter().map(|m| m.into_inner().expect("a worker panicked").expect("every index ran")).collect()
}

/// A simulation to run: a fabric with a list of edits.
struct Task {
    fabric: Fabric,
    edits: Vec<Edit>,
    /// The variant it is first needed for (`None`: the fabric's single run), for messages.
    variant: Option<usize>,
    label: String,
}

/// Integer picoseconds as microseconds with three decimals (rounded to the nanosecond).
fn us(ps: u64) -> String {
    let ns = (ps + 500) / 1000;
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

fn float(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.3}")
    } else {
        String::new()
    }
}

/// A report's figures in `COLUMNS` order.
fn cells(r: &Report) -> Vec<String> {
    let flows = r.flows.count > 0;
    let t = &r.totals;
    let paused: u64 = r.ports.iter().map(|p| p.paused_ps.iter().copied().max().unwrap_or(0)).sum();
    let c = vec![
        r.collectives.first().filter(|c| c.time_ps.is_some()).map_or(String::new(), |c| float(c.busbw_gbs)),
        if flows { us(r.flows.fct_p50_ps) } else { String::new() },
        if flows { us(r.flows.fct_p99_ps) } else { String::new() },
        if flows { float(r.flows.slowdown_p99) } else { String::new() },
        if flows { float(r.flows.goodput_gbps) } else { String::new() },
        r.flows.failed.to_string(),
        t.lossless_drops.to_string(),
        t.drops.to_string(),
        t.pfc_frames.to_string(),
        t.ecn_marks.to_string(),
        t.cnps.to_string(),
        t.retransmitted_bytes.to_string(),
        t.timeouts.to_string(),
        us(paused),
        us(t.xmit_wait_ps),
        u8::from(t.deadlock.is_some()).to_string(),
        if r.victims.victims > 0 { float(r.victims.victim_slowdown_max) } else { String::new() },
        r.incidents.worst_recovery_ps().map_or(String::new(), us),
        us(r.end_ps),
    ];
    debug_assert_eq!(c.len(), COLUMNS.len());
    c
}

pub fn run(a: SweepArgs) -> ExitCode {
    let name = a.file.display().to_string();
    let src = match std::fs::read_to_string(&a.file) {
        Ok(s) => s,
        Err(e) => return fail(format!("{name}: cannot read: {e}")),
    };
    let table: Table = match toml::from_str(&src) {
        Ok(t) => t,
        Err(e) => return fail(format!("{name}: {}", e.message())),
    };
    let shard = match a.shard.as_deref().map(parse_shard).transpose() {
        Ok(s) => s,
        Err(m) => return fail(m),
    };
    if a.jobs == Some(0) {
        return fail("--jobs 0: expected at least 1");
    }
    let mut params: Vec<Param> = vec![];
    for v in &a.vary {
        match parse_vary(v, &table) {
            Ok(p) if params.iter().any(|q| q.name == p.name) => return fail(format!("--vary {}: given twice; list all its values in one --vary", p.name)),
            Ok(p) => params.push(p),
            Err(m) => return fail(m),
        }
    }
    let variants: usize = params.iter().map(|p| p.values.len()).product();
    let collective = matches!(table.get("traffic"), Some(Value::Array(tr)) if tr.iter().any(|x| x.get("kind").and_then(Value::as_str) == Some("collective")));
    let metric = match a.metric.as_deref() {
        Some("busbw") if !collective => return fail("--metric busbw: the scenario has no collective traffic; choose fct-p99 or another metric"),
        Some(m) => metric(m).expect("clap checked the name"),
        None if collective => &METRICS[0],
        None => &METRICS[1],
    };
    let scenario = table.get("scenario").and_then(|s| s.get("name")).and_then(Value::as_str).unwrap_or("").to_string();

    // Which fabrics run, and how.
    let has_roce = table.contains_key("roce");
    if !has_roce && !table.contains_key("infiniband") {
        return fail(format!("{name}: expected a [roce] or an [infiniband] section"));
    }
    let mut tech_edits: [Vec<Edit>; 2] = [vec![], vec![]];
    let mut modes = [Mode::Off; 2];
    let mut notes = vec![];
    for f in Fabric::ALL {
        if f == Fabric::Roce && !has_roce {
            continue;
        }
        let ib_ref = f == Fabric::Infiniband && has_roce;
        match for_technology(&src, f.tech()) {
            Ok((edits, n)) => {
                if ib_ref {
                    if let Err(e) = load_variant(&name, &src, &edits) {
                        eprintln!("note: no InfiniBand side: the file does not compile for InfiniBand: {}: {}", e.field, e.msg);
                        continue;
                    }
                }
                tech_edits[f as usize] = edits;
                notes.extend(n);
            }
            Err(m) if ib_ref => {
                eprintln!("note: no InfiniBand side: {m}");
                continue;
            }
            Err(m) => return fail(format!("{name}: {m}")),
        }
        let varies = params.iter().any(|p| p.edits.iter().flatten().any(|e| f.applies(&e.path)));
        modes[f as usize] = if varies { Mode::PerVariant } else { Mode::Once };
    }
    if !modes.contains(&Mode::PerVariant) {
        let names = params.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", ");
        return fail(format!("--vary {names}: changes nothing on the fabric this file runs ({})", if has_roce { "RoCEv2" } else { "InfiniBand" }));
    }
    let meta = Meta { scenario, metric, params: params.iter().map(|p| p.name.clone()).collect(), variants, modes };

    // The simulations this shard runs, without duplicates, and the rows they fill.
    // Shard I of N runs variants I, I + N, I + 2N, ..; the single runs belong to shard 0.
    let (me, of) = shard.unwrap_or((0, 1));
    let mine = |v: usize| v % of == me;
    let mut tasks: Vec<Task> = vec![];
    let mut by_key: BTreeMap<String, usize> = BTreeMap::new();
    let mut rows: Vec<(Row, usize)> = vec![];
    let mut add = |fabric: Fabric, variant: Option<usize>, values: Vec<String>, edits: Vec<Edit>, label: String| {
        let key = format!("{}|{}", fabric.key(), edits.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\u{1f}"));
        let t = *by_key.entry(key).or_insert_with(|| {
            tasks.push(Task { fabric, edits, variant, label });
            tasks.len() - 1
        });
        rows.push((Row { variant, values, fabric, cells: vec![] }, t));
    };
    for v in (0..variants).filter(|&v| mine(v)) {
        let idx = combo(&params, v);
        let values: Vec<String> = params.iter().zip(&idx).map(|(p, &i)| p.values[i].clone()).collect();
        let label = params.iter().zip(&values).map(|(p, x)| format!("{}={x}", p.name)).collect::<Vec<_>>().join(", ");
        for f in Fabric::ALL.into_iter().filter(|&f| meta.mode(f) == Mode::PerVariant) {
            let mut edits = tech_edits[f as usize].clone();
            edits.extend(params.iter().zip(&idx).flat_map(|(p, &i)| p.edits[i].iter().filter(|e| f.applies(&e.path)).cloned()));
            add(f, Some(v), values.clone(), edits, label.clone());
        }
    }
    if me == 0 {
        for f in Fabric::ALL.into_iter().filter(|&f| meta.mode(f) == Mode::Once) {
            add(f, None, vec![String::new(); params.len()], tech_edits[f as usize].clone(), "reference".into());
        }
    }
    for n in &notes {
        eprintln!("note: {n}");
    }
    let workers = a.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let what = |f: Fabric| match meta.mode(f) {
        Mode::PerVariant => format!("{} per variant", f.title()),
        Mode::Once => format!("{} once (reference)", f.title()),
        Mode::Off => format!("no {}", f.title()),
    };
    eprintln!(
        "sweep {}: {variants} variant{}{}, {}, {}: {} simulation{} on {} thread{}",
        meta.scenario,
        if variants == 1 { "" } else { "s" },
        shard.map_or(String::new(), |(i, n)| format!(" (shard {i}/{n})")),
        what(Fabric::Roce),
        what(Fabric::Infiniband),
        tasks.len(),
        if tasks.len() == 1 { "" } else { "s" },
        workers.min(tasks.len().max(1)),
        if workers.min(tasks.len().max(1)) == 1 { "" } else { "s" },
    );

    // Every variant must compile before any runs: errors come at once, not after hours.
    let checked = par_map(workers, tasks.len(), |i| load_variant(&name, &src, &tasks[i].edits).err());
    if let Some((t, e)) = tasks.iter().zip(&checked).find_map(|(t, e)| e.as_ref().map(|e| (t, e))) {
        let which = match t.variant {
            Some(v) => format!("variant {v} ({})", t.label),
            None => "the reference run".into(),
        };
        return fail(format!("{which} on {}: {e}", t.fabric.title()));
    }
    drop(checked);

    let bar = indicatif::ProgressBar::with_draw_target(Some(tasks.len() as u64), indicatif::ProgressDrawTarget::stderr());
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} {elapsed} (eta {eta}) {wide_msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    let results = par_map(workers, tasks.len(), |i| {
        let t = &tasks[i];
        bar.set_message(format!("{} {}", t.fabric.title(), t.label));
        // Compiled once already; only a topology file changed meanwhile could fail here.
        let r = load_variant(&name, &src, &t.edits).map(|w| cells(&report::run(&w, false).1));
        bar.inc(1);
        r
    });
    bar.finish_and_clear();
    let results = match results.into_iter().collect::<Result<Vec<_>, _>>() {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    let mut rows: Vec<Row> = rows
        .into_iter()
        .map(|(mut r, t)| {
            r.cells = results[t].clone();
            r
        })
        .collect();
    rows.sort_by_key(Row::order);

    if let Err(e) = std::fs::create_dir_all(&a.out) {
        return fail_io(&a.out, e);
    }
    let (csv_path, svg_path) = match shard {
        Some((i, n)) => (a.out.join(format!("sweep.shard-{i}-of-{n}.csv")), None),
        None => (a.out.join("sweep.csv"), Some(a.out.join("sweep.svg"))),
    };
    if let Err(code) = write_outputs(&meta, &rows, shard, &csv_path, svg_path.as_deref()) {
        return code;
    }
    print_result(&meta, &rows, shard, &csv_path, svg_path.as_deref(), a.json);
    let lossless: u64 = rows.iter().filter(|r| r.fabric == Fabric::Roce).filter_map(|r| r.cells[meta.column("lossless_drops")].parse::<u64>().ok()).sum();
    if lossless > 0 {
        eprintln!("warning: packets dropped in lossless classes in some RoCEv2 variants ({lossless} in all)");
    }
    ExitCode::SUCCESS
}

fn fail_io(p: &Path, e: std::io::Error) -> ExitCode {
    eprintln!("error: {}: cannot write: {e}", p.display());
    ExitCode::from(1)
}

/// The CSV text: comment lines, the header row, the rows.
fn csv_text(meta: &Meta, rows: &[Row], shard: Option<(usize, usize)>) -> String {
    let mut s = String::new();
    let clean = |x: &str| x.replace(['\n', '\r'], " ");
    let _ = writeln!(s, "# fabriclab sweep");
    let _ = writeln!(s, "# scenario={}", clean(&meta.scenario));
    let _ = writeln!(s, "# metric={}", meta.metric.name);
    let _ = writeln!(s, "# variants={}", meta.variants);
    for f in Fabric::ALL {
        let _ = writeln!(s, "# {}={}", f.key(), meta.mode(f).key());
    }
    if let Some((i, n)) = shard {
        let _ = writeln!(s, "# shard={i}/{n}");
    }
    let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::Any(b'\n')).from_writer(vec![]);
    let _ = w.write_record(meta.header());
    for r in rows {
        let mut rec = vec![r.variant.map_or("ref".to_string(), |v| v.to_string())];
        rec.extend(r.values.iter().cloned());
        rec.push(r.fabric.key().to_string());
        rec.extend(r.cells.iter().cloned());
        let _ = w.write_record(&rec);
    }
    let body = w.into_inner().map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
    s + &body
}

/// A sweep CSV read back: its header, its shard (I, N) if it is one, its rows.
type Parsed = (Meta, Option<(usize, usize)>, Vec<Row>);

/// Parses a CSV written by `csv_text`.
fn parse_csv(file: &str, text: &str) -> Result<Parsed, String> {
    let mut kv: BTreeMap<&str, &str> = BTreeMap::new();
    let mut lines = text.lines().peekable();
    if lines.next() != Some("# fabriclab sweep") {
        return Err(format!("{file}: not a fabriclab sweep CSV (its first line is not `# fabriclab sweep`)"));
    }
    let mut body_start = "# fabriclab sweep\n".len();
    while let Some(l) = lines.next_if(|l| l.starts_with('#')) {
        body_start += l.len() + 1;
        let (k, v) = l[1..].trim_start().split_once('=').ok_or_else(|| format!("{file}: header line `{l}`: expected `# key=value`"))?;
        kv.insert(k, v);
    }
    let get = |k: &str| kv.get(k).copied().ok_or_else(|| format!("{file}: the header has no `# {k}=` line"));
    let metric = metric(get("metric")?).ok_or_else(|| format!("{file}: unknown metric `{}`", kv["metric"]))?;
    let variants = get("variants")?.parse::<usize>().map_err(|_| format!("{file}: `# variants=` is not a number"))?;
    let mut modes = [Mode::Off; 2];
    for f in Fabric::ALL {
        modes[f as usize] = Mode::parse(get(f.key())?).ok_or_else(|| format!("{file}: `# {}=` is not per-variant, once or off", f.key()))?;
    }
    let shard = kv.get("shard").map(|s| parse_shard(s).map_err(|m| format!("{file}: {m}"))).transpose()?;
    let mut rd = csv::ReaderBuilder::new().has_headers(true).from_reader(&text.as_bytes()[body_start.min(text.len())..]);
    let header: Vec<String> = rd.headers().map_err(|e| format!("{file}: {e}"))?.iter().map(str::to_string).collect();
    let k = header.len().checked_sub(COLUMNS.len() + 2).ok_or_else(|| format!("{file}: too few columns"))?;
    if header[0] != "variant" || header[k + 1] != "fabric" || header[k + 2..] != COLUMNS {
        return Err(format!("{file}: unexpected columns (written by another version of fabriclab?)"));
    }
    let meta = Meta { scenario: get("scenario")?.to_string(), metric, params: header[1..=k].to_vec(), variants, modes };
    let mut rows = vec![];
    for (n, rec) in rd.records().enumerate() {
        let rec = rec.map_err(|e| format!("{file}: {e}"))?;
        let line = n + 1;
        let variant = match &rec[0] {
            "ref" => None,
            v => Some(
                v.parse::<usize>()
                    .ok()
                    .filter(|&v| v < variants)
                    .ok_or_else(|| format!("{file}: row {line}: variant `{v}` is not 0..{}", variants.saturating_sub(1)))?,
            ),
        };
        let fabric = Fabric::parse(&rec[k + 1]).ok_or_else(|| format!("{file}: row {line}: unknown fabric `{}`", &rec[k + 1]))?;
        let expected = if variant.is_some() { Mode::PerVariant } else { Mode::Once };
        if meta.mode(fabric) != expected {
            return Err(format!("{file}: row {line}: a {} row, but the header says {}={}", fabric.key(), fabric.key(), meta.mode(fabric).key()));
        }
        rows.push(Row {
            variant,
            values: rec.iter().skip(1).take(k).map(str::to_string).collect(),
            fabric,
            cells: rec.iter().skip(k + 2).map(str::to_string).collect(),
        });
    }
    Ok((meta, shard, rows))
}

fn write_outputs(meta: &Meta, rows: &[Row], shard: Option<(usize, usize)>, csv: &Path, svg: Option<&Path>) -> Result<(), ExitCode> {
    let text = csv_text(meta, rows, shard);
    std::fs::write(csv, &text).map_err(|e| fail_io(csv, e))?;
    if let Some(p) = svg {
        // Drawn from the CSV text, exactly as `merge` draws it.
        let (m, _, r) = parse_csv(&csv.display().to_string(), &text).map_err(fail)?;
        std::fs::write(p, plot(&m, &r)).map_err(|e| fail_io(p, e))?;
    }
    Ok(())
}

fn print_result(meta: &Meta, rows: &[Row], shard: Option<(usize, usize)>, csv: &Path, svg: Option<&Path>, json: bool) {
    if json {
        let num = |c: &str| -> serde_json::Value { c.parse::<f64>().ok().map_or(serde_json::Value::Null, serde_json::Value::from) };
        let rows: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| {
                let mut o = serde_json::Map::new();
                o.insert("variant".into(), r.variant.map_or(serde_json::Value::Null, serde_json::Value::from));
                let values: serde_json::Map<String, serde_json::Value> =
                    meta.params.iter().zip(&r.values).filter(|_| r.variant.is_some()).map(|(p, v)| (p.clone(), v.clone().into())).collect();
                o.insert("values".into(), values.into());
                o.insert("fabric".into(), r.fabric.key().into());
                for (c, v) in COLUMNS.iter().zip(&r.cells) {
                    o.insert(c.to_string(), num(v));
                }
                o.into()
            })
            .collect();
        let doc = serde_json::json!({
            "scenario": meta.scenario,
            "metric": meta.metric.name,
            "params": meta.params,
            "variants": meta.variants,
            "roce": meta.mode(Fabric::Roce).key(),
            "infiniband": meta.mode(Fabric::Infiniband).key(),
            "shard": shard.map(|(i, n)| format!("{i}/{n}")),
            "csv": csv.display().to_string(),
            "svg": svg.map(|p| p.display().to_string()),
            "rows": rows,
        });
        println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        return;
    }
    print!("{}", table(meta, rows));
    match svg {
        Some(p) => println!("\nwrote {} and {}", csv.display(), p.display()),
        None => println!("\nwrote {}", csv.display()),
    }
}

/// The readable table.
fn table(meta: &Meta, rows: &[Row]) -> String {
    let busbw = rows.iter().any(|r| !r.cells[meta.column("busbw_gbs")].is_empty());
    let mut cols: Vec<(&str, &str)> = vec![];
    if busbw {
        cols.push(("busbw_gbs", "busbw GB/s"));
    }
    cols.extend([
        ("fct_p99_us", "FCT p99 us"),
        ("slowdown_p99", "slowdown p99"),
        ("goodput_gbps", "goodput Gb/s"),
        ("lossless_drops", "lossless drops"),
        ("pause_frames", "PFC frames"),
        ("ecn_marks", "ECN marks"),
        ("cnps", "CNPs"),
        ("paused_us", "paused us"),
        ("xmit_wait_us", "xmit wait us"),
    ]);
    // The plotted metric is always shown.
    if !cols.iter().any(|(c, _)| *c == meta.metric.column) {
        cols.push((meta.metric.column, meta.metric.name));
    }
    let mut head: Vec<String> = vec!["variant".into()];
    head.extend(meta.params.iter().cloned());
    head.push("fabric".into());
    head.extend(cols.iter().map(|(c, h)| if *c == meta.metric.column { format!("*{h}") } else { h.to_string() }));
    let mut lines = vec![head];
    for r in rows {
        let mut l = vec![r.variant.map_or("ref".into(), |v| v.to_string())];
        l.extend(r.values.iter().map(|v| if r.variant.is_some() { v.clone() } else { "-".into() }));
        l.push(r.fabric.title().into());
        l.extend(cols.iter().map(|(c, _)| {
            let v = &r.cells[meta.column(c)];
            if v.is_empty() {
                "-".into()
            } else {
                v.clone()
            }
        }));
        lines.push(l);
    }
    let k = meta.params.len() + 2;
    let widths: Vec<usize> = (0..lines[0].len()).map(|i| lines.iter().map(|l| l[i].chars().count()).max().unwrap_or(0)).collect();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "sweep {}: {} variant{} of {}; plotted: {} (* column)\n",
        meta.scenario,
        meta.variants,
        if meta.variants == 1 { "" } else { "s" },
        meta.params.join(" × "),
        meta.metric.label
    );
    for l in &lines {
        let cells: Vec<String> = l.iter().zip(&widths).enumerate().map(|(i, (c, &w))| if i < k { format!("{c:<w$}") } else { format!("{c:>w$}") }).collect();
        let _ = writeln!(s, "{}", cells.join("  ").trim_end());
    }
    s
}

pub fn merge(a: MergeArgs) -> ExitCode {
    let mut files: Vec<PathBuf> = vec![];
    for p in &a.inputs {
        if p.is_dir() {
            let rd = match std::fs::read_dir(p) {
                Ok(r) => r,
                Err(e) => return fail(format!("{}: cannot read: {e}", p.display())),
            };
            let mut found: Vec<PathBuf> = rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("sweep.shard-") && n.ends_with(".csv")))
                .collect();
            if found.is_empty() {
                return fail(format!("{}: no shard files (sweep.shard-I-of-N.csv) in it", p.display()));
            }
            found.sort();
            files.extend(found);
        } else {
            files.push(p.clone());
        }
    }
    let out = a.out.clone().unwrap_or_else(|| {
        let first = &a.inputs[0];
        if first.is_dir() {
            first.clone()
        } else {
            first.parent().filter(|p| !p.as_os_str().is_empty()).map_or_else(|| PathBuf::from("."), Path::to_path_buf)
        }
    });
    let (meta, rows) = match join_shards(&files) {
        Ok(x) => x,
        Err(m) => return fail(m),
    };
    if let Err(e) = std::fs::create_dir_all(&out) {
        return fail_io(&out, e);
    }
    let (csv, svg) = (out.join("sweep.csv"), out.join("sweep.svg"));
    if let Err(code) = write_outputs(&meta, &rows, None, &csv, Some(&svg)) {
        return code;
    }
    print_result(&meta, &rows, None, &csv, Some(&svg), a.json);
    ExitCode::SUCCESS
}

/// Reads shard files and checks they make one whole sweep; rows in variant order.
fn join_shards(files: &[PathBuf]) -> Result<(Meta, Vec<Row>), String> {
    let mut meta: Option<(Meta, String)> = None;
    let mut shards: BTreeMap<usize, String> = BTreeMap::new();
    let mut total = 0;
    let mut rows: Vec<(Row, String)> = vec![];
    for f in files {
        let name = f.display().to_string();
        let text = std::fs::read_to_string(f).map_err(|e| format!("{name}: cannot read: {e}"))?;
        let (m, shard, r) = parse_csv(&name, &text)?;
        let (i, n) = shard.ok_or_else(|| format!("{name}: not a shard file (no `# shard=I/N` line); it is already a whole sweep"))?;
        match &meta {
            None => {
                meta = Some((m, name.clone()));
                total = n;
            }
            Some((m0, first)) => {
                if *m0 != m {
                    return Err(format!("{name}: its header differs from {first}'s: the shards are from different sweeps"));
                }
                if n != total {
                    return Err(format!("{name} is shard {i}/{n} but {first} is of {total} shards"));
                }
            }
        }
        if let Some(other) = shards.insert(i, name.clone()) {
            return Err(format!("{other} and {name} are both shard {i}/{n}"));
        }
        for row in &r {
            if let Some(v) = row.variant.filter(|v| v % n != i) {
                return Err(format!("{name}: variant {v} belongs to shard {}/{n}, not {i}/{n}", v % n));
            }
            if row.variant.is_none() && i != 0 {
                return Err(format!("{name}: a {} reference row, which belongs to shard 0", row.fabric.key()));
            }
        }
        rows.extend(r.into_iter().map(|x| (x, name.clone())));
    }
    let Some((meta, _)) = meta else { return Err("no shard files given".into()) };
    let missing: Vec<usize> = (0..total).filter(|i| !shards.contains_key(i)).collect();
    if !missing.is_empty() {
        let lost: Vec<String> = (0..meta.variants).filter(|v| missing.contains(&(v % total))).map(|v| v.to_string()).collect();
        let names: Vec<String> = missing.iter().map(|i| format!("{i}/{total} (sweep.shard-{i}-of-{total}.csv)")).collect();
        return Err(format!(
            "missing shard{} {}: variant{} {} not run{}",
            if names.len() == 1 { "" } else { "s" },
            names.join(", "),
            if lost.len() == 1 { "" } else { "s" },
            if lost.is_empty() { "(none)".into() } else { lost.join(", ") },
            if missing.contains(&0) && meta.modes.contains(&Mode::Once) { ", and the reference run" } else { "" }
        ));
    }
    // Each fabric's rows: every variant (or the single run) exactly once.
    for f in Fabric::ALL {
        let mut seen: BTreeMap<Option<usize>, &str> = BTreeMap::new();
        for (r, file) in rows.iter().filter(|(r, _)| r.fabric == f) {
            if let Some(prev) = seen.insert(r.variant, file) {
                let which = r.variant.map_or("the reference run".to_string(), |v| format!("variant {v}"));
                return Err(format!("{which} on {} appears twice ({prev}, {file})", f.title()));
            }
        }
        let want: Vec<Option<usize>> = match meta.mode(f) {
            Mode::PerVariant => (0..meta.variants).map(Some).collect(),
            Mode::Once => vec![None],
            Mode::Off => vec![],
        };
        let absent: Vec<String> = want.iter().filter(|v| !seen.contains_key(v)).map(|v| v.map_or("ref".to_string(), |v| v.to_string())).collect();
        if !absent.is_empty() {
            return Err(format!(
                "{} rows missing for variant{} {} (a shard file cut short?)",
                f.title(),
                if absent.len() == 1 { "" } else { "s" },
                absent.join(", ")
            ));
        }
    }
    let mut rows: Vec<Row> = rows.into_iter().map(|(r, _)| r).collect();
    rows.sort_by_key(Row::order);
    Ok((meta, rows))
}

// ---------------------------------------------------------------------------------------
// The plot.

const PALETTE: [&str; 8] = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22"];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A step of 1, 2, 2.5 or 5 × 10^k giving about `n` intervals over `range`.
fn nice_step(range: f64, n: f64) -> f64 {
    let raw = (range / n).max(f64::MIN_POSITIVE);
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let m = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 2.5 {
        2.5
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

fn tick_label(v: f64, step: f64) -> String {
    let d = (0..7).find(|&d| ((step * 10f64.powi(d)).round() - step * 10f64.powi(d)).abs() < 1e-6).unwrap_or(6) as usize;
    format!("{v:.d$}")
}

/// A curve: legend text, colour, dashed, and points (x position, y; `None`: a gap).
struct Series {
    label: String,
    color: &'static str,
    dashed: bool,
    class: &'static str,
    points: Vec<(usize, Option<f64>)>,
}

/// The SVG line plot: x = the first parameter's values, y = the metric; a line per
/// fabric and combination of the other parameters; a fabric run once as a dashed
/// horizontal reference line.
fn plot(meta: &Meta, rows: &[Row]) -> String {
    let col = meta.column(meta.metric.column);
    let y_of = |r: &Row| r.cells[col].parse::<f64>().ok();
    // x: the first parameter's values in variant order.
    let mut xs: Vec<String> = vec![];
    for r in rows.iter().filter(|r| r.variant.is_some()) {
        if !xs.contains(&r.values[0]) {
            xs.push(r.values[0].clone());
        }
    }
    let numeric: Option<Vec<f64>> =
        xs.iter().map(|x| x.parse::<f64>().ok()).collect::<Option<Vec<_>>>().filter(|v| v.len() >= 2 && v.windows(2).all(|w| w[0] < w[1]));
    // Series per (fabric, other parameters' values).
    let mut series: Vec<Series> = vec![];
    let mut combos: Vec<String> = vec![];
    let mut refs: Vec<(Fabric, Option<f64>)> = vec![];
    for r in rows {
        let Some(_) = r.variant else {
            refs.push((r.fabric, y_of(r)));
            continue;
        };
        let rest = meta.params[1..].iter().zip(&r.values[1..]).map(|(p, v)| format!("{p}={v}")).collect::<Vec<_>>().join(", ");
        let ci = combos.iter().position(|c| *c == rest).unwrap_or_else(|| {
            combos.push(rest.clone());
            combos.len() - 1
        });
        let label = if rest.is_empty() { r.fabric.title().to_string() } else { format!("{} {rest}", r.fabric.title()) };
        let x = xs.iter().position(|x| *x == r.values[0]).expect("collected above");
        match series.iter_mut().find(|s| s.label == label) {
            Some(s) => s.points.push((x, y_of(r))),
            None => series.push(Series {
                label,
                color: PALETTE[ci % PALETTE.len()],
                dashed: r.fabric == Fabric::Infiniband,
                class: r.fabric.key(),
                points: vec![(x, y_of(r))],
            }),
        }
    }
    if combos.len() == 1 {
        for s in series.iter_mut().filter(|s| s.class == "infiniband") {
            s.color = "#ff7f0e";
        }
    }
    // Scales.
    let all_y: Vec<f64> = series.iter().flat_map(|s| s.points.iter().filter_map(|p| p.1)).chain(refs.iter().filter_map(|r| r.1)).collect();
    let (mut lo, mut hi) = all_y.iter().fold((0f64, 0f64), |(a, b), &y| (a.min(y), b.max(y)));
    if hi - lo <= 0.0 {
        hi = lo + 1.0;
    }
    let step = nice_step(hi - lo, 5.0);
    lo = (lo / step).floor() * step;
    hi = (hi / step).ceil() * step;
    let (l, r, t, b) = (84.0, 560.0, 58.0, 380.0);
    // Room right of the plot for the longest legend entry (about 6.3 px a character).
    let longest = series.iter().map(|s| s.label.chars().count()).chain(refs.iter().map(|(f, _)| f.title().len() + 24)).max().unwrap_or(0);
    let (w, h) = ((r + 64.0 + 6.3 * longest as f64).max(780.0).round(), 440.0);
    let sx = |i: usize| -> f64 {
        match &numeric {
            Some(v) => l + 20.0 + (v[i] - v[0]) / (v[v.len() - 1] - v[0]) * (r - l - 40.0),
            None if xs.len() <= 1 => (l + r) / 2.0,
            None => l + 20.0 + i as f64 / (xs.len() - 1) as f64 * (r - l - 40.0),
        }
    };
    let sy = |y: f64| b - (y - lo) / (hi - lo) * (b - t);
    let mut s = String::new();
    let _ =
        writeln!(s, r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="Helvetica, Arial, sans-serif">"#);
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let title = format!("{}: {} by {}", meta.scenario, meta.metric.label, meta.params.join(" × "));
    let _ = writeln!(s, r#"<text x="{}" y="24" font-size="15" font-weight="bold" text-anchor="middle">{}</text>"#, w / 2.0, esc(&title));
    let sub = match (meta.mode(Fabric::Roce), meta.mode(Fabric::Infiniband)) {
        (Mode::PerVariant, Mode::Once) => "lossless by configuration: RoCEv2 per setting, InfiniBand as the reference",
        (Mode::PerVariant, Mode::PerVariant) => "RoCEv2 (solid) and InfiniBand (dashed) per setting",
        (Mode::PerVariant, Mode::Off) => "RoCEv2 per setting (no InfiniBand side)",
        _ => "per setting",
    };
    let _ = writeln!(s, r##"<text x="{}" y="42" font-size="12" fill="#555" text-anchor="middle">{}</text>"##, w / 2.0, esc(sub));
    // Grid and y ticks.
    let n_ticks = ((hi - lo) / step).round() as usize;
    for k in 0..=n_ticks {
        let v = lo + k as f64 * step;
        let y = sy(v);
        let _ = writeln!(s, r##"<line x1="{l}" y1="{y:.1}" x2="{r}" y2="{y:.1}" stroke="#e4e4e4"/>"##);
        let _ = writeln!(s, r#"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end">{}</text>"#, l - 6.0, y + 4.0, tick_label(v, step));
    }
    let _ = writeln!(s, r##"<rect x="{l}" y="{t}" width="{}" height="{}" fill="none" stroke="#333"/>"##, r - l, b - t);
    // x ticks: the values as given.
    let rotate = xs.len() > 8 || xs.iter().map(|x| x.chars().count()).sum::<usize>() > 60;
    for (i, x) in xs.iter().enumerate() {
        let px = sx(i);
        let _ = writeln!(s, r##"<line x1="{px:.1}" y1="{b}" x2="{px:.1}" y2="{}" stroke="#333"/>"##, b + 5.0);
        if rotate {
            let _ = writeln!(
                s,
                r#"<text x="{px:.1}" y="{}" font-size="11" text-anchor="end" transform="rotate(-35 {px:.1} {})">{}</text>"#,
                b + 16.0,
                b + 16.0,
                esc(x)
            );
        } else {
            let _ = writeln!(s, r#"<text x="{px:.1}" y="{}" font-size="11" text-anchor="middle">{}</text>"#, b + 18.0, esc(x));
        }
    }
    let _ = writeln!(s, r#"<text x="{}" y="{}" font-size="12" text-anchor="middle">{}</text>"#, (l + r) / 2.0, b + 46.0, esc(&meta.params[0]));
    let _ = writeln!(
        s,
        r#"<text x="18" y="{0}" font-size="12" text-anchor="middle" transform="rotate(-90 18 {0})">{1}</text>"#,
        (t + b) / 2.0,
        esc(meta.metric.label)
    );
    // Reference lines, then curves.
    let mut legend: Vec<(String, &str, bool, bool)> = vec![];
    for (f, y) in &refs {
        let label = format!("{} (reference)", f.title());
        if let Some(y) = y {
            let py = sy(*y);
            let _ = writeln!(
                s,
                r##"<line class="{} reference" x1="{l}" y1="{py:.1}" x2="{r}" y2="{py:.1}" stroke="#444" stroke-width="2" stroke-dasharray="7 5"><title>{}: {}</title></line>"##,
                f.key(),
                esc(&label),
                tick_label(*y, 0.001)
            );
        }
        legend.push((if y.is_some() { label } else { format!("{} (reference: no value)", f.title()) }, "#444", true, false));
    }
    for se in &series {
        let dash = if se.dashed { r#" stroke-dasharray="7 5""# } else { "" };
        let mut seg: Vec<String> = vec![];
        let flush = |seg: &mut Vec<String>, s: &mut String| {
            if !seg.is_empty() {
                let _ = writeln!(s, r#"<polyline class="{}" fill="none" stroke="{}" stroke-width="2"{dash} points="{}"/>"#, se.class, se.color, seg.join(" "));
                seg.clear();
            }
        };
        for &(x, y) in &se.points {
            match y {
                Some(y) => seg.push(format!("{:.1},{:.1}", sx(x), sy(y))),
                None => flush(&mut seg, &mut s),
            }
        }
        flush(&mut seg, &mut s);
        for &(x, y) in &se.points {
            if let Some(y) = y {
                let _ = writeln!(
                    s,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{}"><title>{} {}={}: {}</title></circle>"#,
                    sx(x),
                    sy(y),
                    se.color,
                    esc(&se.label),
                    esc(&meta.params[0]),
                    esc(&xs[x]),
                    tick_label(y, 0.001)
                );
            }
        }
        legend.push((se.label.clone(), se.color, se.dashed, true));
    }
    // Legend, right of the plot.
    for (i, (label, color, dashed, marker)) in legend.iter().enumerate() {
        let y = t + 10.0 + i as f64 * 20.0;
        let dash = if *dashed { r#" stroke-dasharray="7 5""# } else { "" };
        let _ = writeln!(s, r#"<line x1="{}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="{color}" stroke-width="2"{dash}/>"#, r + 16.0, r + 46.0);
        if *marker {
            let _ = writeln!(s, r#"<circle cx="{}" cy="{y:.1}" r="3.5" fill="{color}"/>"#, r + 31.0);
        }
        let _ = writeln!(s, r#"<text x="{}" y="{:.1}" font-size="11">{}</text>"#, r + 52.0, y + 4.0, esc(label));
    }
    let _ = writeln!(s, "</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_split_outside_brackets_and_quotes() {
        assert_eq!(split_values("1,2, 3").unwrap(), ["1", "2", "3"]);
        assert_eq!(split_values("[3,4],[5, 6]").unwrap(), ["[3,4]", "[5, 6]"]);
        assert_eq!(split_values(r#""a,b",c"#).unwrap(), [r#""a,b""#, "c"]);
        assert!(split_values("1,,2").is_err());
        assert!(split_values("[1,2").is_err());
        assert!(split_values("1]").is_err());
    }

    #[test]
    fn shard_specs() {
        assert_eq!(parse_shard("0/1"), Ok((0, 1)));
        assert_eq!(parse_shard("15/16"), Ok((15, 16)));
        assert!(parse_shard("16/16").is_err());
        assert!(parse_shard("1/0").is_err());
        assert!(parse_shard("x/2").is_err());
        assert!(parse_shard("3").is_err());
    }

    #[test]
    fn the_first_parameter_is_outermost() {
        let p = |n: usize| Param { name: String::new(), values: vec![String::new(); n], edits: vec![] };
        let ps = [p(2), p(3)];
        let all: Vec<Vec<usize>> = (0..6).map(|v| combo(&ps, v)).collect();
        assert_eq!(all, [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]]);
    }

    #[test]
    fn shortcuts_expand_against_the_file() {
        let t: Table = toml::from_str(
            "[topology]\nkind = \"leaf-spine\"\n[roce]\necn = [{ kmin = \"1KB\" }, { kmin = \"2KB\" }]\n[[traffic]]\nkind = \"incast\"\nsenders = [4, 5, 6]\n",
        )
        .unwrap();
        assert_eq!(expand("incast-degree", "2", &t).unwrap(), [Edit::new("traffic[0].senders", "[4, 5]")]);
        assert!(expand("incast-degree", "4", &t).unwrap_err().contains("1..3"));
        assert_eq!(expand("pfc", "off", &t).unwrap(), [Edit::new("roce.pfc.enabled", "false")]);
        assert_eq!(expand("ecn-kmin", "5KB", &t).unwrap().len(), 2);
        assert_eq!(expand("oversubscription", "2", &t).unwrap(), [Edit::new("topology.oversubscription", "2")]);
        assert!(expand("roce ecn", "1", &t).is_err());
        assert!(Fabric::Infiniband.applies("traffic[0].size") && !Fabric::Infiniband.applies("buffer.headroom"));
        assert!(!Fabric::Roce.applies("infiniband.vl_buffer") && Fabric::Roce.applies("roce.ecn[0].kmin"));
    }

    #[test]
    fn csv_round_trips() {
        let meta = Meta { scenario: "x".into(), metric: &METRICS[1], params: vec!["a.b".into()], variants: 2, modes: [Mode::PerVariant, Mode::Once] };
        let row = |v: Option<usize>, f, val: &str| Row { variant: v, values: vec![val.into()], fabric: f, cells: vec!["1.000".into(); COLUMNS.len()] };
        let rows = vec![row(Some(0), Fabric::Roce, "[1, 2]"), row(Some(1), Fabric::Roce, "3"), row(None, Fabric::Infiniband, "")];
        let text = csv_text(&meta, &rows, Some((0, 1)));
        let (m, shard, back) = parse_csv("t", &text).unwrap();
        assert_eq!(m, meta);
        assert_eq!(shard, Some((0, 1)));
        assert_eq!(csv_text(&m, &back, Some((0, 1))), text);
        assert!(plot(&m, &back).contains("<polyline class=\"roce\""));
    }
}
