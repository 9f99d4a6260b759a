//! The IFScale side of the explorer: one entry per sample (its scores, the scored report with every keyword
//! occurrence marked, the keyword list with each one's status, the attempt history).

use std::collections::HashMap;
use std::path::Path;

use schema::ResponseRecord;
use schema::ifscale::{AttemptLog, KeywordLabel, KeywordStatus, SampleScore, SampleStatus};
use schema::paths::{Bench, ModelPaths, RunPaths};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Entry, Options, Pager, round, shown};
use crate::Error;

/// A prompt's keyword list, read from the run's prompts file.
#[derive(Deserialize)]
struct PromptKeywords {
    id: String,
    #[serde(default)]
    keywords: Vec<String>,
}

/// One model's IFScale files, read for the explorer.
pub struct IfscaleSource {
    model: String,
    responses_path: std::path::PathBuf,
    scores: Vec<SampleScore>,
    labels: HashMap<String, Vec<KeywordLabel>>,
    attempts: HashMap<String, Vec<AttemptLog>>,
    responses: HashMap<(String, u32), ResponseRecord>,
    prompt_keywords: HashMap<String, Vec<String>>,
}

#[derive(Serialize)]
struct Sample<'a> {
    id: &'a str,
    n: u32,
    seed: u64,
    status: &'static str,
    accuracy: Option<f64>,
    exact: u32,
    modified: u32,
    omitted: u32,
    attempts: u32,
    coherence: Option<f64>,
    output_tokens: Option<u64>,
    reasoning_tokens: Option<u64>,
    latency_s: Option<f64>,
    span: &'static str,
    /// The scored text in pieces: `[text]` plain, `[text, position, "e"|"m"]` a keyword, `[text, -1]` not scored.
    segs: Option<Vec<Value>>,
    reasoning: Option<String>,
    /// `[keyword, "e"|"m"|"o"|"-"]` in list order.
    keywords: Vec<(String, &'static str)>,
    history: Vec<History>,
}

#[derive(Serialize)]
struct History {
    attempt: u32,
    accepted: bool,
    reason: Option<Value>,
    coherence: Option<u8>,
    coherence_reason: Option<String>,
    judge_error: Option<String>,
    finish: Option<String>,
    words: u32,
    output_tokens: Option<u64>,
    reasoning_tokens: Option<u64>,
    latency_s: Option<f64>,
}

fn code(s: KeywordStatus) -> &'static str {
    match s {
        KeywordStatus::Exact => "e",
        KeywordStatus::Modified => "m",
        KeywordStatus::Omitted => "o",
    }
}

impl IfscaleSource {
    /// Reads one model's scores, labels, attempts and responses (one model's IFScale files fit in memory: at most a
    /// few hundred samples of up to ten attempts).
    pub fn open(paths: &RunPaths, m: &ModelPaths, model: &str) -> Result<IfscaleSource, Error> {
        let mut scores: Vec<SampleScore> = schema::read_jsonl(&m.scores())?;
        scores.sort_by(|a, b| (a.num_rules, a.seed, &a.id).cmp(&(b.num_rules, b.seed, &b.id)));
        let mut labels: HashMap<String, Vec<KeywordLabel>> = HashMap::new();
        if m.labels().is_file() {
            for l in schema::read_jsonl::<KeywordLabel>(&m.labels())? {
                labels.entry(l.id.clone()).or_default().push(l);
            }
        }
        for v in labels.values_mut() {
            v.sort_by_key(|l| l.position);
        }
        let mut attempts: HashMap<String, Vec<AttemptLog>> = HashMap::new();
        if m.attempts().is_file() {
            for a in schema::read_jsonl::<AttemptLog>(&m.attempts())? {
                attempts.entry(a.id.clone()).or_default().push(a);
            }
        }
        for v in attempts.values_mut() {
            v.sort_by_key(|a| a.attempt);
            v.dedup_by_key(|a| a.attempt);
        }
        let responses = if m.responses().is_file() {
            schema::read_latest_responses(&m.responses())?
                .into_iter()
                .map(|r| ((r.id.clone(), r.sample_index), r))
                .collect()
        } else {
            HashMap::new()
        };
        let prompts = paths.ifscale_prompts();
        let prompt_keywords = if prompts.is_file() {
            schema::read_jsonl::<PromptKeywords>(&prompts)?
                .into_iter()
                .map(|p| (p.id, p.keywords))
                .collect()
        } else {
            HashMap::new()
        };
        Ok(IfscaleSource {
            model: model.to_owned(),
            responses_path: m
                .responses()
                .strip_prefix(&paths.root)
                .map_or_else(|_| m.responses(), Path::to_path_buf),
            scores,
            labels,
            attempts,
            responses,
            prompt_keywords,
        })
    }

