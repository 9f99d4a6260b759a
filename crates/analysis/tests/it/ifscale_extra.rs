//! The IFScale analyses beyond the published aggregates: primacy thirds from keyword labels, coherence over all
//! attempts from the attempts logs, reasoning effort and tokens, and the full results table against the published
//! leaderboard.

use std::path::{Path, PathBuf};

use analysis::ifscale::{self, AggregateConfig, coherence, primacy, reasoning, results};
use analysis::models::Effort;
use analysis::synthetic;

fn test_data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("test_data")
        .join(name)
}

fn reference(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../datasets/ifscale-reference")
        .join(name)
}

fn cfg() -> AggregateConfig {
    AggregateConfig {
        bootstrap_resamples: 200,
        bootstrap_seed: 3,
        ci_level: 0.95,
    }
}

fn published() -> ifscale::IfscaleSummary {
    let samples = ifscale::load_reference_csv(&reference("per_sample.csv")).unwrap();
    ifscale::aggregate(&samples, &cfg()).unwrap()
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-12)
}

#[test]
fn markdown_shows_short_grids_whole_and_long_ones_at_the_headline_densities() {
    assert_eq!(results::headline_ns(&[20, 10, 20]), [10, 20]);
    let paper: Vec<i64> = (1..=50).map(|i| i * 10).collect();
    assert_eq!(results::headline_ns(&paper), results::HEADLINE_NS);
    let odd: Vec<i64> = (1..=12).map(|i| i * 7).collect();
    assert_eq!(results::headline_ns(&odd), odd);
}

#[test]
fn thirds_follow_the_primacy_ratio_buckets() {
    // N = 10: b = 3, middle 4; N = 3: b = 1, middle 1; N = 2: b = 1, no middle.
    assert_eq!(primacy::third_sizes(10), (3, 4));
    assert_eq!(primacy::third_sizes(3), (1, 1));
    assert_eq!(primacy::third_sizes(2), (1, 0));
    let where_: Vec<usize> = (0..10).map(|p| primacy::third_of(p, 10)).collect();
    assert_eq!(where_, [0, 0, 0, 1, 1, 1, 1, 2, 2, 2]);
}

/// Fixture: m/a at N = 6 has statuses EO|EE|MO and OO|EM|EO (early 3 of 4 wrong, middle 1 of 4, late 3 of 4) and at
/// N = 3 E|O|O; m/b at N = 6 is all exact.
#[test]
fn primacy_thirds_from_keyword_labels() {
    let labels = primacy::load_labels(&[test_data("ifscale_labels.jsonl")]).unwrap();
    let rows = primacy::thirds(&labels);
    assert_eq!(rows.len(), 3);
    let a6 = rows
        .iter()
        .find(|r| r.model == "m/a" && r.num_rules == 6)
        .unwrap();
    assert_eq!((a6.n_samples, a6.third_size, a6.middle_size), (2, 2, 2));
    assert!(close(a6.early_error_pct, 75.0) && close(a6.middle_error_pct, 25.0));
    assert!(close(a6.late_error_pct, 75.0) && close(a6.late_over_early, 1.0));
    let a3 = rows
        .iter()
        .find(|r| r.model == "m/a" && r.num_rules == 3)
        .unwrap();
    assert!(close(a3.early_error_pct, 0.0) && close(a3.late_error_pct, 100.0));
    // No early error: the ratio is undefined, not infinite.
    assert_eq!(a3.late_over_early, None);
    let b6 = rows.iter().find(|r| r.model == "m/b").unwrap();
    assert!(close(b6.late_error_pct, 0.0) && b6.late_over_early.is_none());
    let dir = tempfile::tempdir().unwrap();
    let written = primacy::write_tables(&rows, dir.path()).unwrap();
    // Parquet, CSV, Markdown and the table as data beside it.
    assert_eq!(written.len(), 4);
    let tables = analysis::tables::read_tables(dir.path()).unwrap();
    assert_eq!(tables.len(), 1);
    assert_eq!(tables[0].0, "ifscale_primacy_thirds");
    assert_eq!(
        tables[0].1.to_markdown(),
        std::fs::read_to_string(dir.path().join("ifscale_primacy_thirds.md")).unwrap()
    );
    let csv = std::fs::read_to_string(dir.path().join("ifscale_primacy_thirds.csv")).unwrap();
    assert_eq!(csv.lines().count(), 4);
}

