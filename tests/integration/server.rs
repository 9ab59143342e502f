//! `serve` over a real socket: every route and status (identity rules, override gate, body and
//! question limits, shedding, deadline), SSE event order with the streaming citation filter, a
//! client that hangs up stopping the answer, and a graceful shutdown that delivers the answer
//! in flight. The provider is the scripted one; the knowledge base a real SQLite store.

use crate::provider::{
    answer, streamed_answer, streamed_tool_calls, usage, Reply, ScriptedProvider,
};
use async_trait::async_trait;
use crowdvision_agent::agent::answer::Agent;
use crowdvision_agent::agent::openai::OpenAiChat;
use crowdvision_agent::agent::tools::registry::ToolRegistry;
use crowdvision_agent::agent::tools::search_docs::SearchDocs;
use crowdvision_agent::agent::tools::{Tool, ToolContext, ToolError};
use crowdvision_agent::auth::authz::Authorizer;
use crowdvision_agent::config::{Config, RawSettings};
use crowdvision_agent::retrieval::search::Retriever;
use crowdvision_agent::server::{self, AppState};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Deserialize, JsonSchema)]
struct SlowArgs {
    ms: u64,
}

/// A tool that takes its time (for hang-ups during an answer).
struct Slow;

#[async_trait]
impl Tool for Slow {
    type Args = SlowArgs;
    const NAME: &'static str = "slow";
    fn description(&self) -> &'static str {
        "Waits."
    }
    async fn run(&self, args: SlowArgs, _: ToolContext<'_>) -> Result<(Value, String), ToolError> {
        tokio::time::sleep(Duration::from_millis(args.ms)).await;
        Ok((json!({"waited": args.ms}), "waited".into()))
    }
}

pub(crate) struct Running {
    pub(crate) url: String,
    pub(crate) provider: ScriptedProvider,
    pub(crate) stop: Option<tokio::sync::oneshot::Sender<()>>,
    pub(crate) server: tokio::task::JoinHandle<std::io::Result<()>>,
    _dir: tempfile::TempDir,
}

pub(crate) const STAFF: &str =
    r#"{"sub":"s","memberships":[{"domain":"acme","role":"business_staff"}]}"#;
pub(crate) const ADMIN: &str = r#"{"sub":"a","roles":["admin"]}"#;

/// The server on 127.0.0.1 over the two-page knowledge base, with `extra` settings.
pub(crate) async fn start(replies: Vec<Reply>, extra: &[(&str, &str)]) -> Running {
    start_with(replies, extra, |config, retriever, _| {
        let mut registry = ToolRegistry::new(config.llm.tool_timeout);
        registry.register(SearchDocs::new(retriever));
        registry.register(Slow);
        registry
    })
    .await
}

/// What builds the tools of a test server from its settings.
pub(crate) type Tools = fn(&Config, Arc<Retriever>, Arc<Authorizer>) -> ToolRegistry;

/// As [`start`], with the tools `tools` builds.
pub(crate) async fn start_with(
    replies: Vec<Reply>,
    extra: &[(&str, &str)],
    tools: Tools,
) -> Running {
    let knowledge_base = crate::search::open_and_staff_pages();
    let provider = ScriptedProvider::start(replies).await;
    start_over(knowledge_base, provider, extra, tools).await
}

