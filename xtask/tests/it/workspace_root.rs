//! `cargo xtask` typed in a folder below the workspace root (`crates/analysis`): the default config and the paths
//! inside a config are the root's, and a path typed on the command line is relative to where it was typed.

use crate::repo;
use std::process::{Command, Output};

#[test]
fn the_default_dry_run_works_from_a_crate_folder_and_typed_paths_stay_where_they_were_typed() {
    let analysis = repo("crates/analysis");
    // The one file a dry run opens for writing, the response cache, goes to a folder of the test's own.
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache.sqlite");
    let dry_run = |config: &[&str]| -> (Output, String, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
            .current_dir(&analysis)
            .args(["pipeline", "--dry-run", "--no-progress", "--cache"])
            .arg(&cache)
            .args(config)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (out, stdout, stderr)
    };
    // `configs/default.toml` of the root, and every path inside it (the models file, the vocabulary, the
    // templates, the clue file) read from the root.
    let (out, default, stderr) = dry_run(&[]);
    assert_eq!(out.status.code(), Some(0), "{default}\n{stderr}");
    for row in [
        "| ifscale generation | smollm2-135m |",
        "| rift generation | smollm2-135m |",
    ] {
        assert!(default.contains(row), "{row}: {default}");
    }
    // The same config typed relative to `crates/analysis` is the same run.
    let (out, typed, stderr) = dry_run(&["--config", "../../configs/default.toml"]);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(typed, default);
    // Typed as if from the root, it names a file below `crates/analysis`, which is not there: a usage error.
    let (out, _, stderr) = dry_run(&["--config", "configs/default.toml"]);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("crates/analysis/configs/default.toml: cannot read the config"),
        "{stderr}"
    );
}
