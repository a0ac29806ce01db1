//! SONiC's dynamic-buffer headroom model for NVIDIA Spectrum switches, reproduced exactly.
//!
//! In SONiC's dynamic buffer model, `buffermgrd` computes each lossless priority group's
//! headroom at run time by calling a vendor Lua plugin with the port's speed, cable length,
//! MTU, gearbox delay and lane count. For NVIDIA (Mellanox) Spectrum switches that plugin is
//! sonic-swss `cfgmgr/buffer_headroom_mellanox.lua`; this module is a line-by-line
//! transcription of it at the revision named in [`LUA_SOURCE`], evaluated in `f64` in the
//! same order as the Lua (Redis embeds Lua 5.1, whose numbers are IEEE doubles), so the
//! results agree to the byte. The tests in `tests/sonic_headroom.rs` check that against the
//! real script run under `lua5.1`.
//!
//! # The model
//! All quantities are bytes; `speed` is in Mb/s and `cable` in metres, as the Lua takes them.
//!
//! * `worst_case_factor = ceil(cell/64)` if `cell > 2·64`, else `ceil(2·cell/(1+cell))`
//!   (= 2 for any cell ≥ 2 B): how many bytes of buffer a 64-byte packet can cost per byte.
//! * `small_packet_percentage_by_byte = 100·64 / ((p·64 + (100−p)·lossless_mtu)/100)`, with
//!   `p` the LOSSLESS_TRAFFIC_PATTERN `small_packet_percentage` (a share of packets), turned
//!   into a share of bytes; `cell_occupancy = (100 − pb + pb·worst_case_factor)/100`.
//! * `peer_response_time = pause_quanta(speed)·512/8` for the speeds in the Lua's table
//!   (IEEE 802.3 Annex 31B; 905 quanta at 400/800G, 453 at 200G, 394 at 100G, 147 at 50G,
//!   118 at 40G, 80 at 25G, 67 at 10G, 2 at 1G, 1 at 100M), otherwise the ASIC table's
//!   `peer_response_time` × 1024.
//! * `bytes_on_cable = 2·cable·speed·10^9 / 198 000 000 / 8000` (signal at 198 000 km/s,
//!   both directions), `bytes_on_gearbox = speed·gearbox_delay/(8·1024)`,
//!   `kb_on_tile = speed/1000·120/8` on Spectrum-4 and -5 only.
//! * `propagation_delay = port_mtu + bytes_on_cable + 2·bytes_on_gearbox + mac_phy_delay +
//!   peer_response_time + kb_on_tile`.
//! * `xoff = ceil_1024(lossless_mtu + propagation_delay·cell_occupancy)`; on Spectrum-6
//!   plus 18 KiB; and when the shared headroom pool is off and `p ≠ 100`, plus 2 KiB if that
//!   still leaves it more than 2 KiB short of the all-small-packets figure
//!   `ceil_1024(lossless_mtu + propagation_delay·worst_case_factor)`.
//! * `xon = ceil_1024(pipeline_latency)`, the pipeline latency doubled on an 8-lane port.
//! * `size = ceil_1024(xon)` with the shared headroom pool, else
//!   `ceil_1024(xoff + xon + speed_overhead)` with `speed_overhead = port_mtu` on an 8-lane
//!   port and 0 otherwise.
//!
//! The shared headroom pool is on when `BUFFER_POOL|ingress_lossless_pool` has a non-zero
//! `xoff` or DEFAULT_LOSSLESS_BUFFER_PARAMETER has a non-zero `over_subscribe_ratio`. In
//! this plugin the ratio only switches the mode; its value sizes the pool in
//! `buffer_pool_mellanox.lua`, whose shared headroom pool `xoff` is [`crate::sonic_pool`].
//!
//! The profile's `dynamic_th` does not come from the Lua: `buffermgrd` (`allocateProfile`
//! in `cfgmgr/buffermgrdyn.cpp`) sets it from DEFAULT_LOSSLESS_BUFFER_PARAMETER
//! `default_dynamic_th` ("0" in sonic-buildimage `files/build_templates/buffers_config.j2`),
//! meaning α = 2^0 = 1 in the shared pool's dynamic threshold. It is carried through so the
//! output is a complete BUFFER_PROFILE.
//!
//! # What SONiC means by these names
//! `xoff` is the headroom above the pause point (bytes that may still arrive after XOFF is
//! sent), `xon` the hysteresis below it, `size` the PG's reserved buffer (headroom). They are
//! not a trigger/resume pair; see DESIGN.md.
//!
//! # The static tables are something else
//! The `pg_profile_lookup.ini` files under sonic-buildimage `device/mellanox/*/` (copied in
//! `shared/data/sonic/pg_profile_lookup/`) are fixed tables used by the *traditional* buffer
//! model. They are not output of this Lua and do not match it: the Spectrum-1 SN2700 table
//! grows by ~252 B per metre at 100G (as if every packet were small, cell occupancy 2) while
//! the Lua with the default pattern grows by ~141 B/m; the Spectrum-3 SN4280 table is a
//! shared-headroom table (`size == xon`) whose xoff grows ~126 B/m (occupancy 1). Their
//! `xon` does match: 19 KiB pipeline latency, doubled (38912) for the 8-lane 400G ports.
//! `tests/sonic_headroom.rs` prints the differences and checks only what does match.
//!
//! # Left out
//! The Barefoot and VS plugins, `buffer_check_headroom_mellanox.lua` (the per-port total
//! headroom limit), `buffer_pool_mellanox.lua` (its pool sizes; the shared headroom pool `xoff` is in
//! [`crate::sonic_pool`]), and `buffermgrd`'s profile naming.

