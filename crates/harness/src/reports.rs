//! `score-reports`: IFScale reports from outside a run (a published generations CSV, or a responses JSONL whose
//! records carry the prompt's keywords) scored into per-sample rows and, optionally, per-keyword labels.
//!
//! Readers turn either layout into [`Report`]s; writers emit CSV or JSONL by the output's extension.

use std::collections::BTreeMap;
use std::path::Path;

use schema::ifscale::{AttemptLog, KeywordLabel, MatchMode, PromptMeta, SampleScore};
use schema::{Outcome, ResponseRecord};
use scoring::ifscale::{SampleInput, score_sample};

use crate::Error;
use crate::ifscale::matcher_for;

/// What [`score_reports`] reads and writes.
#[derive(Debug, Clone, Copy)]
pub struct ScoreReports<'a> {
    /// A generations CSV (by its `.csv` extension) or a responses JSONL.
    pub input: &'a Path,
    /// For a responses JSONL holding several attempts per prompt: the attempts log that says which was accepted.
    pub attempts: Option<&'a Path>,
    pub mode: MatchMode,
    /// Per-sample rows: CSV when the name ends in `.csv`, JSONL otherwise.
    pub out: &'a Path,
    /// One row per keyword; CSV or JSONL by extension.
    pub labels: Option<&'a Path>,
}

/// What [`score_reports`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReportsSummary {
    pub samples: usize,
    /// Samples without an accepted report (scored as `failed`).
    pub failed: usize,
    pub labels: usize,
}

/// One report to score, from either input layout.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub id: String,
    pub model: String,
    pub seed: u64,
    pub num_rules: u32,
    pub keywords: Vec<String>,
    /// None: no accepted report (the sample is scored as failed).
    pub text: Option<String>,
    pub latency_s: Option<f64>,
    /// Visible output tokens (reasoning not included).
    pub output_tokens: Option<u64>,
    pub reasoning_tokens: Option<u64>,
    pub coherence: Option<f64>,
    pub attempts: u32,
}

/// Reads the reports, scores them and writes the rows (and labels).
pub fn score_reports(cfg: &ScoreReports<'_>) -> Result<ReportsSummary, Error> {
    let reports = if is_csv(cfg.input) {
        read_generations_csv(cfg.input)?
    } else {
        read_responses(cfg.input, cfg.attempts)?
    };
    let mut matcher = matcher_for(cfg.mode, reports.iter().map(|r| r.keywords.as_slice()))?;
    let mut scores: Vec<SampleScore> = Vec::with_capacity(reports.len());
    let mut labels: Vec<KeywordLabel> = Vec::new();
    for r in &reports {
        let input = SampleInput {
            id: &r.id,
            model: &r.model,
            num_rules: r.num_rules,
            seed: r.seed,
            keywords: &r.keywords,
            text: r.text.as_deref(),
            latency_s: r.latency_s,
            output_tokens: r.output_tokens,
            reasoning_tokens: r.reasoning_tokens,
            coherence: r.coherence,
            attempts: r.attempts,
        };
        let (s, l) = score_sample(&mut matcher, &input);
        scores.push(s);
        labels.extend(l);
    }
    if is_csv(cfg.out) {
        write_scores_csv(cfg.out, &scores)?;
    } else {
        schema::write_jsonl_atomic(cfg.out, &scores)?;
    }
    if let Some(path) = cfg.labels {
        if is_csv(path) {
            write_labels_csv(path, &labels)?;
        } else {
            schema::write_jsonl_atomic(path, &labels)?;
        }
    }
    Ok(ReportsSummary {
        samples: scores.len(),
        failed: scores.iter().filter(|s| s.accuracy.is_none()).count(),
        labels: labels.len(),
    })
}

fn is_csv(p: &Path) -> bool {
    p.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv"))
}

fn enum_name<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// Writes CSV rows (the header first) atomically.
fn write_csv(path: &Path, rows: impl IntoIterator<Item = Vec<String>>) -> Result<(), Error> {
    let err = |e: &dyn std::fmt::Display| Error::Output {
        path: path.to_owned(),
        message: e.to_string(),
    };
    let mut w = csv::Writer::from_writer(Vec::new());
    for row in rows {
        w.write_record(row.iter().map(|c| schema::csv_cell(c).into_owned()))
            .map_err(|e| err(&e))?;
    }
    let bytes = w.into_inner().map_err(|e| err(&e))?;
    schema::write_atomic(path, &bytes)?;
    Ok(())
}

