//! The pre-judge over the committed labelled pairs (`datasets/rift/judge-pairs.csv`): never a false CORRECT.

use harness::pairs::{PairSource, PairVerdict, judge_pairs, kind_stats, read_pairs};

#[test]
fn the_pre_judge_never_says_correct_for_an_incorrect_labelled_pair() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../datasets/rift/judge-pairs.csv");
    let pairs = read_pairs(&path).unwrap();
    assert!(pairs.len() >= 300, "{}", pairs.len());
    assert!(pairs.iter().all(|p| p.label.is_some() && p.kind.is_some()));
    let judged = judge_pairs(&pairs, None).unwrap();
    assert!(judged.iter().all(|j| match j.source {
        PairSource::PreJudge => j.verdict != PairVerdict::Undecided,
        PairSource::Unjudged => j.verdict == PairVerdict::Undecided,
        PairSource::Llm => false,
    }));
    let stats = kind_stats(&pairs, &judged);
    assert_eq!(stats.len(), 11, "ten kinds and `all`");
    for s in &stats {
        assert_eq!(s.false_correct, 0, "{s:?}");
        assert!(s.correct_precision().is_none_or(|p| p == 1.0), "{s:?}");
        assert!((0.0..=1.0).contains(&s.coverage()), "{s:?}");
    }
    let of = |k: &str| stats.iter().find(|s| s.kind == k).unwrap();
    assert_eq!(of("exact").coverage(), 1.0);
    assert_eq!(of("all").pairs, pairs.len());
    assert!(of("all").coverage() > 0.2 && of("all").precision() == Some(1.0));
}
