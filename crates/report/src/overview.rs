//! What a run's files hold, counted from the files themselves (so a rerun that skipped every stage reports the
//! same numbers): responses per outcome, the first reply, IFScale samples and coherence checks (judged and
//! unjudged attempts), RIFT answers per verdict (unjudged ones on their own) and per judge, and the headline tables
//! of the run summary, whose RIFT accuracy is shown as bounds where answers are unjudged.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use schema::ifscale::{SampleScore, SampleStatus};
use schema::paths::RunPaths;
use schema::rift::{JudgeSource, Verdict};
use schema::table::{left, right};
use schema::{Outcome, ResponseRecord};

use crate::Error;

/// Counts of one model's responses file (every line, as written).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ResponseCounts {
    pub responses: usize,
    pub ok: usize,
    pub truncated: usize,
    pub failed: usize,
    /// Lines served from the cache in the run that wrote them.
    pub cached: usize,
}

/// Counts the lines of a responses file; a missing file counts nothing. Streams (a paper-scale responses file is
/// hundreds of MB) and reads only the fields counted; unreadable lines are skipped, as `read_jsonl_lenient` does.
pub fn count_responses(path: &Path) -> Result<ResponseCounts, Error> {
    #[derive(serde::Deserialize)]
    struct Line {
        outcome: Outcome,
        #[serde(default)]
        cached: bool,
    }
    let mut c = ResponseCounts::default();
    if !path.is_file() {
        return Ok(c);
    }
    each_line_lenient(path, |r: Line| {
        c.responses += 1;
        match r.outcome {
            Outcome::Ok => c.ok += 1,
            Outcome::Truncated => c.truncated += 1,
            Outcome::Failed => c.failed += 1,
        }
        if r.cached {
            c.cached += 1;
        }
        true
    })?;
    Ok(c)
}

/// Hands each readable line of a JSONL file to `f` (unreadable ones are skipped) until `f` returns false.
pub(crate) fn each_line_lenient<T: serde::de::DeserializeOwned>(
    path: &Path,
    mut f: impl FnMut(T) -> bool,
) -> Result<(), Error> {
    use std::io::BufRead;
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
    let mut line = String::new();
    loop {
        line.clear();
        if reader
            .read_line(&mut line)
            .map_err(|e| Error::io(path, e))?
            == 0
        {
            return Ok(());
        }
        if line.trim().is_empty() {
            continue;
        }
        if let Ok(r) = serde_json::from_str::<T>(&line)
            && !f(r)
        {
            return Ok(());
        }
    }
}

/// The example reply of a responses file (clipped to 1 500 characters): a label and the text. It is the non-empty
/// reply with the smallest prompt id and sample index (the latest line of that answer), chosen by its stable id
/// rather than its line: the lines come in completion order in one run and in shard order after a merge, and the
/// same answers must show the same example.
pub fn first_reply(path: &Path) -> Result<Option<(String, String)>, Error> {
    if !path.is_file() {
        return Ok(None);
    }
    let mut best: Option<ResponseRecord> = None;
    each_line_lenient(path, |r: ResponseRecord| {
        let non_empty = r.content.as_deref().is_some_and(|c| !c.trim().is_empty());
        let earlier = best
            .as_ref()
            .is_none_or(|b| (r.id.as_str(), r.sample_index) <= (b.id.as_str(), b.sample_index));
        if non_empty && earlier {
            best = Some(r);
        }
        true
    })?;
    Ok(best.and_then(first_text))
}

fn first_text(r: ResponseRecord) -> Option<(String, String)> {
    let text = r.content.filter(|c| !c.trim().is_empty())?;
    let mut clipped: String = text.chars().take(1500).collect();
    if clipped.len() < text.len() {
        clipped.push_str(" […]");
    }
    Some((format!("reply to {}", r.id), clipped))
}

/// IFScale denominators from the joined scores and attempts log: samples scored and failed, and the coherence
/// check (attempts judged, and attempts left unjudged because the judge failed).
pub fn ifscale_denominators(
    scores: &Path,
    attempts: &Path,
    judge_configured: bool,
) -> Result<Vec<(String, String)>, Error> {
    let rows: Vec<SampleScore> = schema::read_jsonl(scores)?;
    let failed = rows.iter().filter(|r| r.status.is_failure()).count();
    let judged = rows.iter().filter(|r| r.coherence.is_some()).count();
    let mut shown = vec![
        (
            "Samples".to_owned(),
            format!(
                "{} scored, {failed} failed (every attempt rejected; counted, never dropped){}",
                rows.len() - failed,
                outcome_counts(&rows)
            ),
        ),
        (
            "Coherence judged".to_owned(),
            if judge_configured {
                let t = harness::ifscale::judge_counts_from_attempts(attempts)?;
                let (attempts_judged, unjudged) = (t.judged, t.unjudged());
                format!(
                    "{judged} samples; {attempts_judged} attempts judged, {unjudged} unjudged (the judge gave no verdict after every try; they stand on the other rules)"
                )
            } else {
                "no judge model configured: the coherence check was skipped".to_owned()
            },
        ),
    ];
    shown.extend(refusal_judged(attempts)?);
    Ok(shown)
}

