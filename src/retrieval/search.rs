//! Hybrid retrieval: the one function behind the `search_docs` tool, the `search` command and
//! the benchmarks.
//!
//! question → embed → vector search and keyword search, concurrently, each filtered by the
//! caller's effective permissions inside the store's SQL → Reciprocal Rank Fusion → reranker →
//! the best `top_k`. Every result keeps its vector rank, keyword rank, fused score and, with a
//! scoring reranker, its relevance.

use super::embed::{EmbedError, Embedder};
use super::query::keyword_terms;
use super::rerank::{RerankError, Reranker};
use super::rrf::fuse;
use super::store::{check_embedding, ChunkStore, Hit, RetrievedChunk, SearchPlan, StoreError};
use crate::auth::AuthUser;
use crate::config::{Config, RerankerConfig, RetrievalConfig};
use crate::observe::{self, metrics};
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;
use tracing::Instrument;

pub use crate::config::MAX_TOP_K;

#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("embedding the question failed: {0}")]
    Embed(#[from] EmbedError),
    #[error("reranking failed: {0}")]
    Rerank(#[from] RerankError),
}

/// Which lists feed the fusion: both (the default), or one alone for measuring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchMode {
    Hybrid,
    VectorOnly,
    KeywordOnly,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchResult {
    #[serde(flatten)]
    pub chunk: RetrievedChunk,
    pub vector_rank: Option<usize>,
    pub keyword_rank: Option<usize>,
    pub fused_score: f64,
    pub relevance: Option<f64>,
}

pub struct Retriever {
    pub store: Arc<dyn ChunkStore>,
    pub embedder: Arc<dyn Embedder>,
    pub reranker: Arc<dyn Reranker>,
    pub settings: RetrievalConfig,
}

impl Retriever {
    /// Opens the configured store with the configured embedder and reranker.
    pub async fn from_config(config: &Config) -> Result<Retriever, StoreError> {
        let store = super::store::open_existing(&config.store.location).await?;
        let embedding = super::store::embedding_for(store.as_ref(), &config.embedding).await;
        Ok(Retriever {
            store,
            embedder: super::embed::from_config(&embedding),
            reranker: super::rerank::from_config(&config.retrieval.reranker),
            settings: config.retrieval.clone(),
        })
    }

    /// Refuses a store built with another embedding model or dimension: its vectors could not be
    /// compared with the question's.
    pub async fn check_store(&self) -> Result<(), SearchError> {
        let status = self.store.status().await?;
        if !status.pending_migrations.is_empty() {
            return Err(StoreError::NotMigrated.into());
        }
        check_embedding(
            status.embedding_model,
            status.embedding_dim,
            self.embedder.model(),
            self.embedder.dim(),
        )?;
        Ok(())
    }

    /// `top_k` defaults to `TOP_K_FINAL` and is held within 1..=[`MAX_TOP_K`].
    pub async fn search(
        &self,
        question: &str,
        user: &AuthUser,
        top_k: Option<usize>,
        mode: SearchMode,
    ) -> Result<Vec<SearchResult>, SearchError> {
        let top_k = top_k
            .unwrap_or(self.settings.top_k_final)
            .clamp(1, MAX_TOP_K);
        let question = crate::text::strip_invisible(question);
        let question = question.as_ref();
        let permissions = user.effective_permissions();
        let terms = keyword_terms(question);
        let vector = async {
            if mode == SearchMode::KeywordOnly {
                return Ok::<_, SearchError>(Vec::new());
            }
            let embedding = stage("embed", question, self.embed(question), |_| None).await?;
            let limit = self.settings.top_k_vector.max(top_k);
            stage(
                "vector",
                question,
                self.store.vector_search(&embedding, &permissions, limit),
                |hits| Some(ranked_hits(hits)),
            )
            .await
            .map_err(SearchError::from)
        };
        let keyword = async {
            if mode == SearchMode::VectorOnly {
                return Ok::<_, SearchError>(Vec::new());
            }
            let limit = self.settings.top_k_keyword.max(top_k);
            stage(
                "keyword",
                question,
                self.store.keyword_search(&terms, &permissions, limit),
                |hits| Some(ranked_hits(hits)),
            )
            .await
            .map_err(SearchError::from)
        };
        let (vector, keyword) = tokio::try_join!(vector, keyword)?;
        let candidates = fused_candidates(vector, keyword, self.settings.rrf_k);
        stage(
            "rerank",
            question,
            self.rerank(question, candidates, top_k),
            |results| {
                Some(observe::ranked_ids(results.iter().map(|r| {
                    (
                        r.chunk.chunk_id.as_str(),
                        r.relevance.unwrap_or(r.fused_score),
                    )
                })))
            },
        )
        .await
    }

    /// Plans and timings of both searches for the caller, as `search` runs them.
    pub async fn explain(
        &self,
        question: &str,
        user: &AuthUser,
        top_k: usize,
    ) -> Result<Vec<SearchPlan>, SearchError> {
        let embedding = self.embed(question).await?;
        let terms = keyword_terms(question);
        let permissions = user.effective_permissions();
        let limit = self.settings.top_k_vector.max(top_k);
        let started = Instant::now();
        self.store
            .vector_search(&embedding, &permissions, limit)
            .await?;
        let vector_ms = started.elapsed().as_secs_f64() * 1000.0;
        let started = Instant::now();
        self.store
            .keyword_search(&terms, &permissions, limit)
            .await?;
        let keyword_ms = started.elapsed().as_secs_f64() * 1000.0;
        let plans = self
            .store
            .search_plans(&embedding, &terms, &permissions, limit)
            .await?;
        Ok(plans
            .into_iter()
            .zip([vector_ms, keyword_ms])
            .map(|((search, plan), milliseconds)| SearchPlan {
                search,
                milliseconds,
                plan,
            })
            .collect())
    }

    async fn embed(&self, question: &str) -> Result<Vec<f32>, SearchError> {
        let query =
            crate::retrieval::embed::prefixed(self.embedder.prefixes().0, [question.to_string()]);
        let mut vectors = self.embedder.embed(&query).await?;
        Ok(vectors.pop().unwrap_or_default())
    }

    async fn rerank(
        &self,
        question: &str,
        candidates: Vec<SearchResult>,
        top_k: usize,
    ) -> Result<Vec<SearchResult>, SearchError> {
        let texts: Vec<&str> = candidates.iter().map(|c| c.chunk.text.as_str()).collect();
        let ranked = self.reranker.rerank(question, &texts, top_k).await?;
        let min_score = match &self.settings.reranker {
            RerankerConfig::Api { min_score, .. } => *min_score,
            RerankerConfig::Noop => None,
        };
        let mut slots: Vec<Option<SearchResult>> = candidates.into_iter().map(Some).collect();
        Ok(ranked
            .into_iter()
            .filter(|r| match (min_score, r.relevance) {
                (Some(min), Some(score)) => score >= min,
                _ => true,
            })
            .filter_map(|r| {
                let mut result = slots.get_mut(r.index)?.take()?;
                result.relevance = r.relevance;
                Some(result)
            })
            .collect())
    }
}

/// One search stage as a `retrieve.<stage>` span and a latency sample: the query (a payload),
/// how many results, and the ranked chunk ids with their scores when `ranked` gives them.
async fn stage<T, E>(
    name: &'static str,
    query: &str,
    work: impl std::future::Future<Output = Result<Vec<T>, E>>,
    ranked: impl FnOnce(&[T]) -> Option<String>,
) -> Result<Vec<T>, E> {
    let span = observe::retrieve_span(name);
    observe::record_payload(&span, "langfuse.observation.input", || query.to_string());
    let started = Instant::now();
    let result = work.instrument(span.clone()).await;
    metrics::retrieval_stage(name, started.elapsed());
    match &result {
        Ok(items) => {
            span.record("results", items.len());
            // Formatting every hit's score costs more than the stage's own Rust code: only for
            // a span something reads.
            if !span.is_disabled() {
                if let Some(ranked) = ranked(items) {
                    span.record("ranked", ranked);
                }
            }
        }
        Err(_) => observe::record_error(&span, "failed"),
    }
    result
}

fn ranked_hits(hits: &[Hit]) -> String {
    observe::ranked_ids(hits.iter().map(|h| (h.chunk.chunk_id.as_str(), h.score)))
}

/// Both hit lists fused by rank, each result carrying its ranks and fused score. A chunk found
/// by both searches is taken from the vector hits.
fn fused_candidates(vector: Vec<Hit>, keyword: Vec<Hit>, rrf_k: u32) -> Vec<SearchResult> {
    let ranking: Vec<(Option<usize>, Option<usize>, f64)> = {
        let vector_ids: Vec<&str> = vector.iter().map(|h| h.chunk.chunk_id.as_str()).collect();
        let keyword_ids: Vec<&str> = keyword.iter().map(|h| h.chunk.chunk_id.as_str()).collect();
        fuse(&vector_ids, &keyword_ids, rrf_k)
            .into_iter()
            .map(|f| (f.vector_rank, f.keyword_rank, f.score))
            .collect()
    };
    let mut vector: Vec<Option<RetrievedChunk>> =
        vector.into_iter().map(|h| Some(h.chunk)).collect();
    let mut keyword: Vec<Option<RetrievedChunk>> =
        keyword.into_iter().map(|h| Some(h.chunk)).collect();
    ranking
        .into_iter()
        .filter_map(|(vector_rank, keyword_rank, fused_score)| {
            let chunk = match (vector_rank, keyword_rank) {
                (Some(rank), _) => vector[rank - 1].take(),
                (None, Some(rank)) => keyword[rank - 1].take(),
                (None, None) => None,
            }?;
            Some(SearchResult {
                chunk,
                vector_rank,
                keyword_rank,
                fused_score,
                relevance: None,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hits(ids: &[&str], from: &str) -> Vec<Hit> {
        ids.iter()
            .map(|id| Hit {
                chunk: RetrievedChunk {
                    chunk_id: id.to_string(),
                    source: from.to_string(),
                    section: String::new(),
                    kind: String::new(),
                    text: String::new(),
                },
                score: 0.0,
            })
            .collect()
    }

    #[test]
    fn fused_results_carry_their_chunk_once_from_the_vector_hits_first() {
        let results = fused_candidates(
            hits(&["a", "b"], "vector"),
            hits(&["b", "c", "a"], "keyword"),
            60,
        );
        let seen: Vec<(&str, &str, Option<usize>, Option<usize>)> = results
            .iter()
            .map(|r| {
                let chunk = &r.chunk;
                (
                    chunk.chunk_id.as_str(),
                    chunk.source.as_str(),
                    r.vector_rank,
                    r.keyword_rank,
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                ("b", "vector", Some(2), Some(1)),
                ("a", "vector", Some(1), Some(3)),
                ("c", "keyword", None, Some(2)),
            ]
        );
        let expected_b = 1.0 / 62.0 + 1.0 / 61.0;
        assert!((results[0].fused_score - expected_b).abs() < 1e-12);
    }

    #[test]
    fn nothing_found_fuses_to_nothing() {
        assert!(fused_candidates(Vec::new(), Vec::new(), 60).is_empty());
    }
}
