//! RIFT prompts: baseline (one question), linear (1 → 2 → … → n → done) and jumping (step k modulo n).
//!
//! A multi-question prompt is fully determined by a [`PromptSpec`] `{seed, num, start_row, jumping,
//! max_jump_distance}` (the paper's Figure 2) and the prepared dataset: questions `start_row .. start_row + num`,
//! numbered 1..=num. The linear and the jumping version of one group share the questions and the group id.
//!
//! The jump step k is drawn from the prompt's own seed: the admissible steps are the k with
//! `2 <= k <= min(max_jump_distance, num - 2)` and `gcd(num, k) = 1`, in increasing order, and k is the one at
//! index `Mt19937::new(seed).random_interval(count - 1)`. Starting at question 1 and stepping by k modulo num
//! (1-based) visits every question once; the last one visited points to "done".
//!
//! A whole experiment is sampled from a [`RiftConfig`]: for each group, `num` is
//! `randint(num_min, num_max + 1)`, `start_row` is `random_interval(len - num)` and the prompt seed is
//! `next_u32()`, all from `Mt19937::new(config.seed)` in that order. Baselines cover every question of the
//! dataset, or a seeded uniform sample of `baseline-prompts` of them ([`baseline_rows`]).
//!
//! Each record carries its `schema::rift::PromptMeta` (group, structure, rows, traversal, expected answers) as
//! ride-along fields.

use std::path::PathBuf;

use schema::rift::{BENCHMARK, PromptMeta, Question, Structure};
use schema::{Message, PromptRecord, RequestParams};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::rng::Mt19937;

/// The arrow that ends every question line.
pub const ARROW: &str = "→";

/// Errors of building RIFT prompts.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "no admissible jump step for num = {num} and max_jump_distance = {max_jump_distance}: \
         need 2 <= k <= min(max_jump_distance, num - 2) with gcd(num, k) = 1"
    )]
    NoJumpStep { num: u32, max_jump_distance: u32 },
    #[error("prompt seed {0} is not below 2^32 (MT19937 takes 32-bit seeds)")]
    SeedTooLarge(u64),
    #[error("rows {start_row}..{end} are outside the dataset of {len} questions")]
    RowsOutOfRange {
        start_row: u64,
        end: u64,
        len: usize,
    },
    #[error("a prompt needs at least {min} questions, got num = {num}")]
    TooFewQuestions { num: u32, min: u32 },
    #[error("config: {0}")]
    Config(String),
}

/// Everything that determines one linear or jumping prompt (the paper's Figure 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromptSpec {
    pub seed: u64,
    pub num: u32,
    pub start_row: u64,
    pub jumping: bool,
    pub max_jump_distance: u32,
}

/// The RIFT experiment: how many prompts of each structure, their sizes, and the request settings.
///
/// Embedded as `[rift]` in the pipeline config. Prompt texts are files so users can change them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RiftConfig {
    /// Seed of the experiment sampler (MT19937, 32-bit).
    pub seed: u32,
    /// Prepared `questions.jsonl` (from `rift prep`), or a raw clue file in the JSON/CSV layout, which is
    /// prepared in memory without rephrasing.
    pub dataset: PathBuf,
    /// Number of linear prompts (group i gets a linear prompt when i < linear-prompts).
    pub linear_prompts: u32,
    /// Number of jumping prompts (group i gets a jumping prompt when i < jumping-prompts).
    pub jumping_prompts: u32,
    /// Single-question baseline prompts: absent means one per question of the dataset (the paper's baseline runs
    /// over the whole dataset); a count draws a seeded uniform sample of that many questions (rows in order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_prompts: Option<u32>,
    /// Smallest number of questions per prompt (the paper: 10).
    pub num_min: u32,
    /// Largest number of questions per prompt (the paper: 300; mean 155 with uniform sizes).
    pub num_max: u32,
    /// Largest jump step k (the paper's example: 18). The paper shows one example (54 questions, largest jump 18)
    /// and does not say how k is drawn; a fixed largest step is our assumption.
    pub max_jump_distance: u32,
    /// When set, a prompt's largest jump step is this fraction of its question count (at least 2) instead of
    /// `max-jump-distance` (e.g. 1/3 gives 18 for the paper's 54-question example).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_jump_fraction: Option<f64>,
    /// Token limit per reply (the paper: 81 920).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// System prompt of linear and jumping prompts (the paper's Appendix B).
    #[serde(default = "default_system_prompt")]
    pub system_prompt: PathBuf,
    /// System prompt of baseline prompts.
    #[serde(default = "default_baseline_system_prompt")]
    pub baseline_system_prompt: PathBuf,
}

