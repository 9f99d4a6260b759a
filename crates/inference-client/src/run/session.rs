//! A run fed in chunks ([`Client::chat_stream`]): one sender, one writer and one queue for all of them, so the
//! requests of one chunk are in flight while the caller reads and prepares the next, and the writer's tail of one
//! chunk overlaps the next chunk's sending. The result is the same as one `chat` call over every chunk's prompts.
//!
//! `harness::rift::run_file` and the RIFT judge feed their prompts files through it.

use super::*;

/// Requests prepared ahead of the sender at most (a chunk's worth and more: the caller prepares the next chunk
/// while this many wait).
const QUEUE: usize = 4_096;

/// What [`Client::chat_stream`] hands its caller: [`ChatFeed::send`] gives it the next chunk of prompts.
pub struct ChatFeed<'a> {
    client: &'a Client,
    model: &'a ModelConfig,
    identity: String,
    cache: Cache,
    stream: bool,
    jobs: Option<tokio::sync::mpsc::Sender<Pending>>,
    written: mpsc::Sender<Written>,
    progress: Bars,
    summary: RunSummary,
    /// Every prompt's key and current cache key, in the order given (for the compaction at the end).
    keys: Vec<(ResponseKey, String)>,
    had_failed: bool,
    stale: usize,
    /// Prompts that found the queue closed (the sender stopped: the cost limit, a stop, or an error).
    unsent: usize,
    /// The cache keys queued so far, and the prompts whose request is already queued for another prompt: they are
    /// answered from the cache once the feed ends (sent only if that answer is not there by then).
    queued_keys: std::collections::HashSet<String>,
    deferred: Vec<Pending>,
}

impl ChatFeed<'_> {
    /// Queues the prompts of `prompts` not yet answered, given `on_file` (the newest line on file for each of them,
    /// as [`Client::chat_resuming`] takes it): answers on file are resumed, cached ones written, the rest sent as
    /// soon as a slot is free. Returns once they are queued (it waits while the queue is full), usually while
    /// the previous chunk's requests are still in flight. Prompt ids must be unique within a chunk and across
    /// the chunks of one stream.
    pub fn send(
        &mut self,
        prompts: &[PromptRecord],
        on_file: Vec<ResponseRecord>,
    ) -> Result<(), Error> {
        check_unique(prompts)?;
        check_limits(self.model, prompts)?;
        let opts = self.client.options();
        let capped = opts.max_cost_usd.is_some();
        let (jobs, written, progress) = (&self.jobs, &self.written, &self.progress);
        let (queued_keys, deferred) = (&mut self.queued_keys, &mut self.deferred);
        let (mut cached, mut unsent) = (0usize, 0usize);
        // Each answer and request goes on as soon as it is made: the sender starts on this chunk's first
        // requests while the rest of it is prepared.
        let p = prepare(
            opts,
            self.model,
            &self.identity,
            &self.cache,
            prompts,
            on_file,
            self.stream,
            |item| {
                match item {
                    Prepped::Cached(record) => {
                        cached += 1;
                        progress.inc(1);
                        let _ = written.send(Written {
                            record: *record,
                            store: false,
                        });
                    }
                    Prepped::Job(job) => {
                        if capped && job.max_tokens.is_none() {
                            return Err(unbounded_under_cap());
                        }
                        let pr = &prompts[job.index];
                        let pending = Pending {
                            id: pr.id.clone(),
                            sample_index: pr.sample_index,
                            meta: pr.extra.clone(),
                            job,
                        };
                        if !queued_keys.insert(pending.job.key.clone()) {
                            // The same request is queued already (another prompt, same content).
                            deferred.push(pending);
                            return Ok(());
                        }
                        let queued = jobs
                            .as_ref()
                            .is_some_and(|q| q.blocking_send(pending).is_ok());
                        if !queued {
                            unsent += 1;
                        }
                    }
                }
                Ok(())
            },
        )?;
        self.unsent += unsent;
        self.summary.total += prompts.len();
        self.summary.resumed += p.resumed;
        self.summary.cached += cached;
        self.had_failed |= p.had_failed;
        self.stale += p.stale;
        self.progress.inc_length((prompts.len() - p.resumed) as u64);
        // Extends the overall line (its handles are the ones the bars already hold).
        let _ = self.client.overall(p.resumed as u64, prompts.len() as u64);
        self.keys
            .extend(prompts.iter().map(ResponseKey::of_prompt).zip(p.keys));
        Ok(())
    }
}

impl ChatFeed<'_> {
    /// After the last chunk: each prompt whose request was queued for another prompt is answered from the cache
    /// when that answer is there by now, else queued (its twin is still in flight, or failed).
    fn flush_deferred(&mut self) -> Result<(), Error> {
        for p in std::mem::take(&mut self.deferred) {
            if let Some(mut r) = self.cache.get(&p.job.key)? {
                r.id = p.id;
                r.sample_index = p.sample_index;
                r.model.clone_from(&self.model.name);
                r.prompt_meta = p.meta;
                r.cached = true;
                self.summary.cached += 1;
                self.progress.inc(1);
                let _ = self.written.send(Written {
                    record: r,
                    store: false,
                });
                continue;
            }
            let queued = self
                .jobs
                .as_ref()
                .is_some_and(|q| q.blocking_send(p).is_ok());
            if !queued {
                self.unsent += 1;
            }
        }
        Ok(())
    }
}

