//! The benchmarks behind `cargo xtask bench <name>`: each runs both sides of a comparison in one go and prints them
//! side by side (the client against a mock server, the embedded model against llama.cpp's own build, keyword
//! scoring against Python's `re`, polars against pandas), the paper-scale rehearsal of the whole pipeline, the
//! paired comparison of two paper-size RIFT runs (`compare`, timed alone), and the README's timings measured on the
//! machine at hand (`readme`). Each lives in its own module; xtask only parses the
//! flags and resolves the offline assets. `llama_cpp` builds llama.cpp's own programs (the reference driver, and
//! `llama-server` for the real-server tests) with the embedded engine's instruction-set options.
//!
//! A bad flag is this crate's own `UsageError` (exit code 2). Only xtask depends on this crate.

use std::path::PathBuf;

pub mod analysis;
pub mod client;
pub mod compare;
pub mod llama_cpp;
pub mod local_model;
mod mock_child;
pub mod pipeline;
pub mod readme;
pub mod scoring;

#[derive(Debug, clap::Subcommand)]
pub enum Bench {
    /// RIFT answer-table aggregation at the paper's scale (≈ 18.6 M rows): polars vs pandas.
    Analysis(analysis::AnalysisArgs),
    /// The paired comparison of two paper-size RIFT runs (2 × 3.2 M answers, 10 000 bootstrap resamples), timed.
    Compare(compare::CompareArgs),
    /// The inference client against a local mock with fixed latency: requests/s and client CPU per request at 64 and 256 in flight.
    Client(client::ClientBenchArgs),
    /// The embedded model (SmolLM2 on llama.cpp via llama-cpp-sys-2) against llama.cpp's own build: prompt and decode tok/s.
    LocalModel(local_model::LocalModelArgs),
    /// The paper-scale rehearsal: the RIFT paper grid for one model and the IFScale grid for three through the real
    /// pipeline against a mock with realistic replies; per stage wall time, CPU, peak RSS, rows and bytes; a cached rerun.
    Pipeline(pipeline::PipelineBenchArgs),
    /// The README's figures on this machine: a cold build (`--skip-cold-build` leaves it out), the default pipeline
    /// in an empty artifacts dir and `cargo xtask test`, with the date, CPU model and cores.
    Readme(readme::ReadmeArgs),
    /// IFScale keyword scoring of ≈ 200 reports: one Python `re.search` per keyword against the one-pass Rust matcher.
    Scoring(scoring::ScoringArgs),
}

/// A benchmark called wrongly (bad flags or values); the command line exits with its usage code.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Runs one benchmark; `default_gguf` gives the embedded model's weights when `bench local-model` is not given any.
pub fn run(
    bench: &Bench,
    default_gguf: impl Fn() -> anyhow::Result<PathBuf>,
) -> anyhow::Result<()> {
    match bench {
        Bench::Analysis(args) => analysis::run(args),
        Bench::Client(args) => client::run(args),
        Bench::Compare(args) => compare::run(args),
        Bench::LocalModel(args) => local_model::run(args, default_gguf),
        Bench::Pipeline(args) => pipeline::run(args, &std::env::current_exe()?),
        Bench::Readme(args) => readme::run(args, &std::env::current_exe()?),
        Bench::Scoring(args) => scoring::run(args),
    }
}
