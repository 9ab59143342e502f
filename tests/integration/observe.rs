//! Observability end to end with the binary: spans of answers and ingest runs received by an
//! OTLP/HTTP receiver on loopback (decoded with `opentelemetry-proto`), a collector that never
//! answers, JSON log lines, and `GET /metrics` parsed as Prometheus text.

use crate::provider::{answer, streamed_answer, tool_calls, usage, ScriptedProvider};
use crate::util::{agent, free_port, stderr, wait_until_up, Running};
use axum::body::Bytes;
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::trace::v1::{status::StatusCode, Span};
use prost::Message;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// An OTLP/HTTP trace receiver: every span it was sent.
struct Receiver {
    url: String,
    spans: Arc<Mutex<Vec<Span>>>,
}

async fn receiver() -> Receiver {
    let spans: Arc<Mutex<Vec<Span>>> = Arc::default();
    let kept = spans.clone();
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |body: Bytes| {
            let kept = kept.clone();
            async move {
                let request = ExportTraceServiceRequest::decode(body).expect("OTLP protobuf");
                let mut kept = kept.lock().unwrap();
                for resource in request.resource_spans {
                    for scope in resource.scope_spans {
                        kept.extend(scope.spans);
                    }
                }
                (
                    [("content-type", "application/x-protobuf")],
                    ExportTraceServiceResponse::default().encode_to_vec(),
                )
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    Receiver { url, spans }
}

fn attribute<'s>(span: &'s Span, key: &str) -> Option<&'s AnyValue> {
    span.attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v| v.value.as_ref())
}

fn int_attribute(span: &Span, key: &str) -> Option<i64> {
    match attribute(span, key)? {
        AnyValue::IntValue(n) => Some(*n),
        AnyValue::StringValue(s) => s.parse().ok(),
        _ => None,
    }
}

fn str_attribute<'s>(span: &'s Span, key: &str) -> Option<&'s str> {
    match attribute(span, key)? {
        AnyValue::StringValue(s) => Some(s),
        _ => None,
    }
}

/// Every attribute value of every span as text.
fn all_text(spans: &[Span]) -> String {
    spans
        .iter()
        .flat_map(|s| s.attributes.iter())
        .map(|kv| format!("{}={:?}\n", kv.key, kv.value))
        .collect()
}

/// A customer of acme: sees the open page, not the staff page, and may look up acme's buildings.
const CUSTOMER: &str =
    r#"{"sub":"c","memberships":[{"domain":"acme","role":"standard_customer"}]}"#;

/// `ask` as the customer (`customer.json` in `dir`) about the zebra display, against the
/// scripted provider; the twin service is a port nothing listens on, so a live tool fails as
/// `unavailable` (and logs a warning).
fn customer_ask(
    dir: &std::path::Path,
    db: &str,
    provider: &ScriptedProvider,
) -> std::process::Command {
    let mut command = agent(dir);
    command
        .env("DATABASE_URL", db)
        .env("LLM_BASE_URL", &provider.url)
        .env("OPENROUTER_API_KEY", "test-key")
        .env("EMBEDDING_PROVIDER", "local")
        .env("REQUIRE_GROUNDED_ANSWERS", "false")
        .env("SCOPE_CHECK", "false")
        .env("TWIN_SERVICE_URL", "http://127.0.0.1:9")
        .args([
            "--claims",
            "customer.json",
            "ask",
            "Where is the zebra display?",
        ]);
    command
}

