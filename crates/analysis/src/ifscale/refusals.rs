//! Which keywords trigger refusals: per model, the keywords that appear in its refused samples far more often than
//! in its scored ones, so a reader sees that a model refuses "anthrax", not the task.
//!
//! For each keyword in at least one refused sample of a model, the 2 × 2 table (refused / scored samples, with /
//! without the keyword) gets a one-sided Fisher exact test (the probability, with the margins fixed, of at least
//! as many refused samples holding the keyword: the hypergeometric upper tail), and the p-values of one model's
//! keywords are adjusted together by Holm's step-down method (family-wise error). The table lists up to
//! [`ROWS_PER_MODEL`] keywords per model, lowest p first, among those more frequent in refused samples than in
//! scored ones. It is written only when some sample was refused.
//!
//! Only content refusals (`refused`) count: a sample `declined-impractical` declined the size of the task, not its
//! words, so its keywords say nothing about what the model objects to.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use schema::ifscale::{SampleScore, SampleStatus};
use schema::table::{Table, left, right};
use serde::Serialize;

use crate::Error;
use crate::tables;

/// Keywords listed per model at most.
pub const ROWS_PER_MODEL: usize = 20;
/// Holm-adjusted p below this is marked significant.
pub const ALPHA: f64 = 0.05;

/// One keyword of one model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KeywordRow {
    pub model: String,
    pub keyword: String,
    /// Refused samples holding the keyword, and refused samples.
    pub refused_with: u64,
    pub refused: u64,
    /// Scored samples holding the keyword, and scored samples.
    pub scored_with: u64,
    pub scored: u64,
    /// One-sided Fisher exact p.
    pub p: f64,
    /// Holm-adjusted p over the model's keywords tested.
    pub p_holm: f64,
}

/// `ln k!` for k = 0..=n.
fn ln_factorials(n: u64) -> Vec<f64> {
    let mut out = Vec::with_capacity(n as usize + 1);
    let mut acc = 0.0;
    out.push(0.0);
    for k in 1..=n {
        acc += (k as f64).ln();
        out.push(acc);
    }
    out
}

/// One-sided (greater) Fisher exact test of the 2 × 2 table `[[a, b], [c, d]]`: the probability, margins fixed,
/// that the top-left cell is `a` or more.
pub fn fisher_greater(a: u64, b: u64, c: u64, d: u64) -> f64 {
    let total = a + b + c + d;
    let lf = ln_factorials(total);
    let ln_choose = |n: u64, k: u64| lf[n as usize] - lf[k as usize] - lf[(n - k) as usize];
    let (row, col) = (a + b, a + c);
    let hi = row.min(col);
    let denom = ln_choose(total, row);
    let p: f64 = (a..=hi)
        .filter(|&x| row - x <= total - col)
        .map(|x| (ln_choose(col, x) + ln_choose(total - col, row - x) - denom).exp())
        .sum();
    p.min(1.0)
}

/// Holm's step-down adjustment: p-values in their given order, each adjusted (monotone, at most 1).
pub fn holm(ps: &[f64]) -> Vec<f64> {
    let m = ps.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| ps[i].total_cmp(&ps[j]).then(i.cmp(&j)));
    let mut out = vec![0.0; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * ps[i]).min(1.0));
        out[i] = running;
    }
    out
}

