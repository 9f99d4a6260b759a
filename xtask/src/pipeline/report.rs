//! The last stages: analysis and figures from the run's score files, then `report.html` and `summary.md`.
//! Denominators are counted from the files themselves, so a rerun that skipped every stage reports the same numbers.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use analysis::models::ReasoningRule;
use plots::report::{ConfigBlock, Excerpt, FigureRef, Link, ReportInput, Section};
use schema::paths::RunPaths;
use schema::{Outcome as ReplyOutcome, ResponseRecord};

use super::fresh::Fingerprint;
use super::{Outcome, PipelineConfig, Stager};

/// Counts of one model's responses file.
#[derive(Debug, Default, Clone)]
struct Counts {
    responses: usize,
    ok: usize,
    truncated: usize,
    failed: usize,
    cached: usize,
}

fn count_responses(path: &Path) -> anyhow::Result<Counts> {
    let mut c = Counts::default();
    if !path.is_file() {
        return Ok(c);
    }
    let (records, _) = schema::read_jsonl_lenient::<ResponseRecord>(path)?;
    for r in &records {
        c.responses += 1;
        match r.outcome {
            ReplyOutcome::Ok => c.ok += 1,
            ReplyOutcome::Truncated => c.truncated += 1,
            ReplyOutcome::Failed => c.failed += 1,
        }
        if r.cached {
            c.cached += 1;
        }
    }
    Ok(c)
}

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
    for bench in ["ifscale", "rift"] {
        let enabled = match bench {
            "ifscale" => cfg.ifscale.is_some(),
            _ => cfg.rift.is_some(),
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

fn bench_section(cfg: &PipelineConfig, paths: &RunPaths, bench: &str) -> anyhow::Result<Section> {
    let bench_dir = paths.root.join(bench);
    let mut section = Section {
        heading: if bench == "ifscale" {
            "IFScale: instruction density".to_owned()
        } else {
            "RIFT: instruction topology".to_owned()
        },
        ..Section::default()
    };
    let prompts_file = bench_dir.join("prompts.jsonl");
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
        let dir = super::model_dir(&bench_dir, model);
        let responses = dir.join("responses.jsonl");
        let c = count_responses(&responses)?;
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
        if let Some(excerpt) = first_reply(&responses)? {
            section.excerpts.push(Excerpt {
                label: format!("{model}: {}", excerpt.0),
                text: excerpt.1,
            });
        }
    }
    if bench == "ifscale" {
        let scores = paths.ifscale_scores();
        if scores.is_file() {
            let rows: Vec<schema::ifscale::SampleScore> = schema::read_jsonl(&scores)?;
            let failed = rows
                .iter()
                .filter(|r| r.status == schema::ifscale::SampleStatus::Failed)
                .count();
            section.denominators.push((
                "Samples".to_owned(),
                format!(
                    "{} scored, {} failed (every attempt rejected; counted, never dropped)",
                    rows.len() - failed,
                    failed
                ),
            ));
            let judged = rows.iter().filter(|r| r.coherence.is_some()).count();
            section.denominators.push((
                "Coherence judged".to_owned(),
                if cfg
                    .ifscale
                    .as_ref()
                    .is_some_and(|c| c.judge_model.is_some())
                {
                    format!("{judged} samples")
                } else {
                    "no judge model configured: the coherence check was skipped".to_owned()
                },
            ));
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
            let rows: Vec<schema::rift::AnswerScore> = schema::read_jsonl(&answers)?;
            let mut by: BTreeMap<String, usize> = BTreeMap::new();
            for r in &rows {
                *by.entry(format!("{:?}", r.judged_by)).or_default() += 1;
            }
            let judged: Vec<String> = by.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            section.denominators.push((
                "Answers".to_owned(),
                format!("{} ({})", rows.len(), judged.join(", ")),
            ));
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
    for t in list_files(&paths.tables().join(bench), "md")? {
        let md = std::fs::read_to_string(&t)?;
        if let Some(table) = plots::report::table_from_markdown(&md) {
            section.tables.push(table);
        }
    }
    let mut figures: Vec<(usize, String, PathBuf)> =
        list_files(&paths.figures().join(bench), "png")?
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

/// The first non-empty reply of a responses file, shown verbatim (escaped by the report).
fn first_reply(path: &Path) -> anyhow::Result<Option<(String, String)>> {
    if !path.is_file() {
        return Ok(None);
    }
    let (records, _) = schema::read_jsonl_lenient::<ResponseRecord>(path)?;
    Ok(records.into_iter().find_map(|r| {
        let text = r.content.filter(|c| !c.trim().is_empty())?;
        let mut clipped: String = text.chars().take(1500).collect();
        if clipped.len() < text.len() {
            clipped.push_str(" […]");
        }
        Some((format!("reply to {}", r.id), clipped))
    }))
}

/// The Markdown summary printed at the end: headline numbers per model and where the report is.
pub(super) fn summary_markdown(
    cfg: &PipelineConfig,
    paths: &RunPaths,
    out: &Outcome,
    seconds: f64,
) -> anyhow::Result<String> {
    let mut md = format!("# ifstress run `{}`\n\n", cfg.run.name);
    if paths.ifscale_scores().is_file() {
        let rows: Vec<schema::ifscale::SampleScore> = schema::read_jsonl(&paths.ifscale_scores())?;
        md.push_str("## IFScale\n\n| model | samples | failed | mean accuracy (%) | accuracy at the largest N (%) |\n|---|---:|---:|---:|---:|\n");
        let mut models: Vec<&str> = rows.iter().map(|r| r.model.as_str()).collect();
        models.sort_unstable();
        models.dedup();
        for m in models {
            let mine: Vec<_> = rows.iter().filter(|r| r.model == m).collect();
            let acc: Vec<f64> = mine.iter().filter_map(|r| r.accuracy).collect();
            let failed = mine.len() - acc.len();
            let max_n = mine.iter().map(|r| r.num_rules).max().unwrap_or(0);
            let at_max: Vec<f64> = mine
                .iter()
                .filter(|r| r.num_rules == max_n)
                .filter_map(|r| r.accuracy)
                .collect();
            md.push_str(&format!(
                "| {m} | {} | {failed} | {} | {} (N = {max_n}) |\n",
                mine.len(),
                fmt_mean(&acc),
                fmt_mean(&at_max)
            ));
        }
        md.push('\n');
    }
    if paths.rift_prompt_scores().is_file() {
        let rows: Vec<schema::rift::PromptScore> = schema::read_jsonl(&paths.rift_prompt_scores())?;
        md.push_str("## RIFT\n\n| model | structure | prompts | mean accuracy (%) | wrong-question answers |\n|---|---|---:|---:|---:|\n");
        let mut groups: BTreeMap<(String, String), Vec<&schema::rift::PromptScore>> =
            BTreeMap::new();
        for r in &rows {
            groups
                .entry((r.model.clone(), format!("{:?}", r.structure).to_lowercase()))
                .or_default()
                .push(r);
        }
        for ((m, s), rs) in groups {
            let acc: Vec<f64> = rs.iter().map(|r| r.accuracy * 100.0).collect();
            let wq: u32 = rs.iter().map(|r| r.wrong_question).sum();
            md.push_str(&format!(
                "| {m} | {s} | {} | {} | {wq} |\n",
                rs.len(),
                fmt_mean(&acc)
            ));
        }
        md.push('\n');
    }
    md.push_str(&format!(
        "Stages run: {}; up to date and skipped: {}. Finished in {seconds:.1} s.\n\nReport: {}\n",
        out.stages_run.len(),
        out.stages_skipped.len(),
        paths.report().display()
    ));
    Ok(md)
}

fn fmt_mean(xs: &[f64]) -> String {
    if xs.is_empty() {
        return "–".to_owned();
    }
    format!("{:.1}", xs.iter().sum::<f64>() / xs.len() as f64)
}
