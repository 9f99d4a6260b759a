//! The one integration-test binary of scoring (one module per benchmark).

mod ifscale;
