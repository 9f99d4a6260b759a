//! A stand-in for a web server of fixed files (EDGAR's, in the vocabulary pipeline's tests): each path answers
//! with its status and body, any other path with 404, and every request is recorded (path, `User-Agent`,
//! arrival time) so a test can check what a client asked for and how fast.

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::http;

/// One request the file server received.
#[derive(Debug, Clone)]
pub struct Seen {
    /// The path, without the query.
    pub path: String,
    /// The `User-Agent` header (empty when there is none).
    pub user_agent: String,
    /// When the request's head had arrived.
    pub at: Instant,
}

/// A running file server; stops (closing every connection) when dropped.
pub struct FileServer {
    server: http::Running,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl FileServer {
    /// Serves `files` (path → (status, body)) on a free port of 127.0.0.1.
    pub fn start(files: HashMap<String, (u16, Vec<u8>)>) -> io::Result<FileServer> {
        let files = Arc::new(files);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        let server = http::serve(0, "ifstress-file-server", move |req| {
            let at = Instant::now();
            let path = req.uri().path().to_owned();
            let user_agent = req
                .headers()
                .get(hyper::header::USER_AGENT)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
                .unwrap_or_default();
            log.lock().unwrap_or_else(|e| e.into_inner()).push(Seen {
                path: path.clone(),
                user_agent,
                at,
            });
            let (status, body) = files
                .get(&path)
                .cloned()
                .unwrap_or((404, b"no such file".to_vec()));
            async move {
                Ok::<_, io::Error>(http::response(
                    status,
                    "application/octet-stream",
                    &[],
                    http::whole(body),
                ))
            }
        })?;
        Ok(FileServer { server, seen })
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.server.addr())
    }

    /// The requests received so far, in arrival order.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}
