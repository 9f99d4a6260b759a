//! The pipeline crate's tests: one binary (`stages`: the list of stages drives the plan, the dry run, the pilot and
//! the progress line).

mod stages;
