//! `cargo xtask plots`: regenerates every table and figure from artifacts alone (no model call), and prints the
//! decay fits, the checks against the published aggregates and leaderboard, and RIFT's Table 2.
//!
//! `pipeline::analyse_and_draw` is the one caller of both halves, in order, for this command and the pipeline's analysis
//! stage: `analysis::all::analyse` (see there for the inputs) writes the tables and returns the summaries, then
//! `plots::all::draw` draws the figures from them.

use std::path::{Path, PathBuf};

use analysis::all::Inputs;
use analysis::ifscale::ReferenceCheck;
use analysis::ifscale::results::ResultsComparison;
use analysis::models::ReasoningRule;
use anyhow::bail;

use pipeline::Failure;

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

#[allow(clippy::print_stdout)]
pub(crate) fn run(args: &PlotsArgs) -> anyhow::Result<()> {
    let out = match (&args.out, &args.run_dir) {
        (Some(o), _) => o.clone(),
        (None, Some(r)) => r.clone(),
        (None, None) => return Err(Failure::Usage("give --run-dir or --out".to_owned()).into()),
    };
    let inputs = Inputs {
        run_dir: args.run_dir.clone(),
        ifscale_per_sample: args.ifscale_per_sample.clone(),
        ifscale_reference_dir: args.ifscale_reference_dir.clone(),
        ifscale_labels: args.ifscale_labels.clone(),
        ifscale_attempts: args.ifscale_attempts.clone(),
        coherence_threshold: args.coherence_threshold,
        rift_dir: args.rift_dir.clone(),
        rift_synthetic: args.rift_synthetic,
        out,
        rule: ReasoningRule {
            explicit: args.reasoning_models.clone(),
        },
        bootstrap_resamples: args.bootstrap_resamples,
        seed: args.seed,
    };
    let (drawn, figures) = pipeline::analyse_and_draw(&inputs)?;
    if let Some(summary) = &drawn.ifscale {
        print_fits(summary);
    }
    if let Some((dir, checks)) = &drawn.reference {
        check_reference(checks, dir)?;
    }
    if let Some((path, cmp)) = &drawn.leaderboard {
        print_leaderboard(cmp, path);
    }
    if let Some(table2) = &drawn.rift_table2 {
        println!("{table2}");
    }
    tracing::info!(
        tables = drawn.tables,
        figures,
        "Wrote the tables and figures."
    );
    Ok(())
}

#[allow(clippy::print_stdout)]
fn print_leaderboard(cmp: &ResultsComparison, path: &Path) {
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
fn check_reference(checks: &[ReferenceCheck], dir: &Path) -> anyhow::Result<()> {
    println!("\nPublished aggregates in {}:", dir.display());
    let mut bad = false;
    for c in checks {
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
