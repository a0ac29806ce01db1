//! InfiniBand on the shared core: closed forms, the credit bound, incast, deadlock.
//!
//! Packet on the wire (model::ib): LRH 8 + BTH 12 (+ RETH 16 on the first packet) +
//! payload + ICRC 4 + VCRC 2, plus 8 bytes of framing; EDR runs at 100 Gb/s = 80 ps/byte.

mod common;
use common::*;

const PS_PER_BYTE: u64 = 80;

fn ib_wire(payload: u64, reth: bool) -> u64 {
    payload + 34 + if reth { 16 } else { 0 }
}
const ACK_WIRE: u64 = 38; // 8 + 12 + AETH 4 + 4 + 2 + framing 8
const HDR: u64 = 68; // start delimiter 4 + 64 B of headers
                     // h0 -> leaf0 (3 m) -> spine (20 m) -> leaf1 (20 m) -> h8 (3 m).
const PROP_ONE_WAY: u64 = 230_000;
const H: u64 = 4;

/// Flow-control packet on the wire: 6 bytes + framing 8.
const FCP_WIRE: u64 = 14;

/// FCT and ideal FCT of one message h0 -> h8, ACKing every `ack_every` packets.
fn one_message(forwarding: &str, size: &str, ack_every: &str) -> (u64, u64) {
    let s = ib_scenario(
        LEAF_SPINE,
        &[("forwarding", &format!("\"{forwarding}\"")), ("ack_every", ack_every)],
        &format!("[[traffic]]\nkind = \"message\"\nsrc = 0\ndst = 8\nsize = \"{size}\"\nat = \"0us\"\nsl = 0\n"),
    );
    let (_, r) = report::run(&load(&s), false);
    assert_eq!(r.flows.completed, 1);
    assert_eq!(r.totals.drops, 0);
    (r.flow_records.get(0).unwrap().fct_ps.unwrap(), r.flow_records.get(0).unwrap().ideal_ps)
}

// With one ACK per message, the only flow-control packet in the way is the one h8 sends
// for the last packet's credits just before its ACK: the closed form includes it, and so
// does the report's ideal FCT.

#[test]
fn one_megabyte_store_and_forward_exact() {
    let s1 = ib_wire(4096, true) * PS_PER_BYTE;
    let sum = (ib_wire(4096, true) + 243 * ib_wire(4096, false) + ib_wire(576, false)) * PS_PER_BYTE;
    let data = sum + (H - 1) * s1 + PROP_ONE_WAY;
    let ack = FCP_WIRE * PS_PER_BYTE + H * ACK_WIRE * PS_PER_BYTE + PROP_ONE_WAY;
    let (fct, ideal) = one_message("store-and-forward", "1MB", "1000");
    assert_eq!(fct, data + ack);
    assert_eq!(ideal, fct);
}

#[test]
fn one_megabyte_cut_through_exact() {
    let sum = (ib_wire(4096, true) + 243 * ib_wire(4096, false) + ib_wire(576, false)) * PS_PER_BYTE;
    let data = sum + (H - 1) * HDR * PS_PER_BYTE + PROP_ONE_WAY;
    // The 38-byte ACK is shorter than the 68-byte cut-through header: it is forwarded
    // whole, so each hop costs its full serialisation.
    let ack = FCP_WIRE * PS_PER_BYTE + H * ACK_WIRE * PS_PER_BYTE + PROP_ONE_WAY;
    let (fct, ideal) = one_message("cut-through", "1MB", "1000");
    assert_eq!(fct, data + ack);
    assert_eq!(ideal, fct);
}

