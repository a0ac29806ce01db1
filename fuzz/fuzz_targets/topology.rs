//! Topology files (ibnetdiscover output, ibsim net files), mutated as
//! `crates/scenario/tests/fuzz.rs` does, read by both readers, written back and loaded
//! through a scenario. A failed check panics with the input.
#![no_main]

#[path = "../../crates/scenario/tests/fuzz/harness.rs"]
mod harness;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use harness::{check_topology, mutate_topology, scratch_dir, show, Choices, Seeds};
use libfuzzer_sys::fuzz_target;

struct Setup {
    seeds: Seeds,
    dir: PathBuf,
    scenario: String,
}

fn setup() -> &'static Setup {
    static SETUP: OnceLock<Setup> = OnceLock::new();
    SETUP.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let seeds = Seeds::load(&root);
        let scenario = std::fs::read_to_string(seeds.examples.join("ib-from-ibnetdiscover.toml")).expect("the example");
        Setup { dir: scratch_dir(&root, "cargo-fuzz"), seeds, scenario }
    })
}

fuzz_target!(|data: &[u8]| {
    let s = setup();
    let mut ch = Choices::new(data);
    let seed = &s.seeds.topologies[ch.below(s.seeds.topologies.len())];
    let text = mutate_topology(&seed.text, &mut ch);
    if let Err(why) = check_topology(&seed.path, &text, &s.scenario, &s.dir) {
        panic!("{why}{}", show(&seed.path.display().to_string(), &text));
    }
});
