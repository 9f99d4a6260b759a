//! Snapshot tests of every Markdown table the analysis writes (`ifscale::write_tables`, `rift::write_tables`, and
//! `tables::markdown` itself), from the deterministic synthetic runs of `analysis::synthetic`.
//!
//! The expected text sits inline in each test. After an intended change of a table, update the snapshots with
//! `UPDATE_EXPECT=1 cargo test -p analysis --test it tables` and review the diff before committing.

use std::path::Path;

use analysis::ifscale::{self, AggregateConfig};
use analysis::models::ReasoningRule;
use analysis::polars::prelude::*;
use analysis::rift::{self, RiftConfig};
use analysis::synthetic::{self, SyntheticConfig};
use analysis::tables;
use expect_test::{Expect, expect};

/// Compares the Markdown table `<name>.md` that `write` puts into a fresh folder.
fn check(
    write: impl FnOnce(&Path) -> Result<Vec<std::path::PathBuf>, analysis::Error>,
    name: &str,
    expect: Expect,
) {
    let dir = tempfile::tempdir().unwrap();
    let written = write(dir.path()).unwrap();
    let path = dir.path().join(format!("{name}.md"));
    assert!(written.contains(&path), "{name}.md was not written");
    expect.assert_eq(&std::fs::read_to_string(&path).unwrap());
}

fn ifscale_summary() -> ifscale::IfscaleSummary {
    let frame = ifscale::samples_frame(&synthetic::ifscale_records()).unwrap();
    ifscale::aggregate(
        &frame,
        &AggregateConfig {
            bootstrap_resamples: 200,
            bootstrap_seed: 7,
            ci_level: 0.95,
        },
    )
    .unwrap()
}

fn rift_cfg() -> SyntheticConfig {
    SyntheticConfig {
        seed: 21,
        models: 3,
        prompts_per_structure: 12,
        baseline_prompts: 8,
        min_questions: 5,
        max_questions: 30,
    }
}

/// The RIFT summary of the synthetic run; `with_prompts` false aggregates the answer table alone.
fn rift_summary(with_prompts: bool) -> rift::RiftSummary {
    rift_summary_with(with_prompts, &RiftConfig::default())
}

fn rift_summary_with(with_prompts: bool, cfg: &RiftConfig) -> rift::RiftSummary {
    let (prompts, answers) = synthetic::generate_records(&rift_cfg());
    let pf = rift::prompts_frame(&prompts).unwrap();
    rift::aggregate(
        rift::answers_frame(&answers).unwrap().lazy(),
        with_prompts.then_some(&pf),
        cfg,
    )
    .unwrap()
}

