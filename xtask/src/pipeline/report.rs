//! The last stages: analysis and figures from the run's score files, then `report.html` and `summary.md`.
//! Denominators are counted from the files themselves, so a rerun that skipped every stage reports the same numbers.

use std::path::{Path, PathBuf};

use analysis::models::ReasoningRule;
use plots::report::{ConfigBlock, Excerpt, FigureRef, Link, ReportInput, Section};
use schema::paths::{Bench, RunPaths};

use super::fresh::Fingerprint;
use super::{Outcome, PipelineConfig, Stager};

pub(super) fn analyse_and_report(
    cfg: &PipelineConfig,
    config_text: &str,
    paths: &RunPaths,
    stage: &mut Stager<'_>,
) -> anyhow::Result<()> {
    let rule = ReasoningRule {
        explicit: cfg.run.reasoning_models.clone(),
    };
    let ifscale_scores = paths.ifscale_scores();
    let rift_answers = paths.rift_answer_scores();
    let rift_prompts = paths.rift_prompt_scores();
    let fp = Fingerprint::new("analysis")
        .value("reasoning-models", &cfg.run.reasoning_models)?
        .file(&ifscale_scores)?
        .file(&rift_answers)?
        .file(&rift_prompts)?;
    let outputs = vec![paths.tables(), paths.figures()];
    stage.run("analysis", fp, &outputs, || {
        crate::plots::analyse_run(&paths.root, &rule)
    })?;

    let figures = list_files(&paths.figures(), "png")?;
    let tables = list_files(&paths.tables(), "md")?;
    let mut fp = Fingerprint::new("report").value("config", &config_text)?;
    for f in figures.iter().chain(&tables) {
        fp = fp.file(f)?;
    }
    let report = paths.report();
    stage.run("report", fp, std::slice::from_ref(&report), || {
        let input = report_input(cfg, config_text, paths)?;
        plots::report::write(&input, &report)?;
        tracing::info!(report = %report.display(), "Wrote the HTML report.");
        match super::screenshot::find_chromium() {
            Some(chromium) => {
                let png = paths.root.join("report.png");
                super::screenshot::screenshot(&chromium, &report, &png, 3000)?;
                tracing::info!(screenshot = %png.display(), "Rendered the report in headless Chromium.");
            }
            None => tracing::warn!("Chromium not found; the report was not rendered for a screenshot."),
        }
        Ok(())
    })?;
    Ok(())
}

