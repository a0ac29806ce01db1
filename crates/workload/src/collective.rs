//! NCCL's collective algorithms as transfer graphs (see the crate doc for the granularity).

use crate::{split, Builder, Dag, Node, Shape};

/// The collective operation, with nccl-tests' meaning of the size `S`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Collective {
    /// `S` = each rank's array; every rank ends with the element-wise sum.
    AllReduce,
    /// `S` = the gathered output; each rank contributes `S / n`.
    AllGather,
    /// `S` = each rank's input; each rank ends with its `S / n` share, reduced.
    ReduceScatter,
    /// `S` = the array the root sends to every rank.
    Broadcast,
    /// `S` = each rank's send buffer; `S / n` goes to every rank.
    AllToAll,
}

impl Collective {
    pub fn name(self) -> &'static str {
        match self {
            Collective::AllReduce => "all-reduce",
            Collective::AllGather => "all-gather",
            Collective::ReduceScatter => "reduce-scatter",
            Collective::Broadcast => "broadcast",
            Collective::AllToAll => "all-to-all",
        }
    }
    pub fn parse(s: &str) -> Option<Collective> {
        [Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter, Collective::Broadcast, Collective::AllToAll]
            .into_iter()
            .find(|c| c.name() == s)
    }
}

/// How the collective moves data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    /// NCCL's ring: all-reduce = reduce-scatter then all-gather, 2(n−1) steps; all-gather
    /// and reduce-scatter n−1 steps; broadcast a chain from the root. All-to-all is
    /// point-to-point (every rank writes to every peer) whatever the algorithm says.
    Ring,
    /// NCCL's double binary tree all-reduce (Sanders, Speck & Träff, "Two-tree algorithms
    /// for full bandwidth broadcast, reduction and scan", Parallel Computing 2009; NCCL
    /// 2.4): half the data reduced up and broadcast down each of two binary trees, the
    /// second the first shifted by one rank so most leaves of one are inner nodes of the
    /// other.
    Tree,
    /// SHARP-style in-network all-reduce (Graham et al., "Scalable Hierarchical
    /// Aggregation Protocol (SHArP)", COMHPC 2016; SHARPv2 streaming aggregation, Hot
    /// Interconnects 2020): each rank sends its data up to an aggregation vertex once and
    /// receives the result from it once; aggregation vertices reduce their children's
    /// chunks and send one stream up, and the root's result comes back down the same
    /// tree. The tree is the driver's ([`AggregationTree`]); this crate only knows its
    /// shape.
    Sharp,
}

impl Algorithm {
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Ring => "ring",
            Algorithm::Tree => "tree",
            Algorithm::Sharp => "sharp",
        }
    }
}

/// The aggregation tree of [`Algorithm::Sharp`]: vertices `0..ranks` are the ranks,
/// vertices `ranks..` aggregation vertices (which the driver maps onto the aggregation
/// nodes of switches). `parent[v]` is `None` for the root only.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AggregationTree {
    pub parent: Vec<Option<u32>>,
}

impl AggregationTree {
    /// Checks the shape SHARP needs for `ranks` ranks: ranks are leaves whose parents are
    /// aggregation vertices, one root (an aggregation vertex), every vertex reaches it,
    /// every aggregation vertex has a child.
    fn check(&self, ranks: u32) -> Result<(), String> {
        let n = self.parent.len();
        if n <= ranks as usize {
            return Err(format!("the aggregation tree has {n} vertices, not more than the {ranks} ranks"));
        }
        let mut children = vec![0u32; n];
        for (v, p) in self.parent.iter().enumerate() {
            match *p {
                Some(p) if p as usize >= n => return Err(format!("vertex {v}'s parent {p} is not a vertex")),
                Some(p) if p < ranks => return Err(format!("vertex {v}'s parent {p} is a rank, not an aggregation vertex")),
                Some(p) => children[p as usize] += 1,
                None if (v as u32) < ranks => return Err(format!("rank {v} has no aggregation vertex above it")),
                None => {}
            }
        }
        if self.parent.iter().filter(|p| p.is_none()).count() != 1 {
            return Err("the aggregation tree must have exactly one root".into());
        }
        if let Some(a) = (ranks as usize..n).find(|&a| children[a] == 0) {
            return Err(format!("aggregation vertex {a} has no children"));
        }
        for v in 0..n {
            let (mut u, mut hops) = (v, 0);
            while let Some(p) = self.parent[u] {
                u = p as usize;
                hops += 1;
                if hops > n {
                    return Err(format!("vertex {v} is on a cycle"));
                }
            }
        }
        Ok(())
    }
}

/// A collective to build.
#[derive(Clone, Debug)]
pub struct Spec {
    pub op: Collective,
    pub algorithm: Algorithm,
    pub ranks: u32,
    /// Bytes, with nccl-tests' meaning for `op` (see [`Collective`]).
    pub size: u64,
    /// NCCL channels: each carries an equal share of the data on its own connections.
    pub channels: u32,
    /// Largest transfer (NCCL's buffer step).
    pub chunk: u64,
    /// Receive slots per connection (NCCL_STEPS).
    pub window: u32,
    /// Broadcast root.
    pub root: u32,
    /// Back-to-back repetitions, each after the previous one completed everywhere.
    pub iterations: u32,
    /// The aggregation tree ([`Algorithm::Sharp`] only).
    pub tree: Option<AggregationTree>,
}

