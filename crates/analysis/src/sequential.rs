//! Anytime-valid intervals for sequential runs: a run may look at its data after every batch and stop when the
//! question is answered, and its intervals and decisions keep their level however often it looked.
//!
//! [`MeanCs`] is a confidence sequence for the mean of observations in `[0, 1]`: the predictable plug-in empirical
//! Bernstein sequence of Waudby-Smith and Ramdas (2024, "Estimating means of bounded random variables by betting"),
//! built on the sub-exponential supermartingale of Howard, Ramdas, McAuliffe and Sekhon (2021, "Time-uniform,
//! nonparametric, nonasymptotic confidence sequences"). With probability at least `1 − α` it holds at every time at
//! once, so a stopping rule that peeks after each batch keeps the level. It adapts to the variance (a low-variance
//! difference narrows fast) and needs no independence of identically distributed items: each item's mean given the
//! past may differ (a density, a structure), and the sequence covers their λ-weighted average (the common mean when
//! they are equal, so under the null of equal models it covers 0). The running intersection is kept, so the width
//! never grows.
//!
//! [`PairedCs`] is the same for a paired difference in `[−1, 1]`, and [`decide`] reads a candidate-minus-baseline
//! interval as better, worse, within a margin, or undecided. [`simulate`] is the check behind `docs/sequential.md`:
//! the false-decision rate with equal models and the stopping time with different ones, peeking after every batch.
//!
//! It knows nothing about runs, files or stages: it gets numbers in a fixed order and returns intervals.

use crate::stats::SplitMix64;

/// A closed interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
}

impl Interval {
    pub fn width(&self) -> f64 {
        self.hi - self.lo
    }
}

/// The confidence sequence for a mean of observations in `[0, 1]` at level `1 − α` (two-sided, `α/2` a side).
#[derive(Debug, Clone)]
pub struct MeanCs {
    alpha: f64,
    n: usize,
    /// Σ x and Σ (x − μ̂)² for the predictable mean and variance (started at 1/2 and 1/4, one pseudo-observation).
    sum_x: f64,
    sum_sq: f64,
    mu_hat: f64,
    var_hat: f64,
    /// Σ λ, Σ λ x and Σ ψ(λ) v of the two betting processes.
    sum_lambda: f64,
    sum_lambda_x: f64,
    sum_psi_v: f64,
    /// The running intersection.
    lo: f64,
    hi: f64,
}

/// The largest bet (Waudby-Smith and Ramdas's truncation `c`).
const MAX_LAMBDA: f64 = 0.5;

impl MeanCs {
    /// An empty sequence at level `1 − alpha` (`0 < alpha < 1`): the interval is `[0, 1]` until data arrive.
    pub fn new(alpha: f64) -> MeanCs {
        MeanCs {
            alpha,
            n: 0,
            sum_x: 0.0,
            sum_sq: 0.0,
            mu_hat: 0.5,
            var_hat: 0.25,
            sum_lambda: 0.0,
            sum_lambda_x: 0.0,
            sum_psi_v: 0.0,
            lo: 0.0,
            hi: 1.0,
        }
    }

