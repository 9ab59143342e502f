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

use super::sqlite_keywords::{rank_sql, FREQUENCIES_SQL};
use super::{Hit, RetrievedChunk, StoreError};
use crate::retrieval::terms;
use rusqlite::{Connection, OpenFlags};
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};
use std::path::PathBuf;
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

/// The winners' text, fetched by id with the filter applied again.
static FETCH_SQL: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT c.id, c.chunk_id, d.source, c.section, c.kind, c.text
         FROM chunks c JOIN documents d ON d.id = c.document_id
         WHERE c.id IN (SELECT value FROM json_each(?2)) AND {VISIBLE}"
    )
});

/// BM25 over the keyword index (`sqlite_keywords.rs`).
static KEYWORD_SQL: LazyLock<String> = LazyLock::new(|| rank_sql(VISIBLE));

pub fn vector_scan_sql() -> &'static str {
    &VECTOR_SCAN_SQL
}

pub fn keyword_sql() -> &'static str {
    &KEYWORD_SQL
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
    let winners = best.into_sorted_vec();
    let ids: Vec<i64> = winners.iter().map(|c| c.id).collect();
    let ids = serde_json::to_string(&ids).expect("ids serialize");
    let mut fetch = connection.prepare_cached(&FETCH_SQL)?;
    let mut by_id = HashMap::new();
    let mut rows = fetch.query((allowed, ids.as_str()))?;
    while let Some(row) = rows.next()? {
        by_id.insert(row.get::<_, i64>("id")?, chunk_of(row)?);
    }
    let hits = winners
        .into_iter()
        .filter_map(|c| {
            by_id.remove(&c.id).map(|chunk| Hit {
                chunk,
                score: f64::from(c.score),
            })
        })
        .collect();
    Ok((hits, scanned))
}

/// The `limit` best BM25 matches for `keywords` among the visible chunks, best first.
pub fn keyword_search(
    connection: &Connection,
    keywords: &[String],
    allowed: &str,
    limit: usize,
) -> rusqlite::Result<Vec<Hit>> {
    let Some(weighted) = weighted_terms(connection, keywords)? else {
        return Ok(Vec::new());
    };
    let mut rank = connection.prepare_cached(keyword_sql())?;
    let mut rows = rank.query((allowed, weighted.as_str(), limit as i64))?;
    let mut hits = Vec::new();
    while let Some(row) = rows.next()? {
        hits.push(Hit {
            chunk: chunk_of(row)?,
            score: row.get("score")?,
        });
    }
    Ok(hits)
}

/// The terms to rank by, weighted, as the keyword SQL's `?2`; `None` when no chunk holds any.
pub fn weighted_terms(
    connection: &Connection,
    keywords: &[String],
) -> rusqlite::Result<Option<String>> {
    let terms = terms::query_terms(keywords);
    if terms.is_empty() {
        return Ok(None);
    }
    let terms = serde_json::to_string(&terms).expect("strings serialize");
    let mut frequencies = connection.prepare_cached(FREQUENCIES_SQL)?;
    let counts = frequencies
        .query_map([terms], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?
        .collect::<rusqlite::Result<Vec<(i64, String, i64)>>>()?;
    let weighted = terms::weighted_counts(counts);
    Ok((!weighted.is_empty()).then(|| serde_json::to_string(&weighted).expect("terms serialize")))
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

fn chunk_of(row: &rusqlite::Row<'_>) -> rusqlite::Result<RetrievedChunk> {
    Ok(RetrievedChunk {
        chunk_id: row.get("chunk_id")?,
        source: row.get("source")?,
        section: row.get("section")?,
        kind: row.get("kind")?,
        text: row.get("text")?,
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

fn cosine(query: &[f32], query_norm: f32, blob: &[u8]) -> f32 {
    let mut dot = 0f32;
    let mut norm = 0f32;
    for (q, bytes) in query.iter().zip(blob.chunks_exact(4)) {
        let v = f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        dot += q * v;
        norm += v * v;
    }
    if norm == 0.0 || query_norm == 0.0 {
        0.0
    } else {
        dot / (norm.sqrt() * query_norm)
    }
}
