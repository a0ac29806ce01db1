//! Physical units for fabriclab, as integer types.
//!
//! * [`SimTime`] is an instant and [`SimDuration`] a span, both in integer picoseconds.
//!   At 800 Gb/s one byte takes 10 ps, so picoseconds represent every serialisation
//!   delay of every Ethernet and InfiniBand speed from 10 Gb/s to 800 Gb/s exactly.
//!   A `u64` of picoseconds covers 213 days of simulated time.
//! * [`Bytes`] counts octets; [`BitRate`] is bits per second; [`Length`] is millimetres.
//!
//! Decimal and binary prefixes are kept apart, as in IEC 80000-13: `KB`/`MB`/`GB` are
//! 10^3/10^6/10^9 bytes and `KiB`/`MiB`/`GiB` are 2^10/2^20/2^30 bytes. Rates use decimal
//! prefixes only (`Gbps` = 10^9 bit/s), as every Ethernet and InfiniBand standard does.
//!
//! Every quantity parses from a string that carries its unit (`"4096B"`, `"1MiB"`,
//! `"100Gbps"`, `"2.5us"`, `"3m"`). A bare number is rejected: in a network simulator an
//! unlabelled `1000` is a bug waiting to happen. Decimals are parsed exactly with integer
//! arithmetic and must come out as a whole number of the base unit (`"0.5B"` is an error).

use std::fmt;
use std::ops::{Add, AddAssign, Div, Mul, Sub, SubAssign};
use std::str::FromStr;

mod parse;
pub use parse::ParseError;

/// Picoseconds per second.
pub const PS_PER_SEC: u64 = 1_000_000_000_000;

/// An instant of simulated time, in picoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

/// A span of simulated time, in picoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimDuration(pub u64);

/// A number of bytes (octets).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes(pub u64);

/// A data rate in bits per second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BitRate(pub u64);

/// A physical length (cable length), in millimetres.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Length(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);
    pub fn ps(self) -> u64 {
        self.0
    }
    /// Time elapsed since `earlier`; zero if `earlier` is later (saturating).
    pub fn since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
    /// `self + d`, or [`SimTime::MAX`] (a time that never comes) if that overflows.
    pub fn saturating_add(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_SEC as f64
    }
    /// Microseconds since the start of the run, for reports and plots.
    pub fn as_us_f64(self) -> f64 {
        self.0 as f64 / 1_000_000.0
    }
}

impl SimDuration {
    pub const ZERO: SimDuration = SimDuration(0);
    pub const fn from_ps(ps: u64) -> Self {
        SimDuration(ps)
    }
    pub const fn from_ns(ns: u64) -> Self {
        SimDuration(ns * 1_000)
    }
    pub const fn from_us(us: u64) -> Self {
        SimDuration(us * 1_000_000)
    }
    pub const fn from_ms(ms: u64) -> Self {
        SimDuration(ms * 1_000_000_000)
    }
    pub fn ps(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_SEC as f64
    }
    pub fn as_ns_f64(self) -> f64 {
        self.0 as f64 / 1_000.0
    }
    pub fn as_us_f64(self) -> f64 {
        self.0 as f64 / 1_000_000.0
    }
    /// Whole microseconds (rounded down), for messages.
    pub fn whole_us(self) -> u64 {
        self.0 / 1_000_000
    }
}

impl Bytes {
    pub const ZERO: Bytes = Bytes(0);
    pub const fn new(n: u64) -> Self {
        Bytes(n)
    }
    pub fn get(self) -> u64 {
        self.0
    }
    pub fn bits(self) -> u128 {
        self.0 as u128 * 8
    }
    /// Number of `cell`-byte cells this many bytes occupy (a partial cell counts whole).
    pub fn cells(self, cell: Bytes) -> u64 {
        debug_assert!(cell.0 > 0);
        self.0.div_ceil(cell.0)
    }
}

