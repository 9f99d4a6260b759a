//! What a run's `summary.md` and report show, from a small fixed run folder (snapshots; `UPDATE_EXPECT=1` updates).

use std::path::Path;

use expect_test::expect;
use report::{RunReport, report_input, summary_markdown};
use schema::ifscale::MatchMode;
use schema::paths::{Bench, RunPaths};
use schema::rift::{AnswerScore, JudgeSource, PromptScore, ReplyOutcome, Structure, Verdict};
use scoring::ifscale::{Matcher, SampleInput, score_sample};

pub(crate) const MODELS: [&str; 2] = ["alpha", "beta"];

/// IFScale: two models × N ∈ {2, 4}, one report each (beta's N = 4 sample failed); RIFT without a judge: one linear
/// prompt of three questions for alpha, all settled correct by the pre-judge, and one jumping prompt with one
/// correct, one unjudged (the pre-judge could not settle it) and one incorrect answer.
pub(crate) fn write_run(root: &Path) -> RunPaths {
    let paths = RunPaths::new(root);
    let kws = |n: usize| -> Vec<String> {
        ["audit", "tax", "revenue", "lease"][..n]
            .iter()
            .map(|s| (*s).to_owned())
            .collect()
    };
    let mut matcher =
        Matcher::new(MatchMode::Paper, &["audit", "tax", "revenue", "lease"]).unwrap();
    let mut scores = Vec::new();
    for (model, text4) in [
        ("alpha", Some("An audit, a tax and a lease.")),
        ("beta", None),
    ] {
        for (n, text) in [(2, Some("The audit found tax issues.")), (4, text4)] {
            let k = kws(n);
            let input = SampleInput {
                id: &format!("ifscale-n{n}-s0"),
                model,
                num_rules: n as u32,
                seed: 0,
                keywords: &k,
                text,
                latency_s: Some(1.0),
                output_tokens: Some(20),
                reasoning_tokens: None,
                coherence: None,
                attempts: 1,
            };
            scores.push(score_sample(&mut matcher, &input).0);
        }
    }
    schema::write_jsonl_atomic(&paths.ifscale_scores(), &scores).unwrap();
    let answer = |structure, depth: u32, verdict, judged_by| AnswerScore {
        prompt_id: format!("rift-{}", structure_name(structure)),
        sample_index: 0,
        model: "alpha".to_owned(),
        structure,
        depth,
        question_number: depth,
        row: None,
        value_normalized: None,
        expected: "Paris".to_owned(),
        given: Some("Paris".to_owned()),
        verdict,
        judged_by,
        pre_judge: None,
        judge_id: None,
        wrong_question_of: None,
    };
    let mut answers = Vec::new();
    let mut prompts = Vec::new();
    for (structure, correct, unjudged) in
        [(Structure::Linear, 3u32, 0u32), (Structure::Jumping, 1, 1)]
    {
        for d in 0..3 {
            let (verdict, by) = if d < correct {
                (Verdict::Correct, JudgeSource::PreJudge)
            } else if d < correct + unjudged {
                (Verdict::Unjudged, JudgeSource::PreJudgeOnly)
            } else {
                (Verdict::Incorrect, JudgeSource::PreJudge)
            };
            answers.push(answer(structure, d, verdict, by));
        }
        prompts.push(PromptScore {
            prompt_id: format!("rift-{}", structure_name(structure)),
            sample_index: 0,
            group_id: "g0".to_owned(),
            model: "alpha".to_owned(),
            structure,
            num_questions: 3,
            jump_k: (structure == Structure::Jumping).then_some(2),
            outcome: ReplyOutcome::Ok,
            answers_given: 3,
            correct,
            unjudged,
            accuracy: f64::from(correct) / 3.0,
            wrong_question: 0,
            wrong_question_correct: 0,
            missing: 0,
            extra: 0,
            stopped_early: false,
            ran_long: false,
            judged_by_llm: 0,
            pre_judge_only: unjudged,
            prompt_tokens: Some(50),
            completion_tokens: Some(9),
            reasoning_tokens: None,
        });
    }
    schema::write_jsonl_atomic(&paths.rift_answer_scores(), &answers).unwrap();
    // alpha's IFScale generations: one sent (with reasoning tokens and a provider-reported cost), one from the
    // cache; and the run's spend ledger.
    let responses = paths.model(Bench::Ifscale, "alpha").responses();
    std::fs::create_dir_all(responses.parent().unwrap()).unwrap();
    std::fs::write(
        &responses,
        "{\"schema_version\":1,\"id\":\"ifscale-n2-s0\",\"model\":\"alpha\",\"outcome\":\"ok\",\"content\":\"x\",\
         \"usage\":{\"prompt_tokens\":100,\"completion_tokens\":50,\"reasoning_tokens\":30,\"cost_usd\":0.002},\
         \"latency_s\":2.0,\"wall_s\":2.0,\"attempts\":[],\"cache_key\":\"k1\"}\n\
         {\"schema_version\":1,\"id\":\"ifscale-n4-s0\",\"model\":\"alpha\",\"outcome\":\"ok\",\"content\":\"y\",\
         \"usage\":{\"prompt_tokens\":120,\"completion_tokens\":40},\"latency_s\":1.0,\"wall_s\":1.0,\
         \"attempts\":[],\"cache_key\":\"k2\",\"cached\":true}\n",
    )
    .unwrap();
    std::fs::write(paths.spend_ledger(), "{\"usd\":0.002}\n{\"usd\":0.0005}\n").unwrap();
    schema::write_jsonl_atomic(&paths.rift_prompt_scores(), &prompts).unwrap();
    paths
}

