//! RIFT by clue value, the paper's difficulty control ("We utilize the show's monetary-value heuristic to control
//! for question difficulty"): accuracy per model × structure × value band, and a check that linear and jumping
//! prompts hold the same mix of values (shares per band and Pearson's chi-square test of homogeneity).
//!
//! Bands are fixed ranges of the normalised value (`value_normalized`: jeopardy-prep doubles values aired before
//! 2001-11-26, so every clue is on today's board of $200–$1000 in Jeopardy! and $400–$2000 in Double Jeopardy!),
//! five bands over the paper's $200–$2000 range, [`VALUE_BANDS`]. They are value bands rather than board rows
//! because the answer carries its value but not its round, and the same amount is row 2 of one round and row 1 of
//! the other; the paper's heuristic is the amount. They are fixed rather than quantile bands so that two runs (and
//! two datasets) are cut alike. Daily Double wagers land in whichever band their amount falls. A question without a
//! value (Final Jeopardy!, or a dataset without values) is a band of its own, "no value", never dropped.
//!
//! Read in one streaming pass over the answer table (a hash group-by on one `u64` key: group × band), beside the
//! passes of [`super::aggregate_answers`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use polars::prelude::*;
use serde::Serialize;

use super::{STRUCTURES, fmt_bounds};
use crate::tables::{self, fmt_opt};
use crate::{Error, stats};

/// The value bands in table order: upper bounds (inclusive) of the first four, then everything above, then none.
pub const VALUE_BANDS: [&str; 6] = [
    "up to $400",
    "$401–$800",
    "$801–$1,200",
    "$1,201–$1,600",
    "over $1,600",
    "no value",
];

/// Inclusive upper bounds of the first four bands (dollars, normalised).
const BAND_UPPER: [i64; 4] = [400, 800, 1200, 1600];

/// The index in [`VALUE_BANDS`] of a normalised value.
pub fn band_of(value: Option<u32>) -> usize {
    match value {
        None => VALUE_BANDS.len() - 1,
        Some(v) => BAND_UPPER
            .iter()
            .position(|&upper| i64::from(v) <= upper)
            .unwrap_or(BAND_UPPER.len()),
    }
}

/// What the bands are, for captions and docs.
pub const BANDS_NOTE: &str = "Bands of the normalised clue value (values aired before 2001-11-26 doubled, so every clue is on today's $200–$2000 board), five fixed bands over the paper's $200–$2000 range: up to $400 ($200, $400), $401–$800 ($600, $800), $801–$1,200 ($1,000, $1,200), $1,201–$1,600 ($1,600), over $1,600 ($2,000); value bands rather than board rows because an answer carries its value but not its round, and fixed rather than quantile bands so that runs are cut alike. Daily Double wagers fall where their amount does; \"no value\" holds the questions without one (Final Jeopardy!, or a dataset without values).";

/// Accuracy of one model × structure × value band, over its answers (pooled over prompts).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BandAccuracy {
    pub model: String,
    pub structure: String,
    pub band: String,
    /// Expected answers of the band (missing answers count as wrong).
    pub answers: i64,
    pub correct: i64,
    pub incorrect: i64,
    pub unjudged: i64,
    /// correct ÷ (answers − unjudged) × 100; None when nothing was judged.
    pub accuracy: Option<f64>,
    /// correct ÷ answers × 100 (every unjudged answer wrong).
    pub accuracy_lower: Option<f64>,
    /// (correct + unjudged) ÷ answers × 100 (every unjudged answer right).
    pub accuracy_upper: Option<f64>,
    /// Wilson 95 % interval of the judged accuracy, in percent.
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
}

/// One model × structure × band of the value mix: questions asked and their share of the structure's questions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ValueShare {
    pub model: String,
    pub structure: String,
    pub band: String,
    pub questions: i64,
    /// Percent of the model × structure's questions.
    pub share: Option<f64>,
}

/// Whether one model's linear and jumping prompts hold the same mix of value bands: Pearson's chi-square test of
/// homogeneity over the bands either structure uses ("no value" included).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MixTest {
    pub model: String,
    pub linear_questions: i64,
    pub jumping_questions: i64,
    pub chi_square: Option<f64>,
    pub df: Option<u32>,
    /// None when either structure has no questions.
    pub p_value: Option<f64>,
}

/// Everything by value band.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ValueTables {
    pub accuracy: Vec<BandAccuracy>,
    pub mix: Vec<ValueShare>,
    pub mix_test: Vec<MixTest>,
}

/// Bands per group in the combined group × band key.
const BAND_SPAN: u64 = 8;

