//! ADAPTER: the keyword index on SQLite (migration 0002): postings and lengths written with each
//! chunk, chunks written before the index indexed on migrate, and BM25 ranking in SQL with the
//! weights `retrieval::terms` computes. `postgres_keywords.rs` is the same on PostgreSQL.

use super::StoreError;
use crate::retrieval::terms::{self, Postings, B, K1};
use sqlx::{Row, Sqlite, Transaction};

/// Each question term with the number of chunks that hold it, the number of chunks, and the
/// term's place in `?1`. Rows come in `?1`'s order; the caller sorts by the place rather than
/// pay SQLite's `ORDER BY` a temporary B-tree per search.
pub const FREQUENCIES_SQL: &str = "
SELECT (SELECT chunks FROM keyword_stats) AS n, j.value AS term,
       (SELECT count(*) FROM chunk_terms t WHERE t.term = j.value) AS df, j.key AS place
FROM json_each(?1) j";

/// BM25 over the visible chunks that hold a selecting term: `?1` the caller's permissions (as
/// in `VISIBLE`), `?2` the terms as `[{term, idf, selects}, …]`, `?3` the limit.
/// The result's columns are read by position (`sqlite_search::chunk_of`, then the score).
/// `q` is MATERIALIZED: left to itself, SQLite folds it into `scored` and parses `?2` again for
/// every candidate chunk (46 times per answer for the benchmark's question, BENCHMARKS.md).
/// The average length is one of `q`'s columns, worked out once per search rather than once
/// per term of every candidate. One `ORDER BY … LIMIT` picks the winners and orders them.
pub fn rank_sql(visible: &str) -> String {
    format!(
        "WITH q AS MATERIALIZED (
                 SELECT json_extract(j.value, '$.term') AS term, json_extract(j.value, '$.idf') AS idf,
                        json_extract(j.value, '$.selects') AS selects,
                        (SELECT CAST(max(words, 1) AS REAL) / max(chunks, 1) FROM keyword_stats) AS avgdl
                 FROM json_each(?2) j),
         candidates AS (
             SELECT DISTINCT t.chunk_id FROM q JOIN chunk_terms t ON t.term = q.term WHERE q.selects),
         scored AS (
             SELECT k.chunk_id AS id,
                    round(sum(q.idf * t.weight * {k1_plus_1} / (t.weight + {K1} * ({one_minus_b} + {B} * l.words / q.avgdl))), 9) AS rank
             FROM candidates k
             CROSS JOIN q
             JOIN chunk_terms t ON t.term = q.term AND t.chunk_id = k.chunk_id
             JOIN chunk_lengths l ON l.chunk_id = k.chunk_id
             GROUP BY k.chunk_id)
         SELECT c.chunk_id, d.source, c.section, c.kind, c.text, h.rank AS score
         FROM scored h JOIN chunks c ON c.id = h.id JOIN documents d ON d.id = c.document_id
         WHERE {visible}
         ORDER BY h.rank DESC, c.chunk_id
         LIMIT ?3",
        k1_plus_1 = K1 + 1.0,
        one_minus_b = 1.0 - B,
    )
}

/// Writes one chunk's postings and length.
pub async fn insert_postings(
    tx: &mut Transaction<'_, Sqlite>,
    chunk_row: i64,
    postings: &Postings,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO chunk_terms (term, chunk_id, weight)
         SELECT json_extract(j.value, '$[0]'), ?1, json_extract(j.value, '$[1]') FROM json_each(?2) j",
    )
    .bind(chunk_row)
    .bind(serde_json::to_string(&postings.terms).expect("pairs serialize"))
    .execute(&mut **tx)
    .await?;
    sqlx::query("INSERT INTO chunk_lengths (chunk_id, words) VALUES (?, ?)")
        .bind(chunk_row)
        .bind(i64::from(postings.length))
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Indexes the chunks that have no length yet: those written before migration 0002.
pub async fn index_unindexed(tx: &mut Transaction<'_, Sqlite>) -> Result<(), StoreError> {
    let rows = sqlx::query(
        "SELECT c.id, c.section, c.text FROM chunks c
         WHERE NOT EXISTS (SELECT 1 FROM chunk_lengths l WHERE l.chunk_id = c.id)",
    )
    .fetch_all(&mut **tx)
    .await?;
    for row in rows {
        let id: i64 = row.try_get("id")?;
        let postings = terms::postings(row.try_get("section")?, row.try_get("text")?);
        insert_postings(tx, id, &postings).await?;
    }
    Ok(())
}
