//! `cargo xtask`: the ifstress command line.
//!
//! Each subcommand is a thin layer over a library entry point (the benchmark loops are in `harness`): it parses
//! flags, reads configs, calls the library and prints; [`exit_code`] is the one place errors become exit codes.
//!
//! It works from any folder of the workspace: a path typed on the command line is made absolute against the folder
//! it was typed in ([`parse_cli`]), then the command runs in the workspace root, so the default config and every
//! path inside a config are the root's.
//!
//! Ctrl-C (SIGINT or SIGTERM) in a command that calls models keeps what is paid for: the first signal stops
//! sending new requests and says so on one line, the requests in flight are waited for (`--drain-s`, 120 s by
//! default) and their answers written to the responses file and the cache, and the command exits 3 (incomplete:
//! a plain rerun continues without paying again). In `pipeline` the running stage stops like a cost-capped stage
//! (not marked done) and no further stage runs. A second signal quits at once (exit 130). See `signals`.
//!
//! Exit codes (listed in the README) are `pipeline::outcome`'s: a `pipeline::Failure` in an error's chain gives its
//! own code (usage 2, incomplete 3, judge failed 4, regression 5; an incomplete run that is also judge-failed exits
//! 3: the rerun comes first); a library's configuration error gives 2; anything else 1.

/// mimalloc, not the system allocator: the inference client and the stages make many small, short-lived buffers
/// (request bodies, streamed events, records), and glibc's allocator took 16 % of the client's CPU
/// (`cargo xtask bench client`, docs/scaling.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod client;
mod codegen;
mod compare;
mod ifscale;
mod infer;
mod pipeline;
mod plots;
mod rift;
mod setup;
mod signals;
mod test;
mod vocab;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ::pipeline::Failure;
use ::pipeline::outcome::{EXIT_RUNTIME, EXIT_USAGE};
use clap::{CommandFactory as _, FromArgMatches as _, Parser, Subcommand};

/// ifstress: measure how well language models follow instructions under stress (IFScale density, RIFT topology).
#[derive(Debug, Parser)]
#[command(name = "cargo xtask", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run every stage that is out of date, from offline assets to the HTML report (default: configs/default.toml).
    Pipeline(pipeline::PipelineArgs),
    /// Merge the run folders of `pipeline --shard` into one run and finish it (tables, figures, report, summary).
    Merge(pipeline::MergeArgs),
    /// Fetch and verify the offline assets (embedded model, word frequencies, embeddings) into the cache.
    Setup(setup::SetupArgs),
    /// Run every test of the workspace (fetching the offline assets first): the README's test command.
    Test(test::TestArgs),
    /// Send a prompts file to one model, through the response cache, into an append-only responses file.
    Infer(infer::InferArgs),
    /// Benchmarks that compare two implementations side by side in one run.
    #[command(subcommand)]
    Bench(bench::Bench),
    /// IFScale: density prompts, generation with the paper's retry rules, scoring.
    #[command(subcommand)]
    Ifscale(ifscale::Ifscale),
    /// Score IFScale reports (a generations CSV or a responses JSONL): per-sample rows and optional keyword labels.
    ScoreReports(ifscale::ScoreReportsArgs),
    /// RIFT: Jeopardy! prep, baseline/linear/jumping prompts, runs, LLM judging, scoring.
    #[command(subcommand)]
    Rift(rift::Rift),
    /// Regenerate every table and figure from artifacts alone (no model call).
    Plots(plots::PlotsArgs),
    /// Compare models and runs with paired statistics on the same items; `--fail-if-worse` gates regressions (exit 5).
    Compare(compare::CompareArgs),
    /// The IFScale vocabulary: build it from 10-K filings, or fetch filings from SEC EDGAR.
    #[command(subcommand)]
    Vocab(vocab::Vocab),
    /// Regenerate generated files (configs/schema.json), or check they are current with --check.
    Codegen(codegen::CodegenArgs),
}