#[test]
fn per_packet_acks_cost_flow_control_packets_on_the_data_path() {
    // Each ACK a switch forwards frees a block of its input buffer, and the FCP returning
    // it travels the data direction: at most one FCP per ACK per switch hop delays data.
    let sum = (ib_wire(4096, true) + 243 * ib_wire(4096, false) + ib_wire(576, false)) * PS_PER_BYTE;
    let base = sum + (H - 1) * HDR * PS_PER_BYTE + PROP_ONE_WAY + H * ACK_WIRE * PS_PER_BYTE + PROP_ONE_WAY;
    let (fct, _) = one_message("cut-through", "1MB", "1");
    let extra = fct - base;
    assert!(extra > 100 * FCP_WIRE * PS_PER_BYTE, "FCPs for 245 ACKs must show: {extra} ps");
    assert!(extra <= (245 * (H - 1) + 2) * FCP_WIRE * PS_PER_BYTE, "more than one FCP per ACK per hop: {extra} ps");
}

/// Payload throughput (Gb/s) of one 20 MB WRITE h0 -> h8 over 100 Gb/s links whose
/// leaf-spine cables are `cable` long, with `vl_buffer` per input VL.
fn long_haul_gbps(cable: &str, vl_buffer: &str) -> f64 {
    let topo = LEAF_SPINE.replace("cable = \"20m\"", &format!("cable = \"{cable}\""));
    let s = ib_scenario(
        &topo,
        &[("vl_buffer", &format!("\"{vl_buffer}\""))],
        "[[traffic]]\nkind = \"message\"\nsrc = 0\ndst = 8\nsize = \"20MB\"\nat = \"0us\"\nsl = 0\n",
    );
    let (_, r) = report::run(&load(&s), false);
    assert_eq!(r.flows.completed, 1);
    assert_eq!(r.totals.drops, 0);
    20e6 * 8.0 / (r.flow_records.get(0).unwrap().fct_ps.unwrap() as f64 / 1e12) / 1e9
}

#[test]
fn credits_bound_throughput_on_long_cables_whatever_the_buffer() {
    // IBTA Vol. 1 §7.9.4: at most 2048 blocks (128 KiB) outstanding per VL. A 2 km cable
    // (10 us each way) makes the credit round trip ~20.0 us, so the sender keeps 31 to
    // 31.5 packets of 65 blocks in flight per round trip: 31 x 4096 B x 8 / 20.0 us =
    // 50.8 Gb/s to 51.6 Gb/s of payload. A bigger buffer cannot help: the counters cap it.
    let rtt_s = 20.0066e-6;
    let lo = 31.0 * 4096.0 * 8.0 / rtt_s / 1e9 * 0.98;
    let hi = 31.5 * 4096.0 * 8.0 / rtt_s / 1e9 * 1.01;
    let small = long_haul_gbps("2000m", "128KiB");
    assert!(small > lo && small < hi, "2 km, 128 KiB: {small:.2} Gb/s, expected {lo:.2}..{hi:.2}");
    let big = long_haul_gbps("2000m", "1MiB");
    assert!((big - small).abs() / small < 0.01, "1 MiB buffer gave {big:.2} Gb/s vs {small:.2}: the 2048-block bound must hold");
    // On 20 m cables the same buffer runs at line rate: 4096 of 4130 wire bytes are payload.
    let short = long_haul_gbps("20m", "128KiB");
    eprintln!("credit-limited: 2 km {small:.2} Gb/s (1 MiB buffer {big:.2}), 20 m {short:.2} Gb/s");
    assert!(short > 100.0 * 4096.0 / 4130.0 * 0.99, "20 m: {short:.2} Gb/s");
}

