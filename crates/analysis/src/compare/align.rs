//! Which items a run holds and whether two runs hold the same ones, from their prompt files: a comparison pairs
//! items by their stable ids (`ifscale-n010-s0`, `rift-g00001-linear`, …), and ids are positional, so the content
//! behind each id is checked too. What can differ, each named in the error: the vocabulary (its SHA-256), the seeds,
//! the template (its SHA-256, or the prompt text), the question set (questions, expected answers, dataset rows),
//! and the prompt parameters (densities, sampling, structure, number of questions, jump step, traversal).
//!
//! Then the per-model data the comparisons take: IFScale samples from `<run>/ifscale/scores.jsonl`, RIFT answers
//! from the run's answer tables (`analysis::rift::load_run`, the reader the tables use).

use std::collections::{BTreeMap, BTreeSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::Path;

use polars::prelude::*;
use schema::PromptRecord;
use schema::paths::RunPaths;

use super::rift::{PromptAnswers, Prompts, RIGHT, UNJUDGED, WRONG};
use crate::Error;
use crate::tables::{i64_col, str_col};

fn hash_of(value: &impl Hash) -> u64 {
    let mut h = DefaultHasher::new();
    value.hash(&mut h);
    h.finish()
}

fn messages_hash(p: &PromptRecord) -> u64 {
    hash_of(
        &p.messages
            .iter()
            .map(|m| (&m.role, &m.content))
            .collect::<Vec<_>>(),
    )
}

/// What identifies one IFScale prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IfscaleItem {
    pub num_rules: u32,
    pub seed: u64,
    pub sampling: String,
    pub keywords: u64,
    pub template_sha256: String,
    pub vocab_sha256: String,
    pub messages: u64,
}

/// What identifies one RIFT prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RiftItem {
    pub structure: String,
    pub group_id: String,
    pub seed: u64,
    /// num, start row, maximum jump distance, jump step and traversal, hashed.
    pub parameters: u64,
    /// Questions, expected answers and dataset rows, hashed.
    pub questions: u64,
    pub messages: u64,
}

fn bad(path: &Path, id: &str, e: impl std::fmt::Display) -> Error {
    Error::Input {
        path: path.to_owned(),
        message: format!("prompt {id}: {e}"),
    }
}

/// The IFScale items of a run (`<run>/ifscale/prompts.jsonl`), by prompt id; None when the run has no IFScale
/// prompts.
pub fn ifscale_items(run: &Path) -> Result<Option<BTreeMap<String, IfscaleItem>>, Error> {
    let path = RunPaths::new(run).ifscale_prompts();
    if !path.is_file() {
        return Ok(None);
    }
    let mut out = BTreeMap::new();
    for p in schema::read_jsonl::<PromptRecord>(&path)? {
        let meta: schema::ifscale::PromptMeta =
            serde_json::from_value(serde_json::Value::Object(p.extra.clone()))
                .map_err(|e| bad(&path, &p.id, e))?;
        let sampling = match meta.strata {
            Some(k) => format!("{:?} ({k} strata)", meta.sampling).to_lowercase(),
            None => format!("{:?}", meta.sampling).to_lowercase(),
        };
        out.insert(
            p.id.clone(),
            IfscaleItem {
                num_rules: meta.num_rules,
                seed: meta.seed,
                sampling,
                keywords: hash_of(&meta.keywords),
                template_sha256: meta.template_sha256,
                vocab_sha256: meta.vocab_sha256,
                messages: messages_hash(&p),
            },
        );
    }
    Ok(Some(out))
}

/// The RIFT items of a run (`<run>/rift/prompts.jsonl`, read in chunks), by prompt key (the id, `#<sample
/// index>` appended for repeated samples, as in the answer table); None when the run has no RIFT prompts.
pub fn rift_items(run: &Path) -> Result<Option<BTreeMap<String, RiftItem>>, Error> {
    let path = RunPaths::new(run).rift_prompts();
    if !path.is_file() {
        return Ok(None);
    }
    let mut out = BTreeMap::new();
    schema::read_jsonl_chunks::<PromptRecord, Error>(&path, 1024, |batch| {
        for p in batch {
            let line = schema::rift::PromptLine::of(&p).map_err(|e| bad(&path, &p.id, e))?;
            let m = &line.meta;
            out.insert(
                crate::rift::prompt_key(&p.id, p.sample_index),
                RiftItem {
                    structure: crate::rift::structure_name(m.structure).to_owned(),
                    group_id: m.group_id.clone(),
                    seed: m.seed,
                    parameters: hash_of(&(
                        m.num,
                        m.start_row,
                        m.max_jump_distance,
                        m.jump_k,
                        &m.traversal,
                    )),
                    questions: hash_of(&(&m.questions, &m.expected, &m.rows)),
                    messages: messages_hash(&p),
                },
            );
        }
        Ok(())
    })?;
    Ok(Some(out))
}

