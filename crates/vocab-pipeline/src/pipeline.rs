//! The eight stages in order, with every stage's settings and counts collected for the provenance report.
//!
//! With `extra-sources` (e.g. WordNet nouns, `crate::sources`) their terms join stage 2's pooled candidates; the
//! provenance then has a `sources` object splitting each later stage's output into terms with a filing behind them
//! and terms from the extra sources only.
//!
//! [`model_free_stages`] runs stages 1–6 alone, with their counts; an ignored test checks them on `../shared/data/tenk`
//! against `test_data/tenk-stages.txt`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::Error;
use crate::candidates::{self, FilingCandidates, KeynessConfig, LlmExtractConfig};
use crate::corpus;
use crate::dedup::{self, DedupConfig};
use crate::difficulty::{self, DifficultyConfig, DifficultyMethod, PromptRunner};
use crate::embed::Embedder;
use crate::lemma::Lemmatizer;
use crate::output::VocabEntry;
use crate::prune;
use crate::sources::{self, ExtraSource, Tally, WordnetNounsConfig};
use crate::wordfreq::{WORDFREQ_ATTRIBUTION, WordFreq};

/// Which candidate extractor stage 2 uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Extractor {
    /// Keyness against wordfreq; no model (the offline default).
    Keyness,
    /// An LLM through the inference client (the paper's method).
    Llm,
}

/// Every setting of a vocabulary build.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct VocabConfig {
    pub extractor: Extractor,
    pub keyness: KeynessConfig,
    pub llm: Option<LlmExtractConfig>,
    pub dedup: DedupConfig,
    /// Stage 5 keeps terms with a wordfreq Zipf frequency at or above this.
    pub min_zipf: f64,
    /// Terms per embedding batch.
    pub embed_batch_size: usize,
    /// Stage 7 through an OpenAI-compatible `/v1/embeddings` endpoint: the name of a model in the models config
    /// (its first base URL, `model-id` and `api-key-env` are used). Unset: all-MiniLM-L6-v2 offline.
    pub embeddings_model: Option<String>,
    pub difficulty: DifficultyConfig,
    /// Candidate sources besides the filings (e.g. `["wordnet-nouns"]`), pooled into stage 2; none by default.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub extra_sources: Vec<ExtraSource>,
    /// Settings of the `wordnet-nouns` source (its defaults when unset).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wordnet_nouns: Option<WordnetNounsConfig>,
}

impl Default for VocabConfig {
    fn default() -> Self {
        VocabConfig {
            extractor: Extractor::Keyness,
            keyness: KeynessConfig::default(),
            llm: None,
            dedup: DedupConfig::default(),
            min_zipf: 1.0,
            embed_batch_size: 64,
            embeddings_model: None,
            difficulty: DifficultyConfig::default(),
            extra_sources: Vec::new(),
            wordnet_nouns: None,
        }
    }
}

/// What the pipeline needs besides its settings; all loaded by the caller.
pub struct Resources<'a> {
    pub wordfreq: &'a WordFreq,
    /// Provenance of the word frequency file (path and SHA-256).
    pub wordfreq_file: Value,
    pub lemmatizer: &'a Lemmatizer,
    pub wordnet_dir: PathBuf,
    pub embedder: &'a mut dyn Embedder,
    /// Provenance of the embedding model files.
    pub embedder_files: Value,
    /// Model runner for the LLM extractor and the perplexity method; `None` forbids both.
    pub runner: Option<&'a mut dyn PromptRunner>,
    /// Folder that relative prompt paths are resolved against (the repository root).
    pub root: PathBuf,
}

/// The result of a build.
#[derive(Debug, Clone)]
pub struct Built {
    pub entries: Vec<VocabEntry>,
    pub provenance: Value,
}

#[derive(Default)]
struct Stages(Vec<Value>);

