//! Standard errors of answer-level shares clustered by prompt, and their design effect, as polars expressions over
//! per-prompt counts: the same formula as `compare::cluster::clustered_mean` (which the tests check these against).
//!
//! A share Σy ÷ Σm over prompts (y of m answers in each prompt: correct of settled answers, flagged of incorrect
//! ones) has the clustered variance G ÷ (G − 1) × Σ_g (y_g − r m_g)² ÷ (Σm)², with r the share and G the prompts that
//! hold any of the m answers; expanded, Σ (y − r m)² = Σy² − 2r Σym + r² Σm², so five sums per group are enough, and
//! sums add up, so groups pool (linear + jumping) by adding their sums. The design effect divides it by the variance
//! of the same answers if they were independent, s² ÷ Σm with s² = (Σy − Σm r²) ÷ (Σm − 1) (0/1 answers).

use polars::prelude::*;

/// The sum columns, after their prefix.
const PARTS: [&str; 6] = ["y", "m", "yy", "ym", "mm", "g"];

fn name(prefix: &str, part: &str) -> String {
    format!("{prefix}_{part}")
}

/// The names of the sum columns of `prefix` (to drop once the SE is computed).
pub(crate) fn sum_columns(prefix: &str) -> Vec<String> {
    PARTS.iter().map(|p| name(prefix, p)).collect()
}

/// Aggregations over per-prompt rows (inside a group-by) of the sums a clustered SE of Σy ÷ Σm needs.
pub(crate) fn sums(y: Expr, m: Expr, prefix: &str) -> Vec<Expr> {
    let y = y.cast(DataType::Float64);
    let m = m.cast(DataType::Float64);
    vec![
        y.clone().sum().alias(name(prefix, "y")),
        m.clone().sum().alias(name(prefix, "m")),
        (y.clone() * y.clone()).sum().alias(name(prefix, "yy")),
        (y * m.clone()).sum().alias(name(prefix, "ym")),
        (m.clone() * m.clone()).sum().alias(name(prefix, "mm")),
        m.gt(lit(0.0))
            .cast(DataType::Float64)
            .sum()
            .alias(name(prefix, "g")),
    ]
}

/// Aggregations that pool groups: each sum column summed again.
pub(crate) fn pooled(prefix: &str) -> Vec<Expr> {
    PARTS
        .iter()
        .map(|p| col(name(prefix, p)).sum().alias(name(prefix, p)))
        .collect()
}

/// The clustered SE (in percentage points) and the design effect from the sums; null where undefined (fewer than
/// two prompts or answers, or no variance).
pub(crate) fn se_and_deff(prefix: &str, se: &str, deff: &str) -> [Expr; 2] {
    let c = |p: &str| col(name(prefix, p));
    let null = || lit(NULL).cast(DataType::Float64);
    let r = c("y") / c("m");
    let ss = c("yy") - lit(2.0) * r.clone() * c("ym") + r.clone() * r.clone() * c("mm");
    let ss = when(ss.clone().lt(lit(0.0))).then(lit(0.0)).otherwise(ss);
    let var_cl = c("g") / (c("g") - lit(1.0)) * ss / (c("m") * c("m"));
    let var_iid = (c("y") - c("m") * r.clone() * r) / (c("m") - lit(1.0)) / c("m");
    let defined = c("g").gt(lit(1.0)).and(c("m").gt(lit(1.0)));
    [
        when(defined.clone())
            .then(var_cl.clone().sqrt() * lit(100.0))
            .otherwise(null())
            .alias(se),
        when(defined.and(var_iid.clone().gt(lit(0.0))))
            .then(var_cl / var_iid)
            .otherwise(null())
            .alias(deff),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::cluster::{ClusterSums, clustered_mean};

    #[test]
    fn matches_the_compare_implementation() {
        // Three prompts in one group: 3 of 4, 0 of 4, 2 of 2 right; one empty prompt (no answers) is no cluster.
        let y = [3u32, 0, 2, 0];
        let m = [4u32, 4, 2, 0];
        let df = df!("k" => [1, 1, 1, 1], "y" => y, "m" => m).unwrap();
        let out = df
            .lazy()
            .group_by([col("k")])
            .agg(sums(col("y"), col("m"), "s"))
            .with_columns(se_and_deff("s", "se", "deff"))
            .collect()
            .unwrap();
        let get = |c: &str| out.column(c).unwrap().f64().unwrap().get(0).unwrap();
        let want = clustered_mean(
            &y.iter()
                .zip(m)
                .map(|(&y, m)| ClusterSums::binary(u64::from(y), u64::from(m)))
                .collect::<Vec<_>>(),
        )
        .unwrap();
        assert!((get("se") - 100.0 * want.se_clustered.unwrap()).abs() < 1e-9);
        assert!((get("deff") - want.design_effect.unwrap()).abs() < 1e-9);
        assert_eq!(get("s_g"), 3.0);
    }
}
