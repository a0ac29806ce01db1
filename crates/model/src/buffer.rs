//! Shared-buffer admission: where the dynamic threshold settles.
//!
//! A PG may grow in the shared pool while its use is below α × (free shared buffer), α =
//! 2^dynamic_th as SONiC stores it (Choudhury & Hahne, "Dynamic queue length thresholds for
//! shared-memory packet switches", IEEE/ACM ToN 6(2), 1998). When `n` PGs are congested
//! together each settles where x = α·(S − n·x), i.e. x = α·S / (1 + n·α).

/// Cells each of `n` congested PGs holds at the dynamic threshold of a shared pool of
/// `shared_cells` (rounded down), with α = 2^`dynamic_th`.
pub fn dynamic_threshold_share(shared_cells: u64, n: u64, dynamic_th: i8) -> u64 {
    // α = an/ad, x = an·S / (ad + n·an), in u128 so no product overflows.
    let (an, ad) = if dynamic_th >= 0 { (1u128 << dynamic_th, 1u128) } else { (1, 1u128 << -dynamic_th) };
    (an * shared_cells as u128 / (ad + n as u128 * an)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn settles_at_alpha_s_over_one_plus_n_alpha() {
        assert_eq!(dynamic_threshold_share(900, 8, 0), 100); // 900/9
        assert_eq!(dynamic_threshold_share(1000, 1, 1), 666); // 2·1000/3
        assert_eq!(dynamic_threshold_share(1000, 2, -1), 250); // 0.5·1000/(1 + 2·0.5)
    }
}