fn list<T: std::fmt::Display>(values: &BTreeSet<T>) -> String {
    let v: Vec<String> = values.iter().map(ToString::to_string).collect();
    if v.len() > 8 {
        format!("{}, … ({} in all)", v[..8].join(", "), v.len())
    } else {
        v.join(", ")
    }
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

/// What differs between the IFScale items of two runs, one phrase per difference (empty when they are the same).
pub fn ifscale_differences(
    a: &BTreeMap<String, IfscaleItem>,
    b: &BTreeMap<String, IfscaleItem>,
) -> Vec<String> {
    let mut out = Vec::new();
    let set = |m: &BTreeMap<String, IfscaleItem>, f: fn(&IfscaleItem) -> String| {
        m.values().map(f).collect::<BTreeSet<String>>()
    };
    let vocab = (
        set(a, |i| i.vocab_sha256.clone()),
        set(b, |i| i.vocab_sha256.clone()),
    );
    if vocab.0 != vocab.1 {
        let s = |v: &BTreeSet<String>| v.iter().map(|x| short(x)).collect::<Vec<_>>().join(", ");
        out.push(format!(
            "vocabulary (SHA-256 {} vs {})",
            s(&vocab.0),
            s(&vocab.1)
        ));
    }
    let seeds =
        |m: &BTreeMap<String, IfscaleItem>| m.values().map(|i| i.seed).collect::<BTreeSet<_>>();
    if seeds(a) != seeds(b) {
        out.push(format!(
            "seeds ({} vs {})",
            list(&seeds(a)),
            list(&seeds(b))
        ));
    }
    let template = (
        set(a, |i| i.template_sha256.clone()),
        set(b, |i| i.template_sha256.clone()),
    );
    if template.0 != template.1 {
        let s = |v: &BTreeSet<String>| v.iter().map(|x| short(x)).collect::<Vec<_>>().join(", ");
        out.push(format!(
            "template (SHA-256 {} vs {})",
            s(&template.0),
            s(&template.1)
        ));
    }
    let grid = |m: &BTreeMap<String, IfscaleItem>| {
        m.values().map(|i| i.num_rules).collect::<BTreeSet<_>>()
    };
    if grid(a) != grid(b) {
        out.push(format!(
            "prompt parameters (densities {} vs {})",
            list(&grid(a)),
            list(&grid(b))
        ));
    }
    let sampling = (
        set(a, |i| i.sampling.clone()),
        set(b, |i| i.sampling.clone()),
    );
    if sampling.0 != sampling.1 {
        out.push(format!(
            "prompt parameters (sampling {} vs {})",
            list(&sampling.0),
            list(&sampling.1)
        ));
    }
    if !out.is_empty() {
        return out;
    }
    // Same settings: the same ids must hold the same keyword lists and text.
    let (only_a, only_b) = one_sided(a, b);
    if only_a + only_b > 0 {
        out.push(format!(
            "prompt set ({only_a} prompts only in the first, {only_b} only in the second)"
        ));
    }
    let common = || a.iter().filter_map(|(k, x)| b.get(k).map(|y| (x, y)));
    let params = common()
        .filter(|(x, y)| (x.num_rules, x.seed) != (y.num_rules, y.seed))
        .count();
    if params > 0 {
        out.push(format!(
            "prompt parameters ({params} prompts with another N or seed under the same id)"
        ));
    }
    let keywords = common().filter(|(x, y)| x.keywords != y.keywords).count();
    if keywords > 0 {
        out.push(format!(
            "vocabulary ({keywords} prompts with other keyword lists)"
        ));
    }
    let text = common().filter(|(x, y)| x.messages != y.messages).count();
    if text > 0 {
        out.push(format!("template ({text} prompts with another text)"));
    }
    out
}

fn one_sided<T>(a: &BTreeMap<String, T>, b: &BTreeMap<String, T>) -> (usize, usize) {
    (
        a.keys().filter(|k| !b.contains_key(*k)).count(),
        b.keys().filter(|k| !a.contains_key(*k)).count(),
    )
}

/// What differs between the RIFT items of two runs (empty when they are the same).
pub fn rift_differences(
    a: &BTreeMap<String, RiftItem>,
    b: &BTreeMap<String, RiftItem>,
) -> Vec<String> {
    let mut out = Vec::new();
    let counts = |m: &BTreeMap<String, RiftItem>| {
        let mut c: BTreeMap<&str, usize> = BTreeMap::new();
        for i in m.values() {
            *c.entry(i.structure.as_str()).or_default() += 1;
        }
        c.iter()
            .map(|(s, n)| format!("{n} {s}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (only_a, only_b) = one_sided(a, b);
    if only_a + only_b > 0 {
        out.push(format!(
            "prompt parameters (prompts {} vs {}; {only_a} only in the first, {only_b} only in the second)",
            counts(a),
            counts(b)
        ));
    }
    let common = || a.iter().filter_map(|(k, x)| b.get(k).map(|y| (x, y)));
    let seeds = common().filter(|(x, y)| x.seed != y.seed).count();
    if seeds > 0 {
        out.push(format!("seeds ({seeds} prompts with another seed)"));
    }
    let questions = common().filter(|(x, y)| x.questions != y.questions).count();
    if questions > 0 {
        out.push(format!(
            "question set ({questions} prompts ask other questions)"
        ));
    }
    let params = common()
        .filter(|(x, y)| {
            (&x.structure, &x.group_id, x.parameters) != (&y.structure, &y.group_id, y.parameters)
        })
        .count();
    if params > 0 {
        out.push(format!(
            "prompt parameters ({params} prompts with another structure, size, jump step or traversal)"
        ));
    }
    if out.is_empty() {
        let text = common().filter(|(x, y)| x.messages != y.messages).count();
        if text > 0 {
            out.push(format!("template ({text} prompts with another text)"));
        }
    }
    out
}

/// Every SampleScore of a run's `ifscale/scores.jsonl`; None when the run has none.
pub fn ifscale_scores(run: &Path) -> Result<Option<Vec<schema::ifscale::SampleScore>>, Error> {
    let path = RunPaths::new(run).ifscale_scores();
    if !path.is_file() {
        return Ok(None);
    }
    Ok(Some(schema::read_jsonl(&path)?))
}

/// Whether a run holds RIFT answers.
pub fn has_rift_answers(run: &Path) -> bool {
    let paths = RunPaths::new(run);
    paths.rift_answer_scores().is_file() || paths.rift_answer_tables().is_file()
}

/// The run's RIFT answer judge and its control items (`judge-check.json`), when it was checked.
pub fn rift_judge(run: &Path) -> Result<Option<super::rift::RiftJudge>, Error> {
    let checks = schema::judge_check::JudgeCheckFile::read(&RunPaths::new(run).judge_check())?;
    Ok(checks.and_then(|c| {
        c.of(schema::judge::JudgeRole::RiftAnswers)
            .map(|c| super::rift::RiftJudge {
                name: c.judge.clone(),
                calibration: crate::judge_correction::Calibration::from_check(c),
            })
    }))
}

/// The models of a run's RIFT answers.
pub fn rift_models(run: &Path) -> Result<Vec<String>, Error> {
    if !has_rift_answers(run) {
        return Ok(Vec::new());
    }
    let (answers, _) =
        crate::rift::load_run(&RunPaths::new(run).bench(schema::paths::Bench::Rift))?;
    let df = answers
        .select([col("model").unique()])
        .collect()
        .map_err(Error::polars("RIFT models"))?;
    let mut models = str_col(&df, "model")?;
    models.sort();
    Ok(models)
}

/// One model's RIFT answers in a run, per prompt, with each prompt's question set from `items` (the prompt key
/// itself when the prompt file does not list it).
pub fn rift_prompts(
    run: &Path,
    model: &str,
    items: Option<&BTreeMap<String, RiftItem>>,
) -> Result<Prompts, Error> {
    let (answers, _) =
        crate::rift::load_run(&RunPaths::new(run).bench(schema::paths::Bench::Rift))?;
    let df = answers
        .filter(col("model").eq(lit(model)))
        .select([
            col("prompt_id"),
            col("structure"),
            col("depth"),
            col("correct"),
            col("unjudged"),
            col("llm_judged"),
        ])
        .collect()
        .map_err(Error::polars(format!("RIFT answers of {model}")))?;
    let ids = str_col(&df, "prompt_id")?;
    let structures = str_col(&df, "structure")?;
    let depth = i64_col(&df, "depth")?;
    let flag = |name: &str| -> Result<Vec<bool>, Error> {
        let c = df
            .column(name)
            .and_then(|c| {
                c.bool()
                    .map(|b| b.iter().map(|v| v.unwrap_or(false)).collect())
            })
            .map_err(Error::polars(format!("column {name}")))?;
        Ok(c)
    };
    let (correct, unjudged, llm) = (flag("correct")?, flag("unjudged")?, flag("llm_judged")?);
    let mut out = Prompts::new();
    for i in 0..df.height() {
        let d = usize::try_from(depth[i].unwrap_or_default()).unwrap_or(0);
        let p = out.entry(ids[i].clone()).or_insert_with(|| PromptAnswers {
            structure: structures[i].clone(),
            group: items
                .and_then(|m| m.get(&ids[i]))
                .map_or_else(|| ids[i].clone(), |it| it.group_id.clone()),
            verdicts: Vec::new(),
            llm: Vec::new(),
        });
        if p.verdicts.len() <= d {
            p.verdicts.resize(d + 1, UNJUDGED);
            p.llm.resize(d + 1, false);
        }
        p.llm[d] = llm[i];
        p.verdicts[d] = if unjudged[i] {
            UNJUDGED
        } else if correct[i] {
            RIGHT
        } else {
            WRONG
        };
    }
    Ok(out)
}
