//! OIDC bearer tokens, the IO half: the deployment's JWKS fetched over HTTP and cached. The set
//! is fetched at start, again on a timer ([`JwksCache::spawn_refresher`]) and when a token names
//! a `kid` the cache does not hold (at most once per [`MIN_REFETCH_INTERVAL`], one fetch at a
//! time). A fetch that fails (unreachable, slow, too large, not a JWKS) keeps the keys already
//! held, so tokens keep working while the identity provider is down; with no keys yet the
//! caller is told to retry (503), never refused as if the token were bad.

use super::oidc::{JwksError, KeySet, VerifyingKey, MAX_JWKS_BYTES};
use crate::http::CappedBody;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Unknown `kid`s fetch the set again at most this often.
pub const MIN_REFETCH_INTERVAL: Duration = Duration::from_secs(1);

/// How often the set is fetched anyway, so that removed keys stop working.
pub const REFRESH_EVERY: Duration = Duration::from_secs(300);

/// One fetch's deadline, connect to last byte.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// What the cache knows about a `kid`.
pub enum KeyLookup {
    Found(VerifyingKey),
    /// The set was read and holds no such key.
    Unknown,
    /// No set could be read yet: the caller should retry.
    Unavailable,
}

#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("{url}: {reason}")]
    Http { url: String, reason: String },
    #[error("{url}: {source}")]
    Document {
        url: String,
        #[source]
        source: JwksError,
    },
}

#[derive(Default)]
struct Held {
    keys: Option<Arc<KeySet>>,
    last_attempt: Option<Instant>,
}

pub struct JwksCache {
    url: url::Url,
    client: reqwest::Client,
    held: Mutex<Held>,
    /// One fetch at a time; waiters then read what it brought.
    fetching: tokio::sync::Mutex<()>,
}

impl JwksCache {
    pub fn new(url: url::Url, timeout: Duration) -> JwksCache {
        let client = crate::http::client_builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_default();
        JwksCache {
            url,
            client,
            held: Mutex::new(Held::default()),
            fetching: tokio::sync::Mutex::new(()),
        }
    }

    /// The key for `kid`, fetching the set when it is not held (within the refetch interval).
    pub async fn key(&self, kid: &str) -> KeyLookup {
        if let Some(key) = self.lookup(kid) {
            return KeyLookup::Found(key);
        }
        let _one_fetch = self.fetching.lock().await;
        // Another request may have fetched while this one waited.
        if let Some(key) = self.lookup(kid) {
            return KeyLookup::Found(key);
        }
        let due = self
            .held()
            .last_attempt
            .is_none_or(|at| at.elapsed() >= MIN_REFETCH_INTERVAL);
        if due {
            let _ = self.refresh_now().await;
        }
        match (self.lookup(kid), self.held_keys()) {
            (Some(key), _) => KeyLookup::Found(key),
            (None, Some(_)) => KeyLookup::Unknown,
            (None, None) => KeyLookup::Unavailable,
        }
    }

    /// The held key of `kid`; `None` when no set is held or it has no such key.
    fn lookup(&self, kid: &str) -> Option<VerifyingKey> {
        self.held().keys.as_ref()?.get(kid).cloned()
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How many keys are held (`None` before the first good fetch): for `doctor` and tests.
    pub fn held_keys(&self) -> Option<usize> {
        self.held().keys.as_ref().map(|k| k.len())
    }

    /// Fetches the set now; on failure the keys already held stay.
    pub async fn refresh_now(&self) -> Result<usize, FetchError> {
        self.held().last_attempt = Some(Instant::now());
        match self.fetch().await {
            Ok(keys) => {
                let count = keys.len();
                self.held().keys = Some(Arc::new(keys));
                Ok(count)
            }
            Err(error) => {
                tracing::warn!(%error, "could not refresh the OIDC key set; keeping the keys held");
                Err(error)
            }
        }
    }

    /// Refreshes every `every` until the runtime stops.
    pub fn spawn_refresher(self: Arc<Self>, every: Duration) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                let _one_fetch = self.fetching.lock().await;
                let _ = self.refresh_now().await;
            }
        })
    }

    async fn fetch(&self) -> Result<KeySet, FetchError> {
        let http = |reason: String| FetchError::Http {
            url: self.url.to_string(),
            reason,
        };
        let response = self
            .client
            .get(self.url.clone())
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| http(crate::http::describe_error(&e)))?;
        if !response.status().is_success() {
            return Err(http(format!("answered {}", response.status())));
        }
        let body = crate::http::read_capped(response, MAX_JWKS_BYTES)
            .await
            .map_err(|failed| match failed {
                CappedBody::TooLarge => FetchError::Document {
                    url: self.url.to_string(),
                    source: JwksError::TooLarge,
                },
                CappedBody::Transport(e) => http(crate::http::describe_error(&e)),
            })?;
        KeySet::parse(&body).map_err(|source| FetchError::Document {
            url: self.url.to_string(),
            source,
        })
    }
}
