//! IFScale, model a against model b on the same keyword lists: per density N and overall, the paired differences
//! in accuracy, omission rate and modification rate; and per model the N at which accuracy first falls below a
//! level.
//!
//! A unit is one (N, seed) sample, scored for both models; a sample that failed for either model (every attempt
//! rejected, no report to score) is left out of the pairs and counted. Rates are per keyword, in percent of N:
//! accuracy = exact ÷ N, omission rate = omitted ÷ N, modification rate = modified ÷ N (they add up to 100; the
//! per-sample `omission_pct` of the scores is a share of the errors instead, and is not used here).
//!
//! Per N the units are the seeds: the bootstrap resamples seeds and the sign-flip test flips them, Holm-adjusted
//! across N. With S seeds the smallest possible p is 2 ÷ 2^S (0.0625 with the paper's five), so no single N can be
//! significant at 0.05 with five seeds; the headline is then the overall test, which flips the signs of every
//! (N, seed) sample. Its interval resamples seeds (each seed is one keyword list, nested across N), and the gate's
//! one-sided bounds resample samples.

use std::collections::{BTreeMap, BTreeSet};

use schema::ifscale::{SampleScore, SampleStatus};
use serde::Serialize;

use super::{Diff, Options, adjust_holm, paired, paired_diff};

/// One sample's per-keyword rates (percent of N).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rates {
    pub accuracy: f64,
    pub omission: f64,
    pub modification: f64,
}

/// A model's samples by (N, seed): None for a failed sample.
pub type Samples = BTreeMap<(u32, u64), Option<Rates>>;

/// The samples of `model` among `scores`.
pub fn samples_of(scores: &[SampleScore], model: &str) -> Samples {
    scores
        .iter()
        .filter(|s| s.model == model)
        .map(|s| {
            let n = f64::from(s.num_rules.max(1));
            let rates = (s.status == SampleStatus::Scored).then(|| Rates {
                accuracy: f64::from(s.exact) / n * 100.0,
                omission: f64::from(s.omitted) / n * 100.0,
                modification: f64::from(s.modified) / n * 100.0,
            });
            ((s.num_rules, s.seed), rates)
        })
        .collect()
}

/// The three metrics of one comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metrics {
    pub accuracy: Diff,
    pub omission: Diff,
    pub modification: Diff,
}

/// One density N.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DensityRow {
    pub n: u32,
    /// Seeds scored for both models.
    pub seeds: usize,
    /// Samples of this N left out: failed or missing for one model.
    pub dropped: usize,
    pub metrics: Metrics,
}

/// Every (N, seed) sample together.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Overall {
    /// Per metric: the difference over every paired sample, its sign-flip p-value over samples (the headline
    /// test), and the one-sided bounds the gate uses (bootstrap over samples).
    pub metrics: Metrics,
    /// The accuracy difference's percentile bootstrap interval resampling seeds (each seed with all its N).
    pub accuracy_ci_seeds: Option<(f64, f64)>,
    /// The sign-flip p-value with seeds as the units (each seed's mean difference over N), and its smallest
    /// possible value.
    pub accuracy_p_seeds: Option<f64>,
    pub accuracy_min_p_seeds: Option<f64>,
    pub seeds: usize,
    pub samples: usize,
    pub dropped: usize,
}

/// Model a against model b on IFScale.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IfscaleComparison {
    pub a: String,
    pub b: String,
    pub per_n: Vec<DensityRow>,
    pub overall: Option<Overall>,
}

/// Paired values of both models for a set of keys.
fn paired_values(
    a: &Samples,
    b: &Samples,
    keys: &[(u32, u64)],
    metric: fn(&Rates) -> f64,
) -> (Vec<f64>, Vec<f64>) {
    keys.iter()
        .filter_map(|k| match (a.get(k), b.get(k)) {
            (Some(Some(x)), Some(Some(y))) => Some((metric(x), metric(y))),
            _ => None,
        })
        .unzip()
}

fn accuracy(r: &Rates) -> f64 {
    r.accuracy
}

fn omission(r: &Rates) -> f64 {
    r.omission
}

fn modification(r: &Rates) -> f64 {
    r.modification
}

