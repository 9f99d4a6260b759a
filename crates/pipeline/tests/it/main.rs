//! The pipeline crate's tests: one binary (`stages`: the list of stages drives the plan, the dry run, the pilot and
//! the progress line; `sequential`: a sequential run is a prefix of the grid and a tighter rule sends only what is
//! new).

mod sequential;
mod stages;