/// Per-keyword labels as CSV: `id,model,position,keyword,status,mode`.
pub fn write_labels_csv(path: &Path, labels: &[KeywordLabel]) -> Result<(), Error> {
    let header = ["id", "model", "position", "keyword", "status", "mode"];
    let rows = labels.iter().map(|l| {
        vec![
            l.id.clone(),
            l.model.clone(),
            l.position.to_string(),
            l.keyword.clone(),
            enum_name(&l.status),
            enum_name(&l.mode),
        ]
    });
    write_csv(
        path,
        std::iter::once(header.map(str::to_owned).to_vec()).chain(rows),
    )
}

/// Per-sample scores as CSV, one column per `SampleScore` field (empty for None).
pub fn write_scores_csv(path: &Path, scores: &[SampleScore]) -> Result<(), Error> {
    let opt = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
    let header = [
        "id",
        "model",
        "num_rules",
        "seed",
        "mode",
        "status",
        "accuracy",
        "exact",
        "modified",
        "omitted",
        "omission_pct",
        "modification_pct",
        "primacy_ratio",
        "latency_s",
        "output_tokens",
        "coherence",
        "attempts",
    ];
    let rows = scores.iter().map(|s| {
        vec![
            s.id.clone(),
            s.model.clone(),
            s.num_rules.to_string(),
            s.seed.to_string(),
            enum_name(&s.mode),
            enum_name(&s.status),
            opt(s.accuracy),
            s.exact.to_string(),
            s.modified.to_string(),
            s.omitted.to_string(),
            opt(s.omission_pct),
            opt(s.modification_pct),
            opt(s.primacy_ratio),
            opt(s.latency_s),
            s.output_tokens.map(|t| t.to_string()).unwrap_or_default(),
            opt(s.coherence),
            s.attempts.to_string(),
        ]
    });
    write_csv(
        path,
        std::iter::once(header.map(str::to_owned).to_vec()).chain(rows),
    )
}

/// The IFScale generations CSV: `id,model,seed,num_rules,constraints,generated_text,latency_seconds,…`.
pub fn read_generations_csv(path: &Path) -> Result<Vec<Report>, Error> {
    let input = |msg: String| Error::Input(format!("{}: {msg}", path.display()));
    let mut rdr = csv::ReaderBuilder::new()
        .flexible(false)
        .from_path(path)
        .map_err(|e| input(e.to_string()))?;
    let headers = rdr
        .headers()
        .map_err(|e| input(format!("reading the header: {e}")))?
        .clone();
    let col = |name: &str| headers.iter().position(|h| h.trim() == name);
    let need = |name: &str| {
        col(name).ok_or_else(|| input(format!("no `{name}` column (header: {headers:?})")))
    };
    let (c_model, c_seed, c_n, c_kw, c_text) = (
        need("model")?,
        need("seed")?,
        need("num_rules")?,
        need("constraints")?,
        need("generated_text")?,
    );
    let c_id = col("id");
    let c_lat = col("latency_seconds");
    let c_tok = col("output_tokens").or_else(|| col("completion_tokens"));
    let c_reason = col("reasoning_tokens");
    let mut out = Vec::new();
    for (i, rec) in rdr.records().enumerate() {
        let line = i + 2;
        let rec = rec.map_err(|e| input(format!("record {line}: {e}")))?;
        let field = |c: usize| rec.get(c).unwrap_or("").trim();
        let bad = |name: &str, v: &str| {
            Error::Input(format!(
                "{}:{line}: field `{name}`: cannot read {v:?}",
                path.display()
            ))
        };
        let seed: u64 = parse_num(field(c_seed)).ok_or_else(|| bad("seed", field(c_seed)))?;
        let num_rules: u32 = parse_num(field(c_n)).ok_or_else(|| bad("num_rules", field(c_n)))?;
        let keywords: Vec<String> = field(c_kw)
            .split(',')
            .map(|k| k.trim().to_owned())
            .collect();
        if keywords.iter().any(String::is_empty) {
            return Err(Error::Input(format!(
                "{}:{line}: field `constraints`: an empty keyword",
                path.display()
            )));
        }
        if keywords.len() != num_rules as usize {
            tracing::warn!(
                line,
                num_rules,
                keywords = keywords.len(),
                "num_rules differs from the number of constraints; N is the constraint count."
            );
        }
        let latency_s = match c_lat.map(field) {
            None | Some("") => None,
            Some(v) => Some(v.parse::<f64>().map_err(|_| bad("latency_seconds", v))?),
        };
        let output_tokens = match c_tok.map(field) {
            None | Some("") => None,
            Some(v) => Some(parse_num::<u64>(v).ok_or_else(|| bad("output_tokens", v))?),
        };
        let reasoning_tokens = match c_reason.map(field) {
            None | Some("") => None,
            Some(v) => Some(parse_num::<u64>(v).ok_or_else(|| bad("reasoning_tokens", v))?),
        };
        let model = field(c_model).to_owned();
        let id = c_id
            .map(|c| field(c).to_owned())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| format!("{model}-n{num_rules}-s{seed}"));
        let text = rec.get(c_text).unwrap_or("").to_owned();
        out.push(Report {
            id,
            model,
            seed,
            num_rules,
            keywords,
            text: Some(text),
            latency_s,
            output_tokens,
            reasoning_tokens,
            coherence: None,
            attempts: 0,
        });
    }
    Ok(out)
}

