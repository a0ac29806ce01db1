//! The planners' API: `/api/plan/roce`, `/api/design`, `/api/burst`. A request gives the
//! CLI's flags as a JSON object (`POST`, `{"mtu": "4096B", "incast": 8, "explain": true}`)
//! or a query string (`GET ?mtu=4096B&incast=8&explain`), keyed by the long flag without
//! `--`. They become the argument list the CLI would get, parsed by the same clap structs
//! and answered by the same `plan::args` functions, so the body of a 200 is byte for
//! byte what `fabriclab <planner> ... --json` prints, and an error carries the message
//! the CLI prints after `error: `.
//!
//! Left out: `--prove` (a simulation), `--config` and `--emit-scenario` (files).

use std::panic::{catch_unwind, AssertUnwindSafe};

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Json, Query};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use clap::{ArgAction, ArgMatches, Command, FromArgMatches};
use plan::args::{burst, design, roce};
use serde_json::{Map, Value};

use crate::error::ApiError;
use crate::forms::{Planner, REFUSED};

/// The argument list `inputs` stand for (without the program name).
pub fn argv(cmd: &Command, inputs: &Map<String, Value>) -> Result<Vec<String>, String> {
    let mut out = vec![];
    for (k, v) in inputs {
        if let Some(r) = REFUSED.iter().find(|r| r.0 == k) {
            if r.0 == "json" && matches!(v, Value::Bool(true) | Value::Null) {
                continue;
            }
            return Err(r.1.to_string());
        }
        let Some(arg) = cmd.get_arguments().find(|a| a.get_long() == Some(k.as_str())) else {
            let known: Vec<&str> = cmd.get_arguments().filter_map(|a| a.get_long()).filter(|l| !REFUSED.iter().any(|r| r.0 == *l)).collect();
            return Err(format!("unknown input `{k}`; expected one of: {}", known.join(", ")));
        };
        let switch = matches!(arg.get_action(), ArgAction::SetTrue);
        let optional_value = arg.get_num_args().is_some_and(|n| n.min_values() == 0);
        match (v, switch) {
            (Value::String(s), false) if s.is_empty() && optional_value => out.push(format!("--{k}")),
            (Value::Null, _) | (Value::Bool(false), true) => {}
            (Value::Bool(true), true) => out.push(format!("--{k}")),
            (_, true) => return Err(format!("--{k}: a switch: expected true or false, not {v}")),
            (Value::String(s), false) => out.push(format!("--{k}={s}")),
            (Value::Number(n), false) => out.push(format!("--{k}={n}")),
            (Value::Bool(b), false) => out.push(format!("--{k}={b}")),
            (Value::Array(_) | Value::Object(_), false) => return Err(format!("--{k}: expected a string, number or boolean, not {v}")),
        }
    }
    Ok(out)
}

/// A query string's pairs as inputs: a switch's value may be empty (`?explain`).
fn query_inputs(cmd: &Command, pairs: Vec<(String, String)>) -> Result<Map<String, Value>, String> {
    let mut m = Map::new();
    for (k, v) in pairs {
        let switch = cmd.get_arguments().any(|a| a.get_long() == Some(k.as_str()) && matches!(a.get_action(), ArgAction::SetTrue));
        let val = match (switch, v.as_str()) {
            (true, "" | "true" | "1" | "on") => Value::Bool(true),
            (true, "false" | "0" | "off") => Value::Bool(false),
            (true, o) => return Err(format!("--{k}: a switch: expected true or false, not `{o}`")),
            (false, _) => Value::String(v),
        };
        if m.insert(k.clone(), val).is_some() {
            return Err(format!("`{k}` given twice"));
        }
    }
    Ok(m)
}

/// The `--json` document the CLI prints for these matches (with its final newline).
fn answer(p: Planner, m: &ArgMatches) -> Result<String, String> {
    match p {
        Planner::Roce => {
            let a = roce::RoceArgs::from_arg_matches(m).map_err(|e| e.to_string())?;
            let (i, pl) = roce::planned(&a)?;
            pretty(&roce::json_value(&a, &i, &pl))
        }
        Planner::Design => {
            let a = design::DesignArgs::from_arg_matches(m).map_err(|e| e.to_string())?;
            let (_, d) = design::planned(&a)?;
            pretty(&d)
        }
        Planner::Burst => {
            let a = burst::BurstArgs::from_arg_matches(m).map_err(|e| e.to_string())?;
            let (i, pl) = burst::planned(&a)?;
            pretty(&burst::json_value(&a, &i, &pl))
        }
    }
}

/// As the CLI prints it: `println!("{}", serde_json::to_string_pretty(..))`.
fn pretty<T: serde::Serialize>(v: &T) -> Result<String, String> {
    serde_json::to_string_pretty(v).map(|s| s + "\n").map_err(|e| format!("cannot serialise the answer: {e}"))
}

/// clap's message without its `error: ` prefix and trailing blank lines.
fn clap_message(e: &clap::Error) -> String {
    let s = e.render().to_string();
    s.trim_start_matches("error: ").trim_end().to_string()
}

