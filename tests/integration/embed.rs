//! The OpenAI-compatible embedder against a scripted `/embeddings` server on loopback: batches,
//! order, retries honouring `Retry-After`, clear errors, and the query/passage prefixes of
//! instruction-tuned models. The server is honest about being a
//! stand-in: it returns fixed vectors that encode the input's position.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use crowdvision_agent::auth::AuthUser;
use crowdvision_agent::config::{Config, RawSettings};
use crowdvision_agent::retrieval::chunk::Chunker;
use crowdvision_agent::retrieval::embed::{EmbedError, Embedder, OpenAiEmbedder};
use crowdvision_agent::retrieval::ingest::{
    IngestOptions, Ingestor, NoProgress, DEFAULT_MAX_SOURCE_BYTES,
};
use crowdvision_agent::retrieval::rerank::NoopReranker;
use crowdvision_agent::retrieval::search::{Retriever, SearchMode};
use crowdvision_agent::retrieval::store::{sqlite::SqliteStore, ChunkStore};
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the server does for each request, in order; after the script, it answers normally.
#[derive(Clone)]
enum Reply {
    Ok,
    Status(u16, Option<&'static str>),
    WrongDimension,
}

#[derive(Clone, Default)]
struct Script {
    replies: Arc<Mutex<VecDeque<Reply>>>,
    requests: Arc<Mutex<Vec<(HeaderMap, Value)>>>,
}

async fn embeddings(
    State(script): State<Script>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    script
        .requests
        .lock()
        .unwrap()
        .push((headers, body.clone()));
    let reply = script
        .replies
        .lock()
        .unwrap()
        .pop_front()
        .unwrap_or(Reply::Ok);
    let dim = body["dimensions"].as_u64().unwrap() as usize;
    let inputs = body["input"].as_array().unwrap().clone();
    let vectors = |dim: usize| -> Vec<Value> {
        // Reversed on purpose: the client must order by `index`, not by arrival.
        inputs
            .iter()
            .enumerate()
            .rev()
            .map(|(i, text)| {
                let mut v = vec![0.0f32; dim];
                v[0] = text.as_str().unwrap().len() as f32;
                json!({"index": i, "embedding": v})
            })
            .collect()
    };
    match reply {
        Reply::Ok => Json(json!({"data": vectors(dim)})).into_response(),
        Reply::WrongDimension => Json(json!({"data": vectors(dim + 1)})).into_response(),
        Reply::Status(code, retry_after) => {
            // A body no operator should see echoed: an HTML page quoting SQL.
            let mut response = (
                StatusCode::from_u16(code).unwrap(),
                "<html>Traceback: SELECT api_key FROM tenants</html>",
            )
                .into_response();
            if let Some(seconds) = retry_after {
                response
                    .headers_mut()
                    .insert("retry-after", seconds.parse().unwrap());
            }
            response
        }
    }
}

async fn serve(replies: Vec<Reply>) -> (String, Script) {
    let script = Script::default();
    script.replies.lock().unwrap().extend(replies);
    let app = Router::new()
        .route("/v1/embeddings", post(embeddings))
        .with_state(script.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{address}/v1"), script)
}

fn embedder(base_url: &str, batch_size: usize) -> OpenAiEmbedder {
    let raw = RawSettings::from_pairs([
        ("LLM_API_KEY", "test-key"),
        ("LLM_BASE_URL", base_url),
        ("EMBEDDING_DIM", "16"),
        ("EMBEDDING_BATCH_SIZE", &batch_size.to_string()),
        ("EMBEDDING_TIMEOUT_SECONDS", "2"),
    ]);
    OpenAiEmbedder::new(&Config::from_raw(&raw).unwrap().embedding)
}

fn texts(n: usize) -> Vec<String> {
    (0..n).map(|i| "x".repeat(i + 1)).collect()
}

#[tokio::test]
async fn batches_keep_input_order_and_send_the_model_and_key() {
    let (url, script) = serve(vec![]).await;
    let vectors = embedder(&url, 4).embed(&texts(10)).await.unwrap();
    assert_eq!(vectors.len(), 10);
    for (i, v) in vectors.iter().enumerate() {
        assert_eq!(v.len(), 16);
        assert_eq!(v[0], (i + 1) as f32, "vector {i} belongs to input {i}");
    }
    let requests = script.requests.lock().unwrap();
    assert_eq!(requests.len(), 3, "10 inputs in batches of 4");
    let (headers, body) = &requests[0];
    assert_eq!(headers["authorization"], "Bearer test-key");
    assert_eq!(body["model"], "openai/text-embedding-3-small");
    assert_eq!(body["dimensions"], 16);
}

#[tokio::test]
async fn rate_limits_are_retried_after_the_given_wait() {
    let (url, script) = serve(vec![
        Reply::Status(429, Some("1")),
        Reply::Status(503, None),
    ])
    .await;
    let started = Instant::now();
    let vectors = embedder(&url, 8).embed(&texts(3)).await.unwrap();
    assert_eq!(vectors.len(), 3);
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "Retry-After: 1 was honoured"
    );
    assert_eq!(script.requests.lock().unwrap().len(), 3);
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let (url, script) = serve(vec![Reply::Status(401, None)]).await;
    let error = embedder(&url, 8).embed(&texts(2)).await.unwrap_err();
    assert!(
        matches!(error, EmbedError::Status { status: 401, .. }),
        "{error}"
    );
    assert_eq!(
        error.to_string(),
        "the embedding endpoint answered HTTP 401"
    );
    assert_eq!(script.requests.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_retry_after_longer_than_a_minute_fails_at_once_naming_it() {
    let (url, script) = serve(vec![Reply::Status(429, Some("900"))]).await;
    let started = Instant::now();
    let error = embedder(&url, 8).embed(&texts(2)).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(
        error.to_string().contains("asked to retry after 900 s"),
        "{error}"
    );
    assert_eq!(script.requests.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn persistent_server_errors_give_up() {
    let replies = vec![Reply::Status(500, Some("0")); 10];
    let (url, script) = serve(replies).await;
    let error = embedder(&url, 8).embed(&texts(2)).await.unwrap_err();
    assert!(
        matches!(error, EmbedError::Status { status: 500, .. }),
        "{error}"
    );
    assert_eq!(
        script.requests.lock().unwrap().len(),
        5,
        "five attempts, then the error"
    );
}

#[tokio::test]
async fn a_dimension_mismatch_is_a_clear_error() {
    let (url, _) = serve(vec![Reply::WrongDimension]).await;
    let error = embedder(&url, 8).embed(&texts(2)).await.unwrap_err();
    assert!(matches!(
        error,
        EmbedError::Dimension {
            expected: 16,
            got: 17
        }
    ));
    assert!(error.to_string().contains("EMBEDDING_DIM"));
}

/// The texts of every `/embeddings` request the script received, in order.
fn inputs_sent(script: &Script) -> Vec<Vec<String>> {
    let requests = script.requests.lock().unwrap();
    requests
        .iter()
        .map(|(_, body)| {
            body["input"]
                .as_array()
                .unwrap()
                .iter()
                .map(|text| text.as_str().unwrap().to_string())
                .collect()
        })
        .collect()
}

#[tokio::test]
async fn an_e5_model_gets_passage_and_query_prefixes_and_the_store_records_them() {
    let (url, script) = serve(vec![]).await;
    let raw = RawSettings::from_pairs([
        ("LLM_API_KEY", "test-key"),
        ("LLM_BASE_URL", url.as_str()),
        ("EMBEDDING_PROVIDER", "openai"),
        ("EMBEDDING_MODEL", "multilingual-e5-small-q4"),
        ("EMBEDDING_DIM", "16"),
    ]);
    let config = Config::from_raw(&raw).unwrap();
    let dir = tempfile::tempdir().unwrap();
    crate::util::write(
        &dir.path().join("docs/battery.md"),
        "# Maintenance\n\nThe battery of each sensor lasts 36 months.\n",
    );
    let store: Arc<dyn ChunkStore> = Arc::new(
        SqliteStore::open(&dir.path().join("kb.sqlite"))
            .await
            .unwrap(),
    );
    store.migrate(16).await.unwrap();
    let embedder: Arc<dyn Embedder> = Arc::new(OpenAiEmbedder::new(&config.embedding));
    let ingestor = Ingestor {
        store: store.clone(),
        embedder: embedder.clone(),
        chunker: Chunker::new(config.chunking),
    };
    let options = IngestOptions {
        roots: vec![dir.path().join("docs")],
        prune: false,
        dry_run: false,
        require_permissions: false,
        docs_root: None,
        max_source_bytes: DEFAULT_MAX_SOURCE_BYTES,
    };
    assert_eq!(ingestor.run(&options, &NoProgress).await.unwrap().added, 1);
    let retriever = Retriever {
        store: store.clone(),
        embedder,
        reranker: Arc::new(NoopReranker),
        settings: config.retrieval.clone(),
    };
    let question = "How long does a battery last?";
    retriever
        .search(question, &AuthUser::anonymous(), None, SearchMode::Hybrid)
        .await
        .unwrap();

    let sent = inputs_sent(&script);
    let (question_sent, passages_sent) = sent.split_last().unwrap();
    assert!(!passages_sent.is_empty());
    for text in passages_sent.iter().flatten() {
        assert!(text.starts_with("passage: "), "{text:?}");
        assert!(text.contains("36 months"), "{text:?}");
    }
    assert_eq!(question_sent, &vec![format!("query: {question}")]);

    // Vectors made without the prefixes do not compare: the store refuses that model.
    let refused = store
        .ensure_embedding("multilingual-e5-small-q4", 16)
        .await
        .unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("multilingual-e5-small-q4 [query: |passage: ]"),
        "{refused}"
    );
    store
        .ensure_embedding("multilingual-e5-small-q4 [query: |passage: ]", 16)
        .await
        .unwrap();
}
