//! IFScale aggregation per (model, N), exactly as the published analysis defines it, plus bootstrap intervals,
//! decay-pattern fits and variance patterns.
//!
//! Definitions (reverse-engineered from the published aggregate files and checked against them to 1e-12):
//! - `accuracy`: mean of per-sample accuracy (percent) over the samples that were scored;
//! - `accuracy_std`: sample standard deviation (ddof = 1) of the same values; undefined with one sample;
//! - `omission_pct`, `modification_pct`: means of the per-sample error shares;
//! - `recency_ratio` (the primacy ratio): mean over the samples where it is defined (missing values skipped);
//! - O:M `ratio` = mean omission % ÷ mean modification %, undefined when the denominator is 0;
//! - `acc_per_latency` = mean accuracy ÷ mean latency (seconds).
//!
//! - `reasoning_tokens`: mean over the samples that report them; `output_tokens` are visible output tokens only.
//! - `accuracy_ci_*`: percentile bootstrap of the mean over seeds; `accuracy_t_*`: Student-t interval of the same mean.
//!
//! Failed samples (every attempt rejected) are counted in `n_failed` and excluded from every mean; [`outcomes`]
//! says how each ended (refused, no visible output, …) and gives accuracy over all samples with a failure as 0, and
//! [`refusals`] which keywords the refused samples hold far more often than the scored ones.
//!
//! Submodules: [`decay`] (the decay-pattern table), [`results`] (the multi-metric results table and the published
//! leaderboard comparison), [`primacy`] (error rates per third of the keyword list, from keyword labels),
//! [`reasoning`] (reasoning tokens and effort pairs), [`coherence`] (coherence over every judged attempt),
//! [`refusal_judge`] (the optional refusal judge's decisions, corrected for its measured errors),
//! [`vocabulary`] (whether a run's keywords come from the paper's list, by content hash).

pub mod coherence;
pub mod decay;
pub mod outcomes;
pub mod primacy;
pub mod published;
pub mod reasoning;
pub mod refusal_judge;
pub mod refusals;
pub mod results;
pub mod vocabulary;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use polars::prelude::*;
use serde::Serialize;

use crate::Error;
pub use decay::fits_frame;

use crate::fit::{self, DecayFit, VariancePattern};
use crate::stats::{self, SplitMix64};
use crate::tables::{self, f64_col, i64_col, str_col};

/// Columns of the normalized per-sample frame every IFScale function takes.
pub const SAMPLE_COLUMNS: [&str; 13] = [
    "model",
    "num_rules",
    "seed",
    "failed",
    "status",
    "accuracy",
    "omission_pct",
    "modification_pct",
    "primacy_ratio",
    "latency",
    "output_tokens",
    "coherence",
    "reasoning_tokens",
];

/// The columns of the published per-sample CSV.
pub const REFERENCE_COLUMNS: [&str; 8] = [
    "model",
    "num_rules",
    "seed",
    "accuracy",
    "omission_pct",
    "modification_pct",
    "recency_ratio",
    "latency",
];

/// Reads `SampleScore` JSONL files (one per run or model) into the normalized per-sample frame.
pub fn load_scores(paths: &[PathBuf]) -> Result<DataFrame, Error> {
    let records: Vec<schema::ifscale::SampleScore> = schema::read_jsonl_files(paths)?;
    samples_frame(&records)
}

/// Stacks per-sample frames (a run's scores, published per-sample CSVs) into one.
pub fn pool(mut frames: Vec<DataFrame>) -> Result<Option<DataFrame>, Error> {
    if frames.is_empty() {
        return Ok(None);
    }
    let mut samples = frames.remove(0);
    for f in &frames {
        samples
            .vstack_mut(f)
            .map_err(Error::polars("pooling IFScale samples"))?;
    }
    Ok(Some(samples))
}

