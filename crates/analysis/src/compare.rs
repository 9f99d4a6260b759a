//! Paired comparisons of models and runs on the same items, and the regression gate (`cargo xtask compare`).
//!
//! Both benchmarks are paired by design: IFScale gives every model the same keyword list for each density N and
//! seed, RIFT the same prompts. So the comparisons here work on per-item differences, never on two separate
//! intervals:
//! - [`paired`]: the percentile bootstrap over units, the sign-flip permutation test (exact up to 20 non-zero
//!   differences), Holm's correction, the minimum detectable difference and the non-inferiority decision;
//! - [`binary`]: McNemar's test on matched answers (exact binomial for small counts) and its clustered form;
//! - [`cluster`]: standard errors of answer-level means clustered by prompt, the clustering design effect and the
//!   pairing gain;
//! - [`ties`]: sets of statistically tied models;
//! - [`ifscale`] and [`rift`]: the comparisons of one pair of models on each benchmark, and IFScale's threshold N;
//! - [`align`]: which items two runs hold and whether they are the same (vocabulary, seeds, template, question set,
//!   prompt parameters);
//! - [`report`]: everything for a list of models and a baseline, the gate's verdict, and its Markdown;
//!   [`headline`]: the few sentences and tables of it that a run's report shows;
//! - [`runs`]: what a run folder holds for a comparison (items, IFScale scores, RIFT models) and one model's side;
//! - [`verdicts`]: the check that a run's two copies of the RIFT verdicts (JSONL records, Parquet tables) agree.
//!
//! Definitions and when to use each statistic: `docs/compare.md`.

pub mod align;
pub mod binary;
pub mod cluster;
pub mod headline;
pub mod ifscale;
pub mod paired;
pub mod report;
pub mod rift;
pub mod runs;
pub mod ties;
pub mod verdicts;

use serde::Serialize;

use crate::stats;

/// Settings shared by every comparison.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Options {
    /// Significance level of every test; intervals have central mass 1 − α (two-sided).
    pub alpha: f64,
    /// The power the minimum detectable difference is computed for.
    pub power: f64,
    /// Bootstrap resamples and Monte Carlo sign vectors.
    pub resamples: usize,
    /// Seed of every random draw (results are the same for a fixed seed).
    pub seed: u64,
    /// IFScale: the accuracy level (percent) whose first crossing N is reported per model.
    pub level: f64,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            alpha: 0.05,
            power: 0.8,
            resamples: 10_000,
            seed: 0,
            level: 50.0,
        }
    }
}

impl Options {
    /// The seed of one named computation: the run's seed mixed with the name, so each computation draws its own
    /// stream and adding one does not change another's.
    pub fn seed_for(&self, name: &str) -> u64 {
        stats::group_seed(self.seed, name)
    }
}

/// A paired difference a − b of means over units (seeds, samples, prompts), in the units of the values
/// (percentage points for accuracies in percent).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diff {
    /// Paired units (both sides have a value).
    pub units: usize,
    pub mean_a: f64,
    pub mean_b: f64,
    pub diff: f64,
    /// Standard error of the mean difference (sample SD of the differences ÷ √units).
    pub se: Option<f64>,
    /// Percentile bootstrap interval (central mass 1 − α), resampling units.
    pub ci_lower: Option<f64>,
    pub ci_upper: Option<f64>,
    /// One-sided bootstrap bounds at α (the α and 1 − α quantiles): what the gate decides on.
    pub one_sided_lower: Option<f64>,
    pub one_sided_upper: Option<f64>,
    /// Two-sided sign-flip permutation p-value.
    pub p: Option<f64>,
    /// The smallest p-value this many units can give (2 ÷ 2^k for k non-zero differences, exactly enumerated).
    pub min_p: Option<f64>,
    /// Holm-adjusted p across the family the comparison belongs to (IFScale: the densities N), when there is one.
    pub p_holm: Option<f64>,
    /// Minimum detectable difference at α and the configured power; None when this many units cannot reach α at
    /// all (2 ÷ 2^units > α) or there are fewer than two.
    pub mdd: Option<f64>,
}

impl Diff {
    /// Whether the difference is significant at α (Holm-adjusted when adjusted).
    pub fn significant(&self, alpha: f64) -> bool {
        self.p_holm.or(self.p).is_some_and(|p| p < alpha)
    }
}

/// The paired difference of `a` and `b` (one value per unit, same order): means, SE, bootstrap interval and
/// one-sided bounds, sign-flip p-value and minimum detectable difference. None without units.
pub fn paired_diff(a: &[f64], b: &[f64], opts: &Options, name: &str) -> Option<Diff> {
    let units = a.len().min(b.len());
    if units == 0 {
        return None;
    }
    let (a, b) = (&a[..units], &b[..units]);
    let diffs: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    let (mean_a, mean_b) = (stats::mean(a)?, stats::mean(b)?);
    let (diff, se) = paired::mean_se(&diffs);
    let diff = diff?;
    let boot_units: Vec<(f64, f64)> = diffs.iter().map(|d| (*d, 1.0)).collect();
    let values = paired::bootstrap(
        opts.resamples,
        opts.seed_for(&format!("boot:{name}")),
        |rng| paired::resampled_ratio(&boot_units, rng),
    );
    let ci = paired::percentile_interval(&values, 1.0 - opts.alpha);
    let test = paired::sign_flip(
        &diffs,
        opts.resamples,
        opts.seed_for(&format!("flip:{name}")),
    );
    // Whether this many units can reach α at all (whatever the signs observed): 2 ÷ 2^units when enumerated, the
    // Monte Carlo floor otherwise.
    let design_min_p = if units <= paired::EXACT_SIGN_FLIP_MAX {
        2f64.powi(1 - units as i32)
    } else {
        1.0 / (opts.resamples as f64 + 1.0)
    };
    let mdd = if design_min_p <= opts.alpha && units > 1 {
        paired::detection_se(a, b)
            .map(|se| paired::min_detectable(se, Some(units as f64 - 1.0), opts.alpha, opts.power))
    } else {
        None
    };
    Some(Diff {
        units,
        mean_a,
        mean_b,
        diff,
        se,
        ci_lower: ci.map(|c| c.0),
        ci_upper: ci.map(|c| c.1),
        one_sided_lower: paired::percentile(&values, opts.alpha),
        one_sided_upper: paired::percentile(&values, 1.0 - opts.alpha),
        p: test.map(|t| t.p),
        min_p: test.map(|t| t.min_p),
        p_holm: None,
        mdd,
    })
}

/// Holm-adjusts the p-values of a family of differences in place.
pub fn adjust_holm<'a>(family: impl IntoIterator<Item = &'a mut Diff>) {
    let mut diffs: Vec<&mut Diff> = family.into_iter().collect();
    let p: Vec<f64> = diffs.iter().map(|d| d.p.unwrap_or(f64::NAN)).collect();
    for (d, adj) in diffs.iter_mut().zip(paired::holm(&p)) {
        if adj.is_finite() {
            d.p_holm = Some(adj);
        }
    }
}
