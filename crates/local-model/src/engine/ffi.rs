//! Owned handles on llama.cpp's C API (`llama-cpp-sys-2`, bindgen's translation of `llama.h`): the model with its
//! vocabulary, a context, a token batch and a sampler chain. Each handle frees what it owns when dropped, a null
//! pointer from llama.cpp becomes an [`Error`], and every `unsafe` call states why it is sound.
//!
//! This module knows the C calls and their memory rules, nothing of requests, threads or templates: the engine
//! decides which parameters, tokens and samplers to use. The backend is initialised once per process, when the
//! first model loads, and llama.cpp's log is routed to `tracing` at the same time.

use std::ffi::{CStr, CString, c_char, c_void};
use std::marker::PhantomData;
use std::path::Path;
use std::ptr::NonNull;
use std::sync::{Mutex, Once, PoisonError};

use llama_cpp_sys_2 as sys;

use crate::Error;

/// A token id of the model's vocabulary.
pub(super) type Token = sys::llama_token;

/// Initialise llama.cpp's backend (once per process; it is never freed) and route its log to `tracing`.
fn init_backend() {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        // SAFETY: `INIT` makes this the only call in the process, and it runs before any model is loaded.
        unsafe { sys::llama_backend_init() };
        route_llama_logs();
    });
}

/// llama.cpp prints hundreds of lines while loading; pass its warnings and errors to `tracing` and keep the
/// rest at trace level.
fn route_llama_logs() {
    unsafe extern "C" fn on_log(
        level: sys::ggml_log_level,
        text: *const c_char,
        _user: *mut c_void,
    ) {
        if text.is_null() {
            return;
        }
        // SAFETY: llama.cpp passes a NUL-terminated string valid for the duration of the call.
        let text = unsafe { CStr::from_ptr(text) }.to_string_lossy();
        let text = text.trim_end();
        if text.is_empty() {
            return;
        }
        match level {
            sys::GGML_LOG_LEVEL_ERROR => tracing::error!(target: "llama.cpp", "{text}"),
            sys::GGML_LOG_LEVEL_WARN => tracing::warn!(target: "llama.cpp", "{text}"),
            _ => tracing::trace!(target: "llama.cpp", "{text}"),
        }
    }
    // SAFETY: the callback is a plain function that lives for the whole program and ignores `user_data`.
    unsafe { sys::llama_log_set(Some(on_log), std::ptr::null_mut()) }
}

/// A loaded GGUF model (llama.cpp's default model parameters: memory-mapped, every layer on the CPU).
pub(super) struct Model {
    ptr: NonNull<sys::llama_model>,
    vocab: NonNull<sys::llama_vocab>,
    /// Serialises context creation, the one call that takes the model mutably.
    creating: Mutex<()>,
}

// SAFETY: once loaded, llama.cpp only reads a model (weights, vocabulary, metadata), so contexts on several threads
// may share it, as llama.cpp's own server does; the one call that takes it mutably (`llama_init_from_model`) is
// serialised by `creating`. The pointer is owned by this value alone.
unsafe impl Send for Model {}
// SAFETY: as for `Send`: every method takes `&self` to read the model, except context creation, which locks.
unsafe impl Sync for Model {}

impl Model {
    /// Load the GGUF at `path` (initialising the backend first if needed).
    pub(super) fn load(path: &Path) -> Result<Model, Error> {
        init_backend();
        let failed = |reason: &str| Error::Load {
            path: path.to_owned(),
            reason: reason.to_owned(),
        };
        let c_path = path
            .to_str()
            .and_then(|p| CString::new(p).ok())
            .ok_or_else(|| failed("llama.cpp needs a UTF-8 path without NUL bytes"))?;
        // SAFETY: returns a plain struct of defaults; nothing in it is owned by the caller.
        let params = unsafe { sys::llama_model_default_params() };
        // SAFETY: `c_path` is NUL-terminated and outlives the call; the parameters are llama.cpp's own defaults,
        // whose pointers (devices, overrides, callbacks) are all null.
        let ptr = unsafe { sys::llama_model_load_from_file(c_path.as_ptr(), params) };
        let ptr = NonNull::new(ptr)
            .ok_or_else(|| failed("llama.cpp could not read it as a model (its log says why)"))?;
        // SAFETY: `ptr` is a model llama.cpp just returned; the vocabulary it points to lives inside the model.
        let vocab = unsafe { sys::llama_model_get_vocab(ptr.as_ptr()) };
        let Some(vocab) = NonNull::new(vocab.cast_mut()) else {
            // SAFETY: `ptr` came from `llama_model_load_from_file`, is not shared yet, and is freed only here.
            unsafe { sys::llama_model_free(ptr.as_ptr()) };
            return Err(failed("the model has no vocabulary"));
        };
        Ok(Model {
            ptr,
            vocab,
            creating: Mutex::new(()),
        })
    }

