//! TODO doc

use super::*;

impl Sim {
    pub(super) fn on_pfc(&mut self, now: u64, port: u32, mask: u8, quanta: [u16; 8]) {
        let pi = port as usize;
        let x = now + self.response[pi];
        let mut wake = false;
        for (p, &q) in quanta.iter().enumerate() {
            if mask & (1 << p) == 0 {
                continue;
            }
            self.stats.ports[pi].pfc_rx[p] += 1;
            if !self.pfc_off.is_empty() && self.pfc_off[pi] {
                continue; // PFC disabled on this port: pause frames are not honoured
            }
            if !self.wd.is_empty() {
                let w = &mut self.wd[pi * 8 + p];
                w.last_pfc = now;
                if w.storm {
                    continue; // the watchdog ignores pause frames on a queue in storm
                }
            }
            let new_until = x + q as u64 * self.quantum[pi];
            let c = &mut self.cls[pi * 8 + p];
            let (from, until) = (c.pause_from, c.pause_until);
            let starts = from >= until || x >= until;
            if from < until && x >= until {
                self.stats.ports[pi].paused_ps[p] += until - from;
                c.pause_from = x;
            } else if from >= until {
                c.pause_from = x;
            }
            c.pause_until = new_until;
            if quanta[p] == 0 {
                wake = true;
            }
            if starts && quanta[p] > 0 {
                if !self.first_block[pi] {
                    self.first_block[pi] = true;
                    self.incident(x, "paused", Some(port), Some(p as u8), format!("first pause ({} quanta)", quanta[p]));
                }
                if !self.wd.is_empty() && self.ports[pi].flags & P_SWITCH != 0 && !self.wd[pi * 8 + p].armed {
                    self.wd[pi * 8 + p].armed = true;
                    let d = self.p.pfc.watchdog.expect("watchdog").detection.ps();
                    self.q.schedule(SimTime(x + d), Ev::WdCheck { port, tc: p as u8 });
                }
            }
            if self.stats.pause_log.len() < crate::stats::PAUSE_LOG_CAP {
                self.stats.pause_log.push((now, port, p as u8, quanta[p]));
            }
        }
        if wake {
            self.kick_at(port, x);
        }
    }

    pub(super) fn queue_pfc(&mut self, now: u64, port: u32, pg: u8, quanta: u16) {
        let pi = port as usize;
        for tc in 0..8 {
            if self.p.tc_to_pg[tc] == pg && self.p.lossless[tc] {
                self.ports[pi].pfc_mask |= 1 << tc;
                self.pfc_quanta[pi][tc] = quanta;
            }
        }
        self.try_tx(now, port);
    }

    pub(super) fn schedule_refresh(&mut self, now: u64, port: u32, pg: u8, gen: u32) {
        let period = match self.p.pfc.refresh {
            Some(r) => r.ps(),
            None => self.p.pfc.quanta as u64 * self.quantum[port as usize] / 2,
        };
        if period > 0 {
            self.q.schedule(SimTime(now + period), Ev::PfcRefresh { port, pg, gen });
        }
    }

    /// A NIC asserts (or releases) pause on every lossless priority towards its switch
    /// (RoCEv2; an InfiniBand HCA withholds credits instead).
    pub(super) fn nic_pause(&mut self, now: u64, ep: u32, on: bool) {
        if !self.ib.is_empty() {
            return;
        }
        let port = self.nics[ep as usize].port;
        for pg in lossless_pgs(self.lossless_pg_mask) {
            let gi = self.pg_index(port, pg);
            if self.pgs[gi].paused == on {
                continue;
            }
            self.pgs[gi].paused = on;
            self.pgs[gi].gen += 1;
            let gen = self.pgs[gi].gen;
            if on {
                self.queue_pfc(now, port, pg, self.p.pfc.quanta);
                self.schedule_refresh(now, port, pg, gen);
            } else {
                self.queue_pfc(now, port, pg, 0);
            }
        }
    }
}