impl Stages {
    fn push(&mut self, stage: &str, input: usize, output: usize, settings: Value, notes: Value) {
        tracing::info!(stage, input, output, "Stage done.");
        self.0.push(json!({ "stage": stage, "input": input, "output": output, "settings": settings, "notes": notes }));
    }
}

fn read_template(root: &Path, p: &Path) -> Result<(String, String), Error> {
    let path = if p.is_absolute() {
        p.to_owned()
    } else {
        root.join(p)
    };
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
    let sha = schema::sha256_hex(text.as_bytes());
    Ok((text, sha))
}

/// One stage's count of items in and out, as the provenance report records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageCount {
    pub stage: String,
    pub input: usize,
    pub output: usize,
}

/// Stages 1–6, the ones that need no model when stage 2 is the keyness extractor (reading the filings in
/// `corpus_dir`, candidates, dedup, look-back, Zipf, lemmas), with each stage's counts; stages 7 and 8 (embeddings
/// and difficulty) are left out. Returns the terms after stage 6, sorted.
pub fn model_free_stages(
    cfg: &VocabConfig,
    corpus_dir: &Path,
    wordfreq: &WordFreq,
    lemmatizer: &Lemmatizer,
) -> Result<(Vec<StageCount>, Vec<String>), Error> {
    if cfg.extractor != Extractor::Keyness {
        return Err(Error::Config(
            "the model-free stages need `extractor = \"keyness\"`".to_owned(),
        ));
    }
    let early = Early {
        cfg,
        corpus_dir,
        wordfreq,
        wordfreq_file: Value::Null,
        lemmatizer,
        wordnet_dir: Path::new(""),
        root: Path::new(""),
    };
    let mut stages = Stages::default();
    let lemmatized = early.run(None, &mut stages, &mut serde_json::Map::new(), &mut None)?;
    let counts = stages
        .0
        .iter()
        .map(|s| StageCount {
            stage: s["stage"].as_str().unwrap_or_default().to_owned(),
            input: s["input"].as_u64().unwrap_or_default() as usize,
            output: s["output"].as_u64().unwrap_or_default() as usize,
        })
        .collect();
    Ok((counts, lemmatized.groups.into_keys().collect()))
}

/// The settings and resources of stages 1–6.
struct Early<'a> {
    cfg: &'a VocabConfig,
    corpus_dir: &'a Path,
    wordfreq: &'a WordFreq,
    wordfreq_file: Value,
    lemmatizer: &'a Lemmatizer,
    wordnet_dir: &'a Path,
    root: &'a Path,
}

/// What stages 1–6 leave: the corpus's files (for the provenance report), and per term its spellings and candidate
/// proposals.
struct Lemmatized {
    files: Vec<corpus::CorpusFile>,
    groups: BTreeMap<String, (BTreeSet<String>, u64)>,
}

