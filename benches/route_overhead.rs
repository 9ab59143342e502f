//! What each HTTP door adds to the same answer: `POST /ask`, the OpenAI-compatible
//! `POST /v1/chat/completions` and MCP's `tools/call ask` at `/mcp`, served by `serve`'s own
//! router on loopback with the instant agent of `agent_overhead` (no provider, no tool wait),
//! one request at a time over one kept-alive connection, the three routes in turn so that drift
//! touches them alike. The agent's work is the same on every route; the differences are the
//! routes' own (identity, body checks, admission, the response's shape).
//!
//! `cargo bench --bench route_overhead` (`REQUESTS=2000` per route).

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "support/instant_agent.rs"]
mod instant_agent;

use crowdvision_agent::auth::authz::Authorizer;
use crowdvision_agent::config::{Config, RawSettings};
use crowdvision_agent::retrieval::embed::LocalEmbedder;
use crowdvision_agent::retrieval::rerank::NoopReranker;
use crowdvision_agent::retrieval::search::Retriever;
use crowdvision_agent::retrieval::store::sqlite::SqliteStore;
use crowdvision_agent::retrieval::store::ChunkStore;
use crowdvision_agent::server::{self, AppState};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

const QUESTION: &str = "What is the CO2 alarm threshold?";
const CLAIMS: &str = r#"{"sub":"bench","roles":["business_staff"],"domains":["acme"]}"#;

/// `serve`'s router over the instant agent, on a loopback port.
async fn serve(dir: &std::path::Path) -> String {
    let database = format!("sqlite://{}", dir.join("kb.sqlite").display());
    let config = Config::from_raw(&RawSettings::from_pairs([
        ("DATABASE_URL", database.as_str()),
        ("OPENROUTER_API_KEY", "bench"),
        ("EMBEDDING_PROVIDER", "local"),
        // Limits are admission work, the same on every route: off, so the runs never hit them.
        ("REQUESTS_PER_MINUTE", "0"),
        ("TOKENS_PER_HOUR", "0"),
        ("MAX_IN_FLIGHT_PER_CALLER", "0"),
    ]))
    .unwrap();
    let store = Arc::new(SqliteStore::open(&dir.join("kb.sqlite")).await.unwrap());
    store.migrate(config.embedding.dim).await.unwrap();
    let retriever = Arc::new(Retriever {
        store,
        embedder: Arc::new(LocalEmbedder::new(config.embedding.dim)),
        reranker: Arc::new(NoopReranker),
        settings: config.retrieval.clone(),
    });
    let agent = instant_agent::agent(Arc::new(instant_agent::instant_model()));
    let authz = Arc::new(Authorizer::from_config(&config));
    let state = AppState::from_config(&config, agent, retriever, authz);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let router = server::router(Arc::new(state));
    tokio::spawn(async move { axum::serve(listener, router).await });
    url
}

/// One route: its path, body and the check that its answer came back whole.
struct Route {
    label: &'static str,
    path: &'static str,
    body: Value,
    answered: fn(&Value) -> bool,
}

fn routes() -> [Route; 3] {
    [
        Route {
            label: "POST /ask",
            path: "/ask",
            body: json!({"question": QUESTION}),
            answered: |body| body["citations"].as_array().is_some_and(|c| c.len() == 2),
        },
        Route {
            label: "POST /v1/chat/completions",
            path: "/v1/chat/completions",
            body: json!({"messages": [{"role": "user", "content": QUESTION}]}),
            answered: |body| {
                body["choices"][0]["message"]["content"]
                    .as_str()
                    .is_some_and(|text| text.contains("[^chunk00abcdef0123456789]"))
            },
        },
        Route {
            label: "POST /mcp (tools/call ask)",
            path: "/mcp",
            body: json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "ask", "arguments": {"question": QUESTION}}}),
            answered: |body| {
                body["result"]["isError"] != true
                    && body["result"]["structuredContent"]["citations"]
                        .as_array()
                        .is_some_and(|c| c.len() == 2)
            },
        },
    ]
}

fn report(label: &str, times: &[Duration], baseline: Option<&[Duration]>) {
    let at = |times: &[Duration], q: f64| {
        times[((times.len() as f64 * q) as usize).min(times.len() - 1)].as_secs_f64() * 1e6
    };
    let over = |q: f64| match baseline {
        Some(base) => format!("{:+.1} µs", at(times, q) - at(base, q)),
        None => "".to_string(),
    };
    println!(
        "| {label} | {} | {:.1} µs | {:.1} µs | {:.1} µs | {} | {} |",
        times.len(),
        at(times, 0.5),
        at(times, 0.9),
        at(times, 0.99),
        over(0.5),
        over(0.99),
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let requests: usize = std::env::var("REQUESTS").map_or(2_000, |v| v.parse().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let url = serve(dir.path()).await;
    let client = crowdvision_agent::http::client_builder().build().unwrap();
    let routes = routes();
    let mut times: Vec<Vec<Duration>> = vec![Vec::with_capacity(requests); routes.len()];
    for i in 0..requests + requests / 10 {
        for (route, samples) in routes.iter().zip(times.iter_mut()) {
            let started = Instant::now();
            let response = client
                .post(format!("{url}{}", route.path))
                .header("x-gateway-claims", CLAIMS)
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", "2025-06-18")
                .json(&route.body)
                .send()
                .await
                .unwrap();
            let status = response.status();
            let body: Value = response.json().await.unwrap();
            let elapsed = started.elapsed();
            assert!(
                status.is_success() && (route.answered)(&body),
                "{}: {status} {body}",
                route.label
            );
            // The first tenth warms up.
            if i >= requests / 10 {
                samples.push(elapsed);
            }
        }
    }
    for samples in &mut times {
        samples.sort();
    }
    println!("| route | requests | p50 | p90 | p99 | p50 over /ask | p99 over /ask |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (index, (route, samples)) in routes.iter().zip(&times).enumerate() {
        let baseline = (index > 0).then_some(times[0].as_slice());
        report(route.label, samples, baseline);
    }
}
