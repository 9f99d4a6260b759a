//! Tidy: every Rust file opens with a `//!` doc, no file is over 800 lines, `xtask/src` stays a thin command line
//! (at most 2 500 lines), tables are built as data (`schema::Table`) and never parsed back from Markdown, the
//! crates' dependencies point one way (harness never depends on plots or the pipeline),
//! no leftover debugging macros, no test changes process-wide state (working directory, environment), no HTML is
//! assembled outside templates, every crate inherits the workspace lints and says what it is for, and polars is
//! built without debug assertions.

use std::path::{Path, PathBuf};

/// Longest Rust file allowed, in lines.
const MAX_LINES: usize = 800;

/// Most lines `xtask/src` may hold in all: flags, a library call, printing and exit codes.
const MAX_XTASK_LINES: usize = 2_500;

/// Files allowed past [`MAX_LINES`], with the reason. Only generated data belongs here.
const LONG_FILES: &[(&str, &str)] = &[];

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask sits in the workspace root")
        .to_path_buf()
}

/// Every `.rs` file under `crates/` and `xtask/`, sorted, as paths relative to the workspace root.
fn rust_files() -> Vec<PathBuf> {
    let root = workspace_root();
    let mut out = Vec::new();
    let mut stack = vec![root.join("crates"), root.join("xtask")];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                if name != "target" && !name.starts_with('.') {
                    stack.push(path);
                }
            } else if name.ends_with(".rs") {
                out.push(path.strip_prefix(&root).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    assert!(out.len() > 50, "found only {} Rust files", out.len());
    out
}

fn read(rel: &Path) -> String {
    std::fs::read_to_string(workspace_root().join(rel))
        .unwrap_or_else(|e| panic!("{}: {e}", rel.display()))
}

#[test]
fn every_rust_file_opens_with_a_module_doc() {
    let missing: Vec<_> = rust_files()
        .into_iter()
        .filter(|p| !read(p).trim_start().starts_with("//!"))
        .map(|p| p.display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "these files do not open with a `//!` doc saying what they are for:\n{}",
        missing.join("\n")
    );
}

#[test]
fn no_rust_file_is_over_the_line_limit() {
    let long: Vec<_> = rust_files()
        .into_iter()
        .filter_map(|p| {
            let lines = read(&p).lines().count();
            let allowed = LONG_FILES.iter().any(|(f, _)| Path::new(f) == p);
            (lines > MAX_LINES && !allowed).then(|| format!("{} ({lines} lines)", p.display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "split these files into modules (at most {MAX_LINES} lines each):\n{}",
        long.join("\n")
    );
}

#[test]
fn xtask_stays_a_thin_command_line() {
    let lines: usize = rust_files()
        .into_iter()
        .filter(|p| p.starts_with("xtask/src"))
        .map(|p| read(&p).lines().count())
        .sum();
    assert!(
        lines <= MAX_XTASK_LINES,
        "xtask/src holds {lines} lines (at most {MAX_XTASK_LINES}): move the logic into the crate that owns it"
    );
}

/// The ifstress crates a manifest's `[dependencies]` name.
fn internal_dependencies(krate: &str) -> Vec<String> {
    let text = read(&Path::new("crates").join(krate).join("Cargo.toml"));
    let toml: toml::Value = text.parse().unwrap_or_else(|e| panic!("{krate}: {e}"));
    let crates: Vec<String> = std::fs::read_dir(workspace_root().join("crates"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    toml.get("dependencies")
        .and_then(toml::Value::as_table)
        .map(|t| t.keys().filter(|k| crates.contains(k)).cloned().collect())
        .unwrap_or_default()
}

#[test]
fn the_loops_that_call_models_depend_on_no_page_figure_or_run() {
    for (krate, never) in [
        ("harness", &["plots", "report", "pipeline", "bench"][..]),
        ("inference-client", &["harness", "pipeline", "plots"][..]),
        (
            "schema",
            &[
                "harness",
                "pipeline",
                "plots",
                "analysis",
                "inference-client",
            ][..],
        ),
    ] {
        let deps = internal_dependencies(krate);
        let wrong: Vec<&&str> = never
            .iter()
            .filter(|n| deps.iter().any(|d| d == *n))
            .collect();
        assert!(wrong.is_empty(), "{krate} must not depend on {wrong:?}");
    }
}

/// Every line of a Rust file that holds one of `banned` and that `counts` (given the file, its lines and the line's
/// index) counts, as `path:line: text`.
fn lines_with(banned: &[&str], counts: impl Fn(&Path, &[&str], usize) -> bool) -> Vec<String> {
    let mut hits = Vec::new();
    for p in rust_files() {
        let text = read(&p);
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if banned.iter().any(|b| line.contains(b)) && counts(&p, &lines, i) {
                hits.push(format!("{}:{}: {}", p.display(), i + 1, line.trim()));
            }
        }
    }
    hits
}

#[test]
fn tables_are_built_as_data_and_never_parsed_back() {
    // A Markdown alignment row outside the table type is a table written by hand; reading `|` rows back is parsing
    // Markdown. Tests may pin rendered tables.
    let hits = lines_with(
        &["|---", "---|", "table_from_markdown", "split('|')"],
        |p, lines, i| {
            p != Path::new("crates/schema/src/table.rs")
                && p != Path::new("xtask/tests/it/tidy.rs")
                && !is_test_code(p, lines, i)
        },
    );
    assert!(
        hits.is_empty(),
        "build tables as `schema::Table` and render them (Markdown, CSV, HTML) from it:\n{}",
        hits.join("\n")
    );
}

#[test]
fn no_debugging_macros_are_left_in() {
    // Spelled in pieces so this file does not match itself.
    let banned = [
        concat!("dbg", "!("),
        concat!("todo", "!("),
        concat!("unimplemented", "!("),
    ];
    let hits = lines_with(&banned, |_, _, _| true);
    assert!(
        hits.is_empty(),
        "debugging macros left in:\n{}",
        hits.join("\n")
    );
}

/// Whether line `i` (0-based) of `p`, whose lines are `lines`, is test code: a file under a `tests/` folder or
/// named `tests.rs`, or a line after the file's first `#[cfg(test)]`.
fn is_test_code(p: &Path, lines: &[&str], i: usize) -> bool {
    p.components().any(|c| c.as_os_str() == "tests")
        || p.file_name().is_some_and(|n| n == "tests.rs")
        || lines[..i].iter().any(|l| l.trim() == "#[cfg(test)]")
}

#[test]
fn no_test_changes_process_wide_state() {
    // Tests run in parallel threads of one process: one that changes the working directory or the environment
    // changes it under every other. The code under test takes the folder or the variables as parameters instead
    // (`bench::pipeline::rehearse`'s root, `inference_client::RunOptions::env`). Spelled in pieces so this file does
    // not match itself.
    let banned = [
        concat!("set_current", "_dir("),
        concat!("env::set", "_var("),
        concat!("env::remove", "_var("),
    ];
    let hits = lines_with(&banned, is_test_code);
    assert!(
        hits.is_empty(),
        "tests that change process-wide state:\n{}",
        hits.join("\n")
    );
}

#[test]
fn no_html_is_assembled_outside_templates() {
    // HTML pages come from `crates/plots/templates/` through `plots::html`, which escapes every value; a page built
    // with string pushes escapes only what each call remembers to. Spelled in pieces so this file does not match
    // itself.
    let builders = [
        concat!("push", "_str("),
        concat!("format", "!("),
        concat!("write", "!("),
        concat!("writeln", "!("),
    ];
    let tags = [
        "<!DOCTYPE",
        "<html",
        "<head",
        "<body",
        "<meta",
        "<title",
        "<style",
        "<script",
        "<section",
        "<nav",
        "<h1",
        "<h2",
        "<h3",
        "<h4",
        "<p>",
        "<pre",
        "<table",
        "<caption",
        "<thead",
        "<tbody",
        "<tr",
        "<th>",
        "<td",
        "<ul",
        "<li",
        "<dl",
        "<dt",
        "<dd",
        "<a href",
        "<img",
        "<figure",
        "<div",
        "<span",
    ];
    // The builder's line and the two after it (a literal often starts on the next line).
    let hits = lines_with(&builders, |p, lines, i| {
        !is_test_code(p, lines, i)
            && lines[i..lines.len().min(i + 3)]
                .iter()
                .any(|l| tags.iter().any(|t| l.contains(t)))
    });
    assert!(
        hits.is_empty(),
        "HTML assembled by hand (use a template of `plots::html`):\n{}",
        hits.join("\n")
    );
}

#[test]
fn every_crate_inherits_the_workspace_lints_and_has_a_description() {
    let root = workspace_root();
    let mut manifests = vec![root.join("xtask/Cargo.toml")];
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let dir = entry.unwrap().path();
        if dir.join("Cargo.toml").is_file() {
            manifests.push(dir.join("Cargo.toml"));
        }
    }
    assert!(manifests.len() >= 8, "found {} crates", manifests.len());
    let mut problems = Vec::new();
    for m in manifests {
        let text = std::fs::read_to_string(&m).unwrap();
        let toml: toml::Value = text
            .parse()
            .unwrap_or_else(|e| panic!("{}: {e}", m.display()));
        let rel = m.strip_prefix(&root).unwrap().display().to_string();
        if toml
            .get("lints")
            .and_then(|l| l.get("workspace"))
            .and_then(toml::Value::as_bool)
            != Some(true)
        {
            problems.push(format!("{rel}: no `[lints] workspace = true`"));
        }
        let description = toml
            .get("package")
            .and_then(|p| p.get("description"))
            .and_then(toml::Value::as_str)
            .unwrap_or("");
        if description.trim().is_empty() {
            problems.push(format!("{rel}: no `description`"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_polars_crate_is_built_without_debug_assertions() {
    // With debug assertions polars uses test-sized internals (a 4-group hot table in the streaming group-by, …) and
    // the RIFT aggregation runs several times slower; the dev profile runs the pipeline, so it must switch them off.
    let root = workspace_root();
    let lock: toml::Value = std::fs::read_to_string(root.join("Cargo.lock"))
        .unwrap()
        .parse()
        .unwrap();
    let manifest: toml::Value = std::fs::read_to_string(root.join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let overrides = manifest
        .get("profile")
        .and_then(|p| p.get("dev"))
        .and_then(|d| d.get("package"));
    let mut names: Vec<&str> = lock
        .get("package")
        .and_then(toml::Value::as_array)
        .unwrap()
        .iter()
        .filter_map(|p| p.get("name").and_then(toml::Value::as_str))
        .filter(|n| n.starts_with("polars"))
        .collect();
    names.sort_unstable();
    names.dedup();
    assert!(names.len() > 10, "found only {names:?}");
    let missing: Vec<&str> = names
        .into_iter()
        .filter(|n| {
            let o = overrides.and_then(|o| o.get(*n));
            let off =
                |k: &str| o.and_then(|o| o.get(k)).and_then(toml::Value::as_bool) == Some(false);
            !(off("debug-assertions") && off("overflow-checks"))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "add `[profile.dev.package.<name>] debug-assertions = false` and `overflow-checks = false` to Cargo.toml for: {}",
        missing.join(", ")
    );
}
