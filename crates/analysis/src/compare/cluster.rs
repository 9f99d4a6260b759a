//! Standard errors of answer-level means when answers cluster within prompts (Miller, "Adding Error Bars to
//! Evals", 2024): the cluster-robust (sandwich) variance of a ratio mean Σy ÷ Σm, its design effect against the
//! variance the same answers would have if independent, and the same for a paired difference of two such means
//! over the same clusters.
//!
//! A paired difference has two effects on its variance, reported apart:
//! - the **clustering design effect**: the clustered variance of the paired difference ÷ its variance if the paired
//!   answers were independent (s_d² ÷ n over the per-answer differences a_i − b_i); above 1 when answers of a
//!   prompt succeed or fail together;
//! - the **pairing gain**: the variance of the difference of two independent, unpaired shares (Var_iid(a) +
//!   Var_iid(b)) ÷ the variance of the paired difference with the answers independent (s_d² ÷ n); above 1 when the
//!   two models tend to get the same questions right.
//!
//! Their ratio, clustered ÷ unpaired-independent variance, mixes both, so it is not reported.
//!
//! With G clusters, cluster g holding m_g answers whose values add up to y_g, and r = Σy ÷ Σm:
//! Var(r) = G ÷ (G − 1) × Σ_g (y_g − r m_g)² ÷ (Σm)². With one answer per cluster this is s² ÷ n, the usual variance
//! of a mean (s² with n − 1), so the design effect Var_clustered ÷ (s² ÷ n) is then exactly 1.

use serde::Serialize;

/// One cluster's totals: the sum of its answers' values, the sum of their squares, and its answer count.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ClusterSums {
    pub sum: f64,
    pub sum_sq: f64,
    pub count: f64,
}

impl ClusterSums {
    /// A cluster of 0/1 answers: `correct` of `count`.
    pub fn binary(correct: u64, count: u64) -> ClusterSums {
        ClusterSums {
            sum: correct as f64,
            sum_sq: correct as f64,
            count: count as f64,
        }
    }
}

/// An answer-level mean with its clustered and independent standard errors.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ClusteredMean {
    pub mean: f64,
    /// Answers.
    pub n: f64,
    /// Clusters with at least one answer.
    pub clusters: usize,
    /// The standard error as if every answer were independent: s ÷ √n.
    pub se_iid: Option<f64>,
    /// The cluster-robust standard error.
    pub se_clustered: Option<f64>,
    /// Var_clustered ÷ Var_iid: how many times the variance is larger because answers cluster (None when the
    /// independent variance is 0).
    pub design_effect: Option<f64>,
}

/// The clustered mean of `clusters` (clusters without answers are left out); None without answers.
pub fn clustered_mean(clusters: &[ClusterSums]) -> Option<ClusteredMean> {
    let used: Vec<&ClusterSums> = clusters.iter().filter(|c| c.count > 0.0).collect();
    let n: f64 = used.iter().map(|c| c.count).sum();
    if n <= 0.0 {
        return None;
    }
    let total: f64 = used.iter().map(|c| c.sum).sum();
    let total_sq: f64 = used.iter().map(|c| c.sum_sq).sum();
    let r = total / n;
    let se_iid = (n > 1.0).then(|| {
        let s2 = ((total_sq - n * r * r) / (n - 1.0)).max(0.0);
        (s2 / n).sqrt()
    });
    let g = used.len();
    let se_clustered = (g > 1).then(|| {
        let ss: f64 = used.iter().map(|c| (c.sum - r * c.count).powi(2)).sum();
        (g as f64 / (g as f64 - 1.0) * ss / (n * n)).sqrt()
    });
    let design_effect = match (se_iid, se_clustered) {
        (Some(i), Some(c)) if i > 0.0 => Some((c / i).powi(2)),
        _ => None,
    };
    Some(ClusteredMean {
        mean: r,
        n,
        clusters: g,
        se_iid,
        se_clustered,
        design_effect,
    })
}

/// One cluster of paired answers: model a's and model b's sums over the same answers (equal counts) and
/// Σ (a_i − b_i)² over them (for 0/1 answers, the discordant pairs).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PairedCluster {
    pub a: ClusterSums,
    pub b: ClusterSums,
    pub sum_sq_diff: f64,
}

