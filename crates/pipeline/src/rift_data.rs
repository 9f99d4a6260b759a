//! The RIFT questions a config prepares (`[rift-prep] inputs` → `[rift] dataset`), and whether a prepared file
//! belongs to this config.
//!
//! Prepared questions can outlive the run that made them and sit at a path another config also names, so the prep
//! stage writes a provenance stamp beside them (`prepared-from.json`: the fingerprint of the clue files, the
//! rephrasing model, its settings and prompt) and every reader checks it first: the pipeline prepares again when the
//! stamp is not this config's, and the dry run then samples from the raw clue file instead. Without the raw clue
//! file the pipeline stops with one line saying what the file is, and the dry run estimates from the RIFT paper's
//! published counts ([`published_estimate`]).

use std::path::{Path, PathBuf};

use harness::estimate::Estimate;
use harness::fresh::{Fingerprint, Stamps};
use inference_client::ModelConfig;
use prompt_gen::rift::RiftConfig;

use crate::Run;
use crate::config::RiftPrepSection;
use crate::outcome::Failure;
use crate::stage::{Sharded, Stage};

/// The provenance stamp's name (`<dataset folder>/prepared-from.json`).
const PROVENANCE: &str = "prepared-from";

/// The rephrasing prompt of a `[rift-prep]` section (default `configs/prompts/rift-rephrase.txt`).
fn rephrase_template(prep: &RiftPrepSection) -> PathBuf {
    prep.rephrase_template
        .clone()
        .unwrap_or_else(|| PathBuf::from("configs/prompts/rift-rephrase.txt"))
}

/// What the prepared questions are made from: the clue files by content, the rephrasing model, its request
/// settings and (with a model) its prompt. The run's `rift-prep` stage and the provenance stamp both use it.
pub(crate) fn prep_fingerprint(
    prep: &RiftPrepSection,
    rephraser: Option<&ModelConfig>,
) -> anyhow::Result<Fingerprint> {
    let mut fp = Fingerprint::new("rift-prep")
        .value("rephrase-model", &rephraser)?
        .value("rephrase-call", &prep.rephrase_call())?;
    if rephraser.is_some() {
        fp = fp.file(&rephrase_template(prep))?;
    }
    for p in &prep.inputs {
        fp = fp.file(p)?;
    }
    Ok(fp)
}

/// The folder the prepared questions are written to.
fn dataset_dir(rift: &RiftConfig) -> PathBuf {
    rift.dataset.parent().unwrap_or(Path::new(".")).to_owned()
}

/// Whether `[rift] dataset` exists and was prepared from exactly these inputs and settings (its provenance stamp
/// matches `fp`). A file without a stamp belongs to no config.
pub(crate) fn belongs(rift: &RiftConfig, fp: &Fingerprint) -> bool {
    Stamps::beside(&dataset_dir(rift)).is_fresh(PROVENANCE, fp, std::slice::from_ref(&rift.dataset))
}

/// The first clue file of `[rift-prep] inputs` that is not there.
pub(crate) fn missing_input(prep: &RiftPrepSection) -> Option<&Path> {
    prep.inputs
        .iter()
        .find(|p| !p.is_file())
        .map(PathBuf::as_path)
}

/// The one-line error for a clue file that is not there: what it is, the layouts read, where the README says more.
pub fn missing_clues_error(path: &Path, config: &Path) -> Failure {
    Failure::Usage(format!(
        "{}: no such file; {} names it in `[rift-prep] inputs`. It is the Jeopardy! clue set the questions are \
         prepared from, which ifstress does not ship: the public {}-clue JSON file (a list of objects with \
         category, air_date, question, value, answer, round, show_number) or its CSV twin (the same columns, one \
         clue per row). Put it at this path; the README's \"Reproducing the papers\" explains it (`--dry-run` \
         works without it)",
        path.display(),
        config.display(),
        group_thousands(jeopardy_prep::PUBLISHED_CLUES as u64),
    ))
}

/// `216930` → `216 930`, as the papers and the README write counts.
fn group_thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// The `rift-prep` stage, when the config prepares its RIFT questions: it prepares again when the prepared file
/// beside its stamp is not this config's (another config prepared the same path since), and stamps the prepared
/// questions with their provenance. Its dry-run row is the rephrasing's, one request per raw clue.
pub(crate) fn prep_stage(run: &Run) -> Option<Stage<'_>> {
    let (rift, prep) = run.cfg.rift_prep()?;
    let rephraser = run.rephraser.as_ref();
    let dir = dataset_dir(rift);
    let outputs = vec![rift.dataset.clone()];
    let stage = Stage {
        sharded: Sharded::Every,
        before: Some(Box::new(move |stamps| {
            // The run's own stamp says nothing about a file another config rewrote.
            if !belongs(rift, &prep_fingerprint(prep, rephraser)?) {
                stamps.clear("rift-prep")?;
            }
            Ok(())
        })),
        ..Stage::new(
            "rift-prep",
            move || prep_fingerprint(prep, rephraser),
            outputs.clone(),
            move |ctx| {
                let provenance = prep_fingerprint(prep, rephraser)?;
                let template = match rephraser {
                    Some(_) => harness::read_text(&rephrase_template(prep))?,
                    None => String::new(),
                };
                let call = prep.rephrase_call();
                let rephrase = rephraser.map(|model| harness::rift::Rephrase {
                    model,
                    template: &template,
                    call: &call,
                    client: ctx.client,
                });
                let prepared = harness::rift::prep(&prep.inputs, &dir, rephrase.as_ref())?;
                Stamps::beside(&dir).mark(PROVENANCE, &provenance, &outputs)?;
                crate::run::print(&prepared.summary.to_markdown());
                Ok(())
            },
        )
    };
    Some(stage.estimate(move |dry| dry.rephrase_rows(rift, prep)))
}

