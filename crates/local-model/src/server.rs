//! A minimal HTTP/1.1 server (std::net, one thread per connection, keep-alive) exposing the engine as
//! `POST /v1/chat/completions`, `GET /v1/models` and `GET /health` on 127.0.0.1.
//!
//! A chat request with `stream: true` is answered with server-sent events on a chunked body, as OpenAI-compatible
//! servers do: the text in pieces as it is generated, a last chunk with the finish reason (and the log-probs),
//! a usage chunk when `stream_options.include_usage` is true, then `data: [DONE]`. The headers wait for the first
//! piece, so a request the engine refuses (a prompt longer than the context) still gets its 400.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::{ChatRequest, Completion, Engine, EngineConfig, Error};

const MAX_HEADER_BYTES: usize = 64 * 1024;
const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

struct State {
    engine: Engine,
    stopping: AtomicBool,
    next_id: AtomicU64,
    connections: Mutex<HashMap<u64, TcpStream>>,
    handlers: Mutex<Vec<JoinHandle<()>>>,
}

/// The embedded model behind an OpenAI-compatible endpoint on `127.0.0.1:<free port>`.
/// Dropping it closes every connection, aborts in-flight generation and joins all threads.
pub struct LocalServer {
    state: Arc<State>,
    addr: SocketAddr,
    base_url: String,
    acceptor: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for LocalServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalServer")
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

impl LocalServer {
    /// Load the model once and start serving on a free port of 127.0.0.1.
    pub fn start(cfg: &EngineConfig) -> Result<LocalServer, Error> {
        let engine = Engine::load(cfg)?;
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        let addr = listener.local_addr()?;
        let state = Arc::new(State {
            engine,
            stopping: AtomicBool::new(false),
            next_id: AtomicU64::new(0),
            connections: Mutex::new(HashMap::new()),
            handlers: Mutex::new(Vec::new()),
        });
        let acceptor = {
            let state = Arc::clone(&state);
            std::thread::Builder::new()
                .name("local-model-http".to_owned())
                .spawn(move || accept_loop(&state, &listener))?
        };
        let base_url = format!("http://{addr}/v1");
        tracing::info!(model = %state.engine.name(), "embedded model serving at {base_url}");
        Ok(LocalServer {
            state,
            addr,
            base_url,
            acceptor: Some(acceptor),
        })
    }

    /// `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The engine behind the endpoint, for in-process calls that skip HTTP.
    pub fn engine(&self) -> &Engine {
        &self.state.engine
    }

    /// The name `/v1/models` reports (the GGUF file name without extension).
    pub fn model_name(&self) -> &str {
        self.state.engine.name()
    }
}

impl Drop for LocalServer {
    fn drop(&mut self) {
        self.state.stopping.store(true, Ordering::SeqCst);
        self.state.engine.begin_shutdown();
        // Wake the blocking accept() so the acceptor sees the flag.
        let _ = TcpStream::connect(self.addr);
        if let Some(handle) = self.acceptor.take() {
            let _ = handle.join();
        }
        if let Ok(conns) = self.state.connections.lock() {
            for stream in conns.values() {
                let _ = stream.shutdown(Shutdown::Both);
            }
        }
        let handlers = self
            .state
            .handlers
            .lock()
            .map(|mut h| std::mem::take(&mut *h))
            .unwrap_or_default();
        for handle in handlers {
            let _ = handle.join();
        }
        tracing::debug!("embedded model server at {} stopped", self.base_url);
    }
}

fn accept_loop(state: &Arc<State>, listener: &TcpListener) {
    for stream in listener.incoming() {
        if state.stopping.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = stream else { continue };
        let id = state.next_id.fetch_add(1, Ordering::Relaxed);
        let Ok(clone) = stream.try_clone() else {
            continue;
        };
        if let Ok(mut conns) = state.connections.lock() {
            conns.insert(id, clone);
        }
        let st = Arc::clone(state);
        let spawned = std::thread::Builder::new()
            .name(format!("local-model-conn-{id}"))
            .spawn(move || {
                serve_connection(&st, stream);
                if let Ok(mut conns) = st.connections.lock() {
                    conns.remove(&id);
                }
            });
        if let (Ok(handle), Ok(mut handlers)) = (spawned, state.handlers.lock()) {
            handlers.retain(|h| !h.is_finished());
            handlers.push(handle);
        }
    }
}

struct Request {
    method: String,
    path: String,
    body: Vec<u8>,
    close: bool,
}

enum ReadOutcome {
    Request(Request),
    Closed,
    Malformed(String),
}

fn read_request(reader: &mut BufReader<TcpStream>) -> ReadOutcome {
    let mut head_bytes = 0usize;
    let mut line = String::new();
    // Skip blank lines between requests (tolerated by RFC 9112).
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return ReadOutcome::Closed,
            Ok(n) => head_bytes += n,
        }
        if !line.trim().is_empty() {
            break;
        }
    }
    let mut parts = line.split_whitespace();
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return ReadOutcome::Malformed(format!("bad request line {:?}", line.trim_end()));
    };
    let method = method.to_owned();
    let path = target.split('?').next().unwrap_or("").to_owned();
    let mut close = version == "HTTP/1.0";
    let mut content_length = 0usize;
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return ReadOutcome::Closed,
            Ok(n) => head_bytes += n,
        }
        if head_bytes > MAX_HEADER_BYTES {
            return ReadOutcome::Malformed("request head too large".to_owned());
        }
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        let Some((name, value)) = l.split_once(':') else {
            return ReadOutcome::Malformed(format!("bad header line {l:?}"));
        };
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => match value.parse() {
                Ok(n) if n <= MAX_BODY_BYTES => content_length = n,
                _ => {
                    return ReadOutcome::Malformed(format!(
                        "bad or too large Content-Length {value:?}"
                    ));
                }
            },
            "transfer-encoding" => {
                return ReadOutcome::Malformed(
                    "chunked request bodies are not supported".to_owned(),
                );
            }
            "connection" => {
                let v = value.to_ascii_lowercase();
                if v.contains("close") {
                    close = true;
                } else if v.contains("keep-alive") {
                    close = false;
                }
            }
            _ => {}
        }
    }
    let mut body = vec![0; content_length];
    if reader.read_exact(&mut body).is_err() {
        return ReadOutcome::Closed;
    }
    ReadOutcome::Request(Request {
        method,
        path,
        body,
        close,
    })
}

