//! Every table from artifacts alone (no model call, no drawing): the first half of what `cargo xtask plots` and
//! the pipeline's analysis stage run; `plots::all::draw` then draws the figures from what [`analyse`] returns.
//!
//! IFScale input: a run's `ifscale/scores.jsonl` and/or published-layout per-sample CSVs (pooled); keyword labels for
//! the primacy thirds; attempts logs for coherence over all attempts. RIFT input: a run's `rift/` folder, another
//! records folder, or a deterministic synthetic run (written to `<out>/rift-synthetic/`). Output:
//! `<out>/tables/{ifscale,rift}/` (Parquet, CSV, Markdown). The tables built on a judge that failed its check (the
//! run's `judge-check.json`) carry its mark before their caption; with a checked RIFT judge, its accuracy corrected
//! for the judge's measured errors is one more table (`rift::corrected`). What to print about the results is the caller's
//! business.

use std::path::{Path, PathBuf};

use schema::judge::JudgeRole;
use schema::paths::{Bench, RunPaths};

use crate::Error;
use crate::ifscale::coherence::{CoherenceConfig, CoherenceRow};
use crate::ifscale::primacy::ThirdsRow;
use crate::ifscale::results::ResultsComparison;
use crate::ifscale::vocabulary::RunVocabulary;
use crate::ifscale::{IfscaleSummary, ReferenceCheck};
use crate::models::ReasoningRule;
use crate::rift::RiftSummary;

/// What to analyse and where to write.
#[derive(Debug, Clone)]
pub struct Inputs {
    /// A run folder: its IFScale scores, labels and attempts and its RIFT records are read.
    pub run_dir: Option<PathBuf>,
    pub ifscale_per_sample: Option<PathBuf>,
    /// Published aggregate CSVs to check against (default: the per-sample CSV's folder when it holds them).
    pub ifscale_reference_dir: Option<PathBuf>,
    pub ifscale_labels: Vec<PathBuf>,
    pub ifscale_attempts: Vec<PathBuf>,
    pub coherence_threshold: u8,
    pub rift_dir: Option<PathBuf>,
    /// Analyse a deterministic synthetic RIFT run written to `<out>/rift-synthetic/`.
    pub rift_synthetic: bool,
    pub out: PathBuf,
    pub rule: ReasoningRule,
    pub bootstrap_resamples: usize,
    /// Seed of the bootstrap and of the synthetic RIFT run.
    pub seed: u64,
}

impl Inputs {
    /// A run folder analysed into itself with the default settings (the pipeline's analysis stage).
    pub fn for_run(run_dir: &Path, rule: ReasoningRule) -> Inputs {
        Inputs {
            run_dir: Some(run_dir.to_owned()),
            ifscale_per_sample: None,
            ifscale_reference_dir: None,
            ifscale_labels: Vec::new(),
            ifscale_attempts: Vec::new(),
            coherence_threshold: crate::ifscale::coherence::PAPER_THRESHOLD,
            rift_dir: None,
            rift_synthetic: false,
            out: run_dir.to_owned(),
            rule,
            bootstrap_resamples: 2000,
            seed: 0,
        }
    }
}

/// What was analysed: the summaries the figures are drawn from, and what the caller reports.
#[derive(Debug, Default)]
pub struct Analysed {
    /// The IFScale aggregate, with the run's vocabulary when its prompts name one.
    pub ifscale: Option<IfscaleSummary>,
    pub vocabulary: Option<RunVocabulary>,
    /// Primacy thirds from keyword labels.
    pub primacy: Option<Vec<ThirdsRow>>,
    /// Coherence over all attempts, with its threshold.
    pub coherence: Option<(Vec<CoherenceRow>, CoherenceConfig)>,
    pub rift: Option<RiftSummary>,
    /// The published aggregates checked (their folder and one check per table).
    pub reference: Option<(PathBuf, Vec<ReferenceCheck>)>,
    /// The published leaderboard compared (its file and the comparison).
    pub leaderboard: Option<(PathBuf, ResultsComparison)>,
    /// RIFT's Table 2 in Markdown, as written (with its mark).
    pub rift_table2: Option<String>,
    /// The mark of a judge that failed its check, per benchmark: figures drawn from these results carry it too.
    pub ifscale_mark: Option<String>,
    pub rift_mark: Option<String>,
    /// Tables written.
    pub tables: usize,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Input {
        path: path.to_owned(),
        message: source.to_string(),
    }
}

