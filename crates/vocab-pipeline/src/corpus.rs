//! Stage 1: a folder of 10-K filings (plain text, HTML, or EDGAR-CORPUS JSON) read into plain text.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::Error;

/// One filing as plain text.
#[derive(Debug, Clone)]
pub struct Document {
    /// File name inside the corpus folder.
    pub name: String,
    pub path: PathBuf,
    /// Hex SHA-256 of the file's bytes.
    pub sha256: String,
    /// Which layout it was read as: `text`, `html` or `edgar-corpus-json`.
    pub format: &'static str,
    pub text: String,
}

/// A corpus file as recorded in the provenance report.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct CorpusFile {
    pub name: String,
    pub sha256: String,
    pub format: String,
    pub bytes: u64,
    pub text_chars: u64,
    pub words: u64,
}

impl Document {
    pub fn summary(&self, bytes: u64) -> CorpusFile {
        CorpusFile {
            name: self.name.clone(),
            sha256: self.sha256.clone(),
            format: self.format.to_owned(),
            bytes,
            text_chars: self.text.chars().count() as u64,
            words: words(&self.text).count() as u64,
        }
    }
}

/// Reads every `.txt`, `.htm`/`.html` and `.json` file of `dir` (not recursive), sorted by name.
///
/// Other files are skipped with a debug log. An empty folder is an error.
pub fn load_dir(dir: &Path) -> Result<Vec<(Document, u64)>, Error> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    let mut paths = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let path = entry.path();
        if path.is_file() {
            paths.push(path);
        }
    }
    paths.sort();
    let mut docs = Vec::new();
    for path in paths {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_ascii_lowercase();
        if !matches!(ext.as_str(), "txt" | "htm" | "html" | "json") {
            tracing::debug!(path = %path.display(), "Skipping a file that is not .txt, .html or .json.");
            continue;
        }
        let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
        let len = bytes.len() as u64;
        docs.push((load_bytes(&path, &ext, &bytes)?, len));
    }
    if docs.is_empty() {
        return Err(Error::Input {
            path: dir.to_owned(),
            what: "no .txt, .html or .json filings in this folder".to_owned(),
        });
    }
    Ok(docs)
}

fn load_bytes(path: &Path, ext: &str, bytes: &[u8]) -> Result<Document, Error> {
    let sha256 = schema::sha256_hex(bytes);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let raw = String::from_utf8_lossy(bytes);
    let (format, text) = match ext {
        "json" => ("edgar-corpus-json", edgar_json_text(path, &raw)?),
        "htm" | "html" => ("html", html_to_text(&raw)),
        _ if looks_like_html(&raw) => ("html", html_to_text(&raw)),
        _ => ("text", raw.into_owned()),
    };
    Ok(Document {
        name,
        path: path.to_owned(),
        sha256,
        format,
        text,
    })
}

fn looks_like_html(s: &str) -> bool {
    let head: String = s
        .chars()
        .take(2000)
        .collect::<String>()
        .to_ascii_lowercase();
    head.contains("<html") || head.contains("<body") || head.contains("<document>")
}

/// The text of an EDGAR-CORPUS record: every `item_*` field in item order, separated by blank lines.
pub fn edgar_json_text(path: &Path, raw: &str) -> Result<String, Error> {
    let value: serde_json::Value = serde_json::from_str(raw).map_err(|e| Error::Input {
        path: path.to_owned(),
        what: format!("not valid JSON: {e}"),
    })?;
    let obj = value.as_object().ok_or_else(|| Error::Input {
        path: path.to_owned(),
        what: "expected a JSON object with `item_1` … `item_16` fields".to_owned(),
    })?;
    // Order items numerically then by letter: item_1, item_1A, item_1B, item_2, …, item_16.
    let mut items: BTreeMap<(u32, String), String> = BTreeMap::new();
    for (key, v) in obj {
        let Some(rest) = key.strip_prefix("item_") else {
            continue;
        };
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let Ok(n) = digits.parse::<u32>() else {
            continue;
        };
        let suffix = rest[digits.len()..].to_owned();
        match v {
            serde_json::Value::String(s) => {
                items.insert((n, suffix), s.clone());
            }
            serde_json::Value::Null => {}
            _ => {
                return Err(Error::Input {
                    path: path.to_owned(),
                    what: format!("field `{key}`: expected a string or null"),
                });
            }
        }
    }
    if items.is_empty() {
        return Err(Error::Input {
            path: path.to_owned(),
            what: "no `item_*` text fields (expected the EDGAR-CORPUS layout)".to_owned(),
        });
    }
    Ok(items
        .into_values()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n"))
}

/// Converts HTML to text: drops `<script>`/`<style>` content and comments, turns block tags into newlines,
/// removes other tags and decodes character entities.
pub fn html_to_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len() / 2);
    let lower = html.to_ascii_lowercase();
    let bytes = html.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'<' {
            if lower[i..].starts_with("<!--") {
                i = lower[i..].find("-->").map_or(bytes.len(), |p| i + p + 3);
                continue;
            }
            let skip_to = ["script", "style"].iter().find_map(|tag| {
                let open = format!("<{tag}");
                let after = lower.as_bytes().get(i + open.len()).copied();
                if lower[i..].starts_with(&open)
                    && matches!(after, Some(b'>' | b' ' | b'\t' | b'\n' | b'\r' | b'/'))
                {
                    let close = format!("</{tag}");
                    Some(lower[i..].find(&close).map_or(bytes.len(), |p| {
                        let at = i + p;
                        lower[at..].find('>').map_or(bytes.len(), |q| at + q + 1)
                    }))
                } else {
                    None
                }
            });
            if let Some(end) = skip_to {
                i = end;
                out.push('\n');
                continue;
            }
            let (inner_end, end) = lower[i..]
                .find('>')
                .map_or((bytes.len(), bytes.len()), |p| (i + p, i + p + 1));
            let tag: String = lower[i + 1..inner_end]
                .trim_start_matches('/')
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect();
            let block = matches!(
                tag.as_str(),
                "p" | "div"
                    | "br"
                    | "tr"
                    | "li"
                    | "h1"
                    | "h2"
                    | "h3"
                    | "h4"
                    | "h5"
                    | "h6"
                    | "table"
                    | "td"
                    | "th"
                    | "page"
                    | "document"
                    | "type"
                    | "text"
                    | "title"
            );
            out.push(if block { '\n' } else { ' ' });
            i = end;
            continue;
        }
        if bytes[i] == b'&'
            && let Some((decoded, used)) = decode_entity(&html[i..])
        {
            out.push(decoded);
            i += used;
            continue;
        }
        let ch = html[i..].chars().next().unwrap_or(' ');
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// Decodes one entity at the start of `s` (`&amp;`, `&#160;`, `&#x2019;`, …); returns the char and bytes used.
fn decode_entity(s: &str) -> Option<(char, usize)> {
    let end = s.bytes().take(12).position(|b| b == b';')?;
    let body = &s[1..end];
    let ch = if let Some(num) = body.strip_prefix('#') {
        let code = if let Some(hex) = num.strip_prefix(['x', 'X']) {
            u32::from_str_radix(hex, 16).ok()?
        } else {
            num.parse::<u32>().ok()?
        };
        let c = char::from_u32(code)?;
        if c == '\u{a0}' { ' ' } else { c }
    } else {
        match body {
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            "apos" => '\'',
            "nbsp" | "ensp" | "emsp" | "thinsp" => ' ',
            "rsquo" | "lsquo" => '\'',
            "rdquo" | "ldquo" => '"',
            "mdash" => '—',
            "ndash" => '–',
            "sect" => '§',
            "reg" => '®',
            "trade" => '™',
            "copy" => '©',
            "bull" => '•',
            "middot" => '·',
            "hellip" => '…',
            "para" => '¶',
            "cent" => '¢',
            "pound" => '£',
            "euro" => '€',
            "yen" => '¥',
            _ => return None,
        }
    };
    Some((ch, end + 1))
}

