//! The in-process engine: one loaded model, `max_parallel` worker threads each owning a llama.cpp context
//! (two when a sequence has more than one thread: see [`Contexts`]), and a queue in front of them.

use std::num::NonZeroU32;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::Instant;

use llama_cpp_2::LlamaStateSeqFlags;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::token::logit_bias::LlamaLogitBias;

use crate::threads::{Switch, ThreadRule};
use crate::{
    ChatMessage, ChatRequest, ChatTemplate, Completion, EngineConfig, Error, FinishReason,
    TokenLogprob,
};

/// How many recent generated tokens the repeat penalty looks at (llama.cpp's default).
const PENALTY_LAST_N: i32 = 64;
/// Largest prompt chunk handed to one `llama_decode` call.
const MAX_BATCH: u32 = 512;
/// Used when a GGUF carries no chat template: plain ChatML.
const CHATML: &str = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] \
                      + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

/// llama.cpp's backend may be initialised once per process; it lives as long as the process.
fn backend() -> Result<&'static LlamaBackend, Error> {
    static BACKEND: OnceLock<Option<LlamaBackend>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            let backend = LlamaBackend::init().ok();
            route_llama_logs();
            backend
        })
        .as_ref()
        .ok_or_else(|| {
            Error::Engine("the llama.cpp backend was already initialised by other code".to_owned())
        })
}

/// llama.cpp prints hundreds of lines while loading; pass its warnings and errors to `tracing` and keep the
/// rest at trace level.
fn route_llama_logs() {
    unsafe extern "C" fn on_log(
        level: llama_cpp_sys_2::ggml_log_level,
        text: *const std::ffi::c_char,
        _user: *mut std::ffi::c_void,
    ) {
        if text.is_null() {
            return;
        }
        // SAFETY: llama.cpp passes a NUL-terminated string valid for the duration of the call.
        let text = unsafe { std::ffi::CStr::from_ptr(text) }.to_string_lossy();
        let text = text.trim_end();
        if text.is_empty() {
            return;
        }
        match level {
            llama_cpp_sys_2::GGML_LOG_LEVEL_ERROR => tracing::error!(target: "llama.cpp", "{text}"),
            llama_cpp_sys_2::GGML_LOG_LEVEL_WARN => tracing::warn!(target: "llama.cpp", "{text}"),
            _ => tracing::trace!(target: "llama.cpp", "{text}"),
        }
    }
    // SAFETY: the callback is a plain function that lives for the whole program and ignores `user_data`.
    unsafe { llama_cpp_sys_2::llama_log_set(Some(on_log), std::ptr::null_mut()) }
}

/// What every worker shares.
struct Shared {
    model: LlamaModel,
    template: ChatTemplate,
    stopping: AtomicBool,
    /// Decode steps with the configured thread count, with one thread (when configured > 1), and switches.
    steps_configured: AtomicU64,
    steps_one: AtomicU64,
    switches: AtomicU64,
}

/// How the engine's decode steps were spread over thread counts since it loaded (see `crate::threads`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ThreadUse {
    /// The configured threads per sequence.
    pub configured: usize,
    /// Single-token decode steps with the configured count.
    pub steps_configured: u64,
    /// Single-token decode steps with one thread (probes and fallback), when `configured` > 1.
    pub steps_one: u64,
    /// How often a sequence changed its thread count for good (probes not counted).
    pub switches: u64,
}

struct Job {
    tokens: Vec<LlamaToken>,
    request: ChatRequest,
    reply: Sender<Result<Completion, Error>>,
    /// Where the text goes as it is generated (streamed requests): each piece is final (no stop string can cut
    /// it any more) and whole UTF-8; the pieces are a prefix of the completion's text.
    text: Option<Sender<String>>,
}

/// One loaded GGUF with its request queue. Dropping it stops the workers (an in-flight request is aborted).
pub struct Engine {
    shared: Arc<Shared>,
    jobs: Option<Sender<Job>>,
    workers: Vec<JoinHandle<()>>,
    name: String,
    ctx_size: u32,
    threads_per_sequence: usize,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("name", &self.name)
            .field("ctx_size", &self.ctx_size)
            .field("workers", &self.workers.len())
            .field("threads_per_sequence", &self.threads_per_sequence)
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// Load the GGUF once and start `max_parallel` workers. A worker with more than one thread adapts its
    /// thread count to the measured decode speed (`crate::threads`).
    pub fn load(cfg: &EngineConfig) -> Result<Engine, Error> {
        Engine::load_with(cfg, ThreadRule::new)
    }

