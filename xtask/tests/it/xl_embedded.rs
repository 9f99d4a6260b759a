//! The IFScale-XL grid on the embedded model, up to its context (issue 43): `configs/ifscale-xl.toml`'s vocabulary,
//! template and grid narrowed to one seed, the densities up to 1 000, one attempt and a small output cap, run on
//! SmolLM2-135M (8 192-token context). The prompts up to N = 500 are sent and each ends in one outcome; those of
//! N = 750 and 1 000 do not fit, are listed in `does-not-fit.jsonl` and never sent. The fit check's estimate of
//! every XL prompt, N = 10 to 10 000 and seeds 0–4, is at least the embedded model's own count of its tokens (chat
//! template included), so no prompt the check lets through can overflow the window.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::repo;
use schema::ifscale::{PromptMeta, SampleScore, SampleStatus};
use schema::{Outcome, PromptRecord, ResponseRecord};

/// The largest density the embedded model's context holds (the XL grid's points up to it are sent).
const LARGEST_FITTING: u32 = 500;

/// `configs/ifscale-xl.toml`, narrowed: the embedded model from `configs/models.toml`, seed 0, N ≤ 1 000, no judge,
/// one attempt, 32 output tokens, a cache in the folder.
fn narrowed_config(dir: &Path) {
    let mut cfg =
        pipeline::PipelineConfig::load(Path::new(&repo("configs/ifscale-xl.toml"))).unwrap();
    cfg.run.name = "xl-embedded".to_owned();
    cfg.run.models_file = "configs/models.toml".into();
    cfg.run.models = vec!["smollm2-135m".to_owned()];
    cfg.run.reasoning_models = None;
    cfg.run.cache = "cache.sqlite".into();
    let ifs = cfg.ifscale.as_mut().unwrap();
    ifs.grid.retain(|&n| n <= 1_000);
    assert_eq!(ifs.grid, [10, 50, 100, 250, 500, 750, 1000]);
    ifs.seeds = vec![0];
    ifs.max_attempts = 1;
    ifs.max_tokens = Some(32);
    cfg.judges.coherence = None;
    std::fs::write(dir.join("run.toml"), toml::to_string(&cfg).unwrap()).unwrap();
}

#[test]
fn the_xl_grid_runs_on_the_embedded_model_up_to_its_context_window() {
    let dir = tempfile::tempdir().unwrap();
    for d in ["configs", "datasets"] {
        std::os::unix::fs::symlink(repo(d), dir.path().join(d)).unwrap();
    }
    narrowed_config(dir.path());
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .current_dir(dir.path())
        .args(["pipeline", "--config", "run.toml", "--no-progress"])
        .env("NO_COLOR", "1")
        // No screenshot of the report: a test does not need Chromium.
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{log}");
    let run = dir.path().join("artifacts/runs/xl-embedded");

    let prompts: Vec<PromptRecord> =
        schema::read_jsonl(&run.join("ifscale/prompts.jsonl")).unwrap();
    let density: BTreeMap<String, u32> = prompts
        .iter()
        .map(|p| {
            let meta: PromptMeta =
                serde_json::from_value(serde_json::Value::Object(p.extra.clone())).unwrap();
            (p.id.clone(), meta.num_rules)
        })
        .collect();
    assert_eq!(density.len(), 7);
    let fitting: BTreeSet<&str> = density
        .iter()
        .filter(|(_, n)| **n <= LARGEST_FITTING)
        .map(|(id, _)| id.as_str())
        .collect();
    assert_eq!(fitting.len(), 5);

    // Every prompt up to N = 500 was sent once and answered (none failed for want of context).
    let model = run.join("ifscale/models/smollm2-135m");
    let responses: Vec<ResponseRecord> =
        schema::read_jsonl(&model.join("responses.jsonl")).unwrap();
    let sent: BTreeSet<&str> = responses.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(sent, fitting, "{log}");
    assert_eq!(responses.len(), fitting.len());
    for r in &responses {
        assert_ne!(r.outcome, Outcome::Failed, "{}: {:?}", r.id, r.error);
    }

    // Each sent sample has exactly one outcome; none is a failed request.
    let scores: Vec<SampleScore> = schema::read_jsonl(&run.join("ifscale/scores.jsonl")).unwrap();
    let scored: Vec<&str> = scores.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(scored.len(), fitting.len());
    assert_eq!(scored.iter().copied().collect::<BTreeSet<_>>(), fitting);
    for s in &scores {
        assert_ne!(s.status, SampleStatus::RequestFailed, "{}", s.id);
        assert_ne!(s.status, SampleStatus::Failed, "{}", s.id);
    }

    // N = 750 and 1 000 do not fit: listed, never sent, never scored.
    let unfit: Vec<serde_json::Value> =
        schema::read_jsonl(&run.join("ifscale/does-not-fit.jsonl")).unwrap();
    let listed: BTreeMap<u64, &str> = unfit
        .iter()
        .map(|d| {
            assert_eq!(d["status"], "does-not-fit", "{d}");
            assert_eq!(d["model"], "smollm2-135m", "{d}");
            assert_eq!(d["context_window"], 8192, "{d}");
            let id = d["id"].as_str().unwrap();
            assert!(!sent.contains(id), "{id} was sent");
            (d["num_rules"].as_u64().unwrap(), id)
        })
        .collect();
    assert_eq!(listed.keys().copied().collect::<Vec<_>>(), [750, 1000]);
    let summary = std::fs::read_to_string(run.join("summary.md")).unwrap();
    assert!(summary.contains("## Does not fit"), "{summary}");

    // The outcomes table has a row for each sent density, none for the others. With 32 output tokens some
    // replies are cut (failures), so the table is written.
    let outcomes = std::fs::read_to_string(run.join("tables/ifscale/ifscale_outcomes.md")).unwrap();
    for n in [10, 50, 100, 250, 500] {
        assert!(
            outcomes.contains(&format!("| smollm2-135m | {n} | 1 |")),
            "N = {n}:\n{outcomes}"
        );
    }
    for n in [750, 1000] {
        assert!(
            !outcomes.contains(&format!("| smollm2-135m | {n} |")),
            "N = {n}:\n{outcomes}"
        );
    }
}

