//! Hybrid search on both stores: permissions enforced inside the searches for callers of every
//! role, hostile query syntax, a narrow filter that must still fill `k` on Postgres, and the
//! `/rerank` adapter against a scripted server.

use crate::util::{agent, stderr, stdout, write, TestDatabase};
use crowdvision_agent::auth::AuthUser;
use crowdvision_agent::config::{ChunkingConfig, Config, RawSettings, RetrievalConfig};
use crowdvision_agent::retrieval::chunk::Chunker;
use crowdvision_agent::retrieval::embed::{Embedder, LocalEmbedder};
use crowdvision_agent::retrieval::ingest::{IngestOptions, Ingestor, NoProgress};
use crowdvision_agent::retrieval::query::keyword_terms;
use crowdvision_agent::retrieval::rerank::NoopReranker;
use crowdvision_agent::retrieval::search::{Retriever, SearchMode};
use crowdvision_agent::retrieval::store::{
    postgres::PostgresStore, sqlite::SqliteStore, ChunkStore, NewChunk, NewDocument,
};
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

const DIM: usize = 64;

/// One page per permission set; every page mentions the shared words "zebra occupancy".
const PAGES: &[(&str, &str)] = &[
    ("public.md", ""),
    ("customer.md", "permissions: [standard_customer]"),
    ("staff.md", "permissions: [business_staff]"),
    ("manager.md", "permissions: [business_admin]"),
    ("admin.md", "permissions: [admin]"),
    ("acme.md", "permissions: [domain:acme]"),
    ("globex.md", "permissions: [domain:globex]"),
    (
        "staff-or-acme.md",
        "permissions: [business_staff, domain:acme]",
    ),
];

fn settings() -> RetrievalConfig {
    Config::from_raw(&RawSettings::default()).unwrap().retrieval
}

fn user(json: &str) -> AuthUser {
    AuthUser::from_claims(json).unwrap()
}