    /// Observations so far.
    pub fn len(&self) -> usize {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Adds one observation (clamped to `[0, 1]`), in the order the run added it.
    pub fn push(&mut self, x: f64) {
        let x = x.clamp(0.0, 1.0);
        let t = (self.n + 1) as f64;
        let log_term = (2.0 / self.alpha).ln();
        // The bet is predictable: it uses the mean and variance of the observations before this one.
        let lambda = (2.0 * log_term / (self.var_hat * t * (t + 1.0).ln()))
            .sqrt()
            .min(MAX_LAMBDA);
        let v = 4.0 * (x - self.mu_hat).powi(2);
        let psi = (-(1.0 - lambda).ln() - lambda) / 4.0;
        self.sum_lambda += lambda;
        self.sum_lambda_x += lambda * x;
        self.sum_psi_v += psi * v;
        self.n += 1;
        self.sum_x += x;
        self.mu_hat = (0.5 + self.sum_x) / (t + 1.0);
        self.sum_sq += (x - self.mu_hat).powi(2);
        self.var_hat = (0.25 + self.sum_sq) / (t + 1.0);
        let center = self.sum_lambda_x / self.sum_lambda;
        let half = (log_term + self.sum_psi_v) / self.sum_lambda;
        self.lo = self.lo.max(center - half);
        self.hi = self.hi.min(center + half);
        // An empty intersection (possible only outside the guarantee) collapses to a point, never inverts.
        if self.lo > self.hi {
            let mid = (self.lo + self.hi) / 2.0;
            (self.lo, self.hi) = (mid, mid);
        }
    }

    /// The interval now: valid at every time at once.
    pub fn interval(&self) -> Interval {
        Interval {
            lo: self.lo,
            hi: self.hi,
        }
    }
}

/// The confidence sequence for the mean of paired differences in `[−1, 1]` (candidate minus baseline).
#[derive(Debug, Clone)]
pub struct PairedCs(MeanCs);

impl PairedCs {
    pub fn new(alpha: f64) -> PairedCs {
        PairedCs(MeanCs::new(alpha))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Adds one paired difference (clamped to `[−1, 1]`).
    pub fn push(&mut self, d: f64) {
        self.0.push((d + 1.0) / 2.0);
    }

    pub fn interval(&self) -> Interval {
        let i = self.0.interval();
        Interval {
            lo: 2.0 * i.lo - 1.0,
            hi: 2.0 * i.hi - 1.0,
        }
    }
}

/// What a candidate-minus-baseline interval says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Decision {
    Undecided,
    /// The interval lies above 0.
    Better,
    /// The interval lies below 0.
    Worse,
    /// The interval lies within `[−margin, margin]`.
    WithinMargin,
}

impl Decision {
    pub fn is_decided(self) -> bool {
        self != Decision::Undecided
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Undecided => "undecided",
            Decision::Better => "better",
            Decision::Worse => "worse",
            Decision::WithinMargin => "within the margin",
        }
    }
}

/// Reads an interval of a difference: better or worse once it excludes 0, within the margin once it lies inside
/// `[−margin, margin]`, else undecided. Under equal models only "better" and "worse" are false decisions.
pub fn decide(i: Interval, margin: f64) -> Decision {
    if i.lo > 0.0 {
        Decision::Better
    } else if i.hi < 0.0 {
        Decision::Worse
    } else if i.lo >= -margin && i.hi <= margin {
        Decision::WithinMargin
    } else {
        Decision::Undecided
    }
}

/// A simulated sequential comparison: paired prompts of `questions` questions each, a shared difficulty per prompt
/// (uniform in `[0.2, 0.9]`), the baseline correct with that probability and the candidate with it plus `delta`;
/// `batch` prompts are added per batch, up to `grid`, and the rule looks after every batch.
#[derive(Debug, Clone, Copy)]
pub struct Simulation {
    pub runs: usize,
    pub grid: usize,
    pub batch: usize,
    pub questions: usize,
    pub delta: f64,
    pub margin: f64,
    pub alpha: f64,
    pub seed: u64,
}

/// What the simulated runs decided.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SimOutcome {
    /// Runs that stopped on "better" or "worse" (false decisions when `delta` is 0).
    pub better_or_worse: usize,
    pub better: usize,
    pub within_margin: usize,
    /// Runs that reached the whole grid undecided.
    pub undecided: usize,
    /// Runs that stopped before the whole grid.
    pub stopped_early: usize,
    /// Mean prompts used per run.
    pub mean_items: f64,
}

