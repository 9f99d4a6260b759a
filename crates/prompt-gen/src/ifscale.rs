//! IFScale density prompts: N keywords drawn from a vocabulary, one "include the exact word" constraint each,
//! rendered into a report-writing template.
//!
//! Two ways to draw the keywords:
//! - [`SamplingMode::Paper`] reproduces the released code: `DataFrame.sample(n=N, random_state=seed)` over the
//!   vocabulary file, i.e. numpy's legacy `RandomState(seed).permutation(len)[:N]`, so one seed's lists are
//!   nested prefixes of each other;
//! - [`SamplingMode::Stratified`] follows the paper's text: the vocabulary is cut into quantile strata of its
//!   difficulty scores, N is split over the strata in proportion to their sizes (largest remainders), each stratum
//!   contributes a seeded draw, and the picks are shuffled into prompt order. Same seed, same list.
//!
//! A `Vocabulary` is one term per line or the project's TSV; a `Template` holds `{{constraints}}` and `{{count}}` (the
//! project's is `configs/prompts/ifscale-report.txt`); `IfscaleConfig` is the config's `[ifscale]` section.
//! `build_prompts` gives one `PromptRecord` per (N, seed), id `ifscale-n{N:03}-s{seed}`, with its
//! `schema::ifscale::PromptMeta` riding along.

use std::path::PathBuf;

use schema::ifscale::{ConstraintListRule, PromptMeta, SamplingMode};
use schema::{Message, PromptRecord, RequestParams};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::rng::Mt19937;

/// The `benchmark` field of every IFScale prompt record.
pub const BENCHMARK: &str = "ifscale";
/// Where the numbered constraint lines go in a template (required, once).
pub const CONSTRAINTS_PLACEHOLDER: &str = "{{constraints}}";
/// Replaced by the number of constraints (optional).
pub const COUNT_PLACEHOLDER: &str = "{{count}}";

/// Errors from reading a vocabulary or template, or from an unusable config.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A malformed vocabulary line: source name, 1-based line, what is wrong.
    #[error("{source_name}:{line}: {message}")]
    Vocab {
        source_name: String,
        line: usize,
        message: String,
    },
    #[error("{source_name}: {message}")]
    Template {
        source_name: String,
        message: String,
    },
    /// A config field with an unusable value.
    #[error("ifscale config: field `{field}`: {message}")]
    Config {
        field: &'static str,
        message: String,
    },
}

/// The IFScale section of an experiment config (`[ifscale]` in `configs/default.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct IfscaleConfig {
    /// Instruction densities N (the paper: 10, 20, …, 500).
    pub grid: Vec<u32>,
    /// Sampling seeds (the paper: 0–4); numpy accepts seeds below 2^32.
    pub seeds: Vec<u32>,
    /// `paper` (the released code's sampler) or `stratified` (difficulty strata; needs a vocabulary with difficulties).
    #[schemars(with = "SamplingModeSchema")]
    pub sampling: SamplingMode,
    /// Number of difficulty strata for `stratified` sampling.
    #[serde(default = "default_strata")]
    pub strata: u32,
    /// The vocabulary: one term per line, or the project's TSV (`term`, `difficulty`, … with a header row).
    /// A `--vocab` flag overrides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vocab: Option<PathBuf>,
    /// The prompt template: `{{constraints}}` marks the numbered constraint list, `{{count}}` the number of constraints.
    pub template: PathBuf,
    /// `max_tokens` of each generation request (unset: the model's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Sampling temperature of each generation request (unset: the model's default, as in the paper).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Which reading of the paper's constraint-list retry rule ("≥10 comma-separated single words") rejects a
    /// reply; the paper does not say, so the choice is ours: `whole-reply` (the default: the whole reply is such a
    /// list) or `run-in-report` (also a run of ten or more comma-separated bare words anywhere in the reply; see
    /// `scoring::ifscale::longest_bare_word_run`).
    #[serde(default)]
    #[schemars(with = "ConstraintListRuleSchema")]
    pub constraint_list: ConstraintListRule,
    /// Attempts whose coherence score is below this are rejected (the paper: 6).
    #[serde(default = "default_coherence_threshold")]
    pub coherence_threshold: u8,
    /// Generation attempts per sample before it is recorded as failed (the paper: 10).
    #[serde(default = "default_max_attempts")]
    pub max_attempts: u32,
    /// What is scored: `whole` (the answer as given, as the published analysis did; the default) or `report`
    /// (only the `<report>…</report>` span the template asks for).
    #[serde(default)]
    pub score_span: ScoreSpan,
}

