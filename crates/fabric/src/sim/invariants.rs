//! The simulator's accounting invariants, which tests check after every event: buffer
//! cells ([`Mmu::check`]), InfiniBand credits (IBTA Vol. 1 §7.9: never more than 2048
//! blocks outstanding, credits plus blocks on the wire within the receiver's free
//! blocks), and payload conservation (sent = received + dropped + in flight).

use super::*;
use model::ib;

impl Sim {
    /// Checks the accounting invariants: per-PG counters add up to the pool counters
    /// ([`Mmu::check`]), credits ([`Sim::check_credits`]), payload conservation.
    /// Used by tests after every event via [`Sim::step`].
    pub fn check_invariants(&self) -> Result<(), String> {
        for (ni, n) in self.topo.nodes.iter().enumerate() {
            if n.kind != NodeKind::Switch {
                continue;
            }
            let mut queued_cells = 0u64;
            for port in (n.first_port..n.first_port + n.nports).map(PortId) {
                for tc in 0..8 {
                    queued_cells += self.queued(port, tc).map(|id| self.cells_of(&self.pkts[id as usize])).sum::<u64>();
                }
            }
            self.mmu.check(NodeId(ni as u32), n, queued_cells)?;
        }
        self.check_credits()?;
        self.check_payload()
    }

    /// IB credits (IBTA Vol. 1 §7.9): per VL, a sender's credits are within [0, 2048]; its
    /// credits plus the blocks on the wire towards the receiver never exceed the
    /// receiver's free blocks (so no packet can overrun); a switch input buffer's used
    /// blocks equal those of the packets it holds.
    pub(super) fn check_credits(&self) -> Result<(), String> {
        let (Some(ibc), Some(ibs)) = (&self.p.ib, &self.ib) else { return Ok(()) };
        let mut held = vec![0u64; self.ports.len() * 8];
        for port in self.port_ids() {
            for tc in 0..8 {
                for id in self.queued(port, tc) {
                    let pk = &self.pkts[id as usize];
                    if pk.in_port != NO_PORT {
                        held[pk.in_port.index() * 8 + pk.in_pg as usize] += ib::blocks(Bytes(pk.frame as u64)) as u64;
                    }
                }
            }
        }
        for port in self.port_ids() {
            let Some(peer) = self.topo.port(port).peer else { continue };
            let (pi, rx) = (port.index(), peer.index());
            for vl in 0..ibc.data_vls as usize {
                let tx = &ibs[port];
                let credits = (tx.fccl[vl] as u32 + ib::CREDIT_MODULUS - tx.fctbs[vl] as u32) % ib::CREDIT_MODULUS;
                if credits > ib::MAX_CREDITS {
                    return Err(format!("port {pi} vl {vl}: {credits} credits outstanding, above 2048"));
                }
                let on_wire: u64 = self
                    .on_link(port)
                    .map(|id| &self.pkts[id as usize])
                    .filter(|pk| pk.is_pkt() && pk.tc as usize == vl)
                    .map(|pk| ib::blocks(Bytes(pk.frame as u64)) as u64)
                    .sum();
                let free = ibs[peer].free[vl] as u64;
                if credits as u64 + on_wire > free {
                    return Err(format!("port {pi} vl {vl}: {credits} credits + {on_wire} blocks on the wire > {free} free at the peer"));
                }
                if self.topo.is_switch(self.topo.port(peer).node) && ibc.vl_buffer_blocks as u64 - free != held[rx * 8 + vl] {
                    return Err(format!("port {rx} vl {vl}: {} blocks used, packets hold {}", ibc.vl_buffer_blocks as u64 - free, held[rx * 8 + vl]));
                }
            }
        }
        Ok(())
    }

    /// Payload conservation: every payload byte a NIC transmitted (retransmissions
    /// included) was delivered in order, discarded by the responder as out of order or
    /// duplicate, dropped in the fabric, or is still on a link or in a switch queue.
    pub(super) fn check_payload(&self) -> Result<(), String> {
        let tx: u64 = self.stats.nics.iter().map(|n| n.tx_payload).sum();
        let rx: u64 = self.stats.nics.iter().map(|n| n.rx_payload + n.rx_discarded_payload).sum();
        let mut in_flight = 0u64;
        for port in self.port_ids() {
            in_flight += self.on_link(port).map(|id| &self.pkts[id as usize]).filter(|pk| pk.is_pkt()).map(|pk| pk.payload as u64).sum::<u64>();
            for tc in 0..8 {
                in_flight += self.queued(port, tc).map(|id| self.pkts[id as usize].payload as u64).sum::<u64>();
            }
        }
        for r in &self.impaired.nics {
            in_flight += r.backlog.iter().map(|&id| self.pkts[id as usize].payload as u64).sum::<u64>();
        }
        if tx != rx + self.stats.dropped_payload + in_flight {
            return Err(format!("payload: sent {tx} != received {rx} + dropped {} + in flight {in_flight}", self.stats.dropped_payload));
        }
        Ok(())
    }
}