/// As [`start_with`], over the knowledge base `(dir, DATABASE_URL)` and answered by
/// `provider`.
pub(crate) async fn start_over(
    (dir, url): (tempfile::TempDir, String),
    provider: ScriptedProvider,
    extra: &[(&str, &str)],
    tools: Tools,
) -> Running {
    let mut settings = vec![
        ("DATABASE_URL", url.as_str()),
        ("LLM_BASE_URL", provider.url.as_str()),
        ("OPENROUTER_API_KEY", "test-key"),
        ("EMBEDDING_PROVIDER", "local"),
        ("LLM_MAX_RETRIES", "0"),
        // Scripted answers about the server, not the pages.
        ("REQUIRE_GROUNDED_ANSWERS", "false"),
        // The scripts follow a model that may search again after the library's search.
        ("SEARCH_AGAIN", "true"),
    ];
    settings.extend_from_slice(extra);
    let config = Config::from_raw(&RawSettings::from_pairs(settings)).unwrap();
    let retriever = Arc::new(Retriever::from_config(&config).await.unwrap());
    let authz = Arc::new(Authorizer::from_config(&config));
    let registry = tools(&config, retriever.clone(), authz.clone());
    let agent = Agent::from_config(
        &config,
        Arc::new(OpenAiChat::new(&config.llm)),
        Arc::new(registry),
        authz,
    );
    let state = AppState::from_config(
        &config,
        agent,
        retriever,
        Arc::new(Authorizer::from_config(&config)),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let drain = state.drain.clone();
    let server = tokio::spawn(server::serve(
        listener,
        server::router(Arc::new(state)),
        async move {
            let _ = stopped.await;
        },
        config.server.shutdown_grace,
        drain,
    ));
    Running {
        url,
        provider,
        stop: Some(stop),
        server,
        _dir: dir,
    }
}

pub(crate) fn client() -> reqwest::Client {
    crowdvision_agent::http::client_builder().build().unwrap()
}

impl Running {
    pub(crate) fn ask(&self, claims: Option<&str>, body: Value) -> reqwest::RequestBuilder {
        let mut request = client().post(format!("{}/ask", self.url)).json(&body);
        if let Some(claims) = claims {
            request = request.header("x-gateway-claims", claims);
        }
        request
    }
}

pub(crate) async fn error_of(response: reqwest::Response) -> (u16, String) {
    let status = response.status().as_u16();
    let body: Value = response.json().await.unwrap();
    (status, body["error"]["code"].as_str().unwrap().to_string())
}

#[tokio::test(flavor = "multi_thread")]
async fn health_readiness_and_unknown_routes() {
    let s = start(vec![], &[]).await;
    let health = client()
        .get(format!("{}/healthz", s.url))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    let ready = client()
        .get(format!("{}/readyz", s.url))
        .send()
        .await
        .unwrap();
    assert_eq!(ready.status(), 200);
    assert_eq!(ready.json::<Value>().await.unwrap()["store"], "ok");
    let missing = client()
        .get(format!("{}/nope", s.url))
        .send()
        .await
        .unwrap();
    assert_eq!(error_of(missing).await, (404, "not_found".to_string()));
}

#[tokio::test(flavor = "multi_thread")]
async fn identity_is_one_per_request_and_a_trusted_gateway_header_wins() {
    let s = start(
        vec![],
        &[("EVAL_JWT_SECRET", "a-development-secret-of-32-bytes!")],
    )
    .await;
    s.provider.then_forever(answer("Hello.", usage(5, 1)));
    let hi = json!({"question": "Is the lobby open?"});
    // Nothing presented, REQUIRE_AUTH defaults to true.
    let none = s.ask(None, hi.clone()).send().await.unwrap();
    assert_eq!(error_of(none).await, (401, "unauthenticated".to_string()));
    let garbage = s.ask(Some("not-claims"), hi.clone()).send().await.unwrap();
    assert_eq!(garbage.status(), 401);
    let twice = client()
        .post(format!("{}/ask", s.url))
        .header("x-gateway-claims", STAFF)
        .header("x-gateway-claims", ADMIN)
        .json(&hi)
        .send()
        .await
        .unwrap();
    assert_eq!(twice.status(), 401);
    // An Authorization header the gateway passed along beside its claims: the claims win.
    let with_token = s
        .ask(Some(STAFF), hi.clone())
        .bearer_auth("x.y.z")
        .send()
        .await
        .unwrap();
    assert_eq!(with_token.status(), 200);
    let two_tokens = s
        .ask(None, hi.clone())
        .header("authorization", "Bearer a.b.c")
        .header("authorization", "Bearer d.e.f")
        .send()
        .await
        .unwrap();
    assert_eq!(two_tokens.status(), 401);
    let fine = s.ask(Some(STAFF), hi).send().await.unwrap();
    assert_eq!(fine.status(), 200);
    let body: Value = fine.json().await.unwrap();
    assert_eq!(body["answer"], "Hello.");
    assert_eq!(body["decision"], "answered");
    // The 401 body says nothing about why.
    let refused = s
        .ask(Some("eyJzdWIiOiIifQ"), json!({"question": "x"}))
        .send()
        .await
        .unwrap();
    let text = refused.text().await.unwrap();
    assert_eq!(
        text,
        r#"{"error":{"code":"unauthenticated","message":"authentication required"}}"#
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_replica_that_does_not_trust_the_gateway_header_refuses_it() {
    let secret = "a-development-secret-of-32-bytes!";
    let s = start(
        vec![],
        &[
            ("EVAL_JWT_SECRET", secret),
            ("TRUST_GATEWAY_HEADER", "false"),
        ],
    )
    .await;
    s.provider.then_forever(answer("Hello.", usage(5, 1)));
    let hi = json!({"question": "Is the lobby open?"});
    let claims = s.ask(Some(ADMIN), hi.clone()).send().await.unwrap();
    assert_eq!(error_of(claims).await, (401, "unauthenticated".to_string()));
    let token = crowdvision_agent::auth::jwt::sign_hs256(
        &json!({"sub": "t", "roles": ["business_staff"], "exp": chrono::Utc::now().timestamp() + 60}),
        secret.as_bytes(),
    );
    let by_token = s.ask(None, hi).bearer_auth(token).send().await.unwrap();
    assert_eq!(by_token.status(), 200);
}

/// A key named twice in a token's header or claims, or in gateway claims, is refused on every
/// path a caller may take (bearer, cookie, gateway header) and on every route that reads
/// identity, while the same credential without the repeat is accepted.
#[tokio::test(flavor = "multi_thread")]
async fn json_that_names_a_key_twice_never_identifies_anyone() {
    use base64::Engine;
    use crowdvision_agent::auth::jwt::sign_hs256_text;
    let secret = "a-development-secret-of-32-bytes!";
    let s = start(vec![], &[("EVAL_JWT_SECRET", secret)]).await;
    s.provider.then_forever(answer("Hello.", usage(5, 1)));
    let exp = chrono::Utc::now().timestamp() + 600;
    let header = r#"{"alg":"HS256","typ":"JWT"}"#;
    let sign = |claims: &str| sign_hs256_text(header, claims, secret.as_bytes());
    let honest = sign(&format!(
        r#"{{"sub":"eve","roles":["standard_customer"],"exp":{exp}}}"#
    ));
    let promoted = sign(&format!(
        r#"{{"sub":"eve","roles":["standard_customer"],"roles":["admin"],"exp":{exp}}}"#
    ));
    let twice_alg = sign_hs256_text(
        r#"{"alg":"HS256","alg":"HS256"}"#,
        &format!(r#"{{"sub":"eve","exp":{exp}}}"#),
        secret.as_bytes(),
    );
    let gateway = r#"{"sub":"eve","roles":["standard_customer"],"roles":["admin"]}"#;
    let gateway_b64 = base64::engine::general_purpose::STANDARD.encode(gateway);
    type Attach = fn(reqwest::RequestBuilder, &str) -> reqwest::RequestBuilder;
    let paths: [(&str, Attach); 3] = [
        ("bearer", |r, t| r.bearer_auth(t)),
        ("cookie", |r, t| {
            r.header("cookie", format!("authentication_token={t}"))
        }),
        ("gateway", |r, t| r.header("x-gateway-claims", t)),
    ];
    let routes = [
        ("/ask", json!({"question": "Is the lobby open?"})),
        (
            "/v1/chat/completions",
            json!({"messages": [{"role": "user", "content": "Is the lobby open?"}]}),
        ),
        (
            "/mcp",
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        ),
    ];
    for (route, body) in &routes {
        let send = |attach: Attach, credential: &str| {
            attach(
                client()
                    .post(format!("{}{route}", s.url))
                    .header("accept", "application/json, text/event-stream")
                    .json(body),
                credential,
            )
            .send()
        };
        for (path, attach) in paths {
            let refused: Vec<&str> = match path {
                "gateway" => vec![gateway, &gateway_b64],
                _ => vec![&promoted, &twice_alg],
            };
            for credential in refused {
                let response = send(attach, credential).await.unwrap();
                assert_eq!(response.status(), 401, "{route} {path}");
            }
        }
        let accepted = send(paths[0].1, &honest).await.unwrap();
        assert_eq!(accepted.status(), 200, "{route}: the honest token");
    }
}

/// The OpenAPI document against the router it describes: every documented route answers
/// (never 404 or 405), identity is described, and the bounds are the ones enforced.
#[tokio::test(flavor = "multi_thread")]
async fn the_openapi_document_matches_the_router() {
    let s = start(vec![], &[]).await;
    s.provider.then_forever(answer("Hello.", usage(5, 1)));
    let doc: Value = client()
        .get(format!("{}/openapi.json", s.url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let paths = doc["paths"].as_object().unwrap();
    let documented: std::collections::BTreeSet<String> = paths
        .iter()
        .flat_map(|(path, item)| {
            item.as_object()
                .unwrap()
                .keys()
                .map(move |method| format!("{} {path}", method.to_uppercase()))
        })
        .collect();
    let expected: std::collections::BTreeSet<String> = [
        "GET /healthz",
        "GET /readyz",
        "GET /openapi.json",
        "GET /metrics",
        "GET /whoami",
        "POST /ask",
        "POST /ingest",
        "GET /conversations",
        "POST /conversations",
        "GET /conversations/{id}",
        "PATCH /conversations/{id}",
        "DELETE /conversations/{id}",
        "POST /conversations/{id}/share",
        "GET /shares",
        "GET /shares/{key}",
        "DELETE /shares/{key}",
        "POST /feedback",
        "GET /auth/config",
        "POST /auth/token",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(documented, expected);
    // An undocumented route is the fallback's 404; every documented one is answered by its
    // handler (a handler's own 404 says what it did not find).
    let unknown = client()
        .get(format!("{}/nope", s.url))
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 404);
    let fallback = unknown.text().await.unwrap();
    for route in &documented {
        let (method, path) = route.split_once(' ').unwrap();
        let path = path
            .replace("{id}", "c_unknown")
            .replace("{key}", "unknown");
        let method: reqwest::Method = method.parse().unwrap();
        let response = client()
            .request(method, format!("{}{path}", s.url))
            .header("x-gateway-claims", STAFF)
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        assert_ne!(status, 405, "{route}");
        // This in-process server installed no metrics recorder: its /metrics is the router's
        // documented 404 body, not the fallback's.
        if path != "/metrics" {
            assert_ne!(response.text().await.unwrap(), fallback, "{route}");
        }
    }

    let schemes = &doc["components"]["securitySchemes"];
    assert_eq!(schemes["gateway_claims"]["name"], "x-gateway-claims");
    assert_eq!(schemes["bearer"]["scheme"], "bearer");
    assert!(doc["paths"]["/ask"]["post"]["security"].is_array());
    let stream = &doc["paths"]["/ask"]["post"]["responses"]["200"]["content"]["text/event-stream"];
    assert!(
        stream["schema"]["oneOf"].as_array().unwrap().len() == 3,
        "{stream}"
    );
    assert!(doc["components"]["schemas"]["AgentEvent"].is_object());

    let request = &doc["components"]["schemas"]["AskRequest"]["properties"];
    let top_k = &request["top_k"];
    assert_eq!(top_k["minimum"], 1, "{top_k}");
    assert_eq!(
        top_k["maximum"],
        crowdvision_agent::retrieval::search::MAX_TOP_K,
        "{top_k}"
    );
    assert_eq!(
        request["question"]["maxLength"],
        crowdvision_agent::config::DEFAULT_MAX_QUESTION_CHARS
    );
    for (k, status) in [(0, 422), (51, 422), (1, 200), (50, 200)] {
        let response = s
            .ask(
                Some(STAFF),
                json!({"question": "Is the lobby open?", "top_k": k}),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), status, "top_k {k}");
    }
    let text = doc.to_string();
    for pointer in ["contracts", "§", "documentation/", "README", "QUALITY"] {
        assert!(!text.contains(pointer), "the document points at {pointer}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn override_body_and_question_limits() {
    let s = start(
        vec![],
        &[
            ("ALLOWED_MODELS", "allowed/model"),
            ("MAX_REQUEST_BYTES", "2048"),
            ("MAX_QUESTION_CHARS", "100"),
        ],
    )
    .await;
    let forbidden = s
        .ask(
            Some(STAFF),
            json!({"question": "Is the lobby open?", "model": "allowed/model"}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(
        error_of(forbidden).await,
        (403, "model_override_forbidden".to_string())
    );
    let not_allowed = s
        .ask(
            Some(ADMIN),
            json!({"question": "Is the lobby open?", "model": "other/model"}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(
        error_of(not_allowed).await,
        (400, "model_not_allowed".to_string())
    );
    let huge = s
        .ask(Some(STAFF), json!({"question": "x".repeat(4000)}))
        .send()
        .await
        .unwrap();
    assert_eq!(error_of(huge).await, (413, "body_too_large".to_string()));
    let long = s
        .ask(Some(STAFF), json!({"question": "x".repeat(101)}))
        .send()
        .await
        .unwrap();
    let status = long.status().as_u16();
    let body: Value = long.json().await.unwrap();
    assert_eq!(status, 422);
    assert!(body["error"]["message"].as_str().unwrap().contains("100"));
    let empty = s
        .ask(Some(STAFF), json!({"question": "  "}))
        .send()
        .await
        .unwrap();
    assert_eq!(empty.status(), 422);
    let not_json = client()
        .post(format!("{}/ask", s.url))
        .header("x-gateway-claims", STAFF)
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(
        error_of(not_json).await,
        (400, "invalid_request".to_string())
    );
    assert!(
        s.provider.requests().is_empty(),
        "a refused request reached the provider"
    );
}

/// A client that sends a whole oversized body before it reads (httpx, the openai SDK) gets the
/// 413, not a reset connection; the connection even serves the next request.
#[tokio::test(flavor = "multi_thread")]
async fn an_oversized_body_sent_whole_still_gets_its_413() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let s = start(vec![], &[("MAX_REQUEST_BYTES", "2048")]).await;
    let address = s.url.trim_start_matches("http://").to_string();
    let mut socket = tokio::net::TcpStream::connect(&address).await.unwrap();
    let body = vec![b'x'; 3 * 1024 * 1024];
    let head = format!(
        "POST /ask HTTP/1.1\r\nHost: {address}\r\nx-gateway-claims: {STAFF}\r\n\
         content-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    for chunk in body.chunks(64 * 1024) {
        socket
            .write_all(chunk)
            .await
            .expect("the server stopped reading the body");
    }
    let health = format!("GET /healthz HTTP/1.1\r\nHost: {address}\r\n\r\n");
    socket.write_all(health.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    let mut buffer = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains("body_too_large")
        || String::from_utf8_lossy(&seen).matches("HTTP/1.1").count() < 2
    {
        let n = tokio::time::timeout(Duration::from_secs(10), socket.read(&mut buffer))
            .await
            .expect("no response")
            .expect("the connection was reset");
        assert!(n > 0, "closed after: {}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buffer[..n]);
    }
    let text = String::from_utf8_lossy(&seen);
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    assert!(text.contains("HTTP/1.1 200"), "{text}");
    assert!(s.provider.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_full_server_sheds_and_a_slow_answer_meets_its_deadline() {
    let s = start(
        vec![],
        &[("MAX_IN_FLIGHT", "1"), ("REQUEST_TIMEOUT_SECONDS", "1")],
    )
    .await;
    s.provider.then_forever(Reply::Hang(Duration::from_secs(3)));
    let first = tokio::spawn(s.ask(Some(STAFF), json!({"question": "slow"})).send());
    tokio::time::sleep(Duration::from_millis(200)).await;
    let second = s
        .ask(Some(STAFF), json!({"question": "too"}))
        .send()
        .await
        .unwrap();
    assert_eq!(second.headers()["retry-after"], "1");
    assert_eq!(error_of(second).await, (503, "overloaded".to_string()));
    let started = Instant::now();
    let first = first.await.unwrap().unwrap();
    assert_eq!(
        error_of(first).await,
        (504, "deadline_exceeded".to_string())
    );
    assert!(started.elapsed() < Duration::from_secs(2));

    // The same deadline on a stream ends it with an `error` event.
    let stream = s
        .ask(Some(STAFF), json!({"question": "slow", "stream": true}))
        .send()
        .await
        .unwrap();
    let text = stream.text().await.unwrap();
    assert!(text.contains("event: error"), "{text}");
    assert!(text.contains("deadline_exceeded"), "{text}");
}

/// What a client shows at the end of a stream: the `token` texts joined, each `retract`
/// dropping what came before it.
pub(crate) fn shown_text(events: &[(String, String)]) -> String {
    let mut shown = String::new();
    for (name, data) in events {
        match name.as_str() {
            "token" => shown.push_str(
                serde_json::from_str::<Value>(data).unwrap()["text"]
                    .as_str()
                    .unwrap(),
            ),
            "retract" => shown.clear(),
            _ => {}
        }
    }
    shown
}

/// The SSE events of a response body, as (event, data) in order; comments skipped.
pub(crate) fn sse_events(text: &str) -> Vec<(String, String)> {
    text.split("\n\n")
        .filter_map(|block| {
            let mut event = None;
            let mut data = String::new();
            for line in block.lines() {
                if let Some(name) = line.strip_prefix("event: ") {
                    event = Some(name.to_string());
                } else if let Some(value) = line.strip_prefix("data: ") {
                    data.push_str(value);
                }
            }
            event.map(|e| (e, data))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stream_sends_tools_then_tokens_then_done_and_never_an_invented_marker() {
    let s = start(vec![], &[]).await;
    s.provider.set_rule(|body| {
        let last = body["messages"].as_array().unwrap().last().unwrap().clone();
        if last["role"] != "tool" {
            return Some(streamed_tool_calls(
                &[("c1", "search_docs", r#"{"query":"zebra display"}"#)],
                6,
                usage(10, 2),
            ));
        }
        let id = crate::util::first_passage_id(last["content"].as_str().unwrap())
            .unwrap()
            .to_string();
        let real = format!("[^{id}]");
        let (head, tail) = real.split_at(4);
        Some(streamed_answer(
            &[
                "The zebra display is in the lobby ",
                "[^zz-inv",
                "ented]",
                " ",
                head,
                tail,
                ".",
            ],
            usage(20, 8),
            Duration::from_millis(20),
        ))
    });
    let response = s
        .ask(
            Some(STAFF),
            json!({"question": "Where is the zebra?", "stream": true}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream"));
    let text = response.text().await.unwrap();
    assert!(
        !text.contains("zz") && !text.contains("inv") && !text.contains("ented"),
        "{text}"
    );
    let events = sse_events(&text);
    let names: Vec<&str> = events.iter().map(|(e, _)| e.as_str()).collect();
    // The library's search first, then the model's call, then the text, then done.
    assert_eq!(
        names[..4],
        ["tool_call", "tool_result", "tool_call", "tool_result"]
    );
    assert_eq!(*names.last().unwrap(), "done");
    assert!(
        names[4..names.len() - 1].iter().all(|n| *n == "token"),
        "{names:?}"
    );
    assert!(names.len() >= 6, "one token event per delta: {names:?}");
    let done: Value = serde_json::from_str(&events.last().unwrap().1).unwrap();
    assert_eq!(done["citations"][0]["source"], "open.md");
    assert_eq!(done["retrieval"]["hallucinated_citations"], 1);
    let streamed = shown_text(&events);
    assert!(streamed.contains(done["citations"][0]["marker"].as_str().unwrap()));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_hangs_up_stops_the_answer() {
    let s = start(vec![], &[]).await;
    s.provider.set_rule(|body| {
        let last = body["messages"].as_array().unwrap().last().unwrap().clone();
        Some(if last["role"] != "tool" {
            streamed_tool_calls(&[("c1", "slow", r#"{"ms":800}"#)], 4, usage(10, 2))
        } else {
            streamed_answer(&["Done waiting."], usage(10, 2), Duration::ZERO)
        })
    });
    let mut response = s
        .ask(Some(STAFF), json!({"question": "wait", "stream": true}))
        .send()
        .await
        .unwrap();
    // Read until the model's own tool call is announced (the library's search comes first).
    let mut seen = String::new();
    while !seen.contains("\"slow\"") {
        let chunk = response.chunk().await.unwrap().unwrap();
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    drop(response); // the client goes away while the tool runs
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        s.provider.requests().len(),
        1,
        "the answer went on after the client had gone"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn shutdown_finishes_the_answer_in_flight_then_stops() {
    let mut s = start(vec![], &[("SHUTDOWN_GRACE_SECONDS", "5")]).await;
    s.provider.then_forever(Reply::Delay(
        Duration::from_millis(700),
        Box::new(answer("Worth the wait.", usage(5, 2))),
    ));
    let in_flight = tokio::spawn(s.ask(Some(STAFF), json!({"question": "slow"})).send());
    tokio::time::sleep(Duration::from_millis(200)).await;
    s.stop.take().unwrap().send(()).unwrap();
    let response = in_flight.await.unwrap().unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.json::<Value>().await.unwrap()["answer"],
        "Worth the wait."
    );
    let stopped = tokio::time::timeout(Duration::from_secs(3), &mut s.server).await;
    assert!(matches!(stopped, Ok(Ok(Ok(())))), "{stopped:?}");
    assert!(client()
        .get(format!("{}/healthz", s.url))
        .send()
        .await
        .is_err());
}

#[tokio::test(flavor = "multi_thread")]
async fn ingest_is_for_admins_and_takes_documents_never_paths() {
    let s = start(vec![], &[]).await;
    let post = |claims: Option<&'static str>, body: Value| {
        let mut request = client().post(format!("{}/ingest", s.url)).json(&body);
        if let Some(claims) = claims {
            request = request.header("x-gateway-claims", claims);
        }
        request.send()
    };
    let page = json!({"documents": [{
        "source": "inline/beacon.md",
        "content": "# Beacon\n\nThe quasarbeacon is serviced monthly.\n",
        "permissions": ["business_staff"],
    }]});
    assert_eq!(post(None, page.clone()).await.unwrap().status(), 401);
    let staff = post(Some(STAFF), page.clone()).await.unwrap();
    assert_eq!(error_of(staff).await, (403, "forbidden".to_string()));
    let added = post(Some(ADMIN), page).await.unwrap();
    assert_eq!(added.status(), 200);
    let summary: Value = added.json().await.unwrap();
    assert_eq!(summary["added"], 1, "{summary}");
    assert_eq!(summary["public"], 0);

    // The page is there, with the permissions the request stated.
    let config = Config::from_raw(&RawSettings::from_pairs([
        (
            "DATABASE_URL",
            format!("sqlite://{}", s._dir.path().join("kb.sqlite").display()),
        ),
        ("EMBEDDING_PROVIDER", "local".to_string()),
    ]))
    .unwrap();
    let retriever = Retriever::from_config(&config).await.unwrap();
    let search = |claims: &str| {
        let user = crowdvision_agent::auth::AuthUser::from_claims(claims).unwrap();
        let retriever = &retriever;
        async move {
            retriever
                .search(
                    "quasarbeacon",
                    &user,
                    None,
                    crowdvision_agent::retrieval::search::SearchMode::Hybrid,
                )
                .await
                .unwrap()
                .into_iter()
                .map(|r| r.chunk.source)
                .collect::<Vec<_>>()
        }
    };
    assert!(search(STAFF)
        .await
        .contains(&"inline/beacon.md".to_string()));
    assert!(!search(r#"{"sub":"c","roles":["standard_customer"]}"#)
        .await
        .contains(&"inline/beacon.md".to_string()));

    for bad in [
        json!({"documents": [{"source": "../../etc/passwd.md", "content": "x", "permissions": []}]}),
        json!({"documents": [{"source": "/abs.md", "content": "x", "permissions": []}]}),
        json!({"documents": [{"source": "a.md", "content": "x"}]}),
        json!({"path": "/etc"}),
        json!({}),
    ] {
        let response = post(Some(ADMIN), bad.clone()).await.unwrap();
        assert_eq!(response.status(), 400, "{bad}");
    }
    let sneaky = json!({"documents": [{
        "source": "inline/sneaky.md",
        "content": "---\npermissions: []\n---\n# Sneaky\n\nquasarbeacon for everyone\n",
        "permissions": ["admin"],
    }]});
    let summary: Value = post(Some(ADMIN), sneaky)
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(summary["failed"], 1, "{summary}");
}

#[tokio::test(flavor = "multi_thread")]
async fn ask_server_is_a_client_of_a_running_server() {
    let s = start(vec![], &[]).await;
    s.provider.set_rule(|body| {
        Some(if body["stream"] == true {
            streamed_answer(
                &["Hello ", "from ", "the server."],
                usage(5, 3),
                Duration::ZERO,
            )
        } else {
            answer("Hello from the server.", usage(5, 3))
        })
    });
    let dir = tempfile::tempdir().unwrap();
    crate::util::write(&dir.path().join("staff.json"), STAFF);
    let run = |extra: &[&str]| {
        let mut command = crate::util::agent(dir.path());
        command
            .args([
                "ask",
                "Is the lobby open?",
                "--server",
                &s.url,
                "--claims",
                "staff.json",
            ])
            .args(extra);
        command
    };
    let mut json_run = run(&["--json"]);
    let output = tokio::task::spawn_blocking(move || json_run.output().unwrap())
        .await
        .unwrap();
    assert!(output.status.success(), "{}", crate::util::stderr(&output));
    let body: Value = serde_json::from_str(&crate::util::stdout(&output)).unwrap();
    assert_eq!(body["answer"], "Hello from the server.");
    assert_eq!(body["decision"], "answered");

    let mut stream_run = run(&["--stream"]);
    let output = tokio::task::spawn_blocking(move || stream_run.output().unwrap())
        .await
        .unwrap();
    assert!(output.status.success(), "{}", crate::util::stderr(&output));
    assert!(crate::util::stdout(&output).starts_with("Hello from the server."));
    // Both reached the model: the server accepted the claims of the file (without them it
    // answers 401, as below).
    assert_eq!(s.provider.requests().len(), 2);

    // A refusal by the server is an error with its code, exit 1.
    let mut refused = crate::util::agent(dir.path());
    refused.args(["ask", "Is the lobby open?", "--server", &s.url]);
    let output = tokio::task::spawn_blocking(move || refused.output().unwrap())
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    // The error names the URL asked and quotes the server's own message.
    let err = crate::util::stderr(&output);
    assert!(err.contains("401 unauthenticated"), "{err}");
    assert!(err.contains(&format!("{}/ask", s.url)), "{err}");
    assert!(err.contains("authentication required"), "{err}");

    // A proxy in between that answers in plain text is quoted too, never an empty message.
    let proxy = axum::Router::new().fallback(|| async {
        (
            axum::http::StatusCode::UNAUTHORIZED,
            "log in at the portal\n",
        )
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy_url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, proxy).await });
    let mut behind = crate::util::agent(dir.path());
    behind.args(["ask", "Is the lobby open?", "--server", &proxy_url]);
    let output = tokio::task::spawn_blocking(move || behind.output().unwrap())
        .await
        .unwrap();
    let err = crate::util::stderr(&output);
    assert!(err.contains("answered 401: log in at the portal"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn eval_server_runs_each_case_as_a_token_for_its_caller() {
    const SECRET: &str = "eval-server-secret-of-32-bytes-ok";
    let s = start(vec![], &[("EVAL_JWT_SECRET", SECRET)]).await;
    s.provider
        .then_forever(answer("Hello from the server.", usage(5, 3)));
    let dir = tempfile::tempdir().unwrap();
    crate::util::write(
        &dir.path().join("d.yaml"),
        "cases:\n  - {id: staff, question: Is the lobby open?, as: {roles: [business_staff], domains: [acme]}, expect: {contains: [server]}}\n  \
         - {id: nobody, question: Is the lobby open?, expect: {contains: [server]}}\n",
    );
    let mut command = crate::util::agent(dir.path());
    command
        .args(["eval", "d.yaml", "--server", &s.url, "--json", "r.json"])
        .env("EVAL_JWT_SECRET", SECRET);
    let output = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    // The anonymous case is refused by the server (REQUIRE_AUTH): an ERROR, so exit 1.
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        crate::util::stderr(&output)
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("r.json")).unwrap()).unwrap();
    let cases = &report["models"][0]["cases"];
    assert_eq!(report["models"][0]["model"], "server");
    assert_eq!(cases[0]["status"], "PASS", "{report}");
    assert_eq!(cases[1]["status"], "ERROR");
    assert!(cases[1]["runs"][0]["error"]
        .as_str()
        .unwrap()
        .contains("401"));
    assert_eq!(s.provider.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn chat_server_keeps_the_conversation_and_streams_from_the_server() {
    use std::io::Write as _;
    let s = start(vec![], &[]).await;
    s.provider.set_rule(|body| {
        let turns = body["messages"].as_array().map_or(0, Vec::len);
        let text: &[&str] = if turns > 2 {
            &["Second ", "answer."]
        } else {
            &["First ", "answer."]
        };
        Some(streamed_answer(text, usage(5, 3), Duration::ZERO))
    });
    let dir = tempfile::tempdir().unwrap();
    crate::util::write(&dir.path().join("staff.json"), STAFF);
    let mut command = crate::util::agent(dir.path());
    command
        .args(["chat", "--server", &s.url, "--claims", "staff.json"])
        .arg("--history")
        .arg(dir.path().join("history.txt"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        "Where are the zebras?\nAnd the lions?\n/model\n/cost"
    )
    .unwrap();
    drop(stdin);
    let output = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    let out = crate::util::stdout(&output);
    assert!(
        output.status.success(),
        "{out}{}",
        crate::util::stderr(&output)
    );
    assert!(out.contains(&format!("server {}", s.url)), "{out}");
    assert!(
        out.contains("First answer.") && out.contains("Second answer."),
        "{out}"
    );
    assert!(out.contains("model: the server's answer model"), "{out}");
    assert!(
        out.contains("2 answers · tokens 10 in + 6 out = 16"),
        "{out}"
    );
    // The second question reached the model with the first exchange before it.
    let requests = s.provider.requests();
    assert_eq!(requests.len(), 2);
    let contents: Vec<String> = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(contents[..2], ["Where are the zebras?", "First answer."]);
    assert!(
        contents[2].ends_with("Question: And the lions?"),
        "{contents:?}"
    );
}

/// A first attempt the library discards is withdrawn with a `retract` event: a client that
/// drops the tokens before it ends with the checked answer, over SSE and in `ask --server
/// --stream` (piped, where it says the text above was withdrawn).
#[tokio::test(flavor = "multi_thread")]
async fn a_discarded_first_attempt_is_retracted_over_sse_and_in_the_cli() {
    let s = start(
        vec![],
        &[("SCOPE_CHECK", "false"), ("SEARCH_FIRST", "false")],
    )
    .await;
    s.provider.set_rule(|body| {
        Some(if body.get("response_format").is_some() {
            answer(r#"{"answer": "The lobby is open."}"#, usage(10, 4))
        } else {
            streamed_answer(
                &[
                    "{\"name\": \"search_docs\", ",
                    "\"arguments\": {\"query\": \"lobby\"}}",
                ],
                usage(10, 2),
                Duration::ZERO,
            )
        })
    });
    let response = s
        .ask(
            Some(STAFF),
            json!({"question": "Is the lobby open?", "stream": true}),
        )
        .send()
        .await
        .unwrap();
    let events = sse_events(&response.text().await.unwrap());
    let names: Vec<&str> = events.iter().map(|(e, _)| e.as_str()).collect();
    assert!(names.contains(&"retract"), "{names:?}");
    let done: Value = serde_json::from_str(&events.last().unwrap().1).unwrap();
    assert_eq!(shown_text(&events), done["answer"].as_str().unwrap());

    let dir = tempfile::tempdir().unwrap();
    crate::util::write(&dir.path().join("staff.json"), STAFF);
    let mut cli = crate::util::agent(dir.path());
    cli.args([
        "ask",
        "Is the lobby open?",
        "--server",
        &s.url,
        "--claims",
        "staff.json",
        "--stream",
    ]);
    let output = tokio::task::spawn_blocking(move || cli.output().unwrap())
        .await
        .unwrap();
    let out = crate::util::stdout(&output);
    let (_, after) = out
        .split_once("[the text above was withdrawn; the answer follows]\n")
        .unwrap_or_else(|| panic!("{out}"));
    assert_eq!(after.trim_end(), "The lobby is open.");
}