/// Which part of a generation is scored.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum ScoreSpan {
    /// The whole answer, as the published analysis scored the generated text.
    #[default]
    Whole,
    /// Only the text between `<report>` and `</report>` (see `scoring::ifscale::report_span`).
    Report,
}

/// JSON-schema stand-in for [`SamplingMode`], which lives in `schema` (no schemars there).
#[derive(schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[allow(dead_code)]
enum SamplingModeSchema {
    Paper,
    Stratified,
}

/// JSON-schema stand-in for [`ConstraintListRule`], which lives in `schema` (no schemars there).
#[derive(schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[allow(dead_code)]
enum ConstraintListRuleSchema {
    /// The whole reply is ten or more comma-separated bare words (the default).
    WholeReply,
    /// Also a run of ten or more comma-separated bare words anywhere in the reply.
    RunInReport,
}

fn default_strata() -> u32 {
    5
}

fn default_coherence_threshold() -> u8 {
    6
}

fn default_max_attempts() -> u32 {
    10
}

impl IfscaleConfig {
    /// Checks the values serde cannot: non-empty grid and seeds without duplicates, ranges of the numbers.
    pub fn validate(&self) -> Result<(), Error> {
        let bad = |field, message: String| Err(Error::Config { field, message });
        if self.grid.is_empty() {
            return bad("grid", "needs at least one density".to_owned());
        }
        if self.grid.contains(&0) {
            return bad("grid", "densities must be at least 1".to_owned());
        }
        if let Some(n) = first_duplicate(&self.grid) {
            return bad("grid", format!("density {n} appears twice"));
        }
        if self.seeds.is_empty() {
            return bad("seeds", "needs at least one seed".to_owned());
        }
        if let Some(s) = first_duplicate(&self.seeds) {
            return bad("seeds", format!("seed {s} appears twice"));
        }
        if self.strata == 0 {
            return bad("strata", "must be at least 1".to_owned());
        }
        if !(1..=10).contains(&self.coherence_threshold) {
            return bad(
                "coherence-threshold",
                format!("must be 1–10, got {}", self.coherence_threshold),
            );
        }
        if self.max_attempts == 0 {
            return bad("max-attempts", "must be at least 1".to_owned());
        }
        if self.max_tokens == Some(0) {
            return bad("max-tokens", "must be at least 1".to_owned());
        }
        if let Some(t) = self.temperature
            && !(t.is_finite() && t >= 0.0)
        {
            return bad(
                "temperature",
                format!("must be a non-negative number, got {t}"),
            );
        }
        Ok(())
    }
}

fn first_duplicate(values: &[u32]) -> Option<u32> {
    let mut seen = std::collections::HashSet::new();
    values.iter().copied().find(|v| !seen.insert(*v))
}

/// One vocabulary entry.
#[derive(Debug, Clone, PartialEq)]
pub struct VocabTerm {
    pub term: String,
    /// Generation difficulty (higher is harder), when the vocabulary file has it.
    pub difficulty: Option<f64>,
}

/// A keyword vocabulary in file order (the order the paper's sampler permutes).
#[derive(Debug, Clone, PartialEq)]
pub struct Vocabulary {
    pub terms: Vec<VocabTerm>,
    /// SHA-256 of the file's bytes.
    pub sha256: String,
}