    /// Writes this model's pages into `dir`.
    pub(super) fn write(&self, dir: &Path, run: &str, opts: &Options) -> Result<Entry, Error> {
        let mut pager = Pager::new(dir, Bench::Ifscale, &self.model, run, opts.max_page_bytes);
        let mut rows = Vec::with_capacity(self.scores.len());
        // A sample alone must fit a page: its long texts get at most a third of the page each.
        let field = opts
            .max_field_bytes
            .min(opts.max_page_bytes.saturating_sub(super::SHELL_BYTES) / 3);
        let mut showcase: Option<(u32, String, usize)> = None;
        let mut providers = Vec::with_capacity(self.scores.len());
        for s in &self.scores {
            let sample = self.sample(s, opts, field);
            let page = pager.push(&sample)?;
            let found = s.exact + s.modified;
            if s.status == SampleStatus::Scored && showcase.as_ref().is_none_or(|b| found > b.0) {
                showcase = Some((found, s.id.clone(), page));
            }
            providers.push(self.provider(s));
            rows.push(serde_json::json!([
                s.id,
                s.num_rules,
                s.seed,
                sample.status,
                round(s.accuracy, 2),
                s.omitted,
                s.modified,
                s.attempts,
                round(s.coherence, 2),
                s.output_tokens,
                page
            ]));
        }
        let mut list = (
            vec![
                "id",
                "N",
                "seed",
                "status",
                "accuracy %",
                "omitted",
                "modified",
                "attempts",
                "coherence",
                "output tokens",
            ],
            vec![false, true, true, false, true, true, true, true, true, true],
            vec!["N", "status"],
        );
        super::with_provider_column(&mut rows, &providers, &mut list);
        pager.finish(
            super::List {
                columns: &list.0,
                numeric: &list.1,
                filters: &list.2,
                note: None,
            },
            rows,
            showcase.map(|(_, id, page)| (id, page)),
        )
    }

    /// The upstream provider of the sample's accepted attempt, else of its last one.
    fn provider(&self, s: &SampleScore) -> Option<String> {
        let logs = self.attempts.get(&s.id).map(Vec::as_slice).unwrap_or(&[]);
        let chosen = logs.iter().rev().find(|l| l.accepted).or(logs.last())?;
        super::provider_of(
            self.responses
                .get(&(s.id.clone(), chosen.attempt.saturating_sub(1))),
        )
    }