    /// [`Engine::load`] with each worker's thread rule made by `rule` from the threads per sequence.
    pub(crate) fn load_with(
        cfg: &EngineConfig,
        rule: fn(usize) -> ThreadRule,
    ) -> Result<Engine, Error> {
        if cfg.threads == 0 || cfg.max_parallel == 0 || cfg.ctx_size < 16 {
            return Err(Error::Config(format!(
                "threads ({}) and max_parallel ({}) must be at least 1 and ctx_size ({}) at least 16",
                cfg.threads, cfg.max_parallel, cfg.ctx_size
            )));
        }
        if !cfg.gguf.is_file() {
            return Err(Error::GgufMissing {
                path: cfg.gguf.clone(),
            });
        }
        let cpu = crate::cpu::CpuReport::detect();
        cpu.check()?;
        let backend = backend()?;
        let started = Instant::now();
        let model = LlamaModel::load_from_file(backend, &cfg.gguf, &LlamaModelParams::default())
            .map_err(|e| Error::Load {
                path: cfg.gguf.clone(),
                reason: e.to_string(),
            })?;
        let template = load_template(&model)?;
        let name = model_name(&cfg.gguf);
        let shared = Arc::new(Shared {
            model,
            template,
            stopping: AtomicBool::new(false),
            steps_configured: AtomicU64::new(0),
            steps_one: AtomicU64::new(0),
            switches: AtomicU64::new(0),
        });

        let threads_per_sequence = (cfg.threads / cfg.max_parallel).max(1);
        let (jobs, rx) = mpsc::channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), Error>>();
        let mut workers = Vec::with_capacity(cfg.max_parallel);
        for i in 0..cfg.max_parallel {
            let shared = Arc::clone(&shared);
            let rx = Arc::clone(&rx);
            let ready = ready_tx.clone();
            let ctx_size = cfg.ctx_size;
            let handle = std::thread::Builder::new()
                .name(format!("local-model-{i}"))
                .spawn(move || {
                    let rule = rule(threads_per_sequence);
                    worker(&shared, &rx, &ready, ctx_size, threads_per_sequence, rule);
                })?;
            workers.push(handle);
        }
        drop(ready_tx);
        let mut engine = Engine {
            shared,
            jobs: Some(jobs),
            workers,
            name,
            ctx_size: cfg.ctx_size,
            threads_per_sequence,
        };
        for _ in 0..cfg.max_parallel {
            match ready_rx.recv() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(e),
                Err(_) => {
                    return Err(Error::Engine(
                        "a worker thread died while starting".to_owned(),
                    ));
                }
            }
        }
        engine.workers.shrink_to_fit();
        tracing::info!(
            model = %engine.name,
            sequences = cfg.max_parallel,
            threads_per_sequence,
            adaptive = threads_per_sequence > 1,
            ctx = cfg.ctx_size,
            cpu = %cpu.summary(),
            "embedded model loaded in {:.1} s",
            started.elapsed().as_secs_f64()
        );
        Ok(engine)
    }

    /// The model's name (the GGUF file name without extension).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Context length per sequence.
    pub fn ctx_size(&self) -> u32 {
        self.ctx_size
    }

    /// CPU threads each sequence uses.
    pub fn threads_per_sequence(&self) -> usize {
        self.threads_per_sequence
    }

    /// How decode steps were spread over thread counts so far.
    pub fn thread_use(&self) -> ThreadUse {
        let s = &self.shared;
        ThreadUse {
            configured: self.threads_per_sequence,
            steps_configured: s.steps_configured.load(Ordering::Relaxed),
            steps_one: s.steps_one.load(Ordering::Relaxed),
            switches: s.switches.load(Ordering::Relaxed),
        }
    }

    /// The prompt text the chat template makes of these messages (with the assistant's generation prompt).
    pub fn render_prompt(&self, messages: &[ChatMessage]) -> Result<String, Error> {
        self.shared.template.render(messages)
    }

    /// Token ids of a text, special tokens parsed (as used for rendered prompts).
    pub fn tokenize(&self, text: &str) -> Vec<i32> {
        self.tokens(text).into_iter().map(|t| t.0).collect()
    }

    fn tokens(&self, text: &str) -> Vec<LlamaToken> {
        let vocab = self.shared.model.vocab();
        // Add BOS only where the model asks for it and the template did not already write it.
        let bos = vocab.token_to_piece(vocab.bos(), true, None);
        let add_special =
            vocab.should_add_bos() && (bos.is_empty() || !text.as_bytes().starts_with(&bos));
        vocab.tokenize(text.as_bytes(), add_special, true)
    }

    /// Generate a completion. Waits in the queue while all sequences are busy.
    pub fn generate(&self, request: &ChatRequest) -> Result<Completion, Error> {
        self.submit(request, None)?
            .recv()
            .map_err(|_| Error::ShuttingDown)?
    }

    /// Queues a completion whose text is sent to `text` piece by piece as it is generated (the pieces add up to a
    /// prefix of the completion's text; the rest comes with the completion); the completion arrives on the
    /// returned channel. A request the engine refuses fails here, before anything is generated; dropping the
    /// `text` receiver stops the generation.
    pub fn generate_streaming(
        &self,
        request: &ChatRequest,
        text: Sender<String>,
    ) -> Result<mpsc::Receiver<Result<Completion, Error>>, Error> {
        self.submit(request, Some(text))
    }

    fn submit(
        &self,
        request: &ChatRequest,
        text: Option<Sender<String>>,
    ) -> Result<mpsc::Receiver<Result<Completion, Error>>, Error> {
        validate(request)?;
        let prompt = self.render_prompt(&request.messages)?;
        let tokens = self.tokens(&prompt);
        if tokens.is_empty() {
            return Err(Error::BadRequest("the rendered prompt is empty".to_owned()));
        }
        let ctx = usize::try_from(self.ctx_size).unwrap_or(usize::MAX);
        if tokens.len() >= ctx {
            return Err(Error::BadRequest(format!(
                "the prompt has {} tokens; the context holds {} (prompt plus completion)",
                tokens.len(),
                self.ctx_size
            )));
        }
        let (reply, rx) = mpsc::channel();
        let job = Job {
            tokens,
            request: request.clone(),
            reply,
            text,
        };
        self.jobs
            .as_ref()
            .ok_or(Error::ShuttingDown)?
            .send(job)
            .map_err(|_| Error::ShuttingDown)?;
        Ok(rx)
    }

    /// Make in-flight and queued requests fail fast (used before dropping).
    pub(crate) fn begin_shutdown(&self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.begin_shutdown();
        self.jobs = None;
        for handle in self.workers.drain(..) {
            let _ = handle.join();
        }
    }
}

