//! RIFT with `--batch`: the baseline prompts and the judge go through the mock's Batch API, give the same scores as
//! one-by-one requests, and a rerun sends nothing.

use std::time::Duration;

use inference_client::{BatchMode, BatchOptions, Client};

use crate::rift::Tiny;
use crate::support::opts;

#[test]
fn baseline_and_judge_go_through_batch_jobs_and_a_rerun_sends_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = Tiny::new(dir.path());
    t.answerer.batch = Some(BatchMode::Openai);
    t.judge.batch = Some(BatchMode::Openai);
    let mut o = opts(dir.path());
    o.progress = false;
    o.batch = Some(BatchOptions {
        poll_interval: Duration::from_millis(5),
        ..BatchOptions::default()
    });
    let client = Client::new(o).unwrap();
    let mock = &t.mock;
    let stages = || t.stages(&client).1;
    let verdicts = stages();
    assert_eq!((verdicts.judged, verdicts.unjudged), (2, 0));
    // The multi-question prompt one by one; the baseline prompt (1 line) and the two judge requests as batches.
    assert_eq!(mock.requests(), 1);
    let b = mock.batch_stats();
    assert_eq!((b.batches, b.lines), (2, 3));
    assert_eq!(client.unfinished(), 0);

    t.assert_judged();

    // Everything is on file and in the cache: a rerun sends no request and submits no batch.
    stages();
    assert_eq!(mock.requests(), 1);
    assert_eq!(mock.batch_stats().batches, 2);
}
