//! Collectives against outside references: nccl-tests' bus-bandwidth arithmetic and the
//! analytical bounds of ring all-reduce and all-to-all, on both fabrics (each scenario runs
//! through `compare`, which builds the InfiniBand side from the same file).

use report::compare::{self, Side};

// The scenario-text builders the simulator's tests share.
#[path = "../../fabric/tests/common.rs"]
mod common;

/// A 2-tier leaf-spine at 100 Gb/s with the shared test RoCE section (PFC as in
/// `common::scenario`, plus ECN and DCQCN as given) and one collective; `compare` fills
/// the InfiniBand side from its defaults.
fn scenario(leaves: u32, hosts_per_leaf: u32, oversub: &str, dcqcn: &str, collective: &str) -> String {
    let topology = format!(
        "[topology]\nkind = \"leaf-spine\"\nleaves = {leaves}\nspines = 2\nhosts_per_leaf = {hosts_per_leaf}\n{oversub}\n\
         host_link = {{ speed = \"100Gbps\", cable = \"3m\" }}\nfabric_link = {{ speed = \"100Gbps\", cable = \"20m\" }}\n"
    );
    let roce = format!(
        "forwarding = \"store-and-forward\"\necn = [{{ queue = 3, kmin = \"150KB\", kmax = \"1500KB\", pmax = 0.1 }}]\ndcqcn = {{ preset = \"{dcqcn}\" }}"
    );
    let traffic = format!("[[traffic]]\nkind = \"collective\"\ndscp = 26\nsl = 0\n{collective}\n");
    common::scenario(&topology, &roce, common::BUFFER, &traffic)
}

fn both(src: &str) -> (Side, Side) {
    let (_, ib, roce) = compare::run("test.toml", src, false).expect("valid scenario");
    (ib, roce)
}

fn lossless(s: &Side) {
    assert_eq!(s.report.totals.drops, 0, "{:?}: drops", s.report.fabric);
    assert_eq!(s.report.flows.failed, 0);
    assert!(s.report.collectives.iter().all(|c| c.time_ps.is_some()), "{:?}: unfinished collective", s.report.fabric);
}

/// Ring all-reduce on a non-blocking fabric: every link of the ring carries 2(n−1)/n·S, so
/// busbw can reach, and never exceed, the link's payload rate (line rate × path-MTU payload
/// over the wire bytes of a full packet). With 32 loops of 8 chunks the pipeline fill costs
/// under 3 %.
#[test]
fn ring_all_reduce_busbw_is_within_3_percent_of_the_link_payload_rate() {
    let src = scenario(2, 4, "", "nvidia-default", "op = \"all-reduce\"\nsize = \"32MiB\"\nchunk = \"128KiB\"");
    let (ib, roce) = both(&src);
    for s in [&ib, &roce] {
        lossless(s);
        let c = &s.report.collectives[0];
        // The bound from first principles: 100 Gb/s × 4096 / wire bytes of a 4096 B packet.
        let wire = s.world.params.mtu.0 as f64 / report::payload_efficiency(&s.world.params);
        let bound = 100e9 / 8.0 * 4096.0 / wire / 1e9;
        assert!((c.busbw_bound_gbs - bound).abs() < 1e-9);
        assert!(c.busbw_gbs <= bound, "{:?}: busbw {} above the bound {bound}", s.report.fabric, c.busbw_gbs);
        assert!(c.busbw_gbs >= 0.97 * bound, "{:?}: busbw {} below 97% of {bound}", s.report.fabric, c.busbw_gbs);
        // nccl-tests' definitions: algbw = S / t, busbw = algbw × 2(n−1)/n.
        let t = c.time_ps.unwrap() as f64 / 1e12;
        assert!((c.algbw_gbs - (32u64 << 20) as f64 / t / 1e9).abs() < 1e-9);
        assert!((c.busbw_gbs - c.algbw_gbs * 2.0 * 7.0 / 8.0).abs() < 1e-9);
    }
    // Wire overheads differ (RoCE: Ethernet/IP/UDP + preamble/IFG; IB: LRH/VCRC + framing).
    assert!(ib.report.collectives[0].busbw_bound_gbs > roce.report.collectives[0].busbw_bound_gbs);
}

