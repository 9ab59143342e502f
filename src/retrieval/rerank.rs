//! PORT `Reranker`: reorders fused candidates by relevance to the question.
//!
//! - [`NoopReranker`] keeps the fused order and gives no score.
//! - [`ApiReranker`] calls a `/rerank` endpoint of the shape providers and local servers share
//!   (Cohere/Jina style): `{model, query, documents, top_n}` → `{results: [{index,
//!   relevance_score}]}`.

use crate::config::RerankerConfig;
use async_trait::async_trait;
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
pub enum RerankError {
    #[error("the reranker answered HTTP {status}")]
    Status { status: u16 },
    #[error("the reranker could not be reached: {0}")]
    Transport(String),
    #[error("the reranker sent a response of the wrong shape: {0}")]
    Malformed(String),
}

/// One candidate after reranking: its index in the input and the relevance, when known.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reranked {
    pub index: usize,
    pub relevance: Option<f64>,
}

#[async_trait]
pub trait Reranker: Send + Sync {
    fn name(&self) -> &str;
    /// At most `top_n` candidates, best first.
    async fn rerank(
        &self,
        query: &str,
        documents: &[&str],
        top_n: usize,
    ) -> Result<Vec<Reranked>, RerankError>;
}

pub fn from_config(config: &RerankerConfig) -> Arc<dyn Reranker> {
    match config {
        RerankerConfig::Noop => Arc::new(NoopReranker),
        RerankerConfig::Api { .. } => Arc::new(ApiReranker::new(config)),
    }
}

pub struct NoopReranker;

#[async_trait]
impl Reranker for NoopReranker {
    fn name(&self) -> &str {
        "noop"
    }

    async fn rerank(
        &self,
        _query: &str,
        documents: &[&str],
        top_n: usize,
    ) -> Result<Vec<Reranked>, RerankError> {
        Ok((0..documents.len().min(top_n))
            .map(|index| Reranked {
                index,
                relevance: None,
            })
            .collect())
    }
}

pub struct ApiReranker {
    client: reqwest::Client,
    endpoint: String,
    model: String,
    api_key: Option<String>,
}

#[derive(serde::Deserialize)]
struct RerankResponse {
    results: Vec<RerankItem>,
}

#[derive(serde::Deserialize)]
struct RerankItem {
    index: usize,
    relevance_score: f64,
}

impl ApiReranker {
    pub fn new(config: &RerankerConfig) -> ApiReranker {
        let RerankerConfig::Api {
            url,
            model,
            api_key,
            timeout,
            ..
        } = config
        else {
            panic!("ApiReranker needs RERANKER=api settings");
        };
        ApiReranker {
            client: crate::http::client_builder()
                .timeout(*timeout)
                .build()
                .expect("a reqwest client with a timeout always builds"),
            endpoint: format!("{}/rerank", url.as_str().trim_end_matches('/')),
            model: model.clone(),
            api_key: api_key.clone(),
        }
    }
}

#[async_trait]
impl Reranker for ApiReranker {
    fn name(&self) -> &str {
        &self.model
    }

    async fn rerank(
        &self,
        query: &str,
        documents: &[&str],
        top_n: usize,
    ) -> Result<Vec<Reranked>, RerankError> {
        if documents.is_empty() {
            return Ok(Vec::new());
        }
        let body = serde_json::json!({
            "model": self.model,
            "query": query,
            "documents": documents,
            "top_n": top_n.min(documents.len()),
        });
        let mut request = self.client.post(&self.endpoint).json(&body);
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let response = request
            .send()
            .await
            .map_err(|e| RerankError::Transport(e.without_url().to_string()))?;
        if !response.status().is_success() {
            return Err(RerankError::Status {
                status: response.status().as_u16(),
            });
        }
        let parsed: RerankResponse = response
            .json()
            .await
            .map_err(|e| RerankError::Malformed(e.without_url().to_string()))?;
        let mut ranked: Vec<Reranked> = Vec::with_capacity(parsed.results.len());
        for item in parsed.results {
            if item.index >= documents.len() || ranked.iter().any(|r| r.index == item.index) {
                return Err(RerankError::Malformed(format!(
                    "index {} is not a candidate",
                    item.index
                )));
            }
            ranked.push(Reranked {
                index: item.index,
                relevance: Some(item.relevance_score),
            });
        }
        ranked.sort_by(|a, b| {
            b.relevance
                .unwrap_or(0.0)
                .total_cmp(&a.relevance.unwrap_or(0.0))
        });
        ranked.truncate(top_n);
        Ok(ranked)
    }
}
