//! PORT `ChunkStore`: where documents, their chunks and the chunks' vectors live.
//!
//! Two adapters share this contract and one conformance suite (`tests/integration/store.rs`):
//! [`postgres::PostgresStore`] (sqlx + pgvector, for deployments) and [`sqlite::SqliteStore`]
//! (embedded, the default). Only the files under `store/` know `sqlx`.
//!
//! Writes are per document and atomic: a document and all its chunks appear together or not at
//! all, and replacing a changed source happens in the same transaction as the insert.

mod conversations_postgres;
mod conversations_sqlite;
pub mod migrations;
pub mod postgres;
mod postgres_keywords;
pub mod quota;
pub mod sqlite;
mod sqlite_bm25;
mod sqlite_keywords;
pub mod sqlite_search;

use crate::config::{redact, StoreLocation};
use async_trait::async_trait;
use serde::Serialize;
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "the store holds {stored_dim}-dimension vectors from model {stored_model:?}, but this run \
         uses {configured_dim} dimensions from {configured_model:?}; {fix}, or rebuild the \
         knowledge base with `crowdvision-agent db reset --yes` and ingest again"
    )]
    EmbeddingMismatch {
        stored_model: String,
        stored_dim: usize,
        configured_model: String,
        configured_dim: usize,
        /// The setting that makes this run match the store.
        fix: String,
    },
    #[error("the store is not migrated yet: run `crowdvision-agent db migrate`")]
    NotMigrated,
    #[error(
        "there is no knowledge base at {location} yet: build one with `crowdvision-agent ingest \
         PATH` (your Markdown folder), or point DATABASE_URL at an existing one"
    )]
    NoKnowledgeBase { location: String },
    #[error("cannot open the store at {location}: {message}")]
    Connect { location: String, message: String },
    #[error("store query failed: {0}")]
    Query(String),
    #[error("migration {version} ({name}) failed: {message}")]
    Migration {
        version: u32,
        name: String,
        message: String,
    },
}

impl From<sqlx::Error> for StoreError {
    fn from(error: sqlx::Error) -> Self {
        StoreError::Query(error.to_string())
    }
}

/// A document ready to be written: everything is computed, nothing is left to the store.
#[derive(Debug, Clone)]
pub struct NewDocument {
    pub source: String,
    pub content_hash: String,
    pub title: Option<String>,
    pub permissions: Vec<String>,
    pub metadata: serde_json::Value,
    pub chunks: Vec<NewChunk>,
}

#[derive(Debug, Clone)]
pub struct NewChunk {
    pub chunk_id: String,
    pub ordinal: usize,
    pub section: String,
    pub kind: String,
    pub text: String,
    pub tokens: usize,
    pub embedding: Vec<f32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StoredDocument {
    pub source: String,
    pub content_hash: String,
    pub chunks: i64,
    pub public: bool,
}

/// A documentation page as a caller's list shows it (both adapters read it as one row).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct PageEntry {
    pub source: String,
    pub title: Option<String>,
}

/// What writing one document did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteOutcome {
    Added,
    Replaced,
    /// The same source already holds this content.
    Unchanged,
    /// Another source already holds this exact content.
    Duplicate,
}

/// A chunk as search returns it. Only chunks the caller may see are ever built.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RetrievedChunk {
    pub chunk_id: String,
    pub source: String,
    pub section: String,
    pub kind: String,
    pub text: String,
}

/// One search result: cosine similarity for vector search, the engine's rank for keyword search
/// (higher is better in both).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    pub chunk: RetrievedChunk,
    pub score: f64,
}

/// The plan and timing of one search, for `search --explain`.
#[derive(Debug, Clone, Serialize)]
pub struct SearchPlan {
    pub search: &'static str,
    pub milliseconds: f64,
    pub plan: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct StoreStatus {
    pub backend: &'static str,
    pub location: String,
    pub applied_migrations: Vec<u32>,
    pub pending_migrations: Vec<u32>,
    pub embedding_model: Option<String>,
    pub embedding_dim: Option<usize>,
    pub documents: i64,
    pub chunks: i64,
}

#[async_trait]
pub trait ChunkStore: Send + Sync {
    fn backend(&self) -> &'static str;

    /// Per-caller limits every replica over this store shares; `None` for a store one process
    /// owns (SQLite), whose replica keeps them in memory.
    fn shared_quota(&self) -> Option<Arc<dyn crate::quota::SharedQuota>> {
        None
    }

