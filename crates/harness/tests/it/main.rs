//! The harness's loops against the inference client's mock server (127.0.0.1 only, scripted replies).

mod ifscale;
mod pairs;
mod report;
mod reports;
mod rift;
mod rift_batch;
mod rift_chunks;
mod rift_judge;
mod support;
