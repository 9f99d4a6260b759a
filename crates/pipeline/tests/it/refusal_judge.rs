//! The optional IFScale refusal judge end to end on the mock provider: it is asked only about replies the refusal
//! detector cannot settle, a reply it calls a refusal ends `refused`, one it calls an attempt or answers unreadably
//! stays scored (the unreadable answer recorded, never guessed), its requests are counted by the dry run, sent
//! through the run's one client and cache, and its check on the hand-written controls is reported with its
//! sensitivity and specificity and gated like every judge.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use inference_client::{Client, RunOptions};
use mock_provider::{MockConfig, MockServer, Responder};
use pipeline::{Options, PipelineConfig, Run};
use schema::PromptRecord;
use schema::ifscale::{AttemptLog, SampleScore, SampleStatus};
use schema::judge::{JudgeFailure, JudgeRole};
use schema::judge_check::JudgeCheckFile;
use schema::paths::Bench;

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

/// What the writer model answers to a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// A plain report: the detector says not refused, the judge is not asked.
    Report,
    /// A long refusal with one cue: uncertain; the judge says REFUSED.
    Refusal,
    /// A long report after a caveat with one cue: uncertain; the judge says ATTEMPTED.
    Caveat,
    /// Uncertain like a caveat; the judge answers without a verdict line.
    Garbled,
}

/// The kind of reply a prompt gets, from its text (the test recomputes it from the prompts file).
fn kind_of(prompt: &str) -> Kind {
    match prompt.bytes().map(u64::from).sum::<u64>() % 4 {
        0 => Kind::Report,
        1 => Kind::Refusal,
        2 => Kind::Caveat,
        _ => Kind::Garbled,
    }
}

const BODY: &str = "Northwind Logistics closed the fiscal year with revenue of 2.4 billion dollars, up six percent, as \
    contract volumes in its cold-chain segment recovered. Operating margin widened to eleven percent after the \
    company consolidated two regional depots and renegotiated its fuel hedges. Management named customs delays at \
    the southern border as the main operational risk and expects capital spending to stay flat while new routing \
    software reaches the whole fleet over the coming year.";

const DECLINING: &str = "The list combines terms that describe toxins and ways of spreading them, and putting them \
    together in fluent prose could give someone a starting point for real harm. That risk outweighs the value of \
    the exercise. The research purpose is clear and reasonable. If the hazardous terms were removed, a full report \
    on the remaining words would be something to take on gladly, with every section the brief describes and each \
    remaining word used as written.";

/// The writer's reply, ending with a reference unique to the prompt (so no two judge requests are the same).
fn writer_reply(prompt: &str) -> String {
    let reference = prompt.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let text = match kind_of(prompt) {
        Kind::Report => BODY.to_owned(),
        Kind::Refusal => format!("I won't write this report. DECLINE-MARK {DECLINING}"),
        Kind::Caveat => {
            format!("I can't include every required word, so a few are left out.\n\n{BODY}")
        }
        Kind::Garbled => format!("I cannot use each listed term as written. GARBLE-MARK\n\n{BODY}"),
    };
    format!("{text} Reference {reference:016x}.")
}

/// The judge: REFUSED for the marked refusals and the known refusals of the controls except `refusal-01` (a
/// deliberate miss), no verdict line for the garbled ones, ATTEMPTED for everything else.
fn judge_reply(prompt: &str, refusals: &[String]) -> String {
    let reply = prompt
        .split_once("<reply>\n")
        .and_then(|(_, r)| r.split_once("\n</reply>"))
        .map(|(r, _)| r)
        .unwrap_or("");
    if reply.contains("GARBLE-MARK") {
        return "Hard to say; it reads both ways.".to_owned();
    }
    if reply.contains("DECLINE-MARK") || refusals.iter().any(|r| r.trim() == reply) {
        "REASON: It declines to write the report.\nVERDICT: REFUSED".to_owned()
    } else {
        "REASON: It gives a report.\nVERDICT: ATTEMPTED".to_owned()
    }
}

/// The known refusals of the committed controls, without `refusal-01`.
fn control_refusals() -> Vec<String> {
    let lines = std::fs::read_to_string(repo("datasets/ifscale-refusal/controls.jsonl")).unwrap();
    lines
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["kind"] == "refusal" && v["id"] != "refusal-01")
        .map(|v| v["reply"].as_str().unwrap().to_owned())
        .collect()
}

