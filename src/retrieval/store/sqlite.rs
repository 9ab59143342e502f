//! ADAPTER: the embedded default store, one SQLite file (sqlx) in the user's data directory.
//! Vectors are little-endian `f32` blobs searched exactly; the keyword index is the library's
//! own (`sqlite_keywords.rs`, BM25 like the PostgreSQL store);
//! permissions are rows of an indexed side table so the search filter can join on them.
//! The two searches read on connections of their own (`sqlite_search.rs`, rusqlite).
//!
//! Writers open `BEGIN IMMEDIATE` transactions: SQLite then admits one writer at a time across
//! processes, and a second ingest waits (busy timeout) instead of failing or duplicating.

use super::migrations::{self, SQLITE};
use super::sqlite_keywords;
use super::sqlite_search::{self, VISIBLE};
use super::{
    ChunkStore, Hit, NewDocument, PageEntry, RetrievedChunk, StoreError, StoredDocument,
    WriteOutcome, SETTING_DIM,
};
use async_trait::async_trait;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{Executor, Row, Sqlite, Transaction};
use std::path::Path;
use std::time::Duration;

pub struct SqliteStore {
    pool: SqlitePool,
    /// The searches' own connections (`sqlite_search.rs`).
    readers: std::sync::Arc<sqlite_search::Readers>,
    location: String,
}

impl SqliteStore {
    pub async fn open(path: &Path) -> Result<SqliteStore, StoreError> {
        let connect_error = |message: String| StoreError::Connect {
            location: path.display().to_string(),
            message,
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| connect_error(e.to_string()))?;
        }
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .foreign_keys(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(30));
        // A connection to a local file does not go stale: no ping (a round trip to the
        // connection's worker thread) before every statement.
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .test_before_acquire(false)
            .connect_with(options)
            .await
            .map_err(|e| connect_error(e.to_string()))?;
        Ok(SqliteStore {
            pool,
            readers: sqlite_search::Readers::new(path.to_path_buf()),
            location: path.display().to_string(),
        })
    }

    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }
}

