//! Completion times on an idle path against closed forms derived here by hand.
//!
//! Store-and-forward, equal link rates: packets of a message through H links behave as a
//! tandem of queues with per-packet service S_i at every hop, so the last bit of the last
//! packet arrives at Σ S_i + (H−1)·max S_i + Σ prop (the longest path through the
//! packet × hop lattice); the first packet is the largest (it carries the RETH). The ACK
//! of the last packet then returns over the H links: H·S_ack + Σ prop.
//! Cut-through: each switch adds only the header time (preamble + 64 B) instead of a
//! packet time: Σ S_i + (H−1)·hdr + Σ prop, and the ACK (H−1)·hdr + S_ack + Σ prop.

mod common;
use common::*;

const PS_PER_BYTE: u64 = 80; // 100 Gb/s

fn one_message(forwarding: &str, size: &str) -> u64 {
    let s = scenario(
        LEAF_SPINE,
        &format!("forwarding = \"{forwarding}\"\ndcqcn = {{ preset = \"off\" }}"),
        BUFFER,
        &format!("[[traffic]]\nkind = \"message\"\nsrc = 0\ndst = 8\nsize = \"{size}\"\nat = \"0us\"\ndscp = 26\n"),
    );
    let w = load(&s);
    let (_, r) = report::run(&w, false);
    assert_eq!(r.flows.completed, 1);
    r.flow_records.get(0).unwrap().fct_ps.unwrap()
}

/// Wire bytes: payload + Eth 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4 + preamble/IFG 20.
fn wire(payload: u64, reth: bool) -> u64 {
    payload + 82 + if reth { 16 } else { 0 }
}

// h0 -> leaf0 (3 m) -> spine (20 m) -> leaf1 (20 m) -> h8 (3 m): 15 + 100 + 100 + 15 ns.
const PROP_ONE_WAY: u64 = 230_000;
const H: u64 = 4;
const ACK_WIRE: u64 = 86; // 14+20+8+12+AETH 4+ICRC 4+FCS 4 + 20
const HDR: u64 = 72; // preamble/SFD 8 + 64 B of headers

#[test]
fn one_megabyte_store_and_forward_exact() {
    // 10^6 B = 244 packets of 4096 B + one of 576 B.
    let s1 = wire(4096, true) * PS_PER_BYTE;
    let sum = (wire(4096, true) + 243 * wire(4096, false) + wire(576, false)) * PS_PER_BYTE;
    let data = sum + (H - 1) * s1 + PROP_ONE_WAY;
    let ack = H * ACK_WIRE * PS_PER_BYTE + PROP_ONE_WAY;
    assert_eq!(one_message("store-and-forward", "1MB"), data + ack);
}

#[test]
fn one_megabyte_cut_through_exact() {
    let sum = (wire(4096, true) + 243 * wire(4096, false) + wire(576, false)) * PS_PER_BYTE;
    let data = sum + (H - 1) * HDR * PS_PER_BYTE + PROP_ONE_WAY;
    let ack = (H - 1) * HDR * PS_PER_BYTE + ACK_WIRE * PS_PER_BYTE + PROP_ONE_WAY;
    assert_eq!(one_message("cut-through", "1MB"), data + ack);
}

#[test]
fn single_packet_message_exact() {
    // 100 B: one WRITE Only packet with RETH (payload padded to 4: 100 already is).
    let s = wire(100, true) * PS_PER_BYTE;
    let want = H * s + PROP_ONE_WAY + H * ACK_WIRE * PS_PER_BYTE + PROP_ONE_WAY;
    assert_eq!(one_message("store-and-forward", "100B"), want);
}

#[test]
fn report_ideal_matches_simulated_on_idle_path() {
    let s = scenario(
        LEAF_SPINE,
        "forwarding = \"store-and-forward\"\ndcqcn = { preset = \"off\" }",
        BUFFER,
        "[[traffic]]\nkind = \"message\"\nsrc = 0\ndst = 8\nsize = \"3MB\"\nat = \"1us\"\ndscp = 26\n",
    );
    let (_, r) = report::run(&load(&s), false);
    let f = &r.flow_records.get(0).unwrap();
    assert_eq!(f.fct_ps, Some(f.ideal_ps));
}