fn list_files(dir: &Path, ext: &str) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    if !dir.is_dir() {
        return Ok(out);
    }
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let p = entry?.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == ext) {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

fn rel(paths: &RunPaths, p: &Path) -> String {
    p.strip_prefix(&paths.root)
        .unwrap_or(p)
        .display()
        .to_string()
}

fn report_input(
    cfg: &PipelineConfig,
    config_text: &str,
    paths: &RunPaths,
) -> anyhow::Result<ReportInput> {
    let mut sections = Vec::new();
    for bench in [Bench::Ifscale, Bench::Rift] {
        let enabled = match bench {
            Bench::Ifscale => cfg.ifscale.is_some(),
            Bench::Rift => cfg.rift.is_some(),
        };
        if !enabled {
            continue;
        }
        sections.push(bench_section(cfg, paths, bench)?);
    }
    Ok(ReportInput {
        title: format!("ifstress run “{}”", cfg.run.name),
        subtitle: Some(format!(
            "Models: {}. Every number below is computed from the files linked in each section.",
            cfg.run.models.join(", ")
        )),
        config: Some(ConfigBlock {
            name: "Config".to_owned(),
            text: config_text.to_owned(),
        }),
        sections,
    })
}

fn bench_section(cfg: &PipelineConfig, paths: &RunPaths, bench: Bench) -> anyhow::Result<Section> {
    let mut section = Section {
        heading: if bench == Bench::Ifscale {
            "IFScale: instruction density".to_owned()
        } else {
            "RIFT: instruction topology".to_owned()
        },
        ..Section::default()
    };
    let prompts_file = match bench {
        Bench::Ifscale => paths.ifscale_prompts(),
        Bench::Rift => paths.rift_prompts(),
    };
    let prompts = if prompts_file.is_file() {
        schema::read_jsonl::<schema::PromptRecord>(&prompts_file)?.len()
    } else {
        0
    };
    section
        .denominators
        .push(("Prompts".to_owned(), prompts.to_string()));
    section.links.push(Link {
        label: "prompts".to_owned(),
        href: rel(paths, &prompts_file),
    });
    for model in &cfg.run.models {
        let responses = paths.model(bench, model).responses();
        let c = harness::overview::count_responses(&responses)?;
        section.denominators.push((
            format!("{model}: responses"),
            format!(
                "{} (ok {}, truncated {}, failed {}; {} served from the cache in the run that wrote them)",
                c.responses, c.ok, c.truncated, c.failed, c.cached
            ),
        ));
        section.links.push(Link {
            label: format!("{model}: responses"),
            href: rel(paths, &responses),
        });
        if let Some(excerpt) = harness::overview::first_reply(&responses)? {
            section.excerpts.push(Excerpt {
                label: format!("{model}: {}", excerpt.0),
                text: excerpt.1,
            });
        }
    }
    if bench == Bench::Ifscale {
        let scores = paths.ifscale_scores();
        if scores.is_file() {
            let judge = cfg
                .ifscale
                .as_ref()
                .is_some_and(|c| c.judge_model.is_some());
            section
                .denominators
                .extend(harness::overview::ifscale_denominators(&scores, judge)?);
            section.links.push(Link {
                label: "per-sample scores".to_owned(),
                href: rel(paths, &scores),
            });
            section.links.push(Link {
                label: "per-keyword labels".to_owned(),
                href: rel(paths, &paths.ifscale_labels()),
            });
            section.links.push(Link {
                label: "attempts log".to_owned(),
                href: rel(paths, &paths.ifscale_attempts()),
            });
        }
    } else {
        let answers = paths.rift_answer_scores();
        if answers.is_file() {
            section
                .denominators
                .extend(harness::overview::rift_denominators(&answers)?);
            section.links.push(Link {
                label: "per-answer scores".to_owned(),
                href: rel(paths, &answers),
            });
            section.links.push(Link {
                label: "per-prompt scores".to_owned(),
                href: rel(paths, &paths.rift_prompt_scores()),
            });
        }
        if cfg
            .rift_prep
            .as_ref()
            .and_then(|p| p.judge_model.as_ref())
            .is_none()
        {
            section.paragraphs.push(
                "No LLM judge was configured: answers the deterministic pre-judge could not match are counted incorrect and labelled pre_judge_only.".to_owned(),
            );
        }
    }
    for t in list_files(&paths.tables().join(bench.as_str()), "md")? {
        let md = std::fs::read_to_string(&t)?;
        if let Some(table) = plots::report::table_from_markdown(&md) {
            section.tables.push(table);
        }
    }
    let mut figures: Vec<(usize, String, PathBuf)> =
        list_files(&paths.figures().join(bench.as_str()), "png")?
            .into_iter()
            .map(|f| {
                let stem = f
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                match FIGURE_ORDER.iter().position(|(s, _)| *s == stem) {
                    Some(i) => (i, FIGURE_ORDER[i].1.to_owned(), f),
                    None => (FIGURE_ORDER.len(), stem.replace('_', " "), f),
                }
            })
            .collect();
    // The papers' reading order; figures this list does not know come last, by name.
    figures.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.2.cmp(&b.2)));
    for (_, caption, path) in figures {
        section.figures.push(FigureRef { caption, path });
    }
    Ok(section)
}

/// Figures in the order a reader of the papers expects them, with their captions in the report.
const FIGURE_ORDER: &[(&str, &str)] = &[
    (
        "ifscale_accuracy_vs_n",
        "Mean accuracy as the number of instructions grows.",
    ),
    (
        "ifscale_decay_archetypes",
        "Decay patterns: each model's curve in the panel of the fit its BIC chose.",
    ),
    (
        "ifscale_accuracy_by_model",
        "Per model: mean accuracy with a band of ±1 standard deviation across seeds.",
    ),
    (
        "ifscale_std_vs_n",
        "Standard deviation of accuracy across seeds.",
    ),
    (
        "ifscale_primacy_ratio_vs_n",
        "Primacy: miss rate of the last third of the list over that of the first third.",
    ),
    (
        "ifscale_failure_modes",
        "Error types: omission and modification shares of the errors, and their ratio.",
    ),
    (
        "ifscale_latency_vs_n",
        "Latency of the accepted generation.",
    ),
    (
        "ifscale_acc_per_latency_vs_n",
        "Accuracy per second of latency.",
    ),
    ("ifscale_output_tokens_vs_n", "Output length in tokens."),
    (
        "rift_accuracy_vs_depth",
        "Accuracy by position in the traversal, linear vs jumping.",
    ),
    (
        "rift_wrong_question_share",
        "Answers that belong to a different question.",
    ),
    (
        "rift_accuracy_vs_tokens",
        "Accuracy vs prompt length in tokens.",
    ),
];

/// The Markdown summary printed at the end: headline numbers per model and where the report is.
pub(super) fn summary_markdown(
    cfg: &PipelineConfig,
    paths: &RunPaths,
    out: &Outcome,
    seconds: f64,
) -> anyhow::Result<String> {
    let mut md = format!("# ifstress run `{}`\n\n", cfg.run.name);
    md.push_str(&harness::overview::headline_markdown(paths)?);
    md.push_str(&format!(
        "Stages run: {}; up to date and skipped: {}. Finished in {seconds:.1} s.\n\nReport: {}\n",
        out.stages_run.len(),
        out.stages_skipped.len(),
        paths.report().display()
    ));
    Ok(md)
}
