//! How a command ends when it does not simply succeed: one enum for the outcomes a caller branches on, and their
//! exit codes.
//!
//! A library or command returns a [`Failure`] (inside its `anyhow` chain) for the outcomes that are not a plain
//! runtime error; `xtask`'s `exit_code` is the one place an error becomes a process exit code, through
//! [`Failure::exit_code`] and the [`EXIT_RUNTIME`] default.

/// Exit code: a runtime failure (a model, a file or a stage failed while running).
pub const EXIT_RUNTIME: u8 = 1;
/// Exit code: a usage or configuration error (bad flags, a bad config or input file, a missing API key); nothing
/// ran, or the run stopped before its first request.
pub const EXIT_USAGE: u8 = 2;
/// Exit code: finished but incomplete: every stage ran, but some prompts have no answer (failed after their
/// retries, or not sent because of the cost limit); the summary lists them per stage and a plain rerun continues.
/// Also a run stopped by Ctrl-C once its requests in flight were written (a second Ctrl-C exits 130 at once).
pub const EXIT_INCOMPLETE: u8 = 3;
/// Exit code: finished, but a judge failed its check (`[judge-check] min-sensitivity` or `min-specificity`); every
/// table and figure built from its verdicts is marked "judge failed its check". `[judge-check] keep-failed-judge`
/// keeps such verdicts on purpose (exit 0, the mark stays).
pub const EXIT_JUDGE_FAILED: u8 = 4;
/// Exit code: regression: `compare --fail-if-worse <pp>` did not show every candidate non-inferior to the baseline.
pub const EXIT_REGRESSION: u8 = 5;

/// An outcome that is not a plain runtime failure. Its message is the command's last line.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// The command was called or configured wrongly (exit code [`EXIT_USAGE`]).
    #[error("{0}")]
    Usage(String),
    /// The run finished without an answer to every prompt, or was stopped by a signal (exit code
    /// [`EXIT_INCOMPLETE`]).
    #[error("{0}")]
    Incomplete(String),
    /// The run finished, but a judge failed its check (exit code [`EXIT_JUDGE_FAILED`]).
    #[error("{0}")]
    JudgeFailed(String),
    /// The regression gate of a comparison failed (exit code [`EXIT_REGRESSION`]).
    #[error("{0}")]
    Regression(String),
}

impl Failure {
    /// This outcome's exit code.
    pub fn exit_code(&self) -> u8 {
        match self {
            Failure::Usage(_) => EXIT_USAGE,
            Failure::Incomplete(_) => EXIT_INCOMPLETE,
            Failure::JudgeFailed(_) => EXIT_JUDGE_FAILED,
            Failure::Regression(_) => EXIT_REGRESSION,
        }
    }

    /// Which outcome wins when an error's chain holds several: an incomplete run first (the rerun comes first and
    /// checks the judge again), then a failed judge, then a regression, then a usage error.
    fn precedence(&self) -> u8 {
        match self {
            Failure::Incomplete(_) => 0,
            Failure::JudgeFailed(_) => 1,
            Failure::Regression(_) => 2,
            Failure::Usage(_) => 3,
        }
    }

    /// The outcome an error stands for: the first by [`Failure::precedence`] of the `Failure`s in its chain
    /// (the error itself, its contexts and its sources).
    pub fn of(err: &anyhow::Error) -> Option<&Failure> {
        // `downcast_ref` on the error itself also finds a context (`.context(Failure::..)`), which `chain` does not.
        err.downcast_ref::<Failure>()
            .into_iter()
            .chain(err.chain().filter_map(|e| e.downcast_ref::<Failure>()))
            .min_by_key(|f| f.precedence())
    }
}

/// A usage error as an `anyhow::Error`.
pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    Failure::Usage(msg.into()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_incomplete_run_wins_over_a_failed_judge_in_either_order() {
        let both = anyhow::Error::new(Failure::JudgeFailed("j".to_owned()))
            .context(Failure::Incomplete("3 prompts".to_owned()));
        assert_eq!(
            Failure::of(&both).map(Failure::exit_code),
            Some(EXIT_INCOMPLETE)
        );
        let both = anyhow::Error::new(Failure::Incomplete("3 prompts".to_owned()))
            .context(Failure::JudgeFailed("j".to_owned()));
        assert_eq!(
            Failure::of(&both).map(Failure::exit_code),
            Some(EXIT_INCOMPLETE)
        );
    }

    #[test]
    fn a_context_is_found_and_plain_errors_have_no_outcome() {
        let err = anyhow::anyhow!("disk full").context(Failure::Usage("bad flag".to_owned()));
        assert_eq!(Failure::of(&err).map(Failure::exit_code), Some(EXIT_USAGE));
        assert!(Failure::of(&anyhow::anyhow!("disk full")).is_none());
        let codes = [
            EXIT_RUNTIME,
            EXIT_USAGE,
            EXIT_INCOMPLETE,
            EXIT_JUDGE_FAILED,
            EXIT_REGRESSION,
        ];
        for (i, a) in codes.iter().enumerate() {
            assert!(
                codes[i + 1..].iter().all(|b| a != b),
                "exit codes are distinct"
            );
        }
    }
}
