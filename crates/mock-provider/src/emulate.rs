//! Provider emulation: model ids that make the mock behave like the real providers the client meets, so tests can
//! check the client against each one's own shapes. A request whose `model` is not one of these gets the mock's
//! normal answer. Scripted replies (`MockConfig::replies`) replace the default content of every emulated model.
//!
//! - `o-series`: OpenAI's reasoning models: 400 on `max_tokens` and on any `temperature`/`top_p` other than 1;
//!   reasoning tokens count against `max_completion_tokens` (400 of them per answer), and a budget they exhaust
//!   gives empty content with `finish_reason: "length"`.
//! - `vllm-thinker`: a thinking model served by vLLM: `<think>…</think>` before the answer, unless
//!   `chat_template_kwargs.enable_thinking` is false.
//! - `openrouter-flaky`: OpenRouter passing provider failures on: the 1st request of a prompt gets a 200 with an
//!   `error` object, the 2nd a choice with `finish_reason: "error"`, later ones an answer with `provider` and
//!   `usage.cost` (0.001).
//! - `openrouter-two-providers`: OpenRouter without pinned routing: answers alternate between two upstream
//!   providers (`Provider A` with fingerprint `fp_a`, then `Provider B` with `fp_b`, and so on, in arrival order).
//! - `credits-K`: 402 (out of credits) after K successful answers.
//! - `short-context`: vLLM's 400 when the prompt's characters / 4 plus `max_tokens` exceed 512.
//! - `rate-limited-ms`: each prompt's first request gets a 429 with `retry-after-ms: 50`.
//! - `stall`: each prompt's first request gets its headers and then nothing (until the connection drops).
//! - `alias`: answers under another model name (`served-elsewhere-v2`).
//! - `missing-model`: 404, as for a model id the provider does not serve.
//! - `echo-headers`: answers with the request's `x-*`, `http-referer` and `api-key` headers (`name=value;…`).
//! - `refuse-on-W1+W2…`: a model whose content filter trips on words: a last message that holds one of the words
//!   (as a whole word, any case) gets a refusal naming it; any other gets the normal answer.
//! - `reasoning-exhaust`: a thinking model that spends its whole output budget (`max_completion_tokens`, else
//!   `max_tokens`, else 4096) on reasoning: empty content, `finish_reason: "length"`, every completion token a
//!   reasoning token.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::{Value, json};

/// What the emulated provider does with one request.
pub(crate) enum Emulated {
    /// Status, extra headers, body.
    Reply(u16, Vec<(&'static str, String)>, String),
    /// Headers promising a body that never comes.
    Stall,
}

/// Per-emulation counters (requests per prompt, successes).
#[derive(Default)]
pub(crate) struct EmuState {
    per_prompt: Mutex<HashMap<String, u32>>,
    successes: Mutex<u64>,
}

fn error(status: u16, message: &str) -> Emulated {
    Emulated::Reply(
        status,
        Vec::new(),
        json!({"error": {"message": message, "code": status}}).to_string(),
    )
}

fn answer(
    model: &str,
    content: &str,
    finish: &str,
    usage: Value,
    extra: &[(&str, Value)],
) -> String {
    let mut v = json!({
        "id": "emu-1",
        "object": "chat.completion",
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}],
        "usage": usage,
    });
    for (k, x) in extra {
        v[*k] = x.clone();
    }
    v.to_string()
}

