//! The run's report and summary: what `report.html` shows (one section per benchmark, with denominators, links,
//! excerpts, tables and figures in the papers' reading order, and the comparison of the models when there are
//! several) and the `summary.md` printed at the end.
//!
//! Everything is read from the run folder's files (`schema::paths::RunPaths`), so a rerun that skipped every stage
//! reports the same numbers. Drawing the HTML is `plots::report`; this module only decides what goes in it.
//!
//! A figure's caption and place come from `FIGURE_ORDER`; a figure it does not list still appears, last, captioned by
//! its file name.

use std::path::{Path, PathBuf};

use plots::report::{ConfigBlock, Excerpt, FigureRef, Link, ReportInput, Section};
use schema::paths::{Bench, RunPaths};

use crate::{Error, overview};

/// What the report needs to know about the run besides its files.
#[derive(Debug, Clone, Copy)]
pub struct RunReport<'a> {
    pub name: &'a str,
    pub models: &'a [String],
    /// The pipeline config as written, shown in the report.
    pub config_text: &'a str,
    /// `Some(judge configured)` when IFScale ran.
    pub ifscale: Option<bool>,
    /// The reading of the constraint-list retry rule the IFScale generation used (`[ifscale] constraint-list`),
    /// said where the report describes the retry rules.
    pub ifscale_constraint_list: schema::ifscale::ConstraintListRule,
    /// `Some(judge configured)` when RIFT ran.
    pub rift: Option<bool>,
    /// How the RIFT prompts were drawn (the jump-step rule, the baseline), said in the report.
    pub rift_notes: &'a [String],
    /// The prepared dataset's statistics (its `summary.json`: Table 1), when the prep stage wrote them.
    pub rift_table1: Option<&'a jeopardy_prep::Summary>,
    /// Each configured model's prices, for the spend of responses whose provider reported none.
    pub prices: &'a crate::cost::Prices,
    /// The output cap of each model's IFScale requests, where one is set (a departure from the paper's default
    /// parameters, said in the IFScale section with the replies that stopped at it).
    pub ifscale_caps: &'a [crate::departures::OutputCap],
    /// The paired comparison of the run's models (`crate::compare::compare_run`), when it holds several: the
    /// report's comparison section.
    pub comparison: Option<&'a crate::compare::Written>,
}