    /// The model's vocabulary.
    pub(super) fn vocab(&self) -> Vocab<'_> {
        Vocab {
            ptr: self.vocab,
            _model: PhantomData,
        }
    }

    /// A metadata value as text (`None` when the key is absent or the value is not UTF-8).
    pub(super) fn meta_str(&self, key: &str) -> Option<String> {
        let key = CString::new(key).ok()?;
        let read = |buf: &mut [u8]| {
            // SAFETY: the model is alive, `key` is NUL-terminated, and llama.cpp writes at most `buf.len()` bytes
            // (snprintf) into `buf`.
            unsafe {
                sys::llama_model_meta_val_str(
                    self.ptr.as_ptr(),
                    key.as_ptr(),
                    buf.as_mut_ptr().cast::<c_char>(),
                    buf.len(),
                )
            }
        };
        let mut buf = vec![0u8; 256];
        let mut len = usize::try_from(read(&mut buf)).ok()?;
        if len >= buf.len() {
            // snprintf said how long the value is: make room for it and its NUL.
            buf = vec![0u8; len + 1];
            len = usize::try_from(read(&mut buf)).ok()?;
            if len >= buf.len() {
                return None;
            }
        }
        buf.truncate(len);
        String::from_utf8(buf).ok()
    }

    /// A new context on this model.
    pub(super) fn new_context(&self, p: &ContextParams) -> Result<Context<'_>, Error> {
        let count = |n: usize| i32::try_from(n).unwrap_or(i32::MAX);
        // SAFETY: returns a plain struct of defaults; nothing in it is owned by the caller.
        let mut params = unsafe { sys::llama_context_default_params() };
        params.n_ctx = p.n_ctx;
        params.n_batch = p.n_batch;
        params.n_ubatch = p.n_batch;
        params.n_threads = count(p.threads);
        params.n_threads_batch = count(p.batch_threads);
        params.flash_attn_type = if p.flash_attention {
            sys::LLAMA_FLASH_ATTN_TYPE_ENABLED
        } else {
            sys::LLAMA_FLASH_ATTN_TYPE_DISABLED
        };
        let ptr = {
            let _creating = self.creating.lock().unwrap_or_else(PoisonError::into_inner);
            // SAFETY: the model is alive and outlives the context (`Context` borrows it); no other context is being
            // created from it meanwhile (`creating`); the parameters' pointers are llama.cpp's null defaults.
            unsafe { sys::llama_init_from_model(self.ptr.as_ptr(), params) }
        };
        let ptr = NonNull::new(ptr).ok_or_else(|| {
            Error::Engine(format!(
                "cannot create a context of {} tokens (its log says why)",
                p.n_ctx
            ))
        })?;
        Ok(Context {
            ptr,
            n_vocab: self.vocab().len(),
            _model: PhantomData,
        })
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        // SAFETY: the pointer came from `llama_model_load_from_file` and is freed once, here; every `Context` and
        // `Vocab` borrows the model, so none outlives it.
        unsafe { sys::llama_model_free(self.ptr.as_ptr()) }
    }
}

/// The vocabulary of a [`Model`] (read-only; borrowed from the model).
#[derive(Clone, Copy)]
pub(super) struct Vocab<'m> {
    ptr: NonNull<sys::llama_vocab>,
    _model: PhantomData<&'m Model>,
}

