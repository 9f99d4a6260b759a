//! Strict mode (see the module docs of `scoring::ifscale`): whitespace tokens trimmed of punctuation, compared
//! whole with each keyword (`*` a wildcard), or by prefix with its stem.

use std::collections::HashSet;

use schema::ifscale::KeywordStatus;

use super::stem;

/// Strict-mode tokens of a lowercased text.
fn strict_tokens(lower: &str) -> Vec<&str> {
    lower
        .split(|c: char| c.is_whitespace())
        .map(|t| t.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|t| !t.is_empty())
        .collect()
}

/// The strict-mode status of each of `keywords` (in their order) in a lowercased text.
pub(super) fn label_strict(lower: &str, keywords: &[&str]) -> Vec<KeywordStatus> {
    let cleaned: String = lower.chars().filter(|&c| c != '*' && c != '~').collect();
    let set: HashSet<&str> = strict_tokens(&cleaned).into_iter().collect();
    let mut sorted: Vec<&str> = set.iter().copied().collect();
    sorted.sort_unstable();
    keywords
        .iter()
        .map(|kw| {
            let kw = kw.to_lowercase();
            if kw.contains('*') {
                return if sorted.iter().any(|t| glob_match(&kw, t)) {
                    KeywordStatus::Exact
                } else {
                    KeywordStatus::Omitted
                };
            }
            if set.contains(kw.as_str()) {
                return KeywordStatus::Exact;
            }
            let st = stem(&kw);
            let from = sorted.partition_point(|t| *t < st);
            if sorted.get(from).is_some_and(|t| t.starts_with(st)) {
                KeywordStatus::Modified
            } else {
                KeywordStatus::Omitted
            }
        })
        .collect()
}

/// `*` matches any run of characters (possibly empty); everything else literally.
fn glob_match(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let tail: Vec<&str> = parts.collect();
    let Some((last, middle)) = tail.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob() {
        assert!(glob_match("custom*", "customers"));
        assert!(glob_match("*ment", "payment"));
        assert!(glob_match("c*t*r", "customer"));
        assert!(!glob_match("c*t*r", "custom"));
        assert!(glob_match("a*a", "aa"));
        assert!(!glob_match("a*a", "a"));
    }
}
