//! RIFT: Jeopardy! preparation (with optional LLM rephrasing), the prompts of an experiment, one model's run, the
//! LLM judge for the answers the pre-judge cannot settle, and scoring with its per-(model, structure) summary.
//!
//! Each stage reads and writes files, so it can be rerun alone; model calls go through the inference client and
//! resume from its responses files. The summary is `analysis::rift`'s aggregation of the scores, the same one the
//! run's tables come from.
//!
//! The judge and the rephrasing take their request settings from the caller's [`HelperCall`]. A judge reply that
//! cannot be read (failed, truncated without a verdict word, or unparsable) is asked again with the next
//! `sample_index`, up to `tries` times; an answer whose judge request never got a verdict is *unjudged* (never
//! correct, never incorrect, counted on its own). So is an answer the pre-judge cannot settle when no judge is
//! configured: a designed outcome of an offline run, not a failure.
//!
//! Judge requests and the single-question baseline prompts go through `Client::chat_batch`: provider batch jobs
//! when the client runs them (`--batch`); answers still waiting for a batch job leave the stage incomplete.
//!
//! `write_prompts` writes one prompt at a time; `run_file` feeds the prompts file to `Client::chat_stream` in chunks of
//! [`RUN_CHUNK`]. Judging and scoring go [`SCORE_CHUNK`] prompts at a time on three threads (reading, scoring, writing
//! consecutive chunks), with judge requests de-duplicated across chunks; the answer table is also written as Parquet
//! (`answer-scores.parquet`), which the summary scans.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use analysis::rift::{OutcomeCounts, RiftSummary, StructureStats, WrongQuestion};
use inference_client::{Client, ModelConfig, RunSummary};
use prompt_gen::rift::{RiftConfig, SystemPrompts};
use schema::paths::ModelPaths;
use schema::rift::{JudgeVerdict, PromptLine, Question};
use schema::{LineIndex, PromptRecord, RequestParams, ResponseKey, ResponseRecord, ResponseReply};
use scoring::rift::{PreJudgeReport, ScoreOptions};

use crate::helper::{HelperCall, failure_share};
use crate::{Error, read_text};

/// Loads the dataset a config names: a prepared `questions.jsonl`, or a raw clue file prepared in memory.
pub fn load_dataset(path: &Path) -> Result<Vec<Question>, Error> {
    if path.extension().is_some_and(|e| e == "jsonl") {
        return jeopardy_prep::load_questions(path).map_err(|e| Error::Input(e.to_string()));
    }
    let prepared = jeopardy_prep::prepare_files(&[path.to_owned()], None)
        .map_err(|e| Error::Input(e.to_string()))?;
    tracing::info!(
        path = %path.display(),
        kept = prepared.questions.len(),
        dropped = prepared.skipped.len(),
        "Prepared a raw clue file in memory (no rephrasing)."
    );
    Ok(prepared.questions)
}

/// The paper's step 0: every clue rephrased by a model before clean-up.
#[derive(Debug, Clone, Copy)]
pub struct Rephrase<'a> {
    pub model: &'a ModelConfig,
    /// The rephrasing prompt ({category}, {clue}, {response}).
    pub template: &'a str,
    /// Request settings (`[rift-prep] rephrase-max-tokens`, …); temperature is 0.
    pub call: &'a HelperCall,
    pub client: &'a Client,
}

