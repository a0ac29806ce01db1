//! `fabriclab compare FILE`: one scenario on InfiniBand and on RoCEv2, side by side (the
//! table or `--json`), optionally as an HTML report of both fabrics (`--html`).

use std::path::Path;
use std::process::ExitCode;

use crate::run::write_html;

pub fn compare(file: &Path, json: bool, html: Option<&Path>) -> ExitCode {
    let name = file.display().to_string();
    let src = match std::fs::read_to_string(file) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {name}: cannot read: {e}");
            return ExitCode::from(2);
        }
    };
    let (cmp, ib, roce) = match report::compare::run(&name, &src, html.is_some()) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(path) = html {
        if let Err(code) = write_html(path, &report::html::compare_page(&cmp, &ib, &roce)) {
            return code;
        }
    }
    if json {
        match serde_json::to_string_pretty(&cmp) {
            Ok(s) => println!("{s}"),
            Err(e) => {
                eprintln!("error: cannot serialise the comparison: {e}");
                return ExitCode::from(1);
            }
        }
    } else {
        print!("{}", report::compare::text(&cmp));
    }
    ExitCode::SUCCESS
}