fn structure_name(s: Structure) -> &'static str {
    s.as_str()
}

#[test]
fn summary_markdown_of_a_fixed_run() {
    let dir = tempfile::tempdir().unwrap();
    let paths = write_run(dir.path());
    let models: Vec<String> = MODELS.map(str::to_owned).to_vec();
    let md = summary_markdown(
        "fixture",
        &paths,
        &models,
        7,
        2,
        12.34,
        &Default::default(),
        &[],
    )
    .unwrap();
    let md = md.replace(&dir.path().display().to_string(), "<run>");
    expect![[r#"
        # ifstress run `fixture`

        ## IFScale

        | model | samples | failed | mean accuracy (%) | accuracy at the largest N (%) | output cap (tokens) | replies at the cap |
        |---|---:|---:|---:|---:|---:|---:|
        | alpha | 2 | 0 | 87.5 | 75.0 (N = 4) | – | – |
        | beta | 2 | 1 | 100.0 | – (N = 4) | – | – |

        ### Outcomes

        How every sample ended, per model and N: the paper's accuracy (mean over the scored samples) beside the accuracy over all samples with each failure counted as 0, and each outcome's count (share of the samples).

        | model | N | samples | accuracy, scored samples (%) | accuracy, all samples (%) | scored | failed |
        |---|---:|---:|---:|---:|---:|---:|
        | alpha | 2 | 1 | 100.0 | 100.0 | 1 (100 %) | 0 (0 %) |
        | alpha | 4 | 1 | 75.0 | 75.0 | 1 (100 %) | 0 (0 %) |
        | beta | 2 | 1 | 100.0 | 100.0 | 1 (100 %) | 0 (0 %) |
        | beta | 4 | 1 | – | 0.0 | 0 (0 %) | 1 (100 %) |

        ## RIFT

        | model | structure | prompts | mean accuracy (%) | unjudged answers | wrong-question answers | flagged, judged correct |
        |---|---|---:|---:|---:|---:|---:|
        | alpha | jumping | 1 | 33.3 … 66.7 | 1 | 0 | 0 |
        | alpha | linear | 1 | 100.0 | 0 | 0 | 0 |

        Unjudged answers (no judge verdict) are neither correct nor incorrect; where there are any, accuracy is shown as bounds: unjudged counted wrong … unjudged counted right.

        ## What it cost

        | benchmark | stage | model | requests | from cache | failed | prompt tokens | visible output tokens | reasoning tokens | output tok/s | spend USD | of which provider-reported |
        |---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|
        | IFScale | generation | alpha | 2 | 1 | 0 | 220 | 60 | 30 | 25.0 | 0.0020 | 0.0020 |

        Judge rows are filed under the model whose answers or reports were judged; judge check rows (control items with a known verdict) under the judge they checked. Spend is the provider's reported cost where a response carries one, else its tokens at the answering model's configured prices (answers served from the cache cost nothing).
        Spend recorded in the run's ledger (provider-reported where present, else tokens × the model's prices): 0.0025 USD.

        Stages run: 7; up to date and skipped: 2. Finished in 12.3 s.

        Report: <run>/report.html
    "#]]
    .assert_eq(&md);
}

/// Few resamples: the report tests check what is shown, not the statistics (`analysis`'s tests do).
pub(crate) fn compare_options() -> analysis::compare::Options {
    analysis::compare::Options {
        resamples: 200,
        ..Default::default()
    }
}

#[test]
fn report_sections_count_from_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let paths = write_run(dir.path());
    let models: Vec<String> = MODELS.map(str::to_owned).to_vec();
    let comparison = report::compare::compare_run(&paths, &models, &compare_options())
        .unwrap()
        .expect("two models: a comparison");
    let run = RunReport {
        name: "fixture",
        models: &models,
        config_text: "[run]\nname = \"fixture\"",
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
    let mut shown = format!("{}\n", input.title);
    for s in &input.sections {
        shown.push_str(&format!("## {}\n", s.heading));
        for (k, v) in &s.denominators {
            shown.push_str(&format!("{k}: {v}\n"));
        }
        for l in &s.links {
            shown.push_str(&format!("link {}: {}\n", l.label, l.href));
        }
        for p in &s.paragraphs {
            shown.push_str(&format!("note: {p}\n"));
        }
    }
    expect![[r#"
        ifstress run “fixture”
        ## IFScale: instruction density
        Prompts: 0
        alpha: responses: 2 (ok 2, truncated 0, failed 0; 1 served from the cache in the run that wrote them)
        beta: responses: 0 (ok 0, truncated 0, failed 0; 0 served from the cache in the run that wrote them)
        Samples: 3 scored, 1 failed (every attempt rejected; counted, never dropped): failed 1
        Coherence judged: no judge model configured: the coherence check was skipped
        link prompts: ifscale/prompts.jsonl
        link alpha: responses: ifscale/models/alpha/responses.jsonl
        link beta: responses: ifscale/models/beta/responses.jsonl
        link per-sample scores: ifscale/scores.jsonl
        link per-keyword labels: ifscale/labels.jsonl
        link attempts log: ifscale/attempts.jsonl
        note: The report prompt and the coherence rubric are ifstress's own wording (the paper's appendix texts are not available to us); an attempt is one request (a truncated reply and a failed request each use one); failed samples are counted and left out of the means. A reply was retried as a list of the constraints under the `whole-reply` reading of that rule (the whole reply is ten or more comma-separated bare words; the paper does not say which, the choice is ours). See configs/prompts/README.md.
        ## RIFT: instruction topology
        Prompts: 0
        alpha: responses: 0 (ok 0, truncated 0, failed 0; 0 served from the cache in the run that wrote them)
        beta: responses: 0 (ok 0, truncated 0, failed 0; 0 served from the cache in the run that wrote them)
        Answers: 6 (PreJudge: 5, PreJudgeOnly: 1)
        Verdicts: 4 correct, 1 incorrect, 0 missing, 1 unjudged (0 because the judge failed; unjudged answers are neither correct nor incorrect)
        link prompts: rift/prompts.jsonl
        link alpha: responses: rift/models/alpha/responses.jsonl
        link beta: responses: rift/models/beta/responses.jsonl
        link per-answer scores: rift/answer-scores.jsonl
        link per-prompt scores: rift/prompt-scores.jsonl
        note: No LLM judge was configured: answers the deterministic pre-judge could not settle are unjudged (labelled pre_judge_only), neither correct nor incorrect; the tables show accuracy as bounds (unjudged counted wrong … unjudged counted right) beside the unjudged count.
        ## Model comparison (paired)
        link every comparison, per N and per structure (compare.md): compare/compare.md
        link every number (compare.json): compare/compare.json
        note: Paired comparison of alpha, beta: each difference is first − second in percentage points over the items both models hold (IFScale samples of the same N and seed, RIFT prompts), with its 95 % percentile bootstrap interval (200 resamples, seed 0), a sign-flip p-value and the minimum detectable difference (MDD) at α = 0.05 and 80 % power: a difference that is not significant with an MDD larger than it is not evidence that the models are equal. Definitions: docs/compare.md.
        note: IFScale: with this many seeds the smallest possible per-N p-value is 1.0000, above α = 0.05, so no single N can be significant; the overall test over every (N, seed) sample is the headline.
        note: RIFT: only alpha has RIFT results (beta has none), so there is no RIFT comparison.
        note: IFScale alpha − beta: 1 of 2 samples left out (failed, every attempt rejected, or missing for one of the two models).
        ## What it cost
        note: Judge rows are filed under the model whose answers or reports were judged; judge check rows (control items with a known verdict) under the judge they checked. Spend is the provider's reported cost where a response carries one, else its tokens at the answering model's configured prices (answers served from the cache cost nothing).
        note: Spend recorded in the run's ledger (provider-reported where present, else tokens × the model's prices): 0.0025 USD.
    "#]]
    .assert_eq(&shown);
    // The other reading of the constraint-list rule is named where the retry rules are.
    let run = RunReport {
        ifscale_constraint_list: schema::ifscale::ConstraintListRule::RunInReport,
        ..run
    };
    let input = report_input(&run, &paths).unwrap();
    assert!(
        input.sections[0].paragraphs.iter().any(|p| p.contains(
            "under the `run-in-report` reading of that rule (the whole reply is, or the reply contains a run of, ten"
        )),
        "{:?}",
        input.sections[0].paragraphs
    );
}

#[test]
fn table_one_gets_the_questions_per_prompt_of_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let paths = write_run(dir.path());
    let prompt = |id: &str, structure: Structure, num: u32| {
        let meta = serde_json::json!({
            "benchmark": "rift", "group_id": "g", "structure": structure, "num": num, "start_row": 0,
            "seed": 1, "max_jump_distance": 18, "jump_k": null, "traversal": [], "expected": [],
            "questions": [],
        });
        let mut p: schema::PromptRecord = serde_json::from_value(serde_json::json!({
            "id": id, "messages": [{"role": "user", "content": "q"}],
        }))
        .unwrap();
        p.extra = meta.as_object().unwrap().clone();
        p
    };
    let prompts = vec![
        prompt("a", Structure::Linear, 10),
        prompt("b", Structure::Jumping, 13),
        prompt("c", Structure::Baseline, 1),
    ];
    schema::write_jsonl_atomic(&paths.rift_prompts(), &prompts).unwrap();
    let models: Vec<String> = MODELS.map(str::to_owned).to_vec();
    let table1 = jeopardy_prep::Summary {
        files: vec!["clues.json".to_owned()],
        input_pairs: 302,
        pairs: 300,
        unique_categories: 40,
        value_min: Some(100),
        value_max: Some(2000),
        value_normalized_min: Some(200),
        value_normalized_max: Some(2000),
        without_value: 0,
        rephrased: 0,
        per_round: Default::default(),
        skipped: [("media".to_owned(), 2)].into_iter().collect(),
        skipped_total: 2,
    };
    let run = RunReport {
        name: "fixture",
        models: &models,
        config_text: "",
        ifscale: None,
        ifscale_constraint_list: Default::default(),
        rift: Some(false),
        rift_notes: &["Prompts: jump rule.".to_owned()],
        rift_table1: Some(&table1),
        prices: &Default::default(),
        ifscale_caps: &[],
        comparison: None,
    };
    let input = report_input(&run, &paths).unwrap();
    let rift = &input.sections[0];
    let t = rift
        .tables
        .iter()
        .find(|t| t.caption.starts_with("Table 1"))
        .expect("Table 1 is in the RIFT section");
    let rows: Vec<(String, String)> = t
        .rows
        .iter()
        .map(|r| (r[0].clone(), r[1].clone()))
        .collect();
    // The dataset's statistics (built as data, never read back from Markdown), then the run's prompt sizes.
    assert_eq!(rows[0], ("Input clues".to_owned(), "302".to_owned()));
    assert_eq!(
        rows[1],
        ("Total question–answer pairs".to_owned(), "300".to_owned())
    );
    assert_eq!(
        rows[rows.len() - 3..],
        [
            ("Minimum questions per prompt", "10"),
            ("Maximum questions per prompt", "13"),
            ("Average questions per prompt", "12"),
        ]
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
    );
    assert!(rift.paragraphs.contains(&"Prompts: jump rule.".to_owned()));
}

