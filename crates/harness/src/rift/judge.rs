//! The RIFT LLM judge: the answers the pre-judge cannot settle, asked of a judge model until a verdict is read or
//! its tries run out.

use super::*;
use crate::helper::JudgeRef;

/// What [`judge`] needs.
#[derive(Debug, Clone, Copy)]
pub struct Judge<'a> {
    /// The RIFT judge with its prompt ({question}, {expected}, {given}) and request settings (`[judges.rift]`).
    pub judge: JudgeRef<'a>,
    pub prompts: &'a Path,
    pub responses: &'a Path,
    /// Also judge the answers the pre-judge settled (to measure their agreement).
    pub judge_settled: bool,
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
    j.judge.check()?;
    // The judge prompts, streamed to their file (de-duplicated across chunks by their content-addressed ids).
    let mut prompts_out = schema::AtomicJsonl::create(&j.files.judge_prompts())?;
    each_scored_chunk(j.prompts, j.responses, None, j.judge_settled, |scored| {
        for p in scoring::rift::judge_prompts(
            &scored.judge_requests,
            j.judge.prompt,
            &j.judge.call.params(),
        ) {
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
                let (verdicts, n) = ask_judge_indexed(
                    j.judge.model,
                    &chunk,
                    j.judge.call,
                    &resp_path,
                    j.client,
                    &mut index,
                )?;
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
        tracing::warn!(unjudged = summary.unjudged, tries = j.judge.call.tries, judge = %j.judge.model.name, "Judge requests without a verdict after every try: their answers are unjudged.");
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
    for try_index in 0..j.judge.call.tries {
        let is_open = |p: &PromptRecord| open.as_ref().is_none_or(|o| o.contains(&p.id));
        let mut n = 0;
        let s = j.client.chat_stream(j.judge.model, resp_path, |feed| {
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
        tracing::info!(requests = n, judge_try = try_index + 1, judge = %j.judge.model.name, sent = s.sent, "Judged unsettled answers.");
        *sent += n;
        if try_index > 0 {
            for id in open.iter().flatten() {
                asked.insert(id.clone(), try_index);
            }
        }
        if try_index + 1 == j.judge.call.tries {
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
pub(super) fn judge_index(resp_path: &Path) -> Result<LineIndex<ResponseKey>, Error> {
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
pub(super) fn ask_judge_indexed(
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
