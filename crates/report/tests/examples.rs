//! Every bundled example loads, runs to completion in seconds, and shows what its header
//! comment promises.

fn run(name: &str) -> report::Report {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples").join(name);
    let w = scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
    report::run(&w, false).1
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

/// Poisson background from the web-search CDF: the flow count is what the offered load
/// implies (32 hosts × 2 ms × 0.3 × 100 Gb/s over the CDF's 1,711,250 B mean = 140, a
/// Poisson count: ±40 is ±3.4 σ), the lossless incast drops nothing, the lossy class does.
#[test]
fn background_example_offers_its_load_in_a_lossy_class() {
    let r = run("roce-incast-background.toml");
    assert_eq!(r.traffic.len(), 2);
    let bg = &r.traffic[1];
    let expected = 32.0 * 2e-3 * 0.3 * 100e9 / (1_711_250.0 * 8.0);
    assert!((bg.flows as f64 - expected).abs() < 40.0, "{} background flows, expected ~{expected:.0}", bg.flows);
    assert_eq!(r.traffic[0].completed, 16);
    assert_eq!(r.totals.lossless_drops, 0);
    assert!(r.totals.drops > 0 && r.totals.retransmitted_bytes > 0);
    assert_eq!(r.flows.completed, r.flows.count);
}

fn events(r: &report::Report, event: &str) -> usize {
    r.incidents.timeline.iter().filter(|e| e.event == event).count()
}

fn drops(r: &report::Report, cause: &str) -> u64 {
    r.totals.drops_by_cause.iter().find(|(c, _)| c == cause).map_or(0, |&(_, n)| n)
}

/// The failure-mode examples show what their comments say (the detailed, derived checks
/// are in failures.rs and faults.rs).
#[test]
fn failure_examples_show_their_failure() {
    let r = run("roce-pfc-storm.toml");
    assert_eq!((events(&r, "watchdog-fired"), events(&r, "watchdog-restored")), (1, 1));
    assert_eq!(r.victims.victim_flows, vec![1]);
    assert!(r.incidents.paused_at_end.is_empty() && r.flows.completed == 3);

    let r = run("roce-slow-receiver.toml");
    assert!(events(&r, "paused") >= 5 && r.totals.drops == 0);
    assert_eq!(r.victims.victim_flows, vec![3]);

    let r = run("roce-link-failure.toml");
    assert_eq!((events(&r, "local-repair"), events(&r, "reroute-installed")), (4, 3));
    assert!(r.incidents.recovery.iter().all(|x| x.qps_recovered == x.qps_with_loss && x.qps_with_loss > 0));
    assert_eq!(r.flows.completed, r.flows.count);

    let r = run("roce-misconfigured-port.toml");
    assert!(drops(&r, "pfc-disabled") > 0 && drops(&r, "headroom-overflow") > 0 && drops(&r, "dynamic-threshold") > 0);
    let at: Vec<String> = r.ports.iter().filter(|p| !p.drops.is_empty()).map(|p| format!("{}:{}", p.node, p.port)).collect();
    assert_eq!(at, ["leaf0:1", "leaf0:2", "leaf0:3"]);

    let r = run("ib-stuck-hca.toml");
    assert!(events(&r, "vl-stalled") > 0 && r.totals.pfc_frames == 0);
    assert_eq!(r.victims.victim_flows, vec![1]);

    let r = run("ib-sm-failure.toml");
    assert_eq!(events(&r, "sm-takeover"), 1);
    assert_eq!(r.flows.failed, 1, "the QP gives up before the standby takes over");

    for name in ["deadlock-ring.toml", "routing-loop.toml"] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples").join(name);
        let src = std::fs::read_to_string(&path).unwrap();
        let (_, ib, roce) = report::compare::run(name, &src, false).unwrap();
        assert!(ib.report.totals.deadlock.is_some() && roce.report.totals.deadlock.is_some(), "{name}");
    }
}

/// The SHARP example: two 8-rank all-reduce jobs on disjoint halves of the fabric, SHARP
/// and ring. SHARP's algbw is at most 5 % under 2(n−1)/n = 1.75 times the ring's (1.712
/// measured), never above it nor above the link payload rate; both rows report
/// nccl-tests' factor; nothing is dropped.
#[test]
fn sharp_example_beats_the_ring_by_about_2_n_minus_1_over_n() {
    let r = run("ib-sharp-allreduce.toml");
    assert_eq!(r.totals.drops, 0);
    assert_eq!(r.flows.completed, r.flows.count);
    let (s, ring) = (&r.collectives[0], &r.collectives[1]);
    assert_eq!((s.algorithm.as_str(), ring.algorithm.as_str(), s.ranks, ring.ranks), ("sharp", "ring", 8, 8));
    assert!(s.algbw_gbs <= s.algbw_bound_gbs, "{} above {}", s.algbw_gbs, s.algbw_bound_gbs);
    let ratio = s.algbw_gbs / ring.algbw_gbs;
    assert!((0.95 * 1.75..=1.75).contains(&ratio), "sharp/ring algbw {ratio}");
    assert_eq!((s.bus_factor, ring.bus_factor), (1.75, 1.75));
    assert!(r.notes.iter().any(|n| n.contains("aggregation node")), "{:?}", r.notes);
}
