//! Small statistics helpers: a seeded generator, sample standard deviation, percentile bootstrap intervals and
//! Student-t intervals (the t quantile by bisection on the CDF, itself the regularized incomplete beta function).

/// SplitMix64: a tiny seeded generator, so bootstrap intervals are the same on every machine.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, n)` (`n > 0`), by multiply-shift.
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Mean of a non-empty slice.
pub fn mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        None
    } else {
        Some(xs.iter().sum::<f64>() / xs.len() as f64)
    }
}

/// Sample standard deviation (ddof = 1); `None` for fewer than two values.
pub fn std_ddof1(xs: &[f64]) -> Option<f64> {
    if xs.len() < 2 {
        return None;
    }
    let m = mean(xs)?;
    let ss: f64 = xs.iter().map(|x| (x - m).powi(2)).sum();
    Some((ss / (xs.len() - 1) as f64).sqrt())
}

/// Linear-interpolated quantile of sorted values (numpy's default "linear" method).
pub fn quantile_sorted(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    let frac = pos - lo as f64;
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * frac)
}

/// Percentile bootstrap interval of the mean: `resamples` resamples with replacement, central `level` mass.
pub fn bootstrap_mean_ci(
    xs: &[f64],
    resamples: usize,
    level: f64,
    rng: &mut SplitMix64,
) -> Option<(f64, f64)> {
    if xs.is_empty() || resamples == 0 {
        return None;
    }
    let mut means: Vec<f64> = (0..resamples)
        .map(|_| (0..xs.len()).map(|_| xs[rng.below(xs.len())]).sum::<f64>() / xs.len() as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    Some((
        quantile_sorted(&means, tail)?,
        quantile_sorted(&means, 1.0 - tail)?,
    ))
}

/// ln Γ(x) for x > 0 (Lanczos approximation, g = 7, 9 terms; relative error below 1e-13).
pub(crate) fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1 − x) = π / sin(πx).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The continued fraction of the incomplete beta function (modified Lentz).
fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..300 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        for aa in [
            m * (b - m) * x / ((qam + m2) * (a + m2)),
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
        ] {
            d = 1.0 + aa * d;
            if d.abs() < TINY {
                d = TINY;
            }
            c = 1.0 + aa / c;
            if c.abs() < TINY {
                c = TINY;
            }
            d = 1.0 / d;
            h *= d * c;
        }
        if (d * c - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// The regularized incomplete beta function I_x(a, b).
fn inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_cf(a, b, x) / a
    } else {
        1.0 - front * beta_cf(b, a, 1.0 - x) / b
    }
}

/// The CDF of Student's t with `df` degrees of freedom.
pub fn t_cdf(t: f64, df: f64) -> f64 {
    let tail = 0.5 * inc_beta(df / 2.0, 0.5, df / (df + t * t));
    if t >= 0.0 { 1.0 - tail } else { tail }
}

/// The `p` quantile of Student's t (`0 < p < 1`, `df > 0`), by bisection on [`t_cdf`].
pub fn t_quantile(p: f64, df: f64) -> f64 {
    let (mut lo, mut hi) = (-1e6, 1e6);
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if t_cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

/// Student-t interval of the mean at central mass `level`: mean ± t(1 − (1 − level)/2, n − 1) · s/√n.
/// None for fewer than two values.
pub fn t_mean_ci(xs: &[f64], level: f64) -> Option<(f64, f64)> {
    let (m, s) = (mean(xs)?, std_ddof1(xs)?);
    let n = xs.len() as f64;
    let half = t_quantile(1.0 - (1.0 - level) / 2.0, n - 1.0) * s / n.sqrt();
    Some((m - half, m + half))
}

/// The `p` quantile of the standard normal distribution (`0 < p < 1`): Acklam's rational approximation (relative
/// error below 1.2e-9), then one Newton step on the exact tail `P(|Z| ≥ z)` = [`chi_square_sf`]`(z², 1)`.
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    let tail = |q: f64| {
        let r = (-2.0 * q.ln()).sqrt();
        (((((C[0] * r + C[1]) * r + C[2]) * r + C[3]) * r + C[4]) * r + C[5])
            / ((((D[0] * r + D[1]) * r + D[2]) * r + D[3]) * r + 1.0)
    };
    let x = if p < 0.024_25 {
        tail(p)
    } else if p > 1.0 - 0.024_25 {
        -tail(1.0 - p)
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    };
    // One Newton step: Φ(x) from the chi-square tail, Φ'(x) the density.
    let cdf = if x >= 0.0 {
        1.0 - chi_square_sf(x * x, 1) / 2.0
    } else {
        chi_square_sf(x * x, 1) / 2.0
    };
    let density = (-x * x / 2.0).exp() / (2.0 * std::f64::consts::PI).sqrt();
    if density > 0.0 {
        x - (cdf - p) / density
    } else {
        x
    }
}