/// Runs `sim.runs` simulated sequential comparisons.
pub fn simulate(sim: &Simulation) -> SimOutcome {
    let mut rng = SplitMix64::new(sim.seed);
    let mut out = SimOutcome::default();
    let mut items = 0usize;
    for _ in 0..sim.runs {
        let mut cs = PairedCs::new(sim.alpha);
        let mut decision = Decision::Undecided;
        while cs.len() < sim.grid && !decision.is_decided() {
            for _ in 0..sim.batch.min(sim.grid - cs.len()) {
                let p = 0.2 + 0.7 * rng.unit();
                let q = (p + sim.delta).clamp(0.0, 1.0);
                let (mut a, mut b) = (0usize, 0usize);
                for _ in 0..sim.questions {
                    a += usize::from(rng.unit() < q);
                    b += usize::from(rng.unit() < p);
                }
                cs.push((a as f64 - b as f64) / sim.questions as f64);
            }
            decision = decide(cs.interval(), sim.margin);
        }
        items += cs.len();
        match decision {
            Decision::Better => out.better += 1,
            Decision::WithinMargin => out.within_margin += 1,
            Decision::Undecided => out.undecided += 1,
            Decision::Worse => {}
        }
        if matches!(decision, Decision::Better | Decision::Worse) {
            out.better_or_worse += 1;
        }
        if cs.len() < sim.grid {
            out.stopped_early += 1;
        }
    }
    out.mean_items = items as f64 / sim.runs.max(1) as f64;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interval_starts_whole_and_narrows_around_the_mean() {
        let mut cs = MeanCs::new(0.05);
        assert_eq!(cs.interval(), Interval { lo: 0.0, hi: 1.0 });
        let mut rng = SplitMix64::new(3);
        let mut widths = Vec::new();
        for _ in 0..4000 {
            cs.push(if rng.unit() < 0.3 { 1.0 } else { 0.0 });
            widths.push(cs.interval().width());
        }
        let i = cs.interval();
        assert!(i.lo < 0.3 && 0.3 < i.hi, "{i:?}");
        assert!(i.width() < 0.1, "{i:?}");
        assert!(widths.windows(2).all(|w| w[1] <= w[0]), "never wider");
    }

    #[test]
    fn a_constant_series_narrows_faster_than_a_coin() {
        let (mut flat, mut coin) = (MeanCs::new(0.05), MeanCs::new(0.05));
        for i in 0..400 {
            flat.push(0.5);
            coin.push(if i % 2 == 0 { 1.0 } else { 0.0 });
        }
        assert!(flat.interval().width() < coin.interval().width() / 2.0);
    }

    #[test]
    fn coverage_holds_at_every_time_at_once() {
        // Over 300 runs of 500 Bernoulli(0.8) draws, the sequence misses 0.8 at some time in at most α of them.
        let mut rng = SplitMix64::new(11);
        let mut missed = 0;
        for _ in 0..300 {
            let mut cs = MeanCs::new(0.1);
            let mut miss = false;
            for _ in 0..500 {
                cs.push(if rng.unit() < 0.8 { 1.0 } else { 0.0 });
                let i = cs.interval();
                miss |= !(i.lo <= 0.8 && 0.8 <= i.hi);
            }
            missed += usize::from(miss);
        }
        assert!(missed <= 30, "{missed} of 300 runs missed");
    }

    #[test]
    fn paired_intervals_map_back_to_differences() {
        let mut cs = PairedCs::new(0.05);
        for i in 0..2000 {
            cs.push(if i % 10 < 3 { 1.0 } else { 0.0 });
        }
        let i = cs.interval();
        assert!(i.lo > 0.2 && i.hi < 0.4, "{i:?}");
        assert_eq!(decide(i, 0.01), Decision::Better);
    }

    #[test]
    fn decisions_read_the_interval() {
        let d = |lo, hi| decide(Interval { lo, hi }, 0.01);
        assert_eq!(d(0.001, 0.05), Decision::Better);
        assert_eq!(d(-0.05, -0.001), Decision::Worse);
        assert_eq!(d(-0.009, 0.01), Decision::WithinMargin);
        assert_eq!(d(-0.02, 0.01), Decision::Undecided);
    }
}
