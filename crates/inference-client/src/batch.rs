//! Provider batch jobs: the prompts a run still has to send go into OpenAI Batch API input files instead of one
//! request each, and the answers come back through the same records, cache and budget as `run`'s.
//!
//! Files live beside the responses file, in `<out stem>.batch/`: `input-<hash>.jsonl` (one
//! `{"custom_id", "method", "url", "body"}` line per distinct request, `custom_id` = its cache key, at most
//! `BatchOptions::max_requests` lines; `<hash>` is the file's SHA-256 prefix), `state-<hash>.json` (the submitted
//! batch, so a rerun resumes polling it instead of paying twice), and the output and error files
//! (`output-<hash>.jsonl`, `errors-<hash>.jsonl`), renamed `read-…` once their lines are written.
//!
//! - `batch = "openai"`: upload, create, poll every `poll_interval` until the batch ends, download, write.
//! - `batch = "file"`: write the input and name the `vllm.entrypoints.openai.run_batch` command that answers it;
//!   a later run finds `output-<hash>.jsonl` (the same pending prompts make the same file) and reads it.
//!
//! Each output line becomes the record a normal request would have made (same cache key, usage and cost, into
//! the cache and the one budget and spend ledger); a line with a non-200 status or in the error file becomes a
//! failed record (a rerun sends it again); a prompt without any line stays pending. The worst case of every
//! request is reserved before anything is submitted, so a batch never runs past the cost limit.
//!
//! `Client::chat_batch` takes this path when `RunOptions::batch` is set and the model's `batch_mode()` is `openai` or
//! `file`; otherwise it is `chat`. The upload is a reqwest multipart form (`batch::api`).

mod api;

use std::collections::HashMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::Instant;

use schema::{Attempt, ErrorClass, PromptRecord};
use serde_json::Value;

use crate::Error;
use crate::client::{BatchOptions, Client};
use crate::config::{BatchMode, ModelConfig};
use crate::http;
use crate::parse::{self, Completion, Failure};
use crate::run::{Counters, Job, Written, fill_answer, fill_failure, new_record};

/// The largest input file one job gets (the OpenAI Batch API takes up to 200 MB).
const MAX_FILE_BYTES: usize = 190 * 1024 * 1024;

/// One call's batch jobs: what `run_prompts` hands over instead of sending requests itself.
pub(crate) struct BatchRun<'a> {
    pub(crate) client: &'a Client,
    pub(crate) model: &'a ModelConfig,
    pub(crate) prompts: &'a [PromptRecord],
    pub(crate) access: &'a http::Access,
    pub(crate) tx: &'a mpsc::Sender<Written>,
    pub(crate) progress: &'a crate::run::Bars,
    /// The responses file (the batch folder sits beside it).
    pub(crate) out: &'a Path,
    pub(crate) options: &'a BatchOptions,
    pub(crate) mode: BatchMode,
}

/// One batch job: an input file and the prompts it answers.
struct Chunk {
    hash: String,
    input: Vec<u8>,
    /// The prompts, with the worst case reserved for each.
    jobs: Vec<(Job, f64)>,
}

/// One line of an output or error file: an answer, or why there is none.
type LineResult = Result<Completion, Failure>;

/// The folder that holds the batch files of the responses file `out`.
pub fn batch_dir(out: &Path) -> PathBuf {
    let stem = out
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "responses".to_owned());
    out.with_file_name(format!("{stem}.batch"))
}