impl Vocabulary {
    /// Parses either layout: one term per line (the paper's `vocab.txt`; blank lines skipped, surrounding
    /// whitespace trimmed) or a TSV whose header row starts with `term` and may have a `difficulty` column.
    ///
    /// `source_name` (usually the path) names the file in errors. Duplicate or empty terms are errors.
    pub fn parse(bytes: &[u8], source_name: &str) -> Result<Vocabulary, Error> {
        let err = |line, message: String| Error::Vocab {
            source_name: source_name.to_owned(),
            line,
            message,
        };
        let text = std::str::from_utf8(bytes).map_err(|e| err(0, format!("not UTF-8: {e}")))?;
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.trim_end_matches('\r')));
        let first = lines.clone().find(|(_, l)| !l.trim().is_empty());
        let is_tsv =
            first.is_some_and(|(_, l)| l.split('\t').next().map(str::trim) == Some("term"));
        let mut terms = Vec::new();
        if is_tsv {
            let (_, header) = lines.find(|(_, l)| !l.trim().is_empty()).unwrap_or((1, ""));
            let columns: Vec<&str> = header.split('\t').map(str::trim).collect();
            let difficulty_col = columns.iter().position(|c| *c == "difficulty");
            for (line, l) in lines {
                if l.trim().is_empty() {
                    continue;
                }
                let fields: Vec<&str> = l.split('\t').collect();
                if fields.len() != columns.len() {
                    return Err(err(
                        line,
                        format!("{} fields, the header has {}", fields.len(), columns.len()),
                    ));
                }
                let term = fields[0].trim().to_owned();
                let difficulty = match difficulty_col.map(|c| fields[c].trim()) {
                    None | Some("") => None,
                    Some(v) => match v.parse::<f64>() {
                        Ok(d) if d.is_finite() => Some(d),
                        _ => {
                            return Err(err(
                                line,
                                format!("field `difficulty`: not a finite number: {v:?}"),
                            ));
                        }
                    },
                };
                terms.push((line, VocabTerm { term, difficulty }));
            }
        } else {
            for (line, l) in lines {
                let term = l.trim();
                if !term.is_empty() {
                    terms.push((
                        line,
                        VocabTerm {
                            term: term.to_owned(),
                            difficulty: None,
                        },
                    ));
                }
            }
        }
        let mut seen = std::collections::HashMap::new();
        for (line, t) in &terms {
            if t.term.is_empty() {
                return Err(err(*line, "field `term` is empty".to_owned()));
            }
            if let Some(prev) = seen.insert(t.term.as_str(), *line) {
                return Err(err(
                    *line,
                    format!("term {:?} already appears on line {prev}", t.term),
                ));
            }
        }
        if terms.is_empty() {
            return Err(err(0, "no terms".to_owned()));
        }
        Ok(Vocabulary {
            terms: terms.into_iter().map(|(_, t)| t).collect(),
            sha256: schema::sha256_hex(bytes),
        })
    }

    pub fn len(&self) -> usize {
        self.terms.len()
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }
}

/// A prompt template with its placeholders checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    text: String,
    /// SHA-256 of the template file's bytes.
    pub sha256: String,
}

impl Template {
    /// Checks that `{{constraints}}` appears exactly once and that no other `{{…}}` placeholder than `{{count}}` is used.
    pub fn parse(bytes: &[u8], source_name: &str) -> Result<Template, Error> {
        let err = |message: String| Error::Template {
            source_name: source_name.to_owned(),
            message,
        };
        let text = std::str::from_utf8(bytes).map_err(|e| err(format!("not UTF-8: {e}")))?;
        let count = text.matches(CONSTRAINTS_PLACEHOLDER).count();
        if count != 1 {
            return Err(err(format!(
                "needs exactly one {CONSTRAINTS_PLACEHOLDER} placeholder, found {count}"
            )));
        }
        let mut rest = text;
        while let Some(start) = rest.find("{{") {
            let tail = &rest[start..];
            let end = tail
                .find("}}")
                .ok_or_else(|| err("a `{{` is never closed".to_owned()))?;
            let name = &tail[..end + 2];
            if name != CONSTRAINTS_PLACEHOLDER && name != COUNT_PLACEHOLDER {
                return Err(err(format!(
                    "unknown placeholder {name} (known: {CONSTRAINTS_PLACEHOLDER}, {COUNT_PLACEHOLDER})"
                )));
            }
            rest = &tail[end + 2..];
        }
        Ok(Template {
            text: text.to_owned(),
            sha256: schema::sha256_hex(bytes),
        })
    }

    /// The prompt text for keywords in prompt order: one line `i. Include the exact word: 'kw'.` each.
    pub fn render(&self, keywords: &[&str]) -> String {
        let mut list = String::new();
        for (i, kw) in keywords.iter().enumerate() {
            if i > 0 {
                list.push('\n');
            }
            list.push_str(&constraint_line(i + 1, kw));
        }
        self.text
            .replace(COUNT_PLACEHOLDER, &keywords.len().to_string())
            .replace(CONSTRAINTS_PLACEHOLDER, &list)
    }
}

/// One numbered constraint line (`number` is 1-based).
pub fn constraint_line(number: usize, keyword: &str) -> String {
    format!("{number}. Include the exact word: '{keyword}'.")
}

/// The id of the prompt for density `n` and `seed`.
pub fn prompt_id(n: u32, seed: u32) -> String {
    format!("ifscale-n{n:03}-s{seed}")
}

