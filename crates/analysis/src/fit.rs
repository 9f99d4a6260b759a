//! Decay-pattern classification of accuracy against instruction density, and the variance-pattern rule.
//!
//! The paper names three decay patterns (threshold, linear, exponential) and assigns them by eye. Here each pattern is
//! a family of curves whose defining shape is written into its parameter bounds, fitted by least squares to a model's
//! mean accuracy per N (`x` = N, `span` = largest − smallest N):
//! - linear, a steady decline: `y = a + b·x` (k = 3 parameters counting the noise variance);
//! - threshold, flat then a drop: `y = level − s·max(0, x − c)` with `s ≥ 0` and a fitted breakpoint `c` that leaves
//!   a plateau of at least [`MIN_PLATEAU_SHARE`] of the span (`c ≥ x_min + span/5`) and at least two N after it
//!   (k = 4, the breakpoint counts);
//! - exponential, fast early decay that flattens: `y = floor + amp·exp(−(x − x_min)/τ)` with `floor ≥ 0`, `amp > 0`
//!   and a decay that settles inside the tested range, `τ ≤ span/`[`SETTLE_TAUS`] (after 3τ, 95 % of the drop is
//!   spent; k = 4).
//!
//! Every family is fitted within its bounds, so the three BICs, `n·ln(RSS/n) + k·ln(n)` (Gaussian errors), compare
//! like with like. The pattern is the family with the lowest BIC; the margin is the runner-up's BIC minus the best
//! one's. A margin below [`NEAR_TIE_BIC`] (a difference "not worth more than a bare mention" on the Kass–Raftery
//! scale) is reported as `near-tie (best/runner-up)` rather than silently picking one.
//!
//! Why the bounds: without them a gently curving decline is fitted best by an exponential whose τ is longer than the
//! whole range (it never flattens, so it is not the paper's exponential), and the few ceiling points (N ≤ 50) that a
//! strong model shows before a steady decline make an unconstrained breakpoint fit look like a threshold.

use serde::Serialize;

/// The threshold family's plateau must cover at least this share of the tested N range.
pub const MIN_PLATEAU_SHARE: f64 = 0.2;
/// The exponential family's decay length is at most `span / SETTLE_TAUS` (95 % of the drop inside the range).
pub const SETTLE_TAUS: f64 = 3.0;
/// BIC margins below this are near-ties.
pub const NEAR_TIE_BIC: f64 = 2.0;

/// A decay family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DecayPattern {
    Threshold,
    Linear,
    Exponential,
}

impl DecayPattern {
    pub fn as_str(self) -> &'static str {
        match self {
            DecayPattern::Threshold => "threshold",
            DecayPattern::Linear => "linear",
            DecayPattern::Exponential => "exponential",
        }
    }
}

