//! One conformance suite for the `ChunkStore` port, run against both adapters.

use crate::util::TestDatabase;
use crowdvision_agent::retrieval::store::{
    postgres::PostgresStore, sqlite::SqliteStore, sqlite_search, ChunkStore, NewChunk, NewDocument,
    StoreError, WriteOutcome,
};
use std::sync::Arc;

const DIM: usize = 8;

fn document(source: &str, hash: &str, chunks: usize, permissions: &[&str]) -> NewDocument {
    NewDocument {
        source: source.to_string(),
        content_hash: hash.to_string(),
        title: Some(format!("Title of {source}")),
        permissions: permissions.iter().map(|p| p.to_string()).collect(),
        metadata: serde_json::json!({"tags": ["t"]}),
        chunks: (0..chunks)
            .map(|i| NewChunk {
                chunk_id: format!("{hash}-{i}"),
                ordinal: i,
                section: "Guide > Part".to_string(),
                kind: "prose".to_string(),
                text: format!("chunk {i} of {source}"),
                tokens: 5,
                embedding: vec![0.5; DIM],
            })
            .collect(),
    }
}

async fn conformance(store: Arc<dyn ChunkStore>) {
    // migrate is idempotent and recorded
    let every: Vec<u32> = store.migrations().iter().map(|m| m.version).collect();
    assert_eq!(store.migrate(DIM).await.unwrap(), every);
    assert!(store.migrate(DIM).await.unwrap().is_empty());
    let status = store.status().await.unwrap();
    assert!(status.pending_migrations.is_empty());
    assert_eq!(status.embedding_dim, Some(DIM));

    // the embedding model is recorded once, then enforced
    store.ensure_embedding("model-a", DIM).await.unwrap();
    store.ensure_embedding("model-a", DIM).await.unwrap();
    let mismatch = store.ensure_embedding("model-b", DIM).await.unwrap_err();
    assert!(matches!(mismatch, StoreError::EmbeddingMismatch { .. }));
    assert!(mismatch.to_string().contains("db reset"));
    assert!(store.ensure_embedding("model-a", DIM * 2).await.is_err());

    // add, unchanged, duplicate, replace
    let first = document("user/a.md", "h1", 3, &[]);
    assert_eq!(
        store.write_document(&first).await.unwrap(),
        WriteOutcome::Added
    );
    assert_eq!(
        store.write_document(&first).await.unwrap(),
        WriteOutcome::Unchanged
    );
    let same_content = document("user/copy.md", "h1", 3, &[]);
    assert_eq!(
        store.write_document(&same_content).await.unwrap(),
        WriteOutcome::Duplicate
    );
    let changed = document("user/a.md", "h2", 2, &["business_staff", "domain:acme"]);
    assert_eq!(
        store.write_document(&changed).await.unwrap(),
        WriteOutcome::Replaced
    );

    let documents = store.documents().await.unwrap();
    assert_eq!(documents.len(), 1, "{documents:?}");
    assert_eq!(documents[0].content_hash, "h2");
    assert_eq!(
        documents[0].chunks, 2,
        "the replaced document's chunks are gone"
    );
    assert!(!documents[0].public);
    let status = store.status().await.unwrap();
    assert_eq!((status.documents, status.chunks), (1, 2));
    assert_eq!(status.embedding_model.as_deref(), Some("model-a"));

    // pages are listed and read as the caller, filtered in the store: the staff page is nobody
    // else's, and a page the caller may not read reads like one that does not exist
    let staff = vec!["business_staff".to_string()];
    let customer = vec!["standard_customer".to_string()];
    let pages = store.visible_pages(&staff).await.unwrap();
    assert_eq!(pages.len(), 1, "{pages:?}");
    assert_eq!(pages[0].source, "user/a.md");
    assert_eq!(pages[0].title.as_deref(), Some("Title of user/a.md"));
    assert!(store.visible_pages(&customer).await.unwrap().is_empty());
    let texts: Vec<String> = store
        .page_chunks("user/a.md", &staff)
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.text)
        .collect();
    assert_eq!(texts, ["chunk 0 of user/a.md", "chunk 1 of user/a.md"]);
    assert!(store
        .page_chunks("user/a.md", &customer)
        .await
        .unwrap()
        .is_empty());
    assert!(store
        .page_chunks("user/none.md", &staff)
        .await
        .unwrap()
        .is_empty());

    // a failing write leaves nothing half-written: the second chunk id collides
    let mut broken = document("user/broken.md", "h3", 2, &[]);
    broken.chunks[1].chunk_id = broken.chunks[0].chunk_id.clone();
    assert!(store.write_document(&broken).await.is_err());
    let sources: Vec<String> = store
        .documents()
        .await
        .unwrap()
        .into_iter()
        .map(|d| d.source)
        .collect();
    assert_eq!(sources, ["user/a.md"]);
    assert_eq!(store.status().await.unwrap().chunks, 2);

    // concurrent writers of the same new document produce one document
    let racers: Vec<_> = (0..6)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move {
                store
                    .write_document(&document("user/race.md", "h4", 4, &[]))
                    .await
            })
        })
        .collect();
    let mut outcomes = Vec::new();
    for racer in racers {
        outcomes.push(racer.await.unwrap().unwrap());
    }
    assert_eq!(
        outcomes
            .iter()
            .filter(|o| **o == WriteOutcome::Added)
            .count(),
        1,
        "{outcomes:?}"
    );
    assert_eq!(store.status().await.unwrap().chunks, 6);

    // delete and reset
    assert!(store.delete_document("user/race.md").await.unwrap());
    assert!(!store.delete_document("user/race.md").await.unwrap());
    assert_eq!(store.status().await.unwrap().chunks, 2);
    store.reset().await.unwrap();
    let status = store.status().await.unwrap();
    assert_eq!(status.applied_migrations, Vec::<u32>::new());
    assert!(matches!(
        store.documents().await,
        Err(StoreError::NotMigrated)
    ));
}