/// The words of a text: maximal runs of ASCII letters. Digits, apostrophes, hyphens and every other
/// character split words (`company's` gives `company` and `s`; callers drop short words).
pub fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| !w.is_empty())
}

/// Every word of the texts, lowercased: the look-back set. A term is "found as a whole word" when it equals
/// one of these maximal letter runs, case-insensitively.
pub fn word_set<'a>(texts: impl IntoIterator<Item = &'a str>) -> std::collections::HashSet<String> {
    let mut set = std::collections::HashSet::new();
    for t in texts {
        for w in words(t) {
            if !set.contains(w) {
                set.insert(w.to_ascii_lowercase());
            }
        }
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("test_data")
            .join(name)
    }

    #[test]
    fn html_is_stripped_and_entities_decoded() {
        let t = html_to_text(
            "<html><head><style>p {color: red}</style><script>var x = '<b>';</script></head>\
             <body><p>Net&nbsp;revenue &amp; gross margin</p><!-- note --><div>AT&#38;T&#x2019;s lease</div></body></html>",
        );
        assert!(t.contains("Net revenue & gross margin"), "{t}");
        assert!(t.contains("AT&T’s lease"), "{t}");
        assert!(
            !t.contains("color") && !t.contains("var x") && !t.contains("note"),
            "{t}"
        );
    }

    #[test]
    fn corpus_folder_reads_all_three_layouts() {
        let docs = load_dir(&data("corpus")).unwrap();
        let names: Vec<&str> = docs.iter().map(|(d, _)| d.name.as_str()).collect();
        assert_eq!(names, ["alpha.json", "beta.html", "gamma.txt"]);
        let formats: Vec<&str> = docs.iter().map(|(d, _)| d.format).collect();
        assert_eq!(formats, ["edgar-corpus-json", "html", "text"]);
        let alpha = &docs[0].0.text;
        // item_1 comes before item_1A, which comes before item_7; metadata is not text.
        let p1 = alpha.find("Business overview").unwrap();
        let p1a = alpha.find("Risk factors").unwrap();
        let p7 = alpha.find("Management discussion").unwrap();
        assert!(p1 < p1a && p1a < p7, "{alpha}");
        assert!(!alpha.contains("0000000001"));
        assert!(!docs[1].0.text.contains("<p>"));
        assert_eq!(docs[0].0.sha256.len(), 64);
    }

    #[test]
    fn bad_json_names_the_file() {
        let err = edgar_json_text(Path::new("x/bad.json"), "{\"item_1\": 3}")
            .unwrap_err()
            .to_string();
        assert!(err.contains("bad.json") && err.contains("item_1"), "{err}");
        let err = edgar_json_text(Path::new("x/bad.json"), "[1,")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("bad.json") && err.contains("not valid JSON"),
            "{err}"
        );
    }

    #[test]
    fn whole_words_are_letter_runs() {
        let set = word_set(["The leasehold and re-Lease; subleases", "GAAP"]);
        assert!(set.contains("lease") && set.contains("leasehold") && set.contains("gaap"));
        assert!(!set.contains("sublease") && !set.contains("leas"));
        assert_eq!(
            words("Net-revenue, 2024 company's").collect::<Vec<_>>(),
            ["Net", "revenue", "company", "s"]
        );
    }
}
