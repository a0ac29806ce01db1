//! The 127→1 incast against its analytical completion time, and lossless operation.
//!
//! 127 senders × 10^6 B through one 100 Gb/s port at MTU 4096: each message is 245
//! packets (244 × 4096 B + 576 B) = 1,020,106 wire bytes, so the bottleneck needs
//! 127 × 1,020,106 × 80 ps = 10.364 ms (htsim reports 10.4 ms, ns-3 10.3 ms).

mod common;
use common::*;

fn incast(dcqcn: &str) -> report::Report {
    let topo = r#"
[topology]
kind = "fat-tree"
k = 8
host_link = { speed = "100Gbps", delay = "1us" }
fabric_link = { speed = "100Gbps", delay = "1us" }
"#;
    let senders: Vec<String> = (1..128).map(|i| i.to_string()).collect();
    let s = scenario(
        topo,
        &format!(
            "forwarding = \"store-and-forward\"\necn = [{{ queue = 3, kmin = \"400KB\", kmax = \"1600KB\", pmax = 0.2 }}]\ndcqcn = {{ preset = \"{dcqcn}\" }}"
        ),
        BUFFER,
        &format!("[[traffic]]\nkind = \"incast\"\nreceiver = 0\nsenders = [{}]\nsize = \"1MB\"\ndscp = 26\n", senders.join(",")),
    );
    report::run(&load(&s), false).1
}

const ANALYTICAL_PS: f64 = 127.0 * 1_020_106.0 * 80.0;

fn check(r: &report::Report) {
    assert_eq!(r.flows.completed, 127);
    assert_eq!(r.totals.drops, 0, "lossless: no drops");
    let max = r.flows.fct_max_ps as f64;
    let err = (max - ANALYTICAL_PS).abs() / ANALYTICAL_PS;
    assert!(err < 0.01, "finish {max} ps vs analytical {ANALYTICAL_PS} ps ({:.3}%)", err * 100.0);
    assert!(max >= ANALYTICAL_PS, "cannot beat the line rate");
}

#[test]
fn incast_127_to_1_line_rate_pfc_only() {
    let r = incast("off");
    check(&r);
    assert!(r.totals.pfc_frames > 0, "a 127:1 incast must pause");
}

#[test]
fn incast_127_to_1_with_dcqcn() {
    let r = incast("nvidia-default");
    check(&r);
    assert!(r.totals.cnps > 0);
}
