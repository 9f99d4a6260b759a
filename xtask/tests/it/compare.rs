//! `cargo xtask compare` on run folders built from small synthetic score fixtures (prompt files, IFScale sample
//! scores and RIFT answer scores, as the pipeline writes them): a model worse by a known amount is reported
//! significant and the gate exits 5; an identical model is tied and the gate exits 0; two runs of one config are
//! compared model against model; runs whose items differ are one usage error naming what differs; the output is
//! the same for the same seed.

use std::path::Path;
use std::process::Command;

use analysis::stats::SplitMix64;
use serde_json::json;

/// Runs `cargo xtask compare` in `dir`; returns the exit code, stdout and the last line of stderr.
fn compare(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .current_dir(dir)
        .arg("compare")
        .args(args)
        .args(["--resamples", "2000"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr.lines().last().unwrap_or_default().to_owned(),
    )
}

fn write_lines(path: &Path, lines: &[serde_json::Value]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(path, text).unwrap();
}

/// How a fixture run is set up.
#[derive(Clone)]
struct Fixture {
    seeds: u64,
    vocab: &'static str,
    question_offset: u32,
}

const STANDARD: Fixture = Fixture {
    seeds: 6,
    vocab: "aaaa1111",
    question_offset: 0,
};

const DENSITIES: [u32; 8] = [10, 20, 50, 100, 150, 200, 300, 400];

/// Writes a run under `dir/artifacts/runs/<name>/` holding `models`, each `(name, drop)`: IFScale accuracy `drop`
/// points below a common curve (with a per-sample wobble shared by the models, so a model's differences are
/// exactly its drop, plus a little noise of its own), and RIFT answers correct with a probability `drop` points
/// lower.
fn run(dir: &Path, name: &str, fx: &Fixture, models: &[(&str, f64)]) {
    let root = dir.join("artifacts/runs").join(name);
    let mut prompts = Vec::new();
    let mut scores = Vec::new();
    for &n in &DENSITIES {
        for seed in 0..fx.seeds {
            let id = format!("ifscale-n{n:03}-s{seed}");
            let keywords: Vec<String> =
                (0..n).map(|k| format!("{}-{seed}-{k}", fx.vocab)).collect();
            prompts.push(json!({
                "id": id, "messages": [{"role": "user", "content": format!("Write a report using {}", keywords.join(", "))}],
                "benchmark": "ifscale", "num_rules": n, "seed": seed, "sampling": "paper", "keywords": keywords,
                "template_sha256": "tttt2222", "vocab_sha256": fx.vocab,
            }));
            let mut shared = SplitMix64::new(u64::from(n) * 1000 + seed);
            let base = 95.0 - f64::from(n) * 0.12 + 6.0 * (shared.unit() - 0.5);
            for (mi, (model, drop)) in models.iter().enumerate() {
                let mut own = SplitMix64::new(u64::from(n) * 1000 + seed + 77 * (mi as u64 + 1));
                let noise = if *drop == 0.0 {
                    0.0
                } else {
                    2.0 * (own.unit() - 0.5)
                };
                let acc = (base - drop + noise).clamp(0.0, 100.0);
                let exact = (acc / 100.0 * f64::from(n)).round() as u32;
                let modified = (n - exact) / 4;
                scores.push(json!({
                    "id": id, "model": model, "num_rules": n, "seed": seed, "mode": "paper", "status": "scored",
                    "accuracy": f64::from(exact) / f64::from(n) * 100.0, "exact": exact, "modified": modified,
                    "omitted": n - exact - modified, "omission_pct": null, "modification_pct": null,
                    "primacy_ratio": null, "latency_s": null, "output_tokens": null, "coherence": null, "attempts": 1,
                }));
            }
        }
    }
    write_lines(&root.join("ifscale/prompts.jsonl"), &prompts);
    write_lines(&root.join("ifscale/scores.jsonl"), &scores);

    let mut rift_prompts = Vec::new();
    let mut answers = Vec::new();
    for g in 0..30u32 {
        let group = format!("g{g:05}");
        for (structure, k) in [("linear", None), ("jumping", Some(3u32))] {
            let id = format!("rift-{group}-{structure}");
            let num = 10u32;
            let traversal: Vec<u32> = match k {
                None => (1..=num).collect(),
                Some(k) => (0..num).map(|i| (i * k) % num + 1).collect(),
            };
            let rows: Vec<u32> = traversal
                .iter()
                .map(|q| g * 10 + q + fx.question_offset)
                .collect();
            let expected: Vec<String> = rows.iter().map(|r| format!("answer {r}")).collect();
            let questions: Vec<String> = rows.iter().map(|r| format!("question {r}?")).collect();
            rift_prompts.push(json!({
                "id": id, "messages": [{"role": "user", "content": questions.join(" → ")}],
                "benchmark": "rift", "structure": structure, "group_id": group, "seed": g, "num": num,
                "start_row": g * 10, "max_jump_distance": 18, "jump_k": k, "traversal": traversal,
                "expected": expected, "questions": questions, "rows": rows,
            }));
            for (model, drop) in models {
                let mut shared = SplitMix64::new(u64::from(g) * 7 + u64::from(k.is_some()));
                let p = if structure == "linear" { 0.8 } else { 0.35 } - drop / 100.0;
                for depth in 0..num {
                    // One draw per question shared by the models: equal skill gives equal answers, and a drop turns
                    // some right answers wrong and never a wrong one right.
                    let right = shared.unit() < p;
                    answers.push(json!({
                        "prompt_id": id, "model": model, "structure": structure, "depth": depth,
                        "question_number": traversal[depth as usize], "expected": expected[depth as usize],
                        "given": "x", "verdict": if right { "correct" } else { "incorrect" }, "judged_by": "pre_judge",
                        "wrong_question_of": null,
                    }));
                }
            }
        }
    }
    write_lines(&root.join("rift/prompts.jsonl"), &rift_prompts);
    write_lines(&root.join("rift/answer-scores.jsonl"), &answers);
}

fn report_json(dir: &Path, out: &str) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join(out).join("compare.json")).unwrap()).unwrap()
}

