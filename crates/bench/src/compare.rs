//! `cargo xtask bench compare`: the paired comparison of two paper-size RIFT runs (issue 30: 2 × 3.2 M answers over
//! 20 000 list prompts and 83 453 baseline prompts, 10 000 bootstrap resamples), timed.
//!
//! The two runs are built in memory by [`synthetic_pair`], seeded and deterministic: the list prompts come in
//! question sets of a linear and a jumping prompt (as RIFT's), each baseline prompt has one answer and the rest of the
//! answers are spread evenly over the list prompts. Each prompt has a difficulty, so its answers succeed or fail
//! together (the clustering the comparison's clustered errors are for); the second model answers each question with
//! the same draw as the first most of the time, correct with a probability `--drop` points lower, so the pair is
//! paired as two real models are. A few answers are unjudged.
//!
//! What is timed is `analysis::compare::report::build` on the two (every statistic of `cargo xtask compare`: per
//! structure the prompt-level bootstrap and sign-flip test, the clustered answer-level difference, McNemar and its
//! clustered form, the linear − jumping gap and Δ), in wall and process CPU seconds; building the data is not.

use std::time::Instant;

use analysis::compare::Options;
use analysis::compare::report::{self, Entry};
use analysis::compare::rift::{PromptAnswers, Prompts, RIGHT, UNJUDGED, WRONG};
use analysis::stats::{SplitMix64, group_seed};
use anyhow::bail;

#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// Linear and jumping prompts per model (half each, paired by question set; the paper: 20 000).
    #[arg(long, default_value_t = 20_000)]
    list_prompts: usize,
    /// Baseline prompts per model, one question each (the paper: 83 453).
    #[arg(long, default_value_t = 83_453)]
    baseline_prompts: usize,
    /// Answers per model in all (the paper: about 3.2 M).
    #[arg(long, default_value_t = 3_200_000)]
    answers: usize,
    /// Bootstrap resamples and Monte Carlo sign vectors.
    #[arg(long, default_value_t = 10_000)]
    resamples: usize,
    /// How many points less often the second model is right.
    #[arg(long, default_value_t = 2.0)]
    drop: f64,
    /// Seed of the data and of the comparison.
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

/// The shape of the two synthetic runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Synthetic {
    pub list_prompts: usize,
    pub baseline_prompts: usize,
    /// Answers per model.
    pub answers: usize,
    /// Percentage points by which the second model is less often right.
    pub drop: f64,
    pub seed: u64,
}

impl Synthetic {
    /// The paper size.
    pub fn paper(seed: u64) -> Synthetic {
        Synthetic {
            list_prompts: 20_000,
            baseline_prompts: 83_453,
            answers: 3_200_000,
            drop: 2.0,
            seed,
        }
    }
}

/// Share of answers left unjudged, per model.
const UNJUDGED_SHARE: f64 = 0.01;
/// Share of questions the second model answers with a draw of its own (the rest share the first model's).
const OWN_DRAW_SHARE: f64 = 0.2;

/// Two models' RIFT answers per prompt on the same prompts; an error when the answers cannot give every prompt at
/// least one.
pub fn synthetic_pair(cfg: &Synthetic) -> anyhow::Result<(Prompts, Prompts)> {
    let needed = cfg.list_prompts + cfg.baseline_prompts;
    if cfg.answers < needed {
        bail!(
            "--answers {}: fewer than one per prompt ({needed} prompts)",
            cfg.answers
        );
    }
    if !(0.0..100.0).contains(&cfg.drop) {
        bail!("--drop {}: must be between 0 and 100 points", cfg.drop);
    }
    let list_answers = cfg.answers - cfg.baseline_prompts;
    let per_list = list_answers.checked_div(cfg.list_prompts).unwrap_or(0);
    let extra = list_answers.checked_rem(cfg.list_prompts).unwrap_or(0);
    let (mut a, mut b) = (Prompts::new(), Prompts::new());
    let mut add = |key: String, structure: &str, group: String, answers: usize, shift: f64| {
        // Each prompt draws from its own stream, so a prompt's answers do not depend on the others.
        let mut rng = SplitMix64::new(group_seed(cfg.seed, &key));
        let difficulty = (0.35 + 0.6 * rng.unit() - shift).clamp(0.0, 1.0);
        let lower = (difficulty - cfg.drop / 100.0).max(0.0);
        let (mut va, mut vb) = (Vec::with_capacity(answers), Vec::with_capacity(answers));
        for _ in 0..answers {
            let u = rng.unit();
            let own = if rng.unit() < OWN_DRAW_SHARE {
                rng.unit()
            } else {
                u
            };
            let verdict = |right: bool, r: f64| {
                if r < UNJUDGED_SHARE {
                    UNJUDGED
                } else if right {
                    RIGHT
                } else {
                    WRONG
                }
            };
            va.push(verdict(u < difficulty, rng.unit()));
            vb.push(verdict(own < lower, rng.unit()));
        }
        let prompt = |verdicts| PromptAnswers {
            structure: structure.to_owned(),
            group: group.clone(),
            verdicts,
            llm: Vec::new(),
        };
        a.insert(key.clone(), prompt(va));
        b.insert(key, prompt(vb));
    };
    for j in 0..cfg.list_prompts {
        let group = format!("g{:05}", j / 2);
        let (structure, shift) = if j % 2 == 0 {
            ("linear", 0.0)
        } else {
            ("jumping", 0.1)
        };
        let answers = per_list + usize::from(j < extra);
        add(
            format!("rift-{group}-{structure}"),
            structure,
            group,
            answers,
            shift,
        );
    }
    for i in 0..cfg.baseline_prompts {
        let key = format!("rift-b{i:05}-baseline");
        add(key.clone(), "baseline", key, 1, 0.0);
    }
    Ok((a, b))
}