impl BitRate {
    pub const fn from_gbps(g: u64) -> Self {
        BitRate(g * 1_000_000_000)
    }
    pub const fn from_mbps(m: u64) -> Self {
        BitRate(m * 1_000_000)
    }
    pub fn bps(self) -> u64 {
        self.0
    }
    pub fn as_gbps_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// Bytes this rate carries in `d`, rounded down.
    pub fn bytes_in(self, d: SimDuration) -> Bytes {
        Bytes((self.0 as u128 * d.0 as u128 / (8 * PS_PER_SEC as u128)) as u64)
    }
}

impl Length {
    pub const fn from_m(m: u64) -> Self {
        Length(m * 1000)
    }
    pub fn mm(self) -> u64 {
        self.0
    }
    pub fn as_m_f64(self) -> f64 {
        self.0 as f64 / 1000.0
    }
}

/// Time to clock `bytes` onto a link of rate `rate`, rounded **up** to the next picosecond.
///
/// Rounding up keeps a link from ever exceeding its line rate. For every standard
/// Ethernet/IB rate (10, 25, 40, 50, 100, 200, 400, 800 Gb/s) a byte is a whole number of
/// picoseconds (800, 320, 200, 160, 80, 40, 20, 10 ps), so the result is exact there.
/// This is the only serialisation formula in fabriclab; everything else calls it.
pub fn serialization(bytes: Bytes, rate: BitRate) -> SimDuration {
    debug_assert!(rate.0 > 0, "serialization at zero rate");
    let num = bytes.bits() * PS_PER_SEC as u128;
    SimDuration(num.div_ceil(rate.0 as u128) as u64)
}

/// Propagation delay over `len` of cable at `ps_per_m` picoseconds per metre, rounded up.
pub fn propagation(len: Length, ps_per_m: u64) -> SimDuration {
    SimDuration((len.0 as u128 * ps_per_m as u128).div_ceil(1000) as u64)
}

/// The nominal signal propagation delay used when a link gives only its length: 5 ns/m.
///
/// Source: IEEE 802.1Qbb-2011 Annex N (headroom calculation) uses the speed of light in
/// fibre, about 2/3 c, i.e. ~5 ns/m; Cisco's PFC headroom guide quotes 476 ns/100 m for
/// twinax and 513 ns/100 m for fibre.
pub const DEFAULT_PROPAGATION_PS_PER_M: u64 = 5_000;

macro_rules! arith {
    ($t:ident) => {
        impl Add for $t {
            type Output = $t;
            fn add(self, o: $t) -> $t {
                $t(self.0 + o.0)
            }
        }
        impl Sub for $t {
            type Output = $t;
            fn sub(self, o: $t) -> $t {
                $t(self.0 - o.0)
            }
        }
        impl AddAssign for $t {
            fn add_assign(&mut self, o: $t) {
                self.0 += o.0
            }
        }
        impl SubAssign for $t {
            fn sub_assign(&mut self, o: $t) {
                self.0 -= o.0
            }
        }
        impl Mul<u64> for $t {
            type Output = $t;
            fn mul(self, k: u64) -> $t {
                $t(self.0 * k)
            }
        }
        impl Div<u64> for $t {
            type Output = $t;
            fn div(self, k: u64) -> $t {
                $t(self.0 / k)
            }
        }
        impl std::iter::Sum for $t {
            fn sum<I: Iterator<Item = $t>>(it: I) -> $t {
                $t(it.map(|x| x.0).sum())
            }
        }
    };
}
arith!(SimDuration);
arith!(Bytes);
arith!(BitRate);
arith!(Length);

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    fn add(self, d: SimDuration) -> SimTime {
        SimTime(self.0 + d.0)
    }
}
impl AddAssign<SimDuration> for SimTime {
    fn add_assign(&mut self, d: SimDuration) {
        self.0 += d.0
    }
}
impl Sub<SimTime> for SimTime {
    type Output = SimDuration;
    fn sub(self, o: SimTime) -> SimDuration {
        SimDuration(self.0 - o.0)
    }
}

fn fmt_scaled(f: &mut fmt::Formatter<'_>, v: u64, steps: &[(u64, &str)]) -> fmt::Result {
    let (div, unit) = steps.iter().rev().find(|(d, _)| v >= *d).copied().unwrap_or(steps[0]);
    if v.is_multiple_of(div) {
        write!(f, "{}{}", v / div, unit)
    } else {
        let prec = f.precision().unwrap_or(3);
        write!(f, "{:.*}{}", prec, v as f64 / div as f64, unit)
    }
}

impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_scaled(f, self.0, &[(1, "ps"), (1_000, "ns"), (1_000_000, "us"), (1_000_000_000, "ms"), (PS_PER_SEC, "s")])
    }
}
impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        SimDuration(self.0).fmt(f)
    }
}
impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_scaled(f, self.0, &[(1, "B"), (1_000, "KB"), (1_000_000, "MB"), (1_000_000_000, "GB")])
    }
}
impl fmt::Display for BitRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_scaled(f, self.0, &[(1, "bps"), (1_000, "Kbps"), (1_000_000, "Mbps"), (1_000_000_000, "Gbps"), (1_000_000_000_000, "Tbps")])
    }
}
impl fmt::Display for Length {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_scaled(f, self.0, &[(1, "mm"), (10, "cm"), (1000, "m"), (1_000_000, "km")])
    }
}

macro_rules! serde_str {
    ($t:ident, $expect:literal) => {
        impl FromStr for $t {
            type Err = ParseError;
            fn from_str(s: &str) -> Result<Self, ParseError> {
                parse::$t(s).map($t)
            }
        }
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(&format_args!("{}{}", self.0, parse::canonical_suffix::$t))
            }
        }
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> serde::de::Visitor<'de> for V {
                    type Value = $t;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($expect)
                    }
                    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<$t, E> {
                        s.parse().map_err(|e: ParseError| E::custom(format!("{e}; expected {}", $expect)))
                    }
                    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<$t, E> {
                        Err(E::custom(format!("bare number {v} has no unit; expected {}", $expect)))
                    }
                    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<$t, E> {
                        Err(E::custom(format!("bare number {v} has no unit; expected {}", $expect)))
                    }
                    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<$t, E> {
                        Err(E::custom(format!("bare number {v} has no unit; expected {}", $expect)))
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}
serde_str!(SimDuration, "a duration with a unit, e.g. \"1us\", \"500ns\", \"2.5ms\" (ps, ns, us, ms, s)");
serde_str!(Bytes, "a size with a unit, e.g. \"4096B\", \"1MB\" (10^6 B) or \"1MiB\" (2^20 B)");
serde_str!(BitRate, "a rate with a unit, e.g. \"100Gbps\", \"400Gbps\", \"5Mbps\"");
serde_str!(Length, "a length with a unit, e.g. \"3m\", \"0.5m\", \"300m\", \"2km\"");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_exact_at_standard_rates() {
        for (g, ps) in [(10, 800), (25, 320), (40, 200), (50, 160), (100, 80), (200, 40), (400, 20), (800, 10)] {
            assert_eq!(serialization(Bytes(1), BitRate::from_gbps(g)), SimDuration(ps), "{g}G");
            assert_eq!(serialization(Bytes(4178), BitRate::from_gbps(g)), SimDuration(ps * 4178));
        }
    }

    #[test]
    fn serialization_rounds_up() {
        // 1 byte at 3 bit/s: 8/3 s = 2.666.. s -> rounded up.
        assert_eq!(serialization(Bytes(1), BitRate(3)).0, 2_666_666_666_667);
    }

    #[test]
    fn propagation_default() {
        assert_eq!(propagation(Length::from_m(100), DEFAULT_PROPAGATION_PS_PER_M), SimDuration::from_ns(500));
        assert_eq!(propagation(Length(1), DEFAULT_PROPAGATION_PS_PER_M), SimDuration(5));
    }

    #[test]
    fn display() {
        assert_eq!(SimDuration::from_us(3).to_string(), "3us");
        assert_eq!(SimDuration(10_360_000_000).to_string(), "10.360ms");
        assert_eq!(Bytes(1_000_000).to_string(), "1MB");
        assert_eq!(BitRate::from_gbps(400).to_string(), "400Gbps");
        assert_eq!(Length(500).to_string(), "50cm");
    }

    #[test]
    fn bytes_in() {
        assert_eq!(BitRate::from_gbps(100).bytes_in(SimDuration::from_us(1)), Bytes(12_500));
    }
}
