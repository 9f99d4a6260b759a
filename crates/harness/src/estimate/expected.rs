//! The expected cost of a run from a pilot (`cargo xtask pipeline --pilot`): what each unit of a stage cost when a
//! few seeded prompts were answered (an IFScale sample with all its attempts, a RIFT prompt, a judged RIFT answer),
//! scaled to the run's units: the pilot's mean gives the expectation, its lightest and heaviest unit the range, per
//! stratum (RIFT's structures) and summed. A model with prices gets a cost; one without gets tokens and request time.

use std::collections::BTreeMap;
use std::path::Path;

use schema::ResponseRecord;

use crate::Error;

/// What one unit of a stage cost in the pilot: tokens in and out (reasoning included) and request seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Observed {
    pub input: f64,
    pub output: f64,
    pub secs: f64,
}

impl Observed {
    pub fn of(r: &ResponseRecord) -> Observed {
        Observed {
            input: r.usage.prompt_tokens as f64,
            output: r.usage.completion_tokens as f64,
            secs: r.latency_s.unwrap_or(r.wall_s),
        }
    }

    pub fn add(&mut self, o: Observed) {
        self.input += o.input;
        self.output += o.output;
        self.secs += o.secs;
    }

    pub fn scaled(self, f: f64) -> Observed {
        Observed {
            input: self.input * f,
            output: self.output * f,
            secs: self.secs * f,
        }
    }
}

/// Units of one kind in the run, and what each unit the pilot sent cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Stratum {
    pub run_units: usize,
    pub observed: Vec<Observed>,
}

/// One stage and model of the expectation.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub stage: &'static str,
    pub model: String,
    /// USD per million tokens in and out; (0, 0) is a model without prices.
    pub prices: (f64, f64),
    /// What a unit is ("sample", "prompt", "answer").
    pub unit: &'static str,
    /// Requests the pilot made for this row.
    pub pilot_requests: usize,
    pub strata: Vec<Stratum>,
}

/// An expected value with its range.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Span {
    pub expected: f64,
    pub low: f64,
    pub high: f64,
}

impl Span {
    fn add(&mut self, o: Span) {
        self.expected += o.expected;
        self.low += o.low;
        self.high += o.high;
    }
}

impl Row {
    pub fn priced(&self) -> bool {
        self.prices.0 > 0.0 || self.prices.1 > 0.0
    }

    pub fn pilot_units(&self) -> usize {
        self.strata.iter().map(|s| s.observed.len()).sum()
    }

    pub fn run_units(&self) -> usize {
        self.strata.iter().map(|s| s.run_units).sum()
    }

    /// `f` of a unit, scaled to the run: the sum over strata of the run's units times the pilot's mean, least and
    /// greatest. A stratum the pilot has no unit of counts nothing.
    pub fn span(&self, f: impl Fn(&Observed) -> f64) -> Span {
        let mut total = Span::default();
        for s in &self.strata {
            if s.observed.is_empty() {
                continue;
            }
            let values: Vec<f64> = s.observed.iter().map(&f).collect();
            let n = s.run_units as f64;
            total.add(Span {
                expected: n * values.iter().sum::<f64>() / values.len() as f64,
                low: n * values.iter().copied().fold(f64::INFINITY, f64::min),
                high: n * values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            });
        }
        total
    }

    pub fn cost(&self, o: &Observed) -> f64 {
        (o.input * self.prices.0 + o.output * self.prices.1) / 1e6
    }
}

/// `n` as a short count: `812`, `12.3k`, `4.56M`, `1.2G`.
fn short(n: f64) -> String {
    let a = n.abs();
    if a >= 1e9 {
        format!("{:.2}G", n / 1e9)
    } else if a >= 1e6 {
        format!("{:.2}M", n / 1e6)
    } else if a >= 1e4 {
        format!("{:.1}k", n / 1e3)
    } else {
        format!("{n:.0}")
    }
}

fn span_text(s: Span, fmt: impl Fn(f64) -> String) -> String {
    format!("{} ({}–{})", fmt(s.expected), fmt(s.low), fmt(s.high))
}

fn usd(x: f64) -> String {
    format!("{x:.2}")
}

