//! `cargo xtask bench client`: the inference client's throughput and CPU per request against a mock with fixed latency.
//!
//! The mock runs in a child process (this binary with `--serve-mock`), so the client's CPU time is this process's
//! CPU time alone (`/proc/self/stat`), and the mock's is read from `/proc/<child>/stat`. Every concurrency level
//! runs in the same invocation and the results are printed side by side. `--serve-mock` on its own also serves
//! fault-injection runs of `cargo xtask infer` (`--fault-rate 0.3 --port 8099`).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use inference_client::{Client, ModelConfig, RunOptions};
use mock_provider::{Fault, MockConfig};
use schema::{Message, PromptRecord};

use crate::mock_child::MockChild;

#[derive(Debug, clap::Args)]
pub struct ClientBenchArgs {
    /// Requests per concurrency level.
    #[arg(long, default_value_t = 10_000)]
    requests: usize,
    /// Mock latency per request in milliseconds.
    #[arg(long, default_value_t = 20)]
    latency_ms: u64,
    /// Concurrency levels, run one after the other in this invocation.
    #[arg(long, value_delimiter = ',', default_value = "64,256")]
    concurrency: Vec<usize>,
    /// Only serve the mock (until stdin closes or the process is killed), printing its base URL on stdout.
    #[arg(long)]
    serve_mock: bool,
    /// Mock port (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Mock: probability of an injected fault per request (drawn from every retryable fault kind).
    #[arg(long, default_value_t = 0.0)]
    fault_rate: f64,
    /// Mock: comma-separated fault kinds to draw from (default: every retryable kind), e.g. `rate_limited,reset`.
    #[arg(long, value_delimiter = ',')]
    faults: Vec<String>,
    /// Mock: seed of the fault generator.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Mock: `Retry-After` seconds on 429s.
    #[arg(long, default_value_t = 1)]
    retry_after_s: u64,
    /// Mock: how long a `hang` fault stalls, in milliseconds (clients should time out before).
    #[arg(long, default_value_t = 3000)]
    hang_ms: u64,
    /// Send the requests without streaming (`stream = false`), to compare with the streamed default.
    #[arg(long)]
    no_stream: bool,
}

pub fn run(args: &ClientBenchArgs) -> anyhow::Result<()> {
    if args.serve_mock {
        return serve(args);
    }
    bench(args)
}

fn serve(args: &ClientBenchArgs) -> anyhow::Result<()> {
    let mut cfg = MockConfig::new();
    cfg.latency = Duration::from_millis(args.latency_ms);
    cfg.fault_rate = args.fault_rate;
    cfg.seed = args.seed;
    cfg.retry_after_s = args.retry_after_s;
    cfg.hang = Duration::from_millis(args.hang_ms);
    if !args.faults.is_empty() {
        cfg.faults = args
            .faults
            .iter()
            .map(|f| {
                Fault::from_name(f)
                    .ok_or_else(|| crate::UsageError(format!("--faults: unknown fault {f:?}")))
            })
            .collect::<Result<_, _>>()?;
    }
    tracing::info!(
        fault_rate = args.fault_rate,
        "Mock server starting; GET /stats for counters; close stdin or kill to stop."
    );
    // The benchmark stops its child mock by closing stdin; started by hand, the mock serves until killed.
    let mock = crate::mock_child::serve(cfg, args.port)?;
    let s = mock.stats();
    tracing::info!(
        requests = s.requests,
        ok = s.ok,
        faults = s.faults,
        "Mock server stopped."
    );
    Ok(())
}

struct Row {
    concurrency: usize,
    requests: u64,
    wall_s: f64,
    client_cpu_s: f64,
    mock_cpu_s: f64,
    /// The client's own count of requests in flight over the call.
    in_flight: inference_client::InFlight,
}

