//! Renders the HTML report in headless Chromium and saves a screenshot, so a run can be checked by eye
//! (and a test can check that the page renders at all).
//!
//! The run explorer's pages too: [`screenshot_at`] opens a page at a URL fragment (one sample), and [`dump_dom`] gives
//! tests the rendered DOM.

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
    screenshot_at(chromium, html, None, png, height)
}

/// Takes a full-width screenshot of `html` opened at `#fragment` (e.g. `sample=ifscale-n100-s0`) into `png`.
pub fn screenshot_at(
    chromium: &Path,
    html: &Path,
    fragment: Option<&str>,
    png: &Path,
    height: u32,
) -> Result<(), Error> {
    let png_abs = if png.is_absolute() {
        png.to_owned()
    } else {
        std::env::current_dir()
            .map_err(|source| Error::Io {
                path: png.to_owned(),
                source,
            })?
            .join(png)
    };
    run(
        chromium,
        html,
        fragment,
        &[
            format!("--window-size=1280,{height}"),
            format!("--screenshot={}", png_abs.display()),
        ],
    )?;
    if !png_abs.is_file() {
        return Err(Error::Draw {
            figure: format!("a screenshot of {}", html.display()),
            message: "headless Chromium wrote no file".to_owned(),
        });
    }
    Ok(())
}

/// The page's DOM after its scripts ran (headless Chromium's `--dump-dom`), opened at `#fragment`.
pub fn dump_dom(chromium: &Path, html: &Path, fragment: Option<&str>) -> Result<String, Error> {
    run(chromium, html, fragment, &["--dump-dom".to_owned()])
}

/// Runs headless Chromium on a local page with a throw-away profile and no network; returns its stdout.
fn run(
    chromium: &Path,
    html: &Path,
    fragment: Option<&str>,
    args: &[String],
) -> Result<String, Error> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| Error::Io { path, source }
    };
    let html_abs = std::fs::canonicalize(html).map_err(io(html))?;
    let profile = std::env::temp_dir().join(format!(
        "ifstress-chromium-{}-{}",
        std::process::id(),
        PROFILES.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let mut url = format!("file://{}", html_abs.display());
    if let Some(f) = fragment {
        url.push('#');
        url.push_str(f);
    }
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
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .output()
        .map_err(io(chromium))?;
    let _ = std::fs::remove_dir_all(&profile);
    if !output.status.success() {
        return Err(Error::Draw {
            figure: format!("a rendering of {}", html.display()),
            message: format!(
                "headless Chromium failed: {}",
                String::from_utf8_lossy(&output.stderr)
                    .lines()
                    .last()
                    .unwrap_or("no output")
            ),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Profiles of concurrent renderings in one process are kept apart.
static PROFILES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
