//! Stage 7 pruning: drop terms whose nearest neighbour is closer than average.

use crate::embed::cosine;

/// Each vector's cosine distance (1 − cosine similarity) to its nearest other vector; `f32::INFINITY` when alone.
pub fn nearest_neighbour_distances(vectors: &[Vec<f32>]) -> Vec<(f32, Option<usize>)> {
    let n = vectors.len();
    let mut best: Vec<(f32, Option<usize>)> = vec![(f32::INFINITY, None); n];
    for i in 0..n {
        for j in (i + 1)..n {
            let d = 1.0 - cosine(&vectors[i], &vectors[j]);
            if d < best[i].0 {
                best[i] = (d, Some(j));
            }
            if d < best[j].0 {
                best[j] = (d, Some(i));
            }
        }
    }
    best
}

/// Indices to keep: those whose nearest-neighbour distance is at or above the mean distance.
///
/// This follows the paper literally: both members of a close pair fall below the mean and are both pruned.
/// Returns the kept indices (ascending) and the mean.
pub fn prune_below_mean(distances: &[f32]) -> (Vec<usize>, f64) {
    let finite: Vec<f64> = distances
        .iter()
        .filter(|d| d.is_finite())
        .map(|&d| f64::from(d))
        .collect();
    if finite.is_empty() {
        return ((0..distances.len()).collect(), 0.0);
    }
    let mean = finite.iter().sum::<f64>() / finite.len() as f64;
    let keep = distances
        .iter()
        .enumerate()
        .filter(|(_, d)| f64::from(**d) >= mean)
        .map(|(i, _)| i)
        .collect();
    (keep, mean)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(v: &[f32]) -> Vec<f32> {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / n).collect()
    }

    #[test]
    fn close_pairs_fall_below_the_mean() {
        // Two nearly identical vectors, two spread-out ones.
        let v = vec![
            unit(&[1.0, 0.0, 0.0]),
            unit(&[0.99, 0.05, 0.0]),
            unit(&[0.0, 1.0, 0.0]),
            unit(&[0.0, 0.0, 1.0]),
        ];
        let d = nearest_neighbour_distances(&v);
        assert_eq!(d[0].1, Some(1));
        assert_eq!(d[1].1, Some(0));
        let dist: Vec<f32> = d.iter().map(|x| x.0).collect();
        let (keep, mean) = prune_below_mean(&dist);
        assert_eq!(keep, [2, 3]);
        assert!(mean > f64::from(dist[0]) && mean < f64::from(dist[2]));
    }
}