use std::fmt;

use serde::{Deserialize, Serialize};
use units::{BitRate, Bytes, Length, SimDuration};

/// The upstream revision this module reproduces.
pub const LUA_SOURCE: &str = "sonic-net/sonic-swss cfgmgr/buffer_headroom_mellanox.lua at commit \
     e6b0c5b5d2ab52354c4ec941f7c9005aeec3f779 (file last changed by 422271e7e, #4797, 2026-08-01)";

/// Where the ASIC presets come from.
pub const ASIC_TABLE_SOURCE: &str = "sonic-net/sonic-buildimage platform/mellanox/asic_table.j2 at \
     commit 086b03bd70f9e211aaaf5f6aefe0790b508d2a94";

/// `DEFAULT_MTU_STR` in sonic-swss `cfgmgr/buffermgrdyn.h`: the port MTU buffermgrd passes
/// when PORT has no `mtu`.
pub const DEFAULT_PORT_MTU: Bytes = Bytes(9100);

/// The Lua's `minimal_packet_size`.
const MIN_PACKET: f64 = 64.0;
/// The Lua's `speed_of_light`, in m/s (about 0.66 c, signal speed in cable).
const SPEED_OF_LIGHT: f64 = 198_000_000.0;
/// The Lua's `headroom_compensation` (2 KiB).
const HEADROOM_COMPENSATION: f64 = 2.0 * 1024.0;
/// The Lua's `spectrum6_headroom_compensation` (18 KiB).
const SPECTRUM6_COMPENSATION: f64 = 18.0 * 1024.0;

/// A Spectrum generation, as the Lua tells them apart: by the last character of the
/// STATE_DB `ASIC_TABLE` key (`MELLANOX-SPECTRUM`, `MELLANOX-SPECTRUM-2`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Spectrum {
    Spectrum1,
    Spectrum2,
    Spectrum3,
    Spectrum4,
    Spectrum5,
    Spectrum6,
}

impl Spectrum {
    pub const ALL: [Spectrum; 6] =
        [Spectrum::Spectrum1, Spectrum::Spectrum2, Spectrum::Spectrum3, Spectrum::Spectrum4, Spectrum::Spectrum5, Spectrum::Spectrum6];