fn hours(secs: f64) -> String {
    format!("{:.1} h", secs / 3600.0)
}

/// The expectation as a Markdown table and the run's totals (what `--pilot` prints).
pub fn to_markdown(rows: &[Row], per_stage: usize) -> String {
    let mut md = format!(
        "Pilot: {per_stage} seeded prompts per model and stage, answered through the run's client (cached: the run \
         sends none of them again). Expected values for the whole run, with the range from the pilot's lightest to \
         its heaviest unit.\n\n"
    );
    use schema::table::{left, right};
    let mut table = schema::Table::new(vec![
        left("stage"),
        left("model"),
        left("pilot"),
        right("run"),
        left("expected input tokens"),
        left("expected output tokens"),
        left("expected cost (USD)"),
    ]);
    let (mut cost, mut unpriced_tokens, mut unpriced_secs) =
        (Span::default(), Span::default(), Span::default());
    let mut unpriced_models = std::collections::BTreeSet::new();
    for r in rows {
        let input = r.span(|o| o.input);
        let output = r.span(|o| o.output);
        let money = if r.pilot_units() == 0 {
            "no answer in the pilot".to_owned()
        } else if r.priced() {
            let c = r.span(|o| r.cost(o));
            cost.add(c);
            span_text(c, usd)
        } else {
            let t = r.span(|o| o.input + o.output);
            let secs = r.span(|o| o.secs);
            unpriced_tokens.add(t);
            unpriced_secs.add(secs);
            unpriced_models.insert(r.model.clone());
            format!("no prices; {} of requests", span_text(secs, hours))
        };
        table.push(vec![
            r.stage.to_owned(),
            r.model.clone(),
            format!(
                "{} {}s, {} requests",
                r.pilot_units(),
                r.unit,
                r.pilot_requests
            ),
            format!("{} {}s", r.run_units(), r.unit),
            span_text(input, short),
            span_text(output, short),
            money,
        ]);
    }
    md.push_str(&table.to_markdown());
    md.push('\n');
    if rows.iter().any(Row::priced) {
        md.push_str(&format!(
            "Expected cost of the run: {} USD.\n",
            span_text(cost, usd)
        ));
    }
    if !unpriced_models.is_empty() {
        md.push_str(&format!(
            "Models without prices ({}): expected {} tokens and {} of request time (one request at a time; \
             concurrent requests share it).\n",
            unpriced_models.into_iter().collect::<Vec<_>>().join(", "),
            span_text(unpriced_tokens, short),
            span_text(unpriced_secs, hours),
        ));
    }
    md
}

/// A seeded systematic sample of `k` of `n` items in order: one from each of `k` equal slices, at the same seeded
/// offset in each (all of them when `k >= n`).
pub fn pick(n: usize, k: usize, seed: u32) -> Vec<usize> {
    if k >= n {
        return (0..n).collect();
    }
    let u = prompt_gen::rng::Mt19937::new(seed).random_f64();
    (0..k)
        .map(|j| (((j as f64 + u) * n as f64 / k as f64) as usize).min(n - 1))
        .collect()
}

/// The unit a response belongs to: its prompt id up to the first `#` (a coherence judge request is
/// `<sample>#a<attempt>`).
fn unit_of(id: &str) -> &str {
    id.split('#').next().unwrap_or(id)
}

/// What each unit cost in a responses file, by unit id; a missing file is no unit.
pub fn per_unit(path: &Path) -> Result<(BTreeMap<String, Observed>, usize), Error> {
    if !path.is_file() {
        return Ok((BTreeMap::new(), 0));
    }
    let records = schema::read_latest_responses(path)?;
    let mut units: BTreeMap<String, Observed> = BTreeMap::new();
    for r in &records {
        units
            .entry(unit_of(&r.id).to_owned())
            .or_default()
            .add(Observed::of(r));
    }
    Ok((units, records.len()))
}

