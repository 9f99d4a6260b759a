//! Decay-pattern fits of accuracy against instruction density, and the variance-pattern rule.
//!
//! Three curves are fitted by least squares to a model's mean accuracy per N:
//! - linear: `y = a + b·x` (3 parameters counting the noise variance);
//! - exponential decay to a floor: `y = floor + amp·exp(−(x − x₀)/τ)`, `x₀` the smallest N, floor ≥ 0 (4 parameters);
//! - threshold: continuous piecewise linear `y = a + b₁·x + b₂·max(0, x − c)` with a fitted breakpoint `c`
//!   constrained to steepen (`b₂ < 0`) (5 parameters, the breakpoint counts).
//!
//! The pattern is the curve with the lowest BIC, `n·ln(RSS/n) + k·ln(n)` (Gaussian errors); BIC rather than AIC because
//! it penalises the extra breakpoint more at n = 50, so a threshold is only called when the kink is clear.
//! Ties go to the simpler curve (linear, then exponential, then threshold).

use serde::Serialize;

/// The fitted decay archetype.
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

/// One model's three fits and the chosen pattern.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DecayFit {
    pub model: String,
    pub n_points: usize,
    pub pattern: DecayPattern,
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
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThresholdFit {
    pub breakpoint: f64,
    pub intercept: f64,
    pub slope_before: f64,
    pub slope_after: f64,
    pub rss: f64,
    pub bic: f64,
}

impl DecayFit {
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
        self.intercept
            + self.slope_before * x
            + (self.slope_after - self.slope_before) * (x - self.breakpoint).max(0.0)
    }
}

fn bic(rss: f64, n: usize, k: usize) -> f64 {
    let n_f = n as f64;
    // A perfect fit would give ln(0); floor the residual variance at a negligible level.
    let var = (rss / n_f).max(1e-12);
    n_f * var.ln() + k as f64 * n_f.ln()
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

fn fit_linear(x: &[f64], y: &[f64]) -> Option<LinearFit> {
    let (beta, rss) = lstsq(&[vec![1.0; x.len()], x.to_vec()], y)?;
    Some(LinearFit {
        intercept: beta[0],
        slope: beta[1],
        rss,
        bic: bic(rss, x.len(), 3),
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
        if beta[0] >= 0.0 {
            return Some((beta[0], beta[1], rss));
        }
        // Accuracy cannot decay towards a negative floor: refit with the floor held at 0.
        let (beta, rss) = lstsq(&[e], y)?;
        Some((0.0, beta[0], rss))
    };
    // Coarse log grid of τ from span/200 to span·20, then golden-section refinement around the best grid point.
    let steps = 240;
    let (lo, hi) = ((span / 200.0).ln(), (span * 20.0).ln());
    let grid: Vec<f64> = (0..=steps)
        .map(|i| (lo + (hi - lo) * i as f64 / steps as f64).exp())
        .collect();
    let mut best: Option<(usize, f64)> = None;
    for (i, &tau) in grid.iter().enumerate() {
        if let Some((_, amp, rss)) = eval(tau)
            && amp > 0.0
            && best.is_none_or(|(_, b)| rss < b)
        {
            best = Some((i, rss));
        }
    }
    let (bi, _) = best?;
    let (mut a, mut b) = (
        grid[bi.saturating_sub(1)].ln(),
        grid[(bi + 1).min(steps)].ln(),
    );
    let ratio = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..60 {
        let c = b - ratio * (b - a);
        let d = a + ratio * (b - a);
        let fc = eval(c.exp()).map_or(f64::INFINITY, |r| r.2);
        let fd = eval(d.exp()).map_or(f64::INFINITY, |r| r.2);
        if fc < fd { b = d } else { a = c }
    }
    let tau = ((a + b) / 2.0).exp();
    let (floor, amplitude, rss) = eval(tau)?;
    Some(ExponentialFit {
        floor,
        amplitude,
        tau,
        x0,
        rss,
        bic: bic(rss, x.len(), 4),
    })
}

fn fit_threshold(x: &[f64], y: &[f64]) -> Option<ThresholdFit> {
    let mut best: Option<ThresholdFit> = None;
    // Candidate breakpoints: every observed N except the two smallest and two largest (each segment keeps ≥ 2 points).
    let mut xs: Vec<f64> = x.to_vec();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    if xs.len() < 5 {
        return None;
    }
    for &c in &xs[1..xs.len() - 2] {
        let hinge: Vec<f64> = x.iter().map(|&xi| (xi - c).max(0.0)).collect();
        let Some((beta, rss)) = lstsq(&[vec![1.0; x.len()], x.to_vec(), hinge], y) else {
            continue;
        };
        if beta[2] >= 0.0 {
            continue;
        }
        if best.as_ref().is_none_or(|b| rss < b.rss) {
            best = Some(ThresholdFit {
                breakpoint: c,
                intercept: beta[0],
                slope_before: beta[1],
                slope_after: beta[1] + beta[2],
                rss,
                bic: bic(rss, x.len(), 5),
            });
        }
    }
    best
}

/// Fits the three curves to `(x, y)` (N and mean accuracy) and picks the pattern by BIC.
pub fn fit_decay(model: &str, x: &[f64], y: &[f64]) -> Option<DecayFit> {
    let linear = fit_linear(x, y)?;
    let exponential = fit_exponential(x, y);
    let threshold = fit_threshold(x, y);
    let mut pattern = DecayPattern::Linear;
    let mut best = linear.bic;
    if let Some(e) = &exponential
        && e.bic < best
    {
        pattern = DecayPattern::Exponential;
        best = e.bic;
    }
    if let Some(t) = &threshold
        && t.bic < best
    {
        pattern = DecayPattern::Threshold;
    }
    Some(DecayFit {
        model: model.to_owned(),
        n_points: x.len(),
        pattern,
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
        assert_eq!(t.threshold.unwrap().breakpoint, 200.0);
        let e = fit_decay("e", &x, &exp).unwrap();
        assert_eq!(e.pattern, DecayPattern::Exponential);
        let ef = e.exponential.unwrap();
        assert!(
            (ef.floor - 10.0).abs() < 1e-3 && (ef.tau - 40.0).abs() < 1e-2,
            "{ef:?}"
        );
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
