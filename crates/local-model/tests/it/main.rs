//! Integration tests against the real GGUF (SmolLM2-135M-Instruct). The model is loaded once per test binary
//! behind one `LocalServer`; most tests call its engine in-process, one goes through HTTP.

use std::path::PathBuf;
use std::sync::OnceLock;

use local_model::{
    ChatMessage, ChatRequest, EngineConfig, Error, FinishReason, LocalServer, MAX_BODY_BYTES,
    StopStrings,
};
use serde_json::Value;

fn gguf_path() -> PathBuf {
    if let Some(p) = std::env::var_os(schema::env::EnvVars::IFSTRESS_GGUF).filter(|p| !p.is_empty())
    {
        return PathBuf::from(p);
    }
    schema::env::cache_dir()
        .join("assets")
        .join("smollm2-135m-instruct-q4_1.gguf")
}

fn server() -> &'static LocalServer {
    static SERVER: OnceLock<LocalServer> = OnceLock::new();
    SERVER.get_or_init(|| {
        let path = gguf_path();
        assert!(
            path.is_file(),
            "the embedded model {} is missing: run `cargo xtask setup` (or `cargo xtask test`, which fetches it first)",
            path.display()
        );
        // One thread: llama.cpp spin-waits, and 2 threads collapse when the other core is busy (tests run beside builds).
        let cfg = EngineConfig { gguf: path, threads: 1, ctx_size: 1024, max_parallel: 1 };
        LocalServer::start(&cfg).unwrap_or_else(|e| panic!("cannot start the embedded model: {e}"))
    })
}

fn user(text: &str) -> Vec<ChatMessage> {
    vec![ChatMessage::new("user", text)]
}

const CAPITAL: &str = "What is the capital of France? Answer in one sentence.";

#[test]
fn template_renders_system_and_user_as_chatml() {
    let engine = server().engine();
    let prompt = engine
        .render_prompt(&[
            ChatMessage::new("system", "You are terse."),
            ChatMessage::new("user", "Hi there"),
        ])
        .unwrap();
    assert_eq!(
        prompt,
        "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n"
    );
    // Without a system message the GGUF's template inserts SmolLM2's default one.
    let prompt = engine.render_prompt(&user("Hi there")).unwrap();
    assert_eq!(
        prompt,
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n\
         <|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n"
    );
    // Special tokens are parsed: the prompt starts with <|im_start|> (id 1), and <|im_end|> (id 2) appears.
    let ids = engine.tokenize(&prompt);
    assert_eq!(ids.first(), Some(&1));
    assert!(ids.contains(&2));
}

#[test]
fn short_greedy_generation_is_the_observed_text() {
    let c = server()
        .engine()
        .generate(&ChatRequest::greedy(user(CAPITAL), 12))
        .unwrap();
    assert_eq!(c.text, "The capital of France is Paris.");
    assert_eq!(c.finish_reason, FinishReason::Stop);
    assert!(c.prompt_tokens > 20, "prompt tokens {}", c.prompt_tokens);
    assert!(c.completion_tokens > 0 && c.completion_tokens <= 12);
}

#[test]
fn identical_greedy_requests_give_identical_text() {
    let engine = server().engine();
    let req = ChatRequest::greedy(user("Write a haiku about rivers."), 40);
    let a = engine.generate(&req).unwrap();
    let b = engine.generate(&req).unwrap();
    assert!(!a.text.is_empty());
    assert_eq!(a.text, b.text);
    assert_eq!(a.completion_tokens, b.completion_tokens);
}

#[test]
fn seeded_sampling_is_reproducible() {
    let engine = server().engine();
    let req = ChatRequest {
        temperature: Some(0.9),
        top_p: Some(0.95),
        seed: Some(42),
        ..ChatRequest::greedy(user("Name three colours."), 24)
    };
    let a = engine.generate(&req).unwrap();
    let b = engine.generate(&req).unwrap();
    assert_eq!(a.text, b.text);
}