fn main() -> ExitCode {
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(e) => {
            init_tracing();
            tracing::error!("cannot read the working directory: {e}");
            return ExitCode::from(EXIT_RUNTIME);
        }
    };
    let cli = parse_cli(&cwd);
    init_tracing();
    // Every command runs in the workspace root, wherever in the tree it was typed: the default config and the
    // paths inside configs are relative to the root, the paths typed on the command line were made absolute by
    // `parse_cli`. Outside any workspace (the binary run directly, as tests do) the working directory stays.
    if let Some(root) = schema::env::workspace_root(&cwd)
        && let Err(e) = std::env::set_current_dir(&root)
    {
        tracing::error!(
            "{}: cannot change into the workspace root: {e}",
            root.display()
        );
        return ExitCode::from(EXIT_RUNTIME);
    }
    let result = match cli.command {
        Command::Pipeline(args) => pipeline::run(&args),
        Command::Merge(args) => pipeline::merge(&args),
        Command::Setup(args) => setup::run_setup(&args),
        Command::Test(args) => test::run(&args),
        Command::Infer(args) => infer::run(&args),
        Command::Bench(b) => bench::run(&b, || {
            ::pipeline::assets::ensure(&schema::env::cache_dir(), &::pipeline::assets::SMOLLM2_GGUF)
        }),
        Command::Ifscale(cmd) => ifscale::run(&cmd),
        Command::ScoreReports(args) => ifscale::score_reports(&args),
        Command::Rift(cmd) => rift::run(&cmd),
        Command::Plots(args) => plots::run(&args),
        Command::Compare(args) => compare::run(&args),
        Command::Vocab(cmd) => vocab::run(&cmd),
        Command::Codegen(args) => codegen::run(&args),
    };
    let result = signals::finish(result);
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            if let Some(code) = ::pipeline::features::rerun_if_missing(&err, &cwd) {
                return ExitCode::from(code);
            }
            tracing::error!("{err:#}");
            ExitCode::from(exit_code(&err))
        }
    }
}

/// Parses the command line with every path argument that the user typed (or set in its environment variable)
/// made absolute against `cwd`, the folder it was typed in; a path argument's default stays relative, to the
/// workspace root.
fn parse_cli(cwd: &Path) -> Cli {
    let mut matches = typed_paths_from(Cli::command(), cwd).get_matches();
    Cli::from_arg_matches_mut(&mut matches).unwrap_or_else(|e| e.exit())
}

/// `cmd` and its subcommands with every `PathBuf` argument parsed by [`TypedPath`].
fn typed_paths_from(cmd: clap::Command, cwd: &Path) -> clap::Command {
    cmd.mut_args(|arg| {
        if arg.get_value_parser().type_id() == std::any::TypeId::of::<PathBuf>() {
            arg.value_parser(TypedPath(cwd.to_owned()))
        } else {
            arg
        }
    })
    .mut_subcommands(|sub| typed_paths_from(sub, cwd))
}

/// A path argument: absolute against the folder the command was typed in when the user gave it, as it is when it
/// is the argument's default (relative to the workspace root, where the command runs).
#[derive(Debug, Clone)]
struct TypedPath(PathBuf);

impl clap::builder::TypedValueParser for TypedPath {
    type Value = PathBuf;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<PathBuf, clap::Error> {
        self.parse_ref_(cmd, arg, value, clap::parser::ValueSource::CommandLine)
    }

    fn parse_ref_(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
        source: clap::parser::ValueSource,
    ) -> Result<PathBuf, clap::Error> {
        let path = clap::builder::PathBufValueParser::new().parse_ref(cmd, arg, value)?;
        Ok(if source == clap::parser::ValueSource::DefaultValue {
            path
        } else {
            self.0.join(path)
        })
    }
}

/// The exit code of a failed command: the code of the [`Failure`] in the error's chain (an incomplete run before a
/// failed judge, see `Failure::of`), else [`EXIT_USAGE`] when a library error in the chain says the command was
/// called or configured wrongly (a harness input error, an inference-client configuration error such as a missing
/// API key, a vocabulary configuration error, a benchmark's usage error), else [`EXIT_RUNTIME`].
pub(crate) fn exit_code(err: &anyhow::Error) -> u8 {
    if let Some(failure) = Failure::of(err) {
        return failure.exit_code();
    }
    let usage = err.chain().any(|e| {
        e.downcast_ref::<bench::UsageError>().is_some()
            || e.downcast_ref::<harness::Error>()
                .is_some_and(harness::Error::is_usage)
            || e.downcast_ref::<report::Error>()
                .is_some_and(report::Error::is_usage)
            || e.downcast_ref::<inference_client::Error>()
                .is_some_and(inference_client::Error::is_config)
            || e.downcast_ref::<vocab_pipeline::Error>()
                .is_some_and(vocab_pipeline::Error::is_config)
    });
    if usage { EXIT_USAGE } else { EXIT_RUNTIME }
}

fn init_tracing() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_env(schema::env::EnvVars::RUST_LOG)
        .unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(schema::env::log_ansi())
        .with_target(false)
        .init();
}

#[cfg(test)]
mod tests {
    use ::pipeline::outcome::{EXIT_INCOMPLETE, EXIT_JUDGE_FAILED, EXIT_REGRESSION};
    use anyhow::Context as _;

    use super::*;

    fn missing_key() -> inference_client::Error {
        inference_client::Error::MissingKey {
            model: "m".to_owned(),
            var: "KEY".to_owned(),
        }
    }

    #[test]
    fn a_missing_api_key_exits_2_from_every_layer() {
        let direct = anyhow::Error::new(missing_key()).context("infer");
        let through_harness = anyhow::Error::new(harness::Error::Client(missing_key()))
            .context("stage ifscale-generate:m");
        let through_vocab = anyhow::Error::new(vocab_pipeline::Error::Config(
            "difficulty on m: key".to_owned(),
        ));
        for err in [direct, through_harness, through_vocab] {
            assert_eq!(exit_code(&err), EXIT_USAGE, "{err:#}");
        }
    }