/// A metric's name and how to read it from a sample.
type Metric = (&'static str, fn(&Rates) -> f64);

const METRICS: [Metric; 3] = [
    ("accuracy", accuracy),
    ("omission", omission),
    ("modification", modification),
];

fn metrics(
    a: &Samples,
    b: &Samples,
    keys: &[(u32, u64)],
    opts: &Options,
    name: &str,
) -> Option<Metrics> {
    let mut out = Vec::with_capacity(3);
    for (metric, f) in METRICS {
        let (x, y) = paired_values(a, b, keys, f);
        out.push(paired_diff(&x, &y, opts, &format!("{name}:{metric}"))?);
    }
    let modification = out.pop()?;
    let omission = out.pop()?;
    let accuracy = out.pop()?;
    Some(Metrics {
        accuracy,
        omission,
        modification,
    })
}

/// Compares `a` with `b` (differences a − b) over the samples both hold.
pub fn compare(
    a_name: &str,
    a: &Samples,
    b_name: &str,
    b: &Samples,
    opts: &Options,
) -> IfscaleComparison {
    let pair = format!("ifscale:{a_name}|{b_name}");
    let all: BTreeSet<(u32, u64)> = a.keys().chain(b.keys()).copied().collect();
    let both = |k: &(u32, u64)| matches!((a.get(k), b.get(k)), (Some(Some(_)), Some(Some(_))));
    let densities: BTreeSet<u32> = all.iter().map(|k| k.0).collect();
    let mut per_n = Vec::new();
    for n in densities {
        let keys: Vec<(u32, u64)> = all.iter().filter(|k| k.0 == n).copied().collect();
        let paired: Vec<(u32, u64)> = keys.iter().filter(|k| both(k)).copied().collect();
        let Some(metrics) = metrics(a, b, &paired, opts, &format!("{pair}:n{n}")) else {
            continue;
        };
        per_n.push(DensityRow {
            n,
            seeds: paired.len(),
            dropped: keys.len() - paired.len(),
            metrics,
        });
    }
    adjust_holm(per_n.iter_mut().map(|r| &mut r.metrics.accuracy));
    adjust_holm(per_n.iter_mut().map(|r| &mut r.metrics.omission));
    adjust_holm(per_n.iter_mut().map(|r| &mut r.metrics.modification));

    let paired: Vec<(u32, u64)> = all.iter().filter(|k| both(k)).copied().collect();
    let overall = metrics(a, b, &paired, opts, &format!("{pair}:all")).map(|metrics| {
        // Seeds as units: each seed's (sum of differences, count) over N.
        let mut by_seed: BTreeMap<u64, (f64, f64)> = BTreeMap::new();
        for k in &paired {
            if let (Some(Some(x)), Some(Some(y))) = (a.get(k), b.get(k)) {
                let e = by_seed.entry(k.1).or_default();
                e.0 += x.accuracy - y.accuracy;
                e.1 += 1.0;
            }
        }
        let units: Vec<(f64, f64)> = by_seed.values().copied().collect();
        let ci = paired::bootstrap_ratio_ci(
            &units,
            opts.resamples,
            1.0 - opts.alpha,
            opts.seed_for(&format!("{pair}:seeds")),
        );
        let seed_means: Vec<f64> = units.iter().map(|(s, c)| s / c).collect();
        let test = paired::sign_flip(
            &seed_means,
            opts.resamples,
            opts.seed_for(&format!("{pair}:seeds-flip")),
        );
        Overall {
            metrics,
            accuracy_ci_seeds: ci,
            accuracy_p_seeds: test.map(|t| t.p),
            accuracy_min_p_seeds: test.map(|t| t.min_p),
            seeds: units.len(),
            samples: paired.len(),
            dropped: all.len() - paired.len(),
        }
    });
    IfscaleComparison {
        a: a_name.to_owned(),
        b: b_name.to_owned(),
        per_n,
        overall,
    }
}

/// Where one model's mean accuracy curve first falls below a level.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Threshold {
    pub model: String,
    /// The level, percent.
    pub level: f64,
    /// The first N of the grid whose mean accuracy is below the level (None: never within the grid).
    pub first_below: Option<u32>,
    /// The crossing by linear interpolation between that N and the one before (the first N itself when the curve
    /// starts below the level; None: never within the grid).
    pub crossing: Option<f64>,
    /// Percentile bootstrap interval of the crossing, resampling seeds; a bound of None lies beyond the grid.
    pub ci_lower: Option<f64>,
    pub ci_upper: Option<f64>,
    pub seeds: usize,
    /// The largest N of the grid.
    pub max_n: Option<u32>,
}