impl Spec {
    /// NCCL's defaults: one channel, 512 KiB transfers, 8 slots, one iteration.
    pub fn new(op: Collective, algorithm: Algorithm, ranks: u32, size: u64) -> Spec {
        Spec { op, algorithm, ranks, size, channels: 1, chunk: 512 << 10, window: 8, root: 0, iterations: 1, tree: None }
    }

    fn check(&self) -> Result<(), String> {
        if self.ranks < 2 {
            return Err(format!("a collective needs at least 2 ranks, got {}", self.ranks));
        }
        if self.channels == 0 || self.channels > 64 {
            return Err(format!("channels must be 1..64, got {}", self.channels));
        }
        if self.chunk == 0 {
            return Err("chunk must be at least 1 byte".into());
        }
        if self.window == 0 {
            return Err("window must be at least 1 slot".into());
        }
        if self.iterations == 0 {
            return Err("iterations must be at least 1".into());
        }
        if self.root >= self.ranks {
            return Err(format!("root {} is not a rank (0..{})", self.root, self.ranks));
        }
        if self.algorithm == Algorithm::Tree && self.op != Collective::AllReduce {
            return Err(format!("the tree algorithm is NCCL's all-reduce; {} uses ring", self.op.name()));
        }
        match (&self.tree, self.algorithm) {
            (_, Algorithm::Sharp) if self.op != Collective::AllReduce => {
                return Err(format!("sharp is an in-network all-reduce; {} uses ring", self.op.name()))
            }
            (Some(t), Algorithm::Sharp) => t.check(self.ranks)?,
            (None, Algorithm::Sharp) => return Err("sharp needs an aggregation tree (the driver builds it from the fabric)".into()),
            (Some(_), _) => return Err(format!("an aggregation tree is for sharp, not {}", self.algorithm.name())),
            (None, _) => {}
        }
        Ok(())
    }
}

/// Builds the transfer graph of `spec`'s iterations, each closed by a join.
pub fn build(spec: &Spec) -> Result<Dag, String> {
    let mut nodes = vec![];
    let shape = generate(spec, &mut |n: &Node| nodes.push(n.clone()))?;
    Ok(Dag { ranks: shape.ranks, aggregators: shape.aggregators, nodes, conns: shape.conns, iteration_ends: shape.iteration_ends })
}

/// Generates the same graph as [`build`], node by node in the same order, handing each
/// node to `sink` instead of keeping it: a caller that needs the graph more than once
/// generates it again (allreduce1024's 2.1 M transfers would take 200 MB as a [`Dag`]).
pub fn generate(spec: &Spec, sink: &mut dyn FnMut(&Node)) -> Result<Shape, String> {
    let mut g = Generator::new(spec.clone())?;
    while let Some(nodes) = g.next_stage() {
        nodes.iter().for_each(&mut *sink);
    }
    Ok(g.finish())
}

/// A collective's graph generated a stage at a time, as a simulator running it needs
/// it: a stage is a ring step, one chunk of a broadcast chain or of a tree's reduction
/// and broadcast, one rank's round of an all-to-all chunk, or an iteration's join.
/// Between stages, [`Generator::low_water`] says which nodes a node not generated yet
/// can still depend on, and [`Generator::free_ahead`] whether one can depend on none:
/// a simulator generates only until those are past what it is about to deliver.
pub struct Generator {
    spec: Spec,
    b: Builder,
    stages: Stages,
    /// Iterations closed so far.
    iterations: u32,
}

impl Generator {
    /// A generator of `spec`'s graph, which must be one (the errors [`build`] gives).
    pub fn new(spec: Spec) -> Result<Generator, String> {
        spec.check()?;
        let mut b = Builder::new(spec.ranks, spec.window);
        if let Some(t) = &spec.tree {
            b.shape.aggregators = t.parent.len() as u32 - spec.ranks;
        }
        let stages = Stages::new(&spec);
        Ok(Generator { spec, b, stages, iterations: 0 })
    }

    /// Keeps what [`Generator::low_water`] and [`Generator::free_ahead`] need; `conns` is
    /// the job's number of connections ([`Shape::conns`], from a first generation).
    pub fn track_reach(mut self, conns: u32) -> Generator {
        self.b.track_reach(conns);
        self
    }

    fn done(&self) -> bool {
        self.iterations == self.spec.iterations
    }

    /// Generates the next stage and returns its nodes, in id order (ids continue from
    /// the previous stage's); `None` once the graph is complete.
    pub fn next_stage(&mut self) -> Option<&[Node]> {
        if self.done() {
            return None;
        }
        self.b.clear_out();
        let gate = self.b.gate;
        if !self.stages.next(&mut self.b, &self.spec, gate.as_slice()) {
            // The iteration ends when every node without a dependent inside it is done.
            self.b.end_iteration();
            self.iterations += 1;
            if !self.done() {
                self.stages = Stages::new(&self.spec);
            }
        }
        Some(self.b.out())
    }

    /// The nodes generated so far.
    pub fn generated(&self) -> u32 {
        self.b.next_id()
    }

