//! RIFT: Jeopardy! preparation (with optional LLM rephrasing), the prompts of an experiment, one model's run, the
//! LLM judge for the answers the pre-judge cannot settle, and scoring with its per-(model, structure) summary.
//!
//! Each stage reads and writes files, so it can be rerun alone; model calls go through the inference client and
//! resume from its responses files. The summary is `analysis::rift`'s aggregation of the scores, the same one the
//! run's tables come from.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use analysis::rift::{OutcomeCounts, RiftSummary, StructureStats, WrongQuestion};
use inference_client::{Client, ModelConfig, RunSummary};
use prompt_gen::rift::{RiftConfig, SystemPrompts};
use schema::paths::ModelPaths;
use schema::rift::{JudgeVerdict, Question};
use schema::{PromptRecord, RequestParams};
use scoring::rift::{PreJudgeReport, ScoreOptions};

use crate::{Error, read_prompts, read_text};

/// Loads the dataset a config names: a prepared `questions.jsonl`, or a raw clue file prepared in memory.
pub fn load_dataset(path: &Path) -> Result<Vec<Question>, Error> {
    if path.extension().is_some_and(|e| e == "jsonl") {
        return jeopardy_prep::load_questions(path).map_err(|e| Error::Input(e.to_string()));
    }
    let prepared = jeopardy_prep::prepare_files(&[path.to_owned()], None)
        .map_err(|e| Error::Input(e.to_string()))?;
    tracing::info!(
        path = %path.display(),
        kept = prepared.questions.len(),
        dropped = prepared.skipped.len(),
        "Prepared a raw clue file in memory (no rephrasing)."
    );
    Ok(prepared.questions)
}

/// The paper's step 0: every clue rephrased by a model before clean-up.
#[derive(Debug, Clone, Copy)]
pub struct Rephrase<'a> {
    pub model: &'a ModelConfig,
    /// The rephrasing prompt ({category}, {clue}, {response}).
    pub template: &'a str,
    pub client: &'a Client,
}

/// `rift prep`: loads the clue files (rows numbered across them in order), optionally rephrases them (requests and
/// responses are written to `out_dir`), cleans them and writes `questions.jsonl`, `skipped.jsonl` and the summary.
pub fn prep(
    inputs: &[PathBuf],
    out_dir: &Path,
    rephrase: Option<&Rephrase<'_>>,
) -> Result<jeopardy_prep::Prepared, Error> {
    let rephrasings = match rephrase {
        None => None,
        Some(r) => {
            let mut clues = Vec::new();
            for p in inputs {
                clues
                    .extend(jeopardy_prep::load_clues(p).map_err(|e| Error::Input(e.to_string()))?);
            }
            let params = RequestParams {
                temperature: Some(0.0),
                max_tokens: Some(256),
                ..RequestParams::default()
            };
            let requests = jeopardy_prep::rephrase_requests(&clues, r.template, &params);
            let req_path = out_dir.join("rephrase-prompts.jsonl");
            let resp_path = out_dir.join("rephrase-responses.jsonl");
            schema::write_jsonl_atomic(&req_path, &requests)?;
            tracing::info!(requests = requests.len(), model = %r.model.name, "Rephrasing clues.");
            r.client.chat(r.model, &requests, &resp_path)?;
            Some(jeopardy_prep::parse_rephrasings(
                &schema::read_latest_responses(&resp_path)?,
            ))
        }
    };
    let prepared = jeopardy_prep::prepare_files(inputs, rephrasings.as_ref())
        .map_err(|e| Error::Input(e.to_string()))?;
    let paths = jeopardy_prep::write_outputs(&prepared, out_dir).map_err(|e| Error::Output {
        path: out_dir.to_owned(),
        message: e.to_string(),
    })?;
    tracing::info!(questions = %paths.questions.display(), skipped = %paths.skipped.display(), "Wrote the prepared dataset.");
    Ok(prepared)
}

/// `rift prompts`: samples the experiment of `cfg` and writes its prompts atomically; returns how many.
pub fn write_prompts(cfg: &RiftConfig, out: &Path) -> Result<usize, Error> {
    let questions = load_dataset(&cfg.dataset)?;
    let multi = read_text(&cfg.system_prompt)?;
    let baseline = read_text(&cfg.baseline_system_prompt)?;
    let prompts = prompt_gen::rift::build_experiment(
        &questions,
        cfg,
        SystemPrompts {
            multi: &multi,
            baseline: &baseline,
        },
    )
    .map_err(|e| Error::Input(e.to_string()))?;
    schema::write_jsonl_atomic(out, &prompts)?;
    Ok(prompts.len())
}

