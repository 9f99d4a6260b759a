//! The judges of the shipped configs, after the move to `[judges.<role>]`: the same judge, prompt and request
//! settings as the flat keys gave (their defaults: the paper configs set only the model and the rubric file), so the
//! same request bytes, pinned by their SHA-256 below (recorded with this test; a change to what a paper config sends
//! is a reviewed change of the pin).

use std::path::{Path, PathBuf};

use harness::helper::HelperCall;
use pipeline::PipelineConfig;
use pipeline::config::LoadedJudge;
use schema::judge::JudgeRole;
use schema::rift::JudgeRequest;
use schema::{Message, PromptRecord};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

/// The judge request a fixed item makes: what the cache keys on (the model's identity, the messages and the
/// parameters), hashed.
fn request_digest(judge: &LoadedJudge) -> String {
    let prompt = match judge.role {
        JudgeRole::RiftAnswers => scoring::rift::judge_prompts(
            &[JudgeRequest {
                id: "item".to_owned(),
                question: "What is the capital of France?".to_owned(),
                expected: "Paris".to_owned(),
                given: "The city of Paris".to_owned(),
            }],
            &judge.prompt,
            &judge.call.params(),
        )
        .remove(0),
        JudgeRole::Coherence => PromptRecord {
            id: "item".to_owned(),
            messages: vec![Message::user(scoring::ifscale::coherence_judge_prompt(
                &judge.prompt,
                "Revenue grew by four percent on the year.",
            ))],
            sample_index: 0,
            params: judge.call.params(),
            extra: serde_json::Map::new(),
        },
        JudgeRole::Refusal => unreachable!("no shipped config names a refusal judge"),
    };
    let text = format!(
        "{}\u{1f}{}\u{1f}{}",
        judge.model.model_id,
        serde_json::to_string(&prompt.messages).unwrap(),
        serde_json::to_string(&prompt.params).unwrap()
    );
    schema::sha256_hex(text.as_bytes())
}

#[test]
fn the_paper_configs_send_the_same_judge_requests_as_before_the_move() {
    // The flat keys of these configs set the model and (IFScale) the rubric file only, so their requests carried the
    // default settings; the tables must give exactly those.
    for (config, role, model, digest) in [
        (
            "configs/ifscale-paper.toml",
            JudgeRole::Coherence,
            "o4-mini-judge",
            "fbbc4ca77400346064734c6ef628f65654814f818f2048a401ed15d5de6238f4",
        ),
        (
            "configs/ifscale-xl.toml",
            JudgeRole::Coherence,
            "o4-mini-judge",
            "fbbc4ca77400346064734c6ef628f65654814f818f2048a401ed15d5de6238f4",
        ),
        (
            "configs/rift-paper.toml",
            JudgeRole::RiftAnswers,
            "rift-judge",
            "6a099cf5a0a970cdc1b07c3ede733040938b91dc2744c7aba25efc76885d87a7",
        ),
    ] {
        let path = repo(config);
        let cfg = PipelineConfig::load(&path).unwrap();
        let models = repo(&cfg.run.models_file.display().to_string());
        let section = cfg
            .judges
            .get(role)
            .unwrap_or_else(|| panic!("{config}: no {role}"));
        // As `LoadedJudge::load` reads it, with the repository-relative paths taken from the repository.
        let prompt_file = section.prompt_file(role);
        let judge = LoadedJudge {
            role,
            section: section.clone(),
            model: pipeline::models::load_model(&models, &section.model).unwrap(),
            prompt: harness::ifscale::read_rubric(
                &repo(&prompt_file.display().to_string()),
                "judge",
            )
            .unwrap(),
            prompt_file,
            call: section.call(),
        };
        assert_eq!(judge.model.name, model, "{config}");
        assert_eq!(judge.call, HelperCall::judge(), "{config}: the defaults");
        assert_eq!(
            judge.prompt_file,
            PathBuf::from(pipeline::config::judges::default_prompt(role)),
            "{config}"
        );
        assert_eq!(request_digest(&judge), digest, "{config}");
        for other in JudgeRole::ALL.into_iter().filter(|r| *r != role) {
            assert!(cfg.judges.get(other).is_none(), "{config}: no {other}");
        }
    }
    let cfg = PipelineConfig::load(&repo("configs/default.toml")).unwrap();
    assert_eq!(
        cfg.judges.iter().count(),
        0,
        "the default run asks no judge"
    );
}