impl Vocab<'_> {
    /// The number of tokens.
    pub(super) fn n_tokens(self) -> i32 {
        // SAFETY: the vocabulary lives as long as the borrowed model.
        unsafe { sys::llama_vocab_n_tokens(self.ptr.as_ptr()) }
    }

    fn len(self) -> usize {
        usize::try_from(self.n_tokens()).unwrap_or(0)
    }

    /// The beginning-of-sequence token.
    pub(super) fn bos(self) -> Token {
        // SAFETY: the vocabulary lives as long as the borrowed model.
        unsafe { sys::llama_vocab_bos(self.ptr.as_ptr()) }
    }

    /// The end-of-sequence token.
    pub(super) fn eos(self) -> Token {
        // SAFETY: the vocabulary lives as long as the borrowed model.
        unsafe { sys::llama_vocab_eos(self.ptr.as_ptr()) }
    }

    /// Whether `token` ends a generation (end of sequence, end of turn, …).
    pub(super) fn is_eog(self, token: Token) -> bool {
        // SAFETY: the vocabulary lives as long as the borrowed model; any token id may be asked about.
        unsafe { sys::llama_vocab_is_eog(self.ptr.as_ptr(), token) }
    }

    /// Whether the model wants a BOS token in front of its input.
    pub(super) fn adds_bos(self) -> bool {
        // SAFETY: the vocabulary lives as long as the borrowed model.
        unsafe { sys::llama_vocab_get_add_bos(self.ptr.as_ptr()) }
    }

    /// Tokens of `text`: `add_special` adds BOS/EOS as the model wants, `parse_special` reads special tokens
    /// written in the text. Fails only for a text llama.cpp cannot take (over 2 GiB).
    pub(super) fn tokenize(
        self,
        text: &[u8],
        add_special: bool,
        parse_special: bool,
    ) -> Result<Vec<Token>, Error> {
        let len = i32::try_from(text.len())
            .map_err(|_| Error::Engine(format!("cannot tokenize {} bytes", text.len())))?;
        let run = |out: &mut [Token]| {
            let room = i32::try_from(out.len()).unwrap_or(i32::MAX);
            // SAFETY: the vocabulary lives as long as the borrowed model; `text` is readable for `len` bytes and
            // llama.cpp writes at most `room` tokens into `out`.
            unsafe {
                sys::llama_tokenize(
                    self.ptr.as_ptr(),
                    text.as_ptr().cast::<c_char>(),
                    len,
                    out.as_mut_ptr(),
                    room,
                    add_special,
                    parse_special,
                )
            }
        };
        let mut out = vec![0; text.len() / 2 + 8];
        let mut n = run(&mut out);
        if n < 0 && n != i32::MIN {
            // Too little room: llama.cpp says how many tokens there are.
            out = vec![0; n.unsigned_abs() as usize];
            n = run(&mut out);
        }
        let n = usize::try_from(n)
            .map_err(|_| Error::Engine(format!("cannot tokenize {} bytes", text.len())))?;
        out.truncate(n);
        Ok(out)
    }

    /// The bytes `token` stands for; `special` renders special tokens (`<|im_end|>`) instead of dropping them.
    pub(super) fn piece(self, token: Token, special: bool) -> Vec<u8> {
        let run = |out: &mut [u8]| {
            let room = i32::try_from(out.len()).unwrap_or(i32::MAX);
            // SAFETY: the vocabulary lives as long as the borrowed model, and llama.cpp writes at most `room`
            // bytes into `out` (no NUL); `lstrip` 0 keeps leading spaces.
            unsafe {
                sys::llama_token_to_piece(
                    self.ptr.as_ptr(),
                    token,
                    out.as_mut_ptr().cast::<c_char>(),
                    room,
                    0,
                    special,
                )
            }
        };
        let mut out = vec![0u8; 16];
        let mut n = run(&mut out);
        if n < 0 {
            // Too little room: llama.cpp says how many bytes the piece has.
            out = vec![0u8; n.unsigned_abs() as usize];
            n = run(&mut out);
        }
        out.truncate(usize::try_from(n).unwrap_or(0));
        out
    }
}

/// What a [`Context`] is made with (which contexts use flash attention: see `worker::Contexts`).
pub(super) struct ContextParams {
    /// Context length (KV cells).
    pub(super) n_ctx: u32,
    /// Largest batch (and micro-batch) `llama_decode` takes.
    pub(super) n_batch: u32,
    /// Threads for single-token decoding.
    pub(super) threads: usize,
    /// Threads for prompt batches.
    pub(super) batch_threads: usize,
    /// Flash attention on (its KV cache keeps V row by row) or off (matrix products and a softmax; V transposed).
    pub(super) flash_attention: bool,
}

/// What `llama_decode` returned when it failed.
#[derive(Debug, thiserror::Error)]
#[error("llama_decode returned {code} ({})", decode_meaning(*.code))]
pub(super) struct DecodeError {
    code: i32,
}

