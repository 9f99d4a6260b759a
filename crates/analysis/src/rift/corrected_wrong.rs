//! The wrong-question share (flagged incorrect answers ÷ incorrect answers) corrected for the answer judge: among
//! the answers the LLM judge decided, each counts as incorrect at its corrected value 1 − (y + sp − 1) ÷ J, so both
//! the numerator (flagged answers judged incorrect) and the denominator move; answers the pre-judge settled count
//! as they are. The share is a ratio of per-prompt sums (`judge_correction::corrected_ratio`): its interval is
//! clustered by prompt and carries the control items' uncertainty. Written as `rift_wrong_question_judge_corrected`
//! beside the accuracy table of [`super::corrected`].

use std::path::{Path, PathBuf};

use polars::prelude::*;

use crate::Error;
use crate::judge_correction::{self, Calibration};
use crate::tables::{f64_col, str_col};

/// The table's name under `tables/rift/`.
pub const NAME: &str = "rift_wrong_question_judge_corrected";

/// One prompt's counts: flagged settled incorrect, flagged judged, of those judged correct; the same unflagged.
#[derive(Debug, Clone, Copy, Default)]
struct PromptCounts {
    fs: f64,
    fjn: f64,
    fjc: f64,
    ns: f64,
    njn: f64,
    njc: f64,
}

impl PromptCounts {
    /// (flagged incorrect, incorrect) with judged answers at their corrected values for sensitivity `se` and
    /// specificity `sp`.
    fn sums(&self, se: f64, sp: f64) -> (f64, f64) {
        let j = se + sp - 1.0;
        let inc = |n: f64, c: f64| n - (c + n * (sp - 1.0)) / j;
        let flagged = self.fs + inc(self.fjn, self.fjc);
        (flagged, flagged + self.ns + inc(self.njn, self.njc))
    }
}

/// One model × structure.
#[derive(Debug, Clone, PartialEq)]
pub struct WrongRow {
    pub model: String,
    pub structure: String,
    /// Incorrect answers the judge decided, of all incorrect answers.
    pub judged_incorrect: u64,
    pub incorrect: u64,
    pub raw: Option<f64>,
    /// The corrected share and its interval (fractions), or why there is none.
    pub corrected: Result<Option<judge_correction::Estimate>, judge_correction::Unstable>,
}

/// The corrected wrong-question share per model × structure, in model then structure order.
pub fn correct(answers: LazyFrame, cal: &Calibration) -> Result<Vec<WrongRow>, Error> {
    let flagged = col("wrong_question").or(col("wrong_question_correct"));
    let llm = col("llm_judged");
    let s = |e: Expr, name: &str| e.cast(DataType::Float64).sum().alias(name);
    let df = answers
        .group_by([col("group"), col("prompt")])
        .agg([
            col("model").first(),
            col("structure").first(),
            s(
                flagged.clone().and(col("incorrect")).and(llm.clone().not()),
                "fs",
            ),
            s(flagged.clone().and(llm.clone()), "fjn"),
            s(flagged.clone().and(llm.clone()).and(col("correct")), "fjc"),
            s(
                flagged
                    .clone()
                    .not()
                    .and(col("incorrect"))
                    .and(llm.clone().not()),
                "ns",
            ),
            s(flagged.clone().not().and(llm.clone()), "njn"),
            s(flagged.not().and(llm).and(col("correct")), "njc"),
        ])
        .collect()
        .map_err(Error::polars("RIFT judge-corrected wrong-question counts"))?;
    let (m, st) = (str_col(&df, "model")?, str_col(&df, "structure")?);
    let c = |name: &str| -> Result<Vec<f64>, Error> {
        Ok(f64_col(&df, name)?
            .into_iter()
            .map(|v| v.unwrap_or(0.0))
            .collect())
    };
    let (fs, fjn, fjc, ns, njn, njc) = (
        c("fs")?,
        c("fjn")?,
        c("fjc")?,
        c("ns")?,
        c("njn")?,
        c("njc")?,
    );
    let mut groups: std::collections::BTreeMap<(String, usize, String), Vec<PromptCounts>> =
        std::collections::BTreeMap::new();
    for i in 0..df.height() {
        let rank = super::STRUCTURES
            .iter()
            .position(|x| *x == st[i])
            .unwrap_or(super::STRUCTURES.len());
        groups
            .entry((m[i].clone(), rank, st[i].clone()))
            .or_default()
            .push(PromptCounts {
                fs: fs[i],
                fjn: fjn[i],
                fjc: fjc[i],
                ns: ns[i],
                njn: njn[i],
                njc: njc[i],
            });
    }
    Ok(groups
        .into_iter()
        .map(|((model, _, structure), prompts)| {
            let total = |f: fn(&PromptCounts) -> f64| prompts.iter().map(f).sum::<f64>();
            let judged_incorrect = total(|p| p.fjn - p.fjc + p.njn - p.njc);
            let incorrect = total(|p| p.fs + p.ns) + judged_incorrect;
            let flagged = total(|p| p.fs + p.fjn - p.fjc);
            let corrected = if total(|p| p.fjn + p.njn) > 0.0 {
                judge_correction::corrected_ratio(&prompts, cal, |p, se, sp| p.sums(se, sp))
            } else {
                Ok(None)
            };
            WrongRow {
                model,
                structure,
                judged_incorrect: judged_incorrect as u64,
                incorrect: incorrect as u64,
                raw: (incorrect > 0.0).then(|| flagged / incorrect),
                corrected,
            }
        })
        .collect())
}

/// Writes the table (Markdown and data) under `dir`.
pub fn write(
    rows: &[WrongRow],
    judge: &str,
    cal: &Calibration,
    dir: &Path,
) -> Result<Vec<PathBuf>, Error> {
    let pct = |v: Option<f64>| v.map_or_else(|| "–".to_owned(), |v| format!("{:.1}", 100.0 * v));
    let md: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.model.clone(),
                r.structure.clone(),
                r.incorrect.to_string(),
                r.judged_incorrect.to_string(),
                pct(r.raw),
                match &r.corrected {
                    Ok(Some(e)) => format!(
                        "{:.1} [{:.1}, {:.1}]",
                        100.0 * e.value,
                        100.0 * e.low,
                        100.0 * e.high
                    ),
                    Ok(None) => "– (nothing the judge decided)".to_owned(),
                    Err(u) => u.to_string(),
                },
            ]
        })
        .collect();
    let (se, sp) = (cal.sensitivity, cal.specificity);
    let caption = format!(
        "RIFT wrong-question share of incorrect answers corrected for the judge `{judge}` (sensitivity {}/{}, \
         specificity {}/{}): answers the judge decided count as incorrect at their corrected value, those the \
         pre-judge settled as they are; 95 % delta-method interval clustered by prompt, with the control items' \
         uncertainty, clipped to [0, 100]",
        se.k, se.n, sp.k, sp.n
    );
    crate::tables::write_markdown(
        dir,
        NAME,
        &caption,
        &[
            "model",
            "structure",
            "incorrect answers",
            "of them decided by the judge",
            "wrong-question share, raw (%)",
            "judge-corrected (%) [95 % interval]",
        ],
        &md,
    )
}
