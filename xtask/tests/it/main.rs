//! Repository-wide checks that no compiler or lint enforces (in the spirit of rust-analyzer's `tidy`).
//! `.ci/run` runs them with every other test.

mod judge_check;
mod pipeline;
mod rehearsal;
mod tidy;
