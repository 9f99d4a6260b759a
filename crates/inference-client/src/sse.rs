//! A streamed chat completion (server-sent events, `stream: true`): its events read as they arrive and added up to
//! the reply document a non-streaming request would have got, which [`parse::completion_of`] then reads. So a
//! streamed answer gives exactly the completion (content, reasoning, finish reason, usage, log-probs, provenance)
//! and the failure classes that the same answer sent whole gives.
//!
//! Accepted: comment lines (`: keep-alive`, `: OPENROUTER PROCESSING`), empty lines, `event:`/`id:`/`retry:`
//! fields (ignored), `\r\n` line ends, events of several `data:` lines, and a final `data: [DONE]`. Reasoning deltas
//! (`reasoning_content` or `reasoning`) are kept apart from the visible content; usage comes from the chunk that
//! carries it (the last one with `stream_options.include_usage`). An `error` object in a chunk ends the stream as
//! the same object in a whole reply does; so does `finish_reason: "error"`.
//!
//! `stream` is not part of the cache key (see `body`), so both ways give one cache entry.

use serde::Deserialize;
use serde_json::{Map, Value};

use schema::ErrorClass;

use crate::parse::{self, Completion, Failure, failure_200};

/// The state of one streamed reply.
#[derive(Default)]
pub(crate) struct Assembler {
    /// Bytes of a line not yet ended.
    line: Vec<u8>,
    /// The `data:` lines of the event being read, as sent (UTF-8 is checked where the JSON parser reads strings).
    data: Vec<u8>,
    has_data: bool,
    /// `data: [DONE]` was read.
    pub(crate) done: bool,
    /// Some chunk carried a choice (index 0).
    saw_choice: bool,
    content: String,
    reasoning: String,
    finish_reason: Option<String>,
    choice_error: Option<Value>,
    logprobs: Vec<Value>,
    usage: Option<Value>,
    id: Option<String>,
    model: Option<String>,
    system_fingerprint: Option<String>,
    provider: Option<String>,
    seed: Option<u64>,
}

/// One chunk; fields of unexpected types are ignored, as the whole-reply parser ignores them. Strings are borrowed
/// from the event's text where they have no escapes, so a chunk of a long answer allocates little.
#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(default, borrow)]
    id: Text<'a>,
    #[serde(default, borrow)]
    model: Text<'a>,
    #[serde(default, borrow)]
    system_fingerprint: Text<'a>,
    #[serde(default, borrow)]
    provider: Text<'a>,
    #[serde(default)]
    seed: Option<Value>,
    #[serde(default, borrow)]
    choices: Option<Vec<ChunkChoice<'a>>>,
    #[serde(default)]
    usage: Option<Value>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct ChunkChoice<'a> {
    #[serde(default)]
    index: Index,
    #[serde(default, borrow)]
    delta: Option<Delta<'a>>,
    #[serde(default, borrow)]
    finish_reason: Text<'a>,
    #[serde(default)]
    logprobs: Option<Value>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(default, borrow)]
    content: Text<'a>,
    #[serde(default, borrow)]
    reasoning_content: Text<'a>,
    #[serde(default, borrow)]
    reasoning: Text<'a>,
}

/// A field read as text when it is a string, as its items when it is an array (a message's content in parts), and
/// skipped (as `None`) whatever else it is.
#[derive(Default)]
struct Text<'a>(Option<std::borrow::Cow<'a, str>>, Vec<Value>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Some(std::borrow::Cow::Borrowed(v)), Vec::new()))
            }
            fn visit_str<E>(self, v: &str) -> Result<Text<'de>, E> {
                Ok(Text(
                    Some(std::borrow::Cow::Owned(v.to_owned())),
                    Vec::new(),
                ))
            }
            fn visit_string<E>(self, v: String) -> Result<Text<'de>, E> {
                Ok(Text(Some(std::borrow::Cow::Owned(v)), Vec::new()))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Text<'de>, E> {
                Ok(Text::default())
            }
            fn visit_i64<E>(self, _: i64) -> Result<Text<'de>, E> {
                Ok(Text::default())
            }
            fn visit_u64<E>(self, _: u64) -> Result<Text<'de>, E> {
                Ok(Text::default())
            }
            fn visit_f64<E>(self, _: f64) -> Result<Text<'de>, E> {
                Ok(Text::default())
            }
            fn visit_unit<E>(self) -> Result<Text<'de>, E> {
                Ok(Text::default())
            }
            fn visit_none<E>(self) -> Result<Text<'de>, E> {
                Ok(Text::default())
            }
            fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Text<'de>, D::Error> {
                d.deserialize_any(V)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Text<'de>, A::Error> {
                let mut items = Vec::new();
                while let Some(v) = a.next_element::<Value>()? {
                    items.push(v);
                }
                Ok(Text(None, items))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Text<'de>, A::Error> {
                while a
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(Text::default())
            }
        }
        d.deserialize_any(V)
    }
}

