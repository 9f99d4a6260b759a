//! `cargo xtask bench pipeline --scale small`: the paper-scale rehearsal at a few seconds' size runs the real
//! pipeline against its mock, measures every stage, and its rerun sends nothing.

use std::path::Path;

#[test]
fn a_small_rehearsal_measures_every_stage_and_its_rerun_sends_nothing() {
    let dir = tempfile::tempdir().unwrap();
    // The pipeline reads the RIFT judge template from its root.
    let prompts = dir.path().join("configs/prompts");
    std::fs::create_dir_all(&prompts).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/prompts/rift-judge.txt"),
        prompts.join("rift-judge.txt"),
    )
    .unwrap();
    let args = bench::pipeline::PipelineBenchArgs::small(Path::new("rehearsal"));
    let r = bench::pipeline::rehearse(
        &args,
        Path::new(env!("CARGO_BIN_EXE_xtask")),
        dir.path(),
        // No screenshot of the report: a test does not need Chromium.
        &[("PATH", "/nonexistent")],
    )
    .unwrap();
    let [rift, ifscale] = &r.parts[..] else {
        panic!("two parts: {:?}", r.parts)
    };
    let stages = |p: &bench::pipeline::Part| -> Vec<String> {
        p.first.iter().map(|m| m.stage.clone()).collect()
    };
    assert_eq!(
        stages(rift),
        [
            "rift-prompts",
            "rift-generate:rift-model",
            "rift-judge:rift-model",
            "rift-score:rift-model",
            "rift-join",
            "rift-judge-check:rift-judge",
            "analysis",
            "explorer",
            "report"
        ]
    );
    for s in [
        "ifscale-prompts",
        "ifscale-generate:ifscale-a",
        "ifscale-generate:ifscale-b",
        "ifscale-join",
        "ifscale-judge-check:coherence-judge",
    ] {
        assert!(stages(ifscale).contains(&s.to_owned()), "{s} missing");
    }
    assert!(rift.first.iter().all(|m| m.ran && m.wall_s >= 0.0));
    let generate = rift
        .first
        .iter()
        .find(|m| m.stage == "rift-generate:rift-model")
        .unwrap();
    // 40 multi-question prompts and 50 baselines, one response line each.
    assert!(generate.rows >= 90 && generate.bytes > 0, "{generate:?}");
    // The client's requests in flight: counted in the stages that send requests, within their time and cap.
    let f = generate
        .in_flight
        .as_ref()
        .expect("generation sent requests");
    assert!(f.cap == 16 && f.calls >= 1, "{f:?}"); // `PipelineBenchArgs::small`: concurrency 16
    assert!(f.requests >= 90 && f.peak >= 1 && f.peak <= f.cap, "{f:?}");
    assert!(f.busy_s > 0.0 && f.wall_s <= generate.wall_s, "{f:?}");
    assert!(f.mean() > 0.0 && f.mean() <= f.peak as f64, "{f:?}");
    assert!(
        f.saturated_s <= f.backlog_s && f.backlog_s <= f.wall_s,
        "{f:?}"
    );
    assert!(f.backlog_busy_s <= f.backlog_capacity_s + 1e-6, "{f:?}");
    for m in &rift.first {
        let sends = m.stage.starts_with("rift-generate") || m.stage.starts_with("rift-judge");
        assert_eq!(m.in_flight.is_some(), sends, "{m:?}");
    }
    assert!(
        r.markdown
            .contains("### rift: requests in flight (first run)")
            && r.markdown.contains("| rift-judge:rift-model | "),
        "{}",
        r.markdown
    );
    assert!(rift.first_requests > 90 && ifscale.first_requests > 2 * 6);
    let j = &r.judge;
    assert!(j.answers > 40 * 10, "{j:?}");
    assert!(
        j.answered <= j.answers && j.after_pre_judge < j.answered,
        "{j:?}"
    );
    assert!(
        j.after_dedup > 0 && j.after_dedup <= j.after_pre_judge,
        "{j:?}"
    );
    assert!(j.ifscale_attempts >= 2 * 6, "{j:?}");
    for p in [rift, ifscale] {
        assert_eq!(p.rerun_requests, 0, "{}", r.markdown);
        assert!(
            p.rerun
                .iter()
                .filter(|m| m.stage.contains(':'))
                .all(|m| !m.ran)
        );
        assert!(p.rerun.iter().all(|m| m.in_flight.is_none()));
        assert!(dir.path().join(&p.run_dir).join("rehearsal.md").is_file());
    }
    assert!(
        r.markdown.contains("| rift-score:rift-model | yes |"),
        "{}",
        r.markdown
    );
}
