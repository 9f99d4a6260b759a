//! The judge check stages: control items with a known verdict, made from the run's own data, sent to a judge
//! blind (the same prompt, settings, retries, cache and resumable responses file as the real items), and the
//! judge's agreement with them ([`schema::judge_check`]).
//!
//! One entry, [`check`], for every judge: its [`Controls`] say what they are made from.
//!
//! - RIFT (`rift`): known-correct and known-incorrect answers to the run's questions (`scoring::judge_check`),
//!   each left unsettled by the pre-judge, through the RIFT judge's own retry loop (`crate::rift::ask_judge`).
//! - IFScale (`coherence`): known-incoherent reports made from the run's own replies (sentences shuffled across
//!   reports, a keyword run padded with filler, a report cut mid-sentence) and known-coherent hand-written ones
//!   (`datasets/ifscale-coherence/coherent.jsonl`), through the configured coherence rubric (the same text as the
//!   run's own attempts get, `[judges.coherence] prompt`).
//! - IFScale refusal judge (`refusal`): hand-written known reports and known refusals that the refusal detector
//!   cannot settle (`datasets/ifscale-refusal/controls.jsonl`), through the configured refusal rubric.
//!
//! Everything goes to the judge's own folder, `<run>/<bench>/judge-check/<judge>/` (`RunPaths::judge_check_dir`):
//! `controls.jsonl`, `judge-prompts.jsonl`, `judge-responses.jsonl`, `control-verdicts.jsonl`. No control item is
//! ever in a model's folder, so none reaches a score, table, figure or explorer list of results. [`assemble`]
//! turns the verdicts into the run's `judge-check.json` under the configured gate.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use inference_client::Client;
use schema::judge::JudgeRole;
use schema::judge_check::{
    CoherenceControl, ControlKind, ControlVerdict, JudgeCheck, JudgeCheckFile, RiftControl,
};
use schema::paths::ModelPaths;
use schema::rift::{JudgeRequest, PromptLine, Verdict};
use schema::{Message, PromptRecord};
use scoring::judge_check::{ControlPlan, SourceQuestion};

use crate::Error;
use crate::helper::{JudgeRef, ask_until_readable};

mod refusal;

use refusal::refusal;
pub use refusal::{MIN_REFUSAL_CONTROLS, RefusalControlReply, RefusalKind, refusal_controls};

/// The gate: thresholds, and whether a failed judge's verdicts are kept on purpose.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Gate {
    pub min_sensitivity: f64,
    pub min_specificity: f64,
    /// The largest share of the run's own items that may end without a readable verdict
    /// ([`crate::helper::UNJUDGED_ALERT_SHARE`]).
    pub max_unreadable_share: f64,
    pub keep_failed_judge: bool,
}

impl Default for Gate {
    fn default() -> Gate {
        Gate {
            min_sensitivity: 0.9,
            min_specificity: 0.9,
            max_unreadable_share: crate::helper::UNJUDGED_ALERT_SHARE,
            keep_failed_judge: false,
        }
    }
}

/// What a judge's controls are made from: each role's own source.
#[derive(Debug, Clone, Copy)]
pub enum Controls<'a> {
    /// RIFT: the run's prompts (their questions are the controls' questions) and dataset (their categories).
    Rift {
        prompts: &'a Path,
        dataset: &'a Path,
    },
    /// IFScale coherence: the hand-written coherent reports (JSONL of `{"id", "report"}`), the known-coherent
    /// controls and the material of the known-incoherent ones; a score at or above `threshold` accepts.
    Coherence { coherent: &'a Path, threshold: u8 },
    /// IFScale refusal: the hand-written control replies (JSONL of `{"id", "kind", "reply"}`).
    Refusal { replies: &'a Path },
}

/// What [`check`] needs: the judge exactly as the run's own items get it (prompt, settings, tries), what its
/// controls are made from, and where they go.
#[derive(Debug, Clone, Copy)]
pub struct Check<'a> {
    pub judge: JudgeRef<'a>,
    pub controls: Controls<'a>,
    pub plan: ControlPlan,
    /// The judge's check folder (`RunPaths::judge_check_dir` of `JudgeRole::check_name`).
    pub files: &'a ModelPaths,
    pub client: &'a Client,
}

