//! Parts of the program that an ordinary build leaves out, and the rerun that compiles one in when a command needs it.
//!
//! The MiniLM embedder of the vocabulary's stage 7 (candle and tokenizers, a tenth of a cold build) serves only
//! `cargo xtask vocab build` and a pipeline that rebuilds its vocabulary, so `xtask` is built without it. Such a
//! command fails early with `vocab_pipeline::Error::NotBuilt` (before any asset is fetched or any model called);
//! [`rerun_if_missing`] then runs the same command line again through cargo with the `xtask` feature of the same
//! name, which compiles the part in once (later reruns reuse that build).

use std::path::Path;
use std::process::Command;

/// The cargo feature (of `xtask`, named as the crate feature it turns on) that compiles in the part this error's
/// chain says is missing.
pub fn missing_feature(err: &anyhow::Error) -> Option<&'static str> {
    err.chain()
        .find_map(|e| match e.downcast_ref::<vocab_pipeline::Error>() {
            Some(vocab_pipeline::Error::NotBuilt { feature, .. }) => Some(*feature),
            _ => None,
        })
}

/// When `err` says this build leaves out a part, runs this program's command line again as
/// `cargo run --package xtask --features <feature> -- <arguments>` in `cwd` (where it was typed, so relative paths
/// mean the same) and returns the rerun's exit code. `None` when the error is another one, or when there is no
/// workspace to build in (the binary run on its own): the caller reports the error, which names the feature.
pub fn rerun_if_missing(err: &anyhow::Error, cwd: &Path) -> Option<u8> {
    let feature = missing_feature(err)?;
    schema::env::workspace_root(cwd)?;
    tracing::info!(
        feature,
        "This command needs a part the ordinary build leaves out; building it in once and running the command again."
    );
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    schema::env::remove_cargo_run_vars(&mut cmd);
    cmd.current_dir(cwd)
        .args([
            "run",
            "--quiet",
            "--package",
            "xtask",
            "--features",
            feature,
            "--",
        ])
        .args(std::env::args_os().skip(1));
    match cmd.status() {
        // A rerun ended by a signal has no code; 130 is what a shell reports for Ctrl-C.
        Ok(status) => Some(status.code().map_or(130, |c| u8::try_from(c).unwrap_or(1))),
        Err(e) => {
            tracing::error!("cannot run cargo to build the feature `{feature}` in: {e}");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_missing_feature_is_found_anywhere_in_the_chain() {
        let err = anyhow::Error::from(vocab_pipeline::Error::NotBuilt {
            part: "the MiniLM embedder (candle)",
            feature: "minilm",
        })
        .context("building the vocabulary");
        assert_eq!(missing_feature(&err), Some("minilm"));
        assert_eq!(missing_feature(&anyhow::anyhow!("disk full")), None);
        let other = anyhow::Error::from(vocab_pipeline::Error::Model("timeout".to_owned()));
        assert_eq!(missing_feature(&other), None);
    }

    #[test]
    fn outside_a_workspace_nothing_is_rerun() {
        let dir = tempfile::tempdir().unwrap();
        let err = anyhow::Error::from(vocab_pipeline::Error::NotBuilt {
            part: "the MiniLM embedder (candle)",
            feature: "minilm",
        });
        assert_eq!(rerun_if_missing(&err, dir.path()), None);
    }
}
