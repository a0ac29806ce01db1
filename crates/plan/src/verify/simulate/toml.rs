//! Writing the scenario TOML with each value's origin in a comment after it, so a reader
//! of `--emit-scenario`'s file sees which config_db field (or flag, or assumption) every
//! number comes from.

use std::fmt::Write;

use super::super::config_db::{Place, Switch};

/// Where a value of the scenario comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A config_db field (file and `TABLE|key|field`).
    Config(Place),
    /// A command-line option or a NIC file's field, as named.
    Given(String),
    /// Not in the configuration: what was assumed, and why.
    Assumed(String),
}

impl Origin {
    pub fn of(sw: &Switch, table: &str, key: &str, field: &str) -> Origin {
        Origin::Config(sw.place(table, key, field))
    }

    pub fn text(&self) -> String {
        match self {
            Origin::Config(p) => format!("{} {}", p.file, p.path),
            Origin::Given(s) => s.clone(),
            Origin::Assumed(s) => format!("not configured: {s}"),
        }
    }
}

/// A scenario being written, line by line.
#[derive(Default)]
pub struct Doc {
    out: String,
}

impl Doc {
    /// `[name]` (or `[[name]]` for an array of tables), after a blank line.
    pub fn section(&mut self, name: &str) {
        let _ = write!(self.out, "\n{name}\n");
    }

    /// A comment line.
    pub fn comment(&mut self, text: &str) {
        for l in text.lines() {
            let _ = writeln!(self.out, "# {l}");
        }
    }

    /// `key = value` (the value already TOML), with its origin.
    pub fn value(&mut self, key: &str, value: &str, origin: &Origin) {
        let _ = writeln!(self.out, "{key} = {value}  # {}", origin.text().replace('\n', " "));
    }

    /// A line of TOML written as is (array elements), with its origin.
    pub fn raw(&mut self, line: &str, origin: &Origin) {
        let _ = writeln!(self.out, "{line}  # {}", origin.text().replace('\n', " "));
    }

    /// A line of TOML without an origin (structure: `]`, `nodes = [`).
    pub fn line(&mut self, line: &str) {
        let _ = writeln!(self.out, "{line}");
    }

    pub fn finish(self) -> String {
        self.out
    }
}

/// A TOML basic string.
pub fn q(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}