/// A judge check stage: builds the judge's controls, asks the judge blind (unreadable replies asked again), writes
/// the verdicts; returns how many requests were sent or resumed. Controls that do not match the judge's role are
/// an input error.
pub fn check(c: &Check<'_>) -> Result<usize, Error> {
    c.judge.check()?;
    match (c.judge.role, c.controls) {
        (JudgeRole::RiftAnswers, Controls::Rift { prompts, dataset }) => rift(c, prompts, dataset),
        (
            JudgeRole::Coherence,
            Controls::Coherence {
                coherent,
                threshold,
            },
        ) => coherence(c, coherent, threshold),
        (JudgeRole::Refusal, Controls::Refusal { replies }) => refusal(c, replies),
        (role, _) => Err(Error::Input(format!(
            "the {} cannot be checked with another judge's controls",
            role.label()
        ))),
    }
}

/// The RIFT judge's check: controls from the run's questions.
fn rift(c: &Check<'_>, prompts: &Path, dataset: &Path) -> Result<usize, Error> {
    let categories: BTreeMap<u64, String> = crate::rift::load_dataset(dataset)?
        .into_iter()
        .map(|q| (q.row, q.category))
        .collect();
    let mut questions: BTreeMap<u64, SourceQuestion> = BTreeMap::new();
    schema::read_jsonl_chunks(prompts, 1_024, |chunk: Vec<PromptLine>| {
        for p in chunk {
            let m = &p.meta;
            for ((row, question), expected) in m.rows.iter().zip(&m.questions).zip(&m.expected) {
                questions.entry(*row).or_insert_with(|| SourceQuestion {
                    row: *row,
                    category: categories.get(row).cloned().unwrap_or_default(),
                    question: question.clone(),
                    expected: expected.clone(),
                });
            }
        }
        Ok::<(), Error>(())
    })
    .map_err(|e| match e {
        Error::Records(e) => Error::Input(format!("reading prompts: {e}")),
        e => e,
    })?;
    let questions: Vec<SourceQuestion> = questions.into_values().collect();
    let controls = scoring::judge_check::rift_controls(&questions, c.plan);
    schema::write_jsonl_atomic(&c.files.controls(), &controls)?;
    let requests: Vec<JudgeRequest> = controls
        .iter()
        .map(|k| JudgeRequest {
            id: k.id.clone(),
            question: k.question.clone(),
            expected: k.expected.clone(),
            given: k.given.clone(),
        })
        .collect();
    let prompts = scoring::rift::judge_prompts(&requests, c.judge.prompt, &c.judge.call.params());
    schema::write_jsonl_atomic(&c.files.judge_prompts(), &prompts)?;
    tracing::info!(controls = controls.len(), judge = %c.judge.model.name, "Checking the RIFT judge with control items.");
    let (verdicts, sent) = crate::rift::ask_judge(
        c.judge.model,
        &prompts,
        c.judge.call,
        &c.files.judge_responses(),
        c.client,
    )?;
    let by_id: BTreeMap<&str, Option<Verdict>> = verdicts
        .iter()
        .map(|v| (v.id.as_str(), v.verdict))
        .collect();
    let out: Vec<ControlVerdict> = controls
        .iter()
        .map(|k: &RiftControl| ControlVerdict {
            id: k.id.clone(),
            kind: k.kind,
            form: k.form.clone(),
            accepted: by_id
                .get(k.id.as_str())
                .copied()
                .flatten()
                .map(|v| v == Verdict::Correct),
            score: None,
        })
        .collect();
    schema::write_jsonl_atomic(&c.files.control_verdicts(), &out)?;
    Ok(sent)
}

/// One hand-written coherent report.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoherentReport {
    pub id: String,
    pub report: String,
}

/// Known-incoherent reports made at least (the floor), when the run has replies to make them from.
pub const MIN_INCOHERENT: usize = 20;