#[test]
fn ifscale_results() {
    let s = ifscale_summary();
    check(
        |d| ifscale::write_tables(&s, d),
        "ifscale_results",
        expect![[r#"
            Mean accuracy (%) and sample standard deviation across seeds at 10, 50, 100, 250 and 500 instructions.

            | model | acc@10 | acc@50 | acc@100 | acc@250 | acc@500 | std@10 | std@50 | std@100 | std@250 | std@500 |
            |---|---|---|---|---|---|---|---|---|---|---|
            | synthetic/exponential | 94.8 | 65.7 | 48.2 | 34.2 | – | 0.4 | 0.6 | 0.9 | – | – |
            | synthetic/linear | 90.8 | 86.9 | 81.8 | 66.8 | 41.9 | 0.4 | 0.6 | 0.9 | 1.8 | 3.1 |
            | synthetic/threshold | 96.8 | 96.6 | 96.3 | 85.8 | 35.9 | 0.4 | 0.6 | 0.9 | 1.8 | 3.1 |
        "#]],
    );
}

#[test]
fn ifscale_decay_fits() {
    let s = ifscale_summary();
    check(
        |d| ifscale::write_tables(&s, d),
        "ifscale_decay_fits",
        expect![[r#"
            Decay pattern per model: the lowest-BIC family among threshold (plateau ≥ 1/5 of the N range, then a linear drop), linear, and exponential (settles within the range, τ ≤ span/3), fitted to mean accuracy vs N; margin = BIC of the runner-up − BIC of the best, near-tie when < 2. Variance pattern of the across-seed std.

            | model | pattern | margin | variance | breakpoint | slope after | linear slope | exp floor | exp τ | BIC thr | R² thr | BIC lin | R² lin | BIC exp | R² exp |
            |---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
            | synthetic/exponential | exponential | 140.1 | rising | 58 | -0.2103 | -0.2051 | 34.7 | 61.1 | 124.9 | 0.676 | 109.3 | 0.803 | -30.8 | 0.999 |
            | synthetic/linear | linear | 234.3 | rising | 108 | -0.1099 | -0.1000 | 50.2 | 163.3 | 90.6 | 0.978 | -143.7 | 1.000 | 180.0 | 0.871 |
            | synthetic/threshold | threshold | 316.5 | rising | 198 | -0.2001 | -0.1342 | 58.4 | 163.3 | -116.9 | 1.000 | 199.7 | 0.897 | 271.7 | 0.599 |
        "#]],
    );
}

#[test]
fn rift_table2() {
    let s = rift_summary(true);
    check(
        |d| rift::write_tables(&s, d),
        "rift_table2",
        expect![[r#"
            Table 2: baseline vs linear vs jumping prompt accuracy (%), mean (± standard error) and median over prompts; Δ = (A_linear − A_jumping) / A_linear × 100 (relative, %); beside it the absolute gaps in percentage points, A_linear − A_jumping and A_baseline − A_jumping. Unjudged answers (no judge verdict: none configured, or the judge failed) are neither correct nor incorrect; where there are any, a cell shows bounds: unjudged counted wrong … unjudged counted right. Rows marked "(published)" are the RIFT paper's Table 2, for comparison.

            | Model | Baseline mean (± SE) | Linear mean (± SE) | Linear median | Jumping mean (± SE) | Jumping median | Δ | Linear − jumping (pp) | Baseline − jumping (pp) | Unjudged answers (baseline / linear / jumping) |
            |---|---|---|---|---|---|---|---|---|---|
            | synthetic/model-1 | 62.50 (± 18.30) | 32.39 (± 6.09) | 33.48 | 10.07 (± 2.19) | 10.56 | 68.9 | 22.3 | 52.4 | 0 / 0 / 0 |
            | synthetic/model-2 | 62.50 (± 18.30) | 47.42 (± 6.18) | 50.00 | 18.95 (± 4.96) | 12.52 | 60.0 | 28.5 | 43.6 | 0 / 0 / 0 |
            | synthetic/model-3 | 100.00 (± 0.00) | 56.20 (± 6.36) | 64.75 | 20.90 (± 2.66) | 17.91 | 62.8 | 35.3 | 79.1 | 0 / 0 / 0 |
            | gpt-oss-20b (published) | 73.26 (± 0.15) | 17.75 (± 0.29) | 0.00 | 4.94 (± 0.14) | 0.47 | 72.2 | 12.8 | 68.3 | – |
            | gpt-oss-120b (published) | 84.83 (± 0.12) | 55.14 (± 0.36) | 76.34 | 13.90 (± 0.24) | 2.94 | 74.8 | 41.2 | 70.9 | – |
            | Qwen3-4B-Thinking-2507 (published) | 67.07 (± 0.16) | 34.35 (± 0.28) | 24.23 | 8.29 (± 0.17) | 2.23 | 75.9 | 26.1 | 58.8 | – |
            | Qwen3-4B-Instruct-2507 (published) | 55.71 (± 0.17) | 27.21 (± 0.26) | 14.11 | 1.76 (± 0.03) | 0.66 | 93.5 | 25.4 | 54.0 | – |
            | Qwen3-30B-A3B-Thinking-2507 (published) | 80.48 (± 0.14) | 51.91 (± 0.34) | 68.57 | 9.25 (± 0.18) | 2.59 | 82.2 | 42.7 | 71.2 | – |
            | Qwen3-30B-A3B-Instruct-2507 (published) | 75.30 (± 0.15) | 40.00 (± 0.31) | 31.15 | 2.43 (± 0.04) | 1.02 | 93.9 | 37.6 | 72.9 | – |
        "#]],
    );
}

#[test]
fn rift_table2_from_the_answer_table_alone() {
    let s = rift_summary(false);
    check(
        |d| rift::write_tables(&s, d),
        "rift_table2",
        expect![[r#"
            Table 2: baseline vs linear vs jumping prompt accuracy (%), mean (± standard error) and median over prompts; Δ = (A_linear − A_jumping) / A_linear × 100 (relative, %); beside it the absolute gaps in percentage points, A_linear − A_jumping and A_baseline − A_jumping. Unjudged answers (no judge verdict: none configured, or the judge failed) are neither correct nor incorrect; where there are any, a cell shows bounds: unjudged counted wrong … unjudged counted right. Rows marked "(published)" are the RIFT paper's Table 2, for comparison.

            | Model | Baseline mean (± SE) | Linear mean (± SE) | Linear median | Jumping mean (± SE) | Jumping median | Δ | Linear − jumping (pp) | Baseline − jumping (pp) | Unjudged answers (baseline / linear / jumping) |
            |---|---|---|---|---|---|---|---|---|---|
            | synthetic/model-1 | 62.50 (± 18.30) | 32.39 (± 6.09) | 33.48 | 10.07 (± 2.19) | 10.56 | 68.9 | 22.3 | 52.4 | 0 / 0 / 0 |
            | synthetic/model-2 | 62.50 (± 18.30) | 47.42 (± 6.18) | 50.00 | 18.95 (± 4.96) | 12.52 | 60.0 | 28.5 | 43.6 | 0 / 0 / 0 |
            | synthetic/model-3 | 100.00 (± 0.00) | 56.20 (± 6.36) | 64.75 | 20.90 (± 2.66) | 17.91 | 62.8 | 35.3 | 79.1 | 0 / 0 / 0 |
            | gpt-oss-20b (published) | 73.26 (± 0.15) | 17.75 (± 0.29) | 0.00 | 4.94 (± 0.14) | 0.47 | 72.2 | 12.8 | 68.3 | – |
            | gpt-oss-120b (published) | 84.83 (± 0.12) | 55.14 (± 0.36) | 76.34 | 13.90 (± 0.24) | 2.94 | 74.8 | 41.2 | 70.9 | – |
            | Qwen3-4B-Thinking-2507 (published) | 67.07 (± 0.16) | 34.35 (± 0.28) | 24.23 | 8.29 (± 0.17) | 2.23 | 75.9 | 26.1 | 58.8 | – |
            | Qwen3-4B-Instruct-2507 (published) | 55.71 (± 0.17) | 27.21 (± 0.26) | 14.11 | 1.76 (± 0.03) | 0.66 | 93.5 | 25.4 | 54.0 | – |
            | Qwen3-30B-A3B-Thinking-2507 (published) | 80.48 (± 0.14) | 51.91 (± 0.34) | 68.57 | 9.25 (± 0.18) | 2.59 | 82.2 | 42.7 | 71.2 | – |
            | Qwen3-30B-A3B-Instruct-2507 (published) | 75.30 (± 0.15) | 40.00 (± 0.31) | 31.15 | 2.43 (± 0.04) | 1.02 | 93.9 | 37.6 | 72.9 | – |
        "#]],
    );
}

#[test]
fn rift_wrong_question() {
    // The synthetic judge flags only incorrect answers; `rift::flagged_answers_judged_correct_are_counted_apart`
    // checks the "Flagged, judged correct" column with a lenient judge.
    let s = rift_summary(true);
    check(
        |d| rift::write_tables(&s, d),
        "rift_wrong_question",
        expect![[r#"
            Share of incorrect answers that are the answer to a different question of the same prompt (the RIFT paper's Fig. 4). An answer is flagged whatever its verdict; "Flagged, judged correct" counts the flagged answers the judge called correct, outside the share (a lenient judge, or an answer right for both questions). Unjudged answers are not incorrect and stay out of the share.

            | Model | Structure | Incorrect | Wrong question | Share (%) | Flagged, judged correct | Unjudged |
            |---|---|---|---|---|---|---|
            | synthetic/model-1 | baseline | 3 | 0 | 0.0 | 0 | 0 |
            | synthetic/model-1 | jumping | 122 | 46 | 37.7 | 0 | 0 |
            | synthetic/model-1 | linear | 144 | 67 | 46.5 | 0 | 0 |
            | synthetic/model-2 | baseline | 3 | 0 | 0.0 | 0 | 0 |
            | synthetic/model-2 | jumping | 132 | 51 | 38.6 | 0 | 0 |
            | synthetic/model-2 | linear | 109 | 32 | 29.4 | 0 | 0 |
            | synthetic/model-3 | baseline | 0 | 0 | – | 0 | 0 |
            | synthetic/model-3 | jumping | 148 | 61 | 41.2 | 0 | 0 |
            | synthetic/model-3 | linear | 79 | 35 | 44.3 | 0 | 0 |
        "#]],
    );
}

#[test]
fn rift_reasoning_vs_instruct() {
    // model-2 counts as the reasoning model here.
    let cfg = RiftConfig {
        reasoning: ReasoningRule {
            explicit: Some(vec!["synthetic/model-2".to_owned()]),
        },
        ..RiftConfig::default()
    };
    let s = rift_summary_with(true, &cfg);
    check(
        |d| rift::write_tables(&s, d),
        "rift_reasoning_vs_instruct",
        expect![[r#"
            Reasoning vs non-reasoning models: per structure, the mean accuracy (%) of every reasoning model beside every non-reasoning model (all pairs, not only same-family twins: the paper's comparisons also cross sizes, e.g. Qwen3-4B-Thinking vs Qwen3-30B-Instruct). Gap = reasoning − non-reasoning in percentage points. Where a model has unjudged answers its mean shows bounds (unjudged counted wrong … unjudged counted right), and so does the gap.

            | Structure | Reasoning model | Reasoning mean (%) | Non-reasoning model | Non-reasoning mean (%) | Gap (pp) |
            |---|---|---|---|---|---|
            | baseline | synthetic/model-2 | 62.50 | synthetic/model-1 | 62.50 | +0.0 |
            | baseline | synthetic/model-2 | 62.50 | synthetic/model-3 | 100.00 | -37.5 |
            | linear | synthetic/model-2 | 47.42 | synthetic/model-1 | 32.39 | +15.0 |
            | linear | synthetic/model-2 | 47.42 | synthetic/model-3 | 56.20 | -8.8 |
            | jumping | synthetic/model-2 | 18.95 | synthetic/model-1 | 10.07 | +8.9 |
            | jumping | synthetic/model-2 | 18.95 | synthetic/model-3 | 20.90 | -2.0 |
        "#]],
    );
}

#[test]
fn rift_reply_outcomes() {
    let s = rift_summary(true);
    check(
        |d| rift::write_tables(&s, d),
        "rift_reply_outcomes",
        expect![[r#"
            Replies per model and structure: empty, truncated (hit max tokens), malformed (no answer readable), failed requests, stopped early, ran long.

            | Model | Structure | Prompts | Empty | Truncated | Malformed | Failed | Stopped early | Ran long |
            |---|---|---|---|---|---|---|---|---|
            | synthetic/model-1 | baseline | 8 | 0 | 0 | 0 | 0 | 0 | 0 |
            | synthetic/model-1 | jumping | 12 | 0 | 0 | 0 | 0 | 6 | 0 |
            | synthetic/model-1 | linear | 12 | 0 | 0 | 0 | 0 | 0 | 0 |
            | synthetic/model-2 | baseline | 8 | 0 | 0 | 0 | 0 | 0 | 0 |
            | synthetic/model-2 | jumping | 12 | 0 | 0 | 0 | 0 | 4 | 0 |
            | synthetic/model-2 | linear | 12 | 0 | 0 | 0 | 0 | 0 | 0 |
            | synthetic/model-3 | baseline | 8 | 0 | 0 | 0 | 0 | 0 | 0 |
            | synthetic/model-3 | jumping | 12 | 0 | 0 | 0 | 0 | 2 | 0 |
            | synthetic/model-3 | linear | 12 | 0 | 0 | 0 | 0 | 0 | 0 |
        "#]],
    );
}

#[test]
fn rift_reply_outcomes_without_a_prompt_table() {
    let s = rift_summary(false);
    check(
        |d| rift::write_tables(&s, d),
        "rift_reply_outcomes",
        expect![[r#"
            Replies per model and structure: empty, truncated (hit max tokens), malformed (no answer readable), failed requests, stopped early, ran long.

            | Model | Structure | Prompts | Empty | Truncated | Malformed | Failed | Stopped early | Ran long |
            |---|---|---|---|---|---|---|---|---|
        "#]],
    );
}

#[test]
fn markdown_escapes_pipes_and_omits_an_empty_caption() {
    let md = tables::markdown(
        "",
        &["model", "a|b"],
        &[
            vec!["x|y".to_owned(), tables::fmt_opt(Some(1.25), 1)],
            vec!["z".to_owned(), tables::fmt_opt(Some(f64::NAN), 1)],
            vec!["w".to_owned(), tables::fmt_opt(None, 1)],
        ],
    );
    expect![[r#"
        | model | a\|b |
        |---|---|
        | x\|y | 1.2 |
        | z | – |
        | w | – |
    "#]]
    .assert_eq(&md);
}