/// `rift prep`: loads the clue files (rows numbered across them in order), optionally rephrases them (requests and
/// responses are written to `out_dir`), cleans them and writes `questions.jsonl`, `skipped.jsonl` and the summary.
pub fn prep(
    inputs: &[PathBuf],
    out_dir: &Path,
    rephrase: Option<&Rephrase<'_>>,
) -> Result<jeopardy_prep::Prepared, Error> {
    let rephrasings = match rephrase {
        None => None,
        Some(r) => {
            let mut clues = Vec::new();
            for p in inputs {
                clues
                    .extend(jeopardy_prep::load_clues(p).map_err(|e| Error::Input(e.to_string()))?);
            }
            r.call
                .check("rephrase-")
                .map_err(|e| Error::Input(format!("[rift-prep]: {e}")))?;
            let params = RequestParams {
                temperature: Some(0.0),
                ..r.call.params()
            };
            let requests = jeopardy_prep::rephrase_requests(&clues, r.template, &params);
            let req_path = out_dir.join("rephrase-prompts.jsonl");
            let resp_path = out_dir.join("rephrase-responses.jsonl");
            schema::write_jsonl_atomic(&req_path, &requests)?;
            tracing::info!(requests = requests.len(), model = %r.model.name, "Rephrasing clues.");
            r.client.chat(r.model, &requests, &resp_path)?;
            Some(jeopardy_prep::parse_rephrasings(
                &schema::read_latest_responses(&resp_path)?,
            ))
        }
    };
    let prepared = jeopardy_prep::prepare_files(inputs, rephrasings.as_ref())
        .map_err(|e| Error::Input(e.to_string()))?;
    let paths = jeopardy_prep::write_outputs(&prepared, out_dir).map_err(|e| Error::Output {
        path: out_dir.to_owned(),
        message: e.to_string(),
    })?;
    tracing::info!(questions = %paths.questions.display(), skipped = %paths.skipped.display(), "Wrote the prepared dataset.");
    Ok(prepared)
}

/// `rift prompts`: samples the experiment of `cfg` and writes its prompts atomically, one at a time (a paper-scale
/// experiment is never held in memory); returns how many.
pub fn write_prompts(cfg: &RiftConfig, out: &Path) -> Result<usize, Error> {
    use std::io::Write as _;
    /// A prompt that could not be built, or one that could not be written.
    enum Failed {
        Build(prompt_gen::rift::Error),
        Write(std::io::Error),
    }
    impl From<prompt_gen::rift::Error> for Failed {
        fn from(e: prompt_gen::rift::Error) -> Failed {
            Failed::Build(e)
        }
    }
    let questions = load_dataset(&cfg.dataset)?;
    let multi = read_text(&cfg.system_prompt)?;
    let baseline = read_text(&cfg.baseline_system_prompt)?;
    let system = SystemPrompts {
        multi: &multi,
        baseline: &baseline,
    };
    let mut built = None;
    let mut count = 0;
    let written = schema::write_atomic_with(out, |w| {
        let r = prompt_gen::rift::for_each_prompt(&questions, cfg, system, |p| {
            serde_json::to_writer(&mut *w, &p)
                .map_err(std::io::Error::from)
                .and_then(|()| w.write_all(b"\n"))
                .map_err(Failed::Write)
        });
        match r {
            Ok(n) => {
                count = n;
                Ok(())
            }
            Err(Failed::Write(e)) => Err(e),
            Err(Failed::Build(e)) => {
                built = Some(e);
                Err(std::io::Error::other("a prompt could not be built"))
            }
        }
    });
    if let Some(e) = built {
        return Err(Error::Input(e.to_string()));
    }
    written?;
    Ok(count)
}

/// The first `limit` prompts of each structure, in order.
pub fn limit_per_structure(prompts: Vec<PromptRecord>, limit: usize) -> Vec<PromptRecord> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    prompts
        .into_iter()
        .filter(|p| {
            let s = p
                .extra
                .get("structure")
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_owned();
            let n = seen.entry(s).or_insert(0);
            *n += 1;
            *n <= limit
        })
        .collect()
}

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
fn run_resuming(
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
fn lines_of(
    index: &LineIndex<ResponseKey>,
    prompts: &[PromptRecord],
) -> Result<Vec<ResponseRecord>, Error> {
    newest_of(index, prompts.iter().map(ResponseKey::of_prompt))
}

/// The newest line on file for each key, read as `T` (a whole record, or the fields a reader needs).
fn newest_of<T: serde::de::DeserializeOwned>(
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

/// What [`judge`] needs.
#[derive(Debug, Clone, Copy)]
pub struct Judge<'a> {
    pub judge: &'a ModelConfig,
    pub prompts: &'a Path,
    pub responses: &'a Path,
    /// The judge prompt ({question}, {expected}, {given}).
    pub template: &'a str,
    /// Also judge the answers the pre-judge settled (to measure their agreement).
    pub judge_settled: bool,
    /// Request settings and tries (`[rift-prep] judge-max-tokens`, `judge-tries`, …).
    pub call: &'a HelperCall,
    /// Where judge prompts, judge responses and verdicts go.
    pub files: &'a ModelPaths,
    pub client: &'a Client,
}

/// What [`judge`] did: judge requests (distinct question/expected/given triples) with and without a verdict.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct JudgeSummary {
    pub verdicts_file: PathBuf,
    /// Requests that got a verdict.
    pub judged: usize,
    /// Requests without a verdict after every try (the judge failed): their answers are unjudged.
    pub unjudged: usize,
    /// Of `unjudged`, requests whose judge replied, but never with a readable verdict.
    pub unreadable: usize,
    /// Judge requests sent or resumed over all tries.
    pub requests_sent: usize,
}

