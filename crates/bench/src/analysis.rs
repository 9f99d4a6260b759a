//! `cargo xtask bench analysis`: the RIFT answer-table aggregation at the paper's scale (≈ 18.6 M rows), polars
//! (lazy, streaming) against pandas running the same aggregation on the same Parquet file, timed in one run.
//!
//! The aggregation (`analysis::rift::aggregate_answers`, what the pipeline runs): per-prompt sums (answers, correct,
//! incorrect, unjudged, wrong-question) grouped by the table's integer prompt code, labelled from each prompt's
//! depth-0 row; from them Table 2 (mean, standard error, median of judged prompt accuracy) and the wrong-question
//! share per model × structure; and judged accuracy by model × structure (the integer group code) × depth. pandas
//! runs the same steps on the same columns. Both sides read the Parquet file inside the timed region. The results are
//! compared (Table 2, wrong-question shares and accuracy by depth to 1e-9) so the two sides provably do the same work.

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};

#[derive(Debug, clap::Args)]
pub struct AnalysisArgs {
    /// Folder for the synthetic Parquet table (default: `<system temp>/ifstress-bench-analysis`); reused when present.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Prompts per structure per model (the paper: 10 000; ≈ 18.6 M rows in total with 6 models).
    #[arg(long, default_value_t = 10_000)]
    prompts: usize,
    /// Regenerate the table even if it exists.
    #[arg(long)]
    regenerate: bool,
    /// Python interpreter for the pandas side.
    #[arg(long, default_value = "python3")]
    python: String,
}

const PANDAS_SCRIPT: &str = r#"
import json, sys, time
import numpy as np
import pandas as pd

start = time.perf_counter()
path = sys.argv[1]
flags = ["correct", "incorrect", "unjudged", "wrong_question"]
df = pd.read_parquet(path, columns=["group", "prompt", "depth"] + flags)
# Each prompt's labels from its first answer (depth 0), as the library reads them. The strings are read as
# categoricals (dictionary indices, not 18.6 M strings); pyarrow cannot push the depth filter into the read (it has
# no filter kernel for the file's string_view columns), so the rows are picked after it.
labels = pd.read_parquet(
    path, columns=["prompt", "model", "structure", "prompt_id"], read_dictionary=["model", "structure", "prompt_id"]
)[df["depth"].to_numpy() == 0]
per_prompt = df.groupby("prompt", sort=False).agg(
    group=("group", "first"), n=("correct", "size"), correct=("correct", "sum"), incorrect=("incorrect", "sum"),
    unjudged=("unjudged", "sum"), wrong=("wrong_question", "sum"),
).join(labels.set_index("prompt"))
judged = per_prompt["n"] - per_prompt["unjudged"]
per_prompt["accuracy"] = (per_prompt["correct"] / judged * 100.0).where(judged > 0)
keys = ["model", "structure"]
table2 = per_prompt.groupby(keys, observed=True)["accuracy"].agg(["size", "mean", "std", "median"])
table2["se"] = table2["std"] / np.sqrt(table2["size"])
wq = per_prompt.groupby(keys, observed=True)[["incorrect", "wrong"]].sum()
wq["share"] = wq["wrong"] / wq["incorrect"] * 100.0
depth = df.groupby(["group", "depth"]).agg(n=("correct", "size"), correct=("correct", "sum"), unjudged=("unjudged", "sum"))
depth = depth.reset_index().merge(per_prompt[["group"] + keys].drop_duplicates("group"), on="group")
depth_judged = depth["n"] - depth["unjudged"]
depth["accuracy"] = (depth["correct"] / depth_judged * 100.0).where(depth_judged > 0)
elapsed = time.perf_counter() - start
num = lambda x: None if pd.isna(x) else float(x)
print(json.dumps({
    "seconds": elapsed,
    "rows": int(len(df)),
    "prompts": int(len(per_prompt)),
    "table2": [[m, s, num(r["mean"]), num(r["se"]), num(r["median"])] for (m, s), r in table2.iterrows()],
    "wrong_question": [[m, s, num(r["share"])] for (m, s), r in wq.iterrows()],
    "depth": [[r.model, r.structure, int(r.depth), num(r.accuracy)] for r in depth.itertuples()],
}))
"#;

