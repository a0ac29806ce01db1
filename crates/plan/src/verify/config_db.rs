//! Reading SONiC `config_db.json` files into typed tables, one [`Switch`] per hostname.
//!
//! A `config_db.json` is one JSON object of tables, each an object of keys, each an object
//! of fields whose values are strings (sonic-swss-common `ConfigDBConnector` writes every
//! field as a string; lists such as `pfc_enable` are comma-separated strings). Files are
//! merged by `DEVICE_METADATA|localhost|hostname`; files without that field are merged into
//! one switch without a name (the sonic-buildimage sample outputs split one switch's
//! buffers and QoS tables this way), unless `--switch NAME=F,F` groups files into switch NAME
//! ([`read_grouped`]). The same `TABLE|key|field` given two different values by two files of
//! one switch is an error naming both.
//!
//! Only the tables the verifier reads ([`KNOWN_TABLES`]) are checked for shape; any other
//! table is ignored with a note. A table absent from every file of a switch is reported as
//! "not checked" by the findings that need it, never assumed empty.
//!
//! Left out: BUFFER_PORT_*_PROFILE_LIST (not read).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::Value;

/// The tables read, shape-checked and kept.
pub const KNOWN_TABLES: [&str; 19] = [
    "PORT",
    "PORT_QOS_MAP",
    "DSCP_TO_TC_MAP",
    "TC_TO_PRIORITY_GROUP_MAP",
    "TC_TO_QUEUE_MAP",
    "BUFFER_POOL",
    "BUFFER_PROFILE",
    "BUFFER_PG",
    "BUFFER_QUEUE",
    "CABLE_LENGTH",
    "WRED_PROFILE",
    "QUEUE",
    "PFC_WD",
    "DEVICE_METADATA",
    "DEVICE_NEIGHBOR",
    "LOSSLESS_TRAFFIC_PATTERN",
    "DEFAULT_LOSSLESS_BUFFER_PARAMETER",
    "MAP_PFC_PRIORITY_TO_QUEUE",
    "SCHEDULER",
];

/// Why input cannot be read; every variant names the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    #[error("{file}: not valid JSON: {msg}")]
    Json { file: String, msg: String },
    #[error("{file}: {place}: {msg}")]
    Shape { file: String, place: String, msg: String },
    #[error("{file}: {msg}")]
    Nic { file: String, msg: String },
    #[error("{place}: {first} says {a:?}, {second} says {b:?}")]
    Conflict { place: String, first: String, a: String, second: String, b: String },
}

/// Where a value lives: the file it was read from and its `TABLE|key|field`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Place {
    pub file: String,
    /// `TABLE|key|field` (or `TABLE|key`, or `TABLE`).
    pub path: String,
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file, self.path)
    }
}

/// One entry of a table: its fields and the file it came from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Entry {
    pub file: String,
    pub fields: BTreeMap<String, String>,
}

/// One table: key → entry, in key order.
pub type Table = BTreeMap<String, Entry>;

/// One switch: every known table its files hold, merged.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Switch {
    /// The `--switch` group's name, else `DEVICE_METADATA|localhost|hostname`; `None` for
    /// loose files that have none.
    pub hostname: Option<String>,
    pub files: Vec<String>,
    pub tables: BTreeMap<String, Table>,
    /// Tables present in the files but not read, with the file (notes for the report).
    pub ignored: BTreeSet<(String, String)>,
}

impl Switch {
    /// The name shown in findings.
    pub fn name(&self) -> &str {
        self.hostname.as_deref().unwrap_or("(no hostname)")
    }

    /// The table, if any file of this switch has it.
    pub fn table(&self, t: &str) -> Option<&Table> {
        self.tables.get(t)
    }

    /// One field of one entry.
    pub fn field(&self, t: &str, key: &str, field: &str) -> Option<&str> {
        self.tables.get(t)?.get(key)?.fields.get(field).map(String::as_str)
    }

    /// The PORT key of a port named by its key or by its `alias`. `DEVICE_NEIGHBOR|port|port`
    /// holds the neighbour's port as the neighbour names it, which is its alias on SONiC
    /// (sonic-config-engine `minigraph.py` `parse_png` maps only the local port through
    /// `port_alias_map`, and `lldpmgrd` advertises the alias as the LLDP port ID). `None`
    /// without a PORT table or a matching port.
    pub fn port_key(&self, name_or_alias: &str) -> Option<&str> {
        let ports = self.tables.get("PORT")?;
        if let Some((k, _)) = ports.get_key_value(name_or_alias) {
            return Some(k);
        }
        ports.iter().find(|(_, e)| e.fields.get("alias").map(String::as_str) == Some(name_or_alias)).map(|(k, _)| k.as_str())
    }

