//! IFScale generation: the retry rules, the coherence judge and its retries, failed samples, resume.

use std::path::Path;

use harness::helper::{HelperCall, JudgeRef};
use harness::ifscale::{Generation, GenerationSummary, generate};
use inference_client::ModelConfig;
use schema::ifscale::{AttemptLog, MatchMode, PromptMeta, RejectReason, SampleScore, SampleStatus};
use schema::paths::ModelPaths;
use schema::{Message, PromptRecord};

use crate::support::{client, mock, model};

const KEYWORDS: [&str; 3] = ["revenue", "margin", "growth"];

/// A report of more than twenty words with `revenue` and `margin` but not the third keyword.
const GOOD: &str = "Our revenue rose this year because the team widened the margin on every product line, \
    and the board expects the same discipline to carry the company through the next two quarters";
/// A short stand-in rubric for the tests that are not about its text.
const RUBRIC: &str = "Grade the report's coherence from 1 to 10.";

/// Ten bare words: the model listed the constraints (rule a).
const LIST: &str = "revenue, margin, growth, alpha, beta, gamma, delta, omega, sigma, kappa";

/// An IFScale prompt whose message carries `marker` (what the mock's script keys on).
fn prompt(id: &str, marker: &str) -> PromptRecord {
    let meta = PromptMeta {
        benchmark: "ifscale".to_owned(),
        num_rules: 3,
        seed: 0,
        sampling: schema::ifscale::SamplingMode::Paper,
        strata: None,
        keywords: KEYWORDS.map(str::to_owned).to_vec(),
        template_sha256: String::new(),
        vocab_sha256: String::new(),
    };
    let serde_json::Value::Object(extra) = serde_json::to_value(meta).unwrap() else {
        unreachable!("a struct serializes to an object")
    };
    PromptRecord {
        id: id.to_owned(),
        messages: vec![Message::user(format!(
            "{marker} Write a business report using: revenue, margin, growth."
        ))],
        sample_index: 0,
        params: Default::default(),
        extra,
    }
}

/// The coherence judge of a generation: `judge` with `rubric` and `call`.
fn coherence<'a>(
    judge: Option<&'a ModelConfig>,
    call: &'a HelperCall,
    rubric: &'a str,
) -> Option<JudgeRef<'a>> {
    judge.map(|model| JudgeRef {
        role: schema::judge::JudgeRole::Coherence,
        model,
        prompt: rubric,
        call,
    })
}

fn run(
    prompts: &[PromptRecord],
    model: &ModelConfig,
    judge: Option<&ModelConfig>,
    dir: &Path,
) -> GenerationSummary {
    let files = ModelPaths::in_dir(&dir.join("out"));
    generate(&Generation {
        prompts,
        model,
        coherence: coherence(judge, &HelperCall::judge(), RUBRIC),
        refusal: None,
        constraint_list: Default::default(),
        coherence_threshold: 6,
        max_attempts: 3,
        mode: MatchMode::Paper,
        span: Default::default(),
        files: &files,
        client: &client(dir),
    })
    .expect("generation")
}

/// One attempt of one prompt, without a judge.
fn generate_once(
    p: &PromptRecord,
    model: &ModelConfig,
    dir: &Path,
) -> Result<GenerationSummary, harness::Error> {
    generate(&Generation {
        prompts: std::slice::from_ref(p),
        model,
        coherence: coherence(None, &HelperCall::judge(), RUBRIC),
        refusal: None,
        constraint_list: Default::default(),
        coherence_threshold: 6,
        max_attempts: 1,
        mode: MatchMode::Paper,
        span: Default::default(),
        files: &ModelPaths::in_dir(dir),
        client: &client(dir),
    })
}

fn scores(dir: &Path) -> Vec<SampleScore> {
    schema::read_jsonl(&ModelPaths::in_dir(&dir.join("out")).scores()).unwrap()
}

fn attempts(dir: &Path, id: &str) -> Vec<AttemptLog> {
    let all: Vec<AttemptLog> =
        schema::read_jsonl(&ModelPaths::in_dir(&dir.join("out")).attempts()).unwrap();
    all.into_iter().filter(|l| l.id == id).collect()
}