impl BatchRun<'_> {
    /// Reserves the jobs' worst case, then runs them as batch jobs; returns what was sent, answered and spent.
    pub(crate) async fn send(&self, jobs: Vec<Job>) -> Result<Counters, Error> {
        let mut counters = Counters::default();
        let budget = self.client.budget();
        let total = jobs.len();
        let mut reserved = Vec::with_capacity(total);
        for job in jobs {
            let worst = self
                .model
                .worst_case_cost(job.input_tokens, job.max_tokens.unwrap_or(0));
            if !budget.try_reserve(worst).0 {
                counters.skipped_for_cost = total - reserved.len();
                tracing::warn!(
                    spent_usd = budget.spent(),
                    limit_usd = budget.cap().unwrap_or(f64::INFINITY),
                    not_sent = counters.skipped_for_cost,
                    "Not batching every request: their worst case could exceed the cost limit."
                );
                break;
            }
            reserved.push((job, worst));
        }
        let chunks = self.chunks(reserved);
        let mut open: Vec<Chunk> = Vec::new();
        let result = self.run_chunks(chunks, &mut open, &mut counters).await;
        // Whatever was not settled (an error, or a batch still running) costs nothing yet.
        for chunk in open {
            for (_, worst) in chunk.jobs {
                budget.settle(worst, 0.0);
            }
        }
        result.map(|()| counters)
    }

    async fn run_chunks(
        &self,
        chunks: Vec<Chunk>,
        open: &mut Vec<Chunk>,
        counters: &mut Counters,
    ) -> Result<(), Error> {
        // Open from here on: whatever is still open when this returns has its reservation released.
        open.extend(chunks);
        let dir = batch_dir(self.out);
        std::fs::create_dir_all(&dir)
            .map_err(|e| Error::Setup(format!("{}: {e}", dir.display())))?;
        for c in open.iter() {
            let input = dir.join(format!("input-{}.jsonl", c.hash));
            if std::fs::read(&input).ok().as_deref() != Some(&c.input[..]) {
                schema::write_atomic(&input, &c.input)?;
            }
        }
        match self.mode {
            BatchMode::Openai => self.run_openai(&dir, open, counters).await,
            _ => {
                self.run_files(&dir, open, counters)?;
                Ok(())
            }
        }
    }

    /// Groups the jobs into input files: one line per distinct cache key, at most `max_requests` lines and
    /// `MAX_FILE_BYTES` bytes each.
    fn chunks(&self, jobs: Vec<(Job, f64)>) -> Vec<Chunk> {
        let mut chunks: Vec<Chunk> = Vec::new();
        let mut lines = 0usize;
        let mut keys: HashMap<String, usize> = HashMap::new();
        let mut current = Chunk {
            hash: String::new(),
            input: Vec::new(),
            jobs: Vec::new(),
        };
        for (job, worst) in jobs {
            if keys.contains_key(&job.key) {
                current.jobs.push((job, worst));
                continue;
            }
            let line = format!(
                "{{\"custom_id\":\"{}\",\"method\":\"POST\",\"url\":\"/v1/chat/completions\",\"body\":{}}}\n",
                job.key,
                String::from_utf8_lossy(&job.body)
            );
            if lines > 0
                && (lines >= self.options.max_requests
                    || current.input.len() + line.len() > MAX_FILE_BYTES)
            {
                chunks.push(std::mem::replace(
                    &mut current,
                    Chunk {
                        hash: String::new(),
                        input: Vec::new(),
                        jobs: Vec::new(),
                    },
                ));
                lines = 0;
                keys.clear();
            }
            current.input.extend_from_slice(line.as_bytes());
            keys.insert(job.key.clone(), lines);
            lines += 1;
            current.jobs.push((job, worst));
        }
        if lines > 0 {
            chunks.push(current);
        }
        for c in &mut chunks {
            c.hash = schema::sha256_hex(&c.input)[..16].to_owned();
        }
        chunks
    }

    /// `batch = "file"`: reads the output of every input file that has one; names the command for the others.
    fn run_files(
        &self,
        dir: &Path,
        open: &mut Vec<Chunk>,
        counters: &mut Counters,
    ) -> Result<(), Error> {
        let started = Instant::now();
        let mut waiting = Vec::new();
        for chunk in std::mem::take(open) {
            let output = dir.join(format!("output-{}.jsonl", chunk.hash));
            let lines = chunk.jobs.len();
            counters.sent += lines;
            if output.is_file() {
                let results = read_results(&[output.as_path()])?;
                self.write(chunk, results, started, counters);
                mark_read(&output)?;
                continue;
            }
            let input = dir.join(format!("input-{}.jsonl", chunk.hash));
            tracing::warn!(
                model = %self.model.name,
                requests = lines,
                "Batch input written; answer it with `python -m vllm.entrypoints.openai.run_batch -i {} -o {} --model {}`, then rerun.",
                input.display(),
                output.display(),
                self.model.model_id
            );
            counters.batch_pending += lines;
            waiting.push(chunk);
        }
        *open = waiting;
        Ok(())
    }

    /// `batch = "openai"`: submits every input file not yet submitted, polls until each batch ends, and writes
    /// what it answered.
    async fn run_openai(
        &self,
        dir: &Path,
        open: &mut Vec<Chunk>,
        counters: &mut Counters,
    ) -> Result<(), Error> {
        let started = Instant::now();
        let base =
            self.model.base_urls.first().cloned().ok_or_else(|| {
                Error::Config(format!("model {:?}: no base URL", self.model.name))
            })?;
        // The client's connection pool for this base URL (shared with the model's other calls).
        let http = self
            .client
            .pools()
            .http(self.model, self.access, &base, 2)?;
        let api = api::Api {
            http,
            base,
            model: self.model,
            redactor: &self.access.redactor,
        };
        let mut ids = Vec::with_capacity(open.len());
        for chunk in open.iter() {
            let state = dir.join(format!("state-{}.json", chunk.hash));
            let resumed = std::fs::read(&state)
                .ok()
                .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
                .and_then(|v| v.get("batch_id")?.as_str().map(str::to_owned));
            let id = match resumed {
                Some(id) => {
                    tracing::info!(model = %self.model.name, batch = %id, "Resuming a batch submitted earlier.");
                    id
                }
                None => {
                    let file_id = api
                        .upload(&format!("input-{}.jsonl", chunk.hash), &chunk.input)
                        .await?;
                    let id = api
                        .create(&file_id, &self.options.completion_window)
                        .await?;
                    let note = serde_json::json!({"batch_id": id, "input_file_id": file_id});
                    schema::write_atomic(&state, note.to_string().as_bytes())?;
                    tracing::info!(model = %self.model.name, batch = %id, requests = chunk.jobs.len(), "Submitted a batch.");
                    id
                }
            };
            counters.sent += chunk.jobs.len();
            counters
                .requests
                .fetch_add(chunk.jobs.len() as u64, Ordering::Relaxed);
            ids.push(id);
        }
        let mut ended: Option<Error> = None;
        while !open.is_empty() {
            let mut i = 0;
            while i < open.len() {
                let batch = api.status(&ids[i]).await?;
                if !batch.is_terminal() {
                    tracing::debug!(batch = %batch.id, status = %batch.status, "Batch still running.");
                    i += 1;
                    continue;
                }
                let mut files = Vec::new();
                for (file, name) in [
                    (&batch.output_file_id, "output"),
                    (&batch.error_file_id, "errors"),
                ] {
                    if let Some(file) = file {
                        let path = dir.join(format!("{name}-{}.jsonl", open[i].hash));
                        schema::write_atomic(&path, &api.content(file).await?)?;
                        files.push(path);
                    }
                }
                let paths: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
                let results = read_results(&paths)?;
                let chunk = open.remove(i);
                let id = ids.remove(i);
                let state = dir.join(format!("state-{}.json", chunk.hash));
                let asked = chunk.jobs.len();
                let answered = self.write(chunk, results, started, counters);
                for f in &files {
                    mark_read(f)?;
                }
                // Ended and written: the same requests make a new batch next time.
                let _ = std::fs::remove_file(&state);
                if batch.status != "completed" && ended.is_none() {
                    let why = batch
                        .first_error()
                        .map(|e| format!(" ({e})"))
                        .unwrap_or_default();
                    ended = Some(Error::Batch(self.access.redactor.clean(&format!(
                        "model {:?}: batch {id} ended {:?}{why}: {answered} of {asked} requests answered; the rest are \
                         sent again by the next run (input kept in {})",
                        self.model.name,
                        batch.status,
                        dir.display()
                    ))));
                }
            }
            if open.is_empty() {
                break;
            }
            if let Some(max) = self.options.max_wait
                && started.elapsed() >= max
            {
                return Err(Error::Batch(format!(
                    "model {:?}: {} batch(es) still running after {:.0} s ({}); rerun to keep waiting (it resumes them)",
                    self.model.name,
                    open.len(),
                    started.elapsed().as_secs_f64(),
                    ids.join(", ")
                )));
            }
            tokio::time::sleep(self.options.poll_interval).await;
        }
        match ended {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Writes one record per prompt that has a line, settles every prompt's reservation, and counts the
    /// prompts without a line as pending; returns how many prompts got an answer (not a failure).
    fn write(
        &self,
        chunk: Chunk,
        results: HashMap<String, LineResult>,
        started: Instant,
        counters: &mut Counters,
    ) -> usize {
        let budget = self.client.budget();
        let wall_s = started.elapsed().as_secs_f64();
        let mut answered = 0;
        for (job, worst) in chunk.jobs {
            let Some(result) = results.get(&job.key) else {
                counters.batch_pending += 1;
                budget.settle(worst, 0.0);
                continue;
            };
            let p = &self.prompts[job.index];
            let status = match result {
                Ok(_) => Some(200),
                Err(f) => f.status,
            };
            let attempts = vec![Attempt {
                n: 1,
                status,
                error_class: result.as_ref().err().map(|f| f.class),
                latency_s: 0.0,
                delay_s: 0.0,
                abandoned: false,
            }];
            let mut record = new_record(
                self.model,
                job.key.clone(),
                p.id.clone(),
                p.sample_index,
                p.extra.clone(),
                attempts,
                wall_s,
            );
            let (cost, store) = match result {
                Ok(c) => {
                    answered += 1;
                    (
                        fill_answer(&mut record, self.model, c.clone(), None, counters),
                        true,
                    )
                }
                Err(f) => {
                    counters.failed.fetch_add(1, Ordering::Relaxed);
                    fill_failure(&mut record, f);
                    let billed = f.usage.as_ref().map_or(0.0, |u| {
                        u.cost_usd.unwrap_or_else(|| {
                            self.model
                                .cost_from_usage(u.prompt_tokens, u.completion_tokens)
                        })
                    });
                    (billed, false)
                }
            };
            *counters.spent.lock().unwrap_or_else(|e| e.into_inner()) += cost;
            budget.settle(worst, cost);
            self.progress.inc(1);
            // A closed channel means the writer failed; its error ends the run.
            let _ = self.tx.send(Written { record, store });
        }
        answered
    }
}

/// Reads output and error files into one result per `custom_id` (the first line for an id wins).
///
/// An output line is `{"custom_id", "response": {"status_code", "body"}, "error"}`: a 200 body is parsed as a
/// chat completion (a body that reports an error fails as it would over HTTP), another status fails with the
/// body's message, and a line with an `error` and no response (the error file's lines) fails with its code and
/// message. An unreadable line is skipped with a warning (its prompt stays pending).
fn read_results(files: &[&Path]) -> Result<HashMap<String, LineResult>, Error> {
    let mut results = HashMap::new();
    for path in files {
        let file = std::fs::File::open(path)
            .map_err(|e| Error::Setup(format!("{}: {e}", path.display())))?;
        for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
            let line = line.map_err(|e| Error::Setup(format!("{}: {e}", path.display())))?;
            if line.trim().is_empty() {
                continue;
            }
            let Some((id, result)) = parse_line(&line) else {
                tracing::warn!(file = %path.display(), line = n + 1, "Skipping an unreadable batch output line.");
                continue;
            };
            results.entry(id).or_insert(result);
        }
    }
    Ok(results)
}

