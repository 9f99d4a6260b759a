//! A deterministic synthetic RIFT run: per-prompt and per-answer records shaped like the paper's results, for tests,
//! figures before real runs exist, and the 18.6 M-row benchmark. Same config, same records, on every machine.
//! [`ifscale_records`] is a small IFScale counterpart for table and report tests.
//!
//! Each model gets a skill in [0.55, 0.85]. Baseline prompts hold one question answered with that probability.
//! Linear prompts answer at depth d with probability `0.8·skill·exp(−d/400)` and may slip once (probability 0.4 per
//! prompt) after which answers are another question's with probability 0.7. Jumping prompts answer with probability
//! `0.35·skill·exp(−d/25)`, stop early with probability 0.3 (the rest is missing), and 40 % of their wrong answers are
//! another question's. 1 % of replies are empty and 2 % of jumping replies are truncated. Questions carry board
//! values (the same for every model, drawn from one mix for every structure; one in twenty has none), which do not
//! change how they are answered.

use std::fs::File;
use std::path::Path;

use polars::prelude::*;
use schema::rift::{AnswerScore, JudgeSource, PromptScore, ReplyOutcome, Structure, Verdict};
use serde::Serialize;

use crate::Error;
use crate::stats::SplitMix64;

/// What to generate.
#[derive(Debug, Clone, Serialize)]
pub struct SyntheticConfig {
    pub seed: u64,
    pub models: usize,
    /// Linear prompts per model, and as many jumping prompts.
    pub prompts_per_structure: usize,
    /// Single-question baseline prompts per model.
    pub baseline_prompts: usize,
    pub min_questions: u32,
    pub max_questions: u32,
}

impl SyntheticConfig {
    /// The paper's scale: 6 models × (10 000 linear + 10 000 jumping) prompts × 10–300 questions (≈ 155 on average),
    /// about 18.6 M answer rows.
    pub fn paper_scale(seed: u64) -> SyntheticConfig {
        SyntheticConfig {
            seed,
            models: 6,
            prompts_per_structure: 10_000,
            baseline_prompts: 0,
            min_questions: 10,
            max_questions: 300,
        }
    }
}

/// One simulated answer.
#[derive(Debug, Clone, Copy)]
struct SimAnswer {
    verdict: Verdict,
    wrong_question_of: Option<u32>,
}

struct SimPrompt {
    answers: Vec<SimAnswer>,
    outcome: ReplyOutcome,
    stopped_early: bool,
    prompt_tokens: u64,
}

pub fn model_name(i: usize) -> String {
    format!("synthetic/model-{}", i + 1)
}

fn skill(i: usize, models: usize) -> f64 {
    if models <= 1 {
        0.7
    } else {
        0.55 + 0.3 * i as f64 / (models - 1) as f64
    }
}

fn simulate(rng: &mut SplitMix64, skill: f64, structure: Structure, n: u32) -> SimPrompt {
    let mut answers = Vec::with_capacity(n as usize);
    let empty = rng.unit() < 0.01;
    let truncated = !empty && structure == Structure::Jumping && rng.unit() < 0.02;
    let stop_at = match structure {
        Structure::Jumping if rng.unit() < 0.3 => Some(rng.below(n as usize) as u32),
        _ => None,
    };
    let slip_at = match structure {
        Structure::Linear if rng.unit() < 0.4 => Some(rng.below(n as usize) as u32),
        _ => None,
    };
    for d in 0..n {
        let other = || if n > 1 { Some(((d + 1) % n) + 1) } else { None };
        let missing = empty || stop_at.is_some_and(|s| d >= s) || (truncated && d >= n / 2);
        let a = if missing {
            SimAnswer {
                verdict: Verdict::Missing,
                wrong_question_of: None,
            }
        } else {
            let (p, wq) = match structure {
                Structure::Baseline => (skill, 0.0),
                Structure::Linear => {
                    if slip_at.is_some_and(|s| d >= s) {
                        (0.1 * skill, 0.7)
                    } else {
                        (0.8 * skill * (-f64::from(d) / 400.0).exp(), 0.2)
                    }
                }
                Structure::Jumping => (0.35 * skill * (-f64::from(d) / 25.0).exp(), 0.4),
            };
            if rng.unit() < p {
                SimAnswer {
                    verdict: Verdict::Correct,
                    wrong_question_of: None,
                }
            } else if rng.unit() < wq {
                SimAnswer {
                    verdict: Verdict::Incorrect,
                    wrong_question_of: other(),
                }
            } else {
                SimAnswer {
                    verdict: Verdict::Incorrect,
                    wrong_question_of: None,
                }
            }
        };
        answers.push(a);
    }
    let outcome = if empty {
        ReplyOutcome::Empty
    } else if truncated {
        ReplyOutcome::Truncated
    } else {
        ReplyOutcome::Ok
    };
    let prompt_tokens = 60 + 28 * u64::from(n) + rng.below(200) as u64;
    SimPrompt {
        answers,
        outcome,
        stopped_early: stop_at.is_some(),
        prompt_tokens,
    }
}

