//! Port-to-port pipeline latency of a switch, per fabric, with where each figure comes from.
//!
//! `switch_latency = "auto"` in a scenario resolves here, for both fabrics, so that
//! `compare` charges each side its own sourced figure and says where it came from:
//!
//! * InfiniBand: by the link generation ([`crate::ib::Generation::switch_latency`]).
//! * RoCEv2: by the Ethernet switch ASIC the scenario names (`[roce] switch`, one of
//!   [`EthernetSwitch::NAMES`]) when a figure for it has been published; otherwise — no
//!   switch named, or none published for it — the InfiniBand figure of the same link speed,
//!   so the comparison does not hinge on a number nobody published. The result says which
//!   ([`SwitchLatency::same_as_infiniband`]) and every output shows it.
//!
//! # What has been published for Ethernet switch ASICs
//! Searched: NVIDIA/Mellanox Spectrum product pages and press coverage, Broadcom
//! Tomahawk announcements, Arista 7060/7800 data sheets (as far as the sources available
//! to this project reach; see each variant). No NVIDIA datasheet (SN2000..SN5000) found
//! gives a port-to-port latency; the figures below are the vendor's launch figures as
//! reported by the trade press, or an analyst's. Where nothing was found, the variant says
//! so and [`EthernetSwitch::published`] is `None`.
//!
//! SONiC's `asic_table.j2` gives every Spectrum a `pipeline_latency` of 19 KiB (42 KiB on
//! Spectrum-6, [`crate::sonic`]): a headroom budget in bytes, not a forwarding latency, so it
//! is not used here.
//!
//! # Left out
//! Latency that depends on packet size, port speed pairing or load: one fixed figure per
//! switch, charged once per switch hop (the simulator adds it to every forwarded packet).

use std::fmt;

use units::{BitRate, SimDuration};

use crate::ib::Generation;
use crate::sonic::Spectrum;

/// A published port-to-port latency and where it was published.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Published {
    pub latency: SimDuration,
    /// The document, its date and address, and what kind of source it is.
    pub source: &'static str,
}

/// Spectrum (SN2000 series, 100 GbE): 300 ns port-to-port, from Mellanox's launch of
/// Spectrum on 18 June 2015 ("Low latency: 300 nsec for 100 GbE port-to-port, and flat
/// latency across L2 and L3 forwarding"), as listed by TechRepublic,
/// <https://www.techrepublic.com/article/mellanoxs-end-to-end-ethernet-solutions-reach-impressive-100-gbsec/>.
/// The Mellanox press release itself was not among the sources found.
const SPECTRUM_1: Published = Published {
    latency: SimDuration::from_ns(300),
    source: "Mellanox Spectrum launch, 2015-06-18: \"300 nsec for 100 GbE port-to-port\" (vendor figure as listed by TechRepublic, \
             https://www.techrepublic.com/article/mellanoxs-end-to-end-ethernet-solutions-reach-impressive-100-gbsec/)",
};

/// Spectrum-2 (SN3000 series): 300 ns, from the Linley Group's newsletter "Spectrum-2
/// Debuts 200GbE" (Loring Wirbel, 31 July 2017: "a single-chip device with 300ns latency"),
/// <https://www.linleygroup.com/newsletters/newsletter_detail.php?num=5734&year=2017&tag=3>.
/// An analyst's report of Mellanox's briefing: no NVIDIA datasheet figure was found.
const SPECTRUM_2: Published = Published {
    latency: SimDuration::from_ns(300),
    source: "Linley Group newsletter \"Spectrum-2 Debuts 200GbE\", 2017-07-31: \"300ns latency\" (analyst report; no NVIDIA datasheet \
             figure found), https://www.linleygroup.com/newsletters/newsletter_detail.php?num=5734&year=2017&tag=3",
};

