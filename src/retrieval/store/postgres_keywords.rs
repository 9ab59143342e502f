//! ADAPTER: the keyword index on PostgreSQL (migration 0003): postings written with each
//! document, chunks written before the index existed indexed on migrate, and BM25 ranking in
//! plain SQL with the weights `retrieval::terms` computes, as `sqlite_keywords.rs` does on
//! SQLite.

use super::{NewDocument, StoreError};
use crate::retrieval::terms::{self, Postings, B, K1};
use sqlx::postgres::PgPool;
use sqlx::{Postgres, Row, Transaction};
use std::sync::LazyLock;

/// Each question term with the number of chunks that hold it, and the number of chunks.
const FREQUENCIES_SQL: &str = "
SELECT (SELECT chunks FROM keyword_stats) AS n, q.term,
       (SELECT count(*) FROM chunk_terms t WHERE t.term = q.term) AS df
FROM unnest($1::text[]) AS q(term)";

/// BM25 over the visible chunks: `$1` the terms, `$2` their weights, `$3` the caller's
/// permissions, `$4` the limit.
pub static RANK_SQL: LazyLock<String> = LazyLock::new(|| {
    format!(
        "WITH q AS (SELECT * FROM unnest($1::text[], $2::float8[]) AS q(term, idf)),
         s AS (SELECT greatest(tokens, 1)::float8 / greatest(chunks, 1) AS avgdl FROM keyword_stats),
         hits AS MATERIALIZED (
             SELECT t.chunk_id AS id, c.chunk_id AS name,
                    round(sum(q.idf * t.weight * {k1_plus_1} / (t.weight + {K1} * ({one_minus_b} + {B} * c.term_count / s.avgdl)))::numeric, 9)::float8 AS rank
             FROM q JOIN chunk_terms t ON t.term = q.term JOIN chunks c ON c.id = t.chunk_id CROSS JOIN s
             WHERE cardinality(c.permissions) = 0 OR c.permissions && $3::text[]
             GROUP BY t.chunk_id, c.chunk_id
             ORDER BY rank DESC, name
             LIMIT $4)
         SELECT c.chunk_id, d.source, c.section, c.kind, c.text, h.rank AS score
         FROM hits h JOIN chunks c ON c.id = h.id JOIN documents d ON d.id = c.document_id
         ORDER BY h.rank DESC, h.name",
        k1_plus_1 = K1 + 1.0,
        one_minus_b = 1.0 - B,
    )
});

/// The terms to rank by and their weights; empty when no chunk holds any.
pub async fn weighted_terms(
    pool: &PgPool,
    keywords: &[String],
) -> Result<(Vec<String>, Vec<f64>), StoreError> {
    let terms = terms::query_terms(keywords);
    if terms.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let rows = sqlx::query(FREQUENCIES_SQL)
        .bind(&terms)
        .fetch_all(pool)
        .await?;
    let mut chunks = 0u64;
    let mut frequencies = Vec::with_capacity(rows.len());
    for row in rows {
        chunks = row.try_get::<i64, _>("n")?.max(0) as u64;
        let df: i64 = row.try_get("df")?;
        frequencies.push((row.try_get::<String, _>("term")?, df.max(0) as u64));
    }
    Ok(terms::weighted(chunks, &frequencies).into_iter().unzip())
}

/// Writes the postings of a document's chunks, which are already inserted.
pub async fn insert_postings(
    tx: &mut Transaction<'_, Postgres>,
    document: &NewDocument,
    postings: &[Postings],
) -> Result<(), StoreError> {
    let mut chunk_ids = Vec::new();
    let mut terms = Vec::new();
    let mut weights = Vec::new();
    for (chunk, postings) in document.chunks.iter().zip(postings) {
        for (term, weight) in &postings.terms {
            chunk_ids.push(chunk.chunk_id.as_str());
            terms.push(term.as_str());
            weights.push(*weight);
        }
    }
    sqlx::query(
        "INSERT INTO chunk_terms (term, chunk_id, weight)
         SELECT t.term, c.id, t.weight
         FROM unnest($1::text[], $2::text[], $3::real[]) AS t(chunk, term, weight)
         JOIN chunks c ON c.chunk_id = t.chunk",
    )
    .bind(&chunk_ids)
    .bind(&terms)
    .bind(&weights)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Indexes the chunks written before the keyword index existed (after migration 0003).
pub async fn index_unindexed(tx: &mut Transaction<'_, Postgres>) -> Result<(), StoreError> {
    let rows = sqlx::query("SELECT id, section, text FROM chunks WHERE term_count IS NULL")
        .fetch_all(&mut **tx)
        .await?;
    for row in rows {
        let id: i64 = row.try_get("id")?;
        let postings = terms::postings(row.try_get("section")?, row.try_get("text")?);
        let (terms, weights): (Vec<&str>, Vec<f32>) = postings
            .terms
            .iter()
            .map(|(term, weight)| (term.as_str(), *weight))
            .unzip();
        sqlx::query(
            "INSERT INTO chunk_terms (term, chunk_id, weight)
             SELECT t.term, $1, t.weight FROM unnest($2::text[], $3::real[]) AS t(term, weight)",
        )
        .bind(id)
        .bind(&terms)
        .bind(&weights)
        .execute(&mut **tx)
        .await?;
        sqlx::query("UPDATE chunks SET term_count = $1 WHERE id = $2")
            .bind(postings.length as i32)
            .bind(id)
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}
