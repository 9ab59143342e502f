//! ADAPTER: the store on PostgreSQL with pgvector (sqlx). Vectors live in a `vector(dim)`
//! column with an HNSW cosine index (sent in pgvector's binary form through the
//! `pgvector` crate, not as text); keywords in the library's own BM25 index
//! (`postgres_keywords.rs`, the same ranking as the SQLite store);
//! permissions in a GIN-indexed `text[]`.
//!
//! Writers take one transaction-scoped advisory lock, so two ingests running at once serialise
//! per document and never insert the same content twice.

use super::migrations::{self, POSTGRES};
use super::postgres_keywords;
use super::{
    ChunkStore, Hit, NewDocument, PageEntry, RetrievedChunk, StoreError, StoredDocument,
    WriteOutcome, SETTING_DIM,
};
use crate::config::redact;
use crate::retrieval::terms::{self, Postings};
use async_trait::async_trait;
use pgvector::Vector;
use sqlx::postgres::PgRow;
use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::{Executor, Postgres, Row, Transaction};
use std::time::Duration;

/// Arbitrary constant naming this project's writer lock (`pg_advisory_xact_lock`). Every
/// schema change (migrations, the bulk-load index drop and rebuild) and every document write
/// holds it, so two ingests starting on an empty store never race on DDL.
const WRITE_LOCK: i64 = 0x6376_6167_656e_7401;

/// The visibility test is written `cardinality(..) = 0 OR .. && $2` rather than `= '{}' OR ..`
/// on purpose: the planner then filters rows it already has instead of combining a bitmap of
/// every public chunk from the permissions index (25 to 12 ms on one corpus question).
///
/// Nearest chunks among the visible ones. The inner query is what the HNSW index serves (with
/// iterative scans, so a narrow permission filter still fills the limit); the outer one re-sorts
/// (iterative scans return in relaxed order) and joins the text and source.
pub const VECTOR_SQL: &str = "
WITH hits AS MATERIALIZED (
    SELECT c.id, c.document_id, c.embedding <=> $1::vector AS distance
    FROM chunks c
    WHERE cardinality(c.permissions) = 0 OR c.permissions && $2::text[]
    ORDER BY c.embedding <=> $1::vector
    LIMIT $3)
SELECT c.chunk_id, d.source, c.section, c.kind, c.text, 1 - h.distance AS score
FROM hits h JOIN chunks c ON c.id = h.id JOIN documents d ON d.id = h.document_id
ORDER BY h.distance, c.chunk_id";

/// BM25 over the keyword index (`postgres_keywords.rs`).
pub fn keyword_sql() -> &'static str {
    postgres_keywords::RANK_SQL.as_str()
}

/// The vector index, also re-created by `migrate` and `finish_bulk_load` if a bulk load was
/// interrupted after dropping it.
const HNSW_INDEX: &str =
    "CREATE INDEX IF NOT EXISTS chunks_embedding_hnsw ON chunks USING hnsw (embedding vector_cosine_ops)";

pub struct PostgresStore {
    pool: PgPool,
    location: String,
}

impl PostgresStore {
    pub async fn connect(url: &str) -> Result<PostgresStore, sqlx::Error> {
        // One plain connection first: a refused or unknown server fails here at once, where
        // the pool would retry it until its acquire timeout and report only "timed out".
        let options: sqlx::postgres::PgConnectOptions = url.parse()?;
        sqlx::Connection::close(
            tokio::time::timeout(
                Duration::from_secs(10),
                <sqlx::PgConnection as sqlx::Connection>::connect_with(&options),
            )
            .await
            .map_err(|_| sqlx::Error::PoolTimedOut)??,
        )
        .await?;
        let pool = PgPoolOptions::new()
            .max_connections(4)
            .acquire_timeout(Duration::from_secs(10))
            .connect_with(options)
            .await?;
        Ok(PostgresStore {
            pool,
            location: redact(url),
        })
    }

    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// A transaction holding the writer lock until it ends.
    async fn writer(&self) -> Result<sqlx::Transaction<'_, sqlx::Postgres>, StoreError> {
        let mut tx = self.pool.begin().await?;
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(WRITE_LOCK)
            .execute(&mut *tx)
            .await?;
        Ok(tx)
    }
}

