//! The run explorer: every IFScale sample and every RIFT prompt of a run, as self-contained HTML pages that open
//! from disk (no server, no network, no CDN) under `<run>/explorer/`.
//!
//! - `index.html` lists the benchmarks and models with their page counts and sizes;
//! - `<bench>-<model>.html` lists every sample of one benchmark and model (filterable, sortable), each linking to
//!   the detail page that holds it (`…-p001.html#sample=<id>`);
//! - detail pages hold the samples themselves (an IFScale report with its keywords marked, the keyword list and the
//!   attempt history; a RIFT traversal table, the raw reply and its folded reasoning), split so that no page
//!   exceeds [`Options::max_page_bytes`];
//! - with several models, `pair-<bench>-<a>-vs-<b>.html` shows two models side by side on the same samples (every
//!   pair of models): on each IFScale sample (same N and seed) the keywords one found exactly and the other did not,
//!   with both reports marked; on each RIFT prompt the answers one got right and the other wrong, in one traversal
//!   table. The list holds the samples that differ most (at most [`Options::max_pair_samples`]), with detail pages
//!   split like the others.
//!
//! Safety: all data travels as one JSON block whose `<`, `>` and `&` are escaped (so no string can close the block),
//! the one script renders it with `textContent` only, control, bidirectional and zero-width characters are shown as
//! visible `⟨U+…⟩` codes, and a Content-Security-Policy allows only this page's own script and style (by hash) and
//! no network at all. Size: the samples are read one model (two for a side-by-side view) at a time, RIFT answers and
//! responses by key from a [`schema::LineIndex`], so memory stays bounded by one page (and a verdict byte per answer
//! of the two models compared) whatever the run's size.

mod ifscale;
mod rift;

use std::path::{Path, PathBuf};

use base64::Engine as _;
use schema::paths::{Bench, RunPaths};
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::Error;

pub use ifscale::IfscaleSource;

const SCRIPT: &str = include_str!("explorer/explorer.js");
const STYLE: &str = include_str!("explorer/explorer.css");

/// How the explorer is written.
#[derive(Debug, Clone)]
pub struct Options {
    /// No page is larger than this (a sample that alone exceeds it has its long texts shortened).
    pub max_page_bytes: usize,
    /// Longest text of one field shown (the rest is cut with a note naming the file that has it all).
    pub max_field_bytes: usize,
    /// How IFScale reports were scored (whole answer or between the report tags).
    pub span: prompt_gen::ifscale::ScoreSpan,
    /// Two models side by side: at most this many samples per pair and benchmark (those that differ most).
    pub max_pair_samples: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            max_page_bytes: 20_000_000,
            max_field_bytes: 1_000_000,
            span: prompt_gen::ifscale::ScoreSpan::Whole,
            max_pair_samples: 2_000,
        }
    }
}

/// One benchmark and model's pages.
#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    pub bench: &'static str,
    pub model: String,
    pub samples: usize,
    /// The sample list page (file name under the explorer folder).
    pub index: String,
    /// Detail pages and their sizes in bytes.
    #[serde(skip)]
    pub page_bytes: Vec<u64>,
    pub pages: usize,
    pub largest_mb: f64,
    pub total_mb: f64,
    /// A sample worth opening first (id and 0-based page): the IFScale report with the most keywords found, the
    /// RIFT prompt with the most answers to another question.
    #[serde(skip)]
    pub showcase: Option<(String, usize)>,
}

/// Two models side by side on one benchmark's pages.
#[derive(Debug, Clone, Serialize)]
pub struct PairEntry {
    pub a: String,
    pub b: String,
    /// Samples both models hold (IFScale: same N and seed; RIFT: same prompt).
    pub paired: usize,
    /// Of those, the samples where one model got a keyword or an answer that the other missed.
    pub differing: usize,
    /// The pages (`entry.samples` is how many samples they show).
    #[serde(flatten)]
    pub entry: Entry,
}

/// What was written.
#[derive(Debug, Clone)]
pub struct Written {
    /// `<run>/explorer/index.html`.
    pub home: PathBuf,
    pub entries: Vec<Entry>,
    /// Every pair of models side by side, per benchmark (empty with one model).
    pub pairs: Vec<PairEntry>,
}

