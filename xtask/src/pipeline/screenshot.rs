//! Renders the HTML report in headless Chromium and saves a screenshot, so a run can be checked by eye
//! (and a test can check that the page renders at all).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

/// Chromium binaries tried in order.
const CANDIDATES: &[&str] = &[
    "chromium",
    "chromium-browser",
    "google-chrome",
    "/usr/bin/chromium",
];

pub(crate) fn find_chromium() -> Option<PathBuf> {
    CANDIDATES.iter().map(PathBuf::from).find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// Takes a full-width screenshot of `html` into `png`.
pub(crate) fn screenshot(
    chromium: &Path,
    html: &Path,
    png: &Path,
    height: u32,
) -> anyhow::Result<()> {
    let html =
        std::fs::canonicalize(html).with_context(|| format!("reading {}", html.display()))?;
    let profile = std::env::temp_dir().join(format!("ifstress-chromium-{}", std::process::id()));
    let png_abs = if png.is_absolute() {
        png.to_owned()
    } else {
        std::env::current_dir()?.join(png)
    };
    let output = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--window-size=1280,{height}"))
        .arg(format!("--screenshot={}", png_abs.display()))
        .arg(format!("file://{}", html.display()))
        .output()
        .with_context(|| format!("running {}", chromium.display()))?;
    let _ = std::fs::remove_dir_all(&profile);
    if !output.status.success() || !png_abs.is_file() {
        bail!(
            "headless Chromium could not render {}: {}",
            html.display(),
            String::from_utf8_lossy(&output.stderr)
                .lines()
                .last()
                .unwrap_or("no output")
        );
    }
    Ok(())
}
