//! ECN marking at a switch egress queue: the RED/WRED rule as DCQCN uses it.
//!
//! Marking probability as a function of the instantaneous egress queue length `q`
//! (Floyd & Jacobson, "Random Early Detection Gateways", IEEE/ACM ToN 1993, with the
//! averaging weight set to 1 as DCQCN recommends: Zhu et al., SIGCOMM 2015, §3.1):
//! 0 below Kmin, `Pmax·(q−Kmin)/(Kmax−Kmin)` between, 1 above Kmax.

use serde::{Deserialize, Serialize};
use units::Bytes;

/// RED thresholds of one egress queue.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Red {
    pub kmin: Bytes,
    pub kmax: Bytes,
    /// Marking probability at Kmax, in [0, 1].
    pub pmax: f64,
}

impl Red {
    /// Probability that a packet arriving to a queue of `q` bytes is marked CE.
    pub fn mark_probability(&self, q: Bytes) -> f64 {
        if q <= self.kmin {
            0.0
        } else if q > self.kmax || self.kmax == self.kmin {
            1.0
        } else {
            self.pmax * (q.0 - self.kmin.0) as f64 / (self.kmax.0 - self.kmin.0) as f64
        }
    }
}

/// Published settings, for `auto` and the planner.
///
/// HPCC's ns-3 DCQCN experiments (Li et al., SIGCOMM 2019, `mix/config.txt` KMAX_MAP /
/// KMIN_MAP): 100/400 KB at 25 Gb/s and 400/1600 KB at 100 Gb/s, Pmax 0.2 — i.e. Kmin
/// scales as 4 KB per Gb/s.
pub fn hpcc_thresholds(rate_gbps: u64) -> Red {
    Red { kmin: Bytes(4_000 * rate_gbps), kmax: Bytes(16_000 * rate_gbps), pmax: 0.2 }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn red_rule() {
        let r = Red { kmin: Bytes(100_000), kmax: Bytes(400_000), pmax: 0.2 };
        assert_eq!(r.mark_probability(Bytes(100_000)), 0.0);
        assert!((r.mark_probability(Bytes(250_000)) - 0.1).abs() < 1e-12);
        assert!((r.mark_probability(Bytes(400_000)) - 0.2).abs() < 1e-12);
        assert_eq!(r.mark_probability(Bytes(400_001)), 1.0);
        assert_eq!(hpcc_thresholds(100).kmin, Bytes(400_000));
        assert_eq!(hpcc_thresholds(25).kmax, Bytes(400_000));
    }
}
