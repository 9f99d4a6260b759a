//! `cargo xtask test`: the README's test command. Makes sure the offline assets are in the cache, then runs every test.

use std::process::Command;

use anyhow::{Context, bail};

#[derive(Debug, clap::Args)]
pub(crate) struct TestArgs {
    /// Extra arguments passed to `cargo test` (e.g. `-p scoring`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    cargo_args: Vec<String>,
}

pub(crate) fn run(args: &TestArgs) -> anyhow::Result<()> {
    let cache = schema::env::cache_dir();
    for asset in crate::assets::ALL {
        crate::assets::ensure(&cache, asset)?;
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut cmd = Command::new(cargo);
    cmd.arg("test");
    if args.cargo_args.is_empty() {
        cmd.arg("--workspace");
    } else {
        cmd.args(&args.cargo_args);
    }
    let status = cmd.status().context("running cargo test")?;
    if !status.success() {
        bail!("cargo test failed ({status})");
    }
    Ok(())
}