    /// The lowest node id a node not generated yet may depend on (`u32::MAX` once the
    /// graph is complete). Needs [`Generator::track_reach`].
    pub fn low_water(&mut self) -> u32 {
        if self.done() {
            u32::MAX
        } else {
            self.b.low_water()
        }
    }

    /// Whether a node not generated yet may depend on nothing (be posted at the job's
    /// start). Needs [`Generator::track_reach`].
    pub fn free_ahead(&self) -> bool {
        !self.done() && self.b.free_ahead()
    }

    /// The graph's shape (complete once [`Generator::next_stage`] returned `None`).
    pub fn finish(self) -> Shape {
        self.b.finish()
    }
}

/// Where one iteration's generation is, per algorithm.
enum Stages {
    Ring(Ring),
    Chain(Chain),
    AllToAll(AllToAll),
    Trees(Trees),
}

impl Stages {
    fn new(spec: &Spec) -> Stages {
        match (spec.op, spec.algorithm) {
            (Collective::AllReduce, Algorithm::Ring) => Stages::Ring(Ring::new(spec, true, true)),
            (Collective::AllReduce, Algorithm::Tree) => Stages::Trees(Trees::double_binary(spec)),
            (Collective::AllReduce, Algorithm::Sharp) => Stages::Trees(Trees::sharp(spec)),
            (Collective::ReduceScatter, _) => Stages::Ring(Ring::new(spec, true, false)),
            (Collective::AllGather, _) => Stages::Ring(Ring::new(spec, false, true)),
            (Collective::Broadcast, _) => Stages::Chain(Chain::new(spec)),
            (Collective::AllToAll, _) => Stages::AllToAll(AllToAll::new(spec)),
        }
    }

    /// Generates the iteration's next stage into `b`, its first nodes after `gate`;
    /// `false` (nothing generated) when the iteration has no stage left.
    fn next(&mut self, b: &mut Builder, spec: &Spec, gate: &[u32]) -> bool {
        match self {
            Stages::Ring(s) => s.next(b, spec, gate),
            Stages::Chain(s) => s.next(b, spec, gate),
            Stages::AllToAll(s) => s.next(b, spec, gate),
            Stages::Trees(s) => s.next(b, spec, gate),
        }
    }
}

/// Channel `c`'s share of `spec`'s size.
fn channel_bytes(spec: &Spec, c: u32) -> u64 {
    split(spec.size, spec.channels as u64).nth(c as usize).expect("c < channels")
}

/// Transfer sizes of loop `l` of a channel's `bytes`: `n` blocks of at most `chunk`
/// bytes; `None` past the last loop (there is always one).
fn ring_loop(bytes: u64, n: u32, chunk: u64, l: u64) -> Option<Vec<u64>> {
    // Past 2^64 − 1 bytes a loop holds more than any channel has: saturating is exact.
    let per_loop = chunk.saturating_mul(n as u64);
    let count = bytes.div_ceil(per_loop).max(1);
    (l < count).then(|| split((bytes - l * per_loop).min(per_loop), n as u64).collect())
}

/// Ring reduce-scatter (`rs`) and/or all-gather (`ag`): at step k rank r writes one
/// block to rank r+1, which it could only do once step k−1's block from rank r−1 had
/// arrived. During reduce-scatter rank r sends block (r − k) mod n, so block b ends fully
/// reduced at rank b − 1, which starts the all-gather with it. A stage is one step of
/// one loop of one channel.
struct Ring {
    rs: bool,
    ag: bool,
    channel: u32,
    /// The loop's index and its blocks.
    l: u64,
    blocks: Vec<u64>,
    /// The next step.
    k: u32,
}

impl Ring {
    fn new(spec: &Spec, rs: bool, ag: bool) -> Ring {
        let blocks = ring_loop(channel_bytes(spec, 0), spec.ranks, spec.chunk, 0).expect("a channel has a loop");
        Ring { rs, ag, channel: 0, l: 0, blocks, k: 0 }
    }

    fn next(&mut self, b: &mut Builder, spec: &Spec, gate: &[u32]) -> bool {
        let n = spec.ranks;
        let steps = (self.rs as u32 + self.ag as u32) * (n - 1);
        if self.k == steps {
            self.k = 0;
            self.l += 1;
            match ring_loop(channel_bytes(spec, self.channel), n, spec.chunk, self.l) {
                Some(blocks) => self.blocks = blocks,
                None if self.channel + 1 == spec.channels => return false,
                None => {
                    (self.channel, self.l) = (self.channel + 1, 0);
                    self.blocks = ring_loop(channel_bytes(spec, self.channel), n, spec.chunk, 0).expect("a channel has a loop");
                }
            }
        }
        let (k, first) = (self.k, b.next_id());
        for r in 0..n {
            // Reduce-scatter (and a lone all-gather) start with rank r's own block r; the
            // all-gather after a reduce-scatter starts with block r + 1.
            let (kk, owner) = if self.rs && k < n - 1 {
                (k, r)
            } else if self.rs {
                (k - (n - 1), r + 1)
            } else {
                (k, r)
            };
            let blk = ((owner + n - kk % n) % n) as usize;
            // Step k − 1's send of rank r − 1, the stage before this one.
            // Read only when k > 0, when the previous step is `first - n ..`.
            let prev = [(first + (r + n - 1) % n).wrapping_sub(n)];
            b.send(self.channel, r, (r + 1) % n, self.blocks[blk], if k == 0 { gate } else { &prev });
        }
        self.k += 1;
        true
    }
}

