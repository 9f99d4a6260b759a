//! The judge check's records: control items (items whose verdict is known, sent to a judge blind among the real
//! ones), each judge's agreement with them, and the run's `judge-check.json`.
//!
//! A RIFT judge is measured by its *sensitivity* (known-correct controls judged correct) and *specificity*
//! (known-incorrect controls judged incorrect); an IFScale coherence judge the same way, with known-coherent
//! reports that should score at or above the threshold and known-incoherent ones that should score below it; an
//! IFScale refusal judge with known reports (replies that attempt the task, which it should let stand) and known
//! refusals (which it should call refusals), both of the kind the refusal detector cannot settle.
//! A control the judge gave no usable verdict for counts against it. Control items never enter a result: they
//! live in their own files under `<run>/<bench>/judge-check/`.

use serde::{Deserialize, Serialize};

use crate::judge::JudgeRole;
use crate::paths::Bench;

/// What a control item is known to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ControlKind {
    /// RIFT: certainly correct; IFScale: certainly coherent, or (refusal judge) certainly an attempt at the task.
    /// A sound judge accepts it (sensitivity).
    KnownCorrect,
    /// RIFT: certainly incorrect; IFScale: certainly incoherent, or (refusal judge) certainly a refusal. A sound
    /// judge rejects it (specificity).
    KnownIncorrect,
}

/// One RIFT control item: a judge request with a known answer, sent with the same prompt, settings and
/// content-addressed id scheme as a real one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RiftControl {
    /// The judge id (`scoring::rift::judge_id` of question, expected and given), as for a real request.
    pub id: String,
    pub kind: ControlKind,
    /// How it was made (`other_category_answer`, `jeopardy_form`, …; see `scoring::judge_check`).
    pub form: String,
    pub question: String,
    pub expected: String,
    pub given: String,
    /// The dataset row of the question.
    pub row: u64,
    /// The dataset row whose expected answer was borrowed (known-incorrect controls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_row: Option<u64>,
}

/// One IFScale control reply with a known verdict: a report with a known coherence (the coherence judge), or a
/// known report or refusal (the refusal judge).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoherenceControl {
    /// The prompt id of its judge request (`judge-check-coherence-<hash>`, `judge-check-refusal-<hash>`:
    /// content-addressed).
    pub id: String,
    pub kind: ControlKind,
    /// How it was made (`hand_written`, `shuffled_across_reports`, `keyword_run`, `cut_mid_sentence`; the refusal
    /// judge's: `hand_written_report`, `hand_written_refusal`).
    pub form: String,
    /// Where it came from (a dataset line, or the attempts it was made from).
    pub source: String,
    pub report: String,
}

/// A judge's verdict on one control item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ControlVerdict {
    pub id: String,
    pub kind: ControlKind,
    pub form: String,
    /// Whether the judge accepted it (RIFT: CORRECT; IFScale: a score at or above the threshold, or not called a
    /// refusal); `None`: no usable verdict after every try (counted as a disagreement).
    pub accepted: Option<bool>,
    /// The judge's coherence score (IFScale).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<u8>,
}

/// The z of a two-sided 95 % interval (the 97.5 % quantile of the standard normal).
const Z95: f64 = 1.959_963_984_540_054;

/// The Wilson score 95 % interval of `k` successes in `n` trials, as fractions; `None` when `n` is 0. The one
/// implementation: the judge check's agreements and the analysis tables (`analysis::stats`) both use it.
pub fn wilson95(k: u64, n: u64) -> Option<(f64, f64)> {
    if n == 0 {
        return None;
    }
    let (k, n) = (k as f64, n as f64);
    let p = k / n;
    let z2 = Z95 * Z95;
    let denom = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denom;
    let half = Z95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denom;
    Some(((centre - half).max(0.0), (centre + half).min(1.0)))
}

/// Agreement with one kind of control item: `agree` of `total` (unusable replies count in `total`), with a Wilson
/// 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Agreement {
    pub agree: u64,
    pub total: u64,
    /// Of `total`, controls without a usable verdict.
    pub unjudged: u64,
    /// `agree / total` (None when `total` is 0).
    pub rate: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
}

impl Agreement {
    /// `agree/total = 94.0 % (95 % CI 83.8–97.9)`, or `no control items`.
    pub fn describe(&self) -> String {
        match (self.rate, self.ci_low, self.ci_high) {
            (Some(r), Some(lo), Some(hi)) => format!(
                "{}/{} = {:.1} % (95 % CI {:.1}–{:.1})",
                self.agree,
                self.total,
                100.0 * r,
                100.0 * lo,
                100.0 * hi
            ),
            _ => "no control items".to_owned(),
        }
    }
}