fn default_system_prompt() -> PathBuf {
    PathBuf::from("configs/prompts/rift-system.txt")
}

fn default_baseline_system_prompt() -> PathBuf {
    PathBuf::from("configs/prompts/rift-baseline-system.txt")
}

/// The two system prompt texts (read by the caller from the config's paths).
#[derive(Debug, Clone, Copy)]
pub struct SystemPrompts<'a> {
    pub multi: &'a str,
    pub baseline: &'a str,
}

/// The admissible jump steps for `num` questions, in increasing order.
pub fn admissible_steps(num: u32, max_jump_distance: u32) -> Vec<u32> {
    let hi = max_jump_distance.min(num.saturating_sub(2));
    (2..=hi).filter(|&k| gcd(num, k) == 1).collect()
}

fn gcd(mut a: u32, mut b: u32) -> u32 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The jump step of a spec: None for linear prompts, the seed's pick among the admissible steps for jumping ones.
pub fn jump_step(spec: &PromptSpec) -> Result<Option<u32>, Error> {
    if !spec.jumping {
        return Ok(None);
    }
    let steps = admissible_steps(spec.num, spec.max_jump_distance);
    if steps.is_empty() {
        return Err(Error::NoJumpStep {
            num: spec.num,
            max_jump_distance: spec.max_jump_distance,
        });
    }
    let mut rng = Mt19937::from_seed_u64(spec.seed).ok_or(Error::SeedTooLarge(spec.seed))?;
    let i = rng.random_interval(steps.len() as u64 - 1) as usize;
    Ok(Some(steps[i]))
}

/// Question numbers (1-based) in answering order: 1, 2, …, n, or 1, 1 + k, 1 + 2k, … modulo n.
pub fn traversal(num: u32, jump_k: Option<u32>) -> Vec<u32> {
    let k = u64::from(jump_k.unwrap_or(1));
    let n = u64::from(num);
    (0..n).map(|j| ((j * k) % n) as u32 + 1).collect()
}

/// The user message: each question on its own line, numbered, ending in where to go next.
///
/// `questions[i]` is question number `i + 1`; `order` is the traversal.
pub fn user_prompt(questions: &[&str], order: &[u32]) -> String {
    let n = questions.len();
    let mut next: Vec<Option<u32>> = vec![None; n];
    for pair in order.windows(2) {
        next[pair[0] as usize - 1] = Some(pair[1]);
    }
    let mut out = String::new();
    for (i, q) in questions.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        match next[i] {
            Some(k) => out.push_str(&format!(
                "{}. {q} {ARROW} Now Answer Question Number {k}",
                i + 1
            )),
            None => out.push_str(&format!("{}. {q} {ARROW} You are done.", i + 1)),
        }
    }
    out
}

fn meta_to_extra(meta: &PromptMeta) -> Map<String, Value> {
    match serde_json::to_value(meta) {
        Ok(Value::Object(map)) => map,
        _ => unreachable!("PromptMeta serializes to an object"),
    }
}

/// Builds the linear or jumping prompt of one spec.
pub fn build_prompt(
    questions: &[Question],
    spec: &PromptSpec,
    group_id: &str,
    system: &str,
    params: &RequestParams,
) -> Result<PromptRecord, Error> {
    if spec.num < 2 {
        return Err(Error::TooFewQuestions {
            num: spec.num,
            min: 2,
        });
    }
    let end = spec.start_row + u64::from(spec.num);
    if end > questions.len() as u64 {
        return Err(Error::RowsOutOfRange {
            start_row: spec.start_row,
            end,
            len: questions.len(),
        });
    }
    let slice = &questions[spec.start_row as usize..end as usize];
    let jump_k = jump_step(spec)?;
    let order = traversal(spec.num, jump_k);
    let texts: Vec<&str> = slice.iter().map(|q| q.question.as_str()).collect();
    let user = user_prompt(&texts, &order);
    let at = |n: u32| &slice[n as usize - 1];
    let structure = if spec.jumping {
        Structure::Jumping
    } else {
        Structure::Linear
    };
    let meta = PromptMeta {
        benchmark: BENCHMARK.to_owned(),
        structure,
        group_id: group_id.to_owned(),
        seed: spec.seed,
        num: spec.num,
        start_row: spec.start_row,
        max_jump_distance: spec.max_jump_distance,
        jump_k,
        expected: order.iter().map(|&n| at(n).answer.clone()).collect(),
        questions: order.iter().map(|&n| at(n).question.clone()).collect(),
        rows: order.iter().map(|&n| at(n).row).collect(),
        values_normalized: order.iter().map(|&n| at(n).value_normalized).collect(),
        traversal: order,
    };
    Ok(PromptRecord {
        id: format!("rift-{group_id}-{}", structure.as_str()),
        messages: vec![Message::system(system), Message::user(user)],
        sample_index: 0,
        params: params.clone(),
        extra: meta_to_extra(&meta),
    })
}

