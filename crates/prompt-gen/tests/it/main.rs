//! The one integration-test binary of prompt-gen (one module per benchmark).

mod ifscale;
mod rift;