fn decode_meaning(code: i32) -> &'static str {
    match code {
        1 => "no room in the KV cache for the batch",
        2 => "aborted",
        -1 => "invalid batch",
        _ => "failed",
    }
}

/// Whole sequence states (`LLAMA_STATE_SEQ_FLAGS_NONE`): every KV cell of the sequence, kept in host memory.
const NO_FLAGS: sys::llama_state_seq_flags = 0;

/// A llama.cpp context (KV cache, compute buffers, logits) on a borrowed [`Model`]. Not shared between threads.
pub(super) struct Context<'m> {
    ptr: NonNull<sys::llama_context>,
    n_vocab: usize,
    _model: PhantomData<&'m Model>,
}

impl Context<'_> {
    /// The context length llama.cpp settled on.
    pub(super) fn n_ctx(&self) -> u32 {
        // SAFETY: the context is alive.
        unsafe { sys::llama_n_ctx(self.ptr.as_ptr()) }
    }

    /// Run the model on `batch`, appending its tokens to the KV cache.
    pub(super) fn decode(&mut self, batch: &Batch) -> Result<(), DecodeError> {
        // SAFETY: the context is alive and borrowed mutably; the batch's arrays hold `n_tokens` initialised entries
        // (`Batch::push`) and stay alive during the call, which only reads them.
        let code = unsafe { sys::llama_decode(self.ptr.as_ptr(), batch.raw) };
        if code == 0 {
            Ok(())
        } else {
            Err(DecodeError { code })
        }
    }

    /// The logits of the last decoded batch's token at index `idx` (one per vocabulary entry).
    pub(super) fn logits(&mut self, idx: i32) -> Result<&[f32], Error> {
        // SAFETY: the context is alive and borrowed mutably (llama.cpp waits for pending work first).
        let data = unsafe { sys::llama_get_logits_ith(self.ptr.as_ptr(), idx) };
        if data.is_null() {
            return Err(Error::Engine(format!("no logits for batch index {idx}")));
        }
        // SAFETY: a non-null result points at the context's `n_vocab` logits of that token, which stay unchanged
        // until the context is next used mutably, and the returned slice borrows the context.
        Ok(unsafe { std::slice::from_raw_parts(data, self.n_vocab) })
    }

    /// Empty the KV cache: every cell becomes free. The cells' data is left as it is, as llama.cpp's own server
    /// leaves it between requests: a free cell is masked out of attention (its weight is exactly 0 with or without
    /// flash attention), so what it still holds cannot change a result (the reproducibility digests did not move).
    /// Zeroing the whole cache (190 MB at the default 8 192-token context) before every prompt and again inside the
    /// hand-over to the decoding context held a 56-token prompt at 359 tokens/s against 376 without it (median of
    /// three rounds, `cargo xtask bench local-model`, issue 53).
    pub(super) fn clear(&mut self) {
        // SAFETY: the context is alive; its memory (possibly null, which `llama_memory_clear` ignores) is owned by it.
        unsafe { sys::llama_memory_clear(sys::llama_get_memory(self.ptr.as_ptr()), false) }
    }

    /// Change the thread counts of single-token decoding and of prompt batches (used from the next decode on).
    pub(super) fn set_threads(&mut self, threads: usize, batch_threads: usize) {
        let count = |n: usize| i32::try_from(n).unwrap_or(i32::MAX);
        // SAFETY: the context is alive and borrowed mutably; llama.cpp only stores the two counts.
        unsafe { sys::llama_set_n_threads(self.ptr.as_ptr(), count(threads), count(batch_threads)) }
    }

    /// Sequence `seq`'s state (its KV cells), for [`Context::set_seq_state`], written into `state` (resized to fit;
    /// the allocation is kept for the next call).
    pub(super) fn seq_state_into(&mut self, seq: i32, state: &mut Vec<u8>) -> Result<(), Error> {
        // SAFETY: the context is alive and borrowed mutably.
        let size = unsafe { sys::llama_state_seq_get_size_ext(self.ptr.as_ptr(), seq, NO_FLAGS) };
        state.resize(size, 0);
        // SAFETY: `state` is writable for `size` bytes, the size llama.cpp just asked for.
        let written = unsafe {
            sys::llama_state_seq_get_data_ext(
                self.ptr.as_ptr(),
                state.as_mut_ptr(),
                size,
                seq,
                NO_FLAGS,
            )
        };
        if written == size {
            Ok(())
        } else {
            Err(Error::Engine(format!(
                "saving sequence {seq}: {written} of {size} bytes written"
            )))
        }
    }

    /// Load a state saved by [`Context::seq_state_into`] into sequence `seq`.
    pub(super) fn set_seq_state(&mut self, seq: i32, state: &[u8]) -> Result<(), Error> {
        // SAFETY: the context is alive and borrowed mutably; `state` is readable for its length.
        let read = unsafe {
            sys::llama_state_seq_set_data_ext(
                self.ptr.as_ptr(),
                state.as_ptr(),
                state.len(),
                seq,
                NO_FLAGS,
            )
        };
        if read == state.len() {
            Ok(())
        } else {
            Err(Error::Engine(format!(
                "restoring sequence {seq}: {read} of {} bytes read",
                state.len()
            )))
        }
    }
}