/// Builds the single-question baseline prompt of one dataset row.
pub fn build_baseline(question: &Question, system: &str, params: &RequestParams) -> PromptRecord {
    let group_id = format!("r{:06}", question.row);
    let meta = PromptMeta {
        benchmark: BENCHMARK.to_owned(),
        structure: Structure::Baseline,
        group_id: group_id.clone(),
        seed: 0,
        num: 1,
        start_row: question.row,
        max_jump_distance: 0,
        jump_k: None,
        traversal: vec![1],
        expected: vec![question.answer.clone()],
        questions: vec![question.question.clone()],
        rows: vec![question.row],
        values_normalized: vec![question.value_normalized],
    };
    PromptRecord {
        id: format!("rift-baseline-{group_id}"),
        messages: vec![
            Message::system(system),
            Message::user(question.question.clone()),
        ],
        sample_index: 0,
        params: params.clone(),
        extra: meta_to_extra(&meta),
    }
}

/// The group specs an experiment samples (before structures are attached).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupDraw {
    pub group: u32,
    pub num: u32,
    pub start_row: u64,
    pub seed: u64,
}

/// Draws every group's `{num, start_row, seed}` from the config seed.
pub fn draw_groups(cfg: &RiftConfig, dataset_len: usize) -> Result<Vec<GroupDraw>, Error> {
    let groups = cfg.linear_prompts.max(cfg.jumping_prompts);
    if groups == 0 {
        return Ok(Vec::new());
    }
    if cfg.num_min < 2 || cfg.num_min > cfg.num_max {
        return Err(Error::Config(format!(
            "need 2 <= num-min <= num-max, got num-min = {} and num-max = {}",
            cfg.num_min, cfg.num_max
        )));
    }
    if u64::from(cfg.num_max) > dataset_len as u64 {
        return Err(Error::Config(format!(
            "num-max = {} exceeds the dataset's {dataset_len} questions",
            cfg.num_max
        )));
    }
    let mut rng = Mt19937::new(cfg.seed);
    let mut out = Vec::with_capacity(groups as usize);
    for group in 0..groups {
        let num = rng
            .randint(i64::from(cfg.num_min), i64::from(cfg.num_max) + 1)
            .expect("num range checked above") as u32;
        let start_row = rng.random_interval(dataset_len as u64 - u64::from(num));
        let seed = u64::from(rng.next_u32());
        out.push(GroupDraw {
            group,
            num,
            start_row,
            seed,
        });
    }
    Ok(out)
}

/// Samples a whole experiment: per group a linear then a jumping prompt (as the counts allow), then baselines.
pub fn build_experiment(
    questions: &[Question],
    cfg: &RiftConfig,
    system: SystemPrompts<'_>,
) -> Result<Vec<PromptRecord>, Error> {
    let mut out = Vec::new();
    for_each_prompt(questions, cfg, system, |p| {
        out.push(p);
        Ok::<(), Error>(())
    })?;
    Ok(out)
}

/// [`build_experiment`] one prompt at a time, in the same order, handing each to `emit` (which may write it
/// out), so a paper-scale experiment is never held in memory; returns how many prompts were emitted.
pub fn for_each_prompt<E: From<Error>>(
    questions: &[Question],
    cfg: &RiftConfig,
    system: SystemPrompts<'_>,
    mut emit: impl FnMut(PromptRecord) -> Result<(), E>,
) -> Result<usize, E> {
    let params = RequestParams {
        max_tokens: cfg.max_tokens,
        temperature: cfg.temperature,
        ..RequestParams::default()
    };
    if let Some(f) = cfg.max_jump_fraction
        && !(f > 0.0 && f < 1.0)
    {
        return Err(
            Error::Config(format!("max-jump-fraction = {f} must lie between 0 and 1")).into(),
        );
    }
    let draws = draw_groups(cfg, questions.len())?;
    let mut n = 0;
    for d in &draws {
        let group_id = format!("g{:05}", d.group);
        for (jumping, wanted) in [(false, cfg.linear_prompts), (true, cfg.jumping_prompts)] {
            if d.group >= wanted {
                continue;
            }
            let spec = PromptSpec {
                seed: d.seed,
                num: d.num,
                start_row: d.start_row,
                jumping,
                max_jump_distance: cfg.jump_limit(d.num),
            };
            let record = build_prompt(questions, &spec, &group_id, system.multi, &params)
                .map_err(|e| Error::Config(format!("group {group_id}: {e}")))?;
            emit(record)?;
            n += 1;
        }
    }
    for row in baseline_rows(cfg, questions.len())? {
        emit(build_baseline(&questions[row], system.baseline, &params))?;
        n += 1;
    }
    Ok(n)
}