impl JudgeSummary {
    /// Unjudged requests as a share of all judge requests (0 when there were none): above
    /// [`crate::helper::UNJUDGED_ALERT_SHARE`] the stage is incomplete.
    pub fn judge_failure_share(&self) -> f64 {
        failure_share(self.judged, self.unjudged)
    }

    /// What the judge made of the requests: verdicts, failed requests, unreadable replies.
    pub fn tally(&self) -> crate::helper::JudgeTally {
        crate::helper::JudgeTally {
            judged: self.judged,
            failed: self.unjudged - self.unreadable,
            unreadable: self.unreadable,
        }
    }

    /// The summary of a verdicts file written by [`judge`] (for a stage that was up to date and skipped).
    pub fn from_verdicts(path: &Path) -> Result<JudgeSummary, Error> {
        let mut summary = JudgeSummary {
            verdicts_file: path.to_owned(),
            ..JudgeSummary::default()
        };
        schema::read_jsonl_chunks(path, 65_536, |chunk: Vec<JudgeVerdict>| {
            for v in &chunk {
                if v.verdict.is_some() {
                    summary.judged += 1;
                } else {
                    summary.unjudged += 1;
                    summary.unreadable += usize::from(v.raw.is_some());
                }
                summary.requests_sent += v.tries.max(1) as usize;
            }
            Ok::<(), Error>(())
        })?;
        Ok(summary)
    }
}

/// `rift judge`: the pre-judge's open answers → judge prompts → judge model (retried while a reply cannot be read)
/// → verdicts.
pub fn judge(j: &Judge<'_>) -> Result<JudgeSummary, Error> {
    j.call
        .check("judge-")
        .map_err(|e| Error::Input(format!("[rift-prep]: {e}")))?;
    // The judge prompts, streamed to their file (de-duplicated across chunks by their content-addressed ids).
    let mut prompts_out = schema::AtomicJsonl::create(&j.files.judge_prompts())?;
    each_scored_chunk(j.prompts, j.responses, None, j.judge_settled, |scored| {
        for p in scoring::rift::judge_prompts(&scored.judge_requests, j.template, &j.call.params())
        {
            prompts_out.append(&p)?;
        }
        Ok(())
    })?;
    let requests = prompts_out.finish()? as usize;
    let resp_path = j.files.judge_responses();
    let verdict_path = j.files.verdicts();
    // The judge is asked JUDGE_CHUNK prompts at a time; its responses file is indexed once (after taking its
    // writer lock) and kept up to date.
    j.client.lock_output(&resp_path)?;
    let mut index = judge_index(&resp_path)?;
    let mut verdicts_out = schema::AtomicJsonl::create(&verdict_path)?;
    let (mut judged, mut unreadable, mut sent) = (0usize, 0usize, 0usize);
    let mut count = |v: &JudgeVerdict| -> Result<(), Error> {
        judged += usize::from(v.verdict.is_some());
        unreadable += usize::from(v.verdict.is_none() && v.raw.is_some());
        verdicts_out.append(v)?;
        Ok(())
    };
    if j.client.options().batch.is_some() {
        // Batch jobs: chunk by chunk, every try of a chunk before the next chunk.
        schema::read_jsonl_chunks(
            &j.files.judge_prompts(),
            JUDGE_CHUNK,
            |chunk: Vec<PromptRecord>| {
                let (verdicts, n) =
                    ask_judge_indexed(j.judge, &chunk, j.call, &resp_path, j.client, &mut index)?;
                sent += n;
                verdicts.iter().try_for_each(&mut count)
            },
        )?;
    } else {
        let asked = judge_streamed(j, &resp_path, &mut index, &mut sent)?;
        schema::read_jsonl_chunks(
            &j.files.judge_prompts(),
            JUDGE_CHUNK,
            |chunk: Vec<PromptRecord>| {
                chunk_verdicts(&index, &chunk, &asked)?
                    .iter()
                    .try_for_each(&mut count)
            },
        )?;
    }
    verdicts_out.finish()?;
    let summary = JudgeSummary {
        verdicts_file: verdict_path,
        judged,
        unjudged: requests - judged,
        unreadable,
        requests_sent: sent,
    };
    if summary.unjudged > 0 {
        tracing::warn!(unjudged = summary.unjudged, tries = j.call.tries, judge = %j.judge.name, "Judge requests without a verdict after every try: their answers are unjudged.");
    }
    tracing::info!(requests, judged, out = %summary.verdicts_file.display(), "Wrote verdicts.");
    Ok(summary)
}