#[test]
fn a_constraint_list_is_retried_and_a_truncated_sample_fails_after_every_attempt() {
    let mock = mock(&[("[list-then-report]", &[LIST, GOOD]), ("[cut]", &[GOOD])]);
    let dir = tempfile::tempdir().unwrap();
    let prompts = [
        prompt("listed", "[list-then-report]"),
        prompt("cut", "[cut] [length]"),
    ];
    let s = run(&prompts, &model(&mock, "writer"), None, dir.path());

    assert_eq!((s.samples, s.accepted, s.failed, s.attempts), (2, 1, 1, 5));
    assert_eq!(s.rejected.get("constraint_list"), Some(&1));
    assert_eq!(s.rejected.get("truncated"), Some(&3));
    assert!(!s.judge_configured);
    assert_eq!((s.judged, s.unjudged), (0, 0));
    // Attempts 1 and 2 of both samples, attempt 3 of the truncated one only.
    assert_eq!(mock.requests(), 5);

    let listed = attempts(dir.path(), "listed");
    assert_eq!(
        listed
            .iter()
            .map(|l| (l.attempt, l.accepted, l.reason))
            .collect::<Vec<_>>(),
        vec![
            (1, false, Some(RejectReason::ConstraintList)),
            (2, true, None)
        ]
    );
    let cut = attempts(dir.path(), "cut");
    assert!(
        cut.iter()
            .all(|l| !l.accepted && l.reason == Some(RejectReason::Truncated))
    );
    assert_eq!(cut.len(), 3);

    let scores = scores(dir.path());
    let listed = scores.iter().find(|s| s.id == "listed").unwrap();
    assert_eq!(listed.status, SampleStatus::Scored);
    assert_eq!((listed.exact, listed.omitted, listed.attempts), (2, 1, 2));
    let cut = scores.iter().find(|s| s.id == "cut").unwrap();
    assert_eq!(cut.status, SampleStatus::Truncated);
    assert_eq!((cut.accuracy, cut.attempts), (None, 3));
}