    fn sample<'a>(&'a self, s: &'a SampleScore, opts: &Options, field: usize) -> Sample<'a> {
        let logs = self.attempts.get(&s.id).map(Vec::as_slice).unwrap_or(&[]);
        let accepted = logs.iter().rev().find(|l| l.accepted);
        let scored = accepted
            .and_then(|l| {
                self.responses
                    .get(&(s.id.clone(), l.attempt.saturating_sub(1)))
            })
            .filter(|_| s.status == SampleStatus::Scored);
        let labels = self.labels.get(&s.id);
        let keywords: Vec<(String, &'static str)> = match labels {
            Some(ls) if !ls.is_empty() => ls
                .iter()
                .map(|l| (shown(&l.keyword, 200, &self.responses_path), code(l.status)))
                .collect(),
            _ => self
                .prompt_keywords
                .get(&s.id)
                .into_iter()
                .flatten()
                .map(|k| (shown(k, 200, &self.responses_path), "-"))
                .collect(),
        };
        let segs = scored.and_then(|r| r.content.as_deref()).map(|text| {
            let (kws, statuses): (Vec<&str>, Vec<KeywordStatus>) = labels
                .into_iter()
                .flatten()
                .map(|l| (l.keyword.as_str(), l.status))
                .unzip();
            self.segments(text, &kws, &statuses, opts.span, field)
        });
        let history = logs
            .iter()
            .map(|l| {
                let finish = self
                    .responses
                    .get(&(s.id.clone(), l.attempt.saturating_sub(1)))
                    .and_then(|r| r.finish_reason.clone());
                History {
                    attempt: l.attempt,
                    accepted: l.accepted,
                    reason: l.reason.and_then(|r| serde_json::to_value(r).ok()),
                    coherence: l.coherence,
                    coherence_reason: l
                        .coherence_reason
                        .as_deref()
                        .map(|t| shown(t, 4000, &self.responses_path)),
                    judge_error: l
                        .judge_error
                        .as_ref()
                        .map(|f| shown(&f.to_string(), 4000, &self.responses_path)),
                    finish: finish.map(|f| shown(&f, 100, &self.responses_path)),
                    words: l.words,
                    output_tokens: l.output_tokens,
                    reasoning_tokens: l.reasoning_tokens,
                    latency_s: round(l.latency_s, 2),
                }
            })
            .collect();
        Sample {
            id: &s.id,
            n: s.num_rules,
            seed: s.seed,
            status: s.status.name(),
            accuracy: round(s.accuracy, 2),
            exact: s.exact,
            modified: s.modified,
            omitted: s.omitted,
            attempts: s.attempts,
            coherence: round(s.coherence, 2),
            output_tokens: s.output_tokens,
            reasoning_tokens: s.reasoning_tokens,
            latency_s: round(s.latency_s, 2),
            span: match opts.span {
                prompt_gen::ifscale::ScoreSpan::Whole => "whole",
                prompt_gen::ifscale::ScoreSpan::Report => "report",
            },
            segs,
            reasoning: scored
                .and_then(|r| r.reasoning.as_deref())
                .map(|t| shown(t, field, &self.responses_path)),
            keywords,
            history,
        }
    }

    /// The text cut into plain pieces and marked keyword occurrences (within the scored span).
    fn segments(
        &self,
        text: &str,
        kws: &[&str],
        statuses: &[KeywordStatus],
        span: prompt_gen::ifscale::ScoreSpan,
        max: usize,
    ) -> Vec<Value> {
        let mut end_all = text.len().min(max);
        while !text.is_char_boundary(end_all) {
            end_all -= 1;
        }
        let cut = end_all < text.len();
        let text = &text[..end_all];
        let (from, to) = match span {
            prompt_gen::ifscale::ScoreSpan::Whole => (0, text.len()),
            prompt_gen::ifscale::ScoreSpan::Report => {
                let sub = scoring::ifscale::report_span(text);
                let from = sub.as_ptr() as usize - text.as_ptr() as usize;
                (from, from + sub.len())
            }
        };
        let show = |t: &str| shown(t, usize::MAX, &self.responses_path);
        let mut out = Vec::new();
        if from > 0 {
            out.push(serde_json::json!([show(&text[..from]), -1]));
        }
        let mut at = from;
        for m in scoring::ifscale::marks(&text[from..to], kws, statuses) {
            let (s, e) = (from + m.start, from + m.end);
            if s > at {
                out.push(serde_json::json!([show(&text[at..s])]));
            }
            out.push(serde_json::json!([
                show(&text[s..e]),
                m.position,
                code(m.status)
            ]));
            at = e;
        }
        if to > at {
            out.push(serde_json::json!([show(&text[at..to])]));
        }
        if to < text.len() {
            out.push(serde_json::json!([show(&text[to..]), -1]));
        }
        if cut {
            out.push(serde_json::json!([format!(
                "\n… [cut here for display; the whole answer is in {}]",
                self.responses_path.display()
            )]));
        }
        out
    }
}

/// One IFScale sample of two models side by side.
#[derive(Serialize)]
struct PairSample<'a> {
    id: &'a str,
    n: u32,
    seed: u64,
    a: Sample<'a>,
    b: Sample<'a>,
    /// `[keyword, status in a, status in b]` in list order (`"e"`, `"m"`, `"o"`, or `"-"` when not scored).
    keywords: Vec<(String, &'static str, &'static str)>,
    /// Keywords a found exactly and b did not, and the reverse (counted when both samples are scored).
    a_only: usize,
    b_only: usize,
}

/// Each keyword's status code in list order, or None when the sample has no labels (failed).
fn statuses(source: &IfscaleSource, s: &SampleScore) -> Option<Vec<&'static str>> {
    let labels = source.labels.get(&s.id).filter(|l| !l.is_empty())?;
    (s.status == SampleStatus::Scored).then(|| labels.iter().map(|l| code(l.status)).collect())
}

