//! `cargo xtask test`: the README's test command. Makes sure the offline assets (and the `llama-server` the
//! real-server tests start) are in the cache, then runs every workspace member's tests alone, one
//! `cargo test -p <member>` after another (members from `cargo metadata`), so each crate is built with only the
//! features it declares itself (issue 42: a crate that compiled only through the workspace's feature unification
//! went unnoticed). It stops at the first member that fails and names it.

use std::process::Command;

use anyhow::{Context, bail};

#[derive(Debug, clap::Args)]
pub(crate) struct TestArgs {
    /// Also run the tests marked `#[ignore = "needs ../shared/data/…"]` (they read `$IFSTRESS_SHARED_DATA`, default
    /// `../shared/data` beside the workspace, and fail when it is absent). `.ci/run` sets this.
    #[arg(long)]
    include_ignored: bool,
    /// Extra arguments passed to each member's `cargo test` (e.g. `-- --nocapture`); when they pick packages
    /// themselves (`-p scoring`, `--workspace`), one `cargo test` runs with them instead of the loop.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    cargo_args: Vec<String>,
}

pub(crate) fn run(args: &TestArgs) -> anyhow::Result<()> {
    let cache = schema::env::cache_dir();
    for asset in pipeline::assets::ALL {
        pipeline::assets::ensure(&cache, asset)?;
    }
    crate::setup::ensure_llama_server(&cache)?;
    if args.include_ignored {
        let data = schema::env::shared_data_dir();
        if !data.is_dir() {
            bail!(pipeline::Failure::Usage(format!(
                "--include-ignored needs the shared data folder, but {} is absent (set {})",
                data.display(),
                schema::env::EnvVars::IFSTRESS_SHARED_DATA
            )));
        }
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    if picks_packages(&args.cargo_args) {
        return cargo_test(&cargo, &[], args)
            .with_context(|| format!("cargo test {}", args.cargo_args.join(" ")));
    }
    let members = workspace_members(&cargo)?;
    for (i, member) in members.iter().enumerate() {
        tracing::info!(
            member = %member,
            "Testing workspace member {} of {} alone.",
            i + 1,
            members.len()
        );
        cargo_test(&cargo, &["-p", member], args)
            .with_context(|| format!("the tests of workspace member `{member}` failed"))?;
    }
    tracing::info!(
        members = members.len(),
        "Every workspace member passed its tests alone."
    );
    Ok(())
}

/// Runs `cargo test <packages> <extra args> [-- --include-ignored]`.
fn cargo_test(cargo: &str, packages: &[&str], args: &TestArgs) -> anyhow::Result<()> {
    let mut cmd = Command::new(cargo);
    // Not the variables `cargo run` set for this program (they would rebuild dependencies a second time).
    schema::env::remove_cargo_run_vars(&mut cmd);
    cmd.arg("test").args(packages).args(&args.cargo_args);
    if args.include_ignored {
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

/// Whether the extra arguments (before any `--`) choose the packages themselves.
fn picks_packages(cargo_args: &[String]) -> bool {
    cargo_args.iter().take_while(|a| *a != "--").any(|a| {
        matches!(a.as_str(), "-p" | "--package" | "--workspace" | "--all")
            || a.starts_with("--package=")
            || (a.starts_with("-p") && a.len() > 2)
    })
}

/// The workspace members' package names, from `cargo metadata`, sorted by name.
fn workspace_members(cargo: &str) -> anyhow::Result<Vec<String>> {
    let mut cmd = Command::new(cargo);
    schema::env::remove_cargo_run_vars(&mut cmd);
    let out = cmd
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .output()
        .context("running cargo metadata")?;
    if !out.status.success() {
        bail!(
            "cargo metadata failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    member_names(&out.stdout)
}

/// The names of the packages `cargo metadata` lists as workspace members, sorted.
fn member_names(metadata: &[u8]) -> anyhow::Result<Vec<String>> {
    #[derive(serde::Deserialize)]
    struct Metadata {
        packages: Vec<Package>,
        workspace_members: Vec<String>,
    }
    #[derive(serde::Deserialize)]
    struct Package {
        name: String,
        id: String,
    }
    let meta: Metadata =
        serde_json::from_slice(metadata).context("reading the output of cargo metadata")?;
    let mut names: Vec<String> = meta
        .packages
        .into_iter()
        .filter(|p| meta.workspace_members.contains(&p.id))
        .map(|p| p.name)
        .collect();
    names.sort();
    if names.is_empty() {
        bail!("cargo metadata lists no workspace members");
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|&a| a.to_owned()).collect()
    }

    #[test]
    fn package_selection_is_recognised_before_the_test_binary_arguments_only() {
        for picked in [
            &["-p", "scoring"][..],
            &["-pscoring"],
            &["--package", "scoring"],
            &["--package=scoring"],
            &["--workspace"],
            &["--all", "--", "--nocapture"],
        ] {
            assert!(picks_packages(&strings(picked)), "{picked:?}");
        }
        for looped in [
            &[][..],
            &["--release"],
            &["--", "--nocapture"],
            &["--", "-p"],
        ] {
            assert!(!picks_packages(&strings(looped)), "{looped:?}");
        }
    }

    #[test]
    fn members_are_the_workspace_packages_sorted_by_name() {
        let metadata = br#"{
            "packages": [
                {"name": "xtask", "id": "path+file:///w/xtask#0.0.0"},
                {"name": "analysis", "id": "path+file:///w/crates/analysis#0.0.0"},
                {"name": "outside", "id": "registry+https://example#outside@1.0.0"}
            ],
            "workspace_members": ["path+file:///w/xtask#0.0.0", "path+file:///w/crates/analysis#0.0.0"]
        }"#;
        assert_eq!(member_names(metadata).unwrap(), ["analysis", "xtask"]);
        let empty = br#"{"packages": [], "workspace_members": []}"#;
        assert!(member_names(empty).is_err());
    }
}