/// `rift audit` then `rift agreement`: a seeded sample of judged answers, labelled by hand, gives agreement and κ.
#[test]
fn an_audit_sample_and_its_agreement() {
    let dir = tempfile::tempdir().unwrap();
    let paths = write_run(dir.path());
    let out = dir.path().join("audit.csv");
    let n = harness::audit::sample(&paths.rift_answer_scores(), 100, 3, &out).unwrap();
    // The fixture's judged answers: 3 linear + 2 jumping settled, the unjudged one left out.
    assert_eq!(n, 5);
    let again = dir.path().join("again.csv");
    harness::audit::sample(&paths.rift_answer_scores(), 100, 3, &again).unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&again).unwrap());
    // A person agrees with every verdict but the last.
    let text = std::fs::read_to_string(&out).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let last = lines.len() - 1;
    for (i, l) in lines.iter_mut().enumerate().skip(1) {
        let verdict = if l.contains(",CORRECT,") {
            "CORRECT"
        } else {
            "INCORRECT"
        };
        let label = match (i == last, verdict) {
            (false, v) => v,
            (true, "CORRECT") => "INCORRECT",
            (true, _) => "CORRECT",
        };
        l.push_str(label);
    }
    std::fs::write(&out, lines.join("\n") + "\n").unwrap();
    let rows = harness::audit::agreement(&out).unwrap();
    let all = rows.iter().find(|r| r.group == "all").unwrap();
    assert_eq!((all.items, all.agree), (5, 4));
    assert!(harness::audit::to_markdown(&rows).contains("| all | 5 | 4 | 80.0 |"));
    // Kept as the run's audit file, the agreement is in the report.
    std::fs::copy(&out, paths.bench(Bench::Rift).join("audit.csv")).unwrap();
    let models: Vec<String> = MODELS.map(str::to_owned).to_vec();
    let run = RunReport {
        name: "fixture",
        models: &models,
        config_text: "",
        ifscale: None,
        ifscale_constraint_list: Default::default(),
        rift: Some(false),
        rift_notes: &[],
        rift_table1: None,
        prices: &Default::default(),
        ifscale_caps: &[],
        comparison: None,
    };
    let input = report_input(&run, &paths).unwrap();
    assert!(
        input.sections[0]
            .tables
            .iter()
            .any(|t| t.caption.starts_with("Judge audit")
                && t.rows.iter().any(|r| r[0] == "all" && r[3] == "80.0"))
    );
    // A label that is not a verdict names its row.
    std::fs::write(&out, text.trim_end().to_owned() + "maybe\n").unwrap();
    let err = harness::audit::agreement(&out).unwrap_err().to_string();
    assert!(err.contains("human_label") && err.contains("row"), "{err}");
}

