//! Every environment variable ifstress reads, in one place.
//!
//! API keys are read only by `inference-client`, by the variable name a model's config gives (`api-key-env`);
//! the names below are the defaults and the project's own settings.
//!
//! Also the rules that read them: `log_ansi` (colour on stderr only when it is a terminal and `NO_COLOR` is unset or
//! empty), `shared_data_dir` (where the tests marked `#[ignore = "needs ../shared/data/…"]` find their data; they fail,
//! never skip, without it), `cache_dir`, and `remove_cargo_run_vars` (a child `cargo`, as `cargo xtask test` and `bench
//! readme` start, without the variables `cargo run` set, which would rebuild the dependencies).

/// Namespace for environment variable names.
pub struct EnvVars;

impl EnvVars {
    /// Folder for fetched offline assets (model weights, word frequencies); default `~/.cache/ifstress`.
    pub const IFSTRESS_CACHE_DIR: &'static str = "IFSTRESS_CACHE_DIR";
    /// Path of the GGUF file for the embedded model, overriding the fetched SmolLM2.
    pub const IFSTRESS_GGUF: &'static str = "IFSTRESS_GGUF";
    /// Threads for the embedded model (default: 2, or the number of cores if fewer).
    pub const IFSTRESS_THREADS: &'static str = "IFSTRESS_THREADS";
    /// Set to 1 to run tests that call live APIs.
    pub const RUN_LIVE_TESTS: &'static str = "RUN_LIVE_TESTS";
    /// Default key variable for OpenRouter models.
    pub const OPENROUTER_API_KEY: &'static str = "OPENROUTER_API_KEY";
    /// Default key variable for OpenAI models.
    pub const OPENAI_API_KEY: &'static str = "OPENAI_API_KEY";
    /// `tracing` filter for log output on stderr.
    pub const RUST_LOG: &'static str = "RUST_LOG";
    /// Set to any non-empty value to keep ANSI colour codes out of log output, even on a terminal (no-color.org).
    pub const NO_COLOR: &'static str = "NO_COLOR";
    /// The folder holding the data that tests marked `#[ignore = "needs ../shared/data/…"]` read (10-K filings,
    /// Jeopardy! clues, the IFScale reference files); default `../shared/data` beside the workspace.
    pub const IFSTRESS_SHARED_DATA: &'static str = "IFSTRESS_SHARED_DATA";
    /// A running OpenAI-compatible server (base URL ending in `/v1`: vLLM, Ollama, a llama-server started by
    /// hand) for xtask's real-server tests instead of the `llama-server` they start; needs
    /// `IFSTRESS_REAL_SERVER_MODEL`. The tests that stop the server or read llama-server's own errors always use
    /// their own `llama-server`.
    pub const IFSTRESS_REAL_SERVER_URL: &'static str = "IFSTRESS_REAL_SERVER_URL";
    /// The model id the real-server tests request from `IFSTRESS_REAL_SERVER_URL`.
    pub const IFSTRESS_REAL_SERVER_MODEL: &'static str = "IFSTRESS_REAL_SERVER_MODEL";
    /// Slurm job arrays: this task's id (`--shard auto/N`), the highest id of its submission (checked against N),
    /// and the submission's number of tasks (never read as the run's shard count: a resubmitted task sees its own).
    pub const SLURM_ARRAY_TASK_ID: &'static str = "SLURM_ARRAY_TASK_ID";
    pub const SLURM_ARRAY_TASK_MAX: &'static str = "SLURM_ARRAY_TASK_MAX";
    pub const SLURM_ARRAY_TASK_COUNT: &'static str = "SLURM_ARRAY_TASK_COUNT";
    /// Kubernetes indexed Jobs: this pod's index (`--shard auto/N`).
    pub const JOB_COMPLETION_INDEX: &'static str = "JOB_COMPLETION_INDEX";
    /// Standard cache base folder.
    pub const XDG_CACHE_HOME: &'static str = "XDG_CACHE_HOME";
    pub const HOME: &'static str = "HOME";
}

/// Whether log output on stderr may carry ANSI colour codes: only when stderr is a terminal and `NO_COLOR` is unset
/// or empty. Redirected logs (files, pipes, CI) stay plain text.
pub fn log_ansi() -> bool {
    use std::io::IsTerminal;
    use_ansi(
        std::io::stderr().is_terminal(),
        std::env::var_os(EnvVars::NO_COLOR).as_deref(),
    )
}

