//! One engine worker thread: its llama.cpp contexts, the sampler a request asks for, and the generation loop
//! (prompt evaluation, decoding with the adaptive thread count, stop strings, streamed pieces, log-probabilities).

use std::sync::Mutex;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, Sender};
use std::time::Instant;

use super::ffi::{self, Batch, Context, ContextParams, Link, Model, Sampler, Token};
use super::{Job, Shared, kv};
use crate::threads::{Switch, ThreadRule};
use crate::{ChatRequest, Completion, Error, FinishReason, FlashAttention, TokenLogprob};

/// How many recent generated tokens the repeat penalty looks at (llama.cpp's default).
const PENALTY_LAST_N: i32 = 64;
/// Largest prompt chunk handed to one `llama_decode` call.
const MAX_BATCH: u32 = 512;

/// A worker's llama.cpp contexts. In the default mode ([`FlashAttention::Prompts`]) there are two: one evaluates
/// prompts with flash attention, the other decodes one token per step without it; after each prompt the sequence's
/// KV cells move from the first to the second (`kv::transpose_values`: the two keep V in different layouts). With
/// flash attention off ([`FlashAttention::Off`]) the decoding context evaluates the prompts too and nothing moves.
///
/// Why the split: ggml's CPU flash attention (`ggml_compute_forward_flash_attn_ext_f16` in the vendored ggml) takes
/// one of two paths. For a batch of several tokens it gives each query row (token × head) to one thread, which runs
/// over every KV cell in order (in 64 × 64 tiles once the batch has 64 tokens; a row's arithmetic is the same
/// whichever tile or thread it falls to), so the bits do not depend on the thread count. For a one-token batch
/// whose KV view spans 512 cells or more (once a sequence holds more than 256 cells: llama.cpp pads the view to
/// 256) it splits the cells into one chunk per thread and adds the chunks' partial sums, so the result depends on
/// the thread count, and a greedy reply changed with the load (issue 46). Without flash attention, attention is
/// matrix products and a softmax whose every output element one thread computes whole, the same bits for any count.
/// So prompts (several tokens per batch; never a one-token batch, see [`prompt_chunks`]) use flash attention, which
/// evaluates long prompts faster, and decoding does not.
///
/// Only decoding (one token per step, `n_threads`) follows the thread rule: the decoding context's count is changed
/// in place (`llama_set_n_threads`). Prompt evaluation (`n_threads_batch`) is compute-bound work that splits well
/// over every configured thread, so it always uses the configured count: evaluating prompts with one thread under
/// load once ran at 0.62× llama.cpp's own build (`cargo xtask bench local-model`, issue 28).
struct Contexts<'m> {
    configured: usize,
    /// Evaluates prompts with flash attention; `None` when it is off (`decode` evaluates them).
    prompt: Option<Context<'m>>,
    /// Decodes without flash attention, with `decode_threads` threads.
    decode: Context<'m>,
    decode_threads: usize,
    /// Buffers of the move from `prompt` to `decode`, kept between requests.
    state: Vec<u8>,
    scratch: Vec<u8>,
}

impl<'m> Contexts<'m> {
    fn new(
        model: &'m Model,
        ctx_size: u32,
        n_batch: u32,
        configured: usize,
        flash: FlashAttention,
    ) -> Result<Contexts<'m>, Error> {
        let params = |flash_attention| ContextParams {
            n_ctx: ctx_size,
            n_batch,
            threads: configured,
            batch_threads: configured,
            flash_attention,
        };
        let prompt = match flash {
            FlashAttention::Prompts => Some(model.new_context(&params(true))?),
            FlashAttention::Off => None,
        };
        Ok(Contexts {
            configured,
            prompt,
            decode: model.new_context(&params(false))?,
            decode_threads: configured,
            state: Vec::new(),
            scratch: Vec::new(),
        })
    }

    /// The context prompts are evaluated in (the source of the first generated token's logits).
    fn prompt(&mut self) -> &mut Context<'m> {
        self.prompt.as_mut().unwrap_or(&mut self.decode)
    }

    /// The decoding context, set to decode with `threads`.
    fn decoder(&mut self, threads: usize) -> &mut Context<'m> {
        if threads != self.decode_threads {
            self.decode.set_threads(threads, self.configured);
            self.decode_threads = threads;
        }
        &mut self.decode
    }

    /// Give the decoding context the cells of the prompt just evaluated (nothing to do without a prompt context).
    /// The cells are copied bit for bit, only V's layout changes.
    fn hand_over(&mut self) -> Result<(), Error> {
        let Some(prompt) = self.prompt.as_mut() else {
            return Ok(());
        };
        prompt.seq_state_into(0, &mut self.state)?;
        let threads = self.configured;
        kv::transpose_values(
            &mut self.state,
            &mut self.scratch,
            |src, dst, rows, cols, el| ffi::transpose(src, dst, rows, cols, el, threads),
        )?;
        self.decode.clear();
        self.decode.set_seq_state(0, &self.state)
    }
}

