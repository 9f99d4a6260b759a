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
            Share of incorrect answers that are the answer to a different question of the same prompt (the RIFT paper's Fig. 4), per structure and pooled: the "pooled (linear + jumping)" row is the paper's one share per model, (flagged incorrect answers) ÷ (incorrect answers) over linear and jumping prompts; baseline prompts are left out of the pool, since a one-question prompt has no other question to answer and its incorrect answers would only dilute the share. Unlike the paper's LLM flag, ifstress flags an answer by the pre-judge's normalized matching (it equals another question's expected answer and not its own), whatever the verdict; the share counts the flagged answers judged incorrect; "Flagged, judged correct" counts the flagged answers the judge called correct, outside the share (a lenient judge, or an answer right for both questions). Unjudged answers are not incorrect and stay out of the share. The share's standard error is clustered by prompt (the incorrect answers of one prompt are not independent); the design effect is its variance over the variance if they were.

            | Model | Structure | Incorrect | Wrong question | Share (%) | SE clustered by prompt (pp) | Design effect | Flagged, judged correct | Unjudged |
            |---|---|---|---|---|---|---|---|---|
            | synthetic/model-1 | baseline | 3 | 0 | 0.0 | 0.0 | – | 0 | 0 |
            | synthetic/model-1 | jumping | 122 | 46 | 37.7 | 5.4 | 1.50 | 0 | 0 |
            | synthetic/model-1 | linear | 144 | 67 | 46.5 | 9.9 | 5.59 | 0 | 0 |
            | synthetic/model-1 | pooled (linear + jumping) | 266 | 113 | 42.5 | 6.0 | 3.95 | 0 | 0 |
            | synthetic/model-2 | baseline | 3 | 0 | 0.0 | 0.0 | – | 0 | 0 |
            | synthetic/model-2 | jumping | 132 | 51 | 38.6 | 3.2 | 0.58 | 0 | 0 |
            | synthetic/model-2 | linear | 109 | 32 | 29.4 | 6.7 | 2.33 | 0 | 0 |
            | synthetic/model-2 | pooled (linear + jumping) | 241 | 83 | 34.4 | 3.5 | 1.28 | 0 | 0 |
            | synthetic/model-3 | baseline | 0 | 0 | – | – | – | 0 | 0 |
            | synthetic/model-3 | jumping | 148 | 61 | 41.2 | 3.0 | 0.56 | 0 | 0 |
            | synthetic/model-3 | linear | 79 | 35 | 44.3 | 6.8 | 1.48 | 0 | 0 |
            | synthetic/model-3 | pooled (linear + jumping) | 227 | 96 | 42.3 | 3.0 | 0.86 | 0 | 0 |
        "#]],
    );
}