/// One model's three fits and the classification.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DecayFit {
    pub model: String,
    pub n_points: usize,
    /// The family with the lowest BIC.
    pub pattern: DecayPattern,
    /// The family with the second-lowest BIC (None when only one family could be fitted).
    pub runner_up: Option<DecayPattern>,
    /// BIC of the runner-up minus BIC of the best family (≥ 0).
    pub margin: Option<f64>,
    pub linear: LinearFit,
    pub exponential: Option<ExponentialFit>,
    pub threshold: Option<ThresholdFit>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinearFit {
    pub intercept: f64,
    pub slope: f64,
    pub rss: f64,
    pub bic: f64,
    pub r2: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExponentialFit {
    pub floor: f64,
    pub amplitude: f64,
    /// Decay length τ in instructions.
    pub tau: f64,
    pub x0: f64,
    pub rss: f64,
    pub bic: f64,
    pub r2: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThresholdFit {
    /// Accuracy on the plateau.
    pub level: f64,
    /// The N where the drop starts.
    pub breakpoint: f64,
    /// Slope after the breakpoint (≤ 0, accuracy points per instruction).
    pub slope_after: f64,
    pub rss: f64,
    pub bic: f64,
    pub r2: f64,
}

impl DecayFit {
    /// True when the two best families are closer than [`NEAR_TIE_BIC`].
    pub fn is_near_tie(&self) -> bool {
        self.margin.is_some_and(|m| m < NEAR_TIE_BIC)
    }

    /// `threshold`, `linear`, `exponential`, or `near-tie (best/runner-up)`.
    pub fn label(&self) -> String {
        match self.runner_up {
            Some(r) if self.is_near_tie() => {
                format!("near-tie ({}/{})", self.pattern.as_str(), r.as_str())
            }
            _ => self.pattern.as_str().to_owned(),
        }
    }

    /// A family's BIC (None when it could not be fitted).
    pub fn bic(&self, pattern: DecayPattern) -> Option<f64> {
        match pattern {
            DecayPattern::Linear => Some(self.linear.bic),
            DecayPattern::Exponential => self.exponential.as_ref().map(|f| f.bic),
            DecayPattern::Threshold => self.threshold.as_ref().map(|f| f.bic),
        }
    }

    /// A family's R² (None when it could not be fitted).
    pub fn r2(&self, pattern: DecayPattern) -> Option<f64> {
        match pattern {
            DecayPattern::Linear => Some(self.linear.r2),
            DecayPattern::Exponential => self.exponential.as_ref().map(|f| f.r2),
            DecayPattern::Threshold => self.threshold.as_ref().map(|f| f.r2),
        }
    }

    /// The chosen curve evaluated at `x`.
    pub fn predict(&self, x: f64) -> f64 {
        match self.pattern {
            DecayPattern::Linear => self.linear.predict(x),
            DecayPattern::Exponential => {
                self.exponential.as_ref().map_or(f64::NAN, |f| f.predict(x))
            }
            DecayPattern::Threshold => self.threshold.as_ref().map_or(f64::NAN, |f| f.predict(x)),
        }
    }
}

impl LinearFit {
    pub fn predict(&self, x: f64) -> f64 {
        self.intercept + self.slope * x
    }
}

impl ExponentialFit {
    pub fn predict(&self, x: f64) -> f64 {
        self.floor + self.amplitude * (-(x - self.x0) / self.tau).exp()
    }
}

impl ThresholdFit {
    pub fn predict(&self, x: f64) -> f64 {
        self.level + self.slope_after * (x - self.breakpoint).max(0.0)
    }
}

fn bic(rss: f64, n: usize, k: usize) -> f64 {
    let n_f = n as f64;
    // A perfect fit would give ln(0); floor the residual variance at a negligible level.
    let var = (rss / n_f).max(1e-12);
    n_f * var.ln() + k as f64 * n_f.ln()
}

fn r_squared(rss: f64, y: &[f64]) -> f64 {
    let mean = y.iter().sum::<f64>() / y.len() as f64;
    let tss: f64 = y.iter().map(|v| (v - mean).powi(2)).sum();
    if tss > 0.0 { 1.0 - rss / tss } else { f64::NAN }
}

/// Least squares with a small dense normal-equation solve (Gaussian elimination with partial pivoting).
fn lstsq(columns: &[Vec<f64>], y: &[f64]) -> Option<(Vec<f64>, f64)> {
    let p = columns.len();
    let mut a = vec![vec![0.0; p + 1]; p];
    for i in 0..p {
        for j in 0..p {
            a[i][j] = columns[i].iter().zip(&columns[j]).map(|(u, v)| u * v).sum();
        }
        a[i][p] = columns[i].iter().zip(y).map(|(u, v)| u * v).sum();
    }
    for col in 0..p {
        let pivot = (col..p).max_by(|&r, &s| a[r][col].abs().total_cmp(&a[s][col].abs()))?;
        if a[pivot][col].abs() < 1e-12 {
            return None;
        }
        a.swap(col, pivot);
        for r in 0..p {
            if r != col {
                let factor = a[r][col] / a[col][col];
                #[allow(clippy::needless_range_loop)]
                // rows `r` and `col` of `a` are read and written together
                for c in col..=p {
                    a[r][c] -= factor * a[col][c];
                }
            }
        }
    }
    let beta: Vec<f64> = (0..p).map(|i| a[i][p] / a[i][i]).collect();
    let rss = (0..y.len())
        .map(|r| {
            let fitted: f64 = (0..p).map(|i| beta[i] * columns[i][r]).sum();
            (y[r] - fitted).powi(2)
        })
        .sum();
    Some((beta, rss))
}

/// Minimizes `f` over `[lo, hi]`: a grid of `steps` intervals, then golden-section search in the bracket around the
/// best grid point. Returns the argument and the value (None when `f` is undefined on the whole grid).
fn minimize_1d(
    lo: f64,
    hi: f64,
    steps: usize,
    f: &dyn Fn(f64) -> Option<f64>,
) -> Option<(f64, f64)> {
    let at = |i: usize| lo + (hi - lo) * i as f64 / steps as f64;
    let mut best: Option<(usize, f64)> = None;
    for i in 0..=steps {
        if let Some(v) = f(at(i))
            && best.is_none_or(|(_, b)| v < b)
        {
            best = Some((i, v));
        }
    }
    let (bi, bv) = best?;
    let (mut a, mut b) = (at(bi.saturating_sub(1)), at((bi + 1).min(steps)));
    let ratio = (5f64.sqrt() - 1.0) / 2.0;
    let value = |x: f64| f(x).unwrap_or(f64::INFINITY);
    for _ in 0..60 {
        let c = b - ratio * (b - a);
        let d = a + ratio * (b - a);
        if value(c) < value(d) { b = d } else { a = c }
    }
    let x = (a + b) / 2.0;
    let v = value(x);
    // The refinement can only improve on the grid; keep the grid point if it did not.
    Some(if v <= bv { (x, v) } else { (at(bi), bv) })
}

fn fit_linear(x: &[f64], y: &[f64]) -> Option<LinearFit> {
    let (beta, rss) = lstsq(&[vec![1.0; x.len()], x.to_vec()], y)?;
    Some(LinearFit {
        intercept: beta[0],
        slope: beta[1],
        rss,
        bic: bic(rss, x.len(), 3),
        r2: r_squared(rss, y),
    })
}

fn fit_exponential(x: &[f64], y: &[f64]) -> Option<ExponentialFit> {
    let x0 = x.iter().copied().fold(f64::INFINITY, f64::min);
    let span = x.iter().copied().fold(f64::NEG_INFINITY, f64::max) - x0;
    if span.is_nan() || span <= 0.0 {
        return None;
    }
    let eval = |tau: f64| -> Option<(f64, f64, f64)> {
        let e: Vec<f64> = x.iter().map(|&xi| (-(xi - x0) / tau).exp()).collect();
        let (beta, rss) = lstsq(&[vec![1.0; x.len()], e.clone()], y)?;
        let (floor, amp, rss) = if beta[0] >= 0.0 {
            (beta[0], beta[1], rss)
        } else {
            // Accuracy cannot decay towards a negative floor: refit with the floor held at 0.
            let (beta, rss) = lstsq(&[e], y)?;
            (0.0, beta[0], rss)
        };
        (amp > 0.0).then_some((floor, amp, rss))
    };
    // τ on a log scale from span/200 to the settling bound span/SETTLE_TAUS.
    let (lo, hi) = ((span / 200.0).ln(), (span / SETTLE_TAUS).ln());
    let (log_tau, _) = minimize_1d(lo, hi, 240, &|lt| eval(lt.exp()).map(|r| r.2))?;
    let tau = log_tau.exp();
    let (floor, amplitude, rss) = eval(tau)?;
    Some(ExponentialFit {
        floor,
        amplitude,
        tau,
        x0,
        rss,
        bic: bic(rss, x.len(), 4),
        r2: r_squared(rss, y),
    })
}

fn fit_threshold(x: &[f64], y: &[f64]) -> Option<ThresholdFit> {
    let mut xs: Vec<f64> = x.to_vec();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    if xs.len() < 5 {
        return None;
    }
    let (x_min, x_max) = (xs[0], xs[xs.len() - 1]);
    let lo = x_min + MIN_PLATEAU_SHARE * (x_max - x_min);
    // At least two observed N after the breakpoint.
    let hi = xs[xs.len() - 3];
    if hi < lo {
        return None;
    }
    // For a fixed breakpoint the curve is linear in (level, s); s < 0 is outside the family, where the best
    // in-bounds curve is the flat one (s = 0).
    let eval = |c: f64| -> Option<(f64, f64, f64)> {
        let drop: Vec<f64> = x.iter().map(|&xi| -(xi - c).max(0.0)).collect();
        let (beta, rss) = lstsq(&[vec![1.0; x.len()], drop], y)?;
        if beta[1] >= 0.0 {
            return Some((beta[0], beta[1], rss));
        }
        let mean = y.iter().sum::<f64>() / y.len() as f64;
        Some((mean, 0.0, y.iter().map(|v| (v - mean).powi(2)).sum()))
    };
    let steps = 400.max((hi - lo).ceil() as usize);
    let (c, _) = minimize_1d(lo, hi, steps, &|c| eval(c).map(|r| r.2))?;
    let (level, s, rss) = eval(c)?;
    Some(ThresholdFit {
        level,
        breakpoint: c,
        slope_after: -s,
        rss,
        bic: bic(rss, x.len(), 4),
        r2: r_squared(rss, y),
    })
}

/// Fits the three families to `(x, y)` (N and mean accuracy) and classifies by BIC (see the module docs).
pub fn fit_decay(model: &str, x: &[f64], y: &[f64]) -> Option<DecayFit> {
    let linear = fit_linear(x, y)?;
    let exponential = fit_exponential(x, y);
    let threshold = fit_threshold(x, y);
    // Ties go to the simpler family (listed first).
    let mut ranked: Vec<(DecayPattern, f64)> = vec![(DecayPattern::Linear, linear.bic)];
    ranked.extend(
        exponential
            .as_ref()
            .map(|e| (DecayPattern::Exponential, e.bic)),
    );
    ranked.extend(threshold.as_ref().map(|t| (DecayPattern::Threshold, t.bic)));
    ranked.sort_by(|a, b| a.1.total_cmp(&b.1));
    let (pattern, best) = ranked[0];
    let runner_up = ranked.get(1).map(|r| r.0);
    let margin = ranked.get(1).map(|r| r.1 - best);
    Some(DecayFit {
        model: model.to_owned(),
        n_points: x.len(),
        pattern,
        runner_up,
        margin,
        linear,
        exponential,
        threshold,
    })
}

/// How the across-seed standard deviation moves with N.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum VariancePattern {
    Rising,
    MidPeak,
    Falling,
    /// The standard deviation is below 0.5 percentage points everywhere.
    Flat,
}

impl VariancePattern {
    pub fn as_str(self) -> &'static str {
        match self {
            VariancePattern::Rising => "rising",
            VariancePattern::MidPeak => "mid-peak",
            VariancePattern::Falling => "falling",
            VariancePattern::Flat => "flat",
        }
    }
}

