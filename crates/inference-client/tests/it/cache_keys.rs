//! The cache key covers what determines an answer, and nothing else.

use inference_client::Cache;
use mock_provider::{MockConfig, MockServer};

use crate::support::{model, opts, prompts, run};

#[test]
fn two_models_same_prompt_are_two_entries() {
    let mock = MockServer::start(MockConfig::new(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let o = opts(dir.path());
    let a = model(&mock.base_url());
    let mut b = model(&mock.base_url());
    b.model_id = "another-model".into();
    b.name = "another".into();
    let ps = prompts(1);
    run(&a, &ps, &dir.path().join("a.jsonl"), &o);
    let (sb, recs) = run(&b, &ps, &dir.path().join("b.jsonl"), &o);
    assert_eq!(
        (sb.sent, sb.cached),
        (1, 0),
        "model b must not get model a's answer"
    );
    assert_eq!(recs[0].model, "another");
    assert_eq!(mock.requests(), 2);
    let cache = Cache::open(&o.cache_path).unwrap();
    assert_eq!(cache.len().unwrap(), 2);
    let by_model = cache.count_by_model().unwrap();
    assert_eq!(
        by_model,
        vec![
            ("openai:another-model".to_owned(), 1),
            ("openai:mock-model".to_owned(), 1)
        ]
    );
}

#[test]
fn replica_and_name_do_not_matter_but_params_and_sample_index_do() {
    let m1 = MockServer::start(MockConfig::new(), 0).unwrap();
    let m2 = MockServer::start(MockConfig::new(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let o = opts(dir.path());
    let ps = prompts(3);
    run(&model(&m1.base_url()), &ps, &dir.path().join("1.jsonl"), &o);
    // Same model id on another replica, under another name: all from the cache.
    let mut other = model(&m2.base_url());
    other.name = "renamed".into();
    let (s, recs) = run(&other, &ps, &dir.path().join("2.jsonl"), &o);
    assert_eq!((s.cached, s.sent), (3, 0));
    assert!(recs.iter().all(|r| r.cached && r.model == "renamed"));
    assert_eq!(m2.requests(), 0);

    // A different sampling parameter or sample index is a different request.
    let mut changed = ps.clone();
    changed[0].params.temperature = Some(0.7);
    changed[1].sample_index = 1;
    let (s, _) = run(
        &model(&m1.base_url()),
        &changed,
        &dir.path().join("3.jsonl"),
        &o,
    );
    assert_eq!((s.cached, s.sent), (1, 2));
    let mut hotter = model(&m1.base_url());
    hotter.temperature = Some(1.0);
    let (s, _) = run(&hotter, &ps, &dir.path().join("4.jsonl"), &o);
    assert_eq!((s.cached, s.sent), (0, 3));
    assert_eq!(Cache::open(&o.cache_path).unwrap().len().unwrap(), 8);
}

#[test]
fn refresh_sends_again_and_overwrites() {
    let mock = MockServer::start(MockConfig::new(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts(dir.path());
    let out = dir.path().join("out.jsonl");
    let ps = prompts(4);
    run(&model(&mock.base_url()), &ps, &out, &o);
    o.refresh = true;
    let (s, recs) = run(&model(&mock.base_url()), &ps, &out, &o);
    assert_eq!((s.sent, s.cached, s.resumed), (4, 0, 0));
    assert_eq!(recs.len(), 4);
    assert_eq!(mock.requests(), 8);
    assert_eq!(Cache::open(&o.cache_path).unwrap().len().unwrap(), 4);
}