impl Written {
    /// The detail page and URL fragment that open the showcase sample of `bench` (of the first model that has one):
    /// what the pipeline's explorer screenshots show.
    pub fn showcase(&self, bench: Bench) -> Option<(PathBuf, String)> {
        let dir = self.home.parent()?;
        self.entries
            .iter()
            .filter(|e| e.bench == bench.as_str())
            .find_map(|e| {
                let (id, page) = e.showcase.as_ref()?;
                Some((
                    dir.join(detail_name(&model_stem(bench, &e.model), page + 1)),
                    format!("sample={id}"),
                ))
            })
    }
}

/// Writes the explorer of a run folder for `models` (those without files for a benchmark are left out), replacing
/// the previous one only once the new one is complete.
pub fn write(
    paths: &RunPaths,
    run_name: &str,
    models: &[String],
    opts: &Options,
) -> Result<Written, Error> {
    let dir = paths.root.join("explorer");
    let tmp = paths.root.join(".explorer.tmp");
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).map_err(|e| Error::io(&tmp, e))?;
    }
    std::fs::create_dir_all(&tmp).map_err(|e| Error::io(&tmp, e))?;
    let mut entries = Vec::new();
    for model in models {
        let m = paths.model(Bench::Ifscale, model);
        if m.scores().is_file() {
            let source = IfscaleSource::open(paths, &m, model)?;
            entries.push(source.write(&tmp, run_name, opts)?);
        }
    }
    for model in models {
        let m = paths.model(Bench::Rift, model);
        if m.prompt_scores().is_file() {
            entries.push(rift::write(&m, model, &tmp, run_name, opts)?);
        }
    }
    // Every pair of models, each benchmark both have: two models' files open at a time.
    let mut pairs = Vec::new();
    for (i, a) in models.iter().enumerate() {
        for b in &models[i + 1..] {
            let (ma, mb) = (
                paths.model(Bench::Ifscale, a),
                paths.model(Bench::Ifscale, b),
            );
            if ma.scores().is_file() && mb.scores().is_file() {
                let sa = IfscaleSource::open(paths, &ma, a)?;
                let sb = IfscaleSource::open(paths, &mb, b)?;
                pairs.push(ifscale::write_pair(&sa, &sb, &tmp, run_name, opts)?);
            }
        }
    }
    for (i, a) in models.iter().enumerate() {
        for b in &models[i + 1..] {
            let (ma, mb) = (paths.model(Bench::Rift, a), paths.model(Bench::Rift, b));
            if ma.prompt_scores().is_file() && mb.prompt_scores().is_file() {
                pairs.push(rift::write_pair(
                    (&ma, a.as_str()),
                    (&mb, b.as_str()),
                    &tmp,
                    run_name,
                    opts,
                )?);
            }
        }
    }
    let controls = write_controls(paths, &tmp, run_name, opts)?;
    let home = Page {
        title: format!("Run explorer: {run_name}"),
        data: serde_json::json!({
            "kind": "home",
            "run": run_name,
            "max_page_mb": opts.max_page_bytes as f64 / 1e6,
            "entries": entries,
            "pairs": pairs,
            "controls": controls,
        }),
    };
    home.write(&tmp.join("index.html"))?;
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    }
    std::fs::rename(&tmp, &dir).map_err(|e| Error::io(&dir, e))?;
    Ok(Written {
        home: dir.join("index.html"),
        entries,
        pairs,
    })
}

