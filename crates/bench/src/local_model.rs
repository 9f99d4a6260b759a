//! `cargo xtask bench local-model`: ifstress's embedded engine against llama.cpp itself, same GGUF, same thread
//! count, same prompt tokens, in one run.
//!
//! Prompts of about 50, 500, 2 000 and 7 000 tokens (`--prompt-tokens`; IFScale-XL's prompts are 4 000–7 700) are
//! each evaluated and followed by `--gen-tokens` greedy tokens with end-of-generation disabled, in a context of
//! [`CTX_SIZE`] tokens, with flash attention on and off on both sides. The ifstress side is measured in-process
//! through `local_model::Engine::generate` (the exact code the local server calls per request, minus the JSON round
//! trip), which times prompt evaluation and decoding itself: "on" is the default engine (flash attention for
//! prompts, decoding without it, `local_model::FlashAttention::Prompts`; its prompt time includes moving the
//! sequence to the decoding context), "off" is `FlashAttention::Off`.
//!
//! The reference is llama.cpp's C API driven by a minimal C++ loop (`local_model_ref.cpp`: the prompt in batches of
//! 512 tokens cut as the engine cuts them, then arg-max and one `llama_decode` per token; flash attention on or off
//! throughout), built by llama.cpp's own CMake (Release, with exactly the `GGML_*` instruction-set options the
//! crate's build used, `local_model::cpu::BUILD_OPTIONS`, its default threading) from the source the
//! `llama-cpp-sys-2` crate vendors in the cargo registry, into the cache folder, at bench time only (reused
//! afterwards; the CMake step is `crate::llama_cpp`'s). The crate's package strips llama.cpp's tools and examples
//! (only their READMEs remain), so `llama-bench` itself cannot be built from that source.
//! Rounds alternate between the two sides so background load hits both alike; medians are reported. A prompt
//! shorter than [`PROMPT_SPAN`] tokens is evaluated repeatedly in each measurement, on both sides, until the
//! repetitions hold that many tokens, and the prompt time is their sum: one 56-token prompt takes about 0.15 s,
//! short enough for a scheduler's hiccup to move a single timing by a tenth.
//!
//! The run fails unless the default engine's prompt speed is at least [`MIN_PROMPT_RATIO`] of llama.cpp's with
//! flash attention at every length, and its decode speed after the shortest prompt at least [`MIN_DECODE_RATIO`]
//! of llama.cpp's.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use local_model::{ChatMessage, ChatRequest, Engine, EngineConfig, FlashAttention};

use crate::llama_cpp;

/// Prompt speed the default engine must reach relative to llama.cpp with flash attention, at every length.
const MIN_PROMPT_RATIO: f64 = 0.97;
/// Decode speed the default engine must reach relative to llama.cpp with flash attention, after the shortest prompt.
const MIN_DECODE_RATIO: f64 = 0.9;
/// Prompt tokens one measurement evaluates at least (a short prompt is repeated until they add up to this many).
const PROMPT_SPAN: u32 = 1500;
/// Context of both sides: SmolLM2's training context, as the inference client starts the engine with.
const CTX_SIZE: u32 = 8192;

/// A user message that renders (with SmolLM2's default system prompt) to about 45 tokens.
const PROMPT: &str =
    "Write a short story about a lighthouse keeper who finds a message in a bottle.";
/// Words a longer prompt asks the story to use, cycled, until it has the tokens asked for.
const WORDS: &[&str] = &[
    "harbour",
    "lantern",
    "compass",
    "driftwood",
    "seagull",
    "anchor",
    "tide",
    "horizon",
    "storm",
    "rope",
    "beacon",
    "cliff",
    "fog",
    "sailor",
    "island",
    "wave",
    "shell",
    "map",
    "candle",
    "whistle",
    "kelp",
    "pier",
    "moon",
    "salt",
    "netting",
    "gale",
    "pebble",
    "journal",
    "orchard",
    "violin",
    "bicycle",
    "kettle",
];

#[derive(Debug, clap::Args)]
pub struct LocalModelArgs {
    /// GGUF to benchmark (default: the fetched SmolLM2-135M-Instruct).
    #[arg(long)]
    gguf: Option<PathBuf>,
    /// Threads for both engines (default: `IFSTRESS_THREADS`, else 2).
    #[arg(long)]
    threads: Option<usize>,
    /// Tokens to generate after each prompt.
    #[arg(long, default_value_t = 200)]
    gen_tokens: u32,
    /// Alternating rounds per side (the median is reported).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Prompt lengths to measure, in tokens (each prompt is the shortest of its kind with at least that many).
    #[arg(long, value_delimiter = ',', default_values_t = [50u32, 500, 2000, 7000])]
    prompt_tokens: Vec<u32>,
}