/// The CDF of the standard normal distribution.
pub fn normal_cdf(z: f64) -> f64 {
    let tail = chi_square_sf(z * z, 1) / 2.0;
    if z >= 0.0 { 1.0 - tail } else { tail }
}

/// Seed for one group's bootstrap: the run seed mixed with a stable hash of the group key (FNV-1a).
pub fn group_seed(seed: u64, key: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h ^ seed.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The Wilson score 95 % interval of `k` successes in `n` trials (one implementation, in `schema`).
pub use schema::judge_check::wilson95;

/// The regularized upper incomplete gamma function Q(a, x) = Γ(a, x) / Γ(a), for a > 0 and x ≥ 0: a power series of
/// the lower part below x = a + 1, a continued fraction (modified Lentz) of the upper part above.
fn upper_gamma_q(a: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 1.0;
    }
    let log_front = a * x.ln() - x - ln_gamma(a);
    if x < a + 1.0 {
        // P(a, x) = x^a e^-x / Γ(a) · Σ x^n / (a (a+1) … (a+n)).
        let (mut term, mut sum, mut denom) = (1.0 / a, 1.0 / a, a);
        for _ in 0..1000 {
            denom += 1.0;
            term *= x / denom;
            sum += term;
            if term.abs() < sum.abs() * 1e-16 {
                break;
            }
        }
        return (1.0 - sum * log_front.exp()).clamp(0.0, 1.0);
    }
    const TINY: f64 = 1e-300;
    let mut b = x + 1.0 - a;
    let mut c = 1.0 / TINY;
    let mut d = 1.0 / b;
    let mut h = d;
    for i in 1..1000 {
        let i = f64::from(i);
        let an = -i * (i - a);
        b += 2.0;
        d = an * d + b;
        if d.abs() < TINY {
            d = TINY;
        }
        c = b + an / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let step = d * c;
        h *= step;
        if (step - 1.0).abs() < 1e-16 {
            break;
        }
    }
    (log_front.exp() * h).clamp(0.0, 1.0)
}

/// The upper tail P(X² ≥ `stat`) of the chi-square distribution with `df` degrees of freedom (1 for `df` = 0).
pub fn chi_square_sf(stat: f64, df: u32) -> f64 {
    if df == 0 {
        return 1.0;
    }
    upper_gamma_q(f64::from(df) / 2.0, stat / 2.0)
}

