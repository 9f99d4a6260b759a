//! Paired statistics on per-unit differences (a unit is an IFScale seed or sample, a RIFT prompt or question set):
//! the percentile bootstrap over units, the sign-flip permutation test (exact or Monte Carlo), Holm's correction,
//! the minimum detectable difference, and the non-inferiority decision of the regression gate.
//!
//! Every random draw comes from [`SplitMix64`] streams derived from one seed and the resample's index, so results
//! are the same for a fixed seed on every machine and whatever the number of threads.

use serde::Serialize;

use crate::stats::{self, SplitMix64};

/// Sign vectors are enumerated (an exact p-value) up to this many non-zero differences (2^20 vectors).
pub const EXACT_SIGN_FLIP_MAX: usize = 20;

/// The generator of resample `index` of a computation seeded `seed`: independent of the order resamples run in.
pub fn resample_rng(seed: u64, index: u64) -> SplitMix64 {
    let mut mix = SplitMix64::new(seed ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03));
    SplitMix64::new(mix.next_u64())
}

/// Runs `stat` once per resample, on two threads when there are many, and returns the values in resample order.
/// `stat` gets the resample's own generator ([`resample_rng`]) and returns NaN when the statistic is undefined.
pub fn bootstrap<F>(resamples: usize, seed: u64, stat: F) -> Vec<f64>
where
    F: Fn(&mut SplitMix64) -> f64 + Sync,
{
    let mut out = vec![f64::NAN; resamples];
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 4);
    let chunk = resamples.div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        for (c, slice) in out.chunks_mut(chunk).enumerate() {
            let stat = &stat;
            scope.spawn(move || {
                for (i, v) in slice.iter_mut().enumerate() {
                    let mut rng = resample_rng(seed, (c * chunk + i) as u64);
                    *v = stat(&mut rng);
                }
            });
        }
    });
    out
}

/// A two-sided percentile interval of central mass `level` from bootstrap values (NaN values, undefined
/// resamples, are left out); None when none is defined.
pub fn percentile_interval(values: &[f64], level: f64) -> Option<(f64, f64)> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    Some((
        stats::quantile_sorted(&v, tail)?,
        stats::quantile_sorted(&v, 1.0 - tail)?,
    ))
}

/// The `q` quantile of bootstrap values (NaN left out).
pub fn percentile(values: &[f64], q: f64) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    stats::quantile_sorted(&v, q)
}

/// The ratio Σ sums ÷ Σ counts over one bootstrap resample of `units` (`(sum, count)` per unit), NaN when the
/// resample's counts add up to 0. With every count 1 it is the mean of the sums.
pub fn resampled_ratio(units: &[(f64, f64)], rng: &mut SplitMix64) -> f64 {
    let (mut s, mut c) = (0.0, 0.0);
    for _ in 0..units.len() {
        let (us, uc) = units[rng.below(units.len())];
        s += us;
        c += uc;
    }
    if c > 0.0 { s / c } else { f64::NAN }
}

/// The percentile bootstrap interval of Σ sums ÷ Σ counts, resampling units with replacement.
pub fn bootstrap_ratio_ci(
    units: &[(f64, f64)],
    resamples: usize,
    level: f64,
    seed: u64,
) -> Option<(f64, f64)> {
    if units.is_empty() || resamples == 0 {
        return None;
    }
    percentile_interval(
        &bootstrap(resamples, seed, |rng| resampled_ratio(units, rng)),
        level,
    )
}

/// A sign-flip permutation test of "the paired differences are symmetric about 0" (the two sides exchangeable
/// within each unit), with statistic |Σ d|.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SignFlip {
    /// Two-sided p-value.
    pub p: f64,
    /// Whether every sign vector was enumerated (else `resamples` random ones, p = (1 + hits) ÷ (resamples + 1)).
    pub exact: bool,
    /// The smallest p-value this design can give: 2 ÷ 2^k with k non-zero differences (exact), or
    /// max(that, 1 ÷ (resamples + 1)) (Monte Carlo); 1 when every difference is 0.
    pub min_p: f64,
    /// Units with a non-zero difference (the others carry no sign).
    pub nonzero: usize,
}

