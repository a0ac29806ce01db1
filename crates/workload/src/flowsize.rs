//! Flow-size distributions and Poisson background traffic, the way the HPCC simulator's
//! `traffic_gen` builds them (Li et al., "HPCC: High Precision Congestion Control",
//! SIGCOMM 2019; its `traffic_gen/traffic_gen.py` and `custom_rand.py`): flow sizes drawn
//! from a piecewise-linear CDF, arrivals at each host a Poisson process whose rate gives
//! the requested load of the host's link, destinations uniform over the other hosts.

/// A flow-size CDF: points (size in bytes, cumulative percent), both non-decreasing,
/// from 0 % to 100 %.
#[derive(Clone, Debug, PartialEq)]
pub struct Cdf {
    points: Vec<(f64, f64)>,
}

impl Cdf {
    /// Parses the `<size> <cumulative percent>` lines of shared/data/flow-size-cdfs.
    /// Errors name the line (1-based) and what is wrong.
    pub fn parse(text: &str) -> Result<Cdf, String> {
        let mut points: Vec<(f64, f64)> = vec![];
        for (i, line) in text.lines().enumerate() {
            let l = line.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            let mut it = l.split_whitespace();
            let (Some(a), Some(b), None) = (it.next(), it.next(), it.next()) else {
                return Err(format!("line {}: expected `<size in bytes> <cumulative percent>`", i + 1));
            };
            let size: f64 = a.parse().map_err(|_| format!("line {}: `{a}` is not a size in bytes", i + 1))?;
            let pct: f64 = b.parse().map_err(|_| format!("line {}: `{b}` is not a percentage", i + 1))?;
            if size < 0.0 || !size.is_finite() || !(0.0..=100.0).contains(&pct) {
                return Err(format!("line {}: size must be ≥ 0 and the percentage within 0..100", i + 1));
            }
            if let Some(&(ps, pp)) = points.last() {
                if size < ps || pct < pp {
                    return Err(format!("line {}: sizes and percentages must not decrease", i + 1));
                }
            }
            points.push((size, pct));
        }
        let cdf = match (points.first(), points.last()) {
            (Some(_), Some(&(_, last))) if points.len() >= 2 && last == 100.0 => Cdf { points },
            _ => return Err("a CDF needs at least two points and must end at 100 %".into()),
        };
        // Flows arrive a mean size apart in time (`poisson`): a mean of 0 would never
        // reach the end of the duration, and `sample` gives every flow 1 byte at least.
        if cdf.mean() < 1.0 {
            return Err(format!("its flows average {} bytes; expected at least 1 byte", cdf.mean()));
        }
        Ok(cdf)
    }

    /// The size at uniform draw `u` in [0, 1): linear between the points around it.
    pub fn sample(&self, u: f64) -> u64 {
        let y = u * 100.0;
        let p = &self.points;
        let i = p.partition_point(|&(_, c)| c <= y).clamp(1, p.len() - 1);
        let ((x0, y0), (x1, y1)) = (p[i - 1], p[i]);
        let x = if y1 > y0 { x0 + (x1 - x0) * (y - y0) / (y1 - y0) } else { x1 };
        (x.round() as u64).max(1)
    }

    /// The largest size [`Cdf::sample`] can draw, in bytes (the last point's).
    pub fn largest(&self) -> u64 {
        self.sample(1.0)
    }

    /// Mean flow size in bytes (the integral of the piecewise-linear CDF).
    pub fn mean(&self) -> f64 {
        self.points.windows(2).map(|w| (w[1].1 - w[0].1) / 100.0 * (w[0].0 + w[1].0) / 2.0).sum()
    }
}

/// One generated flow: when, from which host, to which, how many bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    pub at_ps: u64,
    pub src: u32,
    pub dst: u32,
    pub bytes: u64,
}

