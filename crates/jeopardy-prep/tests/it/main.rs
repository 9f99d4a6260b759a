//! Integration tests of the jeopardy-prep crate: one binary, one module per area.

mod summary;