#[test]
fn a_model_worse_by_a_known_amount_fails_the_gate_and_an_identical_one_passes() {
    let dir = tempfile::tempdir().unwrap();
    run(
        dir.path(),
        "multi",
        &STANDARD,
        &[("base", 0.0), ("twin", 0.0), ("worse", 10.0)],
    );
    // 10 points lower on both benchmarks: significant, and the gate (margin 2 pp) exits 5.
    let (code, stdout, last) = compare(
        dir.path(),
        &[
            "multi:worse",
            "--baseline",
            "multi:base",
            "--fail-if-worse",
            "2",
            "--out",
            "out-worse",
        ],
    );
    assert_eq!(code, 5, "{last}\n{stdout}");
    assert!(
        last.contains("regression gate failed") && last.contains("IFScale accuracy"),
        "{last}"
    );
    let j = report_json(dir.path(), "out-worse");
    let acc = &j["ifscale"][0]["overall"]["metrics"]["accuracy"];
    let diff = acc["diff"].as_f64().unwrap();
    assert!((diff + 10.0).abs() < 1.0, "{acc}");
    assert!(acc["p"].as_f64().unwrap() < 0.001, "{acc}");
    assert_eq!(j["gate"]["passed"], false);
    let linear = &j["rift"][0]["structures"][0];
    assert_eq!(linear["structure"], "linear");
    assert!(
        linear["prompt_level"]["p"].as_f64().unwrap() < 0.05,
        "{linear}"
    );
    assert!(
        linear["mcnemar"]["c"].as_u64().unwrap() > 0 && linear["mcnemar"]["b"] == 0,
        "{linear}"
    );
    assert!(stdout.contains("Regression gate: FAILED"), "{stdout}");

    // The same model under another name: every difference 0, p = 1, the gate passes.
    let (code, stdout, last) = compare(
        dir.path(),
        &[
            "multi:twin",
            "--baseline",
            "multi:base",
            "--fail-if-worse",
            "2",
            "--out",
            "out-twin",
        ],
    );
    assert_eq!(code, 0, "{last}\n{stdout}");
    let j = report_json(dir.path(), "out-twin");
    let acc = &j["ifscale"][0]["overall"]["metrics"]["accuracy"];
    assert_eq!(
        (acc["diff"].as_f64(), acc["p"].as_f64()),
        (Some(0.0), Some(1.0))
    );
    assert_eq!(j["gate"]["passed"], true);
    assert!(stdout.contains("Regression gate: passed"), "{stdout}");

    // All three: every pair, and the tied sets {base, twin}, {worse}.
    let (code, stdout, _) = compare(dir.path(), &["multi", "--out", "out-all"]);
    assert_eq!(code, 0, "{stdout}");
    let j = report_json(dir.path(), "out-all");
    assert_eq!(j["ifscale"].as_array().unwrap().len(), 3);
    let ties = j["ties"].as_array().unwrap();
    let ifscale_ties = ties
        .iter()
        .find(|t| t["measure"].as_str().unwrap().starts_with("IFScale"))
        .unwrap();
    assert_eq!(ifscale_ties["sets"], json!([["base", "twin"], ["worse"]]));
    assert!(stdout.contains("Statistically tied models"), "{stdout}");
    assert!(dir.path().join("out-all/compare.md").is_file());
    // The figures: the IFScale difference against N and the RIFT forest plot, as PNG and SVG.
    for f in ["compare_ifscale_difference", "compare_rift_forest"] {
        let svg = std::fs::read_to_string(dir.path().join(format!("out-all/{f}.svg"))).unwrap();
        assert!(
            svg.contains("twin − base") || svg.contains("base − twin"),
            "{f}"
        );
        assert!(dir.path().join(format!("out-all/{f}.png")).is_file(), "{f}");
    }
}

