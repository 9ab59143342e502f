//! ADAPTER: the embedded store's two searches, read on plain SQLite connections (rusqlite),
//! each search in one call.
//!
//! Why not sqlx here: sqlx runs every SQLite connection on a worker thread of its own and hands
//! each statement, and each streamed row, across threads. A search made at least two such round
//! trips (four when anything matched, plus one per visible chunk for the vector scan), and on an
//! empty store the searches cost about 90 µs of CPU per answer, some 40 µs of it the hops.
//! Here a search on a small store runs in place, on a large one in one hop to the blocking
//! pool, its statements prepared once per connection. Writers stay on sqlx
//! (`sqlite.rs`); WAL lets these readers run beside them.

use super::sqlite_bm25::{self, Posting, Ranked};
use super::sqlite_keywords::{visible_candidates_sql, FREQUENCIES_SQL, POSTINGS_SQL, ROUNDED_SQL};
use super::{Hit, RetrievedChunk, StoreError};
use crate::retrieval::terms::{self, WeightedTerm};
use rusqlite::types::Value;
use rusqlite::vtab::array::Array;
use rusqlite::{Connection, OpenFlags};
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

/// The permission filter, shared by both searches: `?1` is a JSON array of the caller's
/// effective permissions.
pub(super) const VISIBLE: &str = "(c.permissions = '[]' OR EXISTS (
    SELECT 1 FROM chunk_permissions p
    WHERE p.chunk_id = c.id AND p.permission IN (SELECT value FROM json_each(?1))))";

/// Exact vector search reads the visible vectors and keeps the best in a heap.
static VECTOR_SCAN_SQL: LazyLock<String> =
    LazyLock::new(|| format!("SELECT c.id, c.embedding FROM chunks c WHERE {VISIBLE}"));

/// The winners' text, fetched by id with the filter applied again; the chunk's columns first,
/// as `chunk_of` reads them, then the id. The ids are joined as a table, one lookup each:
/// `IN (SELECT …)` would first copy them into a temporary B-tree.
static FETCH_SQL: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT c.chunk_id, d.source, c.section, c.kind, c.text, c.id
         FROM json_each(?2) j
         JOIN chunks c ON c.id = j.value
         JOIN documents d ON d.id = c.document_id
         WHERE {VISIBLE}"
    )
});

/// The keyword candidates the caller may see (`sqlite_keywords.rs`).
static VISIBLE_CANDIDATES_SQL: LazyLock<String> = LazyLock::new(|| visible_candidates_sql(VISIBLE));

pub fn vector_scan_sql() -> &'static str {
    &VECTOR_SCAN_SQL
}

/// The keyword search's two statements whose plans depend on the store: the postings read and
/// the permission filter of the candidates.
pub fn keyword_sql() -> [&'static str; 2] {
    [POSTINGS_SQL, &VISIBLE_CANDIDATES_SQL]
}

/// Idle connections kept for the next search; more may be open while searches run.
const MAX_IDLE: usize = 16;
/// The most vectors a scan may read for the next searches to run in place.
const READ_IN_PLACE_UP_TO: usize = 1_000;
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Read-only connections to the store's file, opened when first needed.
pub struct Readers {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
    /// The vectors the last scan read; `usize::MAX` before the first.
    scanned: AtomicUsize,
}

impl Readers {
    pub fn new(path: PathBuf) -> Arc<Readers> {
        Arc::new(Readers {
            path,
            idle: Mutex::new(Vec::new()),
            scanned: AtomicUsize::new(usize::MAX),
        })
    }

