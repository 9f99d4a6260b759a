//! The RIFT judge's configured calls and retries, and unjudged answers: a reply that cannot be read is asked again
//! with the next sample index; an answer whose judge never gives a verdict is unjudged (never correct, never
//! incorrect, counted on its own); without a judge, what the pre-judge cannot settle is unjudged by design.

use harness::helper::{HelperCall, UNJUDGED_ALERT_SHARE};
use harness::rift::{Judge, JudgeSummary, Score, ScoreSummary, judge, run, score};
use mock_provider::MockServer;
use schema::paths::ModelPaths;
use schema::rift::{AnswerScore, JudgeSource, JudgeVerdict, PromptScore, Structure, Verdict};
use schema::{PromptRecord, ResponseRecord};

use crate::rift::{TEMPLATE, prompt};
use crate::support::{client, mock, model};

/// One linear prompt answered by the mock's scripted reply to `marker`, then judged with `call` (or not at all)
/// and scored.
struct Fixture {
    mock: MockServer,
    dir: tempfile::TempDir,
    prompts: Vec<PromptRecord>,
}

impl Fixture {
    fn new(marker: &str, qa: &[(&str, &str)], replies: &[(&str, &[&str])]) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let prompts = vec![prompt(marker, Structure::Linear, qa)];
        schema::write_jsonl_atomic(&dir.path().join("prompts.jsonl"), &prompts).unwrap();
        Fixture {
            mock: mock(replies),
            dir,
            prompts,
        }
    }

    fn files(&self) -> ModelPaths {
        ModelPaths::in_dir(&self.dir.path().join("m"))
    }

    fn answer(&self) {
        let files = self.files();
        run(
            &model(&self.mock, "answerer"),
            &self.prompts,
            &files.responses(),
            &client(self.dir.path()),
        )
        .unwrap();
    }

    fn judge(&self, call: &HelperCall) -> JudgeSummary {
        let files = self.files();
        judge(&Judge {
            judge: harness::helper::JudgeRef {
                role: schema::judge::JudgeRole::RiftAnswers,
                model: &model(&self.mock, "judge"),
                prompt: TEMPLATE,
                call,
            },
            prompts: &self.dir.path().join("prompts.jsonl"),
            responses: &files.responses(),
            judge_settled: false,
            files: &files,
            client: &client(self.dir.path()),
        })
        .unwrap()
    }

    fn score(&self, verdicts: Option<&std::path::Path>) -> ScoreSummary {
        let files = self.files();
        score(&Score {
            prompts: &self.dir.path().join("prompts.jsonl"),
            responses: &files.responses(),
            verdicts,
            judge_settled: false,
            files: &files,
        })
        .unwrap()
    }

    /// (expected, verdict, judged by) per answer, in traversal order.
    fn answers(&self) -> Vec<(String, Verdict, JudgeSource)> {
        let answers: Vec<AnswerScore> = schema::read_jsonl(&self.files().answer_scores()).unwrap();
        answers
            .into_iter()
            .map(|a| (a.expected, a.verdict, a.judged_by))
            .collect()
    }

    fn prompt_score(&self) -> PromptScore {
        let mut p: Vec<PromptScore> = schema::read_jsonl(&self.files().prompt_scores()).unwrap();
        assert_eq!(p.len(), 1);
        p.remove(0)
    }
}

fn owned(rows: &[(&str, Verdict, JudgeSource)]) -> Vec<(String, Verdict, JudgeSource)> {
    rows.iter()
        .map(|(e, v, s)| ((*e).to_owned(), *v, *s))
        .collect()
}

#[test]
fn a_garbled_judge_reply_is_asked_again_and_a_long_reply_after_thinking_is_read() {
    let f = Fixture::new(
        "[lin]",
        &[
            ("Capital of France?", "Paris"),
            ("Days in a week?", "seven"),
            ("Red planet?", "Mars"),
        ],
        &[
            (
                "G: Paris France",
                &["Let me weigh the two names first.", "CORRECT"],
            ),
            (
                "G: Mars the red one",
                &["Both name the planet Mars, so they match.\n\nVerdict: CORRECT"],
            ),
            ("[lin]", &["Paris France, 7, Mars the red one [think]"]),
        ],
    );
    f.answer();
    let call = HelperCall {
        max_tokens: 1234,
        reasoning_effort: Some("low".to_owned()),
        ..HelperCall::judge()
    };
    let s = f.judge(&call);
    // Try 1 asks about both open answers; try 2 only about the garbled one.
    assert_eq!((s.judged, s.unjudged, s.requests_sent), (2, 0, 3));
    assert_eq!(s.judge_failure_share(), 0.0);
    assert_eq!(f.mock.requests(), 1 + 3);

    // The configured settings are in every judge request.
    let sent: Vec<PromptRecord> = schema::read_jsonl(&f.files().judge_prompts()).unwrap();
    assert_eq!(sent.len(), 2);
    for p in &sent {
        assert_eq!(p.params.max_tokens, Some(1234));
        assert_eq!(p.params.reasoning_effort.as_deref(), Some("low"));
        assert_eq!(p.params.temperature, Some(0.0));
    }
    let replies: Vec<ResponseRecord> = schema::read_jsonl(&f.files().judge_responses()).unwrap();
    let retried: Vec<u32> = replies
        .iter()
        .filter(|r| r.content.as_deref() == Some("CORRECT"))
        .map(|r| r.sample_index)
        .collect();
    assert_eq!(retried, vec![1], "the second try is a new sample");
    let thought = replies
        .iter()
        .find(|r| r.content.as_deref().is_some_and(|c| c.contains("Verdict")))
        .unwrap();
    assert_eq!(thought.reasoning.as_deref(), Some("Thinking about it."));
    let verdicts: Vec<JudgeVerdict> = schema::read_jsonl(&s.verdicts_file).unwrap();
    let tries: Vec<(Option<Verdict>, u32)> =
        verdicts.iter().map(|v| (v.verdict, v.tries)).collect();
    assert_eq!(tries.len(), 2);
    assert!(tries.contains(&(Some(Verdict::Correct), 2)), "{tries:?}");
    assert!(tries.contains(&(Some(Verdict::Correct), 1)), "{tries:?}");

    let summary = f.score(Some(&s.verdicts_file));
    assert_eq!(
        f.answers(),
        owned(&[
            ("Paris", Verdict::Correct, JudgeSource::Llm),
            ("seven", Verdict::Correct, JudgeSource::PreJudge),
            ("Mars", Verdict::Correct, JudgeSource::Llm),
        ])
    );
    assert_eq!(
        (f.prompt_score().correct, f.prompt_score().unjudged),
        (3, 0)
    );
    assert_eq!((summary.unjudged(), summary.judge_failed()), (0, 0));

    // A rerun resumes every try from the files.
    assert_eq!(f.judge(&call), s);
    assert_eq!(f.mock.requests(), 4);
}

