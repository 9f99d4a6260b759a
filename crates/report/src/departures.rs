//! Where an IFScale run departs from the paper's setup, said in the report and `summary.md`: the vocabulary its
//! keywords came from (told by content hash, `analysis::ifscale::vocabulary`), and the output cap (`max_tokens`)
//! its generation requests carried, since the paper ran every model "using default generation parameters", with
//! how many replies stopped at that cap (finish reason `length`: rejected as truncated in the attempts log).
//!
//! The caps are the caller's ([`OutputCap`], from the config); the replies that stopped at them are counted from the
//! attempts log.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use analysis::ifscale::vocabulary::run_vocabulary;
use schema::ifscale::RejectReason;
use schema::paths::RunPaths;

use crate::Error;

/// Where a model's IFScale output cap was set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CapSource {
    /// `[ifscale] max-tokens` of the run's config, for every model.
    RunConfig,
    /// The model's own `max-tokens` in the models file.
    ModelsFile,
}

/// The `max_tokens` every IFScale generation request of a model carried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputCap {
    pub model: String,
    pub max_tokens: u32,
    pub source: CapSource,
}

/// One model's generation attempts and those that stopped at the length limit.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CapHits {
    pub attempts: usize,
    pub truncated: usize,
    /// Samples (prompt ids) with at least one attempt, and with at least one truncated attempt.
    pub samples: usize,
    pub samples_truncated: usize,
}

/// Per model, from the run's attempts log (one line per generation attempt; a missing file counts nothing).
pub fn cap_hits(attempts: &Path) -> Result<BTreeMap<String, CapHits>, Error> {
    /// The fields counted (the rest of each line is skipped).
    #[derive(serde::Deserialize)]
    struct Line {
        id: String,
        model: String,
        attempt: u32,
        #[serde(default)]
        reason: Option<RejectReason>,
    }
    /// One model's distinct attempts, samples, and samples with a truncated attempt.
    #[derive(Default)]
    struct Seen {
        attempts: BTreeSet<(String, u32)>,
        truncated: usize,
        samples: BTreeSet<String>,
        samples_truncated: BTreeSet<String>,
    }
    let mut seen: BTreeMap<String, Seen> = BTreeMap::new();
    if attempts.is_file() {
        schema::read_jsonl_chunks(attempts, 4_096, |chunk: Vec<Line>| {
            for l in chunk {
                let s = seen.entry(l.model).or_default();
                // An attempt counted once, whichever log line says it.
                if !s.attempts.insert((l.id.clone(), l.attempt)) {
                    continue;
                }
                if l.reason == Some(RejectReason::Truncated) {
                    s.truncated += 1;
                    s.samples_truncated.insert(l.id.clone());
                }
                s.samples.insert(l.id);
            }
            Ok::<(), Error>(())
        })?;
    }
    Ok(seen
        .into_iter()
        .map(|(model, s)| {
            let hits = CapHits {
                attempts: s.attempts.len(),
                truncated: s.truncated,
                samples: s.samples.len(),
                samples_truncated: s.samples_truncated.len(),
            };
            (model, hits)
        })
        .collect())
}

fn plural(n: usize, one: &str) -> String {
    format!("{n} {one}{}", if n == 1 { "" } else { "s" })
}

/// A model's cell "2 of 5 (in 1 sample)": replies at the cap of its attempts; "–" without attempts.
pub fn hits_cell(hits: Option<&CapHits>) -> String {
    match hits {
        Some(h) if h.attempts > 0 => format!(
            "{} of {} (in {})",
            h.truncated,
            h.attempts,
            plural(h.samples_truncated, "sample")
        ),
        _ => "–".to_owned(),
    }
}

/// The report's and `summary.md`'s sentence on output caps: each model's cap where one is set, and per model how
/// many replies stopped at it (or, with `counts_in_table`, where the table shows them). None when no cap is set
/// and no reply was cut off.
pub fn caps_sentence(
    models: &[String],
    caps: &[OutputCap],
    hits: &BTreeMap<String, CapHits>,
    counts_in_table: bool,
) -> Option<String> {
    let any_truncated = hits.values().any(|h| h.truncated > 0);
    if caps.is_empty() && !any_truncated {
        return None;
    }
    let mut s = String::new();
    if !caps.is_empty() {
        let named: Vec<String> = caps
            .iter()
            .map(|c| {
                format!(
                    "{} at {} tokens ({})",
                    c.model,
                    c.max_tokens,
                    match c.source {
                        CapSource::RunConfig => "[ifscale] max-tokens",
                        CapSource::ModelsFile => "its max-tokens in the models file",
                    }
                )
            })
            .collect();
        let uncapped: Vec<&str> = models
            .iter()
            .filter(|m| !caps.iter().any(|c| &c.model == *m))
            .map(String::as_str)
            .collect();
        let _ = write!(
            s,
            "Output caps, a departure from the paper (it ran every model with its provider's default generation \
             parameters): {}{}.",
            named.join(", "),
            if uncapped.is_empty() {
                String::new()
            } else {
                format!("; no cap for {}", uncapped.join(", "))
            }
        );
    }
    let what = "replies that stopped at the length limit (finish reason `length`; rejected as truncated, and the \
                sample tried again)";
    if !s.is_empty() {
        s.push(' ');
    }
    if counts_in_table {
        let _ = write!(s, "The last column counts the {what}.");
    } else {
        let counts: Vec<String> = models
            .iter()
            .map(|m| format!("{m} {}", hits_cell(hits.get(m))))
            .collect();
        let _ = write!(s, "The {what}: {}.", counts.join(", "));
    }
    Some(s)
}

/// The sentence on the run's vocabulary when its keywords are not the paper's list (None for the paper's list, or
/// when the prompts carry no hash).
pub fn vocabulary_sentence(paths: &RunPaths) -> Result<Option<String>, Error> {
    Ok(run_vocabulary(&paths.ifscale_prompts())?
        .and_then(|v| v.sentence())
        .map(str::to_owned))
}