fn must_exist(p: &Path) -> Result<(), Error> {
    if p.exists() {
        Ok(())
    } else {
        Err(Error::Usage(format!("{}: no such file", p.display())))
    }
}

/// Computes and writes every table the inputs allow; [`Error::Usage`] when there is nothing to analyse.
pub fn analyse(inputs: &Inputs) -> Result<Analysed, Error> {
    let run = inputs.run_dir.as_deref().map(RunPaths::new);
    // The run's failed judges: every IFScale (coherence judge) or RIFT (answer judge) table and figure built from
    // their verdicts is marked.
    let checks = match &run {
        Some(r) => schema::judge_check::JudgeCheckFile::read(&r.judge_check())?,
        None => None,
    };
    let mark = |bench: Bench| {
        let marks = checks.as_ref().map(|c| c.marks(bench)).unwrap_or_default();
        (!marks.is_empty()).then(|| marks.join("; "))
    };
    let mut analysed = Analysed {
        ifscale_mark: mark(Bench::Ifscale),
        rift_mark: mark(Bench::Rift),
        ..Analysed::default()
    };
    analyse_ifscale(inputs, run.as_ref(), checks.as_ref(), &mut analysed)?;
    if let Some(m) = &analysed.ifscale_mark {
        mark_tables(&inputs.out.join("tables/ifscale"), m)?;
    }
    analyse_rift(inputs, run.as_ref(), checks.as_ref(), &mut analysed)?;
    if let Some(m) = &analysed.rift_mark {
        mark_tables(&inputs.out.join("tables/rift"), m)?;
    }
    if analysed.rift.is_some() {
        let table2 = inputs.out.join("tables/rift/rift_table2.md");
        analysed.rift_table2 = Some(std::fs::read_to_string(&table2).map_err(io(&table2))?);
    }
    if analysed.ifscale.is_none()
        && analysed.primacy.is_none()
        && analysed.coherence.is_none()
        && analysed.rift.is_none()
    {
        return Err(Error::Usage(
            "nothing to analyse: no ifscale/scores.jsonl or rift/answer-scores.jsonl in the run folder, and no \
             IFScale per-sample CSV, keyword labels, attempts logs, RIFT folder or synthetic RIFT run"
                .to_owned(),
        ));
    }
    Ok(analysed)
}

/// Puts `[mark]` before the caption of every table in `dir` (its Markdown and its data rewritten).
fn mark_tables(dir: &Path, mark: &str) -> Result<(), Error> {
    for (name, mut table) in crate::tables::read_tables(dir)? {
        if table
            .caption
            .contains(schema::judge_check::JUDGE_FAILED_MARK)
        {
            continue;
        }
        table.caption = format!("[{mark}] {}", table.caption);
        crate::tables::write_table_markdown(dir, &name, &table)?;
    }
    Ok(())
}

