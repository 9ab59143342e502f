//! Retrieval quality over `documentation/` with the questions of `datasets/retrieval.yaml`:
//! recall@5 and MRR@10 for vector-only, keyword-only and hybrid retrieval.
//!
//! `cargo bench --bench retrieval_quality` uses the configured embedder (local by default, or
//! `EMBEDDING_PROVIDER=openai` with a key) and a temporary embedded store.

use crowdvision_agent::auth::AuthUser;
use crowdvision_agent::config::Config;
use crowdvision_agent::retrieval::chunk::Chunker;
use crowdvision_agent::retrieval::embed;
use crowdvision_agent::retrieval::ingest::{IngestOptions, Ingestor, NoProgress};
use crowdvision_agent::retrieval::rerank::NoopReranker;
use crowdvision_agent::retrieval::search::{Retriever, SearchMode};
use crowdvision_agent::retrieval::store::{sqlite::SqliteStore, ChunkStore};
use std::path::PathBuf;
use std::sync::Arc;

#[derive(serde::Deserialize)]
struct Dataset {
    questions: Vec<Question>,
}

#[derive(serde::Deserialize)]
struct Question {
    question: String,
    sources: Vec<String>,
}

#[tokio::main]
async fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dataset: Dataset = serde_yaml::from_str(
        &std::fs::read_to_string(root.join("datasets/retrieval.yaml")).unwrap(),
    )
    .unwrap();
    let config = Config::load(None).expect("configuration");
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn ChunkStore> = Arc::new(
        SqliteStore::open(&dir.path().join("kb.sqlite"))
            .await
            .unwrap(),
    );
    store.migrate(config.embedding.dim).await.unwrap();
    let embedder = embed::from_config(&config.embedding);
    let ingestor = Ingestor {
        store: store.clone(),
        embedder: embedder.clone(),
        chunker: Chunker::new(config.chunking),
    };
    let options = IngestOptions {
        roots: vec![root.join("documentation")],
        prune: false,
        dry_run: false,
        require_permissions: false,
        docs_root: None,
        max_source_bytes: crowdvision_agent::retrieval::ingest::DEFAULT_MAX_SOURCE_BYTES,
    };
    let summary = ingestor.run(&options, &NoProgress).await.unwrap();
    let retriever = Retriever {
        store,
        embedder: embedder.clone(),
        reranker: Arc::new(NoopReranker),
        settings: config.retrieval.clone(),
    };
    let reader =
        AuthUser::from_claims(r#"{"sub":"bench","roles":["admin"],"domains":["acme"]}"#).unwrap();
    println!(
        "embedder {} ({} dims), {} questions, {} documents, {} chunks",
        embedder.model(),
        embedder.dim(),
        dataset.questions.len(),
        summary.added,
        summary.chunks_written
    );
    println!("| retrieval | recall@5 | MRR@10 |");
    println!("|---|---:|---:|");
    for (label, mode) in [
        ("vector only", SearchMode::VectorOnly),
        ("keyword only", SearchMode::KeywordOnly),
        ("hybrid (RRF)", SearchMode::Hybrid),
    ] {
        let (mut recall, mut reciprocal) = (0.0, 0.0);
        for q in &dataset.questions {
            let results = retriever
                .search(&q.question, &reader, Some(10), mode)
                .await
                .unwrap();
            let sources: Vec<&str> = results.iter().map(|r| r.chunk.source.as_str()).collect();
            let top5: Vec<&str> = sources.iter().take(5).copied().collect();
            let found = q
                .sources
                .iter()
                .filter(|s| top5.contains(&s.as_str()))
                .count();
            recall += found as f64 / q.sources.len() as f64;
            if let Some(rank) = sources
                .iter()
                .position(|s| q.sources.iter().any(|want| want == s))
            {
                reciprocal += 1.0 / (rank + 1) as f64;
            }
        }
        let n = dataset.questions.len() as f64;
        println!("| {label} | {:.3} | {:.3} |", recall / n, reciprocal / n);
    }
}
