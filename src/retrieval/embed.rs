//! PORT `Embedder`: text → fixed-size vectors, with two adapters.
//!
//! - [`OpenAiEmbedder`]: any OpenAI-compatible `/embeddings` endpoint, in batches with bounded
//!   concurrency, retrying 429 and 5xx with backoff (honouring `Retry-After`).
//! - [`LocalEmbedder`]: offline and deterministic feature hashing of words, word bigrams and
//!   character trigrams. It is lexical, not semantic: it finds shared words and spellings, never
//!   synonyms or paraphrase. It exists so the tool works with no key and no model download.

use crate::config::{EmbeddingConfig, EmbeddingProvider};
use crate::http::{backoff, is_retryable, retry_after};
use async_trait::async_trait;
use futures::{StreamExt, TryStreamExt};
use std::sync::Arc;
use std::time::Duration;

pub use crate::config::LOCAL_MODEL_NAME;

const MAX_ATTEMPTS: u32 = 5;
const BACKOFF_BASE: Duration = Duration::from_millis(250);

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("the embedding endpoint returned {got} dimensions but EMBEDDING_DIM is {expected}")]
    Dimension { expected: usize, got: usize },
    #[error("the embedding endpoint answered HTTP {status}{}", if message.is_empty() { String::new() } else { format!(" ({message})") })]
    Status { status: u16, message: String },
    #[error("the embedding endpoint could not be reached: {0}")]
    Transport(String),
    #[error("the embedding endpoint sent a response that is not the embeddings shape: {0}")]
    Malformed(String),
}

#[async_trait]
pub trait Embedder: Send + Sync {
    /// The model name recorded beside the vectors in the store.
    fn model(&self) -> &str;
    fn dim(&self) -> usize;
    /// One vector per input text, in order.
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError>;
    /// What goes before a question and before a passage (instruction-tuned models such as e5
    /// expect `query: ` and `passage: `); none by default.
    fn prefixes(&self) -> (&str, &str) {
        ("", "")
    }
}

/// `texts` with `prefix` before each.
pub fn prefixed(prefix: &str, texts: impl IntoIterator<Item = String>) -> Vec<String> {
    texts
        .into_iter()
        .map(|text| {
            if prefix.is_empty() {
                text
            } else {
                format!("{prefix}{text}")
            }
        })
        .collect()
}

/// Builds the configured embedder.
pub fn from_config(config: &EmbeddingConfig) -> Arc<dyn Embedder> {
    match config.provider {
        EmbeddingProvider::Local => Arc::new(LocalEmbedder::new(config.dim)),
        EmbeddingProvider::OpenAi => Arc::new(OpenAiEmbedder::new(config)),
    }
}

// ---------------------------------------------------------------------------------------------
// local

#[derive(Debug, Clone)]
pub struct LocalEmbedder {
    dim: usize,
}

impl LocalEmbedder {
    pub fn new(dim: usize) -> LocalEmbedder {
        LocalEmbedder { dim }
    }

    pub fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut vector = vec![0f32; self.dim];
        let words: Vec<String> = text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        for word in &words {
            self.add(&mut vector, b'w', word.as_bytes(), 1.0);
            let bounded: Vec<char> = format!("^{word}$").chars().collect();
            for gram in bounded.windows(3) {
                let gram: String = gram.iter().collect();
                self.add(&mut vector, b'c', gram.as_bytes(), 0.25);
            }
        }
        for pair in words.windows(2) {
            let joined = format!("{} {}", pair[0], pair[1]);
            self.add(&mut vector, b'b', joined.as_bytes(), 0.5);
        }
        normalize(&mut vector);
        vector
    }

    /// Signed feature hashing: the hash picks the slot and the sign.
    fn add(&self, vector: &mut [f32], namespace: u8, feature: &[u8], weight: f32) {
        let hash = fnv1a(namespace, feature);
        let slot = (hash % self.dim as u64) as usize;
        let sign = if hash >> 63 == 0 { 1.0 } else { -1.0 };
        vector[slot] += sign * weight;
    }
}

#[async_trait]
impl Embedder for LocalEmbedder {
    fn model(&self) -> &str {
        LOCAL_MODEL_NAME
    }

    fn dim(&self) -> usize {
        self.dim
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|t| self.embed_one(t)).collect())
    }
}