/// The band code of `value_normalized` (an index into [`VALUE_BANDS`]).
fn band_code() -> Expr {
    let v = col("value_normalized").cast(DataType::Int64);
    // Built from the last band inwards: each step wraps the rest in one when/then/otherwise.
    let mut e = lit(BAND_UPPER.len() as u64);
    for (i, upper) in BAND_UPPER.iter().enumerate().rev() {
        e = when(v.clone().lt_eq(lit(*upper)))
            .then(lit(i as u64))
            .otherwise(e);
    }
    when(v.is_null())
        .then(lit(VALUE_BANDS.len() as u64 - 1))
        .otherwise(e)
}

/// Counts per (model, structure) and band index: answers, correct, incorrect, unjudged.
type Counts = BTreeMap<(String, String), [[i64; 4]; VALUE_BANDS.len()]>;

/// Sums per group × band in one streaming pass, labelled with each group's model and structure (`groups`: `group`,
/// `model`, `structure`).
fn band_counts(answers: LazyFrame, groups: &DataFrame) -> Result<Counts, Error> {
    let ctx = "RIFT sums by value band";
    let flag = |f: &str| col(f).sum().cast(DataType::Int64).alias(f);
    let sums = answers
        .group_by([
            (col("group").cast(DataType::UInt64) * lit(BAND_SPAN) + band_code()).alias("key"),
        ])
        .agg([
            len().cast(DataType::Int64).alias("n"),
            flag("correct"),
            flag("incorrect"),
            flag("unjudged"),
        ])
        .collect_with_engine(Engine::Streaming)
        .map(|r| r.unwrap_single())
        .map_err(Error::polars(ctx))?;
    let labels: BTreeMap<u32, (String, String)> = {
        let g = groups
            .column("group")
            .and_then(|c| c.cast(&DataType::UInt32))
            .map_err(Error::polars(ctx))?;
        let g = g.u32().map_err(Error::polars(ctx))?;
        let (m, s) = (
            tables::str_col(groups, "model")?,
            tables::str_col(groups, "structure")?,
        );
        g.iter()
            .zip(m.into_iter().zip(s))
            .filter_map(|(g, l)| Some((g?, l)))
            .collect()
    };
    let key = sums
        .column("key")
        .and_then(|c| c.cast(&DataType::UInt64))
        .map_err(Error::polars(ctx))?;
    let key = key.u64().map_err(Error::polars(ctx))?;
    let cols = ["n", "correct", "incorrect", "unjudged"]
        .map(|c| tables::i64_col(&sums, c))
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    let mut counts = Counts::new();
    for (i, k) in key.iter().enumerate() {
        let Some(k) = k else { continue };
        let Some(label) = labels.get(&((k / BAND_SPAN) as u32)) else {
            continue;
        };
        let band = (k % BAND_SPAN) as usize;
        let cell = &mut counts.entry(label.clone()).or_default()[band];
        for (slot, c) in cell.iter_mut().zip(&cols) {
            *slot += c[i].unwrap_or_default();
        }
    }
    Ok(counts)
}

fn pct(num: i64, den: i64) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64 * 100.0)
}

/// The value tables of an answer table that has a `value_normalized` column; `groups` labels its group codes.
pub fn value_tables(answers: LazyFrame, groups: &DataFrame) -> Result<ValueTables, Error> {
    Ok(from_counts(&band_counts(answers, groups)?))
}

fn structure_rank(s: &str) -> usize {
    STRUCTURES
        .iter()
        .position(|x| *x == s)
        .unwrap_or(STRUCTURES.len())
}

fn from_counts(counts: &Counts) -> ValueTables {
    let mut keys: Vec<&(String, String)> = counts.keys().collect();
    keys.sort_by_key(|(m, s)| (m.clone(), structure_rank(s), s.clone()));
    let mut out = ValueTables::default();
    for key @ (model, structure) in keys {
        let bands = &counts[key];
        let total: i64 = bands.iter().map(|b| b[0]).sum();
        for (band, &[n, correct, incorrect, unjudged]) in VALUE_BANDS.iter().zip(bands) {
            out.mix.push(ValueShare {
                model: model.clone(),
                structure: structure.clone(),
                band: (*band).to_owned(),
                questions: n,
                share: pct(n, total),
            });
            if n == 0 {
                continue;
            }
            let ci = stats::wilson95(correct as u64, (n - unjudged) as u64);
            out.accuracy.push(BandAccuracy {
                model: model.clone(),
                structure: structure.clone(),
                band: (*band).to_owned(),
                answers: n,
                correct,
                incorrect,
                unjudged,
                accuracy: pct(correct, n - unjudged),
                accuracy_lower: pct(correct, n),
                accuracy_upper: pct(correct + unjudged, n),
                ci_low: ci.map(|c| c.0 * 100.0),
                ci_high: ci.map(|c| c.1 * 100.0),
            });
        }
    }
    let mut models: Vec<&String> = counts.keys().map(|(m, _)| m).collect();
    models.dedup();
    for model in models {
        let row = |s: &str| -> Vec<u64> {
            counts
                .get(&(model.clone(), s.to_owned()))
                .map(|b| b.iter().map(|c| c[0] as u64).collect())
                .unwrap_or_else(|| vec![0; VALUE_BANDS.len()])
        };
        let (linear, jumping) = (row("linear"), row("jumping"));
        let test = stats::chi_square_homogeneity(&[linear.clone(), jumping.clone()]);
        let sum = |r: &[u64]| r.iter().sum::<u64>() as i64;
        out.mix_test.push(MixTest {
            model: model.clone(),
            linear_questions: sum(&linear),
            jumping_questions: sum(&jumping),
            chi_square: test.map(|t| t.0),
            df: test.map(|t| t.1),
            p_value: test.map(|t| t.2),
        });
    }
    out
}