/// Builds the normalized per-sample frame from records.
pub fn samples_frame(records: &[schema::ifscale::SampleScore]) -> Result<DataFrame, Error> {
    use schema::ifscale::SampleStatus;
    let col_f = |name: &str, f: &dyn Fn(&schema::ifscale::SampleScore) -> Option<f64>| {
        Column::new(
            name.into(),
            records.iter().map(f).collect::<Vec<Option<f64>>>(),
        )
    };
    let columns = vec![
        Column::new(
            "model".into(),
            records.iter().map(|r| r.model.as_str()).collect::<Vec<_>>(),
        ),
        Column::new(
            "num_rules".into(),
            records
                .iter()
                .map(|r| i64::from(r.num_rules))
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "seed".into(),
            records.iter().map(|r| r.seed as i64).collect::<Vec<_>>(),
        ),
        Column::new(
            "failed".into(),
            records
                .iter()
                .map(|r| r.status != SampleStatus::Scored)
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "status".into(),
            records.iter().map(|r| r.status.name()).collect::<Vec<_>>(),
        ),
        col_f("accuracy", &|r| r.accuracy),
        col_f("omission_pct", &|r| r.omission_pct),
        col_f("modification_pct", &|r| r.modification_pct),
        col_f("primacy_ratio", &|r| r.primacy_ratio),
        col_f("latency", &|r| r.latency_s),
        col_f("output_tokens", &|r| r.output_tokens.map(|t| t as f64)),
        col_f("coherence", &|r| r.coherence),
        col_f("reasoning_tokens", &|r| {
            r.reasoning_tokens.map(|t| t as f64)
        }),
    ];
    DataFrame::new(records.len(), columns)
        .map_err(Error::polars("building the IFScale sample frame"))
}

/// Reads the published per-sample CSV (`model,num_rules,seed,accuracy,omission_pct,modification_pct,recency_ratio,latency`).
///
/// Every row is a scored sample; empty `recency_ratio` cells are undefined ratios.
pub fn load_reference_csv(path: &Path) -> Result<DataFrame, Error> {
    use schema::ifscale::SampleStatus;
    let header = std::fs::read_to_string(path).map_err(|e| Error::Input {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    let first = header.lines().next().unwrap_or_default();
    let names: Vec<&str> = first.split(',').map(str::trim).collect();
    for want in REFERENCE_COLUMNS {
        if !names.contains(&want) {
            return Err(Error::Input {
                path: path.to_owned(),
                message: format!("missing column `{want}` in the header"),
            });
        }
    }
    let mut schema = Schema::default();
    schema.insert("model".into(), DataType::String);
    schema.insert("num_rules".into(), DataType::Int64);
    schema.insert("seed".into(), DataType::Int64);
    for c in [
        "accuracy",
        "omission_pct",
        "modification_pct",
        "recency_ratio",
        "latency",
    ] {
        schema.insert(c.into(), DataType::Float64);
    }
    let pl_path =
        PlRefPath::try_from_path(path).map_err(Error::polars(path.display().to_string()))?;
    let df = LazyCsvReader::new(pl_path)
        .with_has_header(true)
        .with_dtype_overwrite(Some(Arc::new(schema)))
        .finish()
        .and_then(|lf| {
            lf.select([
                col("model"),
                col("num_rules"),
                col("seed"),
                lit(false).alias("failed"),
                lit(SampleStatus::Scored.name()).alias("status"),
                col("accuracy"),
                col("omission_pct"),
                col("modification_pct"),
                col("recency_ratio").alias("primacy_ratio"),
                col("latency"),
                lit(NULL).cast(DataType::Float64).alias("output_tokens"),
                lit(NULL).cast(DataType::Float64).alias("coherence"),
                lit(NULL).cast(DataType::Float64).alias("reasoning_tokens"),
            ])
            .collect()
        })
        .map_err(Error::polars(path.display().to_string()))?;
    // A row without a model, N, seed or accuracy cannot be placed in the grid: name it.
    for name in ["model", "num_rules", "seed", "accuracy"] {
        let nulls = df
            .column(name)
            .map_err(Error::polars(path.display().to_string()))?
            .is_null();
        if let Some(idx) = nulls.iter().position(|v| v == Some(true)) {
            return Err(Error::Input {
                path: path.to_owned(),
                message: format!("line {}: field `{name}` is empty", idx + 2),
            });
        }
    }
    Ok(df)
}

/// Settings for [`aggregate`].
#[derive(Debug, Clone, Serialize)]
pub struct AggregateConfig {
    /// Bootstrap resamples per (model, N).
    pub bootstrap_resamples: usize,
    pub bootstrap_seed: u64,
    /// Central mass of the interval (0.95).
    pub ci_level: f64,
}

/// One (model, N) row of the IFScale aggregate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuleRow {
    pub model: String,
    pub num_rules: i64,
    pub n_samples: i64,
    pub n_failed: i64,
    pub accuracy: Option<f64>,
    pub accuracy_std: Option<f64>,
    pub accuracy_ci_low: Option<f64>,
    pub accuracy_ci_high: Option<f64>,
    /// Student-t interval of the mean accuracy over the scored seeds (same level as the bootstrap one), clipped to
    /// the possible range 0–100.
    pub accuracy_t_low: Option<f64>,
    pub accuracy_t_high: Option<f64>,
    pub omission_pct: Option<f64>,
    pub modification_pct: Option<f64>,
    pub om_ratio: Option<f64>,
    pub primacy_ratio: Option<f64>,
    pub latency: Option<f64>,
    pub acc_per_latency: Option<f64>,
    /// Mean visible output tokens (reasoning tokens are never included).
    pub output_tokens: Option<f64>,
    pub coherence: Option<f64>,
    /// Mean reasoning tokens over the samples that report them.
    pub reasoning_tokens: Option<f64>,
}

/// Everything the IFScale tables and figures need.
#[derive(Debug, Clone, Serialize)]
pub struct IfscaleSummary {
    /// Sorted by model, then N.
    pub rows: Vec<RuleRow>,
    /// Models in sorted order (the colour order of every figure).
    pub models: Vec<String>,
    pub fits: Vec<DecayFit>,
    pub variance: Vec<(String, Option<VariancePattern>)>,
    /// How the samples ended per (model, N), with accuracy over all samples ([`outcomes`]).
    pub outcomes: Vec<outcomes::OutcomeRow>,
    /// The polars aggregate frame (same rows as `rows`).
    #[serde(skip)]
    pub frame: DataFrame,
    pub config: AggregateConfig,
}

impl IfscaleSummary {
    pub fn has_output_tokens(&self) -> bool {
        self.rows.iter().any(|r| r.output_tokens.is_some())
    }
    pub fn has_reasoning_tokens(&self) -> bool {
        self.rows.iter().any(|r| r.reasoning_tokens.is_some())
    }
    pub fn has_coherence(&self) -> bool {
        self.rows.iter().any(|r| r.coherence.is_some())
    }
    pub fn has_latency(&self) -> bool {
        self.rows.iter().any(|r| r.latency.is_some())
    }
    /// Rows of one model, in N order.
    pub fn model_rows<'a>(&'a self, model: &'a str) -> impl Iterator<Item = &'a RuleRow> + 'a {
        self.rows.iter().filter(move |r| r.model == model)
    }
}

