//! Who answered: a model whose answers came from two upstream providers (the mock's `openrouter-two-providers`) is
//! flagged on the report's first screen and in `summary.md`, the explorer's sample lists name each answer's provider,
//! and `cargo xtask compare` says its side was not served like the other model's. A router model that is not pinned
//! to upstream providers gets one warning at the run's start, naming it; a pinned one gets none.

use std::path::Path;

use mock_provider::MockServer;

use crate::repo;
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

/// The opening words of the unpinned-router warning (`pipeline::routing::warn`).
const UNPINNED: &str = "These models go through a router";

/// An IFScale-only run of `models` in `dir`, from a models file where `roaming` and `anchored` are router models
/// (their base URL names the router's host, in the path of a URL of the mock, which serves any path ending in
/// `/chat/completions`), `anchored` pinned to one provider without fallbacks. Returns the run's stderr.
fn router_run(dir: &Path, mock: &MockServer, models: &str) -> String {
    let router = format!(
        "{}/openrouter.ai/api/v1",
        mock.base_url().trim_end_matches("/v1")
    );
    let models_file = format!(
        "[models.roaming]\nbase-urls = [\"{router}\"]\nmodel-id = \"mock\"\nmax-tokens = 300\n\n\
         [models.anchored]\nbase-urls = [\"{router}\"]\nmodel-id = \"mock\"\nmax-tokens = 300\n\n\
         [models.anchored.route]\norder = [\"provider-a\"]\nallow-fallbacks = false\n"
    );
    std::fs::write(dir.join("models.toml"), models_file).unwrap();
    let config = format!(
        "[run]\nname = \"routes\"\nmodels-file = \"models.toml\"\nmodels = [{models}]\ncache = \"cache.sqlite\"\n\n\
         [ifscale]\ngrid = [10]\nseeds = [0, 1]\nsampling = \"paper\"\nvocab = \"{}\"\ntemplate = \"{}\"\n\
         max-attempts = 1\n",
        repo("datasets/vocab/ifscale-paper.txt"),
        repo("configs/prompts/ifscale-report.txt"),
    );
    std::fs::write(dir.join("run.toml"), config).unwrap();
    let out = xtask(dir, &["pipeline", "--config", "run.toml", "--no-progress"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", output(&out));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn an_unpinned_router_model_is_warned_about_once_and_a_pinned_one_never() {
    let mock = mock();
    let dir = tempfile::tempdir().unwrap();
    let log = router_run(dir.path(), &mock, "\"roaming\", \"anchored\"");
    // Both models were answered through the router-looking URL: two samples each.
    let sent = mock.requests();
    assert_eq!(sent, 4, "{log}");
    let warnings: Vec<&str> = log.lines().filter(|l| l.contains(UNPINNED)).collect();
    assert_eq!(warnings.len(), 1, "{log}");
    assert!(warnings[0].contains("roaming"), "{}", warnings[0]);
    assert!(!warnings[0].contains("anchored"), "{}", warnings[0]);
    assert!(
        warnings[0].contains("[models.<name>.route]"),
        "{}",
        warnings[0]
    );

    // A run of the pinned model alone is not warned about.
    let dir = tempfile::tempdir().unwrap();
    let log = router_run(dir.path(), &mock, "\"anchored\"");
    assert_eq!(mock.requests(), sent + 2, "{log}");
    assert!(!log.contains(UNPINNED), "{log}");
}
