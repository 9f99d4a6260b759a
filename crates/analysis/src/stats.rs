//! Small statistics helpers: a seeded generator, sample standard deviation and percentile bootstrap intervals.

/// SplitMix64: a tiny seeded generator, so bootstrap intervals are the same on every machine.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, n)` (`n > 0`), by multiply-shift.
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Mean of a non-empty slice.
pub fn mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        None
    } else {
        Some(xs.iter().sum::<f64>() / xs.len() as f64)
    }
}

/// Sample standard deviation (ddof = 1); `None` for fewer than two values.
pub fn std_ddof1(xs: &[f64]) -> Option<f64> {
    if xs.len() < 2 {
        return None;
    }
    let m = mean(xs)?;
    let ss: f64 = xs.iter().map(|x| (x - m).powi(2)).sum();
    Some((ss / (xs.len() - 1) as f64).sqrt())
}

/// Linear-interpolated quantile of sorted values (numpy's default "linear" method).
pub fn quantile_sorted(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    let frac = pos - lo as f64;
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * frac)
}

/// Percentile bootstrap interval of the mean: `resamples` resamples with replacement, central `level` mass.
pub fn bootstrap_mean_ci(
    xs: &[f64],
    resamples: usize,
    level: f64,
    rng: &mut SplitMix64,
) -> Option<(f64, f64)> {
    if xs.is_empty() || resamples == 0 {
        return None;
    }
    let mut means: Vec<f64> = (0..resamples)
        .map(|_| (0..xs.len()).map(|_| xs[rng.below(xs.len())]).sum::<f64>() / xs.len() as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    Some((
        quantile_sorted(&means, tail)?,
        quantile_sorted(&means, 1.0 - tail)?,
    ))
}

/// Seed for one group's bootstrap: the run seed mixed with a stable hash of the group key (FNV-1a).
pub fn group_seed(seed: u64, key: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h ^ seed.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn std_matches_hand_computation() {
        // Values 90, 100, 100, 100, 100: mean 98, squared deviations 64 + 4 * 4 = 80, / 4 = 20.
        let s = std_ddof1(&[90.0, 100.0, 100.0, 100.0, 100.0]).unwrap();
        assert!((s - 20f64.sqrt()).abs() < 1e-12);
        assert_eq!(std_ddof1(&[1.0]), None);
    }

    #[test]
    fn bootstrap_is_seeded_and_brackets_the_mean() {
        let xs = [10.0, 20.0, 30.0, 40.0, 50.0];
        let a = bootstrap_mean_ci(&xs, 2000, 0.95, &mut SplitMix64::new(7)).unwrap();
        let b = bootstrap_mean_ci(&xs, 2000, 0.95, &mut SplitMix64::new(7)).unwrap();
        assert_eq!(a, b);
        assert!(a.0 < 30.0 && 30.0 < a.1 && a.0 >= 10.0 && a.1 <= 50.0);
    }

    #[test]
    fn quantile_interpolates() {
        assert_eq!(quantile_sorted(&[0.0, 10.0], 0.25), Some(2.5));
    }
}
