//! `cargo xtask test`: the README's test command. Makes sure the offline assets (and the `llama-server` the
//! real-server tests start) are in the cache, then runs every test.

use std::process::Command;

use anyhow::{Context, bail};

#[derive(Debug, clap::Args)]
pub(crate) struct TestArgs {
    /// Also run the tests marked `#[ignore = "needs ../shared/data/…"]` (they read `$IFSTRESS_SHARED_DATA`, default
    /// `../shared/data` beside the workspace, and fail when it is absent). `.ci/run` sets this.
    #[arg(long)]
    include_ignored: bool,
    /// Extra arguments passed to `cargo test` (e.g. `-p scoring`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    cargo_args: Vec<String>,
}

pub(crate) fn run(args: &TestArgs) -> anyhow::Result<()> {
    let cache = schema::env::cache_dir();
    for asset in pipeline::assets::ALL {
        pipeline::assets::ensure(&cache, asset)?;
    }
    crate::setup::ensure_llama_server(&cache)?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut cmd = Command::new(cargo);
    // Not the variables `cargo run` set for this program (they would rebuild dependencies a second time).
    schema::env::remove_cargo_run_vars(&mut cmd);
    cmd.arg("test");
    if args.cargo_args.is_empty() {
        cmd.arg("--workspace");
    } else {
        cmd.args(&args.cargo_args);
    }
    if args.include_ignored {
        let data = schema::env::shared_data_dir();
        if !data.is_dir() {
            bail!(pipeline::Failure::Usage(format!(
                "--include-ignored needs the shared data folder, but {} is absent (set {})",
                data.display(),
                schema::env::EnvVars::IFSTRESS_SHARED_DATA
            )));
        }
        if !args.cargo_args.iter().any(|a| a == "--") {
            cmd.arg("--");
        }
        cmd.arg("--include-ignored");
    }
    let status = cmd.status().context("running cargo test")?;
    if !status.success() {
        bail!("cargo test failed ({status})");
    }
    Ok(())
}
