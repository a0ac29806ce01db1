//! InfiniBand congestion control (IBTA Vol. 1 Annex A10), as a pure state machine.
//!
//! * Switch (A10.2.1, SwitchCongestionSetting / SwitchPortCongestionSetting): a port whose
//!   output VL queue is at or above the threshold, and which is the root of the congestion
//!   (it has credits to send; a port starved of credits is a victim and marks only when
//!   its VictimMask bit is set), marks eligible packets (at least `packet_size`) with
//!   FECN, one in every `marking_rate` ("the mean number of packets between markings";
//!   fabriclab marks deterministically every n-th).
//! * Destination CA (A10.2.3): a FECN-marked packet makes it return a BECN to the source
//!   QP; fabriclab sends a congestion notification packet (CNP) for each.
//! * Source CA (A10.2.2, CACongestionSetting and CongestionControlTable): on a BECN the
//!   QP's table index CCTI grows by `ccti_increase` (up to the table's last entry, CCTI_Limit);
//!   every `ccti_timer` it falls by one, down to `ccti_min`. The table entry CCT[CCTI] sets
//!   the inter-packet delay. The spec encodes an entry as a 14-bit multiplier and a 2-bit
//!   shift; fabriclab takes each entry as the injection delay *d* in units of the packet's
//!   own wire time, so a QP at index i sends at line / (1 + CCT[i]). This is a stated
//!   simplification of the encoding, not of the mechanism.
//!
//! OpenSM ships congestion control disabled with every parameter 0 (`osm_subnet.c`), so
//! there are no vendor defaults to inherit: a scenario states every value.

use units::SimDuration;

/// The CC parameters a subnet manager would program.
#[derive(Clone, Debug, PartialEq)]
pub struct IbCcParams {
    /// Output VL queue depth at which a switch port starts marking FECN.
    pub threshold_bytes: u64,
    /// Mark one in this many eligible packets (1: every one).
    pub marking_rate: u32,
    /// Packets smaller than this are never marked.
    pub packet_size_bytes: u64,
    /// Ports waiting for credits (victims, not roots, of congestion) mark too
    /// (SwitchCongestionSetting:VictimMask set for every port).
    pub mark_victims: bool,
    pub ccti_increase: u32,
    pub ccti_min: u32,
    /// CCTI falls by one each time this timer expires (CCTI_Timer, in 1.024 µs units in the
    /// MAD; a time here).
    pub ccti_timer: SimDuration,
    /// Injection delay per CCTI, in packet times; its length − 1 is CCTI_Limit.
    pub cct: Vec<f64>,
}

/// A source QP's congestion control agent.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cca {
    pub ccti: u32,
    /// Generation of the running CCTI timer (stale timer events are ignored).
    pub gen: u32,
    pub timer_running: bool,
}

impl Cca {
    /// A BECN arrived. Returns whether the caller must start the CCTI timer.
    pub fn on_becn(&mut self, p: &IbCcParams) -> bool {
        let limit = p.cct.len().saturating_sub(1) as u32;
        self.ccti = (self.ccti + p.ccti_increase).min(limit);
        if self.timer_running {
            false
        } else {
            self.timer_running = true;
            self.gen += 1;
            true
        }
    }

    /// The CCTI timer expired. Returns whether it keeps running.
    pub fn on_timer(&mut self, p: &IbCcParams) -> bool {
        if self.ccti > p.ccti_min {
            self.ccti -= 1;
        }
        self.timer_running = self.ccti > p.ccti_min;
        self.timer_running
    }

    /// Delay after a packet that took `wire_ps` on the wire, before the next may start.
    pub fn gap_ps(&self, p: &IbCcParams, wire_ps: u64) -> u64 {
        let d = p.cct.get(self.ccti as usize).copied().unwrap_or(0.0);
        (wire_ps as f64 * d).round() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> IbCcParams {
        IbCcParams {
            threshold_bytes: 10_000,
            marking_rate: 1,
            packet_size_bytes: 0,
            mark_victims: false,
            ccti_increase: 2,
            ccti_min: 0,
            ccti_timer: SimDuration::from_us(10),
            cct: (0..8).map(|i| i as f64 * 0.5).collect(),
        }
    }

    #[test]
    fn becn_raises_index_to_the_limit_and_the_timer_walks_it_back() {
        let p = params();
        let mut c = Cca::default();
        assert!(c.on_becn(&p), "first BECN starts the timer");
        assert!(!c.on_becn(&p), "timer already running");
        assert_eq!(c.ccti, 4);
        for _ in 0..5 {
            c.on_becn(&p);
        }
        assert_eq!(c.ccti, 7, "capped at CCTI_Limit = len - 1");
        assert_eq!(c.gap_ps(&p, 1000), 3500);
        let mut ticks = 0;
        while c.on_timer(&p) {
            ticks += 1;
        }
        assert_eq!((ticks, c.ccti), (6, 0));
        assert_eq!(c.gap_ps(&p, 1000), 0);
    }
}