/// The IFScale tables.
fn analyse_ifscale(
    inputs: &Inputs,
    run: Option<&RunPaths>,
    checks: Option<&schema::judge_check::JudgeCheckFile>,
    analysed: &mut Analysed,
) -> Result<(), Error> {
    let out = &inputs.out;
    let mut frames = Vec::new();
    if let Some(scores) = run.map(RunPaths::ifscale_scores).filter(|p| p.exists()) {
        frames.push(crate::ifscale::load_scores(std::slice::from_ref(&scores))?);
    }
    if let Some(csv) = &inputs.ifscale_per_sample {
        must_exist(csv)?;
        frames.push(crate::ifscale::load_reference_csv(csv)?);
    }
    if let Some(samples) = crate::ifscale::pool(frames)? {
        let cfg = crate::ifscale::AggregateConfig {
            bootstrap_resamples: inputs.bootstrap_resamples,
            bootstrap_seed: inputs.seed,
            ci_level: 0.95,
        };
        let summary = crate::ifscale::aggregate(&samples, &cfg)?;
        let mut tables = crate::ifscale::write_tables(&summary, &out.join("tables/ifscale"))?;
        if let Some(r) = run.filter(|r| r.ifscale_scores().exists()) {
            let scores: Vec<schema::ifscale::SampleScore> =
                schema::read_jsonl(&r.ifscale_scores())?;
            let keywords = crate::ifscale::refusals::prompt_keywords(&r.ifscale_prompts())?;
            tables.extend(crate::ifscale::refusals::write_tables(
                &scores,
                &keywords,
                &out.join("tables/ifscale"),
            )?);
        }
        tracing::info!(
            samples = samples.height(),
            models = summary.models.len(),
            tables = tables.len(),
            "Wrote the IFScale tables."
        );
        analysed.tables += tables.len();
        // The run's vocabulary, by the hash its prompts carry (published-layout CSVs carry none: no note).
        analysed.vocabulary = match run {
            Some(r) => crate::ifscale::vocabulary::run_vocabulary(&r.ifscale_prompts())?,
            None => None,
        };
        let reference = inputs.ifscale_reference_dir.clone().or_else(|| {
            let dir = inputs.ifscale_per_sample.as_ref()?.parent()?.to_owned();
            dir.join("accuracy_by_rules.csv").exists().then_some(dir)
        });
        if let Some(dir) = reference {
            let checks = crate::ifscale::check_against_reference(&summary, &dir)?;
            let leaderboard = dir.join("published_results_table.csv");
            if leaderboard.exists() {
                let published = crate::ifscale::results::load_published_results(&leaderboard)?;
                let cmp = crate::ifscale::results::compare_published(&summary, &published);
                analysed.leaderboard = Some((leaderboard, cmp));
            }
            analysed.reference = Some((dir, checks));
        }
        analysed.ifscale = Some(summary);
    }
    ifscale_records(inputs, run, checks, analysed)
}

/// The IFScale tables of keyword labels and attempts logs.
fn ifscale_records(
    inputs: &Inputs,
    run: Option<&RunPaths>,
    checks: Option<&schema::judge_check::JudgeCheckFile>,
    analysed: &mut Analysed,
) -> Result<(), Error> {
    let gather = |given: &[PathBuf], in_run: Option<PathBuf>| -> Result<Vec<PathBuf>, Error> {
        let mut files: Vec<PathBuf> = in_run.filter(|p| p.exists()).into_iter().collect();
        for f in given {
            must_exist(f)?;
            files.push(f.clone());
        }
        Ok(files)
    };
    let labels = gather(&inputs.ifscale_labels, run.map(RunPaths::ifscale_labels))?;
    let attempts = gather(
        &inputs.ifscale_attempts,
        run.map(RunPaths::ifscale_attempts),
    )?;
    let tables_dir = inputs.out.join("tables/ifscale");
    if !labels.is_empty() {
        let labels = crate::ifscale::primacy::load_labels(&labels)?;
        let rows = crate::ifscale::primacy::thirds(&labels);
        analysed.tables += crate::ifscale::primacy::write_tables(&rows, &tables_dir)?.len();
        analysed.primacy = Some(rows);
    }
    if !attempts.is_empty() {
        let attempts = crate::ifscale::coherence::load_attempts(&attempts)?;
        let cfg = CoherenceConfig {
            threshold: inputs.coherence_threshold,
        };
        let rows = crate::ifscale::coherence::aggregate(&attempts, &cfg)?;
        analysed.tables += crate::ifscale::coherence::write_tables(&rows, &cfg, &tables_dir)?.len();
        // The accepted share corrected for the coherence judge, when its control reports measured it (issue 44).
        let judge = checks.and_then(|c| c.of(JudgeRole::Coherence));
        if let Some(check) = judge {
            let cal = crate::judge_correction::Calibration::from_check(check);
            crate::ifscale::coherence::write_corrected(
                &rows,
                &cfg,
                &check.judge,
                &cal,
                &tables_dir,
            )?;
            analysed.tables += 1;
        }
        analysed.coherence = Some((rows, cfg));
        // The refused share of the replies the refusal judge decided, corrected for it likewise.
        let refusal = checks.and_then(|c| c.of(JudgeRole::Refusal));
        if let Some(check) = refusal {
            let cal = crate::judge_correction::Calibration::from_check(check);
            analysed.tables += usize::from(
                !crate::ifscale::refusal_judge::write_corrected(
                    &attempts,
                    &check.judge,
                    &cal,
                    &tables_dir,
                )?
                .is_empty(),
            );
        }
    }
    Ok(())
}