/// [`judge`] without batch jobs: each try is one stream of chunks ([`Client::chat_stream`]: the next chunk is read
/// while this one's requests are in flight), the first over every judge prompt, each later one over the prompts
/// still without a verdict. Returns the last try asked of each prompt asked more than once (how many of its
/// replies are this run's), and adds the requests to `sent`.
fn judge_streamed(
    j: &Judge<'_>,
    resp_path: &Path,
    index: &mut LineIndex<ResponseKey>,
    sent: &mut usize,
) -> Result<std::collections::HashMap<String, u32>, Error> {
    let prompts = j.files.judge_prompts();
    let mut asked: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
    // The prompts still without a verdict (None: all of them, before the first try).
    let mut open: Option<std::collections::HashSet<String>> = None;
    for try_index in 0..j.call.tries {
        let is_open = |p: &PromptRecord| open.as_ref().is_none_or(|o| o.contains(&p.id));
        let mut n = 0;
        let s = j.client.chat_stream(j.judge, resp_path, |feed| {
            schema::read_jsonl_chunks(&prompts, JUDGE_CHUNK, |chunk: Vec<PromptRecord>| {
                let batch: Vec<PromptRecord> = chunk
                    .into_iter()
                    .filter(is_open)
                    .map(|p| PromptRecord {
                        sample_index: try_index,
                        ..p
                    })
                    .collect();
                if batch.is_empty() {
                    return Ok(());
                }
                n += batch.len();
                feed.send(&batch, lines_of(index, &batch)?)?;
                Ok::<(), Error>(())
            })
        })?;
        tracing::info!(requests = n, judge_try = try_index + 1, judge = %j.judge.name, sent = s.sent, "Judged unsettled answers.");
        *sent += n;
        if try_index > 0 {
            for id in open.iter().flatten() {
                asked.insert(id.clone(), try_index);
            }
        }
        if try_index + 1 == j.call.tries {
            break;
        }
        index.update()?;
        let mut still = std::collections::HashSet::new();
        schema::read_jsonl_chunks(&prompts, JUDGE_CHUNK, |chunk: Vec<PromptRecord>| {
            let chunk: Vec<PromptRecord> = chunk.into_iter().filter(is_open).collect();
            let settled: std::collections::HashSet<String> = chunk_verdicts(index, &chunk, &asked)?
                .into_iter()
                .filter(|v| v.verdict.is_some())
                .map(|v| v.id)
                .collect();
            still.extend(
                chunk
                    .into_iter()
                    .map(|p| p.id)
                    .filter(|id| !settled.contains(id)),
            );
            Ok::<(), Error>(())
        })?;
        if still.is_empty() {
            break;
        }
        open = Some(still);
    }
    index.update()?;
    Ok(asked)
}

/// The verdicts of a chunk of judge prompts from the replies on file, tries 0 to the last asked of each (0 when
/// `asked` does not name it), in chunk order.
fn chunk_verdicts(
    index: &LineIndex<ResponseKey>,
    chunk: &[PromptRecord],
    asked: &std::collections::HashMap<String, u32>,
) -> Result<Vec<JudgeVerdict>, Error> {
    let keys = chunk.iter().flat_map(|p| {
        let last = asked.get(&p.id).copied().unwrap_or(0);
        (0..=last).map(|t| ResponseKey {
            id: p.id.clone(),
            sample_index: t,
        })
    });
    Ok(scoring::rift::parse_verdicts(&newest_of(index, keys)?))
}

/// Judge prompts [`judge`] asks at a time (a paper-scale model has hundreds of thousands).
const JUDGE_CHUNK: usize = 16_384;

