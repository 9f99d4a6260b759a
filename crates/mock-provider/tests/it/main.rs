//! The mock provider through a real HTTP client (reqwest): answers, counters, the body limit, faults that end a
//! connection, server-sent events, the Batch API's multipart upload and the file server.

use std::collections::HashMap;

use mock_provider::files::FileServer;
use mock_provider::{Fault, MockConfig, MockServer, fetch_stats};
use serde_json::{Value, json};

fn client() -> reqwest::blocking::Client {
    reqwest::blocking::Client::new()
}

fn chat_body(content: &str) -> Value {
    json!({"model": "m", "messages": [{"role": "user", "content": content}]})
}

fn post(url: &str, body: &Value) -> reqwest::Result<reqwest::blocking::Response> {
    client().post(url).json(body).send()
}

#[test]
fn answers_and_counts_over_keep_alive_connections() {
    let mock = MockServer::start(MockConfig::new(), 0).unwrap();
    let url = format!("{}/chat/completions", mock.base_url());
    // One client: its requests share a kept-alive connection.
    let c = client();
    for i in 0..3 {
        let reply: Value = c
            .post(&url)
            .json(&chat_body(&format!("hi {i}")))
            .send()
            .unwrap()
            .error_for_status()
            .unwrap()
            .json()
            .unwrap();
        assert_eq!(
            reply["choices"][0]["message"]["content"],
            format!("Reply to: hi {i}")
        );
        assert_eq!(reply["choices"][0]["finish_reason"], "stop");
    }
    let stats = fetch_stats(mock.addr()).unwrap();
    assert_eq!((stats.requests, stats.ok, stats.faults), (3, 3, 0));
    assert_eq!(stats, mock.stats());
    let missing = c
        .get(format!("{}/nowhere", mock.base_url()))
        .send()
        .unwrap();
    assert_eq!(missing.status().as_u16(), 404);
    assert_eq!(mock.stop().requests, 3);
}

#[test]
fn a_body_over_the_limit_gets_a_413_with_a_json_error() {
    let mut cfg = MockConfig::new();
    cfg.max_body_bytes = 1_000;
    let mock = MockServer::start(cfg, 0).unwrap();
    let url = format!("{}/chat/completions", mock.base_url());
    let response = post(&url, &chat_body(&"x".repeat(2_000))).unwrap();
    assert_eq!(response.status().as_u16(), 413);
    let err: Value = response.json().unwrap();
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("1000 bytes"),
        "{err}"
    );
    assert_eq!(mock.requests(), 0);
    let ok = post(&url, &chat_body("short")).unwrap();
    assert_eq!(ok.status().as_u16(), 200);
}

#[test]
fn scripted_faults_come_first_in_order() {
    let mut cfg = MockConfig::new();
    cfg.script = vec![
        Fault::RateLimited,
        Fault::Reset,
        Fault::TruncatedBody,
        Fault::Unauthorized,
        Fault::InvalidJson,
    ];
    cfg.retry_after_s = 7;
    let mock = MockServer::start(cfg, 0).unwrap();
    let url = format!("{}/chat/completions", mock.base_url());

    let limited = post(&url, &chat_body("a")).unwrap();
    assert_eq!(limited.status().as_u16(), 429);
    assert_eq!(limited.headers()["retry-after"], "7");

    // A reset: the connection closes without a response.
    let reset = post(&url, &chat_body("b")).unwrap_err();
    assert!(reset.is_request() || reset.is_connect(), "{reset:?}");

    // A truncated body: the headers promise more than comes.
    let truncated = post(&url, &chat_body("c")).unwrap();
    assert_eq!(truncated.status().as_u16(), 200);
    let declared = truncated.content_length().unwrap();
    assert!(truncated.bytes().is_err(), "{declared} bytes promised");

    let unauthorized = client()
        .post(&url)
        .bearer_auth("sk-test-123")
        .json(&chat_body("d"))
        .send()
        .unwrap();
    assert_eq!(unauthorized.status().as_u16(), 401);
    assert!(unauthorized.text().unwrap().contains("sk-test-123"));

    let invalid = post(&url, &chat_body("e")).unwrap();
    assert_eq!(invalid.status().as_u16(), 200);
    assert!(invalid.json::<Value>().is_err());

    let fine = post(&url, &chat_body("f")).unwrap();
    assert_eq!(fine.status().as_u16(), 200);
    let s = mock.stop();
    assert_eq!((s.requests, s.ok, s.faults), (6, 1, 5));
}

#[test]
fn random_faults_follow_the_seed() {
    let run = |seed: u64| -> Vec<u16> {
        let mut cfg = MockConfig::new();
        cfg.fault_rate = 0.5;
        cfg.faults = vec![Fault::Unavailable, Fault::Conflict];
        cfg.seed = seed;
        let mock = MockServer::start(cfg, 0).unwrap();
        let url = format!("{}/chat/completions", mock.base_url());
        (0..20)
            .map(|i| {
                post(&url, &chat_body(&i.to_string()))
                    .unwrap()
                    .status()
                    .as_u16()
            })
            .collect()
    };
    let first = run(42);
    assert_eq!(first, run(42));
    assert!(first.contains(&200) && first.iter().any(|s| *s == 503 || *s == 409));
}