impl PairedCluster {
    /// `count` paired 0/1 answers: a right on `correct_a`, b on `correct_b`, `discordant` right for one only.
    pub fn binary(correct_a: u64, correct_b: u64, discordant: u64, count: u64) -> PairedCluster {
        PairedCluster {
            a: ClusterSums::binary(correct_a, count),
            b: ClusterSums::binary(correct_b, count),
            sum_sq_diff: discordant as f64,
        }
    }
}

/// The difference of two answer-level means over the same paired answers, with its clustered standard error (the
/// linearized residuals of both means, differenced within each cluster, so the pairing is used), its standard error
/// with the paired answers independent, and the one that ignores both the clustering and the pairing.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ClusteredDiff {
    pub mean_a: f64,
    pub mean_b: f64,
    pub diff: f64,
    pub clusters: usize,
    pub se_clustered: Option<f64>,
    /// s_d ÷ √n over the per-answer differences: paired, answers independent.
    pub se_paired: Option<f64>,
    /// √(Var_iid(a) + Var_iid(b)): what an unpaired test on independent answers would use.
    pub se_naive: Option<f64>,
    /// se_clustered² ÷ se_paired²: how much clustering within prompts inflates the paired variance (None when
    /// se_paired is 0).
    pub clustering_design_effect: Option<f64>,
    /// se_naive² ÷ se_paired²: how much pairing shrinks the variance against independent, unpaired shares (None
    /// when se_paired is 0).
    pub pairing_gain: Option<f64>,
}

