//! What the [`crate::Client`] keeps for the life of the process, so that chunks, stages, judges, embeddings and
//! batch jobs share it: one HTTP connection pool per base URL (and credentials), and per model its replicas'
//! adaptive limits and health (`limiter::Endpoints`: an ejected replica keeps its back-off from one call to the
//! next, a learned limit carries over, and two stages that use one model share its limit).
//!
//! Beside each pool, `ModelPool::fresh` keeps a client with no idle connection: a request whose pooled connection the
//! server had closed unanswered goes again on it at once (llama-server closes its connection after each streamed answer
//! without saying so).

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

use crate::Error;
use crate::config::ModelConfig;
use crate::http::{Access, build_client};
use crate::limiter::{EndpointStart, Endpoints};
use crate::stop::StopHandle;

/// One model's replicas as every call of the client sees them.
pub(crate) struct ModelPool {
    /// One HTTP client (connection pool) per base URL, shared with every model on that URL and credentials.
    pub(crate) http: Arc<[reqwest::Client]>,
    /// Per base URL, a client that keeps no idle connection: each request on it opens a new one. A request whose
    /// pooled connection turned out closed by the server is sent again on it.
    pub(crate) fresh: Arc<[reqwest::Client]>,
    /// Limits and health of the replicas (chat-completion URLs).
    pub(crate) endpoints: Arc<Endpoints>,
}

/// The client's pools: HTTP clients by (base URL, credentials), replicas by model.
#[derive(Default)]
pub(crate) struct Pools {
    /// By base URL and a fingerprint of the credentials and headers sent there: the HTTP client and its idle-pool
    /// size.
    http: Mutex<HashMap<(String, u64), (reqwest::Client, usize)>>,
    /// By model name, base URLs and cap.
    models: Mutex<HashMap<String, Arc<ModelPool>>>,
}

impl Pools {
    /// The HTTP client for `base` with these credentials, keeping at least `idle` idle connections (built once;
    /// rebuilt larger when a caller needs more, earlier users keep theirs).
    pub(crate) fn http(
        &self,
        model: &ModelConfig,
        access: &Access,
        base: &str,
        idle: usize,
    ) -> Result<reqwest::Client, Error> {
        let key = (base.trim_end_matches('/').to_owned(), access.fingerprint());
        let mut map = self.http.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((c, size)) = map.get(&key)
            && *size >= idle
        {
            return Ok(c.clone());
        }
        let c = build_client(model, access, idle)?;
        map.insert(key, (c.clone(), idle));
        Ok(c)
    }

    /// The model's replicas at `bases` with `cap` requests each; `true` with a pool made now (its endpoints start
    /// admitted: the caller checks them).
    pub(crate) fn model(
        &self,
        model: &ModelConfig,
        access: &Access,
        bases: &[String],
        cap: usize,
        stop: &StopHandle,
    ) -> Result<(Arc<ModelPool>, bool), Error> {
        let key = format!("{}\u{0}{}\u{0}{cap}", model.name, bases.join("\u{0}"));
        if let Some(p) = self
            .models
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return Ok((Arc::clone(p), false));
        }
        let http = bases
            .iter()
            .map(|b| self.http(model, access, b, cap))
            .collect::<Result<Vec<_>, Error>>()?;
        let fresh = bases
            .iter()
            .map(|_| build_client(model, access, 0))
            .collect::<Result<Vec<_>, Error>>()?;
        let starts: Vec<EndpointStart> = bases
            .iter()
            .map(|b| EndpointStart {
                url: chat_url(b),
                answered: false,
                unreachable: None,
            })
            .collect();
        let pool = Arc::new(ModelPool {
            http: http.into(),
            fresh: fresh.into(),
            endpoints: Endpoints::new(&starts, cap, stop.clone()),
        });
        let mut models = self.models.lock().unwrap_or_else(|e| e.into_inner());
        match models.entry(key) {
            // Another thread made it meanwhile.
            std::collections::hash_map::Entry::Occupied(o) => Ok((Arc::clone(o.get()), false)),
            std::collections::hash_map::Entry::Vacant(v) => Ok((Arc::clone(v.insert(pool)), true)),
        }
    }
}

/// The chat-completions URL of a base URL.
pub(crate) fn chat_url(base: &str) -> String {
    format!("{}/chat/completions", base.trim_end_matches('/'))
}

/// A fingerprint of what a request carries besides its body (key and headers): clients that send the same share
/// one connection pool.
pub(crate) fn fingerprint(key: Option<&str>, headers: &reqwest::header::HeaderMap) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut h);
    let mut pairs: Vec<(&str, &[u8])> = headers
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_bytes()))
        .collect();
    pairs.sort_unstable();
    pairs.hash(&mut h);
    h.finish()
}
