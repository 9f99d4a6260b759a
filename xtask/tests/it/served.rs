//! Who answered: a model whose answers came from two upstream providers (the mock's `openrouter-two-providers`) is
//! flagged on the report's first screen and in `summary.md`, the explorer's sample lists name each answer's provider,
//! and `cargo xtask compare` says its side was not served like the other model's.

use crate::shards::{mock, output, workspace, xtask};

#[test]
fn answers_from_two_upstream_providers_are_flagged_in_the_report_and_in_compare() {
    let mock = mock();
    let dir = tempfile::tempdir().unwrap();
    workspace(dir.path(), &mock, "openrouter-two-providers");
    let out = xtask(
        dir.path(),
        &["pipeline", "--config", "run.toml", "--no-progress"],
    )
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", output(&out));
    let run = dir.path().join("artifacts/runs/split");
    let summary = std::fs::read_to_string(run.join("summary.md")).unwrap();
    assert!(
        summary.contains("**Answered by more than one upstream provider: writer."),
        "{summary}"
    );
    assert!(
        summary.contains("| writer | Provider A | openrouter-two-providers | fp_a |"),
        "{summary}"
    );
    assert!(
        summary.contains("| writer | Provider B | openrouter-two-providers | fp_b |"),
        "{summary}"
    );
    let report = std::fs::read_to_string(run.join("report.html")).unwrap();
    let warning = report
        .find("Warning: more than one upstream provider")
        .expect("flagged");
    // The flag comes before every result section.
    assert!(warning < report.find("IFScale: instruction density").unwrap());
    // The explorer's sample lists name the provider of each answer, as a filterable column.
    for bench in ["ifscale", "rift"] {
        let list =
            std::fs::read_to_string(run.join(format!("explorer/{bench}-writer.html"))).unwrap();
        for said in ["served by", "Provider A", "Provider B"] {
            assert!(list.contains(said), "{bench}: {said}");
        }
    }

    let out = xtask(
        dir.path(),
        &[
            "compare",
            "artifacts/runs/split:writer",
            "artifacts/runs/split:second",
            "--resamples",
            "100",
        ],
    )
    .output()
    .unwrap();
    let text = output(&out);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("The sides were not served alike"), "{text}");
    assert!(text.contains("providers Provider A, Provider B"), "{text}");
}
