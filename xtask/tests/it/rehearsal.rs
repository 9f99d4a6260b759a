//! `cargo xtask bench pipeline --scale small`: the paper-scale rehearsal at a few seconds' size runs the real
//! pipeline against its mock, measures every stage, and its rerun sends nothing.

use std::path::Path;

#[test]
fn a_small_rehearsal_measures_every_stage_and_its_rerun_sends_nothing() {
    let dir = tempfile::tempdir().unwrap();
    // The pipeline reads the RIFT judge template from the working directory.
    let prompts = dir.path().join("configs/prompts");
    std::fs::create_dir_all(&prompts).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/prompts/rift-judge.txt"),
        prompts.join("rift-judge.txt"),
    )
    .unwrap();
    let cwd = std::env::current_dir().unwrap();
    std::env::set_current_dir(dir.path()).unwrap();
    let args = bench::pipeline::PipelineBenchArgs::small(Path::new("rehearsal"));
    let r = bench::pipeline::rehearse(
        &args,
        Path::new(env!("CARGO_BIN_EXE_xtask")),
        // No screenshot of the report: a test does not need Chromium.
        &[("PATH", "/nonexistent")],
    );
    std::env::set_current_dir(cwd).unwrap();
    let r = r.unwrap();
    let stages: Vec<&str> = r.first.iter().map(|m| m.stage.as_str()).collect();
    for s in [
        "ifscale-prompts",
        "ifscale-generate:ifscale-a",
        "ifscale-generate:ifscale-b",
        "rift-prompts",
        "rift-generate:rift-model",
        "rift-judge:rift-model",
        "rift-score:rift-model",
        "analysis",
        "report",
    ] {
        assert!(stages.contains(&s), "{s} missing from {stages:?}");
    }
    assert!(r.first.iter().all(|m| m.ran && m.wall_s >= 0.0));
    let generate = r
        .first
        .iter()
        .find(|m| m.stage == "rift-generate:rift-model")
        .unwrap();
    // 40 multi-question prompts and 50 baselines, one response line each.
    assert!(generate.rows >= 90 && generate.bytes > 0, "{generate:?}");
    assert!(r.first_requests > 90);
    let j = &r.judge;
    assert!(j.answers > 40 * 10, "{j:?}");
    assert!(j.answered <= j.answers && j.after_pre_judge < j.answered, "{j:?}");
    assert!(j.after_dedup > 0 && j.after_dedup <= j.after_pre_judge, "{j:?}");
    assert!(j.ifscale_attempts >= 2 * 6, "{j:?}");
    assert_eq!(r.rerun_requests, 0, "{}", r.markdown);
    assert!(r.rerun.iter().filter(|m| m.stage.contains(':')).all(|m| !m.ran));
    assert!(r.markdown.contains("| rift-score:rift-model | yes |"), "{}", r.markdown);
    assert!(dir.path().join(&r.run_dir).join("rehearsal.md").is_file());
}
