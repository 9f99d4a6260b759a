//! Every table and figure from artifacts alone (no model call): what `cargo xtask plots` and the pipeline's analysis
//! stage run.
//!
//! IFScale input: a run's `ifscale/scores.jsonl` and/or published-layout per-sample CSVs (pooled); keyword labels for
//! the primacy thirds; attempts logs for coherence over all attempts. RIFT input: a run's `rift/` folder, another
//! records folder, or a deterministic synthetic run. Output: `<out>/tables/{ifscale,rift}/` (Parquet, CSV, Markdown)
//! and `<out>/figures/{ifscale,rift}/` (PNG, SVG). What to print about the results is the caller's business.

use std::path::{Path, PathBuf};

use analysis::ifscale::results::ResultsComparison;
use analysis::ifscale::{IfscaleSummary, ReferenceCheck};
use analysis::models::ReasoningRule;
use schema::paths::{Bench, RunPaths};

use crate::Error;

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
            coherence_threshold: analysis::ifscale::coherence::PAPER_THRESHOLD,
            rift_dir: None,
            rift_synthetic: false,
            out: run_dir.to_owned(),
            rule,
            bootstrap_resamples: 2000,
            seed: 0,
        }
    }
}

/// What was drawn, for the caller to report.
#[derive(Debug, Default)]
pub struct Drawn {
    pub ifscale: Option<IfscaleSummary>,
    /// The published aggregates checked (their folder and one check per table).
    pub reference: Option<(PathBuf, Vec<ReferenceCheck>)>,
    /// The published leaderboard compared (its file and the comparison).
    pub leaderboard: Option<(PathBuf, ResultsComparison)>,
    /// RIFT's Table 2 in Markdown.
    pub rift_table2: Option<String>,
    /// IFScale keyword labels or attempts logs were analysed.
    pub ifscale_records: bool,
    pub tables: usize,
    pub figures: usize,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_owned(),
        source,
    }
}

fn must_exist(p: &Path) -> Result<(), Error> {
    if p.exists() {
        Ok(())
    } else {
        Err(Error::Input(format!("{}: no such file", p.display())))
    }
}

/// Draws every table and figure the inputs allow; an error when there is nothing to analyse.
pub fn draw_all(inputs: &Inputs) -> Result<Drawn, Error> {
    let run = inputs.run_dir.as_deref().map(RunPaths::new);
    // The run's failed judges: every IFScale (coherence judge) or RIFT (answer judge) table and figure built from
    // their verdicts is marked.
    let checks = match &run {
        Some(r) => schema::judge_check::JudgeCheckFile::read(&r.judge_check())
            .map_err(|e| Error::Input(e.to_string()))?,
        None => None,
    };
    let mark = |bench: Bench| {
        let marks = checks
            .as_ref()
            .map(|c| c.marks(bench.as_str()))
            .unwrap_or_default();
        (!marks.is_empty()).then(|| marks.join("; "))
    };
    let (ifscale_mark, rift_mark) = (mark(Bench::Ifscale), mark(Bench::Rift));
    let drawn = crate::figure::with_title_mark(ifscale_mark.as_deref(), || {
        draw_ifscale(inputs, run.as_ref())
    })?;
    if let Some(m) = &ifscale_mark {
        mark_tables(&inputs.out.join("tables/ifscale"), m)?;
    }
    let mut drawn = crate::figure::with_title_mark(rift_mark.as_deref(), || {
        draw_rift(inputs, run.as_ref(), drawn)
    })?;
    if let Some(m) = &rift_mark {
        mark_tables(&inputs.out.join("tables/rift"), m)?;
        let table2 = inputs.out.join("tables/rift/rift_table2.md");
        if table2.is_file() {
            drawn.rift_table2 = Some(std::fs::read_to_string(&table2).map_err(io(&table2))?);
        }
    }
    if drawn.ifscale.is_none() && !drawn.ifscale_records && drawn.rift_table2.is_none() {
        return Err(Error::Input(
            "nothing to analyse: no ifscale/scores.jsonl or rift/answer-scores.jsonl in the run folder, and no \
             IFScale per-sample CSV, keyword labels, attempts logs, RIFT folder or synthetic RIFT run"
                .to_owned(),
        ));
    }
    Ok(drawn)
}