/// The sign-flip test of `diffs`: exact when at most [`EXACT_SIGN_FLIP_MAX`] differences are non-zero, else
/// `resamples` random sign vectors seeded by `seed`. None without differences.
pub fn sign_flip(diffs: &[f64], resamples: usize, seed: u64) -> Option<SignFlip> {
    if diffs.is_empty() {
        return None;
    }
    let scale: f64 = diffs.iter().map(|d| d.abs()).sum();
    let nz: Vec<f64> = diffs
        .iter()
        .copied()
        .filter(|d| d.abs() > scale * 1e-12)
        .collect();
    let k = nz.len();
    if k == 0 {
        return Some(SignFlip {
            p: 1.0,
            exact: true,
            min_p: 1.0,
            nonzero: 0,
        });
    }
    let observed = nz.iter().sum::<f64>().abs();
    // Ties within rounding count as at least as extreme.
    let tol = scale * 1e-9;
    let design_min = (2.0f64).powi(1 - k as i32).min(1.0);
    if k <= EXACT_SIGN_FLIP_MAX {
        // Walk the sign vectors in Gray-code order: each step flips one sign, so the sum moves by ±2d.
        let total: f64 = nz.iter().sum();
        let mut sum = total;
        let mut signs = vec![1.0f64; k];
        let mut hits: u64 = u64::from(sum.abs() >= observed - tol);
        for step in 1u64..(1u64 << k) {
            let bit = step.trailing_zeros() as usize;
            sum -= 2.0 * signs[bit] * nz[bit];
            signs[bit] = -signs[bit];
            if sum.abs() >= observed - tol {
                hits += 1;
            }
        }
        return Some(SignFlip {
            p: hits as f64 / (1u64 << k) as f64,
            exact: true,
            min_p: design_min,
            nonzero: k,
        });
    }
    let resamples = resamples.max(1);
    let hits = bootstrap(resamples, seed, |rng| {
        let mut s = 0.0;
        let mut bits = 0u64;
        for (i, d) in nz.iter().enumerate() {
            if i % 64 == 0 {
                bits = rng.next_u64();
            }
            s += if bits & 1 == 1 { *d } else { -*d };
            bits >>= 1;
        }
        if s.abs() >= observed - tol { 1.0 } else { 0.0 }
    })
    .iter()
    .sum::<f64>();
    Some(SignFlip {
        p: (1.0 + hits) / (resamples as f64 + 1.0),
        exact: false,
        min_p: design_min.max(1.0 / (resamples as f64 + 1.0)),
        nonzero: k,
    })
}

/// Holm's step-down adjustment of `p` (family-wise error), in the input order; NaN entries are left as they are
/// and do not count in the family.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..p.len()).filter(|&i| p[i].is_finite()).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let m = order.len();
    let mut out = p.to_vec();
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        let adj = ((m - rank) as f64 * p[i]).min(1.0);
        running = running.max(adj);
        out[i] = running;
    }
    out
}

/// The critical value of a two-sided test at `alpha` plus the quantile for `power`, from Student's t with `df`
/// degrees of freedom (the normal distribution when `df` is None or above 1 000).
fn detect_multiplier(df: Option<f64>, alpha: f64, power: f64) -> f64 {
    match df {
        Some(df) if df <= 1000.0 => {
            stats::t_quantile(1.0 - alpha / 2.0, df) + stats::t_quantile(power, df)
        }
        _ => stats::normal_quantile(1.0 - alpha / 2.0) + stats::normal_quantile(power),
    }
}

/// The minimum detectable difference: the true difference a two-sided test at `alpha` finds with probability
/// `power` given the standard error `se` of the estimated difference, (t₁₋α/₂ + t_power) × SE.
pub fn min_detectable(se: f64, df: Option<f64>, alpha: f64, power: f64) -> f64 {
    detect_multiplier(df, alpha, power) * se
}