/// The judge responses file indexed by (judge id, try) (created empty when missing).
fn judge_index(resp_path: &Path) -> Result<LineIndex<ResponseKey>, Error> {
    if let Some(dir) = resp_path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    if !resp_path.exists() {
        std::fs::write(resp_path, b"").map_err(|e| Error::io(resp_path, e))?;
    }
    Ok(LineIndex::build(resp_path, true)?)
}

/// The judge's retry loop, shared by [`judge`] and `crate::pairs`: sends `judge_prompts` to `judge`, asking again
/// (next `sample_index`) while a reply cannot be read, up to `call.tries` times; responses go to `resp_path` (and
/// resume from it). Returns one verdict per judge id that got a reply, and how many requests were sent.
pub fn ask_judge(
    judge: &ModelConfig,
    judge_prompts: &[PromptRecord],
    call: &HelperCall,
    resp_path: &Path,
    client: &Client,
) -> Result<(Vec<JudgeVerdict>, usize), Error> {
    client.lock_output(resp_path)?;
    let mut index = judge_index(resp_path)?;
    ask_judge_indexed(judge, judge_prompts, call, resp_path, client, &mut index)
}

/// [`ask_judge`] with the responses file already indexed (`index`, brought up to date here): each try resumes
/// from and reads back only these prompts' lines. Verdicts come in `judge_prompts` order.
fn ask_judge_indexed(
    judge: &ModelConfig,
    judge_prompts: &[PromptRecord],
    call: &HelperCall,
    resp_path: &Path,
    client: &Client,
    index: &mut LineIndex<ResponseKey>,
) -> Result<(Vec<JudgeVerdict>, usize), Error> {
    // The highest try asked per judge id: replies of later tries in the file (from an earlier run with other
    // settings) are not this run's, so a rerun reads exactly what the first run read.
    let mut asked: std::collections::HashMap<&str, u32> = std::collections::HashMap::new();
    let read_verdicts = |asked: &std::collections::HashMap<&str, u32>,
                         index: &mut LineIndex<ResponseKey>|
     -> Result<Vec<JudgeVerdict>, Error> {
        index.update()?;
        let keys = judge_prompts.iter().flat_map(|p| {
            let tries = asked.get(p.id.as_str()).map_or(0, |&last| last + 1);
            (0..tries).map(|t| ResponseKey {
                id: p.id.clone(),
                sample_index: t,
            })
        });
        Ok(scoring::rift::parse_verdicts(&newest_of(index, keys)?))
    };
    let mut open: Vec<&PromptRecord> = judge_prompts.iter().collect();
    let mut sent = 0;
    for try_index in 0..call.tries {
        if open.is_empty() {
            break;
        }
        let batch: Vec<PromptRecord> = open
            .iter()
            .map(|p| PromptRecord {
                sample_index: try_index,
                ..(*p).clone()
            })
            .collect();
        tracing::info!(requests = batch.len(), judge_try = try_index + 1, judge = %judge.name, "Judging unsettled answers.");
        index.update()?;
        let on_file = lines_of(index, &batch)?;
        let s = client.chat_batch_resuming(judge, &batch, resp_path, on_file)?;
        sent += batch.len();
        for p in &open {
            asked.insert(p.id.as_str(), try_index);
        }
        if s.batch_pending > 0 {
            // Answers still to come from a batch job (vLLM's run_batch): the next run reads them before
            // asking again.
            tracing::warn!(pending = s.batch_pending, judge = %judge.name, "Judge requests wait for a batch job; rerun once it has run.");
            break;
        }
        let settled: std::collections::HashSet<String> = read_verdicts(&asked, index)?
            .into_iter()
            .filter(|v| v.verdict.is_some())
            .map(|v| v.id)
            .collect();
        open.retain(|p| !settled.contains(&p.id));
    }
    Ok((read_verdicts(&asked, index)?, sent))
}

/// What [`score`] needs.
#[derive(Debug, Clone, Copy)]
pub struct Score<'a> {
    pub prompts: &'a Path,
    pub responses: &'a Path,
    /// The verdicts of [`judge`]; without them the answers the pre-judge cannot settle are unjudged (labelled
    /// `pre_judge_only`).
    pub verdicts: Option<&'a Path>,
    /// Emit judge requests for pre-judge-settled answers too.
    pub judge_settled: bool,
    /// Where answer scores, prompt scores, judge requests and the summary go.
    pub files: &'a ModelPaths,
}

