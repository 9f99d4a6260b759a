//! The OpenAI Batch API, mocked: `POST /v1/files` (a multipart form, read with `multer`, whose `purpose` is
//! `batch`), `POST /v1/batches`,
//! `GET /v1/batches/{id}` and `GET /v1/files/{id}/content`.
//!
//! A batch reads `validating` on its first poll, `in_progress` on its second, and ends on the third as
//! `MockConfig::batch_end` says. Its lines are answered as the chat endpoint would answer them (emulated models and
//! scripted replies included), except for two markers in a request's last message, which fail the line the first
//! time a batch holds it and let it through afterwards: `[batch-error]` puts it in the error file
//! (`server_error`), `[batch-500]` gives it status 500 in the output file. A batch that ends `failed` has no files;
//! `expired` answers the first half of its lines and puts the rest in the error file (`batch_expired`);
//! `cancelled` answers the first half and says nothing about the rest.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

use crate::Shared;
use crate::answer::{completion, scripted};
use crate::emulate;
use crate::serve::Request;

/// How the mock's batches end.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum BatchEnd {
    #[default]
    Completed,
    Failed,
    Expired,
    Cancelled,
}

/// What the batch endpoints did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BatchStats {
    /// Files uploaded.
    pub uploads: u64,
    /// Batches created.
    pub batches: u64,
    /// Request lines in the created batches.
    pub lines: u64,
    /// Status reads.
    pub polls: u64,
    /// File downloads.
    pub downloads: u64,
}

struct MockBatch {
    input_file_id: String,
    polls: u32,
    /// Set once the batch has ended: (status, output file, error file).
    ended: Option<(&'static str, Option<String>, Option<String>)>,
    lines: usize,
}

/// The uploaded files, the batches and the counters.
#[derive(Default)]
pub(crate) struct BatchState {
    files: Mutex<HashMap<String, Vec<u8>>>,
    batches: Mutex<HashMap<String, MockBatch>>,
    /// Requests (by `custom_id`) that already failed once through a marker.
    failed_once: Mutex<HashSet<String>>,
    next_id: AtomicU64,
    uploads: AtomicU64,
    created: AtomicU64,
    lines: AtomicU64,
    polls: AtomicU64,
    downloads: AtomicU64,
}

impl BatchState {
    pub(crate) fn stats(&self) -> BatchStats {
        BatchStats {
            uploads: self.uploads.load(Ordering::Relaxed),
            batches: self.created.load(Ordering::Relaxed),
            lines: self.lines.load(Ordering::Relaxed),
            polls: self.polls.load(Ordering::Relaxed),
            downloads: self.downloads.load(Ordering::Relaxed),
        }
    }