/// NCCL's double binary tree: every rank sends and receives each half of the data about
/// once in each direction, so it reaches the same order of busbw as the ring; it finishes,
/// drops nothing and stays under the bound on both fabrics. (RoCE runs PFC-only here: a
/// parent receiving from two children is a 2:1 incast, where DCQCN's rules decide the
/// result — see `dequeue_marking_relieves_dcqcn_on_the_tree`.)
#[test]
fn tree_all_reduce_completes_under_the_bound() {
    let src = scenario(2, 4, "", "off", "op = \"all-reduce\"\nalgorithm = \"tree\"\nsize = \"16MiB\"\nchunk = \"128KiB\"");
    let (ib, roce) = both(&src);
    for s in [&ib, &roce] {
        lossless(s);
        let c = &s.report.collectives[0];
        assert!(c.busbw_gbs <= c.busbw_bound_gbs);
        assert!(c.busbw_gbs >= 0.5 * c.busbw_bound_gbs, "{:?}: tree busbw {} of {}", s.report.fabric, c.busbw_gbs, c.busbw_bound_gbs);
    }
}

/// All-to-all on a 2:1 oversubscribed leaf-spine (o = 2, h = 4 hosts per leaf, n = 16
/// ranks): a rank sends (n−h)/n of its data off its leaf, through uplinks with 1/o of the
/// hosts' bandwidth, so busbw ≤ B_eff·min(1, (n−1)/(o·(n−h))) = 0.625·B_eff. InfiniBand's
/// ftree routes balance the uplinks exactly and reach the band [0.85, 1.0] of it. RoCE's
/// ECMP hashes QPs onto uplinks at random, so collisions leave some uplinks busier than
/// others (Al-Fares et al., Hedera, NSDI 2010): with one QP per peer and PFC only it stays
/// under the bound but below IB. More QPs per peer (8 channels, each its own QP and UDP
/// source port: the QP scaling Meta uses for ECMP entropy, Gangidi et al., "RDMA over
/// Ethernet for Distributed AI Training at Meta Scale", SIGCOMM 2024) spread the load and
/// bring RoCE into the same band.
#[test]
fn all_to_all_on_an_oversubscribed_fabric_meets_the_uplink_bound() {
    let src = scenario(4, 4, "oversubscription = 2.0", "off", "op = \"all-to-all\"\nsize = \"16MiB\"");
    let (ib, roce) = both(&src);
    let (n, h, o) = (16.0, 4.0, 2.0);
    let share = f64::min(1.0, (n - 1.0) / (o * (n - h)));
    for s in [&ib, &roce] {
        lossless(s);
        let c = &s.report.collectives[0];
        let bound = share * c.busbw_bound_gbs;
        assert!(c.busbw_gbs <= bound, "{:?}: {} above {bound}", s.report.fabric, c.busbw_gbs);
        if s.report.fabric == fabric::params::Tech::Infiniband {
            assert!(c.busbw_gbs >= 0.85 * bound, "IB: {} below 0.85 × {bound}", c.busbw_gbs);
        } else {
            assert!(c.busbw_gbs >= 0.7 * bound, "RoCE: {} below 0.7 × {bound}", c.busbw_gbs);
        }
    }
    assert!(roce.report.collectives[0].busbw_gbs < ib.report.collectives[0].busbw_gbs);
    let scaled = scenario(4, 4, "oversubscription = 2.0", "off", "op = \"all-to-all\"\nsize = \"16MiB\"\nchannels = 8");
    let (_, roce8) = both(&scaled);
    lossless(&roce8);
    let c = &roce8.report.collectives[0];
    let bound = share * c.busbw_bound_gbs;
    assert!(c.busbw_gbs <= bound && c.busbw_gbs >= 0.85 * bound, "RoCE, 8 QPs per peer: {} of {bound}", c.busbw_gbs);
    assert!(c.busbw_gbs > roce.report.collectives[0].busbw_gbs, "QP scaling beats one QP per peer");
}

