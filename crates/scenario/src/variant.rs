//! Scenario variants: the same file with some fields changed. `compare` runs one variant
//! per fabric, `sweep` one per parameter value, nccl-tests-style size sweeps one per
//! size. An edit names a field by its path in the file (`roce.ecn[0].kmin`,
//! `traffic[1].size`, `buffer.headroom`) and gives the new value as text: a string field
//! takes the text as it is ("150KB"), other fields parse it as a TOML value (`0.2`,
//! `true`, `[3, 4]`). A path that does not exist is created, so a variant can add a field
//! the file left out; the compiled variant is validated like any scenario file.

use toml::{Table, Value};

use crate::{load_str, ConfigError, World};
use fabric::params::Tech;

/// One field to change.
#[derive(Clone, Debug, PartialEq)]
pub struct Edit {
    pub path: String,
    pub value: String,
}

impl Edit {
    pub fn new(path: impl Into<String>, value: impl Into<String>) -> Edit {
        Edit { path: path.into(), value: value.into() }
    }

    /// Parses `PATH=VALUE`.
    pub fn parse(s: &str) -> Result<Edit, String> {
        let (p, v) = s.split_once('=').ok_or_else(|| format!("`{s}`: expected PATH=VALUE"))?;
        let p = p.trim();
        if p.is_empty() {
            return Err(format!("`{s}`: empty field path"));
        }
        Ok(Edit::new(p, v.trim()))
    }
}

impl std::fmt::Display for Edit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={}", self.path, self.value)
    }
}

enum Seg {
    Key(String),
    Index(usize),
}