/// The crossing of a curve (N ascending, mean accuracy) below `level`.
pub fn crossing(curve: &[(u32, f64)], level: f64) -> Option<f64> {
    let first = curve.iter().position(|&(_, acc)| acc < level)?;
    if first == 0 {
        return Some(f64::from(curve[0].0));
    }
    let ((n0, a0), (n1, a1)) = (curve[first - 1], curve[first]);
    let frac = (a0 - level) / (a0 - a1);
    Some(f64::from(n0) + frac * f64::from(n1 - n0))
}

/// The mean accuracy curve over the given seeds (with repeats), N ascending; an N no chosen seed scored is left
/// out.
fn curve(samples: &Samples, seeds: &[u64], grid: &[u32]) -> Vec<(u32, f64)> {
    grid.iter()
        .filter_map(|&n| {
            let (mut s, mut c) = (0.0, 0.0);
            for seed in seeds {
                if let Some(Some(r)) = samples.get(&(n, *seed)) {
                    s += r.accuracy;
                    c += 1.0;
                }
            }
            (c > 0.0).then(|| (n, s / c))
        })
        .collect()
}

/// The threshold N of one model at `opts.level`.
pub fn threshold(model: &str, samples: &Samples, opts: &Options) -> Threshold {
    let grid: Vec<u32> = samples
        .keys()
        .map(|k| k.0)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let seeds: Vec<u64> = samples
        .iter()
        .filter(|(_, r)| r.is_some())
        .map(|(k, _)| k.1)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let full = curve(samples, &seeds, &grid);
    let first_below = full.iter().find(|(_, acc)| *acc < opts.level).map(|c| c.0);
    let point = crossing(&full, opts.level);
    let (mut lo, mut hi) = (None, None);
    if !seeds.is_empty() {
        // Beyond the grid is +∞, so it sorts last; a bound there is reported as None.
        let values = paired::bootstrap(
            opts.resamples,
            opts.seed_for(&format!("threshold:{model}")),
            |rng| {
                let pick: Vec<u64> = (0..seeds.len())
                    .map(|_| seeds[rng.below(seeds.len())])
                    .collect();
                crossing(&curve(samples, &pick, &grid), opts.level).unwrap_or(f64::INFINITY)
            },
        );
        let mut sorted = values;
        sorted.sort_by(f64::total_cmp);
        let tail = opts.alpha / 2.0;
        let at = |q: f64| {
            // The lower-index quantile, so an infinite neighbour is never interpolated with.
            let idx = ((sorted.len() - 1) as f64 * q).round() as usize;
            let v = sorted[idx.min(sorted.len() - 1)];
            v.is_finite().then_some(v)
        };
        if !sorted.is_empty() {
            lo = at(tail);
            hi = at(1.0 - tail);
        }
    }
    Threshold {
        model: model.to_owned(),
        level: opts.level,
        first_below,
        crossing: point,
        ci_lower: lo,
        ci_upper: hi,
        seeds: seeds.len(),
        max_n: grid.last().copied(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(rows: &[(u32, u64, f64)]) -> Samples {
        rows.iter()
            .map(|&(n, s, acc)| {
                (
                    (n, s),
                    Some(Rates {
                        accuracy: acc,
                        omission: 100.0 - acc,
                        modification: 0.0,
                    }),
                )
            })
            .collect()
    }

    #[test]
    fn crossing_by_hand() {
        // 90 at 10, 70 at 20, 40 at 30: below 50 first at 30; 70 → 40 crosses 50 two thirds of the way: 26.67.
        let c = [(10, 90.0), (20, 70.0), (30, 40.0)];
        assert!((crossing(&c, 50.0).unwrap() - (20.0 + 20.0 / 30.0 * 10.0)).abs() < 1e-12);
        assert_eq!(crossing(&c, 95.0), Some(10.0));
        assert_eq!(crossing(&c, 10.0), None);
    }

    #[test]
    fn per_density_and_overall_differences_by_hand() {
        // Two seeds, two densities; b is a minus 10 points everywhere except (20, 1), minus 20.
        let a = samples(&[(10, 0, 90.0), (10, 1, 80.0), (20, 0, 70.0), (20, 1, 60.0)]);
        let b = samples(&[(10, 0, 80.0), (10, 1, 70.0), (20, 0, 60.0), (20, 1, 40.0)]);
        let opts = Options {
            resamples: 200,
            ..Options::default()
        };
        let c = compare("a", &a, "b", &b, &opts);
        assert_eq!(c.per_n.len(), 2);
        let n10 = &c.per_n[0].metrics.accuracy;
        assert_eq!(
            (n10.units, n10.diff, n10.mean_a, n10.mean_b),
            (2, 10.0, 85.0, 75.0)
        );
        // Two seeds: the exact sign-flip p is 2/4 = 0.5 at best.
        assert_eq!((n10.p, n10.min_p), (Some(0.5), Some(0.5)));
        assert_eq!(n10.mdd, None, "two seeds cannot reach 0.05");
        assert_eq!(c.per_n[1].metrics.accuracy.diff, 15.0);
        // Holm over the two densities: both p = 0.5 → 1.0.
        assert_eq!(n10.p_holm, Some(1.0));
        // Omission rises by what accuracy loses.
        assert_eq!(c.per_n[1].metrics.omission.diff, -15.0);
        let all = c.overall.unwrap();
        assert_eq!((all.samples, all.seeds, all.dropped), (4, 2, 0));
        assert_eq!(all.metrics.accuracy.diff, 12.5);
        // Four positive differences over samples: p = 2/16.
        assert_eq!(all.metrics.accuracy.p, Some(0.125));
        // Seeds' means 10 and 15: the bootstrap over two seeds lies within [10, 15].
        let (lo, hi) = all.accuracy_ci_seeds.unwrap();
        assert!(lo >= 10.0 && hi <= 15.0 && lo < hi);
    }

    #[test]
    fn identical_models_are_tied_and_still_get_a_detectable_difference() {
        // Six seeds at one N, the same values for both: p = 1, and the MDD from the unpaired SE (10 and 20
        // alternating: s² = 30, unpaired SE √(60/6) = √10), (t₀.₉₇₅,₅ + t₀.₈,₅) × √10.
        let rows: Vec<(u32, u64, f64)> = (0..6)
            .map(|s| (10, s, if s % 2 == 0 { 10.0 } else { 20.0 }))
            .collect();
        let a = samples(&rows);
        let c = compare("a", &a, "a2", &a, &Options::default());
        let acc = &c.per_n[0].metrics.accuracy;
        assert_eq!((acc.diff, acc.p), (0.0, Some(1.0)));
        let want = paired::min_detectable(10f64.sqrt(), Some(5.0), 0.05, 0.8);
        assert!((acc.mdd.unwrap() - want).abs() < 1e-9, "{acc:?}");
    }

    #[test]
    fn failed_and_missing_samples_are_dropped_and_counted() {
        let mut a = samples(&[(10, 0, 90.0), (10, 1, 80.0), (10, 2, 85.0)]);
        a.insert((10, 1), None);
        let b = samples(&[(10, 0, 80.0), (10, 1, 70.0)]);
        let c = compare("a", &a, "b", &b, &Options::default());
        assert_eq!((c.per_n[0].seeds, c.per_n[0].dropped), (1, 2));
        assert_eq!(c.overall.unwrap().dropped, 2);
    }

    #[test]
    fn threshold_by_hand_and_its_interval() {
        // Both seeds cross 50 between 20 and 30.
        let s = samples(&[
            (10, 0, 90.0),
            (20, 0, 60.0),
            (30, 0, 30.0),
            (10, 1, 80.0),
            (20, 1, 70.0),
            (30, 1, 40.0),
        ]);
        let t = threshold("m", &s, &Options::default());
        // Mean curve 85, 65, 35: 65 → 35 crosses 50 halfway: 25.
        assert_eq!(t.first_below, Some(30));
        assert_eq!(t.crossing, Some(25.0));
        // Seed 0 alone crosses at 23.33, seed 1 alone at 26.67: the interval lies within them.
        let (lo, hi) = (t.ci_lower.unwrap(), t.ci_upper.unwrap());
        assert!(lo >= 23.3 && hi <= 26.7 && lo < hi, "{lo} {hi}");
        // A level never reached: no crossing, an interval beyond the grid.
        let never = threshold(
            "m",
            &s,
            &Options {
                level: 10.0,
                ..Options::default()
            },
        );
        assert_eq!((never.crossing, never.ci_upper), (None, None));
    }
}
