//! InfiniBand credit-based link-level flow control (IBTA Vol. 1 §7.9, arithmetic in
//! `model::ib`): every port keeps, per VL, FCTBS and the last FCCL heard as a sender,
//! ABR and its free blocks as a receiver. A packet leaves only when the peer's
//! advertised credits cover its 64-byte blocks, so no more than 2048 blocks are ever
//! outstanding per VL. Input buffers are per (input port, VL), `vl_buffer_blocks` each;
//! blocks are freed when the packet leaves the switch (HCAs free them on arrival) and a
//! flow-control packet carrying the new FCCL is inserted at the next packet boundary,
//! like a PFC frame. A port with a packet but no credits counts PortXmitWait.
//!
//! Leaves out: the periodic FCP refresh the spec requires to repair lost FCPs (this
//! model never loses one, and a 6-byte FCP every 65,536 symbol times costs under 0.1 %
//! of a link); flit-level switching (packets are switched whole).

use super::*;
use model::ib;

/// One port's credit state per VL (IBTA Vol. 1 §7.9): as a sender towards its peer (FCTBS,
/// the last FCCL received) and as a receiver from it (ABR, free blocks of its input buffer).
#[derive(Clone, Copy, Default)]
pub(in crate::sim) struct IbPort {
    pub(in crate::sim) fctbs: [u16; 8],
    pub(in crate::sim) fccl: [u16; 8],
    pub(in crate::sim) abr: [u16; 8],
    pub(in crate::sim) free: [u32; 8],
    /// VLs whose new FCCL still has to be sent to the peer.
    pub(in crate::sim) fcp_pending: u8,
    /// Since when the port has had a packet but no credits (NEVER: not waiting).
    pub(in crate::sim) wait_from: SimTime,
    /// When each VL queue's current head became the head (HOQ lifetime).
    pub(in crate::sim) head_since: [SimTime; 8],
    /// Head-of-queue discards in a row per VL, and until when the VL is stalled.
    pub(in crate::sim) hoq_run: [u8; 8],
    pub(in crate::sim) stalled_until: [SimTime; 8],
}

impl Sim {
    /// Takes a packet arriving at `port` into its input VL buffer (IBTA Vol. 1 §7.9.4.3:
    /// ABR counts received blocks). `false` if it had no credits (never, unless broken).
    pub(in crate::sim) fn ib_receive(&mut self, now: SimTime, port: PortId, id: u32) -> bool {
        let pk = self.pkts[id as usize];
        let b = ib::blocks(Bytes(pk.frame as u64));
        let vl = pk.tc as usize;
        let pi = port.index();
        let st = &mut self.ib.as_mut().expect("ib")[port];
        if st.free[vl] < b {
            self.drop_pkt(port, id, DropCause::CreditOverrun);
            return false;
        }
        let before = ib::fccl(st.abr[vl], st.free[vl]);
        st.abr[vl] = ((st.abr[vl] as u32 + b) % ib::CREDIT_MODULUS) as u16;
        // A switch holds the packet until it leaves; an HCA consumes it at once, unless its
        // receive side is impaired (then it holds the blocks until it absorbs the packet).
        let holds = self.ports[pi].flags & P_SWITCH != 0 || self.impaired.is_impaired(self.ports[pi].owner);
        if holds {
            st.free[vl] -= b;
            let cap = self.p.ib.as_ref().expect("ib").vl_buffer_blocks;
            let s = &mut self.stats.ports[pi];
            s.peak_vl_blocks = s.peak_vl_blocks.max(cap - st.free[vl]);
        }
        if ib::fccl(st.abr[vl], st.free[vl]) != before {
            st.fcp_pending |= 1 << vl;
            self.try_tx(now, port);
        }
        true
    }

    /// Frees the input-buffer blocks of a packet leaving the switch and schedules an FCP.
    pub(in crate::sim) fn ib_release(&mut self, now: SimTime, in_port: PortId, vl: u8, frame: u32) {
        let b = ib::blocks(Bytes(frame as u64));
        let st = &mut self.ib.as_mut().expect("ib")[in_port];
        st.free[vl as usize] += b;
        st.fcp_pending |= 1 << vl;
        self.try_tx(now, in_port);
    }

    pub(in crate::sim) fn on_fcp(&mut self, now: SimTime, port: PortId, vl: u8, fccl: u16) {
        let pi = port.index();
        self.stats.ports[pi].fcp_rx += 1;
        self.ib.as_mut().expect("ib")[port].fccl[vl as usize] = fccl;
        self.try_tx(now, port);
    }

    /// Marks the start of a credit wait (PortXmitWait) on `port`.
    pub(in crate::sim) fn credit_wait(&mut self, port: PortId, now: SimTime) {
        let st = &mut self.ib.as_mut().expect("ib")[port];
        if st.wait_from == NEVER {
            st.wait_from = now;
            if !self.observe.first_block[port.index()] {
                self.observe.first_block[port.index()] = true;
                self.incident(now, IncidentKind::CreditStarved, Some(port), None, "first wait for credits".into());
            }
        }
    }
}
