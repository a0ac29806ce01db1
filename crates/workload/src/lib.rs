//! Workloads as dependency graphs of RDMA transfers between ranks.
//!
//! A [`Dag`] is a list of nodes: a [`Node::Send`] is one RDMA WRITE from rank `src` to
//! rank `dst`, posted once every node in its `after` list has been *delivered* (all of
//! its data at its receiver, which is when a GPU can reduce or forward it); a
//! [`Node::Join`] is a zero-cost barrier that completes when all its `after` nodes have.
//! Sends with the same `conn` share one RC queue pair (NCCL keeps one connection per
//! peer and channel for the life of a communicator). This crate knows nothing of the
//! fabric: a driver maps ranks to NICs and nodes to the simulator's flows.
//!
//! A collective is described by its [`Spec`] (op, algorithm, ranks, size, chunking) and
//! its graph is *generated*: a [`Generator`] makes it a stage at a time (a ring step, a
//! tree's chunk), in the order [`build`] would store the nodes, keeping per node only
//! the current iteration's "has a dependent" flag (for the join that closes it) and per
//! connection its last `window` sends. A driver that needs the nodes again generates
//! them again instead of holding millions of them, and a simulator generates them as it
//! runs: between stages the generator says which nodes a node to come can still depend
//! on ([`Generator::low_water`]). A node's `after` lists only what can be the last of its
//! dependencies to be delivered (a dependency another one implies is left out), which
//! keeps that bound a few steps behind.
//!
//! The collectives follow NCCL's algorithms (NCCL source `src/device/all_reduce.h` and
//! friends, and the nccl-tests `doc/PERFORMANCE.md` arithmetic), at the granularity of
//! the transfers NCCL's network proxy posts:
//! * the data of each channel is cut into transfers of at most `chunk` bytes (NCCL posts
//!   one network send per buffer step: `NCCL_BUFFSIZE` 4 MiB / `NCCL_STEPS` 8 = 512 KiB,
//!   the default chunk here);
//! * a connection has `window` buffer slots (`NCCL_STEPS` = 8): its m-th send is posted
//!   only after its (m − window)-th was delivered, so a rank runs ahead of its peer by at
//!   most the receive buffer, as NCCL's flow control between GPUs allows;
//! * SHARP ([`Algorithm::Sharp`]) adds *aggregation vertices* after the ranks: a send's
//!   `src`/`dst` is then a vertex, a rank when below [`Dag::ranks`]; the driver decides
//!   what an aggregation vertex is (the fabric crate puts it on a switch);
//! * what is left out: GPU compute (a reduction is instantaneous), NVLink inside a host
//!   (every transfer crosses the fabric), NCCL's LL/LL128 protocols (only Simple), and
//!   launch latencies.

mod collective;
pub mod flowsize;
mod nccl;
mod volume;

pub use collective::{build, generate, AggregationTree, Algorithm, Collective, Generator, Spec};
pub use nccl::{bus_factor, parse_nccl_size, size_sweep, NcclRow};
pub use volume::Volume;

/// One node of a workload graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Node {
    /// An RDMA WRITE of `bytes` from rank `src` to rank `dst` on connection `conn`.
    Send { src: u32, dst: u32, bytes: u64, conn: u32, after: Vec<u32> },
    /// A barrier: done when every node in `after` is.
    Join { after: Vec<u32> },
}

impl Node {
    pub fn after(&self) -> &[u32] {
        match self {
            Node::Send { after, .. } | Node::Join { after } => after,
        }
    }
}

/// A workload: nodes in an order where every dependency comes first.
#[derive(Clone, Debug, Default)]
pub struct Dag {
    pub ranks: u32,
    /// Aggregation vertices `ranks .. ranks + aggregators` (SHARP), 0 otherwise.
    pub aggregators: u32,
    pub nodes: Vec<Node>,
    /// Connections used (ids `0..conns`).
    pub conns: u32,
    /// The join node that closes each iteration.
    pub iteration_ends: Vec<u32>,
}

