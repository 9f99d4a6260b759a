//! xtask's integration tests: the pipeline against the mock and against a real llama.cpp `llama-server`, a job
//! array of shards on a real single-node Slurm from Debian's packages (`slurm`), the rehearsal, the default run's
//! reproducibility on the embedded model, the IFScale-XL grid on the embedded model up to its context window
//! (`xl_embedded`), and repository-wide checks that no compiler or lint enforces (in the spirit of rust-analyzer's
//! `tidy`). `.ci/run` runs them with every other test.

mod build;
mod compare;
mod interrupt;
mod judge_check;
mod llama_server;
mod one_writer;
mod papers;
mod pipeline;
mod rehearsal;
mod reproducible;
mod served;
mod shards;
mod slurm;
mod tidy;
mod vocab_stage;
mod workspace_root;
mod xl_embedded;

/// The absolute path of `path`, relative to the workspace root.
pub(crate) fn repo(path: &str) -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(path)
        .canonicalize()
        .unwrap()
        .display()
        .to_string()
}
