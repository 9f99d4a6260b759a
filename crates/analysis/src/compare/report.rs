//! A whole comparison: every pair to compare (each candidate against the baseline, or every pair when there is
//! none), IFScale's threshold N per model, the tied sets when there are more than two models, the regression gate,
//! and the Markdown of it all. What `cargo xtask compare` prints and writes (JSON is this struct serialized).

use std::collections::BTreeMap;

use serde::Serialize;

use super::ifscale::{self, IfscaleComparison, Threshold};
use super::paired::{self, NonInferiority};
use super::rift::{self as rift_cmp, RiftComparison};
use super::{Diff, Options, ties};
use crate::rift::values::fmt_p;
use crate::tables::{fmt_opt, markdown};

/// One side of a comparison: a model of a run, with what it holds of each benchmark.
#[derive(Debug, Clone, Default)]
pub struct Entry {
    pub label: String,
    pub ifscale: Option<ifscale::Samples>,
    pub rift: Option<rift_cmp::Prompts>,
    /// The checked judge of its RIFT answers: two entries with the same one get a judge-corrected difference.
    pub rift_judge: Option<rift_cmp::RiftJudge>,
}

/// A set of statistically tied models for one measure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TiedSets {
    /// e.g. "IFScale accuracy (all samples)", "RIFT jumping prompt-level accuracy".
    pub measure: String,
    /// Models best first with their estimate.
    pub order: Vec<(String, f64)>,
    pub sets: Vec<Vec<String>>,
}

/// One check of the gate: a candidate's difference from the baseline on one measure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GateCheck {
    pub candidate: String,
    pub baseline: String,
    pub measure: String,
    pub diff: f64,
    /// One-sided (1 − α) bootstrap bounds of the difference.
    pub lower: f64,
    pub upper: f64,
    pub verdict: NonInferiority,
}

/// The regression gate: a non-inferiority test of each candidate against the baseline with margin `margin`
/// (percentage points) at level α.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Gate {
    pub margin: f64,
    pub alpha: f64,
    pub checks: Vec<GateCheck>,
    /// Every check non-inferior (and at least one check).
    pub passed: bool,
}

/// Everything one `compare` computes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub options: Options,
    pub labels: Vec<String>,
    pub baseline: Option<String>,
    pub ifscale: Vec<IfscaleComparison>,
    pub thresholds: Vec<Threshold>,
    pub rift: Vec<RiftComparison>,
    pub ties: Vec<TiedSets>,
    pub gate: Option<Gate>,
}

/// Compares `entries`: each against `baseline` (an index into `entries`) when given, else every pair; with a
/// margin, applies the gate (which needs a baseline).
pub fn build(
    entries: &[Entry],
    baseline: Option<usize>,
    margin: Option<f64>,
    opts: &Options,
) -> Report {
    let k = entries.len();
    let shown: Vec<(usize, usize)> = match baseline {
        Some(b) => (0..k).filter(|&i| i != b).map(|i| (i, b)).collect(),
        None => (0..k)
            .flat_map(|i| (i + 1..k).map(move |j| (i, j)))
            .collect(),
    };
    let mut pairs: Vec<(usize, usize)> = shown.clone();
    if k > 2 {
        for i in 0..k {
            for j in i + 1..k {
                if !pairs.contains(&(i, j)) && !pairs.contains(&(j, i)) {
                    pairs.push((i, j));
                }
            }
        }
    }
    let mut ifs: BTreeMap<(usize, usize), IfscaleComparison> = BTreeMap::new();
    let mut rfs: BTreeMap<(usize, usize), RiftComparison> = BTreeMap::new();
    for &(i, j) in &pairs {
        let (a, b) = (&entries[i], &entries[j]);
        if let (Some(x), Some(y)) = (&a.ifscale, &b.ifscale) {
            ifs.insert((i, j), ifscale::compare(&a.label, x, &b.label, y, opts));
        }
        if let (Some(x), Some(y)) = (&a.rift, &b.rift) {
            let judge = a
                .rift_judge
                .as_ref()
                .filter(|j| Some(*j) == b.rift_judge.as_ref());
            rfs.insert(
                (i, j),
                rift_cmp::compare(&a.label, x, &b.label, y, judge, opts),
            );
        }
    }
    let thresholds = entries
        .iter()
        .filter_map(|e| {
            e.ifscale
                .as_ref()
                .map(|s| ifscale::threshold(&e.label, s, opts))
        })
        .collect();
    let ties = if k > 2 {
        tied(entries, &ifs, &rfs, opts)
    } else {
        Vec::new()
    };
    let gate = match (margin, baseline) {
        (Some(m), Some(b)) => Some(gate(entries, b, m, &shown, &ifs, &rfs, opts)),
        _ => None,
    };
    Report {
        options: *opts,
        labels: entries.iter().map(|e| e.label.clone()).collect(),
        baseline: baseline.map(|b| entries[b].label.clone()),
        ifscale: shown.iter().filter_map(|p| ifs.get(p).cloned()).collect(),
        thresholds,
        rift: shown.iter().filter_map(|p| rfs.get(p).cloned()).collect(),
        ties,
        gate,
    }
}

