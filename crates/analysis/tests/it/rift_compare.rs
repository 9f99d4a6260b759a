//! RIFT comparisons beside Table 2 on synthetic records: the percentage-point gaps next to Δ, and reasoning vs
//! non-reasoning models, with bounds where answers are unjudged.

use analysis::models::ReasoningRule;
use analysis::rift::{self, RiftConfig, StructureStats};
use analysis::synthetic;

use super::rift::{small, with_unjudged};

fn row<'a>(s: &'a rift::RiftSummary, model: &str, structure: &str) -> &'a StructureStats {
    s.table2
        .iter()
        .find(|r| r.model == model && r.structure == structure)
        .unwrap()
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

#[test]
fn percentage_point_gaps_beside_delta() {
    let (prompts, answers) = synthetic::generate_records(&small());
    let s = rift::aggregate_records(&answers, &prompts, &RiftConfig::default()).unwrap();
    assert_eq!(s.deltas.len(), 3);
    for d in &s.deltas {
        let mean = |st: &str| row(&s, &d.model, st).mean.unwrap();
        let (b, l, j) = (mean("baseline"), mean("linear"), mean("jumping"));
        assert!(close(d.baseline, b) && close(d.linear, l) && close(d.jumping, j));
        assert!(close(d.linear_minus_jumping_pp, l - j), "{d:?}");
        assert!(close(d.baseline_minus_jumping_pp, b - j), "{d:?}");
        // Every answer judged: the bounds are the point.
        assert_eq!(
            (
                d.linear_minus_jumping_pp_lower,
                d.linear_minus_jumping_pp_upper
            ),
            (d.linear_minus_jumping_pp, d.linear_minus_jumping_pp)
        );
        assert_eq!(
            (
                d.baseline_minus_jumping_pp_lower,
                d.baseline_minus_jumping_pp_upper
            ),
            (d.baseline_minus_jumping_pp, d.baseline_minus_jumping_pp)
        );
        // Relative Δ and the absolute gap agree: Δ × A_linear / 100 = A_linear − A_jumping.
        assert!(close(d.delta.map(|x| x * l / 100.0), l - j));
    }
    let frame = &s.frames["rift_delta"];
    for name in [
        "baseline",
        "linear_minus_jumping_pp",
        "linear_minus_jumping_pp_lower",
        "linear_minus_jumping_pp_upper",
        "baseline_minus_jumping_pp",
        "baseline_minus_jumping_pp_lower",
        "baseline_minus_jumping_pp_upper",
    ] {
        assert!(frame.column(name).is_ok(), "rift_delta lacks {name}");
    }
    let dir = tempfile::tempdir().unwrap();
    rift::write_tables(&s, dir.path()).unwrap();
    let csv = std::fs::read_to_string(dir.path().join("rift_delta.csv")).unwrap();
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .contains("baseline_minus_jumping_pp_upper")
    );
}

#[test]
fn percentage_point_gaps_are_bounds_where_answers_are_unjudged() {
    let (plain_prompts, plain_answers) = synthetic::generate_records(&small());
    let (prompts, answers, turned) = with_unjudged();
    assert!(turned > 0);
    let cfg = RiftConfig::default();
    let plain = rift::aggregate_records(&plain_answers, &plain_prompts, &cfg).unwrap();
    let s = rift::aggregate_records(&answers, &prompts, &cfg).unwrap();
    for (d, before) in s.deltas.iter().zip(&plain.deltas) {
        if d.model != "synthetic/model-1" {
            assert_eq!(
                d, before,
                "models without unjudged answers keep their numbers"
            );
            continue;
        }
        let (b, l, j) = (
            row(&s, &d.model, "baseline"),
            row(&s, &d.model, "linear"),
            row(&s, &d.model, "jumping"),
        );
        assert!(l.unjudged > 0 && j.unjudged > 0);
        assert_eq!(
            (d.linear_minus_jumping_pp, d.baseline_minus_jumping_pp),
            (None, None)
        );
        // Smallest gap: linear low, jumping high; largest: linear high, jumping low.
        let (lo, hi) = (
            d.linear_minus_jumping_pp_lower.unwrap(),
            d.linear_minus_jumping_pp_upper.unwrap(),
        );
        assert!(close(
            Some(lo),
            l.mean_lower.unwrap() - j.mean_upper.unwrap()
        ));
        assert!(close(
            Some(hi),
            l.mean_upper.unwrap() - j.mean_lower.unwrap()
        ));
        assert!(close(
            d.baseline_minus_jumping_pp_lower,
            b.mean_lower.unwrap() - j.mean_upper.unwrap()
        ));
        assert!(close(
            d.baseline_minus_jumping_pp_upper,
            b.mean_upper.unwrap() - j.mean_lower.unwrap()
        ));
        // The run that counted them incorrect lies inside the bounds.
        let was = before.linear_minus_jumping_pp.unwrap();
        assert!(lo < hi && lo <= was && was <= hi, "{d:?} vs {was}");
    }
    let dir = tempfile::tempdir().unwrap();
    rift::write_tables(&s, dir.path()).unwrap();
    let md = std::fs::read_to_string(dir.path().join("rift_table2.md")).unwrap();
    let d1 = s
        .deltas
        .iter()
        .find(|d| d.model == "synthetic/model-1")
        .unwrap();
    let cell = format!(
        "| {:.1} … {:.1} |",
        d1.linear_minus_jumping_pp_lower.unwrap(),
        d1.linear_minus_jumping_pp_upper.unwrap()
    );
    assert!(md.contains(&cell), "{md}");
}

