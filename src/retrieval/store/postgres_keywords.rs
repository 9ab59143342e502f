//! ADAPTER: the keyword index on PostgreSQL (migration 0003): postings and lengths written with
//! each document, chunks written before the index existed indexed on migrate, and BM25 ranking
//! in plain SQL with the weights `retrieval::terms` computes, as `sqlite_keywords.rs` does on
//! SQLite. How many chunks hold each term is kept in `term_stats` by a trigger, so weighing a
//! question's terms reads one row per term.

use super::{NewDocument, StoreError};
use crate::retrieval::terms::{self, Postings, WeightedTerm, B, K1};
use sqlx::postgres::PgPool;
use sqlx::{Postgres, Row, Transaction};
use std::sync::LazyLock;

/// Each question term with the number of chunks that hold it, and the number of chunks.
const FREQUENCIES_SQL: &str = "
SELECT (SELECT chunks FROM keyword_stats) AS n, q.term,
       coalesce((SELECT s.chunks FROM term_stats s WHERE s.term = q.term), 0) AS df
FROM unnest($1::text[]) WITH ORDINALITY AS q(term, position)
ORDER BY q.position";

/// BM25 over the visible chunks that hold a selecting term: `$1` the terms, `$2` their weights,
/// `$3` whether each selects, `$4` the caller's permissions, `$5` the limit. Ties go to the
/// smaller chunk id, compared byte by byte as SQLite does.
pub static RANK_SQL: LazyLock<String> = LazyLock::new(|| {
    format!(
        "WITH q AS (SELECT * FROM unnest($1::text[], $2::float8[], $3::bool[]) AS q(term, idf, selects)),
         s AS (SELECT greatest(words, 1)::float8 / greatest(chunks, 1) AS avgdl FROM keyword_stats),
         candidates AS (
             SELECT DISTINCT t.chunk_id FROM q JOIN chunk_terms t ON t.term = q.term WHERE q.selects),
         scored AS MATERIALIZED (
             SELECT k.chunk_id AS id,
                    round(sum(q.idf * t.weight * {k1_plus_1} / (t.weight + {K1} * ({one_minus_b} + {B} * l.words / s.avgdl)))::numeric, 9)::float8 AS rank
             FROM candidates k
             CROSS JOIN q
             JOIN chunk_terms t ON t.term = q.term AND t.chunk_id = k.chunk_id
             JOIN chunk_lengths l ON l.chunk_id = k.chunk_id
             CROSS JOIN s
             GROUP BY k.chunk_id),
         hits AS MATERIALIZED (
             SELECT h.id, c.chunk_id AS name, h.rank
             FROM scored h JOIN chunks c ON c.id = h.id
             WHERE cardinality(c.permissions) = 0 OR c.permissions && $4::text[]
             ORDER BY h.rank DESC, c.chunk_id COLLATE \"C\"
             LIMIT $5)
         SELECT c.chunk_id, d.source, c.section, c.kind, c.text, h.rank AS score
         FROM hits h JOIN chunks c ON c.id = h.id JOIN documents d ON d.id = c.document_id
         ORDER BY h.rank DESC, h.name COLLATE \"C\"",
        k1_plus_1 = K1 + 1.0,
        one_minus_b = 1.0 - B,
    )
});

/// The question's terms as `RANK_SQL` binds them.
pub struct RankTerms {
    pub terms: Vec<String>,
    pub weights: Vec<f64>,
    pub selects: Vec<bool>,
}

/// The terms to rank by, weighted; empty when no chunk holds any.
pub async fn weighted_terms(pool: &PgPool, keywords: &[String]) -> Result<RankTerms, StoreError> {
    let terms = terms::query_terms(keywords);
    let mut ranked = RankTerms {
        terms: Vec::new(),
        weights: Vec::new(),
        selects: Vec::new(),
    };
    if terms.is_empty() {
        return Ok(ranked);
    }
    let counts: Vec<(i64, String, i64)> = sqlx::query_as(FREQUENCIES_SQL)
        .bind(&terms)
        .fetch_all(pool)
        .await?;
    for WeightedTerm { term, idf, selects } in terms::weighted_counts(counts) {
        ranked.terms.push(term);
        ranked.weights.push(idf);
        ranked.selects.push(selects);
    }
    Ok(ranked)
}

/// Writes the postings and lengths of a document's chunks, which are already inserted.
pub async fn insert_postings(
    tx: &mut Transaction<'_, Postgres>,
    document: &NewDocument,
    postings: &[Postings],
) -> Result<(), StoreError> {
    let chunk_names: Vec<&str> = document
        .chunks
        .iter()
        .map(|chunk| chunk.chunk_id.as_str())
        .collect();
    let (mut owners, mut terms, mut weights) = (Vec::new(), Vec::new(), Vec::new());
    for (name, postings) in chunk_names.iter().zip(postings) {
        for (term, weight) in &postings.terms {
            owners.push(*name);
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
    .bind(&owners)
    .bind(&terms)
    .bind(&weights)
    .execute(&mut **tx)
    .await?;
    let words: Vec<i32> = postings.iter().map(|p| p.length as i32).collect();
    sqlx::query(
        "INSERT INTO chunk_lengths (chunk_id, words)
         SELECT c.id, t.words FROM unnest($1::text[], $2::int[]) AS t(chunk, words)
         JOIN chunks c ON c.chunk_id = t.chunk",
    )
    .bind(&chunk_names)
    .bind(&words)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Chunks indexed per round trip by [`index_unindexed`].
const INDEX_BATCH: i64 = 2000;

/// Indexes the chunks that have no length yet: those written before migration 0003.
pub async fn index_unindexed(tx: &mut Transaction<'_, Postgres>) -> Result<(), StoreError> {
    while index_batch(tx).await? {}
    Ok(())
}

/// Indexes up to [`INDEX_BATCH`] unindexed chunks; false when there were none.
async fn index_batch(tx: &mut Transaction<'_, Postgres>) -> Result<bool, StoreError> {
    let rows = sqlx::query(
        "SELECT c.id, c.section, c.text FROM chunks c
         WHERE NOT EXISTS (SELECT 1 FROM chunk_lengths l WHERE l.chunk_id = c.id)
         ORDER BY c.id LIMIT $1",
    )
    .bind(INDEX_BATCH)
    .fetch_all(&mut **tx)
    .await?;
    if rows.is_empty() {
        return Ok(false);
    }
    let (mut owners, mut terms, mut weights) = (Vec::new(), Vec::new(), Vec::new());
    let (mut ids, mut words) = (Vec::new(), Vec::new());
    for row in rows {
        let id: i64 = row.try_get("id")?;
        let postings = terms::postings(row.try_get("section")?, row.try_get("text")?);
        for (term, weight) in postings.terms {
            owners.push(id);
            terms.push(term);
            weights.push(weight);
        }
        ids.push(id);
        words.push(postings.length as i32);
    }
    sqlx::query(
        "INSERT INTO chunk_terms (term, chunk_id, weight)
         SELECT * FROM unnest($1::text[], $2::bigint[], $3::real[])",
    )
    .bind(&terms)
    .bind(&owners)
    .bind(&weights)
    .execute(&mut **tx)
    .await?;
    sqlx::query(
        "INSERT INTO chunk_lengths (chunk_id, words)
         SELECT * FROM unnest($1::bigint[], $2::int[])",
    )
    .bind(&ids)
    .bind(&words)
    .execute(&mut **tx)
    .await?;
    Ok(true)
}