#[test]
fn rift_value_tables() {
    // The synthetic values are drawn from one mix for every structure and do not change how questions are answered.
    let s = rift_summary(true);
    check(
        |d| rift::write_tables(&s, d),
        "rift_value_mix_test",
        expect![[r#"
            Same mix of values in linear and jumping prompts? Pearson's chi-square test of homogeneity of the two structures' questions over the value bands either uses ("no value" included), per model; a small p-value says the mixes differ, so a linear − jumping gap may partly be a difficulty gap. Questions of one prompt are consecutive clues of one game, not independent draws, so the test is a screen, not an exact p-value; with the paper's design (a jumping prompt reorders a linear prompt's questions) the mixes are equal and χ² is 0.

            | Model | Linear questions | Jumping questions | χ² | df | p-value |
            |---|---|---|---|---|---|
            | synthetic/model-1 | 201 | 195 | 2.11 | 5 | 0.8338 |
            | synthetic/model-2 | 209 | 232 | 1.52 | 5 | 0.9108 |
            | synthetic/model-3 | 191 | 198 | 2.90 | 5 | 0.7161 |
        "#]],
    );
    check(
        |d| rift::write_tables(&s, d),
        "rift_value_mix",
        expect![[r#"
            Value mix: questions per value band and structure, with their share (%) of the structure's questions, per model (every expected answer is one question asked; a repeated sample asks again). Linear and jumping prompts should hold the same mix (the paper keeps content fixed across structures); the chi-square test beside it checks that. Bands of the normalised clue value (values aired before 2001-11-26 doubled, so every clue is on today's $200–$2000 board), five fixed bands over the paper's $200–$2000 range: up to $400 ($200, $400), $401–$800 ($600, $800), $801–$1,200 ($1,000, $1,200), $1,201–$1,600 ($1,600), over $1,600 ($2,000); value bands rather than board rows because an answer carries its value but not its round, and fixed rather than quantile bands so that runs are cut alike. Daily Double wagers fall where their amount does; "no value" holds the questions without one (Final Jeopardy!, or a dataset without values).

            | Model | Value band | Baseline questions (%) | Linear questions (%) | Jumping questions (%) |
            |---|---|---|---|---|
            | synthetic/model-1 | up to $400 | 1 (12.5) | 56 (27.9) | 58 (29.7) |
            | synthetic/model-1 | $401–$800 | 4 (50.0) | 49 (24.4) | 56 (28.7) |
            | synthetic/model-1 | $801–$1,200 | 2 (25.0) | 39 (19.4) | 35 (17.9) |
            | synthetic/model-1 | $1,201–$1,600 | 0 (0.0) | 21 (10.4) | 15 (7.7) |
            | synthetic/model-1 | over $1,600 | 0 (0.0) | 23 (11.4) | 21 (10.8) |
            | synthetic/model-1 | no value | 1 (12.5) | 13 (6.5) | 10 (5.1) |
            | synthetic/model-2 | up to $400 | 1 (12.5) | 50 (23.9) | 63 (27.2) |
            | synthetic/model-2 | $401–$800 | 4 (50.0) | 61 (29.2) | 70 (30.2) |
            | synthetic/model-2 | $801–$1,200 | 2 (25.0) | 43 (20.6) | 47 (20.3) |
            | synthetic/model-2 | $1,201–$1,600 | 0 (0.0) | 22 (10.5) | 18 (7.8) |
            | synthetic/model-2 | over $1,600 | 0 (0.0) | 21 (10.0) | 22 (9.5) |
            | synthetic/model-2 | no value | 1 (12.5) | 12 (5.7) | 12 (5.2) |
            | synthetic/model-3 | up to $400 | 1 (12.5) | 49 (25.7) | 59 (29.8) |
            | synthetic/model-3 | $401–$800 | 4 (50.0) | 59 (30.9) | 54 (27.3) |
            | synthetic/model-3 | $801–$1,200 | 2 (25.0) | 36 (18.8) | 44 (22.2) |
            | synthetic/model-3 | $1,201–$1,600 | 0 (0.0) | 16 (8.4) | 11 (5.6) |
            | synthetic/model-3 | over $1,600 | 0 (0.0) | 21 (11.0) | 19 (9.6) |
            | synthetic/model-3 | no value | 1 (12.5) | 10 (5.2) | 11 (5.6) |
        "#]],
    );
    check(
        |d| rift::write_tables(&s, d),
        "rift_accuracy_by_value",
        expect![[r#"
            Accuracy (%) by clue value band, per model and structure: correct ÷ the band's answers, pooled over prompts (missing answers count as wrong), so a band's accuracy is answer-level, not Table 2's mean over prompts. Unjudged answers are neither correct nor incorrect; where there are any, the accuracy is shown as bounds (unjudged counted wrong … unjudged counted right). Wilson 95 % interval of the judged accuracy; it treats answers as independent, which answers of one prompt are not, so it is too narrow. Bands of the normalised clue value (values aired before 2001-11-26 doubled, so every clue is on today's $200–$2000 board), five fixed bands over the paper's $200–$2000 range: up to $400 ($200, $400), $401–$800 ($600, $800), $801–$1,200 ($1,000, $1,200), $1,201–$1,600 ($1,600), over $1,600 ($2,000); value bands rather than board rows because an answer carries its value but not its round, and fixed rather than quantile bands so that runs are cut alike. Daily Double wagers fall where their amount does; "no value" holds the questions without one (Final Jeopardy!, or a dataset without values).

            | Model | Structure | Value band | Answers | Correct | Unjudged | Accuracy (%) | Wilson 95 % (judged) |
            |---|---|---|---|---|---|---|---|
            | synthetic/model-1 | baseline | up to $400 | 1 | 0 | 0 | 0.0 | 0.0 … 79.3 |
            | synthetic/model-1 | baseline | $401–$800 | 4 | 3 | 0 | 75.0 | 30.1 … 95.4 |
            | synthetic/model-1 | baseline | $801–$1,200 | 2 | 2 | 0 | 100.0 | 34.2 … 100.0 |
            | synthetic/model-1 | baseline | no value | 1 | 0 | 0 | 0.0 | 0.0 … 79.3 |
            | synthetic/model-1 | linear | up to $400 | 56 | 19 | 0 | 33.9 | 22.9 … 47.0 |
            | synthetic/model-1 | linear | $401–$800 | 49 | 12 | 0 | 24.5 | 14.6 … 38.1 |
            | synthetic/model-1 | linear | $801–$1,200 | 39 | 11 | 0 | 28.2 | 16.5 … 43.8 |
            | synthetic/model-1 | linear | $1,201–$1,600 | 21 | 5 | 0 | 23.8 | 10.6 … 45.1 |
            | synthetic/model-1 | linear | over $1,600 | 23 | 6 | 0 | 26.1 | 12.5 … 46.5 |
            | synthetic/model-1 | linear | no value | 13 | 4 | 0 | 30.8 | 12.7 … 57.6 |
            | synthetic/model-1 | jumping | up to $400 | 58 | 6 | 0 | 10.3 | 4.8 … 20.8 |
            | synthetic/model-1 | jumping | $401–$800 | 56 | 4 | 0 | 7.1 | 2.8 … 17.0 |
            | synthetic/model-1 | jumping | $801–$1,200 | 35 | 6 | 0 | 17.1 | 8.1 … 32.7 |
            | synthetic/model-1 | jumping | $1,201–$1,600 | 15 | 2 | 0 | 13.3 | 3.7 … 37.9 |
            | synthetic/model-1 | jumping | over $1,600 | 21 | 2 | 0 | 9.5 | 2.7 … 28.9 |
            | synthetic/model-1 | jumping | no value | 10 | 0 | 0 | 0.0 | 0.0 … 27.8 |
            | synthetic/model-2 | baseline | up to $400 | 1 | 1 | 0 | 100.0 | 20.7 … 100.0 |
            | synthetic/model-2 | baseline | $401–$800 | 4 | 2 | 0 | 50.0 | 15.0 … 85.0 |
            | synthetic/model-2 | baseline | $801–$1,200 | 2 | 2 | 0 | 100.0 | 34.2 … 100.0 |
            | synthetic/model-2 | baseline | no value | 1 | 0 | 0 | 0.0 | 0.0 … 79.3 |
            | synthetic/model-2 | linear | up to $400 | 50 | 20 | 0 | 40.0 | 27.6 … 53.8 |
            | synthetic/model-2 | linear | $401–$800 | 61 | 28 | 0 | 45.9 | 34.0 … 58.3 |
            | synthetic/model-2 | linear | $801–$1,200 | 43 | 28 | 0 | 65.1 | 50.2 … 77.6 |
            | synthetic/model-2 | linear | $1,201–$1,600 | 22 | 11 | 0 | 50.0 | 30.7 … 69.3 |
            | synthetic/model-2 | linear | over $1,600 | 21 | 12 | 0 | 57.1 | 36.5 … 75.5 |
            | synthetic/model-2 | linear | no value | 12 | 1 | 0 | 8.3 | 1.5 … 35.4 |
            | synthetic/model-2 | jumping | up to $400 | 63 | 10 | 0 | 15.9 | 8.9 … 26.8 |
            | synthetic/model-2 | jumping | $401–$800 | 70 | 9 | 0 | 12.9 | 6.9 … 22.7 |
            | synthetic/model-2 | jumping | $801–$1,200 | 47 | 7 | 0 | 14.9 | 7.4 … 27.7 |
            | synthetic/model-2 | jumping | $1,201–$1,600 | 18 | 3 | 0 | 16.7 | 5.8 … 39.2 |
            | synthetic/model-2 | jumping | over $1,600 | 22 | 6 | 0 | 27.3 | 13.2 … 48.2 |
            | synthetic/model-2 | jumping | no value | 12 | 2 | 0 | 16.7 | 4.7 … 44.8 |
            | synthetic/model-3 | baseline | up to $400 | 1 | 1 | 0 | 100.0 | 20.7 … 100.0 |
            | synthetic/model-3 | baseline | $401–$800 | 4 | 4 | 0 | 100.0 | 51.0 … 100.0 |
            | synthetic/model-3 | baseline | $801–$1,200 | 2 | 2 | 0 | 100.0 | 34.2 … 100.0 |
            | synthetic/model-3 | baseline | no value | 1 | 1 | 0 | 100.0 | 20.7 … 100.0 |
            | synthetic/model-3 | linear | up to $400 | 49 | 29 | 0 | 59.2 | 45.2 … 71.8 |
            | synthetic/model-3 | linear | $401–$800 | 59 | 35 | 0 | 59.3 | 46.6 … 70.9 |
            | synthetic/model-3 | linear | $801–$1,200 | 36 | 19 | 0 | 52.8 | 37.0 … 68.0 |
            | synthetic/model-3 | linear | $1,201–$1,600 | 16 | 8 | 0 | 50.0 | 28.0 … 72.0 |
            | synthetic/model-3 | linear | over $1,600 | 21 | 15 | 0 | 71.4 | 50.0 … 86.2 |
            | synthetic/model-3 | linear | no value | 10 | 6 | 0 | 60.0 | 31.3 … 83.2 |
            | synthetic/model-3 | jumping | up to $400 | 59 | 13 | 0 | 22.0 | 13.4 … 34.1 |
            | synthetic/model-3 | jumping | $401–$800 | 54 | 9 | 0 | 16.7 | 9.0 … 28.7 |
            | synthetic/model-3 | jumping | $801–$1,200 | 44 | 10 | 0 | 22.7 | 12.8 … 37.0 |
            | synthetic/model-3 | jumping | $1,201–$1,600 | 11 | 1 | 0 | 9.1 | 1.6 … 37.7 |
            | synthetic/model-3 | jumping | over $1,600 | 19 | 5 | 0 | 26.3 | 11.8 … 48.8 |
            | synthetic/model-3 | jumping | no value | 11 | 2 | 0 | 18.2 | 5.1 … 47.7 |
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
