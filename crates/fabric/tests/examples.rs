//! Every bundled example loads, runs to completion in seconds, and shows what its header
//! comment promises.

fn run(name: &str) -> fabric::report::Report {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples").join(name);
    let w = fabric::load(&path).unwrap_or_else(|e| panic!("{e}"));
    w.run(false).1
}

#[test]
fn lossless_examples_complete_without_drops() {
    for name in ["roce-incast.toml", "roce-permutation.toml", "ib-incast.toml", "ib-from-ibnetdiscover.toml", "allreduce-compare.toml"] {
        let r = run(name);
        assert_eq!(r.flows.completed, r.flows.count, "{name}");
        assert_eq!(r.totals.drops, 0, "{name}");
    }
}

#[test]
fn ib_incast_waits_for_credits_where_roce_pauses() {
    let ib = run("ib-incast.toml");
    let roce = run("roce-incast.toml");
    assert!(ib.totals.xmit_wait_ps > 0 && ib.totals.pfc_frames == 0);
    assert!(roce.totals.pfc_frames > 0 || roce.totals.cnps > 0);
    assert!(ib.flows.slowdown_max > 15.0 && ib.flows.slowdown_max < 17.0, "16:1 incast: slowdown ~16, got {}", ib.flows.slowdown_max);
}

#[test]
fn misconfigured_example_drops_in_the_lossless_class() {
    let r = run("roce-misconfigured.toml");
    assert!(r.totals.lossless_drops > 0);
}

#[test]
fn allreduce_example_reaches_the_link_payload_rate() {
    let r = run("allreduce-compare.toml");
    let c = &r.collectives[0];
    assert_eq!(c.iteration_ps.len(), 2);
    assert!(c.busbw_gbs <= c.busbw_bound_gbs && c.busbw_gbs > 0.95 * c.busbw_bound_gbs, "{} of {}", c.busbw_gbs, c.busbw_bound_gbs);
}