impl Drop for Context<'_> {
    fn drop(&mut self) {
        // SAFETY: the pointer came from `llama_init_from_model` and is freed once, here, before the model it borrows.
        unsafe { sys::llama_free(self.ptr.as_ptr()) }
    }
}

/// A batch of up to `capacity` tokens, each for one sequence.
pub(super) struct Batch {
    raw: sys::llama_batch,
    capacity: usize,
}

impl Batch {
    /// An empty batch with room for `capacity` tokens.
    pub(super) fn new(capacity: usize) -> Result<Batch, Error> {
        let n = i32::try_from(capacity)
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| Error::Engine(format!("cannot make a batch of {capacity} tokens")))?;
        // SAFETY: allocates token, position, sequence and logits arrays for `n` tokens of one sequence each.
        let raw = unsafe { sys::llama_batch_init(n, 0, 1) };
        let batch = Batch { raw, capacity };
        let arrays = !raw.token.is_null()
            && !raw.pos.is_null()
            && !raw.n_seq_id.is_null()
            && !raw.seq_id.is_null()
            && !raw.logits.is_null();
        // SAFETY: `seq_id` (checked non-null first) holds `capacity` pointers, each to room for one sequence id.
        let seq_ids = arrays && (0..capacity).all(|i| !unsafe { *raw.seq_id.add(i) }.is_null());
        if seq_ids {
            Ok(batch)
        } else {
            Err(Error::Engine(format!(
                "cannot allocate a batch of {capacity} tokens"
            )))
        }
    }

    /// Forget the batch's tokens.
    pub(super) fn clear(&mut self) {
        self.raw.n_tokens = 0;
    }

    /// How many tokens the batch holds.
    pub(super) fn len(&self) -> i32 {
        self.raw.n_tokens
    }

    /// Append `token` at position `pos` of sequence `seq`; `logits` asks for its logits after decoding.
    pub(super) fn push(
        &mut self,
        token: Token,
        pos: i32,
        seq: i32,
        logits: bool,
    ) -> Result<(), Error> {
        let i = usize::try_from(self.raw.n_tokens).unwrap_or(usize::MAX);
        if i >= self.capacity {
            return Err(Error::Engine(format!(
                "the batch holds at most {} tokens",
                self.capacity
            )));
        }
        // SAFETY: `i` < `capacity`, the length of every array `Batch::new` checked, and `seq_id[i]` has room for one
        // id (`n_seq_max` 1).
        unsafe {
            self.raw.token.add(i).write(token);
            self.raw.pos.add(i).write(pos);
            self.raw.n_seq_id.add(i).write(1);
            (*self.raw.seq_id.add(i)).write(seq);
            self.raw.logits.add(i).write(i8::from(logits));
        }
        self.raw.n_tokens += 1;
        Ok(())
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        // SAFETY: the arrays came from `llama_batch_init` and are freed once, here.
        unsafe { sys::llama_batch_free(self.raw) }
    }
}

/// One step of a sampler chain, in the order given to [`Sampler::chain`].
pub(super) enum Link {
    /// Repeat, frequency and presence penalties over the last `last_n` accepted tokens.
    Penalties {
        last_n: i32,
        repeat: f32,
        frequency: f32,
        presence: f32,
    },
    /// Add `bias` to the logit of each listed token.
    LogitBias(Vec<(Token, f32)>),
    /// Pick the most likely token.
    Greedy,
    /// Keep the most likely tokens up to cumulative probability `p` (at least `min_keep`).
    TopP { p: f32, min_keep: usize },
    /// Divide the logits by the temperature.
    Temp(f32),
    /// Draw a token from the distribution with a generator seeded by this value.
    Dist(u32),
}