impl Early<'_> {
    /// Runs stages 1–6; stage 2's LLM extractor sends its prompts through `runner`.
    fn run(
        self,
        runner: Option<&mut (dyn PromptRunner + '_)>,
        stages: &mut Stages,
        models: &mut serde_json::Map<String, Value>,
        tally: &mut Option<(Tally, Vec<Value>)>,
    ) -> Result<Lemmatized, Error> {
        let Early {
            cfg,
            corpus_dir,
            wordfreq,
            wordfreq_file,
            lemmatizer,
            wordnet_dir,
            root,
        } = self;
        // 1. Corpus.
        let docs = corpus::load_dir(corpus_dir)?;
        let files: Vec<_> = docs.iter().map(|(d, n)| d.summary(*n)).collect();
        stages.push(
            "1-corpus",
            docs.len(),
            docs.len(),
            json!({ "dir": corpus_dir.display().to_string(), "formats": ["txt", "html", "edgar-corpus-json"] }),
            json!({ "words": files.iter().map(|f| f.words).sum::<u64>() }),
        );
        let docs: Vec<corpus::Document> = docs.into_iter().map(|(d, _)| d).collect();

        // 2. Candidates.
        let lists: Vec<FilingCandidates> = match cfg.extractor {
            Extractor::Keyness => docs
                .iter()
                .map(|d| {
                    candidates::keyness_candidates(
                        d,
                        wordfreq,
                        &|w| lemmatizer.is_common_word(w),
                        &cfg.keyness,
                    )
                })
                .collect(),
            Extractor::Llm => {
                let llm = cfg.llm.as_ref().ok_or_else(|| {
                    Error::Config("extractor = \"llm\" needs an [llm] table".to_owned())
                })?;
                let run = runner.ok_or_else(|| {
                    Error::Config("the LLM extractor needs a model runner".to_owned())
                })?;
                let (template, sha) = read_template(root, &llm.prompt)?;
                let prompts: Vec<schema::PromptRecord> = docs
                    .iter()
                    .map(|d| {
                        let mut extra = serde_json::Map::new();
                        extra.insert("filing".to_owned(), Value::String(d.name.clone()));
                        schema::PromptRecord {
                            id: format!("vocab-extract:{}", d.name),
                            messages: vec![schema::Message::user(candidates::extraction_prompt(
                                &template, d, llm,
                            ))],
                            sample_index: 0,
                            params: schema::RequestParams {
                                max_tokens: Some(llm.max_tokens),
                                ..Default::default()
                            },
                            extra,
                        }
                    })
                    .collect();
                let responses = run.run("vocab-extract", &llm.model, &prompts)?;
                models.insert("extractor".to_owned(), json!({ "model": llm.model, "client": run.describe(&llm.model), "prompt-sha256": sha }));
                let by_id: BTreeMap<&str, &schema::ResponseRecord> =
                    responses.iter().map(|r| (r.id.as_str(), r)).collect();
                docs.iter()
                    .map(|d| {
                        let id = format!("vocab-extract:{}", d.name);
                        let terms = by_id
                            .get(id.as_str())
                            .and_then(|r| r.content.as_deref())
                            .map(candidates::parse_term_list)
                            .unwrap_or_default();
                        FilingCandidates {
                            filing: d.name.clone(),
                            terms,
                        }
                    })
                    .collect()
            }
        };
        let mut counts = candidates::source_counts(&lists);
        let mut display: BTreeMap<String, String> = BTreeMap::new();
        for l in &lists {
            for t in &l.terms {
                let k = t.to_ascii_lowercase();
                // Keep a capitalized spelling (an acronym) when any filing used one.
                let e = display.entry(k).or_insert_with(|| t.clone());
                if t.bytes().all(|b| b.is_ascii_uppercase()) {
                    *e = t.clone();
                }
            }
        }
        let total_proposals: usize = lists.iter().map(|l| l.terms.len()).sum();
        let mut extra_notes = Vec::new();
        for source in cfg.extra_sources.iter().copied().collect::<BTreeSet<_>>() {
            let (terms, mut notes) = match source {
                ExtraSource::WordnetNouns => sources::wordnet_nouns(
                    lemmatizer,
                    wordfreq,
                    &cfg.wordnet_nouns.clone().unwrap_or_default(),
                ),
            };
            let mut new = 0usize;
            for t in terms {
                if let std::collections::btree_map::Entry::Vacant(e) = counts.entry(t.clone()) {
                    e.insert(0);
                    display.insert(t.clone(), t);
                    new += 1;
                }
            }
            notes["source"] = json!(source.name());
            notes["not-already-a-filing-candidate"] = json!(new);
            extra_notes.push(notes);
        }
        if !extra_notes.is_empty() {
            *tally = Some((Tally::default(), extra_notes.clone()));
        }
        let mut split = |stage: &str, counts: &mut dyn Iterator<Item = u64>| {
            if let Some((t, _)) = tally.as_mut() {
                let (filings, extra) =
                    counts.fold(
                        (0, 0),
                        |(f, e), c| if c > 0 { (f + 1, e) } else { (f, e + 1) },
                    );
                t.push(stage, filings, extra);
            }
        };
        split("2-candidates", &mut counts.values().copied());
        let extractor_settings = match cfg.extractor {
            Extractor::Keyness => json!({
                "extractor": "keyness",
                "formula": "(fpm_filing + n) / (fpm_wordfreq + n), fpm = occurrences per million words (Kilgarriff's simple maths)",
                "names": "a word capitalized like a name in at least name-share of its occurrences is dropped unless some WordNet synset spells it (or its lemma) in lowercase",
                "config": cfg.keyness,
            }),
            Extractor::Llm => json!({ "extractor": "llm", "config": cfg.llm }),
        };
        stages.push(
            "2-candidates",
            docs.len(),
            counts.len(),
            extractor_settings,
            {
                let mut n = json!({
                    "proposals": total_proposals,
                    "per-filing": lists.iter().map(|l| json!({ "filing": l.filing, "terms": l.terms.len() })).collect::<Vec<_>>(),
                });
                if !extra_notes.is_empty() {
                    n["extra-sources"] = Value::Array(extra_notes);
                }
                n
            },
        );

        // 3. Fuzzy dedup.
        let deduped = dedup::dedup(&counts, &display, &cfg.dedup);
        let merged: usize = deduped.iter().map(|c| c.merged.len()).sum();
        split("3-dedup", &mut deduped.iter().map(|c| c.source_count));
        stages.push(
            "3-dedup",
            counts.len(),
            deduped.len(),
            json!({
                "similarity": "strsim::normalized_levenshtein on lowercase spellings",
                "threshold": cfg.dedup.threshold,
                "tie-rule": "visit by descending filing count, then shorter, then alphabetical; join the first kept representative at or above the threshold",
            }),
            json!({ "merged-spellings": merged }),
        );

        // 4. Look-back.
        let seen = corpus::word_set(docs.iter().map(|d| d.text.as_str()));
        let n_in = deduped.len();
        // An extra source's term has no filing behind it: it was not extracted from the text, so there is nothing to
        // look back for.
        let looked: Vec<_> = deduped
            .into_iter()
            .filter(|c| c.source_count == 0 || seen.contains(&c.term.to_ascii_lowercase()))
            .collect();
        let mut look_back = json!({ "rule": "term equals a maximal run of ASCII letters somewhere in the corpus text, case-insensitively" });
        if !cfg.extra_sources.is_empty() {
            look_back["extra-sources"] =
                json!("not looked back: their terms were not extracted from the filings");
        }
        stages.push("4-look-back", n_in, looked.len(), look_back, Value::Null);
        split("4-look-back", &mut looked.iter().map(|c| c.source_count));

        // 5. Zipf.
        let n_in = looked.len();
        let frequent: Vec<_> = looked
            .into_iter()
            .filter(|c| wordfreq.zipf(&c.term) >= cfg.min_zipf)
            .collect();
        split("5-zipf", &mut frequent.iter().map(|c| c.source_count));
        stages.push(
            "5-zipf",
            n_in,
            frequent.len(),
            json!({ "min-zipf": cfg.min_zipf, "wordlist": "large_en", "file": wordfreq_file, "attribution": WORDFREQ_ATTRIBUTION }),
            Value::Null,
        );

        // 6. Lemmas.
        let n_in = frequent.len();
        let mut groups: BTreeMap<String, (BTreeSet<String>, u64)> = BTreeMap::new();
        let mut rejected = Vec::new();
        let mut changed = 0usize;
        let mut rare_lemma = 0usize;
        for c in &frequent {
            let l = lemmatizer.lemmatize(&c.term);
            if let Some(r) = &l.rejected {
                rejected.push(format!("{}→{}", c.term, r));
            }
            let key = if c.term.bytes().all(|b| b.is_ascii_uppercase()) {
                c.term.clone()
            } else if wordfreq.zipf(&l.lemma) < cfg.min_zipf {
                // The lemma itself would fail stage 5: keep the surface form, which passed it.
                rare_lemma += 1;
                c.term.to_ascii_lowercase()
            } else {
                l.lemma.clone()
            };
            if key != c.term.to_ascii_lowercase() && key != c.term {
                changed += 1;
            }
            let g = groups.entry(key).or_default();
            g.0.insert(c.term.clone());
            g.0.extend(c.merged.iter().cloned());
            g.1 += c.source_count;
        }
        split("6-lemmatize", &mut groups.values().map(|g| g.1));
        stages.push(
            "6-lemmatize",
            n_in,
            groups.len(),
            json!({
                "lemmatizer": "wordnet_stemmer 0.1.1, guarded",
                "wordnet": wordnet_dir.display().to_string(),
                "order": ["noun", "verb", "adj", "adv"],
                "zipf-rule": "a lemma whose own Zipf is below min-zipf is not used; the surface form is kept",
                "guard": "accept a lemma only if one detachment rule or one exception entry produces it and it is a WordNet word of that part of speech; otherwise keep the surface form when it is a WordNet word of that part of speech, else try the next one; acronyms are kept as they are",
            }),
            json!({ "changed": changed, "kept-surface-because-lemma-below-min-zipf": rare_lemma, "rejected-proposals": rejected.len(), "rejected-examples": rejected.iter().take(20).collect::<Vec<_>>() }),
        );
        Ok(Lemmatized { files, groups })
    }
}

