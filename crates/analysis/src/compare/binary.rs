//! Tests on matched binary outcomes (one question answered by two models): McNemar's test on the discordant
//! pairs, exact (binomial) for small counts, and its clustered form for answers that cluster within prompts.

use serde::Serialize;

use crate::stats;

/// Discordant pairs up to this count get the exact binomial p-value; above it the continuity-corrected
/// chi-square, which agrees with the exact one to about three digits there.
pub const MCNEMAR_EXACT_MAX: u64 = 10_000;

/// McNemar's test of matched correct/incorrect outcomes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct McNemar {
    /// Pairs the first side got right and the second wrong.
    pub b: u64,
    /// Pairs the second side got right and the first wrong.
    pub c: u64,
    /// Two-sided p-value.
    pub p: f64,
    /// "exact" (binomial with p = ½ on the b + c discordant pairs) or "chi-square" (continuity-corrected).
    pub method: &'static str,
}

/// ln C(n, k).
fn ln_choose(n: u64, k: u64) -> f64 {
    let (n, k) = (n as f64, k as f64);
    stats::ln_gamma(n + 1.0) - stats::ln_gamma(k + 1.0) - stats::ln_gamma(n - k + 1.0)
}

/// The exact two-sided binomial p-value of `k` successes in `n` trials with p = ½: twice the smaller tail, at most
/// 1.
pub fn binomial_two_sided_half(k: u64, n: u64) -> f64 {
    if n == 0 {
        return 1.0;
    }
    let low = k.min(n - k);
    let ln_half_n = n as f64 * std::f64::consts::LN_2;
    // Sum the tail in log space from its largest term down.
    let terms: Vec<f64> = (0..=low).map(|i| ln_choose(n, i) - ln_half_n).collect();
    let top = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let tail = top.exp() * terms.iter().map(|t| (t - top).exp()).sum::<f64>();
    (2.0 * tail).min(1.0)
}

/// McNemar's test on `b` and `c` discordant pairs: exact up to [`MCNEMAR_EXACT_MAX`] discordant pairs, else
/// (|b − c| − 1)² ÷ (b + c) against chi-square with one degree of freedom.
pub fn mcnemar(b: u64, c: u64) -> McNemar {
    let n = b + c;
    if n <= MCNEMAR_EXACT_MAX {
        return McNemar {
            b,
            c,
            p: binomial_two_sided_half(b, n),
            method: "exact",
        };
    }
    let diff = (b as f64 - c as f64).abs() - 1.0;
    let stat = diff.max(0.0).powi(2) / n as f64;
    McNemar {
        b,
        c,
        p: stats::chi_square_sf(stat, 1),
        method: "chi-square",
    }
}

/// The clustered McNemar test (Durkalski et al., 2003) over clusters with `(b_g, c_g)` discordant pairs each:
/// X² = (Σ (b_g − c_g))² ÷ Σ (b_g − c_g)², chi-square with one degree of freedom. It allows the answers of one
/// prompt to be correlated; with one pair per cluster it is McNemar's statistic without continuity correction.
/// Returns (X², p); None when no cluster has a discordant difference.
pub fn mcnemar_clustered(clusters: &[(u64, u64)]) -> Option<(f64, f64)> {
    let mut num = 0.0;
    let mut den = 0.0;
    for &(b, c) in clusters {
        let d = b as f64 - c as f64;
        num += d;
        den += d * d;
    }
    if den == 0.0 {
        return None;
    }
    let stat = num * num / den;
    Some((stat, stats::chi_square_sf(stat, 1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_mcnemar_by_hand() {
        // b = 1, c = 5: P(X ≤ 1 | n = 6) = (1 + 6)/64, two-sided 14/64.
        let t = mcnemar(1, 5);
        assert!((t.p - 14.0 / 64.0).abs() < 1e-12, "{}", t.p);
        assert_eq!(t.method, "exact");
        // b = 0, c = 6: 2/64.
        assert!((mcnemar(0, 6).p - 2.0 / 64.0).abs() < 1e-12);
        // Balanced: p = 1; no discordant pair: p = 1.
        assert_eq!(mcnemar(3, 3).p, 1.0);
        assert_eq!(mcnemar(0, 0).p, 1.0);
        // Symmetric in b and c.
        assert_eq!(mcnemar(2, 9).p, mcnemar(9, 2).p);
    }

    #[test]
    fn large_counts_use_the_chi_square() {
        // b = 4 980, c = 4 870 (exact): near the corrected chi-square (110 − 1)² / 9 850.
        let t = mcnemar(4_980, 4_870);
        assert_eq!(t.method, "exact");
        let chi = stats::chi_square_sf(109f64.powi(2) / 9_850.0, 1);
        assert!((t.p - chi).abs() < 2e-3, "{} vs {chi}", t.p);
        let big = mcnemar(6_000, 5_000);
        assert_eq!(big.method, "chi-square");
        assert!((big.p - stats::chi_square_sf(999f64.powi(2) / 11_000.0, 1)).abs() < 1e-15);
    }

    #[test]
    fn clustered_mcnemar_by_hand() {
        // Clusters (3, 1), (2, 0), (0, 1): differences 2, 2, −1; X² = 3² / (4 + 4 + 1) = 1.
        let (stat, p) = mcnemar_clustered(&[(3, 1), (2, 0), (0, 1)]).unwrap();
        assert!((stat - 1.0).abs() < 1e-12);
        assert!((p - stats::chi_square_sf(1.0, 1)).abs() < 1e-15);
        // One pair per cluster: (b − c)² / (b + c), McNemar without the correction.
        let mut singles = vec![(1, 0); 7];
        singles.extend(vec![(0, 1); 3]);
        let (stat, _) = mcnemar_clustered(&singles).unwrap();
        assert!((stat - 16.0 / 10.0).abs() < 1e-12);
        assert_eq!(mcnemar_clustered(&[(2, 2), (0, 0)]), None);
    }
}
