//! The harness's loops against the mock provider (127.0.0.1 only, scripted replies).

mod ifscale;
mod pairs;
mod reports;
mod rift;
mod rift_batch;
mod rift_chunks;
mod rift_judge;
mod support;
