//! IFScale aggregation: the published aggregates reproduced, failed samples, record errors that name file, line and field, and byte-identical tables.

use std::path::{Path, PathBuf};

use analysis::ifscale::{self, AggregateConfig};

fn cfg() -> AggregateConfig {
    AggregateConfig {
        bootstrap_resamples: 500,
        bootstrap_seed: 3,
        ci_level: 0.95,
    }
}

fn test_data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("test_data")
        .join(name)
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-12)
}

/// The published per-sample results and aggregate tables are committed in `datasets/ifscale-reference/`.
#[test]
fn reproduces_the_published_aggregates() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets/ifscale-reference");
    let per_sample = dir.join("per_sample.csv");
    let samples = ifscale::load_reference_csv(&per_sample).unwrap();
    assert_eq!(samples.height(), 5993);
    let summary = ifscale::aggregate(&samples, &cfg()).unwrap();
    assert_eq!(summary.models.len(), 24);
    let checks = ifscale::check_against_reference(&summary, &dir).unwrap();
    assert_eq!(checks.len(), 6);
    for c in &checks {
        assert_eq!(c.rows_compared, 1200, "{}", c.table);
        assert!(c.mismatches.is_empty(), "{}: {:?}", c.table, c.mismatches);
        assert!(
            c.max_abs_diff <= 1e-9,
            "{}: max diff {}",
            c.table,
            c.max_abs_diff
        );
    }
    assert_eq!(summary.fits.len(), 24);
}

#[test]
fn aggregates_records_with_failed_samples() {
    let samples = ifscale::load_scores(&[test_data("ifscale_scores.jsonl")]).unwrap();
    let s = ifscale::aggregate(&samples, &cfg()).unwrap();
    assert_eq!(s.rows.len(), 2);
    let r10 = &s.rows[0];
    assert_eq!((r10.num_rules, r10.n_samples, r10.n_failed), (10, 3, 1));
    // The failed sample is excluded from every mean: accuracy (90 + 80) / 2, std of {90, 80} = √50.
    assert!(close(r10.accuracy, 85.0));
    assert!(close(r10.accuracy_std, 50f64.sqrt()));
    assert!(close(r10.omission_pct, 25.0) && close(r10.modification_pct, 75.0));
    assert!(close(r10.om_ratio, 25.0 / 75.0));
    // Primacy ratio skips the undefined value.
    assert!(close(r10.primacy_ratio, 2.0));
    assert!(close(r10.latency, 3.0) && close(r10.acc_per_latency, 85.0 / 3.0));
    assert!(close(r10.output_tokens, 500.0) && close(r10.coherence, 7.0));
    let (lo, hi) = (r10.accuracy_ci_low.unwrap(), r10.accuracy_ci_high.unwrap());
    assert!((80.0..=85.0).contains(&lo) && (85.0..=90.0).contains(&hi));
    // N = 20: no modification errors at all, so O:M is undefined rather than infinite.
    let r20 = &s.rows[1];
    assert_eq!(r20.om_ratio, None);
    assert!(close(r20.modification_pct, 0.0));
}

#[test]
fn bad_records_name_file_line_and_field() {
    let err = ifscale::load_scores(&[test_data("bad_scores.jsonl")])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("bad_scores.jsonl:2") && err.contains("num_rules"),
        "{err}"
    );
    let err = ifscale::load_reference_csv(&test_data("missing_column.csv"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("missing_column.csv") && err.contains("modification_pct"),
        "{err}"
    );
}

#[test]
fn tables_are_byte_identical_across_runs() {
    let samples = ifscale::load_scores(&[test_data("ifscale_scores.jsonl")]).unwrap();
    let s = ifscale::aggregate(&samples, &cfg()).unwrap();
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let wa = ifscale::write_tables(&s, a.path()).unwrap();
    let s2 = ifscale::aggregate(&samples, &cfg()).unwrap();
    let wb = ifscale::write_tables(&s2, b.path()).unwrap();
    assert_eq!(wa.len(), wb.len());
    for (pa, pb) in wa.iter().zip(&wb) {
        assert_eq!(
            std::fs::read(pa).unwrap(),
            std::fs::read(pb).unwrap(),
            "{}",
            pa.display()
        );
    }
    let csv = std::fs::read_to_string(a.path().join("omod_ratio_by_rules.csv")).unwrap();
    assert_eq!(csv.lines().next(), Some("model,num_rules,ratio"));
}
