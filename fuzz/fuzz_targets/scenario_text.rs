//! Scenario files as libFuzzer mutates bytes (no structure): its input is the file's text,
//! relative paths from `examples/`. Seed it with the examples:
//! `cargo +nightly fuzz run scenario_text fuzz/corpus/scenario_text examples`.
#![no_main]

#[path = "../../crates/scenario/tests/fuzz/harness.rs"]
mod harness;

use harness::{check_scenario, show};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let file = examples.join("fuzz.toml").display().to_string();
    if let Err(why) = check_scenario(&file, text, &examples) {
        panic!("{why}{}", show(&file, text));
    }
});
