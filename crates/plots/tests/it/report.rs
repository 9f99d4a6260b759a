//! Snapshot test of the HTML report of a fixed small run: the analysis tables of `analysis::synthetic`'s IFScale and
//! RIFT runs (as the pipeline reads them back from `tables/<bench>/*.md`), denominators, links, model excerpts, two
//! tiny figure fixtures from `test_data/` (inlined in full) and the run's config.
//!
//! The run folder is a temporary directory; its absolute path is replaced by `[RUN]` before comparing. The renderer
//! writes no timestamp of its own, so nothing else depends on the machine or the clock.
//! The expected page is `snapshots/report.html`. After an intended change of the page, update it with
//! `UPDATE_EXPECT=1 cargo test -p plots --test it report` and review the diff before committing.

use std::path::{Path, PathBuf};

use expect_test::{ExpectFile, expect_file};
use plots::report::{ConfigBlock, Excerpt, FigureRef, HtmlTable, Link, ReportInput, Section};

/// Renders `input` and compares it, with `root` normalised, to the snapshot file.
fn check(input: &ReportInput, root: &Path, expect: ExpectFile) {
    let html = plots::report::render(input).unwrap();
    expect.assert_eq(&html.replace(&root.display().to_string(), "[RUN]"));
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("test_data")
        .join(name)
}

/// Every table written under `dir` as data (`<name>.table.json`), in file-name order, as the report reads them.
fn tables_in(dir: &Path) -> Vec<HtmlTable> {
    analysis::tables::read_tables(dir)
        .unwrap()
        .into_iter()
        .map(|(_, t)| HtmlTable::from(t))
        .collect()
}

fn link(label: &str, href: &str) -> Link {
    Link {
        label: label.to_owned(),
        href: href.to_owned(),
    }
}

fn pair(k: &str, v: &str) -> (String, String) {
    (k.to_owned(), v.to_owned())
}

#[test]
fn report_of_a_small_run() {
    let run = tempfile::tempdir().unwrap();
    let root = run.path();
    let ifscale_tables = root.join("tables/ifscale");
    let rift_tables = root.join("tables/rift");
    let ifscale_summary = analysis::ifscale::aggregate(
        &analysis::ifscale::samples_frame(&analysis::synthetic::ifscale_records()).unwrap(),
        &analysis::ifscale::AggregateConfig {
            bootstrap_resamples: 100,
            bootstrap_seed: 1,
            ci_level: 0.95,
        },
    )
    .unwrap();
    analysis::ifscale::write_tables(&ifscale_summary, &ifscale_tables).unwrap();
    // The keyword-label and attempt-log tables, from the analysis crate's fixtures.
    let analysis_data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../analysis/test_data");
    let labels =
        analysis::ifscale::primacy::load_labels(&[analysis_data.join("ifscale_labels.jsonl")])
            .unwrap();
    analysis::ifscale::primacy::write_tables(
        &analysis::ifscale::primacy::thirds(&labels),
        &ifscale_tables,
    )
    .unwrap();
    let attempts =
        analysis::ifscale::coherence::load_attempts(
            &[analysis_data.join("ifscale_attempts.jsonl")],
        )
        .unwrap();
    let cfg = analysis::ifscale::coherence::CoherenceConfig { threshold: 6 };
    let rows = analysis::ifscale::coherence::aggregate(&attempts, &cfg).unwrap();
    analysis::ifscale::coherence::write_tables(&rows, &cfg, &ifscale_tables).unwrap();
    analysis::rift::write_tables(&super::rift_summary(), &rift_tables).unwrap();
    // The pipeline embeds figures from the run folder: copy the fixtures there.
    let figures = root.join("figures");
    std::fs::create_dir_all(&figures).unwrap();
    for name in ["figure.png", "figure.svg"] {
        std::fs::copy(fixture(name), figures.join(name)).unwrap();
    }

    let ifscale = Section {
        heading: "IFScale: instruction density".to_owned(),
        paragraphs: vec![],
        denominators: vec![
            pair("Prompts", "300"),
            pair(
                "synthetic/threshold: responses",
                "100 (ok 98, truncated 1, failed 1; 40 served from the cache in the run that wrote them)",
            ),
            pair(
                "Samples",
                "299 scored, 1 failed (every attempt rejected; counted, never dropped)",
            ),
            pair(
                "Coherence judged",
                "no judge model configured: the coherence check was skipped",
            ),
        ],
        tables: tables_in(&ifscale_tables),
        figures: vec![FigureRef {
            caption: "Mean accuracy as the number of instructions grows.".to_owned(),
            path: figures.join("figure.png"),
        }],
        links: vec![
            link("prompts", "ifscale/prompts.jsonl"),
            link(
                "synthetic/threshold: responses",
                "ifscale/models/synthetic threshold/responses.jsonl",
            ),
            link("per-sample scores", "ifscale/scores.jsonl"),
            // Dropped: not a relative path.
            link("elsewhere", "https://example.invalid/scores.jsonl"),
            link("absolute", "/etc/passwd"),
        ],
        excerpts: vec![Excerpt {
            label: "synthetic/threshold: reply to ifscale-10-0".to_owned(),
            text: "Q3 <b>revenue</b> & \"accrual\" terms rose; it's 'fine'.".to_owned(),
        }],
    };
    let rift = Section {
        heading: "RIFT: instruction topology".to_owned(),
        paragraphs: vec![
            "No LLM judge was configured: answers the deterministic pre-judge could not match are counted incorrect and labelled pre_judge_only.".to_owned(),
        ],
        denominators: vec![
            pair("Prompts", "216"),
            pair("Answers", "3120 (None: 212, PreJudge: 2908)"),
        ],
        tables: tables_in(&rift_tables),
        figures: vec![FigureRef {
            caption: "Accuracy by position in the traversal, linear vs jumping.".to_owned(),
            path: figures.join("figure.svg"),
        }],
        links: vec![
            link("per-answer scores", "rift/answer-scores.jsonl"),
            link("per-prompt scores", "rift/prompt-scores.jsonl"),
        ],
        excerpts: vec![],
    };
    let config = format!(
        "[run]\nname = \"small\"\nmodels = [\"synthetic/threshold\", \"synthetic/linear\", \"synthetic/exponential\", \"synthetic/model-1\", \"synthetic/model-2\", \"synthetic/model-3\"]\ncache = \"{}\"\n\n[ifscale]\ngrid = [10, 20, 50]\nseeds = [0, 1]\n",
        root.join("cache/responses.sqlite").display()
    );
    let input = ReportInput {
        title: "ifstress run “small”".to_owned(),
        subtitle: Some(
            "Models: synthetic/threshold, synthetic/linear, synthetic/exponential, synthetic/model-1, synthetic/model-2, synthetic/model-3. Every number below is computed from the files linked in each section.".to_owned(),
        ),
        config: Some(ConfigBlock {
            name: "Config".to_owned(),
            text: config,
        }),
        sections: vec![ifscale, rift],
    };
    check(&input, root, expect_file!["snapshots/report.html"]);
}
