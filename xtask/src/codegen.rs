//! `cargo xtask codegen [--check]`: writes generated files (the config JSON schema), or checks they are current.

use std::path::Path;

use anyhow::bail;

/// The generated config schema, relative to the repository root.
pub(crate) const CONFIG_SCHEMA: &str = "configs/schema.json";

#[derive(Debug, clap::Args)]
pub(crate) struct CodegenArgs {
    /// Fail when a generated file is out of date instead of rewriting it.
    #[arg(long)]
    check: bool,
}

pub(crate) fn run(args: &CodegenArgs) -> anyhow::Result<()> {
    let root = repo_root();
    let path = root.join(CONFIG_SCHEMA);
    let want = pipeline::config::json_schema()?;
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    if have == want {
        tracing::info!(file = CONFIG_SCHEMA, "Up to date.");
        return Ok(());
    }
    if args.check {
        bail!("{CONFIG_SCHEMA} is out of date; run `cargo xtask codegen`");
    }
    schema::write_atomic(&path, want.as_bytes())?;
    tracing::info!(file = CONFIG_SCHEMA, "Wrote.");
    Ok(())
}

fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap_or(Path::new("."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_schema_is_current() {
        let want = pipeline::config::json_schema().unwrap();
        let have = std::fs::read_to_string(repo_root().join(CONFIG_SCHEMA)).unwrap_or_default();
        assert!(
            have == want,
            "{CONFIG_SCHEMA} is out of date; run `cargo xtask codegen`"
        );
    }

    #[test]
    fn shipped_configs_parse() {
        for name in ["default.toml", "ifscale-paper.toml", "rift-paper.toml"] {
            let path = repo_root().join("configs").join(name);
            pipeline::PipelineConfig::load(&path).unwrap_or_else(|e| panic!("{name}: {e:#}"));
        }
    }

    #[test]
    fn unknown_config_key_is_a_usage_error_naming_the_file_and_line() {
        let dir = std::env::temp_dir().join(format!("ifstress-codegen-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bad.toml");
        std::fs::write(
            &path,
            "[run]\nname = \"x\"\nmodels = [\"m\"]\ncolour = \"red\"\n",
        )
        .unwrap();
        let err = pipeline::PipelineConfig::load(&path).unwrap_err();
        assert!(err.downcast_ref::<pipeline::Failure>().is_some());
        let msg = err.to_string();
        assert!(
            msg.contains("bad.toml:4") && msg.contains("colour"),
            "{msg}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
