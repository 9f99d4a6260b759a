//! RIFT prompts: the jumping order is a Hamiltonian path for every size and step, and prompts are reproducible.

use std::path::{Path, PathBuf};

use prompt_gen::rift::{
    PromptSpec, RiftConfig, SystemPrompts, admissible_steps, baseline_description, baseline_rows,
    build_experiment, build_prompt, traversal,
};
use proptest::prelude::*;
use schema::rift::{PromptMeta, Question, Structure};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("test_data")
        .join(name)
}

fn questions() -> Vec<Question> {
    schema::read_jsonl(&data("rift-questions.jsonl")).unwrap()
}

/// Follows the arrows of a rendered user prompt from question 1; returns the visit order, or why it broke.
fn walk(user: &str, n: usize) -> Result<Vec<usize>, String> {
    let mut next = vec![None; n + 1];
    for (i, line) in user.lines().enumerate() {
        let number = i + 1;
        let prefix = format!("{number}. ");
        if !line.starts_with(&prefix) {
            return Err(format!("line {number} does not start with {prefix:?}"));
        }
        let (_, tail) = line
            .rsplit_once(" → ")
            .ok_or(format!("line {number} has no arrow"))?;
        next[number] = Some(match tail {
            "You are done." => 0,
            t => t
                .strip_prefix("Now Answer Question Number ")
                .ok_or(format!("bad arrow {t:?}"))?
                .parse()
                .unwrap(),
        });
    }
    let mut seen = vec![false; n + 1];
    let mut order = Vec::new();
    let mut at = 1;
    while at != 0 {
        if at > n || seen[at] {
            return Err(format!("revisits or leaves the prompt at {at}"));
        }
        seen[at] = true;
        order.push(at);
        at = next[at].ok_or(format!("no arrow at {at}"))?;
    }
    if order.len() != n {
        return Err(format!("done after {} of {n} questions", order.len()));
    }
    Ok(order)
}

/// Exhaustive: every n in 10..=300 and every admissible k give a Hamiltonian path from 1 (the arithmetic).
#[test]
fn every_admissible_step_is_a_hamiltonian_path() {
    let mut checked = 0;
    for n in 10..=300u32 {
        for k in admissible_steps(n, n) {
            let order = traversal(n, Some(k));
            assert_eq!(order[0], 1);
            let mut seen = vec![false; n as usize + 1];
            for &q in &order {
                assert!(!seen[q as usize], "n={n} k={k} revisits {q}");
                seen[q as usize] = true;
            }
            assert_eq!(order.len(), n as usize);
            checked += 1;
        }
    }
    assert!(checked > 10_000, "{checked}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    /// The rendered prompt, read back arrow by arrow, is a Hamiltonian path from question 1 ending in done,
    /// whose order is the recorded traversal; the step is admissible and recorded.
    #[test]
    fn rendered_jumping_prompts_are_hamiltonian_paths(n in 10u32..=300, mjd in 2u32..=300, seed in any::<u32>()) {
        let qs: Vec<Question> = (0..n as u64).map(|row| Question {
            row, question: format!("Q{row}?"), answer: format!("A{row}"), category: "C".into(), value: None,
            value_normalized: None, round: "Jeopardy!".into(), air_date: "2026-01-01".into(), show_number: None,
            source: None, rephrased: false,
        }).collect();
        let spec = PromptSpec { seed: u64::from(seed), num: n, start_row: 0, jumping: true, max_jump_distance: mjd };
        let steps = admissible_steps(n, mjd);
        match build_prompt(&qs, &spec, "g", "sys", &Default::default()) {
            Err(e) => {
                prop_assert!(steps.is_empty(), "{e}");
                prop_assert!(e.to_string().contains("no admissible jump step"));
            }
            Ok(p) => {
                let meta: PromptMeta = serde_json::from_value(serde_json::Value::Object(p.extra.clone())).unwrap();
                let k = meta.jump_k.unwrap();
                prop_assert!(steps.contains(&k));
                prop_assert!(k >= 2 && k <= mjd.min(n - 2));
                let order = walk(&p.messages[1].content, n as usize).map_err(TestCaseError::fail)?;
                let recorded: Vec<usize> = meta.traversal.iter().map(|&q| q as usize).collect();
                prop_assert_eq!(&order, &recorded);
                // Question number 1 + k is dataset row k.
                prop_assert_eq!(meta.expected[1].clone(), format!("A{k}"));
            }
        }
    }
}

fn small_config() -> RiftConfig {
    toml::from_str(
        r#"
        seed = 36
        dataset = "unused.jsonl"
        linear-prompts = 3
        jumping-prompts = 2
        baseline-prompts = 4
        num-min = 10
        num-max = 20
        max-jump-distance = 18
        max-tokens = 512
        "#,
    )
    .unwrap()
}

fn render(cfg: &RiftConfig) -> Vec<u8> {
    let system = SystemPrompts {
        multi: "You are a program executor.",
        baseline: "Answer with only the answer.",
    };
    let prompts = build_experiment(&questions(), cfg, system).unwrap();
    let mut out = Vec::new();
    for p in &prompts {
        serde_json::to_writer(&mut out, p).unwrap();
        out.push(b'\n');
    }
    out
}

/// Same config, same bytes; and the bytes are pinned by a snapshot (`UPDATE_EXPECT=1` rewrites it).
#[test]
fn same_config_same_bytes_and_snapshot() {
    let cfg = small_config();
    let a = render(&cfg);
    let b = render(&cfg.clone());
    assert_eq!(a, b);
    let snap = data("rift-snapshot.jsonl");
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(&snap, &a).unwrap();
    }
    let expected = std::fs::read(&snap).unwrap();
    assert!(
        a == expected,
        "prompts differ from {}; rerun with UPDATE_EXPECT=1 if intended",
        snap.display()
    );
    // The pinned hash of the snapshot, so a silent rewrite is visible in review.
    assert_eq!(
        schema::sha256_hex(&a)[..16],
        *include_str!("../../test_data/rift-snapshot.sha256").trim()
    );
}

