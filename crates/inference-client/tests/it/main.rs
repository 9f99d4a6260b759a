//! Integration tests of the inference client against the crate's mock server on 127.0.0.1.

mod batch;
mod cache_keys;
mod config;
mod crash;
mod embeddings;
mod faults;
mod in_flight;
mod keep_alive;
mod liveness;
mod output;
mod pools;
mod providers;
mod streaming;
mod support;
