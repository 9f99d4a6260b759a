//! One engine worker thread: its llama.cpp contexts, the sampler a request asks for, and the generation loop
//! (prompt evaluation, decoding with the adaptive thread count, stop strings, streamed pieces, log-probabilities).

use std::sync::Mutex;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, Sender};
use std::time::Instant;

use super::ffi::{Batch, Context, ContextParams, Link, Model, Sampler, Token};
use super::{Job, Shared};
use crate::threads::{Switch, ThreadRule};
use crate::{ChatRequest, Completion, Error, FinishReason, TokenLogprob};

/// How many recent generated tokens the repeat penalty looks at (llama.cpp's default).
const PENALTY_LAST_N: i32 = 64;
/// Largest prompt chunk handed to one `llama_decode` call.
const MAX_BATCH: u32 = 512;

/// A worker's llama.cpp contexts: one with the configured thread count, and (made on first use) one that decodes
/// with a single thread. Changing the thread count means moving the sequence to the other context: its KV cells are
/// copied with `llama_state_seq_get_data_ext`/`llama_state_seq_set_data_ext` (bit for bit, about 23 KB per token
/// for SmolLM2-135M). (The engine once reached llama.cpp through `llama-cpp-2`, which did not expose
/// `llama_set_n_threads`; the C API does, and one context changing its count would save the second KV cache.)
///
/// Only decoding (one token per step, `n_threads`) follows the thread rule. Prompt evaluation (a batch of tokens,
/// `n_threads_batch`) is compute-bound work that splits well over every configured thread, so both contexts
/// evaluate prompts with the configured count: the one-thread context once evaluated them with one thread too, and
/// prompt processing ran at 0.62× llama.cpp's own build (`cargo xtask bench local-model`, issue 28).
///
/// Flash attention is off: ggml's CPU flash attention splits a single-token step's KV cells between the threads
/// once the KV view reaches 512 cells and adds the partial sums, so its result depends on the thread count (a
/// greedy reply changed with the load, issue 46). Without it, attention is matrix products and a softmax whose
/// every output element one thread computes whole, so the bits are the same for any thread count.
struct Contexts<'m> {
    model: &'m Model,
    ctx_size: u32,
    n_batch: u32,
    configured: usize,
    main: Context<'m>,
    single: Option<Context<'m>>,
}

impl<'m> Contexts<'m> {
    /// A context that decodes with `threads` and evaluates prompts with `batch_threads`.
    fn params(ctx_size: u32, n_batch: u32, threads: usize, batch_threads: usize) -> ContextParams {
        ContextParams {
            n_ctx: ctx_size,
            n_batch,
            threads,
            batch_threads,
        }
    }

