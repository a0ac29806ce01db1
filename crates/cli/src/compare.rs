//! `fabriclab compare FILE`: one scenario on InfiniBand and on RoCEv2, side by side (the
//! table or `--json`), optionally as an HTML report of both fabrics (`--html`).

use std::path::Path;
use std::process::ExitCode;

use crate::run::write_html;

pub fn compare(file: &Path, json: bool, html: Option<&Path>) -> ExitCode {
    let (name, src) = match crate::run::read_scenario(file) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let multi = indicatif::MultiProgress::new();
    let mut ib_bar = crate::progress::Bar::in_multi(&multi, "InfiniBand");
    let mut roce_bar = crate::progress::Bar::in_multi(&multi, "RoCEv2");
    let run = report::compare::run_watched(&name, &src, html.is_some(), &mut ib_bar, &mut roce_bar);
    drop((ib_bar, roce_bar));
    let (cmp, ib, roce) = match run {
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
        match crate::run::print_json(&cmp) {
            Ok(()) => {}
            Err(e) => {
                eprintln!("error: cannot serialise the comparison: {e}");
                return ExitCode::from(1);
            }
        }
    } else {
        print!("{}", report::compare::text(&cmp));
    }
    if cmp.infiniband.incomplete.is_some() || cmp.roce.incomplete.is_some() {
        eprintln!("cancelled: the figures above cover each fabric's run up to where it stopped");
        return ExitCode::from(crate::progress::EXIT_CANCELLED);
    }
    ExitCode::SUCCESS
}
