//! `fabriclab burst`'s inputs: the flags ([`BurstArgs`]) read into a
//! `plan::burst::BurstInput`. An error names the flag and what it expects. [`planned`] and
//! [`json_value`] are the command's answer without `--prove`, as the CLI prints it with
//! `--json` and `fabriclab serve` returns it.
//!
//! Left out: the model itself (`plan::burst`) and `--prove` (a simulation, in the CLI).

use clap::Args;
use units::{BitRate, Bytes};

use crate::burst::{self as b, BurstInput, BurstPlan, Class};

/// `fabriclab burst` arguments.
#[derive(Args, Debug)]
pub struct BurstArgs {
    /// Synchronised senders.
    #[arg(long, value_name = "N")]
    pub senders: u32,
    /// Payload per sender, with a unit (64KB, 1MiB).
    #[arg(long, value_name = "BYTES")]
    pub burst: String,
    /// Each sender's link speed (100Gbps).
    #[arg(long, value_name = "RATE")]
    pub in_speed: String,
    /// The egress port's speed.
    #[arg(long, value_name = "RATE")]
    pub out_speed: String,
    /// Shared pool S (after reserved and headroom), e.g. 16MiB.
    #[arg(long, value_name = "BYTES")]
    pub buffer: String,
    /// Buffer cell size.
    #[arg(long, value_name = "BYTES", default_value = "256B")]
    pub cell: String,
    /// α = 2^dynamic_th (SONiC), -7..7.
    #[arg(long, value_name = "N", default_value = "0", allow_hyphen_values = true)]
    pub dynamic_th: String,
    /// Reserved bytes per ingress (port, PG).
    #[arg(long, value_name = "BYTES", default_value = "0B")]
    pub reserved: String,
    /// lossy (drops) or lossless (PFC).
    #[arg(long, value_name = "lossy|lossless", default_value = "lossless")]
    pub class: String,
    /// IB path MTU.
    #[arg(long, value_name = "BYTES", default_value = "4096B")]
    pub mtu: String,
    /// PFC resume offset below the trigger (default: two maximum frames).
    #[arg(long, value_name = "BYTES")]
    pub xon_offset: Option<String>,
    /// Print one JSON document.
    #[arg(long)]
    pub json: bool,
    /// Print every formula with its numbers and source.
    #[arg(long)]
    pub explain: bool,
    /// Also simulate it and show analytical vs simulated.
    #[arg(long)]
    pub prove: bool,
}

fn bytes(flag: &str, s: &str) -> Result<Bytes, String> {
    s.parse::<Bytes>().map_err(|e| format!("--{flag} {s}: {e}; expected bytes with a unit such as 64KB or 16MiB"))
}

fn rate(flag: &str, s: &str) -> Result<BitRate, String> {
    s.parse::<BitRate>().map_err(|e| format!("--{flag} {s}: {e}; expected a rate with a unit such as 100Gbps"))
}

/// Parses and checks the flags into the planner's input.
pub fn input(a: &BurstArgs) -> Result<BurstInput, String> {
    let class = match a.class.as_str() {
        "lossy" => Class::Lossy,
        "lossless" => Class::Lossless,
        o => return Err(format!("--class {o}: expected lossy or lossless")),
    };
    let dynamic_th = a.dynamic_th.parse::<i8>().map_err(|_| format!("--dynamic-th {}: expected an integer -7..7 (α = 2^dynamic_th)", a.dynamic_th))?;
    Ok(BurstInput {
        senders: a.senders,
        burst: bytes("burst", &a.burst)?,
        in_speed: rate("in-speed", &a.in_speed)?,
        out_speed: rate("out-speed", &a.out_speed)?,
        shared: bytes("buffer", &a.buffer)?,
        cell: bytes("cell", &a.cell)?,
        dynamic_th,
        reserved: bytes("reserved", &a.reserved)?,
        class,
        mtu: bytes("mtu", &a.mtu)?,
        xon_offset: a.xon_offset.as_deref().map(|s| bytes("xon-offset", s)).transpose()?,
    })
}

/// The inputs and the plan, or the message the CLI prints after `error: ` (exit code 2).
pub fn planned(a: &BurstArgs) -> Result<(BurstInput, BurstPlan), String> {
    let i = input(a)?;
    let p = b::plan(&i).map_err(|e| format!("--{}: {}", e.input, e.msg))?;
    Ok((i, p))
}

/// `burst --json`'s document without `--prove`: the plan and, with `--explain`, every
/// formula with its numbers and source.
pub fn json_value(a: &BurstArgs, i: &BurstInput, p: &BurstPlan) -> serde_json::Value {
    let mut v = serde_json::json!({ "plan": p });
    if a.explain {
        v["explain"] = serde_json::json!(b::explain(i, p));
    }
    v
}
