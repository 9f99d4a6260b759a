//! `cargo xtask bench local-model`: ifstress's embedded engine against llama.cpp itself, same GGUF, same thread
//! count, same prompt tokens, in one run.
//!
//! The ifstress side is measured in-process through `local_model::Engine::generate` (the exact code the local
//! server calls per request, minus the JSON round trip): a chat prompt of about 45 tokens, then 200 greedy
//! tokens with end-of-generation disabled. The engine times prompt evaluation and decoding itself.
//!
//! The reference is llama.cpp's C API driven by a minimal C++ loop (`local_model_ref.cpp`: one prompt batch,
//! then arg-max and one `llama_decode` per token), built by llama.cpp's own CMake (Release, with exactly the `GGML_*`
//! instruction-set options the crate's build used, `local_model::cpu::BUILD_OPTIONS`, its default
//! threading) from the source the `llama-cpp-sys-2` crate vendors in the cargo registry, into the
//! cache folder, at bench time only (reused afterwards; the CMake step is `crate::llama_cpp`'s). The crate's
//! package strips llama.cpp's tools and examples (only their READMEs remain), so `llama-bench` itself cannot be
//! built from that source.
//! Rounds alternate between the two sides so background load hits both alike; medians are reported.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use local_model::{ChatMessage, ChatRequest, Engine, EngineConfig};

use crate::llama_cpp;

/// Decode speed the embedded engine must reach relative to llama.cpp.
const MIN_DECODE_RATIO: f64 = 0.9;

/// A user message that renders (with SmolLM2's default system prompt) to about 45 tokens.
const PROMPT: &str =
    "Write a short story about a lighthouse keeper who finds a message in a bottle.";

#[derive(Debug, clap::Args)]
pub struct LocalModelArgs {
    /// GGUF to benchmark (default: the fetched SmolLM2-135M-Instruct).
    #[arg(long)]
    gguf: Option<PathBuf>,
    /// Threads for both engines (default: `IFSTRESS_THREADS`, else 2).
    #[arg(long)]
    threads: Option<usize>,
    /// Tokens to generate per run.
    #[arg(long, default_value_t = 200)]
    gen_tokens: u32,
    /// Alternating rounds per side (the median is reported).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
}

struct Speed {
    prompt_tps: f64,
    decode_tps: f64,
}

