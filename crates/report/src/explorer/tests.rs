//! Explorer tests: hostile text in every field stays inert, pages stay under their size limit, and the pages
//! render in headless Chromium with a sample opened from the URL fragment.

use std::path::{Path, PathBuf};

use schema::ResponseRecord;
use schema::ifscale::{
    AttemptLog, KeywordLabel, KeywordStatus, MatchMode, SampleScore, SampleStatus,
};
use schema::paths::{Bench, RunPaths};
use schema::rift::{AnswerScore, JudgeSource, PromptScore, ReplyOutcome, Structure, Verdict};
use serde_json::json;

use super::{Options, write};

/// Markup, a closing script tag, an event handler, a `javascript:` link, bidi override and zero-width characters.
const NASTY: &str = "<script>alert(1)</script></script><img src=x onerror=alert(2)><a href=\"javascript:alert(3)\">x</a>\u{202E}evil\u{200B}&amp;<!--";

fn jsonl<T: serde::Serialize>(path: &Path, rows: &[T]) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let text: String = rows
        .iter()
        .map(|r| serde_json::to_string(r).expect("json") + "\n")
        .collect();
    std::fs::write(path, text).expect("write");
}

fn response(id: &str, sample_index: u32, content: &str, meta: serde_json::Value) -> ResponseRecord {
    ResponseRecord {
        sample_index,
        content: Some(content.to_owned()),
        reasoning: Some(format!("thinking {NASTY}")),
        finish_reason: Some("stop".to_owned()),
        latency_s: Some(1.5),
        wall_s: 1.5,
        prompt_meta: meta.as_object().cloned().unwrap_or_default(),
        ..ResponseRecord::new(id, "m1")
    }
}

/// An IFScale model with `samples` samples whose reports are `words` words long, and one RIFT prompt.
fn fixture(root: &Path, samples: u32, words: usize) -> RunPaths {
    let paths = RunPaths::new(root);
    let kws = [
        "growth".to_owned(),
        format!("x{NASTY}"),
        "leverage".to_owned(),
    ];
    let m = paths.model(Bench::Ifscale, "m1");
    let (mut prompts, mut scores, mut labels, mut attempts, mut responses) =
        (vec![], vec![], vec![], vec![], vec![]);
    for s in 0..samples {
        let id = format!("ifscale-n003-s{s}");
        prompts.push(json!({"id": id, "keywords": kws}));
        let failed = s == 1;
        scores.push(SampleScore {
            id: id.clone(),
            model: "m1".to_owned(),
            num_rules: 3,
            seed: u64::from(s),
            mode: MatchMode::Paper,
            status: if failed {
                SampleStatus::Failed
            } else {
                SampleStatus::Scored
            },
            accuracy: (!failed).then_some(66.67),
            exact: 1,
            modified: 1,
            omitted: 1,
            omission_pct: None,
            modification_pct: None,
            primacy_ratio: None,
            latency_s: Some(2.0),
            output_tokens: Some(120),
            coherence: Some(7.0),
            attempts: 2,
            reasoning_tokens: Some(30),
        });
        if !failed {
            for (p, (kw, st)) in kws
                .iter()
                .zip([
                    KeywordStatus::Exact,
                    KeywordStatus::Omitted,
                    KeywordStatus::Modified,
                ])
                .enumerate()
            {
                labels.push(KeywordLabel {
                    id: id.clone(),
                    model: "m1".to_owned(),
                    position: p as u32,
                    keyword: kw.clone(),
                    status: st,
                    mode: MatchMode::Paper,
                });
            }
        }
        attempts.push(AttemptLog {
            id: id.clone(),
            model: "m1".to_owned(),
            attempt: 1,
            accepted: false,
            reason: Some(schema::ifscale::RejectReason::Incoherent),
            coherence: Some(3),
            coherence_reason: Some(NASTY.to_owned()),
            judge_error: None,
            words: 40,
            latency_s: Some(1.0),
            output_tokens: Some(60),
            reasoning_tokens: None,
            refusal_judge: None,
        });
        attempts.push(AttemptLog {
            attempt: 2,
            accepted: !failed,
            reason: None,
            coherence: Some(7),
            coherence_reason: Some("fine".to_owned()),
            ..attempts[attempts.len() - 1].clone()
        });
        let filler = "The company reported steady results. ".repeat(words / 5 + 1);
        responses.push(response(&id, 0, "rejected draft", json!({})));
        responses.push(response(
            &id,
            1,
            &format!("Growth held {NASTY} while leveraging debt. {filler}"),
            json!({}),
        ));
    }
    jsonl(&paths.ifscale_prompts(), &prompts);
    jsonl(&m.scores(), &scores);
    jsonl(&m.labels(), &labels);
    jsonl(&m.attempts(), &attempts);
    jsonl(&m.responses(), &responses);

    let r = paths.model(Bench::Rift, "m1");
    let id = "rift-g00000-jumping";
    jsonl(
        &r.prompt_scores(),
        &[PromptScore {
            prompt_id: id.to_owned(),
            sample_index: 0,
            group_id: "g00000".to_owned(),
            model: "m1".to_owned(),
            structure: Structure::Jumping,
            num_questions: 3,
            jump_k: Some(2),
            outcome: ReplyOutcome::Ok,
            answers_given: 3,
            correct: 1,
            unjudged: 1,
            accuracy: 1.0 / 3.0,
            wrong_question: 1,
            wrong_question_correct: 0,
            missing: 0,
            extra: 0,
            stopped_early: false,
            ran_long: false,
            judged_by_llm: 0,
            pre_judge_only: 1,
            prompt_tokens: Some(100),
            completion_tokens: Some(20),
            reasoning_tokens: Some(50),
        }],
    );
    let answer = |depth: u32, q: u32, given: &str, verdict, by, wq| AnswerScore {
        prompt_id: id.to_owned(),
        sample_index: 0,
        model: "m1".to_owned(),
        structure: Structure::Jumping,
        depth,
        question_number: q,
        row: None,
        value_normalized: None,
        expected: format!("gold {NASTY}"),
        given: Some(given.to_owned()),
        verdict,
        judged_by: by,
        pre_judge: None,
        judge_id: None,
        wrong_question_of: wq,
    };
    jsonl(
        &r.answer_scores(),
        &[
            answer(
                0,
                1,
                "Oxygen",
                Verdict::Correct,
                JudgeSource::PreJudge,
                None,
            ),
            answer(
                1,
                3,
                NASTY,
                Verdict::Unjudged,
                JudgeSource::PreJudgeOnly,
                None,
            ),
            answer(
                2,
                2,
                "Neon",
                Verdict::Incorrect,
                JudgeSource::PreJudge,
                Some(1),
            ),
        ],
    );
    jsonl(
        &r.responses(),
        &[response(
            id,
            0,
            &format!("Oxygen, {NASTY}, Neon"),
            json!({"questions": [format!("Q1 {NASTY}"), "Q3?", "Q2?"]}),
        )],
    );
    paths
}

