//! Buffer accounting against the ASIC's buffer (`buffer-overcommit`) and the shared headroom
//! pool against the headroom it backs (`shared-headroom-pool`).
//!
//! # What is counted
//! SONiC's own pool sizing on NVIDIA switches, sonic-swss `cfgmgr/buffer_pool_mellanox.lua`
//! (at e6b0c5b5d2ab52354c4ec941f7c9005aeec3f779), sizes the shared pools as what is left of
//! `mmu_size` after every reservation: `available = mmu_size - (Σ profile size × the PGs and
//! queues using it + the shared headroom pool + SONiC's own reservations)`, each ingress pool
//! getting `available` (one ingress pool) or half of it (two). The egress pools are views of
//! the same memory (the Lua gives `egress_lossy_pool` the ingress pool's size, and
//! Mellanox's templates size `egress_lossless_pool` as the whole buffer), so they are not
//! added. The check is therefore
//!
//! `Σ ingress BUFFER_POOL size + BUFFER_POOL|ingress_lossless_pool|xoff + Σ BUFFER_PG sizes
//! + Σ BUFFER_QUEUE sizes ≤ mmu_size`,
//!
//! each PG or queue counted once per index of its key (`Ethernet0|3-4` is two PGs), the
//! lossless PGs SONiC makes at run time with the size SONiC gives them
//! ([`super::sonic_profile::pg_headroom`]). It runs on NVIDIA Spectrum switches only: other
//! vendors' templates do not keep the reservations out of the pools (sonic-buildimage's
//! Force10-S6000 `buffers_defaults_t1.j2` sizes `ingress_lossless_pool` equal to
//! `egress_lossless_pool`, 12766208 B, with 56368 B lossless PG reservations on top), so
//! the sum would flag configurations that are right on their ASIC.
//!
//! The terms SONiC adds on its own and config_db does not show (the 19 KiB pipeline
//! reservation of each lossy PG, 10 KiB private headroom per lossless port and egress mirror
//! headroom per admin-up port, the 256 KiB management pool) are left out, so the sum is a
//! lower bound: a finding is an overcommit for certain.
//!
//! # Shared headroom pool
//! With a shared headroom pool (`ingress_lossless_pool` `xoff` > 0), a Mellanox lossless
//! profile's `size` is its `xon` and its `xoff` is drawn from the pool. On Broadcom a
//! lossless profile's `size` is the PG's guaranteed minimum, its `xoff` the PG's headroom
//! limit drawn from the pool's `xoff` (the headroom pool), and `xon_offset` where it
//! resumes; so there too the PGs' xoff share the pool. This check runs on any platform. The Lua sizes the pool as `ceil(Σ xoff /
//! over_subscribe_ratio)` (Σ over the lossless PGs). A pool smaller than that covers fewer
//! simultaneously paused PGs than the configured ratio promises: a warning at the pool's
//! `xoff`. Without an `over_subscribe_ratio` the pool is checked against one port's PGs at
//! least (fewer and the first port to pause can overflow it: an error).
//!
//! Left out: SONiC's own reservations (above), BUFFER_PORT_INGRESS/EGRESS_PROFILE_LIST (not
//! read; the Lua counts an egress list's profile size once per port), `percentage` pools,
//! the dynamic model's pools without a size (SONiC computes them to fit), the Lua's private
//! headroom subtracted from Σ xoff, and other vendors' accounting.

use super::headroom::{pg_keys, profile_name};
use super::sonic_profile::*;
use super::*;
use crate::verify::platform;

/// The sums of one switch's buffer, in bytes.
#[derive(Clone, Debug, Default)]
struct Sums {
    pools: u64,
    pool_names: Vec<String>,
    pool_xoff: u64,
    pgs: u64,
    queues: u64,
    /// Σ xoff over the lossless PGs, and the largest one port's.
    lossless_xoff: u64,
    max_port_xoff: (u64, String),
}