/// One output or error line: its `custom_id` and what it says.
fn parse_line(line: &str) -> Option<(String, LineResult)> {
    let v: Value = serde_json::from_str(line).ok()?;
    let id = v.get("custom_id")?.as_str()?.to_owned();
    let fail = |class, status, message: String| Failure {
        class,
        status,
        message,
        retry_after: None,
        should_retry: None,
        usage: None,
        closed: false,
    };
    let response = v.get("response").filter(|r| !r.is_null());
    let result = match response {
        Some(r) => {
            let status = r
                .get("status_code")
                .and_then(Value::as_u64)
                .and_then(|s| u16::try_from(s).ok())
                .unwrap_or(0);
            let body = r.get("body").map(Value::to_string).unwrap_or_default();
            if status == 200 {
                parse::parse_completion(body.as_bytes())
            } else {
                Err(fail(
                    crate::retry::status_class(status),
                    Some(status),
                    format!("batch: {}", parse::error_message(body.as_bytes())),
                ))
            }
        }
        None => {
            let e = v.get("error").filter(|e| !e.is_null())?;
            let code = e.get("code").and_then(Value::as_str).unwrap_or("error");
            let message = e.get("message").and_then(Value::as_str).unwrap_or("");
            Err(fail(
                ErrorClass::ProviderError,
                None,
                format!("batch: {code}: {message}"),
            ))
        }
    };
    Some((id, result))
}

/// Renames a file whose lines were written to `read-<unix ms>-<name>`, so the next run does not read it again.
fn mark_read(path: &Path) -> Result<(), Error> {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let to = path.with_file_name(format!("read-{ms}-{name}"));
    std::fs::rename(path, &to).map_err(|e| Error::Setup(format!("{}: {e}", path.display())))
}