    /// "spectrum-1" .. "spectrum-6", as scenario files and `plan roce --asic` name them.
    pub fn name(self) -> &'static str {
        match self {
            Spectrum::Spectrum1 => "spectrum-1",
            Spectrum::Spectrum2 => "spectrum-2",
            Spectrum::Spectrum3 => "spectrum-3",
            Spectrum::Spectrum4 => "spectrum-4",
            Spectrum::Spectrum5 => "spectrum-5",
            Spectrum::Spectrum6 => "spectrum-6",
        }
    }

    /// The generation [`Self::name`] names.
    pub fn from_name(s: &str) -> Option<Spectrum> {
        Spectrum::ALL.into_iter().find(|g| g.name() == s)
    }

    /// The generation of a SONiC platform (`DEVICE_METADATA|localhost|platform`), by the
    /// `platform2asic` map of sonic-buildimage `platform/mellanox/asic_table.j2` at commit
    /// 4a9bf641220a15c2372e7b4fabcf00e82750c628 (`None` for a platform it does not list).
    pub fn from_platform(platform: &str) -> Option<Spectrum> {
        use Spectrum::*;
        const MAP: [(&str, Spectrum); 31] = [
            ("x86_64-mlnx_lssn2700-r0", Spectrum1),
            ("x86_64-mlnx_msn2010-r0", Spectrum1),
            ("x86_64-mlnx_msn2100-r0", Spectrum1),
            ("x86_64-mlnx_msn2410-r0", Spectrum1),
            ("x86_64-mlnx_msn2700-r0", Spectrum1),
            ("x86_64-mlnx_msn2700a1-r0", Spectrum1),
            ("x86_64-mlnx_msn2700_simx-r0", Spectrum1),
            ("x86_64-mlnx_msn2740-r0", Spectrum1),
            ("x86_64-mlnx_msn3420-r0", Spectrum2),
            ("x86_64-mlnx_msn3700c-r0", Spectrum2),
            ("x86_64-mlnx_msn3700-r0", Spectrum2),
            ("x86_64-mlnx_msn3700_simx-r0", Spectrum2),
            ("x86_64-mlnx_msn3800-r0", Spectrum2),
            ("x86_64-mlnx_msn4410-r0", Spectrum3),
            ("x86_64-mlnx_msn4700_simx-r0", Spectrum3),
            ("x86_64-mlnx_msn4700-r0", Spectrum3),
            ("x86_64-mlnx_msn4600c-r0", Spectrum3),
            ("x86_64-mlnx_msn4600-r0", Spectrum3),
            ("x86_64-nvidia_sn4280_simx-r0", Spectrum3),
            ("x86_64-nvidia_sn4800-r0", Spectrum3),
            ("x86_64-nvidia_sn4800_simx-r0", Spectrum3),
            ("x86_64-nvidia_sn2201-r0", Spectrum1),
            ("x86_64-nvidia_sn5400-r0", Spectrum4),
            ("x86_64-nvidia_sn5600-r0", Spectrum4),
            ("x86_64-nvidia_sn5610n-r0", Spectrum4),
            ("x86_64-nvidia_sn5400_simx-r0", Spectrum4),
            ("x86_64-nvidia_sn5600_simx-r0", Spectrum4),
            ("x86_64-nvidia_sn4280-r0", Spectrum3),
            ("x86_64-nvidia_sn5640-r0", Spectrum5),
            ("x86_64-nvidia_sn5640_simx-r0", Spectrum5),
            ("x86_64-nvidia_sn6600_simx-r0", Spectrum6),
        ];
        MAP.iter().find(|(p, _)| *p == platform).map(|&(_, g)| g)
    }

    /// The ASIC name in the STATE_DB `ASIC_TABLE` key.
    pub fn asic_table_key(self) -> &'static str {
        match self {
            Spectrum::Spectrum1 => "MELLANOX-SPECTRUM",
            Spectrum::Spectrum2 => "MELLANOX-SPECTRUM-2",
            Spectrum::Spectrum3 => "MELLANOX-SPECTRUM-3",
            Spectrum::Spectrum4 => "MELLANOX-SPECTRUM-4",
            Spectrum::Spectrum5 => "MELLANOX-SPECTRUM-5",
            Spectrum::Spectrum6 => "MELLANOX-SPECTRUM-6",
        }
    }

    /// This generation's ASIC_TABLE values ([`ASIC_TABLE_SOURCE`]).
    pub fn asic(self) -> AsicParams {
        // cell_size, pipeline_latency, mac_phy_delay, peer_response_time as in asic_table.j2.
        let (cell, pipeline) = match self {
            Spectrum::Spectrum1 => (96, 19.0),
            Spectrum::Spectrum2 | Spectrum::Spectrum3 => (144, 19.0),
            Spectrum::Spectrum4 | Spectrum::Spectrum5 => (192, 19.0),
            Spectrum::Spectrum6 => (256, 42.0),
        };
        AsicParams { generation: self, cell_size: Bytes(cell), pipeline_latency_kib: pipeline, mac_phy_delay_kib: 0.8, peer_response_time_kib: 3.8 }
    }

    /// Spectrum-4 and -5 add `kb_on_tile` to the propagation delay.
    fn has_tile(self) -> bool {
        matches!(self, Spectrum::Spectrum4 | Spectrum::Spectrum5)
    }
}

