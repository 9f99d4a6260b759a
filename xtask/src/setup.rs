//! `cargo xtask setup`: the offline assets a run needs (`pipeline::assets`), and llama.cpp's own `llama-server` for
//! the real-server tests, built once from a pinned source distribution fetched through pip.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use pipeline::assets::{ALL, cached_path, ensure, pip_download};

#[derive(Debug, clap::Args)]
pub(crate) struct SetupArgs {
    /// Only check what is present; fetch nothing.
    #[arg(long)]
    check: bool,
}

pub(crate) fn run_setup(args: &SetupArgs) -> anyhow::Result<()> {
    let cache = schema::env::cache_dir();
    for asset in ALL {
        if args.check {
            let path = cached_path(&cache, asset);
            let ok = path.is_file() && schema::sha256_file_hex(&path)? == asset.sha256;
            tracing::info!(asset = asset.name, present = ok, path = %path.display(), "Checked asset.");
        } else {
            let path = ensure(&cache, asset)?;
            tracing::info!(asset = asset.name, path = %path.display(), licence = asset.licence, "Asset ready.");
        }
    }
    if args.check {
        let path = bench::llama_cpp::llama_server_path(&cache)?;
        tracing::info!(asset = "llama-server", present = path.is_file(), path = %path.display(), "Checked asset.");
    } else {
        let path = ensure_llama_server(&cache)?;
        tracing::info!(
            asset = "llama-server",
            path = %path.display(),
            licence = bench::llama_cpp::LLAMA_SERVER_SDIST.licence,
            "Asset ready."
        );
    }
    let cpu = local_model::cpu::CpuReport::detect();
    tracing::info!(features = %cpu.summary(), "The embedded model's llama.cpp uses these CPU extensions.");
    cpu.check()?;
    pipeline::assets::warn_if_wordnet_missing();
    Ok(())
}

/// Returns the path of llama.cpp's own `llama-server` (for the real-server tests), building it once when it is
/// missing: the pinned `llama-cpp-python` source distribution is fetched with pip into `<cache>/sdists`, checked
/// against its SHA-256, and its vendored llama.cpp built by `bench::llama_cpp` (about ten minutes on two cores).
pub(crate) fn ensure_llama_server(cache: &Path) -> anyhow::Result<PathBuf> {
    let bin = bench::llama_cpp::llama_server_path(cache)?;
    if bin.is_file() {
        return Ok(bin);
    }
    let sdist = bench::llama_cpp::LLAMA_SERVER_SDIST;
    let dir = cache.join("sdists");
    let file = dir.join(sdist.file);
    if file.is_file() && schema::sha256_file_hex(&file)? != sdist.sha256 {
        tracing::warn!(path = %file.display(), "Cached source distribution has the wrong checksum; fetching it again.");
        fs::remove_file(&file).with_context(|| format!("removing {}", file.display()))?;
    }
    if !file.is_file() {
        pip_download(sdist.pip_spec, sdist.file, &dir, true)?;
    }
    let got = schema::sha256_file_hex(&file)?;
    if got != sdist.sha256 {
        bail!(
            "{} has SHA-256 {got}, expected {}; delete it and run `cargo xtask setup` again",
            file.display(),
            sdist.sha256
        );
    }
    bench::llama_cpp::build_llama_server(cache, &file)
}