/// One judge's check in one benchmark.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeCheck {
    /// The benchmark judged (always `role.bench()`; kept in the file for readers).
    pub bench: Bench,
    /// What the judge does.
    pub role: JudgeRole,
    /// The judge model's name in the models file.
    pub judge: String,
    /// Known-correct (coherent) controls judged correct (coherent).
    pub sensitivity: Agreement,
    /// Known-incorrect (incoherent) controls judged incorrect (incoherent).
    pub specificity: Agreement,
    pub min_sensitivity: f64,
    pub min_specificity: f64,
    /// The run's own items sent to this judge (RIFT judge requests, IFScale judged attempts).
    #[serde(default)]
    pub items: u64,
    /// Of `items`, those whose judge replied every time without a readable verdict: the judge's own failure (its
    /// cached replies read the same on a rerun), unlike a failed request, which makes the run incomplete.
    #[serde(default)]
    pub unreadable: u64,
    /// The largest share of `items` that may be unreadable.
    #[serde(default = "default_max_unreadable_share")]
    pub max_unreadable_share: f64,
    /// Both figures reach their thresholds and the unreadable share stays within its bound.
    pub passed: bool,
    /// A failed judge's verdicts are kept on purpose (`[judge-check] keep-failed-judge`): the run exits 0, the
    /// mark stays.
    pub kept: bool,
    /// Judge requests the check sent or resumed (every try).
    pub requests: usize,
    /// The controls file, relative to the run folder.
    pub controls_file: String,
}

fn default_max_unreadable_share() -> f64 {
    0.02
}

impl JudgeCheck {
    /// The share of the run's items without a readable verdict (0 without items).
    pub fn unreadable_share(&self) -> f64 {
        if self.items == 0 {
            0.0
        } else {
            self.unreadable as f64 / self.items as f64
        }
    }

    /// Whether the unreadable share is above its bound.
    pub fn too_unreadable(&self) -> bool {
        self.unreadable_share() > self.max_unreadable_share
    }

    /// `, and 7 of 40 of the run's items got no readable verdict (17.5 %, allowed ≤ 2 %)` when that share is too
    /// high, else empty.
    fn unreadable_clause(&self) -> String {
        if self.too_unreadable() {
            format!(
                ", and {} of {} of the run's items got no readable verdict ({:.1} %, allowed ≤ {:.0} %)",
                self.unreadable,
                self.items,
                100.0 * self.unreadable_share(),
                100.0 * self.max_unreadable_share
            )
        } else {
            String::new()
        }
    }

    /// One line: the judge, its figures and thresholds.
    pub fn reason(&self) -> String {
        format!(
            "{} `{}` failed its check: sensitivity {} (needs ≥ {:.0} %), specificity {} (needs ≥ {:.0} %){}",
            self.role,
            self.judge,
            self.sensitivity.describe(),
            100.0 * self.min_sensitivity,
            self.specificity.describe(),
            100.0 * self.min_specificity,
            self.unreadable_clause()
        )
    }

    /// The mark every table and figure built from this judge's verdicts carries, when it failed.
    pub fn mark(&self) -> Option<String> {
        (!self.passed).then(|| {
            let kept = if self.kept {
                "; its verdicts were kept on purpose"
            } else {
                ""
            };
            format!(
                "{JUDGE_FAILED_MARK}: {} `{}`, sensitivity {}, specificity {}{}{kept}",
                self.role,
                self.judge,
                self.sensitivity.describe(),
                self.specificity.describe(),
                self.unreadable_clause()
            )
        })
    }
}

/// The words of the mark on every table and figure built from a failed judge's verdicts.
pub const JUDGE_FAILED_MARK: &str = "judge failed its check";

/// `<run>/judge-check.json`: every judge's check of the run.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct JudgeCheckFile {
    pub schema_version: u32,
    pub checks: Vec<JudgeCheck>,
}

impl JudgeCheckFile {
    /// Reads a run's file; `Ok(None)` when it does not exist.
    pub fn read(path: &std::path::Path) -> Result<Option<JudgeCheckFile>, crate::Error> {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(crate::Error::Io {
                    path: path.to_owned(),
                    source: e,
                });
            }
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| crate::Error::Record {
                path: path.to_owned(),
                line: e.line(),
                field: ".".to_owned(),
                message: e.to_string(),
            })
    }

    /// The check of the judge in `role`, if it was checked.
    pub fn of(&self, role: JudgeRole) -> Option<&JudgeCheck> {
        self.checks.iter().find(|c| c.role == role)
    }

    /// Writes it atomically, pretty-printed.
    pub fn write(&self, path: &std::path::Path) -> Result<(), crate::Error> {
        let mut json = serde_json::to_vec_pretty(self).map_err(|e| crate::Error::Serialize {
            path: path.to_owned(),
            source: e,
        })?;
        json.push(b'\n');
        crate::write_atomic(path, &json)
    }

    /// The marks of the failed judges of one benchmark.
    pub fn marks(&self, bench: Bench) -> Vec<String> {
        self.checks
            .iter()
            .filter(|c| c.bench == bench)
            .filter_map(JudgeCheck::mark)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_intervals_match_the_textbook_values() {
        // 47 of 50: 0.94, Wilson 95 % [0.8378, 0.9794].
        let (lo, hi) = wilson95(47, 50).unwrap();
        assert!(
            (lo - 0.8378).abs() < 1e-4 && (hi - 0.9794).abs() < 1e-4,
            "{lo} {hi}"
        );
        let (lo, hi) = wilson95(0, 10).unwrap();
        assert!(lo.abs() < 1e-12 && (hi - 0.2775).abs() < 1e-4, "{lo} {hi}");
        let (lo, hi) = wilson95(10, 10).unwrap();
        assert!(
            (lo - 0.7225).abs() < 1e-4 && (hi - 1.0).abs() < 1e-12,
            "{lo} {hi}"
        );
        assert_eq!(wilson95(0, 0), None);
    }
}