/// One ASIC's STATE_DB `ASIC_TABLE` entry, as the Lua reads it.
///
/// The three delays are stored as ASIC_TABLE writes them, in units of 1024 bytes
/// (the Lua multiplies each by 1024), so `0.8` here is exactly the Lua's `tonumber("0.8")`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AsicParams {
    /// Decides the Spectrum-4/5 tile term and the Spectrum-6 compensation.
    pub generation: Spectrum,
    /// `cell_size`: the buffer's allocation unit.
    pub cell_size: Bytes,
    /// `pipeline_latency`, in KiB: becomes `xon`.
    pub pipeline_latency_kib: f64,
    /// `mac_phy_delay`, in KiB: bytes held in the MAC/PHY when XOFF is generated.
    pub mac_phy_delay_kib: f64,
    /// `peer_response_time`, in KiB: used only at speeds missing from the Lua's pause-quanta
    /// table.
    pub peer_response_time_kib: f64,
}

/// CONFIG_DB `LOSSLESS_TRAFFIC_PATTERN`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LosslessTrafficPattern {
    /// `mtu`: the largest lossless packet.
    pub mtu: Bytes,
    /// `small_packet_percentage`: share of lossless packets (not bytes) that are 64-byte
    /// packets, 0..=100.
    pub small_packet_percentage: u8,
}

impl Default for LosslessTrafficPattern {
    /// `mtu` 1024, `small_packet_percentage` 50: sonic-buildimage
    /// `files/build_templates/buffers_config.j2` (and the SN4600C dynamic sample output).
    fn default() -> Self {
        LosslessTrafficPattern { mtu: Bytes(1024), small_packet_percentage: 50 }
    }
}

/// The two settings that switch the shared headroom pool on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SharedHeadroom {
    /// DEFAULT_LOSSLESS_BUFFER_PARAMETER `over_subscribe_ratio` (0 or absent: not set).
    /// buffers_config.j2 writes "1" when the SKU enables the shared headroom pool.
    pub over_subscribe_ratio: f64,
    /// BUFFER_POOL `ingress_lossless_pool` `xoff`, the shared headroom pool size
    /// (0 or absent: not set).
    pub pool_xoff: Bytes,
}

impl SharedHeadroom {
    /// The Lua's `shp_enabled`.
    pub fn enabled(&self) -> bool {
        self.pool_xoff.0 != 0 || self.over_subscribe_ratio != 0.0
    }
}

