//! Hybrid search latency at 10k and 100k chunks (768 dimensions), on PostgreSQL + pgvector
//! (HNSW) and on the embedded SQLite store, beside the floor: the same two SQL statements run
//! directly, concurrently, with the query vector already computed.
//!
//! `cargo bench --bench search_latency` (`SIZES=10000,100000`, `QUERIES=200`, `STORES=postgres,sqlite`, `MODE=hybrid|vector|keyword` for the library side alone,
//! `TEST_POSTGRES_URL=postgres://…/postgres`). Chunk texts come from `../shared/corpus`; the
//! Postgres databases `cv_bench_<size>` are kept between runs, since building 100k HNSW entries
//! takes minutes.

use crowdvision_agent::auth::AuthUser;
use crowdvision_agent::config::{ChunkingConfig, Config, RawSettings};
use crowdvision_agent::retrieval::chunk::Chunker;
use crowdvision_agent::retrieval::embed::LocalEmbedder;
use crowdvision_agent::retrieval::query::keyword_terms;
use crowdvision_agent::retrieval::rerank::NoopReranker;
use crowdvision_agent::retrieval::search::{Retriever, SearchMode};
use crowdvision_agent::retrieval::source::discover;
use crowdvision_agent::retrieval::store::postgres::{self, PostgresStore};
use crowdvision_agent::retrieval::store::sqlite::SqliteStore;
use crowdvision_agent::retrieval::store::{ChunkStore, NewChunk, NewDocument};
use futures::TryStreamExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

const DIM: usize = 768;
const CHUNKS_PER_DOCUMENT: usize = 500;