fn fnv1a(namespace: u8, bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in std::iter::once(&namespace).chain(bytes) {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

fn normalize(vector: &mut [f32]) {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        vector.iter_mut().for_each(|x| *x /= norm);
    }
}

// ---------------------------------------------------------------------------------------------
// OpenAI-compatible

pub struct OpenAiEmbedder {
    client: reqwest::Client,
    endpoint: String,
    api_key: Option<String>,
    /// The model's name as the provider knows it.
    wire_model: String,
    dim: usize,
    batch_size: usize,
    concurrency: usize,
    query_prefix: String,
    passage_prefix: String,
    /// The model with its prefixes, as recorded in the store.
    model: String,
}

#[derive(serde::Deserialize)]
struct EmbeddingsResponse {
    data: Vec<EmbeddingItem>,
}

#[derive(serde::Deserialize)]
struct EmbeddingItem {
    embedding: Vec<f32>,
    #[serde(default)]
    index: Option<usize>,
}

impl OpenAiEmbedder {
    pub fn new(config: &EmbeddingConfig) -> OpenAiEmbedder {
        let client = crate::http::client_builder()
            .timeout(config.timeout)
            .build()
            .expect("a reqwest client with a timeout always builds");
        OpenAiEmbedder {
            client,
            endpoint: format!(
                "{}/embeddings",
                config.base_url.as_str().trim_end_matches('/')
            ),
            api_key: config.api_key.clone(),
            wire_model: config.model.clone(),
            dim: config.dim,
            batch_size: config.batch_size,
            concurrency: config.concurrency,
            query_prefix: config.query_prefix.clone(),
            passage_prefix: config.passage_prefix.clone(),
            model: config.recorded_model(),
        }
    }

    async fn embed_batch(&self, batch: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let body = serde_json::json!({
            "model": self.wire_model,
            "input": batch,
            "dimensions": self.dim,
            "encoding_format": "float",
        });
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self.post_once(&body).await {
                Ok(response) => return self.check(batch.len(), response),
                Err(Failure::Retry { error, wait }) if attempt < MAX_ATTEMPTS => {
                    tracing::warn!(attempt, ?wait, %error, "embedding request failed; retrying");
                    tokio::time::sleep(wait.unwrap_or_else(|| backoff(BACKOFF_BASE, attempt)))
                        .await;
                }
                Err(Failure::Retry { error, .. } | Failure::Fatal(error)) => return Err(error),
            }
        }
    }

    async fn post_once(&self, body: &serde_json::Value) -> Result<EmbeddingsResponse, Failure> {
        let mut request = self.client.post(&self.endpoint).json(body);
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let response = request.send().await.map_err(|e| Failure::Retry {
            error: EmbedError::Transport(e.without_url().to_string()),
            wait: None,
        })?;
        let status = response.status();
        if status.is_success() {
            return response
                .json::<EmbeddingsResponse>()
                .await
                .map_err(|e| Failure::Fatal(EmbedError::Malformed(e.without_url().to_string())));
        }
        let wait = retry_after(response.headers());
        let body = response.bytes().await.unwrap_or_default();
        let mut message = crate::http::error_summary(&body);
        if let Some(asked) = wait.filter(|w| *w > crate::http::MAX_RETRY_WAIT) {
            message = format!(
                "asked to retry after {} s; not waiting that long",
                asked.as_secs()
            );
            return Err(Failure::Fatal(EmbedError::Status {
                status: status.as_u16(),
                message,
            }));
        }
        let error = EmbedError::Status {
            status: status.as_u16(),
            message,
        };
        if is_retryable(status) {
            Err(Failure::Retry { error, wait })
        } else {
            Err(Failure::Fatal(error))
        }
    }

    fn check(
        &self,
        expected_len: usize,
        response: EmbeddingsResponse,
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        if response.data.len() != expected_len {
            return Err(EmbedError::Malformed(format!(
                "{} vectors for {} inputs",
                response.data.len(),
                expected_len
            )));
        }
        let mut items = response.data;
        if items.iter().all(|i| i.index.is_some()) {
            items.sort_by_key(|i| i.index);
        }
        items
            .into_iter()
            .map(|item| {
                if item.embedding.len() == self.dim {
                    Ok(item.embedding)
                } else {
                    Err(EmbedError::Dimension {
                        expected: self.dim,
                        got: item.embedding.len(),
                    })
                }
            })
            .collect()
    }
}

enum Failure {
    Retry {
        error: EmbedError,
        wait: Option<Duration>,
    },
    Fatal(EmbedError),
}

#[async_trait]
impl Embedder for OpenAiEmbedder {
    fn model(&self) -> &str {
        &self.model
    }

    fn prefixes(&self) -> (&str, &str) {
        (&self.query_prefix, &self.passage_prefix)
    }

    fn dim(&self) -> usize {
        self.dim
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let requests: Vec<_> = texts
            .chunks(self.batch_size)
            .map(|batch| self.embed_batch(batch))
            .collect();
        let batches: Vec<Vec<Vec<f32>>> = futures::stream::iter(requests)
            .buffered(self.concurrency)
            .try_collect()
            .await?;
        Ok(batches.into_iter().flatten().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn local_vectors_are_unit_length_and_deterministic() {
        let e = LocalEmbedder::new(64);
        let a = e.embed_one("CO2 sensors report parts per million");
        let norm: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5);
        assert_eq!(a, e.embed_one("CO2 sensors report parts per million"));
    }

    #[test]
    fn local_similarity_follows_shared_words() {
        let e = LocalEmbedder::new(768);
        let query = e.embed_one("occupancy sensor");
        let close = e.embed_one("The occupancy sensor counts people in a room.");
        let far = e.embed_one("Rotate the signing key every ninety days.");
        assert!(cosine(&query, &close) > cosine(&query, &far) + 0.2);
    }

    #[test]
    fn empty_text_gives_a_zero_vector() {
        let e = LocalEmbedder::new(16);
        assert!(e.embed_one("  ").iter().all(|x| *x == 0.0));
    }
}
