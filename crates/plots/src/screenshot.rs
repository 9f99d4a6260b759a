//! Renders the HTML report in headless Chromium and saves a screenshot, so a run can be checked by eye
//! (and a test can check that the page renders at all).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::Error;

/// Chromium binaries tried in order.
const CANDIDATES: &[&str] = &[
    "chromium",
    "chromium-browser",
    "google-chrome",
    "/usr/bin/chromium",
];

/// The first Chromium that answers `--version`, if any.
pub fn find_chromium() -> Option<PathBuf> {
    CANDIDATES.iter().map(PathBuf::from).find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// Takes a full-width screenshot of `html` into `png`.
pub fn screenshot(chromium: &Path, html: &Path, png: &Path, height: u32) -> Result<(), Error> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| Error::Io { path, source }
    };
    let html = std::fs::canonicalize(html).map_err(io(html))?;
    let profile = std::env::temp_dir().join(format!("ifstress-chromium-{}", std::process::id()));
    let png_abs = if png.is_absolute() {
        png.to_owned()
    } else {
        std::env::current_dir().map_err(io(png))?.join(png)
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
        .map_err(io(chromium))?;
    let _ = std::fs::remove_dir_all(&profile);
    if !output.status.success() || !png_abs.is_file() {
        return Err(Error::Draw {
            figure: format!("a screenshot of {}", html.display()),
            message: format!(
                "headless Chromium failed: {}",
                String::from_utf8_lossy(&output.stderr)
                    .lines()
                    .last()
                    .unwrap_or("no output")
            ),
        });
    }
    Ok(())
}
