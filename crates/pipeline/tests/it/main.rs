//! The pipeline crate's tests: one binary (`stages`: the list of stages drives the plan, the dry run, the pilot and
//! the progress line; `judges`: the shipped configs' judges send the same requests after their move to
//! `[judges.<role>]`; `fit`: prompts that do not fit a model's context window are left out of all of them;
//! `outcomes`: a run on the provider emulator ends every IFScale sample in one outcome; `refusal_judge`: the
//! optional refusal judge decides only the replies the refusal detector cannot settle and is checked like every
//! judge; `sequential`: a sequential run is a prefix of the grid and a tighter rule sends only what is new).

mod fit;
mod judges;
mod outcomes;
mod refusal_judge;
mod sequential;
mod stages;
