//! `analysis::all::analyse` then `plots::all::draw` (in that order, as `cargo xtask plots` runs them) on the
//! published per-sample data, the analysis crate's label and attempt fixtures, and synthetic RIFT runs.

use std::path::Path;

use analysis::all::{Analysed, Inputs};
use analysis::models::ReasoningRule;

/// The tables, then the figures.
fn draw_all(inputs: &Inputs) -> Result<Analysed, plots::Error> {
    let analysed = analysis::all::analyse(inputs)?;
    let figures = plots::all::draw(&analysed, &inputs.rule, &inputs.out)?;
    assert!(figures > 0);
    Ok(analysed)
}

#[test]
fn published_data_and_fixtures_draw_every_ifscale_output() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = std::env::temp_dir().join(format!("ifstress-plots-{}", std::process::id()));
    let fixture = |name: &str| root.join("crates/analysis/test_data").join(name);
    let inputs = Inputs {
        run_dir: None,
        ifscale_per_sample: Some(root.join("datasets/ifscale-reference/per_sample.csv")),
        ifscale_reference_dir: None,
        ifscale_labels: vec![fixture("ifscale_labels.jsonl")],
        ifscale_attempts: vec![fixture("ifscale_attempts.jsonl")],
        coherence_threshold: 6,
        rift_dir: None,
        rift_synthetic: false,
        out: out.clone(),
        rule: ReasoningRule { explicit: None },
        bootstrap_resamples: 50,
        seed: 0,
    };
    let drawn = draw_all(&inputs).unwrap();
    assert!(drawn.ifscale.is_some() && drawn.leaderboard.is_some() && drawn.reference.is_some());
    for table in [
        "ifscale_decay_fits",
        "ifscale_results",
        "ifscale_results_full",
        "ifscale_effort_pairs",
        "ifscale_primacy_thirds",
        "ifscale_coherence_attempts",
    ] {
        let md = out.join(format!("tables/ifscale/{table}.md"));
        assert!(md.exists(), "{}", md.display());
    }
    for figure in [
        "ifscale_decay_archetypes",
        "ifscale_effort_lower_vs_high",
        "ifscale_primacy_thirds",
        "ifscale_coherence_all_attempts_vs_n",
        "ifscale_coherence_vs_output_tokens",
    ] {
        let png = out.join(format!("figures/ifscale/{figure}.png"));
        assert!(png.exists(), "{}", png.display());
    }
    // The published per-sample data carry no token counts: no reasoning-token figure is drawn from them.
    assert!(
        !out.join("figures/ifscale/ifscale_reasoning_tokens_vs_n.png")
            .exists()
    );
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn the_reasoning_rule_reaches_the_rift_tables() {
    let out = tempfile::tempdir().unwrap();
    let inputs = Inputs {
        run_dir: None,
        ifscale_per_sample: None,
        ifscale_reference_dir: None,
        ifscale_labels: vec![],
        ifscale_attempts: vec![],
        coherence_threshold: 6,
        rift_dir: None,
        rift_synthetic: true,
        out: out.path().to_owned(),
        rule: ReasoningRule {
            explicit: Some(vec!["synthetic/model-1".to_owned()]),
        },
        bootstrap_resamples: 50,
        seed: 0,
    };
    draw_all(&inputs).unwrap();
    let md = std::fs::read_to_string(out.path().join("tables/rift/rift_reasoning_vs_instruct.md"))
        .unwrap();
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| linear |")).collect();
    assert!(!rows.is_empty(), "{md}");
    assert!(
        rows.iter()
            .all(|r| r.starts_with("| linear | synthetic/model-1 |")),
        "{md}"
    );
    assert!(
        out.path()
            .join("tables/rift/rift_reasoning_vs_instruct.parquet")
            .exists()
    );
}

/// A run folder's figure beside the published curves: its models are labelled when the run's prompts carry the
/// project list's hash, and not when they carry the paper list's (told by content hash, never by path).
#[test]
fn the_figure_over_published_data_names_a_vocabulary_that_is_not_the_papers() {
    use analysis::ifscale::vocabulary::{paper_sha256, project_sha256};
    let legend_of = |hash: &str| -> String {
        let dir = tempfile::tempdir().unwrap();
        let paths = schema::paths::RunPaths::new(dir.path());
        let mut scores = Vec::new();
        let mut prompts = String::new();
        for n in [10u32, 20] {
            for seed in 0..2u64 {
                let id = format!("ifscale-n{n:03}-s{seed}");
                prompts.push_str(&format!(
                    "{{\"id\":\"{id}\",\"messages\":[{{\"role\":\"user\",\"content\":\"q\"}}],\"benchmark\":\"ifscale\",\"vocab_sha256\":\"{hash}\"}}\n"
                ));
                scores.push(schema::ifscale::SampleScore {
                    id,
                    model: "tiny-model".to_owned(),
                    num_rules: n,
                    seed,
                    mode: schema::ifscale::MatchMode::Paper,
                    status: schema::ifscale::SampleStatus::Scored,
                    accuracy: Some(90.0 - f64::from(n) - seed as f64),
                    exact: 0,
                    modified: 0,
                    omitted: 0,
                    omission_pct: None,
                    modification_pct: None,
                    primacy_ratio: None,
                    latency_s: None,
                    output_tokens: None,
                    coherence: None,
                    attempts: 1,
                    reasoning_tokens: None,
                });
            }
        }
        schema::write_jsonl_atomic(&paths.ifscale_scores(), &scores).unwrap();
        std::fs::write(paths.ifscale_prompts(), prompts).unwrap();
        let mut inputs = Inputs::for_run(dir.path(), ReasoningRule { explicit: None });
        inputs.bootstrap_resamples = 20;
        draw_all(&inputs).unwrap();
        std::fs::read_to_string(
            dir.path()
                .join("figures/ifscale/ifscale_accuracy_vs_n_vs_published.svg"),
        )
        .unwrap()
    };
    let project = legend_of(project_sha256());
    assert!(
        project.contains("tiny-model (ifstress vocabulary)"),
        "the project list is named in the legend"
    );
    let paper = legend_of(paper_sha256());
    assert!(paper.contains("tiny-model") && !paper.contains("vocabulary"));
}