    /// The place of `TABLE|key|field`, in the file that holds the key (or the switch's
    /// first file when the key is missing).
    pub fn place(&self, t: &str, key: &str, field: &str) -> Place {
        let file = self.tables.get(t).and_then(|tb| tb.get(key)).map(|e| e.file.clone()).or_else(|| self.files.first().cloned()).unwrap_or_default();
        let path = if field.is_empty() { format!("{t}|{key}") } else { format!("{t}|{key}|{field}") };
        Place { file, path }
    }
}

/// One file's hostname, known tables and the names of the tables it ignored.
type Parsed = (Option<String>, BTreeMap<String, Table>, Vec<String>);

/// Parses one file's text.
fn parse_file(file: &str, text: &str) -> Result<Parsed, ReadError> {
    let v: Value = serde_json::from_str(text).map_err(|e| ReadError::Json { file: file.into(), msg: e.to_string() })?;
    let shape = |place: String, msg: String| ReadError::Shape { file: file.into(), place, msg };
    let Value::Object(top) = v else {
        return Err(shape("(top level)".into(), "expected a JSON object of tables".into()));
    };
    let mut tables = BTreeMap::new();
    let mut ignored = vec![];
    for (tname, tval) in top {
        if !KNOWN_TABLES.contains(&tname.as_str()) {
            ignored.push(tname);
            continue;
        }
        let Value::Object(keys) = tval else {
            return Err(shape(tname.clone(), format!("expected an object of keys, found {}", kind(&tval))));
        };
        let mut table = Table::new();
        for (key, kval) in keys {
            let Value::Object(fields) = kval else {
                return Err(shape(format!("{tname}|{key}"), format!("expected an object of fields, found {}", kind(&kval))));
            };
            let mut entry = Entry { file: file.into(), fields: BTreeMap::new() };
            for (field, fval) in fields {
                let s = match fval {
                    Value::String(s) => s,
                    other => {
                        return Err(shape(
                            format!("{tname}|{key}|{field}"),
                            format!("expected a string (config_db stores every field as one), found {}", kind(&other)),
                        ))
                    }
                };
                entry.fields.insert(field, s);
            }
            table.insert(key, entry);
        }
        tables.insert(tname, table);
    }
    let hostname = tables.get("DEVICE_METADATA").and_then(|t| t.get("localhost")).and_then(|e| e.fields.get("hostname")).cloned();
    Ok((hostname, tables, ignored))
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Reads `(file name, text)` pairs into switches, merged by hostname, in hostname order
/// (files without a hostname last, as one switch).
pub fn read(sources: &[(String, String)]) -> Result<Vec<Switch>, ReadError> {
    read_grouped(sources, &[])
}

/// `--switch NAME=F,F`: the files named in a group form switch NAME, whatever their
/// hostnames say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    pub name: String,
    pub files: Vec<String>,
}