/// A sampler chain: it owns its links and frees them all when dropped.
pub(super) struct Sampler {
    ptr: NonNull<sys::llama_sampler>,
}

impl Sampler {
    /// A chain of `links` (performance counters on, as llama.cpp's default chains) for a vocabulary of `n_vocab`.
    pub(super) fn chain(links: &[Link], n_vocab: i32) -> Result<Sampler, Error> {
        let params = sys::llama_sampler_chain_params { no_perf: false };
        // SAFETY: plain parameters by value; the returned chain is owned by the `Sampler` made of it.
        let chain = unsafe { sys::llama_sampler_chain_init(params) };
        let chain = Sampler {
            ptr: NonNull::new(chain)
                .ok_or_else(|| Error::Engine("cannot create a sampler chain".to_owned()))?,
        };
        for link in links {
            // SAFETY: each constructor takes plain values (the logit biases are copied by llama.cpp before it
            // returns) and returns a new sampler or null.
            let sampler = unsafe {
                match link {
                    Link::Penalties {
                        last_n,
                        repeat,
                        frequency,
                        presence,
                    } => sys::llama_sampler_init_penalties(
                        n_vocab, *last_n, *repeat, *frequency, *presence,
                    ),
                    Link::LogitBias(biases) => {
                        let biases: Vec<sys::llama_logit_bias> = biases
                            .iter()
                            .map(|&(token, bias)| sys::llama_logit_bias { token, bias })
                            .collect();
                        let n = i32::try_from(biases.len()).unwrap_or(i32::MAX);
                        sys::llama_sampler_init_logit_bias(n_vocab, n, biases.as_ptr())
                    }
                    Link::Greedy => sys::llama_sampler_init_greedy(),
                    Link::TopP { p, min_keep } => sys::llama_sampler_init_top_p(*p, *min_keep),
                    Link::Temp(t) => sys::llama_sampler_init_temp(*t),
                    Link::Dist(seed) => sys::llama_sampler_init_dist(*seed),
                }
            };
            if sampler.is_null() {
                return Err(Error::Engine("cannot create a sampler".to_owned()));
            }
            // SAFETY: both are alive; the chain takes ownership of `sampler` and frees it with itself.
            unsafe { sys::llama_sampler_chain_add(chain.ptr.as_ptr(), sampler) };
        }
        Ok(chain)
    }

    /// Sample a token from the logits at batch index `idx` of `ctx`'s last decode, and accept it (so penalties
    /// see it).
    pub(super) fn sample(&mut self, ctx: &mut Context<'_>, idx: i32) -> Token {
        // SAFETY: the chain and the context are alive and borrowed mutably; llama.cpp reads the context's logits.
        unsafe { sys::llama_sampler_sample(self.ptr.as_ptr(), ctx.ptr.as_ptr(), idx) }
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        // SAFETY: the chain came from `llama_sampler_chain_init` and is freed once, here, with the links it owns.
        unsafe { sys::llama_sampler_free(self.ptr.as_ptr()) }
    }
}

/// A ggml context that holds tensor descriptions and one graph, no tensor data (freed when dropped).
struct GgmlScratch(NonNull<sys::ggml_context>);

impl Drop for GgmlScratch {
    fn drop(&mut self) {
        // SAFETY: the pointer came from `ggml_init` and is freed once, here.
        unsafe { sys::ggml_free(self.0.as_ptr()) }
    }
}