#[async_trait]
impl ChunkStore for PostgresStore {
    fn backend(&self) -> &'static str {
        "postgres"
    }

    fn shared_quota(&self) -> Option<std::sync::Arc<dyn crate::quota::SharedQuota>> {
        Some(std::sync::Arc::new(super::quota::PostgresQuota::new(
            self.pool.clone(),
        )))
    }

    fn conversations(&self) -> std::sync::Arc<dyn crate::conversations::ConversationStore> {
        std::sync::Arc::new(super::conversations_postgres::PostgresConversations::new(
            self.pool.clone(),
        ))
    }

    async fn close(&self) {
        self.pool.close().await;
    }

    async fn migrate(&self, dim: usize) -> Result<Vec<u32>, StoreError> {
        let mut tx = self.writer().await?;
        (&mut *tx)
            .execute(sqlx::raw_sql(
                "CREATE TABLE IF NOT EXISTS agent_migrations (
                 version integer PRIMARY KEY,
                 name text NOT NULL,
                 applied_at timestamptz NOT NULL DEFAULT now())",
            ))
            .await?;
        let applied: Vec<i32> = sqlx::query_scalar("SELECT version FROM agent_migrations")
            .fetch_all(&mut *tx)
            .await?;
        let applied: Vec<u32> = applied.into_iter().map(|v| v as u32).collect();
        let mut newly = Vec::new();
        let todo: Vec<&migrations::Migration> = POSTGRES
            .iter()
            .filter(|m| !applied.contains(&m.version))
            .collect();
        for migration in todo {
            let sql = migration.render(dim);
            (&mut *tx)
                .execute(sqlx::raw_sql(&sql))
                .await
                .map_err(|e| StoreError::Migration {
                    version: migration.version,
                    name: migration.name.to_string(),
                    message: e.to_string(),
                })?;
            sqlx::query("INSERT INTO agent_migrations (version, name) VALUES ($1, $2)")
                .bind(migration.version as i32)
                .bind(migration.name)
                .execute(&mut *tx)
                .await?;
            newly.push(migration.version);
        }
        sqlx::query(
            "INSERT INTO store_settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING",
        )
        .bind(SETTING_DIM)
        .bind(dim.to_string())
        .execute(&mut *tx)
        .await?;
        (&mut *tx).execute(sqlx::raw_sql(HNSW_INDEX)).await?;
        postgres_keywords::index_unindexed(&mut tx).await?;
        tx.commit().await?;
        Ok(newly)
    }

    fn location(&self) -> &str {
        &self.location
    }

    fn migrations(&self) -> &'static [migrations::Migration] {
        migrations::POSTGRES
    }

    async fn applied_migrations(&self) -> Result<Vec<u32>, StoreError> {
        let exists: bool = sqlx::query_scalar("SELECT to_regclass('agent_migrations') IS NOT NULL")
            .fetch_one(&self.pool)
            .await?;
        if !exists {
            return Ok(Vec::new());
        }
        let versions: Vec<i32> =
            sqlx::query_scalar("SELECT version FROM agent_migrations ORDER BY version")
                .fetch_all(&self.pool)
                .await?;
        Ok(versions.into_iter().map(|v| v as u32).collect())
    }

    async fn read_setting(&self, key: &str) -> Result<Option<String>, StoreError> {
        Ok(
            sqlx::query_scalar("SELECT value FROM store_settings WHERE key = $1")
                .bind(key)
                .fetch_optional(&self.pool)
                .await?,
        )
    }

    async fn write_setting(&self, key: &str, value: &str, replace: bool) -> Result<(), StoreError> {
        let sql = if replace {
            "INSERT INTO store_settings (key, value) VALUES ($1, $2) \
             ON CONFLICT (key) DO UPDATE SET value = excluded.value"
        } else {
            "INSERT INTO store_settings (key, value) VALUES ($1, $2) \
             ON CONFLICT (key) DO NOTHING"
        };
        sqlx::query(sql)
            .bind(key)
            .bind(value)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn counts(&self) -> Result<(i64, i64), StoreError> {
        let documents = sqlx::query_scalar("SELECT count(*) FROM documents")
            .fetch_one(&self.pool)
            .await?;
        let chunks = sqlx::query_scalar("SELECT count(*) FROM chunks")
            .fetch_one(&self.pool)
            .await?;
        Ok((documents, chunks))
    }

    async fn documents(&self) -> Result<Vec<StoredDocument>, StoreError> {
        self.require_migrated().await?;
        let rows = sqlx::query(
            "SELECT d.source, d.content_hash, cardinality(d.permissions) = 0 AS public,
                    (SELECT count(*) FROM chunks c WHERE c.document_id = d.id) AS chunks
             FROM documents d ORDER BY d.source",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(|row| {
                Ok(StoredDocument {
                    source: row.try_get("source")?,
                    content_hash: row.try_get("content_hash")?,
                    chunks: row.try_get("chunks")?,
                    public: row.try_get("public")?,
                })
            })
            .collect()
    }

    async fn write_document(&self, document: &NewDocument) -> Result<WriteOutcome, StoreError> {
        let mut tx = self.pool.begin().await?;
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(WRITE_LOCK)
            .execute(&mut *tx)
            .await?;
        let holder: Option<String> =
            sqlx::query_scalar("SELECT source FROM documents WHERE content_hash = $1")
                .bind(&document.content_hash)
                .fetch_optional(&mut *tx)
                .await?;
        if holder.as_deref() == Some(document.source.as_str()) {
            return Ok(WriteOutcome::Unchanged);
        }
        let replaced = sqlx::query("DELETE FROM documents WHERE source = $1")
            .bind(&document.source)
            .execute(&mut *tx)
            .await?
            .rows_affected()
            > 0;
        if holder.is_some() {
            tx.commit().await?;
            return Ok(WriteOutcome::Duplicate);
        }
        insert_document(&mut tx, document).await?;
        tx.commit().await?;
        Ok(if replaced {
            WriteOutcome::Replaced
        } else {
            WriteOutcome::Added
        })
    }

    async fn delete_document(&self, source: &str) -> Result<bool, StoreError> {
        let result = sqlx::query("DELETE FROM documents WHERE source = $1")
            .bind(source)
            .execute(&self.pool)
            .await?;
        Ok(result.rows_affected() > 0)
    }

    async fn reset(&self) -> Result<(), StoreError> {
        (&self.pool)
            .execute(sqlx::raw_sql(
                "DROP TABLE IF EXISTS chunk_terms, chunk_lengths, term_stats, keyword_stats, chunks, \
                 documents, store_settings, agent_migrations, caller_limits, caller_answers CASCADE;
                 DROP FUNCTION IF EXISTS admit_caller(text, integer, integer, bigint, float8);
                 DROP FUNCTION IF EXISTS term_stats_add(), term_stats_remove(), keyword_stats_add(),
                     keyword_stats_remove()",
            ))
            .await?;
        Ok(())
    }

    async fn begin_bulk_load(&self) -> Result<(), StoreError> {
        // Inserting row by row into HNSW costs about ten times more than one build at the end.
        let mut tx = self.writer().await?;
        (&mut *tx)
            .execute(sqlx::raw_sql("DROP INDEX IF EXISTS chunks_embedding_hnsw"))
            .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn finish_bulk_load(&self) -> Result<(), StoreError> {
        let mut tx = self.writer().await?;
        (&mut *tx)
            .execute(sqlx::raw_sql("SET LOCAL maintenance_work_mem = '512MB'"))
            .await?;
        (&mut *tx).execute(sqlx::raw_sql(HNSW_INDEX)).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn optimize(&self) -> Result<(), StoreError> {
        (&self.pool)
            .execute(sqlx::raw_sql("ANALYZE chunks; ANALYZE documents"))
            .await?;
        Ok(())
    }

    async fn vector_search(
        &self,
        embedding: &[f32],
        permissions: &[String],
        limit: usize,
    ) -> Result<Vec<Hit>, StoreError> {
        let mut tx = self.pool.begin().await?;
        prepare_vector_scan(&mut tx, limit).await?;
        let rows = sqlx::query(VECTOR_SQL)
            .bind(Vector::from(embedding.to_vec()))
            .bind(permissions)
            .bind(limit as i64)
            .fetch_all(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(rows.into_iter().map(hit).collect::<Result<_, _>>()?)
    }

    async fn keyword_search(
        &self,
        terms: &[String],
        permissions: &[String],
        limit: usize,
    ) -> Result<Vec<Hit>, StoreError> {
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let ranked = postgres_keywords::weighted_terms(&self.pool, terms).await?;
        if ranked.terms.is_empty() {
            return Ok(Vec::new());
        }
        let rows = sqlx::query(keyword_sql())
            .bind(&ranked.terms)
            .bind(&ranked.weights)
            .bind(&ranked.selects)
            .bind(permissions)
            .bind(limit as i64)
            .fetch_all(&self.pool)
            .await?;
        Ok(rows.into_iter().map(hit).collect::<Result<_, _>>()?)
    }

    async fn visible_pages(&self, permissions: &[String]) -> Result<Vec<PageEntry>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT d.source, d.title FROM documents d
             WHERE EXISTS (SELECT 1 FROM chunks c WHERE c.document_id = d.id
                           AND (cardinality(c.permissions) = 0 OR c.permissions && $1::text[]))
             ORDER BY d.source COLLATE \"C\"",
        )
        .bind(permissions)
        .fetch_all(&self.pool)
        .await?)
    }

    async fn page_chunks(
        &self,
        source: &str,
        permissions: &[String],
    ) -> Result<Vec<RetrievedChunk>, StoreError> {
        let rows = sqlx::query(
            "SELECT c.chunk_id, d.source, c.section, c.kind, c.text
             FROM chunks c JOIN documents d ON d.id = c.document_id
             WHERE d.source = $2 AND (cardinality(c.permissions) = 0 OR c.permissions && $1::text[])
             ORDER BY c.ordinal",
        )
        .bind(permissions)
        .bind(source)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().map(chunk).collect::<Result<_, _>>()?)
    }

    async fn search_plans(
        &self,
        embedding: &[f32],
        terms: &[String],
        permissions: &[String],
        limit: usize,
    ) -> Result<[(&'static str, String); 2], StoreError> {
        let mut tx = self.pool.begin().await?;
        prepare_vector_scan(&mut tx, limit).await?;
        let explain = |sql: &str| format!("EXPLAIN (ANALYZE, FORMAT TEXT) {sql}");
        let vector_plan: Vec<String> = sqlx::query_scalar(&explain(VECTOR_SQL))
            .bind(Vector::from(embedding.to_vec()))
            .bind(permissions)
            .bind(limit as i64)
            .fetch_all(&mut *tx)
            .await?;
        let ranked = postgres_keywords::weighted_terms(&self.pool, terms).await?;
        let keyword_plan: Vec<String> = sqlx::query_scalar(&explain(keyword_sql()))
            .bind(&ranked.terms)
            .bind(&ranked.weights)
            .bind(&ranked.selects)
            .bind(permissions)
            .bind(limit as i64)
            .fetch_all(&mut *tx)
            .await?;
        tx.rollback().await?;
        Ok([
            ("vector (HNSW)", vector_plan.join("\n")),
            ("keyword (BM25 index)", keyword_plan.join("\n")),
        ])
    }
}

