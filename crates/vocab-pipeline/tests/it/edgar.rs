//! `fetch_10k` against a mock EDGAR on 127.0.0.1: no request leaves the machine.

use std::collections::HashMap;
use std::time::Duration;

use mock_provider::files::FileServer;
use vocab_pipeline::edgar::{FetchConfig, fetch_10k, validate_user_agent};

/// EDGAR's index and documents for one company (CIK 1234), served on 127.0.0.1.
fn mock() -> FileServer {
    let files: [(&str, &str); 4] = [
        (
            "/submissions/CIK0000001234.json",
            r#"{"cik":"1234","name":"Widget Co","filings":{"recent":{
                "accessionNumber":["0000001234-21-000010","0000001234-21-000011","0000001234-20-000005"],
                "filingDate":["2021-03-01","2021-05-01","2020-03-02"],
                "form":["10-K","10-Q","10-K"],
                "primaryDocument":["wid-10k2020.htm","wid-10q.htm","wid-10k2019.htm"]},
                "files":[{"name":"CIK0000001234-submissions-001.json"}]}}"#,
        ),
        (
            "/submissions/CIK0000001234-submissions-001.json",
            r#"{"accessionNumber":["0000001234-99-000001"],"filingDate":["1999-03-30"],"form":["10-K405"],"primaryDocument":["old.txt"]}"#,
        ),
        (
            "/Archives/edgar/data/1234/000000123421000010/wid-10k2020.htm",
            "<html><body><p>Revenue grew.</p></body></html>",
        ),
        (
            "/Archives/edgar/data/1234/000000123499000001/old.txt",
            "Old revenue text.",
        ),
    ];
    let files: HashMap<String, (u16, Vec<u8>)> = files
        .iter()
        .map(|(path, body)| ((*path).to_owned(), (200, body.as_bytes().to_vec())))
        .collect();
    FileServer::start(files).unwrap()
}

fn cfg(base: &str) -> FetchConfig {
    FetchConfig {
        data_base: base.to_owned(),
        archives_base: base.to_owned(),
        user_agent: "ifstress-tests tester@example.org".to_owned(),
        max_rps: 10.0,
        timeout: Duration::from_secs(10),
    }
}

#[test]
fn downloads_the_10ks_of_the_requested_years_politely() {
    let server = mock();
    let base = server.base_url();
    let dir = tempfile::tempdir().unwrap();
    let got = fetch_10k(&cfg(&base), &[1234], &[1999, 2021], dir.path()).unwrap();
    let names: Vec<String> = got
        .iter()
        .map(|f| f.path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "1234_10K_2021_0000001234-21-000010.htm",
            "1234_10K_1999_0000001234-99-000001.txt"
        ]
    );
    assert_eq!(
        std::fs::read_to_string(&got[1].path).unwrap(),
        "Old revenue text."
    );
    let seen = server.seen();
    assert_eq!(seen.len(), 4, "{seen:?}");
    assert!(
        seen.iter()
            .all(|s| s.user_agent == "ifstress-tests tester@example.org")
    );
    // At most 10 requests per second: request i arrives at least (i − 1) × 100 ms after the first (the arrival
    // of one request may lag behind its sending on a busy machine, which shortens one gap but not the span).
    for (i, s) in seen.iter().enumerate().skip(1) {
        let span = s.at.duration_since(seen[0].at);
        assert!(
            span >= Duration::from_millis(95) * (i as u32 - 1),
            "request {} ({}) only {span:?} after the first",
            i,
            s.path
        );
    }
    let total = seen[seen.len() - 1].at.duration_since(seen[0].at);
    assert!(
        total >= Duration::from_millis(190),
        "{total:?} for {} requests",
        seen.len()
    );
    // A second run finds the files and fetches only the index.
    let again = fetch_10k(&cfg(&base), &[1234], &[1999, 2021], dir.path()).unwrap();
    assert_eq!(again.len(), 2);
}

#[test]
fn refuses_anonymous_or_too_fast_clients() {
    assert!(validate_user_agent("ifstress").is_err());
    assert!(validate_user_agent("someone@example").is_err());
    assert!(validate_user_agent("ifstress research jane@example.org").is_ok());
    let mut c = cfg("http://127.0.0.1:9");
    c.max_rps = 20.0;
    let dir = tempfile::tempdir().unwrap();
    let err = fetch_10k(&c, &[1], &[2020], dir.path())
        .unwrap_err()
        .to_string();
    assert!(err.contains("max-rps"), "{err}");
}

#[test]
fn http_errors_name_the_url() {
    let server = mock();
    let base = server.base_url();
    let dir = tempfile::tempdir().unwrap();
    let err = fetch_10k(&cfg(&base), &[999], &[2020], dir.path())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("/submissions/CIK0000000999.json") && err.contains("404"),
        "{err}"
    );
}
