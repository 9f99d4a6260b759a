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
    for asset in crate::assets::ALL {
        crate::assets::ensure(&cache, asset)?;
    }
    crate::assets::ensure_llama_server(&cache)?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut cmd = Command::new(cargo);
    // `cargo run` gave this process the variables cargo sets for a package it runs (`CARGO_MANIFEST_DIR`,
    // `CARGO_PKG_NAME`...). Passed on, they reach build scripts that watch them (ring's watches
    // `CARGO_MANIFEST_DIR`), which then count as changed and rebuild with all their dependents (polars among
    // them): a second full build of the same dependencies. The inner cargo sets its own.
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        if key.starts_with("CARGO_PKG_")
            || key.starts_with("CARGO_MANIFEST_")
            || matches!(
                key.as_ref(),
                "CARGO_CRATE_NAME"
                    | "CARGO_BIN_NAME"
                    | "CARGO_PRIMARY_PACKAGE"
                    | "CARGO_RUSTC_CURRENT_DIR"
            )
        {
            cmd.env_remove(key.as_ref());
        }
    }
    cmd.arg("test");
    if args.cargo_args.is_empty() {
        cmd.arg("--workspace");
    } else {
        cmd.args(&args.cargo_args);
    }
    if args.include_ignored {
        let data = schema::env::shared_data_dir();
        if !data.is_dir() {
            bail!(crate::UsageError(format!(
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