/// Fixture: m/a at N = 10 has judged scores 4 (rejected), 8, 7 and a truncated attempt; at N = 20 scores 5, 3
/// (both rejected, the sample fails) and 6, a too-short and a failed request; m/b one accepted 9.
#[test]
fn coherence_over_all_attempts() {
    let attempts = coherence::load_attempts(&[test_data("ifscale_attempts.jsonl")]).unwrap();
    let cfg = coherence::CoherenceConfig {
        threshold: coherence::PAPER_THRESHOLD,
    };
    let rows = coherence::aggregate(&attempts, &cfg).unwrap();
    assert_eq!(rows.len(), 3);
    let (a10, a20, b10) = (&rows[0], &rows[1], &rows[2]);
    assert_eq!(
        (
            a10.num_rules,
            a10.attempts,
            a10.judged,
            a10.samples,
            a10.accepted_samples
        ),
        (10, 4, 3, 2, 2)
    );
    assert!(close(a10.mean_all, 19.0 / 3.0) && close(a10.below_threshold_pct, 100.0 / 3.0));
    assert!(close(a10.attempts_per_accepted, 2.0) && close(a10.mean_output_tokens, 600.0));
    assert!(close(a10.mean_accepted_only, 7.5));
    assert_eq!(
        (a20.attempts, a20.judged, a20.samples, a20.accepted_samples),
        (5, 3, 2, 1)
    );
    assert!(close(a20.mean_all, 14.0 / 3.0) && close(a20.below_threshold_pct, 200.0 / 3.0));
    // A score of exactly 6 is not below the threshold.
    assert!(close(a20.attempts_per_accepted, 5.0) && close(a20.mean_accepted_only, 6.0));
    assert!(close(b10.mean_all, 9.0) && close(b10.below_threshold_pct, 0.0));
    assert_eq!(b10.mean_output_tokens, None);
    // The accepted-only view is higher wherever rejected attempts were incoherent.
    assert!(a10.mean_accepted_only > a10.mean_all && a20.mean_accepted_only > a20.mean_all);
    let dir = tempfile::tempdir().unwrap();
    coherence::write_tables(&rows, &cfg, dir.path()).unwrap();
    let md = std::fs::read_to_string(dir.path().join("ifscale_coherence_attempts.md")).unwrap();
    assert!(
        md.contains("coherence (accepted only)") && md.contains("% below 6"),
        "{md}"
    );
}

#[test]
fn attempt_ids_must_carry_n() {
    assert_eq!(
        coherence::parse_prompt_id("ifscale-n250-s3"),
        Some((250, 3))
    );
    assert_eq!(coherence::parse_prompt_id("rift-x"), None);
    let mut attempts = coherence::load_attempts(&[test_data("ifscale_attempts.jsonl")]).unwrap();
    attempts[0].id = "bad".to_owned();
    let err = coherence::aggregate(&attempts, &coherence::CoherenceConfig { threshold: 6 })
        .unwrap_err()
        .to_string();
    assert!(err.contains("`bad`"), "{err}");
}

