//! The comparison of a run's models, for its report: when a run holds several models, every pair is compared with
//! the paired statistics of `analysis::compare` (what `cargo xtask compare <run>` does without a baseline), the
//! comparison's `compare.md`, `compare.json` and its two figures are written to `<run>/compare/`, and [`section`]
//! is the report's comparison section (the headline tables and figures, links to those files and to the
//! explorer's side-by-side pages).
//!
//! [`write_files`] is the one writer of a comparison's files, shared with `cargo xtask compare`.

use std::path::{Path, PathBuf};

use analysis::compare::Options;
use analysis::compare::report::{self, Report};
use analysis::compare::runs::RunData;
use plots::report::{FigureRef, HtmlTable, Link, Section};
use schema::paths::{Bench, RunPaths};

use crate::Error;

/// The folder of a run's comparison, under the run.
pub const DIR: &str = "compare";

/// A run's comparison, written.
#[derive(Debug, Clone)]
pub struct Written {
    pub report: Report,
    /// `<run>/compare/`.
    pub dir: PathBuf,
    /// The figures' PNG files, in `dir`.
    pub figures: Vec<PathBuf>,
    /// What was left out and why (models without a benchmark, items one model lacks).
    pub notes: Vec<String>,
}

/// Writes `compare.md` (returned), `compare.json` and the figures (`plots::compare`) of `report` into `out`;
/// returns the Markdown and the figure files written.
pub fn write_files(report: &Report, out: &Path) -> Result<(String, Vec<PathBuf>), Error> {
    let markdown = report.markdown();
    schema::write_atomic(&out.join("compare.md"), markdown.as_bytes())?;
    let json = serde_json::to_vec_pretty(report).map_err(|e| Error::Output {
        path: out.join("compare.json"),
        message: e.to_string(),
    })?;
    schema::write_atomic(&out.join("compare.json"), &json)?;
    let figures = plots::compare::draw(report, out)?;
    Ok((markdown, figures))
}

/// Compares every pair of `models` (in that order; those without IFScale scores or RIFT answers in the run are left
/// out) and writes the comparison to `<run>/compare/`, replacing the previous one once the new one is complete.
/// None, with any previous comparison removed, when fewer than two models have scores.
pub fn compare_run(
    paths: &RunPaths,
    models: &[String],
    opts: &Options,
) -> Result<Option<Written>, Error> {
    let dir = paths.root.join(DIR);
    let data = RunData::read(&paths.root)?;
    let scored = data.models();
    let chosen: Vec<&String> = models.iter().filter(|m| scored.contains(m)).collect();
    if chosen.len() < 2 {
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        }
        return Ok(None);
    }
    let mut notes = Vec::new();
    let ifscale_models = data.ifscale_models();
    for (bench, has) in [("IFScale", &ifscale_models), ("RIFT", &data.rift_models)] {
        let (with, without): (Vec<&String>, Vec<&String>) =
            chosen.iter().copied().partition(|m| has.contains(m));
        if with.is_empty() || without.is_empty() {
            continue;
        }
        let names = |v: &[&String]| v.iter().map(|m| m.as_str()).collect::<Vec<_>>().join(", ");
        notes.push(if with.len() < 2 {
            format!(
                "{bench}: only {} has {bench} results ({} has none), so there is no {bench} comparison.",
                names(&with),
                names(&without)
            )
        } else {
            format!(
                "{bench}: {} has no {bench} results and is left out of the {bench} comparison.",
                names(&without)
            )
        });
    }
    let entries = chosen
        .iter()
        .map(|m| data.entry(&paths.root, m, (*m).clone()))
        .collect::<Result<Vec<_>, _>>()?;
    let report = report::build(&entries, None, None, opts);
    for c in &report.ifscale {
        if let Some(all) = c.overall.as_ref().filter(|a| a.dropped > 0) {
            notes.push(format!(
                "IFScale {} − {}: {} of {} samples left out (failed, every attempt rejected, or missing for one of \
                 the two models).",
                c.a,
                c.b,
                all.dropped,
                all.dropped + all.samples
            ));
        } else if c.overall.is_none() {
            notes.push(format!(
                "IFScale {} − {}: no sample is scored for both models, so there is nothing to pair.",
                c.a, c.b
            ));
        }
    }
    for c in &report.rift {
        let dropped: usize = c.structures.iter().map(|r| r.dropped_prompts).sum();
        let paired: usize = c.structures.iter().map(|r| r.prompt_level.units).sum();
        if c.structures.is_empty() {
            notes.push(format!(
                "RIFT {} − {}: no prompt has judged answers from both models, so there is nothing to pair.",
                c.a, c.b
            ));
        } else if dropped > 0 {
            notes.push(format!(
                "RIFT {} − {}: {dropped} of {} prompts left out (missing for one model, or every answer unjudged).",
                c.a,
                c.b,
                dropped + paired
            ));
        }
    }
    if report.ifscale.is_empty() && report.rift.is_empty() {
        notes.push(
            "No benchmark has results from two of the models, so nothing could be compared."
                .to_owned(),
        );
    }
    let tmp = paths.root.join(".compare.tmp");
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).map_err(|e| Error::io(&tmp, e))?;
    }
    std::fs::create_dir_all(&tmp).map_err(|e| Error::io(&tmp, e))?;
    let (_, written) = write_files(&report, &tmp)?;
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    }
    std::fs::rename(&tmp, &dir).map_err(|e| Error::io(&dir, e))?;
    let figures = written
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "png"))
        .filter_map(|f| f.file_name().map(|n| dir.join(n)))
        .collect();
    Ok(Some(Written {
        report,
        dir,
        figures,
        notes,
    }))
}