impl ValueTables {
    /// The tables as frames: `rift_accuracy_by_value`, `rift_value_mix`, `rift_value_mix_test`.
    pub fn frames(&self) -> Result<Vec<(&'static str, DataFrame)>, Error> {
        let s = |v: Vec<&str>| v.into_iter().map(str::to_owned).collect::<Vec<String>>();
        let a = &self.accuracy;
        let f = |get: fn(&BandAccuracy) -> Option<f64>| a.iter().map(get).collect::<Vec<_>>();
        let i = |get: fn(&BandAccuracy) -> i64| a.iter().map(get).collect::<Vec<_>>();
        let accuracy = DataFrame::new(
            a.len(),
            vec![
                Column::new(
                    "model".into(),
                    s(a.iter().map(|r| r.model.as_str()).collect()),
                ),
                Column::new(
                    "structure".into(),
                    s(a.iter().map(|r| r.structure.as_str()).collect()),
                ),
                Column::new(
                    "band".into(),
                    s(a.iter().map(|r| r.band.as_str()).collect()),
                ),
                Column::new("answers".into(), i(|r| r.answers)),
                Column::new("correct".into(), i(|r| r.correct)),
                Column::new("incorrect".into(), i(|r| r.incorrect)),
                Column::new("unjudged".into(), i(|r| r.unjudged)),
                Column::new("accuracy".into(), f(|r| r.accuracy)),
                Column::new("accuracy_lower".into(), f(|r| r.accuracy_lower)),
                Column::new("accuracy_upper".into(), f(|r| r.accuracy_upper)),
                Column::new("ci_low".into(), f(|r| r.ci_low)),
                Column::new("ci_high".into(), f(|r| r.ci_high)),
            ],
        )
        .map_err(Error::polars("RIFT accuracy by value"))?;
        let m = &self.mix;
        let mix = DataFrame::new(
            m.len(),
            vec![
                Column::new(
                    "model".into(),
                    s(m.iter().map(|r| r.model.as_str()).collect()),
                ),
                Column::new(
                    "structure".into(),
                    s(m.iter().map(|r| r.structure.as_str()).collect()),
                ),
                Column::new(
                    "band".into(),
                    s(m.iter().map(|r| r.band.as_str()).collect()),
                ),
                Column::new(
                    "questions".into(),
                    m.iter().map(|r| r.questions).collect::<Vec<_>>(),
                ),
                Column::new(
                    "share".into(),
                    m.iter().map(|r| r.share).collect::<Vec<_>>(),
                ),
            ],
        )
        .map_err(Error::polars("RIFT value mix"))?;
        let t = &self.mix_test;
        let test = DataFrame::new(
            t.len(),
            vec![
                Column::new(
                    "model".into(),
                    s(t.iter().map(|r| r.model.as_str()).collect()),
                ),
                Column::new(
                    "linear_questions".into(),
                    t.iter().map(|r| r.linear_questions).collect::<Vec<_>>(),
                ),
                Column::new(
                    "jumping_questions".into(),
                    t.iter().map(|r| r.jumping_questions).collect::<Vec<_>>(),
                ),
                Column::new(
                    "chi_square".into(),
                    t.iter().map(|r| r.chi_square).collect::<Vec<_>>(),
                ),
                Column::new("df".into(), t.iter().map(|r| r.df).collect::<Vec<_>>()),
                Column::new(
                    "p_value".into(),
                    t.iter().map(|r| r.p_value).collect::<Vec<_>>(),
                ),
            ],
        )
        .map_err(Error::polars("RIFT value mix test"))?;
        Ok(vec![
            ("rift_accuracy_by_value", accuracy),
            ("rift_value_mix", mix),
            ("rift_value_mix_test", test),
        ])
    }

