//! RIFT scoring: answers aligned to their traversal and judged, written in chunks on three threads, and the
//! per-(model, structure) summary.

use super::*;

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
pub(super) fn each_scored_chunk(
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
pub(super) fn joined<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
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
