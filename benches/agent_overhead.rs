//! The agent's own overhead per request: everything `Agent::answer` does except waiting for the
//! provider and the tools. A two-hop answer (one `search_docs`-shaped tool call returning six
//! passages of ~1,200 characters, then a final answer citing two of them) is answered again and
//! again against providers that answer at once:
//!
//! - in process: a `ChatModel` that hands back prepared turns (the loop, message building,
//!   tool dispatch through the registry, citation check and response assembly);
//! - over loopback HTTP: the OpenAI-compatible adapter against the scripted chat-completions
//!   server of the integration tests, so JSON encoding, the HTTP client and the server's own
//!   handling are included (an upper bound on what the adapter adds).
//!
//! In process again with tracing on: one summary line per answer on stderr (what `serve` logs
//! without a collector; run with `2>/dev/null` to keep 20,000 of them off the terminal),
//! exported over OTLP/HTTP to a loopback receiver, and exported with payloads.
//!
//! `cargo bench --bench agent_overhead` (`REQUESTS=20000` in process, `HTTP_REQUESTS=2000`;
//! `BENCH_RESULT=FILE` also writes the rows as JSON, which `scripts/bench-check` reads;
//! `ROWS=in-process` measures the first row only, for a profile of the agent alone).

// The allocator of the binary, so that the figures are the ones `serve` and `ask` see.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "../tests/integration/provider.rs"]
#[allow(dead_code)]
mod provider;

#[path = "support/instant_agent.rs"]
mod instant_agent;

use crowdvision_agent::agent::answer::Agent;
use crowdvision_agent::agent::openai::OpenAiChat;
use crowdvision_agent::auth::identity::Caller;
use crowdvision_agent::auth::AuthUser;
use crowdvision_agent::config::{Config, LogFormat, RawSettings};
use crowdvision_agent::contract::Decision;
use crowdvision_agent::contract::Question;
use crowdvision_agent::observe::telemetry::{Telemetry, TelemetrySettings};
use instant_agent::{agent, instant_model, FINAL_ANSWER};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tracing::instrument::WithSubscriber;

/// An OTLP/HTTP endpoint that takes every export and answers 200, on its own thread so that
/// receiving never runs between the measured answers.
fn otlp_receiver() -> url::Url {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let app = axum::Router::new().route(
                "/v1/traces",
                axum::routing::post(|_body: axum::body::Bytes| async { "" }),
            );
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap()).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
    let address = rx.recv().unwrap();
    url::Url::parse(&format!("http://{address}")).unwrap()
}

async fn measure(agent: &Agent, requests: usize) -> Vec<Duration> {
    let user = Caller::minted(
        AuthUser::from_claims(r#"{"sub":"bench","roles":["business_staff"],"domains":["acme"]}"#)
            .unwrap(),
    );
    let question = Question::new("What is the CO2 alarm threshold?");
    let mut times = Vec::with_capacity(requests);
    for i in 0..requests + requests / 10 {
        let started = Instant::now();
        let response = agent.answer(&question, &user, None).await.unwrap();
        let elapsed = started.elapsed();
        assert_eq!(response.decision, Decision::Answered);
        assert_eq!(response.citations.len(), 2);
        // The first tenth warms up.
        if i >= requests / 10 {
            times.push(elapsed);
        }
    }
    times.sort();
    times
}

/// Prints a row of the table and returns it for `BENCH_RESULT`.
fn report(label: &str, times: &[Duration]) -> serde_json::Value {
    let at = |q: f64| times[((times.len() as f64 * q) as usize).min(times.len() - 1)];
    let micros = |q: f64| (at(q).as_secs_f64() * 1e7).round() / 10.0;
    println!(
        "| {label} | {} | {:.1} µs | {:.1} µs | {:.1} µs |",
        times.len(),
        micros(0.5),
        micros(0.9),
        micros(0.99),
    );
    serde_json::json!({"row": label, "requests": times.len(),
        "p50_us": micros(0.5), "p90_us": micros(0.9), "p99_us": micros(0.99)})
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let requests: usize = std::env::var("REQUESTS").map_or(20_000, |v| v.parse().unwrap());
    let http_requests: usize = std::env::var("HTTP_REQUESTS").map_or(2_000, |v| v.parse().unwrap());
    let in_process = agent(Arc::new(instant_model()));
    println!("| provider | requests | p50 | p90 | p99 |");
    println!("|---|---:|---:|---:|---:|");
    let mut rows = vec![report(
        "in process (agent alone)",
        &measure(&in_process, requests).await,
    )];
    // `ROWS=in-process` stops after the first row: what a profile of the agent alone wants.
    if std::env::var("ROWS").is_ok_and(|rows| rows == "in-process") {
        return write_result(rows);
    }
    let receiver = otlp_receiver();
    // Each row its own log filter (run without `RUST_LOG`, which would win over it).
    let summaries = "warn,crowdvision_agent::requests=info";
    let tracing_runs = [
        (
            "in process, a summary line per answer (no OTLP)",
            None,
            false,
            summaries,
        ),
        (
            "in process, spans exported over OTLP/HTTP",
            Some(&receiver),
            false,
            "warn",
        ),
        (
            "in process, exported with OBSERVE_PAYLOADS=true",
            Some(&receiver),
            true,
            "warn",
        ),
    ];
    for (label, endpoint, payloads, filter) in tracing_runs {
        let (dispatch, telemetry) = Telemetry::build(TelemetrySettings {
            log_format: LogFormat::Pretty,
            otlp_endpoint: endpoint,
            payloads,
            default_filter: filter,
        })
        .unwrap();
        let times = measure(&in_process, requests)
            .with_subscriber(dispatch)
            .await;
        rows.push(report(label, &times));
        telemetry.shutdown();
    }
    crowdvision_agent::observe::set_payloads(false);

    let calls = [(
        "call_1",
        "search_docs",
        r#"{"query":"CO2 alarm threshold"}"#,
    )];
    // The scripted server plays its script in order: alternate the two turns.
    let mut script = Vec::new();
    for _ in 0..(http_requests + http_requests / 10) {
        script.push(provider::tool_calls(&calls, provider::usage(1500, 20)));
        script.push(provider::answer(FINAL_ANSWER, provider::usage(1600, 40)));
    }
    let server = provider::ScriptedProvider::start(script).await;
    let config = Config::from_raw(&RawSettings::from_pairs([
        ("LLM_BASE_URL", server.url.as_str()),
        ("OPENROUTER_API_KEY", "bench"),
    ]))
    .unwrap();
    let over_http = agent(Arc::new(OpenAiChat::new(&config.llm)));
    rows.push(report(
        "loopback HTTP (agent + adapter + scripted server)",
        &measure(&over_http, http_requests).await,
    ));
    write_result(rows);
}

/// The rows as JSON in `BENCH_RESULT`, for scripts/bench-check.
fn write_result(rows: Vec<serde_json::Value>) {
    if let Ok(path) = std::env::var("BENCH_RESULT") {
        let result = serde_json::json!({"bench": "agent_overhead", "rows": rows});
        std::fs::write(&path, result.to_string()).unwrap();
    }
}