/// The rule of [`log_ansi`], given whether the output is a terminal and the value of `NO_COLOR`.
pub fn use_ansi(is_terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
    is_terminal && no_color.is_none_or(|v| v.is_empty())
}

/// Where the tests that need data a user's clone lacks find it: `$IFSTRESS_SHARED_DATA`, else `../shared/data`
/// beside the workspace. Those tests are `#[ignore = "needs ../shared/data/…"]` and fail (never skip) when it is
/// absent; `.ci/run` runs them with `--include-ignored`.
pub fn shared_data_dir() -> std::path::PathBuf {
    match std::env::var_os(EnvVars::IFSTRESS_SHARED_DATA).filter(|v| !v.is_empty()) {
        Some(dir) => std::path::PathBuf::from(dir),
        None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"),
    }
}

/// The folder `name` of the shared data ([`shared_data_dir`]), or a message saying it is absent and how to point at
/// it (a test that needs it fails with that message, never skips).
pub fn shared_data(name: &str) -> Result<std::path::PathBuf, String> {
    let dir = shared_data_dir().join(name);
    if dir.is_dir() {
        Ok(dir)
    } else {
        Err(format!(
            "{} is absent (set {} to the shared data folder)",
            dir.display(),
            EnvVars::IFSTRESS_SHARED_DATA
        ))
    }
}

/// The workspace that holds `dir`: the nearest folder at or above it whose `Cargo.toml` declares `[workspace]`, or
/// `None` outside any workspace. `cargo xtask` runs from there wherever in the tree it was typed (the default config
/// and every path inside a config are relative to it).
pub fn workspace_root(dir: &std::path::Path) -> Option<std::path::PathBuf> {
    dir.ancestors()
        .find(|d| {
            std::fs::read_to_string(d.join("Cargo.toml"))
                .is_ok_and(|text| text.lines().any(|l| l.trim() == "[workspace]"))
        })
        .map(std::path::Path::to_owned)
}

/// The offline-asset cache folder: `$IFSTRESS_CACHE_DIR`, else `$XDG_CACHE_HOME/ifstress`, else `~/.cache/ifstress`.
pub fn cache_dir() -> std::path::PathBuf {
    use std::path::PathBuf;
    if let Some(dir) = std::env::var_os(EnvVars::IFSTRESS_CACHE_DIR).filter(|v| !v.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os(EnvVars::XDG_CACHE_HOME).filter(|v| !v.is_empty()) {
        return PathBuf::from(dir).join("ifstress");
    }
    let home = std::env::var_os(EnvVars::HOME)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    home.join(".cache/ifstress")
}

/// Removes from a child `cargo` command the variables `cargo run` set for the program it ran (`CARGO_PKG_*`,
/// `CARGO_MANIFEST_*`, `CARGO_CRATE_NAME`, …). Passed on, they reach build scripts that watch them (ring's watches
/// `CARGO_MANIFEST_DIR`), which then count as changed and rebuild with all their dependents (polars among them): a
/// second full build of the same dependencies. The inner cargo sets its own.
pub fn remove_cargo_run_vars(cmd: &mut std::process::Command) {
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
}

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;

    use super::{use_ansi, workspace_root};

    #[test]
    fn the_workspace_root_is_the_nearest_folder_above_with_a_workspace_manifest() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("ws");
        let member = root.join("crates/analysis");
        let src = member.join("src");
        std::fs::create_dir_all(&src).unwrap();
        std::fs::write(
            root.join("Cargo.toml"),
            "[workspace]\nmembers = [\"crates/*\"]\n",
        )
        .unwrap();
        // A member's own manifest has no `[workspace]`: the search goes on above it.
        std::fs::write(
            member.join("Cargo.toml"),
            "[package]\nname = \"analysis\"\n",
        )
        .unwrap();
        for dir in [&root, &member, &src] {
            assert_eq!(
                workspace_root(dir).as_deref(),
                Some(root.as_path()),
                "{}",
                dir.display()
            );
        }
        assert_eq!(workspace_root(tmp.path()), None);
    }

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        let cases: [(bool, Option<&str>, bool); 6] = [
            (true, None, true),
            (true, Some(""), true),
            (true, Some("1"), false),
            (true, Some("false"), false),
            (false, None, false),
            (false, Some("1"), false),
        ];
        for (is_terminal, no_color, want) in cases {
            assert_eq!(
                use_ansi(is_terminal, no_color.map(OsStr::new)),
                want,
                "terminal {is_terminal}, NO_COLOR {no_color:?}"
            );
        }
    }
}
