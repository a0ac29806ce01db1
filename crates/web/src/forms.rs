//! The planners' forms, from the clap structs the CLI parses (`plan::args`): each flag's
//! name, value name, default, help and whether it is a switch. `/api/forms` returns them
//! and the pages build their inputs from it, so a flag's help, unit and default live in
//! one place, the flag's doc comment.
//!
//! Left out: flags that name files or simulate (`--config`, `--emit-scenario`,
//! `--prove`) and `--json` (the API always answers JSON): [`REFUSED`] says why.

use axum::Json;
use clap::{ArgAction, Args, Command};
use plan::args::{burst::BurstArgs, design::DesignArgs, roce::RoceArgs};
use serde::Serialize;

/// A planner behind the API.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Planner {
    Roce,
    Design,
    Burst,
}

impl Planner {
    pub const ALL: [Planner; 3] = [Planner::Roce, Planner::Design, Planner::Burst];

    /// The key in `/api/forms`.
    pub fn key(self) -> &'static str {
        match self {
            Planner::Roce => "roce",
            Planner::Design => "design",
            Planner::Burst => "burst",
        }
    }

    /// The CLI's words for it.
    pub fn subcommand(self) -> &'static [&'static str] {
        match self {
            Planner::Roce => &["plan", "roce"],
            Planner::Design => &["design"],
            Planner::Burst => &["burst"],
        }
    }

    /// The clap command the CLI parses for this planner (its usage line names the CLI's).
    pub fn command(self) -> Command {
        let c = |bin: &'static str| Command::new(bin).bin_name(bin).disable_help_flag(true).disable_version_flag(true);
        match self {
            Planner::Roce => RoceArgs::augment_args(c("fabriclab plan roce")),
            Planner::Design => DesignArgs::augment_args(c("fabriclab design")),
            Planner::Burst => BurstArgs::augment_args(c("fabriclab burst")),
        }
    }
}

/// Flags the API does not take, and why.
pub const REFUSED: &[(&str, &str)] = &[
    ("config", "--config reads a file on the server: send its fields as inputs instead"),
    ("emit-scenario", "--emit-scenario writes a file on the server: not over the API"),
    ("prove", "--prove simulates: not in this synchronous API"),
    ("json", "--json: the API always answers with the --json document"),
];

/// One input of a form.
#[derive(Serialize, Debug, PartialEq)]
pub struct Field {
    /// The long flag without `--`: the key in an API request.
    pub name: String,
    /// The flag's value name (a unit such as BYTES, RATE, LENGTH, or the choices).
    pub value: Option<String>,
    pub default: Option<String>,
    /// The first line of the flag's help.
    pub help: String,
    /// All of it.
    pub long_help: String,
    /// A switch (no value): true or false.
    pub switch: bool,
    pub required: bool,
}

/// The fields of a planner's form, in the CLI's order.
pub fn fields(p: Planner) -> Vec<Field> {
    let cmd = p.command();
    cmd.get_arguments()
        .filter_map(|a| {
            let name = a.get_long()?.to_string();
            if REFUSED.iter().any(|r| r.0 == name) {
                return None;
            }
            let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
            Some(Field {
                value: a.get_value_names().map(|v| v.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(" ")),
                default: a.get_default_values().first().map(|d| d.to_string_lossy().into_owned()),
                long_help: a.get_long_help().map(|h| h.to_string()).unwrap_or_else(|| help.clone()),
                help,
                switch: matches!(a.get_action(), ArgAction::SetTrue),
                required: a.is_required_set(),
                name,
            })
        })
        .collect()
}

/// `GET /api/forms`: `{"roce": [Field..], "design": [..], "burst": [..]}`.
pub async fn all() -> Json<serde_json::Value> {
    let mut m = serde_json::Map::new();
    for p in Planner::ALL {
        m.insert(p.key().into(), serde_json::json!(fields(p)));
    }
    Json(serde_json::Value::Object(m))
}