/// Everything the Lua reads: its five arguments and the database fields.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DynamicHeadroomInput {
    /// Port speed (ARGV[1], in Mb/s there: must be a whole number of Mb/s).
    pub speed: BitRate,
    /// CABLE_LENGTH of the port (ARGV[2]).
    pub cable_length: Length,
    /// Port MTU (ARGV[3]); [`DEFAULT_PORT_MTU`] when the port has none.
    pub port_mtu: Bytes,
    /// Gearbox delay (ARGV[4]); zero without a gearbox. The Lua takes it as a number of
    /// nanoseconds and divides `speed·delay` by 8·1024.
    pub gearbox_delay: SimDuration,
    /// Number of lanes of the port (ARGV[5]); 8 doubles xon and adds the MTU to `size`.
    pub lane_count: u32,
    pub asic: AsicParams,
    pub pattern: LosslessTrafficPattern,
    pub shared_headroom: SharedHeadroom,
    /// DEFAULT_LOSSLESS_BUFFER_PARAMETER `default_dynamic_th`, copied to the profile.
    pub dynamic_th: i8,
}

impl DynamicHeadroomInput {
    /// A 4-lane port with SONiC's defaults: port MTU 9100, no gearbox, the default lossless
    /// pattern, no shared headroom pool, `dynamic_th` 0.
    pub fn new(speed: BitRate, cable_length: Length, generation: Spectrum) -> Self {
        DynamicHeadroomInput {
            speed,
            cable_length,
            port_mtu: DEFAULT_PORT_MTU,
            gearbox_delay: SimDuration::ZERO,
            lane_count: 4,
            asic: generation.asic(),
            pattern: LosslessTrafficPattern::default(),
            shared_headroom: SharedHeadroom::default(),
            dynamic_th: 0,
        }
    }
}

/// The Lua's intermediate values, in bytes unless named otherwise, unrounded.
///
/// They are kept as `f64` because the Lua's are fractional (`mac_phy_delay` is 819.2 B) and
/// rounding any of them would change the result; [`DynamicHeadroom::byte_terms`] lists
/// them rounded up to whole [`Bytes`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LuaTerms {
    /// Pause quanta for this speed from the Lua's table, if the speed is in it.
    pub pause_quanta: Option<u32>,
    /// Bytes of buffer a byte of 64-byte packets may take (dimensionless).
    pub worst_case_factor: f64,
    /// `small_packet_percentage` converted to a share of bytes, in percent.
    pub small_packet_percentage_by_byte: f64,
    /// Average buffer bytes per received byte under the lossless pattern (dimensionless).
    pub cell_occupancy: f64,
    /// `pipeline_latency` × 1024 (× 2 on an 8-lane port).
    pub pipeline_latency: f64,
    pub mac_phy_delay: f64,
    pub peer_response_time: f64,
    /// Bytes in flight on the cable, both directions.
    pub bytes_on_cable: f64,
    /// Bytes in one gearbox (counted twice in the propagation delay).
    pub bytes_on_gearbox: f64,
    /// Spectrum-4/5 extra bytes in the tile (120 ns of line rate); 0 otherwise.
    pub kb_on_tile: f64,
    /// Port MTU plus every in-flight term: the bytes that arrive after XOFF is sent.
    pub propagation_delay: f64,
    /// `lossless_mtu + propagation_delay·cell_occupancy`, before rounding.
    pub xoff_unrounded: f64,
    /// The all-small-packets xoff the compensation step compares with (only computed when
    /// the shared headroom pool is off and the small-packet percentage is below 100).
    pub full_small_packet_xoff: Option<f64>,
    pub speed_overhead: f64,
    pub shared_headroom: bool,
    pub eight_lane: bool,
}

