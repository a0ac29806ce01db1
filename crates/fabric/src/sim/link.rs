//! Links and ports: putting a frame on the wire, its arrival at the peer, and choosing
//! the next frame a port sends (PFC and FCP frames first, then data), plus links going
//! down and up.
//!
//! Model: a link is a FIFO in each direction. A port serialises one frame at a time at
//! line rate, counting preamble, SFD and inter-frame gap; the frame reaches the peer
//! after the cable's propagation delay (plus the switch pipeline latency when the peer
//! is a switch); a switch whose ports all run at one speed may forward cut-through.
//! These per-hop rules are `crate::timing`'s, which the reports' ideal completion times
//! share. A link keeps its frames in flight in its own list and has at most one event
//! in the global queue. A frame starting on a port is shown to the capture tap
//! (`capture.rs`) when one is set; otherwise that costs one test. Leaves out: bit errors
//! and FEC latency beyond what the switch-latency figure includes.

use super::*;
use model::ib;

/// Port flags (fixed by the topology).
pub(super) const P_SWITCH: u8 = 1;

pub(super) const P_PEER_SWITCH: u8 = 2;

pub(super) const P_PEER_CUT_THROUGH: u8 = 4;

/// What every frame through a port touches: 128 bytes, aligned to 128. The first cache
/// line picks and moves frames; the second holds the counters every hop updates
/// ([`PortCounters`], folded into `Stats::ports` when the run ends). Both lines of a
/// 128-byte aligned pair come in together: the L2 "spatial prefetcher" of Intel cores
/// "strives to complete every cache line fetched to the L2 cache with the pair line that
/// completes it to a 128-byte aligned chunk" (Intel 64 and IA-32 Architectures
/// Optimization Reference Manual, 248966, "Data Prefetching"). In `Stats::ports` those
/// counters sat 688 bytes apart, one or two lines of their own per hop: at 8,192 hosts
/// 0.83 of the 6.6 misses per event of a 4 MiB cache (docs/speed.md). Per-class state is
/// in [`ClassQ`], rarely used state in separate arrays.
#[derive(Clone, Copy)]
#[repr(C, align(128))]
pub(super) struct PortState {
    /// Bytes queued at this egress (all classes), and when that last changed.
    pub(super) qtotal: u64,
    pub(super) q_changed: SimTime,
    /// Cable propagation delay, plus the pipeline latency when the peer is a switch
    /// ([`Hop::delay`]).
    pub(super) delay: SimDuration,
    pub(super) rate: u64,
    /// Frames on the link, oldest first (a list through `Packet::next`).
    pub(super) chan_head: u32,
    pub(super) chan_tail: u32,
    /// The node of a switch port, the endpoint of a NIC port.
    pub(super) owner: u32,
    /// The peer port (`NO_PORT`: uncabled) and the peer's node (switch) or endpoint (NIC).
    pub(super) peer: PortId,
    pub(super) peer_owner: u32,
    pub(super) busy: bool,
    pub(super) flags: u8,
    pub(super) pfc_mask: u8,
    pub(super) rr: u8,
    /// Classes with queued frames.
    pub(super) nonempty: u8,
    /// Classes with a non-zero DRR deficit.
    pub(super) deficit_nz: u8,
    /// The per-hop counters, on the second line.
    pub(super) counters: PortCounters,
}

const _: () = assert!(std::mem::size_of::<PortState>() == 128);
const _: () = assert!(std::mem::offset_of!(PortState, counters) == 64);

/// The counters of `Stats::ports` that every hop through a port updates, kept beside the
/// port's state while the run goes ([`Sim::fold_port_counters`] copies them out).
#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
pub(super) struct PortCounters {
    pub(super) tx_frames: u64,
    pub(super) tx_bytes: u64,
    pub(super) busy_ps: u64,
    /// Bytes queued at this egress: maximum, and ∫ queue dt in byte·ps.
    pub(super) max_queue: u64,
    pub(super) queue_area: u128,
}

/// Link-level state besides [`PortState`]: which links are up, each port's earliest
/// pending re-check, and the port choosing its next frame.
pub(super) struct Links {
    /// Per port: its link is up (both directions change together).
    pub(super) up: Vec<bool>,
    /// Per port: the earliest pending Kick (NEVER: none).
    kick: Vec<SimTime>,
    /// The port whose `try_tx` is picking a frame (`NO_PORT`: none); see `try_tx`.
    picking: PortId,
}

impl Links {
    pub(super) fn new(np: usize) -> Links {
        Links { up: vec![true; np], kick: vec![NEVER; np], picking: NO_PORT }
    }