/// What [`score`] found, per (model, structure): `analysis::rift`'s Table 2 rows, wrong-question shares and reply
/// outcomes, plus how the pre-judge fared.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ScoreSummary {
    pub table2: Vec<StructureStats>,
    pub wrong_question: Vec<WrongQuestion>,
    pub outcomes: Vec<OutcomeCounts>,
    pub pre_judge: PreJudgeReport,
    pub judge_requests: usize,
    /// Verdicts were given (a judge was configured and ran).
    pub judge_configured: bool,
}

/// Prompts scored at a time: a chunk of the paper's prompts holds up to ≈ 150 000 answers.
pub const SCORE_CHUNK: usize = 1_024;

/// Scores the prompts file [`SCORE_CHUNK`] prompts at a time against the newest responses (held by key; the
/// prompts and the answers are never all in memory), handing each chunk's scores to `f` in prompts-file order.
/// Judge requests are de-duplicated across chunks (content-addressed ids: each appears in the first chunk that
/// needs it). Answers to prompts no longer in the prompts file are kept on file and not scored.
///
/// Three threads pass the chunks on, holding at most one chunk between two of them: one reads the prompts and their
/// responses, one scores, and this one hands the scores to `f` (which writes them), so on two cores reading the
/// next chunk and writing the last one overlap scoring this one. A stage that fails stops the others; the error
/// reported is the first in the chain's order that is not just a stage stopping because a later one had failed.
fn each_scored_chunk(
    prompts: &Path,
    responses: &Path,
    verdicts: Option<&std::collections::HashMap<&str, &JudgeVerdict>>,
    judge_settled: bool,
    mut f: impl FnMut(scoring::rift::Scored) -> Result<(), Error>,
) -> Result<(), Error> {
    use std::sync::mpsc::sync_channel;
    // The responses by prompt (byte offsets only), each chunk's read back when it is scored.
    let index = LineIndex::<ResponseKey>::build(responses, true)?;
    let matched = std::thread::scope(|s| -> Result<usize, Error> {
        let (read_tx, read_rx) = sync_channel::<(Vec<PromptLine>, Vec<ResponseReply>)>(1);
        let (score_tx, score_rx) = sync_channel::<Result<scoring::rift::Scored, Error>>(1);
        let index = &index;
        let reader = std::thread::Builder::new()
            .name("ifstress-score-read".to_owned())
            .spawn_scoped(s, move || -> Result<Option<usize>, Error> {
                let mut matched = 0usize;
                let mut stopped = false;
                schema::read_jsonl_chunks(prompts, SCORE_CHUNK, |chunk: Vec<PromptLine>| {
                    if stopped {
                        return Ok(());
                    }
                    let answered: Vec<ResponseReply> =
                        newest_of(index, chunk.iter().map(PromptLine::key))?;
                    matched += answered.len();
                    // A send fails only when the scorer stopped, with an error of its own or of `f`.
                    stopped = read_tx.send((chunk, answered)).is_err();
                    Ok::<(), Error>(())
                })
                .map_err(|e| match e {
                    Error::Records(e) => Error::Input(format!("reading prompts: {e}")),
                    e => e,
                })?;
                Ok((!stopped).then_some(matched))
            })
            .map_err(|e| Error::Input(format!("starting the scoring threads: {e}")))?;
        let scorer = std::thread::Builder::new()
            .name("ifstress-score".to_owned())
            .spawn_scoped(s, move || {
                let mut requested = std::collections::HashSet::new();
                for (chunk, answered) in read_rx {
                    let scored = scoring::rift::score_indexed(
                        &chunk,
                        &answered,
                        verdicts,
                        ScoreOptions { judge_settled },
                    )
                    .map(|mut scored| {
                        scored
                            .judge_requests
                            .retain(|r| requested.insert(r.id.clone()));
                        scored
                    })
                    .map_err(Error::from);
                    let failed = scored.is_err();
                    if score_tx.send(scored).is_err() || failed {
                        break;
                    }
                }
            })
            .map_err(|e| Error::Input(format!("starting the scoring threads: {e}")))?;
        let mut written = Ok(());
        for scored in score_rx {
            if let Err(e) = scored.and_then(&mut f) {
                written = Err(e);
                break;
            }
        }
        // Dropping the receiver (when `f` failed) stops the scorer, whose dropped receiver stops the reader.
        joined(scorer);
        let read = joined(reader);
        written?;
        match read? {
            Some(matched) => Ok(matched),
            None => Err(Error::Input(
                "scoring stopped before the prompts file was read".to_owned(),
            )),
        }
    })?;
    if index.len() > matched {
        tracing::info!(
            responses = %responses.display(),
            other = index.len() - matched,
            "Answers to prompts no longer in the prompts file are kept on file and not scored."
        );
    }
    Ok(())
}