/// What the refusal judge decided, from the attempts log: a line only when it was asked about some attempt.
fn refusal_judged(attempts: &Path) -> Result<Option<(String, String)>, Error> {
    if !attempts.is_file() {
        return Ok(None);
    }
    let logs: Vec<schema::ifscale::AttemptLog> = schema::read_jsonl(attempts)?;
    let asked: Vec<&schema::ifscale::RefusalJudgement> = logs
        .iter()
        .filter_map(|l| l.refusal_judge.as_ref())
        .collect();
    if asked.is_empty() {
        return Ok(None);
    }
    let refused = asked.iter().filter(|j| j.refused == Some(true)).count();
    let unjudged = asked.iter().filter(|j| j.refused.is_none()).count();
    Ok(Some((
        "Refusal judged".to_owned(),
        format!(
            "{} attempts the refusal rules could not settle: {refused} judged refusals, {} attempts at the task, {unjudged} without a readable verdict (they stand as not refused)",
            asked.len(),
            asked.len() - refused - unjudged
        ),
    )))
}

/// The failed samples per outcome, as ": refused 3, truncated 1" (empty when none failed).
fn outcome_counts(rows: &[SampleScore]) -> String {
    let parts: Vec<String> = SampleStatus::ALL
        .into_iter()
        .filter(|s| s.is_failure())
        .filter_map(|s| {
            let n = rows.iter().filter(|r| r.status == s).count();
            (n > 0).then(|| format!("{} {n}", s.name()))
        })
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(": {}", parts.join(", "))
    }
}

/// The outcome table of an IFScale run (`analysis::ifscale::outcomes`: per model and N, accuracy over the scored
/// samples and over all samples, and each outcome's share) in Markdown, when some sample failed; empty otherwise.
fn outcomes_markdown(rows: &[SampleScore]) -> Result<String, Error> {
    let frame = analysis::ifscale::samples_frame(rows)?;
    let outcomes = analysis::ifscale::outcomes::outcome_rows(&frame)?;
    if !analysis::ifscale::outcomes::any_failure(&outcomes) {
        return Ok(String::new());
    }
    Ok(format!(
        "### Outcomes\n\n{}\n",
        analysis::ifscale::outcomes::table(&outcomes).to_markdown()
    ))
}

/// RIFT denominators from the joined answer scores: answers per verdict (unjudged on their own) and per judge.
pub fn rift_denominators(answers: &Path) -> Result<Vec<(String, String)>, Error> {
    /// The two fields counted (a paper-scale table has millions of rows: read in chunks, the rest skipped).
    #[derive(serde::Deserialize)]
    struct Row {
        verdict: Verdict,
        judged_by: JudgeSource,
    }
    let mut by: BTreeMap<String, usize> = BTreeMap::new();
    let (mut correct, mut incorrect, mut missing, mut unjudged, mut judge_failed) = (0, 0, 0, 0, 0);
    let mut rows = 0usize;
    schema::read_jsonl_chunks(answers, 65_536, |chunk: Vec<Row>| {
        rows += chunk.len();
        for r in &chunk {
            *by.entry(format!("{:?}", r.judged_by)).or_default() += 1;
            match r.verdict {
                Verdict::Correct => correct += 1,
                Verdict::Incorrect => incorrect += 1,
                Verdict::Missing => missing += 1,
                Verdict::Unjudged => unjudged += 1,
            }
            if r.verdict == Verdict::Unjudged && r.judged_by == JudgeSource::LlmUnusable {
                judge_failed += 1;
            }
        }
        Ok::<(), Error>(())
    })?;
    let judged: Vec<String> = by.iter().map(|(k, v)| format!("{k}: {v}")).collect();
    Ok(vec![
        (
            "Answers".to_owned(),
            format!("{rows} ({})", judged.join(", ")),
        ),
        (
            "Verdicts".to_owned(),
            format!(
                "{correct} correct, {incorrect} incorrect, {missing} missing, {unjudged} unjudged ({judge_failed} because the judge failed; unjudged answers are neither correct nor incorrect)"
            ),
        ),
    ])
}