/// Σ profile size × count over a BUFFER_PG or BUFFER_QUEUE table's entries (NULL and
/// undefined profiles count 0: their sizes are the Lua's or another check's finding).
fn table_sizes(sw: &Switch, table: &str, skip: &BTreeSet<String>) -> Result<u64, ReadError> {
    let mut sum = 0u64;
    for (key, e) in sw.table(table).into_iter().flatten() {
        if skip.contains(key) {
            continue;
        }
        let Some(raw) = e.fields.get("profile") else { continue };
        let (ports, idx) = split_port_key(key).ok_or_else(|| shape(sw.place(table, key, ""), "expected a key PORT|INDICES such as Ethernet0|3-4".into()))?;
        let Some(size) = profile_size(sw, profile_name(raw))? else { continue };
        sum = sum.saturating_add(size.saturating_mul((ports.len() * idx.len()) as u64));
    }
    Ok(sum)
}

/// Adds up the switch's pools, PGs and queues.
fn sums(sw: &Switch, lossless: &BTreeMap<String, BTreeSet<u32>>) -> Result<Sums, ReadError> {
    let mut s = Sums::default();
    for (name, e) in sw.table("BUFFER_POOL").into_iter().flatten() {
        if e.fields.get("type").map(String::as_str) != Some("ingress") {
            continue;
        }
        if let Some(v) = e.fields.get("size") {
            s.pools = s.pools.saturating_add(num(sw, "BUFFER_POOL", name, "size", v)?);
            s.pool_names.push(name.clone());
        }
    }
    if let Some(v) = sw.field("BUFFER_POOL", "ingress_lossless_pool", "xoff") {
        s.pool_xoff = num(sw, "BUFFER_POOL", "ingress_lossless_pool", "xoff", v)?;
    }
    // Lossless PGs: their own headroom (configured or SONiC's), once per PG.
    let pgs = pg_keys(sw)?;
    let lua = lua_switch(sw)?;
    let mut lossless_keys = BTreeSet::new();
    for (port, pfc) in lossless {
        let mut port_xoff = 0u64;
        for &pg in pfc {
            let key = pgs.get(&(port.clone(), pg));
            let Some(h) = pg_headroom(sw, port, key.map(String::as_str), lua.as_ref())? else { continue };
            if let Some(k) = key {
                lossless_keys.insert(k.clone());
            }
            s.pgs = s.pgs.saturating_add(h.size);
            port_xoff = port_xoff.saturating_add(h.xoff);
        }
        s.lossless_xoff = s.lossless_xoff.saturating_add(port_xoff);
        if port_xoff > s.max_port_xoff.0 {
            s.max_port_xoff = (port_xoff, port.clone());
        }
    }
    s.pgs = s.pgs.saturating_add(table_sizes(sw, "BUFFER_PG", &lossless_keys)?);
    s.queues = table_sizes(sw, "BUFFER_QUEUE", &BTreeSet::new())?;
    Ok(s)
}

