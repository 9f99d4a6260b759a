//! The `/v1/embeddings` embedder against a mock server on 127.0.0.1.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use vocab_pipeline::embed::{Embedder, HttpEmbedder};

#[derive(Debug, Default)]
struct Seen {
    requests: usize,
    auth: Vec<String>,
    batches: Vec<Vec<String>>,
}

/// Answers the first request with `first_status`, then embeds each input `w` as `[len(w), 1, 0]`, listed in
/// reverse order (the client must sort by `index`).
fn mock(first_status: &'static str) -> (String, Arc<Mutex<Seen>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Seen::default()));
    let log = Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let mut len = 0;
            let mut auth = String::new();
            loop {
                let mut h = String::new();
                if reader.read_line(&mut h).unwrap() == 0 || h == "\r\n" {
                    break;
                }
                let lower = h.to_ascii_lowercase();
                if let Some(v) = lower.strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap();
                }
                if lower.starts_with("authorization:") {
                    auth = h["authorization:".len()..].trim().to_owned();
                }
            }
            let mut body = vec![0; len];
            reader.read_exact(&mut body).unwrap();
            let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
            let inputs: Vec<String> = serde_json::from_value(body["input"].clone()).unwrap();
            let n = {
                let mut s = log.lock().unwrap();
                s.requests += 1;
                s.auth.push(auth);
                s.batches.push(inputs.clone());
                s.requests
            };
            let (status, reply) = if n == 1 && first_status != "200 OK" {
                (first_status, "{}".to_owned())
            } else {
                let data: Vec<_> = inputs
                    .iter()
                    .enumerate()
                    .rev()
                    .map(|(i, w)| serde_json::json!({"index": i, "embedding": [w.len() as f32, 1.0, 0.0]}))
                    .collect();
                (
                    "200 OK",
                    serde_json::json!({"data": data, "model": body["model"]}).to_string(),
                )
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{reply}",
                reply.len()
            );
        }
    });
    (base, seen)
}

fn terms(ws: &[&str]) -> Vec<String> {
    ws.iter().map(|w| (*w).to_owned()).collect()
}

#[test]
fn vectors_come_back_in_order_normalized_after_a_retry() {
    let (base, seen) = mock("429 Too Many Requests");
    let mut e = HttpEmbedder::new(
        &base,
        "emb-small",
        Some("sk-test-secret".into()),
        2,
        Duration::from_secs(5),
    )
    .unwrap();
    let v = e.embed(&terms(&["tax", "lease", "revenue"])).unwrap();
    assert_eq!(v.len(), 3);
    for (w, vec) in ["tax", "lease", "revenue"].iter().zip(&v) {
        let n = w.len() as f32;
        let norm = (n * n + 1.0).sqrt();
        assert!(
            (vec[0] - n / norm).abs() < 1e-6 && (vec[1] - 1.0 / norm).abs() < 1e-6,
            "{w}: {vec:?}"
        );
    }
    let s = seen.lock().unwrap();
    // One refused request, then two batches of at most two terms.
    assert_eq!(s.requests, 3);
    assert_eq!(
        s.batches[1..],
        [terms(&["tax", "lease"]), terms(&["revenue"])]
    );
    assert!(s.auth.iter().all(|a| a == "Bearer sk-test-secret"));
    assert!(!e.describe().contains("sk-test"));
}

#[test]
fn a_client_error_is_reported_without_the_key() {
    let (base, _) = mock("400 Bad Request");
    let mut e = HttpEmbedder::new(
        &base,
        "emb-small",
        Some("sk-test-secret".into()),
        8,
        Duration::from_secs(5),
    )
    .unwrap();
    let err = e.embed(&terms(&["tax"])).unwrap_err().to_string();
    assert!(
        err.contains("/v1/embeddings") && err.contains("400"),
        "{err}"
    );
    assert!(!err.contains("sk-test"), "{err}");
}
