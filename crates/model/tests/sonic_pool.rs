//! Checks `model::sonic_pool::mellanox_shared_headroom_pool` against SONiC's own script.
//!
//! # Expected values
//! Each row was produced by running the real plugin, sonic-swss
//! `cfgmgr/buffer_pool_mellanox.lua` at commit e6b0c5b5d2ab52354c4ec941f7c9005aeec3f779,
//! under Lua 5.1 with `lua/run_pool.lua` standing in for Redis (an in-memory CONFIG_DB,
//! APPL_DB and STATE_DB: one lossless profile per group of admin-up ports, on the PGs of
//! the range given; Spectrum-3's ASIC_TABLE cell 144 and pipeline latency 19; a 40 MiB
//! MMU). The script's `ingress_lossless_pool:SIZE:XOFF` line gives the pool's xoff (no
//! XOFF field: no shared headroom pool); `debug:force enabled shp` says whether it forced
//! the pool on. For example, from this directory with the script of that commit beside it:
//!
//! ```text
//! lua5.1 lua/run_pool.lua buffer_pool_mellanox.lua MELLANOX-SPECTRUM-3 144 19 41943040 \
//!     3 nil 3 4:5:19456:48128:19456
//! ingress_lossless_pool:41320789:63147
//! ```
//!
//! (5 ports × 1 PG × 48128 − 5 × 10240 private headroom = 189440; / 3 = 63146.7 → 63147.)

use model::sonic::SharedHeadroom;
use model::sonic_pool::*;
use units::Bytes;

/// over_subscribe_ratio (0: nil), configured pool xoff (0: nil), PGs per port, groups of
/// (ports, xon, xoff, size), then the Lua's pool xoff (0: none) and whether it forced SHP.
type Row = (f64, u64, u64, &'static [(u64, u64, u64, u64)], u64, bool);

const ROWS: &[Row] = &[
    // lua ... 2 nil 3-4 4:4:19456:48128:19456 -> :172032
    (2.0, 0, 2, &[(4, 19456, 48128, 19456)], 172_032, false),
    // lua ... nil nil 3-4 4:2:19456:48128:19456 -> :655360, force enabled shp:true
    (0.0, 0, 2, &[(2, 19456, 48128, 19456)], 655_360, true),
    // lua ... 1 nil 3-4 4:10:19456:1024:19456 -> :655360 (private headroom above the sum)
    (1.0, 0, 2, &[(10, 19456, 1024, 19456)], 655_360, false),
    // lua ... 3 nil 3 4:5:19456:48128:19456 -> :63147
    (3.0, 0, 1, &[(5, 19456, 48128, 19456)], 63147, false),
    // lua ... nil nil 3-4 4:2:19456:48128:67584 -> no xoff field (size = xon + xoff)
    (0.0, 0, 2, &[(2, 19456, 48128, 67584)], 0, false),
    // lua ... 0.5 nil 3-4 4:2:19456:48128:19456 8:1:38912:90112:38912 -> :684032
    (0.5, 0, 2, &[(2, 19456, 48128, 19456), (1, 38912, 90112, 38912)], 684_032, false),
    // lua ... 2 nil 0-7 4:1:19456:48128:19456 -> :187392
    (2.0, 0, 8, &[(1, 19456, 48128, 19456)], 187_392, false),
    // lua ... nil 1048576 3-4 4:3:19456:54272:19456 8:2:38912:111616:38912 -> :1048576
    (0.0, 1_048_576, 2, &[(3, 19456, 54272, 19456), (2, 38912, 111_616, 38912)], 1_048_576, false),
];

#[test]
fn matches_upstream_pool_lua() {
    for r in ROWS {
        let (ratio, configured, pgs, groups, want, forced) = *r;
        let uses: Vec<ProfileUse> =
            groups.iter().map(|&(n, xon, xoff, size)| ProfileUse { xon: Bytes(xon), xoff: Bytes(xoff), size: Bytes(size), pgs: n * pgs }).collect();
        let ports = groups.iter().map(|g| g.0).sum();
        let got = mellanox_shared_headroom_pool(&uses, ports, &SharedHeadroom { over_subscribe_ratio: ratio, pool_xoff: Bytes(configured) }).unwrap();
        assert_eq!((got.pool_xoff.0, got.forced), (want, forced), "{r:?}");
        assert_eq!(got.enabled, want != 0, "{r:?}");
    }
}