#[test]
fn logprobs_are_negative_finite_and_one_per_token() {
    let req = ChatRequest {
        logprobs: true,
        ..ChatRequest::greedy(user("Describe the sea in a sentence."), 20)
    };
    let c = server().engine().generate(&req).unwrap();
    let lp = c.logprobs.as_ref().expect("logprobs requested");
    assert_eq!(lp.len(), c.completion_tokens as usize);
    assert!(lp.iter().all(|t| t.logprob.is_finite() && t.logprob <= 0.0));
    let mean = c.mean_logprob().unwrap();
    assert!(mean.is_finite() && mean < 0.0, "mean log-prob {mean}");
    // The pieces concatenate to the text (no stop string cut it).
    let joined: Vec<u8> = lp.iter().flat_map(|t| t.bytes.iter().copied()).collect();
    assert_eq!(String::from_utf8_lossy(&joined), c.text);
}

#[test]
fn cap_gives_finish_reason_length() {
    let c = server()
        .engine()
        .generate(&ChatRequest::greedy(
            user("Tell me a long story about a dragon."),
            5,
        ))
        .unwrap();
    assert_eq!(c.finish_reason, FinishReason::Length);
    assert_eq!(c.completion_tokens, 5);
}

#[test]
fn stop_string_cuts_the_text() {
    let engine = server().engine();
    let base = ChatRequest::greedy(user("Tell me a long story about a dragon."), 30);
    let full = engine.generate(&base).unwrap();
    // Stop at the second word of what the model says anyway.
    let word = full
        .text
        .split_whitespace()
        .nth(1)
        .expect("at least two words")
        .to_owned();
    let at = full.text.find(&word).unwrap();
    let stopped = engine
        .generate(&ChatRequest {
            stop: Some(StopStrings::One(word.clone())),
            ..base
        })
        .unwrap();
    assert_eq!(stopped.text, full.text[..at], "stop {word:?}");
    assert_eq!(stopped.finish_reason, FinishReason::Stop);
    assert!(stopped.completion_tokens < full.completion_tokens);
}

#[test]
fn invalid_requests_are_rejected() {
    let engine = server().engine();
    let bad = ChatRequest {
        temperature: Some(-1.0),
        ..ChatRequest::greedy(user("x"), 3)
    };
    assert!(matches!(engine.generate(&bad), Err(Error::BadRequest(_))));
    assert!(matches!(
        engine.generate(&ChatRequest::greedy(vec![], 3)),
        Err(Error::BadRequest(_))
    ));
    let long = "word ".repeat(2000);
    assert!(matches!(
        engine.generate(&ChatRequest::greedy(user(&long), 3)),
        Err(Error::BadRequest(_))
    ));
}

/// One request through a real HTTP client; returns the status, the headers and the body.
fn exchange(method: &str, path: &str, body: &str) -> (u16, reqwest::header::HeaderMap, String) {
    let url = format!("{}{path}", server().base_url());
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let response = reqwest::blocking::Client::new()
        .request(method, url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body.to_owned())
        .send()
        .unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    (status, headers, response.text().unwrap())
}

/// One request; returns the status and the JSON body.
fn http(method: &str, path: &str, body: &str) -> (u16, Value) {
    let (status, _, body) = exchange(method, path, body);
    (status, serde_json::from_str(&body).unwrap())
}