/// Aggregates the normalized per-sample frame per (model, N).
pub fn aggregate(samples: &DataFrame, cfg: &AggregateConfig) -> Result<IfscaleSummary, Error> {
    for name in SAMPLE_COLUMNS {
        if samples.column(name).is_err() {
            return Err(Error::Empty(format!(
                "IFScale sample frame lacks column `{name}`"
            )));
        }
    }
    if samples.height() == 0 {
        return Err(Error::Empty("no IFScale samples to aggregate".to_owned()));
    }
    let ctx = "aggregating IFScale samples";
    let frame = samples
        .clone()
        .lazy()
        .group_by([col("model"), col("num_rules")])
        .agg([
            len().cast(DataType::Int64).alias("n_samples"),
            col("failed").cast(DataType::Int64).sum().alias("n_failed"),
            col("accuracy").mean().alias("accuracy"),
            col("accuracy").std(1).alias("accuracy_std"),
            col("omission_pct").mean().alias("omission_pct"),
            col("modification_pct").mean().alias("modification_pct"),
            col("primacy_ratio").mean().alias("primacy_ratio"),
            col("latency").mean().alias("latency"),
            col("output_tokens").mean().alias("output_tokens"),
            col("coherence").mean().alias("coherence"),
            col("reasoning_tokens").mean().alias("reasoning_tokens"),
        ])
        .with_columns([
            when(col("modification_pct").eq(lit(0.0)))
                .then(lit(NULL).cast(DataType::Float64))
                .otherwise(col("omission_pct") / col("modification_pct"))
                .alias("om_ratio"),
            when(col("latency").gt(lit(0.0)))
                .then(col("accuracy") / col("latency"))
                .otherwise(lit(NULL).cast(DataType::Float64))
                .alias("acc_per_latency"),
        ])
        .sort(
            ["model", "num_rules"],
            SortMultipleOptions::default().with_maintain_order(true),
        )
        .collect()
        .map_err(Error::polars(ctx))?;

    // Per-group accuracies for the bootstrap, in a stable order.
    let sorted = samples
        .clone()
        .lazy()
        .filter(col("accuracy").is_not_null())
        .sort(
            ["model", "num_rules", "seed"],
            SortMultipleOptions::default().with_maintain_order(true),
        )
        .select([col("model"), col("num_rules"), col("accuracy")])
        .collect()
        .map_err(Error::polars(ctx))?;
    let mut groups: BTreeMap<(String, i64), Vec<f64>> = BTreeMap::new();
    for ((m, n), a) in str_col(&sorted, "model")?
        .into_iter()
        .zip(i64_col(&sorted, "num_rules")?)
        .zip(f64_col(&sorted, "accuracy")?)
    {
        if let (Some(n), Some(a)) = (n, a) {
            groups.entry((m, n)).or_default().push(a);
        }
    }

    let models_col = str_col(&frame, "model")?;
    let n_col = i64_col(&frame, "num_rules")?;
    let get = |name: &str| f64_col(&frame, name);
    let reasoning = get("reasoning_tokens")?;
    let (acc, sd, om, md, pr, lat, tok, coh, ratio, apl) = (
        get("accuracy")?,
        get("accuracy_std")?,
        get("omission_pct")?,
        get("modification_pct")?,
        get("primacy_ratio")?,
        get("latency")?,
        get("output_tokens")?,
        get("coherence")?,
        get("om_ratio")?,
        get("acc_per_latency")?,
    );
    let n_samples = i64_col(&frame, "n_samples")?;
    let n_failed = i64_col(&frame, "n_failed")?;
    let mut rows = Vec::with_capacity(frame.height());
    let mut ci_lo = Vec::with_capacity(frame.height());
    let mut ci_hi = Vec::with_capacity(frame.height());
    let mut t_lo = Vec::with_capacity(frame.height());
    let mut t_hi = Vec::with_capacity(frame.height());
    for i in 0..frame.height() {
        let model = models_col[i].clone();
        let n = n_col[i].unwrap_or_default();
        let ci = groups.get(&(model.clone(), n)).and_then(|xs| {
            let mut rng = SplitMix64::new(stats::group_seed(
                cfg.bootstrap_seed,
                &format!("{model}\u{1f}{n}"),
            ));
            stats::bootstrap_mean_ci(xs, cfg.bootstrap_resamples, cfg.ci_level, &mut rng)
        });
        ci_lo.push(ci.map(|c| c.0));
        ci_hi.push(ci.map(|c| c.1));
        let t = groups
            .get(&(model.clone(), n))
            .and_then(|xs| stats::t_mean_ci(xs, cfg.ci_level))
            // Accuracy lies in [0, 100]; with few seeds the t-interval alone would reach past it.
            .map(|(lo, hi)| (lo.max(0.0), hi.min(100.0)));
        t_lo.push(t.map(|c| c.0));
        t_hi.push(t.map(|c| c.1));
        rows.push(RuleRow {
            model,
            num_rules: n,
            n_samples: n_samples[i].unwrap_or_default(),
            n_failed: n_failed[i].unwrap_or_default(),
            accuracy: acc[i],
            accuracy_std: sd[i],
            accuracy_ci_low: ci.map(|c| c.0),
            accuracy_ci_high: ci.map(|c| c.1),
            accuracy_t_low: t.map(|c| c.0),
            accuracy_t_high: t.map(|c| c.1),
            omission_pct: om[i],
            modification_pct: md[i],
            om_ratio: ratio[i],
            primacy_ratio: pr[i],
            latency: lat[i],
            acc_per_latency: apl[i],
            output_tokens: tok[i],
            coherence: coh[i],
            reasoning_tokens: reasoning[i],
        });
    }
    let mut frame = frame;
    frame
        .with_column(Column::new("accuracy_ci_low".into(), ci_lo))
        .and_then(|f| f.with_column(Column::new("accuracy_ci_high".into(), ci_hi)))
        .and_then(|f| f.with_column(Column::new("accuracy_t_low".into(), t_lo)))
        .and_then(|f| f.with_column(Column::new("accuracy_t_high".into(), t_hi)))
        .map_err(Error::polars(ctx))?;

    let mut models: Vec<String> = rows.iter().map(|r| r.model.clone()).collect();
    models.dedup();
    let mut fits = Vec::new();
    let mut variance = Vec::new();
    for m in &models {
        let pts: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| &r.model == m)
            .filter_map(|r| Some((r.num_rules as f64, r.accuracy?)))
            .collect();
        let x: Vec<f64> = pts.iter().map(|p| p.0).collect();
        let y: Vec<f64> = pts.iter().map(|p| p.1).collect();
        if let Some(f) = fit::fit_decay(m, &x, &y) {
            fits.push(f);
        }
        let sd_pts: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| &r.model == m)
            .filter_map(|r| Some((r.num_rules as f64, r.accuracy_std?)))
            .collect();
        variance.push((m.clone(), fit::variance_pattern(&sd_pts)));
    }
    Ok(IfscaleSummary {
        outcomes: outcomes::outcome_rows(samples)?,
        rows,
        models,
        fits,
        variance,
        frame,
        config: cfg.clone(),
    })
}