/// Puts `[mark]` before the caption (first line) of every Markdown table in `dir`.
fn mark_tables(dir: &Path, mark: &str) -> Result<(), Error> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries {
        let path = entry.map_err(io(dir))?.path();
        if path.extension().is_none_or(|e| e != "md") {
            continue;
        }
        let text = std::fs::read_to_string(&path).map_err(io(&path))?;
        if text.contains(schema::judge_check::JUDGE_FAILED_MARK) {
            continue;
        }
        schema::write_atomic(&path, format!("[{mark}] {text}").as_bytes())
            .map_err(|e| Error::Input(e.to_string()))?;
    }
    Ok(())
}

/// The IFScale tables and figures.
fn draw_ifscale(inputs: &Inputs, run: Option<&RunPaths>) -> Result<Drawn, Error> {
    let mut drawn = Drawn::default();
    let out = &inputs.out;

    // IFScale aggregates.
    let mut frames = Vec::new();
    if let Some(scores) = run.map(RunPaths::ifscale_scores).filter(|p| p.exists()) {
        frames.push(analysis::ifscale::load_scores(std::slice::from_ref(
            &scores,
        ))?);
    }
    if let Some(csv) = &inputs.ifscale_per_sample {
        must_exist(csv)?;
        frames.push(analysis::ifscale::load_reference_csv(csv)?);
    }
    let mut models: Vec<String> = Vec::new();
    if let Some(samples) = analysis::ifscale::pool(frames)? {
        let cfg = analysis::ifscale::AggregateConfig {
            bootstrap_resamples: inputs.bootstrap_resamples,
            bootstrap_seed: inputs.seed,
            ci_level: 0.95,
        };
        let summary = analysis::ifscale::aggregate(&samples, &cfg)?;
        let tables = analysis::ifscale::write_tables(&summary, &out.join("tables/ifscale"))?;
        // The run's vocabulary, by the hash its prompts carry (published-layout CSVs carry none: no note).
        let vocabulary = match run {
            Some(r) => analysis::ifscale::vocabulary::run_vocabulary(&r.ifscale_prompts())?,
            None => None,
        };
        let figures = crate::ifscale::draw_all(
            &summary,
            &inputs.rule,
            vocabulary,
            &out.join("figures/ifscale"),
        )?;
        tracing::info!(
            samples = samples.height(),
            models = summary.models.len(),
            tables = tables.len(),
            figures = figures.len(),
            "Wrote the IFScale tables and figures."
        );
        drawn.tables += tables.len();
        drawn.figures += figures.len();
        models.clone_from(&summary.models);
        let reference = inputs.ifscale_reference_dir.clone().or_else(|| {
            let dir = inputs.ifscale_per_sample.as_ref()?.parent()?.to_owned();
            dir.join("accuracy_by_rules.csv").exists().then_some(dir)
        });
        if let Some(dir) = reference {
            let checks = analysis::ifscale::check_against_reference(&summary, &dir)?;
            let leaderboard = dir.join("published_results_table.csv");
            if leaderboard.exists() {
                let published = analysis::ifscale::results::load_published_results(&leaderboard)?;
                let cmp = analysis::ifscale::results::compare_published(&summary, &published);
                drawn.leaderboard = Some((leaderboard, cmp));
            }
            drawn.reference = Some((dir, checks));
        }
        drawn.ifscale = Some(summary);
    }
    drawn.ifscale_records = ifscale_records(inputs, run, &models, &mut drawn)?;
    Ok(drawn)
}