/// Copy the `rows` × `cols` matrix of `el`-byte elements that `src` holds row after row into `dst` column after
/// column (its transpose), with ggml's CPU copy on `threads` threads. The bytes are moved, never converted, so the
/// result is exact whatever the thread count.
pub(super) fn transpose(
    src: &[u8],
    dst: &mut [u8],
    rows: usize,
    cols: usize,
    el: usize,
    threads: usize,
) -> Result<(), Error> {
    let failed = |what: &str| Error::Engine(format!("transposing a {rows}×{cols} matrix: {what}"));
    // Only the element size matters to ggml's same-type copy (it moves bytes).
    let ty = match el {
        2 => sys::GGML_TYPE_F16,
        4 => sys::GGML_TYPE_F32,
        _ => return Err(failed(&format!("no ggml type has {el}-byte elements"))),
    };
    let len = rows
        .checked_mul(cols)
        .and_then(|n| n.checked_mul(el))
        .ok_or_else(|| failed("too large"))?;
    if src.len() != len || dst.len() != len {
        return Err(failed(&format!(
            "{} and {} bytes given for {len}",
            src.len(),
            dst.len()
        )));
    }
    if len == 0 {
        return Ok(());
    }
    init_backend();
    let (Ok(r), Ok(c)) = (i64::try_from(rows), i64::try_from(cols)) else {
        return Err(failed("too large"));
    };
    // SAFETY: both report fixed sizes of ggml's bookkeeping.
    let mem_size = unsafe { 8 * sys::ggml_tensor_overhead() + sys::ggml_graph_overhead() };
    let params = sys::ggml_init_params {
        mem_size,
        mem_buffer: std::ptr::null_mut(),
        no_alloc: true,
    };
    // SAFETY: plain parameters; ggml allocates `mem_size` bytes for the descriptions and allocates no tensor data.
    let ctx = NonNull::new(unsafe { sys::ggml_init(params) }).ok_or_else(|| failed("ggml_init"))?;
    let ctx = GgmlScratch(ctx);
    let threads = i32::try_from(threads.max(1)).unwrap_or(1);
    // SAFETY: every tensor lives in `ctx`, which outlives the computation. `a` describes `src` (`cols` elements per
    // row, `rows` rows) and `b` describes `dst` (`rows` per row, `cols` rows); both lengths were checked above. The
    // data pointers are set before the views are made, since a view copies its parent's pointer when created.
    // ggml only reads through `a` (the copy's source), and writes `dst`, which is borrowed mutably, through the
    // transposed view of `b`. The work buffer is as large as the plan asks and outlives the computation.
    let status = unsafe {
        let a = sys::ggml_new_tensor_2d(ctx.0.as_ptr(), ty, c, r);
        let b = sys::ggml_new_tensor_2d(ctx.0.as_ptr(), ty, r, c);
        if a.is_null() || b.is_null() {
            return Err(failed("ggml_new_tensor_2d"));
        }
        (*a).data = src.as_ptr().cast_mut().cast::<c_void>();
        (*b).data = dst.as_mut_ptr().cast::<c_void>();
        let bt = sys::ggml_transpose(ctx.0.as_ptr(), b);
        let copy = sys::ggml_cpy(ctx.0.as_ptr(), a, bt);
        let graph = sys::ggml_new_graph(ctx.0.as_ptr());
        if bt.is_null() || copy.is_null() || graph.is_null() {
            return Err(failed("building the copy"));
        }
        sys::ggml_build_forward_expand(graph, copy);
        let mut plan = sys::ggml_graph_plan(graph, threads, std::ptr::null_mut());
        let mut work = vec![0u8; plan.work_size];
        if plan.work_size > 0 {
            plan.work_data = work.as_mut_ptr();
        }
        sys::ggml_graph_compute(graph, &mut plan)
    };
    if status == sys::GGML_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(failed(&format!("ggml_graph_compute returned {status}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ggml's copy through a transposed view is the transpose, for both element sizes and a shape that fills no
    /// SIMD register evenly.
    #[test]
    fn transpose_moves_every_element_to_its_mirror_place() {
        for el in [2usize, 4] {
            let (rows, cols) = (37usize, 5usize);
            let src: Vec<u8> = (0..rows * cols * el).map(|i| (i * 7 % 251) as u8).collect();
            let mut dst = vec![0u8; src.len()];
            transpose(&src, &mut dst, rows, cols, el, 2).unwrap();
            for r in 0..rows {
                for c in 0..cols {
                    let from = (r * cols + c) * el;
                    let to = (c * rows + r) * el;
                    assert_eq!(dst[to..to + el], src[from..from + el], "row {r} col {c}");
                }
            }
        }
        let mut short = vec![0u8; 3];
        assert!(transpose(&[0u8; 4], &mut short, 2, 1, 2, 1).is_err());
        assert!(transpose(&[0u8; 6], &mut [0u8; 6], 1, 2, 3, 1).is_err());
    }
}
