//! `cargo xtask plots`: regenerates every table and figure from artifacts alone (no model call).
//!
//! IFScale input: the run's `ifscale/scores.jsonl` and/or a published-layout per-sample CSV (both are pooled); keyword
//! labels (`ifscale/labels.jsonl`, `--ifscale-labels`) for the primacy thirds; attempts logs (`ifscale/attempts.jsonl`,
//! `--ifscale-attempts`) for coherence over all attempts.
//! RIFT input: the run's `rift/` folder, `--rift-dir`, or `--rift-synthetic` (a deterministic synthetic run).
//! Output: `<out>/tables/{ifscale,rift}/` (Parquet, CSV, Markdown) and `<out>/figures/{ifscale,rift}/` (PNG, SVG).

use std::path::{Path, PathBuf};

use analysis::models::ReasoningRule;
use anyhow::{Context, bail};

use crate::UsageError;

#[derive(Debug, clap::Args)]
pub(crate) struct PlotsArgs {
    /// A run folder (`artifacts/runs/<run>`): reads its IFScale and RIFT scores, writes its `tables/` and `figures/`.
    #[arg(long)]
    run_dir: Option<PathBuf>,
    /// A per-sample CSV in the published layout (`model,num_rules,seed,accuracy,omission_pct,modification_pct,recency_ratio,latency`).
    #[arg(long)]
    ifscale_per_sample: Option<PathBuf>,
    /// Folder with the published aggregate CSVs to check against (default: the per-sample CSV's folder when it holds them).
    #[arg(long)]
    ifscale_reference_dir: Option<PathBuf>,
    /// Keyword-label JSONL files (`schema::ifscale::KeywordLabel`), pooled with the run's `ifscale/labels.jsonl`.
    #[arg(long, value_delimiter = ',')]
    ifscale_labels: Vec<PathBuf>,
    /// Attempts-log JSONL files (`schema::ifscale::AttemptLog`), pooled with the run's `ifscale/attempts.jsonl`.
    #[arg(long, value_delimiter = ',')]
    ifscale_attempts: Vec<PathBuf>,
    /// Coherence scores below this count as incoherent (the paper's threshold is 6).
    #[arg(long, default_value_t = analysis::ifscale::coherence::PAPER_THRESHOLD)]
    coherence_threshold: u8,
    /// A RIFT records folder (`answer-scores.jsonl`, optional `prompt-scores.jsonl`); default `<run-dir>/rift`.
    #[arg(long)]
    rift_dir: Option<PathBuf>,
    /// Analyse a deterministic synthetic RIFT run (6 models, 300 prompts per structure) written to `<out>/rift-synthetic/`.
    #[arg(long)]
    rift_synthetic: bool,
    /// Output root for `tables/` and `figures/` (default: the run folder).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Comma-separated models that are reasoning models (default: a name rule, see `analysis::models`).
    #[arg(long, value_delimiter = ',')]
    reasoning_models: Option<Vec<String>>,
    /// Bootstrap resamples per (model, N) for the 95 % intervals.
    #[arg(long, default_value_t = 2000)]
    bootstrap_resamples: usize,
    /// Seed of the bootstrap and of the synthetic RIFT run.
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

/// Every table and figure of a run folder, written into it: the pipeline's analysis stage.
pub(crate) fn analyse_run(run_dir: &Path, rule: &ReasoningRule) -> anyhow::Result<()> {
    run(&PlotsArgs {
        run_dir: Some(run_dir.to_owned()),
        ifscale_per_sample: None,
        ifscale_reference_dir: None,
        ifscale_labels: Vec::new(),
        ifscale_attempts: Vec::new(),
        coherence_threshold: analysis::ifscale::coherence::PAPER_THRESHOLD,
        rift_dir: None,
        rift_synthetic: false,
        out: None,
        reasoning_models: rule.explicit.clone(),
        bootstrap_resamples: 2000,
        seed: 0,
    })
}

#[allow(clippy::print_stdout)]
pub(crate) fn run(args: &PlotsArgs) -> anyhow::Result<()> {
    let out = match (&args.out, &args.run_dir) {
        (Some(o), _) => o.clone(),
        (None, Some(r)) => r.clone(),
        (None, None) => return Err(UsageError("give --run-dir or --out".to_owned()).into()),
    };
    let rule = ReasoningRule {
        explicit: args.reasoning_models.clone(),
    };
    let run = args.run_dir.as_deref().map(schema::paths::RunPaths::new);

    // IFScale.
    let mut frames = Vec::new();
    if let Some(run) = &run {
        let scores = run.ifscale_scores();
        if scores.exists() {
            frames.push(analysis::ifscale::load_scores(std::slice::from_ref(
                &scores,
            ))?);
        }
    }
    if let Some(csv) = &args.ifscale_per_sample {
        if !csv.exists() {
            return Err(UsageError(format!("{}: no such file", csv.display())).into());
        }
        frames.push(analysis::ifscale::load_reference_csv(csv)?);
    }
    let mut did_something = false;
    let mut ifscale_models: Vec<String> = Vec::new();
    if !frames.is_empty() {
        let mut samples = frames.remove(0);
        for f in &frames {
            samples.vstack_mut(f).context("pooling IFScale samples")?;
        }
        let cfg = analysis::ifscale::AggregateConfig {
            bootstrap_resamples: args.bootstrap_resamples,
            bootstrap_seed: args.seed,
            ci_level: 0.95,
        };
        let summary = analysis::ifscale::aggregate(&samples, &cfg)?;
        let tables_dir = out.join("tables/ifscale");
        let figures_dir = out.join("figures/ifscale");
        let tables = analysis::ifscale::write_tables(&summary, &tables_dir)?;
        let figures = plots::ifscale::draw_all(&summary, &rule, &figures_dir)?;
        tracing::info!(
            samples = samples.height(),
            models = summary.models.len(),
            tables = tables.len(),
            figures = figures.len(),
            "Wrote the IFScale tables and figures."
        );
        print_fits(&summary);
        ifscale_models.clone_from(&summary.models);
        let reference = args.ifscale_reference_dir.clone().or_else(|| {
            let dir = args.ifscale_per_sample.as_ref()?.parent()?.to_owned();
            dir.join("accuracy_by_rules.csv").exists().then_some(dir)
        });
        if let Some(dir) = reference {
            check_reference(&summary, &dir)?;
            let leaderboard = dir.join("published_results_table.csv");
            if leaderboard.exists() {
                print_leaderboard(&summary, &leaderboard)?;
            }
        }
        did_something = true;
    }
    did_something |= ifscale_records(args, run.as_ref(), &ifscale_models, &rule, &out)?;

    // RIFT.
    let rift_dir = if args.rift_synthetic {
        Some(write_synthetic_rift(
            &out.join("rift-synthetic"),
            args.seed,
        )?)
    } else {
        args.rift_dir.clone().or_else(|| {
            run.as_ref()
                .map(|r| r.bench(schema::paths::Bench::Rift))
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
            },
        )?;
        let tables = analysis::rift::write_tables(&summary, &out.join("tables/rift"))?;
        let figures = plots::rift::draw_all(&summary, &rule, &out.join("figures/rift"))?;
        tracing::info!(
            models = summary.models.len(),
            tables = tables.len(),
            figures = figures.len(),
            "Wrote the RIFT tables and figures."
        );
        let table2 = std::fs::read_to_string(out.join("tables/rift/rift_table2.md"))
            .context("reading back Table 2")?;
        println!("{table2}");
        did_something = true;
    }
    if !did_something {
        return Err(UsageError(
            "nothing to analyse: no ifscale/scores.jsonl or rift/answer-scores.jsonl in the run folder, and no --ifscale-per-sample, --ifscale-labels, --ifscale-attempts, --rift-dir or --rift-synthetic".to_owned(),
        )
        .into());
    }
    Ok(())
}

/// The IFScale analyses of keyword labels and attempts logs: tables and figures. Returns whether there was any input.
fn ifscale_records(
    args: &PlotsArgs,
    run: Option<&schema::paths::RunPaths>,
    models: &[String],
    rule: &ReasoningRule,
    out: &Path,
) -> anyhow::Result<bool> {
    let gather = |given: &[PathBuf], in_run: Option<PathBuf>| -> anyhow::Result<Vec<PathBuf>> {
        let mut files: Vec<PathBuf> = in_run.filter(|p| p.exists()).into_iter().collect();
        for f in given {
            if !f.exists() {
                return Err(UsageError(format!("{}: no such file", f.display())).into());
            }
            files.push(f.clone());
        }
        Ok(files)
    };
    let labels = gather(&args.ifscale_labels, run.map(|r| r.ifscale_labels()))?;
    let attempts = gather(&args.ifscale_attempts, run.map(|r| r.ifscale_attempts()))?;
    let (tables_dir, figures_dir) = (out.join("tables/ifscale"), out.join("figures/ifscale"));
    // One colour per model across every figure: the aggregate's models plus any only these records name.
    let mut palette = models.to_vec();
    if !labels.is_empty() {
        let labels = analysis::ifscale::primacy::load_labels(&labels)?;
        let rows = analysis::ifscale::primacy::thirds(&labels);
        palette.extend(rows.iter().map(|r| r.model.clone()));
        let tables = analysis::ifscale::primacy::write_tables(&rows, &tables_dir)?;
        let figures = plots::ifscale::extra::draw_primacy(&rows, &palette, rule, &figures_dir)?;
        tracing::info!(
            labels = labels.len(),
            rows = rows.len(),
            tables = tables.len(),
            figures = figures.len(),
            "Wrote the IFScale primacy thirds."
        );
    }
    if !attempts.is_empty() {
        let attempts = analysis::ifscale::coherence::load_attempts(&attempts)?;
        let cfg = analysis::ifscale::coherence::CoherenceConfig {
            threshold: args.coherence_threshold,
        };
        let rows = analysis::ifscale::coherence::aggregate(&attempts, &cfg)?;
        palette.extend(rows.iter().map(|r| r.model.clone()));
        let tables = analysis::ifscale::coherence::write_tables(&rows, &cfg, &tables_dir)?;
        let figures = plots::ifscale::extra::draw_coherence(
            &rows,
            cfg.threshold,
            &palette,
            rule,
            &figures_dir,
        )?;
        tracing::info!(
            attempts = attempts.len(),
            rows = rows.len(),
            tables = tables.len(),
            figures = figures.len(),
            "Wrote the IFScale coherence over all attempts."
        );
    }
    Ok(!labels.is_empty() || !attempts.is_empty())
}

#[allow(clippy::print_stdout)]
fn print_leaderboard(
    summary: &analysis::ifscale::IfscaleSummary,
    path: &Path,
) -> anyhow::Result<()> {
    let published = analysis::ifscale::results::load_published_results(path)?;
    let cmp = analysis::ifscale::results::compare_published(summary, &published);
    println!(
        "\nPublished leaderboard {} (accuracy and std at N = 10, 50, 100, 250, 500, rounded to 0.1):",
        path.display()
    );
    for r in &cmp.rows {
        let note = match r.name_rule_diff {
            Some(d) if r.matched_by_values => {
                format!("  (matched by values; the name rule's configuration differs by {d:.2})")
            }
            _ => String::new(),
        };
        println!(
            "  {:<28} {:<48} max |diff| {:.3} at {}{note}",
            r.published, r.model, r.max_abs_diff, r.worst
        );
    }
    for u in &cmp.unmatched {
        println!("  {u:<28} no configuration here");
    }
    println!("  largest difference {:.3}", cmp.max_abs_diff());
    Ok(())
}

fn write_synthetic_rift(dir: &Path, seed: u64) -> anyhow::Result<PathBuf> {
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

#[allow(clippy::print_stdout)]
fn print_fits(summary: &analysis::ifscale::IfscaleSummary) {
    println!(
        "{:<48} {:<36} {:>7} {:<9} {:>10} {:>10}",
        "model", "decay", "margin", "variance", "breakpoint", "exp floor"
    );
    for f in &summary.fits {
        let var = summary
            .variance
            .iter()
            .find(|v| v.0 == f.model)
            .and_then(|v| v.1)
            .map_or("-", |v| v.as_str());
        println!(
            "{:<48} {:<36} {:>7} {:<9} {:>10} {:>10}",
            f.model,
            f.label(),
            analysis::tables::fmt_opt(f.margin, 1),
            var,
            analysis::tables::fmt_opt(f.threshold.as_ref().map(|t| t.breakpoint), 0),
            analysis::tables::fmt_opt(f.exponential.as_ref().map(|e| e.floor), 1),
        );
    }
}

#[allow(clippy::print_stdout)]
fn check_reference(summary: &analysis::ifscale::IfscaleSummary, dir: &Path) -> anyhow::Result<()> {
    let checks = analysis::ifscale::check_against_reference(summary, dir)?;
    println!("\nPublished aggregates in {}:", dir.display());
    let mut bad = false;
    for c in &checks {
        let ok = c.max_abs_diff <= 1e-9 && c.mismatches.is_empty();
        bad |= !ok;
        println!(
            "  {:<28} rows {:>5}  max |diff| {:.3e}  {}",
            c.table,
            c.rows_compared,
            c.max_abs_diff,
            if ok {
                "reproduced".to_owned()
            } else {
                format!("MISMATCH: {}", c.mismatches.join("; "))
            }
        );
    }
    if bad {
        bail!(
            "the aggregates do not reproduce the published ones in {}",
            dir.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `cargo xtask plots --ifscale-per-sample <published per_sample.csv> --ifscale-labels … --ifscale-attempts …`
    /// draws every IFScale table and figure: the published data give the aggregate, decay, results, effort and
    /// leaderboard outputs; the analysis crate's label and attempt fixtures give the primacy thirds and coherence.
    #[test]
    fn published_data_and_fixtures_draw_every_ifscale_output() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let out = std::env::temp_dir().join(format!("ifstress-plots-{}", std::process::id()));
        let fixture = |name: &str| root.join("crates/analysis/test_data").join(name);
        let args = PlotsArgs {
            run_dir: None,
            ifscale_per_sample: Some(root.join("datasets/ifscale-reference/per_sample.csv")),
            ifscale_reference_dir: None,
            ifscale_labels: vec![fixture("ifscale_labels.jsonl")],
            ifscale_attempts: vec![fixture("ifscale_attempts.jsonl")],
            coherence_threshold: 6,
            rift_dir: None,
            rift_synthetic: false,
            out: Some(out.clone()),
            reasoning_models: None,
            bootstrap_resamples: 50,
            seed: 0,
        };
        run(&args).unwrap();
        for table in [
            "ifscale_decay_fits",
            "ifscale_results",
            "ifscale_results_full",
            "ifscale_effort_pairs",
            "ifscale_primacy_thirds",
            "ifscale_coherence_attempts",
        ] {
            let md = out.join(format!("tables/ifscale/{table}.md"));
            assert!(md.exists(), "{}", md.display());
        }
        for figure in [
            "ifscale_decay_archetypes",
            "ifscale_effort_lower_vs_high",
            "ifscale_primacy_thirds",
            "ifscale_coherence_all_attempts_vs_n",
            "ifscale_coherence_vs_output_tokens",
        ] {
            let png = out.join(format!("figures/ifscale/{figure}.png"));
            assert!(png.exists(), "{}", png.display());
        }
        // The published per-sample data carry no token counts: no reasoning-token figure is drawn from them.
        assert!(
            !out.join("figures/ifscale/ifscale_reasoning_tokens_vs_n.png")
                .exists()
        );
        std::fs::remove_dir_all(&out).unwrap();
    }
}
