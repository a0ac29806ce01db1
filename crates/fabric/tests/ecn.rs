//! The measured ECN marking frequency follows the RED rule.
//!
//! A 2:1 incast with DCQCN off: the bottleneck queue sweeps from 0 past Kmax and every
//! arriving packet sees a known queue length. For each bin of queue length (width Kmax/12)
//! the fraction of arrivals marked must match the RED probability averaged over the bin,
//! Pmax·(q−Kmin)/(Kmax−Kmin), within four binomial standard deviations.

mod common;
use common::*;
use model::ecn::Red;
use units::Bytes;

#[test]
fn marking_frequency_matches_red() {
    let (kmin, kmax, pmax) = (60_000u64, 600_000u64, 0.5);
    let s = scenario(
        LEAF_SPINE,
        &format!(
            "forwarding = \"store-and-forward\"\necn = [{{ queue = 3, kmin = \"{kmin}B\", kmax = \"{kmax}B\", pmax = {pmax} }}]\ndcqcn = {{ preset = \"off\" }}"
        ),
        BUFFER,
        "[[traffic]]\nkind = \"incast\"\nreceiver = 0\nsenders = [1, 2]\nsize = \"5MB\"\ndscp = 26\n",
    );
    let red = Red { kmin: Bytes(kmin), kmax: Bytes(kmax), pmax };
    // One sweep of the queue gives ~24 arrivals per bin; the marks of 16 seeds are
    // independent draws over the same trajectory, so their counts add up.
    let (mut seen, mut marked) = ([0u64; 16], [0u64; 16]);
    for seed in 1..=16 {
        let mut sim = load(&s.replace("seed = 7", &format!("seed = {seed}"))).simulator(false);
        sim.record_ecn_curve();
        sim.run();
        // The bottleneck: leaf0's port to h0, the port that saw the most ECN-capable arrivals.
        let port = sim.stats.ports.iter().max_by_key(|p| p.ecn_seen.iter().sum::<u64>()).unwrap();
        for b in 0..16 {
            seen[b] += port.ecn_seen[b];
            marked[b] += port.ecn_marked_bins[b];
        }
    }
    eprintln!("seen {seen:?}\nmarked {marked:?}");
    assert_eq!(marked[15], seen[15], "every arrival above Kmax is marked");
    let mut checked = 0;
    for bin in 0..12 {
        let (n, m) = (seen[bin], marked[bin]);
        if n < 100 {
            continue;
        }
        // Mean RED probability over the bin [lo, hi).
        let (lo, hi) = (bin as u64 * kmax / 12, (bin as u64 + 1) * kmax / 12);
        let steps = 200;
        let p: f64 = (0..steps).map(|i| red.mark_probability(Bytes(lo + (hi - lo) * i / steps))).sum::<f64>() / steps as f64;
        let sd = (p * (1.0 - p) / n as f64).sqrt().max(1e-9);
        let got = m as f64 / n as f64;
        assert!((got - p).abs() <= 4.0 * sd + 0.01, "bin {bin}: marked {got:.4} of {n}, RED {p:.4}");
        checked += 1;
    }
    assert!(checked >= 8, "only {checked} bins had enough samples");
}

/// Counting the marking curve changes nothing else: the same marks, flows and events.
#[test]
fn counting_the_curve_changes_no_result() {
    let s = scenario(
        LEAF_SPINE,
        "forwarding = \"store-and-forward\"\necn = [{ queue = 3, kmin = \"60000B\", kmax = \"600000B\", pmax = 0.5 }]\ndcqcn = { preset = \"paper\" }",
        BUFFER,
        "[[traffic]]\nkind = \"incast\"\nreceiver = 0\nsenders = [1, 2, 3]\nsize = \"2MB\"\ndscp = 26\n",
    );
    let plain = load(&s).run(false);
    let mut counted = load(&s).simulator(false);
    counted.record_ecn_curve();
    counted.run();
    let marks = |sim: &fabric::Sim| sim.stats.ports.iter().map(|p| p.ecn_marked).collect::<Vec<_>>();
    assert!(marks(&plain).iter().sum::<u64>() > 0, "the incast marks packets");
    assert_eq!(marks(&plain), marks(&counted));
    let finish = |sim: &fabric::Sim| sim.stats.flows.iter().map(|f| f.finish()).collect::<Vec<_>>();
    assert_eq!(finish(&plain), finish(&counted));
    assert_eq!(plain.stats.events, counted.stats.events);
    assert!(plain.stats.ports.iter().all(|p| p.ecn_seen == [0; 16]), "not counted unless asked");
    assert!(counted.stats.ports.iter().any(|p| p.ecn_seen.iter().sum::<u64>() > 0));
}
