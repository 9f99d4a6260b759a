//! `cargo xtask infer`: send a prompts file to one model, through the cache, into an append-only responses file.

use std::path::PathBuf;

use inference_client::{Engine, ModelConfig, Models};

use crate::client::{ClientArgs, ClientDefaults};
use pipeline::Failure;

#[derive(Debug, clap::Args)]
pub(crate) struct InferArgs {
    /// Prompts JSONL: one object per line with at least `id` and `messages` (OpenAI chat format).
    #[arg(long)]
    prompts: PathBuf,
    /// A model declared in the models file.
    #[arg(long, conflicts_with_all = ["base_url", "model_id"], required_unless_present = "base_url")]
    model: Option<String>,
    /// Ad-hoc model: the OpenAI-compatible base URL (e.g. http://127.0.0.1:8080/v1).
    #[arg(long, requires = "model_id")]
    base_url: Option<String>,
    /// Ad-hoc model: the model id sent in requests.
    #[arg(long, requires = "base_url")]
    model_id: Option<String>,
    /// Ad-hoc model: the environment variable holding the API key.
    #[arg(long, requires = "base_url")]
    api_key_env: Option<String>,
    /// Embedded models: run this GGUF file instead of the fetched SmolLM2 (overrides `$IFSTRESS_GGUF`).
    #[arg(long)]
    gguf: Option<PathBuf>,
    /// Responses JSONL (appended to; an existing file is resumed).
    #[arg(long)]
    out: PathBuf,
    /// Override the model's `max-tokens` (prompts' own `params.max_tokens` still win).
    #[arg(long)]
    max_tokens: Option<u32>,
    /// Override the model's per-attempt timeout in seconds.
    #[arg(long)]
    timeout_s: Option<f64>,
    /// Override the model's `server-wait-s`: how long to wait for a server that has not answered yet.
    #[arg(long)]
    server_wait_s: Option<f64>,
    /// Print prompt count, estimated input tokens and worst-case cost; send nothing.
    #[arg(long)]
    dry_run: bool,
    #[command(flatten)]
    client: ClientArgs,
}

#[allow(clippy::print_stdout)]
pub(crate) fn run(args: &InferArgs) -> anyhow::Result<()> {
    let mut model = resolve_model(args)?;
    if let Some(n) = args.max_tokens {
        model.max_tokens = Some(n);
    }
    if let Some(t) = args.timeout_s {
        model.timeout_s = t;
    }
    if let Some(w) = args.server_wait_s {
        model.server_wait_s = Some(w);
        model
            .validate("--server-wait-s")
            .map_err(|e| Failure::Usage(e.to_string()))?;
    }
    if let Some(g) = &args.gguf {
        if model.engine != Engine::Embedded {
            return Err(Failure::Usage(format!(
                "--gguf applies to embedded models; {:?} is not one",
                model.name
            ))
            .into());
        }
        model.gguf = Some(g.clone());
    }
    if model.engine == Engine::Embedded {
        pipeline::models::resolve_embedded(&mut model)?;
    }
    let prompts = harness::read_prompts(&args.prompts)?;
    let client = args.client.client(&ClientDefaults::standalone())?;

    if args.dry_run {
        let r = client.dry_run(&model, &prompts)?;
        println!("model                 {}", model.name);
        println!("prompts               {}", r.prompts);
        println!("already cached        {}", r.cached);
        println!(
            "est. input tokens     {} (characters / 4 + 4 per message)",
            r.est_input_tokens
        );
        println!("worst-case cost (USD) {:.4}", r.worst_case_cost_usd);
        if r.unbounded > 0 {
            println!(
                "without max_tokens    {} (their output cost is not bounded)",
                r.unbounded
            );
        }
        return Ok(());
    }
    let s = client.chat(&model, &prompts, &args.out)?;
    println!(
        "{} prompts: {} sent ({} HTTP requests, {} abandoned), {} from cache, {} resumed, {} failed, {} truncated, {} not sent (cost limit), {} not sent (stopped); ${:.4} spent; {} + {} tokens; {:.1} s",
        s.total,
        s.sent,
        s.requests,
        s.abandoned,
        s.cached,
        s.resumed,
        s.failed,
        s.truncated,
        s.skipped_for_cost,
        s.interrupted,
        s.spent_usd,
        s.prompt_tokens,
        s.completion_tokens,
        s.wall_s
    );
    if let Some(f) = &s.in_flight {
        println!(
            "in flight: mean {:.1} of {} allowed (peak {}); prompts waited {:.0} % of the time, {:.0} % with every slot busy",
            f.mean(),
            f.cap,
            f.peak,
            100.0 * f.backlog_share(),
            100.0 * f.saturated_share(),
        );
    }
    if s.failed > 0 {
        anyhow::bail!(
            "{} prompts failed (see the `error` field in {}); rerun to retry them",
            s.failed,
            args.out.display()
        );
    }
    Ok(())
}

fn resolve_model(args: &InferArgs) -> anyhow::Result<ModelConfig> {
    if let (Some(url), Some(id)) = (&args.base_url, &args.model_id) {
        let mut m = ModelConfig::ad_hoc(url, id);
        m.api_key_env.clone_from(&args.api_key_env);
        m.validate("--base-url/--model-id")
            .map_err(|e| Failure::Usage(e.to_string()))?;
        return Ok(m);
    }
    let name = args
        .model
        .as_deref()
        .ok_or_else(|| Failure::Usage("give --model or --base-url with --model-id".into()))?;
    let defaults = ClientDefaults::standalone();
    let models_file = args.client.models_file(&defaults);
    let models = Models::load(models_file).map_err(|e| Failure::Usage(e.to_string()))?;
    Ok(models
        .get(name)
        .map_err(|e| Failure::Usage(format!("{}: {e}", models_file.display())))?
        .clone())
}