/// A measure's tied sets from the pairs' p-values (Holm-adjusted over the pairs).
fn tied_for(
    measure: String,
    means: Vec<Option<f64>>,
    labels: &[String],
    pair_p: &BTreeMap<(usize, usize), f64>,
    alpha: f64,
) -> Option<TiedSets> {
    let mut order: Vec<usize> = (0..labels.len()).filter(|&i| means[i].is_some()).collect();
    if order.len() < 3 {
        return None;
    }
    order.sort_by(|&x, &y| {
        means[y]
            .unwrap_or_default()
            .total_cmp(&means[x].unwrap_or_default())
    });
    let keys: Vec<(usize, usize)> = pair_p.keys().copied().collect();
    let adjusted = paired::holm(&keys.iter().map(|k| pair_p[k]).collect::<Vec<_>>());
    let adj: BTreeMap<(usize, usize), f64> = keys.into_iter().zip(adjusted).collect();
    let differs = |i: usize, j: usize| {
        adj.get(&(i, j))
            .or_else(|| adj.get(&(j, i)))
            .is_some_and(|p| *p < alpha)
    };
    let sets = ties::tied_sets(&order, differs);
    Some(TiedSets {
        measure,
        order: order
            .iter()
            .map(|&i| (labels[i].clone(), means[i].unwrap_or_default()))
            .collect(),
        sets: sets
            .into_iter()
            .map(|s| s.into_iter().map(|i| labels[i].clone()).collect())
            .collect(),
    })
}

fn tied(
    entries: &[Entry],
    ifs: &BTreeMap<(usize, usize), IfscaleComparison>,
    rfs: &BTreeMap<(usize, usize), RiftComparison>,
    opts: &Options,
) -> Vec<TiedSets> {
    let labels: Vec<String> = entries.iter().map(|e| e.label.clone()).collect();
    let mut out = Vec::new();
    let means: Vec<Option<f64>> = entries
        .iter()
        .map(|e| {
            let s = e.ifscale.as_ref()?;
            let v: Vec<f64> = s.values().flatten().map(|r| r.accuracy).collect();
            crate::stats::mean(&v)
        })
        .collect();
    let p: BTreeMap<(usize, usize), f64> = ifs
        .iter()
        .filter_map(|(k, c)| Some((*k, c.overall.as_ref()?.metrics.accuracy.p?)))
        .collect();
    out.extend(tied_for(
        "IFScale accuracy (all samples)".to_owned(),
        means,
        &labels,
        &p,
        opts.alpha,
    ));
    for structure in ["baseline", "linear", "jumping"] {
        let means: Vec<Option<f64>> = entries
            .iter()
            .map(|e| {
                let v: Vec<f64> = e
                    .rift
                    .as_ref()?
                    .values()
                    .filter(|p| p.structure == structure)
                    .filter_map(rift_cmp::PromptAnswers::accuracy)
                    .collect();
                crate::stats::mean(&v)
            })
            .collect();
        let p: BTreeMap<(usize, usize), f64> = rfs
            .iter()
            .filter_map(|(k, c)| {
                let row = c.structures.iter().find(|r| r.structure == structure)?;
                Some((*k, row.prompt_level.p?))
            })
            .collect();
        out.extend(tied_for(
            format!("RIFT {structure} prompt-level accuracy"),
            means,
            &labels,
            &p,
            opts.alpha,
        ));
    }
    out
}

