//! Turns per-sample records into the papers' metrics, tables and fits, for IFScale and RIFT.
//!
//! Inputs are record files written by the scoring stages (`schema::ifscale::SampleScore`, `schema::rift::PromptScore`,
//! `schema::rift::AnswerScore`), the published IFScale per-sample CSV, or Parquet answer tables.
//! Aggregations run on polars (lazy, streaming for the large RIFT answer table); fits and bootstrap intervals are plain Rust.
//! `all::analyse` writes every table of a run folder or of published data and returns the summaries that
//! `plots::all::draw` draws.
//! This crate knows nothing about models, HTTP, scoring rules or drawing: it reads scores and writes tables.

pub mod all;
pub mod answer_table;
pub mod compare;
pub mod fit;
pub mod ifscale;
pub mod judge_correction;
pub mod models;
pub mod rift;
pub mod sequential;
pub mod stats;
pub mod synthetic;
pub mod tables;

use std::path::PathBuf;

pub use polars;

/// Errors from reading inputs, computing aggregates and writing tables.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A record file could not be read or a record is malformed (names file, line and field).
    #[error(transparent)]
    Records(#[from] schema::Error),
    /// An input table is unusable: names the file and what is wrong (missing column, bad value, row).
    #[error("{path}: {message}")]
    Input { path: PathBuf, message: String },
    /// A polars query failed; `context` says which table or input.
    #[error("{context}: {source}")]
    Polars {
        context: String,
        source: polars::error::PolarsError,
    },
    /// The inputs hold nothing to aggregate.
    #[error("{0}")]
    Empty(String),
    /// A file the caller named is missing, or the inputs of [`all::analyse`] give nothing to analyse.
    #[error("{0}")]
    Usage(String),
}

impl Error {
    pub(crate) fn polars(
        context: impl Into<String>,
    ) -> impl FnOnce(polars::error::PolarsError) -> Error {
        let context = context.into();
        move |source| Error::Polars { context, source }
    }
}