/// Broadcast as NCCL's ring does it: a chain root → root+1 → … → root−1, chunk by
/// chunk. A stage is one chunk of one channel down the chain.
struct Chain {
    channel: u32,
    /// The next chunk.
    j: u64,
}

impl Chain {
    fn new(_: &Spec) -> Chain {
        Chain { channel: 0, j: 0 }
    }

    fn next(&mut self, b: &mut Builder, spec: &Spec, gate: &[u32]) -> bool {
        let n = spec.ranks;
        let mut bytes = channel_bytes(spec, self.channel);
        if self.j == bytes.div_ceil(spec.chunk).max(1) {
            if self.channel + 1 == spec.channels {
                return false;
            }
            (self.channel, self.j) = (self.channel + 1, 0);
            bytes = channel_bytes(spec, self.channel);
        }
        let chunks = bytes.div_ceil(spec.chunk).max(1);
        let piece = split(bytes, chunks).nth(self.j as usize).expect("j < chunks");
        let first = b.next_id();
        for h in 0..n - 1 {
            let (src, dst) = ((spec.root + h) % n, (spec.root + h + 1) % n);
            // Read only when h > 0.
            let prev = [(first + h).wrapping_sub(1)];
            b.send(self.channel, src, dst, piece, if h == 0 { gate } else { &prev });
        }
        self.j += 1;
        true
    }
}

/// All-to-all as NCCL's grouped send/recv: every rank writes `S / n` to every peer, the
/// peers in the order r+1, r+2, … (NCCL's p2p schedule), chunk by chunk. A stage is one
/// rank's sends of one chunk of one channel.
struct AllToAll {
    channel: u32,
    /// The channel's share of what goes to each peer, and its most chunks to one peer.
    share: Vec<u64>,
    chunks: u64,
    /// The next chunk and rank.
    j: u64,
    r: u32,
}

impl AllToAll {
    fn new(spec: &Spec) -> AllToAll {
        let mut a = AllToAll { channel: 0, share: vec![], chunks: 0, j: 0, r: 0 };
        a.start_channel(spec, 0);
        a
    }

    fn start_channel(&mut self, spec: &Spec, c: u32) {
        self.share = split(spec.size, spec.ranks as u64).map(|p| split(p, spec.channels as u64).nth(c as usize).unwrap_or(0)).collect();
        self.chunks = self.share.iter().map(|&x| x.div_ceil(spec.chunk).max(1)).max().unwrap_or(1);
        (self.channel, self.j, self.r) = (c, 0, 0);
    }

    fn next(&mut self, b: &mut Builder, spec: &Spec, gate: &[u32]) -> bool {
        let n = spec.ranks;
        if self.r == n {
            (self.j, self.r) = (self.j + 1, 0);
        }
        if self.j == self.chunks {
            if self.channel + 1 == spec.channels {
                return false;
            }
            self.start_channel(spec, self.channel + 1);
        }
        let (r, j) = (self.r, self.j);
        for i in 1..n {
            let peer = (r + i) % n;
            let total = self.share[peer as usize];
            let pieces = total.div_ceil(spec.chunk).max(1);
            if j < pieces {
                let piece = split(total, pieces).nth(j as usize).unwrap_or(0);
                b.send(self.channel, r, peer, piece, gate);
            }
        }
        self.r += 1;
        true
    }
}

/// A binary tree over ranks 0..n in in-order (each subtree a contiguous range, its root
/// the middle): parent of each rank (`None` for the root) and the root.
pub(crate) fn binary_tree(n: u32) -> (Vec<Option<u32>>, u32) {
    fn place(lo: u32, hi: u32, parent: Option<u32>, out: &mut Vec<Option<u32>>) -> Option<u32> {
        if lo >= hi {
            return None;
        }
        let mid = lo + (hi - lo) / 2;
        out[mid as usize] = parent;
        place(lo, mid, Some(mid), out);
        place(mid + 1, hi, Some(mid), out);
        Some(mid)
    }
    let mut parent = vec![None; n as usize];
    let root = place(0, n, None, &mut parent).expect("n >= 1");
    (parent, root)
}

/// A tree data is reduced up and broadcast down: each vertex's parent and children, and
/// its vertices in post-order (children before parents).
struct Tree {
    parent: Vec<Option<u32>>,
    root: u32,
    children: Vec<Vec<u32>>,
    post: Vec<u32>,
}

impl Tree {
    fn new(parent: Vec<Option<u32>>, root: u32) -> Tree {
        let n = parent.len();
        let mut children: Vec<Vec<u32>> = vec![vec![]; n];
        for (u, p) in parent.iter().enumerate() {
            if let Some(p) = p {
                children[*p as usize].push(u as u32);
            }
        }
        let mut post = vec![];
        let mut stack = vec![(root, false)];
        while let Some((v, expanded)) = stack.pop() {
            if expanded {
                post.push(v);
            } else {
                stack.push((v, true));
                for &ch in children[v as usize].iter().rev() {
                    stack.push((ch, false));
                }
            }
        }
        Tree { parent, root, children, post }
    }
}