/// [`read`] with `--switch` groups: a file named in a group belongs to the group's switch
/// (named by the group, merged with loose files whose hostname is that name); the other
/// files merge by hostname. A file in two groups, or a group whose files give two
/// different hostnames, is an error (the files would describe two switches as one); files
/// without a hostname may join any group.
pub fn read_grouped(sources: &[(String, String)], groups: &[Group]) -> Result<Vec<Switch>, ReadError> {
    let mut by_name: BTreeMap<Option<String>, Switch> = BTreeMap::new();
    // group name -> (first file with a hostname, that hostname)
    let mut group_host: BTreeMap<&str, (&str, String)> = BTreeMap::new();
    for (file, text) in sources {
        let (own_hostname, tables, ignored) = parse_file(file, text)?;
        let mut in_groups = groups.iter().filter(|g| g.files.iter().any(|f| f == file));
        let group = in_groups.next();
        if let Some(other) = in_groups.next() {
            let g = group.expect("a first group");
            return Err(ReadError::Shape {
                file: file.clone(),
                place: "(--switch)".into(),
                msg: format!("the file is in two --switch groups, {:?} and {:?}", g.name, other.name),
            });
        }
        let hostname = match (group, own_hostname) {
            (None, h) => h,
            (Some(g), Some(h)) => {
                match group_host.get(g.name.as_str()) {
                    Some((first, seen)) if *seen != h => {
                        return Err(ReadError::Shape {
                            file: file.clone(),
                            place: "DEVICE_METADATA|localhost|hostname".into(),
                            msg: format!("--switch {}: this file's hostname is {h:?}, {first}'s is {seen:?}; a switch has one hostname", g.name),
                        })
                    }
                    Some(_) => {}
                    None => {
                        group_host.insert(&g.name, (file, h));
                    }
                }
                Some(g.name.clone())
            }
            (Some(g), None) => Some(g.name.clone()),
        };
        let sw = by_name.entry(hostname.clone()).or_insert_with(|| Switch { hostname, ..Switch::default() });
        sw.files.push(file.clone());
        sw.ignored.extend(ignored.into_iter().map(|t| (file.clone(), t)));
        for (tname, table) in tables {
            let dst = sw.tables.entry(tname.clone()).or_default();
            for (key, entry) in table {
                let Some(have) = dst.get_mut(&key) else {
                    dst.insert(key, entry);
                    continue;
                };
                for (field, value) in entry.fields {
                    match have.fields.get(&field) {
                        Some(old) if *old != value => {
                            return Err(ReadError::Conflict {
                                place: format!("{tname}|{key}|{field}"),
                                first: have.file.clone(),
                                a: old.clone(),
                                second: file.clone(),
                                b: value,
                            })
                        }
                        Some(_) => {}
                        None => {
                            have.fields.insert(field, value);
                        }
                    }
                }
            }
        }
    }
    // None sorts first in a BTreeMap; put the unnamed switch last.
    let mut v: Vec<Switch> = by_name.into_values().collect();
    v.sort_by_key(|s| s.hostname.is_none());
    Ok(v)
}

/// A list of small numbers as SONiC writes them: `"3,4"`, `"0-2"`, `"3-4,6"`.
pub fn parse_list(s: &str) -> Option<BTreeSet<u32>> {
    let mut out = BTreeSet::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                if a > b || b - a > 64 {
                    return None;
                }
                out.extend(a..=b);
            }
            None => {
                out.insert(part.parse().ok()?);
            }
        }
    }
    Some(out)
}

/// The name a reference field holds: `name`, or the older `[TABLE|name]` form (older
/// SONiC templates wrote references that way). `table` is the referenced table, such as
/// `BUFFER_PROFILE`.
pub fn reference<'a>(raw: &'a str, table: &str) -> &'a str {
    let prefix = format!("{table}|");
    raw.trim().trim_start_matches('[').trim_end_matches(']').trim_start_matches(prefix.as_str())
}