/// The argument list of `inputs`, parsed by the planner's flags: the argument list and
/// the matches, or the CLI's message.
fn parsed(p: Planner, inputs: &Map<String, Value>) -> Result<(Vec<String>, ArgMatches), String> {
    let cmd = p.command();
    let args = argv(&cmd, inputs)?;
    let m = cmd.try_get_matches_from(std::iter::once(String::new()).chain(args.iter().cloned())).map_err(|e| clap_message(&e))?;
    Ok((args, m))
}

/// The argument list of `inputs` once the planner accepts them (for a `--prove` job).
pub fn checked_argv(p: Planner, inputs: &Map<String, Value>) -> Result<Vec<String>, String> {
    let (args, m) = parsed(p, inputs)?;
    match catch_unwind(AssertUnwindSafe(|| answer(p, &m))) {
        Ok(Ok(_)) => Ok(args),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(format!("the {} planner failed on this input (a bug: please report the input)", p.key())),
    }
}

/// Parses, plans and answers; a panic in the planner becomes a 500 with a message.
fn respond(p: Planner, inputs: Result<Map<String, Value>, String>) -> Response {
    let m = match inputs.and_then(|i| parsed(p, &i)) {
        Ok((_, m)) => m,
        Err(e) => return ApiError::input(e).into_response(),
    };
    match catch_unwind(AssertUnwindSafe(|| answer(p, &m))) {
        Ok(Ok(body)) => (StatusCode::OK, [(header::CONTENT_TYPE, "application/json")], body).into_response(),
        Ok(Err(e)) => ApiError::input(e).into_response(),
        Err(_) => ApiError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            msg: format!("the {} planner failed on this input (a bug: please report the input)", p.key()),
        }
        .into_response(),
    }
}

fn from_json(body: Result<Json<Value>, JsonRejection>) -> Result<Map<String, Value>, Result<String, ApiError>> {
    match body {
        Ok(Json(Value::Object(m))) => Ok(m),
        Ok(Json(v)) => Err(Ok(format!("expected a JSON object of inputs such as {{\"mtu\": \"4096B\"}}, not {v}"))),
        Err(r) => Err(Err(ApiError { status: r.status(), msg: r.body_text() })),
    }
}

fn post(p: Planner, body: Result<Json<Value>, JsonRejection>) -> Response {
    match from_json(body) {
        Ok(m) => respond(p, Ok(m)),
        Err(Ok(msg)) => respond(p, Err(msg)),
        Err(Err(e)) => e.into_response(),
    }
}

fn get(p: Planner, q: Result<Query<Vec<(String, String)>>, QueryRejection>) -> Response {
    match q {
        Ok(Query(pairs)) => respond(p, query_inputs(&p.command(), pairs)),
        Err(r) => ApiError { status: r.status(), msg: r.body_text() }.into_response(),
    }
}

pub async fn roce_json(b: Result<Json<Value>, JsonRejection>) -> Response {
    post(Planner::Roce, b)
}
pub async fn roce_query(q: Result<Query<Vec<(String, String)>>, QueryRejection>) -> Response {
    get(Planner::Roce, q)
}
pub async fn design_json(b: Result<Json<Value>, JsonRejection>) -> Response {
    post(Planner::Design, b)
}
pub async fn design_query(q: Result<Query<Vec<(String, String)>>, QueryRejection>) -> Response {
    get(Planner::Design, q)
}
pub async fn burst_json(b: Result<Json<Value>, JsonRejection>) -> Response {
    post(Planner::Burst, b)
}
pub async fn burst_query(q: Result<Query<Vec<(String, String)>>, QueryRejection>) -> Response {
    get(Planner::Burst, q)
}

/// `POST /api/design/scenario`: the scenario file `design --emit-scenario` writes for
/// these inputs (`technology`: what `run` simulates), as text.
pub async fn design_scenario(b: Result<Json<Value>, JsonRejection>) -> Response {
    let inputs = match from_json(b) {
        Ok(m) => m,
        Err(Ok(msg)) => return ApiError::input(msg).into_response(),
        Err(Err(e)) => return e.into_response(),
    };
    let (args, m) = match parsed(Planner::Design, &inputs) {
        Ok(x) => x,
        Err(e) => return ApiError::input(e).into_response(),
    };
    let text = catch_unwind(AssertUnwindSafe(|| -> Result<String, String> {
        let a = design::DesignArgs::from_arg_matches(&m).map_err(|e| e.to_string())?;
        let (_, d) = design::planned(&a)?;
        let tech = if a.technology == "infiniband" { plan::design::Technology::Infiniband } else { plan::design::Technology::Roce };
        let command = std::iter::once("fabriclab design".to_string()).chain(args).collect::<Vec<_>>().join(" ");
        plan::design::scenario(&d, tech, &command).map_err(|e| format!("{}: {}", design::flag(e.input), e.msg))
    }));
    match text {
        Ok(Ok(t)) => (StatusCode::OK, [(header::CONTENT_TYPE, "application/toml; charset=utf-8")], t).into_response(),
        Ok(Err(e)) => ApiError::input(e).into_response(),
        Err(_) => {
            ApiError { status: StatusCode::INTERNAL_SERVER_ERROR, msg: "the design planner failed on this input (a bug: please report the input)".into() }
                .into_response()
        }
    }
}