/// The published data hold four bases at two efforts; each row's gain is the difference of the two configurations'
/// aggregate rows.
#[test]
fn effort_pairs_in_the_published_data() {
    let s = published();
    let pairs = reasoning::effort_pairs(&s.models);
    let bases: Vec<&str> = pairs.iter().map(|p| p.base.as_str()).collect();
    assert_eq!(
        bases,
        [
            "anthropic/claude-opus-4",
            "anthropic/claude-sonnet-4",
            "google/gemini-2.5-pro-preview",
            "openai/o3"
        ]
    );
    assert!(pairs.iter().all(|p| p.lower_effort == Effort::Default));
    let rows = reasoning::effort_rows(&s);
    assert_eq!(rows.len(), 4 * 50);
    let o3_500 = rows
        .iter()
        .find(|r| r.base == "openai/o3" && r.num_rules == 500)
        .unwrap();
    let acc = |m: &str| {
        s.model_rows(m)
            .find(|r| r.num_rules == 500)
            .unwrap()
            .accuracy
            .unwrap()
    };
    assert!(close(
        o3_500.accuracy_gain,
        acc("openai/o3-high-reasoning") - acc("openai/o3")
    ));
    // The published per-sample data carry no token counts.
    assert!(
        rows.iter()
            .all(|r| r.reasoning_tokens_high.is_none() && r.output_tokens_high.is_none())
    );
    assert!(reasoning::reasoning_models(&s).is_empty());
}

#[test]
fn reasoning_tokens_are_kept_apart_from_output_tokens() {
    let frame = ifscale::samples_frame(&synthetic::ifscale_records()).unwrap();
    let s = ifscale::aggregate(&frame, &cfg()).unwrap();
    assert_eq!(reasoning::reasoning_models(&s), ["synthetic/threshold"]);
    let r = s
        .model_rows("synthetic/threshold")
        .find(|r| r.num_rules == 100)
        .unwrap();
    // Synthetic: reasoning 300 + 9·N, visible output 200 + 4·N.
    assert!(close(r.reasoning_tokens, 1200.0) && close(r.output_tokens, 600.0));
    let dir = tempfile::tempdir().unwrap();
    let written = reasoning::write_tables(&s, dir.path()).unwrap();
    assert!(written.contains(&dir.path().join("ifscale_reasoning_tokens.md")));
}

/// The full results table against the published leaderboard (accuracy and std at N = 10, 50, 100, 250, 500, rounded
/// to 0.1 there): every row matches to the rounding.
#[test]
fn results_table_matches_the_published_leaderboard() {
    let s = published();
    let rows = results::load_published_results(&reference("published_results_table.csv")).unwrap();
    assert_eq!(rows.len(), 23);
    let cmp = results::compare_published(&s, &rows);
    assert!(cmp.unmatched.is_empty(), "{:?}", cmp.unmatched);
    assert_eq!(cmp.rows.len(), 23);
    let flagged: Vec<(&str, &str)> = cmp
        .rows
        .iter()
        .filter(|r| r.matched_by_values)
        .map(|r| (r.published.as_str(), r.model.as_str()))
        .collect();
    assert_eq!(
        flagged,
        [(
            "gemini-2.5-pro-preview",
            "google/gemini-2.5-pro-preview-high-reasoning"
        )]
    );
    // The plain configuration's numbers are 2.2 points off at N = 500: the published row is the high-effort run.
    let gemini = cmp.rows.iter().find(|r| r.matched_by_values).unwrap();
    assert!(gemini.name_rule_diff.unwrap() > 2.0, "{gemini:?}");
    let max = cmp.max_abs_diff();
    assert!(
        max <= results::ROUNDING + 1e-9,
        "largest difference {max}: {cmp:#?}"
    );
    let dir = tempfile::tempdir().unwrap();
    results::write_tables(&s, dir.path()).unwrap();
    let csv = std::fs::read_to_string(dir.path().join("ifscale_results_full.csv")).unwrap();
    // 24 configurations × 5 densities.
    assert_eq!(csv.lines().count(), 1 + 24 * 5);
    let md = std::fs::read_to_string(dir.path().join("ifscale_results_full.md")).unwrap();
    assert!(md.contains("95% t-interval") && md.contains("95% bootstrap"));
}