/// The RIFT tables.
fn analyse_rift(
    inputs: &Inputs,
    run: Option<&RunPaths>,
    checks: Option<&schema::judge_check::JudgeCheckFile>,
    analysed: &mut Analysed,
) -> Result<(), Error> {
    let out = &inputs.out;
    let rift_dir = if inputs.rift_synthetic {
        Some(write_synthetic_rift(
            &out.join("rift-synthetic"),
            inputs.seed,
        )?)
    } else {
        inputs.rift_dir.clone().or_else(|| {
            run.map(|r| r.bench(Bench::Rift))
                .filter(|d| d.join("answer-scores.jsonl").exists())
        })
    };
    let Some(dir) = rift_dir else {
        return Ok(());
    };
    let (mut answers, prompts) = crate::rift::load_run(&dir)?;
    let summary = crate::rift::aggregate(
        answers.clone(),
        prompts.as_ref(),
        &crate::rift::RiftConfig {
            token_bin_width: None,
            reasoning: inputs.rule.clone(),
        },
    )?;
    let tables = crate::rift::write_tables(&summary, &out.join("tables/rift"))?;
    tracing::info!(
        models = summary.models.len(),
        tables = tables.len(),
        "Wrote the RIFT tables."
    );
    analysed.tables += tables.len();
    // Accuracy corrected for the answer judge, when its control items measured it (issue 44).
    let judge = checks.and_then(|c| c.of(JudgeRole::RiftAnswers));
    let flagged = answers
        .collect_schema()
        .is_ok_and(|s| s.contains("llm_judged"));
    if let (Some(check), true) = (judge, flagged) {
        let corrected = crate::rift::corrected::correct(
            answers.clone(),
            &summary.table2,
            &check.judge,
            crate::judge_correction::Calibration::from_check(check),
        )?;
        crate::rift::corrected::write(&corrected, &out.join("tables/rift"))?;
        let wrong = crate::rift::corrected_wrong::correct(answers, &corrected.calibration)?;
        crate::rift::corrected_wrong::write(
            &wrong,
            &check.judge,
            &corrected.calibration,
            &out.join("tables/rift"),
        )?;
        analysed.tables += 2;
    }
    analysed.rift = Some(summary);
    Ok(())
}

fn write_synthetic_rift(dir: &Path, seed: u64) -> Result<PathBuf, Error> {
    let cfg = crate::synthetic::SyntheticConfig {
        seed,
        models: 6,
        prompts_per_structure: 300,
        baseline_prompts: 300,
        min_questions: 10,
        max_questions: 300,
    };
    let (prompts, answers) = crate::synthetic::generate_records(&cfg);
    schema::write_jsonl_atomic(&dir.join("prompt-scores.jsonl"), &prompts)?;
    schema::write_jsonl_atomic(&dir.join("answer-scores.jsonl"), &answers)?;
    tracing::info!(prompts = prompts.len(), answers = answers.len(), dir = %dir.display(), "Wrote a synthetic RIFT run.");
    Ok(dir.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_to_analyse_and_a_missing_file_are_usage_errors() {
        let dir = tempfile::tempdir().unwrap();
        let mut inputs = Inputs::for_run(dir.path(), ReasoningRule { explicit: None });
        let err = analyse(&inputs).unwrap_err();
        assert!(
            matches!(&err, Error::Usage(m) if m.starts_with("nothing to analyse")),
            "{err}"
        );
        inputs.ifscale_labels = vec![dir.path().join("labels.jsonl")];
        let err = analyse(&inputs).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "{}: no such file",
                dir.path().join("labels.jsonl").display()
            )
        );
        assert!(!dir.path().join("tables").exists(), "nothing was written");
    }
}
