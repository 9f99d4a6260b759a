//! `cargo xtask bench <name>`: benchmarks that run both sides of a comparison in one go and print them side by side.
//! Each benchmark lives in its own module here.

mod analysis;
mod client;
mod local_model;
mod scoring;

#[derive(Debug, clap::Subcommand)]
pub(crate) enum Bench {
    /// RIFT answer-table aggregation at the paper's scale (≈ 18.6 M rows): polars vs pandas.
    Analysis(analysis::AnalysisArgs),
    /// The inference client against a local mock with fixed latency: requests/s and client CPU per request at 64 and 256 in flight.
    Client(client::ClientBenchArgs),
    /// The embedded model (SmolLM2 on llama.cpp via llama-cpp-2) against llama.cpp's own build: prompt and decode tok/s.
    LocalModel(local_model::LocalModelArgs),
    /// IFScale keyword scoring of ≈ 200 reports: one Python `re.search` per keyword against the one-pass Rust matcher.
    Scoring(scoring::ScoringArgs),
}

pub(crate) fn run(bench: &Bench) -> anyhow::Result<()> {
    match bench {
        Bench::Analysis(args) => analysis::run(args),
        Bench::Client(args) => client::run(args),
        Bench::LocalModel(args) => local_model::run(args),
        Bench::Scoring(args) => scoring::run(args),
    }
}
