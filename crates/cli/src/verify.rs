//! `fabriclab verify`: checks SONiC `config_db.json` files (see `plan::verify` for the
//! findings and their sources). Human output grouped by severity, or `--json`. Exit code 0
//! when there is no error (warnings alone pass, as a CI step expects), 1 when any finding
//! is an error, 2 when a file cannot be read or parsed (the error names the file and the
//! `TABLE|key|field`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use plan::verify::{self as v, Options, Report, Severity};
use units::Bytes;

/// `fabriclab verify` arguments.
#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// SONiC config_db.json files; files with the same DEVICE_METADATA hostname are one switch.
    #[arg(required = true, value_name = "CONFIG_DB.json")]
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
}

pub fn run(a: VerifyArgs) -> ExitCode {
    if !model::frame::IB_MTUS.contains(&a.path_mtu) {
        eprintln!("error: --path-mtu {}: expected an IB MTU: 256, 512, 1024, 2048 or 4096", a.path_mtu);
        return ExitCode::from(2);
    }
    let mut sources = vec![];
    for f in &a.files {
        match std::fs::read_to_string(f) {
            Ok(t) => sources.push((f.display().to_string(), t)),
            Err(e) => {
                eprintln!("error: {}: {e}", f.display());
                return ExitCode::from(2);
            }
        }
    }
    let mut nics = vec![];
    for f in &a.nics {
        match std::fs::read_to_string(f) {
            Ok(t) => nics.push((f.display().to_string(), t)),
            Err(e) => {
                eprintln!("error: {}: {e}", f.display());
                return ExitCode::from(2);
            }
        }
    }
    if a.mmu_size == Some(0) {
        eprintln!("error: --mmu-size 0: expected the ASIC's buffer in bytes");
        return ExitCode::from(2);
    }
    if a.cell == Some(0) {
        eprintln!("error: --cell 0: expected a cell size in bytes, such as 256");
        return ExitCode::from(2);
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
    let r = match v::verify_with_nics(&sources, &nics, &opts) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if a.json {
        match serde_json::to_string_pretty(&r) {
            Ok(s) => println!("{s}"),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        }
    } else {
        print!("{}", text(&r, &opts));
    }
    if r.errors() > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
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