#[test]
fn incast_127_to_1_finishes_at_line_rate_without_drops() {
    // 127 x 10^6 B into one EDR port: each message is 245 packets = 4146 + 243 x 4130 +
    // 610 = 1,008,346 wire bytes, so the bottleneck needs 127 x 1,008,346 x 80 ps =
    // 10.245 ms. The FCPs returning the ACKs' credits share that port (~0.3%).
    let topo = r#"
[topology]
kind = "fat-tree"
k = 8
host_link = { speed = "100Gbps", delay = "1us" }
fabric_link = { speed = "100Gbps", delay = "1us" }
"#;
    let senders: Vec<String> = (1..128).map(|i| i.to_string()).collect();
    let s = ib_scenario(
        topo,
        &[("forwarding", "\"store-and-forward\"")],
        &format!("[[traffic]]\nkind = \"incast\"\nreceiver = 0\nsenders = [{}]\nsize = \"1MB\"\nsl = 0\n", senders.join(",")),
    );
    let (_, r) = report::run(&load(&s), false);
    assert_eq!(r.flows.completed, 127);
    assert_eq!(r.totals.drops, 0, "credits: no drops");
    let analytical = 127.0 * 1_008_346.0 * 80.0;
    let max = r.flows.fct_max_ps as f64;
    assert!(max >= analytical, "cannot beat the line rate: {max} < {analytical}");
    assert!((max - analytical) / analytical < 0.01, "finish {max} ps vs analytical {analytical} ps");
    // Back-pressure instead of pauses: senders wait for credits.
    assert!(r.totals.xmit_wait_ps > 0);
    assert_eq!(r.totals.pfc_frames, 0);
}

#[test]
fn minhop_on_a_ring_deadlocks_and_the_cycle_is_named_dfsssp_completes() {
    // 8 switches: every multi-hop route s_i -> s_{i+1} -> s_{i+2} (and the mirror image)
    // makes channel (i, i+1) wait on (i+1, i+2): cycles of channel dependencies. All-to-all
    // with small buffers fills them (Dally & Seitz 1987: a cyclic CDG can deadlock).
    let s = ib_scenario(
        &ring(8, "2m"),
        &[("vl_buffer", "\"16KiB\""), ("hoq_lifetime", "\"infinite\""), ("switch_lifetime", "\"infinite\""), ("routing", "\"minhop\"")],
        "[[traffic]]\nkind = \"all-to-all\"\nsize = \"2MB\"\nsl = 0\n",
    );
    // The deadlock-free engine on the same fabric and traffic: VL layers break the cycles.
    let free = s.replace("routing = \"minhop\"", "routing = \"dfsssp\"").replace("data_vls = 1", "data_vls = 4");
    let (_, r) = report::run(&load(&free), false);
    assert!(r.totals.deadlock.is_none());
    assert_eq!(r.flows.completed, r.flows.count);
    assert_eq!(r.totals.drops, 0);
    let w = load(&s);
    let (sim, r) = report::run(&w, false);
    let dl = r.totals.deadlock.as_ref().expect("the watchdog must find the deadlock");
    assert!(r.flows.completed < r.flows.count);
    assert_eq!(r.totals.drops, 0, "credits never drop, even deadlocked");
    // The cycle runs around the ring over inter-switch ports only, each on the next switch.
    let t = sim.topology();
    assert!(dl.cycle.len() >= 3, "{:?}", dl.cycle);
    for (k, &(port, _)) in dl.cycle.iter().enumerate() {
        let (next, _) = dl.cycle[(k + 1) % dl.cycle.len()];
        let peer_node = t.port(t.port(port).peer.unwrap()).node;
        assert!(t.is_switch(peer_node));
        assert_eq!(t.port(next).node, peer_node, "cycle {:?} is not a chain of hops", dl.cycle);
    }
}

#[test]
fn hoq_lifetime_breaks_the_credit_loop_by_discarding() {
    // The same deadlocked ring with a 100 us head-of-queue lifetime: stuck heads are
    // discarded (PortXmitDiscards, as IB switches do), RC retransmits after its 1 ms local
    // ACK timeout (4.096 us x 2^8), and traffic crawls on instead of stopping.
    let s = ib_scenario(
        &ring(8, "2m"),
        &[("vl_buffer", "\"16KiB\""), ("hoq_lifetime", "\"100us\""), ("switch_lifetime", "\"infinite\""), ("timeout", "8")],
        "[[traffic]]\nkind = \"all-to-all\"\nsize = \"2MB\"\nsl = 0\n",
    );
    let (_, r) = report::run(&load(&s), false);
    assert!(r.totals.deadlock.is_none(), "discards must keep the fabric moving");
    let hoq = r.totals.drops_by_cause.iter().find(|(c, _)| c == "hoq-lifetime").map(|&(_, n)| n).unwrap();
    assert!(hoq > 0);
    assert_eq!(hoq, r.totals.drops, "every drop is a lifetime discard");
    assert!(r.totals.retransmitted_bytes > 0 && r.totals.timeouts > 0);
    assert!(r.flows.completed > 0);
}

