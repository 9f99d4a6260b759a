//! Data-driven tests of RIFT reply parsing, alignment and judging.

use schema::rift::{PromptMeta, Structure};

use super::*;

/// A three-question linear prompt (answers Paris, 7, Jupiter) or its jumping twin (k = 2: 1 → 3 → 2).
fn prompt(jumping: bool) -> PromptRecord {
    let (traversal, expected, questions) = if jumping {
        (
            vec![1, 3, 2],
            ["Paris", "Jupiter", "seven"],
            ["Capital of France?", "Largest planet?", "Days in a week?"],
        )
    } else {
        (
            vec![1, 2, 3],
            ["Paris", "seven", "Jupiter"],
            ["Capital of France?", "Days in a week?", "Largest planet?"],
        )
    };
    prompt_with(
        if jumping { "j" } else { "l" },
        jumping.then_some(2),
        traversal,
        &expected,
        &questions,
    )
}

/// A prompt whose traversal visits `expected[i]` / `questions[i]` at depth i (`jump_k` None: linear).
fn prompt_with(
    id: &str,
    jump_k: Option<u32>,
    traversal: Vec<u32>,
    expected: &[&str],
    questions: &[&str],
) -> PromptRecord {
    let meta = PromptMeta {
        benchmark: "rift".into(),
        structure: if jump_k.is_some() {
            Structure::Jumping
        } else {
            Structure::Linear
        },
        group_id: "g00000".into(),
        seed: 1,
        num: traversal.len() as u32,
        start_row: 0,
        max_jump_distance: 2,
        jump_k,
        traversal,
        expected: expected.iter().map(|s| s.to_string()).collect(),
        questions: questions.iter().map(|s| s.to_string()).collect(),
        rows: vec![],
        values_normalized: vec![],
    };
    let Value::Object(extra) = serde_json::to_value(meta).unwrap() else {
        unreachable!()
    };
    PromptRecord {
        id: id.into(),
        messages: vec![],
        sample_index: 0,
        params: Default::default(),
        extra,
    }
}

/// [`parse_verdicts`] on whole response records.
fn verdicts_of(replies: &[ResponseRecord]) -> Vec<JudgeVerdict> {
    parse_verdicts(&replies.iter().map(ResponseReply::from).collect::<Vec<_>>())
}

fn response(id: &str, outcome: Outcome, content: Option<&str>) -> ResponseRecord {
    ResponseRecord {
        outcome,
        content: content.map(str::to_owned),
        usage: schema::Usage {
            prompt_tokens: 40,
            completion_tokens: 9,
            reasoning_tokens: None,
            cost_usd: None,
        },
        ..ResponseRecord::new(id, "m")
    }
}

const NO_JUDGE: ScoreOptions = ScoreOptions {
    judge_settled: false,
};

/// Scores one reply to one prompt; returns the prompt score and the per-answer (verdict, wrong-question) pairs.
fn check(
    jumping: bool,
    outcome: Outcome,
    content: Option<&str>,
) -> (PromptScore, Vec<(Verdict, Option<u32>)>) {
    judged(&prompt(jumping), outcome, content, None)
}

/// A scripted judge: whether `given` is right for `expected`.
type Judge = dyn Fn(&str, &str) -> bool;

/// Scores one reply to `p`; with `judge`, a second pass takes the judge's verdict (CORRECT when `judge` returns
/// true for the request's given and expected answers, else INCORRECT) on every request of the first.
fn judged(
    p: &PromptRecord,
    outcome: Outcome,
    content: Option<&str>,
    judge: Option<&Judge>,
) -> (PromptScore, Vec<(Verdict, Option<u32>)>) {
    let responses = [response(&p.id, outcome, content)];
    let prompts = std::slice::from_ref(p);
    let mut s = score(prompts, &responses, None, NO_JUDGE).unwrap();
    if let Some(judge) = judge {
        let replies: Vec<_> = s
            .judge_requests
            .iter()
            .map(|r| {
                let verdict = if judge(&r.given, &r.expected) {
                    "CORRECT"
                } else {
                    "INCORRECT"
                };
                response(&r.id, Outcome::Ok, Some(verdict))
            })
            .collect();
        s = score(prompts, &responses, Some(&verdicts_of(&replies)), NO_JUDGE).unwrap();
    }
    let answers = s
        .answers
        .iter()
        .map(|a| (a.verdict, a.wrong_question_of))
        .collect();
    (s.prompts[0].clone(), answers)
}

/// A judge that accepts nothing the pre-judge left open.
fn strict(_given: &str, _expected: &str) -> bool {
    false
}