/// Tomahawk Ultra (Broadcom, 51.2 Tb/s, shipping July 2025): 250 ns "at full 51.2 Tbps
/// throughput", from Broadcom's launch as reported by Techzine,
/// <https://www.techzine.eu/news/infrastructure/133074/broadcom-launches-tomahawk-ultra-with-250ns-network-latency>,
/// and Broadcom's Hot Chips 2025 talk as covered by ServeTheHome,
/// <https://www.servethehome.com/broadcom-tomahawk-ultra-at-hot-chips-2025>.
const TOMAHAWK_ULTRA: Published = Published {
    latency: SimDuration::from_ns(250),
    source: "Broadcom Tomahawk Ultra launch, July 2025: \"250ns latency at 51.2 Tbps\" (vendor figure as reported by Techzine, \
             https://www.techzine.eu/news/infrastructure/133074/broadcom-launches-tomahawk-ultra-with-250ns-network-latency)",
};

/// An Ethernet switch ASIC a RoCEv2 scenario can name (`[roce] switch`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EthernetSwitch {
    /// NVIDIA (Mellanox) Spectrum-1 .. Spectrum-6.
    Spectrum(Spectrum),
    /// Broadcom StrataXGS Tomahawk 1 .. 6.
    Tomahawk(u8),
    /// Broadcom Tomahawk Ultra.
    TomahawkUltra,
}

impl EthernetSwitch {
    /// The names a scenario may give, in the order error messages list them.
    pub const NAMES: [&'static str; 13] = [
        "spectrum-1",
        "spectrum-2",
        "spectrum-3",
        "spectrum-4",
        "spectrum-5",
        "spectrum-6",
        "tomahawk-1",
        "tomahawk-2",
        "tomahawk-3",
        "tomahawk-4",
        "tomahawk-5",
        "tomahawk-6",
        "tomahawk-ultra",
    ];

    /// Parses one of [`Self::NAMES`] ("spectrum" and "tomahawk" mean the first generation).
    pub fn from_name(s: &str) -> Option<EthernetSwitch> {
        match s {
            "spectrum" => return Some(EthernetSwitch::Spectrum(Spectrum::Spectrum1)),
            "tomahawk" => return Some(EthernetSwitch::Tomahawk(1)),
            "tomahawk-ultra" => return Some(EthernetSwitch::TomahawkUltra),
            _ => {}
        }
        if let Some(g) = Spectrum::from_name(s) {
            return Some(EthernetSwitch::Spectrum(g));
        }
        let n: u8 = s.strip_prefix("tomahawk-")?.parse().ok()?;
        (1..=6).contains(&n).then_some(EthernetSwitch::Tomahawk(n))
    }

    /// The vendor's port-to-port latency where one has been published (see the module
    /// docs); `None` where none was found: Spectrum-3 (SN4000), Spectrum-4 (SN5000,
    /// whose announcement promises "true, port-to-port, cut-through latency" without a
    /// number), Spectrum-5/-6, and Tomahawk 1 to 6 (Broadcom's announcements of these
    /// give bandwidth, radix and buffer, not latency; Arista's 7060X data sheets for them
    /// were not among the sources found).
    pub fn published(self) -> Option<Published> {
        match self {
            EthernetSwitch::Spectrum(Spectrum::Spectrum1) => Some(SPECTRUM_1),
            EthernetSwitch::Spectrum(Spectrum::Spectrum2) => Some(SPECTRUM_2),
            EthernetSwitch::TomahawkUltra => Some(TOMAHAWK_ULTRA),
            EthernetSwitch::Spectrum(_) | EthernetSwitch::Tomahawk(_) => None,
        }
    }
}

impl fmt::Display for EthernetSwitch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EthernetSwitch::Spectrum(g) => write!(f, "{}", g.name()),
            EthernetSwitch::Tomahawk(n) => write!(f, "tomahawk-{n}"),
            EthernetSwitch::TomahawkUltra => write!(f, "tomahawk-ultra"),
        }
    }
}

