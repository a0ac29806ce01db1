//! xoshiro256++ seeded by SplitMix64.

/// SplitMix64 step (Steele, Lea & Flood, OOPSLA 2014): used to expand seeds.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Every random stream of a run, by id: the one table of `Rng::new`'s `stream`
/// argument, so that no two components share a stream by accident. Ids with "+ i" are
/// bases of a family of streams, one per switch, port or traffic group.
pub mod stream {
    /// Per switch (+ switch index): the seed of its ECMP hash (`fabric::routing`).
    pub const ECMP_HASH_SEED: u64 = 0x5157_0000;
    /// The UDP source port of each RoCEv2 QP (the simulator, one draw per QP in order).
    pub const QP_SOURCE_PORT: u64 = 0x0000_9000;
    /// Per egress port (+ port index): the RED/ECN marking draws.
    pub const ECN_MARKING: u64 = 0x0001_0000_0000;
    /// Traffic: the permutations' derangements (`scenario::traffic`).
    pub const PERMUTATION: u64 = 0x7AFF_1C00;
    /// Traffic: collective rank placement (`placement = "random"`).
    pub const PLACEMENT: u64 = 0x7AFF_1C01;
    /// Per traffic entry (+ entry index): a background entry's flow arrivals and sizes.
    pub const BACKGROUND: u64 = 0x7AFF_2000;
}

/// One independent pseudo-random stream (xoshiro256++).
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// The stream for component `stream` of a run seeded with `seed`.
    pub fn new(seed: u64, stream: u64) -> Rng {
        let mut mix = stream.wrapping_mul(0xD6E8_FEB8_6659_FD93);
        let mut st = seed ^ splitmix64(&mut mix);
        let mut s = [0u64; 4];
        for x in &mut s {
            *x = splitmix64(&mut st);
        }
        if s == [0; 4] {
            s[0] = 1;
        }
        Rng { s }
    }

    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let r = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        r
    }

    /// Uniform in [0, 1), with 53 random bits.
    pub fn f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in [0, n) without modulo bias (Lemire, ACM TOMACS 2019). `n` must be > 0.
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        loop {
            let m = (self.next_u64() as u128) * (n as u128);
            let lo = m as u64;
            if lo >= n.wrapping_neg() % n {
                return (m >> 64) as u64;
            }
        }
    }

    /// Fisher–Yates shuffle.
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            v.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_vector() {
        // xoshiro256++ with state {1,2,3,4}: first outputs from the reference C code
        // (prng.di.unimi.it/xoshiro256plusplus.c): 41943041, 58720359, 3588806011781223.
        let mut r = Rng { s: [1, 2, 3, 4] };
        assert_eq!(r.next_u64(), 41943041);
        assert_eq!(r.next_u64(), 58720359);
        assert_eq!(r.next_u64(), 3588806011781223);
    }

    #[test]
    fn streams_differ_and_repeat() {
        let a: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(7, 0);
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(7, 1);
                move |_| r.next_u64()
            })
            .collect();
        let a2: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(7, 0);
                move |_| r.next_u64()
            })
            .collect();
        assert_ne!(a, b);
        assert_eq!(a, a2);
    }

    #[test]
    fn below_is_in_range_and_roughly_uniform() {
        let mut r = Rng::new(1, 2);
        let mut counts = [0u32; 10];
        for _ in 0..100_000 {
            counts[r.below(10) as usize] += 1;
        }
        for c in counts {
            assert!((9_500..10_500).contains(&c), "{counts:?}");
        }
        let x = r.f64();
        assert!((0.0..1.0).contains(&x));
    }
}