/// The first `limit` prompts of each structure, in order.
pub fn limit_per_structure(prompts: Vec<PromptRecord>, limit: usize) -> Vec<PromptRecord> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    prompts
        .into_iter()
        .filter(|p| {
            let s = p
                .extra
                .get("structure")
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_owned();
            let n = seen.entry(s).or_insert(0);
            *n += 1;
            *n <= limit
        })
        .collect()
}

/// `rift run`: one model over a prompts list through the inference client, into the responses file `out`.
/// Failed prompts are written (they score as failed replies) and a rerun retries them.
pub fn run(
    model: &ModelConfig,
    prompts: &[PromptRecord],
    out: &Path,
    client: &Client,
) -> Result<RunSummary, Error> {
    let s = client.chat(model, prompts, out)?;
    if s.failed > 0 {
        tracing::warn!(failed = s.failed, out = %out.display(), "Some prompts failed; they score as failed replies, and a rerun retries them.");
    }
    Ok(s)
}

/// What [`judge`] needs.
#[derive(Debug, Clone, Copy)]
pub struct Judge<'a> {
    pub judge: &'a ModelConfig,
    pub prompts: &'a Path,
    pub responses: &'a Path,
    /// The judge prompt ({question}, {expected}, {given}).
    pub template: &'a str,
    /// Also judge the answers the pre-judge settled (to measure their agreement).
    pub judge_settled: bool,
    /// Where judge prompts, judge responses and verdicts go.
    pub files: &'a ModelPaths,
    pub client: &'a Client,
}

/// `rift judge`: the pre-judge's open answers → judge prompts → judge model → verdicts. Returns the verdicts file.
pub fn judge(j: &Judge<'_>) -> Result<PathBuf, Error> {
    let prompts = read_prompts(j.prompts)?;
    let responses = schema::read_latest_responses(j.responses)?;
    let scored = scoring::rift::score(
        &prompts,
        &responses,
        None,
        ScoreOptions {
            judge_settled: j.judge_settled,
        },
    )?;
    let judge_prompts = scoring::rift::judge_prompts(
        &scored.judge_requests,
        j.template,
        // One word is asked for; the cap keeps a rambling judge cheap (its first word still counts).
        &RequestParams {
            max_tokens: Some(8),
            ..RequestParams::default()
        },
    );
    let resp_path = j.files.judge_responses();
    let verdict_path = j.files.verdicts();
    schema::write_jsonl_atomic(&j.files.judge_prompts(), &judge_prompts)?;
    tracing::info!(requests = judge_prompts.len(), judge = %j.judge.name, "Judging unsettled answers.");
    j.client.chat(j.judge, &judge_prompts, &resp_path)?;
    let verdicts = scoring::rift::parse_verdicts(&schema::read_latest_responses(&resp_path)?);
    schema::write_jsonl_atomic(&verdict_path, &verdicts)?;
    let usable = verdicts.iter().filter(|v| v.verdict.is_some()).count();
    tracing::info!(verdicts = verdicts.len(), usable, out = %verdict_path.display(), "Wrote verdicts.");
    Ok(verdict_path)
}

/// What [`score`] needs.
#[derive(Debug, Clone, Copy)]
pub struct Score<'a> {
    pub prompts: &'a Path,
    pub responses: &'a Path,
    /// The verdicts of [`judge`]; without them the pre-judge's verdicts stand (labelled `pre_judge_only`).
    pub verdicts: Option<&'a Path>,
    /// Emit judge requests for pre-judge-settled answers too.
    pub judge_settled: bool,
    /// Where answer scores, prompt scores, judge requests and the summary go.
    pub files: &'a ModelPaths,
}

/// What [`score`] found, per (model, structure): `analysis::rift`'s Table 2 rows, wrong-question shares and reply
/// outcomes, plus how the pre-judge fared.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ScoreSummary {
    pub table2: Vec<StructureStats>,
    pub wrong_question: Vec<WrongQuestion>,
    pub outcomes: Vec<OutcomeCounts>,
    pub pre_judge: PreJudgeReport,
    pub judge_requests: usize,
}