/// A choice's `index`: 0 unless it is another whole number (as `Value::as_u64().unwrap_or(0)` read it).
#[derive(Default)]
struct Index(u64);

impl<'de> Deserialize<'de> for Index {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Index(Value::deserialize(d)?.as_u64().unwrap_or(0)))
    }
}

impl Assembler {
    pub(crate) fn new() -> Assembler {
        Assembler::default()
    }

    /// Reads the next bytes of the body; a chunk that reports an error, or is not JSON, ends the reply.
    pub(crate) fn feed(&mut self, mut bytes: &[u8]) -> Result<(), Failure> {
        while let Some(nl) = bytes.iter().position(|&b| b == b'\n') {
            let (head, rest) = bytes.split_at(nl);
            bytes = &rest[1..];
            if self.line.is_empty() {
                self.line_done(head)?;
            } else {
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(head);
                self.line_done(&line)?;
            }
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    fn line_done(&mut self, line: &[u8]) -> Result<(), Failure> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            return self.dispatch();
        }
        if line[0] == b':' {
            return Ok(());
        }
        if let Some(rest) = line.strip_prefix(b"data:") {
            let rest = rest.strip_prefix(b" ").unwrap_or(rest);
            if self.has_data {
                self.data.push(b'\n');
            }
            self.data.extend_from_slice(rest);
            self.has_data = true;
        }
        Ok(())
    }

    /// One whole event.
    fn dispatch(&mut self) -> Result<(), Failure> {
        if !self.has_data {
            return Ok(());
        }
        self.has_data = false;
        // The event's buffer is handed back (emptied) for the next event, so reading one allocates no new buffer.
        let data = std::mem::take(&mut self.data);
        let read = self.event(&data);
        self.data = data;
        self.data.clear();
        read
    }

