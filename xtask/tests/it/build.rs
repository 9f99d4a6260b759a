//! The build's shape (docs/build-time.md): what `cargo build -p xtask` and the per-member test builds compile,
//! read off `cargo tree`.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// `cargo tree --prefix none --format {p}|{f}` with `args`, in the workspace: one line per package and feature set.
fn tree(args: &[&str]) -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = Command::new(cargo)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["tree", "--prefix", "none", "--format", "{p}|{f}"])
        .args(args)
        .output()
        .expect("running cargo tree");
    assert!(
        out.status.success(),
        "cargo tree {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The lines of `cargo tree` as (`name vX.Y.Z`, its features), once each (a package built for the build machine
/// with other features than for the target is a second pair). With `registry_only`, the workspace's own crates
/// (listed with their path) are left out.
fn packages(tree: &str, registry_only: bool) -> BTreeSet<(String, BTreeSet<String>)> {
    let mut packages = BTreeSet::new();
    for line in tree.lines() {
        let Some((package, features)) = line.split_once('|') else {
            continue;
        };
        let mut words = package.split_whitespace();
        let (Some(name), Some(version)) = (words.next(), words.next()) else {
            continue;
        };
        // A workspace crate's line names its folder; a proc macro's ends in "(proc-macro)".
        if registry_only && words.any(|w| w.contains('/')) {
            continue;
        }
        let features = features.trim_end_matches(" (*)").trim();
        let features = features
            .split(',')
            .filter(|f| !f.is_empty())
            .map(str::to_owned)
            .collect();
        packages.insert((format!("{name} {version}"), features));
    }
    packages
}

/// Every package of `xtask`'s graph (`name vX.Y.Z`) with the features it is built with, for `cargo tree`'s extra
/// arguments `extra`.
fn graph(extra: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
    let mut args = vec!["--package", "xtask", "--edges", "normal,build"];
    args.extend_from_slice(extra);
    let mut packages: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (package, features) in self::packages(&tree(&args), false) {
        packages.entry(package).or_default().extend(features);
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
        "turning `minilm` on changes shared crates (pin these features in crates/feature-pins/Cargo.toml): {changed:#?}"
    );
}

/// The README's test command tests one member at a time (`cargo test -p <member>`), and cargo resolves features
/// per build: a shared crate that two members build with different features is compiled twice, with everything on
/// it (before `crates/feature-pins`, polars 7 times and llama.cpp twice). So for every registry package, some
/// member's test graph holds every feature set the package has anywhere in the workspace (a package has two only
/// when it is also built for the build machine, with other features). The workspace's own crates are compiled for
/// each member anyway (as test targets or with other dev-dependencies) and are cheap.
#[test]
fn every_member_builds_shared_crates_alike() {
    let metadata = tree(&["--workspace", "--depth", "0", "--edges", "no-dev"]);
    let members: Vec<String> = self::packages(&metadata, false)
        .into_iter()
        .map(|(package, _)| package.split_whitespace().next().unwrap().to_owned())
        .collect();
    assert!(members.len() >= 15, "{members:?}");
    let graphs: BTreeMap<&str, BTreeSet<(String, BTreeSet<String>)>> = members
        .iter()
        .map(|member| {
            let tree = tree(&["--package", member, "--edges", "normal,build,dev"]);
            (member.as_str(), self::packages(&tree, true))
        })
        .collect();
    let mut variants: BTreeMap<&str, BTreeSet<&BTreeSet<String>>> = BTreeMap::new();
    for (package, features) in graphs.values().flatten() {
        variants.entry(package).or_default().insert(features);
    }
    let mut differ = Vec::new();
    for (package, all) in &variants {
        let whole = graphs.values().any(|graph| {
            all.iter()
                .all(|features| graph.contains(&((*package).to_owned(), (*features).clone())))
        });
        if !whole {
            let union: BTreeSet<&String> = all.iter().copied().flatten().collect();
            let lacking: Vec<String> = graphs
                .iter()
                .filter_map(|(member, graph)| {
                    let mine: BTreeSet<&String> = graph
                        .iter()
                        .filter(|(p, _)| p == package)
                        .flat_map(|(_, f)| f)
                        .collect();
                    let missing: Vec<&&String> = union.difference(&mine).collect();
                    (!mine.is_empty() && !missing.is_empty())
                        .then(|| format!("{member} lacks {missing:?}"))
                })
                .collect();
            differ.push(format!("{package}: {}", lacking.join("; ")));
        }
    }
    assert!(
        differ.is_empty(),
        "members build these shared crates with different features, so each is compiled more than once; pin the \
         union in crates/feature-pins/Cargo.toml:\n{}",
        differ.join("\n")
    );
}

/// The crates that only run while building (proc macros, the build scripts' dependencies and theirs) are compiled
/// at opt-level 0, every other dependency at 2. `[profile.dev.package."*"]` takes precedence over cargo's
/// `build-override` (which leaves them unoptimised by default), so Cargo.toml names them one by one; this keeps that
/// list equal to the crates `cargo tree` reaches only through build-dependency and proc-macro edges. A name that is
/// also built for the program is given with its version, so the program's copy stays optimised.
#[test]
fn only_build_time_crates_are_unoptimised() {
    let versions = |tree: &str| -> BTreeSet<(String, String)> {
        self::packages(tree, true)
            .into_iter()
            .map(|(package, _)| {
                let (name, version) = package.split_once(" v").unwrap();
                (name.to_owned(), version.to_owned())
            })
            .collect()
    };
    let everything = versions(&tree(&["--workspace", "--edges", "normal,build,dev"]));
    let program = versions(&tree(&[
        "--workspace",
        "--edges",
        "normal,dev,no-proc-macro",
    ]));
    let expected: BTreeSet<String> = everything
        .difference(&program)
        .map(|(name, version)| {
            if program.iter().any(|(n, _)| n == name) {
                format!("{name}@{version}")
            } else {
                name.clone()
            }
        })
        .collect();
    assert!(
        expected.contains("syn") && expected.contains("serde_derive"),
        "{expected:?}"
    );
    let manifest: toml::Value = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml"),
    )
    .unwrap()
    .parse()
    .unwrap();
    let listed: BTreeSet<String> = manifest["profile"]["dev"]["package"]
        .as_table()
        .unwrap()
        .iter()
        .filter(|(_, o)| o.get("opt-level").and_then(toml::Value::as_integer) == Some(0))
        .map(|(name, _)| name.clone())
        .collect();
    let missing: Vec<&String> = expected.difference(&listed).collect();
    let stale: Vec<&String> = listed.difference(&expected).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "Cargo.toml's `[profile.dev.package]` should list with `opt-level = 0` exactly the crates used only while \
         building; add {missing:?}, remove {stale:?}"
    );
}
