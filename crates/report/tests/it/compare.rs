//! A multi-model run's comparison in the report: its section, tables, figures and links, and the files it writes
//! to `<run>/compare/`.

use report::{RunReport, report_input};
use schema::rift::{AnswerScore, JudgeSource, Structure, Verdict};

use crate::report::{MODELS, compare_options, write_run};

/// A run of two models has the comparison section (its tables from the paired statistics, both figures, links to
/// the comparison's files), and its files are in `<run>/compare/`; the same run reported for one model has none.
#[test]
fn a_multi_model_run_has_the_comparison_section_and_a_single_model_run_none() {
    let dir = tempfile::tempdir().unwrap();
    let paths = write_run(dir.path());
    // beta's RIFT answers: linear 2 of 3 right (alpha 3 of 3), jumping all wrong (alpha 1 of 2 judged).
    let mut answers: Vec<AnswerScore> = schema::read_jsonl(&paths.rift_answer_scores()).unwrap();
    let beta: Vec<AnswerScore> = answers
        .iter()
        .map(|a| {
            let right = a.structure == Structure::Linear && a.depth < 2;
            AnswerScore {
                model: "beta".to_owned(),
                verdict: if right {
                    Verdict::Correct
                } else {
                    Verdict::Incorrect
                },
                judged_by: JudgeSource::PreJudge,
                ..a.clone()
            }
        })
        .collect();
    answers.extend(beta);
    schema::write_jsonl_atomic(&paths.rift_answer_scores(), &answers).unwrap();
    let models: Vec<String> = MODELS.map(str::to_owned).to_vec();
    let comparison = report::compare::compare_run(&paths, &models, &compare_options())
        .unwrap()
        .expect("two models: a comparison");
    let out = dir.path().join("compare");
    for f in [
        "compare.md",
        "compare.json",
        "compare_ifscale_difference.png",
        "compare_rift_forest.png",
    ] {
        assert!(out.join(f).is_file(), "{f}");
    }
    let run = RunReport {
        name: "fixture",
        models: &models,
        config_text: "",
        ifscale: Some(false),
        ifscale_constraint_list: Default::default(),
        rift: Some(false),
        rift_notes: &[],
        rift_table1: None,
        prices: &Default::default(),
        ifscale_caps: &[],
        comparison: Some(&comparison),
    };
    let input = report_input(&run, &paths).unwrap();
    let headings: Vec<&str> = input.sections.iter().map(|s| s.heading.as_str()).collect();
    assert_eq!(
        headings,
        [
            "IFScale: instruction density",
            "RIFT: instruction topology",
            "Model comparison (paired)",
            "What it cost"
        ]
    );
    let section = &input.sections[2];
    let table = |start: &str| {
        section
            .tables
            .iter()
            .find(|t| t.caption.starts_with(start))
            .unwrap_or_else(|| panic!("no table {start}"))
    };
    // IFScale: only N = 2 is scored for both (beta's N = 4 sample failed); both found both keywords.
    let ifs = table("IFScale: overall accuracy difference");
    assert_eq!(ifs.rows.len(), 1);
    assert_eq!(
        ifs.rows[0][..7],
        ["alpha", "beta", "1", "1", "100.00", "100.00", "+0.00"]
    );
    // RIFT: linear 100 vs 66.67, jumping 50 (one of two judged) vs 0.
    let rift = table("RIFT: prompt-level accuracy difference");
    let rows: Vec<Vec<&str>> = rift
        .rows
        .iter()
        .map(|r| {
            [2, 5, 6, 7]
                .iter()
                .map(|&i| r[i].as_str())
                .collect::<Vec<&str>>()
        })
        .collect();
    assert_eq!(
        rows,
        [
            ["linear", "100.00", "66.67", "+33.33"],
            ["jumping", "50.00", "0.00", "+50.00"]
        ]
    );
    assert_eq!(section.figures.len(), 2);
    assert!(
        section
            .paragraphs
            .iter()
            .any(|p| p.contains("IFScale alpha − beta: 1 of 2 samples left out")),
        "{:?}",
        section.paragraphs
    );
    let hrefs: Vec<&str> = section.links.iter().map(|l| l.href.as_str()).collect();
    assert_eq!(hrefs, ["compare/compare.md", "compare/compare.json"]);
    let html = plots::report::render(&input).unwrap();
    assert!(html.contains("<h2>Model comparison (paired)</h2>"));
    assert!(html.contains("href=\"compare/compare.md\""));

    // One model: no comparison, the old one removed, no section.
    let one = vec!["alpha".to_owned()];
    assert!(
        report::compare::compare_run(&paths, &one, &compare_options())
            .unwrap()
            .is_none()
    );
    assert!(!out.exists());
    let run = RunReport {
        models: &one,
        comparison: None,
        ..run
    };
    let input = report_input(&run, &paths).unwrap();
    assert!(
        input
            .sections
            .iter()
            .all(|s| !s.heading.contains("comparison"))
    );
}
