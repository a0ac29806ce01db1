//! `fabriclab verify`: checks SONiC `config_db.json` files (see `plan::verify` for the
//! findings and their sources). Human output grouped by severity, or `--json`. Exit code 0
//! when there is no error (warnings alone pass, as a CI step expects), 1 when any finding
//! is an error, 2 when a file cannot be read or parsed (the error names the file and the
//! `TABLE|key|field`).
//!
//! `--switch NAME=F,F` groups files into a switch whatever their hostnames; `--simulate`
//! runs the configuration on the engine ([`simulate`]), exit code 1 also when it drops in
//! a lossless class; `--emit-scenario FILE` writes the scenario it runs.

mod headroom;
mod simulate;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use plan::verify::{self as v, Group, Input, Options, Report, Severity};
use units::Bytes;

/// `fabriclab verify` arguments.
#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// SONiC config_db.json files; files with the same DEVICE_METADATA hostname are one switch.
    #[arg(required_unless_present = "switch", value_name = "CONFIG_DB.json")]
    pub files: Vec<PathBuf>,
    /// DSCP of RoCE data packets (NVIDIA ConnectX default 26).
    #[arg(long, default_value_t = 26, value_parser = clap::value_parser!(u8).range(0..64))]
    pub roce_dscp: u8,
    /// DSCP of CNPs (NVIDIA ConnectX default 48).
    #[arg(long, default_value_t = 48, value_parser = clap::value_parser!(u8).range(0..64))]
    pub cnp_dscp: u8,
    /// RoCE path MTU in bytes (256, 512, 1024, 2048 or 4096).
    #[arg(long, default_value_t = 4096)]
    pub path_mtu: u64,
    /// The switch buffer's cell size in bytes (config_db does not hold it); with it, each
    /// lossless profile's xoff is checked against the IEEE 802.1Qbb worst case.
    #[arg(long, value_name = "BYTES")]
    pub cell: Option<u64>,
    /// The ASIC's total buffer in bytes (config_db does not hold it; default: the
    /// egress_lossless_pool size, as SONiC's Mellanox pool sizing takes it): the pools, PG
    /// and queue reservations of NVIDIA Spectrum switches are checked against it.
    #[arg(long, value_name = "BYTES")]
    pub mmu_size: Option<u64>,
    /// The NICs' RC QP `timeout` (local ACK timeout 4.096 us x 2^N; default NCCL's 20):
    /// with `--retry-cnt`, the retry budget each PFC watchdog must detect a storm within.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..32))]
    pub ib_timeout: Option<u32>,
    /// The NICs' RC QP `retry_cnt` (default NCCL's 7).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..8))]
    pub retry_cnt: Option<u32>,
    /// A NIC settings TOML (repeatable): one NIC port and the switch port it is cabled to
    /// (fields: docs/verify.md).
    #[arg(long = "nic", value_name = "NIC.toml")]
    pub nics: Vec<PathBuf>,
    /// Print one JSON document.
    #[arg(long)]
    pub json: bool,

    // --- `--switch`, `--simulate`, `--emit-scenario` (docs/verify.md "Simulating") ---
    /// Files that form one switch named NAME, whatever their hostnames (repeatable):
    /// `--switch leaf1=leaf1.json,leaf1-buffers.json`. A file may not also be given loose.
    #[arg(long = "switch", value_name = "NAME=F,F")]
    pub switch: Vec<String>,
    /// Run the configuration on the engine: the topology from DEVICE_NEIGHBOR, the
    /// configured buffers, maps, ECN and DCQCN, the worst-case incast; report drops and
    /// pauses per port (exit code 1 on a lossless drop). Needs --cell.
    #[arg(long)]
    pub simulate: bool,
    /// With --simulate: write the scenario it runs, each value with its origin.
    #[arg(long, value_name = "FILE", requires = "simulate")]
    pub emit_scenario: Option<PathBuf>,
    /// With --simulate: the wiring from this scenario-format explicit topology instead of
    /// DEVICE_NEIGHBOR (switch port i = the PORT entry with index i).
    #[arg(long, value_name = "FILE", requires = "simulate")]
    pub topology: Option<PathBuf>,
}

/// `--switch NAME=F,F` parsed, and every file named, loose files first.
fn groups(a: &VerifyArgs) -> Result<(Vec<Group>, Vec<PathBuf>), String> {
    let mut out = vec![];
    let mut files = a.files.clone();
    for g in &a.switch {
        let Some((name, list)) = g.split_once('=').filter(|(n, l)| !n.trim().is_empty() && !l.trim().is_empty()) else {
            return Err(format!("--switch {g:?}: expected NAME=FILE[,FILE...]"));
        };
        let mut group = Group { name: name.trim().to_string(), files: vec![] };
        for f in list.split(',').map(str::trim).filter(|f| !f.is_empty()) {
            let path = PathBuf::from(f);
            let same = |x: &PathBuf| x == &path || matches!((x.canonicalize(), path.canonicalize()), (Ok(p), Ok(q)) if p == q);
            if a.files.iter().any(same) {
                return Err(format!("--switch {name}: {f} is also given as a loose file; give it once"));
            }
            if out.iter().any(|o: &Group| o.files.iter().any(|x| x == f)) || group.files.iter().any(|x| x == f) {
                return Err(format!("--switch {name}: {f} is named twice"));
            }
            group.files.push(path.display().to_string());
            files.push(path);
        }
        out.push(group);
    }
    Ok((out, files))
}

