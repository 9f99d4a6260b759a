//! Sets of statistically tied models, instead of a ranking that over-reads noise: models are ordered by their
//! estimate, and a tied set is a maximal run of consecutive models in that order of which no two differ
//! significantly (after Holm's correction over every pair). Sets may overlap: when A beats C but neither differs
//! from B, the sets are {A, B} and {B, C}.

/// The tied sets, as indices into the order given. `order` lists the models best first; `differs(i, j)` says
/// whether models `order[i]` and `order[j]` differ significantly.
pub fn tied_sets(order: &[usize], differs: impl Fn(usize, usize) -> bool) -> Vec<Vec<usize>> {
    let k = order.len();
    let mut sets: Vec<(usize, usize)> = Vec::new();
    for start in 0..k {
        let mut end = start;
        'grow: while end + 1 < k {
            let next = end + 1;
            for i in start..next {
                if differs(order[i], order[next]) {
                    break 'grow;
                }
            }
            end = next;
        }
        // Keep a run only when no earlier run already holds it.
        if !sets.iter().any(|&(s, e)| s <= start && end <= e) {
            sets.push((start, end));
        }
    }
    sets.into_iter()
        .map(|(s, e)| order[s..=e].to_vec())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tied_sets_by_hand() {
        // A (0) beats C (2); B (1) differs from neither: {A, B}, {B, C}.
        let differs = |i: usize, j: usize| (i.min(j), i.max(j)) == (0, 2);
        assert_eq!(tied_sets(&[0, 1, 2], differs), vec![vec![0, 1], vec![1, 2]]);
        // Nobody differs: one set.
        assert_eq!(tied_sets(&[2, 0, 1], |_, _| false), vec![vec![2, 0, 1]]);
        // Everybody differs: singletons.
        assert_eq!(
            tied_sets(&[0, 1, 2], |_, _| true),
            vec![vec![0], vec![1], vec![2]]
        );
        // Two clear tiers: {0, 1} and {2, 3}.
        let tier = |i: usize| i / 2;
        assert_eq!(
            tied_sets(&[0, 1, 2, 3], |i, j| tier(i) != tier(j)),
            vec![vec![0, 1], vec![2, 3]]
        );
        assert!(tied_sets(&[], |_, _| false).is_empty());
    }
}
