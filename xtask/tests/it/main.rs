//! xtask's integration tests: the pipeline against the mock and against a real llama.cpp `llama-server`, the
//! rehearsal, and repository-wide checks that no compiler or lint enforces (in the spirit of rust-analyzer's
//! `tidy`). `.ci/run` runs them with every other test.

mod interrupt;
mod judge_check;
mod llama_server;
mod pipeline;
mod rehearsal;
mod tidy;