/// The keyword rows of `scores`, with each sample's keywords by id (`keywords`); a sample without keywords counts
/// as holding none.
pub fn keyword_rows(
    scores: &[SampleScore],
    keywords: &HashMap<String, Vec<String>>,
) -> Vec<KeywordRow> {
    let mut by_model: BTreeMap<&str, Vec<&SampleScore>> = BTreeMap::new();
    for s in scores {
        by_model.entry(s.model.as_str()).or_default().push(s);
    }
    let mut rows = Vec::new();
    for (model, samples) in by_model {
        let kw_set = |s: &SampleScore| -> BTreeSet<String> {
            keywords
                .get(&s.id)
                .map(|k| k.iter().map(|w| w.to_lowercase()).collect())
                .unwrap_or_default()
        };
        let refused: Vec<BTreeSet<String>> = samples
            .iter()
            .filter(|s| s.status == SampleStatus::Refused)
            .map(|s| kw_set(s))
            .collect();
        if refused.is_empty() {
            continue;
        }
        let scored: Vec<BTreeSet<String>> = samples
            .iter()
            .filter(|s| s.status == SampleStatus::Scored)
            .map(|s| kw_set(s))
            .collect();
        let mut in_refused: BTreeMap<&str, u64> = BTreeMap::new();
        for set in &refused {
            for k in set {
                *in_refused.entry(k.as_str()).or_default() += 1;
            }
        }
        let (nr, ns) = (refused.len() as u64, scored.len() as u64);
        let mut mine: Vec<KeywordRow> = in_refused
            .into_iter()
            .map(|(k, a)| {
                let c = scored.iter().filter(|s| s.contains(k)).count() as u64;
                KeywordRow {
                    model: model.to_owned(),
                    keyword: k.to_owned(),
                    refused_with: a,
                    refused: nr,
                    scored_with: c,
                    scored: ns,
                    p: fisher_greater(a, nr - a, c, ns - c),
                    p_holm: 1.0,
                }
            })
            .collect();
        let adjusted = holm(&mine.iter().map(|r| r.p).collect::<Vec<_>>());
        for (r, p) in mine.iter_mut().zip(adjusted) {
            r.p_holm = p;
        }
        mine.retain(|r| r.refused_with * r.scored.max(1) > r.scored_with * r.refused);
        mine.sort_by(|x, y| x.p.total_cmp(&y.p).then_with(|| x.keyword.cmp(&y.keyword)));
        mine.truncate(ROWS_PER_MODEL);
        rows.extend(mine);
    }
    rows
}

/// The table of keyword rows.
pub fn table(rows: &[KeywordRow]) -> Table {
    let mut t = Table::new(vec![
        left("model"),
        left("keyword"),
        right("refused samples with it"),
        right("scored samples with it"),
        right("p (one-sided Fisher)"),
        right("p (Holm)"),
        left("significant (5 %)"),
    ])
    .with_caption(format!(
        "Keywords that appear in refused samples more often than in scored ones, per model (up to {ROWS_PER_MODEL}, \
         lowest p first): one-sided Fisher exact test per keyword, Holm-adjusted over the model's keywords that \
         appear in a refused sample."
    ));
    for r in rows {
        t.push(vec![
            r.model.clone(),
            r.keyword.clone(),
            format!("{} of {}", r.refused_with, r.refused),
            format!("{} of {}", r.scored_with, r.scored),
            format!("{:.3e}", r.p),
            format!("{:.3e}", r.p_holm),
            if r.p_holm < ALPHA { "yes" } else { "no" }.to_owned(),
        ]);
    }
    t
}

/// Each IFScale prompt's keywords by prompt id, from a prompts file (`<run>/ifscale/prompts.jsonl`); nothing when
/// the file does not exist. A record without IFScale keywords is left out.
pub fn prompt_keywords(prompts: &Path) -> Result<HashMap<String, Vec<String>>, Error> {
    if !prompts.is_file() {
        return Ok(HashMap::new());
    }
    let records: Vec<schema::PromptRecord> = schema::read_jsonl(prompts)?;
    Ok(records
        .into_iter()
        .filter_map(|r| {
            let kws = r.extra.get("keywords")?.as_array()?;
            let kws = kws
                .iter()
                .filter_map(|k| k.as_str().map(str::to_owned))
                .collect();
            Some((r.id, kws))
        })
        .collect())
}