/// The profile the Lua returns, plus its threshold and workings.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct DynamicHeadroom {
    pub xon: Bytes,
    pub xoff: Bytes,
    pub size: Bytes,
    /// The profile's `dynamic_th` (not from the Lua; see the module doc).
    pub dynamic_th: i8,
    /// xoff rounded up to 1 KiB, before either compensation.
    pub xoff_rounded: Bytes,
    /// Spectrum-6 compensation added to xoff (18 KiB or 0).
    pub spectrum6_compensation: Bytes,
    /// Reduced-small-packet compensation added to xoff (2 KiB or 0).
    pub small_packet_compensation: Bytes,
    pub terms: LuaTerms,
}

/// One named term of the workings, exact and rounded up.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct NamedTerm {
    pub name: &'static str,
    pub exact: f64,
    pub bytes: Bytes,
}

impl DynamicHeadroom {
    /// α of the shared pool's dynamic threshold: 2^dynamic_th.
    pub fn alpha(&self) -> f64 {
        2f64.powi(self.dynamic_th as i32)
    }

    /// The byte-valued intermediate terms, each also rounded up to whole bytes.
    pub fn byte_terms(&self) -> Vec<NamedTerm> {
        let t = &self.terms;
        let mut v = vec![
            ("pipeline_latency", t.pipeline_latency),
            ("mac_phy_delay", t.mac_phy_delay),
            ("peer_response_time", t.peer_response_time),
            ("bytes_on_cable", t.bytes_on_cable),
            ("bytes_on_gearbox", t.bytes_on_gearbox),
            ("kb_on_tile", t.kb_on_tile),
            ("propagation_delay", t.propagation_delay),
            ("xoff_unrounded", t.xoff_unrounded),
            ("speed_overhead", t.speed_overhead),
        ];
        if let Some(f) = t.full_small_packet_xoff {
            v.push(("full_small_packet_xoff", f));
        }
        v.into_iter().map(|(name, exact)| NamedTerm { name, exact, bytes: Bytes(ceil_u64(exact)) }).collect()
    }
}

/// Why an input cannot be evaluated (the Lua would fail or return nonsense).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SonicError {
    /// Speed is zero or not a whole number of Mb/s (buffermgrd passes Mb/s as an integer).
    Speed(BitRate),
    /// `small_packet_percentage` above 100.
    SmallPacketPercentage(u8),
    /// Lossless MTU of 0 (the Lua would divide by zero at 0 % small packets).
    LosslessMtu,
    /// Cell size of 0.
    CellSize,
    /// An ASIC delay or the over-subscription ratio is negative, infinite or NaN.
    Parameter(&'static str),
}

impl fmt::Display for SonicError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SonicError::Speed(r) => write!(f, "port speed {r} is not a positive whole number of Mb/s"),
            SonicError::SmallPacketPercentage(p) => write!(f, "small_packet_percentage {p} is above 100"),
            SonicError::LosslessMtu => f.write_str("lossless traffic pattern mtu must be positive"),
            SonicError::CellSize => f.write_str("ASIC cell_size must be positive"),
            SonicError::Parameter(n) => write!(f, "{n} must be a finite number >= 0"),
        }
    }
}

impl std::error::Error for SonicError {}

/// The Lua's `pause_quanta_per_speed` table (speed in Mb/s). It cites IEEE 802.3 31B.3.7.
pub fn lua_pause_quanta(speed_mbps: u64) -> Option<u32> {
    Some(match speed_mbps {
        800_000 | 400_000 => 905,
        200_000 => 453,
        100_000 => 394,
        50_000 => 147,
        40_000 => 118,
        25_000 => 80,
        10_000 => 67,
        1_000 => 2,
        100 => 1,
        _ => return None,
    })
}

fn ceil_1024(x: f64) -> f64 {
    (x / 1024.0).ceil() * 1024.0
}

/// Rounds up to a whole number of bytes; saturates (never panics) on out-of-range values.
fn ceil_u64(x: f64) -> u64 {
    x.ceil() as u64
}

fn finite_nonneg(x: f64, name: &'static str) -> Result<f64, SonicError> {
    if x.is_finite() && x >= 0.0 {
        Ok(x)
    } else {
        Err(SonicError::Parameter(name))
    }
}