/// A judged run: `judge-check.json` with a coherence judge that passed and a RIFT judge that failed. Both figures,
/// with counts and Wilson intervals, are in `summary.md` and the report; the failed judge's section is marked.
#[test]
fn a_judged_run_shows_each_judges_sensitivity_and_specificity() {
    use schema::judge::JudgeRole;
    use schema::judge_check::{JudgeCheck, JudgeCheckFile};
    let dir = tempfile::tempdir().unwrap();
    let paths = write_run(dir.path());
    let check = |role: JudgeRole, judge: &str, sens: (u64, u64), spec: (u64, u64)| {
        let sensitivity = scoring::judge_check::agreement(sens.0, sens.1, 0);
        let specificity = scoring::judge_check::agreement(spec.0, spec.1, 1);
        JudgeCheck {
            bench: role.bench(),
            role,
            judge: judge.to_owned(),
            passed: scoring::judge_check::passes(&sensitivity, &specificity, 0.9, 0.9),
            sensitivity,
            specificity,
            min_sensitivity: 0.9,
            min_specificity: 0.9,
            items: 40,
            unreadable: 0,
            max_unreadable_share: 0.02,
            kept: false,
            requests: (sens.1 + spec.1 + 1) as usize,
            controls_file: format!("{}/judge-check/{judge}/controls.jsonl", role.bench()),
        }
    };
    harness::judge_check::assemble(
        vec![
            check(JudgeRole::Coherence, "coh", (12, 12), (49, 50)),
            check(JudgeRole::RiftAnswers, "grader", (50, 50), (3, 50)),
        ],
        &paths.judge_check(),
    )
    .unwrap();
    let models: Vec<String> = MODELS.map(str::to_owned).to_vec();
    let md = summary_markdown(
        "fixture",
        &paths,
        &models,
        7,
        2,
        12.34,
        &Default::default(),
        &[],
    )
    .unwrap();
    let judge_part: String = md
        .lines()
        .filter(|l| l.contains("judge") || l.contains("Judge"))
        .map(|l| format!("{l}\n"))
        .collect();
    for want in [
        "**judge failed its check: RIFT answer judge `grader`",
        "The RIFT tables below are built from its verdicts.",
        "| ifscale | coh | IFScale coherence judge | 12/12 = 100.0 % (95 % CI 75.8–100.0) | 49/50 = 98.0 %",
        "| rift | grader | RIFT answer judge | 50/50 = 100.0 % (95 % CI 92.9–100.0) | 3/50 = 6.0 %",
        "| judge failed its check |",
        "98 % agreement on 100 items",
    ] {
        assert!(judge_part.contains(want), "{want}\n{judge_part}");
    }
    let run = RunReport {
        name: "fixture",
        models: &models,
        config_text: "",
        ifscale: Some(true),
        ifscale_constraint_list: Default::default(),
        rift: Some(true),
        rift_notes: &[],
        rift_table1: None,
        prices: &Default::default(),
        ifscale_caps: &[],
        comparison: None,
    };
    // The analysis's judge-corrected accuracy (issue 44): the report says in one sentence what it did.
    let corrected = analysis::rift::corrected::Corrected {
        judge: "grader".to_owned(),
        calibration: analysis::judge_correction::Calibration {
            sensitivity: analysis::judge_correction::Count::new(50, 50),
            specificity: analysis::judge_correction::Count::new(45, 50),
        },
        rows: vec![analysis::rift::corrected::CorrectedRow {
            model: "m".to_owned(),
            structure: "linear".to_owned(),
            settled: (10, 20),
            judged: (30, 80),
            raw: 0.4,
            corrected: Some((0.38, 0.33, 0.434)),
            reason: None,
        }],
    };
    analysis::rift::corrected::write(&corrected, &paths.tables().join("rift")).unwrap();
    let input = report_input(&run, &paths).unwrap();
    let mut shown = String::new();
    for s in &input.sections {
        shown.push_str(&format!("## {}\n", s.heading));
        for p in s
            .paragraphs
            .iter()
            .filter(|p| p.contains("judge") || p.contains("Control"))
        {
            shown.push_str(&format!("note: {p}\n"));
        }
        for t in s.tables.iter().filter(|t| t.caption.contains("judge")) {
            shown.push_str(&format!("table: {}\n", t.caption));
            for r in &t.rows {
                shown.push_str(&format!("  {}\n", r.join(" | ")));
            }
        }
    }
    for want in [
        "## Judge check\n",
        "RIFT paper: 98 % agreement",
        "  rift | grader | RIFT answer judge | 50/50 = 100.0 % (95 % CI 92.9–100.0)",
        "note: Warning: judge failed its check: RIFT answer judge `grader`",
        "note: Judge-corrected accuracy (answers the judge `grader` decided, corrected with its measured sensitivity \
         and specificity): m linear 38.0 % [33.0, 43.4] vs 40.0 % raw.",
        "] RIFT answer-level accuracy corrected for the judge `grader` (Rogan–Gladen",
        "  m | linear | 20 | 80 | 37.5 | 40.0 | 38.0 [33.0, 43.4]",
    ] {
        assert!(shown.contains(want), "{want}\n{shown}");
    }
    // The judge-check table is data: its page has the judges' rows and no Markdown alignment row among them.
    let judge = input
        .sections
        .iter()
        .find(|s| s.heading == "Judge check")
        .expect("a judge-check section")
        .clone();
    assert_eq!(judge.tables[0].rows.len(), 2);
    let html = plots::report::render(&plots::report::ReportInput {
        title: "t".to_owned(),
        subtitle: None,
        config: None,
        sections: vec![judge],
    })
    .unwrap();
    assert!(html.contains("<td>rift</td><td>grader</td>"), "{html}");
    assert!(!html.contains("<td>---"), "{html}");
    let ifscale = shown
        .split("## RIFT")
        .next()
        .and_then(|s| s.split("## IFScale").nth(1))
        .unwrap_or_default();
    assert!(
        !ifscale.contains("Warning"),
        "the passed coherence judge's section is not marked: {ifscale}"
    );
    let file = JudgeCheckFile::read(&paths.judge_check()).unwrap().unwrap();
    assert_eq!(file.checks.len(), 2);
    assert_eq!(file.marks(Bench::Rift).len(), 1);
    assert!(file.marks(Bench::Ifscale).is_empty());
}