/// Every caller with the sources it must see, and nothing else.
fn callers() -> Vec<(AuthUser, Vec<&'static str>)> {
    vec![
        (AuthUser::anonymous(), vec!["public.md"]),
        (
            user(r#"{"sub":"c","roles":["standard_customer"]}"#),
            vec!["public.md", "customer.md"],
        ),
        (
            user(r#"{"sub":"s","roles":["business_staff"]}"#),
            vec!["public.md", "customer.md", "staff.md", "staff-or-acme.md"],
        ),
        (
            user(r#"{"sub":"m","roles":["business_admin"]}"#),
            vec![
                "public.md",
                "customer.md",
                "staff.md",
                "manager.md",
                "staff-or-acme.md",
            ],
        ),
        (
            user(r#"{"sub":"a","roles":["admin"]}"#),
            vec![
                "public.md",
                "customer.md",
                "staff.md",
                "manager.md",
                "admin.md",
                "staff-or-acme.md",
            ],
        ),
        (
            user(r#"{"sub":"d","memberships":[{"domain":"acme","role":"standard_customer"}]}"#),
            vec!["public.md", "customer.md", "acme.md", "staff-or-acme.md"],
        ),
        (
            user(r#"{"sub":"x","roles":["superuser"],"domains":["initech"]}"#),
            vec!["public.md"],
        ),
    ]
}

async fn ingest_fixture(store: Arc<dyn ChunkStore>, root: &Path) -> Retriever {
    for (name, front) in PAGES {
        let front = if front.is_empty() {
            String::new()
        } else {
            format!("---\n{front}\n---\n")
        };
        write(
            &root.join(name),
            &format!(
                "{front}# Page {name}\n\nThe zebra occupancy sensor of {name} counts people.\n"
            ),
        );
    }
    store.migrate(DIM).await.unwrap();
    let embedder: Arc<dyn Embedder> = Arc::new(LocalEmbedder::new(DIM));
    let ingestor = Ingestor {
        store: store.clone(),
        embedder: embedder.clone(),
        chunker: Chunker::new(ChunkingConfig::default()),
    };
    let options = IngestOptions {
        roots: vec![root.to_path_buf()],
        prune: false,
        dry_run: false,
        require_permissions: false,
        docs_root: None,
        max_source_bytes: crowdvision_agent::retrieval::ingest::DEFAULT_MAX_SOURCE_BYTES,
    };
    let summary = ingestor.run(&options, &NoProgress).await.unwrap();
    assert_eq!(summary.added, PAGES.len());
    Retriever {
        store,
        embedder,
        reranker: Arc::new(NoopReranker),
        settings: settings(),
    }
}

async fn permissions_hold(retriever: &Retriever) {
    let embedding = LocalEmbedder::new(DIM).embed_one("zebra occupancy");
    for (caller, expected) in callers() {
        let expected: BTreeSet<&str> = expected.into_iter().collect();
        let permissions = caller.effective_permissions();
        // The store itself never returns an invisible chunk, however many are asked for.
        let vector: BTreeSet<String> = retriever
            .store
            .vector_search(&embedding, &permissions, 100)
            .await
            .unwrap()
            .into_iter()
            .map(|h| h.chunk.source)
            .collect();
        let keyword: BTreeSet<String> = retriever
            .store
            .keyword_search(&keyword_terms("zebra occupancy"), &permissions, 100)
            .await
            .unwrap()
            .into_iter()
            .map(|h| h.chunk.source)
            .collect();
        let expected_owned: BTreeSet<String> = expected.iter().map(|s| s.to_string()).collect();
        assert_eq!(vector, expected_owned, "vector search as {caller:?}");
        assert_eq!(keyword, expected_owned, "keyword search as {caller:?}");
        for mode in [
            SearchMode::Hybrid,
            SearchMode::VectorOnly,
            SearchMode::KeywordOnly,
        ] {
            let found: BTreeSet<String> = retriever
                .search("zebra occupancy", &caller, Some(50), mode)
                .await
                .unwrap()
                .into_iter()
                .map(|r| r.chunk.source)
                .collect();
            assert_eq!(found, expected_owned, "{mode:?} as {caller:?}");
        }
    }
}

const HOSTILE: &[&str] = &[
    r#"what is "co2"#,
    "co2 -sensor",
    "co2 OR sensor",
    "NEAR(co2 sensor)",
    "sens*",
    "section:zebra",
    "'; DROP TABLE chunks; --",
    "((zebra",
    "zebra)) AND (",
    "the and or not of is",
    "\"\"\"",
    "",
    "   ",
    "über-größe café",
];

async fn hostile_queries_never_fail(retriever: &Retriever) {
    let admin = user(r#"{"sub":"a","roles":["admin"]}"#);
    for query in HOSTILE {
        let results = retriever
            .search(query, &admin, None, SearchMode::Hybrid)
            .await;
        assert!(results.is_ok(), "{query:?}: {results:?}");
    }
    let zebra = retriever
        .search("zebra*", &admin, None, SearchMode::KeywordOnly)
        .await
        .unwrap();
    assert!(
        !zebra.is_empty(),
        "a star does not turn the query into a prefix search that fails"
    );
    assert_eq!(
        retriever.store.status().await.unwrap().documents,
        PAGES.len() as i64
    );
}

#[tokio::test]
async fn sqlite_search_filters_by_permission_and_survives_hostile_queries() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(
        SqliteStore::open(&dir.path().join("kb.sqlite"))
            .await
            .unwrap(),
    );
    let retriever = ingest_fixture(store, &dir.path().join("docs")).await;
    permissions_hold(&retriever).await;
    hostile_queries_never_fail(&retriever).await;
}

#[tokio::test]
async fn postgres_search_filters_by_permission_and_survives_hostile_queries() {
    let Some(db) = TestDatabase::create().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(PostgresStore::connect(&db.url).await.unwrap());
    let retriever = ingest_fixture(store.clone(), &dir.path().join("docs")).await;
    permissions_hold(&retriever).await;
    hostile_queries_never_fail(&retriever).await;
    store.pool().close().await;
    db.drop_now().await;
}

#[tokio::test]
async fn postgres_fills_k_when_the_filter_matches_two_percent_of_ten_thousand_chunks() {
    let Some(db) = TestDatabase::create().await else {
        return;
    };
    let store = PostgresStore::connect(&db.url).await.unwrap();
    store.migrate(DIM).await.unwrap();
    store.ensure_embedding("local-hash-v1", DIM).await.unwrap();
    let embedder = LocalEmbedder::new(DIM);
    for doc in 0..100 {
        // Documents 0 and 50 (2% of the chunks) are visible to domain "rare"; the rest to admins.
        let permissions = if doc % 50 == 0 {
            "domain:rare"
        } else {
            "admin"
        };
        let chunks = (0..100)
            .map(|i| NewChunk {
                chunk_id: format!("d{doc}c{i}"),
                ordinal: i,
                section: format!("Doc {doc}"),
                kind: "prose".into(),
                text: format!(
                    "document {doc} chunk {i} about topic {}",
                    (doc * 7 + i) % 13
                ),
                tokens: 8,
                embedding: embedder
                    .embed_one(&format!("topic {} item {i} doc {doc}", (doc * 7 + i) % 13)),
            })
            .collect();
        let document = NewDocument {
            source: format!("doc-{doc}.md"),
            content_hash: format!("hash-{doc}"),
            title: None,
            permissions: vec![permissions.to_string()],
            metadata: serde_json::json!({}),
            chunks,
        };
        store.write_document(&document).await.unwrap();
    }
    let rare = vec!["domain:rare".to_string()];
    let query = embedder.embed_one("topic 3 item 5");
    let hits = store.vector_search(&query, &rare, 20).await.unwrap();
    assert_eq!(
        hits.len(),
        20,
        "k visible results come back through the HNSW index"
    );
    assert!(hits
        .iter()
        .all(|h| h.chunk.source == "doc-0.md" || h.chunk.source == "doc-50.md"));
    assert!(
        hits.windows(2).all(|w| w[0].score >= w[1].score),
        "sorted by similarity"
    );
    // BM25 over the keyword index: any term selects (as on the embedded store), a term in
    // most chunks weighs almost nothing, and a word no chunk holds finds nothing.
    store.optimize().await.unwrap();
    let admin = vec!["admin".to_string()];
    let terms = |words: &[&str]| words.iter().map(|w| w.to_string()).collect::<Vec<_>>();
    let common_only = store
        .keyword_search(&terms(&["document", "chunk"]), &admin, 20)
        .await
        .unwrap();
    assert_eq!(common_only.len(), 20);
    let unknown = store
        .keyword_search(&terms(&["unheardofword"]), &admin, 20)
        .await
        .unwrap();
    assert!(unknown.is_empty(), "{unknown:?}");
    let narrow = store
        .keyword_search(&terms(&["document", "topic"]), &rare, 20)
        .await
        .unwrap();
    assert_eq!(
        narrow.len(),
        20,
        "the permission filter still applies to keyword hits"
    );
    assert!(narrow
        .iter()
        .all(|h| h.chunk.source == "doc-0.md" || h.chunk.source == "doc-50.md"));

    // Forced through the HNSW index, the iterative scan keeps walking the graph until k rows
    // pass the 2% filter (without it, ef_search = 40 candidates hold about one visible row).
    let mut tx = store.pool().begin().await.unwrap();
    crowdvision_agent::retrieval::store::postgres::prepare_vector_scan(&mut tx, 20)
        .await
        .unwrap();
    sqlx::query("SET LOCAL enable_bitmapscan = off")
        .execute(&mut *tx)
        .await
        .unwrap();
    sqlx::query("SET LOCAL enable_seqscan = off")
        .execute(&mut *tx)
        .await
        .unwrap();
    let sql = crowdvision_agent::retrieval::store::postgres::VECTOR_SQL;
    let vector = pgvector::Vector::from(query.clone());
    let plan: Vec<String> = sqlx::query_scalar(&format!("EXPLAIN {sql}"))
        .bind(&vector)
        .bind(&rare)
        .bind(20i64)
        .fetch_all(&mut *tx)
        .await
        .unwrap();
    assert!(
        plan.join("\n").contains("chunks_embedding_hnsw"),
        "{}",
        plan.join("\n")
    );
    let through_hnsw = sqlx::query(sql)
        .bind(&vector)
        .bind(&rare)
        .bind(20i64)
        .fetch_all(&mut *tx)
        .await
        .unwrap();
    assert_eq!(through_hnsw.len(), 20);
    tx.rollback().await.unwrap();

    // The planner may serve this narrow filter from the permissions index instead of HNSW;
    // with a wide filter it takes HNSW, whose iterative scan keeps going until k rows pass.
    let wide = store.vector_search(&query, &admin, 20).await.unwrap();
    assert_eq!(wide.len(), 20);
    assert!(wide
        .iter()
        .all(|h| h.chunk.source != "doc-0.md" && h.chunk.source != "doc-50.md"));
    store.pool().close().await;
    db.drop_now().await;
}

/// An embedded store holding one public page and one staff page, both about "zebra".
pub(crate) fn open_and_staff_pages() -> (tempfile::TempDir, String) {
    embedded_store_of(&[
        ("open.md", "# Open\n\nThe lobby zebra display.\n"),
        (
            "staff.md",
            "---\npermissions: [business_staff]\n---\n# Staff\n\nThe zebra key rotation.\n",
        ),
    ])
}

/// An embedded store of these pages (name, text) under `docs/`, ingested by the CLI; its
/// directory and `DATABASE_URL`.
pub(crate) fn embedded_store_of(pages: &[(&str, &str)]) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in pages {
        write(&dir.path().join("docs").join(name), text);
    }
    let url = format!("sqlite://{}", dir.path().join("kb.sqlite").display());
    let ingest = agent(dir.path())
        .env("DATABASE_URL", &url)
        .args(["ingest", "docs"])
        .output()
        .unwrap();
    assert!(ingest.status.success(), "{}", stderr(&ingest));
    (dir, url)
}

#[test]
fn search_command_acts_as_the_given_claims() {
    let (dir, url) = open_and_staff_pages();
    write(
        &dir.path().join("customer.json"),
        r#"{"sub":"c","memberships":[{"domain":"acme","role":"standard_customer"}]}"#,
    );
    write(
        &dir.path().join("staff.b64"),
        "eyJzdWIiOiJzIiwicm9sZXMiOlsiYnVzaW5lc3Nfc3RhZmYiXX0",
    );
    let sources = |claims: &str| -> BTreeSet<String> {
        let output = agent(dir.path())
            .env("DATABASE_URL", &url)
            .args(["search", "zebra", "--json", "--claims", claims])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        let body: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
        body["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["source"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        sources("customer.json"),
        BTreeSet::from(["open.md".to_string()])
    );
    assert_eq!(
        sources("staff.b64"),
        BTreeSet::from(["open.md".to_string(), "staff.md".to_string()])
    );

    let without = agent(dir.path())
        .env("DATABASE_URL", &url)
        .args(["search", "zebra"])
        .output()
        .unwrap();
    assert_eq!(without.status.code(), Some(2));
    assert!(
        stderr(&without).contains("--claims"),
        "{}",
        stderr(&without)
    );
    let explained = agent(dir.path())
        .env("DATABASE_URL", &url)
        .env("REQUIRE_AUTH", "false")
        .args(["search", "zebra", "--explain"])
        .output()
        .unwrap();
    assert!(
        stdout(&explained).contains("keyword (BM25 index) search"),
        "{}",
        stdout(&explained)
    );
}

#[test]
fn the_embedded_store_finds_a_plural_by_its_stem() {
    let (dir, url) = embedded_store_of(&[
        (
            "maintenance.md",
            "# Maintenance\n\nThe Battery of each sensor lasts 36 months.\n",
        ),
        (
            "lobby.md",
            "# Lobby\n\nThe lobby display shows the occupancy.\n",
        ),
    ]);
    let keyword_hits = |query: &str| -> Vec<String> {
        let output = agent(dir.path())
            .env("DATABASE_URL", &url)
            .env("REQUIRE_AUTH", "false")
            .args(["search", query, "--json"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        let body: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
        body["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| !r["keyword_rank"].is_null())
            .map(|r| r["source"].as_str().unwrap().to_string())
            .collect()
    };
    // "batteries" and "Battery" share the stem "batteri"; "displays" finds "display".
    assert_eq!(keyword_hits("batteries"), vec!["maintenance.md"]);
    assert_eq!(keyword_hits("displays"), vec!["lobby.md"]);
}

#[test]
fn the_retrieval_dataset_names_real_pages() {
    let root = crate::util::repo_root();
    let text = std::fs::read_to_string(root.join("datasets/retrieval.yaml")).unwrap();
    let dataset: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    let questions = dataset["questions"].as_sequence().unwrap();
    assert!(questions.len() >= 40, "{} questions", questions.len());
    for q in questions {
        assert!(!q["question"].as_str().unwrap().is_empty());
        for source in q["sources"].as_sequence().unwrap() {
            let path = root.join("documentation").join(source.as_str().unwrap());
            assert!(path.is_file(), "{} is not a page", path.display());
        }
    }
    let pages = walkdir::WalkDir::new(root.join("documentation"))
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
        .count();
    assert!(pages >= 25, "{pages} pages");
}

#[test]
fn tools_call_search_docs_runs_as_the_caller() {
    let (dir, url) = open_and_staff_pages();
    write(
        &dir.path().join("customer.json"),
        r#"{"sub":"c","roles":["standard_customer"]}"#,
    );
    write(
        &dir.path().join("staff.json"),
        r#"{"sub":"s","roles":["business_staff"]}"#,
    );
    let call = |claims: &str, name: &str, args: &str| {
        agent(dir.path())
            .env("DATABASE_URL", &url)
            .args(["tools", "call", name, "--args", args, "--claims", claims])
            .output()
            .unwrap()
    };
    let sources = |output: &std::process::Output| -> BTreeSet<String> {
        let body: serde_json::Value = serde_json::from_str(&stdout(output)).unwrap();
        assert_eq!(body["ok"], true, "{body}");
        body["content"]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["source"].as_str().unwrap().to_string())
            .collect()
    };
    let customer = call("customer.json", "search_docs", r#"{"query":"zebra"}"#);
    assert_eq!(sources(&customer), BTreeSet::from(["open.md".to_string()]));
    let staff = call("staff.json", "search_docs", r#"{"query":"zebra"}"#);
    assert_eq!(
        sources(&staff),
        BTreeSet::from(["open.md".to_string(), "staff.md".to_string()])
    );

    let bad = call("staff.json", "search_docs", r#"{"q":"zebra"}"#);
    assert_eq!(bad.status.code(), Some(1));
    assert!(stdout(&bad).contains("bad_arguments"), "{}", stdout(&bad));
    let unknown = call("staff.json", "no_such_tool", "{}");
    assert_eq!(unknown.status.code(), Some(1));
    assert!(stdout(&unknown).contains("unknown_tool"));
    let list = agent(dir.path())
        .env("DATABASE_URL", &url)
        .args(["tools", "list", "--json"])
        .output()
        .unwrap();
    let schemas: serde_json::Value = serde_json::from_str(&stdout(&list)).unwrap();
    let search = schemas
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "search_docs")
        .expect("search_docs is listed");
    assert_eq!(
        search["parameters"]["required"],
        serde_json::json!(["query"])
    );
}