#[tokio::test]
async fn sqlite_store_conforms() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("nested/kb.sqlite"))
        .await
        .unwrap();
    conformance(Arc::new(store)).await;
}

#[tokio::test]
async fn postgres_store_conforms() {
    let Some(db) = TestDatabase::create().await else {
        return;
    };
    let store = PostgresStore::connect(&db.url).await.unwrap();
    conformance(Arc::new(store)).await;
    db.drop_now().await;
}

#[tokio::test]
async fn postgres_schema_has_the_expected_indexes() {
    let Some(db) = TestDatabase::create().await else {
        return;
    };
    let store = PostgresStore::connect(&db.url).await.unwrap();
    store.migrate(768).await.unwrap();
    let indexes: Vec<String> = sqlx::query_scalar(
        "SELECT indexdef FROM pg_indexes WHERE tablename = 'chunks' ORDER BY indexname",
    )
    .fetch_all(store.pool())
    .await
    .unwrap();
    let all = indexes.join("\n");
    assert!(
        all.contains("USING hnsw (embedding vector_cosine_ops)"),
        "{all}"
    );
    assert!(!all.contains("tsv"), "the tsvector is gone: {all}");
    assert!(all.contains("USING gin (permissions)"), "{all}");
    assert!(all.contains("(document_id)"), "{all}");
    let column: String = sqlx::query_scalar(
        "SELECT format_type(atttypid, atttypmod) FROM pg_attribute
         WHERE attrelid = 'chunks'::regclass AND attname = 'embedding'",
    )
    .fetch_one(store.pool())
    .await
    .unwrap();
    assert_eq!(column, "vector(768)");
    store.pool().close().await;
    db.drop_now().await;
}

/// A migrated SQLite store in `dir` that holds `document`.
async fn sqlite_store_holding(dir: &std::path::Path, document: &NewDocument) -> SqliteStore {
    let store = SqliteStore::open(&dir.join("kb.sqlite")).await.unwrap();
    store.migrate(DIM).await.unwrap();
    store.ensure_embedding("m", DIM).await.unwrap();
    store.write_document(document).await.unwrap();
    store
}

#[tokio::test]
async fn sqlite_keyword_index_follows_writes_and_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let store = sqlite_store_holding(dir.path(), &document("a.md", "x1", 2, &["admin"])).await;
    let postings = || async {
        let holding: i64 =
            sqlx::query_scalar("SELECT count(*) FROM chunk_terms WHERE term = 'chunk'")
                .fetch_one(store.pool())
                .await
                .unwrap();
        let (chunks, words): (i64, i64) = sqlx::query_as("SELECT chunks, words FROM keyword_stats")
            .fetch_one(store.pool())
            .await
            .unwrap();
        (holding, chunks, words)
    };
    // Two chunks "chunk N of a.md" under "Guide > Part": 2 heading words and 5 text words each ("a.md" is two).
    assert_eq!(postings().await, (2, 2, 14));
    // Chunks stored before the index existed are indexed by the next migrate.
    sqlx::raw_sql("DELETE FROM chunk_terms; DELETE FROM chunk_lengths")
        .execute(store.pool())
        .await
        .unwrap();
    assert_eq!(postings().await, (0, 0, 0));
    store.migrate(DIM).await.unwrap();
    assert_eq!(postings().await, (2, 2, 14));
    let permissions: i64 =
        sqlx::query_scalar("SELECT count(*) FROM chunk_permissions WHERE permission = 'admin'")
            .fetch_one(store.pool())
            .await
            .unwrap();
    assert_eq!(permissions, 2);
    store.delete_document("a.md").await.unwrap();
    assert_eq!(postings().await, (0, 0, 0));
    let permissions: i64 = sqlx::query_scalar("SELECT count(*) FROM chunk_permissions")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(permissions, 0);
}

