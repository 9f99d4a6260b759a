//! Optional LLM rephrasing: clue → plain question, response → concise declarative answer.
//!
//! [`rephrase_requests`] builds one prompt record per clue that survives the artefact and media checks; the
//! inference client runs them (cached and resumable there); [`parse_rephrasings`] reads its response records back.
//! Ids are content-addressed, so a rerun, or a second file holding the same clue, reuses the same request.

use std::collections::HashMap;

use schema::{Message, Outcome, PromptRecord, RequestParams, ResponseRecord};
use serde_json::{Map, Value};

use crate::{Cleaned, RawClue, pre_clean};

/// A usable rephrasing of one clue.
#[derive(Debug, Clone, PartialEq)]
pub struct Rephrasing {
    pub question: String,
    pub answer: String,
}

/// Rephrasings by request id.
pub type Rephrasings = HashMap<String, Rephrasing>;

/// The content-addressed id of a clue's rephrasing request.
pub(crate) fn rephrase_id(c: &Cleaned) -> String {
    let key = format!("{}\n{}\n{}", c.category, c.question, c.answer);
    format!(
        "rift-rephrase-{}",
        &schema::sha256_hex(key.as_bytes())[..20]
    )
}

/// One request per distinct clue that passes the pre-rephrasing checks.
///
/// `template` holds `{category}`, `{clue}` and `{response}` placeholders (see `configs/prompts/rift-rephrase.txt`).
pub fn rephrase_requests(
    clues: &[RawClue],
    template: &str,
    params: &RequestParams,
) -> Vec<PromptRecord> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for raw in clues {
        let Ok(c) = pre_clean(raw) else { continue };
        let id = rephrase_id(&c);
        if !seen.insert(id.clone()) {
            continue;
        }
        let text = template
            .replace("{category}", &c.category)
            .replace("{clue}", &c.question)
            .replace("{response}", &c.answer);
        let mut extra = Map::new();
        extra.insert("task".to_owned(), Value::from("rift-rephrase"));
        extra.insert("source".to_owned(), Value::from(raw.source.clone()));
        out.push(PromptRecord {
            id,
            messages: vec![Message::user(text)],
            sample_index: 0,
            params: params.clone(),
            extra,
        });
    }
    out
}

/// Reads `QUESTION: …` / `ANSWER: …` replies; failed, truncated or unparsable replies are left out
/// (their clues are then skipped as `rephrase_failed`).
pub fn parse_rephrasings(responses: &[ResponseRecord]) -> Rephrasings {
    let mut map = Rephrasings::new();
    for r in responses {
        if r.outcome != Outcome::Ok {
            continue;
        }
        if let Some(parsed) = r.content.as_deref().and_then(parse_reply) {
            map.insert(r.id.clone(), parsed);
        }
    }
    map
}

fn parse_reply(text: &str) -> Option<Rephrasing> {
    let text = match text.rfind("</think>") {
        Some(i) => &text[i + "</think>".len()..],
        None => text,
    };
    let mut question = None;
    let mut answer = None;
    for line in text.lines() {
        let l = line.trim().trim_start_matches(['*', '#', ' ']);
        let upper = l.to_ascii_uppercase();
        if upper.starts_with("QUESTION:") {
            question = Some(
                l["QUESTION:".len()..]
                    .trim()
                    .trim_matches('*')
                    .trim()
                    .to_owned(),
            );
        } else if upper.starts_with("ANSWER:") {
            answer = Some(
                l["ANSWER:".len()..]
                    .trim()
                    .trim_matches('*')
                    .trim()
                    .trim_end_matches('.')
                    .to_owned(),
            );
        }
    }
    match (question, answer) {
        (Some(q), Some(a)) if !q.is_empty() && !a.is_empty() => Some(Rephrasing {
            question: q,
            answer: a,
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reply_parsing() {
        let r = parse_reply(
            "<think>hm</think>\nQUESTION: Who wrote Hamlet?\nANSWER: William Shakespeare.",
        )
        .unwrap();
        assert_eq!(
            r,
            Rephrasing {
                question: "Who wrote Hamlet?".into(),
                answer: "William Shakespeare".into()
            }
        );
        assert_eq!(parse_reply("I cannot do that."), None);
        assert_eq!(parse_reply("QUESTION: x?\nANSWER:"), None);
    }
}