fn validate(r: &ChatRequest) -> Result<(), Error> {
    if r.messages.is_empty() {
        return Err(Error::BadRequest("`messages` is empty".to_owned()));
    }
    if let Some(t) = r.temperature
        && !(t.is_finite() && t >= 0.0)
    {
        return Err(Error::BadRequest(format!(
            "`temperature` must be a finite number >= 0, got {t}"
        )));
    }
    if let Some(p) = r.top_p
        && !(p > 0.0 && p <= 1.0)
    {
        return Err(Error::BadRequest(format!(
            "`top_p` must be in (0, 1], got {p}"
        )));
    }
    if let Some(p) = r.repeat_penalty
        && !(p.is_finite() && p > 0.0)
    {
        return Err(Error::BadRequest(format!(
            "`repeat_penalty` must be a finite number > 0, got {p}"
        )));
    }
    if r.stop_strings().iter().any(String::is_empty) {
        return Err(Error::BadRequest(
            "`stop` contains an empty string".to_owned(),
        ));
    }
    Ok(())
}

fn load_template(model: &LlamaModel) -> Result<ChatTemplate, Error> {
    let vocab = model.vocab();
    let bos = String::from_utf8_lossy(&vocab.token_to_piece(vocab.bos(), true, None)).into_owned();
    let eos = String::from_utf8_lossy(&vocab.token_to_piece(vocab.eos(), true, None)).into_owned();
    match model.meta_val_str("tokenizer.chat_template") {
        Ok(source) => ChatTemplate::new(&source, &bos, &eos),
        Err(_) => {
            tracing::warn!("the GGUF has no `tokenizer.chat_template`; using plain ChatML");
            ChatTemplate::new(CHATML, &bos, &eos)
        }
    }
}