    /// The conversations kept in this store's database ([`crate::conversations`]).
    fn conversations(&self) -> Arc<dyn crate::conversations::ConversationStore>;

    /// Closes the connections and waits until they are gone. A connection's worker may still
    /// hold the tracing span of its last query; a command closes the store before its spans
    /// are flushed so that span has ended by then.
    async fn close(&self);

    /// Applies pending migrations; `dim` sizes the vector column on a fresh store.
    async fn migrate(&self, dim: usize) -> Result<Vec<u32>, StoreError>;

    /// Where the store is, as shown to a user (a path, or a URL without its password).
    fn location(&self) -> &str;

    /// The migrations this backend knows.
    fn migrations(&self) -> &'static [migrations::Migration];

    /// The versions applied so far (none on a store never migrated).
    async fn applied_migrations(&self) -> Result<Vec<u32>, StoreError>;

    /// A row of `store_settings`, read without checking the migrations first.
    async fn read_setting(&self, key: &str) -> Result<Option<String>, StoreError>;

    /// Writes a row of `store_settings`; `replace`: an existing value is overwritten, else kept.
    async fn write_setting(&self, key: &str, value: &str, replace: bool) -> Result<(), StoreError>;

    /// The numbers of documents and of chunks.
    async fn counts(&self) -> Result<(i64, i64), StoreError>;

    async fn documents(&self) -> Result<Vec<StoredDocument>, StoreError>;

    /// `NotMigrated` unless every migration is applied.
    async fn require_migrated(&self) -> Result<(), StoreError> {
        let applied = self.applied_migrations().await?;
        if migrations::pending(self.migrations(), &applied).is_empty() {
            Ok(())
        } else {
            Err(StoreError::NotMigrated)
        }
    }

    async fn status(&self) -> Result<StoreStatus, StoreError> {
        let applied = self.applied_migrations().await?;
        let pending = migrations::pending(self.migrations(), &applied);
        let mut status = StoreStatus {
            backend: self.backend(),
            location: self.location().to_string(),
            applied_migrations: applied,
            pending_migrations: pending.clone(),
            embedding_model: None,
            embedding_dim: None,
            documents: 0,
            chunks: 0,
        };
        if pending.is_empty() {
            status.embedding_model = self.read_setting(SETTING_MODEL).await?;
            status.embedding_dim = self
                .read_setting(SETTING_DIM)
                .await?
                .and_then(|d| d.parse().ok());
            (status.documents, status.chunks) = self.counts().await?;
        }
        Ok(status)
    }

    /// Records the embedding model and dimension on first use, and refuses a different one
    /// afterwards. Called before any write.
    async fn ensure_embedding(&self, model: &str, dim: usize) -> Result<(), StoreError> {
        self.require_migrated().await?;
        let stored_model = self.read_setting(SETTING_MODEL).await?;
        let stored_dim = self
            .read_setting(SETTING_DIM)
            .await?
            .and_then(|d| d.parse().ok());
        if check_embedding(stored_model, stored_dim, model, dim)? {
            self.write_setting(SETTING_MODEL, model, false).await?;
            // A concurrent first writer may have recorded another model: check again.
            let recorded = self.read_setting(SETTING_MODEL).await?;
            check_embedding(recorded, Some(dim), model, dim)?;
        }
        Ok(())
    }

    /// A value of the store's own settings.
    async fn store_setting(&self, key: &str) -> Result<Option<String>, StoreError> {
        self.require_migrated().await?;
        self.read_setting(key).await
    }

    /// Sets a value of the store's own settings.
    async fn set_store_setting(&self, key: &str, value: &str) -> Result<(), StoreError> {
        self.require_migrated().await?;
        self.write_setting(key, value, true).await
    }

    /// The knowledge-base roots earlier ingests named documents under (canonical paths), so
    /// that a later run over a file or subfolder inside one keeps the same names.
    async fn knowledge_base_roots(&self) -> Result<Vec<std::path::PathBuf>, StoreError> {
        let recorded = self.store_setting(SETTING_ROOTS).await?.unwrap_or_default();
        Ok(serde_json::from_str(&recorded).unwrap_or_default())
    }

