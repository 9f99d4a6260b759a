//! Integration tests of the plots crate: figures are written, deterministic, and drawn for every input kind; the HTML
//! report of a small run matches its snapshot.

mod all;
mod report;

use std::path::Path;

use analysis::ifscale::{self, AggregateConfig};
use analysis::models::ReasoningRule;
use analysis::polars::prelude::*;
use analysis::rift::{self, RiftConfig};
use analysis::synthetic::{self, SyntheticConfig};

fn ifscale_summary() -> ifscale::IfscaleSummary {
    let mut records = Vec::new();
    for (m, model) in ["p/alpha", "p/o3-high-reasoning", "q/gamma", "p/o3"]
        .iter()
        .enumerate()
    {
        for n in (10..=200).step_by(10) {
            for seed in 0..5u64 {
                let acc = (100.0 - f64::from(n) * (0.1 + 0.1 * m as f64) - seed as f64).max(3.0);
                records.push(schema::ifscale::SampleScore {
                    id: format!("{model}-{n}-{seed}"),
                    model: (*model).to_owned(),
                    num_rules: n,
                    seed,
                    mode: schema::ifscale::MatchMode::Paper,
                    status: schema::ifscale::SampleStatus::Scored,
                    accuracy: Some(acc),
                    exact: 0,
                    modified: 0,
                    omitted: 0,
                    omission_pct: Some(60.0 + seed as f64),
                    modification_pct: Some(40.0 - seed as f64),
                    primacy_ratio: (seed > 0).then_some(1.0 + seed as f64 / 10.0),
                    latency_s: Some(5.0 + f64::from(n) / 10.0),
                    output_tokens: Some(1000 + u64::from(n) * 3),
                    coherence: Some(8.0 - f64::from(n) / 100.0),
                    attempts: 1,
                    reasoning_tokens: model
                        .contains("o3")
                        .then_some(2000 * m as u64 + u64::from(n) * 20),
                });
            }
        }
    }
    let frame = ifscale::samples_frame(&records).unwrap();
    ifscale::aggregate(
        &frame,
        &AggregateConfig {
            bootstrap_resamples: 100,
            bootstrap_seed: 1,
            ci_level: 0.95,
        },
    )
    .unwrap()
}

fn rift_summary() -> rift::RiftSummary {
    let cfg = SyntheticConfig {
        seed: 5,
        models: 3,
        prompts_per_structure: 30,
        baseline_prompts: 20,
        min_questions: 10,
        max_questions: 80,
    };
    let (prompts, answers) = synthetic::generate_records(&cfg);
    let pf = rift::prompts_frame(&prompts).unwrap();
    rift::aggregate(
        rift::answers_frame(&answers).unwrap().lazy(),
        Some(&pf),
        &RiftConfig::default(),
    )
    .unwrap()
}

fn assert_same_files(a: &[std::path::PathBuf], b: &[std::path::PathBuf]) {
    assert_eq!(a.len(), b.len());
    for (pa, pb) in a.iter().zip(b) {
        assert_eq!(pa.file_name(), pb.file_name());
        assert_eq!(
            std::fs::read(pa).unwrap(),
            std::fs::read(pb).unwrap(),
            "{} differs between runs",
            pa.display()
        );
    }
}

fn is_png(path: &Path) -> bool {
    std::fs::read(path)
        .unwrap()
        .starts_with(b"\x89PNG\r\n\x1a\n")
}

#[test]
fn ifscale_figures_are_complete_and_byte_identical() {
    let s = ifscale_summary();
    let rule = ReasoningRule::default();
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let wa = plots::ifscale::draw_all(&s, &rule, None, a.path()).unwrap();
    let wb = plots::ifscale::draw_all(&s, &rule, None, b.path()).unwrap();
    assert_same_files(&wa, &wb);
    for name in [
        "ifscale_accuracy_by_model",
        "ifscale_accuracy_vs_n",
        "ifscale_decay_archetypes",
        "ifscale_primacy_ratio_vs_n",
        "ifscale_failure_modes",
        "ifscale_std_vs_n",
        "ifscale_latency_vs_n",
        "ifscale_acc_per_latency_vs_n",
        "ifscale_output_tokens_vs_n",
        "ifscale_coherence_vs_n",
        "ifscale_reasoning_tokens_vs_n",
        "ifscale_effort_lower_vs_high",
    ] {
        assert!(is_png(&a.path().join(format!("{name}.png"))), "{name}.png");
        let svg = std::fs::read_to_string(a.path().join(format!("{name}.svg"))).unwrap();
        assert!(svg.starts_with("<svg"), "{name}.svg");
    }
    // The reasoning model is labelled "(r)" in the legend.
    let svg = std::fs::read_to_string(a.path().join("ifscale_accuracy_vs_n.svg")).unwrap();
    assert!(svg.contains("o3-high (r)"));
    // p/o3 and p/o3-high-reasoning form an effort pair; with reasoning tokens the second row shows them.
    let svg = std::fs::read_to_string(a.path().join("ifscale_effort_lower_vs_high.svg")).unwrap();
    assert!(svg.contains("o3: reasoning tokens") && svg.contains("high effort"));
}