/// The dry run's RIFT rows without the clue file, from the paper's published counts: prompts sampled from
/// [`jeopardy_prep::PUBLISHED_QUESTIONS`] questions. Prompt sizes are uniform in `num-min`–`num-max`, so the judge's
/// answers are counted at their mean; input tokens are not estimated (they need the questions' text), and a priced
/// model's worst case counts its output at the token limit only.
pub(crate) fn published_estimate(
    rift: &RiftConfig,
    judge: Option<&str>,
    models: &[ModelConfig],
) -> Vec<Estimate> {
    let questions = jeopardy_prep::PUBLISHED_QUESTIONS as u64;
    let baseline = rift
        .baseline_prompts
        .map_or(questions, |n| u64::from(n).min(questions));
    let multi = u64::from(rift.linear_prompts) + u64::from(rift.jumping_prompts);
    let requests = (multi + baseline) as usize;
    let mut rows = Vec::new();
    for m in models {
        let cap = rift.max_tokens.or(m.max_tokens);
        let (cost, unbounded) = match cap {
            Some(t) => (
                requests as f64 * f64::from(t) * m.price_out_per_mtok / 1e6,
                0,
            ),
            None => (0.0, requests),
        };
        rows.push(Estimate {
            stage: "rift generation",
            model: m.name.clone(),
            note: format!(
                "{multi} multi-question prompts and {baseline} baselines, from the published counts; input tokens \
                 need the file, the worst case counts output only"
            ),
            requests,
            est_input_tokens: 0,
            worst_case_cost_usd: Some(cost),
            unbounded,
        });
    }
    if let Some(judge) = judge {
        let mean_size = f64::from(rift.num_min + rift.num_max) / 2.0;
        let answers = (multi as f64 * mean_size).round() as usize + baseline as usize;
        rows.push(Estimate {
            stage: "rift judge",
            model: judge.to_owned(),
            note: format!(
                "about: prompts of {mean_size} questions on average; one per answer the pre-judge cannot settle, \
                 up to `tries` when a reply cannot be read"
            ),
            requests: answers * models.len(),
            est_input_tokens: 0,
            worst_case_cost_usd: None,
            unbounded: 0,
        });
    }
    rows
}

/// The rephrasing's dry-run row without the clue file: one request per raw clue of the published count.
pub(crate) fn published_rephrase(prep: &RiftPrepSection) -> Option<Estimate> {
    let rephraser = prep.rephrase_model.as_ref()?;
    Some(Estimate {
        stage: "rift rephrase",
        model: rephraser.clone(),
        note: "one per raw clue, the published count (cached: a rerun sends none)".to_owned(),
        requests: jeopardy_prep::PUBLISHED_CLUES,
        est_input_tokens: 0,
        worst_case_cost_usd: None,
        unbounded: 0,
    })
}

/// The sentence the dry run prints under its table when it used [`published_estimate`].
pub(crate) fn published_note(missing: &Path) -> String {
    format!(
        "RIFT: estimated from the published counts ({} raw clues to rephrase, {} questions), because the clue \
         file {} is not there; the run needs it (see the README's \"Reproducing the papers\").",
        group_thousands(jeopardy_prep::PUBLISHED_CLUES as u64),
        group_thousands(jeopardy_prep::PUBLISHED_QUESTIONS as u64),
        missing.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_grouped_by_thousands() {
        assert_eq!(group_thousands(216_930), "216 930");
        assert_eq!(group_thousands(83_453), "83 453");
        assert_eq!(group_thousands(999), "999");
        assert_eq!(group_thousands(1_000_000), "1 000 000");
    }

    #[test]
    fn the_missing_file_error_says_what_it_is_the_layouts_and_where_the_readme_explains_it() {
        let msg = missing_clues_error(
            Path::new("datasets/jeopardy/JEOPARDY_QUESTIONS1.json"),
            Path::new("configs/rift-paper.toml"),
        )
        .to_string();
        for part in [
            "datasets/jeopardy/JEOPARDY_QUESTIONS1.json: no such file",
            "configs/rift-paper.toml",
            "216 930-clue JSON",
            "CSV twin",
            "README",
            "Reproducing the papers",
        ] {
            assert!(msg.contains(part), "{part}: {msg}");
        }
        assert!(!msg.contains('\n'), "one line: {msg}");
    }
}
