//! ADAPTER: the keyword index on SQLite (migration 0002): postings and lengths written with each
//! chunk, chunks written before the index indexed on migrate, and the statements BM25 ranking
//! reads (summed in `sqlite_bm25.rs`) with the weights `retrieval::terms` computes.
//! `postgres_keywords.rs` is the same on PostgreSQL, ranked in its SQL.

use super::StoreError;
use crate::retrieval::terms::{self, Postings};
use sqlx::{Row, Sqlite, Transaction};

/// Each question term with the number of chunks that hold it, the number of chunks, the term's
/// place in `?1` and the average chunk length. Rows come in `?1`'s order; the caller sorts by
/// the place rather than pay SQLite's `ORDER BY` a temporary B-tree per search.
pub const FREQUENCIES_SQL: &str = "
SELECT (SELECT chunks FROM keyword_stats) AS n, j.value AS term,
       (SELECT count(*) FROM chunk_terms t WHERE t.term = j.value) AS df, j.key AS place,
       (SELECT CAST(max(words, 1) AS REAL) / max(chunks, 1) FROM keyword_stats) AS avgdl
FROM json_each(?1) j";

/// The postings of the weighted terms `?1` (a JSON array, in their order), each with the term's
/// place, the chunk's row id, the term's weight and the chunk's length. `sqlite_bm25` sums them.
pub const POSTINGS_SQL: &str = "
SELECT j.key AS place, t.chunk_id, t.weight, l.words
FROM json_each(?1) j
JOIN chunk_terms t ON t.term = j.value
JOIN chunk_lengths l ON l.chunk_id = t.chunk_id";

/// Which of the candidate chunks `?2` (an `rarray` of row ids) the caller may see (`?1`, as in
/// `VISIBLE`), with their chunk ids.
pub fn visible_candidates_sql(visible: &str) -> String {
    format!(
        "SELECT c.id, c.chunk_id FROM rarray(?2) r JOIN chunks c ON c.id = r.value WHERE {visible}"
    )
}

/// SQLite's own rounding of each score of `?1` (an `rarray`) to 9 decimals, in order: the
/// ranking rounds, as PostgreSQL's does, so that the two stores order equal scores alike.
pub const ROUNDED_SQL: &str = "SELECT round(value, 9) FROM rarray(?1)";

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
