//! What a sequential run says of its stop in `summary.md`: where it stopped and why ("IFScale: stopped after 3 of 5
//! seeds at N ≥ 250 …: intervals below 2pp"), the rule's last look as a table, and the money the stop saved
//! against the whole grid at the expected cost per unit (`harness::estimate::expected`, the pilot's scaling, fed
//! with every unit the run answered).

use std::collections::BTreeMap;

use harness::estimate::expected::{Observed, Row, Stratum, per_unit};
use schema::judge::JudgeRole;
use schema::paths::Bench;

use super::grid::Counts;
use super::{Reason, State, grid};
use crate::Run;

pub(crate) fn bench_name(b: Bench) -> &'static str {
    match b {
        Bench::Ifscale => "IFScale",
        Bench::Rift => "RIFT",
    }
}

/// The strata of a benchmark grouped by the units the prefix holds, as phrases: "3 of 5 seeds at N ≥ 250".
fn where_stopped(bench: Bench, grid: &Counts, prefix: &Counts) -> String {
    let strata = grid.of(bench);
    let mut groups: Vec<(usize, usize, Vec<usize>)> = Vec::new();
    for (i, (s, total)) in strata.iter().enumerate() {
        let have = prefix.get(bench, s);
        match groups
            .iter_mut()
            .find(|(h, t, _)| *h == have && *t == *total)
        {
            Some(g) => g.2.push(i),
            None => groups.push((have, *total, vec![i])),
        }
    }
    let unit = match bench {
        Bench::Ifscale => "seeds",
        Bench::Rift => "question sets",
    };
    let last = strata.len().saturating_sub(1);
    groups
        .iter()
        .map(|(have, total, idx)| {
            let names: Vec<&str> = idx.iter().map(|&i| strata[i].0.as_str()).collect();
            let place = match bench {
                Bench::Rift => names.join(", "),
                Bench::Ifscale if idx.len() == strata.len() => "every N".to_owned(),
                Bench::Ifscale if contiguous(idx) && idx[idx.len() - 1] == last => {
                    format!("N ≥ {}", names[0])
                }
                Bench::Ifscale if contiguous(idx) && idx[0] == 0 => {
                    format!("N ≤ {}", names[names.len() - 1])
                }
                Bench::Ifscale => format!("N = {}", names.join(", ")),
            };
            format!("{have} of {total} {unit} at {place}")
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn contiguous(idx: &[usize]) -> bool {
    idx.windows(2).all(|w| w[1] == w[0] + 1)
}

fn pct(x: f64) -> String {
    format!("{:.1}", 100.0 * x)
}

/// The state with what it says filled in: the rule, where each benchmark stopped and why, the saving; and the
/// last look as a table.
pub fn described(mut state: State) -> State {
    let why = match state.reason {
        Reason::Answered if state.rule.starts_with("ci-width") => {
            format!(
                "intervals below {}",
                state.rule.trim_start_matches("ci-width=")
            )
        }
        Reason::Answered => "every comparison decided".to_owned(),
        Reason::GridDone => "the whole grid was run before the rule held".to_owned(),
        Reason::Incomplete => {
            "a batch finished without every answer (the cost limit or failures; see Incomplete)"
                .to_owned()
        }
    };
    let mut summary = vec![format!(
        "Rule `{}` (anytime-valid {:.0} % confidence sequences, looked at after each of {} batches; \
         docs/sequential.md).",
        state.rule,
        100.0 * (1.0 - state.alpha),
        state.batches
    )];
    for bench in [Bench::Ifscale, Bench::Rift] {
        if state.grid.of(bench).is_empty() {
            continue;
        }
        summary.push(format!(
            "{}: stopped after {}: {why}.",
            bench_name(bench),
            where_stopped(bench, &state.grid, &state.prefix)
        ));
    }
    summary.push(match (state.full_usd, state.prefix_usd) {
        (Some(full), Some(used)) => format!(
            "The stop saved {:.2} USD of the whole grid's expected {:.2} USD (generation and coherence judge, at the \
             mean cost per unit the run observed).",
            (full - used).max(0.0),
            full
        ),
        _ => "No model has prices: the saving is not counted in money.".to_owned(),
    });
    let mut table = schema::Table::new(vec![
        schema::table::left("benchmark"),
        schema::table::left("stratum or comparison"),
        schema::table::left("model"),
        schema::table::right("n"),
        schema::table::right("interval (%)"),
        schema::table::left("verdict"),
    ]);
    for l in &state.looks {
        table.push(vec![
            l.bench.clone(),
            l.what.clone(),
            l.model.clone(),
            l.n.to_string(),
            format!("[{}, {}]", pct(l.lo), pct(l.hi)),
            l.verdict.clone(),
        ]);
    }
    state.summary = summary;
    state.table = table;
    state
}

/// The summary's "Sequential run" section.
pub fn markdown(state: &State) -> String {
    format!(
        "\n## Sequential run\n\n{}\n\n{}",
        state.summary.join("\n"),
        state.table.to_markdown()
    )
}

/// The expected cost in USD of the whole grid and of the prefix: per model and benchmark, each unit the run
/// answered (generation with its retries, and the IFScale coherence judge) priced, the mean per stratum scaled to
/// the grid's and the prefix's units (`Row::span`). None when no model has prices.
pub(crate) fn expected_costs(
    run: &Run,
    grid: &Counts,
    prefix: &Counts,
) -> anyhow::Result<(Option<f64>, Option<f64>)> {
    let seeds = super::seeds(run);
    let (mut full, mut used, mut priced) = (0.0, 0.0, false);
    for bench in [Bench::Ifscale, Bench::Rift] {
        if grid.of(bench).is_empty() {
            continue;
        }
        let prompts = match bench {
            Bench::Ifscale => run.paths.ifscale_prompts(),
            Bench::Rift => run.paths.rift_prompts(),
        };
        let stratum_of: BTreeMap<String, String> = grid::units(&prompts, bench, &seeds)?
            .into_iter()
            .map(|(id, s, _)| (id, s))
            .collect();
        for model in &run.models {
            let files = run.paths.model(bench, &model.name);
            let mut rows = vec![(model, per_unit(&files.responses())?.0)];
            if let (Bench::Ifscale, Some(judge)) = (bench, run.judge(JudgeRole::Coherence)) {
                rows.push((&judge.model, per_unit(&files.coherence_judge())?.0));
            }
            if let (Bench::Ifscale, Some(judge)) = (bench, run.judge(JudgeRole::Refusal)) {
                rows.push((&judge.model, per_unit(&files.refusal_judge())?.0));
            }
            for (m, units) in rows {
                let mut by: BTreeMap<&str, Vec<Observed>> = BTreeMap::new();
                for (id, o) in &units {
                    if let Some(s) = stratum_of.get(id) {
                        by.entry(s.as_str()).or_default().push(*o);
                    }
                }
                let row = |counts: &Counts| Row {
                    stage: "sequential",
                    model: m.name.clone(),
                    prices: crate::pilot::prices(m),
                    unit: "unit",
                    pilot_requests: 0,
                    strata: counts
                        .of(bench)
                        .iter()
                        .map(|(s, n)| Stratum {
                            run_units: *n,
                            observed: by.get(s.as_str()).cloned().unwrap_or_default(),
                        })
                        .collect(),
                };
                let (whole, part) = (row(grid), row(prefix));
                priced |= whole.priced();
                full += whole.span(|o| whole.cost(o)).expected;
                used += part.span(|o| part.cost(o)).expected;
            }
        }
    }
    Ok(if priced {
        (Some(full), Some(used))
    } else {
        (None, None)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stop_is_said_by_density_range() {
        let grid = Counts {
            ifscale: [10, 50, 250, 500]
                .iter()
                .map(|n| (n.to_string(), 5))
                .collect(),
            rift: vec![("linear".into(), 100), ("jumping".into(), 100)],
        };
        let prefix = Counts {
            ifscale: vec![
                ("10".into(), 5),
                ("50".into(), 5),
                ("250".into(), 3),
                ("500".into(), 3),
            ],
            rift: vec![("linear".into(), 25), ("jumping".into(), 100)],
        };
        assert_eq!(
            where_stopped(Bench::Ifscale, &grid, &prefix),
            "5 of 5 seeds at N ≤ 50; 3 of 5 seeds at N ≥ 250"
        );
        assert_eq!(
            where_stopped(Bench::Rift, &grid, &prefix),
            "25 of 100 question sets at linear; 100 of 100 question sets at jumping"
        );
    }
}
