//! The last stages: analysis and figures from the run's score files, the explorer, then `report.html` (its content
//! is `report`'s; with several models, the comparison of every pair from `report::compare` first, written
//! to `<run>/compare/`).

use ::report::{RunReport, list_files};
use analysis::models::ReasoningRule;
use harness::fresh::Fingerprint;

use crate::Run;
use crate::stage::Stage;

/// The analysis, explorer and report stages of `run`.
pub(crate) fn stages(run: &Run) -> Vec<Stage<'_>> {
    let cfg = &run.cfg;
    let paths = &run.paths;
    let analysis = Stage::new(
        "analysis",
        move || {
            Ok(Fingerprint::new("analysis")
                .value("reasoning-models", &cfg.run.reasoning_models)?
                // Each Markdown table is also written as data (`<name>.table.json`), which the report reads; with a
                // checked judge, its judge-corrected tables too (a run analysed before writes them once).
                .value("tables", &"markdown and table.json; judge-corrected")?
                .file(&paths.ifscale_scores())?
                .file(&paths.ifscale_labels())?
                .file(&paths.ifscale_attempts())?
                .file(&paths.rift_answer_scores())?
                .file(&paths.rift_prompt_scores())?
                .file(&paths.judge_check())?
                // The run's vocabulary (the hash its prompts carry) labels the figure beside the published curves.
                .file(&paths.ifscale_prompts())?)
        },
        vec![paths.tables(), paths.figures()],
        move |_| {
            let rule = ReasoningRule {
                explicit: cfg.run.reasoning_models.clone(),
            };
            crate::analyse_run(&paths.root, &rule)
        },
    );
    vec![analysis, explorer(run), report(run)]
}

/// The report stage: its fingerprint holds every table and figure the analysis wrote, listed when it is reached.
fn report(run: &Run) -> Stage<'_> {
    let cfg = &run.cfg;
    let paths = &run.paths;
    let caps = run.ifscale_caps();
    let fp_caps = caps_key(&caps);
    Stage::new(
        "report",
        move || {
            let figures = list_files(&paths.figures(), "png")?;
            let tables = list_files(&paths.tables(), "json")?;
            let mut fp = Fingerprint::new("report")
                .value("config", &run.config_text)?
                .value("ifscale-caps", &fp_caps)?
                .file(&paths.judge_check())?
                .file(&paths.ifscale_prompts())?
                .file(&paths.ifscale_attempts())?
                .file(&paths.root.join("explorer").join("index.html"))?
                // The comparison of the run's models (`report::compare`) reads the scores themselves.
                .value("compare-options", &analysis::compare::Options::default())?
                .value("models", &cfg.run.models)?
                .file(&paths.ifscale_scores())?
                .file(&paths.rift_answer_scores())?
                .file(&paths.rift_prompt_scores())?
                .file(&paths.rift_prompts())?;
            for f in figures.iter().chain(&tables) {
                fp = fp.file(f)?;
            }
            // A sequential run's stop (its section of the report); a whole-grid run has none.
            let stop = paths.root.join(::report::sequential::FILE);
            if stop.is_file() {
                fp = fp.file(&stop)?;
            }
            Ok(fp)
        },
        vec![paths.report()],
        move |_| write_report(run, &caps),
    )
}