#[test]
fn http_endpoint_speaks_openai() {
    let srv = server();
    assert!(srv.base_url().starts_with("http://127.0.0.1:") && srv.base_url().ends_with("/v1"));

    let (status, models) = http("GET", "/models", "");
    assert_eq!(status, 200);
    assert_eq!(models["data"][0]["id"], srv.model_name());

    let body = serde_json::json!({
        "model": "smollm2-135m",
        "messages": [{"role": "user", "content": CAPITAL}],
        "max_tokens": 12,
        "temperature": 0,
        "logprobs": true,
        "repeat_penalty": 1.0,
    });
    let (status, resp) = http("POST", "/chat/completions", &body.to_string());
    assert_eq!(status, 200, "{resp}");
    let direct = srv
        .engine()
        .generate(&ChatRequest::greedy(user(CAPITAL), 12))
        .unwrap();
    assert_eq!(
        resp["choices"][0]["message"]["content"],
        direct.text.as_str()
    );
    assert_eq!(resp["choices"][0]["finish_reason"], "stop");
    assert_eq!(resp["usage"]["prompt_tokens"], direct.prompt_tokens);
    assert_eq!(resp["usage"]["completion_tokens"], direct.completion_tokens);
    let content = resp["choices"][0]["logprobs"]["content"]
        .as_array()
        .unwrap();
    assert_eq!(content.len(), direct.completion_tokens as usize);
    assert!(
        content
            .iter()
            .all(|t| t["logprob"].as_f64().unwrap() <= 0.0 && t["token"].is_string())
    );

    let (status, err) = http("POST", "/chat/completions", "{not json");
    assert_eq!(status, 400);
    assert!(err["error"]["message"].is_string());
    let (status, _) = http("GET", "/nowhere", "");
    assert_eq!(status, 404);
    let (status, err) = http("GET", "/chat/completions", "");
    assert_eq!(status, 405);
    assert!(err["error"]["message"].is_string());
    // A body over the limit gets a 413 with a JSON error.
    let big = "x".repeat(MAX_BODY_BYTES + 1);
    let (status, err) = http("POST", "/chat/completions", &big);
    assert_eq!(status, 413);
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("longer than"),
        "{err}"
    );
}

#[test]
fn http_endpoint_streams_server_sent_events() {
    let srv = server();
    let body = serde_json::json!({
        "model": "smollm2-135m",
        "messages": [{"role": "user", "content": CAPITAL}],
        "max_tokens": 12,
        "temperature": 0,
        "logprobs": true,
        "stream": true,
        "stream_options": {"include_usage": true},
    })
    .to_string();
    let (status, headers, text) = exchange("POST", "/chat/completions", &body);
    assert_eq!(status, 200, "{text}");
    assert_eq!(
        headers.get(reqwest::header::CONTENT_TYPE).unwrap(),
        "text/event-stream",
        "{headers:?}"
    );
    assert!(
        headers.get(reqwest::header::TRANSFER_ENCODING).is_some(),
        "a chunked body: {headers:?}"
    );
    let events: Vec<&str> = text
        .split("\n\n")
        .filter(|e| !e.is_empty())
        .map(|e| e.strip_prefix("data: ").expect("data events only"))
        .collect();
    assert_eq!(events.last(), Some(&"[DONE]"));
    let chunks: Vec<Value> = events[..events.len() - 1]
        .iter()
        .map(|e| serde_json::from_str(e).unwrap())
        .collect();
    let content: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    let direct = srv
        .engine()
        .generate(&ChatRequest::greedy(user(CAPITAL), 12))
        .unwrap();
    assert_eq!(content, direct.text);
    // The text came in more than one piece, then a finish chunk, then the usage chunk.
    assert!(chunks.len() >= 4, "{chunks:?}");
    let finish = &chunks[chunks.len() - 2];
    assert_eq!(finish["choices"][0]["finish_reason"], "stop");
    let lp = finish["choices"][0]["logprobs"]["content"]
        .as_array()
        .unwrap();
    assert_eq!(lp.len(), direct.completion_tokens as usize);
    let usage = &chunks[chunks.len() - 1];
    assert_eq!(usage["choices"], serde_json::json!([]));
    assert_eq!(usage["usage"]["prompt_tokens"], direct.prompt_tokens);
    assert_eq!(
        usage["usage"]["completion_tokens"],
        direct.completion_tokens
    );

    // A request the engine refuses still gets its status, not a stream.
    let long = serde_json::json!({
        "messages": [{"role": "user", "content": "word ".repeat(2000)}],
        "max_tokens": 3,
        "stream": true,
    });
    let (status, err) = http("POST", "/chat/completions", &long.to_string());
    assert_eq!(status, 400);
    assert!(err["error"]["message"].is_string());
}