    fn id(&self, prefix: &str) -> String {
        format!(
            "{prefix}-{}",
            self.next_id.fetch_add(1, Ordering::Relaxed) + 1
        )
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn error(status: u16, message: &str) -> (u16, Vec<u8>) {
    (
        status,
        json!({"error": {"message": message}})
            .to_string()
            .into_bytes(),
    )
}

/// Whether a path is one of the Batch API's (`/v1/files…`, `/v1/batches…`).
pub(crate) fn handles(path: &str) -> bool {
    let path = path.strip_prefix("/v1").unwrap_or(path);
    path.starts_with("/files") || path.starts_with("/batches")
}

/// The answer to a Batch API request: status and body.
pub(crate) async fn route(req: &Request, sh: &Shared) -> (u16, Vec<u8>) {
    let path = req.path.strip_prefix("/v1").unwrap_or(&req.path);
    let st = &sh.batches;
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    match (req.method.as_str(), parts.as_slice()) {
        ("POST", ["files"]) => {
            let bytes = match multipart_file(req).await {
                Ok(bytes) => bytes,
                Err(why) => return error(400, &why),
            };
            let id = st.id("file");
            let size = bytes.len();
            lock(&st.files).insert(id.clone(), bytes);
            st.uploads.fetch_add(1, Ordering::Relaxed);
            (
                200,
                json!({"id": id, "object": "file", "bytes": size, "purpose": "batch"})
                    .to_string()
                    .into_bytes(),
            )
        }
        ("POST", ["batches"]) => {
            let v: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
            let file = v.get("input_file_id").and_then(Value::as_str).unwrap_or("");
            if v.get("endpoint").and_then(Value::as_str) != Some("/v1/chat/completions") {
                return error(400, "endpoint must be /v1/chat/completions");
            }
            let Some(lines) = lock(&st.files)
                .get(file)
                .map(|b| b.split(|&c| c == b'\n').filter(|l| !l.is_empty()).count())
            else {
                return error(404, "no such file");
            };
            let id = st.id("batch");
            lock(&st.batches).insert(
                id.clone(),
                MockBatch {
                    input_file_id: file.to_owned(),
                    polls: 0,
                    ended: None,
                    lines,
                },
            );
            st.created.fetch_add(1, Ordering::Relaxed);
            st.lines.fetch_add(lines as u64, Ordering::Relaxed);
            (
                200,
                json!({"id": id, "object": "batch", "status": "validating", "input_file_id": file})
                    .to_string()
                    .into_bytes(),
            )
        }
        ("GET", ["batches", id]) => {
            st.polls.fetch_add(1, Ordering::Relaxed);
            let mut batches = lock(&st.batches);
            let Some(b) = batches.get_mut(*id) else {
                return error(404, "no such batch");
            };
            b.polls += 1;
            if b.polls >= 3 && b.ended.is_none() {
                b.ended = Some(finish(b, sh));
            }
            let mut v = json!({"id": id, "object": "batch", "input_file_id": b.input_file_id,
                "request_counts": {"total": b.lines}});
            match &b.ended {
                None => {
                    v["status"] = Value::from(if b.polls == 1 {
                        "validating"
                    } else {
                        "in_progress"
                    });
                }
                Some((status, output, errors)) => {
                    v["status"] = Value::from(*status);
                    v["output_file_id"] = json!(output);
                    v["error_file_id"] = json!(errors);
                    if *status == "failed" {
                        v["errors"] = json!({"data": [{"code": "invalid_request", "message": "the mock failed this batch", "line": 1}]});
                    }
                }
            }
            (200, v.to_string().into_bytes())
        }
        ("GET", ["files", id, "content"]) => {
            st.downloads.fetch_add(1, Ordering::Relaxed);
            match lock(&st.files).get(*id) {
                Some(b) => (200, b.clone()),
                None => error(404, "no such file"),
            }
        }
        _ => error(404, "no such route"),
    }
}

/// Ends a batch: answers its lines and stores the output and error files.
fn finish(b: &MockBatch, sh: &Shared) -> (&'static str, Option<String>, Option<String>) {
    let st = &sh.batches;
    let end = sh.cfg.batch_end;
    if end == BatchEnd::Failed {
        return ("failed", None, None);
    }
    let input = lock(&st.files)
        .get(&b.input_file_id)
        .cloned()
        .unwrap_or_default();
    let (mut output, mut errors) = (String::new(), String::new());
    let lines: Vec<&[u8]> = input
        .split(|&c| c == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    for (i, line) in lines.iter().enumerate() {
        let v: Value = serde_json::from_slice(line).unwrap_or(Value::Null);
        let custom_id = v.get("custom_id").cloned().unwrap_or(Value::Null);
        let body = v.get("body").cloned().unwrap_or(Value::Null);
        let late = i >= lines.len().div_ceil(2);
        match end {
            BatchEnd::Expired if late => {
                errors.push_str(&error_line(
                    &custom_id,
                    "batch_expired",
                    "the batch expired before this request ran",
                ));
                continue;
            }
            BatchEnd::Cancelled if late => continue,
            _ => {}
        }
        let last = body
            .get("messages")
            .and_then(Value::as_array)
            .and_then(|m| m.last())
            .and_then(|m| m.get("content"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let first_time = |marker: &str| {
            last.contains(marker)
                && lock(&st.failed_once).insert(custom_id.as_str().unwrap_or("").to_owned())
        };
        if first_time("[batch-error]") {
            errors.push_str(&error_line(
                &custom_id,
                "server_error",
                "the mock failed this line",
            ));
            continue;
        }
        let (status, reply) = if first_time("[batch-500]") {
            (
                500,
                json!({"error": {"message": "the mock's upstream failed"}}).to_string(),
            )
        } else {
            answer(&body, sh)
        };
        let reply: Value = serde_json::from_str(&reply).unwrap_or(Value::Null);
        let out = json!({"id": format!("batch_req_{i}"), "custom_id": custom_id,
            "response": {"status_code": status, "request_id": format!("req_{i}"), "body": reply}, "error": null});
        output.push_str(&out.to_string());
        output.push('\n');
    }
    let store = |text: String| {
        (!text.is_empty()).then(|| {
            let id = st.id("file");
            lock(&st.files).insert(id.clone(), text.into_bytes());
            id
        })
    };
    let status = match end {
        BatchEnd::Expired => "expired",
        BatchEnd::Cancelled => "cancelled",
        _ => "completed",
    };
    (status, store(output), store(errors))
}

fn error_line(custom_id: &Value, code: &str, message: &str) -> String {
    let mut s = json!({"id": "batch_req_err", "custom_id": custom_id, "response": null,
        "error": {"code": code, "message": message}})
    .to_string();
    s.push('\n');
    s
}

/// A request line's answer: status and body, as the chat endpoint would give them.
fn answer(body: &Value, sh: &Shared) -> (u16, String) {
    let bytes = body.to_string().into_bytes();
    match emulate::emulate(&bytes, &[], &sh.emu, |last| scripted(last, sh)) {
        Some(emulate::Emulated::Reply(status, _, reply)) => (status, reply),
        Some(emulate::Emulated::Stall) => {
            (500, json!({"error": {"message": "stalled"}}).to_string())
        }
        None => (200, completion(&bytes, sh)),
    }
}

/// The `file` part of a multipart upload whose `purpose` is `batch`, or why the upload is not one.
async fn multipart_file(req: &Request) -> Result<Vec<u8>, String> {
    let ctype = req.header("content-type").unwrap_or("");
    let boundary =
        multer::parse_boundary(ctype).map_err(|e| format!("content-type {ctype:?}: {e}"))?;
    let body = req.body.clone();
    let mut form = multer::Multipart::new(
        futures_util::stream::once(async move { Ok::<_, std::convert::Infallible>(body) }),
        boundary,
    );
    let (mut file, mut purpose) = (None, None);
    while let Some(field) = form
        .next_field()
        .await
        .map_err(|e| format!("multipart body: {e}"))?
    {
        let name = field.name().unwrap_or("").to_owned();
        let bytes = field
            .bytes()
            .await
            .map_err(|e| format!("multipart field {name:?}: {e}"))?;
        match name.as_str() {
            "file" => file = Some(bytes.to_vec()),
            "purpose" => purpose = Some(bytes),
            _ => {}
        }
    }
    if purpose.as_deref() != Some(b"batch".as_slice()) {
        return Err("the multipart form needs `purpose` = `batch`".to_owned());
    }
    file.ok_or_else(|| "the multipart form has no `file` field".to_owned())
}