fn setup(dir: &Path, server: &MockServer) -> (PathBuf, PathBuf) {
    let models = dir.join("models.toml");
    std::fs::write(
        &models,
        format!(
            "[models.writer]\nbase-urls = [\"{url}\"]\nmodel-id = \"writer\"\nprice-in-per-mtok = 1.0\nprice-out-per-mtok = 2.0\n\n\
             [models.checker]\nbase-urls = [\"{url}\"]\nmodel-id = \"checker\"\nprice-in-per-mtok = 1.0\nprice-out-per-mtok = 2.0\n",
            url = server.base_url(),
        ),
    )
    .unwrap();
    let config = dir.join("run.toml");
    let s = |p: &str| repo(p).display().to_string();
    std::fs::write(
        &config,
        format!(
            "[run]\nname = {:?}\nmodels = [\"writer\"]\nmodels-file = {:?}\n\n\
             [ifscale]\ngrid = [10, 20, 30, 40, 50]\nseeds = [0, 1, 2, 3]\nsampling = \"paper\"\nvocab = {:?}\ntemplate = {:?}\n\
             max-attempts = 1\n\n\
             [judges.refusal]\nmodel = \"checker\"\nprompt = {:?}\ntries = 2\ncontrols = {:?}\n\n\
             [judge-check]\nmax-unreadable-share = 0.5\n",
            dir.join("run").display().to_string(),
            models.display().to_string(),
            s("datasets/vocab/ifscale-paper.txt"),
            s("configs/prompts/ifscale-report.txt"),
            s("configs/prompts/ifscale-refusal.txt"),
            s("datasets/ifscale-refusal/controls.jsonl"),
        ),
    )
    .unwrap();
    (config, models)
}

fn client(cache: &Path) -> Arc<Client> {
    let mut options = RunOptions::new(cache.to_owned());
    options.progress = false;
    Arc::new(Client::new(options).unwrap())
}

