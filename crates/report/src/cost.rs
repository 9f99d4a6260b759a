//! What a run's model calls cost, per benchmark, model and stage, counted from its responses files: requests, how
//! many came from the cache or failed, prompt, visible output and reasoning tokens, output tokens per second of the
//! requests sent, and the spend: the provider's reported cost where a line carries one, else its tokens at the
//! answering model's configured prices. The run's total (what the budget counted) is the spend ledger's.
//! Files are read a chunk at a time, so a paper-scale responses file is never held whole.

use std::collections::BTreeMap;
use std::path::PathBuf;

use schema::Outcome;
use schema::paths::{Bench, RunPaths};

use crate::Error;

/// One stage of one model.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CostRow {
    pub bench: &'static str,
    pub stage: &'static str,
    /// The evaluated model whose folder holds the file (a judge's calls are filed under the model it judged).
    pub model: String,
    pub requests: usize,
    pub cached: usize,
    pub failed: usize,
    pub prompt_tokens: u64,
    pub visible_tokens: u64,
    pub reasoning_tokens: u64,
    /// Output tokens per second of latency, over the requests sent in the run that wrote them (not cached).
    pub output_tokens_per_s: Option<f64>,
    /// Sum of the provider-reported costs, when any line carries one.
    pub reported_usd: Option<f64>,
    /// Spend: provider-reported where present, else tokens × the answering model's prices (None when neither is
    /// known for any line).
    pub spend_usd: Option<f64>,
}

/// USD per million input and output tokens of each configured model, by name (what `ModelConfig` says).
pub type Prices = BTreeMap<String, (f64, f64)>;

/// The stages whose responses files a run keeps, per benchmark.
fn stage_files(paths: &RunPaths, model: &str) -> Vec<(&'static str, &'static str, PathBuf)> {
    let ifs = paths.model(Bench::Ifscale, model);
    let rift = paths.model(Bench::Rift, model);
    vec![
        ("IFScale", "generation", ifs.responses()),
        ("IFScale", "coherence judge", ifs.coherence_judge()),
        ("IFScale", "refusal judge", ifs.refusal_judge()),
        ("RIFT", "answers", rift.responses()),
        ("RIFT", "judge", rift.judge_responses()),
    ]
}

/// The fields of a response line [`cost_rows`] reads.
#[derive(serde::Deserialize)]
struct CostFields {
    #[serde(default)]
    model: String,
    outcome: Outcome,
    #[serde(default)]
    usage: schema::Usage,
    #[serde(default)]
    latency_s: Option<f64>,
    #[serde(default)]
    cached: bool,
}

/// One row per (benchmark, stage, model) with a responses file.
pub fn cost_rows(
    paths: &RunPaths,
    models: &[String],
    prices: &Prices,
) -> Result<Vec<CostRow>, Error> {
    let mut rows = Vec::new();
    let mut files: Vec<(&'static str, &'static str, String, PathBuf)> = Vec::new();
    for model in models {
        for (bench, stage, file) in stage_files(paths, model) {
            files.push((bench, stage, model.clone(), file));
        }
    }
    // The judge check's requests, filed under the judge they checked (`<run>/<bench>/judge-check/<judge>/`).
    for (bench, name) in [(Bench::Ifscale, "IFScale"), (Bench::Rift, "RIFT")] {
        let dir = paths.bench(bench).join("judge-check");
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut judges: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        judges.sort();
        for judge in judges {
            let file = schema::paths::ModelPaths::in_dir(&judge).judge_responses();
            let label = judge
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            files.push((name, "judge check", label, file));
        }
    }
    for (bench, stage, model, file) in files {
        if !file.is_file() {
            continue;
        }
        let mut row = CostRow {
            bench,
            stage,
            model,
            ..CostRow::default()
        };
        let (mut fresh_tokens, mut fresh_seconds) = (0u64, 0.0f64);
        // Streamed, only the fields counted (a paper-scale responses file is hundreds of MB).
        crate::overview::each_line_lenient(&file, |r: CostFields| {
            row.requests += 1;
            row.cached += usize::from(r.cached);
            row.failed += usize::from(r.outcome == Outcome::Failed);
            row.prompt_tokens += r.usage.prompt_tokens;
            row.visible_tokens += r.usage.visible_tokens();
            row.reasoning_tokens += r.usage.reasoning_tokens.unwrap_or(0);
            if let Some(c) = r.usage.cost_usd {
                *row.reported_usd.get_or_insert(0.0) += c;
                *row.spend_usd.get_or_insert(0.0) += c;
            } else if !r.cached
                && let Some((pin, pout)) = prices.get(&r.model).filter(|p| p.0 > 0.0 || p.1 > 0.0)
            {
                *row.spend_usd.get_or_insert(0.0) += (r.usage.prompt_tokens as f64 * pin
                    + r.usage.completion_tokens as f64 * pout)
                    / 1e6;
            }
            if !r.cached
                && let Some(l) = r.latency_s.filter(|l| *l > 0.0)
            {
                fresh_tokens += r.usage.completion_tokens;
                fresh_seconds += l;
            }
            true
        })?;
        row.output_tokens_per_s =
            (fresh_seconds > 0.0).then(|| fresh_tokens as f64 / fresh_seconds);
        rows.push(row);
    }
    Ok(rows)
}