/// All-reduces over trees, each lane (a channel's share of the data on one tree, on its
/// own connections) reduced up and broadcast down chunk by chunk, pipelined: a vertex
/// sends chunk k up once chunk k from every child has arrived; the root sends it down
/// once all its children's did; every other vertex forwards it down once its parent's
/// has arrived. A stage is one chunk of one lane, up and down.
struct Trees {
    trees: Vec<Tree>,
    /// Each lane's id, tree and bytes, in generation order.
    lanes: Vec<(u32, usize, u64)>,
    /// The lane being generated and its next chunk.
    lane: usize,
    j: u64,
    /// Per vertex: its send up of this chunk, and the send that brought it the result.
    up: Vec<u32>,
    down_into: Vec<u32>,
    /// A send's dependencies while they are gathered.
    after: Vec<u32>,
}

impl Trees {
    /// Double binary tree all-reduce; each channel uses both trees (lanes 2c and 2c+1),
    /// the second the first with every rank relabelled r → r+1 (mod n).
    fn double_binary(spec: &Spec) -> Trees {
        let n = spec.ranks;
        let (p0, root0) = binary_tree(n);
        let shift = |r: u32| (r + 1) % n;
        let mut p1 = vec![None; n as usize];
        for r in 0..n {
            p1[shift(r) as usize] = p0[r as usize].map(shift);
        }
        let trees = vec![Tree::new(p0, root0), Tree::new(p1, shift(root0))];
        let parts: Vec<u64> = split(spec.size, 2 * spec.channels as u64).collect();
        let lanes = (0..2 * spec.channels).map(|lane| (lane, lane as usize % 2, parts[lane as usize])).collect();
        Trees::over(trees, lanes)
    }

    /// SHARP all-reduce over the driver's aggregation tree; each channel streams its
    /// share of the data through the same tree on its own connections (lane = channel).
    fn sharp(spec: &Spec) -> Trees {
        let parent = spec.tree.as_ref().expect("checked").parent.clone();
        let root = parent.iter().position(|p| p.is_none()).expect("checked") as u32;
        let lanes = split(spec.size, spec.channels as u64).enumerate().map(|(c, bytes)| (c as u32, 0, bytes)).collect();
        Trees::over(vec![Tree::new(parent, root)], lanes)
    }

    fn over(trees: Vec<Tree>, lanes: Vec<(u32, usize, u64)>) -> Trees {
        let n = trees[0].parent.len();
        Trees { trees, lanes, lane: 0, j: 0, up: vec![u32::MAX; n], down_into: vec![u32::MAX; n], after: vec![] }
    }