/// The `data:` events of a stream, without comments.
fn events(text: &str) -> Vec<String> {
    text.split("\n\n")
        .filter_map(|e| e.strip_prefix("data: "))
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_streamed_answer_is_the_same_answer_in_events() {
    let mut cfg = MockConfig::new();
    cfg.chunk_chars = 4;
    let mock = MockServer::start(cfg, 0).unwrap();
    let url = format!("{}/chat/completions", mock.base_url());
    let mut body = chat_body("stream me");
    body["stream"] = Value::Bool(true);
    body["stream_options"] = json!({"include_usage": true});
    let response = post(&url, &body).unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let events = events(&response.text().unwrap());
    assert_eq!(events.last().map(String::as_str), Some("[DONE]"));
    let chunks: Vec<Value> = events[..events.len() - 1]
        .iter()
        .map(|e| serde_json::from_str(e).unwrap())
        .collect();
    let content: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(content, "Reply to: stream me");
    // Role, 5 pieces of 4 characters, the finish chunk, the usage chunk.
    assert_eq!(chunks.len(), 8, "{chunks:?}");
    assert_eq!(chunks[6]["choices"][0]["finish_reason"], "stop");
    assert_eq!(chunks[7]["usage"]["completion_tokens"], 10);
}

#[test]
fn a_cut_stream_ends_without_done() {
    let mut cfg = MockConfig::new();
    cfg.script = vec![Fault::TruncatedBody];
    let mock = MockServer::start(cfg, 0).unwrap();
    let url = format!("{}/chat/completions", mock.base_url());
    let mut body = chat_body("cut me");
    body["stream"] = Value::Bool(true);
    let response = post(&url, &body).unwrap();
    assert_eq!(response.status().as_u16(), 200);
    // The chunked body is aborted: reading it fails.
    assert!(response.text().is_err());
}

fn upload(url: &str, purpose: &str, file: &str) -> reqwest::blocking::Response {
    let form = reqwest::blocking::multipart::Form::new()
        .text("purpose", purpose.to_owned())
        .part(
            "file",
            reqwest::blocking::multipart::Part::bytes(file.as_bytes().to_vec())
                .file_name("input.jsonl"),
        );
    client().post(url).multipart(form).send().unwrap()
}

#[test]
fn the_batch_api_reads_a_multipart_upload_and_answers_its_lines() {
    let mock = MockServer::start(MockConfig::new(), 0).unwrap();
    let base = mock.base_url();
    let line = |id: &str, content: &str| {
        json!({"custom_id": id, "method": "POST", "url": "/v1/chat/completions", "body": chat_body(content)})
            .to_string()
    };
    let input = format!("{}\n{}\n", line("k1", "one"), line("k2", "two"));

    let refused = upload(&format!("{base}/files"), "fine-tune", &input);
    assert_eq!(refused.status().as_u16(), 400);
    let uploaded: Value = upload(&format!("{base}/files"), "batch", &input)
        .json()
        .unwrap();
    let file_id = uploaded["id"].as_str().unwrap().to_owned();
    assert_eq!(uploaded["bytes"], input.len());

    let created: Value = post(
        &format!("{base}/batches"),
        &json!({"input_file_id": file_id, "endpoint": "/v1/chat/completions", "completion_window": "24h"}),
    )
    .unwrap()
    .json()
    .unwrap();
    let batch = created["id"].as_str().unwrap();
    let poll = || -> Value {
        client()
            .get(format!("{base}/batches/{batch}"))
            .send()
            .unwrap()
            .json()
            .unwrap()
    };
    assert_eq!(poll()["status"], "validating");
    assert_eq!(poll()["status"], "in_progress");
    let done = poll();
    assert_eq!(done["status"], "completed");
    let output = client()
        .get(format!(
            "{base}/files/{}/content",
            done["output_file_id"].as_str().unwrap()
        ))
        .send()
        .unwrap()
        .text()
        .unwrap();
    let replies: Vec<Value> = output
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(replies.len(), 2);
    assert_eq!(replies[1]["custom_id"], "k2");
    assert_eq!(
        replies[1]["response"]["body"]["choices"][0]["message"]["content"],
        "Reply to: two"
    );
    let stats = mock.batch_stats();
    assert_eq!(
        (
            stats.uploads,
            stats.batches,
            stats.lines,
            stats.polls,
            stats.downloads
        ),
        (1, 1, 2, 3, 1)
    );
}

#[test]
fn the_file_server_serves_its_files_and_logs_each_request() {
    let files = HashMap::from([("/a/b.txt".to_owned(), (200, b"hello".to_vec()))]);
    let server = FileServer::start(files).unwrap();
    let c = reqwest::blocking::Client::builder()
        .user_agent("tester agent@example.org")
        .build()
        .unwrap();
    let found = c
        .get(format!("{}/a/b.txt?x=1", server.base_url()))
        .send()
        .unwrap();
    assert_eq!(found.status().as_u16(), 200);
    assert_eq!(found.text().unwrap(), "hello");
    let missing = c
        .get(format!("{}/a/c.txt", server.base_url()))
        .send()
        .unwrap();
    assert_eq!(missing.status().as_u16(), 404);
    let seen = server.seen();
    let paths: Vec<&str> = seen.iter().map(|s| s.path.as_str()).collect();
    assert_eq!(paths, ["/a/b.txt", "/a/c.txt"]);
    assert!(
        seen.iter()
            .all(|s| s.user_agent == "tester agent@example.org")
    );
    assert!(seen[1].at >= seen[0].at);
}