/// The RIFT tables and figures, added to what `drawn` holds.
fn draw_rift(inputs: &Inputs, run: Option<&RunPaths>, mut drawn: Drawn) -> Result<Drawn, Error> {
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
    if let Some(dir) = rift_dir {
        let (answers, prompts) = analysis::rift::load_run(&dir)?;
        let summary = analysis::rift::aggregate(
            answers,
            prompts.as_ref(),
            &analysis::rift::RiftConfig {
                token_bin_width: None,
                reasoning: inputs.rule.clone(),
            },
        )?;
        let tables = analysis::rift::write_tables(&summary, &out.join("tables/rift"))?;
        let figures = crate::rift::draw_all(&summary, &inputs.rule, &out.join("figures/rift"))?;
        tracing::info!(
            models = summary.models.len(),
            tables = tables.len(),
            figures = figures.len(),
            "Wrote the RIFT tables and figures."
        );
        drawn.tables += tables.len();
        drawn.figures += figures.len();
        let table2 = out.join("tables/rift/rift_table2.md");
        drawn.rift_table2 = Some(std::fs::read_to_string(&table2).map_err(io(&table2))?);
    }
    Ok(drawn)
}

/// The IFScale analyses of keyword labels and attempts logs. Returns whether there was any input.
fn ifscale_records(
    inputs: &Inputs,
    run: Option<&RunPaths>,
    models: &[String],
    drawn: &mut Drawn,
) -> Result<bool, Error> {
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
    let (tables_dir, figures_dir) = (
        inputs.out.join("tables/ifscale"),
        inputs.out.join("figures/ifscale"),
    );
    // One colour per model across every figure: the aggregate's models plus any only these records name.
    let mut palette = models.to_vec();
    if !labels.is_empty() {
        let labels = analysis::ifscale::primacy::load_labels(&labels)?;
        let rows = analysis::ifscale::primacy::thirds(&labels);
        palette.extend(rows.iter().map(|r| r.model.clone()));
        let tables = analysis::ifscale::primacy::write_tables(&rows, &tables_dir)?;
        let figures =
            crate::ifscale::extra::draw_primacy(&rows, &palette, &inputs.rule, &figures_dir)?;
        drawn.tables += tables.len();
        drawn.figures += figures.len();
    }
    if !attempts.is_empty() {
        let attempts = analysis::ifscale::coherence::load_attempts(&attempts)?;
        let cfg = analysis::ifscale::coherence::CoherenceConfig {
            threshold: inputs.coherence_threshold,
        };
        let rows = analysis::ifscale::coherence::aggregate(&attempts, &cfg)?;
        palette.extend(rows.iter().map(|r| r.model.clone()));
        let tables = analysis::ifscale::coherence::write_tables(&rows, &cfg, &tables_dir)?;
        let figures = crate::ifscale::extra::draw_coherence(
            &rows,
            cfg.threshold,
            &palette,
            &inputs.rule,
            &figures_dir,
        )?;
        drawn.tables += tables.len();
        drawn.figures += figures.len();
    }
    Ok(!labels.is_empty() || !attempts.is_empty())
}

fn write_synthetic_rift(dir: &Path, seed: u64) -> Result<PathBuf, Error> {
    let cfg = analysis::synthetic::SyntheticConfig {
        seed,
        models: 6,
        prompts_per_structure: 300,
        baseline_prompts: 300,
        min_questions: 10,
        max_questions: 300,
    };
    let (prompts, answers) = analysis::synthetic::generate_records(&cfg);
    schema::write_jsonl_atomic(&dir.join("prompt-scores.jsonl"), &prompts)?;
    schema::write_jsonl_atomic(&dir.join("answer-scores.jsonl"), &answers)?;
    tracing::info!(prompts = prompts.len(), answers = answers.len(), dir = %dir.display(), "Wrote a synthetic RIFT run.");
    Ok(dir.to_owned())
}
