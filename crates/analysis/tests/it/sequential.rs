//! The sequential stopping rule by simulation (the figures in `docs/sequential.md`): with equal models and a look
//! after every batch, "better" or "worse" is decided in at most α of 1 000 runs; with models 5 points apart, most
//! runs stop before the whole grid.

use analysis::sequential::{SimOutcome, Simulation, simulate};

/// 1 000 runs of a grid of 600 paired prompts of 10 questions, 20 prompts a batch (30 looks), α = 0.05, margin 1 pp.
fn sim(delta: f64, seed: u64) -> SimOutcome {
    simulate(&Simulation {
        runs: 1000,
        grid: 600,
        batch: 20,
        questions: 10,
        delta,
        margin: 0.01,
        alpha: 0.05,
        seed,
    })
}

#[test]
fn equal_models_are_called_different_in_at_most_alpha_of_the_runs() {
    let out = sim(0.0, 1);
    assert!(out.better_or_worse <= 50, "{out:?}");
    assert_eq!(
        out.better_or_worse + out.within_margin + out.undecided,
        1000
    );
}

#[test]
fn models_five_points_apart_stop_before_the_whole_grid_in_most_runs() {
    let out = sim(0.05, 2);
    assert!(out.stopped_early > 500, "{out:?}");
    assert!(out.better > 500, "{out:?}");
    assert!(out.mean_items < 600.0, "{out:?}");
}
