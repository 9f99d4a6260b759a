//! `cargo xtask compare`: paired comparisons of models and runs on the same items, and the regression gate.
//!
//! Each argument is `<run>` (every model of the run) or `<run>:<model>`; a run is a folder, or a name under
//! `artifacts/runs/`. The runs' prompt files must hold the same items (checked through `analysis::compare::align`;
//! a mismatch is one usage error naming what differs; runs are read through `analysis::compare::runs`), then
//! `analysis::compare::report::build` computes everything, `compare.md`, `compare.json` and the figures are written
//! to `--out` (`report::compare::write_files`, the writer the report of a multi-model run uses too) and the
//! Markdown is printed. With `--fail-if-worse`
//! the command exits 5 ([`pipeline::outcome::EXIT_REGRESSION`]) unless every candidate is shown non-inferior to the baseline.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use analysis::compare::Options;
use analysis::compare::report;
use analysis::compare::runs::{RunData, differences};

use pipeline::Failure;

#[derive(Debug, clap::Args)]
pub(crate) struct CompareArgs {
    /// What to compare: `<run>` (every model of the run) or `<run>:<model>`; a run is a folder or a name under
    /// `artifacts/runs/`. Differences are each candidate minus the baseline, or first minus second.
    #[arg(required = true, value_name = "RUN[:MODEL]")]
    entries: Vec<String>,
    /// The model every other one is compared against (`<run>:<model>`, or a run holding one model).
    #[arg(long, value_name = "RUN[:MODEL]")]
    baseline: Option<String>,
    /// Seed of the bootstrap and of Monte Carlo sign flips (the output is the same for the same seed).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Significance level; intervals have central mass 1 − α.
    #[arg(long, default_value_t = 0.05)]
    alpha: f64,
    /// Bootstrap resamples (and random sign vectors when there are too many units to enumerate).
    #[arg(long, default_value_t = 10_000)]
    resamples: usize,
    /// IFScale: the accuracy level (percent) whose first crossing N is reported per model.
    #[arg(long, default_value_t = 50.0)]
    level: f64,
    /// Regression gate: exit 5 unless each candidate is shown worse than the baseline by less than this many
    /// percentage points (one-sided non-inferiority test at α) on every shared measure.
    #[arg(long, value_name = "PP")]
    fail_if_worse: Option<f64>,
    /// Where `compare.md` and `compare.json` go (default `artifacts/compare/<first>-vs-<second>…`).
    #[arg(long)]
    out: Option<PathBuf>,
}

/// A run folder and, when named, one of its models.
#[derive(Debug, Clone, PartialEq)]
struct Spec {
    run: PathBuf,
    model: Option<String>,
}

fn run_dir(name: &str) -> Option<PathBuf> {
    let direct = PathBuf::from(name);
    if direct.is_dir() {
        return Some(direct);
    }
    let under = Path::new("artifacts/runs").join(name);
    under.is_dir().then_some(under)
}

fn parse_spec(spec: &str) -> Result<Spec, Failure> {
    if let Some(run) = run_dir(spec) {
        return Ok(Spec { run, model: None });
    }
    // The model follows the first `:` whose left side is a run, so a model id may hold `:` itself.
    for (at, _) in spec.match_indices(':') {
        let model = &spec[at + 1..];
        if let Some(run) = run_dir(&spec[..at])
            && !model.is_empty()
        {
            return Ok(Spec {
                run,
                model: Some(model.to_owned()),
            });
        }
    }
    Err(Failure::Usage(format!(
        "{spec}: no such run (a folder, or a name under artifacts/runs/, optionally followed by :<model>)"
    )))
}

fn run_name(run: &Path) -> String {
    run.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| run.display().to_string())
}

