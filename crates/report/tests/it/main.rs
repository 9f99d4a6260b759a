//! What a run shows, from small fixed run folders: `summary.md`, the report's sections, the overview's counts and
//! the comparison.

mod compare;
mod overview;
mod report;