#[test]
fn groups_share_questions_and_baselines_follow() {
    let cfg = small_config();
    let system = SystemPrompts {
        multi: "S",
        baseline: "B",
    };
    let prompts = build_experiment(&questions(), &cfg, system).unwrap();
    let metas: Vec<(String, PromptMeta)> = prompts
        .iter()
        .map(|p| {
            (
                p.id.clone(),
                serde_json::from_value(serde_json::Value::Object(p.extra.clone())).unwrap(),
            )
        })
        .collect();
    let ids: Vec<&str> = metas.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(
        &ids[..5],
        [
            "rift-g00000-linear",
            "rift-g00000-jumping",
            "rift-g00001-linear",
            "rift-g00001-jumping",
            "rift-g00002-linear"
        ]
    );
    assert_eq!(metas.len(), 5 + 4);
    let (lin, jmp) = (&metas[0].1, &metas[1].1);
    assert_eq!(lin.group_id, jmp.group_id);
    assert_eq!(
        (lin.num, lin.start_row, lin.seed),
        (jmp.num, jmp.start_row, jmp.seed)
    );
    let mut a = lin.rows.clone();
    let mut b = jmp.rows.clone();
    a.sort();
    b.sort();
    assert_eq!(a, b);
    assert_eq!(lin.jump_k, None);
    assert!(jmp.jump_k.is_some());
    for (_, m) in &metas[..5] {
        assert!((10..=20).contains(&m.num));
    }
    // Baselines: a seeded uniform sample of four rows, in row order, one question each, with the baseline
    // system prompt.
    let rows = baseline_rows(&cfg, questions().len()).unwrap();
    assert_eq!(rows.len(), 4);
    assert!(rows.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(rows, baseline_rows(&cfg, questions().len()).unwrap());
    for (i, (_, m)) in metas[5..].iter().enumerate() {
        assert_eq!(m.structure, Structure::Baseline);
        assert_eq!(m.rows, vec![rows[i] as u64]);
        assert_eq!(prompts[5 + i].messages[0].content, "B");
    }
    assert_eq!(prompts[0].params.max_tokens, Some(512));
}

#[test]
fn the_baseline_covers_every_question_unless_a_count_is_given() {
    let mut cfg = small_config();
    cfg.baseline_prompts = None;
    let n = questions().len();
    assert_eq!(baseline_rows(&cfg, n).unwrap(), (0..n).collect::<Vec<_>>());
    assert_eq!(
        baseline_description(&cfg, n),
        format!("all {n} questions of the dataset")
    );
    cfg.baseline_prompts = Some(4);
    assert!(baseline_description(&cfg, n).contains("uniform sample of 4"));
    cfg.baseline_prompts = Some(n as u32 + 1);
    let err = baseline_rows(&cfg, n).unwrap_err().to_string();
    assert!(err.contains("exceeds the dataset's"), "{err}");
}

#[test]
fn the_jump_limit_is_fixed_or_a_fraction_of_the_prompt() {
    let mut cfg = small_config();
    assert_eq!((cfg.jump_limit(10), cfg.jump_limit(300)), (18, 18));
    assert!(cfg.jump_rule().contains("min(18, n − 2)") && cfg.jump_rule().contains("assumption"));
    cfg.max_jump_fraction = Some(1.0 / 3.0);
    // The paper's example: 54 questions, largest jump 18.
    assert_eq!(cfg.jump_limit(54), 18);
    assert_eq!(cfg.jump_limit(4), 2);
    let system = SystemPrompts {
        multi: "S",
        baseline: "B",
    };
    let prompts = build_experiment(&questions(), &cfg, system).unwrap();
    for p in &prompts {
        let m: PromptMeta =
            serde_json::from_value(serde_json::Value::Object(p.extra.clone())).unwrap();
        if let Some(k) = m.jump_k {
            assert!(k <= m.num / 3, "k = {k} for n = {}", m.num);
        }
    }
    cfg.max_jump_fraction = Some(1.5);
    let err = build_experiment(&questions(), &cfg, system)
        .unwrap_err()
        .to_string();
    assert!(err.contains("max-jump-fraction"), "{err}");
}

#[test]
fn config_is_strict() {
    let err = toml::from_str::<RiftConfig>("seed = 1\nbogus = 2")
        .unwrap_err()
        .to_string();
    assert!(err.contains("unknown field `bogus`"), "{err}");
    let mut cfg = small_config();
    cfg.num_max = 41;
    let system = SystemPrompts {
        multi: "S",
        baseline: "B",
    };
    let err = build_experiment(&questions(), &cfg, system)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("num-max = 41 exceeds the dataset's 40 questions"),
        "{err}"
    );
}
