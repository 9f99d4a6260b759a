//! The overview's denominators, counted from the files a stage wrote.

use report::overview::ifscale_denominators;
use schema::ifscale::AttemptLog;

fn attempt(id: &str, coherence: Option<u8>, judge_error: Option<&str>) -> AttemptLog {
    AttemptLog {
        id: id.to_owned(),
        model: "m".to_owned(),
        attempt: 1,
        accepted: true,
        reason: None,
        coherence,
        coherence_reason: None,
        judge_error: judge_error.map(schema::judge::JudgeFailure::parse),
        words: 5,
        latency_s: None,
        output_tokens: None,
        reasoning_tokens: None,
        refusal_judge: None,
    }
}

#[test]
fn the_coherence_line_counts_judged_and_unjudged_attempts_from_the_attempts_log() {
    let dir = tempfile::tempdir().unwrap();
    let (scores, attempts) = (
        dir.path().join("scores.jsonl"),
        dir.path().join("attempts.jsonl"),
    );
    std::fs::write(&scores, "").unwrap();
    // One attempt judged, one whose judge reply had no readable score after every try.
    let lines: String = [
        attempt("judged", Some(8), None),
        attempt("silent", None, Some("no readable score")),
    ]
    .iter()
    .map(|a| serde_json::to_string(a).unwrap() + "\n")
    .collect();
    std::fs::write(&attempts, lines).unwrap();
    let shown = ifscale_denominators(&scores, &attempts, true).unwrap();
    assert_eq!(
        shown[1],
        (
            "Coherence judged".to_owned(),
            "0 samples; 1 attempts judged, 1 unjudged (the judge gave no verdict after every try; they stand on the other rules)"
                .to_owned()
        )
    );
}