/// A judge that never gives a verdict: "Hmm." for one answer, a reply cut by the token limit for another.
fn never_judged() -> Fixture {
    Fixture::new(
        "[lin2]",
        &[
            ("Largest planet?", "Jupiter"),
            ("Capital of France?", "Paris"),
            ("Smallest planet?", "Mercury"),
        ],
        &[
            ("G: Saturn maybe", &["Hmm."]),
            ("G: Pluto", &["The answer"]),
            ("[lin2]", &["Saturn maybe, Paris, Pluto [length]"]),
        ],
    )
}

#[test]
fn answers_the_judge_never_settles_are_unjudged_not_incorrect_and_counted() {
    let f = never_judged();
    f.answer();
    let call = HelperCall {
        tries: 2,
        ..HelperCall::judge()
    };
    let s = f.judge(&call);
    assert_eq!((s.judged, s.unjudged, s.requests_sent), (0, 2, 4));
    // Replies without a verdict word: the judge's own failure (a rerun reads them again), not failed requests.
    assert_eq!((s.tally().failed, s.tally().unreadable), (0, 2));
    assert_eq!(s.judge_failure_share(), 1.0);
    assert!(s.judge_failure_share() > UNJUDGED_ALERT_SHARE);
    assert_eq!(f.mock.requests(), 1 + 4);
    assert_eq!(JudgeSummary::from_verdicts(&s.verdicts_file).unwrap(), s);

    let summary = f.score(Some(&s.verdicts_file));
    assert_eq!(
        f.answers(),
        owned(&[
            ("Jupiter", Verdict::Unjudged, JudgeSource::LlmUnusable),
            ("Paris", Verdict::Correct, JudgeSource::PreJudge),
            ("Mercury", Verdict::Unjudged, JudgeSource::LlmUnusable),
        ])
    );
    let p = f.prompt_score();
    assert_eq!((p.correct, p.unjudged, p.wrong_question), (1, 2, 0));
    // Never incorrect: nothing in the wrong-question denominator.
    let wq = &summary.wrong_question[0];
    assert_eq!((wq.incorrect, wq.unjudged), (0, 2));
    // Out of the accuracy denominator (1 of 1 judged is correct), with bounds 1/3 … 3/3.
    let t = &summary.table2[0];
    assert_eq!((t.answers, t.unjudged), (3, 2));
    assert_eq!(t.mean, Some(100.0));
    assert!((t.mean_lower.unwrap() - 100.0 / 3.0).abs() < 1e-9);
    assert_eq!(t.mean_upper, Some(100.0));
    assert_eq!((summary.judge_failed(), summary.unjudged()), (2, 2));
    assert_eq!(summary.judge_failure_share(), 1.0);
    let md = std::fs::read_to_string(f.files().summary_md()).unwrap();
    assert!(
        md.contains("| answerer | linear | 1 | 33.3 … 100.0 | 33.3 … 100.0 | 2 | 0 |"),
        "{md}"
    );
    assert!(
        md.contains(
            "The judge gave no verdict after every try for 2 answers (100.0% of those sent to it)"
        ),
        "{md}"
    );
}

#[test]
fn without_a_judge_unsettled_answers_are_unjudged_by_design_and_shown_as_bounds() {
    let f = never_judged();
    f.answer();
    let summary = f.score(None);
    assert_eq!(
        f.answers(),
        owned(&[
            ("Jupiter", Verdict::Unjudged, JudgeSource::PreJudgeOnly),
            ("Paris", Verdict::Correct, JudgeSource::PreJudge),
            ("Mercury", Verdict::Unjudged, JudgeSource::PreJudgeOnly),
        ])
    );
    assert_eq!(f.prompt_score().unjudged, 2);
    // A designed outcome, not a judge failure.
    assert!(!summary.judge_configured);
    assert_eq!(
        (summary.judge_failed(), summary.judge_failure_share()),
        (0, 0.0)
    );
    assert_eq!(summary.unjudged(), 2);
    assert_eq!(summary.judge_requests, 2);
    let md = std::fs::read_to_string(f.files().summary_md()).unwrap();
    assert!(md.contains("| 33.3 … 100.0 | 33.3 … 100.0 | 2 |"), "{md}");
    assert!(
        md.contains("No judge configured: the 2 answers the pre-judge could not settle are unjudged by design"),
        "{md}"
    );
    assert_eq!(f.mock.requests(), 1, "no judge, no judge request");
}