/// 7 hosts on leaf1 write 4 MB each to h0 while h15 writes 4 MB to h1, a free receiver on
/// the same leaf. The XDR spine link has room for all of it; only h0's port is overloaded.
fn victim(cc: &str) -> (f64, f64) {
    let topo = "[topology]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 1\nhosts_per_leaf = 8\nhost_link = { speed = \"100Gbps\", cable = \"3m\" }\nfabric_link = { speed = \"800Gbps\", cable = \"10m\" }\n";
    let mut over =
        vec![("routing", "\"minhop\""), ("forwarding", "\"store-and-forward\""), ("hoq_lifetime", "\"infinite\""), ("switch_lifetime", "\"infinite\"")];
    if !cc.is_empty() {
        over.push(("congestion_control", cc));
    }
    let s = ib_scenario(
        topo,
        &over,
        "[[traffic]]\nkind = \"incast\"\nreceiver = 0\nsenders = [8, 9, 10, 11, 12, 13, 14]\nsize = \"4MB\"\nsl = 0\n\n[[traffic]]\nkind = \"message\"\nsrc = 15\ndst = 1\nsize = \"4MB\"\nat = \"0us\"\nsl = 0\n",
    );
    let (_, r) = report::run(&load(&s), false);
    assert_eq!(r.flows.completed, 8);
    assert_eq!(r.totals.drops, 0);
    let fs: Vec<_> = r.flow_records.iter().collect();
    let hot = fs[..7].iter().map(|f| f.slowdown.unwrap()).fold(0.0, f64::max);
    (hot, fs[7].slowdown.unwrap())
}

#[test]
fn credit_back_pressure_spreads_congestion_and_ib_cc_relieves_the_victim() {
    // Without CC, h0-bound packets fill leaf0's input buffer from the spine; the spine
    // then has no credits for h1-bound packets either, so the victim crawls at the hot
    // spot's pace (slowdown ~7 on an otherwise idle path: congestion spreading).
    let (hot, vic) = victim("");
    assert!(vic > 6.0, "victim slowdown {vic:.2}: spreading must be visible");
    // With IB CC, leaf0's h0 port (the root: it has credits) marks FECN; the 7 sources
    // back off, the shared input buffer drains and the victim speeds up. Parameters are
    // illustrative (OpenSM ships none): threshold 20 KB, every packet, CCTI +1 per BECN,
    // timer 20 us, linear CCT 0.05 packet-times per step.
    let (hot_cc, vic_cc) = victim(
        "{ threshold = \"20KB\", marking_rate = 1, packet_size = \"0B\", ccti_increase = 1, ccti_min = 0, ccti_timer = \"20us\", cct_step = 0.05, cct_entries = 128 }",
    );
    eprintln!("victim slowdown {vic:.2} without CC, {vic_cc:.2} with; hot spot {hot:.2} / {hot_cc:.2}");
    assert!(vic_cc < 0.75 * vic, "victim {vic_cc:.2} with CC vs {vic:.2} without");
    assert!(hot_cc < hot * 1.02, "the hot spot is no slower than its bottleneck allows: {hot_cc:.2} vs {hot:.2}");
}