/// Visits every simulated prompt in a fixed order: model, then baseline, linear, jumping prompts.
fn for_each_prompt(
    cfg: &SyntheticConfig,
    mut f: impl FnMut(usize, Structure, usize, u32, &SimPrompt),
) {
    for m in 0..cfg.models {
        let mut rng =
            SplitMix64::new(cfg.seed ^ (m as u64 + 1).wrapping_mul(0xA24B_AED4_963E_E407));
        let s = skill(m, cfg.models);
        for (structure, count) in [
            (Structure::Baseline, cfg.baseline_prompts),
            (Structure::Linear, cfg.prompts_per_structure),
            (Structure::Jumping, cfg.prompts_per_structure),
        ] {
            for p in 0..count {
                let n = if structure == Structure::Baseline {
                    1
                } else {
                    let span = cfg.max_questions.saturating_sub(cfg.min_questions) as usize + 1;
                    cfg.min_questions + rng.below(span) as u32
                };
                let sim = simulate(&mut rng, s, structure, n);
                f(m, structure, p, n, &sim);
            }
        }
    }
}

/// Today's board values, the low ones twice (each round has them).
const BOARD: [u32; 10] = [200, 400, 600, 800, 1000, 1200, 1600, 2000, 400, 800];

/// The normalised value of question `d` of prompt `p`: a hash of the seed, structure, prompt and depth (no draw of
/// the simulation's generator, so values leave every other number as it was); linear and jumping prompts draw from
/// the same mix, one question in twenty has no value.
fn sim_value(seed: u64, structure: Structure, p: usize, d: usize) -> Option<u32> {
    let mut rng = SplitMix64::new(
        seed ^ ((p as u64) << 20 | d as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ (structure as u64 + 1).wrapping_mul(0xD6E8_FEB8_6659_FD93),
    );
    if rng.below(20) == 0 {
        None
    } else {
        Some(BOARD[rng.below(BOARD.len())])
    }
}

fn prompt_id(structure: Structure, p: usize) -> String {
    format!("{}-{p:05}", crate::rift::structure_name(structure))
}

/// Generates typed records (for small configurations: everything is held in memory).
pub fn generate_records(cfg: &SyntheticConfig) -> (Vec<PromptScore>, Vec<AnswerScore>) {
    let mut prompts = Vec::new();
    let mut answers = Vec::new();
    for_each_prompt(cfg, |m, structure, p, n, sim| {
        let model = model_name(m);
        let id = prompt_id(structure, p);
        let correct = sim
            .answers
            .iter()
            .filter(|a| a.verdict == Verdict::Correct)
            .count() as u32;
        let missing = sim
            .answers
            .iter()
            .filter(|a| a.verdict == Verdict::Missing)
            .count() as u32;
        let flagged = |v: Verdict| {
            sim.answers
                .iter()
                .filter(|a| a.verdict == v && a.wrong_question_of.is_some())
                .count() as u32
        };
        let (wrong_question, wrong_question_correct) =
            (flagged(Verdict::Incorrect), flagged(Verdict::Correct));
        for (d, a) in sim.answers.iter().enumerate() {
            answers.push(AnswerScore {
                prompt_id: id.clone(),
                sample_index: 0,
                model: model.clone(),
                structure,
                depth: d as u32,
                question_number: d as u32 + 1,
                row: None,
                value_normalized: sim_value(cfg.seed, structure, p, d),
                expected: format!("answer {}", d + 1),
                given: match a.verdict {
                    Verdict::Missing => None,
                    Verdict::Correct | Verdict::Unjudged => Some(format!("answer {}", d + 1)),
                    Verdict::Incorrect => Some(
                        a.wrong_question_of
                            .map_or("<wrong & \"quoted\">".to_owned(), |q| format!("answer {q}")),
                    ),
                },
                verdict: a.verdict,
                judged_by: if a.verdict == Verdict::Missing {
                    JudgeSource::None
                } else {
                    JudgeSource::PreJudge
                },
                pre_judge: (a.verdict != Verdict::Missing).then_some(a.verdict == Verdict::Correct),
                judge_id: None,
                wrong_question_of: a.wrong_question_of,
            });
        }
        prompts.push(PromptScore {
            prompt_id: id.clone(),
            sample_index: 0,
            group_id: format!("group-{p:05}"),
            model,
            structure,
            num_questions: n,
            jump_k: (structure == Structure::Jumping).then_some(7),
            outcome: sim.outcome,
            answers_given: n - missing,
            correct,
            unjudged: 0,
            accuracy: f64::from(correct) / f64::from(n),
            wrong_question,
            wrong_question_correct,
            missing,
            extra: 0,
            stopped_early: sim.stopped_early,
            ran_long: sim.outcome == ReplyOutcome::Truncated,
            judged_by_llm: 0,
            pre_judge_only: 0,
            prompt_tokens: Some(sim.prompt_tokens),
            completion_tokens: Some(u64::from(n) * 6),
            reasoning_tokens: None,
        });
    });
    (prompts, answers)
}

/// A small IFScale run with one model per decay pattern, on N = 10, 20, … with three seeds:
/// `synthetic/threshold` holds until N = 200 and then loses 0.2 point per instruction, `synthetic/linear` loses 0.1
/// point per instruction, and `synthetic/exponential` decays to a floor of 35 % and stops at N = 250, where two of its
/// three samples failed; only `synthetic/threshold` reports reasoning tokens. Means carry a fixed wiggle and seeds spread around them, so every fit has a real residual.
pub fn ifscale_records() -> Vec<schema::ifscale::SampleScore> {
    use schema::ifscale::{MatchMode, SampleScore, SampleStatus};
    const WIGGLE: [f64; 3] = [0.31, -0.17, -0.11];
    let mut records = Vec::new();
    for (model, max_n) in [
        ("synthetic/threshold", 500),
        ("synthetic/linear", 500),
        ("synthetic/exponential", 250),
    ] {
        for n in (10..=max_n).step_by(10) {
            let x = f64::from(n);
            let mean = match model {
                "synthetic/threshold" if n <= 200 => 97.0 - 0.005 * x,
                "synthetic/threshold" => 96.0 - 0.2 * (x - 200.0),
                "synthetic/linear" => 92.0 - 0.1 * x,
                _ => 35.0 + 60.0 * (-(x - 10.0) / 60.0).exp(),
            } + WIGGLE[(n / 10 % 3) as usize];
            for seed in 0..3u64 {
                let failed = model == "synthetic/exponential" && n == 250 && seed > 0;
                let scored = |v: f64| (!failed).then_some(v);
                records.push(SampleScore {
                    id: format!("{model}-{n}-{seed}"),
                    model: model.to_owned(),
                    num_rules: n,
                    seed,
                    mode: MatchMode::Paper,
                    status: if failed {
                        SampleStatus::Failed
                    } else {
                        SampleStatus::Scored
                    },
                    accuracy: scored(mean + (seed as f64 - 1.0) * (0.37 + x / 180.0)),
                    exact: 0,
                    modified: 0,
                    omitted: 0,
                    omission_pct: scored(55.0 + 5.0 * seed as f64),
                    modification_pct: scored(45.0 - 5.0 * seed as f64),
                    primacy_ratio: scored(1.0 + x / 1000.0),
                    latency_s: scored(2.0 + x / 50.0),
                    output_tokens: (!failed).then_some(200 + u64::from(n) * 4),
                    coherence: scored(7.5 - x / 200.0),
                    attempts: if failed { 5 } else { 1 },
                    reasoning_tokens: (model == "synthetic/threshold")
                        .then_some(300 + u64::from(n) * 9),
                });
            }
        }
    }
    records
}

/// Rows per Parquet row group of [`write_answers_parquet`]: small enough that a reader decodes row groups in parallel
/// and holds few rows at a time, large enough that per-group overheads stay small.
const ROW_GROUP_ROWS: usize = 1 << 18;

/// Writes the canonical answer table (see [`crate::rift::ANSWER_COLUMNS`]) to a Parquet file, in row groups of about
/// [`ROW_GROUP_ROWS`] rows (whole prompts), and returns the number of rows. Memory stays at one row group's rows.
pub fn write_answers_parquet(cfg: &SyntheticConfig, path: &Path) -> Result<u64, Error> {
    let ctx = || path.display().to_string();
    let tmp = path.with_extension("parquet.tmp");
    let file = File::create(&tmp).map_err(|e| Error::Input {
        path: tmp.clone(),
        message: e.to_string(),
    })?;
    let schema = crate::rift::answer_schema();
    let mut writer = ParquetWriter::new(file)
        .batched(&schema)
        .map_err(Error::polars(ctx()))?;

    #[derive(Default)]
    struct Cols {
        model: Vec<String>,
        structure: Vec<&'static str>,
        prompt_id: Vec<String>,
        group: Vec<u32>,
        prompt: Vec<u32>,
        depth: Vec<u32>,
        correct: Vec<bool>,
        incorrect: Vec<bool>,
        unjudged: Vec<bool>,
        wrong: Vec<bool>,
        wrong_correct: Vec<bool>,
        value: Vec<Option<u32>>,
        llm: Vec<bool>,
    }
    let mut cols = Cols::default();
    let mut total = 0u64;
    let mut error = None;
    let (mut group, mut prompt) = (None::<(usize, Structure)>, 0u32);
    let mut group_code = 0u32;
    let flush = |cols: &mut Cols,
                 writer: &mut polars::io::parquet::write::BatchedWriter<File>|
     -> Result<(), Error> {
        let n = cols.depth.len();
        if n == 0 {
            return Ok(());
        }
        let c = std::mem::take(cols);
        let df = DataFrame::new(
            n,
            vec![
                Column::new("model".into(), c.model),
                Column::new("structure".into(), c.structure),
                Column::new("prompt_id".into(), c.prompt_id),
                Column::new("group".into(), c.group),
                Column::new("prompt".into(), c.prompt),
                Column::new("depth".into(), c.depth),
                Column::new("correct".into(), c.correct),
                Column::new("incorrect".into(), c.incorrect),
                Column::new("unjudged".into(), c.unjudged),
                Column::new("wrong_question".into(), c.wrong),
                Column::new("wrong_question_correct".into(), c.wrong_correct),
                Column::new("value_normalized".into(), c.value),
                Column::new("llm_judged".into(), c.llm),
            ],
        )
        .map_err(Error::polars(ctx()))?;
        writer.write_batch(&df).map_err(Error::polars(ctx()))
    };
    for_each_prompt(cfg, |m, structure, p, _n, sim| {
        if error.is_some() {
            return;
        }
        if cols.depth.len() >= ROW_GROUP_ROWS
            && let Err(e) = flush(&mut cols, &mut writer)
        {
            error = Some(e);
            return;
        }
        if group != Some((m, structure)) {
            if group.is_some() {
                group_code += 1;
            }
            group = Some((m, structure));
        }
        let model = model_name(m);
        let id = prompt_id(structure, p);
        for (d, a) in sim.answers.iter().enumerate() {
            cols.model.push(model.clone());
            cols.structure.push(crate::rift::structure_name(structure));
            cols.prompt_id.push(id.clone());
            cols.group.push(group_code);
            cols.prompt.push(prompt);
            cols.depth.push(d as u32);
            cols.correct.push(a.verdict == Verdict::Correct);
            cols.incorrect.push(a.verdict == Verdict::Incorrect);
            cols.unjudged.push(a.verdict == Verdict::Unjudged);
            cols.wrong
                .push(a.verdict == Verdict::Incorrect && a.wrong_question_of.is_some());
            cols.wrong_correct
                .push(a.verdict == Verdict::Correct && a.wrong_question_of.is_some());
            cols.value.push(sim_value(cfg.seed, structure, p, d));
            // The synthetic run has no LLM judge (its records say the pre-judge settled every answer).
            cols.llm.push(false);
        }
        prompt += 1;
        total += sim.answers.len() as u64;
    });
    if let Some(e) = error {
        return Err(e);
    }
    flush(&mut cols, &mut writer)?;
    writer.finish().map_err(Error::polars(ctx()))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::Input {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    Ok(total)
}
