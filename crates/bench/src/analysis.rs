//! `cargo xtask bench analysis`: the RIFT answer-table aggregation at the paper's scale (≈ 18.6 M rows), polars
//! (lazy, streaming) against pandas running the same aggregation on the same Parquet file, timed in one run.
//!
//! The aggregation: per-prompt sums (answers, correct, incorrect, wrong-question) grouped by model × structure ×
//! prompt; from them Table 2 (mean, standard error, median of prompt accuracy) and the wrong-question share per
//! model × structure; and question accuracy by model × structure × depth. Both sides read the Parquet file inside the
//! timed region. The results are compared (Table 2 means to 1e-9) so the two sides provably do the same work.

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
df = pd.read_parquet(sys.argv[1], columns=["model", "structure", "prompt_id", "depth", "correct", "incorrect", "wrong_question"])
keys = ["model", "structure"]
per_prompt = df.groupby(keys + ["prompt_id"], sort=False).agg(
    n=("correct", "size"), correct=("correct", "sum"), incorrect=("incorrect", "sum"), wrong=("wrong_question", "sum")
).reset_index()
per_prompt["accuracy"] = per_prompt["correct"] / per_prompt["n"] * 100.0
table2 = per_prompt.groupby(keys)["accuracy"].agg(["size", "mean", "std", "median"])
table2["se"] = table2["std"] / np.sqrt(table2["size"])
wq = per_prompt.groupby(keys)[["incorrect", "wrong"]].sum()
wq["share"] = wq["wrong"] / wq["incorrect"] * 100.0
depth = df.groupby(keys + ["depth"])["correct"].agg(["size", "mean"])
elapsed = time.perf_counter() - start
print(json.dumps({
    "seconds": elapsed,
    "rows": int(len(df)),
    "prompts": int(len(per_prompt)),
    "depth_rows": int(len(depth)),
    "table2": [[m, s, float(r["mean"]), float(r["se"]), float(r["median"])] for (m, s), r in table2.iterrows()],
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
    let parquet = dir.join(format!(
        "answers-{}x{}x{}.parquet",
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

    // Same work: compare Table 2.
    let t2 = &agg.table2;
    let models = t2.column("model")?.str()?.clone();
    let structures = t2.column("structure")?.str()?.clone();
    let means = t2.column("mean")?.f64()?.clone();
    let medians = t2.column("median")?.f64()?.clone();
    let mut max_diff = 0.0f64;
    let pandas_rows = report["table2"].as_array().cloned().unwrap_or_default();
    for row in &pandas_rows {
        let (m, s) = (
            row[0].as_str().unwrap_or_default(),
            row[1].as_str().unwrap_or_default(),
        );
        let idx =
            (0..t2.height()).find(|&i| models.get(i) == Some(m) && structures.get(i) == Some(s));
        let Some(i) = idx else {
            bail!("pandas produced a Table 2 row ({m}, {s}) that polars did not")
        };
        max_diff = max_diff
            .max((means.get(i).unwrap_or(f64::NAN) - row[2].as_f64().unwrap_or(f64::NAN)).abs());
        max_diff = max_diff
            .max((medians.get(i).unwrap_or(f64::NAN) - row[4].as_f64().unwrap_or(f64::NAN)).abs());
    }
    if pandas_rows.len() != t2.height() || max_diff.is_nan() || max_diff > 1e-9 {
        bail!(
            "the two sides disagree: {} vs {} Table 2 rows, max |diff| {max_diff:e}",
            t2.height(),
            pandas_rows.len()
        );
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
        "speed-up: {:.1}x; Table 2 agrees to {max_diff:.1e}",
        pandas_s / polars_s
    );
    Ok(())
}