#[allow(clippy::print_stdout)]
pub fn run(
    args: &LocalModelArgs,
    default_gguf: impl Fn() -> anyhow::Result<PathBuf>,
) -> anyhow::Result<()> {
    let cache = schema::env::cache_dir();
    let gguf = match &args.gguf {
        Some(p) => p.clone(),
        None => default_gguf()?,
    };
    let threads = match args.threads {
        Some(t) => t,
        None => threads_from_env()?,
    };
    if args.rounds == 0 || args.gen_tokens == 0 {
        bail!(crate::UsageError(
            "--rounds and --gen-tokens must be at least 1".to_owned()
        ));
    }

    let bench_bin = reference_binary(&cache)?;

    let engine = Engine::load(&EngineConfig {
        gguf: gguf.clone(),
        threads,
        ctx_size: 1024,
        max_parallel: 1,
    })?;
    let request = ChatRequest {
        ignore_eos: true,
        ..ChatRequest::greedy(vec![ChatMessage::new("user", PROMPT)], args.gen_tokens)
    };
    // Warm-up (page in the weights) and learn the prompt length for the reference.
    let warm = engine.generate(&request)?;
    let n_prompt = warm.prompt_tokens;

    let prompt_text = engine.render_prompt(&request.messages)?;
    let prompt_file = cache.join("llama.cpp-ref").join("bench-prompt.txt");
    std::fs::write(&prompt_file, &prompt_text)
        .with_context(|| format!("writing {}", prompt_file.display()))?;

    let mut ours = Vec::new();
    let mut reference = Vec::new();
    for round in 1..=args.rounds {
        let c = engine.generate(&request)?;
        if c.completion_tokens != args.gen_tokens {
            bail!(
                "the engine generated {} tokens instead of {}",
                c.completion_tokens,
                args.gen_tokens
            );
        }
        let s = Speed {
            prompt_tps: f64::from(c.prompt_tokens) / c.prompt_seconds,
            // The first generated token comes from the prompt's logits, so decoding evaluated one token fewer.
            decode_tps: f64::from(c.completion_tokens - 1) / c.decode_seconds,
        };
        let (ref_prompt, r) =
            run_reference(&bench_bin, &gguf, threads, args.gen_tokens, &prompt_file)?;
        if ref_prompt != n_prompt {
            bail!(
                "the reference tokenized the prompt into {ref_prompt} tokens, the engine into {n_prompt}"
            );
        }
        let used = engine.thread_use();
        tracing::info!(
            "round {round}/{}: ifstress {:.0}/{:.1} tok/s, llama.cpp {:.0}/{:.1} tok/s (prompt/decode); \
             engine decode steps so far: {} with {} thread(s), {} with 1, {} switches",
            args.rounds,
            s.prompt_tps,
            s.decode_tps,
            r.prompt_tps,
            r.decode_tps,
            used.steps_configured,
            used.configured,
            used.steps_one,
            used.switches
        );
        ours.push(s);
        reference.push(r);
    }
    let used = engine.thread_use();
    drop(engine);

    let ours_p = median(ours.iter().map(|s| s.prompt_tps));
    let ours_d = median(ours.iter().map(|s| s.decode_tps));
    let ref_p = median(reference.iter().map(|s| s.prompt_tps));
    let ref_d = median(reference.iter().map(|s| s.decode_tps));
    let ratio = ours_d / ref_d;

    println!(
        "model {} | threads {threads} | prompt {n_prompt} tokens | {} generated tokens | median of {} rounds",
        gguf.display(),
        args.gen_tokens,
        args.rounds
    );
    println!(
        "llama.cpp built for {} (both sides)",
        local_model::cpu::CpuReport::detect().summary()
    );
    println!(
        "{:<46} {:>14} {:>14}",
        "engine", "prompt tok/s", "decode tok/s"
    );
    println!(
        "{:<46} {:>14.1} {:>14.1}",
        "ifstress local-model (in-process Engine)", ours_p, ours_d
    );
    println!(
        "{:<46} {:>14.1} {:>14.1}",
        "llama.cpp C API, own CMake build (reference)", ref_p, ref_d
    );
    if used.configured > 1 {
        let total = (used.steps_configured + used.steps_one).max(1);
        let share = 100.0 * used.steps_one as f64 / total as f64;
        println!(
            "engine thread rule: {share:.1} % of {total} decode steps with 1 thread, the rest with {}, {} switch(es) \
             (llama.cpp's side always uses {threads})",
            used.configured, used.switches
        );
    }
    println!(
        "prompt ratio {:.2}, decode ratio {ratio:.2} (must be >= {MIN_DECODE_RATIO})",
        ours_p / ref_p
    );
    if ratio < MIN_DECODE_RATIO {
        bail!(
            "decode ratio {ratio:.2} is below {MIN_DECODE_RATIO} (if the machine was busy, run again)"
        );
    }
    Ok(())
}

fn threads_from_env() -> anyhow::Result<usize> {
    match std::env::var(schema::env::EnvVars::IFSTRESS_THREADS) {
        Ok(v) if !v.trim().is_empty() => v
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|&t| t > 0)
            .ok_or_else(|| {
                anyhow::Error::new(crate::UsageError(format!(
                    "{} must be a positive integer, got {v:?}",
                    schema::env::EnvVars::IFSTRESS_THREADS
                )))
            }),
        _ => Ok(2),
    }
}

fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = values.collect();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => f64::midpoint(v[n / 2 - 1], v[n / 2]),
    }
}

/// The version of `llama-cpp-sys-2` this workspace locks, read from `Cargo.lock`.
fn locked_sys_version() -> anyhow::Result<String> {
    let lock_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.lock");
    let lock = std::fs::read_to_string(&lock_path)
        .with_context(|| format!("reading {}", lock_path.display()))?;
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == "name = \"llama-cpp-sys-2\""
            && let Some(v) = lines
                .next()
                .and_then(|l| l.trim().strip_prefix("version = \""))
        {
            return Ok(v.trim_end_matches('"').to_owned());
        }
    }
    bail!("{} does not lock llama-cpp-sys-2", lock_path.display())
}