/// The keyword ranking as SQLite ran it in SQL until 2026-12-08, kept as the oracle of the
/// ranking that now sums in Rust: `?1` permissions, `?2` the weighted terms as JSON, `?3` the
/// limit.
const SQL_RANKING: &str = "
WITH q AS MATERIALIZED (
         SELECT json_extract(j.value, '$.term') AS term, json_extract(j.value, '$.idf') AS idf,
                json_extract(j.value, '$.selects') AS selects,
                (SELECT CAST(max(words, 1) AS REAL) / max(chunks, 1) FROM keyword_stats) AS avgdl
         FROM json_each(?2) j),
     candidates AS (
         SELECT DISTINCT t.chunk_id FROM q JOIN chunk_terms t ON t.term = q.term WHERE q.selects),
     scored AS (
         SELECT k.chunk_id AS id,
                round(sum(q.idf * t.weight * 2.2 / (t.weight + 1.2 * (0.25 + 0.75 * l.words / q.avgdl))), 9) AS rank
         FROM candidates k CROSS JOIN q
         JOIN chunk_terms t ON t.term = q.term AND t.chunk_id = k.chunk_id
         JOIN chunk_lengths l ON l.chunk_id = k.chunk_id
         GROUP BY k.chunk_id)
SELECT c.chunk_id, h.rank
FROM scored h JOIN chunks c ON c.id = h.id
WHERE c.permissions = '[]' OR EXISTS (
    SELECT 1 FROM chunk_permissions p
    WHERE p.chunk_id = c.id AND p.permission IN (SELECT value FROM json_each(?1)))
ORDER BY h.rank DESC, c.chunk_id
LIMIT ?3";

/// A document of `chunks` chunks whose words are drawn from a small vocabulary by `seed`, so
/// that terms repeat, lengths differ and scores tie now and then.
fn worded_document(seed: u64, chunks: usize, permissions: &[&str]) -> NewDocument {
    const WORDS: &[&str] = &[
        "sensor", "room", "humidity", "carbon", "window", "badge", "floor", "lamp", "desk",
        "meeting", "comfort", "alarm",
    ];
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = move |below: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % below
    };
    let mut document = document(
        &format!("d{seed}.md"),
        &format!("h{seed}"),
        chunks,
        permissions,
    );
    for chunk in &mut document.chunks {
        let length = 1 + next(14) as usize;
        let words: Vec<&str> = (0..length)
            .map(|_| WORDS[next(WORDS.len() as u64) as usize])
            .collect();
        chunk.text = words.join(" ");
        chunk.section = WORDS[next(WORDS.len() as u64) as usize].to_string();
    }
    document
}

#[tokio::test]
async fn sqlite_keyword_ranking_in_rust_matches_the_sql_ranking_to_the_bit() {
    let dir = tempfile::tempdir().unwrap();
    let store = sqlite_store_holding(dir.path(), &worded_document(0, 6, &[])).await;
    for seed in 1..40 {
        let permissions: &[&str] = match seed % 3 {
            0 => &["admin"],
            1 => &["staff", "admin"],
            _ => &[],
        };
        store
            .write_document(&worded_document(seed, 1 + seed as usize % 7, permissions))
            .await
            .unwrap();
    }
    let reader = rusqlite::Connection::open(dir.path().join("kb.sqlite")).unwrap();
    let questions: &[&[&str]] = &[
        &["sensor"],
        &["humidity", "comfort"],
        &["carbon", "window", "sensor", "room"],
        &["alarm", "badge", "unknownword"],
        &["meeting", "room", "desk", "lamp", "floor"],
        &["unknownword"],
    ];
    let mut compared = 0;
    for words in questions {
        let terms: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        for (permissions, limit) in [
            (vec![], 5),
            (vec!["staff".to_string()], 20),
            (vec!["admin".to_string()], 500),
        ] {
            let found: Vec<(String, f64)> = store
                .keyword_search(&terms, &permissions, limit)
                .await
                .unwrap()
                .into_iter()
                .map(|hit| (hit.chunk.chunk_id, hit.score))
                .collect();
            let weighted = sqlite_search::weighted_terms(&reader, &terms).unwrap();
            let expected: Vec<(String, f64)> = match weighted {
                None => Vec::new(),
                Some(question) => {
                    let json = serde_json::to_string(&question.terms).unwrap();
                    let allowed = serde_json::to_string(&permissions).unwrap();
                    let mut ranking = reader.prepare(SQL_RANKING).unwrap();
                    ranking
                        .query_map((allowed, json, limit as i64), |row| {
                            Ok((row.get(0)?, row.get(1)?))
                        })
                        .unwrap()
                        .collect::<Result<_, _>>()
                        .unwrap()
                }
            };
            assert_eq!(
                found, expected,
                "{words:?} as {permissions:?}, limit {limit}"
            );
            compared += expected.len();
        }
    }
    assert!(compared > 100, "only {compared} hits compared");
}

