//! The engine's OpenAI-compatible endpoint on 127.0.0.1: `POST /v1/chat/completions`, `GET /v1/models` and
//! `GET /health`, served by hyper's HTTP/1.1 server (keep-alive, request parsing, chunked bodies) on a
//! single-threaded tokio runtime in a thread of its own. The engine blocks (llama.cpp), so each generation waits
//! on tokio's blocking pool and a streamed one feeds its events to the response body through a channel.
//!
//! A chat request with `stream: true` is answered with server-sent events on a chunked body, as OpenAI-compatible
//! servers do: the text in pieces as it is generated, a last chunk with the finish reason (and the log-probs),
//! a usage chunk when `stream_options.include_usage` is true, then `data: [DONE]`. The headers wait for the first
//! piece, so a request the engine refuses (a prompt longer than the context) still gets its 400.
//! A sampled reply carries the seed it was sampled with as a top-level `seed` (in the whole body, or in the
//! streamed chunk with the finish reason), so a client can record it.
//!
//! A request body longer than [`MAX_BODY_BYTES`] gets a 413 with a JSON error. Dropping the server fails the
//! engine's in-flight and queued requests, closes every connection at once and joins its threads.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::thread::JoinHandle;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http_body::Frame;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::Incoming;
use hyper::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use crate::{ChatRequest, Completion, Engine, EngineConfig, Error};

/// The largest request body the endpoint reads; a longer one gets a 413.
pub const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

/// Events a streamed answer may have ready before the client reads them (the generation waits beyond that).
const STREAM_BUFFER: usize = 16;

struct State {
    engine: Engine,
}

/// The embedded model behind an OpenAI-compatible endpoint on `127.0.0.1:<free port>`.
/// Dropping it closes every connection, aborts in-flight generation and joins all threads.
pub struct LocalServer {
    state: Arc<State>,
    base_url: String,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
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
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .thread_name("local-model-generate")
            .build()?;
        let state = Arc::new(State { engine });
        let (stop, stopped) = oneshot::channel();
        let thread = {
            let state = Arc::clone(&state);
            std::thread::Builder::new()
                .name("local-model-http".to_owned())
                .spawn(move || {
                    runtime.block_on(accept_loop(state, listener, stopped));
                    // Dropping the runtime drops every connection task (their sockets close now), then waits
                    // for the generations on its blocking pool, which the engine's shutdown has failed.
                    drop(runtime);
                })?
        };
        let base_url = format!("http://{addr}/v1");
        tracing::info!(model = %state.engine.name(), "embedded model serving at {base_url}");
        Ok(LocalServer {
            state,
            base_url,
            stop: Some(stop),
            thread: Some(thread),
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
        self.state.engine.begin_shutdown();
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(handle) = self.thread.take() {
            let _ = handle.join();
        }
        tracing::debug!("embedded model server at {} stopped", self.base_url);
    }
}

async fn accept_loop(
    state: Arc<State>,
    listener: std::net::TcpListener,
    mut stopped: oneshot::Receiver<()>,
) {
    let listener = match tokio::net::TcpListener::from_std(listener) {
        Ok(l) => l,
        Err(e) => {
            tracing::error!("embedded model server: cannot listen: {e}");
            return;
        }
    };
    loop {
        tokio::select! {
            _ = &mut stopped => return,
            accepted = listener.accept() => {
                let Ok((sock, _)) = accepted else { continue };
                let _ = sock.set_nodelay(true);
                let state = Arc::clone(&state);
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req| route(Arc::clone(&state), req));
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(sock), service)
                        .await;
                });
            }
        }
    }
}

/// Every response body: a whole JSON document or a stream of events.
type Body = BoxBody<Bytes, Infallible>;

/// A body whose frames come from a channel; it ends when the sender is dropped.
struct ChannelBody {
    rx: mpsc::Receiver<Bytes>,
}

impl http_body::Body for ChannelBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.rx.poll_recv(cx).map(|b| b.map(|b| Ok(Frame::data(b))))
    }
}

fn json_response(status: u16, body: &Value) -> Response<Body> {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    let mut r = Response::new(Full::new(Bytes::from(bytes)).boxed());
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

async fn route(state: Arc<State>, req: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    let path = req.uri().path().trim_end_matches('/').to_owned();
    let method = req.method().clone();
    let response = match (&method, path.as_str()) {
        (&Method::GET, "/health") => json_response(200, &json!({"status": "ok"})),
        (&Method::GET, "/v1/models") => json_response(
            200,
            &json!({"object": "list", "data": [{"id": state.engine.name(), "object": "model", "owned_by": "ifstress"}]}),
        ),
        (&Method::POST, "/v1/chat/completions") => {
            match Limited::new(req.into_body(), MAX_BODY_BYTES)
                .collect()
                .await
            {
                Ok(body) => chat(state, body.to_bytes()).await,
                Err(e) if e.is::<LengthLimitError>() => json_response(
                    413,
                    &error_body(
                        &format!("the request body is longer than {MAX_BODY_BYTES} bytes"),
                        "invalid_request_error",
                    ),
                ),
                Err(e) => json_response(
                    400,
                    &error_body(
                        &format!("reading the request body: {e}"),
                        "invalid_request_error",
                    ),
                ),
            }
        }
        (_, "/health" | "/v1/models" | "/v1/chat/completions") => json_response(
            405,
            &error_body(
                &format!("method {method} not allowed here"),
                "invalid_request_error",
            ),
        ),
        (_, path) => json_response(
            404,
            &error_body(&format!("no route for {path}"), "not_found_error"),
        ),
    };
    Ok(response)
}

/// A chat request: answered whole, or as events when it asks to stream.
async fn chat(state: Arc<State>, body: Bytes) -> Response<Body> {
    let request: ChatRequest = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => {
            return json_response(
                400,
                &error_body(&format!("request body: {e}"), "invalid_request_error"),
            );
        }
    };
    if let Some(usage) = streamed(&body) {
        return stream_chat(state, request, usage).await;
    }
    let st = Arc::clone(&state);
    let answered = tokio::task::spawn_blocking(move || st.engine.generate(&request)).await;
    match answered {
        Ok(Ok(completion)) => {
            json_response(200, &completion_body(state.engine.name(), &completion))
        }
        Ok(Err(e)) => {
            let (status, body) = chat_error(e);
            json_response(status, &body)
        }
        Err(_) => {
            let (status, body) = chat_error(Error::ShuttingDown);
            json_response(status, &body)
        }
    }
}

