//! The scenario's flows as the simulator reads them ([`FlowList`], a [`FlowSource`]):
//! each `[[traffic]]` entry's flows in entry order, an entry's flow indices contiguous.
//!
//! Model: incasts, permutations, messages and background traffic are held as flow specs;
//! a collective job is held as what describes it — its `workload::Spec` (op, algorithm,
//! ranks, size, chunking), where its vertices sit and its class — and its transfers are
//! generated again each time the flows are read ([`workload::Generator`], mapped by
//! [`crate::driver::node_flow`]), in the order and with the dependencies a built graph
//! has. allreduce1024's 2.1 M transfers are a few hundred bytes until the simulator is
//! built, instead of 218 MB of specs, and the simulator generates them again as its run
//! needs them, a stage (a ring step) at a time ([`FlowSource::parts`]: each entry is a
//! part). Leaves out the simulator's own per-flow state (its flow records and each
//! flow's QP, `fabric::sim`), which reading the list builds.

use std::sync::Arc;

use fabric::params::{FlowPart, FlowSource, FlowSpec, HeldPart};
use units::{Bytes, SimTime};

/// Every flow of a scenario, in flow order.
#[derive(Clone, Debug, Default)]
pub struct FlowList {
    parts: Vec<Part>,
    len: usize,
    /// The first connection id no part uses yet (jobs never share a QP).
    next_conn: u32,
}

/// One entry's flows.
#[derive(Clone, Debug)]
struct Part {
    /// Its `[[traffic]]` entry (the flows' `group`).
    group: u32,
    /// Index of its first flow.
    first: u32,
    flows: PartFlows,
}

#[derive(Clone, Debug)]
enum PartFlows {
    Specs(Arc<Vec<FlowSpec>>),
    Collective(Box<CollectiveFlows>),
}

/// A collective job's transfers, to generate: node i of its graph is flow `first + i`.
#[derive(Clone, Debug)]
struct CollectiveFlows {
    spec: workload::Spec,
    /// Endpoint of each vertex (rank, then SHARP aggregation vertex).
    vertices: Vec<u32>,
    start: SimTime,
    dscp: u8,
    sl: u8,
    conn_base: u32,
    /// Its nodes and connections (the graph's [`workload::Shape`]).
    nodes: u32,
    conns: u32,
    /// InfiniBand with dfsssp: the SL of each of the job's connections, and of its
    /// joins (the subnet manager's for each path; empty: `sl` for every flow).
    conn_sl: Vec<u8>,
    join_sl: u8,
}

impl FlowList {
    /// Appends entry `group`'s flows, held as specs.
    pub(crate) fn push_specs(&mut self, group: u32, flows: Vec<FlowSpec>) {
        let first = self.len as u32;
        self.len += flows.len();
        self.parts.push(Part { group, first, flows: PartFlows::Specs(Arc::new(flows)) });
    }

    /// Appends a collective job of entry `group`: `spec`'s graph (checked: it generates)
    /// with vertex v on endpoint `vertices[v]`, starting at `start`, in class (`dscp`,
    /// `sl`). Returns its shape, with the flow index of its first node (node i is flow
    /// `first + i`).
    pub(crate) fn push_collective(
        &mut self,
        group: u32,
        spec: workload::Spec,
        vertices: Vec<u32>,
        start: SimTime,
        (dscp, sl): (u8, u8),
        shape: &workload::Shape,
    ) -> u32 {
        let first = self.len as u32;
        let conn_base = self.next_conn;
        self.next_conn = conn_base + shape.conns;
        self.len += shape.nodes as usize;
        let c = CollectiveFlows { spec, vertices, start, dscp, sl, conn_base, nodes: shape.nodes, conns: shape.conns, conn_sl: vec![], join_sl: sl };
        self.parts.push(Part { group, first, flows: PartFlows::Collective(Box::new(c)) });
        first
    }

    /// The `[[traffic]]` entry flow `flow` came from.
    pub fn group_of(&self, flow: u32) -> u32 {
        let i = self.parts.partition_point(|p| p.first <= flow);
        self.parts[i.checked_sub(1).expect("flow 0 is in the first part")].group
    }

    /// Every flow as a spec: for tests and small scenarios (a collective's specs take
    /// 100 bytes per transfer).
    pub fn to_vec(&self) -> Vec<FlowSpec> {
        let mut v = Vec::with_capacity(self.len);
        self.for_each(&mut |f| v.push(f.clone()));
        v
    }

    /// dfsssp: every flow takes the SL the subnet manager assigned to its (source,
    /// destination). A job's flows on one connection share their endpoints, so it keeps
    /// one SL per connection.
    pub(crate) fn set_path_sls(&mut self, path_sl: &dyn Fn(u32, u32) -> u8) {
        for p in &mut self.parts {
            match &mut p.flows {
                PartFlows::Specs(v) => Arc::make_mut(v).iter_mut().for_each(|f| f.sl = path_sl(f.src, f.dst)),
                PartFlows::Collective(c) => {
                    let mut conn_sl = vec![];
                    // Connection ids are numbered in order of first use.
                    c.for_each(p.group, p.first, &mut |f| {
                        if f.conn.is_some_and(|k| (k - c.conn_base) as usize == conn_sl.len()) {
                            conn_sl.push(path_sl(f.src, f.dst));
                        }
                    });
                    c.join_sl = path_sl(0, 0);
                    c.conn_sl = conn_sl;
                }
            }
        }
    }
}

impl CollectiveFlows {
    /// Generates the job's flows into one reused spec.
    fn for_each(&self, group: u32, first: u32, f: &mut dyn FnMut(&FlowSpec)) {
        let mut spec = self.blank(group);
        let mut n = 0u32;
        workload::generate(&self.spec, &mut |node| {
            self.fill(node, first, &mut spec);
            f(&spec);
            n += 1;
        })
        .expect("the job's graph was generated when it was compiled");
        debug_assert_eq!(n, self.nodes);
    }