/// The thesis figure: the 2:1 all-to-all above with NVIDIA's DCQCN as ConnectX runs it
/// lands at 0.6–0.8 of InfiniBand and no higher than PFC alone (DCQCN only ever slows a
/// sender; here ECMP collisions, which PFC alone also suffers, set most of the gap).
/// Each of the three model errors fixed for it (issue 12) is shown by turning its rule
/// back: clamping RT at every cut collapses busbw below 0.3 of InfiniBand; the paper's
/// rules without re-timing the paced send lose to the same rules with it.
#[test]
fn all_to_all_with_nvidia_dcqcn_lands_between_six_and_eight_tenths_of_infiniband() {
    let a2a = |dcqcn: &str| {
        let src = scenario(4, 4, "oversubscription = 2.0", "off", "op = \"all-to-all\"\nsize = \"16MiB\"")
            .replace("dcqcn = { preset = \"off\" }", &format!("dcqcn = {{ {dcqcn} }}"));
        both(&src)
    };
    let (ib, pfc_only) = a2a("preset = \"off\"");
    let (_, nvidia) = a2a("preset = \"nvidia-default\"");
    let busbw = |s: &Side| {
        lossless(s);
        s.report.collectives[0].busbw_gbs
    };
    let (ib, pfc_only, nvidia) = (busbw(&ib), busbw(&pfc_only), busbw(&nvidia));
    eprintln!("IB {ib:.3}, PFC only {pfc_only:.3}, nvidia-default {nvidia:.3} GB/s");
    assert!((0.6 * ib..=0.8 * ib).contains(&nvidia), "nvidia-default {nvidia} vs IB {ib}");
    assert!(nvidia <= pfc_only, "nvidia-default {nvidia} above PFC only {pfc_only}");
    let clamped = busbw(&a2a("preset = \"nvidia-default\", clamp_tgt_rate = true").1);
    assert!(clamped < 0.3 * ib, "RT clamped at every cut: {clamped}");
    let paper = busbw(&a2a("preset = \"paper\"").1);
    let fixed_gap = busbw(&a2a("preset = \"paper\", retime = false").1);
    assert!(fixed_gap < paper, "paper without re-timing {fixed_gap} vs with {paper}");
}

/// The same comparison twice: identical JSON.
#[test]
fn compare_is_deterministic() {
    let src = scenario(2, 4, "", "nvidia-default", "op = \"all-gather\"\nsize = \"4MiB\"\niterations = 2\nplacement = \"random\"");
    let a = compare::run("t.toml", &src, false).unwrap().0;
    let b = compare::run("t.toml", &src, false).unwrap().0;
    assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
    assert_eq!(a.roce.collectives[0].iteration_ps.len(), 2);
    assert!(a.roce.collectives[0].iteration_ps.iter().all(|t| t.is_some()));
}

/// Bad collective settings are errors naming the field.
#[test]
fn bad_collectives_are_refused() {
    for (bad, field) in [
        ("op = \"all-reduce\"\nsize = \"1MiB\"\nalgorithm = \"butterfly\"", "algorithm"),
        ("op = \"reduce\"\nsize = \"1MiB\"", "op"),
        ("op = \"all-reduce\"\nsize = \"1MiB\"\nranks = 99", "ranks"),
        ("op = \"all-reduce\"\nsize = \"1MiB\"\nhosts = [0, 0]", "hosts"),
        ("op = \"all-reduce\"\nsize = \"1MiB\"\nplacement = \"snake\"", "placement"),
        ("op = \"broadcast\"\nsize = \"1MiB\"\nroot = 8", "traffic[0]"),
        ("op = \"all-gather\"\nsize = \"1MiB\"\nalgorithm = \"tree\"", "traffic[0]"),
        ("op = \"all-reduce\"\nsize = 1024", "size"),
        ("op = \"all-reduce\"\nsize = \"1MiB\"\nalgorithm = \"sharp\"", "traffic[0].algorithm"),
    ] {
        let src = scenario(2, 4, "", "off", bad);
        let e = match scenario::load_str("bad.toml", &src.replace("sl = 0\n", "")) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("accepted: {bad}"),
        };
        assert!(e.contains(field) && e.starts_with("bad.toml"), "{bad}: {e}");
    }
}