#[derive(Debug, Clone, Copy)]
struct Speed {
    prompt_tps: f64,
    decode_tps: f64,
}

/// Flash attention on or off, on both sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flash {
    On,
    Off,
}

impl Flash {
    const BOTH: [Flash; 2] = [Flash::On, Flash::Off];

    fn label(self) -> &'static str {
        match self {
            Flash::On => "on",
            Flash::Off => "off",
        }
    }
}

/// One prompt length's measurements: per flash-attention setting, each round's (ifstress, llama.cpp) speeds.
struct Length {
    tokens: u32,
    prompt_file: PathBuf,
    request: ChatRequest,
    rounds: [Vec<(Speed, Speed)>; 2],
}

/// The medians of one length and setting.
struct Row {
    tokens: u32,
    flash: Flash,
    ours: Speed,
    reference: Speed,
}

impl Row {
    fn prompt_ratio(&self) -> f64 {
        self.ours.prompt_tps / self.reference.prompt_tps
    }

    fn decode_ratio(&self) -> f64 {
        self.ours.decode_tps / self.reference.decode_tps
    }
}

/// The shortest request of [`PROMPT`] followed by a list of [`WORDS`] whose prompt has at least `target` tokens
/// (the bare prompt when that is long enough).
fn request_of(engine: &Engine, target: u32, gen_tokens: u32) -> anyhow::Result<(ChatRequest, u32)> {
    let make = |words: usize| {
        let text = if words == 0 {
            PROMPT.to_owned()
        } else {
            let list: Vec<&str> = (0..words).map(|i| WORDS[i % WORDS.len()]).collect();
            format!(
                "{PROMPT} Use each of these words in it: {}.",
                list.join(", ")
            )
        };
        ChatRequest {
            ignore_eos: true,
            ..ChatRequest::greedy(vec![ChatMessage::new("user", text)], gen_tokens)
        }
    };
    let count = |words: usize| -> anyhow::Result<u32> {
        let prompt = engine.render_prompt(&make(words).messages)?;
        Ok(u32::try_from(engine.tokenize(&prompt).len()).unwrap_or(u32::MAX))
    };
    if count(0)? >= target {
        return Ok((make(0), count(0)?));
    }
    // Grow until long enough, then find the fewest words that are (the count grows with the words).
    let mut high = 1;
    while count(high)? < target {
        high *= 2;
    }
    let mut low = high / 2;
    while high - low > 1 {
        let mid = low + (high - low) / 2;
        if count(mid)? >= target {
            high = mid;
        } else {
            low = mid;
        }
    }
    Ok((make(high), count(high)?))
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
    if args.rounds == 0 || args.gen_tokens < 2 {
        bail!(crate::UsageError(
            "--rounds must be at least 1 and --gen-tokens at least 2".to_owned()
        ));
    }
    if args.prompt_tokens.is_empty() || args.prompt_tokens.contains(&0) {
        bail!(crate::UsageError(
            "--prompt-tokens needs lengths of at least 1 token".to_owned()
        ));
    }

    let bench_bin = reference_binary(&cache)?;
    let config = EngineConfig {
        gguf: gguf.clone(),
        threads,
        ctx_size: CTX_SIZE,
        max_parallel: 1,
    };
    let engines = [
        Engine::load_with_flash_attention(&config, FlashAttention::Prompts)?,
        Engine::load_with_flash_attention(&config, FlashAttention::Off)?,
    ];

    let mut targets = args.prompt_tokens.clone();
    targets.sort_unstable();
    targets.dedup();
    let folder = cache.join("llama.cpp-ref");
    let mut lengths = Vec::new();
    for &target in &targets {
        let (request, tokens) = request_of(&engines[0], target, args.gen_tokens)?;
        if tokens + args.gen_tokens > CTX_SIZE {
            bail!(crate::UsageError(format!(
                "a prompt of {tokens} tokens and {} generated ones do not fit the {CTX_SIZE}-token context",
                args.gen_tokens
            )));
        }
        let prompt_file = folder.join(format!("bench-prompt-{target}.txt"));
        let text = engines[0].render_prompt(&request.messages)?;
        std::fs::write(&prompt_file, &text)
            .with_context(|| format!("writing {}", prompt_file.display()))?;
        lengths.push(Length {
            tokens,
            prompt_file,
            request,
            rounds: [Vec::new(), Vec::new()],
        });
    }
    // Warm-up: page in the weights and make each context's buffers.
    for engine in &engines {
        engine.generate(&lengths[0].request)?;
    }

    for round in 1..=args.rounds {
        for length in &mut lengths {
            for (i, flash) in Flash::BOTH.into_iter().enumerate() {
                let reps = reps_of(length.tokens);
                let ours = measure_engine(
                    &engines[i],
                    &length.request,
                    length.tokens,
                    args.gen_tokens,
                    reps,
                )?;
                let reference = run_reference(
                    &bench_bin,
                    &gguf,
                    threads,
                    args.gen_tokens,
                    &length.prompt_file,
                    flash,
                    reps,
                )?;
                if reference.0 != length.tokens {
                    bail!(
                        "the reference tokenized the {}-token prompt into {} tokens",
                        length.tokens,
                        reference.0
                    );
                }
                tracing::info!(
                    "round {round}/{}, {} prompt tokens, flash attention {}: ifstress {:.0}/{:.1} tok/s, \
                     llama.cpp {:.0}/{:.1} tok/s (prompt/decode)",
                    args.rounds,
                    length.tokens,
                    flash.label(),
                    ours.prompt_tps,
                    ours.decode_tps,
                    reference.1.prompt_tps,
                    reference.1.decode_tps,
                );
                length.rounds[i].push((ours, reference.1));
            }
        }
    }
    let used = engines[0].thread_use();
    drop(engines);

    let rows: Vec<Row> = lengths
        .iter()
        .flat_map(|l| {
            Flash::BOTH.into_iter().enumerate().map(|(i, flash)| {
                let of = |pick: fn(&(Speed, Speed)) -> Speed| {
                    let speeds: Vec<Speed> = l.rounds[i].iter().map(pick).collect();
                    Speed {
                        prompt_tps: median(speeds.iter().map(|s| s.prompt_tps)),
                        decode_tps: median(speeds.iter().map(|s| s.decode_tps)),
                    }
                };
                Row {
                    tokens: l.tokens,
                    flash,
                    ours: of(|r| r.0),
                    reference: of(|r| r.1),
                }
            })
        })
        .collect();

    println!(
        "model {} | threads {threads} | context {CTX_SIZE} | {} generated tokens per prompt | median of {} rounds",
        gguf.display(),
        args.gen_tokens,
        args.rounds
    );
    println!(
        "llama.cpp built for {} (both sides)",
        local_model::cpu::CpuReport::detect().summary()
    );
    println!(
        "flash attention \"on\": llama.cpp throughout; ifstress for prompts, decoding without it (the default engine)"
    );
    println!(
        "{:>7} {:>5} | {:>16} {:>16} {:>6} | {:>16} {:>16} {:>6}",
        "prompt",
        "flash",
        "ifstress prompt",
        "llama.cpp prompt",
        "ratio",
        "ifstress decode",
        "llama.cpp decode",
        "ratio"
    );
    for r in &rows {
        println!(
            "{:>7} {:>5} | {:>12.1} t/s {:>12.1} t/s {:>6.3} | {:>12.1} t/s {:>12.1} t/s {:>6.3}",
            r.tokens,
            r.flash.label(),
            r.ours.prompt_tps,
            r.reference.prompt_tps,
            r.prompt_ratio(),
            r.ours.decode_tps,
            r.reference.decode_tps,
            r.decode_ratio()
        );
    }
    if used.configured > 1 {
        let total = (used.steps_configured + used.steps_one).max(1);
        let share = 100.0 * used.steps_one as f64 / total as f64;
        println!(
            "default engine's thread rule: {share:.1} % of {total} decode steps with 1 thread, the rest with {}, \
             {} switch(es) (llama.cpp's side always uses {threads})",
            used.configured, used.switches
        );
    }
    let on: Vec<&Row> = rows.iter().filter(|r| r.flash == Flash::On).collect();
    let decode_ratio = on.first().map_or(f64::NAN, |r| r.decode_ratio());
    println!(
        "default engine: prompt ratio {} (each must be >= {MIN_PROMPT_RATIO}), decode ratio {decode_ratio:.3} after \
         {} prompt tokens (must be >= {MIN_DECODE_RATIO})",
        on.iter()
            .map(|r| format!("{:.3} at {}", r.prompt_ratio(), r.tokens))
            .collect::<Vec<_>>()
            .join(", "),
        on.first().map_or(0, |r| r.tokens)
    );
    let mut failures: Vec<String> = on
        .iter()
        .filter(|r| below(r.prompt_ratio(), MIN_PROMPT_RATIO))
        .map(|r| {
            format!(
                "prompt ratio {:.3} at {} tokens is below {MIN_PROMPT_RATIO}",
                r.prompt_ratio(),
                r.tokens
            )
        })
        .collect();
    if below(decode_ratio, MIN_DECODE_RATIO) {
        failures.push(format!(
            "decode ratio {decode_ratio:.3} is below {MIN_DECODE_RATIO}"
        ));
    }
    if !failures.is_empty() {
        bail!(
            "{} (if the machine was busy, run again)",
            failures.join("; ")
        );
    }
    Ok(())
}