#[test]
fn dropping_the_server_closes_a_stream_in_flight() {
    use std::io::Read;
    // A server of its own: the shared one lives as long as the test binary.
    let cfg = EngineConfig {
        gguf: gguf_path(),
        threads: 1,
        ctx_size: 1024,
        max_parallel: 1,
    };
    let srv = LocalServer::start(&cfg).unwrap();
    let body = serde_json::json!({
        "messages": [{"role": "user", "content": "Count from one to one thousand in words."}],
        "max_tokens": 900,
        "ignore_eos": true,
        "stream": true,
    });
    let mut response = reqwest::blocking::Client::new()
        .post(format!("{}/chat/completions", srv.base_url()))
        .json(&body)
        .send()
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    // The first bytes of the first event: the generation is under way.
    let mut first = [0u8; 6];
    response.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"data: ");
    // Dropping returns once the generation has been failed and every connection closed...
    drop(srv);
    // ...so the stream ends without its `[DONE]`, long before 900 tokens.
    let mut rest = Vec::new();
    let read = response.read_to_end(&mut rest);
    let rest = String::from_utf8_lossy(&rest);
    assert!(read.is_err() || !rest.contains("[DONE]"), "{rest}");
    let pieces = rest.matches("\"content\"").count();
    assert!(pieces < 900, "{pieces} pieces after the server was dropped");
}

/// The prompt behind the committed greedy output in `golden/lighthouse-48.txt`.
const GOLDEN_PROMPT: &str =
    "Write a short story about a lighthouse keeper who finds a message in a bottle.";

/// A guard against miscompiled or faulting kernels: 48 greedy tokens must be exactly the committed text on
/// every build and CPU (llama.cpp's CPU kernels are deterministic at a fixed thread count and instruction-set
/// level). A build for another instruction set, or a kernel that computes garbage, changes the arg-max within
/// a few tokens; one that faults kills this test binary instead of a user's first run.
#[test]
fn greedy_generation_matches_the_committed_output() {
    let expected = include_str!("golden/lighthouse-48.txt");
    let c = server()
        .engine()
        .generate(&ChatRequest::greedy(user(GOLDEN_PROMPT), 48))
        .unwrap();
    assert_eq!(
        c.text,
        expected,
        "greedy output changed (built for {}); if the model or llama.cpp version changed on purpose, \
         commit the new text to crates/local-model/tests/it/golden/lighthouse-48.txt",
        local_model::cpu::CpuReport::detect().summary()
    );
    assert_eq!(c.completion_tokens, 48);
    assert_eq!(c.finish_reason, FinishReason::Length);
}

/// llama.cpp is built for one fixed instruction-set level, whatever CPU built it (`.cargo/config.toml`):
/// nothing above x86-64-v3 (no AVX-512, no AMX) is compiled in, and the running CPU has all of it.
#[test]
fn llama_cpp_is_built_for_the_portable_level() {
    let report = local_model::cpu::CpuReport::detect();
    #[cfg(target_arch = "x86_64")]
    assert_eq!(
        report.compiled(),
        ["SSE3", "SSSE3", "AVX", "AVX2", "FMA", "F16C", "BMI2"],
        "{report:?}"
    );
    #[cfg(target_arch = "aarch64")]
    assert_eq!(report.compiled(), ["NEON"], "{report:?}");
    assert_eq!(report.missing(), Vec::<&str>::new());
    report.check().unwrap();
    assert!(
        local_model::cpu::BUILD_OPTIONS
            .iter()
            .any(|(k, v)| *k == "GGML_NATIVE" && *v == Some("OFF")),
        "built without the GGML_* options of .cargo/config.toml"
    );
}
