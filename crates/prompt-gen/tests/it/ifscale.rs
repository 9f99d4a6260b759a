//! IFScale prompt generation against the paper's released sampler.

use std::path::PathBuf;

use prompt_gen::ifscale::{IfscaleConfig, Template, VocabTerm, Vocabulary, build_prompts};
use prompt_gen::rng::Mt19937;
use schema::ifscale::{PromptMeta, SamplingMode};

/// The published IFScale vocabulary, committed in its published order (`datasets/vocab/README.md`).
fn paper_vocab_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../datasets/vocab/ifscale-paper.txt")
}

/// Reads the published keyword order for seeds 0–4 (`seed,position,keyword` rows), committed under
/// `datasets/ifscale-reference/`.
fn reference_orders() -> Vec<(u32, usize, String)> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../datasets/ifscale-reference/keyword-order-seeds0-4.csv");
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next().map(str::trim), Some("seed,position,keyword"));
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut f = l.trim().splitn(3, ',');
            let seed = f.next().unwrap().parse().unwrap();
            let pos = f.next().unwrap().parse().unwrap();
            (seed, pos, f.next().unwrap().to_owned())
        })
        .collect()
}

#[test]
fn rng_permutation_reproduces_reference_keyword_order() {
    let vocab: Vec<String> = std::fs::read_to_string(paper_vocab_path())
        .unwrap()
        .lines()
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.is_empty())
        .collect();
    let rows = reference_orders();
    let mut checked = 0;
    for seed in 0..5u32 {
        let want: Vec<&(u32, usize, String)> = rows.iter().filter(|r| r.0 == seed).collect();
        assert!(
            !want.is_empty(),
            "seed {seed} missing from the reference file"
        );
        let order = Mt19937::new(seed)
            .choice_without_replacement(vocab.len(), want.len())
            .unwrap();
        for (i, row) in want.iter().enumerate() {
            assert_eq!(
                row.1,
                i + 1,
                "reference positions are 1-based and consecutive"
            );
            assert_eq!(vocab[order[i]], row.2, "seed {seed} position {}", row.1);
            checked += 1;
        }
    }
    assert_eq!(checked, rows.len());
}

fn test_data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("test_data")
        .join(name)
}

fn config(sampling: SamplingMode, grid: Vec<u32>, seeds: Vec<u32>) -> IfscaleConfig {
    IfscaleConfig {
        grid,
        seeds,
        sampling,
        strata: 4,
        vocab: None,
        template: test_data("ifscale-template.txt"),
        max_tokens: Some(300),
        temperature: None,
        constraint_list: Default::default(),
        coherence_threshold: 6,
        max_attempts: 10,
        score_span: Default::default(),
    }
}

fn load(vocab: &str) -> (Vocabulary, Template) {
    let v = Vocabulary::parse(&std::fs::read(test_data(vocab)).unwrap(), vocab).unwrap();
    let t = Template::parse(
        &std::fs::read(test_data("ifscale-template.txt")).unwrap(),
        "t",
    )
    .unwrap();
    (v, t)
}

fn keywords(p: &schema::PromptRecord) -> Vec<String> {
    serde_json::from_value::<PromptMeta>(serde_json::Value::Object(p.extra.clone()))
        .unwrap()
        .keywords
}

#[test]
fn paper_prompts_reproduce_reference_keyword_order() {
    let bytes = std::fs::read(paper_vocab_path()).unwrap();
    let vocab = Vocabulary::parse(&bytes, "vocab.txt").unwrap();
    assert_eq!(vocab.len(), 500);
    let (_, template) = load("ifscale-vocab.tsv");
    let cfg = config(SamplingMode::Paper, vec![500, 10], (0..5).collect());
    let prompts = build_prompts(&vocab, &template, &cfg).unwrap();
    let rows = reference_orders();
    for seed in 0..5u32 {
        let want: Vec<&str> = rows
            .iter()
            .filter(|r| r.0 == seed)
            .map(|r| r.2.as_str())
            .collect();
        let full = prompts
            .iter()
            .find(|p| p.id == format!("ifscale-n500-s{seed}"))
            .unwrap();
        assert_eq!(keywords(full), want, "seed {seed}");
        let ten = prompts
            .iter()
            .find(|p| p.id == format!("ifscale-n010-s{seed}"))
            .unwrap();
        assert_eq!(
            keywords(ten),
            want[..10],
            "seed {seed}: lists are nested prefixes"
        );
        let text = &ten.messages[0].content;
        assert!(
            text.contains(&format!("1. Include the exact word: '{}'.", want[0])),
            "{text}"
        );
        assert!(
            text.contains(&format!("10. Include the exact word: '{}'.", want[9])),
            "{text}"
        );
    }
}

#[test]
fn prompts_are_byte_identical_for_the_same_config() {
    let (vocab, template) = load("ifscale-vocab.tsv");
    for sampling in [SamplingMode::Paper, SamplingMode::Stratified] {
        let cfg = config(sampling, vec![5, 12], vec![0, 7]);
        let render = |ps: &[schema::PromptRecord]| -> String {
            ps.iter()
                .map(|p| serde_json::to_string(p).unwrap() + "\n")
                .collect()
        };
        let a = render(&build_prompts(&vocab, &template, &cfg).unwrap());
        let b = render(&build_prompts(&vocab, &template, &cfg).unwrap());
        assert_eq!(a, b);
        let ids: Vec<String> = build_prompts(&vocab, &template, &cfg)
            .unwrap()
            .into_iter()
            .map(|p| p.id)
            .collect();
        assert_eq!(
            ids,
            [
                "ifscale-n005-s0",
                "ifscale-n005-s7",
                "ifscale-n012-s0",
                "ifscale-n012-s7"
            ]
        );
    }
}