/// Pearson's chi-square test of homogeneity of a table of counts (one row per sample, one column per category):
/// the statistic, its degrees of freedom ((rows − 1) × (used columns − 1), where a column is used when it holds
/// any count) and its p-value. None when fewer than two rows hold any count.
pub fn chi_square_homogeneity(table: &[Vec<u64>]) -> Option<(f64, u32, f64)> {
    let rows: Vec<&Vec<u64>> = table.iter().filter(|r| r.iter().sum::<u64>() > 0).collect();
    if rows.len() < 2 {
        return None;
    }
    let width = rows.iter().map(|r| r.len()).max().unwrap_or(0);
    let at = |r: &Vec<u64>, j: usize| r.get(j).copied().unwrap_or(0) as f64;
    let col_sums: Vec<f64> = (0..width)
        .map(|j| rows.iter().map(|r| at(r, j)).sum())
        .collect();
    let total: f64 = col_sums.iter().sum();
    let mut stat = 0.0;
    for r in &rows {
        let row_sum: f64 = r.iter().map(|&v| v as f64).sum();
        for (j, &col_sum) in col_sums.iter().enumerate().filter(|(_, c)| **c > 0.0) {
            let expected = row_sum * col_sum / total;
            stat += (at(r, j) - expected).powi(2) / expected;
        }
    }
    let used = col_sums.iter().filter(|c| **c > 0.0).count() as u32;
    let df = (rows.len() as u32 - 1) * used.saturating_sub(1);
    Some((stat, df, chi_square_sf(stat, df)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn std_matches_hand_computation() {
        // Values 90, 100, 100, 100, 100: mean 98, squared deviations 64 + 4 * 4 = 80, / 4 = 20.
        let s = std_ddof1(&[90.0, 100.0, 100.0, 100.0, 100.0]).unwrap();
        assert!((s - 20f64.sqrt()).abs() < 1e-12);
        assert_eq!(std_ddof1(&[1.0]), None);
    }

    #[test]
    fn bootstrap_is_seeded_and_brackets_the_mean() {
        let xs = [10.0, 20.0, 30.0, 40.0, 50.0];
        let a = bootstrap_mean_ci(&xs, 2000, 0.95, &mut SplitMix64::new(7)).unwrap();
        let b = bootstrap_mean_ci(&xs, 2000, 0.95, &mut SplitMix64::new(7)).unwrap();
        assert_eq!(a, b);
        assert!(a.0 < 30.0 && 30.0 < a.1 && a.0 >= 10.0 && a.1 <= 50.0);
    }

    #[test]
    fn t_quantiles_match_the_tables() {
        // Two-sided 95 % critical values of Student's t (any statistics table).
        for (df, want) in [
            (1.0, 12.706_204_736),
            (4.0, 2.776_445_105),
            (30.0, 2.042_272_456),
        ] {
            let got = t_quantile(0.975, df);
            assert!((got - want).abs() < 1e-6, "df {df}: {got}");
        }
        assert!((t_cdf(0.0, 3.0) - 0.5).abs() < 1e-12);
        // Values 90, 100, 100, 100, 100: mean 98, s = √20, half width t(0.975, 4)·√20/√5 = 2·t.
        let (lo, hi) = t_mean_ci(&[90.0, 100.0, 100.0, 100.0, 100.0], 0.95).unwrap();
        assert!(
            (hi - lo - 4.0 * 2.776_445_105).abs() < 1e-6 && ((lo + hi) / 2.0 - 98.0).abs() < 1e-12
        );
        assert_eq!(t_mean_ci(&[1.0], 0.95), None);
    }

    #[test]
    fn normal_quantiles_match_the_tables() {
        for (p, want) in [
            (0.975, 1.959_963_984_540),
            (0.8, 0.841_621_233_573),
            (0.95, 1.644_853_626_951),
            (0.001, -3.090_232_306_168),
        ] {
            let got = normal_quantile(p);
            assert!((got - want).abs() < 1e-9, "{p}: {got}");
        }
        assert!((normal_cdf(1.959_963_984_540) - 0.975).abs() < 1e-12);
        assert_eq!(normal_cdf(0.0), 0.5);
    }

    #[test]
    fn quantile_interpolates() {
        assert_eq!(quantile_sorted(&[0.0, 10.0], 0.25), Some(2.5));
    }

    #[test]
    fn chi_square_tails_match_the_tables() {
        // Upper 5 % critical values of the chi-square distribution (any statistics table), and two exact tails:
        // df 2 has P(X² ≥ x) = e^(−x/2); df 1 at 1 is 0.3173.
        for (df, x) in [(1, 3.841_458_821), (4, 9.487_729_037), (10, 18.307_038_05)] {
            let p = chi_square_sf(x, df);
            assert!((p - 0.05).abs() < 1e-8, "df {df}: {p}");
        }
        assert!((chi_square_sf(3.0, 2) - (-1.5f64).exp()).abs() < 1e-12);
        assert!((chi_square_sf(1.0, 1) - 0.317_310_507_9).abs() < 1e-9);
        assert_eq!(chi_square_sf(0.0, 3), 1.0);
        assert_eq!(chi_square_sf(5.0, 0), 1.0);
    }

    #[test]
    fn chi_square_homogeneity_by_hand() {
        // Equal mixes: statistic 0, p 1. Rows (10, 30) and (30, 10): expected 20 everywhere, 4 · 100/20 = 20, df 1.
        let (stat, df, p) = chi_square_homogeneity(&[vec![5, 10, 0], vec![10, 20, 0]]).unwrap();
        assert!(stat.abs() < 1e-12 && df == 1 && (p - 1.0).abs() < 1e-12);
        let (stat, df, p) = chi_square_homogeneity(&[vec![10, 30], vec![30, 10]]).unwrap();
        assert!((stat - 20.0).abs() < 1e-12 && df == 1);
        assert!((p - chi_square_sf(20.0, 1)).abs() < 1e-15 && p < 1e-4);
        // One sample alone cannot be compared.
        assert_eq!(chi_square_homogeneity(&[vec![3, 4], vec![0, 0]]), None);
    }
}
