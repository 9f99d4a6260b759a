//! `cargo xtask bench readme`: the README's three timings, measured on the machine at hand, in a form the README
//! can quote (date, CPU model and cores).
//!
//! 1. The cold build: `cargo build --package xtask` (what `cargo xtask` builds first) from the workspace root into a
//!    fresh temporary target dir, removed afterwards, with `--timings` (its report is kept as
//!    `artifacts/bench/cold-build-timings.html`; docs/build-time.md reads it). About 20 minutes on two cores;
//!    `--skip-cold-build` leaves it out.
//! 2. The default pipeline after the build: this binary's `pipeline` with `configs/default.toml`, in a temporary
//!    folder that links the workspace's `configs/` and `datasets/`, so its `artifacts/` starts empty (an empty run:
//!    every model call is made; the offline assets come from the usual cache, `~/.cache/ifstress`, or with
//!    `--fresh-assets` from an empty one, so fetching them is timed too).
//! 3. `cargo xtask setup`: this binary's `setup`. After the pipeline the offline assets are in the cache, so what
//!    it measures is the one-time build of llama.cpp's own `llama-server` for the real-server tests (a few seconds
//!    when it is already cached).
//! 4. `cargo xtask test`: this binary's `test` in the workspace root (it compiles the test targets and runs them).
//!
//! The report says which steps were measured and which were left out.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};

#[derive(Debug, clap::Args)]
pub struct ReadmeArgs {
    /// Leave out the cold build (every dependency compiled into a fresh target dir: about 20 min on two cores).
    #[arg(long)]
    pub skip_cold_build: bool,
    /// Leave out the default pipeline.
    #[arg(long)]
    pub skip_pipeline: bool,
    /// Run the pipeline with an empty offline-asset cache (a fresh `IFSTRESS_CACHE_DIR`, removed afterwards), so
    /// its time includes fetching the model and word lists, as on a fresh machine.
    #[arg(long)]
    pub fresh_assets: bool,
    /// Leave out `cargo xtask setup` (then `cargo xtask test` builds `llama-server` itself when it is not cached).
    #[arg(long)]
    pub skip_setup: bool,
    /// Leave out `cargo xtask test`.
    #[arg(long)]
    pub skip_test: bool,
}

/// One of the README's timings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    ColdBuild,
    Pipeline,
    Setup,
    Test,
}

impl Step {
    /// How the step is named in the report.
    pub fn label(self) -> &'static str {
        match self {
            Step::ColdBuild => "cold build (`cargo build -p xtask`, empty target dir)",
            Step::Pipeline => {
                "default pipeline after the build (`cargo xtask pipeline`, empty artifacts dir)"
            }
            Step::Setup => {
                "`cargo xtask setup` after the pipeline (the one-time `llama-server` build)"
            }
            Step::Test => "`cargo xtask test`",
        }
    }

    /// The flag that leaves it out.
    pub fn skip_flag(self) -> &'static str {
        match self {
            Step::ColdBuild => "--skip-cold-build",
            Step::Pipeline => "--skip-pipeline",
            Step::Setup => "--skip-setup",
            Step::Test => "--skip-test",
        }
    }
}

/// The machine the figures were measured on.
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    pub cpu: String,
    /// Logical CPUs this process may use.
    pub cores: usize,
}

impl Machine {
    /// This machine: the CPU model from `/proc/cpuinfo` ("unknown CPU" elsewhere), the cores this process may use.
    pub fn here() -> Machine {
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|t| cpu_model(&t))
            .unwrap_or_else(|| "unknown CPU".to_owned());
        Machine {
            cpu,
            cores: std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
        }
    }
}

