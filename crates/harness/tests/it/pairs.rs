//! The pre-judge over the committed labelled pairs (`datasets/rift/judge-pairs.csv`): never a false verdict, and at
//! least 40 % of the pairs settled (issue 27).

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
        assert_eq!((s.false_correct, s.false_incorrect), (0, 0), "{s:?}");
        assert!(s.correct_precision().is_none_or(|p| p == 1.0), "{s:?}");
        assert!((0.0..=1.0).contains(&s.coverage()), "{s:?}");
    }
    let of = |k: &str| stats.iter().find(|s| s.kind == k).unwrap();
    assert_eq!(of("exact").coverage(), 1.0);
    assert_eq!(of("all").pairs, pairs.len());
    assert!(of("all").coverage() >= 0.4 && of("all").precision() == Some(1.0));
}

/// With a judge model, the pairs the pre-judge leaves open go to it through the run's retry loop: a thinking judge
/// whose first reply is garbled is asked again; a pair it never answers stays UNDECIDED (unjudged), never incorrect.
#[test]
fn open_pairs_go_to_the_judge_and_unreadable_ones_stay_undecided() {
    use harness::pairs::{Pair, PairJudge};
    let mock = crate::support::mock(&[
        (
            "Given answer: Lucifer",
            &["<think>Venus is the morning star.</think>\nhmm", "CORRECT"],
        ),
        ("Given answer: Saturn", &["INCORRECT"]),
        ("Given answer: the evening planet", &["I cannot tell."]),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let pair = |id: &str, given: &str| Pair {
        id: id.to_owned(),
        question: "Which planet is the morning star?".to_owned(),
        expected: "Venus".to_owned(),
        given: given.to_owned(),
        kind: None,
        label: None,
    };
    let pairs = vec![
        pair("exact", "Venus"),
        pair("alias", "Lucifer"),
        pair("wrong", "Saturn"),
        pair("shrug", "the evening planet"),
    ];
    let judge = crate::support::model(&mock, "judge");
    let call = harness::helper::HelperCall {
        tries: 2,
        ..harness::helper::HelperCall::judge()
    };
    let files = schema::paths::ModelPaths::in_dir(&dir.path().join("judge"));
    let client = crate::support::client(dir.path());
    let judged = judge_pairs(
        &pairs,
        Some(&PairJudge {
            judge: harness::helper::JudgeRef {
                role: schema::judge::JudgeRole::RiftAnswers,
                model: &judge,
                prompt: "Question: {question}\nExpected answer: {expected}\nGiven answer: {given}\nCORRECT or INCORRECT?",
                call: &call,
            },
            files: &files,
            client: &client,
        }),
    )
    .unwrap();
    let got: Vec<(&str, PairVerdict, PairSource)> = judged
        .iter()
        .map(|j| (j.id.as_str(), j.verdict, j.source))
        .collect();
    assert_eq!(
        got,
        [
            ("exact", PairVerdict::Correct, PairSource::PreJudge),
            ("alias", PairVerdict::Correct, PairSource::Llm),
            ("wrong", PairVerdict::Incorrect, PairSource::Llm),
            ("shrug", PairVerdict::Undecided, PairSource::Unjudged),
        ]
    );
    // Exact settled without a request; Lucifer twice, Saturn once, "no idea" twice (both tries unreadable).
    assert_eq!(mock.requests(), 5);
}
