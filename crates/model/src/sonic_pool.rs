//! SONiC's shared headroom pool size for NVIDIA Spectrum switches: the `xoff` that
//! `buffermgrd` writes to `BUFFER_POOL|ingress_lossless_pool` in the dynamic buffer model,
//! transcribed from sonic-swss `cfgmgr/buffer_pool_mellanox.lua` at the revision named in
//! [`POOL_LUA_SOURCE`] (the revision [`crate::sonic`] follows for the headroom Lua).
//!
//! # The model
//! With the shared headroom pool (SHP) on, a lossless profile's `size` is its `xon` (see
//! [`crate::sonic::mellanox_headroom`]) and its `xoff` is drawn from one pool per switch,
//! over-subscribed because not every PG pauses at once. The Lua sizes that pool as:
//!
//! * `accumulative_xoff = Σ (xon + xoff − size) · PGs` over the profiles whose
//!   `xon + xoff > size` and `size ≠ 0`, each profile counted once per priority that
//!   references it (a `BUFFER_PG` key `Ethernet0:3-4` counts 2). It is accumulated only
//!   when the pool's `xoff` is not configured.
//! * If that sum is positive but SHP is off, the Lua forces SHP on with a 655360-byte pool.
//! * With SHP on, every port with a lossless PG keeps a private headroom of 10 KiB, taken
//!   off the sum: `accumulative_xoff = max(0, accumulative_xoff − 10240 · lossless_ports)`.
//! * With SHP on and no configured pool `xoff`:
//!   `pool xoff = ceil(accumulative_xoff / over_subscribe_ratio)`, or 655360 if that is 0.
//! * A configured `BUFFER_POOL|ingress_lossless_pool|xoff` is used as is.
//!
//! SHP is on when `DEFAULT_LOSSLESS_BUFFER_PARAMETER` has a non-zero `over_subscribe_ratio`
//! or the pool has a non-zero `xoff` ([`SharedHeadroom::enabled`], as in the headroom Lua).
//!
//! # Left out
//! The rest of the Lua: the shared pools' `size` (the MMU size less every reservation: lossy
//! PGs, management PGs, egress mirror headroom, the management pool and, on Spectrum-6, the
//! modification descriptors pool), the retry when orchagent has not yet applied an update,
//! lossy profiles (they carry no `xoff`) and profile lists. `tests/sonic_pool.rs` checks
//! this function against the real script run under `lua5.1`.

use serde::Serialize;
use units::Bytes;

use crate::sonic::{SharedHeadroom, SonicError};

/// The upstream revision this module reproduces.
pub const POOL_LUA_SOURCE: &str = "sonic-net/sonic-swss cfgmgr/buffer_pool_mellanox.lua at commit \
     e6b0c5b5d2ab52354c4ec941f7c9005aeec3f779 (file last changed by 2ed250d4f, #4005, 2025-11-25)";

/// The Lua's `private_headroom`: kept per port with a lossless PG when SHP is on.
pub const PRIVATE_HEADROOM: Bytes = Bytes(10 * 1024);

/// The pool size the Lua falls back to when SHP is forced on or the sum comes to 0.
pub const DEFAULT_POOL_XOFF: Bytes = Bytes(655_360);

/// One lossless `BUFFER_PROFILE` and how many PGs (port, priority pairs) reference it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProfileUse {
    pub xon: Bytes,
    pub xoff: Bytes,
    pub size: Bytes,
    /// PGs referencing the profile, each priority of a range counted.
    pub pgs: u64,
}

/// The shared headroom pool of one switch, with the Lua's workings.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SharedHeadroomPool {
    /// `shp_enabled` at the end (including when forced on).
    pub enabled: bool,
    /// SHP was off but some profile's `xon + xoff` exceeds its `size`, so the Lua forced it on.
    pub forced: bool,
    /// `Σ (xon + xoff − size) · PGs`, before the private headroom is taken off (0 when the
    /// pool's `xoff` is configured: the Lua does not add it up then).
    pub pg_xoff_sum: Bytes,
    /// `10 KiB · lossless ports` when SHP is on, else 0.
    pub private_headroom: Bytes,
    /// The sum the ratio divides: `max(0, pg_xoff_sum − private_headroom)`.
    pub accumulative_xoff: Bytes,
    /// `over_subscribe_ratio` as configured (0: not set).
    pub over_subscribe_ratio: f64,
    /// The pool's `xoff`: configured, `ceil(accumulative_xoff / ratio)`, or the 655360
    /// fallback; 0 when SHP is off.
    pub pool_xoff: Bytes,
}