    /// The three tables as Markdown under `dir` (nothing when the run has no answers).
    pub fn write_markdown(&self, dir: &Path) -> Result<Vec<PathBuf>, Error> {
        if self.mix.is_empty() {
            return Ok(Vec::new());
        }
        let mut written = Vec::new();
        let rows: Vec<Vec<String>> = self
            .accuracy
            .iter()
            .map(|r| {
                let accuracy = if r.unjudged > 0 {
                    fmt_bounds(r.accuracy_lower, r.accuracy_upper, 1)
                } else {
                    fmt_opt(r.accuracy, 1)
                };
                vec![
                    r.model.clone(),
                    r.structure.clone(),
                    r.band.clone(),
                    r.answers.to_string(),
                    r.correct.to_string(),
                    r.unjudged.to_string(),
                    accuracy,
                    fmt_bounds(r.ci_low, r.ci_high, 1),
                ]
            })
            .collect();
        written.extend(tables::write_markdown(
            dir,
            "rift_accuracy_by_value",
            &format!("Accuracy (%) by clue value band, per model and structure: correct ÷ the band's answers, pooled over prompts (missing answers count as wrong), so a band's accuracy is answer-level, not Table 2's mean over prompts. Unjudged answers are neither correct nor incorrect; where there are any, the accuracy is shown as bounds (unjudged counted wrong … unjudged counted right). Wilson 95 % interval of the judged accuracy; it treats answers as independent, which answers of one prompt are not, so it is too narrow. {BANDS_NOTE}"),
            &["Model", "Structure", "Value band", "Answers", "Correct", "Unjudged", "Accuracy (%)", "Wilson 95 % (judged)"],
            &rows,
        )?);
        let mut rows = Vec::new();
        let mut models: Vec<&str> = self.mix.iter().map(|r| r.model.as_str()).collect();
        models.dedup();
        for model in models {
            for band in VALUE_BANDS {
                let cell = |s: &str| {
                    self.mix
                        .iter()
                        .find(|r| r.model == model && r.structure == s && r.band == band)
                        .map_or_else(
                            || "–".to_owned(),
                            |r| format!("{} ({})", r.questions, fmt_opt(r.share, 1)),
                        )
                };
                let mut row = vec![model.to_owned(), band.to_owned()];
                row.extend(STRUCTURES.iter().map(|s| cell(s)));
                rows.push(row);
            }
        }
        written.extend(tables::write_markdown(
            dir,
            "rift_value_mix",
            &format!("Value mix: questions per value band and structure, with their share (%) of the structure's questions, per model (every expected answer is one question asked; a repeated sample asks again). Linear and jumping prompts should hold the same mix (the paper keeps content fixed across structures); the chi-square test beside it checks that. {BANDS_NOTE}"),
            &["Model", "Value band", "Baseline questions (%)", "Linear questions (%)", "Jumping questions (%)"],
            &rows,
        )?);
        let rows: Vec<Vec<String>> = self
            .mix_test
            .iter()
            .map(|t| {
                vec![
                    t.model.clone(),
                    t.linear_questions.to_string(),
                    t.jumping_questions.to_string(),
                    fmt_opt(t.chi_square, 2),
                    t.df.map_or_else(|| "–".to_owned(), |d| d.to_string()),
                    t.p_value.map_or_else(|| "–".to_owned(), fmt_p),
                ]
            })
            .collect();
        written.extend(tables::write_markdown(
            dir,
            "rift_value_mix_test",
            "Same mix of values in linear and jumping prompts? Pearson's chi-square test of homogeneity of the two structures' questions over the value bands either uses (\"no value\" included), per model; a small p-value says the mixes differ, so a linear − jumping gap may partly be a difficulty gap. Questions of one prompt are consecutive clues of one game, not independent draws, so the test is a screen, not an exact p-value; with the paper's design (a jumping prompt reorders a linear prompt's questions) the mixes are equal and χ² is 0.",
            &["Model", "Linear questions", "Jumping questions", "χ²", "df", "p-value"],
            &rows,
        )?);
        Ok(written)
    }
}

/// A p-value with four decimals, or "< 0.0001".
pub fn fmt_p(p: f64) -> String {
    if p < 1e-4 {
        "< 0.0001".to_owned()
    } else {
        format!("{p:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_cut_the_board_values_as_documented() {
        let bands: Vec<usize> = [200, 400, 600, 800, 1000, 1200, 1600, 2000, 5, 3400]
            .map(|v| band_of(Some(v)))
            .to_vec();
        assert_eq!(bands, [0, 0, 1, 1, 2, 2, 3, 4, 0, 4]);
        assert_eq!(VALUE_BANDS[band_of(None)], "no value");
    }
}
