//! The 24 published IFScale configurations beside a run's models: the published accuracy per density (from
//! `datasets/ifscale-reference/accuracy_by_rules.csv`) for the overlay figure, and the published leaderboard
//! (`published_results_table.csv`) beside the run's rows in `ifscale_results_vs_published`. Both files are built
//! into the binary, so every run can be compared without the repository at hand.

use std::path::{Path, PathBuf};

use super::IfscaleSummary;
use super::results::{HEADLINE_NS, PublishedRow, parse_published_results};
use crate::{Error, tables};

const ACCURACY_BY_RULES: &str =
    include_str!("../../../../datasets/ifscale-reference/accuracy_by_rules.csv");
const RESULTS_TABLE: &str =
    include_str!("../../../../datasets/ifscale-reference/published_results_table.csv");

/// Where the built-in files came from, for error messages.
fn source(name: &str) -> PathBuf {
    Path::new("datasets/ifscale-reference").join(name)
}

/// One published configuration's mean accuracy (%) per density, in density order.
#[derive(Debug, Clone, PartialEq)]
pub struct PublishedCurve {
    pub model: String,
    pub points: Vec<(i64, f64)>,
}

/// The 24 published configurations' accuracy-vs-N curves.
pub fn curves() -> Result<Vec<PublishedCurve>, Error> {
    let path = source("accuracy_by_rules.csv");
    let mut out: Vec<PublishedCurve> = Vec::new();
    for (i, line) in ACCURACY_BY_RULES.lines().enumerate().skip(1) {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |field: &str| Error::Input {
            path: path.clone(),
            message: format!("line {}: field `{field}` is not usable", i + 1),
        };
        let mut cells = line.split(',');
        let model = cells.next().ok_or_else(|| bad("model"))?.trim().to_owned();
        let n: i64 = cells
            .next()
            .and_then(|c| c.trim().parse().ok())
            .ok_or_else(|| bad("num_rules"))?;
        let acc: f64 = cells
            .next()
            .and_then(|c| c.trim().parse().ok())
            .ok_or_else(|| bad("accuracy"))?;
        match out.last_mut() {
            Some(c) if c.model == model => c.points.push((n, acc)),
            _ => out.push(PublishedCurve {
                model,
                points: vec![(n, acc)],
            }),
        }
    }
    for c in &mut out {
        c.points.sort_by_key(|p| p.0);
    }
    Ok(out)
}

/// The published leaderboard rows.
pub fn leaderboard() -> Result<Vec<PublishedRow>, Error> {
    parse_published_results(RESULTS_TABLE, &source("published_results_table.csv"))
}

/// Writes `ifscale_results_vs_published.md`: the run's models at the leaderboard's densities (accuracy ± std
/// across seeds), then the published rows, marked as such.
pub fn write_table(summary: &IfscaleSummary, dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let cell = |acc: Option<f64>, std: Option<f64>| match (acc, std) {
        (Some(a), Some(s)) => format!("{a:.1} ± {s:.1}"),
        (Some(a), None) => format!("{a:.1}"),
        _ => "–".to_owned(),
    };
    let mut rows: Vec<Vec<String>> = Vec::new();
    for m in &summary.models {
        let mut row = vec![m.clone(), "this run".to_owned()];
        for n in HEADLINE_NS {
            let r = summary.model_rows(m).find(|r| r.num_rules == n);
            row.push(cell(
                r.and_then(|r| r.accuracy),
                r.and_then(|r| r.accuracy_std),
            ));
        }
        rows.push(row);
    }
    for p in leaderboard()? {
        let mut row = vec![p.name.clone(), "published".to_owned()];
        for i in 0..HEADLINE_NS.len() {
            row.push(cell(
                p.accuracy.get(i).copied().flatten(),
                p.std.get(i).copied().flatten(),
            ));
        }
        rows.push(row);
    }
    let header: Vec<String> = ["model", "source"]
        .into_iter()
        .map(str::to_owned)
        .chain(HEADLINE_NS.iter().map(|n| format!("N = {n}")))
        .collect();
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    tables::write_markdown(
        dir,
        "ifscale_results_vs_published",
        "This run's models beside the published leaderboard of the IFScale paper (its 23 rows, marked \
         \"published\"): mean accuracy (%) ± sample std across seeds at the leaderboard's densities.",
        &header,
        &rows,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_published_data_has_24_configurations() {
        let c = curves().expect("curves");
        assert_eq!(c.len(), 24);
        assert!(c.iter().all(|c| c.points.len() == 50), "N = 10, 20, …, 500");
        let l = leaderboard().expect("leaderboard");
        // The leaderboard lists 23 of the 24 configurations (gemini-2.5-pro at high effort is in the curves only).
        assert_eq!(l.len(), 23);
        let haiku = l
            .iter()
            .find(|r| r.name == "claude-3.5-haiku")
            .expect("haiku");
        assert_eq!(haiku.accuracy[0], Some(98.0));
    }
}
