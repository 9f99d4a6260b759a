//! `inference-client-run PROMPTS OUT BASE_URL MODEL_ID CACHE [CONCURRENCY]`: one ad-hoc run, no frills.
//!
//! The crash test kills this process with SIGKILL mid-run; `cargo xtask infer` is the real front door.

use std::path::PathBuf;
use std::process::ExitCode;

use inference_client::{Client, ModelConfig, RunOptions};
use schema::PromptRecord;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 5 {
        return ExitCode::from(2);
    }
    let prompts: Vec<PromptRecord> = match schema::read_jsonl(&PathBuf::from(&args[0])) {
        Ok(p) => p,
        Err(_) => return ExitCode::from(2),
    };
    let mut model = ModelConfig::ad_hoc(&args[2], &args[3]);
    model.retry_base_s = 0.01;
    model.timeout_s = 5.0;
    let mut opts = RunOptions::new(PathBuf::from(&args[4]));
    opts.concurrency = args.get(5).and_then(|c| c.parse().ok());
    let result = Client::new(opts).and_then(|c| c.chat(&model, &prompts, &PathBuf::from(&args[1])));
    match result {
        Ok(_) => ExitCode::SUCCESS,
        Err(_) => ExitCode::from(1),
    }
}
