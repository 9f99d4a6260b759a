//! The benchmark loops that call models, as library functions with typed arguments: IFScale generation (attempts,
//! the paper's retry rules, the optional refusal judge, the coherence judge, the attempts log, failed samples), the RIFT stages (prep with
//! optional rephrasing, prompts, run, judge, score), the judge checks (`judge_check`), the hand audit of RIFT
//! judgments (`audit`), judging pairs outside a run (`pairs`), the IFScale score reports, request and cost estimates
//! (`estimate`), stage stamps (`fresh`), and synthetic model output for benchmarks and rehearsals (`synthetic`);
//! `helper` holds the configured settings of judge and rephrasing calls.
//!
//! It knows how a benchmark turns prompts into scored records and which files each stage reads and writes
//! (`schema::paths`). It deliberately doesn't know about command-line flags, config files, exit codes or the
//! pipeline's stage order (that is `xtask`), HTTP or caching (that is `inference-client`), how a keyword matches or
//! an answer aligns (that is `scoring`), tables (that is `analysis`), or what a run's report, summary, explorer and
//! comparison show (that is crate `report`, which depends on this one; figures and HTML are `plots`).
//! Every model call goes through the caller's `inference_client::Client` (one per command, so one budget and one
//! embedded engine), and every loop here resumes from its files.
//!
//! Errors are one `thiserror` [`Error`]; [`Error::is_usage`] tells input and configuration errors from runtime ones.
//! The tests run the loops against the mock provider (crate `mock-provider`) with scripted replies.

pub mod audit;
pub mod estimate;
pub mod fresh;
pub mod helper;
pub mod ifscale;
pub mod judge_check;
pub mod pairs;
pub mod reports;
pub mod rift;
pub mod synthetic;

use std::path::{Path, PathBuf};

/// Why a stage could not finish.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Input files or settings that cannot be used: a prompt without the benchmark's fields, a missing vocabulary,
    /// a malformed clue or report file, an impossible setting.
    #[error("{0}")]
    Input(String),
    /// The inference client could not start or had to stop.
    #[error(transparent)]
    Client(#[from] inference_client::Error),
    /// Reading or writing a record file.
    #[error(transparent)]
    Records(#[from] schema::Error),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The IFScale keyword matcher could not be built.
    #[error(transparent)]
    Matcher(#[from] scoring::ifscale::Error),
    /// Responses that do not match their RIFT prompts.
    #[error(transparent)]
    RiftScoring(#[from] scoring::rift::Error),
    /// The RIFT summary could not be aggregated.
    #[error(transparent)]
    Analysis(#[from] analysis::Error),
    /// A file could not be written.
    #[error("{path}: {message}")]
    Output { path: PathBuf, message: String },
}

impl Error {
    /// True when the error is in the inputs or the configuration (the command line's exit code 2), false when
    /// the run itself failed.
    pub fn is_usage(&self) -> bool {
        match self {
            Error::Input(_) => true,
            Error::Client(e) => e.is_config(),
            _ => false,
        }
    }

    pub(crate) fn io(path: &Path, source: std::io::Error) -> Error {
        Error::Io {
            path: path.to_owned(),
            source,
        }
    }
}

/// Reads a prompt text file (a template or a system prompt), dropping trailing whitespace.
pub fn read_text(path: &Path) -> Result<String, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    Ok(text.trim_end().to_owned())
}

/// Reads a prompts file; a malformed one is an input error.
pub fn read_prompts(path: &Path) -> Result<Vec<schema::PromptRecord>, Error> {
    schema::read_jsonl(path).map_err(|e| Error::Input(format!("reading prompts: {e}")))
}