/// The paired clustered difference a − b; None unless both sides have answers.
pub fn clustered_diff(clusters: &[PairedCluster]) -> Option<ClusteredDiff> {
    let a: Vec<ClusterSums> = clusters.iter().map(|c| c.a).collect();
    let b: Vec<ClusterSums> = clusters.iter().map(|c| c.b).collect();
    let (ma, mb) = (clustered_mean(&a)?, clustered_mean(&b)?);
    let used: Vec<(&ClusterSums, &ClusterSums)> = clusters
        .iter()
        .filter(|c| c.a.count > 0.0 || c.b.count > 0.0)
        .map(|c| (&c.a, &c.b))
        .collect();
    let g = used.len();
    let se_clustered = (g > 1).then(|| {
        let ss: f64 = used
            .iter()
            .map(|(x, y)| {
                let ea = (x.sum - ma.mean * x.count) / ma.n;
                let eb = (y.sum - mb.mean * y.count) / mb.n;
                (ea - eb).powi(2)
            })
            .sum();
        (g as f64 / (g as f64 - 1.0) * ss).sqrt()
    });
    let se_naive = match (ma.se_iid, mb.se_iid) {
        (Some(x), Some(y)) => Some((x * x + y * y).sqrt()),
        _ => None,
    };
    // The paired answers as independent: s_d² ÷ n = (Σ(a_i − b_i)² − n d²) ÷ (n (n − 1)).
    let n = ma.n;
    let d = ma.mean - mb.mean;
    let se_paired = (n > 1.0 && (ma.n - mb.n).abs() < 0.5).then(|| {
        let sq: f64 = clusters.iter().map(|c| c.sum_sq_diff).sum();
        ((sq - n * d * d).max(0.0) / (n * (n - 1.0))).sqrt()
    });
    let ratio = |top: Option<f64>| match (top, se_paired) {
        (Some(t), Some(p)) if p > 0.0 => Some((t / p).powi(2)),
        _ => None,
    };
    Some(ClusteredDiff {
        mean_a: ma.mean,
        mean_b: mb.mean,
        diff: d,
        clusters: g,
        se_clustered,
        se_paired,
        se_naive,
        clustering_design_effect: ratio(se_clustered),
        pairing_gain: ratio(se_naive),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_answer_per_cluster_is_the_ordinary_standard_error() {
        // 0/1 answers 1, 1, 0, 1: mean 0.75, s² = (3 − 4·0.5625)/3 = 0.25, SE² = 0.0625.
        let c: Vec<ClusterSums> = [1, 1, 0, 1]
            .iter()
            .map(|&y| ClusterSums::binary(y, 1))
            .collect();
        let m = clustered_mean(&c).unwrap();
        assert!((m.mean - 0.75).abs() < 1e-15);
        assert!((m.se_iid.unwrap() - 0.25).abs() < 1e-12);
        assert!((m.se_clustered.unwrap() - 0.25).abs() < 1e-12);
        assert!((m.design_effect.unwrap() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn clusters_that_succeed_or_fail_together_by_hand() {
        // Two prompts of four answers, one all right, one all wrong: mean 0.5.
        // iid: s² = (4 − 8·0.25)/7 = 2/7, SE² = 2/56 = 1/28.
        // clustered: residuals 4 − 2 = 2 and 0 − 2 = −2, G/(G−1) = 2, SE² = 2·8/64 = 1/4. Design effect 7.
        let c = [ClusterSums::binary(4, 4), ClusterSums::binary(0, 4)];
        let m = clustered_mean(&c).unwrap();
        assert!((m.se_iid.unwrap().powi(2) - 1.0 / 28.0).abs() < 1e-12);
        assert!((m.se_clustered.unwrap().powi(2) - 0.25).abs() < 1e-12);
        assert!((m.design_effect.unwrap() - 7.0).abs() < 1e-9);
        assert_eq!(m.clusters, 2);
        assert_eq!(clustered_mean(&[ClusterSums::default()]), None);
    }

    #[test]
    fn paired_clustered_difference_by_hand() {
        // Three prompts of two answers. a: 2, 1, 0 right (mean 0.5); b: 1, 1, 0 (mean 1/3).
        // Residuals a: (2 − 1, 1 − 1, 0 − 1)/6 = (1, 0, −1)/6; b: (1 − 2/3, 1 − 2/3, 0 − 2/3)/6.
        // Differences: (2/3, −1/3, −1/3)/6; Σ² = (6/9)/36 = 1/54; × 3/2 = 1/36.
        // Per answer (a, b): (1, 1) (1, 0) | (1, 1) (0, 0) | (0, 0) (0, 0): one discordant pair.
        let pairs = [
            PairedCluster::binary(2, 1, 1, 2),
            PairedCluster::binary(1, 1, 0, 2),
            PairedCluster::binary(0, 0, 0, 2),
        ];
        let d = clustered_diff(&pairs).unwrap();
        assert!((d.diff - (0.5 - 1.0 / 3.0)).abs() < 1e-15);
        assert!((d.se_clustered.unwrap().powi(2) - 1.0 / 36.0).abs() < 1e-12);
        // Naive: Var_iid(a) = (3 − 6·0.25)/5/6 = 0.05, Var_iid(b) = (2 − 6/9)/5/6 = 2/45.
        let naive = 0.05 + 2.0 / 45.0;
        assert!((d.se_naive.unwrap().powi(2) - naive).abs() < 1e-12);
        // Paired, independent: differences 0 1 0 0 0 0, d = 1/6, s_d² = (1 − 6/36)/5 = 1/6, ÷ 6 = 1/36.
        assert!((d.se_paired.unwrap().powi(2) - 1.0 / 36.0).abs() < 1e-12);
        assert!((d.clustering_design_effect.unwrap() - 1.0).abs() < 1e-9);
        assert!((d.pairing_gain.unwrap() - naive * 36.0).abs() < 1e-9);
    }

    #[test]
    fn pairing_gain_and_clustering_effect_apart() {
        // One answer per prompt (the baseline structure): no clustering, so the clustering design effect is 1,
        // and two models that agree on 8 of 10 answers gain from pairing.
        // a: 1 1 1 1 1 0 0 0 0 0, b: 1 1 1 1 0 0 0 0 0 1 → differences 0 0 0 0 1 0 0 0 0 −1.
        let a = [1, 1, 1, 1, 1, 0, 0, 0, 0, 0];
        let b = [1, 1, 1, 1, 0, 0, 0, 0, 0, 1];
        let pairs: Vec<PairedCluster> = a
            .iter()
            .zip(&b)
            .map(|(&x, &y)| PairedCluster::binary(x, y, u64::from(x != y), 1))
            .collect();
        let d = clustered_diff(&pairs).unwrap();
        assert!((d.clustering_design_effect.unwrap() - 1.0).abs() < 1e-9);
        // s_d² = 2/9, ÷ 10; Var_iid(a) = Var_iid(b) = (5 − 2.5)/9/10; gain = (5/9)/(2/9) = 2.5.
        assert!((d.se_paired.unwrap().powi(2) - 2.0 / 90.0).abs() < 1e-12);
        assert!((d.pairing_gain.unwrap() - 2.5).abs() < 1e-9);
    }
}