/// A scoped thread's result; its panic goes on unwinding here.
fn joined<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
    handle
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// `rift score`: writes answer scores (JSONL, and the answer table as Parquet), prompt scores, judge requests and
/// the summary (JSON and Markdown), streaming: the answers are written chunk by chunk and the summary is
/// aggregated from the Parquet table.
pub fn score(s: &Score<'_>) -> Result<ScoreSummary, Error> {
    let verdicts: Option<Vec<JudgeVerdict>> = match s.verdicts {
        Some(p) => Some(schema::read_jsonl(p)?),
        None => None,
    };
    let by_id = verdicts.as_deref().map(scoring::rift::verdicts_by_id);
    let no_verdicts = std::collections::HashMap::new();
    let mut table = analysis::answer_table::AnswerTableWriter::create(&s.files.answer_table());
    let mut answers_out = schema::AtomicJsonl::create(&s.files.answer_scores())?;
    let mut requests_out = schema::AtomicJsonl::create(&s.files.judge_requests())?;
    let mut prompt_scores = Vec::new();
    let mut pre_judge = PreJudgeReport::default();
    each_scored_chunk(
        s.prompts,
        s.responses,
        by_id.as_ref(),
        s.judge_settled,
        |scored| {
            for a in &scored.answers {
                answers_out.append(a)?;
            }
            table.write(&scored.answers)?;
            add_report(
                &mut pre_judge,
                &scoring::rift::pre_judge_report_indexed(
                    &scored.answers,
                    by_id.as_ref().unwrap_or(&no_verdicts),
                ),
            );
            prompt_scores.extend(scored.prompts);
            for r in &scored.judge_requests {
                requests_out.append(r)?;
            }
            Ok(())
        },
    )?;
    answers_out.finish()?;
    let judge_requests = requests_out.finish()? as usize;
    let rows = table.finish()?;
    schema::write_jsonl_atomic(&s.files.prompt_scores(), &prompt_scores)?;
    let cfg = analysis::rift::RiftConfig::default();
    let RiftSummary {
        table2,
        wrong_question,
        outcomes,
        ..
    } = match rows {
        Some(_) => analysis::rift::aggregate(
            analysis::rift::scan_answers_parquet(&s.files.answer_table())?,
            Some(&analysis::rift::prompts_frame(&prompt_scores)?),
            &cfg,
        )?,
        None => analysis::rift::aggregate_records(&[], &prompt_scores, &cfg)?,
    };
    let summary = ScoreSummary {
        table2,
        wrong_question,
        outcomes,
        pre_judge,
        judge_requests,
        judge_configured: verdicts.is_some(),
    };
    let json = serde_json::to_vec_pretty(&summary).map_err(|e| Error::Output {
        path: s.files.summary_json(),
        message: e.to_string(),
    })?;
    schema::write_atomic(&s.files.summary_json(), &json)?;
    schema::write_atomic(&s.files.summary_md(), summary.to_markdown().as_bytes())?;
    Ok(summary)
}

/// Adds one chunk's pre-judge counts to the run's.
fn add_report(total: &mut PreJudgeReport, chunk: &PreJudgeReport) {
    total.answered += chunk.answered;
    total.settled_by_pre_judge += chunk.settled_by_pre_judge;
    total.judged_by_llm += chunk.judged_by_llm;
    total.pre_judge_only += chunk.pre_judge_only;
    total.judge_failed += chunk.judge_failed;
    total.both += chunk.both;
    total.agree += chunk.agree;
}

impl ScoreSummary {
    /// Answers left unjudged because the configured judge failed (0 without a judge: those are by design).
    pub fn judge_failed(&self) -> u64 {
        self.pre_judge.judge_failed
    }

