//! Stage 1 helper: download 10-K filings from SEC EDGAR.
//!
//! EDGAR's fair-access rules ask for a User-Agent naming the requester with a contact address and at most
//! 10 requests per second; [`FetchConfig`] enforces both. For each CIK the submissions index
//! (`{data-base}/submissions/CIK##########.json`, plus its older pages) lists the filings; every `10-K` (and
//! `10-K405`) filed in one of the requested years is downloaded from
//! `{archives-base}/Archives/edgar/data/{cik}/{accession without dashes}/{primary document}`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Deserialize;

use crate::Error;

/// Settings of a download.
#[derive(Debug, Clone)]
pub struct FetchConfig {
    /// Base URL of the submissions API (EDGAR: `https://data.sec.gov`).
    pub data_base: String,
    /// Base URL of the archives (EDGAR: `https://www.sec.gov`).
    pub archives_base: String,
    /// Descriptive User-Agent with a contact, e.g. `ifstress research jane@example.org`.
    pub user_agent: String,
    /// Requests per second, at most 10.
    pub max_rps: f64,
    pub timeout: Duration,
}

/// Default EDGAR hosts.
pub const EDGAR_DATA_BASE: &str = "https://data.sec.gov";
pub const EDGAR_ARCHIVES_BASE: &str = "https://www.sec.gov";