/// This process's CPU time (user + system) in seconds.
fn process_cpu_s() -> f64 {
    // SAFETY: `rusage` is plain integers (all-zero is a valid value), and `getrusage` fills it through a pointer to
    // this live, writable one.
    let (rc, u) = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        (libc::getrusage(libc::RUSAGE_SELF, &mut u), u)
    };
    if rc != 0 {
        return f64::NAN;
    }
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    s(u.ru_utime) + s(u.ru_stime)
}

#[allow(clippy::print_stdout)]
pub fn run(args: &CompareArgs) -> anyhow::Result<()> {
    if args.resamples == 0 {
        return Err(crate::UsageError("--resamples must be at least 1".to_owned()).into());
    }
    let cfg = Synthetic {
        list_prompts: args.list_prompts,
        baseline_prompts: args.baseline_prompts,
        answers: args.answers,
        drop: args.drop,
        seed: args.seed,
    };
    let t = Instant::now();
    let (a, b) = synthetic_pair(&cfg).map_err(|e| crate::UsageError(e.to_string()))?;
    let built = t.elapsed().as_secs_f64();
    let answers: usize = a.values().map(|p| p.verdicts.len()).sum();
    println!(
        "two synthetic RIFT runs: {} prompts ({} list, {} baseline), {answers} answers per model; built in {built:.1} s",
        a.len(),
        args.list_prompts,
        args.baseline_prompts
    );
    let entries = [
        Entry {
            label: "a".to_owned(),
            ifscale: None,
            rift: Some(a),
            rift_judge: None,
        },
        Entry {
            label: "b".to_owned(),
            ifscale: None,
            rift: Some(b),
            rift_judge: None,
        },
    ];
    let opts = Options {
        resamples: args.resamples,
        seed: args.seed,
        ..Options::default()
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (cpu0, t) = (process_cpu_s(), Instant::now());
    let report = report::build(&entries, None, None, &opts);
    let (wall, cpu) = (t.elapsed().as_secs_f64(), process_cpu_s() - cpu0);
    let Some(rift) = report.rift.first() else {
        bail!("the comparison has no RIFT result");
    };
    println!(
        "{:<10} {:>8} {:>12} {:>20} {:>12} {:>10}",
        "structure", "prompts", "difference", "interval", "p", "MDD"
    );
    for r in &rift.structures {
        let d = &r.prompt_level;
        println!(
            "{:<10} {:>8} {:>+12.3} {:>20} {:>12.2e} {:>10.3}",
            r.structure,
            d.units,
            d.diff,
            format!(
                "[{:+.3}, {:+.3}]",
                d.ci_lower.unwrap_or(f64::NAN),
                d.ci_upper.unwrap_or(f64::NAN)
            ),
            d.p.unwrap_or(f64::NAN),
            d.mdd.unwrap_or(f64::NAN)
        );
    }
    if let Some(d) = &rift.delta {
        println!(
            "linear − jumping gap difference {:+.3} pp over {} question sets",
            d.gap.diff, d.groups
        );
    }
    println!(
        "comparison with {} resamples: {wall:.2} s wall, {cpu:.2} s CPU on {threads} hardware threads (goal: under 30 s on two cores)",
        args.resamples
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(seed: u64) -> Synthetic {
        Synthetic {
            list_prompts: 10,
            baseline_prompts: 7,
            answers: 40,
            drop: 20.0,
            seed,
        }
    }

    #[test]
    fn a_small_pair_has_the_asked_shape_and_is_deterministic() {
        let (a, b) = synthetic_pair(&small(3)).unwrap();
        assert_eq!(a.len(), 17);
        assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
        for side in [&a, &b] {
            assert_eq!(side.values().map(|p| p.verdicts.len()).sum::<usize>(), 40);
            let count = |s: &str| side.values().filter(|p| p.structure == s).count();
            assert_eq!(
                (count("linear"), count("jumping"), count("baseline")),
                (5, 5, 7)
            );
            // 33 list answers over 10 prompts: three prompts get 4, seven get 3; a baseline prompt has one.
            let mut sizes: Vec<usize> = side
                .values()
                .filter(|p| p.structure != "baseline")
                .map(|p| p.verdicts.len())
                .collect();
            sizes.sort_unstable();
            assert_eq!(sizes, [3, 3, 3, 3, 3, 3, 3, 4, 4, 4]);
            assert!(
                side.values()
                    .filter(|p| p.structure == "baseline")
                    .all(|p| p.verdicts.len() == 1)
            );
        }
        // A question set holds one linear and one jumping prompt.
        assert_eq!(
            a["rift-g00002-linear"].group,
            a["rift-g00002-jumping"].group
        );
        assert_eq!(synthetic_pair(&small(3)).unwrap(), (a.clone(), b));
        assert_ne!(synthetic_pair(&small(4)).unwrap().0, a);
        assert!(
            synthetic_pair(&Synthetic {
                answers: 16,
                ..small(3)
            })
            .is_err()
        );
    }

    #[test]
    fn the_second_model_is_right_less_often() {
        let cfg = Synthetic {
            list_prompts: 200,
            baseline_prompts: 100,
            answers: 20_000,
            drop: 20.0,
            seed: 1,
        };
        let (a, b) = synthetic_pair(&cfg).unwrap();
        let rate = |p: &Prompts| {
            let (c, s) = p.values().fold((0, 0), |(c, s), x| {
                let (xc, xs) = x.counts();
                (c + xc, s + xs)
            });
            c as f64 / s as f64 * 100.0
        };
        let gap = rate(&a) - rate(&b);
        assert!((12.0..28.0).contains(&gap), "{gap}");
    }
}