fn hit(row: PgRow) -> Result<Hit, sqlx::Error> {
    Ok(Hit {
        score: row.try_get("score")?,
        chunk: chunk(row)?,
    })
}

fn chunk(row: PgRow) -> Result<RetrievedChunk, sqlx::Error> {
    Ok(RetrievedChunk {
        chunk_id: row.try_get("chunk_id")?,
        source: row.try_get("source")?,
        section: row.try_get("section")?,
        kind: row.try_get("kind")?,
        text: row.try_get("text")?,
    })
}

/// Turns on pgvector's iterative index scans for this transaction.
pub async fn prepare_vector_scan(
    tx: &mut Transaction<'_, Postgres>,
    limit: usize,
) -> Result<(), sqlx::Error> {
    (&mut **tx)
        .execute(sqlx::raw_sql(
            "SET LOCAL hnsw.iterative_scan = relaxed_order",
        ))
        .await?;
    (&mut **tx)
        .execute(sqlx::raw_sql(&format!(
            "SET LOCAL hnsw.ef_search = {}",
            limit.clamp(40, 1000)
        )))
        .await?;
    Ok(())
}

async fn insert_document(
    tx: &mut Transaction<'_, Postgres>,
    document: &NewDocument,
) -> Result<(), StoreError> {
    let document_id: i64 = sqlx::query_scalar(
        "INSERT INTO documents (source, content_hash, title, permissions, metadata)
         VALUES ($1, $2, $3, $4, $5) RETURNING id",
    )
    .bind(&document.source)
    .bind(&document.content_hash)
    .bind(&document.title)
    .bind(&document.permissions)
    .bind(&document.metadata)
    .fetch_one(&mut **tx)
    .await?;
    let chunks = &document.chunks;
    let ids: Vec<&str> = chunks.iter().map(|c| c.chunk_id.as_str()).collect();
    let ordinals: Vec<i32> = chunks.iter().map(|c| c.ordinal as i32).collect();
    let sections: Vec<&str> = chunks.iter().map(|c| c.section.as_str()).collect();
    let kinds: Vec<&str> = chunks.iter().map(|c| c.kind.as_str()).collect();
    let texts: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
    let tokens: Vec<i32> = chunks.iter().map(|c| c.tokens as i32).collect();
    let postings: Vec<Postings> = chunks
        .iter()
        .map(|c| terms::postings(&c.section, &c.text))
        .collect();
    let vectors: Vec<Vector> = chunks
        .iter()
        .map(|c| Vector::from(c.embedding.clone()))
        .collect();
    sqlx::query(
        "INSERT INTO chunks (chunk_id, document_id, ordinal, section, kind, text, tokens, embedding, permissions)
         SELECT t.chunk_id, $1, t.ordinal, t.section, t.kind, t.text, t.tokens, t.embedding, $9
         FROM UNNEST($2::text[], $3::int[], $4::text[], $5::text[], $6::text[], $7::int[], $8::vector[])
              AS t(chunk_id, ordinal, section, kind, text, tokens, embedding)",
    )
    .bind(document_id)
    .bind(&ids)
    .bind(&ordinals)
    .bind(&sections)
    .bind(&kinds)
    .bind(&texts)
    .bind(&tokens)
    .bind(&vectors)
    .bind(&document.permissions)
    .execute(&mut **tx)
    .await?;
    postgres_keywords::insert_postings(tx, document, &postings).await?;
    Ok(())
}