/// Vocabulary indices of the `n` keywords for `seed`, in prompt order.
pub fn sample_indices(
    vocab: &Vocabulary,
    n: usize,
    seed: u32,
    mode: SamplingMode,
    strata: u32,
) -> Result<Vec<usize>, Error> {
    if n > vocab.len() {
        return Err(Error::Config {
            field: "grid",
            message: format!("density {n} exceeds the vocabulary's {} terms", vocab.len()),
        });
    }
    match mode {
        SamplingMode::Paper => {
            let mut rng = Mt19937::new(seed);
            Ok(rng
                .choice_without_replacement(vocab.len(), n)
                .unwrap_or_default())
        }
        SamplingMode::Stratified => stratified(vocab, n, seed, strata),
    }
}

fn stratified(vocab: &Vocabulary, n: usize, seed: u32, strata: u32) -> Result<Vec<usize>, Error> {
    let mut scored = Vec::with_capacity(vocab.len());
    for (i, t) in vocab.terms.iter().enumerate() {
        let Some(d) = t.difficulty else {
            return Err(Error::Config {
                field: "sampling",
                message: format!(
                    "stratified sampling needs a difficulty for every term; {:?} has none (use the TSV vocabulary)",
                    t.term
                ),
            });
        };
        scored.push((d, i));
    }
    // Easiest first; equal difficulties keep file order.
    scored.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let len = scored.len();
    let k = (strata as usize).clamp(1, len);
    let bounds: Vec<usize> = (0..=k).map(|h| h * len / k).collect();
    let sizes: Vec<usize> = bounds.windows(2).map(|w| w[1] - w[0]).collect();
    let quotas = allocate(n, &sizes);
    let mut rng = Mt19937::new(seed);
    let mut picks = Vec::with_capacity(n);
    for h in 0..k {
        let stratum = &scored[bounds[h]..bounds[h + 1]];
        let order = rng.permutation(stratum.len());
        picks.extend(order[..quotas[h]].iter().map(|&j| stratum[j].1));
    }
    rng.shuffle(&mut picks);
    Ok(picks)
}

/// Proportional allocation of `n` over strata of the given sizes: floors first, then one more to the strata with the
/// largest remainders (ties to the earlier stratum). Never exceeds a stratum's size when `n <= sum(sizes)`.
fn allocate(n: usize, sizes: &[usize]) -> Vec<usize> {
    let total: usize = sizes.iter().sum();
    if total == 0 {
        return vec![0; sizes.len()];
    }
    let mut quotas: Vec<usize> = sizes.iter().map(|&s| n * s / total).collect();
    let mut left = n - quotas.iter().sum::<usize>();
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by(|&a, &b| {
        ((n * sizes[b]) % total)
            .cmp(&((n * sizes[a]) % total))
            .then(a.cmp(&b))
    });
    for h in order {
        if left == 0 {
            break;
        }
        if quotas[h] < sizes[h] {
            quotas[h] += 1;
            left -= 1;
        }
    }
    quotas
}

/// Every prompt of the grid: densities in config order, seeds within each density.
///
/// `cfg` is validated first. Each record holds one user message, the request parameters from the config and the
/// [`PromptMeta`] fields.
pub fn build_prompts(
    vocab: &Vocabulary,
    template: &Template,
    cfg: &IfscaleConfig,
) -> Result<Vec<PromptRecord>, Error> {
    cfg.validate()?;
    let params = RequestParams {
        max_tokens: cfg.max_tokens,
        temperature: cfg.temperature,
        ..RequestParams::default()
    };
    let mut out = Vec::with_capacity(cfg.grid.len() * cfg.seeds.len());
    for &n in &cfg.grid {
        for &seed in &cfg.seeds {
            let indices = sample_indices(vocab, n as usize, seed, cfg.sampling, cfg.strata)?;
            let keywords: Vec<&str> = indices
                .iter()
                .map(|&i| vocab.terms[i].term.as_str())
                .collect();
            let meta = PromptMeta {
                benchmark: BENCHMARK.to_owned(),
                num_rules: n,
                seed: u64::from(seed),
                sampling: cfg.sampling,
                strata: (cfg.sampling == SamplingMode::Stratified).then_some(cfg.strata),
                keywords: keywords.iter().map(|k| (*k).to_owned()).collect(),
                template_sha256: template.sha256.clone(),
                vocab_sha256: vocab.sha256.clone(),
            };
            out.push(PromptRecord {
                id: prompt_id(n, seed),
                messages: vec![Message::user(template.render(&keywords))],
                sample_index: 0,
                params: params.clone(),
                extra: meta_to_extra(&meta),
            });
        }
    }
    Ok(out)
}

