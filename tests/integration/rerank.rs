//! The `/rerank` adapter against a scripted loopback server (Cohere/Jina response shape), and
//! the minimum relevance that lets search say "nothing relevant" instead of padding.

use axum::routing::post;
use axum::{Json, Router};
use crowdvision_agent::auth::AuthUser;
use crowdvision_agent::config::{Config, RawSettings};
use crowdvision_agent::retrieval::chunk::Chunker;
use crowdvision_agent::retrieval::embed::{Embedder, LocalEmbedder};
use crowdvision_agent::retrieval::ingest::{IngestOptions, Ingestor, NoProgress};
use crowdvision_agent::retrieval::rerank::{self, RerankError};
use crowdvision_agent::retrieval::search::{Retriever, SearchMode};
use crowdvision_agent::retrieval::store::{sqlite::SqliteStore, ChunkStore};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

/// Scores each document by how often it contains the query's first word (a quarter point each),
/// as a stand-in for a model.
async fn serve() -> (String, Arc<Mutex<Vec<Value>>>) {
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let log = seen.clone();
    let app = Router::new().route(
        "/v1/rerank",
        post(move |Json(body): Json<Value>| {
            let log = log.clone();
            async move {
                log.lock().unwrap().push(body.clone());
                let documents = body["documents"].as_array().unwrap();
                let word = body["query"]
                    .as_str()
                    .unwrap()
                    .split_whitespace()
                    .next()
                    .unwrap()
                    .to_lowercase();
                let mut results: Vec<Value> = documents
                    .iter()
                    .enumerate()
                    .map(|(index, d)| {
                        let score = d
                            .as_str()
                            .unwrap()
                            .to_lowercase()
                            .matches(word.as_str())
                            .count() as f64
                            / 4.0;
                        json!({"index": index, "relevance_score": score})
                    })
                    .collect();
                results.reverse();
                let top_n = body["top_n"].as_u64().unwrap() as usize;
                results.truncate(top_n);
                Json(json!({"results": results}))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{address}/v1"), seen)
}

fn config(url: &str, min_score: Option<&str>) -> Config {
    let mut pairs = vec![
        ("RERANKER", "api".to_string()),
        ("RERANKER_MODEL", "test-reranker".to_string()),
        ("RERANKER_URL", url.to_string()),
        ("RERANKER_API_KEY", "k".to_string()),
    ];
    if let Some(min) = min_score {
        pairs.push(("RERANKER_MIN_SCORE", min.to_string()));
    }
    Config::from_raw(&RawSettings::from_pairs(pairs)).unwrap()
}

#[tokio::test]
async fn the_api_reranker_orders_by_relevance_and_sends_the_query() {
    let (url, seen) = serve().await;
    let reranker = rerank::from_config(&config(&url, None).retrieval.reranker);
    let documents = ["no match", "co2 co2 co2", "co2"];
    let ranked = reranker.rerank("co2 level", &documents, 2).await.unwrap();
    assert_eq!(ranked.iter().map(|r| r.index).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(ranked[0].relevance, Some(0.75));
    let request = &seen.lock().unwrap()[0];
    assert_eq!(request["query"], "co2 level");
    assert_eq!(request["model"], "test-reranker");
    assert_eq!(request["top_n"], 2);
}

#[tokio::test]
async fn an_unreachable_reranker_is_a_typed_error() {
    let reranker = rerank::from_config(&config("http://127.0.0.1:9", None).retrieval.reranker);
    let error = reranker.rerank("q", &["d"], 1).await.unwrap_err();
    assert!(matches!(error, RerankError::Transport(_)), "{error}");
}

#[tokio::test]
async fn a_minimum_relevance_drops_weak_chunks() {
    let (url, _) = serve().await;
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(
        docs.join("co2.md"),
        "# CO2\n\nCO2 is measured in ppm; co2 sensors co2 co2.\n",
    )
    .unwrap();
    std::fs::write(
        docs.join("rooms.md"),
        "# Rooms\n\nRooms have a level and a capacity.\n",
    )
    .unwrap();
    let store: Arc<dyn ChunkStore> = Arc::new(
        SqliteStore::open(&dir.path().join("kb.sqlite"))
            .await
            .unwrap(),
    );
    store.migrate(64).await.unwrap();
    let embedder: Arc<dyn Embedder> = Arc::new(LocalEmbedder::new(64));
    let ingestor = Ingestor {
        store: store.clone(),
        embedder: embedder.clone(),
        chunker: Chunker::new(Default::default()),
    };
    let options = IngestOptions {
        roots: vec![docs],
        prune: false,
        dry_run: false,
        require_permissions: false,
        docs_root: None,
        max_source_bytes: crowdvision_agent::retrieval::ingest::DEFAULT_MAX_SOURCE_BYTES,
    };
    ingestor.run(&options, &NoProgress).await.unwrap();
    let config = config(&url, Some("0.5"));
    let retriever = Retriever {
        store,
        embedder,
        reranker: rerank::from_config(&config.retrieval.reranker),
        settings: config.retrieval.clone(),
    };
    let results = retriever
        .search(
            "co2 level of rooms",
            &AuthUser::anonymous(),
            Some(5),
            SearchMode::Hybrid,
        )
        .await
        .unwrap();
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0].chunk.source, "co2.md");
    assert_eq!(
        results[0].relevance,
        Some(1.25),
        "five mentions of co2, scored a quarter each"
    );
    let nothing = retriever
        .search(
            "capacity of rooms",
            &AuthUser::anonymous(),
            Some(5),
            SearchMode::Hybrid,
        )
        .await
        .unwrap();
    assert!(
        nothing.is_empty(),
        "nothing relevant rather than padding: {nothing:?}"
    );
}
