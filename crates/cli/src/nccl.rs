//! `fabriclab run FILE -b MIN -e MAX [-f FACTOR]`: the scenario's collective at every size
//! of an nccl-tests sweep, one simulation per size (in parallel on all cores), printed as
//! nccl-tests prints its table.

use std::fmt::Write as _;
use std::process::ExitCode;

use scenario::variant::{load_variant, Edit};

use crate::par::par_map;

fn size_arg(flag: &str, s: &str) -> Result<u64, String> {
    workload::parse_nccl_size(s)
        .or_else(|| s.parse::<units::Bytes>().ok().map(|b| b.0))
        .ok_or_else(|| format!("{flag} {s}: expected a size in bytes, as nccl-tests takes it (8, 64K, 128M, 8G = 8 GiB) or with a unit (1MB, 4MiB)"))
}

/// One size's result.
#[derive(serde::Serialize)]
struct Row {
    size_bytes: u64,
    count: u64,
    time_us: Option<f64>,
    algbw_gbs: Option<f64>,
    busbw_gbs: Option<f64>,
    lossless_drops: u64,
    pause_frames: u64,
}

pub fn run(file: &std::path::Path, b: &str, e: &str, f: &str, json: bool) -> ExitCode {
    let name = file.display().to_string();
    let fail = |m: String| {
        eprintln!("error: {m}");
        ExitCode::from(2)
    };
    let sizes = match sizes(b, e, f) {
        Ok(v) => v,
        Err(m) => return fail(m),
    };
    let src = match std::fs::read_to_string(file) {
        Ok(s) => s,
        Err(e) => return fail(format!("{name}: cannot read: {e}")),
    };
    let base = match scenario::load_str(&name, &src) {
        Ok(w) => w,
        Err(e) => return fail(e.to_string()),
    };
    let [job] = base.jobs.as_slice() else {
        return fail(format!("{name}: a size sweep needs exactly one `collective` traffic entry; the file has {}", base.jobs.len()));
    };
    let rows = match simulate(&name, &src, job.group, job.op, job.ranks, &sizes) {
        Ok(rows) => rows,
        Err(m) => return fail(m),
    };
    if json {
        let (op, ranks) = (job.op, job.ranks);
        let doc = serde_json::json!({
            "scenario": base.name, "fabric": base.params.tech, "op": op.name(), "algorithm": job.algorithm.name(),
            "ranks": ranks, "bus_factor": workload::bus_factor(op, ranks), "rows": rows,
        });
        println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        return ExitCode::SUCCESS;
    }
    print!("{}", table(&base, job.op, job.algorithm, job.ranks, &rows));
    ExitCode::SUCCESS
}

/// The sweep's sizes from `-b`, `-e` and `-f`, as nccl-tests steps them.
fn sizes(b: &str, e: &str, f: &str) -> Result<Vec<u64>, String> {
    let (begin, end) = match (size_arg("-b", b), size_arg("-e", e)) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(m), _) | (_, Err(m)) => return Err(m),
    };
    let factor = f.parse::<u64>().map_err(|_| format!("-f {f}: expected an integer step factor (2 doubles the size)"))?;
    workload::size_sweep(begin, end, factor).map_err(|m| format!("-b/-e/-f: {m}"))
}

/// One simulation per size, spread over the cores; rows in size order.
/// `group` is the collective's `[[traffic]]` index.
fn simulate(name: &str, src: &str, group: u32, op: workload::Collective, ranks: u32, sizes: &[u64]) -> Result<Vec<Row>, String> {
    let path = format!("traffic[{group}].size");
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let results = par_map(workers, sizes.len(), |i| {
        let size = sizes[i];
        load_variant(name, src, &[Edit::new(&path, format!("{size}B"))]).map_err(|e| e.to_string()).and_then(|w| {
            let (_, rep) = report::run_watched(&w, false, &mut crate::progress::CancelOnly);
            if rep.incomplete.is_some() {
                return Err("cancelled (Ctrl-C)".to_string());
            }
            let c = &rep.collectives[0];
            let row = c.time_ps.map(|t| workload::NcclRow::new(op, ranks, size, t));
            Ok(Row {
                size_bytes: size,
                count: workload::NcclRow::new(op, ranks, size, 1).count,
                time_us: row.as_ref().map(|r| r.time_us),
                algbw_gbs: row.as_ref().map(|r| r.algbw_gbs),
                busbw_gbs: row.as_ref().map(|r| r.busbw_gbs),
                lossless_drops: rep.totals.lossless_drops,
                pause_frames: rep.totals.pfc_frames,
            })
        })
    });
    results.into_iter().collect()
}

/// The rows as nccl-tests prints its table, with a header saying what was simulated.
fn table(base: &scenario::World, op: workload::Collective, algorithm: workload::Algorithm, ranks: u32, rows: &[Row]) -> String {
    let mut s = String::new();
    let tech = match base.params.tech {
        fabric::params::Tech::Roce => "RoCEv2",
        fabric::params::Tech::Infiniband => "InfiniBand",
    };
    let _ = writeln!(s, "# fabriclab {}: {} {} on {ranks} ranks, {tech}, simulated (one run per size)", base.name, op.name(), algorithm.name());
    let _ = writeln!(s, "# busbw = algbw x {:.4} (nccl-tests factor); GB/s = 10^9 B/s", workload::bus_factor(op, ranks));
    if algorithm == workload::Algorithm::Sharp {
        let _ = writeln!(s, "# sharp: the factor is nccl-tests' 2(n-1)/n, which src/all_reduce.cu applies to every all-reduce algorithm (CollNet/NVLS too);");
        let _ = writeln!(s, "# each rank's link carries S once each way, so algbw (not busbw) is what to hold against the link's payload rate");
    }
    let _ = writeln!(s, "#");
    let _ =
        writeln!(s, "# {:>12} {:>12} {:>8} {:>6} {:>6} {:>11} {:>7} {:>7} {:>6}", "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong");
    let _ = writeln!(s, "# {:>12} {:>12} {:>8} {:>6} {:>6} {:>11} {:>7} {:>7} {:>6}", "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "");
    let redop = match op {
        workload::Collective::AllReduce | workload::Collective::ReduceScatter => "sum",
        _ => "none",
    };
    let root: i64 = if op == workload::Collective::Broadcast { 0 } else { -1 };
    let mut sum = 0.0;
    for r in rows {
        let fmt = |x: Option<f64>, p: usize| x.map_or("-".to_string(), |v| format!("{v:.p$}"));
        let _ = writeln!(
            s,
            "  {:>12} {:>12} {:>8} {:>6} {:>6} {:>11} {:>7} {:>7} {:>6}",
            r.size_bytes,
            r.count,
            "float",
            redop,
            root,
            fmt(r.time_us, 2),
            fmt(r.algbw_gbs, 2),
            fmt(r.busbw_gbs, 2),
            "N/A"
        );
        sum += r.busbw_gbs.unwrap_or(0.0);
    }
    let _ = writeln!(s, "# Avg bus bandwidth    : {:.4}", sum / rows.len() as f64);
    let drops: u64 = rows.iter().map(|r| r.lossless_drops).sum();
    if drops > 0 {
        let _ = writeln!(s, "# warning: {drops} packets dropped in lossless classes across the sweep");
    }
    s
}