#[async_trait]
impl ChunkStore for SqliteStore {
    fn backend(&self) -> &'static str {
        "sqlite"
    }

    fn conversations(&self) -> std::sync::Arc<dyn crate::conversations::ConversationStore> {
        std::sync::Arc::new(super::conversations_sqlite::SqliteConversations::new(
            self.pool.clone(),
        ))
    }

    async fn close(&self) {
        self.readers.close();
        self.pool.close().await;
    }

    async fn migrate(&self, dim: usize) -> Result<Vec<u32>, StoreError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        (&mut *tx)
            .execute(sqlx::raw_sql(
                "CREATE TABLE IF NOT EXISTS agent_migrations (
                     version INTEGER PRIMARY KEY,
                     name TEXT NOT NULL,
                     applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))",
            ))
            .await?;
        let applied: Vec<i64> = sqlx::query_scalar("SELECT version FROM agent_migrations")
            .fetch_all(&mut *tx)
            .await?;
        let mut newly = Vec::new();
        let todo: Vec<&migrations::Migration> = SQLITE
            .iter()
            .filter(|m| !applied.contains(&i64::from(m.version)))
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
            sqlx::query("INSERT INTO agent_migrations (version, name) VALUES (?, ?)")
                .bind(i64::from(migration.version))
                .bind(migration.name)
                .execute(&mut *tx)
                .await?;
            newly.push(migration.version);
        }
        sqlx::query("INSERT OR IGNORE INTO store_settings (key, value) VALUES (?, ?)")
            .bind(SETTING_DIM)
            .bind(dim.to_string())
            .execute(&mut *tx)
            .await?;
        sqlite_keywords::index_unindexed(&mut tx).await?;
        tx.commit().await?;
        Ok(newly)
    }

    fn location(&self) -> &str {
        &self.location
    }

    fn migrations(&self) -> &'static [migrations::Migration] {
        migrations::SQLITE
    }

    async fn applied_migrations(&self) -> Result<Vec<u32>, StoreError> {
        let exists: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'agent_migrations'",
        )
        .fetch_one(&self.pool)
        .await?;
        if exists == 0 {
            return Ok(Vec::new());
        }
        let versions: Vec<i64> =
            sqlx::query_scalar("SELECT version FROM agent_migrations ORDER BY version")
                .fetch_all(&self.pool)
                .await?;
        Ok(versions.into_iter().map(|v| v as u32).collect())
    }

    async fn read_setting(&self, key: &str) -> Result<Option<String>, StoreError> {
        Ok(
            sqlx::query_scalar("SELECT value FROM store_settings WHERE key = ?")
                .bind(key)
                .fetch_optional(&self.pool)
                .await?,
        )
    }

    async fn write_setting(&self, key: &str, value: &str, replace: bool) -> Result<(), StoreError> {
        let sql = if replace {
            "INSERT INTO store_settings (key, value) VALUES (?, ?) \
             ON CONFLICT (key) DO UPDATE SET value = excluded.value"
        } else {
            "INSERT INTO store_settings (key, value) VALUES (?, ?) \
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
            "SELECT d.source, d.content_hash, d.permissions = '[]' AS public,
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
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let holder: Option<String> =
            sqlx::query_scalar("SELECT source FROM documents WHERE content_hash = ?")
                .bind(&document.content_hash)
                .fetch_optional(&mut *tx)
                .await?;
        if holder.as_deref() == Some(document.source.as_str()) {
            return Ok(WriteOutcome::Unchanged);
        }
        let replaced = sqlx::query("DELETE FROM documents WHERE source = ?")
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
        let result = sqlx::query("DELETE FROM documents WHERE source = ?")
            .bind(source)
            .execute(&self.pool)
            .await?;
        Ok(result.rows_affected() > 0)
    }

    async fn reset(&self) -> Result<(), StoreError> {
        (&self.pool)
            .execute(sqlx::raw_sql(
                "DROP TABLE IF EXISTS chunks_fts;
             DROP TABLE IF EXISTS chunk_terms;
             DROP TABLE IF EXISTS chunk_lengths;
             DROP TABLE IF EXISTS keyword_stats;
             DROP TABLE IF EXISTS chunk_permissions;
             DROP TABLE IF EXISTS chunks;
             DROP TABLE IF EXISTS documents;
             DROP TABLE IF EXISTS store_settings;
             DROP TABLE IF EXISTS agent_migrations;",
            ))
            .await?;
        Ok(())
    }

    async fn optimize(&self) -> Result<(), StoreError> {
        (&self.pool)
            .execute(sqlx::raw_sql("PRAGMA optimize"))
            .await?;
        Ok(())
    }

    async fn vector_search(
        &self,
        embedding: &[f32],
        permissions: &[String],
        limit: usize,
    ) -> Result<Vec<Hit>, StoreError> {
        let allowed = serde_json::to_string(permissions).expect("strings serialize");
        let embedding = embedding.to_vec();
        let readers = self.readers.clone();
        self.readers
            .read(move |db| {
                let (hits, scanned) =
                    sqlite_search::vector_search(db, &embedding, &allowed, limit)?;
                readers.note_scanned(scanned);
                Ok(hits)
            })
            .await
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
        let allowed = serde_json::to_string(permissions).expect("strings serialize");
        let terms = terms.to_vec();
        self.readers
            .read(move |db| sqlite_search::keyword_search(db, &terms, &allowed, limit))
            .await
    }

    async fn visible_pages(&self, permissions: &[String]) -> Result<Vec<PageEntry>, StoreError> {
        Ok(sqlx::query_as(&format!(
            "SELECT d.source, d.title FROM documents d
             WHERE EXISTS (SELECT 1 FROM chunks c WHERE c.document_id = d.id AND {VISIBLE})
             ORDER BY d.source"
        ))
        .bind(serde_json::to_string(permissions).expect("strings serialize"))
        .fetch_all(&self.pool)
        .await?)
    }

    async fn page_chunks(
        &self,
        source: &str,
        permissions: &[String],
    ) -> Result<Vec<RetrievedChunk>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT c.chunk_id, d.source, c.section, c.kind, c.text
             FROM chunks c JOIN documents d ON d.id = c.document_id
             WHERE d.source = ?2 AND {VISIBLE}
             ORDER BY c.ordinal"
        ))
        .bind(serde_json::to_string(permissions).expect("strings serialize"))
        .bind(source)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.iter().map(chunk_of).collect::<Result<_, _>>()?)
    }

    async fn search_plans(
        &self,
        _embedding: &[f32], // the exact scan's plan does not depend on the vector
        terms: &[String],
        permissions: &[String],
        _limit: usize, // neither plan depends on the limit
    ) -> Result<[(&'static str, String); 2], StoreError> {
        let allowed = serde_json::to_string(permissions).expect("strings serialize");
        let terms = terms.to_vec();
        let (vector_plan, keyword_plan) = self
            .readers
            .read(move |db| {
                let vector_plan =
                    sqlite_search::query_plan(db, sqlite_search::vector_scan_sql(), &[&allowed])?;
                let weighted = sqlite_search::weighted_terms(db, &terms)?;
                let terms = weighted.map_or_else(
                    || "[]".to_string(),
                    |question| sqlite_search::terms_json(&question.terms),
                );
                let [postings, visible] = sqlite_search::keyword_sql();
                let keyword_plan = [
                    sqlite_search::query_plan(db, postings, &[&terms])?,
                    // A string where the candidates' `rarray` goes reads as none: the plan
                    // does not depend on them.
                    sqlite_search::query_plan(db, visible, &[&allowed, "[]"])?,
                ]
                .join("\n");
                Ok((vector_plan, keyword_plan))
            })
            .await?;
        Ok([
            ("vector (exact scan)", vector_plan),
            ("keyword (BM25 index)", keyword_plan),
        ])
    }
}