/// Bytes each rank sends and receives (what busbw measures, per rank), counted node by
/// node, so that a generated graph ([`generate`]) is counted as it goes by; aggregation
/// vertices' transfers are left out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RankBytes {
    pub sent: Vec<u64>,
    pub received: Vec<u64>,
}

impl RankBytes {
    pub fn new(ranks: u32) -> RankBytes {
        RankBytes { sent: vec![0; ranks as usize], received: vec![0; ranks as usize] }
    }

    /// Counts node `n` (a send between ranks; nothing otherwise).
    pub fn count(&mut self, n: &Node) {
        if let Node::Send { src, dst, bytes, .. } = *n {
            if let Some(x) = self.sent.get_mut(src as usize) {
                *x += bytes;
            }
            if let Some(x) = self.received.get_mut(dst as usize) {
                *x += bytes;
            }
        }
    }
}

impl Dag {
    /// Bytes sent and received by each rank.
    pub fn rank_bytes(&self) -> RankBytes {
        let mut b = RankBytes::new(self.ranks);
        self.nodes.iter().for_each(|n| b.count(n));
        b
    }

    /// Bytes sent by each rank; aggregation vertices' sends are not counted.
    pub fn bytes_sent(&self) -> Vec<u64> {
        self.rank_bytes().sent
    }

    /// Bytes received by each rank.
    pub fn bytes_received(&self) -> Vec<u64> {
        self.rank_bytes().received
    }

    /// Number of sends.
    pub fn sends(&self) -> usize {
        self.nodes.iter().filter(|n| matches!(n, Node::Send { .. })).count()
    }
}

/// What a generated workload is besides its nodes: [`generate`](crate::generate) hands
/// the nodes to its caller one by one and returns this.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Shape {
    pub ranks: u32,
    /// Aggregation vertices `ranks .. ranks + aggregators` (SHARP), 0 otherwise.
    pub aggregators: u32,
    /// Nodes generated (ids `0..nodes`).
    pub nodes: u32,
    /// Connections used (ids `0..conns`).
    pub conns: u32,
    /// The join node that closes each iteration.
    pub iteration_ends: Vec<u32>,
}

/// Generates a graph a stage at a time into [`Builder::out`] (nothing is kept per node
/// but the current iteration's "has a dependent" flag and each connection's last
/// `window` sends): adds each connection's window dependency and closes iterations with
/// a join.
///
/// A dependency another one of the same node implies is left out, so that a node waits
/// on what can be the last of its dependencies to be delivered and nothing else: a
/// window slot of an earlier iteration (delivered before the gate, the join that closed
/// that iteration, which every node of this one follows), and the gate when the window
/// slot is of this iteration (the slot follows the gate). When a node becomes ready is
/// unchanged; what changes is how far back a node not generated yet can point, which is
/// what lets a simulator generate the graph as it runs ([`Builder::low_water`]).
pub(crate) struct Builder {
    pub shape: Shape,
    window: u32,
    /// Per connection: its last `window` sends, oldest first.
    conn_recent: Vec<std::collections::VecDeque<u32>>,
    conn_ids: std::collections::BTreeMap<(u32, u32, u32), u32>,
    /// The first node of the iteration being generated, and per node since then whether
    /// a later node of the iteration depends on it.
    iteration_start: u32,
    has_dependent: Vec<bool>,
    /// The join that closed the previous iteration (`None` in the first).
    pub gate: Option<u32>,
    /// The nodes generated since [`Builder::clear_out`], `out[..out_len]`; the nodes past
    /// it are kept to reuse their `after` vectors.
    out: Vec<Node>,
    out_len: usize,
    /// A send's dependencies while they are worked out.
    after: Vec<u32>,
    /// What [`Builder::low_water`] and [`Builder::free_ahead`] need (`None`: not asked for).
    reach: Option<Reach>,
}

