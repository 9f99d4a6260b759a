//! configs/models.toml parses, and bad configs give one-line errors naming the field.

use std::path::Path;

use inference_client::{Engine, Models};

#[test]
fn repository_models_file_parses() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/models.toml");
    let models = Models::load(&path).unwrap();
    let small = models.get("smollm2-135m").unwrap();
    assert_eq!(small.engine, Engine::Embedded);
    assert_eq!(small.temperature, Some(0.0));
    assert!(small.max_concurrency <= 2);
    assert_eq!(models.get("qwen2.5-7b-vllm").unwrap().base_urls.len(), 2);
    assert!(
        models
            .get("nope")
            .unwrap_err()
            .to_string()
            .contains("smollm2-135m")
    );
}

#[test]
fn bad_configs_are_rejected_with_the_field() {
    let err = Models::parse(
        "[models.a]\nmodel-id = \"x\"\nbase-urls = [\"http://h/v1\"]\ntemprature = 1\n",
        "m.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("m.toml") && err.contains("temprature"),
        "{err}"
    );
    let err = Models::parse("[models.a]\nmodel-id = \"x\"\n", "m.toml")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("[models.a]") && err.contains("base-urls"),
        "{err}"
    );
    let err = Models::parse(
        "[models.a]\nmodel-id = \"x\"\nbase-urls = [\"h/v1\"]\n",
        "m.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("http://"), "{err}");
    let err = Models::parse(
        "[models.a]\nmodel-id = \"x\"\nbase-urls = [\"http://h/v1\"]\nbatch-price-share = -0.5\n",
        "m.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("[models.a]") && err.contains("batch-price-share"),
        "{err}"
    );
}