pub fn run(a: VerifyArgs) -> ExitCode {
    match run_checked(&a) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// The files' texts, each with its path; an unreadable file is an error naming it.
fn read_all(paths: &[PathBuf]) -> Result<Vec<(String, String)>, String> {
    paths.iter().map(|f| std::fs::read_to_string(f).map(|t| (f.display().to_string(), t)).map_err(|e| format!("{}: {e}", f.display()))).collect()
}

/// [`run`], with every input error (exit code 2) as an `Err`.
fn run_checked(a: &VerifyArgs) -> Result<ExitCode, String> {
    if !model::frame::IB_MTUS.contains(&a.path_mtu) {
        return Err(format!("--path-mtu {}: expected an IB MTU: 256, 512, 1024, 2048 or 4096", a.path_mtu));
    }
    if a.mmu_size == Some(0) {
        return Err("--mmu-size 0: expected the ASIC's buffer in bytes".into());
    }
    let (groups, files) = groups(a)?;
    let sources = read_all(&files)?;
    let nics = read_all(&a.nics)?;
    if a.cell == Some(0) {
        return Err("--cell 0: expected a cell size in bytes, such as 256".into());
    }
    let opts = Options {
        roce_dscp: a.roce_dscp,
        cnp_dscp: a.cnp_dscp,
        path_mtu: Bytes(a.path_mtu),
        cell: a.cell.map(Bytes),
        mmu_size: a.mmu_size.map(Bytes),
        ib_timeout: a.ib_timeout,
        retry_cnt: a.retry_cnt,
    };
    let mut input = Input::read(&sources, &groups, &nics).map_err(|e| e.to_string())?;
    let r = v::check(&input, &opts).map_err(|e| e.to_string())?;
    // --- `--simulate` ---
    if let Some(f) = &a.topology {
        input.topology = read_all(std::slice::from_ref(f))?.pop();
    }
    let sim = if a.simulate { Some(simulate::simulate(&input, &opts, a.emit_scenario.as_deref())?) } else { None };
    if a.json {
        let mut doc = serde_json::to_value(&r).map_err(|e| e.to_string())?;
        if let Some(s) = &sim {
            doc["simulation"] = serde_json::to_value(s).map_err(|e| e.to_string())?;
        }
        println!("{}", serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?);
    } else {
        print!("{}", text(&r, &opts));
        if let Some(s) = &sim {
            print!("{}", simulate::text(s));
        }
    }
    let lossless_drops = sim.as_ref().is_some_and(|s| s.lossless_drops() > 0);
    Ok(if r.errors() > 0 || lossless_drops { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// The human report: switches, then errors, warnings, checks not run and ignored tables.
fn text(r: &Report, o: &Options) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let cell = o.cell.map_or("not given (the platform's where known)".to_string(), |c| format!("{} B", c.0));
    let _ = writeln!(s, "assuming RoCE DSCP {}, CNP DSCP {}, path MTU {} B, buffer cell {cell}", o.roce_dscp, o.cnp_dscp, o.path_mtu.0);
    for (name, files) in &r.switches {
        let _ = writeln!(s, "switch {name}: {}", files.join(", "));
    }
    for (sev, title) in [(Severity::Error, "errors"), (Severity::Warning, "warnings")] {
        let fs: Vec<_> = r.findings.iter().filter(|f| f.severity == sev).collect();
        if fs.is_empty() {
            continue;
        }
        let _ = writeln!(s, "\n{title} ({}):", fs.len());
        for f in fs {
            let ports = if f.ports.len() > 4 { format!("{} and {} more", f.ports[..4].join(", "), f.ports.len() - 4) } else { f.ports.join(", ") };
            let _ = writeln!(s, "  [{}] {} {}", f.id, f.switch, f.place);
            // Profile-level findings (dynamic_th) name no port.
            let ports = if ports.is_empty() { String::new() } else { format!(" (ports: {ports})") };
            let _ = writeln!(s, "    what:    {}{ports}", f.what);
            let _ = writeln!(s, "    failure: {}", f.failure);
            let _ = writeln!(s, "    fix:     {}", f.fix);
        }
    }
    if !r.not_checked.is_empty() {
        let _ = writeln!(s, "\nnot checked ({}):", r.not_checked.len());
        for n in &r.not_checked {
            let missing =
                if n.missing_table.starts_with('(') { n.missing_table.trim_matches(['(', ')']).to_string() } else { format!("{} table", n.missing_table) };
            let _ = writeln!(s, "  {} {}: no {missing} ({})", n.switch, n.check, n.note);
        }
    }
    if !r.ignored_tables.is_empty() {
        let _ = writeln!(
            s,
            "\nnotes: {} table(s) not read by verify, ignored (e.g. {}: {})",
            r.ignored_tables.len(),
            r.ignored_tables[0].file,
            r.ignored_tables[0].table
        );
    }
    let _ = writeln!(s, "\n{} error(s), {} warning(s)", r.errors(), r.warnings());
    s
}
