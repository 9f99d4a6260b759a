//! Judged proportions corrected for the judge's measured errors (the Rogan–Gladen estimator), with a delta-method
//! interval that carries the uncertainty of both the scored items and the judge's control items.
//!
//! A judge with sensitivity `se` (known-correct controls it accepts) and specificity `sp` (known-incorrect controls
//! it rejects) reports a true share θ as `p = θ·se + (1 − θ)(1 − sp)`; so `θ = (p + sp − 1) ÷ (se + sp − 1)`.
//! Only the answers an LLM judge decided are corrected; answers the pre-judge settled (or a missing answer) are
//! counted as they are: overall = (settled correct + judged answers × θ̂) ÷ all answers.
//!
//! The interval is the delta method, not a bootstrap: Var θ̂ ≈ [Var p + θ̂² Var se + (1 − θ̂)² Var sp] ÷ J² with
//! J = se + sp − 1, each binomial variance p̃(1 − p̃) ÷ n taken at p̃ = (k + ½) ÷ (n + 1) (so 50 of 50 controls still
//! carry uncertainty), the scored shares' variances multiplied by the caller's design effect
//! (answers cluster within prompts), and the 95 % interval clipped to [0, 1]. `tests/it/judge_correction.rs`
//! checks its coverage against simulated runs whose truth is known.
//!
//! The correction is refused, with the reason, when either kind has fewer than [`MIN_CONTROLS`] control items or
//! when the lower 95 % bound of J falls below [`MIN_YOUDEN`] (a judge barely better than a coin makes 1 ÷ J
//! explode). It knows nothing about where the counts come from.

use serde::{Deserialize, Serialize};

/// Fewest control items of each kind the correction needs.
pub const MIN_CONTROLS: u64 = 20;
/// Smallest lower 95 % bound of J = sensitivity + specificity − 1 the correction accepts.
pub const MIN_YOUDEN: f64 = 0.2;
/// The z of a two-sided 95 % interval.
const Z95: f64 = 1.959_963_984_540_054;

/// `k` of `n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Count {
    pub k: u64,
    pub n: u64,
}

impl Count {
    pub fn new(k: u64, n: u64) -> Count {
        Count { k, n }
    }

    /// k ÷ n (None when n is 0).
    pub fn rate(self) -> Option<f64> {
        (self.n > 0).then(|| self.k as f64 / self.n as f64)
    }

    /// The variance of k ÷ n taken at p̃ = (k + ½) ÷ (n + 1): p̃(1 − p̃) ÷ n, so that 50 of 50 still carries the
    /// uncertainty of 50 items (the plain p̂(1 − p̂) ÷ n would be 0).
    fn variance(self) -> f64 {
        let n = self.n as f64;
        let p = (self.k as f64 + 0.5) / (n + 1.0);
        p * (1.0 - p) / n.max(1.0)
    }
}

/// A judge's control items: known-correct ones it accepted, known-incorrect ones it rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Calibration {
    pub sensitivity: Count,
    pub specificity: Count,
}

impl Calibration {
    /// From a run's judge check (`judge-check.json`).
    pub fn from_check(c: &schema::judge_check::JudgeCheck) -> Calibration {
        Calibration {
            sensitivity: Count::new(c.sensitivity.agree, c.sensitivity.total),
            specificity: Count::new(c.specificity.agree, c.specificity.total),
        }
    }

    /// J = sensitivity + specificity − 1 with its variance, or why the correction cannot use this judge.
    fn youden(&self) -> Result<(f64, f64, f64), Unstable> {
        let (se, sp) = (self.sensitivity, self.specificity);
        if se.n < MIN_CONTROLS || sp.n < MIN_CONTROLS {
            return Err(Unstable::TooFewControls {
                known_correct: se.n,
                known_incorrect: sp.n,
            });
        }
        let (s, p) = (se.rate().unwrap_or(0.0), sp.rate().unwrap_or(0.0));
        let j = s + p - 1.0;
        let (v_se, v_sp) = (se.variance(), sp.variance());
        let low = j - Z95 * (v_se + v_sp).sqrt();
        if low < MIN_YOUDEN {
            return Err(Unstable::Youden { j, low });
        }
        Ok((j, v_se, v_sp))
    }
}