/// Mean and standard error (sample SD ÷ √n) of paired differences; the SE is None for fewer than two.
pub fn mean_se(diffs: &[f64]) -> (Option<f64>, Option<f64>) {
    let m = stats::mean(diffs);
    let se = stats::std_ddof1(diffs).map(|s| s / (diffs.len() as f64).sqrt());
    (m, se)
}

/// The standard error used for the minimum detectable difference: the paired one, unless every paired difference
/// is the same (a paired SE of 0 says nothing about what the run could detect), then the unpaired one
/// √(s_a² + s_b²) ÷ √n, an upper bound of the paired SE when the two sides are not negatively correlated.
pub fn detection_se(a: &[f64], b: &[f64]) -> Option<f64> {
    let diffs: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    let (_, se) = mean_se(&diffs);
    let se = se?;
    if se > 0.0 {
        return Some(se);
    }
    let n = a.len() as f64;
    let va = stats::std_ddof1(a)?.powi(2);
    let vb = stats::std_ddof1(b)?.powi(2);
    Some(((va + vb) / n).sqrt())
}

/// The regression gate's decision on a difference candidate − baseline against a margin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NonInferiority {
    /// The one-sided lower confidence bound is above −margin: shown to be worse by less than the margin.
    NonInferior,
    /// The interval reaches below −margin but the difference is not shown to be below it: the run cannot tell.
    Inconclusive,
    /// The one-sided upper confidence bound is below −margin: worse by more than the margin.
    Inferior,
}

impl NonInferiority {
    /// Decides from the one-sided (1 − α) bounds of the difference: `lower` (the α quantile) and `upper` (the
    /// 1 − α quantile).
    pub fn decide(lower: f64, upper: f64, margin: f64) -> NonInferiority {
        if lower > -margin {
            NonInferiority::NonInferior
        } else if upper < -margin {
            NonInferiority::Inferior
        } else {
            NonInferiority::Inconclusive
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            NonInferiority::NonInferior => "non-inferior",
            NonInferiority::Inconclusive => "inconclusive",
            NonInferiority::Inferior => "inferior",
        }
    }