#[allow(clippy::print_stdout)]
pub fn run(args: &AnalysisArgs) -> anyhow::Result<()> {
    let dir = args
        .dir
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join("ifstress-bench-analysis"));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let cfg = ::analysis::synthetic::SyntheticConfig {
        prompts_per_structure: args.prompts,
        ..::analysis::synthetic::SyntheticConfig::paper_scale(0)
    };
    // The layout's name is in the file name, so a table written by an older layout is never reused.
    let parquet = dir.join(format!(
        "answers-coded-{}x{}x{}.parquet",
        cfg.models, cfg.prompts_per_structure, cfg.seed
    ));

    // The pandas side is optional to install but required to compare: check it before the long generation.
    let probe = Command::new(&args.python)
        .args(["-c", "import pandas, pyarrow, numpy"])
        .output();
    let pandas_ok = matches!(&probe, Ok(o) if o.status.success());
    if !pandas_ok {
        bail!(
            "the pandas side needs pandas, pyarrow and numpy for `{}`; install them with `{} -m pip install pandas pyarrow` and rerun",
            args.python,
            args.python
        );
    }

    if args.regenerate || !parquet.exists() {
        let t = Instant::now();
        let rows = ::analysis::synthetic::write_answers_parquet(&cfg, &parquet)?;
        println!(
            "generated {rows} answer rows in {:.1} s -> {}",
            t.elapsed().as_secs_f64(),
            parquet.display()
        );
    }
    let size = std::fs::metadata(&parquet).map(|m| m.len()).unwrap_or(0);

    // Polars.
    let t = Instant::now();
    let lf = ::analysis::rift::scan_answers_parquet(&parquet)?;
    let agg = ::analysis::rift::aggregate_answers(lf)?;
    let polars_s = t.elapsed().as_secs_f64();
    let rows: i64 = agg
        .per_prompt
        .column("n")
        .context("per-prompt n")?
        .i64()
        .context("n as i64")?
        .iter()
        .flatten()
        .sum();

    // Pandas.
    let script = dir.join("bench_analysis_pandas.py");
    std::fs::write(&script, PANDAS_SCRIPT)
        .with_context(|| format!("writing {}", script.display()))?;
    let t = Instant::now();
    let output = Command::new(&args.python)
        .arg(&script)
        .arg(&parquet)
        .output()
        .context("running the pandas side")?;
    let pandas_wall = t.elapsed().as_secs_f64();
    if !output.status.success() {
        bail!(
            "the pandas side failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let report: serde_json::Value =
        serde_json::from_slice(&output.stdout).context("parsing the pandas side's output")?;
    let pandas_s = report["seconds"].as_f64().unwrap_or(f64::NAN);

    // Same work: compare Table 2 (mean, SE, median), the wrong-question shares and accuracy by depth.
    let mut max_diff = 0.0f64;
    let t2 = &agg.table2;
    for (column, at) in [("mean", 2), ("se", 3), ("median", 4)] {
        max_diff = max_diff.max(compare(t2, &[], column, &report["table2"], at, "Table 2")?);
    }
    max_diff = max_diff.max(compare(
        &agg.wrong_question,
        &[],
        "share",
        &report["wrong_question"],
        2,
        "wrong-question share",
    )?);
    max_diff = max_diff.max(compare(
        &agg.by_depth,
        &["depth"],
        "accuracy",
        &report["depth"],
        3,
        "accuracy by depth",
    )?);
    if max_diff.is_nan() || max_diff > 1e-9 {
        bail!("the two sides disagree: max |diff| {max_diff:e}");
    }

    println!(
        "answer table: {rows} rows, {} prompts, {:.0} MB Parquet",
        agg.per_prompt.height(),
        size as f64 / 1e6
    );
    println!("{:<28} {:>10}", "implementation", "seconds");
    println!("{:<28} {:>10.2}", "polars (lazy, streaming)", polars_s);
    println!(
        "{:<28} {:>10.2}   (process wall time {:.2} s)",
        "pandas", pandas_s, pandas_wall
    );
    println!(
        "speed-up: {:.1}x; Table 2, wrong-question shares and accuracy by depth agree to {max_diff:.1e}",
        pandas_s / polars_s
    );
    Ok(())
}

/// The largest |difference| between `column` of a polars table and field `at` of the pandas rows, matched by model,
/// structure and the `extra` keys (fields 0, 1, then 2, … of a pandas row); an error when the two sides
/// do not hold the same rows.
fn compare(
    df: &::analysis::polars::prelude::DataFrame,
    extra: &[&str],
    column: &str,
    pandas: &serde_json::Value,
    at: usize,
    what: &str,
) -> anyhow::Result<f64> {
    use std::collections::BTreeMap;
    let text = |c: &str| -> anyhow::Result<Vec<String>> {
        let s = df
            .column(c)?
            .cast(&::analysis::polars::prelude::DataType::String)?;
        Ok(s.str()?
            .iter()
            .map(|v| v.unwrap_or_default().to_owned())
            .collect())
    };
    let mut keys: Vec<Vec<String>> = vec![Vec::new(); df.height()];
    for c in ["model", "structure"].iter().chain(extra) {
        for (k, v) in keys.iter_mut().zip(text(c)?) {
            k.push(v);
        }
    }
    let values = df
        .column(column)?
        .cast(&::analysis::polars::prelude::DataType::Float64)?;
    let values = values.f64()?;
    let ours: BTreeMap<Vec<String>, f64> = keys
        .into_iter()
        .zip(values.iter())
        .map(|(k, v)| (k, v.unwrap_or(f64::NAN)))
        .collect();
    let rows = pandas.as_array().cloned().unwrap_or_default();
    if rows.len() != ours.len() {
        bail!(
            "{what}: polars has {} rows, pandas {}",
            ours.len(),
            rows.len()
        );
    }
    let mut max_diff = 0.0f64;
    for row in &rows {
        let key: Vec<String> = (0..2 + extra.len())
            .map(|i| match &row[i] {
                serde_json::Value::String(s) => s.clone(),
                v => v.to_string(),
            })
            .collect();
        let Some(&v) = ours.get(&key) else {
            bail!("{what}: pandas has a row {key:?} that polars does not")
        };
        let theirs = row[at].as_f64().unwrap_or(f64::NAN);
        if v.is_nan() && theirs.is_nan() {
            continue;
        }
        max_diff = max_diff.max((v - theirs).abs());
    }
    Ok(max_diff)
}