fn model_name(path: &Path) -> String {
    path.file_stem().map_or_else(
        || "local-model".to_owned(),
        |s| s.to_string_lossy().into_owned(),
    )
}

/// A worker's llama.cpp contexts: one with the configured thread count, and (made on first use) one that decodes
/// with a single thread. llama-cpp-2 0.1.160 does not expose `llama_set_n_threads` nor the context pointer it would
/// need, so changing the thread count means moving the sequence to the other context: its KV cells are copied
/// with `state_seq_get`/`state_seq_set` (bit for bit, about 23 KB per token for SmolLM2-135M).
///
/// Only decoding (one token per step, `n_threads`) follows the thread rule. Prompt evaluation (a batch of tokens,
/// `n_threads_batch`) is compute-bound work that splits well over every configured thread, so both contexts
/// evaluate prompts with the configured count: the one-thread context once evaluated them with one thread too, and
/// prompt processing ran at 0.62× llama.cpp's own build (`cargo xtask bench local-model`, issue 28).
struct Contexts<'m> {
    model: &'m LlamaModel,
    backend: &'static LlamaBackend,
    ctx_size: u32,
    n_batch: u32,
    configured: usize,
    main: LlamaContext<'m>,
    single: Option<LlamaContext<'m>>,
}

impl<'m> Contexts<'m> {
    /// A context that decodes with `threads` and evaluates prompts with `batch_threads`.
    fn params(
        ctx_size: u32,
        n_batch: u32,
        threads: usize,
        batch_threads: usize,
    ) -> LlamaContextParams {
        let count = |n: usize| i32::try_from(n).unwrap_or(i32::MAX);
        LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(ctx_size))
            .with_n_batch(n_batch)
            .with_n_ubatch(n_batch)
            .with_n_threads(count(threads))
            .with_n_threads_batch(count(batch_threads))
    }

    fn new(
        model: &'m LlamaModel,
        backend: &'static LlamaBackend,
        ctx_size: u32,
        n_batch: u32,
        configured: usize,
    ) -> Result<Contexts<'m>, Error> {
        let main = model
            .new_context(
                backend,
                Self::params(ctx_size, n_batch, configured, configured),
            )
            .map_err(|e| {
                Error::Engine(format!("cannot create a context of {ctx_size} tokens: {e}"))
            })?;
        Ok(Contexts {
            model,
            backend,
            ctx_size,
            n_batch,
            configured,
            main,
            single: None,
        })
    }

    /// The context that decodes with `threads` (the configured count, or one).
    fn get(&mut self, threads: usize) -> Result<&mut LlamaContext<'m>, Error> {
        if threads == self.configured {
            return Ok(&mut self.main);
        }
        if self.single.is_none() {
            let ctx = self
                .model
                .new_context(
                    self.backend,
                    Self::params(self.ctx_size, self.n_batch, 1, self.configured),
                )
                .map_err(|e| engine_err("creating the one-thread context", e))?;
            self.single = Some(ctx);
        }
        Ok(self.single.as_mut().unwrap_or(&mut self.main))
    }

    /// Move sequence 0 from the context with `from` threads to the one with `to` threads.
    fn migrate(&mut self, from: usize, to: usize) -> Result<(), Error> {
        if from == to {
            return Ok(());
        }
        let state = self
            .get(from)?
            .state_seq_get(0, LlamaStateSeqFlags::empty())
            .map_err(|e| engine_err("saving the sequence", e))?;
        let target = self.get(to)?;
        target.clear_kv_cache();
        target
            .state_seq_set(&state, 0)
            .map_err(|e| engine_err("restoring the sequence", e))
    }
}