#[test]
fn prompt_records_carry_meta_and_params() {
    let (vocab, template) = load("ifscale-vocab.tsv");
    let cfg = config(SamplingMode::Stratified, vec![8], vec![3]);
    let p = &build_prompts(&vocab, &template, &cfg).unwrap()[0];
    assert_eq!(p.messages.len(), 1);
    assert_eq!(p.messages[0].role, "user");
    assert_eq!(p.params.max_tokens, Some(300));
    let meta: PromptMeta =
        serde_json::from_value(serde_json::Value::Object(p.extra.clone())).unwrap();
    assert_eq!(meta.benchmark, "ifscale");
    assert_eq!(
        (meta.num_rules, meta.seed, meta.sampling, meta.strata),
        (8, 3, SamplingMode::Stratified, Some(4))
    );
    assert_eq!(meta.keywords.len(), 8);
    assert_eq!(meta.vocab_sha256, vocab.sha256);
    assert_eq!(meta.template_sha256, template.sha256);
    assert!(p.messages[0].content.contains("8 constraints"));
    // Two picks from each quarter of the difficulty ranking.
    let mut by_difficulty: Vec<&VocabTerm> = vocab.terms.iter().collect();
    by_difficulty.sort_by(|a, b| a.difficulty.unwrap().total_cmp(&b.difficulty.unwrap()));
    let quarter = by_difficulty.len() / 4;
    for q in 0..4 {
        let stratum: Vec<&str> = by_difficulty[q * quarter..(q + 1) * quarter]
            .iter()
            .map(|t| t.term.as_str())
            .collect();
        let hits = meta
            .keywords
            .iter()
            .filter(|k| stratum.contains(&k.as_str()))
            .count();
        assert_eq!(hits, 2, "quarter {q}");
    }
}

#[test]
fn bad_configs_are_refused_with_the_field_named() {
    let (vocab, template) = load("ifscale-vocab.tsv");
    let mut cfg = config(SamplingMode::Paper, vec![10, 10], vec![0]);
    let err = build_prompts(&vocab, &template, &cfg)
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "ifscale config: field `grid`: density 10 appears twice"
    );
    cfg.grid = vec![vocab.len() as u32 + 1];
    let err = build_prompts(&vocab, &template, &cfg)
        .unwrap_err()
        .to_string();
    assert!(err.contains("exceeds the vocabulary"), "{err}");
    let toml_err = serde_json::from_str::<IfscaleConfig>(
        r#"{"grid":[1],"seeds":[0],"sampling":"paper","template":"t","colour":1}"#,
    )
    .unwrap_err()
    .to_string();
    assert!(toml_err.contains("unknown field `colour`"), "{toml_err}");
}

fn repo(p: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(p)
}

/// The `[ifscale]` section of a committed run config with its vocabulary and template (paths resolved against the
/// repository root, as `cargo xtask pipeline` resolves them from there).
fn committed(config: &str) -> (IfscaleConfig, Vocabulary, Template) {
    let text = std::fs::read_to_string(repo(config)).unwrap();
    let table: toml::Table = toml::from_str(&text).unwrap();
    let cfg: IfscaleConfig = table["ifscale"].clone().try_into().unwrap();
    let vocab = cfg.vocab.as_ref().unwrap().display().to_string();
    let v = Vocabulary::parse(&std::fs::read(repo(&vocab)).unwrap(), &vocab).unwrap();
    let template = cfg.template.display().to_string();
    let t = Template::parse(&std::fs::read(repo(&template)).unwrap(), &template).unwrap();
    (cfg, v, t)
}

fn render(ps: &[schema::PromptRecord]) -> String {
    ps.iter()
        .map(|p| serde_json::to_string(p).unwrap() + "\n")
        .collect()
}

/// The paper config's prompts (its grid, seeds, sampler, the paper's list and the report template) are pinned by
/// hash: adding the IFScale-XL grid and vocabulary, or anything else, must leave them byte-identical.
#[test]
fn the_paper_configs_prompts_stay_byte_identical() {
    let (cfg, vocab, template) = committed("configs/ifscale-paper.toml");
    let prompts = build_prompts(&vocab, &template, &cfg).unwrap();
    assert_eq!(prompts.len(), 250);
    assert_eq!(
        schema::sha256_hex(render(&prompts).as_bytes()),
        "514f6838581867a2fe9ba442701f29e5d7f50fc57898c2e7fe6f015fee29a12d"
    );
}

/// The IFScale-XL config samples up to all 10 000 terms of its list: every seed's N = 10 000 prompt holds each term
/// once, and the lists are nested prefixes, as under the paper's sampler.
#[test]
fn the_xl_config_samples_up_to_ten_thousand_distinct_terms() {
    let (cfg, vocab, template) = committed("configs/ifscale-xl.toml");
    assert!(vocab.len() >= 10_000, "{}", vocab.len());
    let prompts = build_prompts(&vocab, &template, &cfg).unwrap();
    assert_eq!(prompts.len(), 13 * 5);
    for seed in 0..5 {
        let all = prompts
            .iter()
            .find(|p| p.id == format!("ifscale-n10000-s{seed}"))
            .unwrap();
        let words = keywords(all);
        let distinct: std::collections::BTreeSet<&String> = words.iter().collect();
        assert_eq!((words.len(), distinct.len()), (10_000, 10_000));
        let fifty = prompts
            .iter()
            .find(|p| p.id == format!("ifscale-n050-s{seed}"))
            .unwrap();
        assert_eq!(keywords(fifty), words[..50]);
    }
}
