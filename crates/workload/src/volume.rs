//! How big a collective's transfer graph will be, counted without building it: the
//! number of sends and the bytes they carry, for the memory and event estimates a
//! scenario is checked against before anything is allocated (a 4 PiB all-reduce must be
//! refused in microseconds, not after the builder has eaten the machine).
//!
//! Each count follows its builder in `collective.rs` loop for loop (the tests compare
//! the two on many shapes): a ring moves every block once per step; a tree or SHARP
//! reduce-broadcast sends each chunk up and down every edge of its tree once; a chain
//! broadcast forwards each chunk n − 1 times; all-to-all sends each peer's share in
//! pieces of at most `chunk`. Counts are `u128` so that no input can overflow them.

use crate::collective::{Algorithm, Collective, Spec};

/// What [`crate::build`] would make of a [`Spec`], counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Volume {
    /// Send nodes over all iterations.
    pub transfers: u128,
    /// Join nodes (one per iteration).
    pub joins: u128,
    /// Bytes of all sends (aggregation vertices' included).
    pub bytes: u128,
    /// Connections (RC queue pairs): one per lane and ordered pair of vertices that
    /// exchange data, shared by all iterations.
    pub connections: u128,
}

/// The sizes `split(total, parts)` makes, as (size, how many), without listing them.
fn split_sizes(total: u128, parts: u128) -> [(u128, u128); 2] {
    let (q, r) = (total / parts, total % parts);
    [(q + 1, r), (q, parts - r)]
}

/// Transfers of at most `chunk` bytes that `bytes` is cut into (at least one).
fn pieces(bytes: u128, chunk: u128) -> u128 {
    bytes.div_ceil(chunk).max(1)
}

impl Spec {
    /// The size of the graph [`crate::build`] makes of this spec; meaningful for specs
    /// `build` accepts (a spec it refuses may count as anything).
    pub fn volume(&self) -> Volume {
        self.volume_with_vertices(self.tree.as_ref().map(|t| t.parent.len() as u128))
    }

    /// [`Spec::volume`] with SHARP's tree given by its number of vertices (ranks and
    /// aggregation vertices): the count before the tree is built.
    pub fn volume_with_vertices(&self, sharp_vertices: Option<u128>) -> Volume {
        let n = self.ranks as u128;
        let chunk = self.chunk.max(1) as u128;
        let channels = self.channels.max(1) as u128;
        let size = self.size as u128;
        let edges = |vertices: u128| 2 * vertices.saturating_sub(1);
        let (per_iteration, bytes, connections) = match (self.op, self.algorithm) {
            (Collective::AllReduce, Algorithm::Tree) => {
                // Two trees per channel, each reducing and broadcasting its part.
                let sends = split_sizes(size, 2 * channels).iter().map(|&(b, k)| k * pieces(b, chunk)).sum::<u128>() * edges(n);
                (sends, edges(n) * size, 2 * channels * edges(n))
            }
            (Collective::AllReduce, Algorithm::Sharp) => {
                let v = sharp_vertices.unwrap_or(n);
                let sends = split_sizes(size, channels).iter().map(|&(b, k)| k * pieces(b, chunk)).sum::<u128>() * edges(v);
                (sends, edges(v) * size, channels * edges(v))
            }
            (Collective::Broadcast, _) => {
                let sends = split_sizes(size, channels).iter().map(|&(b, k)| k * pieces(b, chunk)).sum::<u128>() * n.saturating_sub(1);
                (sends, n.saturating_sub(1) * size, channels * n.saturating_sub(1))
            }
            (Collective::AllToAll, _) => {
                // Every rank sends each other rank its share of every channel, in pieces: each
                // peer receives its pieces from n − 1 ranks.
                let mut over_peers = 0;
                for (peer_bytes, peers) in split_sizes(size, n.max(1)) {
                    for (share, k) in split_sizes(peer_bytes, channels) {
                        over_peers += peers * k * pieces(share, chunk);
                    }
                }
                (n.saturating_sub(1) * over_peers, n.saturating_sub(1) * size, channels * n * n.saturating_sub(1))
            }
            (op, _) => {
                // Ring: every step of every loop sends n blocks.
                let steps = match op {
                    Collective::AllReduce => 2,
                    _ => 1,
                } * n.saturating_sub(1);
                let loops = split_sizes(size, channels).iter().map(|&(b, k)| k * b.div_ceil(chunk * n.max(1)).max(1)).sum::<u128>();
                (loops * steps * n, steps * size, channels * n)
            }
        };
        let it = self.iterations as u128;
        Volume { transfers: per_iteration * it, joins: it, bytes: bytes * it, connections }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{build, Node};
    use proptest::prelude::*;

    fn counted(spec: &Spec) -> Volume {
        let d = build(spec).expect("valid spec");
        let transfers = d.sends() as u128;
        let bytes = d.nodes.iter().map(|n| if let Node::Send { bytes, .. } = n { *bytes as u128 } else { 0 }).sum();
        Volume { transfers, joins: (d.nodes.len() - d.sends()) as u128, bytes, connections: d.conns as u128 }
    }

    proptest! {
        /// The count equals what the builder makes, for every operation and algorithm
        /// (SHARP over the binary tree of `sharp`'s tests is covered below).
        #[test]
        fn volume_matches_the_built_graph(
            op in 0usize..5, tree in any::<bool>(), ranks in 2u32..9, size in 0u64..5_000_000,
            channels in 1u32..4, chunk in 1u64..2_000_000, iterations in 1u32..3,
        ) {
            let op = [Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter, Collective::Broadcast, Collective::AllToAll][op];
            let algorithm = if tree && op == Collective::AllReduce { Algorithm::Tree } else { Algorithm::Ring };
            let mut spec = Spec::new(op, algorithm, ranks, size);
            spec.channels = channels;
            spec.chunk = chunk;
            spec.iterations = iterations;
            prop_assert_eq!(spec.volume(), counted(&spec));
        }
    }

    #[test]
    fn sharp_volume_matches_the_built_graph() {
        // Four ranks under two aggregation vertices under a root: 7 vertices, 6 edges.
        let tree = crate::AggregationTree { parent: vec![Some(4), Some(4), Some(5), Some(5), Some(6), Some(6), None] };
        for (size, chunk, channels) in [(1u64 << 20, 512u64 << 10, 1u32), (3_000_001, 100_000, 3), (0, 512 << 10, 2)] {
            let mut spec = Spec::new(Collective::AllReduce, Algorithm::Sharp, 4, size);
            spec.tree = Some(tree.clone());
            spec.chunk = chunk;
            spec.channels = channels;
            assert_eq!(spec.volume(), counted(&spec), "size {size}, chunk {chunk}, channels {channels}");
        }
    }

    #[test]
    fn volume_of_an_impossible_job_is_counted_not_built() {
        // The fuzz-found 4,294,967,296 MiB job: 8.8e9 chunks of 512 KiB per tree edge.
        let spec = Spec::new(Collective::AllReduce, Algorithm::Ring, 16, u64::MAX);
        let v = spec.volume();
        assert!(v.transfers > 1u128 << 40, "{v:?}");
    }
}
