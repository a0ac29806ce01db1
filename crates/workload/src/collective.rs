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
    spec.check()?;
    let mut b = Builder::new(spec.ranks, spec.window, sink);
    if let Some(t) = &spec.tree {
        b.shape.aggregators = t.parent.len() as u32 - spec.ranks;
    }
    let mut gate = None;
    for _ in 0..spec.iterations {
        let g: Vec<u32> = gate.into_iter().collect();
        match (spec.op, spec.algorithm) {
            (Collective::AllReduce, Algorithm::Ring) => ring(&mut b, spec, true, true, &g),
            (Collective::AllReduce, Algorithm::Tree) => tree_all_reduce(&mut b, spec, &g),
            (Collective::AllReduce, Algorithm::Sharp) => sharp_all_reduce(&mut b, spec, &g),
            (Collective::ReduceScatter, _) => ring(&mut b, spec, true, false, &g),
            (Collective::AllGather, _) => ring(&mut b, spec, false, true, &g),
            (Collective::Broadcast, _) => chain_broadcast(&mut b, spec, &g),
            (Collective::AllToAll, _) => all_to_all(&mut b, spec, &g),
        }
        // The iteration ends when every node without a dependent inside it is done.
        gate = Some(b.end_iteration());
    }
    Ok(b.finish())
}

/// Transfer sizes of one channel's data: loops of `n` blocks of at most `chunk` bytes.
fn loops(bytes: u64, n: u32, chunk: u64) -> Vec<Vec<u64>> {
    // Past 2^64 − 1 bytes a loop holds more than any channel has: saturating is exact.
    let per_loop = chunk.saturating_mul(n as u64);
    let count = bytes.div_ceil(per_loop).max(1);
    (0..count)
        .map(|l| {
            let here = (bytes - l * per_loop).min(per_loop);
            split(here, n as u64).collect()
        })
        .collect()
}

/// Ring reduce-scatter (`rs`) and/or all-gather (`ag`): at step k rank r writes one
/// block to rank r+1, which it could only do once step k−1's block from rank r−1 had
/// arrived. During reduce-scatter rank r sends block (r − k) mod n, so block b ends fully
/// reduced at rank b − 1, which starts the all-gather with it.
fn ring(b: &mut Builder, spec: &Spec, rs: bool, ag: bool, gate: &[u32]) {
    let n = spec.ranks;
    let steps = (rs as u32 + ag as u32) * (n - 1);
    for (c, bytes) in split(spec.size, spec.channels as u64).enumerate() {
        for blocks in loops(bytes, n, spec.chunk) {
            let mut prev: Vec<u32> = vec![];
            for k in 0..steps {
                let mut cur = Vec::with_capacity(n as usize);
                for r in 0..n {
                    // Reduce-scatter (and a lone all-gather) start with rank r's own block
                    // r; the all-gather after a reduce-scatter starts with block r + 1.
                    let (kk, owner) = if rs && k < n - 1 {
                        (k, r)
                    } else if rs {
                        (k - (n - 1), r + 1)
                    } else {
                        (k, r)
                    };
                    let blk = ((owner + n - kk % n) % n) as usize;
                    let after = if k == 0 { gate.to_vec() } else { vec![prev[((r + n - 1) % n) as usize]] };
                    cur.push(b.send(c as u32, r, (r + 1) % n, blocks[blk], after));
                }
                prev = cur;
            }
        }
    }
}

/// Broadcast as NCCL's ring does it: a chain root → root+1 → … → root−1, chunk by chunk.
fn chain_broadcast(b: &mut Builder, spec: &Spec, gate: &[u32]) {
    let n = spec.ranks;
    for (c, bytes) in split(spec.size, spec.channels as u64).enumerate() {
        let chunks = bytes.div_ceil(spec.chunk).max(1);
        for piece in split(bytes, chunks) {
            let mut prev = None;
            for h in 0..n - 1 {
                let (src, dst) = ((spec.root + h) % n, (spec.root + h + 1) % n);
                let after = match prev {
                    None => gate.to_vec(),
                    Some(p) => vec![p],
                };
                prev = Some(b.send(c as u32, src, dst, piece, after));
            }
        }
    }
}