/// How a prompt of `total` tokens is cut into `llama_decode` calls of at most `max` tokens (`max` >= 2): in order,
/// and no call after the first has a single token (a 511 + 2 ending instead of 512 + 1). llama.cpp evaluates a
/// one-token batch as a decoding step, with the decode thread count and, past 512 KV cells, flash attention's
/// thread-split sum (see [`Contexts`]).
pub(super) fn prompt_chunks(total: usize, max: usize) -> Vec<std::ops::Range<usize>> {
    let max = max.max(2);
    let mut chunks = Vec::with_capacity(total.div_ceil(max));
    let mut start = 0;
    while start < total {
        let left = total - start;
        let len = if left == max + 1 {
            max - 1
        } else {
            left.min(max)
        };
        chunks.push(start..start + len);
        start += len;
    }
    chunks
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
    let made = Contexts::new(&shared.model, ctx_size, n_batch, threads, shared.flash)
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
    let ctx = ctxs.prompt();
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
    let total = job.tokens.len();
    let chunks = prompt_chunks(total, usize::try_from(n_batch).unwrap_or(512));
    for part in chunks {
        batch.clear();
        for i in part {
            let pos = i32::try_from(i).unwrap_or(i32::MAX);
            batch.push(job.tokens[i], pos, 0, i + 1 == total)?;
        }
        ctx.decode(batch)
            .map_err(|e| engine_err("prompt evaluation", e))?;
    }
    if max_new > 1 {
        // The first token comes from the prompt's logits; decoding the next ones needs the cells.
        ctxs.hand_over()?;
    }
    let prompt_seconds = started.elapsed().as_secs_f64();
    let mut pos = i32::try_from(total).unwrap_or(i32::MAX);
    let mut logits_idx = batch.len() - 1;
    // Until the first decoding step, the logits are the prompt's (in the prompt's context).
    let mut decoded_any = false;

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
        let source = if decoded_any {
            &mut ctxs.decode
        } else {
            ctxs.prompt()
        };
        let token = sampler.sample(source, logits_idx);
        if vocab.is_eog(token) {
            finish = FinishReason::Stop;
            break;
        }
        generated += 1;
        let piece = vocab.piece(token, false);
        if let Some(lp) = logprobs.as_mut() {
            let logprob = logprob_of(source.logits(logits_idx)?, token);
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
        // Decoding may probe or switch the thread count per token.
        let threads = rule.threads();
        let step = Instant::now();
        ctxs.decoder(threads)
            .decode(batch)
            .map_err(|e| engine_err("decoding", e))?;
        decoded_any = true;
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

    /// Evaluate `tokens` as a prompt in `ctxs`' prompt context.
    fn evaluate(ctxs: &mut Contexts<'_>, tokens: &[Token]) {
        let mut batch = Batch::new(512).unwrap();
        let prompt = ctxs.prompt();
        prompt.clear();
        for part in prompt_chunks(tokens.len(), 512) {
            batch.clear();
            for i in part {
                let pos = i32::try_from(i).unwrap();
                batch
                    .push(tokens[i], pos, 0, i + 1 == tokens.len())
                    .unwrap();
            }
            prompt.decode(&batch).unwrap();
        }
    }

    /// The move of a prompt's cells to the decoding context is exact, for a prompt of two batches. What the
    /// decoding context holds afterwards, saved by llama.cpp itself in its own (transposed) layout, is byte for byte
    /// the state the move built. And the first layer's K and V, which come before any attention and so have the
    /// same bits with flash attention or without, equal those of a context without flash attention that evaluated
    /// the same prompt itself: a V block moved in the wrong order would not. A state in the row layout is refused.
    #[test]
    fn the_decoding_context_holds_exactly_the_prompt_cells() {
        let model = Model::load(&crate::engine::tests::gguf()).unwrap();
        let tokens: Vec<Token> = (0..700).map(|i| 100 + (i * 37) % 5000).collect();
        let mut ctxs = Contexts::new(&model, 1024, 512, 2, FlashAttention::Prompts).unwrap();
        evaluate(&mut ctxs, &tokens);
        ctxs.hand_over().unwrap();
        let mut held = Vec::new();
        ctxs.decode.seq_state_into(0, &mut held).unwrap();
        assert_eq!(held.len(), ctxs.state.len());
        assert!(
            held == ctxs.state,
            "the decoding context holds other bytes than the move built"
        );

        let mut plain = Contexts::new(&model, 1024, 512, 2, FlashAttention::Off).unwrap();
        evaluate(&mut plain, &tokens);
        let mut own = Vec::new();
        plain.decode.seq_state_into(0, &mut own).unwrap();
        let (moved, own_layout) = (kv::layout(&held).unwrap(), kv::layout(&own).unwrap());
        assert!(moved.v_trans && own_layout.v_trans);
        assert_eq!((moved.cells, own_layout.cells), (700, 700));
        let first_k = (
            &held[moved.keys[0].data.clone()],
            &own[own_layout.keys[0].data.clone()],
        );
        assert!(first_k.0 == first_k.1, "layer 0's K differs");
        let first_v = (
            &held[moved.values[0].data.clone()],
            &own[own_layout.values[0].data.clone()],
        );
        assert!(first_v.0.iter().any(|&b| b != 0));
        assert!(first_v.0 == first_v.1, "layer 0's V differs");

        let mut rows = Vec::new();
        ctxs.prompt().seq_state_into(0, &mut rows).unwrap();
        assert!(ctxs.decode.set_seq_state(0, &rows).is_err());
    }

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