/// The published aggregate files: name and columns, in the published layout.
pub const PUBLISHED_TABLES: [(&str, &[&str]); 6] = [
    ("accuracy_by_rules", &["accuracy"]),
    ("accuracy_std_by_rules", &["accuracy_std"]),
    (
        "failure_modes_by_rules",
        &["omission_pct", "modification_pct"],
    ),
    ("omod_ratio_by_rules", &["ratio"]),
    ("recency_by_rules", &["recency_ratio"]),
    (
        "accuracy_latency_by_rules",
        &["accuracy", "latency", "acc_per_latency"],
    ),
];

fn published_source(column: &str) -> &str {
    match column {
        "ratio" => "om_ratio",
        "recency_ratio" => "primacy_ratio",
        other => other,
    }
}

/// One published-layout table (`model,num_rules,<columns>`) from the aggregate.
pub fn published_table(summary: &IfscaleSummary, name: &str) -> Result<DataFrame, Error> {
    let (_, columns) = PUBLISHED_TABLES
        .iter()
        .find(|(n, _)| *n == name)
        .ok_or_else(|| Error::Empty(format!("no published table named {name}")))?;
    let mut exprs = vec![col("model"), col("num_rules")];
    exprs.extend(columns.iter().map(|c| col(published_source(c)).alias(*c)));
    summary
        .frame
        .clone()
        .lazy()
        .select(exprs)
        .collect()
        .map_err(Error::polars(format!("building {name}")))
}