/// The synthetic run with the paper's Qwen names: model-1 a 4B thinking model, model-2 a 30B instruct model and
/// model-3 a 4B instruct model.
fn qwen_names(models: &mut [&mut String]) {
    for m in models.iter_mut() {
        let name = match m.as_str() {
            "synthetic/model-1" => "Qwen/Qwen3-4B-Thinking-2507",
            "synthetic/model-2" => "Qwen/Qwen3-30B-A3B-Instruct-2507",
            "synthetic/model-3" => "Qwen/Qwen3-4B-Instruct-2507",
            other => panic!("unexpected model {other}"),
        };
        **m = name.to_owned();
    }
}

#[test]
fn reasoning_models_beside_non_reasoning_models() {
    let (mut prompts, mut answers) = synthetic::generate_records(&small());
    let mut names: Vec<&mut String> = prompts.iter_mut().map(|p| &mut p.model).collect();
    names.extend(answers.iter_mut().map(|a| &mut a.model));
    qwen_names(&mut names);
    // The default rule reads "Thinking" in the name.
    let s = rift::aggregate_records(&answers, &prompts, &RiftConfig::default()).unwrap();
    let thinking = "Qwen/Qwen3-4B-Thinking-2507";
    let got: Vec<_> = s
        .reasoning_vs_instruct
        .iter()
        .map(|p| {
            (
                p.structure.as_str(),
                p.reasoning_model.as_str(),
                p.instruct_model.as_str(),
            )
        })
        .collect();
    let mut want = Vec::new();
    for st in ["baseline", "linear", "jumping"] {
        want.push((st, thinking, "Qwen/Qwen3-30B-A3B-Instruct-2507"));
        want.push((st, thinking, "Qwen/Qwen3-4B-Instruct-2507"));
    }
    assert_eq!(got, want);
    for p in &s.reasoning_vs_instruct {
        let (r, i) = (
            row(&s, &p.reasoning_model, &p.structure),
            row(&s, &p.instruct_model, &p.structure),
        );
        assert_eq!((p.reasoning_mean, p.instruct_mean), (r.mean, i.mean));
        assert!(close(p.gap_pp, r.mean.unwrap() - i.mean.unwrap()), "{p:?}");
        assert_eq!((p.gap_pp_lower, p.gap_pp_upper), (p.gap_pp, p.gap_pp));
    }
    assert_eq!(s.frames["rift_reasoning_vs_instruct"].height(), 6);
    let dir = tempfile::tempdir().unwrap();
    let written = rift::write_tables(&s, dir.path()).unwrap();
    assert!(written.contains(&dir.path().join("rift_reasoning_vs_instruct.md")));

    // An explicit list overrides the names: two reasoning models, one non-reasoning one.
    let rule = ReasoningRule {
        explicit: Some(vec![
            thinking.to_owned(),
            "Qwen/Qwen3-30B-A3B-Instruct-2507".to_owned(),
        ]),
    };
    let pairs = rift::reasoning_vs_instruct(&s.table2, &rule);
    assert_eq!(pairs.len(), 6);
    assert!(
        pairs
            .iter()
            .all(|p| p.instruct_model == "Qwen/Qwen3-4B-Instruct-2507")
    );
    // Nobody reasoning: no pairs, and no Markdown table for the report.
    let none = RiftConfig {
        reasoning: ReasoningRule {
            explicit: Some(vec![]),
        },
        ..RiftConfig::default()
    };
    let s = rift::aggregate_records(&answers, &prompts, &none).unwrap();
    assert!(s.reasoning_vs_instruct.is_empty());
    let dir = tempfile::tempdir().unwrap();
    rift::write_tables(&s, dir.path()).unwrap();
    assert!(!dir.path().join("rift_reasoning_vs_instruct.md").exists());
    assert!(dir.path().join("rift_reasoning_vs_instruct.csv").exists());
}

#[test]
fn reasoning_gaps_are_bounds_where_answers_are_unjudged() {
    // model-1 (with unjudged answers) is the reasoning model.
    let (prompts, answers, _) = with_unjudged();
    let cfg = RiftConfig {
        reasoning: ReasoningRule {
            explicit: Some(vec!["synthetic/model-1".to_owned()]),
        },
        ..RiftConfig::default()
    };
    let s = rift::aggregate_records(&answers, &prompts, &cfg).unwrap();
    assert_eq!(s.reasoning_vs_instruct.len(), 6);
    for p in &s.reasoning_vs_instruct {
        let (r, i) = (
            row(&s, &p.reasoning_model, &p.structure),
            row(&s, &p.instruct_model, &p.structure),
        );
        assert_eq!(i.unjudged, 0);
        if r.unjudged == 0 {
            assert!(close(p.gap_pp, r.mean.unwrap() - i.mean.unwrap()));
            continue;
        }
        assert_eq!(p.gap_pp, None);
        assert!(close(
            p.gap_pp_lower,
            r.mean_lower.unwrap() - i.mean.unwrap()
        ));
        assert!(close(
            p.gap_pp_upper,
            r.mean_upper.unwrap() - i.mean.unwrap()
        ));
        assert!(p.gap_pp_lower.unwrap() < p.gap_pp_upper.unwrap());
    }
}