/// `buffer-overcommit` and `shared-headroom-pool`; see the module doc.
pub(super) fn buffer_accounting(
    sw: &Switch,
    lossless: &BTreeMap<String, BTreeSet<u32>>,
    opts: &Options,
    found: &mut Vec<Finding>,
    nc: &mut Vec<NotChecked>,
) -> Result<(), ReadError> {
    if !tables_present(sw, nc, "buffer-overcommit", &["BUFFER_POOL", "BUFFER_PG", "BUFFER_QUEUE"], "the switch's buffer reservations are unknown") {
        return Ok(());
    }
    let s = sums(sw, lossless)?;
    shared_headroom_pool(sw, &s, found, nc)?;
    if platform::spectrum(sw).is_none() {
        let why = match sw.field("DEVICE_METADATA", "localhost", "platform") {
            Some(p) => format!("platform {p:?} is not an NVIDIA Spectrum one: pools that exclude the reservations are Mellanox's (buffer_pool_mellanox.lua); other vendors' pool sizes may include them"),
            None => "DEVICE_METADATA|localhost|platform is absent: pools that exclude the reservations are Mellanox's only".into(),
        };
        not(nc, sw, "buffer-overcommit", "(pool semantics)", &why);
        return Ok(());
    }
    let mmu = match platform::mmu_size(sw, opts) {
        Ok(m) => m,
        Err(why) => {
            not(nc, sw, "buffer-overcommit", "(buffer size)", &why);
            return Ok(());
        }
    };
    let total = s.pools.saturating_add(s.pool_xoff).saturating_add(s.pgs).saturating_add(s.queues);
    if total <= mmu.bytes.0 {
        return Ok(());
    }
    let others = total - s.pools;
    let (place, fix) = match s.pool_names.iter().max_by_key(|n| sw.field("BUFFER_POOL", n, "size").and_then(|v| v.trim().parse::<u64>().ok())) {
        Some(p) => {
            let own = sw.field("BUFFER_POOL", p, "size").and_then(|v| v.trim().parse::<u64>().ok()).unwrap_or(0);
            let fits = (mmu.bytes.0.saturating_sub(others)).saturating_sub(s.pools - own);
            (
                sw.place("BUFFER_POOL", p, "size"),
                format!("BUFFER_POOL|{p}|size <= \"{fits}\" (what is left of the buffer after every other term), or reserve less per PG or queue"),
            )
        }
        None => (sw.place("BUFFER_POOL", "ingress_lossless_pool", "xoff"), "reserve less per PG or queue, or a smaller shared headroom pool".to_string()),
    };
    found.push(Finding {
        severity: Severity::Error,
        id: "buffer-overcommit",
        switch: sw.name().to_string(),
        place,
        ports: vec![],
        what: format!(
            "ingress pools {} B ({}) + shared headroom pool {} B + PG reservations {} B + queue reservations {} B = {total} B, above the {} B buffer ({}) by {} B",
            s.pools,
            s.pool_names.join(", "),
            s.pool_xoff,
            s.pgs,
            s.queues,
            mmu.bytes.0,
            mmu.source,
            total - mmu.bytes.0
        ),
        failure: "the ASIC cannot hold what the pools and reservations promise: the SAI rejects or trims the configuration, or lossless PGs run out of buffer before their thresholds and drop".into(),
        fix,
    });
    Ok(())
}

/// The shared headroom pool against the lossless PGs' xoff; see the module doc.
fn shared_headroom_pool(sw: &Switch, s: &Sums, found: &mut Vec<Finding>, nc: &mut Vec<NotChecked>) -> Result<(), ReadError> {
    if s.pool_xoff == 0 || s.lossless_xoff == 0 {
        return Ok(());
    }
    let ratio = over_subscribe_ratio(sw)?.filter(|r| *r > 0.0);
    let place = sw.place("BUFFER_POOL", "ingress_lossless_pool", "xoff");
    let (severity, what, failure, fix) = match ratio {
        Some(r) => {
            let need = (s.lossless_xoff as f64 / r).ceil() as u64;
            if s.pool_xoff >= need {
                return Ok(());
            }
            (
                Severity::Warning,
                format!("shared headroom pool {} B is below Σ lossless xoff {} B / over_subscribe_ratio {r} = {need} B", s.pool_xoff, s.lossless_xoff),
                "fewer PGs can be paused at once than the configured over-subscription promises: beyond that, frames in flight after XOFF are dropped in the lossless class",
                format!("BUFFER_POOL|ingress_lossless_pool|xoff = \"{need}\" (as sonic-swss buffer_pool_mellanox.lua sizes it)"),
            )
        }
        None => {
            let (one, port) = &s.max_port_xoff;
            if s.pool_xoff >= *one {
                not(
                    nc,
                    sw,
                    "shared-headroom-pool",
                    "DEFAULT_LOSSLESS_BUFFER_PARAMETER",
                    &format!(
                        "no over_subscribe_ratio: the pool holds {:.1} % of Σ lossless xoff {} B",
                        100.0 * s.pool_xoff as f64 / s.lossless_xoff as f64,
                        s.lossless_xoff
                    ),
                );
                return Ok(());
            }
            (
                Severity::Error,
                format!("shared headroom pool {} B is below the {one} B of xoff of one port's lossless PGs ({port})", s.pool_xoff),
                "the pool cannot absorb even one port's pause: frames in flight after XOFF are dropped in the lossless class",
                format!("BUFFER_POOL|ingress_lossless_pool|xoff >= \"{one}\", sized for the over-subscription wanted (DEFAULT_LOSSLESS_BUFFER_PARAMETER over_subscribe_ratio)"),
            )
        }
    };
    found.push(Finding { severity, id: "shared-headroom-pool", switch: sw.name().to_string(), place, ports: vec![], what, failure: failure.into(), fix });
    Ok(())
}
