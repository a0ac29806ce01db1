//! InfiniBand VLs at a switch: the VL a packet takes at each hop (SL→VL tables per
//! (input, output) port pair, IBTA Vol. 1 §7.6.6), the head-of-queue and switch
//! lifetime discards (IBTA Vol. 1 §18.2.5.4, OpenSM's HOQ lifetimes: shorter on ports
//! that drive a CA), and the VL stall after repeated head-of-queue discards.

use super::*;

impl Sim {
    /// A packet at an InfiniBand switch, bound for `out`: it takes the VL of this hop
    /// (remembering its input port and VL, whose blocks it holds until it leaves, and when
    /// it entered, for the switch lifetime), may be FECN-marked, and joins the output
    /// VL's queue.
    pub(in crate::sim) fn ib_switch(&mut self, now: SimTime, in_port: PortId, out: PortId, id: u32, pk: &Packet) {
        let vl = self.hop_vl(in_port, out, pk);
        let p = &mut self.pkts[id as usize];
        p.in_port = in_port;
        p.in_pg = p.tc;
        p.tc = vl;
        p.t = now;
        self.fecn_mark(out, id);
        self.enqueue(now, out, id);
        self.try_tx(now, out);
    }

    /// The VL a packet leaves a switch on: its SL through the SL→VL table of the (input,
    /// output) port pair. With one table everywhere that is the VL it arrived on.
    #[inline]
    pub(in crate::sim) fn hop_vl(&self, in_port: PortId, out_port: PortId, pk: &Packet) -> u8 {
        let ibc = self.p.ib.as_ref().expect("ib");
        if ibc.sl_to_vl_ports.is_empty() && ibc.sl_to_vl_hca.is_empty() {
            return pk.tc;
        }
        let sl = self.hosts.qps[pk.qp.index()].sl as usize;
        ibc.sl_to_vl_ports.get(&(in_port.0, out_port.0)).unwrap_or(&ibc.sl_to_vl)[sl]
    }

    /// IB lifetime limits at output `port`: discards heads older than the HOQ lifetime or
    /// packets older than the switch lifetime (checked at the head). Returns when the
    /// next head would expire.
    pub(in crate::sim) fn expire_heads(&mut self, now: SimTime, port: PortId) -> SimTime {
        let pi = port.index();
        let (hoq, life) = (self.hoq_of(port), self.p.ib.as_ref().expect("ib").switch_lifetime);
        if hoq.is_none() && life.is_none() {
            return NEVER;
        }
        let mut next = NEVER;
        let mut m = self.ports[pi].nonempty;
        while m != 0 {
            let tc = m.trailing_zeros() as usize;
            m &= m - 1;
            while self.cls[pi * 8 + tc].head != NONE {
                let head = self.cls[pi * 8 + tc].head;
                let st = &self.ib.as_ref().expect("ib")[port];
                let (since, stalled) = (st.head_since[tc], now < st.stalled_until[tc]);
                let t_in = self.pkts[head as usize].t;
                let hoq_at = if stalled { now } else { hoq.map_or(NEVER, |h| since.saturating_add(h)) };
                let life_at = life.map_or(NEVER, |l| t_in.saturating_add(l));
                if now >= hoq_at || now >= life_at {
                    let cause = if now >= hoq_at { DropCause::HoqLifetime } else { DropCause::SwitchLifetime };
                    let id = self.dequeue(now, port, tc);
                    self.drop_pkt(port, id, cause);
                    if cause == DropCause::HoqLifetime && !stalled {
                        self.hoq_discard(now, port, tc);
                    }
                } else {
                    next = next.min(hoq_at.min(life_at));
                    break;
                }
            }
        }
        next
    }

    /// The head-of-queue lifetime of switch port `port`: OpenSM sets a shorter one on ports
    /// that drive a CA.
    pub(in crate::sim) fn hoq_of(&self, port: PortId) -> Option<SimDuration> {
        let ibc = self.p.ib.as_ref().expect("ib");
        if self.ports[port.index()].flags & P_PEER_SWITCH != 0 {
            ibc.hoq_lifetime
        } else {
            ibc.leaf_hoq_lifetime
        }
    }

    /// VL stall (IBTA Vol. 1 §18.2.5.4, PortInfo:VLStallCount): after `vl_stall_count`
    /// head-of-queue discards in a row on a VL, the port discards every packet of that VL
    /// for 8 × HOQ lifetime, then starts counting again (OpenSM `osm_base.h`,
    /// OSM_DEFAULT_VL_STALL_COUNT 0x7: "in stalled state, the port is supposed to drop
    /// everything for 8*(head of queue lifetime)"). InfiniBand's own containment of a
    /// receiver that stopped returning credits.
    pub(in crate::sim) fn hoq_discard(&mut self, now: SimTime, port: PortId, tc: usize) {
        let (Some(hoq), count) = (self.hoq_of(port), self.p.ib.as_ref().expect("ib").vl_stall_count) else { return };
        let st = &mut self.ib.as_mut().expect("ib")[port];
        st.hoq_run[tc] = st.hoq_run[tc].saturating_add(1);
        if count > 0 && st.hoq_run[tc] >= count {
            st.hoq_run[tc] = 0;
            st.stalled_until[tc] = now + hoq * 8;
            self.incident(
                now,
                IncidentKind::VlStalled,
                Some(port),
                Some(tc as u8),
                format!("{count} head-of-queue discards in a row: every packet of the VL discarded for 8 x HOQ lifetime"),
            );
        }
    }
}