/// The largest absolute difference per published file between our aggregate and the published one.
#[derive(Debug, Clone, Serialize)]
pub struct ReferenceCheck {
    pub table: String,
    pub rows_compared: usize,
    pub max_abs_diff: f64,
    /// Rows or cells that disagree in presence (one side undefined) or are missing on one side.
    pub mismatches: Vec<String>,
}

/// Compares the aggregate with the published aggregate files in `reference_dir`.
pub fn check_against_reference(
    summary: &IfscaleSummary,
    reference_dir: &Path,
) -> Result<Vec<ReferenceCheck>, Error> {
    let mut out = Vec::new();
    for (name, columns) in PUBLISHED_TABLES {
        let path = reference_dir.join(format!("{name}.csv"));
        let pl_path =
            PlRefPath::try_from_path(&path).map_err(Error::polars(path.display().to_string()))?;
        let mut schema = Schema::default();
        schema.insert("model".into(), DataType::String);
        schema.insert("num_rules".into(), DataType::Int64);
        for c in columns {
            schema.insert((*c).into(), DataType::Float64);
        }
        let reference = LazyCsvReader::new(pl_path)
            .with_has_header(true)
            .with_dtype_overwrite(Some(Arc::new(schema)))
            .finish()
            .and_then(|lf| lf.collect())
            .map_err(Error::polars(path.display().to_string()))?;
        let ours = published_table(summary, name)?;
        let key = |df: &DataFrame| -> Result<Vec<(String, i64)>, Error> {
            Ok(str_col(df, "model")?
                .into_iter()
                .zip(i64_col(df, "num_rules")?)
                .map(|(m, n)| (m, n.unwrap_or(-1)))
                .collect())
        };
        let (rk, ok) = (key(&reference)?, key(&ours)?);
        let ours_index: BTreeMap<&(String, i64), usize> =
            ok.iter().enumerate().map(|(i, k)| (k, i)).collect();
        let mut check = ReferenceCheck {
            table: name.to_owned(),
            rows_compared: 0,
            max_abs_diff: 0.0,
            mismatches: Vec::new(),
        };
        if ok.len() != rk.len() {
            check
                .mismatches
                .push(format!("{} rows here, {} published", ok.len(), rk.len()));
        }
        for c in columns {
            let rv = f64_col(&reference, c)?;
            let ov = f64_col(&ours, c)?;
            for (ri, k) in rk.iter().enumerate() {
                let Some(&oi) = ours_index.get(k) else {
                    check
                        .mismatches
                        .push(format!("{} N={}: missing here", k.0, k.1));
                    continue;
                };
                let (r, o) = (
                    rv[ri].filter(|v| !v.is_nan()),
                    ov[oi].filter(|v| !v.is_nan()),
                );
                match (r, o) {
                    (Some(r), Some(o)) => {
                        check.max_abs_diff = check.max_abs_diff.max((r - o).abs())
                    }
                    (None, None) => {}
                    _ => check.mismatches.push(format!(
                        "{} N={} {c}: published {r:?}, here {o:?}",
                        k.0, k.1
                    )),
                }
            }
        }
        check.rows_compared = rk.len();
        out.push(check);
    }
    Ok(out)
}