use Verdict::{Correct as C, Incorrect as I, Missing as M, Unjudged as U};

#[test]
fn correct_reply() {
    let (p, a) = check(false, Outcome::Ok, Some("Paris, 7, Jupiter."));
    assert_eq!(a, vec![(C, None), (C, None), (C, None)]);
    assert_eq!(
        (p.correct, p.accuracy, p.outcome),
        (3, 1.0, ReplyOutcome::Ok)
    );
    assert_eq!(
        (p.stopped_early, p.ran_long, p.missing, p.extra),
        (false, false, 0, 0)
    );
    assert_eq!(p.prompt_tokens, Some(40));
}

#[test]
fn jumping_reply_in_linear_order_answers_the_wrong_questions() {
    // The model ignored the jumps: question 2's answer (seven) where question 3 was due, and vice versa. The
    // judge decides correctness; the flag follows for the answers it finds incorrect.
    let p = prompt(true);
    let (s, a) = judged(
        &p,
        Outcome::Ok,
        Some("Paris, seven, Jupiter"),
        Some(&strict),
    );
    assert_eq!(a, vec![(C, None), (I, Some(2)), (I, Some(3))]);
    assert_eq!((s.correct, s.wrong_question), (1, 2));
}

#[test]
fn off_by_one_shift() {
    // A skipped first answer shifts everything: each answer belongs to the next question.
    let p = prompt(false);
    let (s, a) = judged(&p, Outcome::Ok, Some("seven, Jupiter"), Some(&strict));
    assert_eq!(a, vec![(I, Some(2)), (I, Some(3)), (M, None)]);
    assert_eq!(
        (s.correct, s.wrong_question, s.missing, s.stopped_early),
        (0, 2, 1, true)
    );
}

/// Questions 1–3 expect Newton, Paris and Isaac Newton; question 3's "Newton" also equals question 1's answer.
fn newton_prompt() -> PromptRecord {
    prompt_with(
        "newton",
        None,
        vec![1, 2, 3],
        &["Newton", "Paris", "Isaac Newton"],
        &[
            "Who formulated the laws of motion?",
            "Capital of France?",
            "Who wrote the Principia?",
        ],
    )
}

#[test]
fn an_answer_right_for_its_own_question_keeps_its_verdict_and_is_counted_apart() {
    // "Newton" for "Isaac Newton": the pre-judge cannot settle it, so the judge is asked, and it is right. It is
    // also question 1's answer, so it is flagged; the verdict stays CORRECT and the flag is counted apart.
    let semantic = |given: &str, expected: &str| expected.ends_with(given);
    let (s, a) = judged(
        &newton_prompt(),
        Outcome::Ok,
        Some("Newton, Paris, Newton"),
        Some(&semantic),
    );
    assert_eq!(a, vec![(C, None), (C, None), (C, Some(1))]);
    assert_eq!(
        (
            s.correct,
            s.wrong_question,
            s.wrong_question_correct,
            s.judged_by_llm
        ),
        (3, 0, 1, 1)
    );
}

#[test]
fn the_flag_does_not_wait_for_an_incorrect_verdict() {
    // Questions 1–3 expect Burma (or Myanmar), Myanmar and Paris: "Myanmar" is right for both 1 and 2.
    let p = prompt_with(
        "both",
        None,
        vec![1, 2, 3],
        &["Burma (or Myanmar)", "Myanmar", "Paris"],
        &[
            "Which country took the name Myanmar?",
            "What is Burma called today?",
            "Capital of France?",
        ],
    );
    let lenient = |_: &str, _: &str| true;
    // An answer equal to its own expected answer is never flagged, even when it is another question's too; one
    // that is only another question's answer is flagged whatever the judge says.
    let (s, a) = judged(
        &p,
        Outcome::Ok,
        Some("Myanmar, Myanmar, Myanmar"),
        Some(&lenient),
    );
    assert_eq!(a, vec![(C, None), (C, None), (C, Some(1))]);
    assert_eq!(
        (s.correct, s.wrong_question, s.wrong_question_correct),
        (3, 0, 1)
    );
    let (s, a) = judged(
        &p,
        Outcome::Ok,
        Some("Myanmar, Myanmar, Myanmar"),
        Some(&strict),
    );
    assert_eq!(a, vec![(C, None), (C, None), (I, Some(1))]);
    assert_eq!(
        (s.correct, s.wrong_question, s.wrong_question_correct),
        (2, 1, 0)
    );
    // The pre-judge's own INCORRECT (plain numbers that differ) is flagged as well, with no judge at all.
    let years = prompt_with(
        "years",
        None,
        vec![1, 2, 3],
        &["1066", "1492", "Paris"],
        &[
            "Year of the Norman conquest?",
            "Year Columbus reached the Americas?",
            "Capital of France?",
        ],
    );
    let (s, a) = judged(&years, Outcome::Ok, Some("1492, 1066, 1066"), None);
    assert_eq!(a, vec![(I, Some(2)), (I, Some(1)), (I, Some(1))]);
    assert_eq!(
        (
            s.correct,
            s.unjudged,
            s.wrong_question,
            s.wrong_question_correct
        ),
        (0, 0, 3, 0)
    );
}