#[allow(clippy::print_stdout)]
fn bench(args: &ClientBenchArgs) -> anyhow::Result<()> {
    if args.concurrency.is_empty() || args.requests == 0 {
        bail!(crate::UsageError(
            "need at least one concurrency level and one request".into()
        ));
    }
    let exe = std::env::current_exe().context("locating the xtask binary")?;
    let mut cmd = Command::new(exe);
    cmd.args([
        "bench",
        "client",
        "--serve-mock",
        "--latency-ms",
        &args.latency_ms.to_string(),
    ])
    .stderr(Stdio::null());
    let child = MockChild::start(cmd)?;
    let mock_pid = child.pid();
    let base_url = child.url.clone();

    let tmp = std::env::temp_dir().join(format!("ifstress-bench-client-{}", std::process::id()));
    std::fs::create_dir_all(&tmp)?;
    let result = (|| -> anyhow::Result<Vec<Row>> {
        let mut rows = Vec::new();
        for (round, &c) in args.concurrency.iter().enumerate() {
            let prompts: Vec<PromptRecord> = (0..args.requests)
                .map(|i| PromptRecord {
                    id: format!("r{round}-{i}"),
                    messages: vec![
                        Message::system("You are a helpful assistant."),
                        Message::user(format!(
                            "Benchmark request {i} of round {round}: say something short."
                        )),
                    ],
                    sample_index: 0,
                    params: Default::default(),
                    extra: Default::default(),
                })
                .collect();
            let mut model = ModelConfig::ad_hoc(&base_url, "bench-model");
            model.max_concurrency = c;
            model.stream = !args.no_stream;
            let mut opts = RunOptions::new(tmp.join(format!("cache-{round}.sqlite")));
            opts.durable = false;
            let out = tmp.join(format!("out-{round}.jsonl"));
            let cpu0 = cpu_seconds(Path::new("/proc/self/stat"))?;
            let mock0 = cpu_seconds(Path::new(&format!("/proc/{mock_pid}/stat")))?;
            let t0 = Instant::now();
            let client = Client::new(opts)?;
            let s = client.chat(&model, &prompts, &out)?;
            let wall_s = t0.elapsed().as_secs_f64();
            let client_cpu_s = cpu_seconds(Path::new("/proc/self/stat"))? - cpu0;
            let mock_cpu_s = cpu_seconds(Path::new(&format!("/proc/{mock_pid}/stat")))? - mock0;
            if s.sent != args.requests || s.failed != 0 {
                bail!(
                    "concurrency {c}: {} sent, {} failed of {}",
                    s.sent,
                    s.failed,
                    args.requests
                );
            }
            rows.push(Row {
                concurrency: c,
                requests: s.requests,
                wall_s,
                client_cpu_s,
                mock_cpu_s,
                in_flight: s.in_flight.unwrap_or_default(),
            });
        }
        Ok(rows)
    })();
    drop(child);
    let _ = std::fs::remove_dir_all(&tmp);
    let rows = result?;

    println!(
        "inference-client vs. an ideal client: {} requests per level ({}), mock latency {} ms (mock in a separate process), {} CPUs",
        args.requests,
        if args.no_stream {
            "whole replies"
        } else {
            "streamed"
        },
        args.latency_ms,
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    );
    println!(
        "{:>11} {:>9} {:>8} {:>9} {:>11} {:>10} {:>16} {:>14} {:>15} {:>11}",
        "concurrency",
        "requests",
        "wall s",
        "req/s",
        "ideal req/s",
        "% of ideal",
        "client CPU ms/req",
        "mock CPU ms/req",
        "mean in flight",
        "saturated %"
    );
    for r in &rows {
        let rps = r.requests as f64 / r.wall_s;
        let ideal = r.concurrency as f64 / (args.latency_ms.max(1) as f64 / 1000.0);
        println!(
            "{:>11} {:>9} {:>8.2} {:>9.0} {:>11.0} {:>9.1}% {:>17.3} {:>15.3} {:>15.1} {:>10.1}%",
            r.concurrency,
            r.requests,
            r.wall_s,
            rps,
            ideal,
            100.0 * rps / ideal,
            1000.0 * r.client_cpu_s / r.requests as f64,
            1000.0 * r.mock_cpu_s / r.requests as f64,
            r.in_flight.mean(),
            100.0 * r.in_flight.saturated_share(),
        );
    }
    println!(
        "targets: client CPU <= 0.3 ms/request, throughput >= 95% of concurrency/latency; reference (issue 2): the openai Python SDK spends ~3 ms CPU/request and reaches ~300 req/s at concurrency 64"
    );
    Ok(())
}

/// User + system CPU seconds of a process from its `/proc/<pid>/stat` (clock ticks of 1/100 s).
fn cpu_seconds(stat: &Path) -> anyhow::Result<f64> {
    let text =
        std::fs::read_to_string(stat).with_context(|| format!("reading {}", stat.display()))?;
    // Fields after the command name (which is in parentheses and may contain spaces).
    let rest = text
        .rsplit_once(')')
        .map(|(_, r)| r)
        .context("unexpected /proc stat format")?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, i.e. the 12th and 13th after the name.
    let ticks = |i: usize| -> anyhow::Result<f64> {
        Ok(fields
            .get(i)
            .context("unexpected /proc stat format")?
            .parse::<f64>()?)
    };
    Ok((ticks(11)? + ticks(12)?) / 100.0)
}