/// Splits a `PORTS|INDICES` key (`Ethernet0,Ethernet4|3-4`) into its ports and indices.
pub fn split_port_key(key: &str) -> Option<(Vec<&str>, BTreeSet<u32>)> {
    let (ports, idx) = key.split_once('|')?;
    Some((ports.split(',').map(str::trim).collect(), parse_list(idx)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(name: &str, text: &str) -> (String, String) {
        (name.into(), text.into())
    }

    #[test]
    fn lists_and_keys() {
        assert_eq!(parse_list("3,4"), Some([3, 4].into()));
        assert_eq!(parse_list("0-2,6"), Some([0, 1, 2, 6].into()));
        assert_eq!(parse_list(""), Some(BTreeSet::new()));
        assert_eq!(parse_list("3,x"), None);
        assert_eq!(parse_list("4-3"), None);
        let (p, i) = split_port_key("Ethernet0,Ethernet4|3-4").unwrap();
        assert_eq!((p, i), (vec!["Ethernet0", "Ethernet4"], [3, 4].into()));
        assert_eq!(split_port_key("Ethernet0"), None);
        assert_eq!(reference(" [BUFFER_PROFILE|pg_lossless_100000_5m_profile] ", "BUFFER_PROFILE"), "pg_lossless_100000_5m_profile");
        assert_eq!(reference("scheduler.0", "SCHEDULER"), "scheduler.0");
        assert_eq!(reference("[BUFFER_POOL|ingress_lossless_pool]", "BUFFER_PROFILE"), "BUFFER_POOL|ingress_lossless_pool");
    }

    #[test]
    fn merges_by_hostname_and_notes_unknown_tables() {
        let a = src("a.json", r#"{"DEVICE_METADATA":{"localhost":{"hostname":"leaf1"}},"PORT":{"Ethernet0":{"mtu":"9100"}},"VLAN":{}}"#);
        let b = src("b.json", r#"{"DEVICE_METADATA":{"localhost":{"hostname":"leaf1"}},"CABLE_LENGTH":{"AZURE":{"Ethernet0":"5m"}}}"#);
        let c = src("c.json", r#"{"PORT":{"Ethernet8":{}}}"#);
        let s = read(&[a, b, c]).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].name(), "leaf1");
        assert_eq!(s[0].files, ["a.json", "b.json"]);
        assert_eq!(s[0].field("CABLE_LENGTH", "AZURE", "Ethernet0"), Some("5m"));
        assert_eq!(s[0].place("PORT", "Ethernet0", "mtu").to_string(), "a.json: PORT|Ethernet0|mtu");
        assert!(s[0].ignored.contains(&("a.json".into(), "VLAN".into())));
        assert_eq!(s[1].hostname, None);
    }

    #[test]
    fn bad_input_names_file_and_place() {
        let e = read(&[src("x.json", r#"{"PORT":{"Ethernet0":{"mtu":9100}}}"#)]).unwrap_err();
        assert_eq!(e.to_string(), "x.json: PORT|Ethernet0|mtu: expected a string (config_db stores every field as one), found a number");
        let e = read(&[src("t.json", r#"{"PORT":{"Ethernet0":{"mtu":"91"#)]).unwrap_err();
        assert!(matches!(e, ReadError::Json { .. }) && e.to_string().starts_with("t.json: not valid JSON"), "{e}");
        let e = read(&[src("l.json", "[1,2]")]).unwrap_err();
        assert_eq!(e.to_string(), "l.json: (top level): expected a JSON object of tables");
        let e = read(&[src("k.json", r#"{"QUEUE":{"Ethernet0|3":"x"}}"#)]).unwrap_err();
        assert_eq!(e.to_string(), "k.json: QUEUE|Ethernet0|3: expected an object of fields, found a string");
        let e = read(&[src("e.json", "")]).unwrap_err();
        assert!(e.to_string().starts_with("e.json: not valid JSON"));
    }

    #[test]
    fn groups_form_switches_whatever_the_hostname() {
        let g = |name: &str, files: &[&str]| Group { name: name.into(), files: files.iter().map(|f| f.to_string()).collect() };
        let a = src("a.json", r#"{"DEVICE_METADATA":{"localhost":{"hostname":"old"}},"PORT":{"Ethernet0":{"mtu":"9100"}}}"#);
        let b = src("b.json", r#"{"CABLE_LENGTH":{"AZURE":{"Ethernet0":"5m"}}}"#);
        let c = src("c.json", r#"{"DEVICE_METADATA":{"localhost":{"hostname":"spine1"}}}"#);
        let s = read_grouped(&[a.clone(), b.clone(), c.clone()], &[g("leaf1", &["a.json", "b.json"])]).unwrap();
        let names: Vec<_> = s.iter().map(|s| (s.name().to_string(), s.files.clone())).collect();
        assert_eq!(names, [("leaf1".to_string(), vec!["a.json".to_string(), "b.json".to_string()]), ("spine1".to_string(), vec!["c.json".to_string()])]);
        // Two hostnames in one group.
        let e = read_grouped(&[a.clone(), c.clone()], &[g("leaf1", &["a.json", "c.json"])]).unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"c.json: DEVICE_METADATA|localhost|hostname: --switch leaf1: this file's hostname is "spine1", a.json's is "old"; a switch has one hostname"#
        );
        // One file in two groups.
        let e = read_grouped(&[a, b], &[g("x", &["a.json"]), g("y", &["a.json"])]).unwrap_err();
        assert_eq!(e.to_string(), r#"a.json: (--switch): the file is in two --switch groups, "x" and "y""#);
    }

    #[test]
    fn conflicting_values_name_both_files() {
        let a = src("a.json", r#"{"PORT":{"Ethernet0":{"mtu":"9100"}}}"#);
        let b = src("b.json", r#"{"PORT":{"Ethernet0":{"mtu":"1500"}}}"#);
        let e = read(&[a, b]).unwrap_err();
        assert_eq!(e.to_string(), r#"PORT|Ethernet0|mtu: a.json says "9100", b.json says "1500""#);
    }
}