    fn next(&mut self, b: &mut Builder, spec: &Spec, gate: &[u32]) -> bool {
        let Some(&(mut lane_id, mut t, mut bytes)) = self.lanes.get(self.lane) else { return false };
        if self.j == bytes.div_ceil(spec.chunk).max(1) {
            (self.lane, self.j) = (self.lane + 1, 0);
            let Some(&next) = self.lanes.get(self.lane) else { return false };
            (lane_id, t, bytes) = next;
        }
        let chunks = bytes.div_ceil(spec.chunk).max(1);
        let piece = split(bytes, chunks).nth(self.j as usize).expect("j < chunks");
        let tree = &self.trees[t];
        let (up, down_into, after) = (&mut self.up, &mut self.down_into, &mut self.after);
        // Into `after`: the sends up of `v`'s children of this chunk, or the gate for a leaf.
        let from_children = |v: u32, up: &[u32], after: &mut Vec<u32>| {
            after.clear();
            after.extend(tree.children[v as usize].iter().map(|&ch| up[ch as usize]));
            if after.is_empty() {
                after.extend_from_slice(gate);
            }
        };
        for &v in &tree.post {
            let Some(pv) = tree.parent[v as usize] else { continue };
            from_children(v, up, after);
            up[v as usize] = b.send(lane_id, v, pv, piece, after);
        }
        // Down: the root once every child's reduction arrived; others once their parent's result did.
        for &v in tree.post.iter().rev() {
            if v == tree.root {
                from_children(v, up, after);
            } else {
                after.clear();
                after.push(down_into[v as usize]);
            }
            for &ch in &tree.children[v as usize] {
                down_into[ch as usize] = b.send(lane_id, v, ch, piece, after);
            }
        }
        self.j += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(d: &Dag) -> Vec<u64> {
        d.bytes_sent()
    }

    #[test]
    fn ring_all_reduce_moves_2_n_minus_1_over_n() {
        for n in [2u32, 3, 8] {
            let s = 8 * 1_000_003;
            let d = build(&Spec::new(Collective::AllReduce, Algorithm::Ring, n, s)).unwrap();
            let total: u64 = sent(&d).iter().sum();
            assert_eq!(total, 2 * (n as u64 - 1) * s, "n = {n}");
        }
    }

    #[test]
    fn chunk_past_2_pow_64_is_one_loop() {
        let mut spec = Spec::new(Collective::AllReduce, Algorithm::Ring, 8, 32 << 20);
        spec.chunk = u64::MAX;
        let huge = build(&spec).unwrap();
        spec.chunk = 32 << 20;
        assert_eq!(huge.nodes, build(&spec).unwrap().nodes);
    }

    #[test]
    fn ring_sends_go_to_the_next_rank() {
        let n = 5u32;
        let mut spec = Spec::new(Collective::AllReduce, Algorithm::Ring, n, 5 * 100);
        spec.chunk = 100;
        let d = build(&spec).unwrap();
        let sends: Vec<_> = d.nodes.iter().filter_map(|x| if let Node::Send { src, dst, .. } = x { Some((*src, *dst)) } else { None }).collect();
        assert_eq!(sends.len(), (2 * (n - 1) * n) as usize);
        assert!(sends.iter().all(|&(s, t)| t == (s + 1) % n));
    }

    #[test]
    fn window_bounds_run_ahead() {
        let mut spec = Spec::new(Collective::AllReduce, Algorithm::Ring, 4, 64 << 20);
        spec.chunk = 1 << 20;
        spec.window = 3;
        let d = build(&spec).unwrap();
        // Each connection's m-th send depends on its (m−3)-th.
        let mut per_conn: std::collections::BTreeMap<u32, Vec<u32>> = Default::default();
        for (i, x) in d.nodes.iter().enumerate() {
            if let Node::Send { conn, after, .. } = x {
                let v = per_conn.entry(*conn).or_default();
                if v.len() >= 3 {
                    assert!(after.contains(&v[v.len() - 3]));
                }
                v.push(i as u32);
            }
        }
        assert_eq!(per_conn.len(), 4);
    }

    #[test]
    fn graph_is_topologically_ordered_and_iterations_chain() {
        for op in [Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter, Collective::Broadcast, Collective::AllToAll] {
            let mut spec = Spec::new(op, Algorithm::Ring, 6, 3 << 20);
            spec.iterations = 3;
            spec.channels = 2;
            let d = build(&spec).unwrap();
            for (i, x) in d.nodes.iter().enumerate() {
                assert!(x.after().iter().all(|&a| (a as usize) < i), "{op:?}: node {i} depends on a later node");
            }
            assert_eq!(d.iteration_ends.len(), 3);
            // Every send of iteration 2 is (transitively) after iteration 1's join.
            let j1 = d.iteration_ends[0] as usize;
            let mut reach = vec![false; d.nodes.len()];
            reach[j1] = true;
            for i in j1 + 1..d.nodes.len() {
                reach[i] = d.nodes[i].after().iter().any(|&a| reach[a as usize]);
            }
            assert!((j1 + 1..d.nodes.len()).all(|i| reach[i]), "{op:?}: an iteration-2 node does not wait for iteration 1");
        }
    }

    #[test]
    fn byte_counts_match_nccl_tests_definitions() {
        let n = 8u64;
        let s = 8 << 20;
        let by = |op, algo| -> u64 { sent(&build(&Spec::new(op, algo, n as u32, s)).unwrap()).iter().sum() };
        assert_eq!(by(Collective::AllGather, Algorithm::Ring), (n - 1) * s); // each block to n−1 ranks
        assert_eq!(by(Collective::ReduceScatter, Algorithm::Ring), (n - 1) * s);
        assert_eq!(by(Collective::Broadcast, Algorithm::Ring), (n - 1) * s);
        assert_eq!(by(Collective::AllToAll, Algorithm::Ring), (n - 1) * s);
        // Tree: every rank but the root sends each half up once; every edge carries it down once.
        assert_eq!(by(Collective::AllReduce, Algorithm::Tree), 2 * (n - 1) * s);
    }

    /// Every spec the low-water tests generate: each op and algorithm, rings of 2 to 8,
    /// windows shorter and longer than a loop, several channels and iterations, and SHARP.
    fn assorted_specs() -> Vec<Spec> {
        let mut v = vec![];
        for op in [Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter, Collective::Broadcast, Collective::AllToAll] {
            for algorithm in [Algorithm::Ring, Algorithm::Tree] {
                for n in [2u32, 3, 5, 8] {
                    for (size, chunk, window, channels, iterations) in
                        [(1u64 << 20, 1u64 << 16, 8u32, 1u32, 1u32), (3 << 20, 1 << 18, 3, 2, 3), (1000, 512 << 10, 8, 1, 2), (7 << 20, 1 << 19, 2, 3, 2)]
                    {
                        let mut s = Spec::new(op, algorithm, n, size);
                        (s.chunk, s.window, s.channels, s.iterations) = (chunk, window, channels, iterations);
                        if s.check().is_ok() {
                            v.push(s);
                        }
                    }
                }
            }
        }
        for (window, iterations) in [(8, 1), (3, 3), (1, 2)] {
            let mut s = sharp(8, 3 << 20);
            (s.chunk, s.channels, s.window, s.iterations) = (1 << 18, 2, window, iterations);
            v.push(s);
        }
        v
    }

    /// What a simulator relies on to generate a graph as it runs: after each stage, no
    /// node generated later depends on a node below the low water, and none depends on
    /// nothing once `free_ahead` says so; and the low water moves on, so that a ring
    /// of many steps is never held whole.
    #[test]
    fn low_water_bounds_what_later_nodes_depend_on() {
        for spec in assorted_specs() {
            let d = build(&spec).unwrap();
            let mut g = Generator::new(spec.clone()).unwrap().track_reach(d.conns);
            // Over the nodes from each boundary on: the lowest dependency, and whether one has none.
            let mut lowest = vec![u32::MAX; d.nodes.len() + 1];
            let mut free = vec![false; d.nodes.len() + 1];
            for i in (0..d.nodes.len()).rev() {
                let a = d.nodes[i].after();
                lowest[i] = lowest[i + 1].min(a.iter().copied().min().unwrap_or(u32::MAX));
                free[i] = free[i + 1] || a.is_empty();
            }
            while g.next_stage().is_some() {
                let (made, low) = (g.generated(), g.low_water());
                assert!(lowest[made as usize] >= low, "{spec:?}: after node {made}, a later node depends on {} < {low}", lowest[made as usize]);
                assert!(g.free_ahead() || !free[made as usize], "{spec:?}: after node {made} a node without dependencies follows");
            }
            assert_eq!(g.finish().nodes as usize, d.nodes.len());
        }
    }

    /// The dependencies left out (a window slot of an earlier iteration, the gate where a
    /// slot of this iteration is listed) change nothing: with every connection's window
    /// slot and the iteration's gate added back to every node, each node is ready at the
    /// same time, released by the same dependency, under random transfer times.
    #[test]
    fn dependencies_left_out_change_no_ready_time() {
        for spec in assorted_specs() {
            let d = build(&spec).unwrap();
            // The full lists: each send's slot `window` sends back on its connection, and
            // the gate of its iteration.
            let mut full: Vec<Vec<u32>> = d.nodes.iter().map(|n| n.after().to_vec()).collect();
            let mut per_conn: std::collections::HashMap<u32, Vec<u32>> = Default::default();
            let mut gate = None;
            for (i, n) in d.nodes.iter().enumerate() {
                if let Node::Send { conn, .. } = n {
                    let sent = per_conn.entry(*conn).or_default();
                    if sent.len() >= spec.window as usize {
                        full[i].push(sent[sent.len() - spec.window as usize]);
                    }
                    sent.push(i as u32);
                    full[i].extend(gate);
                } else {
                    gate = Some(i as u32);
                }
            }
            let mut seed = 0x9e37_79b9_7f4a_7c15u64;
            for _ in 0..4 {
                let time: Vec<u64> = d
                    .nodes
                    .iter()
                    .map(|n| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        if matches!(n, Node::Join { .. }) {
                            0
                        } else {
                            1 + seed % 100
                        }
                    })
                    .collect();
                // Each node's delivery, and the dependency delivered last (the later one on a tie).
                let run = |after: &dyn Fn(usize) -> Vec<u32>| {
                    let mut done = vec![0u64; d.nodes.len()];
                    let mut last = vec![None; d.nodes.len()];
                    for i in 0..d.nodes.len() {
                        let a = after(i);
                        last[i] = a.iter().copied().max_by_key(|&x| (done[x as usize], x));
                        done[i] = last[i].map_or(0, |x| done[x as usize]) + time[i];
                    }
                    (done, last)
                };
                let listed = run(&|i| d.nodes[i].after().to_vec());
                let all = run(&|i| full[i].clone());
                assert_eq!(listed, all, "{spec:?}");
            }
        }
    }

