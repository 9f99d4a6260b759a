//! The in-process engine: one loaded model, `max_parallel` worker threads each owning two llama.cpp contexts (one
//! evaluates prompts with flash attention, one decodes without it: see `worker::Contexts`; one context with flash
//! attention off), and a queue in front of them.
//! This module loads the model, checks and queues requests; [`worker`] is what a worker thread does with them,
//! [`ffi`] holds the owned handles on llama.cpp's C API that both use, and [`kv`] rewrites a sequence's saved KV
//! cells from the prompt context's layout to the decoding context's.

mod ffi;
mod kv;
mod worker;

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use crate::threads::ThreadRule;
use crate::{
    ChatMessage, ChatRequest, ChatTemplate, Completion, EngineConfig, Error, FlashAttention,
};
use ffi::{Model, Token};
use worker::worker;

/// Used when a GGUF carries no chat template: plain ChatML.
const CHATML: &str = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] \
                      + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

/// What every worker shares.
struct Shared {
    model: Model,
    template: ChatTemplate,
    flash: FlashAttention,
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
    tokens: Vec<Token>,
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
    flash: FlashAttention,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("name", &self.name)
            .field("ctx_size", &self.ctx_size)
            .field("workers", &self.workers.len())
            .field("threads_per_sequence", &self.threads_per_sequence)
            .field("flash", &self.flash)
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// Load the GGUF once and start `max_parallel` workers. A worker with more than one thread adapts its
    /// thread count to the measured decode speed (`crate::threads`).
    /// Prompts are evaluated with flash attention ([`FlashAttention::Prompts`]).
    pub fn load(cfg: &EngineConfig) -> Result<Engine, Error> {
        Engine::load_with(cfg, FlashAttention::Prompts, ThreadRule::new)
    }

    /// [`Engine::load`] with flash attention as `flash` says (`cargo xtask bench local-model` measures both).
    pub fn load_with_flash_attention(
        cfg: &EngineConfig,
        flash: FlashAttention,
    ) -> Result<Engine, Error> {
        Engine::load_with(cfg, flash, ThreadRule::new)
    }