/// Where ECN marks matters to DCQCN: marking the queue a packet joins tells the sender
/// about a queue that is long gone by the time the CNP arrives; marking the queue it
/// leaves (as DCQCN's and HPCC's ns-3 do) reports the queue now. On the tree all-reduce (a
/// 2:1 incast at every parent) the paper's rules, which cut at every CNP and clamp the
/// target rate each time, run twice as fast with dequeue marking (measured 5.32 vs 2.41
/// GB/s). ConnectX's rules gain much less (7.03 vs 6.55): its per-port CNP limit lets a
/// receiver notify one sender per 4 µs, so cuts are rare, and it clamps the target rate
/// only at the first cut after an increase. A bad marking point is an error naming the
/// field.
#[test]
fn dequeue_marking_relieves_dcqcn_on_the_tree() {
    let busbw = |preset: &str, point: &str| {
        let src = scenario(2, 4, "", preset, "op = \"all-reduce\"\nalgorithm = \"tree\"\nsize = \"16MiB\"\nchunk = \"128KiB\"")
            .replace("dcqcn = {", &format!("ecn_marking = \"{point}\"\ndcqcn = {{"))
            .replace("sl = 0\n", "");
        let r = report::run(&scenario::load_str("t.toml", &src).unwrap(), false).1;
        assert_eq!(r.totals.drops, 0);
        r.collectives[0].busbw_gbs
    };
    let (enq, deq) = (busbw("paper", "enqueue"), busbw("paper", "dequeue"));
    assert!(deq > 2.0 * enq, "paper: dequeue {deq} vs enqueue {enq} GB/s");
    let (enq, deq) = (busbw("nvidia-default", "enqueue"), busbw("nvidia-default", "dequeue"));
    assert!(deq > enq && deq < 1.2 * enq, "nvidia-default: dequeue {deq} vs enqueue {enq} GB/s");
    let bad = scenario(2, 4, "", "off", "op = \"all-reduce\"\nsize = \"1MiB\"").replace("dcqcn = {", "ecn_marking = \"sometimes\"\ndcqcn = {");
    let e = scenario::load_str("t.toml", &bad.replace("sl = 0\n", "")).err().expect("refused").to_string();
    assert!(e.contains("roce.ecn_marking") && e.contains("dequeue"), "{e}");
}

/// An InfiniBand leaf-spine of `leaves` × `hosts_per_leaf` hosts at 400 Gb/s (NDR), two
/// spines, routed by `routing`, with one all-reduce of `size` by `algorithm`.
fn ib_all_reduce(leaves: u32, hosts_per_leaf: u32, routing: &str, algorithm: &str, size: &str) -> report::Report {
    let topology = format!(
        "[topology]\nkind = \"leaf-spine\"\nleaves = {leaves}\nspines = 2\nhosts_per_leaf = {hosts_per_leaf}\n\
         host_link = {{ speed = \"400Gbps\", cable = \"3m\" }}\nfabric_link = {{ speed = \"400Gbps\", cable = \"20m\" }}\n"
    );
    let traffic =
        format!("[[traffic]]\nkind = \"collective\"\nsl = 0\nop = \"all-reduce\"\nalgorithm = \"{algorithm}\"\nsize = \"{size}\"\nchunk = \"128KiB\"\n");
    let src = common::ib_scenario(&topology, &[("routing", &format!("\"{routing}\""))], &traffic);
    let r = report::run(&common::load(&src), false).1;
    assert_eq!(r.totals.drops, 0, "{algorithm}: drops");
    assert_eq!(r.flows.failed, 0);
    assert!(r.collectives[0].time_ps.is_some(), "{algorithm}: unfinished");
    r
}

/// The test: SHARP all-reduce of a large message reaches close to its ideal ratio
/// over ring algbw, 2(n−1)/n. Each rank's link carries S once each way with SHARP and
/// 2(n−1)/n·S with the ring, so with both at the link payload rate B_eff, algbw is B_eff
/// and B_eff·n/(2(n−1)). "Close": at most 5 % under 2(n−1)/n and never above it, with
/// SHARP's algbw never above B_eff and the ring's busbw never above B_eff (neither beats
/// physics). SHARP's pipeline fills slower than the ring's (each of its four tree levels
/// holds a whole 128 KiB chunk), so the ratio sits just under the ideal. On 2 leaves × 4
/// hosts (n = 8, ideal 1.75) with 32 MiB: 1.731.
#[test]
fn sharp_all_reduce_reaches_its_ideal_ratio_over_ring() {
    let (leaves, hosts) = (2, 4);
    let n = (leaves * hosts) as f64;
    let ideal = 2.0 * (n - 1.0) / n;
    let ring = ib_all_reduce(leaves, hosts, "updn", "ring", "32MiB");
    let sharp = ib_all_reduce(leaves, hosts, "updn", "sharp", "32MiB");
    let (r, s) = (&ring.collectives[0], &sharp.collectives[0]);
    assert!(r.busbw_gbs <= r.busbw_bound_gbs, "ring busbw {} above {}", r.busbw_gbs, r.busbw_bound_gbs);
    assert!(s.algbw_gbs <= s.algbw_bound_gbs, "sharp algbw {} above the link payload rate {}", s.algbw_gbs, s.algbw_bound_gbs);
    assert!((s.algbw_bound_gbs - r.busbw_bound_gbs).abs() < 1e-9, "same link payload rate");
    let ratio = s.algbw_gbs / r.algbw_gbs;
    eprintln!("n = {n}: ring algbw {:.2} GB/s, sharp algbw {:.2} GB/s, ratio {ratio:.4}, ideal {ideal:.4}", r.algbw_gbs, s.algbw_gbs);
    assert!(ratio >= 0.95 * ideal && ratio <= ideal, "ratio {ratio} not within 5 % under {ideal}");
    // SHARP rows report nccl-tests' factor; the link carries algbw.
    assert!((s.bus_factor - ideal).abs() < 1e-12);
    assert!((s.link_gbs - s.algbw_gbs).abs() < 1e-9 * s.algbw_gbs);
    assert!((r.link_gbs - r.busbw_gbs).abs() < 1e-3 * r.busbw_gbs);
}