fn check(
    candidate: &str,
    baseline: &str,
    measure: String,
    d: &Diff,
    margin: f64,
) -> Option<GateCheck> {
    let (lower, upper) = (d.one_sided_lower?, d.one_sided_upper?);
    Some(GateCheck {
        candidate: candidate.to_owned(),
        baseline: baseline.to_owned(),
        measure,
        diff: d.diff,
        lower,
        upper,
        verdict: NonInferiority::decide(lower, upper, margin),
    })
}

fn gate(
    entries: &[Entry],
    b: usize,
    margin: f64,
    shown: &[(usize, usize)],
    ifs: &BTreeMap<(usize, usize), IfscaleComparison>,
    rfs: &BTreeMap<(usize, usize), RiftComparison>,
    opts: &Options,
) -> Gate {
    let mut checks = Vec::new();
    for &(i, _) in shown {
        let (c, base) = (&entries[i].label, &entries[b].label);
        if let Some(o) = ifs.get(&(i, b)).and_then(|x| x.overall.as_ref()) {
            checks.extend(check(
                c,
                base,
                "IFScale accuracy".to_owned(),
                &o.metrics.accuracy,
                margin,
            ));
        }
        if let Some(r) = rfs.get(&(i, b)) {
            for row in &r.structures {
                checks.extend(check(
                    c,
                    base,
                    format!("RIFT {} prompt-level accuracy", row.structure),
                    &row.prompt_level,
                    margin,
                ));
            }
        }
    }
    let passed = !checks.is_empty() && checks.iter().all(|c| c.verdict.passes());
    Gate {
        margin,
        alpha: opts.alpha,
        checks,
        passed,
    }
}

pub(super) fn signed(v: f64, digits: usize) -> String {
    if v.is_finite() {
        // A value that rounds to zero is shown as +0, never −0.
        let v = if v.abs() < 0.5 * 10f64.powi(-(digits as i32)) {
            0.0
        } else {
            v
        };
        format!("{v:+.digits$}")
    } else {
        "–".to_owned()
    }
}

pub(super) fn interval(lo: Option<f64>, hi: Option<f64>) -> String {
    match (lo, hi) {
        (Some(l), Some(h)) => format!("[{}, {}]", signed(l, 2), signed(h, 2)),
        _ => "–".to_owned(),
    }
}

pub(super) fn p_cell(p: Option<f64>) -> String {
    p.map_or_else(|| "–".to_owned(), fmt_p)
}

impl Report {
    /// The whole comparison as Markdown: settings, the gate, IFScale, thresholds, RIFT and tied sets.
    pub fn markdown(&self) -> String {
        let o = &self.options;
        let level = (1.0 - o.alpha) * 100.0;
        let mut out = format!(
            "# Paired comparison\n\nModels: {}{}. Differences are first − second, in percentage points. α = {}, \
             intervals {level:.0} % (percentile bootstrap, {} resamples, seed {}), minimum detectable difference \
             (MDD) at {:.0} % power.\n\n",
            self.labels.join(", "),
            self.baseline
                .as_ref()
                .map(|b| format!("; baseline {b}"))
                .unwrap_or_default(),
            o.alpha,
            o.resamples,
            o.seed,
            o.power * 100.0,
        );
        if let Some(g) = &self.gate {
            out.push_str(&format!(
                "## Regression gate: {}\n\nNon-inferiority with margin {} pp at α = {}: a candidate passes a measure \
                 when the one-sided {level:.0} % lower bound of its difference from the baseline is above −{}.\n\n",
                if g.passed { "passed" } else { "FAILED" },
                g.margin,
                g.alpha,
                g.margin
            ));
            let rows: Vec<Vec<String>> = g
                .checks
                .iter()
                .map(|c| {
                    vec![
                        c.candidate.clone(),
                        c.baseline.clone(),
                        c.measure.clone(),
                        signed(c.diff, 2),
                        signed(c.lower, 2),
                        c.verdict.as_str().to_owned(),
                    ]
                })
                .collect();
            out.push_str(&markdown(
                "",
                &[
                    "candidate",
                    "baseline",
                    "measure",
                    "difference",
                    "lower bound",
                    "verdict",
                ],
                &rows,
            ));
            out.push('\n');
        }
        for c in &self.ifscale {
            out.push_str(&ifscale_markdown(c, o));
        }
        if !self.thresholds.is_empty() {
            let rows: Vec<Vec<String>> = self
                .thresholds
                .iter()
                .map(|t| {
                    let beyond = t.max_n.map(|n| format!("> {n}")).unwrap_or_default();
                    let bound =
                        |b: Option<f64>| b.map_or_else(|| beyond.clone(), |v| format!("{v:.1}"));
                    vec![
                        t.model.clone(),
                        t.seeds.to_string(),
                        t.first_below
                            .map_or_else(|| beyond.clone(), |n| n.to_string()),
                        bound(t.crossing),
                        format!("[{}, {}]", bound(t.ci_lower), bound(t.ci_upper)),
                    ]
                })
                .collect();
            out.push_str(&markdown(
                &format!(
                    "## IFScale: where accuracy first falls below {} %\n\nThe crossing interpolates linearly between \
                     the last N at or above the level and the first below it; its interval resamples seeds.",
                    o.level
                ),
                &["model", "seeds", "first N below", "crossing N", "interval"],
                &rows,
            ));
            out.push('\n');
        }
        for c in &self.rift {
            out.push_str(&rift_markdown(c, o));
        }
        if !self.ties.is_empty() {
            out.push_str(
                "## Statistically tied models\n\nModels best first; a set lists consecutive models of which no two \
                 differ at α after Holm's correction over every pair (sets may overlap).\n\n",
            );
            for t in &self.ties {
                let sets: Vec<String> = t
                    .sets
                    .iter()
                    .map(|s| format!("{{{}}}", s.join(", ")))
                    .collect();
                out.push_str(&format!(
                    "- {}: {} — tied: {}\n",
                    t.measure,
                    t.order
                        .iter()
                        .map(|(m, v)| format!("{m} {v:.2}"))
                        .collect::<Vec<_>>()
                        .join(" > "),
                    sets.join(" ")
                ));
            }
            out.push('\n');
        }
        out
    }
}

