//! `cargo xtask vocab build | fetch-10k`: the IFScale vocabulary pipeline's front end.
//!
//! `vocab build` reads its flags into the vocabulary settings and calls `pipeline::vocab::build` with the command's
//! client; `fetch-10k` calls `vocab_pipeline::edgar`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use pipeline::Failure;
use vocab_pipeline::difficulty::DifficultyMethod;
use vocab_pipeline::sources::ExtraSource;

use crate::client::{ClientArgs, ClientDefaults};

#[derive(Debug, clap::Subcommand)]
pub(crate) enum Vocab {
    /// Build a vocabulary from a folder of 10-K filings (offline by default).
    Build(BuildArgs),
    /// Download 10-K filings from SEC EDGAR (needs internet and a User-Agent with your contact).
    #[command(name = "fetch-10k")]
    Fetch10k(FetchArgs),
    /// Measure the difficulty stage's perplexity on a systematic sample of each list (to compare two lists on one
    /// model); prints per list the mean and median and the time taken.
    Difficulty(DifficultyArgs),
}

#[derive(Debug, clap::Args)]
pub(crate) struct DifficultyArgs {
    /// Vocabulary files (TSV or one term per line).
    #[arg(required = true)]
    lists: Vec<PathBuf>,
    /// Terms sampled per list (every len/N-th term).
    #[arg(long, default_value_t = 50)]
    sample: usize,
    /// TOML file with pipeline settings (its `[difficulty]` table: model, prompt, max tokens); defaults otherwise.
    #[arg(long)]
    config: Option<PathBuf>,
    #[command(flatten)]
    client: ClientArgs,
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
    /// Pool another candidate source with the filings' (repeatable; added to the settings' `extra-sources`):
    /// `wordnet-nouns` (single-word WordNet nouns within a Zipf band, `[wordnet-nouns]` in the settings).
    #[arg(long = "extra-source", value_parser = |s: &str| serde_json::from_value::<ExtraSource>(s.into()))]
    extra_source: Vec<ExtraSource>,
    /// Override how many terms are kept after the difficulty ranking.
    #[arg(long)]
    keep: Option<usize>,
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
        Vocab::Difficulty(args) => difficulty(args),
    }
}

fn parse_years(specs: &[String]) -> anyhow::Result<Vec<i32>> {
    let mut out = Vec::new();
    for s in specs {
        let bad = || {
            Failure::Usage(format!(
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
        .map_err(|e| Failure::Usage(e.to_string()))?;
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

#[allow(clippy::print_stdout)]
fn difficulty(args: &DifficultyArgs) -> anyhow::Result<()> {
    let settings = pipeline::vocab::load_settings(args.config.as_deref())?;
    let defaults = ClientDefaults::standalone();
    let client = Arc::new(args.client.client(&defaults)?);
    let start = std::time::Instant::now();
    let lists = pipeline::vocab::measure_difficulty(
        &args.lists,
        args.sample,
        &settings,
        args.client.models_file(&defaults),
        &client,
        &PathBuf::from("artifacts/vocab/difficulty"),
    )?;
    println!(
        "{}",
        pipeline::vocab::difficulty_table(&lists).to_markdown()
    );
    println!(
        "Model {} ({} completions of at most {} tokens), {:.1} s in all (cached answers are not sent again).",
        settings.difficulty.model,
        lists.iter().map(|l| l.1.len()).sum::<usize>(),
        settings.difficulty.max_tokens,
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

fn build(args: &BuildArgs) -> anyhow::Result<()> {
    let mut settings = pipeline::vocab::load_settings(args.config.as_deref())?;
    match args.difficulty {
        Some(Method::Perplexity) => settings.difficulty.method = DifficultyMethod::Perplexity,
        Some(Method::ZipfProxy) => settings.difficulty.method = DifficultyMethod::ZipfProxy,
        None => {}
    }
    if let Some(n) = args.samples {
        settings.difficulty.samples = n;
    }
    for s in &args.extra_source {
        if !settings.extra_sources.contains(s) {
            settings.extra_sources.push(*s);
        }
    }
    if let Some(keep) = args.keep {
        settings.difficulty.keep = keep;
    }
    if args.out.extension().and_then(|e| e.to_str()) != Some("tsv") {
        return Err(Failure::Usage(format!(
            "--out must end in .tsv, got {}",
            args.out.display()
        ))
        .into());
    }
    if !args.corpus.is_dir() {
        return Err(Failure::Usage(format!(
            "--corpus {} is not a folder",
            args.corpus.display()
        ))
        .into());
    }
    let defaults = ClientDefaults::standalone();
    let client = Arc::new(args.client.client(&defaults)?);
    pipeline::vocab::build(&pipeline::vocab::Build {
        corpus: &args.corpus,
        out: &args.out,
        settings: &settings,
        models_file: args.client.models_file(&defaults),
        client: &client,
        responses: &pipeline::vocab::standalone_responses(&args.out),
    })
}