fn safe(label: &str) -> String {
    label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[allow(clippy::print_stdout)]
pub(crate) fn run(args: &CompareArgs) -> anyhow::Result<()> {
    if !(args.alpha > 0.0 && args.alpha < 0.5) {
        return Err(
            Failure::Usage(format!("--alpha {}: must be between 0 and 0.5", args.alpha)).into(),
        );
    }
    if args.resamples == 0 {
        return Err(Failure::Usage("--resamples must be at least 1".to_owned()).into());
    }
    if !(0.0..=100.0).contains(&args.level) {
        return Err(Failure::Usage(format!("--level {}: must be a percentage", args.level)).into());
    }
    if let Some(m) = args.fail_if_worse {
        if !(m.is_finite() && m > 0.0) {
            return Err(Failure::Usage(format!(
                "--fail-if-worse {m}: must be a positive number of percentage points"
            ))
            .into());
        }
        if args.baseline.is_none() {
            return Err(Failure::Usage(
                "--fail-if-worse needs --baseline (the model the candidates must not fall behind)"
                    .to_owned(),
            )
            .into());
        }
    }
    let mut specs: Vec<Spec> = args
        .entries
        .iter()
        .map(|s| parse_spec(s))
        .collect::<Result<_, _>>()?;
    let baseline_spec = args.baseline.as_deref().map(parse_spec).transpose()?;
    if let Some(b) = &baseline_spec {
        specs.push(b.clone());
    }

    let mut runs: BTreeMap<PathBuf, RunData> = BTreeMap::new();
    for s in &specs {
        if !runs.contains_key(&s.run) {
            runs.insert(s.run.clone(), RunData::read(&s.run)?);
        }
    }
    // Every run against the first: the same items, or one error naming what differs.
    let first = &specs[0].run;
    for (path, data) in &runs {
        if path != first
            && let Some(d) = differences(&runs[first], data)
        {
            return Err(Failure::Usage(format!(
                "items differ between {} and {}: {d}",
                first.display(),
                path.display()
            ))
            .into());
        }
    }

    // (run, model) of each side, baseline last.
    let mut sides: Vec<(PathBuf, String)> = Vec::new();
    let mut baseline_side = None;
    for (i, s) in specs.iter().enumerate() {
        let data = &runs[&s.run];
        let models = data.models();
        let chosen = match &s.model {
            Some(m) if models.contains(m) => vec![m.clone()],
            Some(m) => {
                return Err(Failure::Usage(format!(
                    "{}: no model {m} (it holds {})",
                    s.run.display(),
                    if models.is_empty() {
                        "no scores".to_owned()
                    } else {
                        models.join(", ")
                    }
                ))
                .into());
            }
            None if models.is_empty() => {
                return Err(Failure::Usage(format!(
                    "{}: no IFScale or RIFT scores",
                    s.run.display()
                ))
                .into());
            }
            None => models,
        };
        let is_baseline = baseline_spec.is_some() && i == specs.len() - 1;
        if is_baseline && chosen.len() != 1 {
            return Err(Failure::Usage(format!(
                "--baseline {}: the run holds {} models; name one as <run>:<model>",
                s.run.display(),
                chosen.len()
            ))
            .into());
        }
        for m in chosen {
            let side = (s.run.clone(), m);
            let at = match sides.iter().position(|x| *x == side) {
                Some(at) => at,
                None => {
                    sides.push(side);
                    sides.len() - 1
                }
            };
            if is_baseline {
                baseline_side = Some(at);
            }
        }
    }
    if sides.len() < 2 {
        return Err(Failure::Usage("give at least two models to compare".to_owned()).into());
    }
    let one_run = sides.iter().all(|s| s.0 == sides[0].0);
    let profiles = sides
        .iter()
        .map(|(run, m)| {
            Ok((
                format!("{}:{m}", run_name(run)),
                ::report::served::Profile::of(&schema::paths::RunPaths::new(run), m)?,
            ))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    if let Some(note) = ::report::served::compare_note(&profiles) {
        tracing::warn!("{note}");
    }
    let mut entries = Vec::new();
    for (run, model) in &sides {
        let label = if one_run {
            model.clone()
        } else {
            format!("{}:{model}", run_name(run))
        };
        entries.push(runs[run].entry(run, model, label)?);
    }
    let opts = Options {
        alpha: args.alpha,
        power: 0.8,
        resamples: args.resamples,
        seed: args.seed,
        level: args.level,
    };
    let report = report::build(&entries, baseline_side, args.fail_if_worse, &opts);
    let out = args.out.clone().unwrap_or_else(|| {
        Path::new("artifacts/compare").join(
            entries
                .iter()
                .map(|e| safe(&e.label))
                .collect::<Vec<_>>()
                .join("-vs-"),
        )
    });
    let (markdown, figures) = ::report::compare::write_files(&report, &out)?;
    println!("{markdown}");
    tracing::info!(out = %out.display(), figures = figures.len(), "Wrote compare.md, compare.json and the figures.");
    if let Some(gate) = &report.gate {
        if gate.checks.is_empty() {
            return Err(Failure::Usage(
                "--fail-if-worse: the candidates and the baseline share no benchmark to gate on"
                    .to_owned(),
            )
            .into());
        }
        if !gate.passed {
            let failed: Vec<String> = gate
                .checks
                .iter()
                .filter(|c| !c.verdict.passes())
                .map(|c| {
                    format!(
                        "{} vs {}: {} {} ({:+.2} pp, one-sided lower bound {:+.2} ≤ −{})",
                        c.candidate,
                        c.baseline,
                        c.measure,
                        c.verdict.as_str(),
                        c.diff,
                        c.lower,
                        gate.margin
                    )
                })
                .collect();
            return Err(Failure::Regression(format!(
                "regression gate failed (margin {} pp, α = {}): {}",
                gate.margin,
                gate.alpha,
                failed.join("; ")
            ))
            .into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_name_a_run_and_maybe_a_model() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("r1");
        std::fs::create_dir_all(&run).unwrap();
        let plain = run.display().to_string();
        assert_eq!(
            parse_spec(&plain).unwrap(),
            Spec {
                run: run.clone(),
                model: None
            }
        );
        let colons = parse_spec(&format!("{plain}:ollama:qwen3:8b")).unwrap();
        assert_eq!(
            (colons.run, colons.model.as_deref()),
            (run.clone(), Some("ollama:qwen3:8b"))
        );
        assert!(
            parse_spec(&format!("{plain}:"))
                .unwrap_err()
                .to_string()
                .contains("no such run")
        );
        let with = parse_spec(&format!("{plain}:org/model")).unwrap();
        assert_eq!(with.model.as_deref(), Some("org/model"));
        assert!(parse_spec("/nonexistent/run").is_err());
    }
}