/// Log a thread-count switch: the first one in each direction at info level, later ones at debug level.
fn log_switch(s: &Switch, logged: &mut [bool; 2]) {
    let to_one = usize::from(s.to == 1);
    let first = !logged[to_one];
    logged[to_one] = true;
    let why = if s.to == 1 {
        "another process is using the cores"
    } else {
        "the cores are free again"
    };
    let (from_tps, to_tps) = (1.0 / s.from_seconds, 1.0 / s.to_seconds);
    if first {
        tracing::info!(
            "embedded model: decoding with {} thread(s) instead of {} ({why}: {to_tps:.1} vs {from_tps:.1} tokens/s measured)",
            s.to,
            s.from
        );
    } else {
        tracing::debug!(
            "embedded model: decoding with {} thread(s) instead of {} ({to_tps:.1} vs {from_tps:.1} tokens/s)",
            s.to,
            s.from
        );
    }
}

fn worker(
    shared: &Shared,
    rx: &Mutex<Receiver<Job>>,
    ready: &Sender<Result<(), Error>>,
    ctx_size: u32,
    threads: usize,
    mut rule: ThreadRule,
) {
    let backend = match backend() {
        Ok(b) => b,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let n_batch = ctx_size.min(MAX_BATCH);
    let mut ctxs = match Contexts::new(&shared.model, backend, ctx_size, n_batch, threads) {
        Ok(c) => c,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let mut batch = LlamaBatch::new(n_batch as usize, 1);
    let mut logged = [false; 2];
    let _ = ready.send(Ok(()));
    loop {
        let job = {
            let Ok(guard) = rx.lock() else { return };
            match guard.recv() {
                Ok(job) => job,
                Err(_) => return,
            }
        };
        let result = if shared.stopping.load(Ordering::SeqCst) {
            Err(Error::ShuttingDown)
        } else {
            run(
                shared,
                &mut ctxs,
                &mut rule,
                &mut logged,
                &mut batch,
                n_batch,
                &job,
            )
        };
        let _ = job.reply.send(result);
    }
}

fn sampler_for(request: &ChatRequest, model: &LlamaModel) -> LlamaSampler {
    let mut chain = Vec::new();
    let repeat = request.repeat_penalty.unwrap_or(1.0) as f32;
    if (repeat - 1.0).abs() > f32::EPSILON {
        chain.push(LlamaSampler::penalties(
            model.n_vocab(),
            PENALTY_LAST_N,
            repeat,
            0.0,
            0.0,
        ));
    }
    if request.ignore_eos {
        let vocab = model.vocab();
        let bans: Vec<LlamaLogitBias> = (0..model.n_vocab())
            .map(LlamaToken)
            .filter(|&t| vocab.is_eog(t))
            .map(|t| LlamaLogitBias::new(t, f32::NEG_INFINITY))
            .collect();
        chain.push(LlamaSampler::logit_bias(model.n_vocab(), &bans));
    }
    let temperature = request.temperature.unwrap_or(0.0);
    if temperature <= 0.0 {
        chain.push(LlamaSampler::greedy());
    } else {
        let top_p = request.top_p.unwrap_or(1.0) as f32;
        if top_p < 1.0 {
            chain.push(LlamaSampler::top_p(top_p, 1));
        }
        chain.push(LlamaSampler::temp(temperature as f32));
        // Without a seed, llama.cpp's default seed value asks for a random one.
        let seed = request.seed.map_or(u32::MAX, |s| (s ^ (s >> 32)) as u32);
        chain.push(LlamaSampler::dist(seed));
    }
    LlamaSampler::chain_simple(chain)
}

/// Natural-log probability of `token` under the raw logits (log-softmax, computed in f64).
fn logprob_of(logits: &[f32], token: LlamaToken) -> f64 {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let sum: f64 = logits.iter().map(|&l| f64::from(l - max).exp()).sum();
    let idx = usize::try_from(token.0).unwrap_or(0);
    logits
        .get(idx)
        .map_or(f64::NEG_INFINITY, |&l| f64::from(l - max) - sum.ln())
}

fn engine_err(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Engine(format!("{what}: {e}"))
}

fn run(
    shared: &Shared,
    ctxs: &mut Contexts<'_>,
    rule: &mut ThreadRule,
    logged: &mut [bool; 2],
    batch: &mut LlamaBatch,
    n_batch: u32,
    job: &Job,
) -> Result<Completion, Error> {
    let request = &job.request;
    let vocab = shared.model.vocab();
    // The prompt is evaluated with the current count; decoding may probe or switch per token.
    let mut active = rule.current();
    let ctx = ctxs.get(active)?;
    let n_ctx = ctx.n_ctx();
    let n_prompt = u32::try_from(job.tokens.len()).unwrap_or(u32::MAX);
    if n_prompt >= n_ctx {
        return Err(Error::BadRequest(format!(
            "the prompt has {n_prompt} tokens; the context holds {n_ctx}"
        )));
    }
    let budget = n_ctx - n_prompt;
    let max_new = request.max_tokens.map_or(budget, |m| m.min(budget));

    ctx.clear_kv_cache();
    let started = Instant::now();
    let chunk = usize::try_from(n_batch).unwrap_or(512);
    let mut pos: i32 = 0;
    let total = job.tokens.len();
    for (ci, part) in job.tokens.chunks(chunk).enumerate() {
        batch.clear();
        for (i, &tok) in part.iter().enumerate() {
            let last = ci * chunk + i + 1 == total;
            batch
                .add(tok, pos, &[0], last)
                .map_err(|e| engine_err("batch", e))?;
            pos += 1;
        }
        ctx.decode(batch)
            .map_err(|e| engine_err("prompt evaluation", e))?;
    }
    let prompt_seconds = started.elapsed().as_secs_f64();
    let mut logits_idx = batch.n_tokens() - 1;

    let started = Instant::now();
    let mut sampler = sampler_for(request, &shared.model);
    let stops: Vec<&[u8]> = request
        .stop_strings()
        .iter()
        .map(|s| s.as_bytes())
        .collect();
    let longest_stop = stops.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out: Vec<u8> = Vec::new();
    let mut logprobs: Option<Vec<TokenLogprob>> = request.logprobs.then(Vec::new);
    let mut generated: u32 = 0;
    // Bytes of `out` already sent to a streaming client.
    let mut streamed = 0usize;
    let mut finish = FinishReason::Length;
    while generated < max_new {
        if shared.stopping.load(Ordering::Relaxed) {
            return Err(Error::ShuttingDown);
        }
        let token = sampler.sample(ctxs.get(active)?, logits_idx);
        if vocab.is_eog(token) {
            finish = FinishReason::Stop;
            break;
        }
        generated += 1;
        let piece = vocab.token_to_piece(token, false, None);
        if let Some(lp) = logprobs.as_mut() {
            let logprob = logprob_of(ctxs.get(active)?.get_logits_ith(logits_idx), token);
            lp.push(TokenLogprob {
                token: String::from_utf8_lossy(&piece).into_owned(),
                logprob,
                bytes: piece.clone(),
            });
        }
        let before = out.len();
        out.extend_from_slice(&piece);
        if longest_stop > 0 {
            let from = before.saturating_sub(longest_stop - 1);
            let hit = stops
                .iter()
                .filter_map(|s| find(&out[from..], s).map(|i| from + i))
                .min();
            if let Some(at) = hit {
                out.truncate(at);
                finish = FinishReason::Stop;
                break;
            }
        }
        if let Some(tx) = &job.text {
            // Bytes no stop string can reach back into any more, up to the last whole character.
            let safe = out.len().saturating_sub(longest_stop.saturating_sub(1));
            if safe > streamed {
                let valid = match std::str::from_utf8(&out[streamed..safe]) {
                    Ok(t) => t.len(),
                    Err(e) => e.valid_up_to(),
                };
                if valid > 0 {
                    let piece =
                        String::from_utf8_lossy(&out[streamed..streamed + valid]).into_owned();
                    if tx.send(piece).is_err() {
                        return Err(Error::Engine("the streaming client went away".to_owned()));
                    }
                    streamed += valid;
                }
            }
        }
        if generated == max_new {
            break;
        }
        batch.clear();
        batch
            .add(token, pos, &[0], true)
            .map_err(|e| engine_err("batch", e))?;
        pos += 1;
        let threads = rule.threads();
        if threads != active {
            ctxs.migrate(active, threads)?;
            active = threads;
        }
        let step = Instant::now();
        ctxs.get(active)?
            .decode(batch)
            .map_err(|e| engine_err("decoding", e))?;
        let counter = if threads == 1 && ctxs.configured > 1 {
            &shared.steps_one
        } else {
            &shared.steps_configured
        };
        counter.fetch_add(1, Ordering::Relaxed);
        if let Some(switch) = rule.record(threads, step.elapsed().as_secs_f64()) {
            shared.switches.fetch_add(1, Ordering::Relaxed);
            log_switch(&switch, logged);
        }
        logits_idx = 0;
    }
    let decode_seconds = started.elapsed().as_secs_f64();
    Ok(Completion {
        text: String::from_utf8_lossy(&out).into_owned(),
        finish_reason: finish,
        prompt_tokens: n_prompt,
        completion_tokens: generated,
        logprobs,
        prompt_seconds,
        decode_seconds,
    })
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || needle.len() > haystack.len() {
        return None;
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_locates_first_match() {
        assert_eq!(find(b"abcabc", b"ca"), Some(2));
        assert_eq!(find(b"ab", b"abc"), None);
    }

    /// The fetched SmolLM2 GGUF (as the integration tests find it).
    fn gguf() -> std::path::PathBuf {
        let path = std::env::var_os(schema::env::EnvVars::IFSTRESS_GGUF)
            .filter(|p| !p.is_empty())
            .map_or_else(
                || {
                    schema::env::cache_dir()
                        .join("assets")
                        .join("smollm2-135m-instruct-q4_1.gguf")
                },
                std::path::PathBuf::from,
            );
        assert!(
            path.is_file(),
            "the embedded model {} is missing: run `cargo xtask setup`",
            path.display()
        );
        path
    }

    fn engine(rule: fn(usize) -> ThreadRule) -> Engine {
        let cfg = EngineConfig {
            gguf: gguf(),
            threads: 2,
            ctx_size: 256,
            max_parallel: 1,
        };
        Engine::load_with(&cfg, rule).unwrap()
    }

    fn lighthouse(tokens: u32) -> ChatRequest {
        let prompt =
            "Write a short story about a lighthouse keeper who finds a message in a bottle.";
        ChatRequest {
            logprobs: true,
            ..ChatRequest::greedy(vec![ChatMessage::new("user", prompt)], tokens)
        }
    }

    /// The tokens do not depend on the thread count: llama.cpp's CPU kernels give every output element to one
    /// thread, so one and two threads compute the same bits, and moving a sequence between the one- and
    /// two-thread contexts (as the adaptive rule does) copies its KV cells exactly. Greedy output equals the
    /// committed one-thread text with two threads and with a switch every three tokens; seeded sampling and
    /// the log-probabilities are identical too. (Timing-free: the rule is fixed or scripted here.)
    #[test]
    fn output_is_the_same_with_one_two_and_switching_threads() {
        let expected = include_str!("../tests/it/golden/lighthouse-48.txt");
        let seeded = ChatRequest {
            temperature: Some(0.9),
            seed: Some(7),
            ..lighthouse(32)
        };

        let one = engine(|t| ThreadRule::fixed(t, 1));
        assert_eq!(one.threads_per_sequence(), 2);
        let one_greedy = one.generate(&lighthouse(48)).unwrap();
        assert_eq!(one_greedy.text, expected);
        let one_seeded = one.generate(&seeded).unwrap();
        drop(one);

        let two = engine(|t| ThreadRule::fixed(t, 2));
        let two_greedy = two.generate(&lighthouse(48)).unwrap();
        drop(two);
        assert_eq!(two_greedy.text, expected);
        assert_eq!(two_greedy.logprobs, one_greedy.logprobs);

        let switching = engine(|t| ThreadRule::alternating(t, 3));
        let sw_greedy = switching.generate(&lighthouse(48)).unwrap();
        assert_eq!(sw_greedy.text, expected);
        assert_eq!(sw_greedy.logprobs, one_greedy.logprobs);
        let sw_seeded = switching.generate(&seeded).unwrap();
        assert_eq!(sw_seeded.text, one_seeded.text);
        assert_eq!(sw_seeded.logprobs, one_seeded.logprobs);
        assert_eq!(sw_seeded.completion_tokens, one_seeded.completion_tokens);
    }

    #[test]
    fn logprob_is_log_softmax() {
        let logits = [0.0_f32, 0.0];
        assert!((logprob_of(&logits, LlamaToken(1)) - 0.5_f64.ln()).abs() < 1e-9);
    }
}
