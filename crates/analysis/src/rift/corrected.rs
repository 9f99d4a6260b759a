//! RIFT answer-level accuracy corrected for the answer judge ([`crate::judge_correction`]): per model × structure,
//! the answers the pre-judge settled (or that are missing) as they are, the answers the LLM judge decided corrected
//! with the sensitivity and specificity its control items measured (`<run>/judge-check.json`), and the delta-method
//! 95 % interval, with the structure's clustered design effect (answers cluster within prompts) applied to the
//! scored answers' variance. Written as `rift_judge_corrected` (Markdown and `.table.json`) and as its rows
//! (`rift_judge_corrected.rows.json`, the report's sentence), only when the run's RIFT judge was checked.

use std::path::{Path, PathBuf};

use polars::prelude::*;
use serde::{Deserialize, Serialize};

use super::StructureStats;
use crate::Error;
use crate::judge_correction::{self, Calibration, Count};
use crate::tables::{i64_col, str_col};

/// The table's name under `tables/rift/`.
pub const NAME: &str = "rift_judge_corrected";

/// One model × structure: raw and corrected answer-level accuracy (fractions).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CorrectedRow {
    pub model: String,
    pub structure: String,
    /// Answers the pre-judge settled, or missing (correct, total).
    pub settled: (u64, u64),
    /// Answers the LLM judge decided (judged correct, total).
    pub judged: (u64, u64),
    pub raw: f64,
    /// The corrected share and its interval; None with `reason` when it is not corrected.
    pub corrected: Option<(f64, f64, f64)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl CorrectedRow {
    /// `38.1 % [33.0, 43.4] vs 42.8 % raw`, or the reason it is not corrected.
    pub fn describe(&self) -> String {
        match (self.corrected, &self.reason) {
            (Some((v, lo, hi)), _) => format!(
                "{:.1} % [{:.1}, {:.1}] vs {:.1} % raw",
                100.0 * v,
                100.0 * lo,
                100.0 * hi,
                100.0 * self.raw
            ),
            (None, reason) => format!(
                "{:.1} % raw, {}",
                100.0 * self.raw,
                reason.as_deref().unwrap_or("not corrected")
            ),
        }
    }
}

/// The judge's check and the corrected rows of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Corrected {
    /// The judge model's name.
    pub judge: String,
    pub calibration: Calibration,
    pub rows: Vec<CorrectedRow>,
}

/// Per (model, structure): settled correct, settled, judged correct, judged (the answer table's `llm_judged` flag).
fn counts(answers: LazyFrame) -> Result<DataFrame, Error> {
    let n = |e: Expr| e.cast(DataType::Int64).sum();
    let llm = col("llm_judged");
    answers
        .group_by([col("group")])
        .agg([
            col("model").first(),
            col("structure").first(),
            n(col("correct").and(llm.clone().not())).alias("settled_correct"),
            n(col("unjudged").not().and(llm.clone().not())).alias("settled"),
            n(col("correct").and(llm.clone())).alias("judged_correct"),
            n(llm).alias("judged"),
        ])
        .collect()
        .map_err(Error::polars("RIFT judge-corrected counts"))
}

/// The corrected rows in Table 2's order; `table2` gives each structure's design effect.
pub fn correct(
    answers: LazyFrame,
    table2: &[StructureStats],
    judge: &str,
    calibration: Calibration,
) -> Result<Corrected, Error> {
    let df = counts(answers)?;
    let (m, s) = (str_col(&df, "model")?, str_col(&df, "structure")?);
    let col = |name: &str| -> Result<Vec<u64>, Error> {
        Ok(i64_col(&df, name)?
            .into_iter()
            .map(|v| u64::try_from(v.unwrap_or_default()).unwrap_or_default())
            .collect())
    };
    let (sc, sn, jc, jn) = (
        col("settled_correct")?,
        col("settled")?,
        col("judged_correct")?,
        col("judged")?,
    );
    let mut rows = Vec::new();
    for t in table2 {
        let Some(i) = (0..df.height()).find(|&i| m[i] == t.model && s[i] == t.structure) else {
            continue;
        };
        let deff = t.answer_design_effect.unwrap_or(1.0).max(1.0);
        let (settled, judged) = (Count::new(sc[i], sn[i]), Count::new(jc[i], jn[i]));
        let Some(c) = judge_correction::correct(settled, judged, &calibration, deff) else {
            continue;
        };
        rows.push(CorrectedRow {
            model: t.model.clone(),
            structure: t.structure.clone(),
            settled: (sc[i], sn[i]),
            judged: (jc[i], jn[i]),
            raw: c.raw,
            corrected: c.corrected.ok().map(|e| (e.value, e.low, e.high)),
            reason: c.corrected.err().map(|u| u.to_string()),
        });
    }
    Ok(Corrected {
        judge: judge.to_owned(),
        calibration,
        rows,
    })
}