impl Client {
    /// Sends prompts that the caller hands over chunk by chunk (`feed` calls [`ChatFeed::send`] once per chunk)
    /// into one responses file `out`, as one run: the same lines, cache entries and summary as one [`Client::chat`]
    /// call over all of them, but the caller's work between chunks (reading the next prompts, looking up their
    /// lines on file) overlaps the requests in flight, and one writer and one in-flight count span the chunks.
    /// The caller removes `out` first for a refresh (as for `chat_resuming`). An error of `feed` stops the
    /// stream after the requests already queued are answered and written, and is returned.
    pub fn chat_stream<E: From<Error>>(
        &self,
        model: &ModelConfig,
        out: &Path,
        feed: impl FnOnce(&mut ChatFeed<'_>) -> Result<(), E>,
    ) -> Result<RunSummary, E> {
        let started = Instant::now();
        let opts = self.options();
        model.validate(&format!("model {:?}", model.name))?;
        let access = http::access(model, &opts.env)?;
        self.lock_output(out)?;
        let identity = model_identity(model);
        let appender = JsonlAppender::open(out, false).map_err(Error::from)?;
        let syncer = open_syncer(opts, out)?;
        let writer_cache = Cache::open(&opts.cache_path)?;
        let cache = Cache::open(&opts.cache_path)?;
        let progress = make_progress(opts.progress, 0, self.overall(0, 0));
        let (wtx, wrx) = mpsc::channel::<Written>();
        let (jtx, jrx) = tokio::sync::mpsc::channel::<Pending>(QUEUE);
        let closed = Arc::new(Closed::default());
        tracing::info!(model = %model.name, out = %out.display(), "Starting a chunked inference run.");
        let (mut summary, counters, fed, keys, compact_needed, unsent) = std::thread::scope(
            |scope| {
                let writer = {
                    let identity = identity.clone();
                    std::thread::Builder::new()
                        .name("ifstress-writer".into())
                        .spawn_scoped(scope, move || {
                            writer_loop(wrx, writer_cache, appender, syncer, &identity)
                        })
                        .map_err(|e| Error::Setup(format!("cannot start the writer thread: {e}")))?
                };
                let sender = {
                    let (wtx, progress, closed) =
                        (wtx.clone(), progress.clone(), Arc::clone(&closed));
                    std::thread::Builder::new()
                        .name("ifstress-sender".into())
                        .spawn_scoped(scope, move || {
                            self.runtime().block_on(send_all(
                                self, model, jrx, access, &wtx, &progress, &closed,
                            ))
                        })
                        .map_err(|e| Error::Setup(format!("cannot start the sender thread: {e}")))?
                };
                let mut f = ChatFeed {
                    client: self,
                    model,
                    identity,
                    cache,
                    stream: model.stream,
                    jobs: Some(jtx),
                    written: wtx,
                    progress: progress.clone(),
                    summary: RunSummary::default(),
                    keys: Vec::new(),
                    had_failed: false,
                    stale: 0,
                    unsent: 0,
                    queued_keys: std::collections::HashSet::new(),
                    deferred: Vec::new(),
                };
                let fed = feed(&mut f);
                let flushed = f.flush_deferred();
                // No more chunks: the sender ends once the queue is empty.
                f.jobs = None;
                let ChatFeed {
                    written,
                    summary,
                    keys,
                    had_failed,
                    stale,
                    unsent,
                    ..
                } = f;
                let counters = sender
                    .join()
                    .unwrap_or_else(|_| Err(Error::Setup("the sender thread panicked".into())));
                drop(written);
                let written = writer
                    .join()
                    .unwrap_or_else(|_| Err(Error::Setup("the writer thread panicked".into())));
                progress.finish_and_clear();
                let counters = counters?;
                written?;
                flushed?;
                if stale > 0 {
                    tracing::warn!(
                        model = %model.name, stale, out = %out.display(),
                        "Some answers on file are for requests that have since changed (prompt, parameters or model); those prompts are answered again."
                    );
                }
                Ok::<_, Error>((
                    summary,
                    counters,
                    fed,
                    keys,
                    had_failed || stale > 0,
                    unsent,
                ))
            },
        )?;
        counters.fill(&mut summary);
        if unsent > 0 {
            if closed.for_cost() {
                summary.skipped_for_cost += unsent;
            } else if closed.stopped() {
                summary.interrupted += unsent;
            }
        }
        if compact_needed {
            compact(out, keys.iter().map(|(k, c)| (k.clone(), c.as_str())))?;
        }
        summary.wall_s = started.elapsed().as_secs_f64();
        summary.in_flight = counters
            .flights
            .as_ref()
            .filter(|_| counters.requests.load(Ordering::Relaxed) > 0)
            .map(|t| t.finish(started, counters.budget_wait_s));
        let span = summary
            .in_flight
            .as_ref()
            .and(counters.flights.as_ref().map(Tracker::span));
        log_finished(model, &summary);
        self.finished_call(&summary, span);
        if let Some(err) = counters.abort.lock().ok().and_then(|mut a| a.take()) {
            return Err(err.into());
        }
        fed?;
        Ok(summary)
    }
}
