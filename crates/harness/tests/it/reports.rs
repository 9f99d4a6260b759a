//! `score-reports`: a generations CSV in, per-sample rows and keyword labels out; responses need the attempts log
//! when a sample has several.

use harness::reports::{ScoreReports, read_responses, score_reports};
use schema::ifscale::{KeywordLabel, KeywordStatus, MatchMode};

#[test]
fn a_generations_csv_is_scored_into_csv_rows_and_jsonl_labels() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("generations.csv");
    std::fs::write(
        &input,
        "id,model,seed,num_rules,constraints,generated_text,latency_seconds\n\
         a,m1,0,2,\"revenue, margin\",\"The revenue grew.\",1.5\n\
         ,m2,1,2.0,\"revenue, growth\",\"Nothing relevant here.\",\n",
    )
    .unwrap();
    let out = dir.path().join("scores.csv");
    let labels = dir.path().join("labels.jsonl");
    let s = score_reports(&ScoreReports {
        input: &input,
        attempts: None,
        mode: MatchMode::Paper,
        out: &out,
        labels: Some(&labels),
    })
    .unwrap();
    assert_eq!((s.samples, s.failed, s.labels), (2, 0, 4));

    let text = std::fs::read_to_string(&out).unwrap();
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(rows[0][..4], ["id", "model", "num_rules", "seed"]);
    // The second row had no id: it is made from model, N and seed.
    assert_eq!(rows[1][..4], ["a", "m1", "2", "0"]);
    assert_eq!(rows[2][..4], ["m2-n2-s1", "m2", "2", "1"]);
    let labels: Vec<KeywordLabel> = schema::read_jsonl(&labels).unwrap();
    let statuses: Vec<(&str, &str, KeywordStatus)> = labels
        .iter()
        .map(|l| (l.id.as_str(), l.keyword.as_str(), l.status))
        .collect();
    assert_eq!(
        statuses,
        vec![
            ("a", "revenue", KeywordStatus::Exact),
            ("a", "margin", KeywordStatus::Omitted),
            ("m2-n2-s1", "revenue", KeywordStatus::Omitted),
            ("m2-n2-s1", "growth", KeywordStatus::Omitted),
        ]
    );
}

#[test]
fn a_bad_csv_field_is_an_input_error_that_names_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("generations.csv");
    std::fs::write(
        &input,
        "model,seed,num_rules,constraints,generated_text\nm,zero,1,revenue,text\n",
    )
    .unwrap();
    let err = score_reports(&ScoreReports {
        input: &input,
        attempts: None,
        mode: MatchMode::Paper,
        out: &dir.path().join("scores.jsonl"),
        labels: None,
    })
    .unwrap_err();
    assert!(err.is_usage());
    assert!(
        err.to_string()
            .ends_with(":2: field `seed`: cannot read \"zero\""),
        "{err}"
    );
}

#[test]
fn several_attempts_of_one_sample_need_the_attempts_log() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("responses.jsonl");
    let meta = serde_json::json!({
        "benchmark": "ifscale", "num_rules": 1, "seed": 0, "sampling": "paper",
        "keywords": ["revenue"], "template_sha256": "", "vocab_sha256": ""
    });
    let line = |sample_index: u32, content: &str| {
        serde_json::json!({
            "schema_version": schema::SCHEMA_VERSION, "id": "p", "sample_index": sample_index,
            "model": "m", "outcome": "ok", "content": content, "usage": {"prompt_tokens": 1, "completion_tokens": 2},
            "wall_s": 0.0, "attempts": [], "cache_key": "", "prompt_meta": meta
        })
        .to_string()
    };
    std::fs::write(
        &path,
        [
            line(0, "first try"),
            line(1, "revenue is up"),
            line(0, "first try, retried"),
        ]
        .join("\n"),
    )
    .unwrap();
    let err = read_responses(&path, None).unwrap_err();
    assert!(err.to_string().contains("2 responses for p (m)"), "{err}");

    let log = dir.path().join("attempts.jsonl");
    std::fs::write(
        &log,
        "{\"id\":\"p\",\"model\":\"m\",\"attempt\":1,\"accepted\":false,\"reason\":\"too_short\",\"words\":2}\n\
         {\"id\":\"p\",\"model\":\"m\",\"attempt\":2,\"accepted\":true,\"words\":3}\n",
    )
    .unwrap();
    let reports = read_responses(&path, Some(&log)).unwrap();
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0].text.as_deref(), Some("revenue is up"));
    assert_eq!(reports[0].attempts, 2);
}