/// Every request of a responses file, each as a unit of `per_unit` requests (a judge's requests per answer).
pub fn per_request(path: &Path, units: usize) -> Result<(Vec<Observed>, usize), Error> {
    if !path.is_file() || units == 0 {
        return Ok((Vec::new(), 0));
    }
    let records = schema::read_latest_responses(path)?;
    let f = records.len() as f64 / units as f64;
    let observed = records.iter().map(|r| Observed::of(r).scaled(f)).collect();
    Ok((observed, records.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(input: f64, output: f64, secs: f64) -> Observed {
        Observed {
            input,
            output,
            secs,
        }
    }

    #[test]
    fn a_systematic_sample_spreads_over_the_list_and_is_seeded() {
        let p = pick(250, 3, 0);
        assert_eq!(p.len(), 3);
        assert!(
            p[0] <= 83 && (83..=166).contains(&p[1]) && (166..250).contains(&p[2]),
            "{p:?}"
        );
        assert_eq!(p, pick(250, 3, 0));
        assert_ne!(p, pick(250, 3, 1));
        assert_eq!(pick(2, 3, 0), vec![0, 1]);
    }

    #[test]
    fn strata_scale_by_their_own_units_and_the_range_spans_the_lightest_and_heaviest_unit() {
        let row = Row {
            stage: "rift generation",
            model: "m".to_owned(),
            prices: (1.0, 10.0),
            unit: "prompt",
            pilot_requests: 4,
            strata: vec![
                Stratum {
                    run_units: 10,
                    observed: vec![o(100.0, 10.0, 1.0), o(300.0, 30.0, 3.0)],
                },
                Stratum {
                    run_units: 100,
                    observed: vec![o(10.0, 1.0, 0.5), o(10.0, 3.0, 0.5)],
                },
                // A stratum the pilot got no answer for counts nothing.
                Stratum {
                    run_units: 5,
                    observed: vec![],
                },
            ],
        };
        let input = row.span(|o| o.input);
        assert_eq!(
            (input.expected, input.low, input.high),
            (3000.0, 2000.0, 4000.0)
        );
        let output = row.span(|o| o.output);
        assert_eq!(
            (output.expected, output.low, output.high),
            (400.0, 200.0, 600.0)
        );
        // Cost per unit: (in × 1 + out × 10) / 1e6.
        let cost = row.span(|o| row.cost(o));
        assert!((cost.expected - 0.007).abs() < 1e-12, "{cost:?}");
        assert!((cost.low - 0.004).abs() < 1e-12 && (cost.high - 0.010).abs() < 1e-12);
    }

    #[test]
    fn the_table_gives_cost_with_a_range_or_tokens_and_time_without_prices() {
        let stratum = |observed| {
            vec![Stratum {
                run_units: 1000,
                observed,
            }]
        };
        let rows = [
            Row {
                stage: "ifscale generation",
                model: "priced".to_owned(),
                prices: (2.0, 8.0),
                unit: "sample",
                pilot_requests: 3,
                strata: stratum(vec![o(1000.0, 500.0, 2.0), o(3000.0, 1500.0, 6.0)]),
            },
            Row {
                stage: "rift generation",
                model: "local".to_owned(),
                prices: (0.0, 0.0),
                unit: "prompt",
                pilot_requests: 2,
                strata: stratum(vec![o(100.0, 50.0, 36.0), o(300.0, 150.0, 72.0)]),
            },
        ];
        let md = to_markdown(&rows, 2);
        // Priced: per sample 0.006 or 0.018 USD, mean 0.012, times 1 000 samples.
        assert!(
            md.contains("| ifscale generation | priced | 2 samples, 3 requests | 1000 samples | 2.00M (1.00M–3.00M) | 1.00M (500.0k–1.50M) | 12.00 (6.00–18.00) |"),
            "{md}"
        );
        assert!(
            md.contains("Expected cost of the run: 12.00 (6.00–18.00) USD."),
            "{md}"
        );
        // Unpriced: tokens and hours (54 s a prompt on average, 36–72 s).
        assert!(
            md.contains("| rift generation | local | 2 prompts, 2 requests | 1000 prompts | 200.0k (100.0k–300.0k) | 100.0k (50.0k–150.0k) | no prices; 15.0 h (10.0 h–20.0 h) of requests |"),
            "{md}"
        );
        assert!(
            md.contains("Models without prices (local): expected 300.0k (150.0k–450.0k) tokens and 15.0 h (10.0 h–20.0 h) of request time"),
            "{md}"
        );
    }
}