    #[test]
    fn usage_errors_exit_2_and_everything_else_1() {
        let usage: anyhow::Result<()> =
            Err(Failure::Usage("bad flag".to_owned())).context("reading the config");
        assert_eq!(exit_code(&usage.unwrap_err()), EXIT_USAGE);
        let input = anyhow::Error::new(harness::Error::Input("bad prompt".to_owned()));
        assert_eq!(exit_code(&input), EXIT_USAGE);
        let runtime = anyhow::Error::new(inference_client::Error::Setup("no runtime".to_owned()));
        assert_eq!(exit_code(&runtime), EXIT_RUNTIME);
        assert_eq!(exit_code(&anyhow::anyhow!("disk full")), EXIT_RUNTIME);
        assert_ne!(EXIT_INCOMPLETE, EXIT_RUNTIME);
        assert_ne!(EXIT_INCOMPLETE, EXIT_USAGE);
    }

    #[test]
    fn a_failed_judge_exits_4_and_an_incomplete_run_3_before_it() {
        let judge = anyhow::Error::new(Failure::JudgeFailed(
            "RIFT answer judge `j` failed its check".to_owned(),
        ));
        assert_eq!(exit_code(&judge), EXIT_JUDGE_FAILED);
        let both = anyhow::Error::new(Failure::JudgeFailed("j".to_owned())).context(
            Failure::Incomplete("3 prompts without an answer".to_owned()),
        );
        assert_eq!(exit_code(&both), EXIT_INCOMPLETE);
        for other in [EXIT_RUNTIME, EXIT_USAGE, EXIT_INCOMPLETE] {
            assert_ne!(EXIT_JUDGE_FAILED, other);
        }
    }

    /// The value of `--<id>` of the (nested) subcommand `path` of `args` as parsed in `cwd`.
    fn parsed(cwd: &str, args: &[&str], path: &[&str], id: &str) -> Vec<PathBuf> {
        let argv = std::iter::once(&"cargo xtask").chain(args);
        let matches = typed_paths_from(Cli::command(), Path::new(cwd))
            .try_get_matches_from(argv)
            .unwrap();
        let sub = path
            .iter()
            .fold(&matches, |m, name| m.subcommand_matches(name).unwrap());
        sub.get_many::<PathBuf>(id)
            .map(|v| v.cloned().collect())
            .unwrap_or_default()
    }

    #[test]
    fn typed_paths_are_relative_to_where_they_were_typed_and_defaults_to_the_root() {
        let cwd = "/ws/crates/analysis";
        let typed = [
            "pipeline",
            "--config",
            "../../configs/x.toml",
            "--cache",
            "/abs/c.sqlite",
        ];
        assert_eq!(
            parsed(cwd, &typed, &["pipeline"], "config"),
            [Path::new("/ws/crates/analysis/../../configs/x.toml")]
        );
        assert_eq!(
            parsed(cwd, &typed, &["pipeline"], "cache"),
            [Path::new("/abs/c.sqlite")]
        );
        let default = ["pipeline", "--dry-run"];
        assert_eq!(
            parsed(cwd, &default, &["pipeline"], "config"),
            [Path::new("configs/default.toml")]
        );
        assert!(parsed(cwd, &default, &["pipeline"], "cache").is_empty());
        // Nested subcommands and repeated paths too.
        let nested = ["bench", "pipeline", "--dir", "rehearsal"];
        assert_eq!(
            parsed(cwd, &nested, &["bench", "pipeline"], "dir"),
            [Path::new("/ws/crates/analysis/rehearsal")]
        );
        let default = ["bench", "pipeline"];
        assert_eq!(
            parsed(cwd, &default, &["bench", "pipeline"], "dir"),
            [Path::new("artifacts/rehearsal")]
        );
        let repeated = [
            "plots",
            "--ifscale-labels",
            "a.jsonl",
            "--ifscale-labels",
            "/b.jsonl",
        ];
        assert_eq!(
            parsed(cwd, &repeated, &["plots"], "ifscale_labels"),
            [
                Path::new("/ws/crates/analysis/a.jsonl"),
                Path::new("/b.jsonl")
            ]
        );
    }

    #[test]
    fn a_failed_regression_gate_exits_5() {
        let gate =
            anyhow::Error::new(Failure::Regression("gate failed".to_owned())).context("compare");
        assert_eq!(exit_code(&gate), EXIT_REGRESSION);
        for other in [EXIT_RUNTIME, EXIT_USAGE, EXIT_INCOMPLETE, EXIT_JUDGE_FAILED] {
            assert_ne!(EXIT_REGRESSION, other);
        }
    }
}