/// The bookkeeping behind [`Builder::low_water`]: which generated nodes a later node can
/// still depend on. A later node depends on the gate, on a window slot (one of its
/// connection's last `window` sends, of this iteration), on what its algorithm names (a
/// node of the stage before it that nothing depends on yet), or, for the join, on the
/// iteration's nodes that nothing depends on.
struct Reach {
    /// The job's connections (all exist from the first iteration's end on).
    conns: u32,
    /// Per connection, its sends in this iteration.
    sends: Vec<u32>,
    /// Connections with fewer than `window` sends in this iteration (or none yet): only
    /// their sends can depend on the gate, or on nothing at all in the first iteration.
    short: u32,
    /// (send, connection) of every send that was in its connection's window when it was
    /// pushed; an entry is stale once it left the window or is of an earlier iteration.
    slots: std::collections::BinaryHeap<std::cmp::Reverse<(u32, u32)>>,
    /// No node of this iteration before it lacks a dependent.
    first_sink: u32,
}

impl Builder {
    pub fn new(ranks: u32, window: u32) -> Builder {
        Builder {
            shape: Shape { ranks, ..Shape::default() },
            window,
            conn_recent: vec![],
            conn_ids: Default::default(),
            iteration_start: 0,
            has_dependent: vec![],
            gate: None,
            out: vec![],
            out_len: 0,
            after: vec![],
            reach: None,
        }
    }

    /// Keeps what [`Builder::low_water`] and [`Builder::free_ahead`] need, for a job of
    /// `conns` connections.
    pub fn track_reach(&mut self, conns: u32) {
        self.reach = Some(Reach { conns, sends: vec![], short: conns, slots: Default::default(), first_sink: self.iteration_start });
    }

    /// The id the next node gets.
    pub fn next_id(&self) -> u32 {
        self.shape.nodes
    }

    /// The connection of (`lane`, `src`, `dst`): one QP per peer and lane (channel, tree).
    pub fn conn(&mut self, lane: u32, src: u32, dst: u32) -> u32 {
        let next = self.conn_ids.len() as u32;
        let id = *self.conn_ids.entry((lane, src, dst)).or_insert(next);
        if id as usize == self.conn_recent.len() {
            self.conn_recent.push(Default::default());
        }
        id
    }

    /// The nodes generated since the last [`Builder::clear_out`], in id order.
    pub fn out(&self) -> &[Node] {
        &self.out[..self.out_len]
    }

    /// Starts the output afresh (keeping the nodes' vectors to reuse).
    pub fn clear_out(&mut self) {
        self.out_len = 0;
    }

    /// Appends a node to the output as the next id, a send (`Some((src, dst, bytes,
    /// conn))`) or a join, after the nodes in `self.after`; returns its id.
    fn emit(&mut self, send: Option<(u32, u32, u64, u32)>) -> u32 {
        let id = self.shape.nodes;
        for &a in &self.after {
            if a >= self.iteration_start {
                self.has_dependent[(a - self.iteration_start) as usize] = true;
            }
        }
        self.has_dependent.push(false);
        // Reuse the vector of the node that was in this place in an earlier stage.
        let mut after = match self.out.get_mut(self.out_len) {
            Some(Node::Send { after, .. } | Node::Join { after }) => std::mem::take(after),
            None => Vec::new(),
        };
        after.clone_from(&self.after);
        let node = match send {
            Some((src, dst, bytes, conn)) => Node::Send { src, dst, bytes, conn, after },
            None => Node::Join { after },
        };
        match self.out.get_mut(self.out_len) {
            Some(place) => *place = node,
            None => self.out.push(node),
        }
        self.out_len += 1;
        self.shape.nodes += 1;
        id
    }

