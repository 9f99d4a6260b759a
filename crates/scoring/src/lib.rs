//! Turns model responses into scores: IFScale keyword matching and RIFT answer alignment and judging.
//!
//! Never calls a model: LLM judging is expressed as judge-request records written out and verdict records read back.
//! Knows nothing about HTTP, prompt construction or plotting.

pub mod ifscale;
pub mod judge_check;
pub mod rift;

#[cfg(test)]
mod tests {
    /// The workspace manifest builds this crate without overflow checks or debug assertions for the pipeline (the
    /// dev profile) and with both for `cargo test` (`[profile.test.package.scoring]`): arithmetic here is checked
    /// while the tests run, so an unintended wrap is a test failure.
    #[test]
    fn tests_run_with_overflow_checks_and_debug_assertions() {
        // Both compiled in this crate; `black_box` keeps the arguments from being folded at compile time.
        fn check(ok: bool) {
            debug_assert!(ok, "a debug assertion");
        }
        fn add(a: u8, b: u8) -> u8 {
            a + b
        }
        let fired = std::panic::catch_unwind(|| check(std::hint::black_box(false))).is_err();
        assert!(
            fired,
            "a failing debug_assert! did not panic: scoring's tests are built without debug assertions"
        );
        let (max, one) = (std::hint::black_box(u8::MAX), std::hint::black_box(1));
        assert_eq!(add(max - one, one), u8::MAX);
        let overflowed = std::panic::catch_unwind(|| add(max, one));
        assert!(
            overflowed.is_err(),
            "255 + 1 gave {overflowed:?} instead of panicking: scoring's tests are built without overflow checks"
        );
    }
}