fn chunk_of(row: &sqlx::sqlite::SqliteRow) -> Result<RetrievedChunk, sqlx::Error> {
    Ok(RetrievedChunk {
        chunk_id: row.try_get("chunk_id")?,
        source: row.try_get("source")?,
        section: row.try_get("section")?,
        kind: row.try_get("kind")?,
        text: row.try_get("text")?,
    })
}

async fn insert_document(
    tx: &mut Transaction<'_, Sqlite>,
    document: &NewDocument,
) -> Result<(), StoreError> {
    let permissions = serde_json::to_string(&document.permissions).expect("strings serialize");
    let document_id: i64 = sqlx::query_scalar(
        "INSERT INTO documents (source, content_hash, title, permissions, metadata)
         VALUES (?, ?, ?, ?, ?) RETURNING id",
    )
    .bind(&document.source)
    .bind(&document.content_hash)
    .bind(&document.title)
    .bind(&permissions)
    .bind(document.metadata.to_string())
    .fetch_one(&mut **tx)
    .await?;
    for chunk in &document.chunks {
        let postings = crate::retrieval::terms::postings(&chunk.section, &chunk.text);
        let row_id: i64 = sqlx::query_scalar(
            "INSERT INTO chunks (chunk_id, document_id, ordinal, section, kind, text, tokens, embedding, permissions)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        )
        .bind(&chunk.chunk_id)
        .bind(document_id)
        .bind(chunk.ordinal as i64)
        .bind(&chunk.section)
        .bind(&chunk.kind)
        .bind(&chunk.text)
        .bind(chunk.tokens as i64)
        .bind(vector_blob(&chunk.embedding))
        .bind(&permissions)
        .fetch_one(&mut **tx)
        .await?;
        sqlite_keywords::insert_postings(tx, row_id, &postings).await?;
        for permission in &document.permissions {
            sqlx::query(
                "INSERT OR IGNORE INTO chunk_permissions (permission, chunk_id) VALUES (?, ?)",
            )
            .bind(permission)
            .bind(row_id)
            .execute(&mut **tx)
            .await?;
        }
    }
    Ok(())
}

/// Little-endian `f32`s, 4 bytes a dimension.
pub fn vector_blob(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|v| v.to_le_bytes()).collect()
}

pub fn blob_vector(blob: &[u8]) -> Vec<f32> {
    blob.chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_round_trip_through_blobs() {
        let v = vec![0.5f32, -1.25, 3.0e-7];
        assert_eq!(blob_vector(&vector_blob(&v)), v);
        assert_eq!(vector_blob(&v).len(), 12);
    }
}
