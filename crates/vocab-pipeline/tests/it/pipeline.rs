//! The whole pipeline on the fixture corpus, with a tiny frequency table, a character-trigram embedder and a
//! scripted model runner, so it runs in milliseconds and needs no cached asset (WordNet must be installed).

use std::path::{Path, PathBuf};

use schema::{Logprobs, PromptRecord, ResponseRecord};
use vocab_pipeline::difficulty::{DifficultyMethod, PromptRunner};
use vocab_pipeline::embed::Embedder;
use vocab_pipeline::lemma::Lemmatizer;
use vocab_pipeline::pipeline::{Extractor, LlmSettings, Resources, VocabConfig, build};
use vocab_pipeline::wordfreq::WordFreq;
use vocab_pipeline::{Error, output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_owned()
}

struct Trigrams;

impl Embedder for Trigrams {
    fn describe(&self) -> String {
        "character trigrams (test)".into()
    }
    fn embed(&mut self, texts: &[String]) -> Result<Vec<Vec<f32>>, Error> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0f32; 64];
                let padded: Vec<u8> = format!("  {}  ", t.to_lowercase()).into_bytes();
                for w in padded.windows(3) {
                    let h = w
                        .iter()
                        .fold(7u32, |h, &b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
                    v[(h % 64) as usize] += 1.0;
                }
                let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                v.iter().map(|x| x / n).collect()
            })
            .collect())
    }
}

/// Answers extraction prompts with a fixed list and difficulty prompts with a log-prob derived from the word length.
struct Scripted {
    calls: Vec<(String, String, usize)>,
}

fn response(p: &PromptRecord, content: &str, logprob: Option<f64>) -> ResponseRecord {
    ResponseRecord {
        sample_index: p.sample_index,
        content: Some(content.into()),
        finish_reason: Some("stop".into()),
        logprobs: logprob.map(|mean| Logprobs { mean, tokens: 12 }),
        prompt_meta: p.extra.clone(),
        ..ResponseRecord::new(&p.id, "scripted")
    }
}

impl PromptRunner for Scripted {
    fn describe(&self, model: &str) -> serde_json::Value {
        serde_json::json!({ "scripted": model })
    }
    fn run(
        &mut self,
        stage: &str,
        model: &str,
        prompts: &[PromptRecord],
    ) -> Result<Vec<ResponseRecord>, Error> {
        self.calls.push((stage.into(), model.into(), prompts.len()));
        Ok(prompts
            .iter()
            .map(|p| {
                if stage == "vocab-extract" {
                    // "giraffe" is not in any filing: look-back must drop it. "net income" is not one word.
                    response(p, "```json\n[\"revenue\", \"revenues\", \"leverage\", \"giraffe\", \"net income\", \"covenant\"]\n```", None)
                } else {
                    let term = p.extra["term"].as_str().unwrap();
                    response(p, "A sentence.", Some(-(term.len() as f64) / 4.0))
                }
            })
            .collect())
    }
}

fn wordfreq() -> WordFreq {
    // Zipf = 9 - bucket/100.
    let pairs = [
        ("revenue", 436),
        ("revenues", 480),
        ("leverage", 470),
        ("covenant", 560),
        ("amortization", 603),
        ("liquidity", 520),
        ("depreciation", 540),
        ("inventory", 450),
        ("widgets", 620),
        ("dividends", 490),
        ("receivables", 620),
        ("goodwill", 470),
        ("licensing", 500),
        ("leasing", 520),
        ("subscriptions", 510),
        ("impairment", 560),
        ("trademarks", 530),
        ("patents", 490),
        ("waivers", 560),
        ("turnover", 470),
        ("the", 127),
        ("and", 150),
        ("of", 140),
        ("our", 250),
        ("from", 230),
        ("giraffe", 500),
        ("gamma", 480),
        ("beta", 450),
        ("holdings", 500),
        ("earnings", 450),
        ("auditor", 540),
        ("lease", 480),
        ("dividend", 480),
        ("patent", 470),
        ("trademark", 500),
        ("subscription", 480),
        ("widget", 560),
        ("receivable", 640),
        ("waiver", 520),
        ("licensing", 500),
        ("lessee", 800),
    ];
    WordFreq::from_buckets(pairs.iter().map(|(w, b)| ((*w).to_owned(), *b)))
}

