//! `fabriclab verify`: reads a fabric's SONiC `config_db.json` files ([`config_db`]) and
//! reports where the lossless RoCE configuration is wrong ([`checks`]): each finding with
//! its severity, the file and `TABLE|key|field` to change, what is wrong, the failure it
//! leads to and the fix with its value.
//!
//! Implemented: the DSCP → TC → PG → queue chain of the RoCE DSCP and the class of CNPs,
//! PFC priorities differing between link peers (DEVICE_NEIGHBOR), port MTU below the RoCE
//! path MTU plus its headers, cable length missing for a lossless port, a lossless PG whose
//! BUFFER_PG entry names a profile without headroom (or no profile that exists), ECN/WRED
//! missing on a lossless queue, a lossless PG's xoff (configured, or the one SONiC makes at
//! run time) below the IEEE 802.1Qbb worst case (the cell size from `--cell` or the
//! platform, [`platform`]) or different from SONiC's own (the switch's pg_profile_lookup.ini,
//! [`pg_lookup`], in the traditional model; the headroom Lua on Spectrum in the dynamic
//! one), a missing pg_profile_lookup.ini row for a lossless port, the buffer reservations
//! against the ASIC's buffer (Spectrum) and the shared headroom pool against the lossless
//! PGs' xoff, ECN marking that starts only after PFC fires (the planner's test and PFC
//! point), the PFC watchdog missing on a lossless port or queue or slower than the NICs'
//! RC retry budget, a profile's `dynamic_th` outside Mellanox SAI's range, and NIC settings
//! ([`nic`]) against their switch port: PFC priorities, trust mode, the RoCE and CNP DSCPs
//! and priorities, DCQCN enabled on the RoCE priority; the queue a lossless priority's PFC
//! frame pauses against the queue its TC waits in, CNPs queued where PFC pauses them or
//! weighted behind a strict queue, and the NICs' DCQCN parameters (the same on every NIC,
//! rates within the line rate, a CNP interval shorter than the ECN-to-PFC window).
//!
//! [`simulate`] turns the configuration into a scenario for `--simulate`.
//!
//! Left out (see docs/verify.md): other ASICs' cell and buffer sizes, buffer accounting and
//! dynamic_th ranges.

pub mod checks;
pub mod config_db;
pub mod nic;
pub mod pg_lookup;
pub mod platform;
pub mod simulate;

use serde::Serialize;
use units::Bytes;

pub use checks::{Finding, Severity};
pub use config_db::{Group, Place, ReadError, Switch};
pub use nic::NicConfig;

/// What the verifier assumes about the RoCE traffic (the NIC side, which config_db lacks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// DSCP of RoCE data packets. NVIDIA ConnectX default 26 (as `plan roce`'s default).
    pub roce_dscp: u8,
    /// DSCP of CNPs. NVIDIA ConnectX default 48 (as `plan roce`'s default).
    pub cnp_dscp: u8,
    /// RoCE (IB) path MTU: 4096 B, the largest IBTA MTU and what ConnectX uses on a 9000+ B
    /// Ethernet MTU.
    pub path_mtu: Bytes,
    /// The switch buffer's cell size, which config_db does not hold; `None`: the platform's
    /// ([`platform::cell_size`]), and without one the checks that need it are not run.
    pub cell: Option<Bytes>,
    /// The ASIC's total buffer (`--mmu-size`); `None`: the platform's
    /// ([`platform::mmu_size`]), and without one the buffer accounting is not run.
    pub mmu_size: Option<Bytes>,
    /// The NICs' RC QP `timeout` (local ACK timeout exponent, 1..31); `None`: NCCL's
    /// default [`model::ib::NCCL_IB_TIMEOUT`], said so in the finding.
    pub ib_timeout: Option<u32>,
    /// The NICs' RC QP `retry_cnt` (0..7); `None`: NCCL's default
    /// [`model::ib::NCCL_IB_RETRY_CNT`].
    pub retry_cnt: Option<u32>,
}

impl Default for Options {
    fn default() -> Self {
        Options { roce_dscp: 26, cnp_dscp: 48, path_mtu: Bytes(4096), cell: None, mmu_size: None, ib_timeout: None, retry_cnt: None }
    }
}

/// A check that could not run on a switch because a table it reads is absent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NotChecked {
    pub switch: String,
    pub check: &'static str,
    pub missing_table: &'static str,
    pub note: String,
}

/// A table in the files that the verifier does not read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Ignored {
    pub file: String,
    pub table: String,
}

/// Everything `verify` found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Report {
    /// Switch names with their files, in the order checked.
    pub switches: Vec<(String, Vec<String>)>,
    /// Errors first, then warnings; in check order within each.
    pub findings: Vec<Finding>,
    pub not_checked: Vec<NotChecked>,
    pub ignored_tables: Vec<Ignored>,
}

impl Report {
    pub fn errors(&self) -> usize {
        self.findings.iter().filter(|f| f.severity == Severity::Error).count()
    }

    pub fn warnings(&self) -> usize {
        self.findings.iter().filter(|f| f.severity == Severity::Warning).count()
    }
}

/// Verifies the `(file name, text)` config_db sources; an error means unreadable input.
pub fn verify(sources: &[(String, String)], opts: &Options) -> Result<Report, ReadError> {
    verify_with_nics(sources, &[], opts)
}

/// [`verify`] with NIC settings files (`(file name, TOML text)`, [`NicConfig`]).
pub fn verify_with_nics(sources: &[(String, String)], nics: &[(String, String)], opts: &Options) -> Result<Report, ReadError> {
    check(&Input::read(sources, &[], nics)?, opts)
}

/// A fabric's configuration as read: its switches (config_db files merged by hostname or
/// `--switch` group) and its NIC files. What [`check`] and [`simulate`] take.
#[derive(Clone, Debug)]
pub struct Input {
    pub switches: Vec<Switch>,
    pub nics: Vec<(String, NicConfig)>,
    /// `--topology FILE` for [`simulate`]: (file name, text); `None`: DEVICE_NEIGHBOR.
    pub topology: Option<(String, String)>,
}

impl Input {
    /// Reads the config_db sources (grouped by `groups`, see [`config_db::read_grouped`])
    /// and the NIC files; an error means unreadable input.
    pub fn read(sources: &[(String, String)], groups: &[Group], nics: &[(String, String)]) -> Result<Input, ReadError> {
        let switches = config_db::read_grouped(sources, groups)?;
        let nics = nics.iter().map(|(f, t)| Ok((f.clone(), NicConfig::parse(f, t)?))).collect::<Result<Vec<_>, ReadError>>()?;
        Ok(Input { switches, nics, topology: None })
    }
}

/// Every finding on a fabric already read.
pub fn check(input: &Input, opts: &Options) -> Result<Report, ReadError> {
    let (switches, nics) = (&input.switches, &input.nics);
    let (findings, not_checked) = checks::run(switches, nics, opts)?;
    let ignored_tables = switches.iter().flat_map(|s| s.ignored.iter().map(|(file, table)| Ignored { file: file.clone(), table: table.clone() })).collect();
    Ok(Report { switches: switches.iter().map(|s| (s.name().to_string(), s.files.clone())).collect(), findings, not_checked, ignored_tables })
}
