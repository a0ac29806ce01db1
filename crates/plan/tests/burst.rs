//! `plan::burst` against numbers worked out by hand from the module's formulas.

use plan::burst::{plan, Beyond, BurstInput, Class};
use units::{BitRate, Bytes};

fn input(n: u32, burst: u64, rin: u64, rout: u64, shared: u64, th: i8, class: Class) -> BurstInput {
    BurstInput {
        senders: n,
        burst: Bytes(burst),
        in_speed: BitRate::from_gbps(rin),
        out_speed: BitRate::from_gbps(rout),
        shared: Bytes(shared),
        cell: Bytes(256),
        dynamic_th: th,
        reserved: Bytes(0),
        class,
        mtu: Bytes(4096),
        xon_offset: None,
    }
}

// RoCEv2/IPv4 frame of a full 4096 B packet: 14 + 20 + 8 + 12 (BTH) + 4096 + 4 (ICRC) + 4 (FCS).
const F: u64 = 4158;
const FW: u64 = F + 20;
const K: u64 = 17; // ceil(4158 / 256)

#[test]
fn table() {
    // 64000 B = 15 full packets + 2560 B; the first carries a 16 B RETH.
    let w64k = (F + 16 + 20) + 14 * FW + (14 + 20 + 8 + 12 + 2560 + 4 + 4 + 20);
    let cases = [
        // (n, burst, rin, rout, W, Q)
        (8u32, 64_000u64, 100u64, 100u64, w64k, 7 * w64k), // Q = 7/8 of N·W
        (8, 64_000, 100, 400, w64k, 8 * w64k - 4 * w64k),  // Q = N·W − W·R_out/R_in
        (4, 64_000, 100, 400, w64k, 0),                    // N·R_in = R_out: no queue
        (2, 64_000, 400, 100, w64k, 2 * w64k - w64k / 4),
    ];
    for (n, b, rin, rout, w, q) in cases {
        let p = plan(&input(n, b, rin, rout, 16 << 20, 0, Class::Lossy)).unwrap();
        assert_eq!(p.wire_bytes_per_sender, w, "W for {n}x{b} {rin}->{rout}");
        assert_eq!(p.peak_wire_bytes, q, "Q for {n}x{b} {rin}->{rout}");
        if q > 0 {
            // drain 8Q/R_out in ps; last byte 8·N·W/R_out.
            assert_eq!(p.drain_after_peak_ps, (q * 8 * 1000).div_ceil(rout));
            assert_eq!(p.last_byte_out_ps, (n as u64 * w * 8 * 1000).div_ceil(rout));
        }
        assert_eq!(p.senders_done_ps, (w * 8 * 1000).div_ceil(rin));
    }
}

#[test]
fn largest_absorbed_16mib_alpha_1() {
    let p = plan(&input(8, 64_000, 100, 100, 16 << 20, 0, Class::Lossy)).unwrap();
    // S = 65536 cells; per ingress PG α·S/(1+N·α) = 65536/9 = 7281; L = 8 × 7281 cells.
    assert_eq!(p.shared_cells, 65_536);
    assert_eq!(p.per_pg_limit_cells, 7_281);
    assert_eq!(p.limit_cells, 58_248);
    let l_wire = 58_248 * FW / K;
    assert_eq!(p.limit_wire_bytes, l_wire);
    // W_max = L·R_in/(N·R_in − R_out) = L/7; B_max ≈ W_max·4096/4178 (full packets).
    let w_max = l_wire / 7;
    let b = p.max_burst_bytes.unwrap();
    let approx = w_max * 4096 / FW;
    assert!(b.abs_diff(approx) < 4096, "B_max {b} vs {approx}");
    assert!(matches!(p.beyond, Beyond::Absorbed));
    // One byte more per sender no longer fits.
    let q = |b: u64| plan(&input(8, b, 100, 100, 16 << 20, 0, Class::Lossy)).unwrap();
    assert!(matches!(q(b).beyond, Beyond::Absorbed));
    assert!(matches!(q(b + 1).beyond, Beyond::Lossy { .. }));
}

#[test]
fn alpha_and_reserved() {
    // α = 1/2 (dynamic_th −1), one sender into a slower port: s* = S/(2 + 1) ... = α·S/(1+α).
    let mut i = input(1, 1_000_000, 400, 100, 3 << 20, -1, Class::Lossless);
    i.reserved = Bytes(2560);
    let p = plan(&i).unwrap();
    assert_eq!(p.per_pg_limit_cells, 12_288 / 3);
    assert_eq!(p.limit_cells, 10 + 4_096);
}

#[test]
fn beyond_lossy_and_lossless() {
    let lossy = plan(&input(8, 1_000_000, 100, 100, 2 << 20, 0, Class::Lossy)).unwrap();
    let Beyond::Lossy { drops_start_ps, dropped_bytes, .. } = lossy.beyond else { panic!("expected drops") };
    assert_eq!(dropped_bytes, lossy.peak_wire_bytes - lossy.limit_wire_bytes);
    // t_d = 8L/(N·R_in − R_out) = 8L/700 Gb/s.
    assert_eq!(drops_start_ps, (lossy.limit_wire_bytes * 8 * 1000).div_ceil(700));
    let ll = plan(&input(8, 1_000_000, 100, 100, 2 << 20, 0, Class::Lossless)).unwrap();
    let Beyond::Lossless { first_xoff_ps, paused_per_sender_ps, senders_finish_ps, .. } = ll.beyond else { panic!("expected pause") };
    assert_eq!(first_xoff_ps, drops_start_ps);
    let nw = 8 * ll.wire_bytes_per_sender;
    assert_eq!(senders_finish_ps, ((nw - ll.limit_wire_bytes) * 8 * 1000).div_ceil(100));
    assert_eq!(paused_per_sender_ps, senders_finish_ps - ll.senders_done_ps);
}

#[test]
fn errors_name_the_input() {
    let bad = |f: &dyn Fn(&mut BurstInput)| {
        let mut i = input(8, 64_000, 100, 100, 16 << 20, 0, Class::Lossy);
        f(&mut i);
        plan(&i).unwrap_err().input
    };
    assert_eq!(bad(&|i| i.senders = 0), "senders");
    assert_eq!(bad(&|i| i.burst = Bytes(0)), "burst");
    assert_eq!(bad(&|i| i.out_speed = BitRate(0)), "out-speed");
    assert_eq!(bad(&|i| i.mtu = Bytes(1500)), "mtu");
    assert_eq!(bad(&|i| i.dynamic_th = 9), "dynamic-th");
    assert_eq!(bad(&|i| i.shared = Bytes(10)), "buffer");
}