/// Writes `ifscale_refusal_keywords` when some sample was refused; nothing otherwise.
pub fn write_tables(
    scores: &[SampleScore],
    keywords: &HashMap<String, Vec<String>>,
    dir: &Path,
) -> Result<Vec<PathBuf>, Error> {
    if !scores.iter().any(|s| s.status == SampleStatus::Refused) {
        return Ok(Vec::new());
    }
    let rows = keyword_rows(scores, keywords);
    tables::write_table_markdown(dir, "ifscale_refusal_keywords", &table(&rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1e-300)
    }

    #[test]
    fn fisher_p_values_equal_the_exact_fractions() {
        // Fisher's tea-tasting table: P(X ≥ 3) = (16 + 1) / 70.
        assert!(close(fisher_greater(3, 1, 1, 3), 17.0 / 70.0));
        // All four cups right: 1 / 70.
        assert!(close(fisher_greater(4, 0, 0, 4), 1.0 / 70.0));
        // Ten refused samples all hold the word, fifteen scored ones none: 1 / C(25, 10) = 1 / 3 268 760.
        assert!(close(fisher_greater(10, 0, 0, 15), 1.0 / 3_268_760.0));
        // [[2, 1], [1, 2]]: P(X ≥ 2) = (9 + 1) / 20.
        assert!(close(fisher_greater(2, 1, 1, 2), 0.5));
        // Nothing unusual: the tail from the smallest possible value is everything.
        assert!(close(fisher_greater(0, 3, 3, 0), 1.0));
        assert!(close(fisher_greater(1, 1, 1, 1), 5.0 / 6.0));
    }

    #[test]
    fn holm_steps_down_and_stays_monotone() {
        let adj = holm(&[0.01, 0.04, 0.03, 0.005]);
        let want = [0.03, 0.06, 0.06, 0.02];
        for (a, w) in adj.iter().zip(want) {
            assert!((a - w).abs() < 1e-12, "{adj:?}");
        }
        assert_eq!(holm(&[0.5, 0.9]), vec![1.0, 1.0]);
        assert!(holm(&[]).is_empty());
    }

    #[test]
    fn the_trigger_word_stands_out() {
        let sample = |id: &str, status| SampleScore {
            id: id.to_owned(),
            model: "m".to_owned(),
            num_rules: 3,
            seed: 0,
            mode: schema::ifscale::MatchMode::Paper,
            status,
            accuracy: (status == SampleStatus::Scored).then_some(100.0),
            exact: 0,
            modified: 0,
            omitted: 0,
            omission_pct: None,
            modification_pct: None,
            primacy_ratio: None,
            latency_s: None,
            output_tokens: None,
            coherence: None,
            attempts: 1,
            reasoning_tokens: None,
        };
        let mut scores = Vec::new();
        let mut keywords = HashMap::new();
        for i in 0..12 {
            let refused = i < 5;
            let id = format!("s{i}");
            scores.push(sample(
                &id,
                if refused {
                    SampleStatus::Refused
                } else {
                    SampleStatus::Scored
                },
            ));
            let mut kws = vec!["revenue".to_owned(), format!("w{}", i % 3)];
            if refused {
                kws.push("Anthrax".to_owned());
            }
            keywords.insert(id, kws);
        }
        let rows = keyword_rows(&scores, &keywords);
        assert_eq!(rows[0].keyword, "anthrax");
        assert_eq!((rows[0].refused_with, rows[0].scored_with), (5, 0));
        // 1 / C(12, 5) = 1 / 792; Holm over the five words in refused samples.
        assert!(close(rows[0].p, 1.0 / 792.0));
        assert!(close(rows[0].p_holm, 5.0 / 792.0));
        assert!(rows.iter().all(|r| r.keyword != "revenue"), "{rows:?}");
        let t = table(&rows);
        assert_eq!(t.rows[0][6], "yes");
        assert!(rows[1..].iter().all(|r| r.p_holm >= ALPHA));
    }
}