    /// Whether the gate passes: only a difference shown to be above −margin does.
    pub fn passes(self) -> bool {
        self == NonInferiority::NonInferior
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_sign_flip_by_hand() {
        // Differences 1, 2, 3: the eight sums ±1 ±2 ±3 are 6, 4, 2, 0, 0, −2, −4, −6; |sum| ≥ 6 twice: p = 2/8.
        let t = sign_flip(&[1.0, 2.0, 3.0], 0, 0).unwrap();
        assert!(t.exact && t.nonzero == 3);
        assert_eq!(t.p, 0.25);
        assert_eq!(t.min_p, 0.25);
        // 1, 1, −1: sums 1 (observed), |±1 ±1 ±1| ≥ 1 always: p = 1.
        assert_eq!(sign_flip(&[1.0, 1.0, -1.0], 0, 0).unwrap().p, 1.0);
        // Zeros carry no sign: 0, 0, 5 is one non-zero difference, p = 1.
        let z = sign_flip(&[0.0, 0.0, 5.0], 0, 0).unwrap();
        assert_eq!((z.p, z.nonzero, z.min_p), (1.0, 1, 1.0));
        assert_eq!(sign_flip(&[0.0, 0.0], 0, 0).unwrap().p, 1.0);
        // Five positive differences (five seeds): the smallest possible p is 2/32 = 0.0625.
        let five = sign_flip(&[1.0, 2.0, 1.5, 0.5, 3.0], 0, 0).unwrap();
        assert_eq!((five.p, five.min_p), (0.0625, 0.0625));
        assert_eq!(sign_flip(&[], 0, 0), None);
    }

    #[test]
    fn monte_carlo_sign_flip_is_seeded_and_close_to_exact() {
        // 24 differences: exact enumeration would be 16 M vectors; compare the Monte Carlo p with the normal one.
        let d: Vec<f64> = (0..24).map(|i| f64::from(i % 5) - 1.2).collect();
        let a = sign_flip(&d, 4000, 3).unwrap();
        let b = sign_flip(&d, 4000, 3).unwrap();
        assert_eq!(a, b);
        assert!(!a.exact);
        // Under the sign-flip null, Var(Σ s d) = Σ d²; the normal approximation of the two-sided p.
        let s: f64 = d.iter().sum();
        let v: f64 = d.iter().map(|x| x * x).sum();
        let normal = 2.0 * (1.0 - stats::normal_cdf(s.abs() / v.sqrt()));
        assert!((a.p - normal).abs() < 0.03, "{} vs {normal}", a.p);
        assert!((a.min_p - 1.0 / 4001.0).abs() < 1e-15);
    }

    #[test]
    fn holm_by_hand() {
        // Sorted 0.01, 0.02, 0.04 with m = 3: 0.03, 0.04, 0.04 (the last raised to the running maximum).
        let adj = holm(&[0.04, 0.01, 0.02]);
        let want = [0.04, 0.03, 0.04];
        for (a, w) in adj.iter().zip(want) {
            assert!((a - w).abs() < 1e-15, "{adj:?}");
        }
        // Capped at 1; NaN left out of the family.
        let adj = holm(&[0.5, f64::NAN, 0.6]);
        assert_eq!(adj[0], 1.0);
        assert!(adj[1].is_nan());
        assert_eq!(adj[2], 1.0);
    }

    #[test]
    fn minimum_detectable_difference_by_hand() {
        // Normal: (1.959964 + 0.841621) × SE = 2.801585 × SE.
        let m = min_detectable(1.0, None, 0.05, 0.8);
        assert!((m - 2.801_585_218).abs() < 1e-8, "{m}");
        // t with 4 df: 2.776445 + 0.940965.
        let m = min_detectable(2.0, Some(4.0), 0.05, 0.8);
        assert!(
            (m - 2.0 * (2.776_445_105 + 0.940_964_808)).abs() < 1e-5,
            "{m}"
        );
    }

    #[test]
    fn detection_se_falls_back_to_unpaired_when_differences_are_constant() {
        let a = [10.0, 20.0, 30.0];
        // Identical sides: paired SE 0; unpaired √(100 + 100)/√3.
        let se = detection_se(&a, &a).unwrap();
        assert!((se - (200.0f64 / 3.0).sqrt()).abs() < 1e-12);
        // Differences 1, 2, 3: SD 1, SE 1/√3.
        let b = [9.0, 18.0, 27.0];
        assert!((detection_se(&a, &b).unwrap() - 1.0 / 3f64.sqrt()).abs() < 1e-12);
    }

    #[test]
    fn bootstrap_is_deterministic_and_thread_independent() {
        let units: Vec<(f64, f64)> = (0..30).map(|i| (f64::from(i), 1.0)).collect();
        let a = bootstrap(500, 9, |rng| resampled_ratio(&units, rng));
        let b = bootstrap(500, 9, |rng| resampled_ratio(&units, rng));
        assert_eq!(a, b);
        // Resample i is the same whatever the count of resamples (its generator depends on its index only).
        let c = bootstrap(7, 9, |rng| resampled_ratio(&units, rng));
        assert_eq!(&a[..7], &c[..]);
        let (lo, hi) = percentile_interval(&a, 0.95).unwrap();
        assert!(lo < 14.5 && 14.5 < hi, "{lo} {hi}");
    }

    #[test]
    fn non_inferiority_decisions() {
        assert_eq!(
            NonInferiority::decide(-0.5, 1.0, 1.0),
            NonInferiority::NonInferior
        );
        assert_eq!(
            NonInferiority::decide(-3.0, 1.0, 1.0),
            NonInferiority::Inconclusive
        );
        assert_eq!(
            NonInferiority::decide(-5.0, -2.0, 1.0),
            NonInferiority::Inferior
        );
        assert!(!NonInferiority::Inconclusive.passes());
    }
}