    /// Adds a send after `after`, and after the send `window` places earlier on its
    /// connection (a free receive slot), leaving out what the other implies (see the
    /// type's doc). Returns its index.
    pub fn send(&mut self, lane: u32, src: u32, dst: u32, bytes: u64, after: &[u32]) -> u32 {
        let conn = self.conn(lane, src, dst);
        let id = self.shape.nodes;
        self.after.clear();
        self.after.extend_from_slice(after);
        let recent = &mut self.conn_recent[conn as usize];
        if self.window > 0 && recent.len() >= self.window as usize {
            let slot = recent[recent.len() - self.window as usize];
            if slot >= self.iteration_start {
                if let Some(g) = self.gate {
                    self.after.retain(|&a| a != g);
                }
                if !self.after.contains(&slot) {
                    self.after.push(slot);
                }
            }
        }
        recent.push_back(id);
        if recent.len() > self.window as usize {
            recent.pop_front();
        }
        if let Some(r) = &mut self.reach {
            if r.sends.len() <= conn as usize {
                r.sends.resize(conn as usize + 1, 0);
            }
            r.sends[conn as usize] += 1;
            if r.sends[conn as usize] == self.window {
                r.short -= 1;
            }
            r.slots.push(std::cmp::Reverse((id, conn)));
        }
        self.emit(Some((src, dst, bytes, conn)))
    }

    /// Closes the iteration: a join after every node of it that no later node of it
    /// depends on. Returns the join's index.
    pub fn end_iteration(&mut self) -> u32 {
        let start = self.iteration_start;
        self.after.clear();
        self.after.extend(self.has_dependent.iter().enumerate().filter(|(_, &d)| !d).map(|(i, _)| start + i as u32));
        self.has_dependent.clear();
        // The join itself belongs to no iteration: the next one starts after it.
        self.iteration_start = u32::MAX;
        let j = self.emit(None);
        self.has_dependent.clear();
        self.iteration_start = self.shape.nodes;
        self.shape.iteration_ends.push(j);
        self.gate = Some(j);
        if let Some(r) = &mut self.reach {
            debug_assert_eq!(self.conn_ids.len() as u32, r.conns, "every connection is made in the first iteration");
            r.sends.iter_mut().for_each(|s| *s = 0);
            r.short = r.conns;
            r.first_sink = self.iteration_start;
        }
        j
    }

    /// Between two stages: the lowest node id a node not generated yet may depend on
    /// (the next id when it can depend only on nodes not generated yet). Needs
    /// [`Builder::track_reach`].
    pub fn low_water(&mut self) -> u32 {
        let r = self.reach.as_mut().expect("track_reach was called");
        let start = self.iteration_start;
        while r.first_sink < self.shape.nodes && self.has_dependent[(r.first_sink - start) as usize] {
            r.first_sink += 1;
        }
        let mut low = r.first_sink;
        while let Some(&std::cmp::Reverse((id, conn))) = r.slots.peek() {
            if id >= start && self.conn_recent[conn as usize].front().is_some_and(|&f| f <= id) {
                low = low.min(id);
                break;
            }
            r.slots.pop();
        }
        match self.gate {
            Some(g) if r.short > 0 => low.min(g),
            _ => low,
        }
    }

    /// Between two stages: whether a node not generated yet may depend on nothing (a
    /// send of the first iteration on a connection with fewer than `window` sends).
    /// Needs [`Builder::track_reach`].
    pub fn free_ahead(&self) -> bool {
        self.gate.is_none() && self.reach.as_ref().expect("track_reach was called").short > 0
    }

    pub fn finish(mut self) -> Shape {
        self.shape.conns = self.conn_ids.len() as u32;
        self.shape
    }
}

/// Splits `total` into `parts` near-equal pieces (the first ones one larger).
pub(crate) fn split(total: u64, parts: u64) -> impl Iterator<Item = u64> {
    let (q, r) = (total / parts, total % parts);
    (0..parts).map(move |i| q + u64::from(i < r))
}