/// The SmolLM2 GGUF fetched by `cargo xtask setup` (or `$IFSTRESS_GGUF`), as the pipeline resolves it.
fn gguf_path() -> PathBuf {
    if let Some(p) = std::env::var_os(schema::env::EnvVars::IFSTRESS_GGUF).filter(|p| !p.is_empty())
    {
        return PathBuf::from(p);
    }
    schema::env::cache_dir()
        .join("assets")
        .join("smollm2-135m-instruct-q4_1.gguf")
}

#[test]
fn the_fit_estimate_of_every_xl_prompt_is_at_least_the_embedded_models_token_count() {
    let gguf = gguf_path();
    assert!(
        gguf.is_file(),
        "the embedded model {} is missing: run `cargo xtask setup` (or `cargo xtask test`, which fetches it first)",
        gguf.display()
    );
    // Only the tokenizer and the chat template are used: the smallest context, one thread.
    let engine = local_model::Engine::load(&local_model::EngineConfig {
        threads: 1,
        ctx_size: 64,
        max_parallel: 1,
        ..local_model::EngineConfig::new(gguf)
    })
    .unwrap();
    let cfg = pipeline::PipelineConfig::load(Path::new(&repo("configs/ifscale-xl.toml"))).unwrap();
    let mut ifs = cfg.ifscale.unwrap();
    ifs.vocab = Some(repo("datasets/vocab/xl.tsv").into());
    ifs.template = repo("configs/prompts/ifscale-report.txt").into();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("prompts.jsonl");
    assert_eq!(
        harness::ifscale::write_prompts(&ifs, None, &file).unwrap(),
        65
    );
    let prompts: Vec<PromptRecord> = schema::read_jsonl(&file).unwrap();
    let mut counted = BTreeMap::new();
    for p in &prompts {
        let messages: Vec<local_model::ChatMessage> = p
            .messages
            .iter()
            .map(|m| local_model::ChatMessage::new(m.role.clone(), m.content.clone()))
            .collect();
        let rendered = engine.render_prompt(&messages).unwrap();
        let real = engine.tokenize(&rendered).len() as u64;
        let estimate = pipeline::fit::prompt_tokens(p);
        assert!(real > 0, "{}", p.id);
        assert!(
            estimate >= real,
            "{}: the fit check estimates {estimate} prompt tokens, SmolLM2's tokenizer counts {real} ({} characters)",
            p.id,
            p.messages
                .iter()
                .map(|m| m.content.chars().count())
                .sum::<usize>()
        );
        counted.insert(p.id.clone(), (real, estimate));
    }
    // Conservative, not wildly so: at most a fifth and 100 tokens over, and N = 500 still fits the window with 32
    // output tokens (the test above sends it).
    for (id, (real, estimate)) in &counted {
        assert!(
            estimate * 5 <= real * 6 + 500,
            "{id}: {estimate} for {real}"
        );
    }
    let (_, estimate) = counted["ifscale-n500-s0"];
    assert!(
        estimate + 32 <= u64::from(inference_client::EMBEDDED_CONTEXT),
        "{estimate}"
    );
}