/// Why a share was not corrected.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "reason")]
pub enum Unstable {
    /// Fewer than [`MIN_CONTROLS`] control items of a kind.
    TooFewControls {
        known_correct: u64,
        known_incorrect: u64,
    },
    /// J = sensitivity + specificity − 1 is too close to 0: its lower 95 % bound is below [`MIN_YOUDEN`].
    Youden { j: f64, low: f64 },
}

impl std::fmt::Display for Unstable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unstable::TooFewControls {
                known_correct,
                known_incorrect,
            } => write!(
                f,
                "not corrected: {known_correct} known-correct and {known_incorrect} known-incorrect control items \
                 (needs ≥ {MIN_CONTROLS} of each)"
            ),
            Unstable::Youden { j, low } => write!(
                f,
                "not corrected: sensitivity + specificity − 1 = {j:.2} (95 % lower bound {low:.2}) is too close to 0 \
                 (needs ≥ {MIN_YOUDEN})"
            ),
        }
    }
}

/// A corrected share (fractions) with its 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    pub value: f64,
    pub se: f64,
    pub low: f64,
    pub high: f64,
}

impl Estimate {
    fn new(value: f64, var: f64) -> Estimate {
        let se = var.max(0.0).sqrt();
        Estimate {
            value,
            se,
            low: (value - Z95 * se).clamp(0.0, 1.0),
            high: (value + Z95 * se).clamp(0.0, 1.0),
        }
    }
}

/// One share, raw and corrected.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Correction {
    /// (settled k + judged k) ÷ (settled n + judged n), as reported.
    pub raw: f64,
    /// Answers the pre-judge settled (not corrected).
    pub settled: Count,
    /// Answers an LLM judge decided (corrected).
    pub judged: Count,
    /// The corrected share, or why there is none. Without judged answers it is the raw share (nothing to correct).
    pub corrected: Result<Estimate, Unstable>,
}

impl Correction {
    /// `38.1 % [33.0, 43.4]`, or the reason it is not corrected.
    pub fn describe(&self) -> String {
        match &self.corrected {
            Ok(e) => format!(
                "{:.1} % [{:.1}, {:.1}]",
                100.0 * e.value,
                100.0 * e.low,
                100.0 * e.high
            ),
            Err(u) => u.to_string(),
        }
    }
}

/// The corrected judged share θ̂ (unclipped) and the terms of its delta-method variance.
struct Judged {
    theta: f64,
    var_p: f64,
    j: f64,
    v_se: f64,
    v_sp: f64,
}

fn judged_part(judged: Count, cal: &Calibration, deff: f64) -> Result<Option<Judged>, Unstable> {
    let Some(p) = judged.rate() else {
        return Ok(None);
    };
    let (j, v_se, v_sp) = cal.youden()?;
    let sp = cal.specificity.rate().unwrap_or(0.0);
    Ok(Some(Judged {
        theta: (p + sp - 1.0) / j,
        var_p: judged.variance() * deff,
        j,
        v_se,
        v_sp,
    }))
}

/// Corrects a share: `settled` as it is, `judged` by the judge's `cal`; `deff` (≥ 1 when answers cluster; 1 when
/// independent) multiplies the scored items' sampling variances. None without answers.
pub fn correct(settled: Count, judged: Count, cal: &Calibration, deff: f64) -> Option<Correction> {
    let total = settled.n + judged.n;
    let raw = Count::new(settled.k + judged.k, total).rate()?;
    let n = total as f64;
    let ws = settled.n as f64 / n;
    let var_settled = if settled.n > 0 {
        ws * ws * settled.variance() * deff
    } else {
        0.0
    };
    let corrected = judged_part(judged, cal, deff).map(|part| {
        let Some(jd) = part else {
            return Estimate::new(raw, var_settled);
        };
        let wj = judged.n as f64 / n;
        // The judged answers' true share lies in [0, 1]: θ̂ is clipped there before it is weighted in.
        let t = jd.theta.clamp(0.0, 1.0);
        let value = ws * settled.rate().unwrap_or(0.0) + wj * t;
        let var_theta =
            (jd.var_p + t * t * jd.v_se + (1.0 - t) * (1.0 - t) * jd.v_sp) / (jd.j * jd.j);
        Estimate::new(value.clamp(0.0, 1.0), var_settled + wj * wj * var_theta)
    });
    Some(Correction {
        raw,
        settled,
        judged,
        corrected,
    })
}