fn html_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("explorer dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "html"))
        .collect();
    v.sort();
    v
}

fn data_block(html: &str) -> serde_json::Value {
    let start = html.find("id=\"data\">").expect("data block") + "id=\"data\">".len();
    let end = start + html[start..].find("</script>").expect("end of data");
    serde_json::from_str(&html[start..end]).expect("data is JSON")
}

#[test]
fn hostile_text_in_every_field_stays_data() {
    let dir = tempfile::tempdir().expect("tempdir");
    let paths = fixture(dir.path(), 2, 50);
    let written = write(&paths, "run <b>", &["m1".to_owned()], &Options::default()).expect("write");
    assert_eq!(written.entries.len(), 2);
    let files = html_files(&dir.path().join("explorer"));
    // index, two sample lists, one detail page each.
    assert_eq!(files.len(), 5, "{files:?}");
    for f in &files {
        let html = std::fs::read_to_string(f).expect("read");
        let name = f.display();
        assert_eq!(
            html.matches("<script").count(),
            2,
            "{name}: only the data block and the page's script"
        );
        assert_eq!(html.matches("</script>").count(), 2, "{name}");
        for bad in ["<img", "<a ", "<!--", "<b>", "\u{202E}", "\u{200B}"] {
            assert!(!html.contains(bad), "{name} contains {bad:?}");
        }
        assert!(html.contains("default-src 'none'"), "{name}: no network");
        assert!(!html.contains("unsafe-inline"), "{name}");
        let data = data_block(&html).to_string();
        if f.ends_with("ifscale-m1-p001.html") || f.ends_with("rift-m1-p001.html") {
            // The text itself survives, with the hidden characters shown.
            assert!(data.contains("<script>alert(1)</script>"), "{name}");
            assert!(data.contains("⟨U+202E⟩evil⟨U+200B⟩"), "{name}");
        }
    }
}

