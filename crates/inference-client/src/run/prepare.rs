//! Before sending: each prompt sorted out against the lines on file and the cache (resumed, answered from the cache,
//! or a request to send); after: the output compacted to the newest line per prompt.

use super::*;

/// What [`prepare`] makes of one prompt that is not resumed from file.
pub(crate) enum Prepped {
    /// An answer from the cache, ready to be written.
    Cached(Box<ResponseRecord>),
    /// A request to send.
    Job(Job),
}

/// What [`prepare`] found besides the answers and requests it handed on.
pub(crate) struct Prepared {
    pub(crate) resumed: usize,
    /// Lines on file for requests that have since changed.
    pub(crate) stale: usize,
    /// Some line on file for these prompts is a failure (it is answered again).
    pub(crate) had_failed: bool,
    /// Each prompt's cache key, in prompt order.
    pub(crate) keys: Vec<String>,
}

/// Sorts out `prompts` against `on_file` (the newest line per prompt on file) and the cache, one prompt at a
/// time: prompts answered on file for the same request (same cache key and metadata) are resumed, cached answers
/// and requests (streamed ones when `stream`) are handed to `emit` as soon as each is made, so a caller can send
/// the first requests while the rest are prepared.
#[allow(clippy::too_many_arguments)]
pub(crate) fn prepare(
    opts: &crate::RunOptions,
    model: &ModelConfig,
    identity: &str,
    cache: &Cache,
    prompts: &[PromptRecord],
    on_file: Vec<ResponseRecord>,
    stream: bool,
    mut emit: impl FnMut(Prepped) -> Result<(), Error>,
) -> Result<Prepared, Error> {
    let mut answered: HashMap<ResponseKey, Option<AnsweredRequest>> = on_file
        .into_iter()
        .map(|r| {
            let k = ResponseKey::of(&r);
            let answer = (r.outcome != Outcome::Failed).then_some((r.cache_key, r.prompt_meta));
            (k, answer)
        })
        .collect();
    let mut p_out = Prepared {
        resumed: 0,
        stale: 0,
        had_failed: answered.values().any(Option::is_none),
        keys: Vec::with_capacity(prompts.len()),
    };
    for (index, p) in prompts.iter().enumerate() {
        let body = request_body(model, p);
        let key = cache_key(identity, &body, p.sample_index);
        p_out.keys.push(key.clone());
        match answered.remove(&ResponseKey::of_prompt(p)) {
            Some(Some((k, meta))) if k == key && meta == p.extra => {
                p_out.resumed += 1;
                continue;
            }
            Some(Some(_)) => p_out.stale += 1,
            _ => {}
        }
        if !opts.refresh
            && let Some(mut r) = cache.get(&key)?
        {
            r.id.clone_from(&p.id);
            r.sample_index = p.sample_index;
            r.model.clone_from(&model.name);
            r.prompt_meta.clone_from(&p.extra);
            r.cached = true;
            emit(Prepped::Cached(Box::new(r)))?;
            continue;
        }
        let max_tokens = body_max_tokens(&body);
        let mut body = body;
        if stream {
            body.insert("stream".into(), Value::Bool(true));
            body.insert(
                "stream_options".into(),
                serde_json::json!({"include_usage": true}),
            );
        }
        let body =
            serde_json::to_vec(&Value::Object(body)).map_err(|e| Error::Prompts(e.to_string()))?;
        emit(Prepped::Job(Job {
            index,
            key,
            body,
            input_tokens: estimate_input_tokens(p),
            max_tokens,
        }))?;
    }
    Ok(p_out)
}

/// The error of a request without `max_tokens` under a cost limit (its cost has no bound).
pub(crate) fn unbounded_under_cap() -> Error {
    Error::Config(
        "a cost limit needs max_tokens on every request (set it in the model config, the prompt params or --max-tokens)"
            .into(),
    )
}

/// Rewrites the output keeping the newest line per (id, sample index), in prompt order; for this run's prompts
/// (`prompts`: each one's key and its current cache key, in prompt order), only a line that answers the current
/// request is kept, so a stale answer that was not replaced (a run stopped by an error or the cost limit) cannot
/// pass for a current one.
pub(crate) fn compact<'k>(
    out: &Path,
    prompts: impl Iterator<Item = (ResponseKey, &'k str)>,
) -> Result<(), Error> {
    let mut newest: HashMap<ResponseKey, ResponseRecord> = schema::read_latest_responses(out)?
        .into_iter()
        .map(|r| (ResponseKey::of(&r), r))
        .collect();
    let mut ordered = Vec::with_capacity(newest.len());
    for (p, key) in prompts {
        if let Some(r) = newest.remove(&p)
            && r.cache_key == key
        {
            ordered.push(r);
        }
    }
    // Lines for prompts not in this run stay, after the others.
    let mut rest: Vec<ResponseRecord> = newest.into_values().collect();
    rest.sort_by(|a, b| (&a.id, a.sample_index).cmp(&(&b.id, b.sample_index)));
    ordered.extend(rest);
    schema::write_jsonl_atomic(out, ordered.iter())?;
    Ok(())
}
