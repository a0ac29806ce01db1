//! DCQCN converges to a fair share with the queue held between Kmin and Kmax.
//!
//! Parameter set `paper` (Zhu et al., SIGCOMM 2015, §5) with the paper's RED settings
//! (Kmin 5 KB, Kmax 200 KB, Pmax 1 %). The paper's Fig. 11/12 show two flows sharing a
//! bottleneck converging to equal rates with a stable queue; the same is checked here on a
//! 2:1 dumbbell at 100 Gb/s: flow B starts 200 µs after flow A, and over the window
//! 2–8 ms the flows' DCQCN rates have Jain's fairness index ≥ 0.95, the bottleneck's mean
//! queue lies between Kmin and Kmax, and PFC pauses the senders < 1 % of the time.

mod common;
use common::*;

#[test]
fn two_staggered_flows_share_fairly() {
    let topo = r#"
[topology]
kind = "explicit"
nodes = [{ name = "a", kind = "host" }, { name = "b", kind = "host" }, { name = "r", kind = "host" },
         { name = "s0", kind = "switch", ports = 3 }]
links = [
  { a = "a", b = "s0:0", speed = "100Gbps", cable = "5m" },
  { a = "b", b = "s0:1", speed = "100Gbps", cable = "5m" },
  { a = "r", b = "s0:2", speed = "100Gbps", cable = "5m" },
]
"#;
    let s = scenario(
        topo,
        "forwarding = \"store-and-forward\"\necn = [{ queue = 3, kmin = \"5KB\", kmax = \"200KB\", pmax = 0.01 }]\ndcqcn = { preset = \"paper\" }",
        BUFFER,
        r#"
[[traffic]]
kind = "message"
src = 0
dst = 2
size = "200MB"
at = "0us"
dscp = 26

[[traffic]]
kind = "message"
src = 1
dst = 2
size = "200MB"
at = "200us"
dscp = 26

[output]
sample_period = "10us"
"#,
    )
    .replace("seed = 7", "seed = 7\nstop_time = \"8ms\"");
    let w = load(&s);
    let sim = w.run(true);
    let st = &sim.stats;
    let win: Vec<_> = st.samples.iter().filter(|x| x.t >= 2_000_000_000 && x.t <= 8_000_000_000).collect();
    assert!(win.len() > 500, "{} samples", win.len());
    let mean = |i: usize| win.iter().map(|x| x.qp_rate[i] as f64).sum::<f64>() / win.len() as f64;
    let (ra, rb) = (mean(0), mean(1));
    let jain = (ra + rb).powi(2) / (2.0 * (ra * ra + rb * rb));
    eprintln!("rates {:.2} / {:.2} Gb/s, Jain {jain:.4}", ra / 1e9, rb / 1e9);
    assert!(jain >= 0.95, "Jain {jain:.3}: rates {:.2} / {:.2} Gb/s", ra / 1e9, rb / 1e9);
    let bottleneck = w.topo.port_of(fabric::topology::NodeId(3), 2).0 as usize;
    let q = win.iter().map(|x| x.queue[bottleneck] as f64).sum::<f64>() / win.len() as f64;
    eprintln!("mean bottleneck queue {q:.0} B");
    assert!((5_000.0..=200_000.0).contains(&q), "mean queue {q:.0} B not in [Kmin, Kmax]");
    for ep in 0..2 {
        let p = w.topo.ep_port(ep).0 as usize;
        let paused: u64 = st.ports[p].paused_ps.iter().sum();
        assert!((paused as f64) < 0.01 * 8e9, "sender {ep} paused {paused} ps");
    }
}

/// A 16→1 incast of 1 MB across the spines (the `roce-incast` example's shape) with the
/// given DCQCN table and `[roce]` extras.
fn incast(dcqcn: &str, extra: &str) -> (scenario::World, report::Report) {
    let topo = LEAF_SPINE.replace("leaves = 2", "leaves = 4");
    let roce =
        format!("forwarding = \"store-and-forward\"\necn = [{{ queue = 3, kmin = \"150KB\", kmax = \"1500KB\", pmax = 0.1 }}]\ndcqcn = {dcqcn}\n{extra}");
    let traffic = r#"
[[traffic]]
kind = "incast"
receiver = 0
senders = [8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23]
size = "1MB"
dscp = 26
"#;
    let w = load(&scenario(&topo, &roce, BUFFER, traffic));
    let r = report::run(&w, false).1;
    assert_eq!(r.totals.drops, 0);
    assert_eq!(r.flows.failed, 0);
    (w, r)
}

/// `min_time_between_cnps` counts CNPs leaving the port under `nvidia-default` (mlxconfig:
/// "from the port") and per QP under the paper's N: in a 16→1 incast the receiver's NIC
/// sends at most one CNP per 4 µs in all with the first, one per QP per 4 µs with the
/// second, and in practice several times more.
#[test]
fn cnp_interval_counts_per_port_or_per_qp() {
    let (w, port) = incast("{ preset = \"nvidia-default\" }", "");
    let (_, qp) = incast("{ preset = \"nvidia-default\", cnp_scope = \"qp\" }", "");
    let n = w.params.dcqcn.as_ref().unwrap().1.cnp_interval.ps();
    let end = port.end_ps;
    assert!(port.totals.cnps > 10, "{} CNPs", port.totals.cnps);
    assert!(port.totals.cnps <= end / n + 1, "{} CNPs in {end} ps, one per {n} ps at most", port.totals.cnps);
    assert!(qp.totals.cnps > 3 * port.totals.cnps, "per QP {} vs per port {}", qp.totals.cnps, port.totals.cnps);
    assert!(qp.totals.cnps <= 16 * (qp.end_ps / n + 1));
}

/// HPCC's ns-3 carries the notification as a flag on the ACK of the marked packet, so with
/// an ACK per packet every marked packet notifies, and with an ACK every 2 packets only
/// the marked packets that trigger an ACK do; a CNP packet (`cnp = "packet"`, no interval)
/// notifies for every marked packet either way.
#[test]
fn ack_flag_cnps_ride_on_acks() {
    let ns3 = "{ preset = \"hpcc-ns3\" }";
    let pkt = "{ preset = \"hpcc-ns3\", cnp = \"packet\" }";
    // The receiver's NIC: CNPs (or flagged ACKs) it sent, marked packets it received; every
    // one of them reaches a sender.
    let receiver = |r: &report::Report| {
        let rx: u64 = r.nics.iter().map(|n| n.cnp_rx).sum();
        assert_eq!(rx, r.nics[0].cnp_tx, "every notification arrives");
        (r.nics[0].cnp_tx, r.nics[0].ce_rx)
    };
    let (_, every) = incast(ns3, "");
    let (cnps, marks) = receiver(&every);
    assert!(marks > 100, "{marks} marks");
    assert_eq!(cnps, marks, "an ACK per packet: every mark notifies");
    let (_, half) = incast(ns3, "ack_every = 2");
    let (cnps, marks) = receiver(&half);
    assert!(cnps < marks && cnps > 0, "{cnps} flagged ACKs of {marks} marks");
    let (_, packets) = incast(pkt, "ack_every = 2");
    let (cnps, marks) = receiver(&packets);
    assert_eq!(cnps, marks, "CNP packets: one per mark");
}