/// One model's side of a corrected difference: its settled and judged answers.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Side {
    pub settled: Count,
    pub judged: Count,
}

/// The difference a − b of two shares corrected with the same judge: `sampling_var` is the variance of that
/// difference at fixed sensitivity and specificity (a paired, clustered variance of the per-answer corrected
/// values, which [`corrected_value`] gives); the calibration's variance enters once, shared by both sides.
pub fn corrected_difference(
    a: Side,
    b: Side,
    cal: &Calibration,
    sampling_var: f64,
) -> Result<Option<Estimate>, Unstable> {
    let (j, v_se, v_sp) = cal.youden()?;
    let sp = cal.specificity.rate().unwrap_or(0.0);
    let side = |s: Side| -> Option<(f64, f64, f64)> {
        let n = (s.settled.n + s.judged.n) as f64;
        (n > 0.0).then(|| {
            let wj = s.judged.n as f64 / n;
            let theta = s
                .judged
                .rate()
                .map_or(0.0, |p| ((p + sp - 1.0) / j).clamp(0.0, 1.0));
            let value = (s.settled.k as f64 + s.judged.n as f64 * theta) / n;
            (value, wj, theta)
        })
    };
    let (Some((va, wa, ta)), Some((vb, wb, tb))) = (side(a), side(b)) else {
        return Ok(None);
    };
    // ∂θ/∂se = −θ ÷ J and ∂θ/∂sp = (1 − θ) ÷ J, weighted by each side's judged share.
    let d_se = -(wa * ta - wb * tb) / j;
    let d_sp = (wa * (1.0 - ta) - wb * (1.0 - tb)) / j;
    let var = sampling_var + d_se * d_se * v_se + d_sp * d_sp * v_sp;
    let se = var.max(0.0).sqrt();
    let diff = va - vb;
    Ok(Some(Estimate {
        value: diff,
        se,
        low: (diff - Z95 * se).max(-1.0),
        high: (diff + Z95 * se).min(1.0),
    }))
}

/// A ratio Σ num_g ÷ Σ den_g over clusters (prompts) whose sums depend on the judge: `sums(cluster, se, sp)` gives
/// a cluster's (num, den) with the judge's sensitivity and specificity taken as `se` and `sp` (each judged answer
/// counted at its corrected value). The sampling variance is the clustered variance of the ratio at the judge's point
/// estimates, G ÷ (G − 1) × Σ (num_g − r den_g)² ÷ (Σ den)²; the calibration's variance enters through the ratio's
/// derivatives in se and sp (central differences). None when the denominator is not positive; the estimate clipped
/// to [0, 1].
pub fn corrected_ratio<T>(
    clusters: &[T],
    cal: &Calibration,
    sums: impl Fn(&T, f64, f64) -> (f64, f64),
) -> Result<Option<Estimate>, Unstable> {
    let (_, v_se, v_sp) = cal.youden()?;
    let (se, sp) = (
        cal.sensitivity.rate().unwrap_or(0.0),
        cal.specificity.rate().unwrap_or(0.0),
    );
    let ratio = |se: f64, sp: f64| {
        let (n, d) = clusters.iter().fold((0.0, 0.0), |(n, d), c| {
            let (x, y) = sums(c, se, sp);
            (n + x, d + y)
        });
        (d > 0.0).then(|| n / d)
    };
    let Some(r) = ratio(se, sp) else {
        return Ok(None);
    };
    let den: f64 = clusters.iter().map(|c| sums(c, se, sp).1).sum();
    let used: Vec<(f64, f64)> = clusters
        .iter()
        .map(|c| sums(c, se, sp))
        .filter(|(n, d)| *n != 0.0 || *d != 0.0)
        .collect();
    let g = used.len() as f64;
    let sampling = if g > 1.0 {
        let ss: f64 = used.iter().map(|(n, d)| (n - r * d).powi(2)).sum();
        g / (g - 1.0) * ss / (den * den)
    } else {
        0.0
    };
    let h = 1e-6;
    let diff = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) => (a - b) / (2.0 * h),
        _ => 0.0,
    };
    let d_se = diff(ratio(se + h, sp), ratio(se - h, sp));
    let d_sp = diff(ratio(se, sp + h), ratio(se, sp - h));
    let var = sampling + d_se * d_se * v_se + d_sp * d_sp * v_sp;
    Ok(Some(Estimate::new(r.clamp(0.0, 1.0), var)))
}