/// For a chat request that asks to stream: whether it wants the usage chunk.
fn streamed(body: &[u8]) -> Option<bool> {
    let v: Value = serde_json::from_slice(body).ok()?;
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
async fn stream_chat(state: Arc<State>, request: ChatRequest, usage: bool) -> Response<Body> {
    let (start_tx, start_rx) = oneshot::channel();
    let (tx, rx) = mpsc::channel(STREAM_BUFFER);
    tokio::task::spawn_blocking(move || generate_events(&state, &request, usage, start_tx, &tx));
    match start_rx.await {
        Ok(Ok(())) => {
            let mut r = Response::new(ChannelBody { rx }.boxed());
            let headers = r.headers_mut();
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
            headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            r
        }
        Ok(Err((status, body))) => json_response(status, &body),
        Err(_) => {
            let (status, body) = chat_error(Error::ShuttingDown);
            json_response(status, &body)
        }
    }
}

/// Tells a streamed answer's handler whether its stream begins, or the status and body that refuse it.
type Start = oneshot::Sender<Result<(), (u16, Value)>>;

/// Runs one streamed generation on a blocking thread: says on `start` whether the stream begins (or the status
/// and body that refuse it), then sends each event to `tx`. A client that goes away stops the generation (the
/// engine's text receiver is dropped).
fn generate_events(
    state: &State,
    request: &ChatRequest,
    usage: bool,
    start: Start,
    tx: &mpsc::Sender<Bytes>,
) {
    let (text_tx, text_rx) = std::sync::mpsc::channel::<String>();
    let done = match state.engine.generate_streaming(request, text_tx) {
        Ok(rx) => rx,
        Err(e) => {
            let _ = start.send(Err(chat_error(e)));
            return;
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
    let send = |v: &Value| {
        tx.blocking_send(Bytes::from(format!("data: {v}\n\n")))
            .is_ok()
    };
    let mut start = Some(start);
    // Starts the stream (the headers and the role chunk) once; false when the client is gone.
    let begin = |start: &mut Option<Start>| match start.take() {
        None => true,
        Some(s) => {
            s.send(Ok(())).is_ok()
                && send(&chunk(
                    json!([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}]),
                    None,
                ))
        }
    };
    let mut sent = 0usize;
    // The pieces end when the generation does (the worker drops the sender with the job).
    for piece in text_rx.iter() {
        if !begin(&mut start) {
            return;
        }
        sent += piece.len();
        let event = chunk(
            json!([{"index": 0, "delta": {"content": piece}, "finish_reason": null}]),
            None,
        );
        if !send(&event) {
            return;
        }
    }
    let c = match done.recv().unwrap_or(Err(Error::ShuttingDown)) {
        Ok(c) => c,
        Err(e) => {
            let (status, body) = chat_error(e);
            if let Some(s) = start.take() {
                let _ = s.send(Err((status, body)));
            } else {
                let mut err = body["error"].clone();
                err["code"] = Value::from(status);
                let _ = send(&chunk(json!([]), Some(("error", err))))
                    && tx
                        .blocking_send(Bytes::from_static(b"data: [DONE]\n\n"))
                        .is_ok();
            }
            return;
        }
    };
    if !begin(&mut start) {
        return;
    }
    let rest = c.text.get(sent..).unwrap_or("");
    if !rest.is_empty()
        && !send(&chunk(
            json!([{"index": 0, "delta": {"content": rest}, "finish_reason": null}]),
            None,
        ))
    {
        return;
    }
    let mut last = json!([{"index": 0, "delta": {}, "finish_reason": c.finish_reason.as_str()}]);
    let logprobs = logprobs_body(&c);
    if !logprobs.is_null() {
        last[0]["logprobs"] = logprobs;
    }
    if !send(&chunk(last, c.seed.map(|s| ("seed", Value::from(s))))) {
        return;
    }
    if usage && !send(&chunk(json!([]), Some(("usage", usage_body(&c))))) {
        return;
    }
    let _ = tx.blocking_send(Bytes::from_static(b"data: [DONE]\n\n"));
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
    let mut body = json!({
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
    });
    if let Some(seed) = c.seed {
        body["seed"] = Value::from(seed);
    }
    body
}

fn error_body(message: &str, kind: &str) -> Value {
    json!({"error": {"message": message, "type": kind}})
}