/// Captions of the comparison's figures, by file stem.
const CAPTIONS: &[(&str, &str)] = &[
    (
        "compare_ifscale_difference",
        "IFScale: the accuracy difference of each pair against N, its band the per-N bootstrap interval (seeds resampled).",
    ),
    (
        "compare_rift_forest",
        "RIFT: each pair's prompt-level accuracy difference per structure with its interval (0 dashed).",
    ),
];

fn rel(paths: &RunPaths, p: &Path) -> String {
    p.strip_prefix(&paths.root)
        .unwrap_or(p)
        .display()
        .to_string()
}

/// The report's comparison section: the notes, the headline tables and the figures, with links to the
/// comparison's files and to the explorer's side-by-side pages that exist.
pub fn section(paths: &RunPaths, written: &Written) -> Section {
    let headline = written.report.headline();
    let mut paragraphs = headline.notes;
    paragraphs.extend(written.notes.iter().cloned());
    let tables = headline
        .tables
        .into_iter()
        .map(|t| HtmlTable {
            header: t.header().into_iter().map(str::to_owned).collect(),
            caption: t.caption,
            rows: t.rows,
        })
        .collect();
    let figures = written
        .figures
        .iter()
        .map(|f| {
            let stem = f
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let caption = CAPTIONS
                .iter()
                .find(|(s, _)| *s == stem)
                .map_or_else(|| stem.replace('_', " "), |(_, c)| (*c).to_owned());
            FigureRef {
                caption,
                path: f.clone(),
            }
        })
        .collect();
    let mut links = vec![
        Link {
            label: "every comparison, per N and per structure (compare.md)".to_owned(),
            href: rel(paths, &written.dir.join("compare.md")),
        },
        Link {
            label: "every number (compare.json)".to_owned(),
            href: rel(paths, &written.dir.join("compare.json")),
        },
    ];
    let labels = &written.report.labels;
    for (i, a) in labels.iter().enumerate() {
        for b in &labels[i + 1..] {
            for bench in [Bench::Ifscale, Bench::Rift] {
                let page = paths
                    .root
                    .join("explorer")
                    .join(crate::explorer::pair_index_name(bench, a, b));
                if page.is_file() {
                    links.push(Link {
                        label: format!(
                            "explorer: {a} and {b} side by side ({})",
                            if bench == Bench::Ifscale {
                                "IFScale"
                            } else {
                                "RIFT"
                            }
                        ),
                        href: rel(paths, &page),
                    });
                }
            }
        }
    }
    Section {
        heading: "Model comparison (paired)".to_owned(),
        paragraphs,
        tables,
        figures,
        links,
        ..Section::default()
    }
}
