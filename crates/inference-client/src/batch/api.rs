//! The OpenAI Batch API's four calls: upload an input file (`POST /files`, multipart, `purpose=batch`), create a
//! batch (`POST /batches`), read its status (`GET /batches/{id}`) and download a file (`GET /files/{id}/content`).
//!
//! Each call is retried by the rules of the `retry` module; a status that retrying cannot fix (401, 403, 404, 402)
//! stops the model. Messages never carry the key.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::config::ModelConfig;
use crate::http;
use crate::parse::Failure;
use crate::redact::Redactor;
use crate::retry::{self, Decision, Ended, Rules};
use crate::{Error, run::class_name};

/// A batch as `GET /batches/{id}` describes it (the fields the client reads).
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct BatchObject {
    pub(crate) id: String,
    pub(crate) status: String,
    #[serde(default)]
    pub(crate) output_file_id: Option<String>,
    #[serde(default)]
    pub(crate) error_file_id: Option<String>,
    /// `{"data": [{"code", "message", "line"}]}` for a batch that failed validation.
    #[serde(default)]
    pub(crate) errors: Option<Value>,
}

impl BatchObject {
    /// Whether the batch will not change any more.
    pub(crate) fn is_terminal(&self) -> bool {
        matches!(
            self.status.as_str(),
            "completed" | "failed" | "expired" | "cancelled"
        )
    }

    /// The first validation error's message, if the provider gave one.
    pub(crate) fn first_error(&self) -> Option<String> {
        let e = self.errors.as_ref()?.get("data")?.as_array()?.first()?;
        let code = e.get("code").and_then(Value::as_str).unwrap_or("error");
        let message = e.get("message").and_then(Value::as_str).unwrap_or("");
        Some(format!("{code}: {message}"))
    }
}

/// The Batch API of one model's provider (its first base URL).
pub(crate) struct Api<'a> {
    pub(crate) http: reqwest::Client,
    pub(crate) base: String,
    pub(crate) model: &'a ModelConfig,
    pub(crate) redactor: &'a Redactor,
}

#[derive(Deserialize)]
struct WithId {
    id: String,
}

impl Api<'_> {
    /// Uploads an input file; returns its file id.
    pub(crate) async fn upload(&self, name: &str, bytes: &[u8]) -> Result<String, Error> {
        let url = self.url("files");
        let reply = self
            .call("uploading the batch input file", &url, || {
                // A form is consumed by its request, so each attempt builds its own.
                let file = reqwest::multipart::Part::bytes(bytes.to_vec())
                    .file_name(name.to_owned())
                    .mime_str("application/jsonl")
                    .expect("`application/jsonl` is a valid MIME type");
                let form = reqwest::multipart::Form::new()
                    .text("purpose", "batch")
                    .part("file", file);
                self.http.post(&url).multipart(form)
            })
            .await?;
        self.id_of(&url, &reply)
    }

    /// Creates a batch of chat completions over an uploaded file; returns the batch id.
    pub(crate) async fn create(&self, file_id: &str, window: &str) -> Result<String, Error> {
        let url = self.url("batches");
        let body = json!({
            "input_file_id": file_id,
            "endpoint": "/v1/chat/completions",
            "completion_window": window,
        })
        .to_string();
        let reply = self
            .call("creating the batch", &url, || {
                self.http.post(&url).body(body.clone())
            })
            .await?;
        self.id_of(&url, &reply)
    }

    /// The batch's current state.
    pub(crate) async fn status(&self, id: &str) -> Result<BatchObject, Error> {
        let url = self.url(&format!("batches/{id}"));
        let reply = self
            .call("reading the batch status", &url, || self.http.get(&url))
            .await?;
        serde_json::from_slice(&reply).map_err(|e| self.error(&url, &format!("not a batch: {e}")))
    }

    /// A file's bytes (an output or error file).
    pub(crate) async fn content(&self, file_id: &str) -> Result<Vec<u8>, Error> {
        let url = self.url(&format!("files/{file_id}/content"));
        self.call("downloading a batch file", &url, || self.http.get(&url))
            .await
    }

    fn url(&self, path: &str) -> String {
        format!("{}/{path}", self.base.trim_end_matches('/'))
    }

    fn id_of(&self, url: &str, reply: &[u8]) -> Result<String, Error> {
        serde_json::from_slice::<WithId>(reply)
            .map(|w| w.id)
            .map_err(|e| self.error(url, &format!("the reply has no `id`: {e}")))
    }

    fn error(&self, url: &str, message: &str) -> Error {
        Error::Request {
            model: self.model.name.clone(),
            url: url.to_owned(),
            message: self.redactor.clean(message),
        }
    }

    /// Sends the request `build` makes, retrying by the `retry` rules up to the model's `max-attempts`.
    async fn call(
        &self,
        what: &str,
        url: &str,
        build: impl Fn() -> reqwest::RequestBuilder,
    ) -> Result<Vec<u8>, Error> {
        let m = self.model;
        let timeout = Duration::from_secs_f64(m.timeout_s);
        let ended = retry::drive(
            Rules::of(m),
            url,
            None,
            |_| {
                let request = build().timeout(timeout);
                async move {
                    Some(
                        http::send(request, self.redactor)
                            .await
                            .map(|(_, bytes)| bytes),
                    )
                }
            },
            |_, v| {
                if !v.last {
                    tracing::debug!(
                        what,
                        attempt = v.n,
                        wait_s = v.wait.as_secs_f64(),
                        "Batch API call failed; retrying."
                    );
                }
            },
        )
        .await;
        let f: Failure = match ended {
            Ended::Answered(bytes) => return Ok(bytes),
            Ended::Failed(f) => f,
            Ended::NotMade => unreachable!("a Batch API attempt is always made"),
        };
        let status = f.status.map(|s| format!("HTTP {s}, ")).unwrap_or_default();
        let message = format!("{what}: {status}{}: {}", class_name(f.class), f.message);
        if retry::decide(&f) == Decision::StopModel {
            return Err(Error::FailFast {
                model: m.name.clone(),
                url: url.to_owned(),
                status: f.status.unwrap_or(0),
                class: class_name(f.class).to_owned(),
                message: self.redactor.clean(&message),
            });
        }
        Err(self.error(url, &message))
    }
}
