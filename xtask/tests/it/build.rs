//! The build's shape (docs/build-time.md): what `cargo build -p xtask` compiles, read off `cargo tree`.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Every package of `xtask`'s graph (`name vX.Y.Z`) with the features it is built with, for `cargo tree`'s extra
/// arguments `extra`.
fn graph(extra: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = Command::new(cargo)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "tree",
            "--package",
            "xtask",
            "--edges",
            "normal,build",
            "--prefix",
            "none",
        ])
        .args(["--format", "{p}|{f}"])
        .args(extra)
        .output()
        .expect("running cargo tree");
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut packages: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let Some((package, features)) = line.split_once('|') else {
            continue;
        };
        let mut words = package.split_whitespace();
        let (Some(name), Some(version)) = (words.next(), words.next()) else {
            continue;
        };
        let features = features.trim_end_matches(" (*)").trim();
        packages
            .entry(format!("{name} {version}"))
            .or_default()
            .extend(
                features
                    .split(',')
                    .filter(|f| !f.is_empty())
                    .map(str::to_owned),
            );
    }
    assert!(packages.contains_key("xtask v0.0.0"), "{packages:?}");
    packages
}

/// candle and tokenizers (the vocabulary's MiniLM embedder) are out of the ordinary build, and the rerun that
/// turns `minilm` on adds their crates without changing the features of any crate the two builds share (the
/// feature pins in `crates/vocab-pipeline/Cargo.toml`): otherwise that rerun would compile polars, llama.cpp and
/// everything on them a second time.
#[test]
fn minilm_changes_no_shared_crate() {
    let ordinary = graph(&[]);
    let with_minilm = graph(&["--features", "minilm"]);
    let is_candle = |p: &str| p.starts_with("candle-") || p.starts_with("tokenizers ");
    let left_out: Vec<&String> = ordinary.keys().filter(|p| is_candle(p)).collect();
    assert!(
        left_out.is_empty(),
        "the ordinary build compiles {left_out:?}"
    );
    assert!(
        with_minilm.keys().any(|p| p.starts_with("candle-core ")),
        "the minilm build has no candle"
    );
    let changed: Vec<String> = ordinary
        .iter()
        .filter(|(p, _)| !matches!(p.as_str(), "xtask v0.0.0" | "vocab-pipeline v0.0.0"))
        .filter_map(|(p, features)| {
            let other = with_minilm.get(p)?;
            (other != features).then(|| {
                let added: Vec<&String> = other.difference(features).collect();
                format!("{p} gains {added:?}")
            })
        })
        .collect();
    assert!(
        changed.is_empty(),
        "turning `minilm` on changes shared crates (pin these features in crates/vocab-pipeline/Cargo.toml): {changed:#?}"
    );
}
