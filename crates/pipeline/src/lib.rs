//! The run as a library: `cargo xtask pipeline` is a call of [`run`].
//!
//! A run is its config ([`config::PipelineConfig`], strict TOML) resolved into a [`Run`] (models, judges, the run
//! folder, the one `inference_client::Client`), and the list of its stages as data ([`stages::list`]: each a
//! [`stage::Stage`] with its inputs, outputs, planned requests, work, and optionally its dry-run estimate and pilot).
//! Everything else is derived from that one list: execution ([`stage::Executor`]: freshness stamps from
//! `harness::fresh`, incomplete and stopped stages, Ctrl-C), the progress line's plan ([`plan::plan`]), the dry
//! run ([`dry_run`]), the pilot ([`pilot`]) and the summary ([`summary`]). A new stage is one entry of that list.
//! A sequential run ([`sequential`], `--until`) executes that list's data stages batch by batch over a growing prefix
//! of the grid, then the whole list once.
//!
//! Every stage that calls a model (the vocabulary's difficulty and extraction included) gets the run's one client,
//! so the budget (`--max-cost`), the spend ledger and Ctrl-C cover every request of a run.
//! The outcomes a caller branches on are one enum ([`outcome::Failure`]), each with its exit code.
//!
//! Whether a prompt fits a model's context window is decided in one place ([`fit`]): the run, the dry run and the
//! pilot leave out what does not fit, and name the model.
//!
//! It also owns the offline assets a run needs ([`assets`]) and the loading of model declarations ([`models`]).
//! It knows no command-line flags (xtask turns them into [`Options`] and a client), HTTP (inference-client), or
//! how a stage does its work (harness, prompt-gen, analysis, plots, vocab-pipeline).

pub mod assets;
pub mod config;
pub mod dry_run;
pub mod features;
pub mod fit;
pub mod merge;
mod metrics;
pub mod models;
pub mod outcome;
pub mod pilot;
pub mod plan;
mod rift_data;
pub mod routing;
mod run;
pub mod sequential;
pub mod shard;
pub mod stage;
pub mod stages;
pub mod summary;
pub mod vocab;

pub use config::PipelineConfig;
pub use outcome::Failure;
pub use rift_data::missing_clues_error;
pub use run::{Options, Run, analyse_and_draw, analyse_run, execute, run};
