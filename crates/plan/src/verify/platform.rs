//! Per-platform buffer facts that config_db does not hold: the ASIC's buffer cell size and
//! its total buffer (SONiC's `mmu_size`), each with its source, and the CLI's overrides.
//!
//! * **Cell size.** `--cell` wins. Otherwise an NVIDIA Spectrum platform (generation from
//!   `DEVICE_METADATA|localhost|platform`, [`model::sonic::Spectrum::from_platform`]) has the
//!   `cell_size` of sonic-buildimage `platform/mellanox/asic_table.j2`
//!   ([`model::sonic::ASIC_TABLE_SOURCE`]): 96 B on Spectrum-1, 144 B on -2/-3, 192 B on
//!   -4/-5, 256 B on -6.
//! * **Buffer size.** `--mmu-size` wins. Otherwise, on a Spectrum platform, the size of
//!   `BUFFER_POOL|egress_lossless_pool`: sonic-swss `cfgmgr/buffer_pool_mellanox.lua` (at
//!   e6b0c5b5d2ab52354c4ec941f7c9005aeec3f779) takes `mmu_size` from that pool when STATE_DB
//!   `BUFFER_MAX_PARAM_TABLE|global` has none, and sonic-buildimage's Mellanox
//!   `buffers_defaults_t*.j2` size that pool as the whole buffer.
//!
//! Left out: Broadcom, Marvell and other ASICs (no platform-to-chip table with a citable
//! cell and buffer size here; such switches are "not checked" without `--cell` /
//! `--mmu-size`), and the STATE_DB `mmu_size` a running switch reports.

use model::sonic::{Spectrum, ASIC_TABLE_SOURCE};
use units::Bytes;

use super::config_db::Switch;
use super::Options;

/// A value and where it came from (said in findings).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sourced {
    pub bytes: Bytes,
    pub source: String,
}

/// The switch's NVIDIA Spectrum generation, if its platform is one.
pub fn spectrum(sw: &Switch) -> Option<Spectrum> {
    sw.field("DEVICE_METADATA", "localhost", "platform").and_then(Spectrum::from_platform)
}

/// The buffer cell size to use for a switch, or why there is none.
pub fn cell_size(sw: &Switch, opts: &Options) -> Result<Sourced, String> {
    if let Some(c) = opts.cell {
        return Ok(Sourced { bytes: c, source: "--cell".into() });
    }
    match (spectrum(sw), sw.field("DEVICE_METADATA", "localhost", "platform")) {
        (Some(g), _) => Ok(Sourced { bytes: g.asic().cell_size, source: format!("{} cell_size, {ASIC_TABLE_SOURCE}", g.name()) }),
        (None, Some(p)) => Err(format!("no cell size known for platform {p:?} (NVIDIA Spectrum only): pass --cell")),
        (None, None) => Err("config_db has no buffer cell size and DEVICE_METADATA|localhost|platform is absent: pass --cell".into()),
    }
}

/// The ASIC's total buffer for a switch, or why there is none. A pool size that is not a
/// number is left to the caller's input check (here: no size).
pub fn mmu_size(sw: &Switch, opts: &Options) -> Result<Sourced, String> {
    if let Some(m) = opts.mmu_size {
        return Ok(Sourced { bytes: m, source: "--mmu-size".into() });
    }
    let Some(g) = spectrum(sw) else {
        return Err(match sw.field("DEVICE_METADATA", "localhost", "platform") {
            Some(p) => format!("no buffer size known for platform {p:?} (NVIDIA Spectrum only): pass --mmu-size"),
            None => "DEVICE_METADATA|localhost|platform is absent, so the ASIC's buffer is unknown: pass --mmu-size".into(),
        });
    };
    match sw.field("BUFFER_POOL", "egress_lossless_pool", "size").and_then(|v| v.trim().parse().ok()) {
        Some(b) => Ok(Sourced {
            bytes: Bytes(b),
            source: format!("{}: BUFFER_POOL|egress_lossless_pool|size, the mmu_size of sonic-swss buffer_pool_mellanox.lua", g.name()),
        }),
        None => Err(format!("{}: no BUFFER_POOL|egress_lossless_pool size, which SONiC takes as the buffer size: pass --mmu-size", g.name())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn switch(platform: Option<&str>) -> Switch {
        let meta = platform.map(|p| format!(r#""DEVICE_METADATA":{{"localhost":{{"platform":"{p}"}}}},"#)).unwrap_or_default();
        let text = format!(r#"{{{meta}"BUFFER_POOL":{{"egress_lossless_pool":{{"size":"60817392"}}}}}}"#);
        super::super::config_db::read(&[("f.json".into(), text)]).unwrap().remove(0)
    }

    #[test]
    fn cell_and_buffer_by_platform_and_overrides() {
        let o = Options::default();
        let sn4600c = switch(Some("x86_64-mlnx_msn4600c-r0"));
        assert_eq!(cell_size(&sn4600c, &o).unwrap().bytes, Bytes(144));
        assert_eq!(mmu_size(&sn4600c, &o).unwrap().bytes, Bytes(60817392));
        let given = Options { cell: Some(Bytes(256)), mmu_size: Some(Bytes(1 << 24)), ..o };
        assert_eq!(cell_size(&sn4600c, &given).unwrap(), Sourced { bytes: Bytes(256), source: "--cell".into() });
        assert_eq!(mmu_size(&sn4600c, &given).unwrap().bytes, Bytes(1 << 24));
        let s6000 = switch(Some("x86_64-dell_s6000_s1220-r0"));
        assert!(cell_size(&s6000, &o).unwrap_err().contains("x86_64-dell_s6000_s1220-r0"));
        assert!(mmu_size(&s6000, &o).unwrap_err().contains("--mmu-size"));
        assert!(cell_size(&switch(None), &o).unwrap_err().contains("platform is absent"));
    }
}