/// The run's departures from the paper's setup: a capped model's report and `summary.md` name its cap and count the
/// replies that stopped at it; prompts drawn from the project's list get the vocabulary sentence, the paper's none.
#[test]
fn output_caps_and_the_vocabulary_are_labelled() {
    use analysis::ifscale::vocabulary::{paper_sha256, project_sha256};
    use report::departures::{CapSource, OutputCap};
    let dir = tempfile::tempdir().unwrap();
    let paths = write_run(dir.path());
    // alpha: three attempts at two samples, the first attempt of n2 cut off at the cap; beta: one attempt.
    let log = |id: &str, model: &str, attempt: u32, truncated: bool| {
        let reason = if truncated {
            ",\"reason\":\"truncated\""
        } else {
            ""
        };
        format!(
            "{{\"id\":\"{id}\",\"model\":\"{model}\",\"attempt\":{attempt},\"accepted\":{}{reason}}}\n",
            !truncated
        )
    };
    let attempts = [
        log("ifscale-n2-s0", "alpha", 1, true),
        log("ifscale-n2-s0", "alpha", 2, false),
        log("ifscale-n4-s0", "alpha", 1, false),
        log("ifscale-n2-s0", "beta", 1, false),
    ]
    .concat();
    std::fs::write(paths.ifscale_attempts(), attempts).unwrap();
    let write_prompts = |hash: &str| {
        let line = format!(
            "{{\"id\":\"ifscale-n2-s0\",\"messages\":[{{\"role\":\"user\",\"content\":\"q\"}}],\"benchmark\":\"ifscale\",\"vocab_sha256\":\"{hash}\"}}\n"
        );
        std::fs::write(paths.ifscale_prompts(), line).unwrap();
    };
    write_prompts(project_sha256());
    let caps = [OutputCap {
        model: "alpha".to_owned(),
        max_tokens: 8192,
        source: CapSource::ModelsFile,
    }];
    let models: Vec<String> = MODELS.map(str::to_owned).to_vec();
    let run = RunReport {
        name: "fixture",
        models: &models,
        config_text: "",
        ifscale: Some(false),
        ifscale_constraint_list: Default::default(),
        rift: None,
        rift_notes: &[],
        rift_table1: None,
        prices: &Default::default(),
        ifscale_caps: &caps,
        comparison: None,
    };
    let notes = |run: &RunReport<'_>| {
        report_input(run, &paths).unwrap().sections[0]
            .paragraphs
            .clone()
    };
    let shown = notes(&run);
    expect![[r#"
        [
            "The report prompt and the coherence rubric are ifstress's own wording (the paper's appendix texts are not available to us); an attempt is one request (a truncated reply and a failed request each use one); failed samples are counted and left out of the means. A reply was retried as a list of the constraints under the `whole-reply` reading of that rule (the whole reply is ten or more comma-separated bare words; the paper does not say which, the choice is ours). See configs/prompts/README.md.",
            "This run's keywords come from ifstress's own vocabulary (datasets/vocab/default.tsv), not the paper's 500 terms (datasets/vocab/ifscale-paper.txt); difficulty depends on the words, so its curves are not like for like with the published ones.",
            "Output caps, a departure from the paper (it ran every model with its provider's default generation parameters): alpha at 8192 tokens (its max-tokens in the models file); no cap for beta. The replies that stopped at the length limit (finish reason `length`; rejected as truncated, and the sample tried again): alpha 1 of 3 (in 1 sample), beta 0 of 1 (in 0 samples).",
        ]
    "#]]
    .assert_debug_eq(&shown);
    let md = summary_markdown(
        "fixture",
        &paths,
        &models,
        1,
        0,
        1.0,
        &Default::default(),
        &caps,
    )
    .unwrap();
    let ifscale = md.split("## RIFT").next().unwrap();
    expect![[r#"
        # ifstress run `fixture`

        ## IFScale

        | model | samples | failed | mean accuracy (%) | accuracy at the largest N (%) | output cap (tokens) | replies at the cap |
        |---|---:|---:|---:|---:|---:|---:|
        | alpha | 2 | 0 | 87.5 | 75.0 (N = 4) | 8192 | 1 of 3 (in 1 sample) |
        | beta | 2 | 1 | 100.0 | – (N = 4) | – | 0 of 1 (in 0 samples) |

        ### Outcomes

        How every sample ended, per model and N: the paper's accuracy (mean over the scored samples) beside the accuracy over all samples with each failure counted as 0, and each outcome's count (share of the samples).

        | model | N | samples | accuracy, scored samples (%) | accuracy, all samples (%) | scored | failed |
        |---|---:|---:|---:|---:|---:|---:|
        | alpha | 2 | 1 | 100.0 | 100.0 | 1 (100 %) | 0 (0 %) |
        | alpha | 4 | 1 | 75.0 | 75.0 | 1 (100 %) | 0 (0 %) |
        | beta | 2 | 1 | 100.0 | 100.0 | 1 (100 %) | 0 (0 %) |
        | beta | 4 | 1 | – | 0.0 | 0 (0 %) | 1 (100 %) |

        This run's keywords come from ifstress's own vocabulary (datasets/vocab/default.tsv), not the paper's 500 terms (datasets/vocab/ifscale-paper.txt); difficulty depends on the words, so its curves are not like for like with the published ones.

        Output caps, a departure from the paper (it ran every model with its provider's default generation parameters): alpha at 8192 tokens (its max-tokens in the models file); no cap for beta. The last column counts the replies that stopped at the length limit (finish reason `length`; rejected as truncated, and the sample tried again).

    "#]]
    .assert_eq(ifscale);
    // The paper's list, and no cap: neither sentence, the counts still in the table.
    write_prompts(paper_sha256());
    let uncapped = RunReport {
        ifscale_caps: &[],
        ..run
    };
    let shown = notes(&uncapped);
    assert_eq!(shown.len(), 2, "{shown:?}");
    assert!(
        shown[1].starts_with("The replies that stopped at the length limit"),
        "{shown:?}"
    );
    assert!(
        !shown
            .iter()
            .any(|p| p.contains("vocabulary") || p.contains("Output caps"))
    );
    let md = summary_markdown(
        "fixture",
        &paths,
        &models,
        1,
        0,
        1.0,
        &Default::default(),
        &[],
    )
    .unwrap();
    assert!(md.contains("| alpha | 2 | 0 | 87.5 | 75.0 (N = 4) | – | 1 of 3 (in 1 sample) |"));
    assert!(!md.contains("vocabulary"), "{md}");
}
