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
    let (sim, _) = w.run(true);
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