/// Writes every IFScale table under `dir` that the per-sample records allow: the six published-layout tables, the
/// full aggregate, the decay fits, the multi-metric results table, effort pairs and reasoning tokens (when present),
/// failed-sample counts, and the paper's results table (Markdown). Keyword-label and attempt-log tables are written
/// by [`primacy::write_tables`] and [`coherence::write_tables`].
pub fn write_tables(summary: &IfscaleSummary, dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut written = Vec::new();
    for (name, _) in PUBLISHED_TABLES {
        written.extend(tables::write_table(
            &published_table(summary, name)?,
            dir,
            name,
        )?);
    }
    written.extend(tables::write_table(
        &summary.frame,
        dir,
        "ifscale_by_rules",
    )?);
    written.extend(decay::write_tables(summary, dir)?);
    written.extend(results::write_tables(summary, dir)?);
    written.extend(published::write_table(summary, dir)?);
    written.extend(reasoning::write_tables(summary, dir)?);
    written.extend(outcomes::write_tables(&summary.outcomes, dir)?);

    // Failed-sample counts and denominators per model.
    let failed = summary
        .frame
        .clone()
        .lazy()
        .group_by([col("model")])
        .agg([
            col("n_samples").sum().alias("n_samples"),
            col("n_failed").sum().alias("n_failed"),
        ])
        .sort(["model"], SortMultipleOptions::default())
        .collect()
        .map_err(Error::polars("counting failed samples"))?;
    written.extend(tables::write_table(&failed, dir, "ifscale_failed_samples")?);

    // The paper's results table: accuracy and std at the five headline densities.
    let headline = [10, 50, 100, 250, 500];
    let mut header: Vec<String> = vec!["model".to_owned()];
    header.extend(headline.iter().map(|n| format!("acc@{n}")));
    header.extend(headline.iter().map(|n| format!("std@{n}")));
    let rows: Vec<Vec<String>> = summary
        .models
        .iter()
        .map(|m| {
            let find = |n: i64| {
                summary
                    .rows
                    .iter()
                    .find(|r| &r.model == m && r.num_rules == n)
            };
            let mut row = vec![m.clone()];
            row.extend(
                headline
                    .iter()
                    .map(|&n| tables::fmt_opt(find(n).and_then(|r| r.accuracy), 1)),
            );
            row.extend(
                headline
                    .iter()
                    .map(|&n| tables::fmt_opt(find(n).and_then(|r| r.accuracy_std), 1)),
            );
            row
        })
        .collect();
    let header_refs: Vec<&str> = header.iter().map(String::as_str).collect();
    written.extend(tables::write_markdown(
        dir,
        "ifscale_results",
        "Mean accuracy (%) and sample standard deviation across seeds at 10, 50, 100, 250 and 500 instructions.",
        &header_refs,
        &rows,
    )?);
    Ok(written)
}