/// `ask --json` as a customer over the open and staff pages: a two-hop answer (the search
/// first, then a failing live tool, then the text), exporting to an OTLP receiver.
async fn traced_answer(payloads: bool) -> (Vec<Span>, Value) {
    let (dir, url) = crate::search::open_and_staff_pages();
    crate::util::write(&dir.path().join("customer.json"), CUSTOMER);
    let provider = ScriptedProvider::start(vec![tool_calls(
        &[("c1", "get_building", r#"{"building_id":"hq"}"#)],
        usage(120, 9),
    )])
    .await;
    provider.then_forever(answer("The lobby has a zebra display.", usage(230, 14)));
    let otlp = receiver().await;
    let mut command = customer_ask(dir.path(), &url, &provider);
    command
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &otlp.url)
        .env("OBSERVE_PAYLOADS", payloads.to_string())
        .arg("--json");
    let output = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let response: Value = serde_json::from_slice(&output.stdout).unwrap();
    // The process sends what is queued before it exits.
    let spans = otlp.spans.lock().unwrap().clone();
    (spans, response)
}

fn named<'s>(spans: &'s [Span], name: &str) -> Vec<&'s Span> {
    spans.iter().filter(|s| s.name == name).collect()
}

fn one<'s>(spans: &'s [Span], name: &str) -> &'s Span {
    let found = named(spans, name);
    assert_eq!(
        found.len(),
        1,
        "{name}: {:?}",
        spans.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    found[0]
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_is_one_trace_of_genai_spans() {
    let (spans, response) = traced_answer(false).await;
    assert_eq!(response["decision"], "answered", "{response}");
    let root = one(&spans, "agent.answer");
    let hop1 = one(&spans, "agent.hop.1");
    let hop2 = one(&spans, "agent.hop.2");
    let generations = named(&spans, "gen_ai.chat scripted/model");
    assert!(generations.is_empty(), "the request model names the span");
    let generations = named(&spans, "gen_ai.chat openai/gpt-4o-mini");
    assert_eq!(generations.len(), 2, "one generation per hop");
    let search = one(&spans, "tool.search_docs");
    let live = one(&spans, "tool.get_building");

    // One trace; the tree: answer › hop › generation and tool; the search first › retrieval.
    assert!(root.parent_span_id.is_empty(), "the answer is the root");
    assert!(spans.iter().all(|s| s.trace_id == root.trace_id));
    assert_eq!(hop1.parent_span_id, root.span_id);
    assert_eq!(hop2.parent_span_id, root.span_id);
    let mut generation_parents: Vec<&Vec<u8>> =
        generations.iter().map(|g| &g.parent_span_id).collect();
    generation_parents.sort();
    let mut hops = vec![&hop1.span_id, &hop2.span_id];
    hops.sort();
    assert_eq!(generation_parents, hops);
    assert_eq!(live.parent_span_id, hop1.span_id);
    assert_eq!(search.parent_span_id, root.span_id);
    for stage in ["embed", "vector", "keyword", "rerank"] {
        let span = one(&spans, &format!("retrieve.{stage}"));
        assert_eq!(span.parent_span_id, search.span_id, "{stage}");
    }
    // An exported stage names what it ranked, best first, each id with its score.
    let reranked = one(&spans, "retrieve.rerank");
    let found = int_attribute(reranked, "results").unwrap();
    assert!(found > 0, "the traced question finds passages");
    let ranked = str_attribute(reranked, "ranked").expect("the ranking is recorded");
    assert_eq!(ranked.split(' ').count() as i64, found, "{ranked}");
    assert!(ranked.split(' ').all(|hit| hit.contains(':')), "{ranked}");

    // Tokens as the provider reported them, per generation and summed on the answer.
    let mut reported: Vec<(i64, i64)> = generations
        .iter()
        .map(|g| {
            (
                int_attribute(g, "gen_ai.usage.input_tokens").unwrap(),
                int_attribute(g, "gen_ai.usage.output_tokens").unwrap(),
            )
        })
        .collect();
    reported.sort();
    assert_eq!(reported, vec![(120, 9), (230, 14)]);
    assert_eq!(int_attribute(root, "gen_ai.usage.input_tokens"), Some(350));
    assert_eq!(int_attribute(root, "gen_ai.usage.output_tokens"), Some(23));
    assert_eq!(str_attribute(root, "decision"), Some("answered"));
    for generation in &generations {
        assert_eq!(
            str_attribute(generation, "langfuse.observation.type"),
            Some("generation")
        );
        assert_eq!(
            str_attribute(generation, "gen_ai.response.model"),
            Some("scripted/model")
        );
    }
    assert_eq!(
        str_attribute(live, "langfuse.observation.type"),
        Some("tool")
    );

    // The failing tool: error status with its kind; the search ok.
    let status = live.status.as_ref().expect("a status");
    assert_eq!(status.code, StatusCode::Error as i32);
    assert_eq!(str_attribute(live, "error.type"), Some("unavailable"));
    assert_ne!(
        search.status.as_ref().map(|s| s.code),
        Some(StatusCode::Error as i32)
    );

    // Without OBSERVE_PAYLOADS: no question, prompt, passages, arguments or results.
    let text = all_text(&spans);
    assert!(!text.contains("langfuse.observation.input"), "{text}");
    assert!(!text.contains("langfuse.observation.output"), "{text}");
    assert!(!text.contains("zebra"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn payloads_are_recorded_only_when_asked_and_never_a_hidden_passage() {
    let (spans, _) = traced_answer(true).await;
    let root = one(&spans, "agent.answer");
    assert_eq!(
        str_attribute(root, "langfuse.observation.input"),
        Some("Where is the zebra display?")
    );
    let output = str_attribute(root, "langfuse.observation.output").unwrap();
    assert!(
        output.starts_with("The lobby has a zebra display."),
        "{output}"
    );
    let live = one(&spans, "tool.get_building");
    assert_eq!(
        str_attribute(live, "langfuse.observation.input"),
        Some(r#"{"building_id":"hq"}"#)
    );
    let text = all_text(&spans);
    // The passage the customer may see is in the prompt; the staff page never is.
    assert!(text.contains("The lobby zebra display."), "{text}");
    assert!(!text.contains("zebra key rotation"), "{text}");
}

/// `serve` over the open and staff pages with `extra` settings; its base URL.
pub(crate) async fn serve(
    dir: &std::path::Path,
    db: &str,
    provider: &ScriptedProvider,
    extra: &[(&str, &str)],
) -> (Running, String) {
    let port = free_port();
    let mut command = agent(dir);
    command
        .env("DATABASE_URL", db)
        .env("LLM_BASE_URL", &provider.url)
        .env("OPENROUTER_API_KEY", "test-key")
        .env("EMBEDDING_PROVIDER", "local")
        .env("REQUIRE_AUTH", "false")
        .env("REQUIRE_GROUNDED_ANSWERS", "false")
        .env("SCOPE_CHECK", "false")
        .envs(extra.iter().copied())
        .args(["serve", "--bind", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let running = Running(command.spawn().unwrap());
    let base = format!("http://127.0.0.1:{port}");
    wait_until_up(&format!("{base}/healthz")).await;
    (running, base)
}

/// The samples of one scrape: `name{label=value,…}` → value (histograms left out).
pub(crate) async fn scrape(base: &str) -> HashMap<String, f64> {
    let text = reqwest::get(format!("{base}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let lines = text.lines().map(|l| Ok(l.to_string()));
    let parsed = prometheus_parse::Scrape::parse(lines).expect("Prometheus text");
    let mut samples = HashMap::new();
    for sample in parsed.samples {
        let value = match sample.value {
            prometheus_parse::Value::Counter(v)
            | prometheus_parse::Value::Gauge(v)
            | prometheus_parse::Value::Untyped(v) => v,
            // A histogram by its observations: the count of its widest bucket.
            prometheus_parse::Value::Histogram(buckets) => {
                buckets.iter().map(|b| b.count).fold(0.0, f64::max)
            }
            _ => continue,
        };
        let mut labels: Vec<String> = sample
            .labels
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        labels.sort();
        samples.insert(format!("{}{{{}}}", sample.metric, labels.join(",")), value);
    }
    samples
}

fn moved(before: &HashMap<String, f64>, after: &HashMap<String, f64>, key: &str) -> f64 {
    after.get(key).copied().unwrap_or(0.0) - before.get(key).copied().unwrap_or(0.0)
}

async fn post_ask(base: &str, body: Value) -> reqwest::Response {
    crowdvision_agent::http::client_builder()
        .build()
        .unwrap()
        .post(format!("{base}/ask"))
        .json(&body)
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn metrics_count_requests_tokens_tools_decisions_and_shedding() {
    let (dir, db) = crate::search::open_and_staff_pages();
    let provider = ScriptedProvider::start(vec![]).await;
    provider.then_forever(answer("The lobby has a zebra display.", usage(40, 6)));
    let (_serve, base) = serve(
        dir.path(),
        &db,
        &provider,
        &[
            ("MAX_IN_FLIGHT", "1"),
            ("MAX_QUESTION_CHARS", "100"),
            ("ANSWER_MODEL", "scripted/model"),
        ],
    )
    .await;
    let before = scrape(&base).await;
    for _ in 0..3 {
        let response = post_ask(&base, json!({"question": "Where is the zebra display?"})).await;
        assert_eq!(response.status(), 200);
    }
    let too_long = post_ask(&base, json!({"question": "x".repeat(101)})).await;
    assert_eq!(too_long.status(), 422);

    // A stream held open by a slow provider fills the one slot: the next request is shed.
    provider.then_forever(streamed_answer(
        &["The lobby ", "has a ", "zebra display."],
        usage(40, 6),
        Duration::from_millis(400),
    ));
    let stream = post_ask(
        &base,
        json!({"question": "Where is the zebra display?", "stream": true}),
    )
    .await;
    assert_eq!(stream.status(), 200);
    let during = scrape(&base).await;
    assert_eq!(during.get("agent_sse_streams_in_flight{}"), Some(&1.0));
    let shed = post_ask(&base, json!({"question": "Where is the zebra display?"})).await;
    assert_eq!(shed.status(), 503);
    let events = stream.text().await.unwrap();
    assert!(events.contains("event: done"), "{events}");

    let after = scrape(&base).await;
    let ask_200 = "agent_http_requests_total{route=/ask,status=200}";
    assert_eq!(
        moved(&before, &after, ask_200),
        4.0,
        "three JSON, one stream"
    );
    assert_eq!(
        moved(
            &before,
            &after,
            "agent_http_requests_total{route=/ask,status=422}"
        ),
        1.0
    );
    assert_eq!(
        moved(
            &before,
            &after,
            "agent_http_requests_total{route=/ask,status=503}"
        ),
        1.0
    );
    assert_eq!(
        moved(&before, &after, "agent_http_requests_shed_total{}"),
        1.0
    );
    assert_eq!(
        moved(&before, &after, "agent_decisions_total{decision=answered}"),
        4.0
    );
    let model = "model=scripted/model";
    assert_eq!(
        moved(
            &before,
            &after,
            &format!("agent_llm_tokens_total{{kind=input,{model}}}")
        ),
        160.0
    );
    assert_eq!(
        moved(
            &before,
            &after,
            &format!("agent_llm_tokens_total{{kind=output,{model}}}")
        ),
        24.0
    );
    // Each answer searched the documentation first.
    assert_eq!(
        moved(&before, &after, "agent_tool_calls_total{tool=search_docs}"),
        4.0
    );
    assert_eq!(
        moved(
            &before,
            &after,
            "agent_tool_duration_seconds{tool=search_docs}"
        ),
        4.0
    );
    for stage in ["embed", "vector", "keyword", "rerank"] {
        let key = format!("agent_retrieval_stage_duration_seconds{{stage={stage}}}");
        assert_eq!(moved(&before, &after, &key), 4.0, "{key}");
    }
    assert_eq!(after.get("agent_sse_streams_in_flight{}"), Some(&0.0));
}

/// A collector that accepts connections and never answers.
fn silent_collector() -> (String, std::thread::JoinHandle<()>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let holder = std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream); // kept open, never read
        }
    });
    (url, holder)
}

async fn median_answer_ms(base: &str, runs: usize) -> f64 {
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        let response = post_ask(base, json!({"question": "Where is the zebra display?"})).await;
        assert_eq!(response.status(), 200);
        response.bytes().await.unwrap();
        times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(|a, b| a.total_cmp(b));
    times[runs / 2]
}

#[tokio::test(flavor = "multi_thread")]
async fn a_collector_that_never_answers_costs_an_answer_nothing_and_spans_are_dropped() {
    let (dir, db) = crate::search::open_and_staff_pages();
    let provider = ScriptedProvider::start(vec![]).await;
    provider.then_forever(answer("The lobby has a zebra display.", usage(40, 6)));
    let (collector, _holder) = silent_collector();
    let (_plain, plain) = serve(dir.path(), &db, &provider, &[]).await;
    let (_exporting, exporting) = serve(
        dir.path(),
        &db,
        &provider,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", collector.as_str()),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "60000"),
            ("OTEL_BSP_MAX_QUEUE_SIZE", "8"),
            ("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "4"),
            ("OTEL_BSP_SCHEDULE_DELAY", "20"),
        ],
    )
    .await;
    // Warm both (connections, statements), then compare.
    median_answer_ms(&plain, 3).await;
    median_answer_ms(&exporting, 3).await;
    let without = median_answer_ms(&plain, 15).await;
    let with = median_answer_ms(&exporting, 15).await;
    assert!(
        with <= without + 5.0,
        "median answer {with:.2} ms exporting to a dead collector, {without:.2} ms without"
    );
    let metrics = scrape(&exporting).await;
    let dropped = metrics
        .get("agent_spans_dropped_total{}")
        .copied()
        .unwrap_or(0.0);
    assert!(dropped > 0.0, "no span counted as dropped: {metrics:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn json_logs_carry_the_trace_id_of_the_request() {
    let (dir, url) = crate::search::open_and_staff_pages();
    crate::util::write(&dir.path().join("customer.json"), CUSTOMER);
    let provider = ScriptedProvider::start(vec![tool_calls(
        &[("c1", "get_building", r#"{"building_id":"hq"}"#)],
        usage(12, 3),
    )])
    .await;
    provider.then_forever(answer("The lobby has a zebra display.", usage(20, 5)));
    // The live tool's warning (nothing listens for it) is a line written inside the request.
    let mut command = customer_ask(dir.path(), &url, &provider);
    command
        .env("LOG_FORMAT", "json")
        .env("RUST_LOG", "warn,crowdvision_agent::requests=info");
    let output = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let lines: Vec<Value> = stderr(&output)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("not JSON: {l}")))
        .collect();
    let summary = lines
        .iter()
        .find(|l| l["target"] == "crowdvision_agent::requests")
        .unwrap_or_else(|| panic!("no request summary in {lines:?}"));
    let trace_id = summary["trace_id"].as_str().unwrap();
    assert_eq!(trace_id.len(), 32, "{summary}");
    let message = summary["message"].as_str().unwrap();
    assert!(message.starts_with("agent.answer "), "{message}");
    assert!(message.contains("decision=answered"), "{message}");
    // The warning written inside the request carries the same id.
    let warning = lines
        .iter()
        .find(|l| l["level"] == "WARN")
        .unwrap_or_else(|| panic!("no warning in {lines:?}"));
    assert_eq!(warning["trace_id"], trace_id, "{warning}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_ingest_run_is_one_trace_with_a_span_per_document() {
    let dir = tempfile::tempdir().unwrap();
    crate::util::write(&dir.path().join("docs/a.md"), "# A\n\nThe lobby.\n");
    crate::util::write(&dir.path().join("docs/b.md"), "# B\n\nThe roof.\n");
    crate::util::write(
        &dir.path().join("docs/broken.md"),
        "---\npermissions: null\n---\n# Broken\n",
    );
    let otlp = receiver().await;
    let url = format!("sqlite://{}", dir.path().join("kb.sqlite").display());
    let mut command = agent(dir.path());
    command
        .env("DATABASE_URL", &url)
        .env("EMBEDDING_PROVIDER", "local")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &otlp.url)
        .args(["ingest", "docs"]);
    let output = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    // The broken page fails the run (exit 1); the others are written.
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let spans = otlp.spans.lock().unwrap().clone();
    // A missing span says what the process reported on the way out (a late export, say).
    assert_eq!(
        named(&spans, "ingest.run").len(),
        1,
        "exported: {:?}; stderr: {}",
        spans.iter().map(|s| &s.name).collect::<Vec<_>>(),
        stderr(&output)
    );
    let run = one(&spans, "ingest.run");
    assert_eq!(int_attribute(run, "written"), Some(2));
    assert_eq!(int_attribute(run, "failed"), Some(1));
    let documents = named(&spans, "ingest.document");
    assert_eq!(documents.len(), 3);
    assert!(documents.iter().all(|d| d.parent_span_id == run.span_id));
    let failed: Vec<&&Span> = documents
        .iter()
        .filter(|d| d.status.as_ref().map(|s| s.code) == Some(StatusCode::Error as i32))
        .collect();
    assert_eq!(failed.len(), 1);
    let source = str_attribute(failed[0], "source").unwrap();
    assert!(source.ends_with("broken.md"), "{source}");
}

/// A kept turn names its answer's exported trace, and feedback on it becomes an
/// `agent.feedback` event of that trace id with the rating as a score, without the question or
/// (payloads off) the comment.
#[tokio::test(flavor = "multi_thread")]
async fn feedback_scores_the_trace_its_answer_was_kept_with() {
    let (dir, url) = crate::search::open_and_staff_pages();
    let provider = ScriptedProvider::start(vec![]).await;
    provider.then_forever(answer("The lobby has a zebra display.", usage(20, 5)));
    let otlp = receiver().await;
    let (_serve, base) = serve(
        dir.path(),
        &url,
        &provider,
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", otlp.url.as_str())],
    )
    .await;
    let client = crowdvision_agent::http::client_builder().build().unwrap();
    let created: Value = client
        .post(format!("{base}/conversations"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = created["id"].as_str().unwrap();
    let question = "Where is the zebra display standing today?";
    let asked: Value = post_ask(&base, json!({"question": question, "conversation_id": id}))
        .await
        .json()
        .await
        .unwrap();
    let kept: Value = client
        .get(format!("{base}/conversations/{id}"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let trace_id = kept["turns"][0]["trace_id"].as_str().unwrap().to_string();
    let feedback = client
        .post(format!("{base}/feedback"))
        .json(
            &json!({"conversation_id": id, "turn_id": asked["turn_id"], "rating": "down",
            "reason": "wrong_building", "comment": "a private remark"}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(feedback.status(), 200);
    let started = std::time::Instant::now();
    let spans = loop {
        let spans = otlp.spans.lock().unwrap().clone();
        if !named(&spans, "agent.feedback").is_empty() && !named(&spans, "agent.answer").is_empty()
        {
            break spans;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "no feedback span exported"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    let answer_span = one(&spans, "agent.answer");
    assert_eq!(
        hex::encode(&answer_span.trace_id),
        trace_id,
        "the turn names its trace"
    );
    let scored = one(&spans, "agent.feedback");
    assert_eq!(
        str_attribute(scored, "feedback.answer_trace_id"),
        Some(trace_id.as_str())
    );
    assert_eq!(
        str_attribute(scored, "feedback.reason"),
        Some("wrong_building")
    );
    assert_eq!(int_attribute(scored, "score.value"), Some(0));
    let text = all_text(&spans);
    assert!(!text.contains("private remark"), "{text}");
    assert!(!text.contains("standing today"), "{text}");
}