    /// Adds `roots` to [`ChunkStore::knowledge_base_roots`].
    async fn record_knowledge_base_roots(
        &self,
        roots: &[std::path::PathBuf],
    ) -> Result<(), StoreError> {
        let mut known = self.knowledge_base_roots().await?;
        let before = known.len();
        for root in roots {
            if !known.contains(root) {
                known.push(root.clone());
            }
        }
        if known.len() == before {
            return Ok(());
        }
        let text = serde_json::to_string(&known).map_err(|e| StoreError::Query(e.to_string()))?;
        self.set_store_setting(SETTING_ROOTS, &text).await
    }

    /// Writes one document and its chunks in one transaction, replacing the source's previous
    /// document if its content changed.
    async fn write_document(&self, document: &NewDocument) -> Result<WriteOutcome, StoreError>;

    /// Deletes a source's document and chunks; false when there was none.
    async fn delete_document(&self, source: &str) -> Result<bool, StoreError>;

    /// Drops everything the agent stored (tables included), for a rebuild.
    async fn reset(&self) -> Result<(), StoreError>;

    /// Refreshes planner statistics after a batch of writes (the keyword search reads them).
    async fn optimize(&self) -> Result<(), StoreError>;

    /// Called before loading many documents into an empty store: an adapter may set aside
    /// indexes that are cheaper to build once afterwards. Searches stay correct meanwhile.
    async fn begin_bulk_load(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// Rebuilds whatever `begin_bulk_load` set aside; also safe to call without it.
    async fn finish_bulk_load(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// The `limit` chunks nearest to `embedding` (cosine) among those visible with
    /// `permissions`; the filter is part of the query.
    async fn vector_search(
        &self,
        embedding: &[f32],
        permissions: &[String],
        limit: usize,
    ) -> Result<Vec<Hit>, StoreError>;

    /// The `limit` best full-text matches for `terms` (see `retrieval::query`) among the chunks
    /// visible with `permissions`; the filter is part of the query. No terms, no hits.
    async fn keyword_search(
        &self,
        terms: &[String],
        permissions: &[String],
        limit: usize,
    ) -> Result<Vec<Hit>, StoreError>;

    /// The pages a caller with `permissions` may read, by source; the filter is part of the
    /// query, as in search.
    async fn visible_pages(&self, permissions: &[String]) -> Result<Vec<PageEntry>, StoreError>;

    /// The chunks of page `source` that a caller with `permissions` may read, in order: none
    /// for a page that does not exist and for one the caller may not read alike.
    async fn page_chunks(
        &self,
        source: &str,
        permissions: &[String],
    ) -> Result<Vec<RetrievedChunk>, StoreError>;

    /// The query plans of both searches, run as `vector_search` and `keyword_search` would:
    /// `[(label, plan) of the vector search, (label, plan) of the keyword search]`.
    async fn search_plans(
        &self,
        embedding: &[f32],
        terms: &[String],
        permissions: &[String],
        limit: usize,
    ) -> Result<[(&'static str, String); 2], StoreError>;
}

/// Opens the configured store for reading: a SQLite file that does not exist is an error and is
/// not created (nor its folder).
pub async fn open_existing(location: &StoreLocation) -> Result<Arc<dyn ChunkStore>, StoreError> {
    if let StoreLocation::Sqlite(path) = location {
        if !path.is_file() {
            return Err(StoreError::NoKnowledgeBase {
                location: path.display().to_string(),
            });
        }
    }
    open(location).await
}

/// Why a connection failed, in a user's words for the common cases.
fn connect_failure(error: &sqlx::Error) -> String {
    match error {
        sqlx::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            "connection refused: is PostgreSQL running and listening there?".to_string()
        }
        sqlx::Error::PoolTimedOut => "no answer within 10 s".to_string(),
        other => other.to_string(),
    }
}

/// Opens the configured store (creating the SQLite file and its folder when needed).
pub async fn open(location: &StoreLocation) -> Result<Arc<dyn ChunkStore>, StoreError> {
    match location {
        StoreLocation::Postgres(url) => Ok(Arc::new(
            postgres::PostgresStore::connect(url)
                .await
                .map_err(|e| StoreError::Connect {
                    location: redact(url),
                    message: connect_failure(&e),
                })?,
        )),
        StoreLocation::Sqlite(path) => Ok(Arc::new(sqlite::SqliteStore::open(path).await?)),
    }
}

/// Keys of the `store_settings` table.
pub(crate) const SETTING_MODEL: &str = "embedding_model";
pub(crate) const SETTING_DIM: &str = "embedding_dim";
pub(crate) const SETTING_ROOTS: &str = "knowledge_base_roots";

/// The shared check behind `ensure_embedding`: Ok(true) when the store must record the model.
pub fn check_embedding(
    stored_model: Option<String>,
    stored_dim: Option<usize>,
    model: &str,
    dim: usize,
) -> Result<bool, StoreError> {
    let model_differs = stored_model.as_deref().is_some_and(|m| m != model);
    let dim_differs = stored_dim.is_some_and(|d| d != dim);
    if model_differs || dim_differs {
        let stored_model = stored_model.unwrap_or_else(|| "(none yet)".into());
        let stored_dim = stored_dim.unwrap_or(dim);
        return Err(StoreError::EmbeddingMismatch {
            fix: matching_settings(&stored_model, stored_dim, model, dim),
            stored_model,
            stored_dim,
            configured_model: model.to_string(),
            configured_dim: dim,
        });
    }
    Ok(stored_model.is_none())
}

/// The embedding configuration to use with `store`: the configured one, kept on the embedder
/// the store was built with when `EMBEDDING_PROVIDER` is unset ([`EmbeddingConfig::for_store`]).
pub async fn embedding_for(
    store: &dyn ChunkStore,
    config: &crate::config::EmbeddingConfig,
) -> crate::config::EmbeddingConfig {
    let stored = store.store_setting(SETTING_MODEL).await.ok().flatten();
    config.for_store(stored.as_deref())
}

/// The settings that make a run embed like the store: the local embedder by name; otherwise
/// the model (without its recorded prefixes) and the dimension where they differ.
fn matching_settings(stored_model: &str, stored_dim: usize, model: &str, dim: usize) -> String {
    use crate::retrieval::embed::LOCAL_MODEL_NAME;
    if stored_model == LOCAL_MODEL_NAME {
        return "set EMBEDDING_PROVIDER=local (the store was built with the built-in local embedder)"
            .to_string();
    }
    let stored_name = stored_model.split(" [").next().unwrap_or(stored_model);
    let mut settings = Vec::new();
    if model == LOCAL_MODEL_NAME {
        settings.push("EMBEDDING_PROVIDER=openai (with a provider key)".to_string());
    }
    if stored_name != model.split(" [").next().unwrap_or(model) {
        settings.push(format!("EMBEDDING_MODEL={stored_name}"));
    } else if stored_model != model {
        settings
            .push("the EMBEDDING_QUERY_PREFIX/EMBEDDING_PASSAGE_PREFIX it was built with".into());
    }
    if stored_dim != dim {
        settings.push(format!("EMBEDDING_DIM={stored_dim}"));
    }
    format!("set {}", settings.join(" and "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mismatch_names_the_setting_that_fixes_it() {
        let fix = |stored: &str, stored_dim, model: &str, dim| match check_embedding(
            Some(stored.into()),
            Some(stored_dim),
            model,
            dim,
        ) {
            Err(StoreError::EmbeddingMismatch { fix, .. }) => fix,
            other => panic!("{other:?}"),
        };
        assert!(
            fix("local-hash-v1", 768, "openai/text-embedding-3-small", 768)
                .contains("EMBEDDING_PROVIDER=local")
        );
        assert_eq!(
            fix("openai/text-embedding-3-small", 1536, "local-hash-v1", 768),
            "set EMBEDDING_PROVIDER=openai (with a provider key) and \
             EMBEDDING_MODEL=openai/text-embedding-3-small and EMBEDDING_DIM=1536"
        );
        assert_eq!(
            fix("e5-small [query: |passage: ]", 384, "bge-small", 384),
            "set EMBEDDING_MODEL=e5-small"
        );
    }

    #[test]
    fn first_use_records_the_model() {
        assert!(check_embedding(None, Some(768), "m", 768).unwrap());
        assert!(!check_embedding(Some("m".into()), Some(768), "m", 768).unwrap());
    }

    #[test]
    fn a_different_model_or_dimension_is_refused_with_the_rebuild_command() {
        let err = check_embedding(Some("a".into()), Some(768), "b", 768).unwrap_err();
        assert!(err.to_string().contains("db reset"), "{err}");
        assert!(check_embedding(None, Some(768), "a", 1536).is_err());
    }
}
