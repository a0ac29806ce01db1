//! InfiniBand's link and switch mechanisms: credit-based flow control per VL
//! ([`credits`]), the VL a packet takes at each hop and the lifetime limits and VL stall
//! that discard what waits too long ([`vl`]), and IB congestion control's FECN marking
//! ([`cc`]). The HCA's side of IB CC (BECN, the CCT) is `crate::ibcc`.

use std::ops::{Index, IndexMut};

use super::*;

pub(super) mod cc;
pub(super) mod credits;
pub(super) mod vl;

pub(super) use credits::IbPort;

/// InfiniBand-only state of every port: credits and VL timers ([`IbPort`]), and the
/// IB CC marking counter.
pub(super) struct IbState {
    ports: Vec<IbPort>,
    /// IB CC: eligible packets seen above threshold, per port (marking_rate counter).
    fecn_count: Vec<u32>,
}

impl IbState {
    /// Every port after link bring-up, which exchanges FCPs: each sender starts knowing
    /// its peer's full credit, `vl_buffer_blocks` per data VL.
    pub(super) fn new(np: usize, ibc: &crate::params::Ib) -> IbState {
        let mut ports = vec![IbPort { wait_from: NEVER, ..IbPort::default() }; np];
        let first = model::ib::fccl(0, ibc.vl_buffer_blocks);
        for st in &mut ports {
            for vl in 0..ibc.data_vls as usize {
                st.free[vl] = ibc.vl_buffer_blocks;
                st.fccl[vl] = first;
            }
        }
        IbState { ports, fecn_count: vec![0; np] }
    }

    pub(super) fn ports_mut(&mut self) -> impl Iterator<Item = &mut IbPort> {
        self.ports.iter_mut()
    }
}

impl Index<PortId> for IbState {
    type Output = IbPort;
    #[inline]
    fn index(&self, port: PortId) -> &IbPort {
        &self.ports[port.index()]
    }
}

impl IndexMut<PortId> for IbState {
    #[inline]
    fn index_mut(&mut self, port: PortId) -> &mut IbPort {
        &mut self.ports[port.index()]
    }
}