/// `compare` on a SHARP job: InfiniBand runs it on the switches' aggregation nodes,
/// RoCEv2 (which has none) runs the ring and says so; a RoCE run asking for SHARP is an
/// error that says why; SHARP is an all-reduce.
#[test]
fn sharp_runs_on_infiniband_and_falls_back_to_ring_on_roce() {
    let src = scenario(2, 4, "", "off", "op = \"all-reduce\"\nalgorithm = \"sharp\"\nsize = \"8MiB\"\nchunk = \"128KiB\"");
    let (cmp, ib, roce) = compare::run("test.toml", &src, false).expect("valid scenario");
    lossless(&ib);
    lossless(&roce);
    assert_eq!((ib.report.collectives[0].algorithm.as_str(), roce.report.collectives[0].algorithm.as_str()), ("sharp", "ring"));
    assert!(roce.world.notes.iter().any(|n| n.contains("SHARP") && n.contains("ring")), "{:?}", roce.world.notes);
    assert!(ib.world.notes.iter().any(|n| n.contains("aggregation node")), "{:?}", ib.world.notes);
    assert!(cmp.rows.iter().any(|r| r.metric.contains("sharp (IB) / ring (RoCE)") && r.metric.ends_with("algbw")));
    // The ANs exist only on the InfiniBand side: RoCE keeps its 8 endpoints.
    assert_eq!(roce.world.topo.endpoints.len(), 8);
    assert_eq!(ib.world.topo.endpoints.len(), 8 + 4);
    assert!(ib.report.collectives[0].algbw_gbs > roce.report.collectives[0].algbw_gbs);
    let text = compare::text(&cmp);
    assert!(text.contains("runs it with NCCL's ring"), "{text}");

    let roce_only = src.replace("sl = 0\n", "");
    let e = scenario::load_str("t.toml", &roce_only).err().expect("refused").to_string();
    assert!(e.contains("traffic[0].algorithm") && e.contains("InfiniBand") && e.contains("ring"), "{e}");
    let gather = common::ib_scenario(
        "[topology]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 1\nhosts_per_leaf = 2\nhost_link = { speed = \"100Gbps\", cable = \"3m\" }\nfabric_link = { speed = \"100Gbps\", cable = \"3m\" }",
        &[],
        "[[traffic]]\nkind = \"collective\"\nsl = 0\nop = \"all-gather\"\nalgorithm = \"sharp\"\nsize = \"1MiB\"",
    );
    let e = scenario::load_str("t.toml", &gather).err().expect("refused").to_string();
    assert!(e.contains("in-network all-reduce"), "{e}");
    // A fabric read from ibnetdiscover output lists no aggregation nodes.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let file = std::fs::read_to_string(dir.join("ib-from-ibnetdiscover.toml")).unwrap()
        + "\n[[traffic]]\nkind = \"collective\"\nsl = 0\nop = \"all-reduce\"\nalgorithm = \"sharp\"\nsize = \"1MiB\"\n";
    let e = scenario::load_str_at("f.toml", &file, &dir).err().expect("refused").to_string();
    assert!(e.contains("traffic[1].algorithm") && e.contains("topology file"), "{e}");
}
