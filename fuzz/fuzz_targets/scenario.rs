//! Scenario files, mutated as `crates/scenario/tests/fuzz.rs` does: libFuzzer's input is
//! the choice bytes (which seed, which mutations). A failed check panics with the input.
#![no_main]

#[path = "../../crates/scenario/tests/fuzz/harness.rs"]
mod harness;

use std::sync::OnceLock;

use harness::{check_scenario, mutate_scenario, show, Choices, Policy, Seeds};
use libfuzzer_sys::fuzz_target;

fn seeds() -> &'static Seeds {
    static SEEDS: OnceLock<Seeds> = OnceLock::new();
    SEEDS.get_or_init(|| Seeds::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..")))
}

fuzz_target!(|data: &[u8]| {
    let seeds = seeds();
    let mut ch = Choices::new(data);
    let seed = &seeds.scenarios[ch.below(seeds.scenarios.len())];
    let text = mutate_scenario(&seed.text, Policy::from_env(), &mut ch);
    let file = seed.path.display().to_string();
    if let Err(why) = check_scenario(&file, &text, &seeds.examples) {
        panic!("{why}{}", show(&file, &text));
    }
});
