//! The HTTP layer the mock servers share: hyper's HTTP/1.1 server (keep-alive, chunked bodies, request parsing)
//! on a single-threaded tokio runtime in a thread of its own, the response bodies (whole, or fed through a
//! channel by a task that paces them), and reading a request body within a size limit.
//!
//! Stopping a server drops its runtime, and with it every connection task: each open connection closes at once,
//! as when a server process dies.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::Frame;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::sync::{mpsc, oneshot};

/// Every response body: a whole one, or frames from a channel. An error aborts the connection mid-body.
pub(crate) type Body = BoxBody<Bytes, io::Error>;

/// A whole body.
pub(crate) fn whole(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into())
        .map_err(|never: Infallible| match never {})
        .boxed()
}

/// A response with a whole body of `content_type` and extra headers.
pub(crate) fn response(
    status: u16,
    content_type: &str,
    headers: &[(&str, &str)],
    body: Body,
) -> Response<Body> {
    let mut r = Response::new(body);
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if let Ok(v) = HeaderValue::from_str(content_type) {
        r.headers_mut().insert(CONTENT_TYPE, v);
    }
    for (k, v) in headers {
        if let (Ok(k), Ok(v)) = (
            hyper::header::HeaderName::from_bytes(k.as_bytes()),
            HeaderValue::from_str(v),
        ) {
            r.headers_mut().append(k, v);
        }
    }
    r
}

/// A JSON response.
pub(crate) fn json(
    status: u16,
    headers: &[(&str, &str)],
    body: impl Into<Bytes>,
) -> Response<Body> {
    response(status, "application/json", headers, whole(body))
}

/// A body whose frames come from a channel; an `Err` item aborts the connection, the senders' drop ends the
/// body.
struct ChannelBody {
    rx: mpsc::Receiver<io::Result<Bytes>>,
}

impl http_body::Body for ChannelBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        self.rx
            .poll_recv(cx)
            .map(|item| item.map(|r| r.map(Frame::data)))
    }
}

/// A body fed by the returned sender (a few frames of buffer, so a slow reader holds the writer back).
pub(crate) fn channel() -> (mpsc::Sender<io::Result<Bytes>>, Body) {
    let (tx, rx) = mpsc::channel(8);
    (tx, ChannelBody { rx }.boxed())
}

/// Why a request body could not be read.
pub(crate) enum BodyError {
    /// Longer than the limit: answered with 413.
    TooLarge(usize),
    /// The connection broke while reading.
    Broken(io::Error),
}

/// The whole body of a request, at most `limit` bytes.
pub(crate) async fn read_body(body: Incoming, limit: usize) -> Result<Bytes, BodyError> {
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<LengthLimitError>() => Err(BodyError::TooLarge(limit)),
        Err(e) => Err(BodyError::Broken(io::Error::other(e))),
    }
}

/// A server running on its own thread; [`Running::stop`] (or dropping it) closes every connection.
pub(crate) struct Running {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Running {
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting, closes every connection and waits for the server's thread.
    pub(crate) fn stop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Serves `handler` on 127.0.0.1:`port` (0 picks a free port) in a thread named `name`. A handler's `Err` closes
/// the connection without a response (a reset).
pub(crate) fn serve<H, F>(port: u16, name: &str, handler: H) -> io::Result<Running>
where
    H: Fn(Request<Incoming>) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = io::Result<Response<Body>>> + Send + 'static,
{
    let std_listener = std::net::TcpListener::bind(("127.0.0.1", port))?;
    std_listener.set_nonblocking(true)?;
    let addr = std_listener.local_addr()?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (stop_tx, mut stop_rx) = oneshot::channel::<()>();
    let thread = std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            rt.block_on(async move {
                let listener = match tokio::net::TcpListener::from_std(std_listener) {
                    Ok(l) => l,
                    Err(e) => {
                        tracing::error!(error = %e, "mock server: cannot listen");
                        return;
                    }
                };
                loop {
                    tokio::select! {
                        _ = &mut stop_rx => break,
                        accepted = listener.accept() => {
                            let Ok((sock, _)) = accepted else { continue };
                            let _ = sock.set_nodelay(true);
                            let handler = handler.clone();
                            tokio::spawn(async move {
                                let service = hyper::service::service_fn(handler);
                                let _ = hyper::server::conn::http1::Builder::new()
                                    .serve_connection(TokioIo::new(sock), service)
                                    .await;
                            });
                        }
                    }
                }
            });
            // Dropping the runtime drops every connection task: their sockets close now.
            drop(rt);
        })?;
    Ok(Running {
        addr,
        stop: Some(stop_tx),
        thread: Some(thread),
    })
}
