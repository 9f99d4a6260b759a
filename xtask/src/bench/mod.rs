//! `cargo xtask bench <name>`: benchmarks that run both sides of a comparison in one go and print them side by side.
//! Each benchmark lives in its own module here.

#[derive(Debug, clap::Subcommand)]
pub(crate) enum Bench {}

pub(crate) fn run(bench: &Bench) -> anyhow::Result<()> {
    match *bench {}
}
