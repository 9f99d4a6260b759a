//! The HTML report: one self-contained page (figures inlined as base64 data URIs, no external resource) with the
//! run's config, denominators, tables, figures and links to per-sample files.
//!
//! Every string that reaches the page is HTML-escaped here, whatever its origin (model output, model names, configs,
//! table cells, captions). Figures are embedded as `<img src="data:…">`, SVG included, so an SVG can never run script
//! in the page. Links are kept only when they are relative paths (no scheme, no `//`), so a record cannot inject a
//! `javascript:` URL.

use std::path::{Path, PathBuf};

use base64::Engine as _;

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

#[derive(Debug, Clone)]
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

#[derive(Debug, Clone)]
pub struct HtmlTable {
    pub caption: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
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

#[derive(Debug, Clone)]
pub struct Excerpt {
    pub label: String,
    pub text: String,
}

/// Escapes text for HTML element content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
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

const STYLE: &str = "body{font-family:sans-serif;max-width:1400px;margin:2em auto;padding:0 1em;color:#222}\
table{border-collapse:collapse;margin:1em 0;font-size:14px}th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}\
th{background:#f2f2f2}td:first-child,th:first-child{text-align:left}caption{text-align:left;font-weight:bold;padding:4px 0}\
figure{margin:1.5em 0}figure img{max-width:100%;border:1px solid #eee}pre{background:#f7f7f7;padding:1em;overflow-x:auto;white-space:pre-wrap}\
dl{display:grid;grid-template-columns:max-content auto;gap:2px 1em}dt{font-weight:bold}";

/// Renders the page.
pub fn render(input: &ReportInput) -> Result<String, Error> {
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.push_str(&format!(
        "<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        escape(&input.title)
    ));
    h.push_str(&format!("<h1>{}</h1>\n", escape(&input.title)));
    if let Some(sub) = &input.subtitle {
        h.push_str(&format!("<p>{}</p>\n", escape(sub)));
    }
    if !input.sections.is_empty() {
        h.push_str("<nav><ul>\n");
        for (i, s) in input.sections.iter().enumerate() {
            h.push_str(&format!(
                "<li><a href=\"#s{i}\">{}</a></li>\n",
                escape(&s.heading)
            ));
        }
        h.push_str("</ul></nav>\n");
    }
    for (i, s) in input.sections.iter().enumerate() {
        h.push_str(&format!(
            "<section id=\"s{i}\">\n<h2>{}</h2>\n",
            escape(&s.heading)
        ));
        for p in &s.paragraphs {
            h.push_str(&format!("<p>{}</p>\n", escape(p)));
        }
        if !s.denominators.is_empty() {
            h.push_str("<h3>Denominators</h3>\n<dl>\n");
            for (k, v) in &s.denominators {
                h.push_str(&format!("<dt>{}</dt><dd>{}</dd>\n", escape(k), escape(v)));
            }
            h.push_str("</dl>\n");
        }
        for t in &s.tables {
            h.push_str(&format!(
                "<table>\n<caption>{}</caption>\n<thead><tr>",
                escape(&t.caption)
            ));
            for c in &t.header {
                h.push_str(&format!("<th>{}</th>", escape(c)));
            }
            h.push_str("</tr></thead>\n<tbody>\n");
            for row in &t.rows {
                h.push_str("<tr>");
                for c in row {
                    h.push_str(&format!("<td>{}</td>", escape(c)));
                }
                h.push_str("</tr>\n");
            }
            h.push_str("</tbody>\n</table>\n");
        }
        for f in &s.figures {
            h.push_str(&figure_html(f)?);
        }
        let links: Vec<&Link> = s.links.iter().filter(|l| safe_relative(&l.href)).collect();
        if !links.is_empty() {
            h.push_str("<h3>Per-sample files</h3>\n<ul>\n");
            for l in links {
                h.push_str(&format!(
                    "<li><a href=\"{}\">{}</a></li>\n",
                    encode_href(&l.href),
                    escape(&l.label)
                ));
            }
            h.push_str("</ul>\n");
        }
        for e in &s.excerpts {
            h.push_str(&format!(
                "<h4>{}</h4>\n<pre>{}</pre>\n",
                escape(&e.label),
                escape(&e.text)
            ));
        }
        h.push_str("</section>\n");
    }
    if let Some(cfg) = &input.config {
        h.push_str(&format!(
            "<section>\n<h2>Config: {}</h2>\n<pre>{}</pre>\n</section>\n",
            escape(&cfg.name),
            escape(&cfg.text)
        ));
    }
    h.push_str("</body>\n</html>\n");
    Ok(h)
}

fn figure_html(f: &FigureRef) -> Result<String, Error> {
    let bytes = std::fs::read(&f.path).map_err(|source| Error::Io {
        path: f.path.clone(),
        source,
    })?;
    let mime = match f.path.extension().and_then(|e| e.to_str()) {
        Some("svg") => "image/svg+xml",
        _ => "image/png",
    };
    let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
    Ok(format!(
        "<figure>\n<img alt=\"{}\" src=\"data:{mime};base64,{data}\">\n<figcaption>{}</figcaption>\n</figure>\n",
        escape(&f.caption),
        escape(&f.caption)
    ))
}

/// Renders and writes the page atomically.
pub fn write(input: &ReportInput, path: &Path) -> Result<(), Error> {
    let html = render(input)?;
    schema::write_atomic(path, html.as_bytes())?;
    Ok(())
}

/// A table from a Markdown table written by `analysis::tables::write_markdown` (caption line, header, rows).
pub fn table_from_markdown(md: &str) -> Option<HtmlTable> {
    let mut lines = md.lines();
    let caption = lines.next()?.to_owned();
    let rows: Vec<Vec<String>> = lines
        .filter(|l| l.starts_with('|'))
        .map(|l| {
            let inner = l.trim().trim_start_matches('|').trim_end_matches('|');
            split_cells(inner)
        })
        .collect();
    let (header, rest) = rows.split_first()?;
    let body = rest
        .iter()
        .filter(|r| !r.iter().all(|c| c.chars().all(|ch| ch == '-')))
        .cloned()
        .collect();
    Some(HtmlTable {
        caption,
        header: header.clone(),
        rows: body,
    })
}

fn split_cells(inner: &str) -> Vec<String> {
    let mut cells = Vec::new();
    let mut cur = String::new();
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cur.push('|');
                chars.next();
            }
            '|' => cells.push(std::mem::take(&mut cur).trim().to_owned()),
            c => cur.push(c),
        }
    }
    cells.push(cur.trim().to_owned());
    cells
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

    #[test]
    fn markdown_tables_round_trip() {
        let md = analysis::tables::markdown(
            "Cap",
            &["a", "b"],
            &[vec!["x|y".to_owned(), "1".to_owned()]],
        );
        let t = table_from_markdown(&md).unwrap();
        assert_eq!(t.caption, "Cap");
        assert_eq!(t.header, vec!["a", "b"]);
        assert_eq!(t.rows, vec![vec!["x|y".to_owned(), "1".to_owned()]]);
    }
}