/// Runs stages 1–8 on the filings in `corpus_dir`.
pub fn build(cfg: &VocabConfig, corpus_dir: &Path, res: Resources<'_>) -> Result<Built, Error> {
    let Resources {
        wordfreq,
        wordfreq_file,
        lemmatizer,
        wordnet_dir,
        embedder,
        embedder_files,
        mut runner,
        root,
    } = res;
    let mut stages = Stages::default();
    let mut models = serde_json::Map::new();
    let mut tally = None;
    let Lemmatized { files, groups } = Early {
        cfg,
        corpus_dir,
        wordfreq,
        wordfreq_file,
        lemmatizer,
        wordnet_dir: &wordnet_dir,
        root: &root,
    }
    .run(runner.as_deref_mut(), &mut stages, &mut models, &mut tally)?;
    let mut split = |stage: &str, terms: &[String]| {
        if let Some((t, _)) = tally.as_mut() {
            let filings = terms
                .iter()
                .filter(|term| groups.get(*term).is_some_and(|g| g.1 > 0))
                .count();
            t.push(stage, filings, terms.len() - filings);
        }
    };

    // 7. Redundancy pruning.
    let terms: Vec<String> = groups.keys().cloned().collect();
    let vectors = embedder.embed(&terms)?;
    if vectors.len() != terms.len() {
        return Err(Error::Model(format!(
            "embedder returned {} vectors for {} terms",
            vectors.len(),
            terms.len()
        )));
    }
    let nn = prune::nearest_neighbour_distances(&vectors);
    let dist: Vec<f32> = nn.iter().map(|x| x.0).collect();
    let (keep, mean) = prune::prune_below_mean(&dist);
    let pruned_examples: Vec<String> = {
        let kept: BTreeSet<usize> = keep.iter().copied().collect();
        (0..terms.len())
            .filter(|i| !kept.contains(i))
            .take(20)
            .map(|i| {
                format!(
                    "{} (nearest: {}, {:.3})",
                    terms[i],
                    nn[i].1.map_or("-", |j| terms[j].as_str()),
                    dist[i]
                )
            })
            .collect()
    };
    let kept_terms: Vec<String> = keep.iter().map(|&i| terms[i].clone()).collect();
    split("7-prune", &kept_terms);
    models.insert(
        "embeddings".to_owned(),
        json!({ "model": embedder.describe(), "files": embedder_files }),
    );
    stages.push(
        "7-prune",
        terms.len(),
        kept_terms.len(),
        json!({ "embedder": embedder.describe(), "distance": "1 - cosine to the nearest other term", "rule": "prune when distance < mean" }),
        json!({ "mean-distance": mean, "pruned-examples": pruned_examples }),
    );

    // 8. Difficulty.
    let dcfg = &cfg.difficulty;
    let (scored, settings, notes): (Vec<(String, f64)>, Value, Value) = match dcfg.method {
        DifficultyMethod::Perplexity => {
            let run = runner.ok_or_else(|| {
                Error::Config("difficulty method `perplexity` needs a model runner; use `zipf-proxy` to rank without a model".to_owned())
            })?;
            let (template, sha) = read_template(&root, &dcfg.prompt)?;
            let prompts = difficulty::build_prompts(&kept_terms, &template, dcfg);
            let responses = run.run("vocab-difficulty", &dcfg.model, &prompts)?;
            let (per, rep) = difficulty::score(&responses);
            models.insert(
                "difficulty".to_owned(),
                json!({ "model": dcfg.model, "client": run.describe(&dcfg.model) }),
            );
            let unscored = kept_terms.iter().filter(|t| !per.contains_key(*t)).count();
            let scored = per.into_iter().map(|(k, v)| (k, v.perplexity)).collect();
            (
                scored,
                json!({ "method": "perplexity", "definition": "mean over samples of exp(-mean token log-prob) of the completion", "config": dcfg, "prompt-sha256": sha }),
                json!({ "responses": rep, "unscored-terms": unscored }),
            )
        }
        DifficultyMethod::ZipfProxy => (
            kept_terms
                .iter()
                .map(|t| (t.clone(), 9.0 - wordfreq.zipf(t)))
                .collect(),
            json!({ "method": "zipf-proxy", "definition": "OFFLINE PROXY, not the paper's method: difficulty = 9 - Zipf (rarer words rank as harder)", "keep": dcfg.keep }),
            Value::Null,
        ),
    };
    let n_in = kept_terms.len();
    let ranked = difficulty::rank(scored, dcfg.keep);
    stages.push("8-difficulty", n_in, ranked.len(), settings, notes);
    split(
        "8-difficulty",
        &ranked.iter().map(|r| r.0.clone()).collect::<Vec<_>>(),
    );
    if ranked.len() < dcfg.keep {
        tracing::warn!(
            kept = ranked.len(),
            wanted = dcfg.keep,
            "Fewer terms than asked for survived the pipeline."
        );
    }

    let entries: Vec<VocabEntry> = ranked
        .into_iter()
        .map(|(term, difficulty)| {
            let (forms, sources) = groups.get(&term).cloned().unwrap_or_default();
            let lower = term.to_ascii_lowercase();
            let lemma_of = forms
                .into_iter()
                .filter(|f| f.to_ascii_lowercase() != lower)
                .collect();
            VocabEntry {
                zipf: wordfreq.zipf(&term),
                term,
                difficulty,
                lemma_of,
                source_counts: sources,
            }
        })
        .collect();

    let mut provenance = json!({
        "schema-version": 1,
        "generator": format!("ifstress vocab-pipeline {}", env!("CARGO_PKG_VERSION")),
        "corpus": { "dir": corpus_dir.display().to_string(), "files": files },
        "stages": stages.0,
        "models": models,
        "config": cfg,
        "attribution": { "wordfreq": WORDFREQ_ATTRIBUTION, "wordnet": "WordNet 3.0, Princeton University (WordNet 3.0 licence)" },
        "columns": {
            "term": "instruction word (WordNet lemma, or acronym in capitals)",
            "difficulty": "stage 8 score (see stages[7].settings.method)",
            "zipf": "wordfreq Zipf frequency of the term",
            "lemma_of": "candidate spellings collapsed into the term by dedup and lemmatization",
            "source_counts": "number of (filing, spelling) candidate proposals behind the term",
        },
    });
    if let Some((t, extra)) = tally {
        provenance["sources"] = t.report(extra);
    }
    Ok(Built {
        entries,
        provenance,
    })
}
pub use crate::candidates::LlmExtractConfig as LlmSettings;
