//! Errors in scenario files: [`ConfigError`] names the file, the line, the field (a dotted
//! path such as `roce.ecn[0].kmin`) and what was expected.
//!
//! Owns the error type, the context every compile step reports through (`Ctx`) and the
//! search for the line a field is written on ([`locate`]). Leaves out what is checked:
//! that is each compile module's.

/// An error in a scenario file, with where and what was expected.
#[derive(Debug, thiserror::Error)]
#[error("{file}{}: {field}: {msg}", .line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct ConfigError {
    pub file: String,
    pub line: Option<usize>,
    pub field: String,
    pub msg: String,
}

/// The file being compiled: its name and text (to name and locate errors) and the
/// directory relative paths in it start from.
pub(crate) struct Ctx<'a> {
    pub file: &'a str,
    pub src: &'a str,
    /// Directory that relative paths in the file (topology, CDF files) start from.
    pub base: &'a std::path::Path,
}

impl Ctx<'_> {
    /// An error at `field`, on the line where the file writes it.
    pub fn err(&self, field: &str, msg: impl Into<String>) -> ConfigError {
        ConfigError { file: self.file.to_string(), line: locate(self.src, field), field: field.to_string(), msg: msg.into() }
    }
}

/// The line of `src` where `field` (a dotted path) is most likely written.
pub fn locate(src: &str, field: &str) -> Option<usize> {
    // An array-of-tables entry ("traffic[2]"): its `[[traffic]]` header.
    if let Some((name, i)) = field.strip_suffix(']').and_then(|f| f.split_once('[')).and_then(|(n, i)| Some((n, i.parse::<usize>().ok()?))) {
        if !name.contains('.') {
            let header = format!("[[{name}]]");
            return src.lines().enumerate().filter(|(_, l)| l.trim_start().starts_with(&header)).nth(i).map(|(n, _)| n + 1);
        }
    }
    let key = field.rsplit('.').next().unwrap_or(field);
    let key = key.split('[').next().unwrap_or(key);
    // A field of an array-of-tables entry ("faults[1].link") is written in that entry:
    // from its `[[faults]]` header to the next header.
    let lines: Vec<&str> = src.lines().collect();
    let (from, to) = entry_lines(&lines, field).unwrap_or((0, lines.len()));
    lines[from..to]
        .iter()
        .position(|l| {
            // Comments do not count: a key named in one is not where the value is.
            let t = l.split('#').next().unwrap_or("").trim_start();
            writes_key(t, key) || t.starts_with(&format!("[{key}"))
        })
        .map(|i| from + i)
        .or_else(|| from.checked_sub(1))
        .map(|i| i + 1)
}

/// The lines of the `[[name]]` entry `field` starts with ("faults[1]..."): after its
/// header, up to the next header. `None` when the field is not in such an entry.
fn entry_lines(lines: &[&str], field: &str) -> Option<(usize, usize)> {
    let first = field.split('.').next()?;
    let (name, i) = first.strip_suffix(']')?.split_once('[')?;
    let i: usize = i.parse().ok()?;
    let header = format!("[[{name}]]");
    let at = lines.iter().enumerate().filter(|(_, l)| l.trim_start().starts_with(&header)).nth(i)?.0;
    let end = lines[at + 1..].iter().position(|l| l.trim_start().starts_with('[')).map_or(lines.len(), |e| at + 1 + e);
    Some((at + 1, end))
}

/// Whether `t` (a line without its comment) assigns `key`: `key =`, not `host_key =`.
fn writes_key(t: &str, key: &str) -> bool {
    t.match_indices(key).any(|(i, _)| {
        let word_start = t[..i].chars().next_back().is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '-'));
        word_start && t[i + key.len()..].trim_start().starts_with('=')
    })
}
