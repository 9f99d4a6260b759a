//! The one integration-test binary of the vocabulary pipeline (one module per area).

mod assets;
mod client;
mod edgar;
mod embeddings;
mod pipeline;
mod tenk;
