//! Builds prompts for both benchmarks: IFScale density prompts and RIFT baseline, linear and jumping prompts.
//!
//! Pure and deterministic: the same config and inputs give byte-identical prompt records on any machine.
//! It knows nothing about HTTP, models or scoring; randomness comes only from [`rng::Mt19937`].

pub mod ifscale;
pub mod rift;
pub mod rng;
