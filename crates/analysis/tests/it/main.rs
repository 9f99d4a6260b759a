//! Integration tests of the analysis crate: one binary, one module per area.

mod compare;
mod ifscale;
mod ifscale_extra;
mod judge_correction;
mod rift;
mod rift_compare;
mod rift_values;
mod sequential;
mod tables;
mod verdicts;
