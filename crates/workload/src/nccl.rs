//! nccl-tests' arithmetic (nccl-tests `doc/PERFORMANCE.md`): algbw = S / t with
//! GB/s = 10^9 B/s, busbw = algbw × a factor that makes it comparable to the hardware
//! bandwidth whatever the rank count, and its size sweep (`-b`, `-e`, `-f`).

use crate::Collective;

/// nccl-tests' bus-bandwidth factor for `n` ranks: all-reduce 2(n−1)/n, all-gather and
/// reduce-scatter (n−1)/n (with S the total array), broadcast 1, all-to-all (n−1)/n.
pub fn bus_factor(op: Collective, n: u32) -> f64 {
    let n = n as f64;
    match op {
        Collective::AllReduce => 2.0 * (n - 1.0) / n,
        Collective::AllGather | Collective::ReduceScatter | Collective::AllToAll => (n - 1.0) / n,
        Collective::Broadcast => 1.0,
    }
}

/// nccl-tests' sizes from `-b begin -e end -f factor`: begin, begin·f, … up to end.
pub fn size_sweep(begin: u64, end: u64, factor: u64) -> Result<Vec<u64>, String> {
    if begin == 0 || end < begin {
        return Err(format!("expected 0 < begin <= end, got {begin}..{end}"));
    }
    if factor < 2 {
        return Err(format!("the step factor must be at least 2, got {factor}"));
    }
    let mut v = vec![];
    let mut s = begin;
    while s <= end {
        v.push(s);
        s = match s.checked_mul(factor) {
            Some(x) => x,
            None => break,
        };
    }
    Ok(v)
}

/// A size as nccl-tests' `-b`/`-e` read it: a number of bytes with an optional `K`, `M`
/// or `G` suffix, each a power of 2^10 (nccl-tests `parsesize`: `8G` = 8 GiB).
pub fn parse_nccl_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.char_indices().last()? {
        (i, 'K' | 'k') => (&s[..i], 1u64 << 10),
        (i, 'M' | 'm') => (&s[..i], 1 << 20),
        (i, 'G' | 'g') => (&s[..i], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<u64>().ok()?.checked_mul(mult)
}

/// One row of nccl-tests' table.
#[derive(Clone, Debug, PartialEq)]
pub struct NcclRow {
    pub size: u64,
    /// Elements of 4-byte floats, as nccl-tests prints with `-d float`.
    pub count: u64,
    pub time_us: f64,
    pub algbw_gbs: f64,
    pub busbw_gbs: f64,
}

impl NcclRow {
    /// A row from the size, the time in picoseconds and the rank count.
    pub fn new(op: Collective, n: u32, size: u64, time_ps: u64) -> NcclRow {
        let t = time_ps as f64 / 1e12;
        let algbw = if t > 0.0 { size as f64 / t / 1e9 } else { 0.0 };
        let count = match op {
            Collective::AllGather | Collective::ReduceScatter | Collective::AllToAll => size / 4 / n as u64,
            _ => size / 4,
        };
        NcclRow { size, count, time_us: t * 1e6, algbw_gbs: algbw, busbw_gbs: algbw * bus_factor(op, n) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factors_are_nccl_tests_ones() {
        assert_eq!(bus_factor(Collective::AllReduce, 8), 1.75);
        assert_eq!(bus_factor(Collective::AllGather, 8), 0.875);
        assert_eq!(bus_factor(Collective::ReduceScatter, 4), 0.75);
        assert_eq!(bus_factor(Collective::Broadcast, 16), 1.0);
        assert_eq!(bus_factor(Collective::AllToAll, 2), 0.5);
    }

    #[test]
    fn sweep_is_nccl_tests_b_e_f() {
        // -b 8 -e 8G -f 2 (8G = 8 GiB in nccl-tests): 8, 16, …, 2^33: 31 sizes.
        let v = size_sweep(8, 8 << 30, 2).unwrap();
        assert_eq!(v.len(), 31);
        assert_eq!((v[0], *v.last().unwrap()), (8, 8 << 30));
        assert_eq!(size_sweep(1000, 5000, 3).unwrap(), vec![1000, 3000]);
        assert!(size_sweep(0, 8, 2).is_err());
        assert!(size_sweep(8, 4, 2).is_err());
        assert!(size_sweep(8, 16, 1).is_err());
    }

    #[test]
    fn sizes_read_as_nccl_tests_does() {
        assert_eq!(parse_nccl_size("8"), Some(8));
        assert_eq!(parse_nccl_size("128M"), Some(128 << 20));
        assert_eq!(parse_nccl_size("8G"), Some(8 << 30));
        assert_eq!(parse_nccl_size("4k"), Some(4096));
        assert_eq!(parse_nccl_size("8MB"), None);
        assert_eq!(parse_nccl_size("x"), None);
    }

    #[test]
    fn row_arithmetic() {
        // 1 GB all-reduce on 8 ranks in 100 ms: algbw 10 GB/s, busbw 17.5 GB/s.
        let r = NcclRow::new(Collective::AllReduce, 8, 1_000_000_000, 100_000_000_000);
        assert!((r.algbw_gbs - 10.0).abs() < 1e-9);
        assert!((r.busbw_gbs - 17.5).abs() < 1e-9);
        assert!((r.time_us - 100_000.0).abs() < 1e-6);
    }
}