/// Writes models `a` and `b` side by side on every IFScale sample both hold (same id, so the same N, seed and
/// keyword list), the samples with the most keywords found by one model only first.
pub(super) fn write_pair(
    a: &IfscaleSource,
    b: &IfscaleSource,
    dir: &Path,
    run: &str,
    opts: &Options,
) -> Result<super::PairEntry, Error> {
    let by_id: HashMap<&str, &SampleScore> = b.scores.iter().map(|s| (s.id.as_str(), s)).collect();
    // (differences, sample of a, sample of b, a only, b only)
    let mut paired: Vec<(usize, &SampleScore, &SampleScore, usize, usize)> = Vec::new();
    for sa in &a.scores {
        let Some(sb) = by_id.get(sa.id.as_str()) else {
            continue;
        };
        let (mut a_only, mut b_only) = (0, 0);
        if let (Some(x), Some(y)) = (statuses(a, sa), statuses(b, sb)) {
            for (p, q) in x.iter().zip(&y) {
                a_only += usize::from(*p == "e" && *q != "e");
                b_only += usize::from(*q == "e" && *p != "e");
            }
        }
        paired.push((a_only + b_only, sa, sb, a_only, b_only));
    }
    let total = paired.len();
    let differing = paired.iter().filter(|p| p.0 > 0).count();
    paired.sort_by(|x, y| {
        y.0.cmp(&x.0).then_with(|| {
            (x.1.num_rules, x.1.seed, &x.1.id).cmp(&(y.1.num_rules, y.1.seed, &y.1.id))
        })
    });
    paired.truncate(opts.max_pair_samples);
    let mut pager = Pager::pair(
        dir,
        Bench::Ifscale,
        (a.model.as_str(), b.model.as_str()),
        run,
        opts.max_page_bytes,
    );
    // Two samples share a page entry: each long text gets at most a sixth of the page.
    let field = opts
        .max_field_bytes
        .min(opts.max_page_bytes.saturating_sub(super::SHELL_BYTES) / 6);
    let mut rows = Vec::with_capacity(paired.len());
    for &(_, sa, sb, a_only, b_only) in &paired {
        let (xa, xb) = (a.sample(sa, opts, field), b.sample(sb, opts, field));
        let n = xa.keywords.len().max(xb.keywords.len());
        let keywords = (0..n)
            .map(|i| {
                let kw = xa
                    .keywords
                    .get(i)
                    .or_else(|| xb.keywords.get(i))
                    .map(|k| k.0.clone())
                    .unwrap_or_default();
                let st = |s: &Sample<'_>| s.keywords.get(i).map_or("-", |k| k.1);
                (kw, st(&xa), st(&xb))
            })
            .collect();
        let sample = PairSample {
            id: &sa.id,
            n: sa.num_rules,
            seed: sa.seed,
            a: xa,
            b: xb,
            keywords,
            a_only,
            b_only,
        };
        let page = pager.push(&sample)?;
        rows.push(serde_json::json!([
            sa.id,
            sa.num_rules,
            sa.seed,
            round(sa.accuracy, 2),
            round(sb.accuracy, 2),
            a_only,
            b_only,
            page
        ]));
    }
    let (only_a, only_b) = (
        format!("found by {} only", a.model),
        format!("found by {} only", b.model),
    );
    let (acc_a, acc_b) = (
        format!("{} accuracy %", a.model),
        format!("{} accuracy %", b.model),
    );
    let entry = pager.finish(
        super::List {
            columns: &["id", "N", "seed", &acc_a, &acc_b, &only_a, &only_b],
            numeric: &[false, true, true, true, true, true, true],
            filters: &["N"],
            note: Some(format!(
                "Samples both models hold (the same N, seed and keyword list): {total}, of which {differing} have a \
                 keyword that one model found exactly and the other did not (a modified form counts as not found, as \
                 in accuracy){}. Listed with the most such keywords first.",
                if paired.len() < total {
                    format!("; the {} that differ most are listed", paired.len())
                } else {
                    String::new()
                }
            )),
        },
        rows,
        None,
    )?;
    Ok(super::PairEntry {
        a: a.model.clone(),
        b: b.model.clone(),
        paired: total,
        differing,
        entry,
    })
}