    fn new(
        model: &'m Model,
        ctx_size: u32,
        n_batch: u32,
        configured: usize,
    ) -> Result<Contexts<'m>, Error> {
        let main = model.new_context(&Self::params(ctx_size, n_batch, configured, configured))?;
        Ok(Contexts {
            model,
            ctx_size,
            n_batch,
            configured,
            main,
            single: None,
        })
    }

    /// The context that decodes with `threads` (the configured count, or one).
    fn get(&mut self, threads: usize) -> Result<&mut Context<'m>, Error> {
        if threads == self.configured {
            return Ok(&mut self.main);
        }
        if self.single.is_none() {
            let ctx = self.model.new_context(&Self::params(
                self.ctx_size,
                self.n_batch,
                1,
                self.configured,
            ))?;
            self.single = Some(ctx);
        }
        Ok(self.single.as_mut().unwrap_or(&mut self.main))
    }

    /// Move sequence 0 from the context with `from` threads to the one with `to` threads.
    fn migrate(&mut self, from: usize, to: usize) -> Result<(), Error> {
        if from == to {
            return Ok(());
        }
        let state = self.get(from)?.seq_state(0)?;
        let target = self.get(to)?;
        target.clear();
        target.set_seq_state(0, &state)
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

/// A worker thread's loop: make its contexts, report readiness on `ready`, then answer jobs until the queue closes.
pub(super) fn worker(
    shared: &Shared,
    rx: &Mutex<Receiver<Job>>,
    ready: &Sender<Result<(), Error>>,
    ctx_size: u32,
    threads: usize,
    mut rule: ThreadRule,
) {
    let n_batch = ctx_size.min(MAX_BATCH);
    let made = Contexts::new(&shared.model, ctx_size, n_batch, threads)
        .and_then(|ctxs| Ok((ctxs, Batch::new(n_batch as usize)?)));
    let (mut ctxs, mut batch) = match made {
        Ok(made) => made,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
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

fn sampler_for(request: &ChatRequest, model: &Model) -> Result<Sampler, Error> {
    let vocab = model.vocab();
    let mut chain = Vec::new();
    let repeat = request.repeat_penalty.unwrap_or(1.0) as f32;
    if (repeat - 1.0).abs() > f32::EPSILON {
        chain.push(Link::Penalties {
            last_n: PENALTY_LAST_N,
            repeat,
            frequency: 0.0,
            presence: 0.0,
        });
    }
    if request.ignore_eos {
        let bans: Vec<(Token, f32)> = (0..vocab.n_tokens())
            .filter(|&t| vocab.is_eog(t))
            .map(|t| (t, f32::NEG_INFINITY))
            .collect();
        chain.push(Link::LogitBias(bans));
    }
    // `Engine::submit` has set the seed of every sampled request and of no greedy one.
    match request.seed {
        None => chain.push(Link::Greedy),
        Some(seed) => {
            let top_p = request.top_p.unwrap_or(1.0) as f32;
            if top_p < 1.0 {
                chain.push(Link::TopP {
                    p: top_p,
                    min_keep: 1,
                });
            }
            chain.push(Link::Temp(request.temperature.unwrap_or(1.0) as f32));
            chain.push(Link::Dist(sampler_seed(seed)));
        }
    }
    Sampler::chain(&chain, vocab.n_tokens())
}

/// The 32-bit seed llama.cpp's sampler takes for a request's 64-bit seed (both halves folded in). llama.cpp reads
/// `u32::MAX` as "pick a random seed", so that one value is moved to its neighbour.
fn sampler_seed(seed: u64) -> u32 {
    let folded = (seed ^ (seed >> 32)) as u32;
    if folded == u32::MAX {
        folded - 1
    } else {
        folded
    }
}

/// Natural-log probability of `token` under the raw logits (log-softmax, computed in f64).
fn logprob_of(logits: &[f32], token: Token) -> f64 {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let sum: f64 = logits.iter().map(|&l| f64::from(l - max).exp()).sum();
    let idx = usize::try_from(token).unwrap_or(0);
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
    batch: &mut Batch,
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

    ctx.clear();
    let started = Instant::now();
    let chunk = usize::try_from(n_batch).unwrap_or(512);
    let mut pos: i32 = 0;
    let total = job.tokens.len();
    for (ci, part) in job.tokens.chunks(chunk).enumerate() {
        batch.clear();
        for (i, &tok) in part.iter().enumerate() {
            let last = ci * chunk + i + 1 == total;
            batch.push(tok, pos, 0, last)?;
            pos += 1;
        }
        ctx.decode(batch)
            .map_err(|e| engine_err("prompt evaluation", e))?;
    }
    let prompt_seconds = started.elapsed().as_secs_f64();
    let mut logits_idx = batch.len() - 1;

    let started = Instant::now();
    let mut sampler = sampler_for(request, &shared.model)?;
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
        let piece = vocab.piece(token, false);
        if let Some(lp) = logprobs.as_mut() {
            let logprob = logprob_of(ctxs.get(active)?.logits(logits_idx)?, token);
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
        batch.push(token, pos, 0, true)?;
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
        seed: request.seed,
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

    #[test]
    fn the_sampler_seed_folds_both_halves_and_is_never_the_random_marker() {
        assert_eq!(sampler_seed(7), 7);
        assert_eq!(sampler_seed(7 << 32), 7);
        assert_eq!(sampler_seed(u64::from(u32::MAX)), u32::MAX - 1);
    }

    #[test]
    fn logprob_is_log_softmax() {
        let logits = [0.0_f32, 0.0];
        assert!((logprob_of(&logits, 1) - 0.5_f64.ln()).abs() < 1e-9);
    }
}