    /// The low water trails the generation by a few steps, not by the graph: a ring of
    /// 8 ranks with 128 loops of 14 steps, two iterations, holds at most the window's
    /// steps and the one being made (the join's sinks are the last steps', which the next
    /// loop's window slots depend on), and nothing can be free after the first loop.
    #[test]
    fn low_water_trails_a_ring_by_its_window() {
        let mut spec = Spec::new(Collective::AllReduce, Algorithm::Ring, 8, 64 << 20);
        (spec.chunk, spec.iterations) = (1 << 16, 2);
        let conns = generate(&spec, &mut |_| {}).unwrap().conns;
        let mut g = Generator::new(spec.clone()).unwrap().track_reach(conns);
        let (mut widest, mut free_until) = (0, 0);
        while g.next_stage().is_some() {
            let (made, low) = (g.generated(), g.low_water());
            widest = widest.max(made.saturating_sub(low));
            if g.free_ahead() {
                free_until = made;
            }
        }
        let step = spec.ranks;
        assert!(widest <= (spec.window + 1) * step, "{widest} nodes held");
        assert!(free_until <= 14 * step, "free nodes may follow node {free_until}");
        assert!(g.finish().nodes > 2 * 128 * 14 * step);
    }

    #[test]
    fn binary_tree_is_a_tree() {
        for n in 1..40u32 {
            let (parent, root) = binary_tree(n);
            assert_eq!(parent[root as usize], None);
            assert_eq!(parent.iter().filter(|p| p.is_none()).count(), 1);
            for r in 0..n {
                let mut v = r;
                let mut hops = 0;
                while let Some(p) = parent[v as usize] {
                    v = p;
                    hops += 1;
                    assert!(hops <= n);
                }
                assert_eq!(v, root);
                assert!((0..n).filter(|&u| parent[u as usize] == Some(r)).count() <= 2);
            }
        }
    }

    #[test]
    fn double_tree_leaves_are_mostly_inner_nodes_of_the_other() {
        let n = 16;
        let (p0, _) = binary_tree(n);
        let leaf0: Vec<bool> = (0..n).map(|v| !(0..n).any(|u| p0[u as usize] == Some(v))).collect();
        let leaf1: Vec<bool> = (0..n).map(|v| leaf0[((v + n - 1) % n) as usize]).collect();
        let both = (0..n as usize).filter(|&v| leaf0[v] && leaf1[v]).count();
        assert!(both <= 1, "{both} ranks are leaves of both trees");
    }