fn analysis_fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../analysis/test_data")
        .join(name)
}

/// The primacy-thirds and coherence figures from the analysis crate's label and attempt fixtures.
#[test]
fn primacy_and_coherence_figures() {
    use analysis::ifscale::{coherence, primacy};
    let rule = ReasoningRule::default();
    let labels = primacy::load_labels(&[analysis_fixture("ifscale_labels.jsonl")]).unwrap();
    let thirds = primacy::thirds(&labels);
    let attempts = coherence::load_attempts(&[analysis_fixture("ifscale_attempts.jsonl")]).unwrap();
    let rows =
        coherence::aggregate(&attempts, &coherence::CoherenceConfig { threshold: 6 }).unwrap();
    let models = ["m/a".to_owned(), "m/b".to_owned()];
    let draw = |dir: &Path| {
        let mut w = plots::ifscale::extra::draw_primacy(&thirds, &models, &rule, dir).unwrap();
        w.extend(plots::ifscale::extra::draw_coherence(&rows, 6, &models, &rule, dir).unwrap());
        w
    };
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (wa, wb) = (draw(a.path()), draw(b.path()));
    assert_same_files(&wa, &wb);
    for name in [
        "ifscale_primacy_thirds",
        "ifscale_coherence_all_attempts_vs_n",
        "ifscale_coherence_vs_output_tokens",
    ] {
        assert!(is_png(&a.path().join(format!("{name}.png"))), "{name}.png");
    }
    let svg =
        std::fs::read_to_string(a.path().join("ifscale_coherence_all_attempts_vs_n.svg")).unwrap();
    assert!(svg.contains("accepted only") && svg.contains("below 6"));
    let svg = std::fs::read_to_string(a.path().join("ifscale_primacy_thirds.svg")).unwrap();
    assert!(svg.contains("late third"));
}

#[test]
fn rift_figures_are_complete_and_byte_identical() {
    let s = rift_summary();
    let rule = ReasoningRule {
        explicit: Some(vec!["synthetic/model-2".to_owned()]),
    };
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let wa = plots::rift::draw_all(&s, &rule, a.path()).unwrap();
    let wb = plots::rift::draw_all(&s, &rule, b.path()).unwrap();
    assert_same_files(&wa, &wb);
    for name in [
        "rift_accuracy_vs_tokens",
        "rift_accuracy_vs_depth",
        "rift_wrong_question_share",
        "rift_value_mix",
    ] {
        assert!(is_png(&a.path().join(format!("{name}.png"))), "{name}.png");
    }
    let svg = std::fs::read_to_string(a.path().join("rift_wrong_question_share.svg")).unwrap();
    assert!(svg.contains("model-2 (r)"));
    // The pooled bar beside linear and jumping, and every value band with the mix test in each panel's title.
    assert!(svg.contains("pooled (linear + jumping)"));
    let svg = std::fs::read_to_string(a.path().join("rift_value_mix.svg")).unwrap();
    for label in analysis::rift::values::VALUE_BANDS {
        assert!(svg.contains(&label.replace('&', "&amp;")), "{label}");
    }
    assert!(svg.contains("linear vs jumping: chi-square"));
}

#[test]
fn model_colours_do_not_depend_on_input_order() {
    let rule = ReasoningRule::default();
    let a =
        plots::style::ModelStyles::new(&["b".to_owned(), "a".to_owned(), "c".to_owned()], &rule);
    let b =
        plots::style::ModelStyles::new(&["c".to_owned(), "b".to_owned(), "a".to_owned()], &rule);
    for m in ["a", "b", "c"] {
        assert_eq!(a.color(m), b.color(m));
    }
    assert_ne!(a.color("a"), a.color("b"));
}