#[test]
fn an_incorrect_answer_equal_to_another_questions_answer_is_flagged() {
    // The judge finds "Newton" wrong for question 3 (say it wanted the full name): then it is question 1's answer.
    let (s, a) = judged(
        &newton_prompt(),
        Outcome::Ok,
        Some("Newton, Paris, Newton"),
        Some(&strict),
    );
    assert_eq!(a, vec![(C, None), (C, None), (I, Some(1))]);
    assert_eq!((s.correct, s.wrong_question), (2, 1));
    // "the Paris" is question 2's answer by the pre-judge's normalization (a leading article dropped).
    let (_, a) = judged(
        &newton_prompt(),
        Outcome::Ok,
        Some("Newton, Paris, the Paris"),
        Some(&strict),
    );
    assert_eq!(a[2], (I, Some(2)));
    // An incorrect answer that is nobody's answer, and a paraphrase of another answer that only a judge could
    // recognise ("Sir Isaac" for question 3's Isaac Newton, given at question 1), stay unflagged.
    let (s, a) = judged(
        &newton_prompt(),
        Outcome::Ok,
        Some("Sir Isaac, Lyon, Leibniz"),
        Some(&strict),
    );
    assert_eq!(a, vec![(I, None); 3]);
    assert_eq!((s.correct, s.wrong_question), (0, 0));
}

#[test]
fn unjudged_answers_are_flagged_and_counted_in_neither_share() {
    // Without a judge, question 3's "Newton" (another question's answer) is unsettled: unjudged, and flagged; it
    // counts neither as a wrong-question answer (not incorrect) nor as a flagged correct one. A missing answer is
    // never flagged.
    let (s, a) = judged(
        &newton_prompt(),
        Outcome::Ok,
        Some("Newton, , Newton"),
        None,
    );
    assert_eq!(a, vec![(C, None), (M, None), (U, Some(1))]);
    assert_eq!(
        (
            s.correct,
            s.unjudged,
            s.missing,
            s.wrong_question,
            s.wrong_question_correct
        ),
        (1, 1, 1, 0, 0)
    );
    // The same without a judge for the jumping prompt answered in linear order.
    let (s, a) = check(true, Outcome::Ok, Some("Paris, seven, Jupiter"));
    assert_eq!(a, vec![(C, None), (U, Some(2)), (U, Some(3))]);
    assert_eq!((s.unjudged, s.wrong_question), (2, 0));
}

#[test]
fn truncated_reply_scores_the_answers_before_the_cut() {
    // The client splits reasoning off the content; what is left is scored.
    let (p, a) = check(false, Outcome::Truncated, Some("Paris, 7"));
    assert_eq!(a, vec![(C, None), (C, None), (M, None)]);
    assert_eq!(
        (p.outcome, p.stopped_early, p.missing),
        (ReplyOutcome::Truncated, true, 1)
    );
    // Cut inside the reasoning: the client leaves no content, so there is nothing to score.
    let (p, a) = check(false, Outcome::Truncated, Some(""));
    assert_eq!(a, vec![(M, None); 3]);
    assert_eq!(
        (p.outcome, p.stopped_early),
        (ReplyOutcome::Truncated, false)
    );
}

#[test]
fn empty_malformed_and_failed_replies() {
    let (p, a) = check(false, Outcome::Ok, Some("  "));
    assert_eq!(
        (p.outcome, p.missing, a[0]),
        (ReplyOutcome::Empty, 3, (M, None))
    );
    let (p, _) = check(false, Outcome::Ok, Some(" , ,. "));
    assert_eq!(p.outcome, ReplyOutcome::Malformed);
    let (p, _) = check(false, Outcome::Failed, None);
    assert_eq!((p.outcome, p.prompt_tokens), (ReplyOutcome::Failed, None));
}

#[test]
fn over_long_reply() {
    let (p, a) = check(false, Outcome::Ok, Some("Paris, 7, Jupiter, Paris, Mars"));
    assert_eq!(a, vec![(C, None), (C, None), (C, None)]);
    assert_eq!(
        (p.ran_long, p.extra, p.answers_given, p.accuracy),
        (true, 2, 5, 1.0)
    );
}