fn pct(k: u64, n: u64) -> String {
    Count::new(k, n)
        .rate()
        .map_or_else(|| "–".to_owned(), |r| format!("{:.1}", 100.0 * r))
}

/// Writes the table (Markdown and data) and its rows under `dir`.
pub fn write(c: &Corrected, dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let (se, sp) = (c.calibration.sensitivity, c.calibration.specificity);
    let caption = format!(
        "RIFT answer-level accuracy corrected for the judge `{}` (Rogan–Gladen with its control items: sensitivity \
         {}/{}, specificity {}/{}); only answers the judge decided are corrected, those the pre-judge settled are \
         not; 95 % delta-method interval over the scored answers (clustered by prompt) and the control items, \
         clipped to [0, 100]",
        c.judge, se.k, se.n, sp.k, sp.n
    );
    let rows = c.rows.iter().map(|r| {
        vec![
            r.model.clone(),
            r.structure.clone(),
            r.settled.1.to_string(),
            r.judged.1.to_string(),
            pct(r.judged.0, r.judged.1),
            format!("{:.1}", 100.0 * r.raw),
            match (r.corrected, &r.reason) {
                (Some((v, lo, hi)), _) => {
                    format!("{:.1} [{:.1}, {:.1}]", 100.0 * v, 100.0 * lo, 100.0 * hi)
                }
                (None, reason) => reason.clone().unwrap_or_default(),
            },
        ]
    });
    let table = schema::Table::left_aligned(&[
        "model",
        "structure",
        "settled by the pre-judge",
        "decided by the judge",
        "judge said correct (%)",
        "accuracy, raw (%)",
        "accuracy, judge-corrected (%) [95 % interval]",
    ])
    .with_caption(caption)
    .with_rows(rows);
    let mut written = crate::tables::write_table_markdown(dir, NAME, &table)?;
    let path = dir.join(format!("{NAME}.rows.json"));
    let json = serde_json::to_vec_pretty(c).map_err(|e| Error::Input {
        path: path.clone(),
        message: e.to_string(),
    })?;
    schema::write_atomic(&path, &json)?;
    written.push(path);
    Ok(written)
}

/// The rows [`write`] wrote under `dir`, if any.
pub fn read(dir: &Path) -> Result<Option<Corrected>, Error> {
    let path = dir.join(format!("{NAME}.rows.json"));
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(Error::Input {
                path,
                message: e.to_string(),
            });
        }
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| Error::Input {
            path,
            message: e.to_string(),
        })
}

/// The report's sentence: `Judge-corrected accuracy (judge `j`): m linear 38.1 % [33.0, 43.4] vs 42.8 % raw; …`.
pub fn sentence(c: &Corrected) -> Option<String> {
    let judged: Vec<String> = c
        .rows
        .iter()
        .filter(|r| r.judged.1 > 0)
        .map(|r| format!("{} {} {}", r.model, r.structure, r.describe()))
        .collect();
    (!judged.is_empty()).then(|| {
        format!(
            "Judge-corrected accuracy (answers the judge `{}` decided, corrected with its measured sensitivity and \
             specificity): {}.",
            c.judge,
            judged.join("; ")
        )
    })
}