#[tokio::main]
async fn main() {
    let sizes: Vec<usize> = std::env::var("SIZES")
        .unwrap_or_else(|_| "10000,100000".into())
        .split(',')
        .map(|s| s.trim().parse().unwrap())
        .collect();
    let query_count: usize = std::env::var("QUERIES").map_or(200, |q| q.parse().unwrap());
    let stores = std::env::var("STORES").unwrap_or_else(|_| "postgres,sqlite".into());
    let texts = corpus_texts(*sizes.iter().max().unwrap());
    let questions: Vec<String> = texts
        .iter()
        .step_by(texts.len() / query_count)
        .take(query_count)
        .map(|t| t.split_whitespace().take(8).collect::<Vec<_>>().join(" "))
        .collect();
    let caller =
        AuthUser::from_claims(r#"{"sub":"bench","roles":["business_staff"],"domains":["acme"]}"#)
            .unwrap();
    println!(
        "{} queries as business_staff of acme; about 80% of chunks visible\n",
        questions.len()
    );
    println!("| store | chunks | library p50 | library p99 | bare SQL p50 | bare SQL p99 | overhead p50 |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for size in sizes {
        let postgres = if stores.contains("postgres") {
            postgres_store(size, &texts).await
        } else {
            None
        };
        if let Some(store) = postgres {
            let store = Arc::new(store);
            let retriever = retriever(store.clone());
            time_library(&retriever, &questions[..10], &caller).await;
            time_postgres_floor(&store, &questions[..10], &caller).await;
            let (mut library, mut floor) = (Vec::new(), Vec::new());
            // Batches alternate which side runs first, so neither inherits the other's warm cache.
            for (i, batch) in questions.chunks(10).enumerate() {
                if i % 2 == 0 {
                    library.extend(time_library(&retriever, batch, &caller).await);
                    floor.extend(time_postgres_floor(&store, batch, &caller).await);
                } else {
                    floor.extend(time_postgres_floor(&store, batch, &caller).await);
                    library.extend(time_library(&retriever, batch, &caller).await);
                }
            }
            row("PostgreSQL + HNSW", size, &library, &floor);
        }
        if !stores.contains("sqlite") {
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(
            SqliteStore::open(&dir.path().join("kb.sqlite"))
                .await
                .unwrap(),
        );
        fill(store.as_ref(), size, &texts).await;
        let retriever = retriever(store.clone());
        time_library(&retriever, &questions[..10], &caller).await;
        time_sqlite_floor(&store, &questions[..10], &caller).await;
        let (mut library, mut floor) = (Vec::new(), Vec::new());
        for (i, batch) in questions.chunks(10).enumerate() {
            if i % 2 == 0 {
                library.extend(time_library(&retriever, batch, &caller).await);
                floor.extend(time_sqlite_floor(&store, batch, &caller).await);
            } else {
                floor.extend(time_sqlite_floor(&store, batch, &caller).await);
                library.extend(time_library(&retriever, batch, &caller).await);
            }
        }
        row("SQLite (exact)", size, &library, &floor);
    }
}

fn row(label: &str, size: usize, library: &[Duration], floor: &[Duration]) {
    let (lp50, lp99) = (percentile(library, 50.0), percentile(library, 99.0));
    let (fp50, fp99) = (percentile(floor, 50.0), percentile(floor, 99.0));
    println!(
        "| {label} | {size} | {:.2} ms | {:.2} ms | {:.2} ms | {:.2} ms | {:+.1}% |",
        ms(lp50),
        ms(lp99),
        ms(fp50),
        ms(fp99),
        (ms(lp50) / ms(fp50) - 1.0) * 100.0
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn percentile(samples: &[Duration], p: f64) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort();
    sorted[((sorted.len() - 1) as f64 * p / 100.0).round() as usize]
}

/// Chunk texts from the shared corpus, repeated with a suffix when more are needed.
fn corpus_texts(count: usize) -> Vec<String> {
    let corpus = std::env::var("CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"));
    let chunker = Chunker::new(ChunkingConfig::default());
    let (files, _) = discover(&[corpus]);
    let base: Vec<String> = files
        .iter()
        .filter_map(|f| std::fs::read_to_string(&f.path).ok())
        .filter_map(|t| chunker.chunk(&t).ok())
        .flat_map(|d| d.chunks.into_iter().map(|c| c.text))
        .collect();
    (0..count)
        .map(|i| {
            let text = &base[i % base.len()];
            if i < base.len() {
                text.clone()
            } else {
                format!("{text}\n\n(copy {})", i / base.len())
            }
        })
        .collect()
}

/// 70% public, 10% staff, 10% admin, 10% domain acme.
fn permissions_of(document: usize) -> Vec<String> {
    match document % 10 {
        0 => vec!["business_staff".into()],
        1 => vec!["admin".into()],
        2 => vec!["domain:acme".into()],
        _ => vec![],
    }
}

async fn fill(store: &dyn ChunkStore, size: usize, texts: &[String]) {
    store.migrate(DIM).await.unwrap();
    store.ensure_embedding("local-hash-v1", DIM).await.unwrap();
    let status = store.status().await.unwrap();
    if status.chunks as usize == size {
        return;
    }
    let embedder = LocalEmbedder::new(DIM);
    let started = Instant::now();
    for (document, batch) in texts[..size].chunks(CHUNKS_PER_DOCUMENT).enumerate() {
        let chunks = batch
            .iter()
            .enumerate()
            .map(|(i, text)| NewChunk {
                chunk_id: format!("{document:05}{i:04}"),
                ordinal: i,
                section: format!("Document {document}"),
                kind: "prose".into(),
                text: text.clone(),
                tokens: 0,
                embedding: embedder.embed_one(text),
            })
            .collect();
        let new = NewDocument {
            source: format!("bench/{document}.md"),
            content_hash: format!("bench-{size}-{document}"),
            title: None,
            permissions: permissions_of(document),
            metadata: serde_json::json!({}),
            chunks,
        };
        store.write_document(&new).await.unwrap();
    }
    eprintln!(
        "{}: loaded {size} chunks in {:.0} s",
        store.backend(),
        started.elapsed().as_secs_f64()
    );
}

async fn postgres_store(size: usize, texts: &[String]) -> Option<PostgresStore> {
    let admin_url = std::env::var("TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into());
    let admin = match sqlx::PgPool::connect(&admin_url).await {
        Ok(pool) => pool,
        Err(e) => {
            eprintln!("SKIPPED Postgres: {e}");
            return None;
        }
    };
    let name = format!("cv_bench_{size}");
    let exists: bool =
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)")
            .bind(&name)
            .fetch_one(&admin)
            .await
            .unwrap();
    if !exists {
        sqlx::query(&format!("CREATE DATABASE {name}"))
            .execute(&admin)
            .await
            .unwrap();
    }
    let url = format!("{}/{name}", admin_url.rsplit_once('/').unwrap().0);
    let store = PostgresStore::connect(&url).await.unwrap();
    fill(&store, size, texts).await;
    sqlx::query("ANALYZE").execute(store.pool()).await.unwrap();
    Some(store)
}

fn retriever(store: Arc<dyn ChunkStore>) -> Retriever {
    Retriever {
        store,
        embedder: Arc::new(LocalEmbedder::new(DIM)),
        reranker: Arc::new(NoopReranker),
        settings: Config::from_raw(&RawSettings::default()).unwrap().retrieval,
    }
}

async fn time_library(
    retriever: &Retriever,
    questions: &[String],
    caller: &AuthUser,
) -> Vec<Duration> {
    let mode = match std::env::var("MODE").as_deref() {
        Ok("vector") => SearchMode::VectorOnly,
        Ok("keyword") => SearchMode::KeywordOnly,
        _ => SearchMode::Hybrid,
    };
    let mut samples = Vec::with_capacity(questions.len());
    for q in questions {
        let started = Instant::now();
        let results = retriever.search(q, caller, None, mode).await.unwrap();
        samples.push(started.elapsed());
        std::hint::black_box(results);
    }
    samples
}

async fn time_postgres_floor(
    store: &PostgresStore,
    questions: &[String],
    caller: &AuthUser,
) -> Vec<Duration> {
    let embedder = LocalEmbedder::new(DIM);
    let permissions = caller.effective_permissions();
    let mut samples = Vec::with_capacity(questions.len());
    for q in questions {
        let vector = pgvector::Vector::from(embedder.embed_one(q));
        let terms = keyword_terms(q);
        let started = Instant::now();
        let vector = async {
            let mut tx = store.pool().begin().await.unwrap();
            postgres::prepare_vector_scan(&mut tx, 20).await.unwrap();
            let rows = sqlx::query(postgres::VECTOR_SQL)
                .bind(&vector)
                .bind(&permissions)
                .bind(20i64)
                .fetch_all(&mut *tx)
                .await
                .unwrap();
            tx.commit().await.unwrap();
            rows.len()
        };
        // The keyword side is two round trips: the terms' frequencies, then the BM25 ranking.
        let keyword = async {
            store
                .keyword_search(&terms, &permissions, 20)
                .await
                .unwrap()
                .len()
        };
        std::hint::black_box(tokio::join!(vector, keyword));
        samples.push(started.elapsed());
    }
    samples
}

async fn time_sqlite_floor(
    store: &SqliteStore,
    questions: &[String],
    caller: &AuthUser,
) -> Vec<Duration> {
    let allowed = caller.effective_permissions();
    let permissions = serde_json::to_string(&allowed).unwrap();
    let mut samples = Vec::with_capacity(questions.len());
    let scan = crowdvision_agent::retrieval::store::sqlite_search::vector_scan_sql();
    for q in questions {
        let terms = keyword_terms(q);
        let started = Instant::now();
        let vector = async {
            // The floor reads every visible vector, as the exact search must, without scoring.
            let mut rows = sqlx::query(scan).bind(&permissions).fetch(store.pool());
            let mut n = 0;
            while rows.try_next().await.unwrap().is_some() {
                n += 1;
            }
            n
        };
        // The keyword side is two round trips: the terms' frequencies, then the BM25 ranking.
        let keyword = async {
            store
                .keyword_search(&terms, &allowed, 20)
                .await
                .unwrap()
                .len()
        };
        std::hint::black_box(tokio::join!(vector, keyword));
        samples.push(started.elapsed());
    }
    samples
}