    /// Runs `work` on a connection: in place while the last vector scan was small (a few
    /// hundred microseconds at most, less than a hop to another thread costs the answer), on
    /// the blocking pool otherwise and until a scan has been seen, so that a large store's scan
    /// never holds up the runtime's workers.
    pub async fn read<T, F>(self: &Arc<Self>, work: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    {
        if self.scanned.load(AtomicOrdering::Relaxed) <= READ_IN_PLACE_UP_TO {
            return self.read_here(work);
        }
        let readers = Arc::clone(self);
        tokio::task::spawn_blocking(move || readers.read_here(work))
            .await
            .map_err(|e| StoreError::Query(format!("a store read stopped: {e}")))?
    }

    /// Notes how many vectors a scan read: the next reads choose where to run by it.
    pub fn note_scanned(&self, vectors: usize) {
        self.scanned.store(vectors, AtomicOrdering::Relaxed);
    }

    fn read_here<T>(
        &self,
        work: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, StoreError> {
        let connection = self.take()?;
        let result = work(&connection);
        self.give_back(connection);
        result.map_err(query_error)
    }

    /// Closes the idle connections (the store is being closed).
    pub fn close(&self) {
        self.idle.lock().expect("readers lock").clear();
    }

    fn take(&self) -> Result<Connection, StoreError> {
        if let Some(connection) = self.idle.lock().expect("readers lock").pop() {
            return Ok(connection);
        }
        self.open().map_err(|e| StoreError::Connect {
            location: self.path.display().to_string(),
            message: e.to_string(),
        })
    }

    fn give_back(&self, connection: Connection) {
        let mut idle = self.idle.lock().expect("readers lock");
        if idle.len() < MAX_IDLE {
            idle.push(connection);
        }
    }

    fn open(&self) -> rusqlite::Result<Connection> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let connection = Connection::open_with_flags(&self.path, flags)?;
        rusqlite::vtab::array::load_module(&connection)?;
        connection.busy_timeout(BUSY_TIMEOUT)?;
        connection.pragma_update(None, "query_only", true)?;
        Ok(connection)
    }
}

fn query_error(error: rusqlite::Error) -> StoreError {
    StoreError::Query(error.to_string())
}

/// The `limit` visible chunks nearest to `embedding` by cosine, best first, and how many
/// vectors were read to find them.
pub fn vector_search(
    connection: &Connection,
    embedding: &[f32],
    allowed: &str,
    limit: usize,
) -> rusqlite::Result<(Vec<Hit>, usize)> {
    let query_norm = embedding.iter().map(|x| x * x).sum::<f32>().sqrt();
    let mut best: BinaryHeap<Candidate> = BinaryHeap::with_capacity(limit + 1);
    let mut scan = connection.prepare_cached(vector_scan_sql())?;
    let mut rows = scan.query([allowed])?;
    let mut scanned = 0;
    while let Some(row) = rows.next()? {
        scanned += 1;
        let blob = row.get_ref(1)?.as_blob()?;
        best.push(Candidate {
            score: cosine(embedding, query_norm, blob),
            id: row.get(0)?,
        });
        if best.len() > limit {
            best.pop();
        }
    }
    if best.is_empty() {
        return Ok((Vec::new(), scanned));
    }
    let winners = best
        .into_sorted_vec()
        .into_iter()
        .map(|c| (c.id, f64::from(c.score)));
    Ok((winning_hits(connection, allowed, winners)?, scanned))
}

/// The hits of `winners` (row id, score), in their order, with their chunks' text: only those
/// the caller may see, as the filter is applied again.
fn winning_hits(
    connection: &Connection,
    allowed: &str,
    winners: impl Iterator<Item = (i64, f64)>,
) -> rusqlite::Result<Vec<Hit>> {
    let winners: Vec<(i64, f64)> = winners.collect();
    let ids: Vec<i64> = winners.iter().map(|(row, _)| *row).collect();
    let ids = serde_json::to_string(&ids).expect("ids serialize");
    let mut by_id = HashMap::with_capacity(winners.len());
    let mut fetch = connection.prepare_cached(&FETCH_SQL)?;
    let mut rows = fetch.query((allowed, ids.as_str()))?;
    while let Some(row) = rows.next()? {
        by_id.insert(row.get::<_, i64>(AFTER_CHUNK)?, chunk_of(row)?);
    }
    Ok(winners
        .into_iter()
        .filter_map(|(row, score)| by_id.remove(&row).map(|chunk| Hit { chunk, score }))
        .collect())
}

/// The `limit` best BM25 matches for `keywords` among the visible chunks, best first: the
/// postings read by the index, summed in `sqlite_bm25`, the candidates filtered by permission
/// and their scores rounded in SQL, the winners' text read last.
pub fn keyword_search(
    connection: &Connection,
    keywords: &[String],
    allowed: &str,
    limit: usize,
) -> rusqlite::Result<Vec<Hit>> {
    let Some(question) = weighted_terms(connection, keywords)? else {
        return Ok(Vec::new());
    };
    let postings = postings(connection, &question.terms)?;
    let sums = sqlite_bm25::candidate_sums(&question.terms, question.average_length, &postings);
    let visible = visible_candidates(connection, allowed, &sums)?;
    let scores = rounded(connection, visible.iter().map(|(_, _, sum)| *sum))?;
    let ranked = visible
        .into_iter()
        .zip(scores)
        .map(|((row, chunk_id, _), score)| Ranked {
            row,
            chunk_id,
            score,
        })
        .collect();
    let winners = sqlite_bm25::best(ranked, limit)
        .into_iter()
        .map(|w| (w.row, w.score));
    winning_hits(connection, allowed, winners)
}

/// The question's terms as the store ranks by them, and the store's average chunk length.
pub struct WeightedQuestion {
    pub terms: Vec<WeightedTerm>,
    pub average_length: f64,
}

/// The terms to rank by, weighted; `None` when no chunk holds any.
pub fn weighted_terms(
    connection: &Connection,
    keywords: &[String],
) -> rusqlite::Result<Option<WeightedQuestion>> {
    let terms = terms::query_terms(keywords);
    if terms.is_empty() {
        return Ok(None);
    }
    let terms = serde_json::to_string(&terms).expect("strings serialize");
    let mut frequencies = connection.prepare_cached(FREQUENCIES_SQL)?;
    let mut rows = frequencies
        .query_map([terms], |row| {
            Ok((
                row.get::<_, i64>(3)?,
                (row.get(0)?, row.get(1)?, row.get(2)?),
                row.get::<_, f64>(4)?,
            ))
        })?
        .collect::<rusqlite::Result<Vec<(i64, (i64, String, i64), f64)>>>()?;
    // Every row carries the same average, and there is a row per question term.
    let average_length = rows.first().map_or(1.0, |(_, _, average)| *average);
    rows.sort_unstable_by_key(|(place, _, _)| *place);
    let terms = terms::weighted_counts(rows.into_iter().map(|(_, count, _)| count).collect());
    Ok((!terms.is_empty()).then_some(WeightedQuestion {
        terms,
        average_length,
    }))
}

/// The weighted terms as `POSTINGS_SQL`'s `?1`.
pub fn terms_json(terms: &[WeightedTerm]) -> String {
    let words: Vec<&str> = terms.iter().map(|t| t.term.as_str()).collect();
    serde_json::to_string(&words).expect("strings serialize")
}

fn postings(connection: &Connection, terms: &[WeightedTerm]) -> rusqlite::Result<Vec<Posting>> {
    let mut read = connection.prepare_cached(POSTINGS_SQL)?;
    let rows = read.query_map([terms_json(terms)], |row| {
        Ok(Posting {
            place: row.get::<_, i64>(0)? as usize,
            chunk: row.get(1)?,
            weight: row.get(2)?,
            words: row.get(3)?,
        })
    })?;
    rows.collect()
}

/// The candidates (row id, unrounded score) the caller may see, with their chunk ids, in the
/// order of `sums`.
fn visible_candidates(
    connection: &Connection,
    allowed: &str,
    sums: &[(i64, f64)],
) -> rusqlite::Result<Vec<(i64, String, f64)>> {
    if sums.is_empty() {
        return Ok(Vec::new());
    }
    let rows: Array = Rc::new(sums.iter().map(|(row, _)| Value::Integer(*row)).collect());
    let mut filter = connection.prepare_cached(&VISIBLE_CANDIDATES_SQL)?;
    let mut names: HashMap<i64, String> = filter
        .query_map((allowed, rows), |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(sums
        .iter()
        .filter_map(|(row, sum)| names.remove(row).map(|name| (*row, name, *sum)))
        .collect())
}

/// `sums` rounded to 9 decimals by SQLite's `round()`, in order.
fn rounded(connection: &Connection, sums: impl Iterator<Item = f64>) -> rusqlite::Result<Vec<f64>> {
    let values: Array = Rc::new(sums.map(Value::Real).collect());
    if values.is_empty() {
        return Ok(Vec::new());
    }
    let mut round = connection.prepare_cached(ROUNDED_SQL)?;
    let rounded = round
        .query_map([values], |row| row.get(0))?
        .collect::<rusqlite::Result<Vec<f64>>>()?;
    Ok(rounded)
}

/// SQLite's plan for `sql` with `binds`, one line per step.
pub fn query_plan(connection: &Connection, sql: &str, binds: &[&str]) -> rusqlite::Result<String> {
    let mut explain = connection.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))?;
    let details = explain
        .query_map(rusqlite::params_from_iter(binds), |row| {
            row.get::<_, String>("detail")
        })?
        .collect::<rusqlite::Result<Vec<String>>>()?;
    Ok(details.join("\n"))
}