#[test]
fn pages_stay_under_their_limit_and_every_sample_is_on_the_page_its_row_names() {
    let dir = tempfile::tempdir().expect("tempdir");
    let paths = fixture(dir.path(), 40, 3_000);
    let limit = 150_000;
    let opts = Options {
        max_page_bytes: limit,
        ..Options::default()
    };
    let written = write(&paths, "run", &["m1".to_owned()], &opts).expect("write");
    let ifs = &written.entries[0];
    assert!(ifs.pages > 3, "{} pages", ifs.pages);
    assert!(
        ifs.page_bytes.iter().all(|&b| b as usize <= limit),
        "{:?}",
        ifs.page_bytes
    );
    let ex = dir.path().join("explorer");
    let index = data_block(&std::fs::read_to_string(ex.join("ifscale-m1.html")).expect("index"));
    let pages = index["pages"].as_array().expect("pages");
    let rows = index["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 40);
    for row in rows {
        let row = row.as_array().expect("row");
        let id = row[0].as_str().expect("id");
        let page = row[row.len() - 1].as_u64().expect("page") as usize;
        let file = ex.join(pages[page].as_str().expect("name"));
        let detail = data_block(&std::fs::read_to_string(&file).expect("detail"));
        let ids: Vec<&str> = detail["samples"]
            .as_array()
            .expect("samples")
            .iter()
            .map(|s| s["id"].as_str().expect("id"))
            .collect();
        assert!(ids.contains(&id), "{id} not on {}", file.display());
    }
}

/// The serialized DOM without its attribute values (Chromium writes `<` raw inside them; a tooltip that holds a
/// keyword is still text), so what is left shows which elements exist.
fn elements_only(dom: &str) -> String {
    let mut out = String::with_capacity(dom.len());
    let mut rest = dom;
    while let Some(i) = rest.find("=\"") {
        out.push_str(&rest[..i + 2]);
        rest = &rest[i + 2..];
        let end = rest.find('"').unwrap_or(rest.len());
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Does any link element point at `javascript:`? (Model text shows `&lt;a href="javascript:…"&gt;` as text.)
fn javascript_link(dom: &str) -> bool {
    dom.match_indices("<a ").any(|(i, _)| {
        let tag = &dom[i..i + dom[i..].find('>').unwrap_or(dom.len() - i)];
        tag.contains("javascript:")
    })
}

#[test]
fn a_sample_opens_from_the_url_fragment_in_chromium() {
    let chromium = plots::screenshot::find_chromium().expect("Chromium is installed by .ci/run");
    let dir = tempfile::tempdir().expect("tempdir");
    let paths = fixture(dir.path(), 2, 50);
    write(&paths, "run", &["m1".to_owned()], &Options::default()).expect("write");
    let ex = dir.path().join("explorer");
    let dom = plots::screenshot::dump_dom(
        &chromium,
        &ex.join("ifscale-m1-p001.html"),
        Some("sample=ifscale-n003-s0"),
    )
    .expect("render");
    let tags = elements_only(&dom);
    assert!(dom.contains("ifscale-n003-s0 · N = 3"), "the sample opened");
    assert!(
        dom.contains("<mark class=\"e\""),
        "an exact keyword is marked"
    );
    assert!(
        dom.contains("<mark class=\"m\""),
        "a modified keyword is marked"
    );
    assert!(dom.contains("Omitted keywords, in list order (1)"));
    assert!(
        dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "model text is text"
    );
    assert_eq!(tags.matches("<script").count(), 2);
    assert!(!tags.contains("<img"), "{tags}");
    assert!(!javascript_link(&dom));

    let dom = plots::screenshot::dump_dom(
        &chromium,
        &ex.join("rift-m1-p001.html"),
        Some("sample=rift-g00000-jumping"),
    )
    .expect("render");
    let tags = elements_only(&dom);
    assert!(dom.contains("Traversal"));
    assert!(
        dom.contains("<a class=\"wq\">question 1</a>"),
        "the wrong-question link"
    );
    assert!(dom.contains("unjudged (no judge)"));
    assert!(
        dom.contains("<details><summary>Reasoning"),
        "reasoning folded away"
    );
    assert!(!tags.contains("<img"), "{tags}");
    assert!(!javascript_link(&dom));

    let dom =
        plots::screenshot::dump_dom(&chromium, &ex.join("ifscale-m1.html"), None).expect("render");
    assert!(dom.contains("2 of 2 samples"), "the sample list");
    assert!(dom.contains("href=\"ifscale-m1-p001.html#sample=ifscale-n003-s1\""));
}

/// A second model `m2` on the fixture's samples: on IFScale sample s0 it omits `growth` (m1: exact) and finds the
/// hostile keyword and `leverage` exactly (m1: omitted, modified); its sample s1 is scored where m1's failed. On the
/// RIFT prompt it gets step 1 wrong (m1 right), step 2 right (m1 unjudged) and step 3 right (m1 wrong).
fn second_model(paths: &RunPaths) {
    let (m1, m2) = (
        paths.model(Bench::Ifscale, "m1"),
        paths.model(Bench::Ifscale, "m2"),
    );
    let mut scores: Vec<SampleScore> = schema::read_jsonl(&m1.scores()).expect("scores");
    let kws: Vec<String> = schema::read_jsonl::<KeywordLabel>(&m1.labels())
        .expect("labels")
        .into_iter()
        .filter(|l| l.id == "ifscale-n003-s0")
        .map(|l| l.keyword)
        .collect();
    let mut labels = Vec::new();
    for s in &mut scores {
        s.model = "m2".to_owned();
        s.status = SampleStatus::Scored;
        let statuses = if s.seed == 0 {
            [
                KeywordStatus::Omitted,
                KeywordStatus::Exact,
                KeywordStatus::Exact,
            ]
        } else {
            [KeywordStatus::Exact; 3]
        };
        for (p, (kw, st)) in kws.iter().zip(statuses).enumerate() {
            labels.push(KeywordLabel {
                id: s.id.clone(),
                model: "m2".to_owned(),
                position: p as u32,
                keyword: kw.clone(),
                status: st,
                mode: MatchMode::Paper,
            });
        }
    }
    jsonl(&m2.scores(), &scores);
    jsonl(&m2.labels(), &labels);
    let mut attempts: Vec<AttemptLog> = schema::read_jsonl(&m1.attempts()).expect("attempts");
    for a in &mut attempts {
        a.model = "m2".to_owned();
        a.accepted = a.attempt == 2;
    }
    jsonl(&m2.attempts(), &attempts);
    let responses: Vec<ResponseRecord> = schema::read_jsonl(&m1.responses()).expect("responses");
    jsonl(&m2.responses(), &responses);

    let (r1, r2) = (
        paths.model(Bench::Rift, "m1"),
        paths.model(Bench::Rift, "m2"),
    );
    let mut prompts: Vec<PromptScore> = schema::read_jsonl(&r1.prompt_scores()).expect("prompts");
    prompts[0].model = "m2".to_owned();
    prompts[0].correct = 2;
    prompts[0].unjudged = 0;
    jsonl(&r2.prompt_scores(), &prompts);
    let mut answers: Vec<AnswerScore> = schema::read_jsonl(&r1.answer_scores()).expect("answers");
    for (a, (given, verdict)) in answers.iter_mut().zip([
        ("Argon", Verdict::Incorrect),
        ("Krypton", Verdict::Correct),
        (NASTY, Verdict::Correct),
    ]) {
        a.model = "m2".to_owned();
        a.given = Some(given.to_owned());
        a.verdict = verdict;
        a.judged_by = JudgeSource::PreJudge;
        a.wrong_question_of = None;
    }
    jsonl(&r2.answer_scores(), &answers);
    let responses: Vec<ResponseRecord> = schema::read_jsonl(&r1.responses()).expect("responses");
    jsonl(&r2.responses(), &responses);
}

#[test]
fn two_models_side_by_side_show_what_differs_and_hostile_text_stays_data() {
    let dir = tempfile::tempdir().expect("tempdir");
    let paths = fixture(dir.path(), 2, 50);
    second_model(&paths);
    let models = ["m1".to_owned(), "m2".to_owned()];
    let written = write(&paths, "run", &models, &Options::default()).expect("write");
    assert_eq!(written.entries.len(), 4);
    let pairs: Vec<(&str, &str, &str, usize, usize)> = written
        .pairs
        .iter()
        .map(|p| {
            (
                p.entry.bench,
                p.a.as_str(),
                p.b.as_str(),
                p.paired,
                p.differing,
            )
        })
        .collect();
    // IFScale: both samples paired, only s0 differs (m1's s1 failed); RIFT: the one prompt differs.
    assert_eq!(
        pairs,
        [("ifscale", "m1", "m2", 2, 1), ("rift", "m1", "m2", 1, 1)]
    );
    let ex = dir.path().join("explorer");
    let ifs = super::pair_index_name(Bench::Ifscale, "m1", "m2");
    assert_eq!(ifs, "pair-ifscale-m1-vs-m2.html");
    let index = data_block(&std::fs::read_to_string(ex.join(&ifs)).expect("pair index"));
    assert_eq!(index["pair"], json!(["m1", "m2"]));
    // The sample with a difference first: [id, N, seed, accuracy m1, accuracy m2, m1 only, m2 only, page].
    assert_eq!(
        index["rows"][0],
        json!(["ifscale-n003-s0", 3, 0, 66.67, 66.67, 1, 2, 0])
    );
    assert_eq!(index["rows"][1][5], json!(0));
    let detail = data_block(
        &std::fs::read_to_string(ex.join("pair-ifscale-m1-vs-m2-p001.html")).expect("detail"),
    );
    let s0 = &detail["samples"][0];
    assert_eq!(s0["keywords"][0], json!(["growth", "e", "o"]));
    assert_eq!(s0["keywords"][2], json!(["leverage", "m", "e"]));
    assert_eq!(
        (s0["a_only"].clone(), s0["b_only"].clone()),
        (json!(1), json!(2))
    );
    assert!(s0["a"]["segs"].is_array() && s0["b"]["segs"].is_array());

    let rift = data_block(
        &std::fs::read_to_string(ex.join("pair-rift-m1-vs-m2-p001.html")).expect("rift pair"),
    );
    let p = &rift["samples"][0];
    let which: Vec<&str> = p["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|r| r[8].as_str().expect("which"))
        .collect();
    assert_eq!(which, ["a", "", "b"]);
    assert_eq!(p["steps"][0][4], json!("Oxygen"));
    assert_eq!(p["steps"][0][6], json!("Argon"));
    assert_eq!(
        (p["a_only"].clone(), p["b_only"].clone()),
        (json!(1), json!(1))
    );
    let home = data_block(&std::fs::read_to_string(ex.join("index.html")).expect("home"));
    assert_eq!(home["pairs"][1]["index"], json!("pair-rift-m1-vs-m2.html"));

    // Hostile text (keywords, replies, answers) stays data on every page, the side-by-side ones included.
    for f in html_files(&ex) {
        let html = std::fs::read_to_string(&f).expect("read");
        let name = f.display();
        assert_eq!(html.matches("<script").count(), 2, "{name}");
        assert_eq!(html.matches("</script>").count(), 2, "{name}");
        for bad in ["<img", "<a ", "<!--", "\u{202E}", "\u{200B}"] {
            assert!(!html.contains(bad), "{name} contains {bad:?}");
        }
        assert!(html.contains("default-src 'none'"), "{name}");
    }
    let rift_html = std::fs::read_to_string(ex.join("pair-rift-m1-vs-m2-p001.html")).expect("read");
    assert!(
        data_block(&rift_html)
            .to_string()
            .contains("⟨U+202E⟩evil⟨U+200B⟩")
    );

    // One model: no side-by-side pages.
    let one = write(&paths, "run", &models[..1], &Options::default()).expect("write");
    assert!(one.pairs.is_empty());
    assert!(!ex.join(&ifs).exists());
}

#[test]
fn two_models_side_by_side_render_in_chromium() {
    let chromium = plots::screenshot::find_chromium().expect("Chromium is installed by .ci/run");
    let dir = tempfile::tempdir().expect("tempdir");
    let paths = fixture(dir.path(), 2, 50);
    second_model(&paths);
    write(
        &paths,
        "run",
        &["m1".to_owned(), "m2".to_owned()],
        &Options::default(),
    )
    .expect("write");
    let ex = dir.path().join("explorer");
    let dom = plots::screenshot::dump_dom(
        &chromium,
        &ex.join("pair-ifscale-m1-vs-m2-p001.html"),
        Some("sample=ifscale-n003-s0"),
    )
    .expect("render");
    let tags = elements_only(&dom);
    assert!(dom.contains("Found by m1, missed by m2 (1)"), "{dom}");
    assert!(dom.contains("Found by m2, missed by m1 (2)"));
    assert!(dom.contains("#1 growth (m2: omitted)"));
    assert!(dom.contains("<tr class=\"diff-a\">"));
    assert!(
        dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "model text is text"
    );
    assert_eq!(tags.matches("<script").count(), 2);
    assert!(!tags.contains("<img"), "{tags}");
    assert!(!javascript_link(&dom));

    let dom = plots::screenshot::dump_dom(
        &chromium,
        &ex.join("pair-rift-m1-vs-m2-p001.html"),
        Some("sample=rift-g00000-jumping"),
    )
    .expect("render");
    let tags = elements_only(&dom);
    assert!(dom.contains("m1 reply") && dom.contains("m2 reply"));
    assert!(dom.contains("<tr class=\"diff-a\">") && dom.contains("<tr class=\"diff-b\">"));
    assert!(!tags.contains("<img"), "{tags}");
    assert!(!javascript_link(&dom));

    let dom = plots::screenshot::dump_dom(&chromium, &ex.join("index.html"), None).expect("render");
    assert!(dom.contains("Two models side by side"));
    assert!(dom.contains("href=\"pair-rift-m1-vs-m2.html\""));
}