/// All-to-all as NCCL's grouped send/recv: every rank writes `S / n` to every peer, the
/// peers in the order r+1, r+2, … (NCCL's p2p schedule), chunk by chunk.
fn all_to_all(b: &mut Builder, spec: &Spec, gate: &[u32]) {
    let n = spec.ranks;
    let per_peer: Vec<u64> = split(spec.size, n as u64).collect();
    for (c, share) in (0..spec.channels).map(|c| (c, per_peer.iter().map(move |&p| split(p, spec.channels as u64).nth(c as usize).unwrap_or(0)))) {
        let share: Vec<u64> = share.collect();
        let chunks = share.iter().map(|&x| x.div_ceil(spec.chunk).max(1)).max().unwrap_or(1);
        for j in 0..chunks {
            for r in 0..n {
                for i in 1..n {
                    let peer = (r + i) % n;
                    let total = share[peer as usize];
                    let pieces = total.div_ceil(spec.chunk).max(1);
                    if j < pieces {
                        let piece = split(total, pieces).nth(j as usize).unwrap_or(0);
                        b.send(c, r, peer, piece, gate.to_vec());
                    }
                }
            }
        }
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

/// Double binary tree all-reduce; each channel uses both trees (lanes 2c and 2c+1).
fn tree_all_reduce(b: &mut Builder, spec: &Spec, gate: &[u32]) {
    let n = spec.ranks;
    let (p0, root0) = binary_tree(n);
    // Tree 1: tree 0 with every rank relabelled r → r+1 (mod n).
    let shift = |r: u32| (r + 1) % n;
    let mut p1 = vec![None; n as usize];
    for r in 0..n {
        p1[shift(r) as usize] = p0[r as usize].map(shift);
    }
    let trees = [(p0, root0), (p1, shift(root0))];
    let parts: Vec<u64> = split(spec.size, 2 * spec.channels as u64).collect();
    for c in 0..spec.channels {
        for (t, (parent, root)) in trees.iter().enumerate() {
            let lane = 2 * c + t as u32;
            let bytes = parts[lane as usize];
            reduce_broadcast(b, lane, parent, *root, bytes, spec.chunk, gate);
        }
    }
}

/// SHARP all-reduce over the driver's aggregation tree; each channel streams its share
/// of the data through the same tree on its own connections (lane = channel).
fn sharp_all_reduce(b: &mut Builder, spec: &Spec, gate: &[u32]) {
    let parent = &spec.tree.as_ref().expect("checked").parent;
    let root = parent.iter().position(|p| p.is_none()).expect("checked") as u32;
    for (c, bytes) in split(spec.size, spec.channels as u64).enumerate() {
        reduce_broadcast(b, c as u32, parent, root, bytes, spec.chunk, gate);
    }
}

/// Reduce `bytes` up the tree `parent` (rooted at `root`) and broadcast the result down
/// it, chunk by chunk, pipelined: a vertex sends chunk k up once chunk k from every child
/// has arrived; the root sends it down once all its children's did; every other vertex
/// forwards it down once its parent's has arrived.
fn reduce_broadcast(b: &mut Builder, lane: u32, parent: &[Option<u32>], root: u32, bytes: u64, chunk: u64, gate: &[u32]) {
    let n = parent.len() as u32;
    let mut children: Vec<Vec<u32>> = vec![vec![]; n as usize];
    for u in 0..n {
        if let Some(p) = parent[u as usize] {
            children[p as usize].push(u);
        }
    }
    // Post-order (children before parents) for the reduction, pre-order for the broadcast.
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
    let chunks = bytes.div_ceil(chunk).max(1);
    for piece in split(bytes, chunks) {
        let mut up = vec![u32::MAX; n as usize];
        for &v in &post {
            let Some(pv) = parent[v as usize] else { continue };
            let mut after: Vec<u32> = children[v as usize].iter().map(|&ch| up[ch as usize]).collect();
            if after.is_empty() {
                after = gate.to_vec();
            }
            up[v as usize] = b.send(lane, v, pv, piece, after);
        }
        // Down: the root once every child's reduction arrived; others once their parent's result did.
        let mut down_into = vec![u32::MAX; n as usize];
        for &v in post.iter().rev() {
            let after: Vec<u32> = if v == root {
                let a: Vec<u32> = children[v as usize].iter().map(|&ch| up[ch as usize]).collect();
                if a.is_empty() {
                    gate.to_vec()
                } else {
                    a
                }
            } else {
                vec![down_into[v as usize]]
            };
            for &ch in &children[v as usize] {
                down_into[ch as usize] = b.send(lane, v, ch, piece, after.clone());
            }
        }
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