/// Integers written as `3` or `3.0`.
fn parse_num<T: TryFrom<u64>>(v: &str) -> Option<T> {
    let n = match v.parse::<u64>() {
        Ok(n) => n,
        Err(_) => {
            let f: f64 = v.parse().ok()?;
            if f.fract() != 0.0 || f < 0.0 {
                return None;
            }
            f as u64
        }
    };
    T::try_from(n).ok()
}

/// A responses JSONL, newest line per key (`schema::latest_per_key`) within each model's lines; with several
/// attempts per (model, id), the attempts log picks the accepted one. Reports come sorted by (model, id).
pub fn read_responses(path: &Path, attempts: Option<&Path>) -> Result<Vec<Report>, Error> {
    let records: Vec<ResponseRecord> =
        schema::read_jsonl(path).map_err(|e| Error::Input(e.to_string()))?;
    let mut per_model: BTreeMap<String, Vec<ResponseRecord>> = BTreeMap::new();
    for r in records {
        per_model.entry(r.model.clone()).or_default().push(r);
    }
    let logs: Option<Vec<AttemptLog>> = attempts
        .map(|p| schema::read_jsonl(p).map_err(|e| Error::Input(e.to_string())))
        .transpose()?;
    let mut by_sample: BTreeMap<(String, String), Vec<ResponseRecord>> = BTreeMap::new();
    for (model, rs) in per_model {
        let mut latest = schema::latest_per_key(rs);
        latest.sort_by_key(schema::ResponseKey::of);
        for r in latest {
            by_sample
                .entry((model.clone(), r.id.clone()))
                .or_default()
                .push(r);
        }
    }
    let mut out = Vec::new();
    for ((model, id), rs) in by_sample {
        let meta: PromptMeta = serde_json::from_value(serde_json::Value::Object(
            rs[0].prompt_meta.clone(),
        ))
        .map_err(|e| {
            Error::Input(format!(
                "{}: response {id}: `prompt_meta` lacks the IFScale fields: {e}",
                path.display()
            ))
        })?;
        let (chosen, n_attempts, coherence) = match &logs {
            Some(logs) => {
                let mine: Vec<&AttemptLog> = logs
                    .iter()
                    .filter(|l| l.id == id && l.model == model)
                    .collect();
                let acc = mine.iter().find(|l| l.accepted);
                let chosen = acc.and_then(|l| rs.iter().find(|r| r.sample_index + 1 == l.attempt));
                (
                    chosen,
                    mine.len() as u32,
                    acc.and_then(|l| l.coherence).map(f64::from),
                )
            }
            None => {
                if rs.len() > 1 {
                    return Err(Error::Input(format!(
                        "{}: {} responses for {id} ({model}); pass --attempts to say which one was accepted",
                        path.display(),
                        rs.len()
                    )));
                }
                (Some(&rs[0]).filter(|r| r.outcome == Outcome::Ok), 1, None)
            }
        };
        out.push(Report {
            id,
            model,
            seed: meta.seed,
            num_rules: meta.num_rules,
            keywords: meta.keywords,
            text: chosen.map(|r| r.content.clone().unwrap_or_default()),
            latency_s: chosen.and_then(|r| r.latency_s),
            output_tokens: chosen.map(|r| r.usage.visible_tokens()),
            reasoning_tokens: chosen.and_then(|r| r.usage.reasoning_tokens),
            coherence,
            attempts: n_attempts,
        });
    }
    Ok(out)
}