/// Poisson arrivals at each of `hosts` hosts over `[0, duration_ps)`, flow sizes from
/// `cdf`, offered load `load` of a `link_bps` link per host, destinations uniform among
/// the other hosts. `uniform` yields draws in [0, 1) (the caller's seeded stream).
/// Arrivals come sorted by time, then source.
pub fn poisson(cdf: &Cdf, hosts: u32, load: f64, link_bps: u64, duration_ps: u64, uniform: &mut dyn FnMut() -> f64) -> Vec<Arrival> {
    assert!(hosts >= 2 && load > 0.0, "checked by the caller");
    // Mean gap between a host's flows: mean size / (load × rate).
    let mean_gap_ps = cdf.mean() * 8.0 / (load * link_bps as f64) * 1e12;
    let mut out = vec![];
    for src in 0..hosts {
        let mut t = 0.0f64;
        loop {
            t += -mean_gap_ps * (1.0 - uniform()).ln();
            if t >= duration_ps as f64 {
                break;
            }
            let mut dst = (uniform() * (hosts - 1) as f64) as u32;
            if dst >= src {
                dst += 1;
            }
            out.push(Arrival { at_ps: t as u64, src, dst: dst.min(hosts - 1), bytes: cdf.sample(uniform()) });
        }
    }
    out.sort_by_key(|a| (a.at_ps, a.src));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const WEB: &str = "0 0\n10000 15\n20000 20\n30000 30\n50000 40\n80000 53\n200000 60\n1000000 70\n2000000 80\n5000000 90\n10000000 97\n30000000 100\n";

    #[test]
    fn samples_follow_the_cdf() {
        let c = Cdf::parse(WEB).unwrap();
        assert_eq!(c.sample(0.0), 1);
        assert_eq!(c.sample(0.15), 10000);
        assert_eq!(c.sample(0.175), 15000);
        assert_eq!(c.sample(0.999_999), 29_999_333); // 10 MB + 20 MB × 2.9999 / 3
                                                     // The web-search mean, by hand: Σ Δp × segment midpoint = 1,711,250 B.
        let m = c.mean();
        assert!((m - 1_711_250.0).abs() < 1e-6, "{m}");
    }

    #[test]
    fn poisson_offers_the_requested_load() {
        let c = Cdf::parse(WEB).unwrap();
        let mut s = 0x2545F4914F6CDD1Du64;
        let mut u = move || {
            // xorshift64*: a fixed stream for the test.
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            (s.wrapping_mul(0x2545F4914F6CDD1D) >> 11) as f64 / (1u64 << 53) as f64
        };
        let (hosts, load, rate, dur) = (16, 0.4, 100_000_000_000u64, 200_000_000_000u64); // 200 ms
        let a = poisson(&c, hosts, load, rate, dur, &mut u);
        let bytes: u64 = a.iter().map(|x| x.bytes).sum();
        let offered = bytes as f64 * 8.0 / (dur as f64 / 1e12) / (hosts as f64 * rate as f64);
        assert!((offered - load).abs() < 0.05, "offered {offered}");
        assert!(a.iter().all(|x| x.src != x.dst && x.dst < hosts && x.at_ps < dur));
        assert!(a.windows(2).all(|w| (w[0].at_ps, w[0].src) <= (w[1].at_ps, w[1].src)));
    }

    #[test]
    fn bad_cdfs_are_refused() {
        assert!(Cdf::parse("0 0\n100 50\n").unwrap_err().contains("100 %"));
        assert!(Cdf::parse("0 0\n100 60\n50 100\n").unwrap_err().contains("line 3"));
        assert!(Cdf::parse("0 0\nx 100\n").unwrap_err().contains("line 2"));
        assert!(Cdf::parse("0 0 1\n").unwrap_err().contains("line 1"));
        // Flows of 0 bytes only: Poisson arrivals 0 ps apart, which never end.
        assert_eq!(Cdf::parse("0 0\n0 100\n").unwrap_err(), "its flows average 0 bytes; expected at least 1 byte");
        assert!(Cdf::parse("0 0\n1e-300 100\n").is_err());
    }
}