    /// Answers whose judge failed as a share of the answers that went to the judge (0 without a judge): above
    /// [`crate::helper::UNJUDGED_ALERT_SHARE`] the stage is incomplete.
    pub fn judge_failure_share(&self) -> f64 {
        let p = &self.pre_judge;
        failure_share(p.judged_by_llm as usize, p.judge_failed as usize)
    }

    /// Unjudged answers over every (model, structure).
    pub fn unjudged(&self) -> i64 {
        self.table2.iter().map(|t| t.unjudged).sum()
    }

    /// One row per (model, structure), then a line on the pre-judge. Where answers are unjudged the accuracy
    /// columns show bounds (unjudged counted wrong … counted right).
    pub fn to_markdown(&self) -> String {
        use schema::table::{left, right};
        let mut table = schema::Table::new(vec![
            left("model"),
            left("structure"),
            right("prompts"),
            right("mean accuracy (%)"),
            right("median (%)"),
            right("unjudged"),
            right("incorrect"),
            right("wrong question (share of incorrect)"),
            right("flagged, judged correct"),
            right("empty"),
            right("malformed"),
            right("truncated"),
            right("failed"),
            right("stopped early"),
            right("ran long"),
        ]);
        let pct = |v: Option<f64>| analysis::tables::fmt_opt(v, 1);
        let bounds = |lo: Option<f64>, hi: Option<f64>| analysis::rift::fmt_bounds(lo, hi, 1);
        for t in &self.table2 {
            let same = |m: &str, s: &str| m == t.model && s == t.structure;
            let wq = self
                .wrong_question
                .iter()
                .find(|w| same(&w.model, &w.structure));
            let o = self.outcomes.iter().find(|o| same(&o.model, &o.structure));
            let count = |f: fn(&OutcomeCounts) -> i64| o.map_or(0, f);
            let (mean, median) = if t.unjudged > 0 {
                (
                    bounds(t.mean_lower, t.mean_upper),
                    bounds(t.median_lower, t.median_upper),
                )
            } else {
                (pct(t.mean), pct(t.median))
            };
            table.push(vec![
                t.model.clone(),
                t.structure.clone(),
                t.n_prompts.to_string(),
                mean,
                median,
                t.unjudged.to_string(),
                wq.map_or(0, |w| w.incorrect).to_string(),
                format!(
                    "{} ({})",
                    wq.map_or(0, |w| w.wrong_question),
                    wq.and_then(|w| w.share)
                        .map_or_else(|| "–".to_owned(), |s| format!("{s:.0}%"))
                ),
                wq.map_or(0, |w| w.wrong_question_correct).to_string(),
                count(|o| o.empty).to_string(),
                count(|o| o.malformed).to_string(),
                count(|o| o.truncated).to_string(),
                count(|o| o.failed).to_string(),
                count(|o| o.stopped_early).to_string(),
                count(|o| o.ran_long).to_string(),
            ]);
        }
        let mut md = table.to_markdown();
        let p = &self.pre_judge;
        let share = |a: u64, b: u64| {
            if b == 0 {
                0.0
            } else {
                a as f64 / b as f64 * 100.0
            }
        };
        let _ = writeln!(
            md,
            "\nPre-judge: settled {} of {} answered pairs ({:.1}%); LLM judge settled {}; {} unjudged; {} judge requests.",
            p.settled_by_pre_judge,
            p.answered,
            share(p.settled_by_pre_judge, p.answered),
            p.judged_by_llm,
            p.pre_judge_only,
            self.judge_requests
        );
        if !self.judge_configured && p.pre_judge_only > 0 {
            let _ = writeln!(
                md,
                "No judge configured: the {} answers the pre-judge could not settle are unjudged by design (accuracy shown as bounds).",
                p.pre_judge_only
            );
        } else if p.judge_failed > 0 {
            let _ = writeln!(
                md,
                "The judge gave no verdict after every try for {} answers ({:.1}% of those sent to it): they are unjudged.",
                p.judge_failed,
                self.judge_failure_share() * 100.0
            );
        }
        if p.both > 0 {
            let _ = writeln!(
                md,
                "Pre-judge vs LLM judge on {} pairs both judged: {} agree ({:.1}%).",
                p.both,
                p.agree,
                share(p.agree, p.both)
            );
        }
        md
    }
}