    /// A Kick event for `port` at `now` is being handled: it is no longer pending.
    pub(super) fn kicked(&mut self, port: PortId, now: SimTime) {
        let k = &mut self.kick[port.index()];
        if *k == now {
            *k = NEVER;
        }
    }
}

/// Each port's [`PortState`] from the topology: its owner and peer, its rate, and its
/// per-hop delay and cut-through flag from [`Hop::out_of`].
pub(super) fn port_states(topo: &Topology, p: &Params) -> Vec<PortState> {
    let owner = |n: NodeId| match topo.node(n).kind {
        NodeKind::Switch => (n.0, true),
        NodeKind::Nic { ep, .. } | NodeKind::Aggregator { ep, .. } => (ep, false),
    };
    topo.ports
        .iter()
        .enumerate()
        .map(|(pi, pt)| {
            let (own, sw) = owner(pt.node);
            let mut flags = if sw { P_SWITCH } else { 0 };
            let (mut peer, mut peer_owner, mut delay) = (NO_PORT, NONE, pt.prop);
            if let (Some(pp), Some(hop)) = (pt.peer, Hop::out_of(topo, p, PortId(pi as u32))) {
                let (po, psw) = owner(topo.port(pp).node);
                peer = pp;
                peer_owner = po;
                delay = hop.delay;
                if psw {
                    flags |= P_PEER_SWITCH;
                }
                if hop.cut_through {
                    flags |= P_PEER_CUT_THROUGH;
                }
            }
            PortState {
                qtotal: 0,
                q_changed: SimTime::ZERO,
                delay,
                rate: pt.rate.0,
                chan_head: NONE,
                chan_tail: NONE,
                owner: own,
                peer,
                peer_owner,
                busy: false,
                flags,
                pfc_mask: 0,
                rr: 0,
                nonempty: 0,
                deficit_nz: 0,
                counters: PortCounters::default(),
            }
        })
        .collect()
}

impl Sim {
    /// Puts frame `id` (`frame_bytes` long; `pkt`: a packet, not PFC/FCP) on the link.
    pub(super) fn send(&mut self, now: SimTime, port: PortId, id: u32, frame_bytes: u64, pkt: bool) {
        let pi = port.index();
        let ps = &self.ports[pi];
        assert!(ps.peer != NO_PORT, "send on an uncabled port");
        let hop = Hop { tech: self.p.tech, rate: BitRate(ps.rate), delay: ps.delay, cut_through: ps.flags & P_PEER_CUT_THROUGH != 0 };
        let transit = hop.transit(Bytes(frame_bytes), pkt);
        let (busy, arrive) = (transit.busy, now + transit.ready);
        self.pkts[id as usize].next = NONE;
        let ps = &mut self.ports[pi];
        ps.busy = true;
        let tail = ps.chan_tail;
        ps.chan_tail = id;
        if tail == NONE {
            ps.chan_head = id;
            self.q.schedule(arrive, Ev::Arrive(port));
        } else {
            let t = &mut self.pkts[tail as usize];
            debug_assert!(self.q.now() <= arrive);
            t.next = id;
            t.t = arrive;
        }
        self.q.schedule(now + busy, Ev::TxDone(port));
        let c = &mut self.ports[pi].counters;
        c.tx_frames += 1;
        c.tx_bytes += frame_bytes;
        c.busy_ps += busy.ps();
        if self.capture.is_some() {
            self.capture_frame(now, port, id, frame_bytes);
        }
    }

    pub(super) fn on_arrive(&mut self, now: SimTime, port: PortId) {
        let pi = port.index();
        let ps = &mut self.ports[pi];
        let id = ps.chan_head;
        assert!(id != NONE, "arrival on an empty link");
        let pk = self.pkts[id as usize];
        ps.chan_head = pk.next;
        if pk.next == NONE {
            ps.chan_tail = NONE;
        } else {
            self.q.schedule(pk.t, Ev::Arrive(port));
        }
        let (peer, peer_owner, flags) = (ps.peer, ps.peer_owner, ps.flags);
        if pk.kind == Kind::Pfc {
            let quanta = self.pfc.frame_arrived(port);
            self.free_pkt(id);
            if self.links.up[pi] {
                self.on_pfc(now, peer, pk.tc, quanta);
            }
            return;
        }
        if pk.kind == Kind::Fcp {
            self.free_pkt(id);
            if self.links.up[pi] {
                self.on_fcp(now, peer, pk.tc, pk.psn as u16);
            }
            return;
        }
        if !self.links.up[pi] {
            // The link died with this packet on it.
            self.drop_pkt(port, id, DropCause::PortDown);
            return;
        }
        if self.ib.is_some() && !self.ib_receive(now, peer, id) {
            return;
        }
        if flags & P_PEER_SWITCH != 0 {
            self.switch_rx(now, NodeId(peer_owner), peer, id);
        } else if self.impaired.is_impaired(peer_owner) {
            self.impaired_rx(now, peer_owner, peer, id);
        } else {
            self.nic_rx(now, peer_owner, id);
        }
    }