fn serve_connection(state: &State, stream: TcpStream) {
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    loop {
        if state.stopping.load(Ordering::SeqCst) {
            return;
        }
        let request = match read_request(&mut reader) {
            ReadOutcome::Request(r) => r,
            ReadOutcome::Closed => return,
            ReadOutcome::Malformed(msg) => {
                let _ = write_response(
                    &mut writer,
                    400,
                    &error_body(&msg, "invalid_request_error"),
                    true,
                );
                return;
            }
        };
        if let Some(usage) = streamed_chat(&request) {
            if stream_chat(state, &request.body, usage, &mut writer, request.close).is_err()
                || request.close
            {
                return;
            }
            continue;
        }
        let (status, body) = route(state, &request);
        if write_response(&mut writer, status, &body, request.close).is_err() || request.close {
            return;
        }
    }
}

fn route(state: &State, request: &Request) -> (u16, Value) {
    match (request.method.as_str(), request.path.trim_end_matches('/')) {
        ("GET", "/health") => (200, json!({"status": "ok"})),
        ("GET", "/v1/models") => (
            200,
            json!({"object": "list", "data": [{"id": state.engine.name(), "object": "model", "owned_by": "ifstress"}]}),
        ),
        ("POST", "/v1/chat/completions") => chat(state, &request.body),
        (_, "/health" | "/v1/models" | "/v1/chat/completions") => (
            405,
            error_body(
                &format!("method {} not allowed here", request.method),
                "invalid_request_error",
            ),
        ),
        (_, path) => (
            404,
            error_body(&format!("no route for {path}"), "not_found_error"),
        ),
    }
}

fn chat(state: &State, body: &[u8]) -> (u16, Value) {
    let request: ChatRequest = match serde_json::from_slice(body) {
        Ok(r) => r,
        Err(e) => {
            return (
                400,
                error_body(&format!("request body: {e}"), "invalid_request_error"),
            );
        }
    };
    match state.engine.generate(&request) {
        Ok(completion) => (200, completion_body(state.engine.name(), &completion)),
        Err(e) => chat_error(e),
    }
}

/// For a chat request that asks to stream: whether it wants the usage chunk.
fn streamed_chat(request: &Request) -> Option<bool> {
    if request.method != "POST" || request.path.trim_end_matches('/') != "/v1/chat/completions" {
        return None;
    }
    let v: Value = serde_json::from_slice(&request.body).ok()?;
    if v.get("stream").and_then(Value::as_bool) != Some(true) {
        return None;
    }
    Some(
        v.pointer("/stream_options/include_usage")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    )
}