#[test]
fn unsettled_answers_are_unjudged_then_take_the_judges_verdict() {
    let p = prompt(false);
    let responses = [response(
        "l",
        Outcome::Ok,
        Some("OUTPUT: Paris France, 7 days, Saturn"),
    )];
    let first = score(std::slice::from_ref(&p), &responses, None, NO_JUDGE).unwrap();
    assert_eq!(first.judge_requests.len(), 3);
    assert!(
        first
            .answers
            .iter()
            .all(|a| a.judged_by == JudgeSource::PreJudgeOnly && a.verdict == U)
    );
    assert_eq!(first.prompts[0].pre_judge_only, 3);
    assert_eq!(
        (first.prompts[0].unjudged, first.prompts[0].correct),
        (3, 0)
    );
    let judge = judge_prompts(
        &first.judge_requests,
        "Q: {question}\nE: {expected}\nG: {given}",
        &Default::default(),
    );
    assert_eq!(judge[0].params.temperature, Some(0.0));
    assert_eq!(
        judge[0].messages[0].content,
        "Q: Capital of France?\nE: Paris\nG: Paris France"
    );
    let replies = [
        response(&judge[0].id, Outcome::Ok, Some("CORRECT")),
        ResponseRecord {
            reasoning: Some("7 = seven".to_owned()),
            ..response(&judge[1].id, Outcome::Ok, Some("Correct."))
        },
        response(&judge[2].id, Outcome::Ok, Some("I am not sure")),
    ];
    let verdicts = verdicts_of(&replies);
    assert_eq!(
        verdicts.iter().map(|v| v.verdict).collect::<Vec<_>>(),
        vec![Some(C), Some(C), None]
    );
    let second = score(&[p], &responses, Some(&verdicts), NO_JUDGE).unwrap();
    let got: Vec<_> = second
        .answers
        .iter()
        .map(|a| (a.verdict, a.judged_by))
        .collect();
    assert_eq!(
        got,
        vec![
            (C, JudgeSource::Llm),
            (C, JudgeSource::Llm),
            (U, JudgeSource::LlmUnusable)
        ]
    );
    assert_eq!(
        (
            second.prompts[0].correct,
            second.prompts[0].judged_by_llm,
            second.prompts[0].unjudged,
            second.prompts[0].wrong_question
        ),
        (2, 2, 1, 0)
    );
}

#[test]
fn agreement_report() {
    let p = prompt(false);
    let responses = [response("l", Outcome::Ok, Some("Paris, 8, Mars"))];
    let opts = ScoreOptions {
        judge_settled: true,
    };
    let first = score(std::slice::from_ref(&p), &responses, None, opts).unwrap();
    // Paris is settled but still sent; 8 and Mars are unsettled.
    assert_eq!(first.judge_requests.len(), 3);
    let replies: Vec<_> = first
        .judge_requests
        .iter()
        .map(|r| {
            response(
                &r.id,
                Outcome::Ok,
                Some(if r.given == "Paris" {
                    "CORRECT"
                } else {
                    "INCORRECT"
                }),
            )
        })
        .collect();
    let verdicts = verdicts_of(&replies);
    let second = score(&[p], &responses, Some(&verdicts), opts).unwrap();
    let report = pre_judge_report(&second.answers, &verdicts);
    assert_eq!(
        report,
        PreJudgeReport {
            answered: 3,
            settled_by_pre_judge: 1,
            judged_by_llm: 2,
            pre_judge_only: 0,
            judge_failed: 0,
            both: 1,
            agree: 1
        }
    );
}

#[test]
fn reply_parsing() {
    let cases: [(&str, &[&str]); 8] = [
        ("Paris, 7, Jupiter", &["Paris", "7", "Jupiter"]),
        ("OUTPUT: \"Paris\", \"7\".", &["Paris", "7"]),
        ("Answers: **Paris**, 7", &["Paris", "7"]),
        ("1. Paris\n2. 7\n3. Jupiter", &["Paris", "7", "Jupiter"]),
        ("Here are my answers:\nParis, 7", &["Paris", "7"]),
        ("```\nParis, 7\n```", &["Paris", "7"]),
        ("Paris,, Jupiter,", &["Paris", "", "Jupiter"]),
        (
            "1. Capital? → Paris\n2. Days? → Now Answer Question Number 3",
            &["Paris"],
        ),
    ];
    for (input, want) in cases {
        assert_eq!(
            parse_reply(Some(input), Outcome::Ok).answers,
            want.to_vec(),
            "{input:?}"
        );
    }
}