/// The judge check's control items (`<run>/<bench>/judge-check/<judge>/`), with each judge's verdict, on a page of
/// their own (`judge-check.html`), never in a sample list; returns its name, or None when the run has none.
fn write_controls(
    paths: &RunPaths,
    dir: &Path,
    run_name: &str,
    opts: &Options,
) -> Result<Option<String>, Error> {
    let mut rows: Vec<Value> = Vec::new();
    for bench in [Bench::Ifscale, Bench::Rift] {
        let root = paths.bench(bench).join("judge-check");
        let Ok(judges) = std::fs::read_dir(&root) else {
            continue;
        };
        let mut judges: Vec<PathBuf> = judges.filter_map(|e| e.ok().map(|e| e.path())).collect();
        judges.sort();
        for judge_dir in judges {
            let files = schema::paths::ModelPaths::in_dir(&judge_dir);
            if !files.controls().is_file() {
                continue;
            }
            let judge = judge_dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let verdicts: std::collections::HashMap<String, schema::judge_check::ControlVerdict> =
                if files.control_verdicts().is_file() {
                    schema::read_jsonl::<schema::judge_check::ControlVerdict>(
                        &files.control_verdicts(),
                    )?
                    .into_iter()
                    .map(|v| (v.id.clone(), v))
                    .collect()
                } else {
                    Default::default()
                };
            let controls: Vec<Value> = schema::read_jsonl(&files.controls())?;
            let field =
                |c: &Value, k: &str| c.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
            for c in &controls {
                let id = field(c, "id");
                let kind = field(c, "kind");
                let v = verdicts.get(&id);
                let said = match (bench, v.and_then(|v| v.accepted), v.and_then(|v| v.score)) {
                    (_, None, _) => "no usable verdict".to_owned(),
                    (Bench::Ifscale, _, Some(score)) => format!("score {score}"),
                    // The refusal judge's verdicts carry no score.
                    (Bench::Ifscale, Some(true), None) => "ATTEMPTED".to_owned(),
                    (Bench::Ifscale, Some(false), None) => "REFUSED".to_owned(),
                    (_, Some(true), _) => "CORRECT".to_owned(),
                    (_, Some(false), _) => "INCORRECT".to_owned(),
                };
                let agrees = v
                    .and_then(|v| v.accepted)
                    .map(|a| a == (kind == "known_correct"));
                let text = |k: &str| shown(&field(c, k), opts.max_field_bytes, &files.controls());
                let given = if bench == Bench::Ifscale {
                    text("report")
                } else {
                    text("given")
                };
                rows.push(serde_json::json!([
                    bench.as_str(),
                    judge,
                    kind,
                    field(c, "form"),
                    text("question"),
                    text("expected"),
                    given,
                    said,
                    match agrees {
                        Some(true) => "yes",
                        Some(false) => "no",
                        None => "no (no verdict)",
                    },
                ]));
            }
        }
    }
    if rows.is_empty() {
        return Ok(None);
    }
    let name = "judge-check.html".to_owned();
    Page {
        title: format!("Judge check: {run_name}"),
        data: serde_json::json!({ "kind": "controls", "run": run_name, "rows": rows }),
    }
    .write(&dir.join(&name))?;
    Ok(Some(name))
}