/// Answers a streaming chat request: events as the text comes, or an error status when the engine refuses the
/// request before any text.
fn stream_chat(
    state: &State,
    body: &[u8],
    usage: bool,
    w: &mut TcpStream,
    close: bool,
) -> std::io::Result<()> {
    let request: ChatRequest = match serde_json::from_slice(body) {
        Ok(r) => r,
        Err(e) => {
            let msg = format!("request body: {e}");
            return write_response(w, 400, &error_body(&msg, "invalid_request_error"), close);
        }
    };
    let (text_tx, text_rx) = std::sync::mpsc::channel::<String>();
    let done = match state.engine.generate_streaming(&request, text_tx) {
        Ok(rx) => rx,
        Err(e) => {
            let (status, body) = chat_error(e);
            return write_response(w, status, &body, close);
        }
    };
    let (id, created) = completion_id();
    let model = state.engine.name();
    let chunk = |choices: Value, extra: Option<(&str, Value)>| {
        let mut v = json!({"id": id, "object": "chat.completion.chunk", "created": created, "model": model, "choices": choices});
        if let Some((k, x)) = extra {
            v[k] = x;
        }
        v
    };
    let mut started = false;
    let mut sent = 0usize;
    // The pieces end when the generation does (the worker drops the sender with the job).
    for piece in text_rx.iter() {
        if !started {
            start_events(w, close)?;
            write_event(
                w,
                &chunk(
                    json!([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}]),
                    None,
                ),
            )?;
            started = true;
        }
        sent += piece.len();
        write_event(
            w,
            &chunk(
                json!([{"index": 0, "delta": {"content": piece}, "finish_reason": null}]),
                None,
            ),
        )?;
    }
    let result = done.recv().unwrap_or(Err(Error::ShuttingDown));
    let c = match result {
        Ok(c) => c,
        Err(e) if !started => {
            let (status, body) = chat_error(e);
            return write_response(w, status, &body, close);
        }
        Err(e) => {
            let (status, body) = chat_error(e);
            let mut err = body["error"].clone();
            err["code"] = Value::from(status);
            write_event(w, &chunk(json!([]), Some(("error", err))))?;
            return end_events(w);
        }
    };
    if !started {
        start_events(w, close)?;
        write_event(
            w,
            &chunk(
                json!([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}]),
                None,
            ),
        )?;
    }
    let rest = c.text.get(sent..).unwrap_or("");
    if !rest.is_empty() {
        write_event(
            w,
            &chunk(
                json!([{"index": 0, "delta": {"content": rest}, "finish_reason": null}]),
                None,
            ),
        )?;
    }
    let mut last = json!([{"index": 0, "delta": {}, "finish_reason": c.finish_reason.as_str()}]);
    let logprobs = logprobs_body(&c);
    if !logprobs.is_null() {
        last[0]["logprobs"] = logprobs;
    }
    write_event(w, &chunk(last, None))?;
    if usage {
        write_event(w, &chunk(json!([]), Some(("usage", usage_body(&c)))))?;
    }
    end_events(w)
}

fn start_events(w: &mut TcpStream, close: bool) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\nConnection: {}\r\n\r\n",
        if close { "close" } else { "keep-alive" }
    );
    w.write_all(head.as_bytes())?;
    w.flush()
}

/// One `data:` event as one chunk of the body.
fn write_event(w: &mut TcpStream, v: &Value) -> std::io::Result<()> {
    write_chunk(w, format!("data: {v}\n\n").as_bytes())
}

fn write_chunk(w: &mut TcpStream, data: &[u8]) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(data.len() + 12);
    buf.extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes());
    buf.extend_from_slice(data);
    buf.extend_from_slice(b"\r\n");
    w.write_all(&buf)?;
    w.flush()
}

fn end_events(w: &mut TcpStream) -> std::io::Result<()> {
    write_chunk(w, b"data: [DONE]\n\n")?;
    w.write_all(b"0\r\n\r\n")?;
    w.flush()
}

/// The status and error body for a failed generation.
fn chat_error(e: Error) -> (u16, Value) {
    match e {
        Error::BadRequest(msg) => (400, error_body(&msg, "invalid_request_error")),
        e @ Error::ShuttingDown => (503, error_body(&e.to_string(), "server_error")),
        e => {
            tracing::warn!("embedded model request failed: {e}");
            (500, error_body(&e.to_string(), "server_error"))
        }
    }
}

/// A fresh completion id and its creation time.
fn completion_id() -> (String, u64) {
    let created = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    (format!("chatcmpl-local-{created}-{n}"), created)
}

fn usage_body(c: &Completion) -> Value {
    json!({
        "prompt_tokens": c.prompt_tokens,
        "completion_tokens": c.completion_tokens,
        "total_tokens": c.prompt_tokens + c.completion_tokens,
    })
}

fn logprobs_body(c: &Completion) -> Value {
    c.logprobs.as_ref().map_or(Value::Null, |lp| {
        json!({"content": lp.iter().map(|t| json!({
            "token": t.token,
            "logprob": t.logprob,
            "bytes": t.bytes,
            "top_logprobs": [],
        })).collect::<Vec<_>>()})
    })
}

fn completion_body(model: &str, c: &Completion) -> Value {
    let (id, created) = completion_id();
    let logprobs = logprobs_body(c);
    json!({
        "id": id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": c.text},
            "logprobs": logprobs,
            "finish_reason": c.finish_reason.as_str(),
        }],
        "usage": usage_body(c),
        "timings": {"prompt_seconds": c.prompt_seconds, "decode_seconds": c.decode_seconds},
    })
}

fn error_body(message: &str, kind: &str) -> Value {
    json!({"error": {"message": message, "type": kind}})
}

fn write_response(
    w: &mut TcpStream,
    status: u16,
    body: &Value,
    close: bool,
) -> std::io::Result<()> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        503 => "Service Unavailable",
        _ => "Internal Server Error",
    };
    let payload = serde_json::to_vec(body).unwrap_or_default();
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: {}\r\n\r\n",
        payload.len(),
        if close { "close" } else { "keep-alive" }
    );
    w.write_all(head.as_bytes())?;
    w.write_all(&payload)?;
    w.flush()
}