    /// [`Engine::load_with_flash_attention`] with each worker's thread rule made by `rule` from the threads per
    /// sequence.
    pub(crate) fn load_with(
        cfg: &EngineConfig,
        flash: FlashAttention,
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
        let started = Instant::now();
        let model = Model::load(&cfg.gguf)?;
        let template = load_template(&model)?;
        let name = model_name(&cfg.gguf);
        let shared = Arc::new(Shared {
            model,
            template,
            flash,
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
            flash,
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
            flash_attention = ?flash,
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

    /// Where the engine uses flash attention.
    pub fn flash_attention(&self) -> FlashAttention {
        self.flash
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

    /// Token ids of a text, special tokens parsed (as used for rendered prompts); none for a text llama.cpp cannot
    /// take (over 2 GiB).
    pub fn tokenize(&self, text: &str) -> Vec<i32> {
        self.tokens(text).unwrap_or_default()
    }

    fn tokens(&self, text: &str) -> Result<Vec<Token>, Error> {
        let vocab = self.shared.model.vocab();
        // Add BOS only where the model asks for it and the template did not already write it.
        let bos = vocab.piece(vocab.bos(), true);
        let add_special =
            vocab.adds_bos() && (bos.is_empty() || !text.as_bytes().starts_with(&bos));
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
        let tokens = self.tokens(&prompt)?;
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
        let mut request = request.clone();
        request.seed = request.sampling_seed();
        let job = Job {
            tokens,
            request,
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

fn load_template(model: &Model) -> Result<ChatTemplate, Error> {
    let vocab = model.vocab();
    let bos = String::from_utf8_lossy(&vocab.piece(vocab.bos(), true)).into_owned();
    let eos = String::from_utf8_lossy(&vocab.piece(vocab.eos(), true)).into_owned();
    match model.meta_str("tokenizer.chat_template") {
        Some(source) => ChatTemplate::new(&source, &bos, &eos),
        None => {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The fetched SmolLM2 GGUF (as the integration tests find it).
    pub(super) fn gguf() -> std::path::PathBuf {
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
        Engine::load_with(&config(1), FlashAttention::Prompts, rule).unwrap()
    }

    /// Two threads shared by `max_parallel` sequences, with room for [`long`]'s prompt.
    fn config(max_parallel: usize) -> EngineConfig {
        EngineConfig {
            gguf: gguf(),
            threads: 2,
            ctx_size: 1024,
            max_parallel,
        }
    }

    /// A prompt of more than 512 tokens: it is evaluated in two batches, and once a sequence holds more than 256
    /// cells llama.cpp's attention spans 512 or more KV cells, where its CPU flash-attention kernel splits a
    /// one-token step's sum between threads (the case that made replies differ while decoding used it).
    fn long(tokens: u32) -> ChatRequest {
        let items: Vec<String> = (1..=150).map(|i| format!("item {i}")).collect();
        let prompt = format!(
            "Here is an inventory list: {}. Which item comes after item 77? Then describe the list.",
            items.join(", ")
        );
        ChatRequest {
            logprobs: true,
            ..ChatRequest::greedy(vec![ChatMessage::new("user", prompt)], tokens)
        }
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
    /// thread (flash attention too, for the prompt batches it is used for), so one and two threads compute the same
    /// bits, and changing a sequence's decode thread count (as the adaptive rule does) changes nothing else. Greedy
    /// output equals the committed one-thread text with two threads and with a switch every three tokens; seeded
    /// sampling and the log-probabilities are identical too. (Timing-free: the rule is fixed or scripted here.)
    /// The same, past the 512 KV cells where a thread-split attention sum would show (see [`long`]), for both
    /// flash-attention settings: one thread for everything, two threads for the prompt and one or two for decoding,
    /// and the fallback to one thread taken and left again every three tokens.
    #[test]
    fn a_long_greedy_reply_is_the_same_with_one_two_and_switching_threads() {
        let request = long(24);
        for flash in [FlashAttention::Prompts, FlashAttention::Off] {
            let reply = |threads: usize, rule: fn(usize) -> ThreadRule| {
                let cfg = EngineConfig {
                    threads,
                    ..config(1)
                };
                let engine = Engine::load_with(&cfg, flash, rule).unwrap();
                assert_eq!(engine.threads_per_sequence(), threads);
                let c = engine.generate(&request).unwrap();
                assert!(c.prompt_tokens > 512, "{} prompt tokens", c.prompt_tokens);
                assert_eq!(c.completion_tokens, 24, "{flash:?}");
                (c.text, c.logprobs, engine.thread_use())
            };
            let (text, logprobs, _) = reply(1, ThreadRule::new);
            let one = (text, logprobs);
            for rule in [
                (|t| ThreadRule::fixed(t, 1)) as fn(usize) -> ThreadRule,
                |t| ThreadRule::fixed(t, 2),
            ] {
                let (text, logprobs, _) = reply(2, rule);
                assert_eq!((text, logprobs), one, "{flash:?}");
            }
            let (text, logprobs, used) = reply(2, |t| ThreadRule::alternating(t, 3));
            assert!(
                used.steps_one >= 9 && used.steps_configured >= 9,
                "{used:?}"
            );
            assert_eq!((text, logprobs), one, "{flash:?}");
        }
    }

    /// A prompt is cut into batches of at most the batch size, in order, with no one-token batch after the first.
    #[test]
    fn prompt_batches_never_end_with_a_single_token() {
        let cut = |total, max| worker::prompt_chunks(total, max);
        assert_eq!(cut(1, 512), vec![0..1]);
        assert_eq!(cut(512, 512), vec![0..512]);
        assert_eq!(cut(513, 512), vec![0..511, 511..513]);
        assert_eq!(cut(1025, 512), vec![0..512, 512..1023, 1023..1025]);
        assert_eq!(cut(1100, 512), vec![0..512, 512..1024, 1024..1100]);
        assert!(cut(0, 512).is_empty());
    }

    /// A greedy reply does not depend on the requests around it: alone on an engine with one sequence of two
    /// threads, beside another request on an engine with two sequences of one thread each, and after other
    /// requests on the same worker (its KV cache reused), the text and every log-probability are the same.
    #[test]
    fn a_greedy_reply_is_the_same_alone_alongside_others_and_after_them() {
        let request = long(24);
        let other = lighthouse(24);
        let alone = Engine::load(&config(1)).unwrap();
        let short_first = alone.generate(&other).unwrap();
        let reference = alone.generate(&request).unwrap();
        // The long prompt's cells stay behind in both contexts (emptying the cache frees cells, it does not zero
        // them): the short reply must not see them.
        let short_after = alone.generate(&other).unwrap();
        let after = alone.generate(&request).unwrap();
        drop(alone);
        assert_eq!(short_after.text, short_first.text);
        assert_eq!(short_after.logprobs, short_first.logprobs);
        assert_eq!(after.text, reference.text);
        assert_eq!(after.logprobs, reference.logprobs);

        let shared = Engine::load(&config(2)).unwrap();
        assert_eq!(shared.flash_attention(), FlashAttention::Prompts);
        assert_eq!(shared.threads_per_sequence(), 1);
        let (beside, with_other) = std::thread::scope(|s| {
            let first = s.spawn(|| shared.generate(&other).unwrap());
            let second = s.spawn(|| shared.generate(&request).unwrap());
            (second.join().unwrap(), first.join().unwrap())
        });
        assert_eq!(with_other.completion_tokens, 24);
        assert_eq!(beside.text, reference.text);
        assert_eq!(beside.logprobs, reference.logprobs);
    }

    /// A sampled request without a seed is seeded from what it asks, so it gets the same reply every time and the
    /// reply says which seed; with a seed, that one is used and reported; a greedy reply reports none.
    #[test]
    fn sampled_replies_are_seeded_by_the_request_and_report_the_seed() {
        let engine = engine(ThreadRule::new);
        let sampled = ChatRequest {
            temperature: Some(0.9),
            ..lighthouse(24)
        };
        let first = engine.generate(&sampled).unwrap();
        assert_eq!(first.seed, sampled.sampling_seed());
        assert!(first.seed.is_some());
        let again = engine.generate(&sampled).unwrap();
        assert_eq!(
            (&again.text, &again.logprobs),
            (&first.text, &first.logprobs)
        );
        let seeded = ChatRequest {
            seed: Some(7),
            ..sampled.clone()
        };
        let with_seed = engine.generate(&seeded).unwrap();
        assert_eq!(with_seed.seed, Some(7));
        assert_eq!(engine.generate(&seeded).unwrap().text, with_seed.text);
        assert_eq!(engine.generate(&lighthouse(4)).unwrap().seed, None);
    }

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
}