/// The coherence judge's check: the hand-written coherent reports and the incoherent ones made from them, scored
/// against the run's threshold.
fn coherence(c: &Check<'_>, coherent: &Path, threshold: u8) -> Result<usize, Error> {
    let coherent: Vec<CoherentReport> = schema::read_jsonl(coherent)
        .map_err(|e| Error::Input(format!("known-coherent reports: {e}")))?;
    let mut controls: Vec<CoherenceControl> = coherent
        .iter()
        .take(c.plan.per_kind)
        .map(|r| coherence_control(ControlKind::KnownCorrect, "hand_written", &r.id, &r.report))
        .collect();
    controls.extend(incoherent_reports(&coherent, c.plan));
    schema::write_jsonl_atomic(&c.files.controls(), &controls)?;
    let prompts: Vec<PromptRecord> = controls
        .iter()
        .map(|k| PromptRecord {
            id: k.id.clone(),
            messages: vec![Message::user(scoring::ifscale::coherence_judge_prompt(
                c.judge.prompt,
                &k.report,
            ))],
            sample_index: 0,
            params: c.judge.call.params(),
            extra: serde_json::Map::new(),
        })
        .collect();
    schema::write_jsonl_atomic(&c.files.judge_prompts(), &prompts)?;
    tracing::info!(controls = controls.len(), judge = %c.judge.model.name, "Checking the coherence judge with control reports.");
    let (read, sent) = ask_until_readable(
        c.client,
        c.judge.model,
        c.judge.call,
        &c.files.judge_responses(),
        &prompts,
        |text| scoring::ifscale::parse_coherence_verdict(text).map_err(|e| e.to_string()),
    )?;
    let out: Vec<ControlVerdict> = controls
        .iter()
        .zip(read)
        .map(|(k, r)| {
            let score = r.ok().map(|v| v.score);
            ControlVerdict {
                id: k.id.clone(),
                kind: k.kind,
                form: k.form.clone(),
                accepted: score.map(|s| s >= threshold),
                score,
            }
        })
        .collect();
    schema::write_jsonl_atomic(&c.files.control_verdicts(), &out)?;
    Ok(sent)
}

fn coherence_control(
    kind: ControlKind,
    form: &str,
    source: &str,
    report: &str,
) -> CoherenceControl {
    let key = format!("{form}\n{report}");
    CoherenceControl {
        id: format!(
            "judge-check-coherence-{}",
            &schema::sha256_hex(key.as_bytes())[..20]
        ),
        kind,
        form: form.to_owned(),
        source: source.to_owned(),
        report: report.to_owned(),
    }
}

/// A report's sentences (split after `.`, `!` or `?` followed by white space; headings and tags dropped).
fn sentences(text: &str) -> Vec<String> {
    let body: String = text
        .lines()
        .filter(|l| {
            let t = l.trim();
            !t.is_empty() && !t.starts_with('#') && !t.starts_with('<')
        })
        .collect::<Vec<_>>()
        .join(" ");
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = body.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if matches!(b, b'.' | b'!' | b'?') && bytes.get(i + 1).is_none_or(u8::is_ascii_whitespace) {
            let s = body[start..=i].trim();
            if s.split_whitespace().count() >= 4 {
                out.push(s.to_owned());
            }
            start = i + 1;
        }
    }
    out
}

/// A deterministic number from a seed and a counter.
fn pick(seed: u64, i: usize, what: &str) -> u64 {
    let hex = schema::sha256_hex(format!("{seed}\u{1f}{i}\u{1f}{what}").as_bytes());
    u64::from_str_radix(&hex[..16], 16).unwrap_or(0)
}

/// Filler that carries no meaning between the words of a keyword run.
const FILLER: [&str; 6] = [
    "and also",
    "as well as",
    "furthermore",
    "in addition to",
    "not to mention",
    "along with",
];