fn resources<'a>(
    wf: &'a WordFreq,
    wn: &'a Lemmatizer,
    emb: &'a mut Trigrams,
    runner: Option<&'a mut dyn PromptRunner>,
) -> Resources<'a> {
    Resources {
        wordfreq: wf,
        wordfreq_file: serde_json::json!("test table"),
        lemmatizer: wn,
        wordnet_dir: "/usr/share/wordnet/".into(),
        embedder: emb,
        embedder_files: serde_json::Value::Null,
        runner,
        root: root(),
    }
}

pub(crate) fn lemmatizer() -> Lemmatizer {
    let dir = Path::new("/usr/share/wordnet/");
    assert!(
        dir.join("index.noun").is_file(),
        "WordNet missing: apt-get install -y --no-install-recommends wordnet-base"
    );
    Lemmatizer::load(dir).unwrap()
}

#[test]
fn offline_build_with_zipf_proxy_reports_every_stage() {
    let wf = wordfreq();
    let wn = lemmatizer();
    let mut emb = Trigrams;
    let mut cfg = VocabConfig::default();
    cfg.keyness.min_count = 1;
    cfg.difficulty.method = DifficultyMethod::ZipfProxy;
    cfg.difficulty.keep = 10;
    let built = build(
        &cfg,
        &root().join("test_data/corpus"),
        resources(&wf, &wn, &mut emb, None),
    )
    .unwrap();
    let stages = built.provenance["stages"].as_array().unwrap();
    let names: Vec<&str> = stages
        .iter()
        .map(|s| s["stage"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "1-corpus",
            "2-candidates",
            "3-dedup",
            "4-look-back",
            "5-zipf",
            "6-lemmatize",
            "7-prune",
            "8-difficulty"
        ]
    );
    // Each stage's input is the previous stage's output, from stage 3 on.
    for w in stages[2..].windows(2) {
        assert_eq!(w[0]["output"], w[1]["input"], "{}", w[1]["stage"]);
    }
    assert_eq!(stages[0]["output"], 3);
    assert_eq!(
        built.provenance["corpus"]["files"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    assert!(
        built.provenance["stages"][7]["settings"]["definition"]
            .as_str()
            .unwrap()
            .contains("PROXY")
    );
    assert!(!built.entries.is_empty() && built.entries.len() <= 10);
    // Ranked by descending difficulty; every term is known to wordfreq at Zipf >= 1.
    for w in built.entries.windows(2) {
        assert!(w[0].difficulty >= w[1].difficulty);
    }
    for e in &built.entries {
        assert!(e.zipf >= 1.0, "{e:?}");
        assert!(!e.term.contains(char::is_whitespace));
    }
    let tsv = output::to_tsv(&built.entries);
    assert!(tsv.starts_with("term\tdifficulty\tzipf\tlemma_of\tsource_counts\n"));
}

#[test]
fn llm_extractor_and_perplexity_go_through_the_runner() {
    let wf = wordfreq();
    let wn = lemmatizer();
    let mut emb = Trigrams;
    let mut runner = Scripted { calls: vec![] };
    let mut cfg = VocabConfig {
        extractor: Extractor::Llm,
        ..VocabConfig::default()
    };
    cfg.llm = Some(LlmSettings {
        model: "extractor-model".into(),
        prompt: root().join("../../configs/prompts/vocab-extract.txt"),
        top_k: 500,
        max_filing_chars: 1000,
        max_tokens: 2000,
    });
    cfg.difficulty.prompt = root().join("../../configs/prompts/vocab-difficulty.txt");
    cfg.difficulty.samples = 3;
    let built = build(
        &cfg,
        &root().join("test_data/corpus"),
        resources(&wf, &wn, &mut emb, Some(&mut runner)),
    )
    .unwrap();
    assert_eq!(
        runner.calls[0],
        ("vocab-extract".to_owned(), "extractor-model".to_owned(), 3)
    );
    assert_eq!(runner.calls[1].0, "vocab-difficulty");
    let stages = built.provenance["stages"].as_array().unwrap();
    // revenue + revenues, leverage, giraffe, covenant proposed by every filing.
    assert_eq!(stages[1]["output"], 5);
    // giraffe is not in the corpus.
    let lookback = &stages[3];
    assert_eq!(
        lookback["input"].as_u64().unwrap() - lookback["output"].as_u64().unwrap(),
        1
    );
    let terms: Vec<&str> = built.entries.iter().map(|e| e.term.as_str()).collect();
    assert!(!terms.contains(&"giraffe"));
    // revenue and revenues share one lemma.
    assert!(!terms.contains(&"revenues"));
    assert_eq!(
        stages[7]["notes"]["responses"]["used"].as_u64().unwrap(),
        3 * stages[7]["input"].as_u64().unwrap()
    );
    // Longer words get lower log-probs in the script, so they rank as harder.
    for w in built.entries.windows(2) {
        assert!(w[0].term.len() >= w[1].term.len(), "{:?}", terms);
    }
}

#[test]
fn perplexity_without_a_runner_is_a_config_error() {
    let wf = wordfreq();
    let wn = lemmatizer();
    let mut emb = Trigrams;
    let cfg = VocabConfig::default();
    let err = build(
        &cfg,
        &root().join("test_data/corpus"),
        resources(&wf, &wn, &mut emb, None),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("zipf-proxy"), "{err}");
}

#[test]
fn an_extra_source_widens_the_candidates_and_is_counted_per_stage() {
    use vocab_pipeline::sources::{ExtraSource, WordnetNounsConfig};
    let wf = wordfreq();
    let wn = lemmatizer();
    let mut cfg = VocabConfig::default();
    cfg.keyness.min_count = 1;
    cfg.difficulty.method = DifficultyMethod::ZipfProxy;
    cfg.difficulty.keep = 100_000;
    let corpus = root().join("test_data/corpus");
    let plain = build(&cfg, &corpus, resources(&wf, &wn, &mut Trigrams, None)).unwrap();
    assert!(plain.provenance.get("sources").is_none());
    assert!(plain.entries.iter().all(|e| e.source_counts > 0));

    // WordNet's nouns at Zipf 3 or more in the test's word list (its other words have Zipf 0).
    cfg.extra_sources = vec![ExtraSource::WordnetNouns];
    cfg.wordnet_nouns = Some(WordnetNounsConfig {
        min_zipf: 3.0,
        ..WordnetNounsConfig::default()
    });
    let wide = build(&cfg, &corpus, resources(&wf, &wn, &mut Trigrams, None)).unwrap();
    let stages = wide.provenance["stages"].as_array().unwrap();
    let extra = &stages[1]["notes"]["extra-sources"][0];
    assert_eq!(extra["source"], "wordnet-nouns");
    let proposed = extra["in-zipf-band"].as_u64().unwrap();
    assert!(proposed > 10, "{extra}");
    assert_eq!(
        stages[1]["output"].as_u64().unwrap(),
        plain.provenance["stages"][1]["output"].as_u64().unwrap()
            + extra["not-already-a-filing-candidate"].as_u64().unwrap()
    );
    // Per stage, the split by source adds up to the stage's output.
    let per_stage = wide.provenance["sources"]["per-stage"].as_array().unwrap();
    let names: Vec<&str> = per_stage
        .iter()
        .map(|s| s["stage"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "2-candidates",
            "3-dedup",
            "4-look-back",
            "5-zipf",
            "6-lemmatize",
            "7-prune",
            "8-difficulty"
        ]
    );
    for s in per_stage {
        let stage = stages.iter().find(|x| x["stage"] == s["stage"]).unwrap();
        assert_eq!(
            s["filings"].as_u64().unwrap() + s["extra-sources-only"].as_u64().unwrap(),
            stage["output"].as_u64().unwrap(),
            "{s}"
        );
    }
    // The nouns skip the look-back (none is lost there); the rows they add have no filing behind them.
    assert!(per_stage[0]["extra-sources-only"].as_u64().unwrap() > 0);
    assert_eq!(
        per_stage[1]["extra-sources-only"],
        per_stage[2]["extra-sources-only"]
    );
    let nouns: Vec<_> = wide
        .entries
        .iter()
        .filter(|e| e.source_counts == 0)
        .collect();
    assert_eq!(
        nouns.len() as u64,
        per_stage[6]["extra-sources-only"].as_u64().unwrap()
    );
    assert!(nouns.iter().all(|e| e.zipf >= 3.0), "{nouns:?}");
    // The same settings give the same bytes.
    let again = build(&cfg, &corpus, resources(&wf, &wn, &mut Trigrams, None)).unwrap();
    assert_eq!(
        output::to_tsv(&again.entries),
        output::to_tsv(&wide.entries)
    );
    assert_eq!(again.provenance, wide.provenance);
}