fn write_report(run: &Run, ifscale_caps: &[::report::departures::OutputCap]) -> anyhow::Result<()> {
    let cfg = &run.cfg;
    let paths = &run.paths;
    let config_text = run.config_text.as_str();
    let prices = &run.prices();
    let report = paths.report();
    let mut rift_notes = Vec::new();
    // The prepared dataset's statistics (Table 1), when the prep stage wrote them beside the questions.
    let table1: Option<jeopardy_prep::Summary> = match cfg
        .rift
        .as_ref()
        .and_then(|r| r.dataset.parent())
        .map(|d| d.join("summary.json"))
        .filter(|p| p.is_file())
    {
        Some(p) => {
            let bytes = std::fs::read(&p)?;
            Some(
                serde_json::from_slice(&bytes)
                    .map_err(|e| crate::outcome::Failure::Usage(format!("{}: {e}", p.display())))?,
            )
        }
        None => None,
    };
    if let Some(rift) = &cfg.rift {
        rift_notes.push(format!("Prompts: {}.", rift.jump_rule()));
        if rift.dataset.is_file() {
            let n = harness::rift::load_dataset(&rift.dataset)?.len();
            rift_notes.push(format!(
                "Baseline: {}.",
                prompt_gen::rift::baseline_description(rift, n)
            ));
        }
    }
    // Several models: every pair compared (`cargo xtask compare <run>`), written to `<run>/compare/`.
    let comparison = ::report::compare::compare_run(
        paths,
        &cfg.run.models,
        &analysis::compare::Options::default(),
    )?;
    if let Some(c) = &comparison {
        tracing::info!(dir = %c.dir.display(), pairs = c.report.ifscale.len().max(c.report.rift.len()), "Compared the run's models.");
    }
    let shown = RunReport {
        name: &cfg.run.name,
        models: &cfg.run.models,
        config_text,
        ifscale: cfg.ifscale.as_ref().map(|_| cfg.judges.coherence.is_some()),
        ifscale_constraint_list: cfg
            .ifscale
            .as_ref()
            .map(|c| c.constraint_list)
            .unwrap_or_default(),
        rift: cfg.rift.as_ref().map(|_| cfg.judges.rift.is_some()),
        rift_notes: &rift_notes,
        rift_table1: table1.as_ref(),
        prices,
        ifscale_caps,
        comparison: comparison.as_ref(),
    };
    let input = ::report::report_input(&shown, paths)?;
    plots::report::write(&input, &report)?;
    tracing::info!(report = %report.display(), "Wrote the HTML report.");
    match plots::screenshot::find_chromium() {
        Some(chromium) => {
            let png = paths.root.join("report.png");
            plots::screenshot::screenshot(&chromium, &report, &png, 3000)?;
            tracing::info!(screenshot = %png.display(), "Rendered the report in headless Chromium.");
        }
        None => tracing::warn!("Chromium not found; the report was not rendered for a screenshot."),
    }
    Ok(())
}

/// The caps as the report states them, for its fingerprint (a models-file change is not in the config text).
fn caps_key(caps: &[::report::departures::OutputCap]) -> Vec<(String, u32, bool)> {
    caps.iter()
        .map(|c| {
            let from_run = c.source == ::report::departures::CapSource::RunConfig;
            (c.model.clone(), c.max_tokens, from_run)
        })
        .collect()
}

/// The per-sample explorer (`report::explorer`) and its two screenshots: an IFScale sample and a RIFT prompt
/// opened from their URL fragment, next to `report.png`.
fn explorer(run: &Run) -> Stage<'_> {
    use schema::paths::Bench;
    let cfg = &run.cfg;
    let paths = &run.paths;
    let span = cfg
        .ifscale
        .as_ref()
        .map(|c| c.score_span)
        .unwrap_or_default();
    let inputs = move || {
        let mut fp = Fingerprint::new("explorer")
            .value("models", &cfg.run.models)?
            .value("span", &span)?
            .file(&paths.ifscale_prompts())?
            .file(&paths.judge_check())?;
        for model in &cfg.run.models {
            let i = paths.model(Bench::Ifscale, model);
            let r = paths.model(Bench::Rift, model);
            for f in [
                i.scores(),
                i.labels(),
                i.attempts(),
                i.responses(),
                r.prompt_scores(),
                r.answer_scores(),
                r.responses(),
            ] {
                fp = fp.file(&f)?;
            }
        }
        Ok(fp)
    };
    Stage::new(
        "explorer",
        inputs,
        vec![paths.root.join("explorer")],
        move |_| {
            let opts = ::report::explorer::Options {
                span,
                ..Default::default()
            };
            let written = ::report::explorer::write(paths, &cfg.run.name, &cfg.run.models, &opts)?;
            for e in &written.entries {
                tracing::info!(
                    benchmark = e.bench, model = %e.model, samples = e.samples, pages = e.pages,
                    largest_mb = e.largest_mb, total_mb = e.total_mb, "Wrote the explorer pages."
                );
            }
            let Some(chromium) = plots::screenshot::find_chromium() else {
                tracing::warn!(
                    "Chromium not found; the explorer was not rendered for screenshots."
                );
                return Ok(());
            };
            for (bench, png) in [
                (Bench::Ifscale, "explorer-ifscale.png"),
                (Bench::Rift, "explorer-rift.png"),
            ] {
                if let Some((page, fragment)) = written.showcase(bench) {
                    let png = paths.root.join(png);
                    plots::screenshot::screenshot_at(
                        &chromium,
                        &page,
                        Some(&fragment),
                        &png,
                        1600,
                    )?;
                    tracing::info!(screenshot = %png.display(), fragment, "Rendered the explorer in headless Chromium.");
                }
            }
            Ok(())
        },
    )
}