#[tokio::test]
async fn sqlite_keyword_ranking_reads_postings_and_candidates_by_their_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let store = sqlite_store_holding(dir.path(), &document("a.md", "x1", 3, &[])).await;
    let terms = ["chunk".to_string(), "guide".to_string()];
    let [_, (_, keyword_plan)] = store
        .search_plans(&[0.5; DIM], &terms, &[], 5)
        .await
        .unwrap();
    for step in [
        "SEARCH t USING PRIMARY KEY (term=?)",
        "SEARCH l USING INTEGER PRIMARY KEY (rowid=?)",
        "SEARCH c USING INTEGER PRIMARY KEY (rowid=?)",
    ] {
        assert!(
            keyword_plan.contains(step),
            "{step} missing from {keyword_plan}"
        );
    }
    assert!(!keyword_plan.contains("TEMP B-TREE"), "{keyword_plan}");
}

#[tokio::test]
async fn postgres_keyword_index_follows_writes_and_deletes() {
    let Some(db) = TestDatabase::create().await else {
        return;
    };
    let store = PostgresStore::connect(&db.url).await.unwrap();
    store.migrate(DIM).await.unwrap();
    store.ensure_embedding("m", DIM).await.unwrap();
    store
        .write_document(&document("a.md", "x1", 2, &["admin"]))
        .await
        .unwrap();
    let postings = || async {
        let holding: i64 =
            sqlx::query_scalar("SELECT count(*) FROM chunk_terms WHERE term = 'chunk'")
                .fetch_one(store.pool())
                .await
                .unwrap();
        let counted: i64 = sqlx::query_scalar(
            "SELECT coalesce((SELECT chunks FROM term_stats WHERE term = 'chunk'), 0)",
        )
        .fetch_one(store.pool())
        .await
        .unwrap();
        let (chunks, words): (i64, i64) = sqlx::query_as("SELECT chunks, words FROM keyword_stats")
            .fetch_one(store.pool())
            .await
            .unwrap();
        (holding, counted, chunks, words)
    };
    // The same figures as on SQLite: two chunks of seven words, "chunk" in both.
    assert_eq!(postings().await, (2, 2, 2, 14));
    // Chunks stored before the index existed are indexed by the next migrate.
    sqlx::raw_sql("DELETE FROM chunk_terms; DELETE FROM chunk_lengths")
        .execute(store.pool())
        .await
        .unwrap();
    assert_eq!(postings().await, (0, 0, 0, 0));
    store.migrate(DIM).await.unwrap();
    assert_eq!(postings().await, (2, 2, 2, 14));
    // Replacing and deleting keep every count in step.
    store
        .write_document(&document("a.md", "x2", 3, &["admin"]))
        .await
        .unwrap();
    assert_eq!(postings().await, (3, 3, 3, 21));
    store.delete_document("a.md").await.unwrap();
    assert_eq!(postings().await, (0, 0, 0, 0));
    store.pool().close().await;
    db.drop_now().await;
}

async fn has_hnsw_index(store: &PostgresStore) -> bool {
    sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM pg_indexes WHERE indexname = 'chunks_embedding_hnsw')",
    )
    .fetch_one(store.pool())
    .await
    .unwrap()
}

#[tokio::test]
async fn postgres_bulk_load_rebuilds_the_vector_index_and_migrate_repairs_an_interrupted_one() {
    let Some(db) = TestDatabase::create().await else {
        return;
    };
    let store = PostgresStore::connect(&db.url).await.unwrap();
    store.migrate(DIM).await.unwrap();
    store.begin_bulk_load().await.unwrap();
    assert!(!has_hnsw_index(&store).await);
    // An interrupted load leaves no index; the next migrate (run by every ingest) restores it.
    store.migrate(DIM).await.unwrap();
    assert!(has_hnsw_index(&store).await);

    // A first ingest of many sources goes through the bulk path and ends with the index.
    let dir = tempfile::tempdir().unwrap();
    for i in 0..120 {
        crate::util::write(
            &dir.path().join(format!("docs/p{i}.md")),
            &format!("# Page {i}\n\nText {i}.\n"),
        );
    }
    let output = crate::util::agent(dir.path())
        .env("DATABASE_URL", &db.url)
        .env("EMBEDDING_DIM", DIM.to_string())
        .args(["ingest", "docs"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", crate::util::stderr(&output));
    assert!(has_hnsw_index(&store).await);
    assert_eq!(store.status().await.unwrap().documents, 120);
    store.pool().close().await;
    db.drop_now().await;
}