#[test]
fn two_runs_of_one_config_compare_model_against_model_and_deterministically() {
    let dir = tempfile::tempdir().unwrap();
    run(dir.path(), "before", &STANDARD, &[("m", 0.0)]);
    run(dir.path(), "after", &STANDARD, &[("m", 10.0)]);
    let args = [
        "after",
        "--baseline",
        "before",
        "--fail-if-worse",
        "3",
        "--seed",
        "4",
        "--out",
        "o1",
    ];
    let (code, stdout, last) = compare(dir.path(), &args);
    assert_eq!(code, 5, "{last}\n{stdout}");
    assert!(
        stdout.contains("## IFScale: after:m − before:m"),
        "{stdout}"
    );
    let mut again = args;
    again[8] = "o2";
    let (code, _, _) = compare(dir.path(), &again);
    assert_eq!(code, 5);
    let (a, b) = (
        std::fs::read(dir.path().join("o1/compare.json")).unwrap(),
        std::fs::read(dir.path().join("o2/compare.json")).unwrap(),
    );
    assert_eq!(a, b, "the same seed gives the same bytes");
    // A run compared with itself in two folders: tied, the gate passes.
    run(dir.path(), "copy", &STANDARD, &[("m", 0.0)]);
    let (code, _, last) = compare(
        dir.path(),
        &[
            "copy",
            "--baseline",
            "before",
            "--fail-if-worse",
            "1",
            "--out",
            "o3",
        ],
    );
    assert_eq!(code, 0, "{last}");
}

#[test]
fn runs_whose_items_differ_are_one_usage_error_naming_what_differs() {
    let dir = tempfile::tempdir().unwrap();
    run(dir.path(), "one", &STANDARD, &[("m", 0.0)]);
    run(
        dir.path(),
        "other",
        &Fixture {
            seeds: 4,
            vocab: "bbbb3333",
            question_offset: 0,
        },
        &[("m", 0.0)],
    );
    let (code, _, last) = compare(dir.path(), &["one", "other"]);
    assert_eq!(code, 2, "{last}");
    assert!(last.contains("items differ between"), "{last}");
    assert!(
        last.contains("vocabulary (SHA-256 aaaa1111 vs bbbb3333)"),
        "{last}"
    );
    assert!(
        last.contains("seeds (0, 1, 2, 3, 4, 5 vs 0, 1, 2, 3)"),
        "{last}"
    );
    run(
        dir.path(),
        "questions",
        &Fixture {
            question_offset: 5000,
            ..STANDARD
        },
        &[("m", 0.0)],
    );
    let (code, _, last) = compare(dir.path(), &["one", "questions"]);
    assert_eq!(code, 2, "{last}");
    assert!(
        last.contains("RIFT: question set (60 prompts ask other questions)"),
        "{last}"
    );
    assert!(!last.contains("IFScale"), "{last}");
    // Usage errors: an unknown model, a gate without a baseline.
    let (code, _, last) = compare(dir.path(), &["one:nobody", "one:m"]);
    assert_eq!(code, 2, "{last}");
    assert!(last.contains("no model nobody (it holds m)"), "{last}");
    let (code, _, last) = compare(dir.path(), &["one", "questions", "--fail-if-worse", "1"]);
    assert_eq!(code, 2, "{last}");
    assert!(last.contains("needs --baseline"), "{last}");
}
