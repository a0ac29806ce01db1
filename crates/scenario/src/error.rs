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
    src.lines()
        .position(|l| {
            // Comments do not count: a key named in one is not where the value is.
            let t = l.split('#').next().unwrap_or("").trim_start();
            t.starts_with(key) && t[key.len()..].trim_start().starts_with('=') || t.contains(&format!("{key} =")) || t.starts_with(&format!("[{key}"))
        })
        .map(|i| i + 1)
}