    /// The spec [`CollectiveFlows::fill`] writes each node into.
    fn blank(&self, group: u32) -> FlowSpec {
        FlowSpec::new(0, 0, Bytes(0), self.start, self.dscp, self.sl, group)
    }

    /// Node `node` of the job, whose first flow is `first`, as a flow.
    fn fill(&self, node: &workload::Node, first: u32, spec: &mut FlowSpec) {
        crate::driver::node_flow(node, &self.vertices, first, self.conn_base, spec);
        spec.sl = match spec.conn {
            _ if self.conn_sl.is_empty() => self.sl,
            Some(k) => self.conn_sl[(k - self.conn_base) as usize],
            None => self.join_sl,
        };
    }
}

/// A collective job's flows as a part: generated a stage at a time, with what its
/// generator says of the nodes to come.
struct CollectivePart {
    list: Arc<FlowList>,
    /// Its index in the list's parts.
    part: usize,
    generator: workload::Generator,
    spec: FlowSpec,
}

/// Part `part` of `list`, a collective job, and the job.
fn job(list: &FlowList, part: usize) -> (&CollectiveFlows, &Part) {
    let p = &list.parts[part];
    match &p.flows {
        PartFlows::Collective(c) => (c, p),
        PartFlows::Specs(_) => unreachable!("a collective part is a job"),
    }
}

impl FlowPart for CollectivePart {
    fn range(&self) -> std::ops::Range<u32> {
        let (c, p) = job(&self.list, self.part);
        p.first..p.first + c.nodes
    }
    fn next_stage(&mut self, f: &mut dyn FnMut(&FlowSpec)) -> bool {
        let Some(nodes) = self.generator.next_stage() else { return false };
        let (c, p) = job(&self.list, self.part);
        for node in nodes {
            c.fill(node, p.first, &mut self.spec);
            f(&self.spec);
        }
        true
    }
    fn low_water(&mut self) -> u32 {
        let first = job(&self.list, self.part).1.first;
        self.generator.low_water().saturating_add(first)
    }
    fn free_ahead(&self) -> bool {
        self.generator.free_ahead()
    }
}

impl FlowSource for FlowList {
    fn len(&self) -> usize {
        self.len
    }
    fn for_each(&self, f: &mut dyn FnMut(&FlowSpec)) {
        for p in &self.parts {
            match &p.flows {
                PartFlows::Specs(v) => v.iter().for_each(&mut *f),
                PartFlows::Collective(c) => c.for_each(p.group, p.first, f),
            }
        }
    }
    fn parts(self: Arc<Self>) -> Vec<Box<dyn FlowPart>> {
        (0..self.parts.len())
            .map(|i| -> Box<dyn FlowPart> {
                let p = &self.parts[i];
                match &p.flows {
                    PartFlows::Specs(v) => Box::new(HeldPart::new(Arc::clone(v), p.first)),
                    PartFlows::Collective(c) => {
                        let generator =
                            workload::Generator::new(c.spec.clone()).expect("the job's graph was generated when it was compiled").track_reach(c.conns);
                        Box::new(CollectivePart { list: Arc::clone(&self), part: i, generator, spec: c.blank(p.group) })
                    }
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use workload::{Algorithm, Collective, Node, Spec};

    /// A message, then a double-tree all-reduce and a two-iteration ring all-gather: each
    /// job's flows read back as its built graph's nodes on its endpoints, numbered after
    /// the flows before it, on connections after the previous job's, in its entry.
    #[test]
    fn jobs_read_back_as_their_built_graphs() {
        let mut list = FlowList::default();
        let msg = FlowSpec::new(1, 2, Bytes(100), SimTime(5), 26, 0, 0);
        list.push_specs(0, vec![msg.clone()]);
        let mut gather = Spec::new(Collective::AllGather, Algorithm::Ring, 4, 1 << 20);
        (gather.chunk, gather.iterations) = (1 << 16, 2);
        let mut expect = vec![msg];
        let mut conn_base = 0;
        for (g, spec) in [Spec::new(Collective::AllReduce, Algorithm::Tree, 5, 3 << 20), gather].into_iter().enumerate() {
            let group = g as u32 + 1;
            let eps: Vec<u32> = (0..spec.ranks).map(|r| 10 + 2 * r).collect();
            let dag = workload::build(&spec).unwrap();
            let shape = workload::generate(&spec, &mut |_| {}).unwrap();
            let first = list.push_collective(group, spec, eps.clone(), SimTime(7), (26, 3), &shape);
            assert_eq!(first as usize, expect.len());
            for n in &dag.nodes {
                let mut f = FlowSpec::new(0, 0, Bytes(0), SimTime(7), 26, 3, group);
                f.after = n.after().iter().map(|a| a + first).collect();
                match *n {
                    Node::Send { src, dst, bytes, conn, .. } => {
                        (f.src, f.dst, f.size, f.conn) = (eps[src as usize], eps[dst as usize], Bytes(bytes), Some(conn_base + conn));
                    }
                    Node::Join { .. } => f.join = true,
                }
                expect.push(f);
            }
            conn_base += dag.conns;
        }
        assert_eq!(list.len(), expect.len());
        assert_eq!(format!("{:?}", list.to_vec()), format!("{expect:?}"));
        let groups: Vec<u32> = (0..expect.len() as u32).map(|f| list.group_of(f)).collect();
        assert_eq!(groups, expect.iter().map(|f| f.group).collect::<Vec<_>>());
    }
}