/// The headline tables of a run summary: IFScale per model (samples, failed, mean accuracy, accuracy at the largest
/// N, the output cap and the replies that stopped at it) with the run's departures from the paper's setup
/// (`departures`: vocabulary, output caps), RIFT per (model, structure) from `analysis::rift`'s aggregation; a
/// benchmark without scores is left out.
pub fn headline_markdown(
    paths: &RunPaths,
    run_models: &[String],
    caps: &[crate::departures::OutputCap],
) -> Result<String, Error> {
    let mut md = String::new();
    if paths.ifscale_scores().is_file() {
        let rows: Vec<SampleScore> = schema::read_jsonl(&paths.ifscale_scores())?;
        let hits = crate::departures::cap_hits(&paths.ifscale_attempts())?;
        md.push_str("## IFScale\n\n");
        let mut t = schema::Table::new(vec![
            left("model"),
            right("samples"),
            right("failed"),
            right("mean accuracy (%)"),
            right("accuracy at the largest N (%)"),
            right("output cap (tokens)"),
            right("replies at the cap"),
        ]);
        let mut models: Vec<&str> = rows.iter().map(|r| r.model.as_str()).collect();
        models.sort_unstable();
        models.dedup();
        for m in models {
            let mine: Vec<_> = rows.iter().filter(|r| r.model == m).collect();
            let acc: Vec<f64> = mine.iter().filter_map(|r| r.accuracy).collect();
            let failed = mine.len() - acc.len();
            let max_n = mine.iter().map(|r| r.num_rules).max().unwrap_or(0);
            let at_max: Vec<f64> = mine
                .iter()
                .filter(|r| r.num_rules == max_n)
                .filter_map(|r| r.accuracy)
                .collect();
            let cap = caps
                .iter()
                .find(|c| c.model == m)
                .map_or_else(|| "–".to_owned(), |c| c.max_tokens.to_string());
            t.push(vec![
                m.to_owned(),
                mine.len().to_string(),
                failed.to_string(),
                fmt_mean(&acc),
                format!("{} (N = {max_n})", fmt_mean(&at_max)),
                cap,
                crate::departures::hits_cell(hits.get(m)),
            ]);
        }
        md.push_str(&t.to_markdown());
        md.push('\n');
        md.push_str(&outcomes_markdown(&rows)?);
        if let Some(s) = crate::departures::vocabulary_sentence(paths)? {
            let _ = writeln!(md, "{s}\n");
        }
        if let Some(s) = crate::departures::caps_sentence(run_models, caps, &hits, true) {
            let _ = writeln!(md, "{s}\n");
        }
    }
    if paths.rift_prompt_scores().is_file() && paths.rift_answer_scores().is_file() {
        // The answers are scanned from the per-model Parquet tables when the run lists them (never held).
        let rift_dir = paths
            .rift_answer_scores()
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let (answers, prompts) = analysis::rift::load_run(&rift_dir)?;
        let summary = analysis::rift::aggregate(
            answers,
            prompts.as_ref(),
            &analysis::rift::RiftConfig::default(),
        )?;
        md.push_str("## RIFT\n\n");
        let mut table = schema::Table::new(vec![
            left("model"),
            left("structure"),
            right("prompts"),
            right("mean accuracy (%)"),
            right("unjudged answers"),
            right("wrong-question answers"),
            right("flagged, judged correct"),
        ]);
        for t in &summary.table2 {
            let (wq, wq_correct) = summary
                .wrong_question
                .iter()
                .find(|w| w.model == t.model && w.structure == t.structure)
                .map_or((0, 0), |w| (w.wrong_question, w.wrong_question_correct));
            let mean = if t.unjudged > 0 {
                analysis::rift::fmt_bounds(t.mean_lower, t.mean_upper, 1)
            } else {
                t.mean.map_or_else(|| "–".to_owned(), |m| format!("{m:.1}"))
            };
            table.push(vec![
                t.model.clone(),
                t.structure.clone(),
                t.n_prompts.to_string(),
                mean,
                t.unjudged.to_string(),
                wq.to_string(),
                wq_correct.to_string(),
            ]);
        }
        md.push_str(&table.to_markdown());
        if summary
            .wrong_question
            .iter()
            .any(|w| w.wrong_question_correct > 0)
        {
            md.push_str("\nFlagged, judged correct: answers that are another question's expected answer and not their own, which the judge still called correct (a lenient judge, or an answer right for both questions); outside the wrong-question share.\n");
        }
        if summary.table2.iter().any(|t| t.unjudged > 0) {
            md.push_str("\nUnjudged answers (no judge verdict) are neither correct nor incorrect; where there are any, accuracy is shown as bounds: unjudged counted wrong … unjudged counted right.\n");
        }
        md.push('\n');
    }
    Ok(md)
}

fn fmt_mean(xs: &[f64]) -> String {
    if xs.is_empty() {
        return "–".to_owned();
    }
    format!("{:.1}", xs.iter().sum::<f64>() / xs.len() as f64)
}
