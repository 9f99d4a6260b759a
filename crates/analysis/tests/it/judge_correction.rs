//! The judge correction's interval against simulated runs whose truth is known: judges with sensitivity and
//! specificity drawn between 0.8 and 0.99, measured on 50 control items of each kind (the default `per-kind`), and
//! the 95 % interval's coverage of the true share within 2 points of nominal over 2 000 runs (simulation error
//! ≈ 0.5 point). A run whose measured judge is refused as unstable (a 0.8/0.8 judge can measure J's lower bound
//! below 0.2 by chance) gives no interval: it is counted, must stay rare, and the coverage is over the others.

use analysis::judge_correction::{
    Calibration, Count, Side, correct, corrected_difference, corrected_value,
};
use analysis::stats::SplitMix64;

const RUNS: usize = 2000;
const CONTROLS: u64 = 50;

fn uniform(rng: &mut SplitMix64, lo: f64, hi: f64) -> f64 {
    lo + (hi - lo) * rng.unit()
}

fn binomial(rng: &mut SplitMix64, n: u64, p: f64) -> u64 {
    (0..n).filter(|_| rng.unit() < p).count() as u64
}

/// A judge's verdicts on `n` items of true share `theta`: how many it calls correct.
fn judged(rng: &mut SplitMix64, n: u64, theta: f64, se: f64, sp: f64) -> u64 {
    (0..n)
        .filter(|_| {
            let truth = rng.unit() < theta;
            let u = rng.unit();
            if truth { u < se } else { u >= sp }
        })
        .count() as u64
}

fn calibration(rng: &mut SplitMix64, se: f64, sp: f64) -> Calibration {
    Calibration {
        sensitivity: Count::new(binomial(rng, CONTROLS, se), CONTROLS),
        specificity: Count::new(binomial(rng, CONTROLS, sp), CONTROLS),
    }
}

#[test]
fn the_corrected_interval_covers_the_truth_at_its_nominal_rate() {
    let mut rng = SplitMix64::new(44);
    let (mut covered, mut raw_covered, mut refused) = (0usize, 0usize, 0usize);
    for _ in 0..RUNS {
        let (se, sp) = (uniform(&mut rng, 0.8, 0.99), uniform(&mut rng, 0.8, 0.99));
        let (theta_s, theta_j) = (uniform(&mut rng, 0.3, 0.95), uniform(&mut rng, 0.05, 0.9));
        let (n_s, n_j) = (100 + rng.below(300) as u64, 200 + rng.below(600) as u64);
        let settled = Count::new(binomial(&mut rng, n_s, theta_s), n_s);
        let judged = Count::new(judged(&mut rng, n_j, theta_j, se, sp), n_j);
        let cal = calibration(&mut rng, se, sp);
        let truth = (n_s as f64 * theta_s + n_j as f64 * theta_j) / (n_s + n_j) as f64;
        let c = correct(settled, judged, &cal, 1.0).unwrap();
        let Ok(e) = c.corrected else {
            refused += 1;
            continue;
        };
        covered += usize::from(e.low <= truth && truth <= e.high);
        raw_covered += usize::from((c.raw - truth).abs() <= 1.96 * e.se);
    }
    let used = RUNS - refused;
    assert!(refused <= RUNS / 50, "{refused} runs refused");
    let coverage = covered as f64 / used as f64;
    assert!((coverage - 0.95).abs() <= 0.02, "coverage {coverage}");
    // The raw share, with the same width, misses more often: the correction is doing the work.
    let raw = raw_covered as f64 / used as f64;
    assert!(raw <= coverage - 0.05, "raw {raw} corrected {coverage}");
}

#[test]
fn the_corrected_difference_covers_the_true_difference() {
    let mut rng = SplitMix64::new(4402);
    let (mut covered, mut refused) = (0usize, 0usize);
    for _ in 0..RUNS {
        let (se, sp) = (uniform(&mut rng, 0.8, 0.99), uniform(&mut rng, 0.8, 0.99));
        let (ta, tb) = (uniform(&mut rng, 0.05, 0.9), uniform(&mut rng, 0.05, 0.9));
        let n = 200 + rng.below(600) as u64;
        let cal = calibration(&mut rng, se, sp);
        let (ka, kb) = (
            judged(&mut rng, n, ta, se, sp),
            judged(&mut rng, n, tb, se, sp),
        );
        // Independent items: the sampling variance of the difference of the mean corrected values.
        let (Ok(y1), Ok(y0)) = (
            corrected_value(true, true, &cal),
            corrected_value(false, true, &cal),
        ) else {
            refused += 1;
            continue;
        };
        let var = |k: u64| {
            let p = k as f64 / n as f64;
            p * (1.0 - p) * (y1 - y0).powi(2) / n as f64
        };
        let side = |k| Side {
            settled: Count::default(),
            judged: Count::new(k, n),
        };
        let d = corrected_difference(side(ka), side(kb), &cal, var(ka) + var(kb))
            .unwrap()
            .unwrap();
        covered += usize::from(d.low <= ta - tb && ta - tb <= d.high);
    }
    assert!(refused <= RUNS / 50, "{refused} runs refused");
    let coverage = covered as f64 / (RUNS - refused) as f64;
    assert!((coverage - 0.95).abs() <= 0.02, "coverage {coverage}");
}