/// The column after the chunk's five in both searches' rows: the vector winners' id, the keyword
/// hits' score.
const AFTER_CHUNK: usize = 5;

/// The chunk of a row that starts with `chunk_id, source, section, kind, text`, as both searches'
/// rows do: read by position, since a lookup by name compares every column's name per value.
fn chunk_of(row: &rusqlite::Row<'_>) -> rusqlite::Result<RetrievedChunk> {
    Ok(RetrievedChunk {
        chunk_id: row.get(0)?,
        source: row.get(1)?,
        section: row.get(2)?,
        kind: row.get(3)?,
        text: row.get(4)?,
    })
}

/// A candidate in the bounded heap: the heap keeps the worst on top to evict it.
struct Candidate {
    score: f32,
    id: i64,
}

impl PartialEq for Candidate {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Candidate {}
impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: a higher score is "smaller", so the heap's top is the weakest candidate.
        other
            .score
            .total_cmp(&self.score)
            .then_with(|| self.id.cmp(&other.id))
    }
}

/// Lanes of the cosine's sums. One running sum must add in order, which keeps the loop scalar;
/// eight sums added together at the end let it run on vector registers. They round differently
/// from one sum in the last bits only.
const LANES: usize = 8;

/// Cosine of `query` (whose norm is `query_norm`) and the little-endian `f32`s of `blob`, over
/// as many dimensions as both hold.
fn cosine(query: &[f32], query_norm: f32, blob: &[u8]) -> f32 {
    let dimensions = query.len().min(blob.len() / 4);
    let whole = dimensions / LANES * LANES;
    // Two passes, each with one kind of term: summed in one loop, the compiler pairs each
    // dimension's two products in a register instead of filling registers with lanes.
    let mut dot = laned_sum(&query[..whole], blob, |q, v| q * v);
    let mut norm = laned_sum(&query[..whole], blob, |_, v| v * v);
    for (index, q) in query.iter().enumerate().take(dimensions).skip(whole) {
        let v = f32_at(blob, index);
        dot += q * v;
        norm += v * v;
    }
    if norm == 0.0 || query_norm == 0.0 {
        0.0
    } else {
        dot / (norm.sqrt() * query_norm)
    }
}

