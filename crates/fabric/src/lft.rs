//! The simulator's linear forwarding tables: for each switch and each destination
//! endpoint, one output port. The InfiniBand subnet manager programs them
//! (`subnet_manager`); RoCEv2 fabrics built as destination tables use them too
//! (`routing::Routes::destination_lft`).

use crate::topology::{NodeId, NodeKind, PortId, Topology};

/// Linear forwarding tables as an InfiniBand subnet manager programs them: for each switch
/// and each destination endpoint, one output port (IBTA Vol. 1 §14.2.5.10, LinearForwardingTable).
/// Indexed by endpoint rather than LID so the simulator needs no LID arithmetic; the subnet
/// manager keeps the LID view (`fabriclab sm` prints it). `switches × endpoints` entries of
/// 4 bytes, as a real LFT has one entry per LID.
#[derive(Clone, Debug)]
pub struct Lft {
    neps: usize,
    /// Node → row in `table` (u32::MAX for NICs).
    row: Vec<u32>,
    table: Vec<u32>,
}

impl Lft {
    /// Tables with every entry unset (unreachable).
    pub fn new(t: &Topology) -> Lft {
        let mut row = vec![u32::MAX; t.nodes.len()];
        let mut n = 0u32;
        for (i, node) in t.nodes.iter().enumerate() {
            if node.kind == NodeKind::Switch {
                row[i] = n;
                n += 1;
            }
        }
        let neps = t.endpoints.len();
        Lft { neps, row, table: vec![u32::MAX; n as usize * neps] }
    }

    /// Programs `sw`'s entry for endpoint `dst` (`None` clears it).
    pub fn set(&mut self, sw: NodeId, dst: u32, port: Option<PortId>) {
        let r = self.row[sw.0 as usize];
        assert!(r != u32::MAX, "LFT entry on a non-switch node");
        self.table[r as usize * self.neps + dst as usize] = port.map_or(u32::MAX, |p| p.0);
    }

    /// The output port `sw` forwards endpoint `dst`'s packets to.
    #[inline]
    pub fn get(&self, sw: NodeId, dst: u32) -> Option<PortId> {
        let r = self.row[sw.0 as usize] as usize;
        let v = self.table[r * self.neps + dst as usize];
        (v != u32::MAX).then_some(PortId(v))
    }
}
