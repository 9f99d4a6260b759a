//! Integration tests of the analysis crate: one binary, one module per area.

mod ifscale;
mod rift;
mod tables;
