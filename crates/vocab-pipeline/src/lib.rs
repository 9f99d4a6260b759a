//! The IFScale vocabulary pipeline: from a folder of 10-K filings to ranked one-word instructions.
//!
//! Stages: (1) corpus reading (text, HTML, EDGAR-CORPUS JSON), (2) candidate extraction (keyness against
//! wordfreq offline, or prompts for an LLM), (3) fuzzy dedup, (4) look-back in the raw text, (5) Zipf filter,
//! (6) guarded WordNet lemmatization, (7) embedding-based redundancy pruning (all-MiniLM-L6-v2 with candle, behind the `minilm` feature),
//! (8) difficulty ranking by completion perplexity. Extra candidate sources beside the filings (WordNet nouns within a
//! Zipf band, for the 10 000-term IFScale-XL list) are in [`sources`]. [`pipeline::build`] runs them all and returns the rows and a
//! provenance report; [`output`] writes the TSV.
//!
//! It deliberately knows nothing about where assets live (callers pass paths) or how a model is reached: model
//! calls go through a [`difficulty::PromptRunner`], normally [`client::ClientRunner`] over the inference client.
//! Its only network use of its own is [`edgar`], which downloads filings for `cargo xtask vocab fetch-10k`.

pub mod candidates;
pub mod client;
pub mod corpus;
pub mod dedup;
pub mod difficulty;
pub mod edgar;
pub mod embed;
pub mod lemma;
pub mod output;
pub mod pipeline;
pub mod prune;
pub mod sources;
pub mod wordfreq;

use std::path::{Path, PathBuf};

/// Errors of the vocabulary pipeline.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Bad input data: the file and what is wrong with it.
    #[error("{path}: {what}")]
    Input { path: PathBuf, what: String },
    #[error("configuration: {0}")]
    Config(String),
    /// A download failed: the URL and why.
    #[error("{url}: {what}")]
    Fetch { url: String, what: String },
    #[error("model: {0}")]
    Model(String),
    /// A part this build leaves out: it is compiled in by a cargo feature.
    #[error("this build leaves out {part}; it is compiled in by the cargo feature `{feature}`")]
    NotBuilt {
        part: &'static str,
        feature: &'static str,
    },
    #[error(transparent)]
    Schema(#[from] schema::Error),
}

impl Error {
    /// True for an error in the configuration (settings, models, a missing API key) rather than in the run.
    pub fn is_config(&self) -> bool {
        matches!(self, Error::Config(_))
    }

    pub(crate) fn io(path: &Path, source: std::io::Error) -> Error {
        Error::Io {
            path: path.to_owned(),
            source,
        }
    }
}