/// Files under `dir` (recursively) ending in `.ext`, sorted.
pub fn list_files(dir: &Path, ext: &str) -> Result<Vec<PathBuf>, Error> {
    let mut out = Vec::new();
    if !dir.is_dir() {
        return Ok(out);
    }
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).map_err(|e| Error::io(&d, e))? {
            let p = entry.map_err(|e| Error::io(&d, e))?.path();
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

/// The report's content for a run folder: one section per benchmark that ran, every number read from its files.
pub fn report_input(run: &RunReport<'_>, paths: &RunPaths) -> Result<ReportInput, Error> {
    let mut sections = Vec::new();
    let checks = schema::judge_check::JudgeCheckFile::read(&paths.judge_check())?;
    if let Some(checks) = checks.as_ref().filter(|c| !c.checks.is_empty()) {
        let table = plots::report::HtmlTable::from(harness::judge_check::table(checks).with_caption(
            "Each judge against its control items (RIFT paper: 98 % agreement with manual checks on 100 items)",
        ));
        let mut paragraphs = vec![harness::judge_check::CONTROL_NOTE.to_owned()];
        paragraphs.extend(checks.checks.iter().filter(|c| !c.passed).map(|c| {
            format!(
                "{}.{}",
                c.reason(),
                if c.kept {
                    " Its verdicts are kept on purpose; every table and figure built from them is marked."
                } else {
                    " Every table and figure built from its verdicts is marked."
                }
            )
        }));
        paragraphs.push(format!(
            "Control items and the judge's replies: {} (listed in the explorer's judge-check view, never among the results).",
            rel(paths, &paths.judge_check())
        ));
        sections.push(Section {
            heading: "Judge check".to_owned(),
            tables: vec![table],
            paragraphs,
            ..Section::default()
        });
    }
    for bench in [Bench::Ifscale, Bench::Rift] {
        let enabled = match bench {
            Bench::Ifscale => run.ifscale.is_some(),
            Bench::Rift => run.rift.is_some(),
        };
        if enabled {
            let mut section = bench_section(run, paths, bench)?;
            let marks = checks.as_ref().map(|c| c.marks(bench)).unwrap_or_default();
            if !marks.is_empty() {
                let mark = marks.join("; ");
                // The run's Markdown tables carry the mark already (`analysis::all`); the report's own do not.
                for t in section
                    .tables
                    .iter_mut()
                    .filter(|t| !t.caption.contains(schema::judge_check::JUDGE_FAILED_MARK))
                {
                    t.caption = format!("[{mark}] {}", t.caption);
                }
                for f in &mut section.figures {
                    f.caption = format!("[{mark}] {}", f.caption);
                }
                section.paragraphs.insert(0, format!("Warning: {mark}."));
            }
            sections.push(section);
        }
    }
    if let Some(c) = run.comparison {
        sections.push(crate::compare::section(paths, c));
    }
    sections.extend(crate::sequential::section(paths)?);
    let (served_warning, served) =
        crate::served::sections(&crate::served::served_rows(paths, run.models)?);
    sections.extend(served);
    if let Some(w) = served_warning {
        sections.insert(0, w);
    }
    let cost = crate::cost::cost_rows(paths, run.models, run.prices)?;
    if !cost.is_empty() {
        sections.push(Section {
            heading: "What it cost".to_owned(),
            tables: vec![plots::report::HtmlTable::from(crate::cost::cost_table(
                &cost,
            ))],
            paragraphs: crate::cost::cost_notes(crate::cost::ledger_total(paths)?).to_vec(),
            ..Section::default()
        });
    }
    Ok(ReportInput {
        title: format!("ifstress run “{}”", run.name),
        subtitle: Some(format!(
            "Models: {}. Every number below is computed from the files linked in each section.",
            run.models.join(", ")
        )),
        config: Some(ConfigBlock {
            name: "Config".to_owned(),
            text: run.config_text.to_owned(),
        }),
        sections,
    })
}

fn bench_section(run: &RunReport<'_>, paths: &RunPaths, bench: Bench) -> Result<Section, Error> {
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
    // Counted streaming, nothing kept (a paper-scale RIFT prompts file is 800 MB).
    let mut prompts = 0usize;
    if prompts_file.is_file() {
        schema::read_jsonl_chunks(&prompts_file, 4_096, |chunk: Vec<serde::de::IgnoredAny>| {
            prompts += chunk.len();
            Ok::<(), Error>(())
        })?;
    }
    section
        .denominators
        .push(("Prompts".to_owned(), prompts.to_string()));
    section.links.push(Link {
        label: "prompts".to_owned(),
        href: rel(paths, &prompts_file),
    });
    for model in run.models {
        let page = paths
            .root
            .join("explorer")
            .join(crate::explorer::index_name(bench, model));
        if page.is_file() {
            section.links.push(Link {
                label: format!("explorer: every sample of {model}"),
                href: rel(paths, &page),
            });
        }
    }
    for model in run.models {
        let responses = paths.model(bench, model).responses();
        let c = overview::count_responses(&responses)?;
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
        if let Some(excerpt) = overview::first_reply(&responses)? {
            section.excerpts.push(Excerpt {
                label: format!("{model}: {}", excerpt.0),
                text: excerpt.1,
            });
        }
    }
    if bench == Bench::Ifscale {
        let reading = match run.ifscale_constraint_list {
            schema::ifscale::ConstraintListRule::WholeReply => {
                "the whole reply is ten or more comma-separated bare words"
            }
            schema::ifscale::ConstraintListRule::RunInReport => {
                "the whole reply is, or the reply contains a run of, ten or more comma-separated bare words"
            }
        };
        section.paragraphs.push(format!(
            "The report prompt and the coherence rubric are ifstress's own wording (the paper's appendix texts are not \
             available to us); an attempt is one request (a truncated reply and a failed request each use one); failed \
             samples are counted and left out of the means. A reply was retried as a list of the constraints under the \
             `{}` reading of that rule ({reading}; the paper does not say which, the choice is ours). See \
             configs/prompts/README.md.",
            run.ifscale_constraint_list.name()
        ));
        section
            .paragraphs
            .extend(crate::departures::vocabulary_sentence(paths)?);
        section.paragraphs.extend(crate::departures::caps_sentence(
            run.models,
            run.ifscale_caps,
            &crate::departures::cap_hits(&paths.ifscale_attempts())?,
            false,
        ));
        let scores = paths.ifscale_scores();
        if scores.is_file() {
            let judge = run.ifscale == Some(true);
            section.denominators.extend(overview::ifscale_denominators(
                &scores,
                &paths.ifscale_attempts(),
                judge,
            )?);
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
                .extend(overview::rift_denominators(&answers)?);
            section.links.push(Link {
                label: "per-answer scores".to_owned(),
                href: rel(paths, &answers),
            });
            section.links.push(Link {
                label: "per-prompt scores".to_owned(),
                href: rel(paths, &paths.rift_prompt_scores()),
            });
        }
        section.paragraphs.extend(run.rift_notes.iter().cloned());
        // What correcting for the judge's measured errors did (the table itself is among the RIFT tables).
        let tables = paths.tables().join(Bench::Rift.as_str());
        if let Some(c) = analysis::rift::corrected::read(&tables)? {
            section
                .paragraphs
                .extend(analysis::rift::corrected::sentence(&c));
        }
        // A hand-labelled audit sample (`cargo xtask rift audit --out <run>/rift/audit.csv`, then filled in).
        let audit = paths.bench(Bench::Rift).join("audit.csv");
        if audit.is_file() {
            let rows = harness::audit::agreement(&audit)?;
            if !rows.is_empty() {
                section.tables.push(plots::report::HtmlTable::from(
                    harness::audit::table(&rows).with_caption(format!(
                        "Judge audit: the verdicts against hand labels of a seeded sample ({})",
                        rel(paths, &audit)
                    )),
                ));
            }
        }
        if let Some(summary) = run.rift_table1 {
            let mut table1 = summary.table1().with_caption(
                "Table 1: the prepared dataset (our filters and additions are listed in the drop reasons)",
            );
            for row in questions_per_prompt(paths)? {
                table1.push(row);
            }
            section.tables.push(plots::report::HtmlTable::from(table1));
        }
        if run.rift != Some(true) {
            section.paragraphs.push(
                "No LLM judge was configured: answers the deterministic pre-judge could not settle are unjudged (labelled pre_judge_only), neither correct nor incorrect; the tables show accuracy as bounds (unjudged counted wrong … unjudged counted right) beside the unjudged count.".to_owned(),
            );
        }
    }
    for (_, table) in analysis::tables::read_tables(&paths.tables().join(bench.as_str()))? {
        section.tables.push(plots::report::HtmlTable::from(table));
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
        "ifscale_accuracy_vs_n_vs_published",
        "This run's models (colour) over the 24 published IFScale configurations (grey).",
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
    (
        "ifscale_output_tokens_vs_n",
        "Visible output length in tokens (reasoning not included).",
    ),
    (
        "ifscale_primacy_thirds",
        "Error rate in the early, middle and late thirds of the list.",
    ),
    (
        "ifscale_reasoning_tokens_vs_n",
        "Reasoning tokens beside visible output tokens.",
    ),
    (
        "ifscale_effort_lower_vs_high",
        "Reasoning effort: lower vs high.",
    ),
    (
        "ifscale_coherence_all_attempts_vs_n",
        "Coherence over all judged attempts, with the accepted-only mean beside it.",
    ),
    (
        "ifscale_coherence_vs_output_tokens",
        "Coherence vs visible output tokens, over all judged attempts.",
    ),
    (
        "ifscale_outcomes_vs_n",
        "Accuracy vs N on a log axis: over the scored samples (the paper's, solid) and over all samples with each failure as 0 (dashed), the published curves to N = 500 in grey; below, how every sample ended (drawn when a sample failed or the grid goes past 500).",
    ),
    (
        "rift_accuracy_vs_depth",
        "Accuracy by position in the traversal, linear vs jumping.",
    ),
    (
        "rift_wrong_question_share",
        "Answers that belong to a different question, per structure and pooled over linear and jumping (the paper's Fig. 4 gives one share per model).",
    ),
    (
        "rift_value_mix",
        "Value mix: each structure's share of questions per clue-value band, with the linear-vs-jumping chi-square test.",
    ),
    (
        "rift_accuracy_vs_tokens",
        "Accuracy vs prompt length in tokens.",
    ),
];

/// Table 1's last rows: questions per linear or jumping prompt (min, max, mean) in the run's prompts file.
fn questions_per_prompt(paths: &RunPaths) -> Result<Vec<Vec<String>>, Error> {
    let file = paths.rift_prompts();
    if !file.is_file() {
        return Ok(Vec::new());
    }
    // Only the two fields needed, read in chunks (the prompts file is 800 MB at paper scale).
    #[derive(serde::Deserialize)]
    struct Meta {
        structure: Option<schema::rift::Structure>,
        num: Option<u32>,
    }
    let mut nums: Vec<u32> = Vec::new();
    schema::read_jsonl_chunks(&file, 4_096, |chunk: Vec<Meta>| {
        nums.extend(
            chunk
                .into_iter()
                .filter_map(|m| match (m.structure, m.num) {
                    (Some(s), Some(n)) if s != schema::rift::Structure::Baseline => Some(n),
                    _ => None,
                }),
        );
        Ok::<(), Error>(())
    })?;
    let (Some(min), Some(max)) = (nums.iter().min(), nums.iter().max()) else {
        return Ok(Vec::new());
    };
    let mean = f64::from(nums.iter().sum::<u32>()) / nums.len() as f64;
    Ok([
        ("Minimum questions per prompt", min.to_string()),
        ("Maximum questions per prompt", max.to_string()),
        ("Average questions per prompt", format!("{mean:.0}")),
    ]
    .into_iter()
    .map(|(k, v)| vec![k.to_owned(), v])
    .collect())
}

/// The Markdown summary printed at the end of a pipeline run: headline numbers per model and where the report is;
/// `ifscale_caps` as in [`RunReport::ifscale_caps`].
#[allow(clippy::too_many_arguments)]
pub fn summary_markdown(
    name: &str,
    paths: &RunPaths,
    models: &[String],
    stages_run: usize,
    stages_skipped: usize,
    seconds: f64,
    prices: &crate::cost::Prices,
    ifscale_caps: &[crate::departures::OutputCap],
) -> Result<String, Error> {
    let mut md = format!("# ifstress run `{name}`\n\n");
    let checks = schema::judge_check::JudgeCheckFile::read(&paths.judge_check())?;
    for check in checks.iter().flat_map(|c| &c.checks) {
        if let Some(mark) = check.mark() {
            let bench = match check.bench {
                Bench::Rift => "RIFT",
                Bench::Ifscale => "IFScale",
            };
            md.push_str(&format!(
                "**{mark}.** The {bench} tables below are built from its verdicts.\n\n"
            ));
        }
    }
    md.push_str(&overview::headline_markdown(paths, models, ifscale_caps)?);
    if let Some(checks) = &checks {
        md.push_str(&harness::judge_check::to_markdown(checks));
    }
    md.push_str(&crate::served::markdown(&crate::served::served_rows(
        paths, models,
    )?));
    md.push_str(&crate::cost::cost_markdown(
        &crate::cost::cost_rows(paths, models, prices)?,
        crate::cost::ledger_total(paths)?,
    ));
    md.push_str(&format!(
        "Stages run: {stages_run}; up to date and skipped: {stages_skipped}. Finished in {seconds:.1} s.\n\nReport: {}\n",
        paths.report().display()
    ));
    Ok(md)
}
