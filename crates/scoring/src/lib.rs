//! Turns model responses into scores: IFScale keyword matching and RIFT answer alignment and judging.
//!
//! Never calls a model: LLM judging is expressed as judge-request records written out and verdict records read back.
//! Knows nothing about HTTP, prompt construction or plotting.

pub mod ifscale;
pub mod rift;