/// Whether a ratio misses its threshold (a ratio that could not be measured does).
fn below(ratio: f64, min: f64) -> bool {
    ratio.is_nan() || ratio < min
}

/// How many times one measurement evaluates a prompt of `tokens` tokens: enough to hold [`PROMPT_SPAN`] tokens.
fn reps_of(tokens: u32) -> u32 {
    PROMPT_SPAN.div_ceil(tokens.max(1)).max(1)
}

/// One measurement on the engine, checked for its lengths: `reps` evaluations of the prompt (all but the last
/// followed by two generated tokens only, so that each includes the move to the decoding context the default
/// engine makes), then one full generation; the prompt speed over all of them, the decode speed of the last.
fn measure_engine(
    engine: &Engine,
    request: &ChatRequest,
    prompt_tokens: u32,
    gen_tokens: u32,
    reps: u32,
) -> anyhow::Result<Speed> {
    let short = ChatRequest {
        max_tokens: Some(2),
        ..request.clone()
    };
    let mut prompt_seconds = 0.0;
    for rep in 1..=reps {
        let (asked, want) = if rep == reps {
            (request, gen_tokens)
        } else {
            (&short, 2)
        };
        let c = engine.generate(asked)?;
        if c.completion_tokens != want || c.prompt_tokens != prompt_tokens {
            bail!(
                "the engine evaluated {} prompt tokens and generated {} instead of {prompt_tokens} and {want}",
                c.prompt_tokens,
                c.completion_tokens,
            );
        }
        prompt_seconds += c.prompt_seconds;
        if rep == reps {
            return Ok(Speed {
                prompt_tps: f64::from(prompt_tokens) * f64::from(reps) / prompt_seconds,
                // The first generated token comes from the prompt's logits, so decoding evaluated one token fewer.
                decode_tps: f64::from(c.completion_tokens.saturating_sub(1)) / c.decode_seconds,
            });
        }
    }
    bail!("a measurement needs at least one evaluation")
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
    flash: Flash,
    reps: u32,
) -> anyhow::Result<(u32, Speed)> {
    let out = Command::new(bin)
        .arg(gguf)
        .arg(threads.to_string())
        .arg(n_gen.to_string())
        .arg(prompt_file)
        .arg(flash.label())
        .arg(CTX_SIZE.to_string())
        .arg(reps.to_string())
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
    if v["prompt_reps"].as_u64() != Some(u64::from(reps)) {
        bail!("the reference did not evaluate the prompt {reps} times: {v}");
    }
    let gen_tokens = field("gen_tokens")?;
    let n_prompt = v["prompt_tokens"]
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .context("the reference's prompt_tokens is not a token count")?;
    Ok((
        n_prompt,
        Speed {
            prompt_tps: prompt_tokens * f64::from(reps) / field("prompt_seconds")?,
            decode_tps: (gen_tokens - 1.0) / field("decode_seconds")?,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_prompt_is_repeated_until_the_span_is_reached_and_a_long_one_is_not() {
        assert_eq!(reps_of(56), 27);
        assert!(reps_of(56) * 56 >= PROMPT_SPAN && (reps_of(56) - 1) * 56 < PROMPT_SPAN);
        assert_eq!(reps_of(500), 3);
        assert_eq!(reps_of(PROMPT_SPAN), 1);
        assert_eq!(reps_of(7002), 1);
        assert_eq!(reps_of(0), PROMPT_SPAN);
    }
}