fn ifscale_markdown(c: &IfscaleComparison, o: &Options) -> String {
    let mut out = format!("## IFScale: {} − {}\n\n", c.a, c.b);
    if let Some(all) = &c.overall {
        let acc = &all.metrics.accuracy;
        out.push_str(&format!(
            "Overall accuracy difference {} pp over {} samples ({} seeds; {} dropped): interval {} resampling seeds, \
             {} resampling samples; sign-flip p = {} over samples (the headline test), {} over seeds (smallest \
             possible {}); MDD {}.\n\n",
            signed(acc.diff, 2),
            all.samples,
            all.seeds,
            all.dropped,
            interval(all.accuracy_ci_seeds.map(|c| c.0), all.accuracy_ci_seeds.map(|c| c.1)),
            interval(acc.ci_lower, acc.ci_upper),
            p_cell(acc.p),
            p_cell(all.accuracy_p_seeds),
            p_cell(all.accuracy_min_p_seeds),
            fmt_opt(acc.mdd, 2),
        ));
    }
    let min_p = c
        .per_n
        .iter()
        .filter_map(|r| r.metrics.accuracy.min_p)
        .fold(f64::NAN, f64::min);
    if min_p.is_finite() && min_p > o.alpha {
        out.push_str(&format!(
            "With this many seeds the smallest possible per-N p-value is {}, above α = {}: no single N can be \
             significant, so read the overall test.\n\n",
            fmt_p(min_p),
            o.alpha
        ));
    }
    let rows: Vec<Vec<String>> = c
        .per_n
        .iter()
        .map(|r| {
            let (a, om, md) = (
                &r.metrics.accuracy,
                &r.metrics.omission,
                &r.metrics.modification,
            );
            vec![
                r.n.to_string(),
                r.seeds.to_string(),
                format!("{:.2}", a.mean_a),
                format!("{:.2}", a.mean_b),
                signed(a.diff, 2),
                interval(a.ci_lower, a.ci_upper),
                p_cell(a.p),
                p_cell(a.p_holm),
                fmt_opt(a.mdd, 2),
                format!(
                    "{} {}",
                    signed(om.diff, 2),
                    interval(om.ci_lower, om.ci_upper)
                ),
                format!(
                    "{} {}",
                    signed(md.diff, 2),
                    interval(md.ci_lower, md.ci_upper)
                ),
            ]
        })
        .collect();
    out.push_str(&markdown(
        "",
        &[
            "N",
            "seeds",
            "accuracy a",
            "accuracy b",
            "difference",
            "interval",
            "p",
            "p (Holm)",
            "MDD",
            "omission rate diff.",
            "modification rate diff.",
        ],
        &rows,
    ));
    out.push('\n');
    out
}

