//! A keep-alive connection the server has closed: llama-server closes its connection after each streamed answer
//! without a `Connection: close`, and a client that sends the next request on it at once finds it closed before
//! any answer. That is no dead server: the request is sent again at once on a new connection, the endpoint is not
//! ejected, and the resend does not count against `max-attempts`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use schema::{ErrorClass, Outcome};

use crate::support::{model, opts, prompts, run};

/// A server on 127.0.0.1 that answers one request per connection and keeps the connection open as if for more, then
/// closes it, unanswered, when the next request arrives on it.
struct OneAnswerPerConnection {
    port: u16,
    answered: Arc<AtomicUsize>,
    closed: Arc<AtomicUsize>,
}

impl OneAnswerPerConnection {
    fn start() -> OneAnswerPerConnection {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let answered = Arc::new(AtomicUsize::new(0));
        let closed = Arc::new(AtomicUsize::new(0));
        let (a, c) = (Arc::clone(&answered), Arc::clone(&closed));
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { return };
                let (a, c) = (Arc::clone(&a), Arc::clone(&c));
                std::thread::spawn(move || serve(conn, &a, &c));
            }
        });
        OneAnswerPerConnection {
            port,
            answered,
            closed,
        }
    }

    fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }
}

/// Reads one request's head and body: its method and whether it asked to close; `None` at the end of the
/// connection (a TCP probe sends nothing).
fn read_request(r: &mut BufReader<TcpStream>) -> Option<(String, bool)> {
    let mut head = Vec::new();
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if line == "\r\n" {
            break;
        }
        head.push(line.to_ascii_lowercase());
    }
    let method = head.first()?.split(' ').next()?.to_ascii_uppercase();
    let length: usize = head
        .iter()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map_or(0, |v| v.trim().parse().unwrap());
    let close = head.iter().any(|l| l.starts_with("connection: close"));
    let mut body = vec![0; length];
    r.read_exact(&mut body).ok()?;
    Some((method, close))
}

fn serve(conn: TcpStream, answered: &AtomicUsize, closed: &AtomicUsize) {
    let mut w = conn.try_clone().unwrap();
    let mut r = BufReader::new(conn);
    let mut served_one = false;
    while let Some((method, close)) = read_request(&mut r) {
        if method == "GET" {
            let body = r#"{"object":"list","data":[{"id":"mock-model","object":"model"}]}"#;
            let _ = write!(
                w,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
        } else if served_one {
            closed.fetch_add(1, Ordering::SeqCst);
            return;
        } else {
            let chunk = |v: &str| format!("data: {v}\n\n");
            let body = [
                chunk(
                    r#"{"id":"c","object":"chat.completion.chunk","model":"mock-model","choices":[{"index":0,"delta":{"role":"assistant","content":"ok"},"finish_reason":null}]}"#,
                ),
                chunk(
                    r#"{"id":"c","object":"chat.completion.chunk","model":"mock-model","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
                ),
                chunk(
                    r#"{"id":"c","object":"chat.completion.chunk","model":"mock-model","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}"#,
                ),
                chunk("[DONE]"),
            ]
            .concat();
            served_one = true;
            answered.fetch_add(1, Ordering::SeqCst);
            let _ = write!(
                w,
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
        }
        let _ = w.flush();
        if close {
            return;
        }
    }
}

#[test]
fn a_keep_alive_connection_closed_unanswered_is_sent_again_at_once_and_ejects_nothing() {
    let server = OneAnswerPerConnection::start();
    let dir = tempfile::tempdir().unwrap();
    let mut m = model(&server.base_url());
    m.max_concurrency = 1;
    // The resend on a new connection is not one of the attempts `max-attempts` allows.
    m.max_attempts = 1;
    let p = prompts(8);
    let (s, recs) = run(&m, &p, &dir.path().join("out.jsonl"), &opts(dir.path()));
    assert_eq!(recs.len(), 8);
    assert!(
        recs.iter()
            .all(|r| r.outcome == Outcome::Ok && r.content.as_deref() == Some("ok")),
        "{recs:?}"
    );
    // The first request opened a connection; most later ones went out on the connection their predecessor left
    // open (unless the client had not yet taken it back into its pool), found it closed, and were sent again at once
    // on a new one.
    let resent: Vec<_> = recs.iter().filter(|r| r.attempts.len() == 2).collect();
    assert!(!resent.is_empty(), "{recs:?}");
    assert!(recs.iter().all(|r| r.attempts.len() <= 2), "{recs:?}");
    for r in &resent {
        let first = &r.attempts[0];
        assert_eq!(first.error_class, Some(ErrorClass::Connection), "{r:?}");
        assert_eq!((first.status, first.delay_s), (None, 0.0), "{r:?}");
        assert!(!first.abandoned, "{r:?}");
        assert_eq!(r.attempts[1].status, Some(200), "{r:?}");
    }
    assert_eq!((s.sent, s.failed), (8, 0), "{s:?}");
    assert_eq!(s.requests, 8 + resent.len() as u64, "{s:?}");
    assert_eq!(s.ejections, 0, "the server was never taken for dead: {s:?}");
    assert_eq!(server.answered.load(Ordering::SeqCst), 8);
    assert_eq!(server.closed.load(Ordering::SeqCst), resent.len());
}

#[test]
fn a_connection_closed_unanswered_twice_fails_the_request_under_one_attempt() {
    // A server that closes every POST unanswered: the one free resend is spent, then `max-attempts` ends it.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let posts = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&posts);
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            let seen = Arc::clone(&seen);
            std::thread::spawn(move || {
                let mut w = conn.try_clone().unwrap();
                let mut r = BufReader::new(conn);
                while let Some((method, close)) = read_request(&mut r) {
                    if method != "GET" {
                        seen.fetch_add(1, Ordering::SeqCst);
                        return;
                    }
                    let _ = write!(w, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{{}}");
                    if close {
                        return;
                    }
                }
            });
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let mut m = model(&format!("http://127.0.0.1:{port}/v1"));
    m.max_attempts = 1;
    let p = prompts(1);
    let (s, recs) = run(&m, &p, &dir.path().join("out.jsonl"), &opts(dir.path()));
    assert_eq!(recs.len(), 1);
    let r = &recs[0];
    assert_eq!(r.outcome, Outcome::Failed, "{r:?}");
    assert_eq!(r.attempts.len(), 2, "{r:?}");
    assert!(
        r.attempts
            .iter()
            .all(|a| a.error_class == Some(ErrorClass::Connection)),
        "{r:?}"
    );
    assert_eq!((s.sent, s.failed, s.requests), (1, 1, 2), "{s:?}");
    assert_eq!(posts.load(Ordering::SeqCst), 2);
}