/// The spend recorded in a run's ledger (`None` when the run has none).
pub fn ledger_total(paths: &RunPaths) -> Result<Option<f64>, Error> {
    let path = paths.spend_ledger();
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(&path, e)),
    };
    let total = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v.get("usd").and_then(serde_json::Value::as_f64))
        .sum();
    Ok(Some(total))
}

/// The cost table: one row per (benchmark, stage, model).
pub fn cost_table(rows: &[CostRow]) -> schema::Table {
    use schema::table::{left, right};
    let mut t = schema::Table::new(vec![
        left("benchmark"),
        left("stage"),
        left("model"),
        right("requests"),
        right("from cache"),
        right("failed"),
        right("prompt tokens"),
        right("visible output tokens"),
        right("reasoning tokens"),
        right("output tok/s"),
        right("spend USD"),
        right("of which provider-reported"),
    ]);
    let usd = |v: Option<f64>| v.map_or_else(|| "–".to_owned(), |u| format!("{u:.4}"));
    for r in rows {
        t.push(vec![
            r.bench.to_string(),
            r.stage.to_string(),
            r.model.clone(),
            r.requests.to_string(),
            r.cached.to_string(),
            r.failed.to_string(),
            r.prompt_tokens.to_string(),
            r.visible_tokens.to_string(),
            r.reasoning_tokens.to_string(),
            r.output_tokens_per_s
                .map_or_else(|| "–".to_owned(), |t| format!("{t:.1}")),
            usd(r.spend_usd),
            usd(r.reported_usd),
        ]);
    }
    t
}

/// The sentences below the cost table: where judge rows are filed, how spend is counted, and the ledger's total.
pub fn cost_notes(ledger: Option<f64>) -> [String; 2] {
    [
        "Judge rows are filed under the model whose answers or reports were judged; judge check rows (control items with a known verdict) under the judge they checked. Spend is the provider's reported cost where a response carries one, else its tokens at the answering model's configured prices (answers served from the cache cost nothing).".to_owned(),
        match ledger {
            Some(total) => format!(
                "Spend recorded in the run's ledger (provider-reported where present, else tokens × the model's prices): {total:.4} USD."
            ),
            None => "No spend ledger: nothing in this run was paid for.".to_owned(),
        },
    ]
}

/// The cost table in Markdown, with the ledger's total below it; empty when the run made no model call.
pub fn cost_markdown(rows: &[CostRow], ledger: Option<f64>) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let [how, total] = cost_notes(ledger);
    format!(
        "## What it cost\n\n{}\n{how}\n{total}\n\n",
        cost_table(rows).to_markdown()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use schema::{ResponseRecord, Usage};

    fn line(model: &str, cost: Option<f64>, cached: bool) -> String {
        let r = ResponseRecord {
            content: Some("x".to_owned()),
            usage: Usage {
                prompt_tokens: 1_000,
                completion_tokens: 500,
                reasoning_tokens: Some(200),
                cost_usd: cost,
            },
            latency_s: Some(2.0),
            wall_s: 2.0,
            cached,
            ..ResponseRecord::new(format!("p-{model}-{cached}-{}", cost.is_some()), model)
        };
        serde_json::to_string(&r).expect("json") + "\n"
    }

    #[test]
    fn spend_is_reported_where_present_else_priced_and_cached_answers_are_free() {
        let dir = tempfile::tempdir().expect("tempdir");
        let paths = RunPaths::new(dir.path());
        let file = paths.model(Bench::Rift, "m").responses();
        std::fs::create_dir_all(file.parent().expect("dir")).expect("mkdir");
        std::fs::write(
            &file,
            [
                line("m", Some(0.25), false),
                line("m", None, false),
                line("m", None, true),
            ]
            .concat(),
        )
        .expect("write");
        let prices: Prices = [("m".to_owned(), (2.0, 10.0))].into();
        let rows = cost_rows(&paths, &["m".to_owned()], &prices).expect("rows");
        let r = &rows[0];
        assert_eq!((r.requests, r.cached), (3, 1));
        assert_eq!(r.reasoning_tokens, 600);
        assert_eq!(r.visible_tokens, 900);
        assert_eq!(r.reported_usd, Some(0.25));
        // 0.25 reported + (1 000 × 2 + 500 × 10) / 1e6 priced.
        assert!((r.spend_usd.expect("spend") - 0.257).abs() < 1e-12);
        let md = cost_markdown(&rows, None);
        assert!(
            md.contains("| RIFT | answers | m | 3 | 1 | 0 | 3000 | 900 | 600 |"),
            "{md}"
        );
        assert!(md.contains("| 0.2570 | 0.2500 |"), "{md}");
    }
}