/// The sum of `term(q, v)` over whole lanes of `query` and the `f32`s of `blob`.
fn laned_sum(query: &[f32], blob: &[u8], term: impl Fn(f32, f32) -> f32) -> f32 {
    let mut lanes = [0f32; LANES];
    for (q, bytes) in query.chunks_exact(LANES).zip(blob.chunks_exact(4 * LANES)) {
        for (lane, sum) in lanes.iter_mut().enumerate() {
            *sum += term(q[lane], f32_at(bytes, lane));
        }
    }
    lanes.iter().sum()
}

fn f32_at(bytes: &[u8], index: usize) -> f32 {
    let at = 4 * index;
    f32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn blob_of(vector: &[f32]) -> Vec<u8> {
        vector.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    /// `cosine` in double precision, one dimension after another: the sums over the dimensions
    /// both hold, divided by the query's whole norm.
    fn reference(query: &[f32], query_norm: f32, stored: &[f32]) -> f64 {
        let (dot, norm) = query
            .iter()
            .zip(stored)
            .map(|(&q, &v)| (f64::from(q), f64::from(v)))
            .fold((0.0, 0.0), |(dot, norm), (q, v)| {
                (dot + q * v, norm + v * v)
            });
        if norm == 0.0 || query_norm == 0.0 {
            0.0
        } else {
            dot / (norm.sqrt() * f64::from(query_norm))
        }
    }

    fn norm_of(vector: &[f32]) -> f32 {
        vector.iter().map(|x| x * x).sum::<f32>().sqrt()
    }

    proptest! {
        #[test]
        fn the_laned_cosine_agrees_with_one_sum_in_double_precision(
            pairs in proptest::collection::vec((-1.0f32..1.0, -1.0f32..1.0), 0..100),
            stored_shorter_by in 0usize..3,
        ) {
            let (query, stored): (Vec<f32>, Vec<f32>) = pairs.into_iter().unzip();
            let stored = &stored[..stored.len().saturating_sub(stored_shorter_by)];
            let query_norm = norm_of(&query);
            let laned = f64::from(cosine(&query, query_norm, &blob_of(stored)));
            let expected = reference(&query, query_norm, stored);
            prop_assert!((laned - expected).abs() < 1e-5, "{laned} against {expected}");
        }
    }

    #[test]
    fn an_empty_or_zero_vector_scores_zero() {
        let query = [0.5f32; 20];
        assert_eq!(cosine(&query, norm_of(&query), &blob_of(&[0.0; 20])), 0.0);
        assert_eq!(cosine(&query, norm_of(&query), &[]), 0.0);
        assert_eq!(cosine(&[0.0; 20], 0.0, &blob_of(&query)), 0.0);
    }

    #[test]
    fn a_vector_is_nearest_to_itself_whatever_its_length() {
        for length in [1, 7, 8, 9, 768, 1_030] {
            let vector: Vec<f32> = (0..length).map(|i| ((i * 37) % 11) as f32 - 5.0).collect();
            let score = cosine(&vector, norm_of(&vector), &blob_of(&vector));
            assert!((score - 1.0).abs() < 1e-5, "{length}: {score}");
        }
    }
}
