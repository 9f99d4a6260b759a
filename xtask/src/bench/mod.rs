//! `cargo xtask bench <name>`: benchmarks that run both sides of a comparison in one go and print them side by side.
//! Each benchmark lives in its own module here.

mod client;
mod local_model;

#[derive(Debug, clap::Subcommand)]
pub(crate) enum Bench {
    /// The inference client against a local mock with fixed latency: requests/s and client CPU per request at 64 and 256 in flight.
    Client(client::ClientArgs),
    /// The embedded model (SmolLM2 on llama.cpp via llama-cpp-2) against llama.cpp's own build: prompt and decode tok/s.
    LocalModel(local_model::LocalModelArgs),
}

pub(crate) fn run(bench: &Bench) -> anyhow::Result<()> {
    match bench {
        Bench::Client(args) => client::run(args),
        Bench::LocalModel(args) => local_model::run(args),
    }
}