    /// Two leaf aggregation vertices (8 and 9) of 4 ranks each under a root (10): a
    /// two-level leaf-spine as the fabric's aggregation manager builds it.
    fn two_level(n: u32) -> AggregationTree {
        let half = n / 2;
        let mut parent: Vec<Option<u32>> = (0..n).map(|r| Some(n + u32::from(r >= half))).collect();
        parent.extend([Some(n + 2), Some(n + 2), None]);
        AggregationTree { parent }
    }

    fn sharp(n: u32, size: u64) -> Spec {
        let mut s = Spec::new(Collective::AllReduce, Algorithm::Sharp, n, size);
        s.tree = Some(two_level(n));
        s
    }

    #[test]
    fn sharp_sends_each_byte_up_once_and_receives_it_once() {
        let s = 8 * 1_000_003;
        let mut spec = sharp(8, s);
        spec.chunk = 100_000;
        spec.channels = 2;
        let d = build(&spec).unwrap();
        assert_eq!((d.ranks, d.aggregators), (8, 3));
        // Every rank sends S (up) and receives S (the result), whatever n is …
        assert!(d.bytes_sent().iter().all(|&b| b == s), "{:?}", d.bytes_sent());
        assert!(d.bytes_received().iter().all(|&b| b == s));
        // … and talks only to its leaf aggregation vertex; vertices talk along tree edges.
        let t = two_level(8);
        for x in &d.nodes {
            if let Node::Send { src, dst, .. } = *x {
                assert!(t.parent[src as usize] == Some(dst) || t.parent[dst as usize] == Some(src), "{src} -> {dst} is not a tree edge");
            }
        }
        // Each tree edge carries S each way: 10 edges, 2 directions.
        let total: u64 = d.nodes.iter().map(|x| if let Node::Send { bytes, .. } = x { *bytes } else { 0 }).sum();
        assert_eq!(total, 2 * 10 * s);
    }

    #[test]
    fn sharp_streams_chunk_by_chunk() {
        let mut spec = sharp(4, 4 << 20);
        spec.chunk = 1 << 20;
        let d = build(&spec).unwrap();
        let sends: Vec<(u32, u32, &[u32])> =
            d.nodes.iter().filter_map(|x| if let Node::Send { src, dst, after, .. } = x { Some((*src, *dst, after.as_slice())) } else { None }).collect();
        // Per chunk: 4 ranks up, 2 leaf vertices up, root down to 2, leaves down to 4.
        assert_eq!(sends.len(), 4 * 12);
        let idx = |i: usize| d.nodes.iter().enumerate().filter(|(_, x)| matches!(x, Node::Send { .. })).nth(i).unwrap().0 as u32;
        // Chunk 1's leaf-vertex send up waits for chunk 1 of its two ranks only, not for
        // chunk 0's result: the tree is a pipeline.
        let (src, dst, after) = sends[12 + 2];
        assert_eq!((src, dst), (4, 6));
        let want: Vec<u32> = [12, 13].iter().map(|&i| idx(i)).collect();
        assert_eq!(after, want.as_slice());
        // Post-order per chunk: 0→4, 1→4, 4→6, 2→5, 3→5, 5→6, then down; the root sends
        // down once both leaf vertices' chunk arrived.
        let (src, _, after) = sends[6];
        assert_eq!(src, 6);
        assert_eq!(after, [idx(2), idx(5)].as_slice());
    }

    #[test]
    fn sharp_trees_are_checked() {
        let bad = |parent: Vec<Option<u32>>| {
            let mut s = Spec::new(Collective::AllReduce, Algorithm::Sharp, 2, 8);
            s.tree = Some(AggregationTree { parent });
            build(&s).unwrap_err()
        };
        assert!(build(&Spec::new(Collective::AllReduce, Algorithm::Sharp, 2, 8)).unwrap_err().contains("aggregation tree"));
        assert!(bad(vec![Some(2), Some(0), None]).contains("is a rank"));
        assert!(bad(vec![Some(2), None, None]).contains("rank 1"));
        assert!(bad(vec![Some(2), Some(2), None, None]).contains("one root"));
        assert!(bad(vec![Some(2), Some(2), Some(3), Some(2)]).contains("one root"));
        assert!(bad(vec![Some(2), Some(2), None, Some(2)]).contains("no children"));
        assert!(bad(vec![Some(5), Some(2), None]).contains("not a vertex"));
        let mut s = sharp(4, 8);
        s.op = Collective::AllGather;
        assert!(build(&s).is_err());
        let mut s = Spec::new(Collective::AllReduce, Algorithm::Ring, 4, 8);
        s.tree = Some(two_level(4));
        assert!(build(&s).is_err());
    }

    #[test]
    fn bad_specs_are_refused() {
        assert!(build(&Spec::new(Collective::AllReduce, Algorithm::Ring, 1, 8)).is_err());
        assert!(build(&Spec::new(Collective::AllGather, Algorithm::Tree, 4, 8)).is_err());
        let mut s = Spec::new(Collective::Broadcast, Algorithm::Ring, 4, 8);
        s.root = 4;
        assert!(build(&s).is_err());
    }
}
