//! The RIFT paper's Table 2 (`datasets/rift/published-table2.csv`, built into the binary), shown below a run's own
//! rows so a user sees where their models fall.

use std::path::Path;

use crate::Error;

const TABLE2: &str = include_str!("../../../../datasets/rift/published-table2.csv");

/// One published row (accuracies in percent).
#[derive(Debug, Clone, PartialEq)]
pub struct PublishedRow {
    pub model: String,
    pub baseline: (f64, f64),
    /// Mean, standard error, median.
    pub linear: (f64, f64, f64),
    pub jumping: (f64, f64, f64),
}

impl PublishedRow {
    /// Δ = (A_linear − A_jumping) / A_linear × 100.
    pub fn delta(&self) -> f64 {
        (self.linear.0 - self.jumping.0) / self.linear.0 * 100.0
    }
}

/// The six published rows.
pub fn table2() -> Result<Vec<PublishedRow>, Error> {
    let path = Path::new("datasets/rift/published-table2.csv");
    let mut out = Vec::new();
    for (i, line) in TABLE2.lines().enumerate().skip(1) {
        if line.trim().is_empty() {
            continue;
        }
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        let num = |c: usize, field: &str| -> Result<f64, Error> {
            cells
                .get(c)
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| Error::Input {
                    path: path.to_owned(),
                    message: format!("line {}: field `{field}` is not a number", i + 1),
                })
        };
        out.push(PublishedRow {
            model: cells.first().copied().unwrap_or_default().to_owned(),
            baseline: (num(2, "baseline_mean")?, num(3, "baseline_se")?),
            linear: (
                num(4, "linear_mean")?,
                num(5, "linear_se")?,
                num(6, "linear_median")?,
            ),
            jumping: (
                num(7, "jumping_mean")?,
                num(8, "jumping_se")?,
                num(9, "jumping_median")?,
            ),
        });
    }
    Ok(out)
}

/// The published rows as `rift_table2.md` rows (model marked "published"; the unjudged column does not apply).
pub fn markdown_rows() -> Result<Vec<Vec<String>>, Error> {
    Ok(table2()?
        .iter()
        .map(|p| {
            vec![
                format!("{} (published)", p.model),
                format!("{:.2} (± {:.2})", p.baseline.0, p.baseline.1),
                format!("{:.2} (± {:.2})", p.linear.0, p.linear.1),
                format!("{:.2}", p.linear.2),
                format!("{:.2} (± {:.2})", p.jumping.0, p.jumping.1),
                format!("{:.2}", p.jumping.2),
                format!("{:.1}", p.delta()),
                format!("{:.1}", p.linear.0 - p.jumping.0),
                format!("{:.1}", p.baseline.0 - p.jumping.0),
                "–".to_owned(),
            ]
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_papers_six_rows() {
        let t = table2().expect("table");
        assert_eq!(t.len(), 6);
        let big = t
            .iter()
            .find(|r| r.model == "gpt-oss-120b")
            .expect("gpt-oss-120b");
        assert_eq!(big.baseline, (84.83, 0.12));
        assert_eq!(big.jumping, (13.9, 0.24, 2.94));
        assert!((big.delta() - 74.79).abs() < 0.01);
    }
}
