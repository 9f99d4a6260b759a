//! The text rules of the preparation, one small function each, so the order lives in one place (`crate::prepare`).

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// Removes Jeopardy!'s transport artefacts: the single quotes the JSON dump wraps every clue in,
/// backslash escapes (`\'`, `\"`), formatting tags other than `<sub>`/`<sup>` (those are judged later),
/// typographic quotes and dashes (mapped to ASCII), and runs of whitespace.
pub(crate) fn clean_artefacts(s: &str) -> String {
    let mut t = s.trim().to_owned();
    if t.len() >= 2 && t.starts_with('\'') && t.ends_with('\'') {
        t = t[1..t.len() - 1].to_owned();
    }
    let t = t
        .replace("\\\\", "\u{0}")
        .replace("\\'", "'")
        .replace("\\\"", "\"")
        .replace('\u{0}', "\\");
    let t = strip_tags(&t);
    let t: String = t
        .chars()
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' | '\u{02bc}' => '\'',
            '\u{201c}' | '\u{201d}' => '"',
            '\u{2013}' | '\u{2014}' => '-',
            '\u{00a0}' => ' ',
            c => c,
        })
        .collect();
    collapse_ws(&t)
}

/// An answer that is one quoted span (`"Layla"`) loses its quotes.
pub(crate) fn unquote_answer(s: &str) -> String {
    let t = s.trim();
    if t.len() >= 2 && t.starts_with('"') && t.ends_with('"') && !t[1..t.len() - 1].contains('"') {
        t[1..t.len() - 1].trim().to_owned()
    } else {
        t.to_owned()
    }
}

pub(crate) fn collapse_ws_pub(s: &str) -> String {
    collapse_ws(s.trim())
}

fn collapse_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Drops HTML tags except `<sub>`, `<sup>` (and their closing tags) and `<a …>` (media links are detected later).
fn strip_tags(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(start) = rest.find('<') {
        out.push_str(&rest[..start]);
        let after = &rest[start..];
        let Some(end) = after.find('>') else {
            out.push_str(after);
            return out;
        };
        let tag = &after[..=end];
        let name: String = tag[1..]
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        let is_tag = !name.is_empty() && !tag[1..end].contains('<');
        if !is_tag || matches!(name.as_str(), "sub" | "sup" | "a") {
            out.push_str(tag);
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// Does the clue point at a picture, sound or video? (`<a href`, "seen here", "heard here", "shown here", Clue Crew.)
pub(crate) fn media_marker(question: &str) -> Option<&'static str> {
    let q = question.to_ascii_lowercase();
    const MARKERS: [&str; 6] = [
        "<a href",
        "seen here",
        "heard here",
        "shown here",
        "clue crew",
        "<a target",
    ];
    MARKERS.into_iter().find(|m| q.contains(m))
}

/// Does the text rely on superscript or subscript? Tags, Unicode super/subscript letters, or `^` exponents.
pub(crate) fn super_subscript_marker(s: &str) -> Option<String> {
    let lower = s.to_ascii_lowercase();
    for tag in ["<sup", "<sub"] {
        if lower.contains(tag) {
            return Some(format!("{tag}>"));
        }
    }
    if let Some(c) = s.chars().find(|c| is_super_or_subscript(*c)) {
        return Some(c.to_string());
    }
    let b = s.as_bytes();
    for i in 1..b.len().saturating_sub(1) {
        if b[i] == b'^'
            && b[i - 1].is_ascii_alphanumeric()
            && (b[i + 1].is_ascii_alphanumeric() || b[i + 1] == b'(')
        {
            return Some("^".to_owned());
        }
    }
    None
}

fn is_super_or_subscript(c: char) -> bool {
    matches!(c, '\u{00b2}' | '\u{00b3}' | '\u{00b9}' | '\u{2070}'..='\u{209f}' | '\u{1d2c}'..='\u{1d6a}' | '\u{1d9b}'..='\u{1dbf}')
}

/// NFKD, then drop combining marks: `ã` → `a`, `č` → `c`, `ë` → `e`.
pub(crate) fn strip_diacritics(s: &str) -> String {
    s.nfkd().filter(|c| !is_combining_mark(*c)).collect()
}

/// The first character outside ASCII, if any.
pub(crate) fn first_non_ascii(s: &str) -> Option<char> {
    s.chars().find(|c| !c.is_ascii())
}

/// `&` → `and` (questions only): `Tom & Jerry` → `Tom and Jerry`, `AT&T` → `AT and T`.
pub(crate) fn ampersand_to_and(s: &str) -> String {
    if !s.contains('&') {
        return s.to_owned();
    }
    collapse_ws(&s.replace('&', " and "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn artefacts() {
        assert_eq!(
            clean_artefacts("'It\\'s <i>Moby-Dick</i>,  by  Melville'"),
            "It's Moby-Dick, by Melville"
        );
        assert_eq!(
            clean_artefacts("\\\"Twelfth Night\\\""),
            "\"Twelfth Night\""
        );
        assert_eq!(clean_artefacts("H<sub>2</sub>O"), "H<sub>2</sub>O");
        assert_eq!(clean_artefacts("a < b and c > d"), "a < b and c > d");
        assert_eq!(unquote_answer("\"Twelfth Night\""), "Twelfth Night");
        assert_eq!(unquote_answer("\"A\" & \"B\""), "\"A\" & \"B\"");
    }

    #[test]
    fn markers() {
        assert_eq!(
            media_marker("This dog breed seen here is loyal"),
            Some("seen here")
        );
        assert_eq!(
            media_marker("<a href=\"x.jpg\">this</a> skater"),
            Some("<a href")
        );
        assert_eq!(media_marker("Plain clue"), None);
        assert!(super_subscript_marker("V = pi r<sup>2</sup> h").is_some());
        assert!(super_subscript_marker("E = mc²").is_some());
        assert!(super_subscript_marker("CO₂").is_some());
        assert!(super_subscript_marker("x^2").is_some());
        assert_eq!(super_subscript_marker("A plain clue ^ alone"), None);
    }

    #[test]
    fn diacritics_and_ampersands() {
        assert_eq!(
            strip_diacritics("Pepé Le Pew crêpes ã č ë"),
            "Pepe Le Pew crepes a c e"
        );
        assert_eq!(first_non_ascii("Aeropostale"), None);
        assert_eq!(first_non_ascii("Straße"), Some('ß'));
        assert_eq!(ampersand_to_and("Tom & Jerry"), "Tom and Jerry");
        assert_eq!(ampersand_to_and("AT&T"), "AT and T");
    }
}
