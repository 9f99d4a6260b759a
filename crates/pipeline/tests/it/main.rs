//! The pipeline crate's tests: one binary (`stages`: the list of stages drives the plan, the dry run, the pilot and
//! the progress line; `outcomes`: a run on the provider emulator ends every IFScale sample in one outcome).

mod outcomes;
mod stages;