/// The llama.cpp source tree vendored by `llama-cpp-sys-2` in the cargo registry.
fn vendored_source(version: &str) -> anyhow::Result<PathBuf> {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os(schema::env::EnvVars::HOME).unwrap_or_default())
                .join(".cargo")
        });
    let src = cargo_home.join("registry").join("src");
    let wanted = format!("llama-cpp-sys-2-{version}");
    for index in std::fs::read_dir(&src).with_context(|| format!("reading {}", src.display()))? {
        let dir = index?.path().join(&wanted).join("llama.cpp");
        if dir.join("CMakeLists.txt").is_file() {
            return Ok(dir);
        }
    }
    bail!(
        "llama.cpp source of {wanted} not found under {} (run `cargo build -p local-model` first)",
        src.display()
    )
}

/// The reference driver's source, written next to a small CMake project at bench time.
const REF_SOURCE: &str = include_str!("local_model_ref.cpp");

/// Build (once; later runs only recompile what changed) the reference driver against the vendored llama.cpp,
/// in `<cache>/llama.cpp-ref/<version>-<options tag>`, and return its path.
fn reference_binary(cache: &Path) -> anyhow::Result<PathBuf> {
    let version = locked_sys_version()?;
    let src = vendored_source(&version)?;
    // The build folder is named by the options too: a reference built with other flags (an older native
    // build) is never reused.
    let ggml = llama_cpp::ggml_options()?;
    let root = cache
        .join("llama.cpp-ref")
        .join(format!("{version}-{}", llama_cpp::options_tag(&ggml)));
    let project = root.join("project");
    let build = root.join("build");
    std::fs::create_dir_all(&project).with_context(|| format!("creating {}", project.display()))?;
    let cmake_lists = format!(
        "cmake_minimum_required(VERSION 3.14)\nproject(ifstress_llama_ref C CXX)\n\
         set(LLAMA_BUILD_COMMON OFF CACHE BOOL \"\" FORCE)\nset(LLAMA_BUILD_TOOLS OFF CACHE BOOL \"\" FORCE)\n\
         set(LLAMA_BUILD_TESTS OFF CACHE BOOL \"\" FORCE)\nset(LLAMA_BUILD_EXAMPLES OFF CACHE BOOL \"\" FORCE)\n\
         set(LLAMA_BUILD_SERVER OFF CACHE BOOL \"\" FORCE)\nset(LLAMA_CURL OFF CACHE BOOL \"\" FORCE)\n\
         add_subdirectory(\"{}\" llama.cpp EXCLUDE_FROM_ALL)\n\
         add_executable(ifstress-llama-ref local_model_ref.cpp)\n\
         target_link_libraries(ifstress-llama-ref PRIVATE llama)\n",
        src.display()
    );
    llama_cpp::write_if_changed(&project.join("CMakeLists.txt"), &cmake_lists)?;
    llama_cpp::write_if_changed(&project.join("local_model_ref.cpp"), REF_SOURCE)?;
    let mut options = vec![
        "-DCMAKE_BUILD_TYPE=Release".to_owned(),
        "-DBUILD_SHARED_LIBS=OFF".to_owned(),
    ];
    options.extend(ggml);
    llama_cpp::CmakeBuild {
        what: "the llama.cpp reference",
        source: &project,
        build: &build,
        target: "ifstress-llama-ref",
        options: &options,
        binary: &build.join("ifstress-llama-ref"),
    }
    .run()
}

fn run_reference(
    bin: &Path,
    gguf: &Path,
    threads: usize,
    n_gen: u32,
    prompt_file: &Path,
) -> anyhow::Result<(u32, Speed)> {
    let out = Command::new(bin)
        .arg(gguf)
        .arg(threads.to_string())
        .arg(n_gen.to_string())
        .arg(prompt_file)
        .output()
        .with_context(|| format!("running {}", bin.display()))?;
    if !out.status.success() {
        bail!(
            "{} failed ({}): {}",
            bin.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).context("parsing the reference's JSON output")?;
    let field = |k: &str| {
        v[k].as_f64()
            .with_context(|| format!("reference output lacks {k}"))
    };
    let prompt_tokens = field("prompt_tokens")?;
    let gen_tokens = field("gen_tokens")?;
    let n_prompt = v["prompt_tokens"]
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .context("the reference's prompt_tokens is not a token count")?;
    Ok((
        n_prompt,
        Speed {
            prompt_tps: prompt_tokens / field("prompt_seconds")?,
            decode_tps: (gen_tokens - 1.0) / field("decode_seconds")?,
        },
    ))
}