/// The dataset rows that get a baseline prompt, in order: all of them, or a seeded uniform sample of
/// `baseline-prompts` (MT19937 seeded with `seed`, numpy's `choice(len, count, replace=False)`).
pub fn baseline_rows(cfg: &RiftConfig, len: usize) -> Result<Vec<usize>, Error> {
    match cfg.baseline_prompts {
        None => Ok((0..len).collect()),
        Some(count) if count as usize > len => Err(Error::Config(format!(
            "baseline-prompts = {count} exceeds the dataset's {len} questions (leave it out for all of them)"
        ))),
        Some(count) => {
            let mut rows = Mt19937::new(cfg.seed)
                .choice_without_replacement(len, count as usize)
                .ok_or_else(|| Error::Config(format!("cannot sample {count} of {len} rows")))?;
            rows.sort_unstable();
            Ok(rows)
        }
    }
}

impl RiftConfig {
    /// The largest jump step of a prompt of `num` questions: `max-jump-fraction` × num (at least 2) when set, else
    /// `max-jump-distance`.
    pub fn jump_limit(&self, num: u32) -> u32 {
        match self.max_jump_fraction {
            Some(f) => ((f * f64::from(num)).floor() as u32).max(2),
            None => self.max_jump_distance,
        }
    }

    /// The jump-step rule in words, for reports.
    pub fn jump_rule(&self) -> String {
        let limit = match self.max_jump_fraction {
            Some(f) => format!("{f} × n (at least 2)"),
            None => self.max_jump_distance.to_string(),
        };
        format!(
            "jump step k drawn uniformly from 2 ≤ k ≤ min({limit}, n − 2) with gcd(n, k) = 1 (our assumption: the paper \
             shows one example, n = 54 with largest jump 18, and does not say how k is drawn)"
        )
    }
}

/// How the baseline was drawn, for reports: "all 83 453 questions" or "a seeded uniform sample of …".
pub fn baseline_description(cfg: &RiftConfig, len: usize) -> String {
    match cfg.baseline_prompts {
        None => format!("all {len} questions of the dataset"),
        Some(n) => format!(
            "a uniform sample of {n} of the dataset's {len} questions (seed {})",
            cfg.seed
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figure_two_shape() {
        let qs = ["Q one?", "Q two?", "Q three?"];
        assert_eq!(
            user_prompt(&qs, &[1, 3, 2]),
            "1. Q one? → Now Answer Question Number 3\n2. Q two? → You are done.\n3. Q three? → Now Answer Question Number 2"
        );
        assert_eq!(
            user_prompt(&qs, &traversal(3, None)),
            "1. Q one? → Now Answer Question Number 2\n2. Q two? → Now Answer Question Number 3\n3. Q three? → You are done."
        );
    }

    #[test]
    fn steps() {
        assert_eq!(admissible_steps(10, 18), vec![3, 7]);
        assert_eq!(admissible_steps(54, 18), vec![5, 7, 11, 13, 17]);
        assert_eq!(admissible_steps(10, 2), Vec::<u32>::new());
        assert_eq!(traversal(10, Some(3)), vec![1, 4, 7, 10, 3, 6, 9, 2, 5, 8]);
        let spec = PromptSpec {
            seed: 36,
            num: 10,
            start_row: 0,
            jumping: true,
            max_jump_distance: 2,
        };
        let err = jump_step(&spec).unwrap_err().to_string();
        assert!(
            err.contains("no admissible jump step for num = 10 and max_jump_distance = 2"),
            "{err}"
        );
        let spec = PromptSpec {
            seed: 1 << 40,
            num: 10,
            start_row: 0,
            jumping: true,
            max_jump_distance: 9,
        };
        assert!(matches!(jump_step(&spec), Err(Error::SeedTooLarge(_))));
    }

    /// Every prime below 12 is a step for some n <= 300; max-jump-distance 11 covers all of 10..=300.
    #[test]
    fn every_size_has_a_step_from_eleven_on() {
        assert!((10..=300).all(|n| !admissible_steps(n, 11).is_empty()));
        assert!(admissible_steps(210, 10).is_empty());
    }
}
