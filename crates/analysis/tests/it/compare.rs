//! Paired comparisons shown to be right by simulation: over a few hundred simulated datasets with a known
//! difference, the intervals cover it close to 95 % of the time, and under no difference the tests reject close to
//! α of the time; with answers that cluster within prompts, the clustered tests keep α where McNemar's does not.
//! Plus determinism for a fixed seed, and a known drop found where two identical models are tied.

use analysis::compare::ifscale::{self, Rates, Samples};
use analysis::compare::report::{self, Entry};
use analysis::compare::rift::{self as rift_cmp, PromptAnswers, Prompts};
use analysis::compare::{Options, cluster, paired};
use analysis::stats::SplitMix64;

/// A standard normal draw (Box–Muller).
fn normal(rng: &mut SplitMix64) -> f64 {
    let u1 = rng.unit().max(1e-300);
    let u2 = rng.unit();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// IFScale samples of two models over `densities` × `seeds`: accuracy = a curve falling with N, a seed effect
/// shared by both models (the keyword list's difficulty), and independent noise of SD 6 per model and sample;
/// model a is `effect` points above b.
fn ifscale_pair(
    rng: &mut SplitMix64,
    densities: u32,
    seeds: u64,
    effect: f64,
) -> (Samples, Samples) {
    let (mut a, mut b) = (Samples::new(), Samples::new());
    let seed_effect: Vec<f64> = (0..seeds).map(|_| 5.0 * normal(rng)).collect();
    for d in 1..=densities {
        let n = d * 10;
        for s in 0..seeds {
            let base = 90.0 - f64::from(n) * 0.1 + seed_effect[s as usize];
            let rates = |acc: f64| {
                Some(Rates {
                    accuracy: acc,
                    omission: 100.0 - acc,
                    modification: 0.0,
                })
            };
            a.insert((n, s), rates(base + effect + 6.0 * normal(rng)));
            b.insert((n, s), rates(base + 6.0 * normal(rng)));
        }
    }
    (a, b)
}

#[test]
fn ifscale_intervals_cover_the_true_difference_and_the_test_keeps_alpha() {
    let opts = Options {
        resamples: 400,
        ..Options::default()
    };
    let mut rng = SplitMix64::new(11);
    let datasets = 300;
    let (mut covered, mut rejected) = (0, 0);
    for i in 0..datasets {
        // A difference of −3 points for the coverage, none for the false-positive rate.
        let (a, b) = ifscale_pair(&mut rng, 8, 5, -3.0);
        let c = ifscale::compare("a", &a, "b", &b, &Options { seed: i, ..opts });
        let acc = c.overall.unwrap().metrics.accuracy;
        if acc.ci_lower.unwrap() <= -3.0 && -3.0 <= acc.ci_upper.unwrap() {
            covered += 1;
        }
        let (a, b) = ifscale_pair(&mut rng, 8, 5, 0.0);
        let c = ifscale::compare("a", &a, "b", &b, &Options { seed: i, ..opts });
        if c.overall.unwrap().metrics.accuracy.p.unwrap() < opts.alpha {
            rejected += 1;
        }
    }
    let coverage = f64::from(covered) / datasets as f64;
    let fpr = f64::from(rejected) / datasets as f64;
    // 300 datasets: the binomial SD of a 95 % coverage is 1.3 points, of a 5 % rate 1.3 points.
    assert!((0.91..=0.985).contains(&coverage), "coverage {coverage}");
    assert!((0.015..=0.09).contains(&fpr), "false-positive rate {fpr}");
}

/// RIFT prompts of two models with answers that cluster within prompts: each prompt has a difficulty shared by its
/// answers and by both models (a prompt-level random effect), so answers of one prompt succeed or fail together.
fn rift_pair(
    rng: &mut SplitMix64,
    prompts: usize,
    answers: usize,
    effect: f64,
) -> (Prompts, Prompts) {
    let (mut a, mut b) = (Prompts::new(), Prompts::new());
    for p in 0..prompts {
        let difficulty = 1.5 * normal(rng);
        // Each model's own lapse on this prompt (a model-by-prompt effect), which also clusters its answers.
        let logit = |x: f64| 1.0 / (1.0 + (-x).exp());
        let pa = logit(difficulty + effect + 1.5 * normal(rng));
        let pb = logit(difficulty + 1.5 * normal(rng));
        let draw = |rng: &mut SplitMix64, prob: f64| -> Vec<u8> {
            (0..answers).map(|_| u8::from(rng.unit() < prob)).collect()
        };
        let key = format!("p{p:03}");
        let (va, vb) = (draw(rng, pa), draw(rng, pb));
        a.insert(
            key.clone(),
            PromptAnswers {
                structure: "linear".into(),
                group: key.clone(),
                verdicts: va,
                llm: Vec::new(),
            },
        );
        b.insert(
            key.clone(),
            PromptAnswers {
                structure: "linear".into(),
                group: key,
                verdicts: vb,
                llm: Vec::new(),
            },
        );
    }
    (a, b)
}

#[test]
fn rift_clustered_tests_keep_alpha_where_answer_level_mcnemar_does_not() {
    let opts = Options {
        resamples: 300,
        ..Options::default()
    };
    let mut rng = SplitMix64::new(5);
    let datasets = 300;
    let (mut prompt_level, mut clustered, mut naive, mut se_covered) = (0, 0, 0, 0);
    for i in 0..datasets {
        let (a, b) = rift_pair(&mut rng, 40, 15, 0.0);
        let c = rift_cmp::compare("a", &a, "b", &b, None, &Options { seed: i, ..opts });
        let row = &c.structures[0];
        prompt_level += u32::from(row.prompt_level.p.unwrap() < opts.alpha);
        clustered += u32::from(row.mcnemar_clustered.is_some_and(|x| x.1 < opts.alpha));
        naive += u32::from(row.mcnemar.p < opts.alpha);
        // The answer-level difference ± 1.96 clustered SE covers the true 0.
        let al = row.answer_level.unwrap();
        se_covered += u32::from(al.diff.abs() <= 1.96 * al.se_clustered.unwrap());
    }
    let rate = |k: u32| f64::from(k) / datasets as f64;
    assert!(
        (0.015..=0.09).contains(&rate(prompt_level)),
        "prompt-level {}",
        rate(prompt_level)
    );
    assert!(
        (0.015..=0.10).contains(&rate(clustered)),
        "clustered McNemar {}",
        rate(clustered)
    );
    assert!(
        (0.90..=0.985).contains(&rate(se_covered)),
        "clustered SE coverage {}",
        rate(se_covered)
    );
    // Answers treated as independent: far more false positives than α.
    assert!(
        rate(naive) > 0.15,
        "McNemar on clustered answers {}",
        rate(naive)
    );
}

#[test]
fn the_design_effect_of_simulated_clusters_is_well_above_one() {
    let mut rng = SplitMix64::new(3);
    let (a, _) = rift_pair(&mut rng, 200, 20, 0.0);
    let sums: Vec<cluster::ClusterSums> = a
        .values()
        .map(|p| {
            let (c, n) = p.counts();
            cluster::ClusterSums::binary(c, n)
        })
        .collect();
    let m = cluster::clustered_mean(&sums).unwrap();
    // Intra-prompt correlation ρ: the design effect is about 1 + (m − 1) ρ with m = 20.
    assert!(m.design_effect.unwrap() > 3.0, "{m:?}");
}

#[test]
fn bootstrap_coverage_of_a_mean_difference() {
    let mut rng = SplitMix64::new(21);
    let datasets = 400;
    let mut covered = 0;
    for i in 0..datasets {
        let d: Vec<f64> = (0..40).map(|_| 2.0 + 5.0 * normal(&mut rng)).collect();
        let units: Vec<(f64, f64)> = d.iter().map(|x| (*x, 1.0)).collect();
        let (lo, hi) = paired::bootstrap_ratio_ci(&units, 400, 0.95, i).unwrap();
        covered += u32::from(lo <= 2.0 && 2.0 <= hi);
    }
    let coverage = f64::from(covered) / datasets as f64;
    assert!((0.91..=0.98).contains(&coverage), "coverage {coverage}");
}

fn three_models(drop: f64) -> Vec<Entry> {
    let mut rng = SplitMix64::new(8);
    let (good, worse) = ifscale_pair(&mut rng, 10, 10, drop);
    let (rift_good, rift_worse) = rift_pair(&mut rng, 60, 10, 0.0);
    vec![
        Entry {
            label: "base".into(),
            ifscale: Some(good.clone()),
            rift: Some(rift_good.clone()),
            rift_judge: None,
        },
        Entry {
            label: "twin".into(),
            ifscale: Some(good),
            rift: Some(rift_good),
            rift_judge: None,
        },
        Entry {
            label: "other".into(),
            ifscale: Some(worse),
            rift: Some(rift_worse),
            rift_judge: None,
        },
    ]
}

#[test]
fn a_known_drop_is_found_and_an_identical_model_is_tied() {
    let opts = Options {
        resamples: 1000,
        ..Options::default()
    };
    // "base" is 8 points above "other" on IFScale ("other" = base − 8); "twin" is "base" itself.
    let entries = three_models(8.0);
    let r = report::build(&entries, Some(0), Some(1.0), &opts);
    let vs_twin = r.ifscale.iter().find(|c| c.a == "twin").unwrap();
    let vs_other = r.ifscale.iter().find(|c| c.a == "other").unwrap();
    let twin = &vs_twin.overall.as_ref().unwrap().metrics.accuracy;
    assert_eq!((twin.diff, twin.p), (0.0, Some(1.0)));
    let other = &vs_other.overall.as_ref().unwrap().metrics.accuracy;
    assert!(
        (other.diff + 8.0).abs() < 2.0 && other.p.unwrap() < 0.01,
        "{other:?}"
    );
    assert!(
        other.mdd.unwrap() < 8.0,
        "the drop is larger than the run can detect: {other:?}"
    );
    // The gate: the twin passes every measure, the worse model fails IFScale.
    let gate = r.gate.as_ref().unwrap();
    assert!(!gate.passed);
    assert!(
        gate.checks
            .iter()
            .filter(|c| c.candidate == "twin")
            .all(|c| c.verdict.passes())
    );
    assert!(
        gate.checks.iter().any(|c| c.candidate == "other"
            && c.measure == "IFScale accuracy"
            && !c.verdict.passes())
    );
    // Tied sets on IFScale accuracy: {base, twin} and {other}.
    let ifs = r
        .ties
        .iter()
        .find(|t| t.measure.starts_with("IFScale"))
        .unwrap();
    let mut top = ifs.sets[0].clone();
    top.sort();
    assert_eq!(top, ["base", "twin"]);
    assert_eq!(ifs.sets[1], ["other"]);
    // The Markdown names the gate's verdict and every section.
    let md = r.markdown();
    for needle in [
        "Regression gate: FAILED",
        "## IFScale: twin − base",
        "## RIFT: other − base",
        "Statistically tied",
    ] {
        assert!(md.contains(needle), "{needle} missing from\n{md}");
    }
}

#[test]
fn the_same_seed_gives_the_same_report_and_another_seed_other_intervals() {
    let entries = three_models(2.0);
    let opts = Options {
        resamples: 300,
        ..Options::default()
    };
    let a = report::build(&entries, None, None, &opts);
    let b = report::build(&entries, None, None, &opts);
    assert_eq!(a, b);
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
    let c = report::build(&entries, None, None, &Options { seed: 1, ..opts });
    let ci = |r: &report::Report| {
        r.ifscale[1]
            .overall
            .as_ref()
            .unwrap()
            .metrics
            .accuracy
            .ci_lower
    };
    assert_ne!(ci(&a), ci(&c));
    // Without a baseline, every pair: three.
    assert_eq!(a.ifscale.len(), 3);
    assert_eq!(a.gate, None);
}