/// The variance-pattern rule: sort the N grid, split it into three equal-count thirds (low, mid, high N), average the
/// standard deviation within each third; the third with the largest average names the pattern (high → rising,
/// mid → mid-peak, low → falling; ties go to the lower third). Flat when every standard deviation is below 0.5 pp.
/// Points whose standard deviation is undefined (one seed) are skipped.
pub fn variance_pattern(points: &[(f64, f64)]) -> Option<VariancePattern> {
    let mut pts: Vec<(f64, f64)> = points.iter().copied().filter(|p| p.1.is_finite()).collect();
    if pts.len() < 3 {
        return None;
    }
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    if pts.iter().all(|p| p.1 < 0.5) {
        return Some(VariancePattern::Flat);
    }
    let n = pts.len();
    let third = |i: usize| -> f64 {
        let (s, e) = (i * n / 3, (i + 1) * n / 3);
        pts[s..e].iter().map(|p| p.1).sum::<f64>() / (e - s) as f64
    };
    let (lo, mid, hi) = (third(0), third(1), third(2));
    Some(if lo >= mid && lo >= hi {
        VariancePattern::Falling
    } else if mid >= hi {
        VariancePattern::MidPeak
    } else {
        VariancePattern::Rising
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid() -> Vec<f64> {
        (1..=50).map(|i| f64::from(i) * 10.0).collect()
    }

    #[test]
    fn recognizes_each_archetype() {
        let x = grid();
        let lin: Vec<f64> = x
            .iter()
            .map(|&v| 100.0 - 0.1 * v + if (v as i64 / 10) % 2 == 0 { 0.3 } else { -0.3 })
            .collect();
        let thr: Vec<f64> = x
            .iter()
            .map(|&v| {
                if v <= 200.0 {
                    99.0
                } else {
                    99.0 - 0.25 * (v - 200.0)
                }
            })
            .collect();
        let exp: Vec<f64> = x
            .iter()
            .map(|&v| 10.0 + 85.0 * (-(v - 10.0) / 40.0).exp())
            .collect();
        assert_eq!(
            fit_decay("l", &x, &lin).unwrap().pattern,
            DecayPattern::Linear
        );
        let t = fit_decay("t", &x, &thr).unwrap();
        assert_eq!(t.pattern, DecayPattern::Threshold);
        let tf = t.threshold.clone().unwrap();
        assert!((tf.breakpoint - 200.0).abs() < 0.5, "{tf:?}");
        assert!((tf.level - 99.0).abs() < 1e-6 && (tf.slope_after + 0.25).abs() < 1e-6);
        assert!(t.margin.unwrap() > NEAR_TIE_BIC && !t.is_near_tie());
        assert_eq!(t.label(), "threshold");
        let e = fit_decay("e", &x, &exp).unwrap();
        assert_eq!(e.pattern, DecayPattern::Exponential);
        let ef = e.exponential.unwrap();
        assert!(
            (ef.floor - 10.0).abs() < 1e-3 && (ef.tau - 40.0).abs() < 1e-2,
            "{ef:?}"
        );
    }

    /// The two shapes the unconstrained families misread: a short ceiling before a steady decline is not a threshold,
    /// and a decline that curves but never flattens within the range is not exponential.
    #[test]
    fn ceilings_and_slow_curves_are_linear() {
        let x = grid();
        let wiggle = |v: f64| if (v as i64 / 10) % 2 == 0 { 0.4 } else { -0.4 };
        let ceiling: Vec<f64> = x
            .iter()
            .map(|&v| (100.0 - 0.12 * (v - 50.0).max(0.0)) + wiggle(v))
            .collect();
        let slow: Vec<f64> = x
            .iter()
            .map(|&v| 10.0 + 90.0 * (-(v - 10.0) / 600.0).exp() + wiggle(v))
            .collect();
        for (name, y) in [("ceiling", &ceiling), ("slow", &slow)] {
            let f = fit_decay(name, &x, y).unwrap();
            assert_eq!(f.label(), "linear", "{name}: {f:?}");
        }
        // The bounds hold: the plateau covers a fifth of the range, the decay settles within it.
        let f = fit_decay("slow", &x, &slow).unwrap();
        let span = 490.0;
        assert!(f.threshold.clone().unwrap().breakpoint >= 10.0 + MIN_PLATEAU_SHARE * span - 1e-9);
        assert!(f.exponential.unwrap().tau <= span / SETTLE_TAUS + 1e-9);
    }

    /// The label of a close call names both families (a real near-tie on the published data is pinned in the
    /// integration tests: claude-sonnet-4).
    #[test]
    fn close_families_are_labelled_near_ties() {
        let x = grid();
        let thr: Vec<f64> = x
            .iter()
            .map(|&v| 99.0 - 0.25 * (v - 200.0).max(0.0))
            .collect();
        let mut f = fit_decay("t", &x, &thr).unwrap();
        f.margin = Some(NEAR_TIE_BIC / 2.0);
        assert!(f.is_near_tie());
        let runner = f.runner_up.unwrap().as_str();
        assert_eq!(f.label(), format!("near-tie (threshold/{runner})"));
        for p in [
            DecayPattern::Linear,
            DecayPattern::Threshold,
            DecayPattern::Exponential,
        ] {
            assert!(f.bic(p).is_some() && f.r2(p).is_some_and(|r| r <= 1.0));
        }
    }

    #[test]
    fn variance_rule() {
        let x = grid();
        let rising: Vec<(f64, f64)> = x.iter().map(|&v| (v, v / 50.0)).collect();
        let falling: Vec<(f64, f64)> = x.iter().map(|&v| (v, 10.0 - v / 50.0)).collect();
        let mid: Vec<(f64, f64)> = x
            .iter()
            .map(|&v| (v, 10.0 - ((v - 250.0) / 25.0).abs()))
            .collect();
        assert_eq!(variance_pattern(&rising), Some(VariancePattern::Rising));
        assert_eq!(variance_pattern(&falling), Some(VariancePattern::Falling));
        assert_eq!(variance_pattern(&mid), Some(VariancePattern::MidPeak));
        assert_eq!(
            variance_pattern(&[(1.0, 0.0), (2.0, 0.1), (3.0, 0.0)]),
            Some(VariancePattern::Flat)
        );
    }
}