/// Known-incoherent reports made from the hand-written coherent ones, in three forms taken in turn: sentences of
/// several reports in a seeded shuffle (`shuffled_across_reports`), the longer words of a report as a run padded
/// with filler (`keyword_run`), a report's opening cut in the middle of its second sentence (`cut_mid_sentence`).
/// At least [`MIN_INCOHERENT`] (and `plan.per_kind` when larger) when a report has three sentences; none without.
///
/// They depend on the config alone (the reports file and the seed), never on a run's replies: a single run, a
/// rerun, shard 0 of a split run and its merge make the same controls, so the check is sent once and its
/// verdicts are the same wherever it ran. (They were once made from the run's replies, picked by their line in the
/// responses file: completion order in one run, shard order after a merge, so the controls and the judge's
/// specificity changed with the order the answers came in.) Each control's `source` names the reports it is made
/// from.
pub fn incoherent_reports(reports: &[CoherentReport], plan: ControlPlan) -> Vec<CoherenceControl> {
    let split: Vec<(&str, Vec<String>)> = reports
        .iter()
        .map(|r| (r.id.as_str(), sentences(&r.report)))
        .filter(|(_, s)| s.len() >= 3)
        .collect();
    if split.is_empty() {
        return Vec::new();
    }
    let want = plan.per_kind.max(MIN_INCOHERENT);
    let mut out: Vec<CoherenceControl> = Vec::new();
    let mut seen = BTreeSet::new();
    for i in 0..want * 4 {
        if out.len() == want {
            break;
        }
        let r = pick(plan.seed, i, "report") as usize % split.len();
        let (form, text, source) = match i % 3 {
            0 => {
                // Twelve sentences drawn from all reports, in a seeded order.
                let mut pool: Vec<(u64, &String)> = split
                    .iter()
                    .enumerate()
                    .flat_map(|(a, (_, s))| s.iter().enumerate().map(move |(b, t)| (a, b, t)))
                    .map(|(a, b, t)| (pick(plan.seed, i, &format!("s{a}.{b}")), t))
                    .collect();
                pool.sort();
                let text = pool
                    .iter()
                    .take(12)
                    .map(|(_, t)| t.as_str())
                    .collect::<Vec<_>>()
                    .join(" ");
                ("shuffled_across_reports", text, "every report".to_owned())
            }
            1 => {
                let words: Vec<&str> = split[r]
                    .1
                    .iter()
                    .flat_map(|s| s.split_whitespace())
                    .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
                    .filter(|w| w.chars().count() >= 6)
                    .collect();
                let mut text = String::new();
                for (j, w) in words.iter().take(60).enumerate() {
                    if j > 0 {
                        text.push(' ');
                        if j % 3 == 0 {
                            text.push_str(
                                FILLER[(pick(plan.seed, i, &j.to_string()) % 6) as usize],
                            );
                            text.push(' ');
                        }
                    }
                    text.push_str(&w.to_lowercase());
                }
                ("keyword_run", text, split[r].0.to_owned())
            }
            _ => {
                let s = &split[r].1;
                let second = &s[1];
                let words: Vec<&str> = second.split_whitespace().collect();
                let cut = words[..(words.len() / 2).max(1)].join(" ");
                (
                    "cut_mid_sentence",
                    format!("{} {cut}", s[0]),
                    split[r].0.to_owned(),
                )
            }
        };
        if text.split_whitespace().count() < 5 {
            continue;
        }
        let k = coherence_control(ControlKind::KnownIncorrect, form, &source, &text);
        if seen.insert(k.id.clone()) {
            out.push(k);
        }
    }
    out
}

/// One judge's check from its verdicts file under the gate (`None` when the stage wrote none). `real` is what the
/// judge made of the run's own items: more than [`Gate::max_unreadable_share`] of them without a readable verdict
/// fails the check too.
pub fn check_of(
    role: JudgeRole,
    judge: &str,
    files: &ModelPaths,
    run_root: &Path,
    gate: &Gate,
    real: crate::helper::JudgeTally,
) -> Result<Option<JudgeCheck>, Error> {
    let path = files.control_verdicts();
    if !path.is_file() {
        return Ok(None);
    }
    let verdicts: Vec<ControlVerdict> = schema::read_jsonl(&path)?;
    let (sensitivity, specificity) = scoring::judge_check::sensitivity_specificity(&verdicts);
    let figures_pass = scoring::judge_check::passes(
        &sensitivity,
        &specificity,
        gate.min_sensitivity,
        gate.min_specificity,
    );
    let requests = if files.judge_responses().is_file() {
        let mut n = 0;
        schema::read_jsonl_chunks(
            &files.judge_responses(),
            4_096,
            |c: Vec<serde::de::IgnoredAny>| {
                n += c.len();
                Ok::<(), Error>(())
            },
        )?;
        n
    } else {
        0
    };
    let controls = files.controls();
    let controls_file = controls
        .strip_prefix(run_root)
        .unwrap_or(&controls)
        .display()
        .to_string();
    let mut check = JudgeCheck {
        bench: role.bench(),
        role,
        judge: judge.to_owned(),
        sensitivity,
        specificity,
        min_sensitivity: gate.min_sensitivity,
        min_specificity: gate.min_specificity,
        items: real.items() as u64,
        unreadable: real.unreadable as u64,
        max_unreadable_share: gate.max_unreadable_share,
        passed: false,
        kept: false,
        requests,
        controls_file,
    };
    check.passed = figures_pass && !check.too_unreadable();
    check.kept = !check.passed && gate.keep_failed_judge;
    Ok(Some(check))
}

/// Writes the run's `judge-check.json` (atomically) from the checks; returns the file.
pub fn assemble(checks: Vec<JudgeCheck>, path: &Path) -> Result<JudgeCheckFile, Error> {
    let file = JudgeCheckFile {
        schema_version: schema::SCHEMA_VERSION,
        checks,
    };
    file.write(path)?;
    Ok(file)
}

/// What the judge-check table's note says below it (Markdown) or beside it (the report).
pub const CONTROL_NOTE: &str = "Control items are answers (RIFT) or reports (IFScale) whose verdict is known, made from this run's own data and sent to each judge blind among the real items; they are in no result. Intervals are Wilson 95 %. The RIFT paper checked its evaluator by hand: 98 % agreement on 100 items.";

