//! The headline of a comparison, for the comparison section of a multi-model run's report: a few sentences (the
//! settings, the per-N power warning, the linear − jumping gap, the tied sets) and three tables (IFScale overall
//! accuracy per pair, the threshold N per model, RIFT prompt-level accuracy per pair and structure). The per-N
//! tables and every other number stay in the comparison's `compare.md` and `compare.json`.

use super::report::{Report, interval, p_cell, signed};
use crate::rift::values::fmt_p;
use crate::tables::fmt_opt;
use schema::Table;

/// What a report shows of a comparison.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Headline {
    pub notes: Vec<String>,
    pub tables: Vec<Table>,
}

impl Report {
    /// The headline sentences and tables (see the module documentation).
    pub fn headline(&self) -> Headline {
        let o = &self.options;
        let mut notes = vec![format!(
            "Paired comparison of {}: each difference is first − second in percentage points over the items both \
             models hold (IFScale samples of the same N and seed, RIFT prompts), with its {:.0} % percentile bootstrap \
             interval ({} resamples, seed {}), a sign-flip p-value and the minimum detectable difference (MDD) at α = {} \
             and {:.0} % power: a difference that is not significant with an MDD larger than it is not evidence that \
             the models are equal. Definitions: docs/compare.md.",
            self.labels.join(", "),
            (1.0 - o.alpha) * 100.0,
            o.resamples,
            o.seed,
            o.alpha,
            o.power * 100.0
        )];
        let mut tables = Vec::new();
        if !self.ifscale.is_empty() {
            let min_p = self
                .ifscale
                .iter()
                .flat_map(|c| &c.per_n)
                .filter_map(|r| r.metrics.accuracy.min_p)
                .fold(f64::NAN, f64::min);
            if min_p.is_finite() && min_p > o.alpha {
                notes.push(format!(
                    "IFScale: with this many seeds the smallest possible per-N p-value is {}, above α = {}, so no single \
                     N can be significant; the overall test over every (N, seed) sample is the headline.",
                    fmt_p(min_p),
                    o.alpha
                ));
            }
            let rows: Vec<Vec<String>> = self
                .ifscale
                .iter()
                .filter_map(|c| {
                    let all = c.overall.as_ref()?;
                    let acc = &all.metrics.accuracy;
                    Some(vec![
                        c.a.clone(),
                        c.b.clone(),
                        all.samples.to_string(),
                        all.dropped.to_string(),
                        format!("{:.2}", acc.mean_a),
                        format!("{:.2}", acc.mean_b),
                        signed(acc.diff, 2),
                        interval(
                            all.accuracy_ci_seeds.map(|c| c.0),
                            all.accuracy_ci_seeds.map(|c| c.1),
                        ),
                        interval(acc.ci_lower, acc.ci_upper),
                        p_cell(acc.p),
                        p_cell(all.accuracy_p_seeds),
                        fmt_opt(acc.mdd, 2),
                    ])
                })
                .collect();
            tables.push(
                Table::left_aligned(&[
                    "model a",
                    "model b",
                    "samples",
                    "dropped",
                    "accuracy a (%)",
                    "accuracy b (%)",
                    "difference (pp)",
                    "interval, resampling seeds",
                    "interval, resampling samples",
                    "p (samples)",
                    "p (seeds)",
                    "MDD",
                ])
                    .with_caption("IFScale: overall accuracy difference per pair (every paired (N, seed) sample; the sign-flip \
                          p over samples is the headline test; dropped samples failed or are missing for one model)"
                    .to_owned())
                    .with_rows(rows),
            );
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
            tables.push(
                Table::left_aligned(&["model", "seeds", "first N below", "crossing N", "interval"])
                    .with_caption(format!(
                    "IFScale: where each model's mean accuracy first falls below {} % (interpolated crossing, its \
                     interval resampling seeds)",
                    o.level
                ))
                    .with_rows(rows),
            );
        }
        if !self.rift.is_empty() {
            let rows: Vec<Vec<String>> = self
                .rift
                .iter()
                .flat_map(|c| {
                    c.structures.iter().map(move |r| {
                        let d = &r.prompt_level;
                        let answer = r.answer_level.map_or_else(
                            || "–".to_owned(),
                            |a| format!("{} ± {}", signed(a.diff, 2), fmt_opt(a.se_clustered, 2)),
                        );
                        vec![
                            c.a.clone(),
                            c.b.clone(),
                            r.structure.clone(),
                            d.units.to_string(),
                            r.dropped_prompts.to_string(),
                            format!("{:.2}", d.mean_a),
                            format!("{:.2}", d.mean_b),
                            signed(d.diff, 2),
                            interval(d.ci_lower, d.ci_upper),
                            p_cell(d.p),
                            fmt_opt(d.mdd, 2),
                            answer,
                            r.answer_level.map_or_else(
                                || "–".to_owned(),
                                |a| fmt_opt(a.clustering_design_effect, 2),
                            ),
                            r.answer_level
                                .map_or_else(|| "–".to_owned(), |a| fmt_opt(a.pairing_gain, 2)),
                            p_cell(r.mcnemar_clustered.map(|x| x.1)),
                        ]
                    })
                })
                .collect();
            tables.push(
                Table::left_aligned(&[
                    "model a",
                    "model b",
                    "structure",
                    "prompts",
                    "dropped",
                    "accuracy a (%)",
                    "accuracy b (%)",
                    "difference (pp)",
                    "interval",
                    "p",
                    "MDD",
                    "answer level ± clustered SE",
                    "clustering design effect",
                    "pairing gain",
                    "clustered McNemar p",
                ])
                    .with_caption("RIFT: prompt-level accuracy difference per pair and structure (paired over prompts, so \
                          clustered by prompt; dropped prompts are missing, or have every answer unjudged, for one \
                          model), with the answer-level difference, its SE clustered by prompt, the clustering design effect \
                          (clustered ÷ independent variance of the paired difference) and the pairing gain (unpaired ÷ \
                          paired variance, answers independent)"
                    .to_owned())
                    .with_rows(rows),
            );
            for c in &self.rift {
                notes.extend(
                    super::report::rift_notes(c)
                        .into_iter()
                        .map(|n| format!("RIFT {} − {}, {}", c.a, c.b, n.trim())),
                );
                if let Some(d) = &c.delta {
                    notes.push(format!(
                        "RIFT {} − {}: the linear − jumping gap differs by {} pp over {} question sets (interval {}, \
                         p = {}, MDD {}); Δ (relative drop) {} vs {}.",
                        c.a,
                        c.b,
                        signed(d.gap.diff, 2),
                        d.groups,
                        interval(d.gap.ci_lower, d.gap.ci_upper),
                        p_cell(d.gap.p),
                        fmt_opt(d.gap.mdd, 2),
                        fmt_opt(d.delta_a, 2),
                        fmt_opt(d.delta_b, 2),
                    ));
                }
            }
        }
        for t in &self.ties {
            let sets: Vec<String> = t
                .sets
                .iter()
                .map(|s| format!("{{{}}}", s.join(", ")))
                .collect();
            notes.push(format!(
                "Statistically tied on {} (best first; no two models of a set differ at α after Holm's correction): \
                 {}.",
                t.measure,
                sets.join(" ")
            ));
        }
        Headline { notes, tables }
    }
}