    /// Adds one event's data (a chunk, or `[DONE]`) to the reply.
    fn event(&mut self, data: &[u8]) -> Result<(), Failure> {
        if data.trim_ascii() == b"[DONE]" {
            self.done = true;
            return Ok(());
        }
        let invalid = |e: serde_json::Error| {
            failure_200(
                ErrorClass::InvalidJson,
                format!("invalid JSON in a streamed chunk: {e}"),
            )
        };
        // Read from the bytes, so that a chunk is scanned once; one that is not UTF-8 is read as its text with
        // U+FFFD for the bad bytes (a rare case, worth a second pass).
        let lossy;
        let chunk: Chunk = match serde_json::from_slice(data) {
            Ok(c) => c,
            Err(e) if std::str::from_utf8(data).is_ok() => return Err(invalid(e)),
            Err(_) => {
                lossy = String::from_utf8_lossy(data).into_owned();
                serde_json::from_str(&lossy).map_err(invalid)?
            }
        };
        let keep = |slot: &mut Option<String>, v: Text<'_>| {
            if slot.is_none()
                && let Some(s) = v.0
                && !s.is_empty()
            {
                *slot = Some(s.into_owned());
            }
        };
        keep(&mut self.id, chunk.id);
        keep(&mut self.model, chunk.model);
        keep(&mut self.system_fingerprint, chunk.system_fingerprint);
        keep(&mut self.provider, chunk.provider);
        if self.seed.is_none() {
            self.seed = chunk.seed.as_ref().and_then(Value::as_u64);
        }
        if let Some(u) = chunk.usage.filter(|u| !u.is_null()) {
            self.usage = Some(u);
        }
        if let Some(err) = chunk.error.filter(|e| !e.is_null()) {
            // The same failure the error object gives in a whole reply.
            let mut doc = Map::new();
            doc.insert("error".into(), err);
            if let Some(u) = self.usage.take() {
                doc.insert("usage".into(), u);
            }
            return parse::completion_of(&Value::Object(doc)).map(|_| ());
        }
        for choice in chunk.choices.unwrap_or_default() {
            if choice.index.0 != 0 {
                continue;
            }
            self.saw_choice = true;
            if let Some(d) = choice.delta {
                if let Some(c) = &d.content.0 {
                    self.content.push_str(c);
                }
                for p in &d.content.1 {
                    if let Some(t) = p.get("text").and_then(Value::as_str) {
                        self.content.push_str(t);
                    }
                }
                for r in [&d.reasoning_content, &d.reasoning] {
                    if let Some(r) = &r.0 {
                        self.reasoning.push_str(r);
                    }
                }
            }
            if let Some(f) = choice.finish_reason.0 {
                self.finish_reason = Some(f.into_owned());
            }
            if let Some(Value::Array(items)) = choice
                .logprobs
                .and_then(|mut l| l.get_mut("content").map(Value::take))
            {
                self.logprobs.extend(items);
            }
            if let Some(e) = choice.error.filter(|e| !e.is_null()) {
                self.choice_error = Some(e);
            }
        }
        Ok(())
    }

    /// The completion, once the body has ended. A stream that stopped before `[DONE]` and before any finish reason
    /// was cut off (`truncated_body`).
    pub(crate) fn finish(mut self) -> Result<Completion, Failure> {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.line_done(&line)?;
        }
        self.dispatch()?;
        if !self.done && self.finish_reason.is_none() {
            return Err(failure_200(
                ErrorClass::TruncatedBody,
                "the stream ended before its last event".into(),
            ));
        }
        let mut doc = Map::new();
        let text = |s: Option<String>| s.map_or(Value::Null, Value::String);
        doc.insert("id".into(), text(self.id));
        doc.insert("model".into(), text(self.model));
        doc.insert("system_fingerprint".into(), text(self.system_fingerprint));
        doc.insert("provider".into(), text(self.provider));
        doc.insert("seed".into(), self.seed.map_or(Value::Null, Value::from));
        let mut choices = Vec::new();
        if self.saw_choice {
            let mut message = Map::new();
            message.insert("content".into(), Value::String(self.content));
            if !self.reasoning.is_empty() {
                message.insert("reasoning_content".into(), Value::String(self.reasoning));
            }
            let mut choice = Map::new();
            choice.insert("message".into(), Value::Object(message));
            choice.insert("finish_reason".into(), text(self.finish_reason));
            if !self.logprobs.is_empty() {
                let mut lp = Map::new();
                lp.insert("content".into(), Value::Array(self.logprobs));
                choice.insert("logprobs".into(), Value::Object(lp));
            }
            if let Some(e) = self.choice_error {
                choice.insert("error".into(), e);
            }
            choices.push(Value::Object(choice));
        }
        doc.insert("choices".into(), Value::Array(choices));
        if let Some(u) = self.usage {
            doc.insert("usage".into(), u);
        }
        parse::completion_of(&Value::Object(doc))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schema::Usage;

    fn assemble(pieces: &[&str]) -> Result<Completion, Failure> {
        let mut a = Assembler::new();
        for p in pieces {
            a.feed(p.as_bytes())?;
        }
        a.finish()
    }

    #[test]
    fn a_stream_adds_up_to_the_whole_reply() {
        let whole = br#"{"id":"c1","model":"m-2024","system_fingerprint":"fp","choices":[{"index":0,
            "message":{"role":"assistant","content":"<think>hm</think>Hello world","reasoning_content":"deep"},
            "finish_reason":"stop","logprobs":{"content":[{"logprob":-1.0},{"logprob":-3.0}]}}],
            "usage":{"prompt_tokens":5,"completion_tokens":2,"completion_tokens_details":{"reasoning_tokens":1}}}"#;
        let streamed = assemble(&[
            ": OPENROUTER PROCESSING\n\n",
            "data: {\"id\":\"c1\",\"model\":\"m-2024\",\"system_fingerprint\":\"fp\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}],\"usage\":null}\r\n\r\n",
            "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"de\"}}]}\n\n",
            "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\"ep\"}}]}\n\nda",
            "ta: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"<think>hm</think>Hel\"},\"logprobs\":{\"content\":[{\"logprob\":-1.0}]}}]}\n\n",
            "event: message\nid: 4\ndata: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo world\"},\"logprobs\":{\"content\":[{\"logprob\":-3.0}]}}]}\n\n",
            ": keep-alive\n\n",
            "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
            "data: {\"id\":\"c1\",\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2,\"completion_tokens_details\":{\"reasoning_tokens\":1}}}\n\n",
            "data: [DONE]\n\n",
        ])
        .unwrap();
        let direct = parse::parse_completion(whole).unwrap();
        assert_eq!(streamed, direct);
        assert_eq!(streamed.content, "Hello world");
        assert_eq!(streamed.reasoning.as_deref(), Some("deep\nhm"));
        assert_eq!(
            streamed.usage,
            Usage {
                prompt_tokens: 5,
                completion_tokens: 2,
                reasoning_tokens: Some(1),
                cost_usd: None
            }
        );
        assert_eq!(streamed.served.model.as_deref(), Some("m-2024"));
    }

    #[test]
    fn fields_of_unexpected_types_are_skipped_and_content_parts_are_read() {
        let c = assemble(&[
            "data: {\"id\":7,\"model\":{\"a\":[1]},\"provider\":[\"x\"],\"choices\":[{\"index\":\"0\",\"delta\":{\"content\":[{\"type\":\"text\",\"text\":\"Hel\"},{\"text\":\"lo\"}],\"reasoning\":true}}]}\n\n",
            "data: {\"id\":\"c\\u0031\",\"choices\":[{\"index\":1,\"delta\":{\"content\":\"ignored\"}},{\"index\":0,\"delta\":{\"content\":\" w\\u00f6rld\\n\"},\"finish_reason\":{\"odd\":1}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
        ])
        .unwrap();
        assert_eq!(c.content, "Hello w\u{f6}rld\n");
        assert_eq!(c.reasoning, None);
        assert_eq!(c.served.model, None);
        assert_eq!(c.served.request_id.as_deref(), Some("c1"));
        assert_eq!(c.served.provider, None);
    }

    #[test]
    fn bytes_that_are_not_utf8_are_read_as_replacement_characters() {
        let mut a = Assembler::new();
        a.feed(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\xffb\"},\"finish_reason\":\"stop\"}]}\n\n")
            .unwrap();
        a.feed(b"data: [DONE]\n\n").unwrap();
        assert_eq!(a.finish().unwrap().content, "a\u{fffd}b");
    }

    #[test]
    fn errors_in_a_stream_are_classified_as_in_a_whole_reply() {
        let in_chunk = assemble(&[
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"par\"}}]}\n\n",
            "data: {\"error\":{\"message\":\"upstream overloaded\",\"code\":503}}\n\n",
        ])
        .unwrap_err();
        let whole =
            parse::parse_completion(br#"{"error":{"message":"upstream overloaded","code":503}}"#)
                .unwrap_err();
        assert_eq!(
            (in_chunk.class, &in_chunk.message),
            (whole.class, &whole.message)
        );
        assert_eq!(in_chunk.class, ErrorClass::ServerError);
        let finish = assemble(&[
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"par\"},\"finish_reason\":\"error\",\"error\":{\"message\":\"died\"}}]}\n\n",
            "data: [DONE]\n\n",
        ])
        .unwrap_err();
        assert_eq!(finish.class, ErrorClass::ProviderError);
        assert!(finish.message.contains("died"), "{}", finish.message);
        let cut =
            assemble(&["data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"par\"}}]}\n\n"])
                .unwrap_err();
        assert_eq!(cut.class, ErrorClass::TruncatedBody);
        let empty = assemble(&["data: {\"choices\":[]}\n\ndata: [DONE]\n\n"]).unwrap_err();
        assert_eq!(empty.class, ErrorClass::EmptyChoices);
        let bad = assemble(&["data: {not json\n\n"]).unwrap_err();
        assert_eq!(bad.class, ErrorClass::InvalidJson);
    }
}