#[test]
fn the_coherence_judge_rejects_low_scores_and_is_asked_again_when_its_answer_does_not_parse() {
    let low = format!("{GOOD} JUDGE-LOW");
    let garbled = format!("{GOOD} JUDGE-GARBLED");
    let never = format!("{GOOD} JUDGE-NEVER");
    let mock = mock(&[
        ("JUDGE-LOW", &[r#"{"reason": "word salad", "score": 2}"#]),
        (
            "JUDGE-GARBLED",
            &["I cannot decide.", r#"{"reason": "clear", "score": 8}"#],
        ),
        ("JUDGE-NEVER", &["No idea."]),
        ("[incoherent-first]", &[&low, &garbled]),
        ("[judge-silent]", &[&never]),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let prompts = [
        prompt("incoherent", "[incoherent-first]"),
        prompt("silent", "[judge-silent]"),
    ];
    let judge = model(&mock, "judge");
    let s = run(&prompts, &model(&mock, "writer"), Some(&judge), dir.path());

    assert_eq!((s.samples, s.accepted, s.failed, s.attempts), (2, 2, 0, 3));
    assert_eq!(s.rejected.get("incoherent"), Some(&1));
    // Judged: the low, garbled-then-clear attempts; unjudged: the silent one (the judge failed every try).
    assert!(s.judge_configured);
    assert_eq!((s.judged, s.unjudged), (2, 1));
    assert!((s.judge_failure_share() - 1.0 / 3.0).abs() < 1e-12);
    // Generation: 2 + 1. Judge: attempt 1 asks about both (1 + the silent one's 3 tries), attempt 2 asks twice.
    assert_eq!(mock.requests(), 3 + 4 + 2);

    let incoherent = attempts(dir.path(), "incoherent");
    assert_eq!(incoherent.len(), 2);
    assert_eq!(
        (
            incoherent[0].accepted,
            incoherent[0].reason,
            incoherent[0].coherence
        ),
        (false, Some(RejectReason::Incoherent), Some(2))
    );
    assert_eq!(
        (
            incoherent[1].accepted,
            incoherent[1].coherence,
            incoherent[1].judge_error.as_ref()
        ),
        (true, Some(8), None)
    );
    // No usable verdict after every try: the attempt stands on the other rules, and the log says why.
    let silent = attempts(dir.path(), "silent");
    assert_eq!(silent.len(), 1);
    assert!(silent[0].accepted);
    assert_eq!(silent[0].coherence, None);
    assert!(
        matches!(&silent[0].judge_error, Some(schema::judge::JudgeFailure::Unreadable(e)) if e.contains("No idea")),
        "{:?}",
        silent[0].judge_error
    );

    let scores = scores(dir.path());
    let incoherent = scores.iter().find(|s| s.id == "incoherent").unwrap();
    assert_eq!((incoherent.coherence, incoherent.attempts), (Some(8.0), 2));
}

#[test]
fn attempts_whose_configured_judge_never_answers_are_counted_unjudged() {
    let mock = mock(&[
        ("JUDGE-OK", &[r#"{"reason": "fine", "score": 9}"#]),
        ("JUDGE-NEVER", &["No idea."]),
        ("[judged]", &[&format!("{GOOD} JUDGE-OK")]),
        ("[silent]", &[&format!("{GOOD} JUDGE-NEVER")]),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let prompts = [prompt("judged", "[judged]"), prompt("silent", "[silent]")];
    let files = ModelPaths::in_dir(&dir.path().join("out"));
    let call = HelperCall {
        tries: 2,
        max_tokens: 50,
        ..HelperCall::judge()
    };
    let s = generate(&Generation {
        prompts: &prompts,
        model: &model(&mock, "writer"),
        coherence: coherence(Some(&model(&mock, "judge")), &call, RUBRIC),
        refusal: None,
        constraint_list: Default::default(),
        coherence_threshold: 6,
        max_attempts: 3,
        mode: MatchMode::Paper,
        span: Default::default(),
        files: &files,
        client: &client(dir.path()),
    })
    .unwrap();
    // Both attempts stand (the silent one on the other rules), one judged and one unjudged after 2 tries.
    assert_eq!((s.samples, s.accepted, s.attempts), (2, 2, 2));
    assert_eq!((s.judged, s.unjudged), (1, 1));
    assert_eq!(s.judge_failure_share(), 0.5);
    assert!(s.judge_failure_share() > harness::helper::UNJUDGED_ALERT_SHARE);
    assert_eq!(mock.requests(), 2 + 2 + 1);
    // The same counts from the files, for a stage that was up to date and skipped.
    // "No idea." is a reply without a readable score: the judge's own failure, not a failed request.
    assert_eq!(
        harness::ifscale::judge_counts_from_attempts(&files.attempts()).unwrap(),
        harness::helper::JudgeTally {
            judged: 1,
            failed: 0,
            unreadable: 1
        }
    );
}

#[test]
fn a_judge_max_tokens_of_zero_is_a_usage_error_and_nothing_is_sent() {
    let mock = mock(&[]);
    let dir = tempfile::tempdir().unwrap();
    let call = HelperCall {
        max_tokens: 0,
        ..HelperCall::judge()
    };
    let err = generate(&Generation {
        prompts: &[prompt("p", "")],
        model: &model(&mock, "writer"),
        coherence: coherence(Some(&model(&mock, "judge")), &call, RUBRIC),
        refusal: None,
        constraint_list: Default::default(),
        coherence_threshold: 6,
        max_attempts: 1,
        mode: MatchMode::Paper,
        span: Default::default(),
        files: &ModelPaths::in_dir(dir.path()),
        client: &client(dir.path()),
    })
    .unwrap_err();
    assert!(err.is_usage(), "{err}");
    assert!(
        err.to_string()
            .contains("[judges.coherence]: field `max-tokens`"),
        "{err}"
    );
    assert_eq!(mock.requests(), 0);
}

#[test]
fn a_second_run_sends_nothing_and_writes_the_same_files() {
    let mock = mock(&[
        ("JUDGE-OK", &[r#"{"reason": "fine", "score": 9}"#]),
        ("[list-then-report]", &[LIST, &format!("{GOOD} JUDGE-OK")]),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let prompts = [prompt("p", "[list-then-report]")];
    let (writer, judge) = (model(&mock, "writer"), model(&mock, "judge"));
    let first = run(&prompts, &writer, Some(&judge), dir.path());
    let sent = mock.requests();
    assert_eq!(sent, 3);
    let files = ModelPaths::in_dir(&dir.path().join("out"));
    let read = |p: &Path| std::fs::read(p).unwrap();
    let before = [
        files.scores(),
        files.attempts(),
        files.labels(),
        files.responses(),
    ]
    .map(|p| read(&p));

    let second = run(&prompts, &writer, Some(&judge), dir.path());
    assert_eq!(mock.requests(), sent, "a resumed run sends nothing");
    assert_eq!(first, second);
    let after = [
        files.scores(),
        files.attempts(),
        files.labels(),
        files.responses(),
    ]
    .map(|p| read(&p));
    assert_eq!(before, after);
}

#[test]
fn a_prompt_without_ifscale_fields_is_an_input_error_and_nothing_is_sent() {
    let mock = mock(&[]);
    let dir = tempfile::tempdir().unwrap();
    let mut p = prompt("bare", "");
    p.extra.clear();
    let err = generate_once(&p, &model(&mock, "writer"), dir.path()).unwrap_err();
    assert!(err.is_usage(), "{err}");
    assert!(
        err.to_string().contains("not an IFScale prompt record"),
        "{err}"
    );
    assert_eq!(mock.requests(), 0);
}

#[test]
fn a_missing_api_key_is_a_usage_error() {
    let mock = mock(&[]);
    let dir = tempfile::tempdir().unwrap();
    let mut writer = model(&mock, "writer");
    writer.api_key_env = Some("IFSTRESS_HARNESS_TEST_KEY_NEVER_SET".to_owned());
    let err = generate_once(&prompt("p", ""), &writer, dir.path()).unwrap_err();
    assert!(
        matches!(
            err,
            harness::Error::Client(inference_client::Error::MissingKey { .. })
        ),
        "{err}"
    );
    assert!(err.is_usage());
    assert_eq!(mock.requests(), 0);
}

#[test]
fn with_batch_jobs_the_coherence_judge_gives_the_same_verdicts() {
    let low = format!("{GOOD} JUDGE-LOW");
    let garbled = format!("{GOOD} JUDGE-GARBLED");
    let mock = mock(&[
        ("JUDGE-LOW", &[r#"{"reason": "word salad", "score": 2}"#]),
        (
            "JUDGE-GARBLED",
            &["I cannot decide.", r#"{"reason": "clear", "score": 8}"#],
        ),
        ("[incoherent-first]", &[&low, &garbled]),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let prompts = [prompt("incoherent", "[incoherent-first]")];
    let mut judge = model(&mock, "judge");
    judge.batch = Some(inference_client::BatchMode::Openai);
    let mut o = crate::support::opts(dir.path());
    o.progress = false;
    o.batch = Some(inference_client::BatchOptions {
        poll_interval: std::time::Duration::from_millis(5),
        ..Default::default()
    });
    let client = inference_client::Client::new(o).unwrap();
    let files = ModelPaths::in_dir(&dir.path().join("out"));
    let s = generate(&Generation {
        prompts: &prompts,
        model: &model(&mock, "writer"),
        coherence: coherence(Some(&judge), &HelperCall::judge(), RUBRIC),
        refusal: None,
        constraint_list: Default::default(),
        coherence_threshold: 6,
        max_attempts: 3,
        mode: MatchMode::Paper,
        span: Default::default(),
        files: &files,
        client: &client,
    })
    .unwrap();
    assert_eq!((s.accepted, s.attempts, s.judged, s.unjudged), (1, 2, 2, 0));
    assert_eq!(s.rejected.get("incoherent"), Some(&1));
    // Generation one by one; the judge as batch jobs: attempt 1 once, attempt 2 twice (garbled, then clear).
    assert_eq!(mock.requests(), 2);
    let b = mock.batch_stats();
    assert_eq!((b.batches, b.lines), (3, 3));
    let log = attempts(dir.path(), "incoherent");
    assert_eq!(
        log.iter().map(|l| l.coherence).collect::<Vec<_>>(),
        [Some(2), Some(8)]
    );
}

/// The coherence rubric as the judge got it before it moved to `configs/prompts/ifscale-coherence.txt` (the
/// `COHERENCE_RUBRIC` constant of `scoring::ifscale`), kept here to prove the file changes no byte.
const RUBRIC_BEFORE_THE_FILE: &str = "\
You are grading how coherent a business report is. Judge only whether it reads as a sensible, \
well-organized business document; ignore whether its facts are true and whether it uses any particular words.

Scores:
10 Pristine: polished and well organized; every sentence is purposeful and flows from the one before.
9 Excellent: clear structure and logical flow, with at most a stray awkward phrase.
8 Very good: well organized and sensible; a few clumsy sentences or slightly forced word choices.
7 Good: clearly a business report; some padding, repetition or abrupt transitions, but the argument holds.
6 Acceptable: a plausible business report overall, although noticeable passages are forced, generic or loosely connected.
5 Uneven: report-like structure, but many sentences exist only to carry words and the thread of the argument is often lost.
4 Weak: long stretches of stilted or contradictory text; sections barely relate to each other.
3 Poor: mostly strings of loosely related phrases or lists dressed as sentences; little sense can be made of it.
2 Broken: fragments, heavy repetition or word lists with only traces of a report.
1 Gibberish: no meaningful content; random words, endless repetition or unreadable text.

Reply with one JSON object and nothing else: {\"reason\": \"<one sentence>\", \"score\": <integer 1-10>}";

/// SHA-256 of the judge prompt for [`GOOD`] as the code built it before the rubric became a file (computed with
/// that code): the cached verdicts of earlier runs are keyed on these bytes.
const GOOD_JUDGE_PROMPT_SHA256: &str =
    "90189ed1a8b027a724ebb691f32e1d087d88dd1cc082eeee50f5f957e5e12a89";

fn default_rubric() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join("configs/prompts/ifscale-coherence.txt");
    harness::ifscale::read_rubric(&path, "coherence").expect("the default coherence rubric")
}

fn sha256_hex(text: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn the_default_coherence_rubric_file_gives_the_judge_todays_prompt_byte_for_byte() {
    let rubric = default_rubric();
    assert_eq!(rubric, RUBRIC_BEFORE_THE_FILE);
    let judge_prompt = scoring::ifscale::coherence_judge_prompt(&rubric, &format!("\n{GOOD}  \n"));
    assert_eq!(
        judge_prompt,
        format!(
            "{RUBRIC_BEFORE_THE_FILE}\n\n<report>\n{GOOD}\n</report>\n\nAnswer with the JSON object only."
        )
    );
    assert_eq!(sha256_hex(&judge_prompt), GOOD_JUDGE_PROMPT_SHA256);

    // Through the generation loop: the mock echoes the judge's message ("Reply to: " + it), so the judge's
    // responses file shows the exact bytes it was sent.
    let mock = mock(&[("[plain]", &[GOOD])]);
    let dir = tempfile::tempdir().unwrap();
    let files = ModelPaths::in_dir(&dir.path().join("out"));
    let call = HelperCall {
        tries: 1,
        ..HelperCall::judge()
    };
    generate(&Generation {
        prompts: &[prompt("p", "[plain]")],
        model: &model(&mock, "writer"),
        coherence: coherence(Some(&model(&mock, "judge")), &call, &rubric),
        refusal: None,
        constraint_list: Default::default(),
        coherence_threshold: 6,
        max_attempts: 1,
        mode: MatchMode::Paper,
        span: Default::default(),
        files: &files,
        client: &client(dir.path()),
    })
    .unwrap();
    let judged = schema::read_latest_responses(&files.coherence_judge()).unwrap();
    let echoed: Vec<&str> = judged.iter().filter_map(|r| r.content.as_deref()).collect();
    let sent = echoed
        .iter()
        .map(|c| c.strip_prefix("Reply to: ").expect("the mock's echo"))
        .collect::<Vec<_>>();
    assert_eq!(sent.len(), 1);
    assert_eq!(sha256_hex(sent[0]), GOOD_JUDGE_PROMPT_SHA256);
}

#[test]
fn an_empty_coherence_rubric_is_a_usage_error_and_nothing_is_sent() {
    let mock = mock(&[]);
    let dir = tempfile::tempdir().unwrap();
    let err = generate(&Generation {
        prompts: &[prompt("p", "")],
        model: &model(&mock, "writer"),
        coherence: coherence(Some(&model(&mock, "judge")), &HelperCall::judge(), " \n"),
        refusal: None,
        constraint_list: Default::default(),
        coherence_threshold: 6,
        max_attempts: 1,
        mode: MatchMode::Paper,
        span: Default::default(),
        files: &ModelPaths::in_dir(dir.path()),
        client: &client(dir.path()),
    })
    .unwrap_err();
    assert!(err.is_usage(), "{err}");
    assert!(
        err.to_string()
            .contains("[judges.coherence]: field `prompt`"),
        "{err}"
    );
    assert_eq!(mock.requests(), 0);
    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, "\n\n").unwrap();
    let err = harness::ifscale::read_rubric(&empty, "coherence").unwrap_err();
    assert!(err.to_string().contains("empty.txt"), "{err}");
    let err =
        harness::ifscale::read_rubric(&dir.path().join("absent.txt"), "coherence").unwrap_err();
    assert!(err.to_string().contains("absent.txt"), "{err}");
}

#[test]
fn the_judge_check_controls_get_the_configured_rubric() {
    let mock = mock(&[]);
    let dir = tempfile::tempdir().unwrap();
    let coherent = dir.path().join("coherent.jsonl");
    std::fs::write(
        &coherent,
        format!(
            "{{\"id\": \"c1\", \"report\": \"{GOOD}\"}}\n{{\"id\": \"c2\", \"report\": \"A second report.\"}}\n\
             {{\"id\": \"c3\", \"report\": \"Sales grew in every region this year. The new plant opened on time and on \
             budget. Costs fell as the supply contracts were renewed. We expect the same pace next year.\"}}\n"
        ),
    )
    .unwrap();
    let files = ModelPaths::in_dir(&dir.path().join("check"));
    let rubric = "A configured rubric, not the default one.";
    let call = HelperCall {
        tries: 1,
        ..HelperCall::judge()
    };
    harness::judge_check::check(&harness::judge_check::Check {
        judge: JudgeRef {
            role: schema::judge::JudgeRole::Coherence,
            model: &model(&mock, "judge"),
            prompt: rubric,
            call: &call,
        },
        controls: harness::judge_check::Controls::Coherence {
            coherent: &coherent,
            threshold: 6,
        },
        plan: scoring::judge_check::ControlPlan {
            per_kind: 5,
            seed: 0,
        },
        files: &files,
        client: &client(dir.path()),
    })
    .unwrap();
    let controls: Vec<schema::judge_check::CoherenceControl> =
        schema::read_jsonl(&files.controls()).unwrap();
    let prompts: Vec<PromptRecord> = schema::read_jsonl(&files.judge_prompts()).unwrap();
    // Three known-coherent reports, and the known-incoherent ones made from the one with three sentences or more.
    assert_eq!(controls.len(), prompts.len());
    assert!(controls.len() > 3, "{}", controls.len());
    assert_eq!(
        controls
            .iter()
            .filter(|k| k.kind == schema::judge_check::ControlKind::KnownCorrect)
            .count(),
        3
    );
    for (k, p) in controls.iter().zip(&prompts) {
        assert_eq!(
            p.messages,
            vec![Message::user(scoring::ifscale::coherence_judge_prompt(
                rubric, &k.report
            ))]
        );
    }
    // The same function gives the run's own attempts their prompt (see the byte-for-byte test above), so the
    // controls and the real items share one configured rubric.
}

#[test]
fn under_run_in_report_a_report_with_a_run_of_ten_bare_words_is_retried_and_under_whole_reply_accepted()
 {
    let with_run = format!(
        "{GOOD}. Key terms: revenue, audit, equity, tax, debt, ROI, ESG, asset, margin, yield."
    );
    for (rule, expected) in [
        (
            schema::ifscale::ConstraintListRule::WholeReply,
            vec![(1, true, None)],
        ),
        (
            schema::ifscale::ConstraintListRule::RunInReport,
            vec![
                (1, false, Some(RejectReason::ConstraintList)),
                (2, true, None),
            ],
        ),
    ] {
        let mock = mock(&[("[run-then-report]", &[&with_run, GOOD])]);
        let dir = tempfile::tempdir().unwrap();
        let files = ModelPaths::in_dir(&dir.path().join("out"));
        generate(&Generation {
            prompts: &[prompt("p", "[run-then-report]")],
            model: &model(&mock, "writer"),
            coherence: None,
            refusal: None,
            constraint_list: rule,
            coherence_threshold: 6,
            max_attempts: 3,
            mode: MatchMode::Paper,
            span: Default::default(),
            files: &files,
            client: &client(dir.path()),
        })
        .unwrap();
        let got: Vec<_> = attempts(dir.path(), "p")
            .iter()
            .map(|l| (l.attempt, l.accepted, l.reason))
            .collect();
        assert_eq!(got, expected, "{}", rule.name());
    }
}
