//! The two stores rank alike: the shipped `documentation/` ingested into SQLite and into
//! PostgreSQL with the same embedder, every question of `datasets/retrieval.yaml` searched as an
//! admin of Acme (who may read every page), and the top five sources compared, for the keyword
//! search alone (the BM25 index both stores keep) and for the hybrid search people get.

use crate::util::{repo_root, TestDatabase};
use crowdvision_agent::auth::AuthUser;
use crowdvision_agent::config::{ChunkingConfig, Config, RawSettings};
use crowdvision_agent::retrieval::chunk::Chunker;
use crowdvision_agent::retrieval::embed::{Embedder, LocalEmbedder};
use crowdvision_agent::retrieval::ingest::{IngestOptions, Ingestor, NoProgress};
use crowdvision_agent::retrieval::rerank::NoopReranker;
use crowdvision_agent::retrieval::search::{Retriever, SearchMode};
use crowdvision_agent::retrieval::store::{
    postgres::PostgresStore, sqlite::SqliteStore, ChunkStore,
};
use std::sync::Arc;

const DIM: usize = 256;

async fn with_documentation(store: Arc<dyn ChunkStore>) -> Retriever {
    store.migrate(DIM).await.unwrap();
    let embedder: Arc<dyn Embedder> = Arc::new(LocalEmbedder::new(DIM));
    let ingestor = Ingestor {
        store: store.clone(),
        embedder: embedder.clone(),
        chunker: Chunker::new(ChunkingConfig::default()),
    };
    let options = IngestOptions {
        roots: vec![repo_root().join("documentation")],
        prune: false,
        dry_run: false,
        require_permissions: true,
        docs_root: None,
        max_source_bytes: crowdvision_agent::retrieval::ingest::DEFAULT_MAX_SOURCE_BYTES,
    };
    let summary = ingestor.run(&options, &NoProgress).await.unwrap();
    assert_eq!(summary.failed, 0);
    assert!(summary.added >= 25, "{summary:?}");
    Retriever {
        store,
        embedder,
        reranker: Arc::new(NoopReranker),
        settings: Config::from_raw(&RawSettings::default()).unwrap().retrieval,
    }
}

fn questions() -> Vec<String> {
    let text = std::fs::read_to_string(repo_root().join("datasets/retrieval.yaml")).unwrap();
    let dataset: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    dataset["questions"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|q| q["question"].as_str().unwrap().to_string())
        .collect()
}

async fn top_sources(retriever: &Retriever, question: &str, mode: SearchMode) -> Vec<String> {
    let admin = AuthUser::from_claims(
        r#"{"sub":"a","roles":["business_admin","admin"],"domains":["acme"]}"#,
    )
    .unwrap();
    retriever
        .search(question, &admin, Some(5), mode)
        .await
        .unwrap()
        .into_iter()
        .map(|result| result.chunk.source)
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn both_stores_return_the_same_top_five_sources_on_the_retrieval_dataset() {
    let Some(db) = TestDatabase::create().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let sqlite = with_documentation(Arc::new(
        SqliteStore::open(&dir.path().join("kb.sqlite"))
            .await
            .unwrap(),
    ))
    .await;
    let postgres_store = Arc::new(PostgresStore::connect(&db.url).await.unwrap());
    let postgres = with_documentation(postgres_store.clone()).await;
    let questions = questions();
    assert!(questions.len() >= 40);
    let mut differing = Vec::new();
    for question in &questions {
        for mode in [SearchMode::KeywordOnly, SearchMode::Hybrid] {
            let (embedded, production) = (
                top_sources(&sqlite, question, mode).await,
                top_sources(&postgres, question, mode).await,
            );
            assert!(!embedded.is_empty(), "{question}: nothing found");
            if embedded != production {
                differing.push(format!(
                    "{mode:?} {question}: {embedded:?} vs {production:?}"
                ));
            }
        }
    }
    assert!(differing.is_empty(), "{}", differing.join("\n"));
    postgres_store.pool().close().await;
    db.drop_now().await;
}