/// A model name as it appears in file names: letters, digits, `.`, `_` and `-`; anything else becomes `_`.
fn file_part(model: &str) -> String {
    model
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The sample list page of one benchmark and model, under `<run>/explorer/`.
pub fn index_name(bench: Bench, model: &str) -> String {
    format!("{}.html", model_stem(bench, model))
}

/// The list page of two models side by side on one benchmark, under `<run>/explorer/` (model pages start with the
/// benchmark's name, these with `pair-`, so the two never share a name).
pub fn pair_index_name(bench: Bench, a: &str, b: &str) -> String {
    format!("{}.html", pair_stem(bench, a, b))
}

fn model_stem(bench: Bench, model: &str) -> String {
    format!("{}-{}", bench.as_str(), file_part(model))
}

fn pair_stem(bench: Bench, a: &str, b: &str) -> String {
    format!(
        "pair-{}-{}-vs-{}",
        bench.as_str(),
        file_part(a),
        file_part(b)
    )
}

fn detail_name(stem: &str, page: usize) -> String {
    format!("{stem}-p{page:03}.html")
}

/// Model or dataset text made safe to show: control, bidirectional-override and zero-width characters become a
/// visible `⟨U+XXXX⟩` (newlines and tabs stay), and text longer than `max` bytes is cut with a note.
fn shown(text: &str, max: usize, whole_in: &Path) -> String {
    // Most text is printable ASCII within the limit: copied as it is.
    if text.len() <= max
        && text
            .bytes()
            .all(|b| (b' '..0x7f).contains(&b) || b == b'\n' || b == b'\t')
    {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len().min(max) + 16);
    for c in text.chars() {
        if out.len() >= max {
            out.push_str(&format!(
                "\n… [cut here for display: {} bytes in all, see {}]",
                text.len(),
                whole_in.display()
            ));
            break;
        }
        if is_hidden(c) {
            out.push_str(&format!("⟨U+{:04X}⟩", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

fn is_hidden(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c as u32,
            0x061C | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x2069 | 0xFEFF)
}

/// One HTML page: the shell, the script, the style and the data.
struct Page {
    title: String,
    data: Value,
}

impl Page {
    fn render(&self) -> Result<String, Error> {
        let data = serde_json::to_string(&self.data).map_err(|e| Error::Output {
            path: PathBuf::from("explorer"),
            message: e.to_string(),
        })?;
        html(&self.title, &data)
    }

    fn write(&self, path: &Path) -> Result<u64, Error> {
        let text = self.render()?;
        schema::write_atomic(path, text.as_bytes())?;
        Ok(text.len() as u64)
    }
}

/// The page around a JSON data block (the template `explorer.html` of `plots::html`).
fn html(title: &str, data_json: &str) -> Result<String, Error> {
    use plots::html::{Raw, raw};
    /// What the template sees: the script, style and data block are written as they are (the data escaped for a
    /// `<script>` element here), the title is escaped by the template.
    #[derive(Serialize)]
    struct Shell<'a> {
        title: &'a str,
        script_hash: String,
        style_hash: String,
        style: Raw,
        script: Raw,
        data: Raw,
    }
    plots::html::render(
        "explorer.html",
        Shell {
            title,
            script_hash: csp_hash(SCRIPT),
            style_hash: csp_hash(STYLE),
            style: raw(STYLE.to_owned()),
            script: raw(SCRIPT.to_owned()),
            data: raw(escape_json_for_html(data_json)),
        },
    )
    .map_err(|e| Error::Output {
        path: PathBuf::from("explorer"),
        message: e.to_string(),
    })
}

fn csp_hash(text: &str) -> String {
    format!(
        "sha256-{}",
        base64::engine::general_purpose::STANDARD.encode(Sha256::digest(text.as_bytes()))
    )
}

/// JSON that can sit inside a `<script>` element: `<`, `>` and `&` as `\u003c`, `\u003e`, `\u0026` (valid JSON,
/// the same strings), so no data can end the element or open a comment.
fn escape_json_for_html(json: &str) -> String {
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

/// Detail pages of one benchmark and model (or of two models side by side), filled sample by sample and cut before
/// a page would exceed the limit.
struct Pager<'a> {
    dir: &'a Path,
    bench: Bench,
    /// The model, or "a vs b" for two models.
    model: String,
    /// The two models of a side-by-side view.
    pair: Option<(&'a str, &'a str)>,
    /// File names start with this (`model_stem`, `pair_stem`).
    stem: String,
    run: &'a str,
    limit: usize,
    /// Serialized samples of the page being filled, and their bytes.
    current: Vec<String>,
    bytes: usize,
    /// Sizes of the pages written.
    written: Vec<u64>,
}

/// Bytes of the page around its samples (the script, the style, the shell), with room to spare.
const SHELL_BYTES: usize = SCRIPT.len() + STYLE.len() + 4096;

impl<'a> Pager<'a> {
    fn new(dir: &'a Path, bench: Bench, model: &'a str, run: &'a str, limit: usize) -> Pager<'a> {
        Pager {
            dir,
            bench,
            model: model.to_owned(),
            pair: None,
            stem: model_stem(bench, model),
            run,
            limit,
            current: Vec::new(),
            bytes: 0,
            written: Vec::new(),
        }
    }

    /// The pages of models `a` and `b` side by side.
    fn pair(
        dir: &'a Path,
        bench: Bench,
        (a, b): (&'a str, &'a str),
        run: &'a str,
        limit: usize,
    ) -> Pager<'a> {
        Pager {
            model: format!("{a} vs {b}"),
            pair: Some((a, b)),
            stem: pair_stem(bench, a, b),
            ..Pager::new(dir, bench, a, run, limit)
        }
    }

    fn pair_json(&self) -> String {
        match self.pair {
            Some((a, b)) => format!("[{},{}]", json_str(a), json_str(b)),
            None => "null".to_owned(),
        }
    }

    /// Adds one sample (already shortened to fit a page) and returns the 0-based page it lands on.
    fn push(&mut self, sample: &impl Serialize) -> Result<usize, Error> {
        let json = serde_json::to_string(sample).map_err(|e| Error::Output {
            path: self.dir.to_owned(),
            message: e.to_string(),
        })?;
        // Escaping can grow `<`, `>`, `&` sixfold: count what the page will hold.
        let size = json.len() + 5 * json.matches(['<', '>', '&']).count() + 1;
        if !self.current.is_empty() && SHELL_BYTES + self.bytes + size > self.limit {
            self.flush(true)?;
        }
        self.current.push(json);
        self.bytes += size;
        Ok(self.written.len())
    }

    fn flush(&mut self, more: bool) -> Result<(), Error> {
        let page = self.written.len() + 1;
        let samples = format!("[{}]", self.current.join(","));
        let data = format!(
            "{{\"kind\":\"detail\",\"bench\":{},\"model\":{},\"pair\":{},\"run\":{},\"index\":{},\"prev\":{},\"next\":{},\"samples\":{samples}}}",
            json_str(self.bench.as_str()),
            json_str(&self.model),
            self.pair_json(),
            json_str(self.run),
            json_str(&format!("{}.html", self.stem)),
            if page > 1 {
                json_str(&detail_name(&self.stem, page - 1))
            } else {
                "null".to_owned()
            },
            if more {
                json_str(&detail_name(&self.stem, page + 1))
            } else {
                "null".to_owned()
            },
        );
        let text = html(
            &format!("{} {} page {page}", self.bench.as_str(), self.model),
            &data,
        )?;
        let path = self.dir.join(detail_name(&self.stem, page));
        schema::write_atomic(&path, text.as_bytes())?;
        self.written.push(text.len() as u64);
        self.current.clear();
        self.bytes = 0;
        Ok(())
    }

    /// Writes the last page and the sample list page; `rows` end with their page number; `note` is said above the
    /// list.
    fn finish(
        mut self,
        list: List<'_>,
        rows: Vec<Value>,
        showcase: Option<(String, usize)>,
    ) -> Result<Entry, Error> {
        if !self.current.is_empty() {
            self.flush(false)?;
        }
        let pages: Vec<String> = (1..=self.written.len())
            .map(|p| detail_name(&self.stem, p))
            .collect();
        let samples = rows.len();
        let index = Page {
            title: format!("{} {}", self.bench.as_str(), self.model),
            data: serde_json::json!({
                "kind": "index",
                "bench": self.bench.as_str(),
                "model": self.model,
                "pair": self.pair.map(|(a, b)| [a, b]),
                "run": self.run,
                "note": list.note,
                "columns": list.columns,
                "numeric": list.numeric,
                "filters": list.filters,
                "pages": pages,
                "rows": rows,
            }),
        };
        let name = format!("{}.html", self.stem);
        let index_bytes = index.write(&self.dir.join(&name))?;
        let largest = self
            .written
            .iter()
            .copied()
            .chain([index_bytes])
            .max()
            .unwrap_or(0);
        let total: u64 = self.written.iter().sum::<u64>() + index_bytes;
        Ok(Entry {
            bench: self.bench.as_str(),
            model: self.model,
            samples,
            index: name,
            pages: self.written.len(),
            page_bytes: self.written,
            largest_mb: (largest as f64 / 1e4).round() / 100.0,
            total_mb: (total as f64 / 1e4).round() / 100.0,
            showcase,
        })
    }
}

/// The upstream provider a response names (`schema::Served::provider`), if any.
fn provider_of(r: Option<&schema::ResponseRecord>) -> Option<String> {
    r.and_then(|r| r.served.as_ref())
        .and_then(|s| s.provider.clone())
}

/// Adds a "served by" column (the upstream provider that answered each row) before each row's trailing page number,
/// filterable, when some row's answer names a provider (a router's model); a list whose answers name none (a local
/// server, most APIs) is left as it was.
fn with_provider_column<'a>(
    rows: &mut [serde_json::Value],
    providers: &[Option<String>],
    list: &mut (Vec<&'a str>, Vec<bool>, Vec<&'a str>),
) {
    if providers.iter().all(Option::is_none) {
        return;
    }
    for (row, provider) in rows.iter_mut().zip(providers) {
        if let serde_json::Value::Array(cells) = row {
            let at = cells.len().saturating_sub(1);
            cells.insert(
                at,
                serde_json::Value::String(provider.clone().unwrap_or_else(|| "–".to_owned())),
            );
        }
    }
    list.0.push(SERVED_BY);
    list.1.push(false);
    list.2.push(SERVED_BY);
}

/// The sample lists' column of the upstream provider that answered.
const SERVED_BY: &str = "served by";

/// The columns of a sample list page.
struct List<'a> {
    columns: &'a [&'a str],
    numeric: &'a [bool],
    filters: &'a [&'a str],
    /// Said above the list (what the list holds when it is not every sample).
    note: Option<String>,
}

fn json_str(s: &str) -> String {
    serde_json::Value::String(s.to_owned()).to_string()
}

/// Rounds for display (the data block stays small and readable).
fn round(x: Option<f64>, digits: i32) -> Option<f64> {
    let f = 10f64.powi(digits);
    x.filter(|v| v.is_finite()).map(|v| (v * f).round() / f)
}

#[cfg(test)]
mod tests;