/// The inputs the Lua cannot evaluate (it would fail or return nonsense); the ASIC
/// delays and the over-subscription ratio are checked where the Lua reads them.
fn check_input(inp: &DynamicHeadroomInput) -> Result<(), SonicError> {
    if inp.speed.0 == 0 || !inp.speed.0.is_multiple_of(1_000_000) {
        return Err(SonicError::Speed(inp.speed));
    }
    if inp.pattern.small_packet_percentage > 100 {
        return Err(SonicError::SmallPacketPercentage(inp.pattern.small_packet_percentage));
    }
    if inp.pattern.mtu.0 == 0 {
        return Err(SonicError::LosslessMtu);
    }
    if inp.asic.cell_size.0 == 0 {
        return Err(SonicError::CellSize);
    }
    Ok(())
}

/// Evaluates `buffer_headroom_mellanox.lua` ([`LUA_SOURCE`]) for one port. After the input
/// check it follows the Lua from top to bottom, term by term, so that the two read side by
/// side; that is why it stays one function.
pub fn mellanox_headroom(inp: &DynamicHeadroomInput) -> Result<DynamicHeadroom, SonicError> {
    check_input(inp)?;
    let spp_int = inp.pattern.small_packet_percentage;
    let asic = &inp.asic;
    let speed_mbps = inp.speed.0 / 1_000_000;
    let port_speed = speed_mbps as f64;
    // The Lua strips the trailing "m" and calls tonumber; mm/1000 is the same double.
    let cable_length = inp.cable_length.as_m_f64();
    let port_mtu = inp.port_mtu.0 as f64;
    let gearbox_delay = inp.gearbox_delay.as_ns_f64();
    let is_8lane = inp.lane_count == 8;
    let lossless_mtu = inp.pattern.mtu.0 as f64;
    let small_packet_percentage = spp_int as f64;
    let cell_size = asic.cell_size.0 as f64;

    let pause_quanta = lua_pause_quanta(speed_mbps);
    let mut pipeline_latency = finite_nonneg(asic.pipeline_latency_kib, "pipeline_latency")? * 1024.0;
    let mac_phy_delay = finite_nonneg(asic.mac_phy_delay_kib, "mac_phy_delay")? * 1024.0;
    let peer_response_time = match pause_quanta {
        Some(q) => q as f64 * 512.0 / 8.0,
        None => finite_nonneg(asic.peer_response_time_kib, "peer_response_time")? * 1024.0,
    };
    let kb_on_tile = if asic.generation.has_tile() { port_speed / 1000.0 * 120.0 / 8.0 } else { 0.0 };
    finite_nonneg(inp.shared_headroom.over_subscribe_ratio, "over_subscribe_ratio")?;
    let shp_enabled = inp.shared_headroom.enabled();

    let speed_overhead = if is_8lane {
        pipeline_latency *= 2.0;
        port_mtu
    } else {
        0.0
    };

    let worst_case_factor = if cell_size > 2.0 * MIN_PACKET { cell_size / MIN_PACKET } else { (2.0 * cell_size) / (1.0 + cell_size) }.ceil();

    let small_packet_percentage_by_byte =
        100.0 * MIN_PACKET / ((small_packet_percentage * MIN_PACKET + (100.0 - small_packet_percentage) * lossless_mtu) / 100.0);
    let cell_occupancy = (100.0 - small_packet_percentage_by_byte + small_packet_percentage_by_byte * worst_case_factor) / 100.0;

    let bytes_on_gearbox = if gearbox_delay == 0.0 { 0.0 } else { port_speed * gearbox_delay / (8.0 * 1024.0) };
    let bytes_on_cable = 2.0 * cable_length * port_speed * 1_000_000_000.0 / SPEED_OF_LIGHT / (8.0 * 1000.0);
    let propagation_delay = port_mtu + bytes_on_cable + 2.0 * bytes_on_gearbox + mac_phy_delay + peer_response_time + kb_on_tile;

    let xoff_unrounded = lossless_mtu + propagation_delay * cell_occupancy;
    let xoff_rounded = ceil_1024(xoff_unrounded);
    let mut xoff = xoff_rounded;
    let spectrum6 = if asic.generation == Spectrum::Spectrum6 { SPECTRUM6_COMPENSATION } else { 0.0 };
    xoff += spectrum6;

    let mut full_small_packet_xoff = None;
    let mut small_comp = 0.0;
    if !shp_enabled && spp_int != 100 {
        let full = ceil_1024(lossless_mtu + propagation_delay * worst_case_factor);
        full_small_packet_xoff = Some(full);
        if xoff + HEADROOM_COMPENSATION < full {
            small_comp = HEADROOM_COMPENSATION;
            xoff += HEADROOM_COMPENSATION;
        }
    }

    let xon = ceil_1024(pipeline_latency);
    let size = ceil_1024(if shp_enabled { xon } else { xoff + xon + speed_overhead });

    Ok(DynamicHeadroom {
        xon: Bytes(ceil_u64(xon)),
        xoff: Bytes(ceil_u64(xoff)),
        size: Bytes(ceil_u64(size)),
        dynamic_th: inp.dynamic_th,
        xoff_rounded: Bytes(ceil_u64(xoff_rounded)),
        spectrum6_compensation: Bytes(spectrum6 as u64),
        small_packet_compensation: Bytes(small_comp as u64),
        terms: LuaTerms {
            pause_quanta,
            worst_case_factor,
            small_packet_percentage_by_byte,
            cell_occupancy,
            pipeline_latency,
            mac_phy_delay,
            peer_response_time,
            bytes_on_cable,
            bytes_on_gearbox,
            kb_on_tile,
            propagation_delay,
            xoff_unrounded,
            full_small_packet_xoff,
            speed_overhead,
            shared_headroom: shp_enabled,
            eight_lane: is_8lane,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worst_case_factor_by_cell() {
        // 96 B: 2·96/97 = 1.98 -> 2; 144: 2.25 -> 3; 192: 3; 256: 4.
        for (g, w) in [(Spectrum::Spectrum1, 2.0), (Spectrum::Spectrum3, 3.0), (Spectrum::Spectrum4, 3.0), (Spectrum::Spectrum6, 4.0)] {
            let h = mellanox_headroom(&DynamicHeadroomInput::new(BitRate::from_gbps(100), Length::from_m(5), g)).unwrap();
            assert_eq!(h.terms.worst_case_factor, w, "{g:?}");
        }
    }

    #[test]
    fn rejects_impossible_inputs() {
        let mut i = DynamicHeadroomInput::new(BitRate(100_500_000), Length::from_m(5), Spectrum::Spectrum2);
        assert_eq!(mellanox_headroom(&i), Err(SonicError::Speed(BitRate(100_500_000))));
        i.speed = BitRate::from_gbps(100);
        i.pattern.small_packet_percentage = 101;
        assert!(mellanox_headroom(&i).is_err());
        i.pattern = LosslessTrafficPattern { mtu: Bytes(0), small_packet_percentage: 0 };
        assert_eq!(mellanox_headroom(&i), Err(SonicError::LosslessMtu));
        i.pattern = LosslessTrafficPattern::default();
        i.asic.mac_phy_delay_kib = f64::NAN;
        assert_eq!(mellanox_headroom(&i), Err(SonicError::Parameter("mac_phy_delay")));
    }

    #[test]
    fn extreme_inputs_do_not_panic() {
        let mut i = DynamicHeadroomInput::new(BitRate(u64::MAX / 1_000_000 * 1_000_000), Length(u64::MAX), Spectrum::Spectrum4);
        i.port_mtu = Bytes(u64::MAX);
        i.gearbox_delay = SimDuration(u64::MAX);
        i.lane_count = 8;
        let h = mellanox_headroom(&i).unwrap();
        assert!(h.size >= h.xon);
    }
}
