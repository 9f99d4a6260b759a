//! The HTML report: one self-contained page (figures inlined as base64 data URIs, no external resource) with the
//! run's config, denominators, tables, figures and links to per-sample files, from the template
//! `templates/report.html` ([`crate::html`]).
//!
//! Every string that reaches the page is HTML-escaped by the template, whatever its origin (model output, model
//! names, configs, table cells, captions). Figures are embedded as `<img src="data:…">`, SVG included, so an SVG can
//! never run script in the page. Links are kept only when they are relative paths (no scheme, no `//`), so a record
//! cannot inject a `javascript:` URL.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::Serialize;

use crate::Error;

/// Everything the report shows, in order.
#[derive(Debug, Clone)]
pub struct ReportInput {
    pub title: String,
    /// Free text under the title (e.g. run id and command line).
    pub subtitle: Option<String>,
    /// The run's config, shown verbatim in a `<pre>` block (e.g. the TOML file).
    pub config: Option<ConfigBlock>,
    pub sections: Vec<Section>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ConfigBlock {
    pub name: String,
    pub text: String,
}

/// One benchmark's part of the report.
#[derive(Debug, Clone, Default)]
pub struct Section {
    pub heading: String,
    pub paragraphs: Vec<String>,
    /// Denominators: what was counted (e.g. "samples scored" → "1 195 of 1 200, 5 failed").
    pub denominators: Vec<(String, String)>,
    pub tables: Vec<HtmlTable>,
    pub figures: Vec<FigureRef>,
    /// Links to per-sample files, relative to the report's folder.
    pub links: Vec<Link>,
    /// Model outputs shown verbatim (escaped), e.g. the worst samples.
    pub excerpts: Vec<Excerpt>,
}

#[derive(Debug, Clone, Serialize)]
pub struct HtmlTable {
    pub caption: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// A table built as data (`schema::Table`) as the page shows it: its caption, header and rows.
impl From<schema::Table> for HtmlTable {
    fn from(t: schema::Table) -> HtmlTable {
        HtmlTable {
            header: t.header().into_iter().map(str::to_owned).collect(),
            caption: t.caption,
            rows: t.rows,
        }
    }
}

/// A figure file to embed (PNG or SVG).
#[derive(Debug, Clone)]
pub struct FigureRef {
    pub caption: String,
    pub path: PathBuf,
}

#[derive(Debug, Clone)]
pub struct Link {
    pub label: String,
    /// A relative path such as `ifscale/scores.jsonl`.
    pub href: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Excerpt {
    pub label: String,
    pub text: String,
}

fn safe_relative(href: &str) -> bool {
    !href.is_empty()
        && !href.contains(':')
        && !href.starts_with('/')
        && !href.starts_with('\\')
        && !href.chars().any(|c| c.is_control())
}

/// Percent-encodes the characters of a relative path that are not safe in an `href`.
fn encode_href(href: &str) -> String {
    let mut out = String::new();
    for b in href.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Renders the page (`templates/report.html`).
pub fn render(input: &ReportInput) -> Result<String, Error> {
    let sections = input
        .sections
        .iter()
        .map(|s| {
            Ok(SectionView {
                heading: &s.heading,
                paragraphs: &s.paragraphs,
                denominators: &s.denominators,
                tables: &s.tables,
                figures: s
                    .figures
                    .iter()
                    .map(figure_view)
                    .collect::<Result<_, _>>()?,
                links: s
                    .links
                    .iter()
                    .filter(|l| safe_relative(&l.href))
                    .map(|l| LinkView {
                        label: &l.label,
                        href: encode_href(&l.href),
                    })
                    .collect(),
                excerpts: &s.excerpts,
            })
        })
        .collect::<Result<Vec<_>, Error>>()?;
    crate::html::render(
        "report.html",
        PageView {
            title: &input.title,
            subtitle: input.subtitle.as_deref(),
            sections,
            config: input.config.as_ref(),
        },
    )
}

/// What the template sees: the input with figures read and encoded and unsafe links dropped.
#[derive(Serialize)]
struct PageView<'a> {
    title: &'a str,
    subtitle: Option<&'a str>,
    sections: Vec<SectionView<'a>>,
    config: Option<&'a ConfigBlock>,
}

#[derive(Serialize)]
struct SectionView<'a> {
    heading: &'a str,
    paragraphs: &'a [String],
    denominators: &'a [(String, String)],
    tables: &'a [HtmlTable],
    figures: Vec<FigureView<'a>>,
    links: Vec<LinkView<'a>>,
    excerpts: &'a [Excerpt],
}

#[derive(Serialize)]
struct FigureView<'a> {
    caption: &'a str,
    mime: &'static str,
    base64: String,
}

#[derive(Serialize)]
struct LinkView<'a> {
    label: &'a str,
    href: String,
}

fn figure_view(f: &FigureRef) -> Result<FigureView<'_>, Error> {
    let bytes = std::fs::read(&f.path).map_err(|source| Error::Io {
        path: f.path.clone(),
        source,
    })?;
    let mime = match f.path.extension().and_then(|e| e.to_str()) {
        Some("svg") => "image/svg+xml",
        _ => "image/png",
    };
    Ok(FigureView {
        caption: &f.caption,
        mime,
        base64: base64::engine::general_purpose::STANDARD.encode(&bytes),
    })
}

/// Renders and writes the page atomically.
pub fn write(input: &ReportInput, path: &Path) -> Result<(), Error> {
    let html = render(input)?;
    schema::write_atomic(path, html.as_bytes())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_model_output_and_drops_unsafe_links() {
        let input = ReportInput {
            title: "run <1>".to_owned(),
            subtitle: None,
            config: Some(ConfigBlock {
                name: "a&b".to_owned(),
                text: "x = \"<script>\"".to_owned(),
            }),
            sections: vec![Section {
                heading: "IFScale".to_owned(),
                excerpts: vec![Excerpt {
                    label: "worst".to_owned(),
                    text: "<script>alert('x')</script>".to_owned(),
                }],
                links: vec![
                    Link {
                        label: "scores".to_owned(),
                        href: "ifscale/scores.jsonl".to_owned(),
                    },
                    Link {
                        label: "bad".to_owned(),
                        href: "javascript:alert(1)".to_owned(),
                    },
                ],
                tables: vec![HtmlTable {
                    caption: "t".to_owned(),
                    header: vec!["m".to_owned()],
                    rows: vec![vec!["<b>".to_owned()]],
                }],
                ..Section::default()
            }],
        };
        let html = render(&input).unwrap();
        assert!(!html.contains("<script>"));
        assert!(html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"));
        assert!(html.contains("href=\"ifscale/scores.jsonl\""));
        assert!(!html.contains("javascript:"));
        assert!(html.contains("<td>&lt;b&gt;</td>"));
        assert!(html.contains("<title>run &lt;1&gt;</title>"));
    }
}
