//! What a run shows, from the files its stages wrote: what `report.html` and `summary.md` say (`RunReport`,
//! `report_input`, `summary_markdown`), with the overview of each benchmark's denominators (`overview`), the cost
//! per model from the responses and the spend ledger (`cost`), the vocabulary and output caps a run departs from the
//! paper with (`departures`), the per-sample explorer (`explorer`), the paired comparison of a multi-model run,
//! its files and report section (`compare`), where a sequential run stopped (`sequential`), and who answered each
//! model (`served`: upstream providers, served model ids and fingerprints, flagged when a model was answered by more
//! than one provider).
//!
//! It only reads run folders (`schema::paths`) and decides what goes on the pages; it never calls a model (that is
//! `harness`, whose judge checks, audits and judge tallies it shows), computes no table (that is `analysis`), and
//! draws and renders nothing itself (figures and HTML templates are `plots`). It knows no flags, config files, exit
//! codes or stage order (that is `xtask`).
//!
//! Errors are one `thiserror` [`Error`]; [`Error::is_usage`] tells input errors from runtime ones.

pub mod compare;
pub mod cost;
pub mod departures;
pub mod explorer;
pub mod overview;
mod report;
pub mod sequential;
pub mod served;

pub use report::{RunReport, list_files, report_input, summary_markdown};

use std::path::{Path, PathBuf};

/// Why a page could not be written.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading or writing a record file.
    #[error(transparent)]
    Records(#[from] schema::Error),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A file a stage of `harness` wrote (an audit, a judge check, an attempts log) could not be read.
    #[error(transparent)]
    Harness(#[from] harness::Error),
    /// A table could not be aggregated.
    #[error(transparent)]
    Analysis(#[from] analysis::Error),
    /// A figure (the comparison's) could not be drawn.
    #[error(transparent)]
    Plots(#[from] plots::Error),
    /// A file could not be written.
    #[error("{path}: {message}")]
    Output { path: PathBuf, message: String },
}

impl Error {
    /// True when the error is in the inputs (the command line's exit code 2), false when the run itself failed.
    pub fn is_usage(&self) -> bool {
        match self {
            Error::Harness(e) => e.is_usage(),
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
