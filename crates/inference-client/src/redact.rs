//! Keeping API keys out of every message the client produces.

/// Replaces the API key and secret header values, and anything that looks like a provider key (`sk-…`), with
/// `[REDACTED]`.
pub(crate) struct Redactor {
    secrets: Vec<String>,
}

const MASK: &str = "[REDACTED]";

impl Redactor {
    pub(crate) fn new(key: Option<&str>) -> Redactor {
        Redactor {
            secrets: Vec::new(),
        }
        .with(key)
    }

    /// Also masks `secret` (a secret header's value).
    pub(crate) fn with(mut self, secret: Option<&str>) -> Redactor {
        if let Some(s) = secret.map(str::trim).filter(|s| !s.is_empty()) {
            self.secrets.push(s.to_owned());
        }
        self
    }

    pub(crate) fn clean(&self, text: &str) -> String {
        let mut s = text.to_owned();
        for k in &self.secrets {
            s = s.replace(k.as_str(), MASK);
        }
        // Providers echo (partly masked) keys in 401 messages, e.g. "Incorrect API key provided: sk-abc***xyz".
        while let Some(i) = find_key_like(&s) {
            let end = s[i..]
                .find(|c: char| c.is_whitespace() || c == '"' || c == '\'' || c == ',')
                .map_or(s.len(), |e| i + e);
            s.replace_range(i..end, MASK);
        }
        s
    }
}

fn find_key_like(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut from = 0;
    while let Some(rel) = s[from..].find("sk-") {
        let i = from + rel;
        let boundary = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
        if boundary
            && bytes
                .get(i + 3)
                .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'-' || *b == b'_')
        {
            return Some(i);
        }
        from = i + 3;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_masked() {
        let r = Redactor::new(Some("secret-123"));
        assert_eq!(r.clean("bad key secret-123!"), "bad key [REDACTED]!");
        assert_eq!(
            r.clean("Incorrect API key provided: sk-abc***xyz. See"),
            "Incorrect API key provided: [REDACTED] See"
        );
        assert_eq!(r.clean("task-force"), "task-force");
    }
}
