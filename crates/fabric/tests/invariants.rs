//! Accounting invariants after every event, over random small scenarios, and determinism.

mod common;
use common::*;
use proptest::prelude::*;

fn random_scenario(seed: u64, senders: usize, size_kb: u64, dcqcn: bool, total_kib: u64, pool: bool) -> String {
    let list: Vec<String> = (1..=senders).map(|i| (i + 7).to_string()).collect();
    scenario(
        LEAF_SPINE,
        &format!(
            "forwarding = \"store-and-forward\"\necn = [{{ queue = 3, kmin = \"20KB\", kmax = \"200KB\", pmax = 0.2 }}]\ndcqcn = {{ preset = \"{}\" }}",
            if dcqcn { "paper" } else { "off" }
        ),
        &(BUFFER.replace("16MiB", &format!("{total_kib}KiB"))
            + if pool { "shared_headroom_pool = \"300KB\"\n" } else { "" }),
        &format!(
            "[[traffic]]\nkind = \"incast\"\nreceiver = 1\nsenders = [{}]\nsize = \"{size_kb}KB\"\nstagger = \"3us\"\ndscp = 26\n\n[[traffic]]\nkind = \"permutation\"\nsize = \"{size_kb}KB\"\ndscp = 0\n",
            list.join(",")
        ),
    )
    .replace("seed = 7", &format!("seed = {seed}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]
    #[test]
    fn pools_add_up_and_bytes_are_conserved(seed in 0u64..1000, senders in 1usize..8, size_kb in 4u64..200,
                                            dcqcn in any::<bool>(), total_kib in 600u64..4096, pool in any::<bool>()) {
        let w = load(&random_scenario(seed, senders, size_kb, dcqcn, total_kib, pool));
        let mut sim = w.simulator(false);
        let mut steps = 0u64;
        while sim.step() {
            steps += 1;
            if steps.is_multiple_of(7) {
                if let Err(e) = sim.check_invariants() { prop_assert!(false, "after {} events: {}", steps, e); }
            }
        }
        sim.check_invariants().map_err(TestCaseError::fail)?;
        sim.finish_now();
        let st = &sim.stats;
        // Everything completed, so the buffers and links are empty.
        prop_assert_eq!(st.flows.iter().filter(|f| f.finish().is_some()).count(), st.flows.len());
        prop_assert_eq!(st.buffer_cells_at_end, 0);
        // Lossless class: nothing dropped; each payload byte delivered exactly once.
        let lossless: u64 = st.ports.iter().map(|p| p.lossless_drops).sum();
        prop_assert_eq!(lossless, 0);
        let (_, delivered, _) = sim.payload_accounting();
        let posted: u64 = st.flows.iter().map(|f| f.size()).sum();
        prop_assert_eq!(delivered, posted);
    }
}

#[test]
fn same_seed_same_json() {
    let s = random_scenario(3, 6, 150, true, 1024, false);
    let a = serde_json::to_string(&report::run(&load(&s), false).1).unwrap();
    let b = serde_json::to_string(&report::run(&load(&s), false).1).unwrap();
    assert_eq!(a, b);
    let c = serde_json::to_string(&report::run(&load(&s.replace("seed = 3", "seed = 4")), false).1).unwrap();
    assert_ne!(a, c, "the seed changes the permutation and ECN draws");
}

#[test]
fn all_to_all_completes_losslessly() {
    // 16 hosts, 2 leaves x 8, 2 spines: 4:1 oversubscribed between leaves.
    let s = scenario(
        LEAF_SPINE,
        "forwarding = \"store-and-forward\"\necn = [{ queue = 3, kmin = \"100KB\", kmax = \"400KB\", pmax = 0.2 }]\ndcqcn = { preset = \"nvidia-default\" }",
        BUFFER,
        "[[traffic]]\nkind = \"all-to-all\"\nsize = \"64KB\"\ndscp = 26\n",
    );
    let (sim, r) = report::run(&load(&s), false);
    assert_eq!(r.flows.count, 16 * 15);
    assert_eq!(r.flows.completed, 16 * 15);
    assert_eq!(r.totals.lossless_drops, 0);
    let (_, delivered, _) = sim.payload_accounting();
    assert_eq!(delivered, 16 * 15 * 64_000);
    // Leaf0's 8 hosts send 8 x 8 x 64 KB of payload to leaf1 over 2 uplinks of 100 Gb/s
    // (80 ps per byte): the run cannot be shorter than that payload's serialisation.
    let min_ps = 8 * 8 * 64_000u64 * 80 / 2;
    assert!(r.end_ps >= min_ps, "{} ps: faster than the uplinks allow ({min_ps} ps)", r.end_ps);
}

fn random_ib_scenario(seed: u64, senders: usize, size_kb: u64, vl_kib: u64, vls: u8) -> String {
    let list: Vec<String> = (1..=senders).map(|i| (i + 7).to_string()).collect();
    let sl_map = if vls > 1 { "{ 0 = 0, 1 = 1 }" } else { "{ 0 = 0 }" };
    ib_scenario(
        LEAF_SPINE,
        &[
            ("vl_buffer", &format!("\"{vl_kib}KiB\"")),
            ("data_vls", &vls.to_string()),
            ("sl_to_vl", sl_map),
            ("forwarding", if seed.is_multiple_of(2) { "\"cut-through\"" } else { "\"store-and-forward\"" }),
        ],
        &format!(
            "[[traffic]]\nkind = \"incast\"\nreceiver = 1\nsenders = [{}]\nsize = \"{size_kb}KB\"\nstagger = \"3us\"\nsl = 0\n\n[[traffic]]\nkind = \"permutation\"\nsize = \"{size_kb}KB\"\nsl = {}\n",
            list.join(","),
            vls - 1
        ),
    )
    .replace("seed = 7", &format!("seed = {seed}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]
    /// InfiniBand: credits stay within [0, 2048] and never exceed the peer's free blocks,
    /// input buffers hold exactly their packets' blocks, nothing drops, everything arrives.
    #[test]
    fn ib_credits_bounded_and_nothing_drops(seed in 0u64..1000, senders in 1usize..8, size_kb in 4u64..200,
                                            vl_kib in 5u64..300, vls in 1u8..3) {
        let w = load(&random_ib_scenario(seed, senders, size_kb, vl_kib, vls));
        let mut sim = w.simulator(false);
        let mut steps = 0u64;
        while sim.step() {
            steps += 1;
            if steps.is_multiple_of(5) {
                if let Err(e) = sim.check_invariants() { prop_assert!(false, "after {} events: {}", steps, e); }
            }
        }
        sim.check_invariants().map_err(TestCaseError::fail)?;
        sim.finish_now();
        let st = &sim.stats;
        prop_assert!(st.deadlock.is_none());
        prop_assert_eq!(st.flows.iter().filter(|f| f.finish().is_some()).count(), st.flows.len());
        let drops: u64 = st.ports.iter().map(|p| p.drops.iter().sum::<u64>()).sum();
        prop_assert_eq!(drops, 0);
        let (_, delivered, _) = sim.payload_accounting();
        let posted: u64 = st.flows.iter().map(|f| f.size()).sum();
        prop_assert_eq!(delivered, posted);
    }
}