/// The prompt record's ride-along fields for `meta`.
pub fn meta_to_extra(meta: &PromptMeta) -> Map<String, Value> {
    match serde_json::to_value(meta) {
        Ok(Value::Object(map)) => map,
        // A struct of strings, numbers and enums always serializes to an object.
        _ => Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab(n: usize) -> Vocabulary {
        let text: String = (0..n)
            .map(|i| format!("term{i}\t{}\t3.0\t\t1\n", (i * 7 % n) as f64 / 10.0))
            .collect();
        Vocabulary::parse(
            format!("term\tdifficulty\tzipf\tlemma_of\tsource_counts\n{text}").as_bytes(),
            "v.tsv",
        )
        .unwrap()
    }

    #[test]
    fn allocation_is_proportional_and_exact() {
        assert_eq!(
            allocate(10, &[100, 100, 100, 100, 100]),
            vec![2, 2, 2, 2, 2]
        );
        assert_eq!(allocate(7, &[3, 3, 4]), vec![2, 2, 3]);
        assert_eq!(allocate(3, &[1, 1, 1, 1, 1]), vec![1, 1, 1, 0, 0]);
        assert_eq!(allocate(5, &[1, 1, 1, 1, 1]), vec![1, 1, 1, 1, 1]);
    }

    #[test]
    fn stratified_draws_are_deterministic_distinct_and_balanced() {
        let v = vocab(500);
        let a = sample_indices(&v, 50, 3, SamplingMode::Stratified, 5).unwrap();
        let b = sample_indices(&v, 50, 3, SamplingMode::Stratified, 5).unwrap();
        assert_eq!(a, b);
        let c = sample_indices(&v, 50, 4, SamplingMode::Stratified, 5).unwrap();
        assert_ne!(a, c);
        let mut uniq = a.clone();
        uniq.sort_unstable();
        uniq.dedup();
        assert_eq!(uniq.len(), 50);
        // Ten picks from each fifth of the difficulty ranking.
        let mut ranked: Vec<usize> = (0..500).collect();
        ranked.sort_by(|&x, &y| {
            v.terms[x]
                .difficulty
                .unwrap()
                .total_cmp(&v.terms[y].difficulty.unwrap())
                .then(x.cmp(&y))
        });
        let rank_of: std::collections::HashMap<usize, usize> =
            ranked.iter().enumerate().map(|(r, &i)| (i, r)).collect();
        let mut per_stratum = [0; 5];
        for i in &a {
            per_stratum[rank_of[i] / 100] += 1;
        }
        assert_eq!(per_stratum, [10; 5]);
    }

    #[test]
    fn stratified_needs_difficulties() {
        let v = Vocabulary::parse(b"alpha\nbeta\ngamma\n", "v.txt").unwrap();
        let err = sample_indices(&v, 2, 0, SamplingMode::Stratified, 2)
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"alpha\" has none"), "{err}");
    }

    #[test]
    fn vocabulary_errors_name_the_line() {
        let err = Vocabulary::parse(b"term\tdifficulty\nx\t1\ny\tbad\n", "v.tsv")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "v.tsv:3: field `difficulty`: not a finite number: \"bad\""
        );
        let err = Vocabulary::parse(b"a\nb\na\n", "v.txt")
            .unwrap_err()
            .to_string();
        assert_eq!(err, "v.txt:3: term \"a\" already appears on line 1");
        let err = Vocabulary::parse(b"term\tdifficulty\nx\n", "v.tsv")
            .unwrap_err()
            .to_string();
        assert_eq!(err, "v.tsv:2: 1 fields, the header has 2");
    }

    #[test]
    fn template_placeholders_are_checked_and_rendered() {
        let t =
            Template::parse(b"Write {{count}} things.\n{{constraints}}\nEnd.", "t.txt").unwrap();
        assert_eq!(
            t.render(&["revenue", "ESG"]),
            "Write 2 things.\n1. Include the exact word: 'revenue'.\n2. Include the exact word: 'ESG'.\nEnd."
        );
        let err = Template::parse(b"no list here", "t.txt")
            .unwrap_err()
            .to_string();
        assert!(err.contains("exactly one {{constraints}}"), "{err}");
        let err = Template::parse(b"{{constraints}} {{keywords}}", "t.txt")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown placeholder {{keywords}}"), "{err}");
    }
}
