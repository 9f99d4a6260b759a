//! `rift run`: one model over a RIFT prompts list or prompts file, resumable, through the inference client.

use super::*;

/// `rift run`: one model over a prompts list through the inference client, into the responses file `out`.
/// Failed prompts are written (they score as failed replies) and a rerun retries them.
///
/// The single-question baseline prompts go through [`Client::chat_batch`] (provider batch jobs when the client
/// runs them), the multi-question prompts through `chat`; both write the same responses file.
pub fn run(
    model: &ModelConfig,
    prompts: &[PromptRecord],
    out: &Path,
    client: &Client,
) -> Result<RunSummary, Error> {
    run_resuming(model, prompts, out, client, None)
}

/// [`run`], resuming from `on_file` (the lines of `out` for these prompts) when given instead of reading `out`.
pub(super) fn run_resuming(
    model: &ModelConfig,
    prompts: &[PromptRecord],
    out: &Path,
    client: &Client,
    on_file: Option<&LineIndex<ResponseKey>>,
) -> Result<RunSummary, Error> {
    let is_baseline =
        |p: &PromptRecord| p.extra.get("structure").and_then(|v| v.as_str()) == Some("baseline");
    // Without batch jobs every prompt goes through `chat`, uncopied (a chunk of long prompts is large).
    let (baseline, multi): (Vec<PromptRecord>, std::borrow::Cow<'_, [PromptRecord]>) =
        if client.options().batch.is_some() {
            let (b, m) = prompts.iter().cloned().partition(is_baseline);
            (b, std::borrow::Cow::Owned(m))
        } else {
            (Vec::new(), std::borrow::Cow::Borrowed(prompts))
        };
    let mut s = match on_file {
        Some(index) => client.chat_resuming(model, &multi, out, lines_of(index, &multi)?)?,
        None => client.chat(model, &multi, out)?,
    };
    if !baseline.is_empty() {
        let b = match on_file {
            Some(index) => {
                client.chat_batch_resuming(model, &baseline, out, lines_of(index, &baseline)?)?
            }
            None => client.chat_batch(model, &baseline, out)?,
        };
        s = add_summaries(s, &b);
    }
    if s.failed > 0 {
        tracing::warn!(failed = s.failed, out = %out.display(), "Some prompts failed; they score as failed replies, and a rerun retries them.");
    }
    Ok(s)
}

/// The newest line on file for each of `prompts` (read back through the index).
pub(super) fn lines_of(
    index: &LineIndex<ResponseKey>,
    prompts: &[PromptRecord],
) -> Result<Vec<ResponseRecord>, Error> {
    newest_of(index, prompts.iter().map(ResponseKey::of_prompt))
}

/// The newest line on file for each key, read as `T` (a whole record, or the fields a reader needs).
pub(super) fn newest_of<T: serde::de::DeserializeOwned>(
    index: &LineIndex<ResponseKey>,
    keys: impl IntoIterator<Item = ResponseKey>,
) -> Result<Vec<T>, Error> {
    let mut lines = Vec::new();
    for key in keys {
        let mut found: Vec<T> = index.read(&key)?;
        lines.extend(found.pop());
    }
    Ok(lines)
}

/// Two calls' summaries as one.
fn add_summaries(a: RunSummary, b: &RunSummary) -> RunSummary {
    RunSummary {
        total: a.total + b.total,
        resumed: a.resumed + b.resumed,
        cached: a.cached + b.cached,
        sent: a.sent + b.sent,
        requests: a.requests + b.requests,
        abandoned: a.abandoned + b.abandoned,
        failed: a.failed + b.failed,
        truncated: a.truncated + b.truncated,
        skipped_for_cost: a.skipped_for_cost + b.skipped_for_cost,
        interrupted: a.interrupted + b.interrupted,
        ejections: a.ejections + b.ejections,
        batch_pending: a.batch_pending + b.batch_pending,
        spent_usd: a.spent_usd + b.spent_usd,
        prompt_tokens: a.prompt_tokens + b.prompt_tokens,
        completion_tokens: a.completion_tokens + b.completion_tokens,
        wall_s: a.wall_s + b.wall_s,
        in_flight: match (a.in_flight, &b.in_flight) {
            (Some(mut x), Some(y)) => {
                x.add(y);
                Some(x)
            }
            (x, y) => x.or_else(|| y.clone()),
        },
    }
}

/// Prompts [`run_file`] hands the client at a time: enough to keep hundreds of requests in flight, few enough that
/// a paper-scale prompts file (≈ 700 MB for 20 000 prompts of up to 300 questions) is never held in memory (a
/// chunk of the longest prompts is ≈ 70 MB of records and as much again of request bodies).
pub const RUN_CHUNK: usize = 2_048;

/// [`run`] over a prompts file, read [`RUN_CHUNK`] prompts at a time (each chunk resumes from and appends to the
/// same responses file, so the result is the same as one call over every prompt).
///
/// The responses file is indexed once by prompt ([`LineIndex`]: byte offsets only) and each chunk reads back just
/// its own lines, so resuming neither holds nor re-reads the whole file per chunk. Lines a chunk appends belong to
/// its own prompts (prompt ids are unique), so the index made before the first chunk serves every chunk; a chunk
/// that rewrites the file (after failures) leaves the other prompts' lines unchanged, and the index reads the
/// file it opened.
pub fn run_file(
    model: &ModelConfig,
    prompts: &Path,
    out: &Path,
    client: &Client,
) -> Result<RunSummary, Error> {
    // One writer: another process on the same responses file is waited for before the file is indexed.
    client.lock_output(out)?;
    if client.options().refresh {
        match std::fs::remove_file(out) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(out, e)),
        }
    }
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    if !out.exists() {
        std::fs::write(out, b"").map_err(|e| Error::io(out, e))?;
    }
    let index = LineIndex::<ResponseKey>::build(out, true)?;
    if client.options().batch.is_some() {
        // The baseline prompts of each chunk go to batch jobs: one call per chunk.
        let mut total = RunSummary::default();
        schema::read_jsonl_chunks(prompts, RUN_CHUNK, |chunk: Vec<PromptRecord>| {
            let s = run_resuming(model, &chunk, out, client, Some(&index))?;
            total = add_summaries(std::mem::take(&mut total), &s);
            Ok::<(), Error>(())
        })?;
        return Ok(total);
    }
    // One stream of chunks: the next chunk is read and prepared while this one's requests are in flight.
    let s = client.chat_stream(model, out, |feed| {
        schema::read_jsonl_chunks(prompts, RUN_CHUNK, |chunk: Vec<PromptRecord>| {
            feed.send(&chunk, lines_of(&index, &chunk)?)?;
            Ok::<(), Error>(())
        })
    })?;
    if s.failed > 0 {
        tracing::warn!(failed = s.failed, out = %out.display(), "Some prompts failed; they score as failed replies, and a rerun retries them.");
    }
    Ok(s)
}