/// SL→VL tables per (input, output) port pair (IBTA Vol. 1 §7.6.6). The congestion-spreading
/// fabric above, with two data VLs: the victim runs on SL 1, which every HCA and the
/// default table map to VL 0 with the hot spot's traffic, so credit back-pressure slows it
/// as before. Tables on the two port pairs the victim shares with the hot spot — leaf1 from
/// h15 (port 7) to the spine (port 8), spine0 from leaf1 (port 1) to leaf0 (port 0) — put
/// SL 1 on VL 1: its packets then wait for VL 1 credits, which the hot spot never takes,
/// and the victim runs at nearly line rate while nothing else changes.
#[test]
fn per_port_sl_to_vl_tables_isolate_the_victim_on_its_own_vl() {
    let run = |ports: &str| -> (f64, f64) {
        let topo = "[topology]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 1\nhosts_per_leaf = 8\nhost_link = { speed = \"100Gbps\", cable = \"3m\" }\nfabric_link = { speed = \"800Gbps\", cable = \"10m\" }\n";
        let mut over = vec![
            ("routing", "\"minhop\""),
            ("forwarding", "\"store-and-forward\""),
            ("hoq_lifetime", "\"infinite\""),
            ("switch_lifetime", "\"infinite\""),
            ("data_vls", "2"),
            ("sl_to_vl", "{ 0 = 0, 1 = 0 }"),
        ];
        if !ports.is_empty() {
            over.push(("sl_to_vl_ports", ports));
        }
        let s = ib_scenario(
            topo,
            &over,
            "[[traffic]]\nkind = \"incast\"\nreceiver = 0\nsenders = [8, 9, 10, 11, 12, 13, 14]\nsize = \"4MB\"\nsl = 0\n\n[[traffic]]\nkind = \"message\"\nsrc = 15\ndst = 1\nsize = \"4MB\"\nat = \"0us\"\nsl = 1\n",
        );
        let (_, r) = report::run(&load(&s), false);
        assert_eq!(r.flows.completed, 8);
        assert_eq!(r.totals.drops, 0);
        let fs: Vec<_> = r.flow_records.iter().collect();
        (fs[..7].iter().map(|f| f.slowdown.unwrap()).fold(0.0, f64::max), fs[7].slowdown.unwrap())
    };
    let (hot, shared) = run("");
    assert!(shared > 6.0, "on the hot spot's VL the victim crawls: slowdown {shared:.2}");
    let (hot_iso, isolated) =
        run("[{ node = \"leaf1\", in_port = 7, out_port = 8, map = { 1 = 1 } }, { node = \"spine0\", in_port = 1, out_port = 0, map = { 1 = 1 } }]");
    eprintln!("victim slowdown {shared:.2} on VL 0, {isolated:.2} on VL 1; hot spot {hot:.2} / {hot_iso:.2}");
    assert!(isolated < 1.5, "victim on its own VL: slowdown {isolated:.2}");
    assert!(hot_iso < hot * 1.05, "the hot spot is no slower: {hot_iso:.2} vs {hot:.2}");
    // Only the listed pairs remap: the same table on another pair changes nothing.
    let (_, elsewhere) = run("[{ node = \"spine0\", in_port = 0, out_port = 1, map = { 1 = 1 } }]");
    assert!(elsewhere > 6.0, "a table on a pair the victim does not cross: {elsewhere:.2}");
    // A table naming a VL that is not operational is refused.
    let bad = ib_scenario(
        "[topology]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 1\nhosts_per_leaf = 2\nhost_link = { speed = \"100Gbps\", cable = \"3m\" }\nfabric_link = { speed = \"100Gbps\", cable = \"3m\" }\n",
        &[("sl_to_vl_ports", "[{ node = \"spine0\", map = { 1 = 3 } }]")],
        "[[traffic]]\nkind = \"message\"\nsrc = 0\ndst = 3\nsize = \"1MB\"\nat = \"0us\"\nsl = 1\n",
    );
    let e = scenario::load_str("bad.toml", &bad).err().expect("refused").to_string();
    assert!(e.contains("sl_to_vl_ports[0].map") && e.contains("VL 3"), "{e}");
}