/// The CPU model named in a `/proc/cpuinfo` text (x86's `model name`, else ARM's `Hardware` or `CPU part`-less
/// `Processor`), with runs of spaces folded.
pub fn cpu_model(cpuinfo: &str) -> Option<String> {
    ["model name", "Hardware", "Processor"]
        .iter()
        .find_map(|key| {
            cpuinfo.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == *key && !v.trim().is_empty()).then(|| v.trim().to_owned())
            })
        })
        .map(|v| v.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// The UTC calendar date `days` days after 1970-01-01, as `YYYY-MM-DD` (the proleptic Gregorian calendar).
pub fn utc_date(days: i64) -> String {
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    utc_date((secs / 86_400) as i64)
}

/// A duration as the README writes it: seconds under ten minutes, minutes with one decimal above.
pub fn duration_text(secs: f64) -> String {
    if secs < 600.0 {
        format!("{secs:.0} s")
    } else {
        format!("{:.1} min", secs / 60.0)
    }
}

/// The report: a table of the measured steps, the one-sentence form the README quotes, and what was left out.
pub fn report(date: &str, machine: &Machine, measured: &[(Step, Option<f64>)]) -> String {
    let mut table = schema::Table::new(vec![
        schema::table::left("step"),
        schema::table::right("measured"),
    ]);
    for (step, secs) in measured {
        let cell = secs.map_or_else(
            || format!("not measured ({})", step.skip_flag()),
            duration_text,
        );
        table.push(vec![step.label().to_owned(), cell]);
    }
    let mut md = format!(
        "README figures, measured by `cargo xtask bench readme` on {date} on {} ({} cores):\n\n{}",
        machine.cpu,
        machine.cores,
        table.to_markdown()
    );
    let done: Vec<String> = measured
        .iter()
        .filter_map(|(step, secs)| {
            secs.map(|s| {
                let name = match step {
                    Step::ColdBuild => "the cold build",
                    Step::Pipeline => "the default pipeline after the build",
                    Step::Setup => "the one-time `llama-server` build",
                    Step::Test => "`cargo xtask test`",
                };
                format!("{name} {}", duration_text(s))
            })
        })
        .collect();
    let skipped: Vec<&str> = measured
        .iter()
        .filter(|(_, secs)| secs.is_none())
        .map(|(step, _)| step.skip_flag())
        .collect();
    md.push('\n');
    if done.is_empty() {
        md.push_str("Nothing was measured.\n");
    } else {
        md.push_str(&format!(
            "For the README: measured on {date} on {} ({} cores): {}.\n",
            machine.cpu,
            machine.cores,
            done.join(", ")
        ));
    }
    if !skipped.is_empty() {
        md.push_str(&format!("Left out: {}.\n", skipped.join(", ")));
    }
    md
}

/// The workspace root (this crate is `crates/bench`).
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A fresh folder under the system's temporary dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> anyhow::Result<TempDir> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!(
            "ifstress-bench-readme-{name}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok(TempDir(dir))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `cmd` to completion and returns its wall time; a failure is an error naming `what`.
fn timed(what: &str, cmd: &mut Command) -> anyhow::Result<f64> {
    tracing::info!("Measuring {what}: {cmd:?}");
    let start = Instant::now();
    let status = cmd.status().with_context(|| format!("starting {what}"))?;
    let secs = start.elapsed().as_secs_f64();
    if !status.success() {
        bail!("{what} failed ({status}) after {}", duration_text(secs));
    }
    tracing::info!("{what}: {}", duration_text(secs));
    Ok(secs)
}

/// `cargo build -p xtask` into a fresh target dir.
fn cold_build(root: &Path) -> anyhow::Result<f64> {
    let target = TempDir::new("target")?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut cmd = Command::new(cargo);
    schema::env::remove_cargo_run_vars(&mut cmd);
    cmd.current_dir(root)
        .env("CARGO_TARGET_DIR", &target.0)
        .args(["build", "--package", "xtask", "--timings"]);
    let secs = timed("the cold build", &mut cmd)?;
    let timings = target.0.join("cargo-timings").join("cargo-timing.html");
    let kept = root
        .join("artifacts")
        .join("bench")
        .join("cold-build-timings.html");
    let bytes =
        std::fs::read(&timings).with_context(|| format!("reading {}", timings.display()))?;
    schema::write_atomic(&kept, &bytes)?;
    tracing::info!(path = %kept.display(), "The cold build's timings report.");
    Ok(secs)
}

/// The default pipeline in a folder whose `configs/` and `datasets/` are the workspace's and whose `artifacts/`
/// starts empty.
fn default_pipeline(xtask: &Path, root: &Path, fresh_assets: bool) -> anyhow::Result<f64> {
    let dir = TempDir::new("pipeline")?;
    let cache = TempDir::new("assets")?;
    for sub in ["configs", "datasets"] {
        let target = root.join(sub).canonicalize()?;
        std::os::unix::fs::symlink(&target, dir.0.join(sub))
            .with_context(|| format!("linking {}", target.display()))?;
    }
    let mut cmd = Command::new(xtask);
    cmd.current_dir(&dir.0).args(["pipeline", "--no-progress"]);
    if fresh_assets {
        cmd.env(schema::env::EnvVars::IFSTRESS_CACHE_DIR, &cache.0);
    }
    timed("the default pipeline", &mut cmd)
}

/// `cargo xtask setup` in the workspace root.
fn xtask_setup(xtask: &Path, root: &Path) -> anyhow::Result<f64> {
    let mut cmd = Command::new(xtask);
    cmd.current_dir(root).arg("setup");
    timed("`cargo xtask setup`", &mut cmd)
}

/// `cargo xtask test` in the workspace root.
fn xtask_test(xtask: &Path, root: &Path) -> anyhow::Result<f64> {
    let mut cmd = Command::new(xtask);
    cmd.current_dir(root).arg("test");
    timed("`cargo xtask test`", &mut cmd)
}

/// Measures the steps not left out, in the README's order, and prints the report.
#[allow(clippy::print_stdout)]
pub fn run(args: &ReadmeArgs, xtask: &Path) -> anyhow::Result<()> {
    let root = workspace_root();
    let mut measured = Vec::new();
    for step in [Step::ColdBuild, Step::Pipeline, Step::Setup, Step::Test] {
        let secs = match step {
            Step::ColdBuild if !args.skip_cold_build => Some(cold_build(&root)?),
            Step::Pipeline if !args.skip_pipeline => {
                Some(default_pipeline(xtask, &root, args.fresh_assets)?)
            }
            Step::Setup if !args.skip_setup => Some(xtask_setup(xtask, &root)?),
            Step::Test if !args.skip_test => Some(xtask_test(xtask, &root)?),
            _ => None,
        };
        measured.push((step, secs));
    }
    println!("{}", report(&today(), &Machine::here(), &measured));
    if args.fresh_assets && !args.skip_pipeline {
        println!("The pipeline started with an empty offline-asset cache (`--fresh-assets`).");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_model_is_read_from_cpuinfo() {
        let x86 = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9R14  96-Core Processor\n\
                   processor\t: 1\nmodel name\t: AMD EPYC 9R14  96-Core Processor\n";
        assert_eq!(
            cpu_model(x86).as_deref(),
            Some("AMD EPYC 9R14 96-Core Processor")
        );
        let arm = "processor\t: 0\nBogoMIPS\t: 50.00\nHardware\t: BCM2835\n";
        assert_eq!(cpu_model(arm).as_deref(), Some("BCM2835"));
        assert_eq!(cpu_model("processor\t: 0\n"), None);
    }

    #[test]
    fn dates_are_utc_calendar_days() {
        assert_eq!(utc_date(0), "1970-01-01");
        assert_eq!(utc_date(11_016), "2000-02-29");
        assert_eq!(utc_date(20_426), "2025-12-04");
        assert_eq!(utc_date(-1), "1969-12-31");
    }

    #[test]
    fn durations_read_as_the_readme_writes_them() {
        assert_eq!(duration_text(67.4), "67 s");
        assert_eq!(duration_text(599.0), "599 s");
        assert_eq!(duration_text(1290.0), "21.5 min");
    }

    #[test]
    fn the_report_gives_each_figure_the_date_and_machine_and_names_what_was_left_out() {
        let machine = Machine {
            cpu: "AMD EPYC 9R14 96-Core Processor".to_owned(),
            cores: 2,
        };
        let md = report(
            "2026-12-04",
            &machine,
            &[
                (Step::ColdBuild, None),
                (Step::Pipeline, Some(67.2)),
                (Step::Test, Some(160.0)),
            ],
        );
        expect_report(&md);
        let all = report(
            "2026-12-04",
            &machine,
            &[
                (Step::ColdBuild, Some(1290.0)),
                (Step::Pipeline, Some(67.2)),
                (Step::Setup, Some(791.0)),
                (Step::Test, Some(160.0)),
            ],
        );
        assert!(
            all.contains(
                "For the README: measured on 2026-12-04 on AMD EPYC 9R14 96-Core Processor (2 cores): the cold \
                 build 21.5 min, the default pipeline after the build 67 s, the one-time `llama-server` build 13.2 min, \
                 `cargo xtask test` 160 s."
            ),
            "{all}"
        );
        assert!(!all.contains("Left out"), "{all}");
        let none = report("2026-12-04", &machine, &[(Step::Test, None)]);
        assert!(
            none.contains("Nothing was measured.\nLeft out: --skip-test."),
            "{none}"
        );
    }

    fn expect_report(md: &str) {
        assert_eq!(
            md,
            "README figures, measured by `cargo xtask bench readme` on 2026-12-04 on AMD EPYC 9R14 96-Core \
             Processor (2 cores):\n\n\
             | step | measured |\n|---|---:|\n\
             | cold build (`cargo build -p xtask`, empty target dir) | not measured (--skip-cold-build) |\n\
             | default pipeline after the build (`cargo xtask pipeline`, empty artifacts dir) | 67 s |\n\
             | `cargo xtask test` | 160 s |\n\n\
             For the README: measured on 2026-12-04 on AMD EPYC 9R14 96-Core Processor (2 cores): the default \
             pipeline after the build 67 s, `cargo xtask test` 160 s.\n\
             Left out: --skip-cold-build.\n"
        );
    }
}