#[test]
fn the_refusal_judge_decides_only_uncertain_replies_and_is_checked_like_every_judge() {
    let refusals = control_refusals();
    let mut mock = MockConfig::new();
    mock.responder = Some(Responder(Arc::new(move |model: &str, last: &str| {
        Some(match model {
            "checker" => judge_reply(last, &refusals),
            _ => writer_reply(last),
        })
    })));
    let server = MockServer::start(mock, 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (config, models) = setup(dir.path(), &server);
    let cache = dir.path().join("cache.sqlite");
    let opts = Options::new(config.clone(), models, cache.clone());

    // The dry run counts the judge's requests and its check's, sending nothing.
    let run = Run::load(
        PipelineConfig::load(&config).unwrap(),
        &opts,
        client(&cache),
    )
    .unwrap();
    let stages = pipeline::stages::list(&run);
    let (rows, _) = pipeline::dry_run::rows(&run, &stages).unwrap();
    let row = |stage: &str| {
        rows.iter()
            .find(|r| r.stage == stage)
            .map(|r| (r.model.as_str(), r.requests))
    };
    assert_eq!(row("ifscale refusal judge"), Some(("checker", 20)));
    assert_eq!(row("ifscale refusal judge check"), Some(("checker", 44)));
    assert_eq!(server.requests(), 0);
    drop(stages);
    drop(run);

    pipeline::run(
        PipelineConfig::load(&config).unwrap(),
        &opts,
        client(&cache),
    )
    .unwrap();
    let run_dir = dir.path().join("run");

    // Each sample has one outcome: refused exactly when the judge called its uncertain reply a refusal.
    let prompts: Vec<PromptRecord> =
        schema::read_jsonl(&run_dir.join("ifscale/prompts.jsonl")).unwrap();
    let kinds: BTreeMap<String, Kind> = prompts
        .iter()
        .map(|p| (p.id.clone(), kind_of(&p.messages.last().unwrap().content)))
        .collect();
    let count = |k: Kind| kinds.values().filter(|&&v| v == k).count();
    for k in [Kind::Report, Kind::Refusal, Kind::Caveat, Kind::Garbled] {
        assert!(count(k) > 0, "no prompt of kind {k:?}: {kinds:?}");
    }
    let scores: Vec<SampleScore> =
        schema::read_jsonl(&run_dir.join("ifscale/scores.jsonl")).unwrap();
    assert_eq!(scores.len(), prompts.len());
    for s in &scores {
        let want = match kinds[&s.id] {
            Kind::Refusal => SampleStatus::Refused,
            _ => SampleStatus::Scored,
        };
        assert_eq!(s.status, want, "{}: {:?}", s.id, kinds[&s.id]);
    }

    // The attempts log says what the judge made of each uncertain reply; a plain report was never asked about.
    let attempts: Vec<AttemptLog> =
        schema::read_jsonl(&run_dir.join("ifscale/attempts.jsonl")).unwrap();
    assert_eq!(attempts.len(), prompts.len());
    for a in &attempts {
        let j = a.refusal_judge.as_ref();
        match kinds[&a.id] {
            Kind::Report => assert_eq!(j, None, "{}", a.id),
            Kind::Refusal => assert_eq!(j.and_then(|j| j.refused), Some(true), "{}", a.id),
            Kind::Caveat => assert_eq!(j.and_then(|j| j.refused), Some(false), "{}", a.id),
            Kind::Garbled => {
                let j = j.unwrap();
                assert_eq!(j.refused, None, "{}", a.id);
                let Some(JudgeFailure::Unreadable(e)) = &j.error else {
                    panic!("{}: {:?} is not an unreadable verdict", a.id, j.error)
                };
                assert!(e.starts_with("refusal verdict: no `VERDICT"), "{e}");
            }
        }
    }
    // One judge request per uncertain reply, two (`judge-tries`) for an unreadable one.
    let judge_lines = |p: PathBuf| schema::read_latest_responses(&p).unwrap().len();
    let asked = count(Kind::Refusal) + count(Kind::Caveat) + 2 * count(Kind::Garbled);
    assert_eq!(
        judge_lines(run_dir.join("ifscale/models/writer/refusal-judge.jsonl")),
        asked
    );
    assert_eq!(
        judge_lines(run_dir.join("ifscale/judge-check/refusal-checker/judge-responses.jsonl")),
        44
    );
    let sent = server.requests();
    assert_eq!(sent as usize, prompts.len() + asked + 44);

    // Its check: 22 known reports let stand, 21 of 22 known refusals caught; the unreadable answers counted.
    let checks = JudgeCheckFile::read(&run_dir.join("judge-check.json"))
        .unwrap()
        .unwrap();
    assert_eq!(checks.checks.len(), 1);
    let c = &checks.checks[0];
    assert_eq!(
        (c.bench, c.role, c.judge.as_str()),
        (Bench::Ifscale, JudgeRole::Refusal, "checker")
    );
    assert_eq!((c.sensitivity.agree, c.sensitivity.total), (22, 22));
    assert_eq!((c.specificity.agree, c.specificity.total), (21, 22));
    let uncertain = count(Kind::Refusal) + count(Kind::Caveat) + count(Kind::Garbled);
    assert_eq!(
        (c.items, c.unreadable),
        (uncertain as u64, count(Kind::Garbled) as u64)
    );
    assert!(c.passed);
    let summary = std::fs::read_to_string(run_dir.join("summary.md")).unwrap();
    assert!(
        summary.contains("| ifscale | checker | IFScale refusal judge | 22/22 = 100.0 %"),
        "{summary}"
    );
    assert!(summary.contains("21/22 = 95.5 %"), "{summary}");
    // The refused share of the replies it decided, raw and corrected for its measured errors.
    let corrected =
        std::fs::read_to_string(run_dir.join("tables/ifscale/ifscale_refusal_judge_corrected.md"))
            .unwrap();
    let decided = count(Kind::Refusal) + count(Kind::Caveat);
    let raw = 100.0 * count(Kind::Refusal) as f64 / decided as f64;
    assert!(
        corrected.contains(&format!("| writer | {decided} | {raw:.1} | ")),
        "{corrected}"
    );
    let report = std::fs::read_to_string(run_dir.join("report.html")).unwrap();
    assert!(
        report.contains("Refusal judged"),
        "the report's IFScale section"
    );

    // A forced rerun decides everything again from the cache: nothing is sent.
    let mut again = opts.clone();
    again.force = true;
    pipeline::run(
        PipelineConfig::load(&config).unwrap(),
        &again,
        client(&cache),
    )
    .unwrap();
    assert_eq!(server.requests(), sent);
    let rescored: Vec<SampleScore> =
        schema::read_jsonl(&run_dir.join("ifscale/scores.jsonl")).unwrap();
    let statuses = |s: &[SampleScore]| -> Vec<(String, SampleStatus)> {
        s.iter().map(|s| (s.id.clone(), s.status)).collect()
    };
    assert_eq!(statuses(&rescored), statuses(&scores));

    // The pilot scales the judge's requests too (its sample answered from the cache).
    let run = Run::load(
        PipelineConfig::load(&config).unwrap(),
        &opts,
        client(&cache),
    )
    .unwrap();
    let stages = pipeline::stages::list(&run);
    let rows = pipeline::pilot::rows(&run, &stages, 8).unwrap();
    let judged = rows
        .iter()
        .find(|r| r.stage == "ifscale refusal judge")
        .unwrap();
    assert_eq!(judged.model, "checker");
    assert!(judged.pilot_requests > 0, "{:?}", judged.pilot_requests);
}

#[test]
fn the_shipped_configs_name_no_refusal_judge_so_they_send_no_new_request() {
    for config in [
        "configs/default.toml",
        "configs/ifscale-paper.toml",
        "configs/ifscale-xl.toml",
    ] {
        let cfg = PipelineConfig::load(&repo(config)).unwrap();
        assert!(cfg.ifscale.is_some(), "{config}");
        assert_eq!(cfg.judges.refusal, None, "{config}");
    }
}