/// One downloaded filing.
#[derive(Debug, Clone, PartialEq)]
pub struct Fetched {
    pub cik: u64,
    pub accession: String,
    pub filing_date: String,
    pub path: PathBuf,
    pub bytes: u64,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Columns {
    #[serde(default)]
    accession_number: Vec<String>,
    #[serde(default)]
    filing_date: Vec<String>,
    #[serde(default)]
    form: Vec<String>,
    #[serde(default)]
    primary_document: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct Submissions {
    filings: Filings,
}

#[derive(Debug, Deserialize)]
struct Filings {
    recent: Columns,
    #[serde(default)]
    files: Vec<PageRef>,
}

#[derive(Debug, Deserialize)]
struct PageRef {
    name: String,
}

/// Checks that a User-Agent names someone and gives a contact (an e-mail address).
pub fn validate_user_agent(ua: &str) -> Result<(), Error> {
    let ua = ua.trim();
    let has_mail = ua.split_whitespace().any(|w| {
        let w = w.trim_matches(|c| c == '<' || c == '>' || c == '(' || c == ')');
        w.split_once('@')
            .is_some_and(|(a, b)| !a.is_empty() && b.contains('.'))
    });
    if !has_mail || ua.split_whitespace().count() < 2 {
        return Err(Error::Config(
            "SEC EDGAR needs a descriptive User-Agent with a contact, e.g. \"ifstress research jane@example.org\"".to_owned(),
        ));
    }
    Ok(())
}

struct Client {
    http: reqwest::blocking::Client,
    min_gap: Duration,
    last: Option<Instant>,
}

impl Client {
    fn get(&mut self, url: &str) -> Result<Vec<u8>, Error> {
        if let Some(last) = self.last {
            let since = last.elapsed();
            if since < self.min_gap {
                std::thread::sleep(self.min_gap - since);
            }
        }
        self.last = Some(Instant::now());
        tracing::debug!(url, "GET");
        let resp = self.http.get(url).send().map_err(|e| Error::Fetch {
            url: url.to_owned(),
            what: e.to_string(),
        })?;
        let status = resp.status();
        if !status.is_success() {
            return Err(Error::Fetch {
                url: url.to_owned(),
                what: format!("HTTP {status}"),
            });
        }
        let bytes = resp.bytes().map_err(|e| Error::Fetch {
            url: url.to_owned(),
            what: e.to_string(),
        })?;
        Ok(bytes.to_vec())
    }
}

/// Downloads every 10-K of `ciks` filed in one of `years` into `out_dir`, named
/// `{cik}_10K_{year}_{accession}.{ext}`. Files already present are not fetched again.
pub fn fetch_10k(
    cfg: &FetchConfig,
    ciks: &[u64],
    years: &[i32],
    out_dir: &Path,
) -> Result<Vec<Fetched>, Error> {
    validate_user_agent(&cfg.user_agent)?;
    if !(cfg.max_rps > 0.0 && cfg.max_rps <= 10.0) {
        return Err(Error::Config(format!(
            "max-rps must be in (0, 10] (SEC EDGAR's limit), got {}",
            cfg.max_rps
        )));
    }
    let http = reqwest::blocking::Client::builder()
        .user_agent(cfg.user_agent.trim())
        .timeout(cfg.timeout)
        .build()
        .map_err(|e| Error::Config(format!("HTTP client: {e}")))?;
    let mut client = Client {
        http,
        min_gap: Duration::from_secs_f64(1.0 / cfg.max_rps),
        last: None,
    };
    std::fs::create_dir_all(out_dir).map_err(|e| Error::io(out_dir, e))?;
    let data = cfg.data_base.trim_end_matches('/');
    let archives = cfg.archives_base.trim_end_matches('/');
    let mut out = Vec::new();
    for &cik in ciks {
        let url = format!("{data}/submissions/CIK{cik:010}.json");
        let body = client.get(&url)?;
        let subs: Submissions = serde_json::from_slice(&body).map_err(|e| Error::Fetch {
            url: url.clone(),
            what: format!("unexpected submissions JSON: {e}"),
        })?;
        let mut pages = vec![subs.filings.recent];
        for page in &subs.filings.files {
            let url = format!("{data}/submissions/{}", page.name);
            let body = client.get(&url)?;
            let cols: Columns = serde_json::from_slice(&body).map_err(|e| Error::Fetch {
                url: url.clone(),
                what: format!("unexpected submissions page JSON: {e}"),
            })?;
            pages.push(cols);
        }
        for cols in &pages {
            for i in 0..cols.accession_number.len() {
                let form = cols.form.get(i).map_or("", String::as_str);
                if form != "10-K" && form != "10-K405" {
                    continue;
                }
                let date = cols.filing_date.get(i).cloned().unwrap_or_default();
                let year: i32 = date.get(..4).and_then(|y| y.parse().ok()).unwrap_or(0);
                if !years.contains(&year) {
                    continue;
                }
                let acc = &cols.accession_number[i];
                let doc = cols.primary_document.get(i).map_or("", String::as_str);
                if doc.is_empty() || doc.contains('/') || doc.contains("..") {
                    tracing::warn!(cik, accession = %acc, "Skipping a filing without a usable primary document name.");
                    continue;
                }
                let ext = match Path::new(doc)
                    .extension()
                    .and_then(|e| e.to_str())
                    .map(str::to_ascii_lowercase)
                {
                    Some(e) if e == "htm" || e == "html" => "htm",
                    _ => "txt",
                };
                let path = out_dir.join(format!("{cik}_10K_{year}_{acc}.{ext}"));
                if path.is_file() {
                    tracing::info!(path = %path.display(), "Already downloaded.");
                    let bytes = std::fs::metadata(&path)
                        .map_err(|e| Error::io(&path, e))?
                        .len();
                    out.push(Fetched {
                        cik,
                        accession: acc.clone(),
                        filing_date: date,
                        path,
                        bytes,
                    });
                    continue;
                }
                let url = format!(
                    "{archives}/Archives/edgar/data/{cik}/{}/{doc}",
                    acc.replace('-', "")
                );
                let body = client.get(&url)?;
                schema::write_atomic(&path, &body)?;
                tracing::info!(path = %path.display(), bytes = body.len(), "Downloaded a 10-K.");
                out.push(Fetched {
                    cik,
                    accession: acc.clone(),
                    filing_date: date,
                    path,
                    bytes: body.len() as u64,
                });
            }
        }
    }
    Ok(out)
}
