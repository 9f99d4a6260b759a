//! `cargo xtask`: the ifstress command line.
//!
//! Each subcommand is a thin layer over a stage crate's library entry point; it parses flags, reads configs,
//! and maps errors to exit codes (0 success, 1 runtime failure, 2 usage or config error).

mod assets;
mod bench;
mod codegen;
mod ifscale;
mod infer;
mod models;
mod pipeline;
mod plots;
mod rift;
mod test;
mod vocab;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// ifstress: measure how well language models follow instructions under stress (IFScale density, RIFT topology).
#[derive(Debug, Parser)]
#[command(name = "cargo xtask", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run every stage that is out of date, from offline assets to the HTML report (default: configs/default.toml).
    Pipeline(pipeline::PipelineArgs),
    /// Fetch and verify the offline assets (embedded model, word frequencies, embeddings) into the cache.
    Setup(assets::SetupArgs),
    /// Run every test of the workspace (fetching the offline assets first): the README's test command.
    Test(test::TestArgs),
    /// Send a prompts file to one model, through the response cache, into an append-only responses file.
    Infer(infer::InferArgs),
    /// Benchmarks that compare two implementations side by side in one run.
    #[command(subcommand)]
    Bench(bench::Bench),
    /// IFScale: density prompts, generation with the paper's retry rules, scoring.
    #[command(subcommand)]
    Ifscale(ifscale::Ifscale),
    /// Score IFScale reports (a generations CSV or a responses JSONL): per-sample rows and optional keyword labels.
    ScoreReports(ifscale::ScoreReportsArgs),
    /// RIFT: Jeopardy! prep, baseline/linear/jumping prompts, runs, LLM judging, scoring.
    #[command(subcommand)]
    Rift(rift::Rift),
    /// Regenerate every table and figure from artifacts alone (no model call).
    Plots(plots::PlotsArgs),
    /// The IFScale vocabulary: build it from 10-K filings, or fetch filings from SEC EDGAR.
    #[command(subcommand)]
    Vocab(vocab::Vocab),
    /// Regenerate generated files (configs/schema.json), or check they are current with --check.
    Codegen(codegen::CodegenArgs),
}

/// An error in how ifstress was called or configured (exit code 2), as opposed to a runtime failure (exit code 1).
#[derive(Debug)]
pub(crate) struct UsageError(pub(crate) String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing();
    let result = match cli.command {
        Command::Pipeline(args) => pipeline::run(&args),
        Command::Setup(args) => assets::run_setup(&args),
        Command::Test(args) => test::run(&args),
        Command::Infer(args) => infer::run(&args),
        Command::Bench(bench) => bench::run(&bench),
        Command::Ifscale(cmd) => ifscale::run(&cmd),
        Command::ScoreReports(args) => ifscale::score_reports(&args),
        Command::Rift(cmd) => rift::run(&cmd),
        Command::Plots(args) => plots::run(&args),
        Command::Vocab(cmd) => vocab::run(&cmd),
        Command::Codegen(args) => codegen::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            let usage = err
                .chain()
                .any(|e| e.downcast_ref::<UsageError>().is_some());
            tracing::error!("{err:#}");
            if usage {
                ExitCode::from(2)
            } else {
                ExitCode::from(1)
            }
        }
    }
}

fn init_tracing() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_env(schema::env::EnvVars::RUST_LOG)
        .unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(schema::env::log_ansi())
        .with_target(false)
        .init();
}