/// One answer's corrected value at the judge's point estimates: a settled answer is 1 or 0 as it is; a judged one
/// (`correct` as the judge said) becomes (y + sp − 1) ÷ J, so the mean of these values is the corrected share and
/// their clustered, paired variance is the sampling part of [`corrected_difference`]. None when the judge cannot
/// be used.
pub fn corrected_value(correct: bool, llm: bool, cal: &Calibration) -> Result<f64, Unstable> {
    let y = f64::from(u8::from(correct));
    if !llm {
        return Ok(y);
    }
    let (j, _, _) = cal.youden()?;
    let sp = cal.specificity.rate().unwrap_or(0.0);
    Ok((y + sp - 1.0) / j)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cal(se: (u64, u64), sp: (u64, u64)) -> Calibration {
        Calibration {
            sensitivity: Count::new(se.0, se.1),
            specificity: Count::new(sp.0, sp.1),
        }
    }

    #[test]
    fn rogan_gladen_and_its_delta_interval_by_hand() {
        // The example: se 0.95 (95 of 100), sp 0.92 (92 of 100), 428 of 1000 judged correct.
        // θ̂ = (0.428 + 0.92 − 1) ÷ 0.87 = 0.4.
        let c = cal((95, 100), (92, 100));
        let r = correct(Count::default(), Count::new(428, 1000), &c, 1.0).unwrap();
        let e = r.corrected.unwrap();
        assert!((e.value - 0.4).abs() < 1e-12, "{e:?}");
        assert_eq!(r.raw, 0.428);
        // Var p: p̃ = 428.5/1001, var = p̃(1 − p̃)/1000. Var se: p̃ = 95.5/101, ÷ 100. Var sp: p̃ = 92.5/101, ÷ 100.
        let v = |k: f64, n: f64| {
            let p = (k + 0.5) / (n + 1.0);
            p * (1.0 - p) / n
        };
        let (vp, vse, vsp): (f64, f64, f64) = (v(428.0, 1000.0), v(95.0, 100.0), v(92.0, 100.0));
        let var = (vp + 0.16 * vse + 0.36 * vsp) / (0.87 * 0.87);
        assert!((e.se - var.sqrt()).abs() < 1e-12, "{} {}", e.se, var.sqrt());
        assert!((e.low - (0.4 - Z95 * var.sqrt())).abs() < 1e-12);
    }

    #[test]
    fn settled_answers_are_not_corrected() {
        // 300 settled (200 correct) and 100 judged (50 correct); se = sp = 0.9 (45 of 50).
        // θ̂ = (0.5 + 0.9 − 1) ÷ 0.8 = 0.5; overall = (200 + 100 · 0.5) ÷ 400 = 0.625.
        let c = cal((45, 50), (45, 50));
        let r = correct(Count::new(200, 300), Count::new(50, 100), &c, 1.0).unwrap();
        assert!((r.corrected.unwrap().value - 0.625).abs() < 1e-12);
        // A judge of 0.8/0.8 pulls 0.3 judged-correct down to (0.3 + 0.8 − 1) ÷ 0.6 = 1/6.
        let c = cal((40, 50), (40, 50));
        let r = correct(Count::new(200, 300), Count::new(30, 100), &c, 1.0).unwrap();
        let v = r.corrected.unwrap().value;
        assert!((v - (200.0 + 100.0 / 6.0) / 400.0).abs() < 1e-12, "{v}");
        // Nothing judged: the raw share, with its own sampling interval.
        let r = correct(Count::new(3, 4), Count::default(), &c, 1.0).unwrap();
        assert_eq!(r.corrected.unwrap().value, 0.75);
    }

    #[test]
    fn a_weak_or_barely_checked_judge_is_not_corrected() {
        let r = correct(
            Count::new(1, 2),
            Count::new(5, 10),
            &cal((10, 12), (40, 50)),
            1.0,
        )
        .unwrap();
        assert_eq!(
            r.describe(),
            "not corrected: 12 known-correct and 50 known-incorrect control items (needs ≥ 20 of each)"
        );
        // se 0.6, sp 0.6: J = 0.2, its lower bound far below 0.2.
        let r = correct(
            Count::new(1, 2),
            Count::new(5, 10),
            &cal((30, 50), (30, 50)),
            1.0,
        )
        .unwrap();
        assert!(
            matches!(r.corrected, Err(Unstable::Youden { j, low }) if (j - 0.2).abs() < 1e-12 && low < 0.2),
            "{r:?}"
        );
        assert!(
            r.describe()
                .starts_with("not corrected: sensitivity + specificity − 1 = 0.20")
        );
    }

    #[test]
    fn the_interval_is_clipped_to_zero_and_one() {
        // 0 of 100 judged correct with sp 0.9: θ̂ = −0.1 ÷ J < 0, clipped to 0.
        let r = correct(
            Count::default(),
            Count::new(0, 100),
            &cal((45, 50), (45, 50)),
            1.0,
        )
        .unwrap();
        let e = r.corrected.unwrap();
        assert_eq!((e.value, e.low), (0.0, 0.0));
        assert!(e.high > 0.0 && e.high < 0.2, "{e:?}");
    }

    #[test]
    fn a_ratio_of_corrected_sums_matches_the_share_it_generalises() {
        // One cluster per answer: the ratio of corrected values over answer counts is the corrected share, and its
        // calibration terms are those of the delta method above (the sampling term is the plain variance).
        let c = cal((45, 50), (45, 50));
        let answers: Vec<bool> = (0..100).map(|i| i < 60).collect();
        let e = corrected_ratio(&answers, &c, |&y, se, sp| {
            (((f64::from(u8::from(y))) + sp - 1.0) / (se + sp - 1.0), 1.0)
        })
        .unwrap()
        .unwrap();
        assert!((e.value - 0.625).abs() < 1e-9, "{e:?}");
        // Sampling: s² of the values ÷ n with values 0.125/0.8·… : (1/J)² · 0.6·0.4 · 100/99 ÷ 100.
        let sampling = 0.24 / 0.64 * (100.0 / 99.0) / 100.0;
        let v = (45.5 / 51.0) * (5.5 / 51.0) / 50.0;
        let calib = (0.625f64.powi(2) + 0.375f64.powi(2)) * v / 0.64;
        assert!(
            (e.se.powi(2) - (sampling + calib)).abs() < 1e-9,
            "{} {}",
            e.se.powi(2),
            sampling + calib
        );
    }

    #[test]
    fn a_difference_through_one_judge_by_hand() {
        // Both sides all judged, 0.9/0.9 judge: θ_a = (0.6 − 0.1)/0.8 = 0.625, θ_b = (0.5 − 0.1)/0.8 = 0.5.
        let c = cal((45, 50), (45, 50));
        let a = Side {
            settled: Count::default(),
            judged: Count::new(60, 100),
        };
        let b = Side {
            settled: Count::default(),
            judged: Count::new(50, 100),
        };
        let d = corrected_difference(a, b, &c, 0.01).unwrap().unwrap();
        assert!((d.value - 0.125).abs() < 1e-12);
        // ∂/∂se = −(0.625 − 0.5)/0.8, ∂/∂sp = (0.375 − 0.5)/0.8; Var se = Var sp = p̃(1 − p̃)/50, p̃ = 45.5/51.
        let v = (45.5 / 51.0) * (5.5 / 51.0) / 50.0;
        let g = 0.125 / 0.8;
        assert!((d.se.powi(2) - (0.01 + 2.0 * g * g * v)).abs() < 1e-12);
        // The per-answer values average to the corrected share.
        let mean = (60.0 * corrected_value(true, true, &c).unwrap()
            + 40.0 * corrected_value(false, true, &c).unwrap())
            / 100.0;
        assert!((mean - 0.625).abs() < 1e-12);
        assert_eq!(corrected_value(true, false, &c), Ok(1.0));
    }
}