#[test]
fn normalization() {
    let same = [
        ("The Nile", "nile"),
        ("an apple", "Apple"),
        ("Pepé Le Pew", "pepe le pew"),
        ("Tom & Jerry", "tom and jerry"),
        ("twenty-one", "21"),
        ("one hundred and five", "105"),
        ("Seven", "7"),
        ("Washington, D.C.", "washington dc"),
        ("O'Leary", "oleary"),
        ("the First Amendment", "1st amendment"),
    ];
    for (a, b) in same {
        assert_eq!(normalize(a), normalize(b), "{a} vs {b}");
    }
    assert_ne!(normalize("The Who"), normalize("Who?x"));
    assert_eq!(
        pre_judge("Spock", "Dr. Benjamin Spock (\"Baby and Child Care\")"),
        None
    );
    assert_eq!(
        pre_judge("Herman Melville", "Herman Melville (\"Typee\")"),
        Some(true)
    );
    assert_eq!(pre_judge("...", "Paris"), Some(false));
    assert_eq!(parse_verdict("NOT CORRECT"), Some(I));
    assert_eq!(parse_verdict("**INCORRECT**"), Some(I));
}

#[test]
fn long_judge_replies_are_read_from_their_verdict_line() {
    let cases = [
        (
            "The expected answer is Paris and the given answer names Paris.\n\nVerdict: CORRECT",
            Some(C),
        ),
        (
            "Comparing the two answers, they name different planets.\n**INCORRECT**",
            Some(I),
        ),
        (
            "Both refer to the same person, so the given answer is correct.",
            Some(C),
        ),
        (
            "Seven and 7 are the same number.\nFinal answer: correct",
            Some(C),
        ),
        ("Let me compare them carefully before I decide.", None),
        ("", None),
    ];
    for (text, want) in cases {
        assert_eq!(parse_verdict(text), want, "{text:?}");
    }
}

#[test]
fn verdicts_of_retried_judge_requests() {
    let try_of = |id: &str, sample_index: u32, outcome, text: Option<&str>| ResponseRecord {
        sample_index,
        ..response(id, outcome, text)
    };
    let replies = [
        try_of("a", 0, Outcome::Ok, Some("hmm")),
        try_of("a", 1, Outcome::Ok, Some("CORRECT")),
        try_of("b", 0, Outcome::Failed, None),
        try_of("b", 1, Outcome::Truncated, Some("Let me think")),
        try_of("b", 2, Outcome::Ok, Some("unsure")),
        try_of("c", 0, Outcome::Ok, Some("INCORRECT")),
    ];
    let got: Vec<_> = verdicts_of(&replies)
        .into_iter()
        .map(|v| (v.id, v.verdict, v.tries, v.raw))
        .collect();
    assert_eq!(
        got,
        vec![
            ("a".to_owned(), Some(C), 2, Some("CORRECT".to_owned())),
            ("b".to_owned(), None, 3, Some("unsure".to_owned())),
            ("c".to_owned(), Some(I), 1, Some("INCORRECT".to_owned())),
        ]
    );
}

#[test]
fn the_wrong_question_flag_matches_like_the_pre_judge() {
    // Question 1's parenthetical matters, question 2 accepts either name, question 3 expects Paris.
    let p = prompt_with(
        "forms",
        None,
        vec![1, 2, 3],
        &["Henry (VIII)", "Burma (or Myanmar)", "Paris"],
        &[
            "Which king broke with Rome?",
            "Which country is now called Myanmar?",
            "Capital of France?",
        ],
    );
    // Without a judge: "Henry" is unsettled (unjudged), "What is Myanmar?" is correct at question 2.
    let (s, a) = judged(
        &p,
        Outcome::Ok,
        Some("Henry, What is Myanmar?, Paris"),
        None,
    );
    assert_eq!(a, vec![(U, None), (C, None), (C, None)]);
    assert_eq!((s.correct, s.unjudged), (2, 1));
    // Answers shifted by one, judged incorrect: each is flagged with the question whose forms accept it, and the
    // bare "Henry" given at question 3 is nobody's answer (question 1 wants Henry VIII).
    let (s, a) = judged(
        &p,
        Outcome::Ok,
        Some("Myanmar - which used to be Burma, **Paris**, Henry"),
        Some(&strict),
    );
    assert_eq!(a, vec![(I, Some(2)), (I, Some(3)), (I, None)]);
    assert_eq!((s.correct, s.wrong_question), (0, 2));
}