/// The shared headroom pool `xoff` `buffer_pool_mellanox.lua` ([`POOL_LUA_SOURCE`]) gives a
/// switch whose lossless PGs use `profiles`, on `lossless_ports` ports, with the pool
/// settings `shp`. Follows the Lua's order (accumulate, force, private headroom, divide).
pub fn mellanox_shared_headroom_pool(profiles: &[ProfileUse], lossless_ports: u64, shp: &SharedHeadroom) -> Result<SharedHeadroomPool, SonicError> {
    let ratio = shp.over_subscribe_ratio;
    if !ratio.is_finite() || ratio < 0.0 {
        return Err(SonicError::Parameter("over_subscribe_ratio"));
    }
    let mut shp_size = shp.pool_xoff.0;
    let mut enabled = shp.enabled();
    let mut sum: u64 = 0;
    if shp_size == 0 {
        for p in profiles.iter().filter(|p| p.size.0 != 0) {
            let excess = (p.xon.0 + p.xoff.0).saturating_sub(p.size.0);
            sum = sum.saturating_add(excess.saturating_mul(p.pgs));
        }
    }
    let forced = sum > 0 && !enabled;
    if forced {
        shp_size = DEFAULT_POOL_XOFF.0;
        enabled = true;
    }
    let private = if enabled { PRIVATE_HEADROOM.0.saturating_mul(lossless_ports) } else { 0 };
    let accumulative = sum.saturating_sub(private);
    if enabled && shp_size == 0 {
        // Reached only with a non-zero ratio: a zero ratio with a zero pool xoff leaves SHP
        // off unless forced, and forcing sets the size.
        shp_size = (accumulative as f64 / ratio).ceil() as u64;
        if shp_size == 0 {
            shp_size = DEFAULT_POOL_XOFF.0;
        }
    }
    Ok(SharedHeadroomPool {
        enabled,
        forced,
        pg_xoff_sum: Bytes(sum),
        private_headroom: Bytes(private),
        accumulative_xoff: Bytes(accumulative),
        over_subscribe_ratio: ratio,
        pool_xoff: Bytes(shp_size),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shp(ratio: f64, xoff: u64) -> SharedHeadroom {
        SharedHeadroom { over_subscribe_ratio: ratio, pool_xoff: Bytes(xoff) }
    }

    #[test]
    fn divides_the_sum_less_private_headroom() {
        // 4 ports x 2 PGs of xoff 48128 (size = xon): 385024 - 4 x 10240 = 344064; / 2.
        let p = ProfileUse { xon: Bytes(19456), xoff: Bytes(48128), size: Bytes(19456), pgs: 8 };
        let r = mellanox_shared_headroom_pool(&[p], 4, &shp(2.0, 0)).unwrap();
        assert_eq!((r.pg_xoff_sum, r.private_headroom, r.accumulative_xoff, r.pool_xoff), (Bytes(385_024), Bytes(40_960), Bytes(344_064), Bytes(172_032)));
        assert!(r.enabled && !r.forced);
        // A ratio of 3 rounds up: 344064 / 3 = 114688 exactly; 344065 would round up.
        assert_eq!(mellanox_shared_headroom_pool(&[p], 4, &shp(3.0, 0)).unwrap().pool_xoff, Bytes(114_688));
    }

    #[test]
    fn configured_pool_forced_and_off() {
        let shp_profile = ProfileUse { xon: Bytes(19456), xoff: Bytes(48128), size: Bytes(19456), pgs: 1 };
        // A configured pool xoff is used as is, nothing is summed.
        let r = mellanox_shared_headroom_pool(&[shp_profile], 1, &shp(0.0, 1_000_000)).unwrap();
        assert_eq!((r.pool_xoff, r.pg_xoff_sum), (Bytes(1_000_000), Bytes(0)));
        // SHP off but a profile whose size leaves out its xoff: forced on at 655360.
        let r = mellanox_shared_headroom_pool(&[shp_profile], 1, &shp(0.0, 0)).unwrap();
        assert!(r.forced && r.enabled);
        assert_eq!(r.pool_xoff, DEFAULT_POOL_XOFF);
        // SHP off, size = xon + xoff: no pool.
        let full = ProfileUse { size: Bytes(19456 + 48128), ..shp_profile };
        let r = mellanox_shared_headroom_pool(&[full], 1, &shp(0.0, 0)).unwrap();
        assert_eq!((r.enabled, r.pool_xoff, r.private_headroom), (false, Bytes(0), Bytes(0)));
        // Private headroom above the sum: the fallback.
        let r = mellanox_shared_headroom_pool(&[shp_profile], 10, &shp(1.0, 0)).unwrap();
        assert_eq!((r.accumulative_xoff, r.pool_xoff), (Bytes(0), DEFAULT_POOL_XOFF));
        assert!(mellanox_shared_headroom_pool(&[shp_profile], 1, &shp(f64::NAN, 0)).is_err());
    }
}