    /// Starts the next frame on `port` if it is idle: PFC first, then data.
    pub(super) fn try_tx(&mut self, now: SimTime, port: PortId) {
        let pi = port.index();
        let ps = &self.ports[pi];
        // `picking`: this port is choosing its next frame further up the stack. A packet it
        // dequeues may free buffer on its own ingress (hairpin forwarding, as in a routing
        // loop) and ask for a PFC or FCP frame here: that frame waits for the next frame
        // boundary, like any PFC frame, instead of starting a second frame at once.
        if ps.busy || !self.links.up[pi] || self.links.picking == port {
            return;
        }
        if ps.pfc_mask != 0 {
            let mask = ps.pfc_mask;
            self.ports[pi].pfc_mask = 0;
            for p in 0..8 {
                if mask & (1 << p) != 0 {
                    self.stats.ports[pi].pfc_tx[p] += 1;
                }
            }
            self.pfc.frame_sent(port);
            let id = self.alloc(Packet::ctrl(Kind::Pfc, mask, 0));
            self.send(now, port, id, PFC_FRAME, false);
            return;
        }
        if let Some(st) = self.ib.as_mut().map(|ib| &mut ib[port]).filter(|st| st.fcp_pending != 0) {
            let vl = st.fcp_pending.trailing_zeros() as u8;
            st.fcp_pending &= !(1 << vl);
            let fccl = ib::fccl(st.abr[vl as usize], st.free[vl as usize]);
            self.stats.ports[pi].fcp_tx += 1;
            let id = self.alloc(Packet::ctrl(Kind::Fcp, vl, fccl as u32));
            self.send(now, port, id, ib::FCP, false);
            return;
        }
        let outer = std::mem::replace(&mut self.links.picking, port);
        let picked = if ps.flags & P_SWITCH != 0 { self.switch_pick(now, port) } else { self.nic_pick(now, ps.owner) };
        self.links.picking = outer;
        if let Some(id) = picked {
            let frame = self.pkts[id as usize].frame as u64;
            if let Some(ib) = &mut self.ib {
                let vl = self.pkts[id as usize].tc as usize;
                let st = &mut ib[port];
                st.fctbs[vl] = ((st.fctbs[vl] as u32 + ib::blocks(Bytes(frame))) % ib::CREDIT_MODULUS) as u16;
                st.hoq_run[vl] = 0;
                if st.wait_from != NEVER {
                    self.stats.ports[pi].xmit_wait_ps += (now - st.wait_from).ps();
                    st.wait_from = NEVER;
                }
            }
            self.send(now, port, id, frame, true);
        }
    }

    pub(super) fn kick_at(&mut self, port: PortId, at: SimTime) {
        let k = &mut self.links.kick[port.index()];
        if at < *k {
            *k = at;
            self.q.schedule(at, Ev::Kick(port));
        }
    }

    /// Takes the link at `port` (both directions) down or up. Packets later forwarded to a
    /// down port are discarded; routing does not change until [`Sim::set_forwarder`].
    pub fn set_link(&mut self, port: PortId, up: bool) {
        self.links.up[port.index()] = up;
        if let Some(peer) = self.topo.port(port).peer {
            self.links.up[peer.index()] = up;
        }
    }

    /// Copies each port's [`PortCounters`] into `Stats::ports` (at the end of a run; the
    /// counters only grow, so folding twice gives the same result).
    pub(super) fn fold_port_counters(&mut self) {
        for (ps, st) in self.ports.iter().zip(&mut self.stats.ports) {
            let c = &ps.counters;
            st.tx_frames = c.tx_frames;
            st.tx_bytes = c.tx_bytes;
            st.busy_ps = c.busy_ps;
            st.max_queue = c.max_queue;
            st.queue_area = c.queue_area;
        }
    }

    /// Every port, in number order.
    pub(super) fn port_ids(&self) -> impl Iterator<Item = PortId> {
        (0..self.ports.len() as u32).map(PortId)
    }

    /// The frames on the link leaving `port`, oldest first.
    pub(super) fn on_link(&self, port: PortId) -> impl Iterator<Item = u32> + '_ {
        self.pkts.list(self.ports[port.index()].chan_head)
    }
}
