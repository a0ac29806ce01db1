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
//! * **Broadcom chips** ([`BroadcomChip`]), by platform, from the SDK configuration its
//!   hwsku's `sai.profile` loads (`SAI_INIT_CONFIG_FILE=.../td2-…`, `th-…`, `td3-…` in
//!   sonic-buildimage at 086b03bd70f9): Trident2 (Force10-S6000), Tomahawk (Arista
//!   7060CX-32S), Trident3 (Arista 7050SX3-48C8). Their cell size and dynamic-threshold
//!   alphas are the SDK's (OpenBCM `sdk-6.5.21/include/soc/` at
//!   9ee0371a6bad8176af34e8c4de05d19a91dcddba): `_TD2_MMU_BYTES_PER_CELL` 208 B
//!   (`td2_td2p.h`), `_TH_MMU_BYTES_PER_CELL` 208 B (`tomahawk.h`), `_TD3_MMU_BYTES_PER_CELL`
//!   256 B (`trident3.h`), and the `soc_*_drop_limit_alpha_value_e` alphas 1/128 .. 8 of
//!   `trident2.h`, `tomahawk.h` and `trident3.h`.
//!
//! Left out: other Broadcom chips (Tomahawk-2/3/4/5, Jericho), Marvell and other ASICs (no
//! citable cell size or alpha range found; "not checked" without `--cell`), Broadcom buffer
//! sizes, and the STATE_DB `mmu_size` a running switch reports.

use model::sonic::{Spectrum, ASIC_TABLE_SOURCE};
use units::Bytes;

use super::config_db::Switch;
use super::Options;

/// A Broadcom StrataXGS chip whose SDK header gives its MMU facts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BroadcomChip {
    Trident2,
    Tomahawk,
    Trident3,
}

/// SONiC platforms and their chip, by the SDK config their hwsku's `sai.profile` loads
/// (sonic-buildimage at 086b03bd70f9e211aaaf5f6aefe0790b508d2a94).
const BROADCOM_PLATFORMS: [(&str, BroadcomChip, &str); 3] = [
    ("x86_64-dell_s6000_s1220-r0", BroadcomChip::Trident2, "Force10-S6000/sai.profile: td2-s6000-32x40G.config.bcm"),
    ("x86_64-arista_7060_cx32s", BroadcomChip::Tomahawk, "Arista-7060CX-32S/sai.profile: th-a7060-cx32s-flex-all.config.bcm"),
    ("x86_64-arista_7050sx3_48c8", BroadcomChip::Trident3, "Arista-7050SX3-48C8/sai.profile: td3-a7050sx3_48c8-48x10G+8x100G.config.bcm"),
];

/// Where the Broadcom SDK facts come from.
const OPENBCM: &str = "OpenBCM sdk-6.5.21/include/soc at 9ee0371a6bad";

impl BroadcomChip {
    pub fn name(self) -> &'static str {
        match self {
            BroadcomChip::Trident2 => "Broadcom Trident2",
            BroadcomChip::Tomahawk => "Broadcom Tomahawk",
            BroadcomChip::Trident3 => "Broadcom Trident3",
        }
    }

    /// The SDK header that holds this chip's dynamic-threshold alphas.
    fn header(self) -> &'static str {
        match self {
            BroadcomChip::Trident2 => "trident2.h",
            BroadcomChip::Tomahawk => "tomahawk.h",
            BroadcomChip::Trident3 => "trident3.h",
        }
    }

    /// `_TD2_MMU_BYTES_PER_CELL`, `_TH_MMU_BYTES_PER_CELL`, `_TD3_MMU_BYTES_PER_CELL`, and
    /// the header that defines it.
    pub fn cell_size(self) -> (Bytes, &'static str) {
        match self {
            BroadcomChip::Trident2 => (Bytes(208), "td2_td2p.h"),
            BroadcomChip::Tomahawk => (Bytes(208), "tomahawk.h"),
            BroadcomChip::Trident3 => (Bytes(256), "trident3.h"),
        }
    }
}

/// The `dynamic_th` values (log2 of alpha, SAI `SAI_BUFFER_PROFILE_ATTR_SHARED_DYNAMIC_TH`:
/// "the threshold is set to the 2^n of available buffer of the pool", opencomputeproject/SAI
/// `inc/saibuffer.h` at 08262059d570645e72bbad5e2e97263c8bf5526f) for which these Broadcom
/// chips have an alpha: `soc_td2/th/td3_drop_limit_alpha_value_e` list 1/128, 1/64, ..., 4,
/// 8, so -7..3.
pub const BROADCOM_DYNAMIC_TH: std::ops::RangeInclusive<i64> = -7..=3;

/// The switch's Broadcom chip, if its platform is in the table, with the evidence.
pub fn broadcom(sw: &Switch) -> Option<(BroadcomChip, &'static str)> {
    let p = sw.field("DEVICE_METADATA", "localhost", "platform")?;
    BROADCOM_PLATFORMS.iter().find(|(q, _, _)| *q == p).map(|&(_, c, why)| (c, why))
}

/// Where a Broadcom chip's dynamic-threshold alphas come from, for findings.
pub fn broadcom_source(chip: BroadcomChip, evidence: &str) -> String {
    format!("{} ({evidence}; {OPENBCM}/{})", chip.name(), chip.header())
}

/// A value and where it came from (said in findings).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sourced {
    pub bytes: Bytes,
    pub source: String,
}

/// Whether a platform is an NVIDIA (Mellanox) Spectrum one: SONiC names those platforms
/// `x86_64-mlnx_msn*` (e.g. `x86_64-mlnx_msn2700-r0`) and, for newer ones, `x86_64-nvidia_sn*`
/// (sonic-buildimage `device/mellanox/`).
pub fn is_mellanox(platform: &str) -> bool {
    platform.starts_with("x86_64-mlnx_") || platform.starts_with("x86_64-nvidia_")
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
    if let Some((chip, why)) = broadcom(sw) {
        let (c, header) = chip.cell_size();
        return Ok(Sourced { bytes: c, source: format!("{} ({why}; {OPENBCM}/{header})", chip.name()) });
    }
    match (spectrum(sw), sw.field("DEVICE_METADATA", "localhost", "platform")) {
        (Some(g), _) => Ok(Sourced { bytes: g.asic().cell_size, source: format!("{} cell_size, {ASIC_TABLE_SOURCE}", g.name()) }),
        (None, Some(p)) => Err(format!("no cell size known for platform {p:?} (NVIDIA Spectrum, Broadcom Trident2, Tomahawk and Trident3 only): pass --cell")),
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
        let td2 = cell_size(&s6000, &o).unwrap();
        assert_eq!(td2.bytes, Bytes(208));
        assert!(td2.source.ends_with("OpenBCM sdk-6.5.21/include/soc at 9ee0371a6bad/td2_td2p.h)"), "{}", td2.source);
        assert!(mmu_size(&s6000, &o).unwrap_err().contains("--mmu-size"));
        let a7060 = cell_size(&switch(Some("x86_64-arista_7060_cx32s")), &o).unwrap();
        assert_eq!(a7060.bytes, Bytes(208));
        assert!(a7060.source.starts_with("Broadcom Tomahawk (Arista-7060CX-32S/sai.profile"), "{}", a7060.source);
        assert_eq!(cell_size(&switch(Some("x86_64-arista_7050sx3_48c8")), &o).unwrap().bytes, Bytes(256));
        assert!(cell_size(&switch(Some("x86_64-arista_7260cx3_64")), &o).unwrap_err().contains("pass --cell"));
        assert!(cell_size(&switch(None), &o).unwrap_err().contains("platform is absent"));
    }
}