/// `rift score`: writes answer scores, prompt scores, judge requests and the summary (JSON and Markdown).
pub fn score(s: &Score<'_>) -> Result<ScoreSummary, Error> {
    let prompts = read_prompts(s.prompts)?;
    let responses = schema::read_latest_responses(s.responses)?;
    let verdicts: Option<Vec<JudgeVerdict>> = match s.verdicts {
        Some(p) => Some(schema::read_jsonl(p)?),
        None => None,
    };
    let scored = scoring::rift::score(
        &prompts,
        &responses,
        verdicts.as_deref(),
        ScoreOptions {
            judge_settled: s.judge_settled,
        },
    )?;
    schema::write_jsonl_atomic(&s.files.answer_scores(), &scored.answers)?;
    schema::write_jsonl_atomic(&s.files.prompt_scores(), &scored.prompts)?;
    schema::write_jsonl_atomic(&s.files.judge_requests(), &scored.judge_requests)?;
    let RiftSummary {
        table2,
        wrong_question,
        outcomes,
        ..
    } = analysis::rift::aggregate_records(
        &scored.answers,
        &scored.prompts,
        &analysis::rift::RiftConfig {
            token_bin_width: None,
        },
    )?;
    let summary = ScoreSummary {
        table2,
        wrong_question,
        outcomes,
        pre_judge: scoring::rift::pre_judge_report(
            &scored.answers,
            verdicts.as_deref().unwrap_or(&[]),
        ),
        judge_requests: scored.judge_requests.len(),
    };
    let json = serde_json::to_vec_pretty(&summary).map_err(|e| Error::Output {
        path: s.files.summary_json(),
        message: e.to_string(),
    })?;
    schema::write_atomic(&s.files.summary_json(), &json)?;
    schema::write_atomic(&s.files.summary_md(), summary.to_markdown().as_bytes())?;
    Ok(summary)
}

impl ScoreSummary {
    /// One row per (model, structure), then a line on the pre-judge.
    pub fn to_markdown(&self) -> String {
        let mut md = String::from(
            "| model | structure | prompts | mean accuracy (%) | median (%) | incorrect | wrong question (share of incorrect) | empty | malformed | truncated | failed | stopped early | ran long |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
        );
        let pct = |v: Option<f64>| analysis::tables::fmt_opt(v, 1);
        for t in &self.table2 {
            let same = |m: &str, s: &str| m == t.model && s == t.structure;
            let wq = self
                .wrong_question
                .iter()
                .find(|w| same(&w.model, &w.structure));
            let o = self.outcomes.iter().find(|o| same(&o.model, &o.structure));
            let count = |f: fn(&OutcomeCounts) -> i64| o.map_or(0, f);
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} | {} ({}) | {} | {} | {} | {} | {} | {} |",
                t.model,
                t.structure,
                t.n_prompts,
                pct(t.mean),
                pct(t.median),
                wq.map_or(0, |w| w.incorrect),
                wq.map_or(0, |w| w.wrong_question),
                wq.and_then(|w| w.share)
                    .map_or_else(|| "–".to_owned(), |s| format!("{s:.0}%")),
                count(|o| o.empty),
                count(|o| o.malformed),
                count(|o| o.truncated),
                count(|o| o.failed),
                count(|o| o.stopped_early),
                count(|o| o.ran_long),
            );
        }
        let p = &self.pre_judge;
        let share = |a: u64, b: u64| {
            if b == 0 {
                0.0
            } else {
                a as f64 / b as f64 * 100.0
            }
        };
        let _ = writeln!(
            md,
            "\nPre-judge: settled {} of {} answered pairs ({:.1}%); LLM judge settled {}; {} stand on the pre-judge alone; {} judge requests.",
            p.settled_by_pre_judge,
            p.answered,
            share(p.settled_by_pre_judge, p.answered),
            p.judged_by_llm,
            p.pre_judge_only,
            self.judge_requests
        );
        if p.both > 0 {
            let _ = writeln!(
                md,
                "Pre-judge vs LLM judge on {} pairs both judged: {} agree ({:.1}%).",
                p.both,
                p.agree,
                share(p.agree, p.both)
            );
        }
        md
    }
}
