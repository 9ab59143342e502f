//! One conformance suite for the `ChunkStore` port, run against both adapters.

use crate::util::TestDatabase;
use crowdvision_agent::retrieval::store::{
    postgres::PostgresStore, sqlite::SqliteStore, ChunkStore, NewChunk, NewDocument, StoreError,
    WriteOutcome,
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

#[tokio::test]
async fn sqlite_keyword_ranking_reads_the_question_terms_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = sqlite_store_holding(dir.path(), &document("a.md", "x1", 3, &[])).await;
    let terms = ["chunk".to_string(), "guide".to_string()];
    let [_, (_, keyword_plan)] = store
        .search_plans(&[0.5; DIM], &terms, &[], 5)
        .await
        .unwrap();
    // The terms' JSON becomes a table once, instead of being parsed again per candidate chunk.
    assert!(keyword_plan.contains("MATERIALIZE q"), "{keyword_plan}");
    assert_eq!(
        keyword_plan.matches("SCAN j VIRTUAL TABLE").count(),
        1,
        "{keyword_plan}"
    );
    // The average length is read once, not per term of every candidate; one sort orders and
    // limits the hits.
    assert!(
        keyword_plan.contains("SCALAR SUBQUERY 1\nSCAN keyword_stats"),
        "{keyword_plan}"
    );
    assert_eq!(
        keyword_plan.matches("TEMP B-TREE FOR ORDER BY").count(),
        1,
        "{keyword_plan}"
    );
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
