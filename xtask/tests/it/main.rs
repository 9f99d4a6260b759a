//! Repository-wide checks that no compiler or lint enforces (in the spirit of rust-analyzer's `tidy`).
//! `.ci/run` runs them with every other test.

mod interrupt;
mod pipeline;
mod rehearsal;
mod tidy;