/// The emulated reply for a request, or `None` when its model is not an emulated one. `script` gives the
/// scripted content for a last message (`MockConfig::replies`), which replaces the default "Reply to: …".
pub(crate) fn emulate(
    body: &[u8],
    headers: &[(String, String)],
    st: &EmuState,
    script: impl Fn(&str) -> Option<String>,
) -> Option<Emulated> {
    let req: Value = serde_json::from_slice(body).ok()?;
    let model = req.get("model").and_then(Value::as_str)?.to_owned();
    const EMULATED: &[&str] = &[
        "o-series",
        "vllm-thinker",
        "openrouter-flaky",
        "openrouter-two-providers",
        "short-context",
        "rate-limited-ms",
        "missing-model",
        "stall",
        "alias",
        "echo-headers",
    ];
    // Anything else gets the mock's normal answer (and its scripted replies are not consumed here).
    if !EMULATED.contains(&model.as_str())
        && !model.starts_with("credits-")
        && !model.starts_with("refuse-on-")
        && model != "reasoning-exhaust"
    {
        return None;
    }
    let last = req
        .get("messages")
        .and_then(Value::as_array)
        .and_then(|m| m.last())
        .and_then(|m| m.get("content"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let nth = || {
        let mut seen = st.per_prompt.lock().unwrap_or_else(|e| e.into_inner());
        let n = seen.entry(format!("{model}\u{1f}{last}")).or_insert(0);
        *n += 1;
        *n
    };
    let reply = script(&last).unwrap_or_else(|| format!("Reply to: {last}"));
    let usage = |completion: u64| json!({"prompt_tokens": 20, "completion_tokens": completion});
    let ok = |content: &str| {
        Emulated::Reply(
            200,
            Vec::new(),
            answer(&model, content, "stop", usage(10), &[]),
        )
    };
    match model.as_str() {
        "o-series" => {
            if req.get("max_tokens").is_some() {
                return Some(error(
                    400,
                    "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
                ));
            }
            for p in ["temperature", "top_p"] {
                if req.get(p).and_then(Value::as_f64).is_some_and(|t| t != 1.0) {
                    return Some(error(
                        400,
                        &format!(
                            "Unsupported value: '{p}' does not support this value with this model. Only the default (1) value is supported."
                        ),
                    ));
                }
            }
            let budget = req
                .get("max_completion_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(100_000);
            let (content, finish, completion) = if budget <= 400 {
                ("", "length", budget)
            } else {
                (reply.as_str(), "stop", 410)
            };
            let usage = json!({"prompt_tokens": 20, "completion_tokens": completion,
                "completion_tokens_details": {"reasoning_tokens": completion.min(400)}});
            Some(Emulated::Reply(
                200,
                Vec::new(),
                answer(&model, content, finish, usage, &[]),
            ))
        }
        "vllm-thinker" => {
            let thinking = req
                .pointer("/chat_template_kwargs/enable_thinking")
                .and_then(Value::as_bool)
                != Some(false);
            let content = if thinking {
                format!("<think>Let me think about this carefully.</think>\n{reply}")
            } else {
                reply
            };
            Some(ok(&content))
        }
        "openrouter-flaky" => Some(match nth() {
            1 => Emulated::Reply(
                200,
                Vec::new(),
                json!({"error": {"message": "Upstream provider error", "code": 502}}).to_string(),
            ),
            2 => Emulated::Reply(200, Vec::new(), answer(&model, "", "error", usage(0), &[])),
            _ => {
                let usage = json!({"prompt_tokens": 20, "completion_tokens": 10, "cost": 0.001});
                Emulated::Reply(
                    200,
                    Vec::new(),
                    answer(
                        &model,
                        &reply,
                        "stop",
                        usage,
                        &[("provider", json!("Emulated Provider"))],
                    ),
                )
            }
        }),
        "openrouter-two-providers" => {
            let mut done = st.successes.lock().unwrap_or_else(|e| e.into_inner());
            let (provider, fingerprint) = if done.is_multiple_of(2) {
                ("Provider A", "fp_a")
            } else {
                ("Provider B", "fp_b")
            };
            *done += 1;
            Some(Emulated::Reply(
                200,
                Vec::new(),
                answer(
                    &model,
                    &reply,
                    "stop",
                    usage(10),
                    &[
                        ("provider", json!(provider)),
                        ("system_fingerprint", json!(fingerprint)),
                    ],
                ),
            ))
        }
        m if m.starts_with("credits-") => {
            let k: u64 = m["credits-".len()..].parse().ok()?;
            let mut done = st.successes.lock().unwrap_or_else(|e| e.into_inner());
            if *done >= k {
                return Some(error(
                    402,
                    "Insufficient credits. Add more using https://example.invalid/credits",
                ));
            }
            *done += 1;
            Some(ok(&reply))
        }
        "short-context" => {
            let chars: usize = req
                .get("messages")
                .and_then(Value::as_array)
                .map(|ms| {
                    ms.iter()
                        .filter_map(|m| m.get("content").and_then(Value::as_str))
                        .map(|c| c.chars().count())
                        .sum()
                })
                .unwrap_or(0);
            let max = req.get("max_tokens").and_then(Value::as_u64).unwrap_or(16);
            let input = (chars / 4) as u64;
            if input + max > 512 {
                return Some(error(
                    400,
                    &format!(
                        "This model's maximum context length is 512 tokens. However, you requested {} tokens ({input} in the messages, {max} in the completion). Please reduce the length of the messages or completion.",
                        input + max
                    ),
                ));
            }
            Some(ok(&reply))
        }
        "rate-limited-ms" => Some(if nth() == 1 {
            Emulated::Reply(
                429,
                vec![
                    ("retry-after-ms", "50".to_owned()),
                    ("retry-after", "30".to_owned()),
                ],
                json!({"error": {"message": "rate limited"}}).to_string(),
            )
        } else {
            ok(&reply)
        }),
        "echo-headers" => {
            let shown: Vec<String> = headers
                .iter()
                .filter(|(k, _)| k.starts_with("x-") || k == "api-key" || k == "http-referer")
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            Some(ok(&shown.join(";")))
        }
        m if m.starts_with("refuse-on-") => {
            let tripped = m["refuse-on-".len()..]
                .split('+')
                .filter(|w| !w.is_empty())
                .find(|w| holds_word(&last, w));
            Some(match tripped {
                Some(w) => ok(&format!(
                    "I'm sorry, but I can't help with that request: it asks me to write about {w}."
                )),
                None => ok(&reply),
            })
        }
        "reasoning-exhaust" => {
            let budget = req
                .get("max_completion_tokens")
                .or_else(|| req.get("max_tokens"))
                .and_then(Value::as_u64)
                .unwrap_or(4096);
            let usage = json!({"prompt_tokens": 20, "completion_tokens": budget,
                "completion_tokens_details": {"reasoning_tokens": budget}});
            Some(Emulated::Reply(
                200,
                Vec::new(),
                answer(&model, "", "length", usage, &[]),
            ))
        }
        "missing-model" => Some(error(
            404,
            "The model `missing-model` does not exist or you do not have access to it.",
        )),
        "stall" => Some(if nth() == 1 {
            Emulated::Stall
        } else {
            ok(&reply)
        }),
        "alias" => Some(Emulated::Reply(
            200,
            Vec::new(),
            answer(
                "served-elsewhere-v2",
                &reply,
                "stop",
                usage(10),
                &[("system_fingerprint", json!("fp_emu"))],
            ),
        )),
        _ => None,
    }
}

/// `text` holds `word` as a whole word (no letter, digit or `_` on either side), ignoring case.
fn holds_word(text: &str, word: &str) -> bool {
    let (text, word) = (text.to_lowercase(), word.to_lowercase());
    let is_word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    text.match_indices(&word).any(|(i, _)| {
        !is_word(text[..i].chars().next_back()) && !is_word(text[i + word.len()..].chars().next())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(model: &str, text: &str, extra: Value) -> Value {
        let mut body = json!({"model": model, "messages": [{"role": "user", "content": text}]});
        for (k, v) in extra.as_object().into_iter().flatten() {
            body[k] = v.clone();
        }
        let st = EmuState::default();
        match emulate(body.to_string().as_bytes(), &[], &st, |_| None) {
            Some(Emulated::Reply(200, _, b)) => serde_json::from_str(&b).unwrap(),
            _ => panic!("no 200 for {model}"),
        }
    }

    #[test]
    fn a_filter_word_in_the_prompt_gets_a_refusal() {
        let refused = ask(
            "refuse-on-anthrax+cyanide",
            "Include: revenue, Cyanide, audit.",
            json!({}),
        );
        let content = refused["choices"][0]["message"]["content"]
            .as_str()
            .unwrap();
        assert!(
            content.starts_with("I'm sorry, but I can't help"),
            "{content}"
        );
        assert!(content.contains("cyanide"), "{content}");
        // A word inside another word does not trip the filter.
        let fine = ask("refuse-on-anthrax", "Include: anthraxes, audit.", json!({}));
        assert_eq!(
            fine["choices"][0]["message"]["content"],
            "Reply to: Include: anthraxes, audit."
        );
    }

    #[test]
    fn reasoning_exhaustion_spends_the_whole_budget_and_shows_nothing() {
        for (extra, budget) in [
            (json!({"max_tokens": 300}), 300),
            (json!({"max_completion_tokens": 900, "max_tokens": 5}), 900),
            (json!({}), 4096),
        ] {
            let r = ask("reasoning-exhaust", "Write a report.", extra);
            assert_eq!(r["choices"][0]["message"]["content"], "");
            assert_eq!(r["choices"][0]["finish_reason"], "length");
            assert_eq!(r["usage"]["completion_tokens"], budget);
            assert_eq!(
                r["usage"]["completion_tokens_details"]["reasoning_tokens"],
                budget
            );
        }
    }
}
