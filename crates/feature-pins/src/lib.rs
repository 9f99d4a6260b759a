//! Feature pins for the workspace's shared dependencies. This crate has no code: its manifest depends on crates
//! that several members share, with the union of the features the members use, so that `cargo test -p <member>`
//! for each member in turn (the README's test command) compiles every shared crate once, with one set of features,
//! instead of once per member. Without it, polars was compiled 7 times and llama.cpp twice (docs/build-time.md).
//!
//! Every member reaches it through `schema` (the pins without a feature: serde, syn, regex, hashbrown, …); the
//! members that reach tokio, hyper or polars depend on it with `full`. Nothing may call into it.