fn segments(path: &str) -> Result<Vec<Seg>, String> {
    let mut out = vec![];
    for part in path.split('.') {
        let (key, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if key.is_empty() {
            return Err(format!("`{path}`: empty key"));
        }
        out.push(Seg::Key(key.to_string()));
        while !rest.is_empty() {
            let close = rest.find(']').ok_or_else(|| format!("`{path}`: missing `]`"))?;
            let idx = rest[1..close].parse::<usize>().map_err(|_| format!("`{path}`: `{}` is not an index", &rest[1..close]))?;
            out.push(Seg::Index(idx));
            rest = &rest[close + 1..];
            if !rest.is_empty() && !rest.starts_with('[') {
                return Err(format!("`{path}`: unexpected `{rest}`"));
            }
        }
    }
    Ok(out)
}

/// The new value for a field that now holds `old`.
fn value_for(old: Option<&Value>, text: &str) -> Result<Value, String> {
    let parsed = || -> Option<Value> { toml::from_str::<Table>(&format!("v = {text}")).ok().and_then(|mut t| t.remove("v")) };
    match old {
        Some(Value::String(_)) => Ok(Value::String(text.trim_matches('"').to_string())),
        Some(Value::Integer(_)) => text.parse::<i64>().map(Value::Integer).map_err(|_| format!("`{text}` is not an integer")),
        Some(Value::Float(_)) => text.parse::<f64>().map(Value::Float).map_err(|_| format!("`{text}` is not a number")),
        Some(Value::Boolean(_)) => text.parse::<bool>().map(Value::Boolean).map_err(|_| format!("`{text}` is not true or false")),
        Some(_) => parsed().ok_or_else(|| format!("`{text}` is not a TOML value")),
        // A new field: a TOML value if it reads as one, else a string ("100KB").
        None => Ok(parsed().unwrap_or_else(|| Value::String(text.to_string()))),
    }
}

fn set(cur: &mut Value, segs: &[Seg], path: &str, text: &str) -> Result<(), String> {
    let Some((seg, rest)) = segs.split_first() else { return Err(format!("`{path}`: empty path")) };
    let slot = match seg {
        Seg::Key(k) => {
            let Value::Table(t) = cur else { return Err(format!("`{path}`: `{k}` is not inside a table")) };
            if rest.is_empty() {
                let v = value_for(t.get(k), text)?;
                t.insert(k.clone(), v);
                return Ok(());
            }
            let list = matches!(rest[0], Seg::Index(_));
            t.entry(k.clone()).or_insert_with(|| if list { Value::Array(vec![]) } else { Value::Table(Table::new()) })
        }
        Seg::Index(n) => {
            let Value::Array(a) = cur else { return Err(format!("`{path}`: not a list before [{n}]")) };
            let len = a.len();
            let slot = a.get_mut(*n).ok_or_else(|| format!("`{path}`: index {n} out of range (the list has {len})"))?;
            if rest.is_empty() {
                *slot = value_for(Some(slot), text)?;
                return Ok(());
            }
            slot
        }
    };
    set(slot, rest, path, text)
}

/// Applies `edits` to a scenario's text; returns the edited text.
pub fn apply(src: &str, edits: &[Edit]) -> Result<String, String> {
    if edits.is_empty() {
        return Ok(src.to_string());
    }
    let mut root = Value::Table(toml::from_str(src).map_err(|e| e.message().to_string())?);
    for e in edits {
        set(&mut root, &segments(&e.path)?, &e.path, &e.value).map_err(|m| format!("{e}: {m}"))?;
    }
    toml::to_string(&root).map_err(|e| e.to_string())
}

/// Loads `src` with `edits` applied. Errors name the file and the edits; a field error is
/// located in the original text where it can be.
pub fn load_variant(file: &str, src: &str, edits: &[Edit]) -> Result<World, ConfigError> {
    if edits.is_empty() {
        return load_str(file, src);
    }
    let label = format!("{file} [{}]", edits.iter().map(|e| e.to_string()).collect::<Vec<_>>().join(", "));
    let text = apply(src, edits).map_err(|msg| ConfigError { file: label.clone(), line: None, field: "-".into(), msg })?;
    let base = std::path::Path::new(file).parent().unwrap_or(std::path::Path::new("."));
    crate::load_str_at(&label, &text, base).map_err(|mut e| {
        e.line = crate::locate(src, &e.field);
        e
    })
}

/// Which technology sections a scenario has: (`[roce]`, `[infiniband]`).
pub fn sections(src: &str) -> Result<(bool, bool), String> {
    let t: Table = toml::from_str(src).map_err(|e| e.message().to_string())?;
    Ok((t.contains_key("roce"), t.contains_key("infiniband")))
}

/// The edits that run `src` on `tech` for `compare`: the technology chosen, and what the
/// file leaves out for that fabric filled with stated defaults (each also returned as a
/// note for the report).
pub fn for_technology(src: &str, tech: Tech) -> Result<(Vec<Edit>, Vec<String>), String> {
    let t: Table = toml::from_str(src).map_err(|e| e.message().to_string())?;
    let mut edits = vec![];
    let mut notes = vec![];
    let name = match tech {
        Tech::Roce => "roce",
        Tech::Infiniband => "infiniband",
    };
    edits.push(Edit::new("scenario.technology", name));
    match tech {
        Tech::Roce => {
            if !t.contains_key("roce") {
                return Err("compare needs a [roce] section (and [buffer]) to run the RoCEv2 side".into());
            }
            // RoCEv2 has no in-network reduction: SHARP jobs run NCCL's ring there.
            if let Some(Value::Array(tr)) = t.get("traffic") {
                for (i, x) in tr.iter().enumerate() {
                    if x.get("algorithm").and_then(|v| v.as_str()) == Some("sharp") {
                        edits.push(Edit::new(format!("traffic[{i}].algorithm"), "ring"));
                        notes.push(format!(
                            "RoCEv2: traffic[{i}] asks for SHARP, which exists only in InfiniBand switches; the RoCEv2 side runs it with NCCL's ring"
                        ));
                    }
                }
            }
        }
        Tech::Infiniband => {
            if !t.contains_key("infiniband") {
                let mtu = t.get("roce").and_then(|r| r.get("mtu")).and_then(|v| v.as_str()).unwrap_or("4096B").to_string();
                let tree = matches!(t.get("topology").and_then(|x| x.get("kind")).and_then(|v| v.as_str()), Some("fat-tree" | "leaf-spine"));
                let routing = if tree { "ftree" } else { "updn" };
                for (k, v) in [
                    ("mtu", mtu.as_str()),
                    ("data_vls", "1"),
                    ("vl_buffer", "128KiB"),
                    ("hoq_lifetime", "auto"),
                    ("switch_lifetime", "auto"),
                    ("routing", routing),
                    ("timeout", "20"),
                    ("retry_cnt", "7"),
                    ("forwarding", "cut-through"),
                    ("switch_latency", "auto"),
                ] {
                    edits.push(Edit::new(format!("infiniband.{k}"), v));
                }
                // With faults, the subnet manager re-routes in its own modelled time.
                if t.get("faults").is_some_and(|f| f.as_array().is_some_and(|a| !a.is_empty())) {
                    edits.push(Edit::new("infiniband.reroute_delay", "auto"));
                    notes.push("InfiniBand: the subnet manager re-routes after faults in its modelled time (reroute_delay = \"auto\")".into());
                }
                notes.push(format!(
                    "InfiniBand side from defaults (the file has no [infiniband]): path MTU {mtu} as RoCE, 1 data VL, 128KiB per input port and VL \
                     (2048 credits of 64 B, the most a VL can advertise), OpenSM {routing} routing and lifetimes, NCCL's timeout 20 / retry_cnt 7, \
                     cut-through, the switch generation's datasheet latency"
                ));
            }
            // Traffic without a service level runs on SL 0.
            if let Some(Value::Array(tr)) = t.get("traffic") {
                let missing: Vec<usize> = tr.iter().enumerate().filter(|(_, x)| x.get("sl").is_none()).map(|(i, _)| i).collect();
                for &i in &missing {
                    edits.push(Edit::new(format!("traffic[{i}].sl"), "0"));
                }
                if !missing.is_empty() {
                    notes.push(format!(
                        "InfiniBand: {} traffic entr{} without an `sl` run on SL 0",
                        missing.len(),
                        if missing.len() == 1 { "y" } else { "ies" }
                    ));
                }
            }
        }
    }
    Ok((edits, notes))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = r#"
[scenario]
name = "x"
seed = 1

[roce]
mtu = "4096B"
ecn = [{ queue = 3, kmin = "150KB", kmax = "1500KB", pmax = 0.1 }]

[[traffic]]
kind = "incast"
size = "1MB"
"#;

    fn get<'a>(t: &'a Table, path: &str) -> Option<&'a Value> {
        let mut cur: Option<&Value> = None;
        for seg in path.split('.') {
            let (k, idx) = match seg.split_once('[') {
                Some((k, i)) => (k, Some(i.trim_end_matches(']').parse::<usize>().ok()?)),
                None => (seg, None),
            };
            let v = match cur {
                None => t.get(k)?,
                Some(c) => c.get(k)?,
            };
            cur = Some(match idx {
                Some(i) => v.get(i)?,
                None => v,
            });
        }
        cur
    }

    #[test]
    fn edits_keep_types_and_create_fields() {
        let out = apply(
            SRC,
            &[
                Edit::new("roce.ecn[0].kmin", "300KB"),
                Edit::new("roce.ecn[0].pmax", "0.2"),
                Edit::new("traffic[0].size", "8MB"),
                Edit::new("traffic[0].sl", "0"),
                Edit::new("scenario.seed", "7"),
                Edit::new("buffer.headroom", "100KB"),
            ],
        )
        .unwrap();
        let t: Table = toml::from_str(&out).unwrap();
        assert_eq!(get(&t, "roce.ecn[0].kmin"), Some(&Value::String("300KB".into())));
        assert_eq!(get(&t, "roce.ecn[0].pmax"), Some(&Value::Float(0.2)));
        assert_eq!(get(&t, "traffic[0].size"), Some(&Value::String("8MB".into())));
        assert_eq!(get(&t, "traffic[0].sl"), Some(&Value::Integer(0)));
        assert_eq!(get(&t, "scenario.seed"), Some(&Value::Integer(7)));
        assert_eq!(get(&t, "buffer.headroom"), Some(&Value::String("100KB".into())));
        assert_eq!(get(&t, "roce.mtu"), Some(&Value::String("4096B".into())));
    }

    #[test]
    fn bad_edits_say_why() {
        assert!(apply(SRC, &[Edit::new("scenario.seed", "seven")]).unwrap_err().contains("not an integer"));
        assert!(apply(SRC, &[Edit::new("traffic[3].size", "1MB")]).unwrap_err().contains("out of range"));
        assert!(apply(SRC, &[Edit::new("roce.mtu.x", "1")]).unwrap_err().contains("not inside a table"));
        assert!(Edit::parse("novalue").is_err());
        assert_eq!(Edit::parse("a.b = 3").unwrap(), Edit::new("a.b", "3"));
    }
}