/// The judge-check table: one row per judge.
pub fn table(file: &JudgeCheckFile) -> schema::Table {
    use schema::table::{left, right};
    let mut t = schema::Table::new(vec![
        left("benchmark"),
        left("judge"),
        left("role"),
        left("sensitivity (known-correct accepted)"),
        left("specificity (known-incorrect rejected)"),
        right("unusable replies"),
        right("run's items without a readable verdict"),
        left("thresholds"),
        right("requests"),
        left("result"),
    ]);
    for c in &file.checks {
        let result = match (c.passed, c.kept) {
            (true, _) => "passed".to_owned(),
            (false, true) => format!(
                "{}; verdicts kept on purpose",
                schema::judge_check::JUDGE_FAILED_MARK
            ),
            (false, false) => schema::judge_check::JUDGE_FAILED_MARK.to_owned(),
        };
        t.push(vec![
            c.bench.to_string(),
            c.judge.clone(),
            c.role.to_string(),
            c.sensitivity.describe(),
            c.specificity.describe(),
            (c.sensitivity.unjudged + c.specificity.unjudged).to_string(),
            format!("{} of {}", c.unreadable, c.items),
            format!(
                "≥ {:.0} % / ≥ {:.0} %",
                100.0 * c.min_sensitivity,
                100.0 * c.min_specificity
            ),
            c.requests.to_string(),
            result,
        ]);
    }
    t
}

/// The judge-check table in Markdown (one row per judge; the RIFT paper's figure beside it), empty without checks.
pub fn to_markdown(file: &JudgeCheckFile) -> String {
    if file.checks.is_empty() {
        return String::new();
    }
    format!(
        "## Judge check\n\n{}\n{CONTROL_NOTE}\n\n",
        table(file).to_markdown()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPLY: &str = "<report>\n# Results\n\nRevenue rose by a tenth this year across every segment. The board \
        approved a wider budget for research and development. Margins held steady despite higher input costs. \
        The outlook for the next two quarters remains positive and stable.\n</report>";

    #[test]
    fn incoherent_reports_come_in_three_forms_and_at_least_twenty() {
        let report = |id: &str, text: String| CoherentReport {
            id: id.to_owned(),
            report: text,
        };
        let replies = vec![
            report("a", REPLY.to_owned()),
            report("b", REPLY.replace("Revenue", "Income")),
        ];
        let plan = ControlPlan {
            per_kind: 5,
            seed: 0,
        };
        let out = incoherent_reports(&replies, plan);
        assert!(out.len() >= MIN_INCOHERENT, "{}", out.len());
        let forms: BTreeSet<&str> = out.iter().map(|c| c.form.as_str()).collect();
        assert_eq!(
            forms,
            BTreeSet::from(["cut_mid_sentence", "keyword_run", "shuffled_across_reports"])
        );
        assert!(out.iter().all(|c| c.kind == ControlKind::KnownIncorrect));
        assert_eq!(out, incoherent_reports(&replies, plan), "deterministic");
        let cut = out.iter().find(|c| c.form == "cut_mid_sentence").unwrap();
        assert!(!cut.report.ends_with('.'), "{}", cut.report);
        assert!(incoherent_reports(&[], plan).is_empty());
        // Each names the reports it was made from.
        assert!(
            out.iter()
                .all(|c| ["a", "b", "every report"].contains(&c.source.as_str()))
        );
        // Another seed makes other shuffles; the same seed the same controls, whatever else happened in the run.
        let other = incoherent_reports(&replies, ControlPlan { seed: 1, ..plan });
        assert_ne!(out, other);
    }

    #[test]
    fn the_committed_coherent_reports_make_enough_incoherent_controls() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../datasets/ifscale-coherence/coherent.jsonl");
        let reports: Vec<CoherentReport> = schema::read_jsonl(&path).unwrap();
        // The default `[judge-check] per-kind` is 50.
        let out = incoherent_reports(
            &reports,
            ControlPlan {
                per_kind: 50,
                seed: 0,
            },
        );
        assert_eq!(out.len(), 50);
        let ids: BTreeSet<&str> = out.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids.len(), 50, "every control is distinct");
    }

    #[test]
    fn the_committed_coherent_reports_parse_and_are_at_least_ten() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../datasets/ifscale-coherence/coherent.jsonl");
        let reports: Vec<CoherentReport> = schema::read_jsonl(&path).unwrap();
        assert!(reports.len() >= 10, "{}", reports.len());
        for r in &reports {
            assert!(sentences(&r.report).len() >= 5, "{}", r.id);
        }
    }
}