/// Per structure, the prompt-level difference over each model's own settled answers where it differs from the common
/// set, and the judge-corrected answer-level difference: one line each.
pub(crate) fn rift_notes(c: &RiftComparison) -> Vec<String> {
    let mut notes = Vec::new();
    for r in &c.structures {
        if let Some(own) = &r.prompt_level_own {
            notes.push(format!(
                "\n{}: over each model's own settled answers (as the tables count them) the prompt-level difference \
                 is {} pp {} instead of {} pp: {} answers are unjudged for one model only, so the two models' \
                 accuracies would be taken over different questions; the table uses the questions settled for both.\n",
                r.structure,
                signed(own.diff, 2),
                interval(own.ci_lower, own.ci_upper),
                signed(r.prompt_level.diff, 2),
                r.one_sided_unjudged,
            ));
        }
        if let Some(j) = &r.judge_corrected {
            notes.push(format!(
                "\n{}: answer-level difference corrected for the judge `{}` both models share: {}.\n",
                r.structure,
                j.judge,
                j.describe()
            ));
        }
    }
    notes
}

fn rift_markdown(c: &RiftComparison, _o: &Options) -> String {
    let mut out = format!(
        "## RIFT: {} − {}\n\nPrompt-level accuracy is paired over prompts (the unit, so clustered by prompt); the \
         answer level pairs settled answers to the same question, with its SE clustered by prompt, the clustering \
         design effect (the paired difference's clustered variance ÷ its variance with the paired answers independent) \
         and the pairing gain (the variance of two independent, unpaired shares' difference ÷ the paired difference's, \
         answers independent); McNemar's test on those answers ignores the clustering, its clustered \
         form does not.\n\n",
        c.a, c.b
    );
    let rows: Vec<Vec<String>> = c
        .structures
        .iter()
        .map(|r| {
            let d = &r.prompt_level;
            let (al, se, deff, gain) = r.answer_level.map_or_else(
                || {
                    let dash = || "–".to_owned();
                    (dash(), dash(), dash(), dash())
                },
                |a| {
                    (
                        signed(a.diff, 2),
                        fmt_opt(a.se_clustered, 2),
                        fmt_opt(a.clustering_design_effect, 2),
                        fmt_opt(a.pairing_gain, 2),
                    )
                },
            );
            vec![
                r.structure.clone(),
                format!("{} ({} dropped)", d.units, r.dropped_prompts),
                format!("{:.2}", d.mean_a),
                format!("{:.2}", d.mean_b),
                signed(d.diff, 2),
                interval(d.ci_lower, d.ci_upper),
                p_cell(d.p),
                fmt_opt(d.mdd, 2),
                format!("{al} ± {se}"),
                deff,
                gain,
                format!("{}/{} p = {}", r.mcnemar.b, r.mcnemar.c, fmt_p(r.mcnemar.p)),
                p_cell(r.mcnemar_clustered.map(|x| x.1)),
            ]
        })
        .collect();
    out.push_str(&markdown(
        "",
        &[
            "structure",
            "prompts",
            "accuracy a",
            "accuracy b",
            "difference",
            "interval",
            "p",
            "MDD",
            "answer level ± clustered SE",
            "clustering design effect",
            "pairing gain",
            "McNemar b/c",
            "clustered McNemar p",
        ],
        &rows,
    ));
    out.push_str(&rift_notes(c).join(""));
    if let Some(d) = &c.delta {
        out.push_str(&format!(
            "\nLinear − jumping gap: {} pp minus {} pp = {} pp over {} question sets, interval {}, p = {}, MDD {}. \
             Δ (relative drop): {} vs {}, difference {} {}.\n",
            signed(d.gap.mean_a, 2),
            signed(d.gap.mean_b, 2),
            signed(d.gap.diff, 2),
            d.groups,
            interval(d.gap.ci_lower, d.gap.ci_upper),
            p_cell(d.gap.p),
            fmt_opt(d.gap.mdd, 2),
            fmt_opt(d.delta_a, 2),
            fmt_opt(d.delta_b, 2),
            d.delta_diff.map_or_else(|| "–".to_owned(), |v| signed(v, 2)),
            interval(d.delta_ci.map(|c| c.0), d.delta_ci.map(|c| c.1)),
        ));
    }
    out.push('\n');
    out
}