/// A resolved switch latency and its provenance, as reports print it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchLatency {
    pub latency: SimDuration,
    /// Where the figure comes from, in one line.
    pub source: String,
    /// No figure was published for this fabric's switch (or none was named), so the
    /// InfiniBand figure of the same speed is used: both sides get the same value.
    pub same_as_infiniband: bool,
}

/// InfiniBand `auto`: the figure of the generation whose 4x rate is `rate`.
pub fn infiniband(g: Generation) -> SwitchLatency {
    SwitchLatency { latency: g.switch_latency(), source: format!("{} switch, {}", g.name(), g.switch_latency_source()), same_as_infiniband: false }
}

/// RoCEv2 `auto`: the published figure of `switch`; without one (or without a switch),
/// the InfiniBand figure of the generation at `rate` (the fabric's fastest link).
/// Errors say why when neither exists; the caller names the field.
pub fn roce(switch: Option<EthernetSwitch>, rate: BitRate) -> Result<SwitchLatency, String> {
    if let Some(p) = switch.and_then(EthernetSwitch::published) {
        let s = switch.expect("published implies named");
        return Ok(SwitchLatency { latency: p.latency, source: format!("{s}, {}", p.source), same_as_infiniband: false });
    }
    let why = match switch {
        Some(s) => format!("no published figure for {s}"),
        None => "no switch named (`[roce] switch`)".to_string(),
    };
    let Some(g) = Generation::of(rate) else {
        let named: Vec<String> = EthernetSwitch::NAMES
            .iter()
            .filter(|n| EthernetSwitch::from_name(n).and_then(EthernetSwitch::published).is_some())
            .map(|n| n.to_string())
            .collect();
        return Err(format!(
            "\"auto\": {why}, and {rate} matches no InfiniBand generation to take the same value from; \
             name a switch with a published figure ({}) or give a time",
            named.join(", ")
        ));
    };
    let ib = infiniband(g);
    Ok(SwitchLatency { latency: ib.latency, source: format!("{why}; same as InfiniBand: {}", ib.source), same_as_infiniband: true })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for n in EthernetSwitch::NAMES {
            assert_eq!(EthernetSwitch::from_name(n).map(|s| s.to_string()).as_deref(), Some(n));
        }
        assert_eq!(EthernetSwitch::from_name("spectrum"), Some(EthernetSwitch::Spectrum(Spectrum::Spectrum1)));
        for bad in ["spectrum-0", "spectrum-7", "tomahawk-7", "trident-4", "", "Spectrum-2"] {
            assert_eq!(EthernetSwitch::from_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn published_figures_win_and_the_rest_borrow_infiniband() {
        let sp2 = roce(EthernetSwitch::from_name("spectrum-2"), BitRate::from_gbps(200)).unwrap();
        assert_eq!((sp2.latency, sp2.same_as_infiniband), (SimDuration::from_ns(300), false));
        assert!(sp2.source.contains("linleygroup.com"), "{}", sp2.source);
        let sp4 = roce(EthernetSwitch::from_name("spectrum-4"), BitRate::from_gbps(400)).unwrap();
        assert_eq!((sp4.latency, sp4.same_as_infiniband), (Generation::Ndr.switch_latency(), true));
        assert!(sp4.source.starts_with("no published figure for spectrum-4; same as InfiniBand: NDR"), "{}", sp4.source);
        let none = roce(None, BitRate::from_gbps(100)).unwrap();
        assert_eq!((none.latency, none.same_as_infiniband), (SimDuration::from_ns(90), true));
        // A published figure needs no InfiniBand speed; a borrowed one does.
        assert_eq!(roce(EthernetSwitch::from_name("spectrum"), BitRate::from_gbps(25)).unwrap().latency, SimDuration::from_ns(300));
        let e = roce(EthernetSwitch::from_name("tomahawk-3"), BitRate::from_gbps(25)).unwrap_err();
        assert!(e.contains("no published figure for tomahawk-3") && e.contains("spectrum-1, spectrum-2, tomahawk-ultra"), "{e}");
    }
}
