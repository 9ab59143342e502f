//! The processes of the `/ask` load benchmark (`bench/serve-load.sh` runs them; see
//! BENCHMARKS.md). One binary, one role per run:
//!
//! - `provider`: an OpenAI-compatible chat-completions server that answers at once with a fixed
//!   text. It reads no more of a request than whether it streams, so that its own cost does not
//!   grow with the request's size. A streamed request whose question says `please hold` gets one
//!   token and then nothing for ten minutes, so that a client's stream stays open (for the
//!   memory figure). `GET /last-request` returns the last request body it received.
//!   A question holding `LIVE-PATH` is answered with one `get_occupancy` call first, and text
//!   once the request carries its tool result. A request whose question came with
//!   documentation passages (a `[^chunk_id]` marker in its last message) is answered with the
//!   first sentence of the first passage and its marker: an answer serve's checks find
//!   supported. `GET /previous-request` returns the one before.
//! - `bare PROVIDER_URL REQUEST_FILE`: the limit to compare `serve` with, a bare axum
//!   `POST /ask` that makes the same single provider call (the request `serve` sent, captured
//!   from the provider, with the question put in its last message) with the same HTTP client
//!   and returns the answer's text.
//! - `bare-search PROVIDER_URL REQUEST_FILE`: the limit of the documentation path: the question
//!   searched in the store `DATABASE_URL` names, with the embedder the environment configures
//!   (`EMBEDDING_PROVIDER`), through the library's hybrid search as the anonymous caller, then
//!   the single provider call of `bare`. The bench's store is empty, so the captured request
//!   (captured for the question `capture`, no passages in it) is the one a search that found
//!   nothing leads to, its last message's opening kept before each question; the handler
//!   refuses to answer if the search finds something.
//! - `bare-docs PROVIDER_URL REQUEST_FILE`: the limit of the documentation path that finds
//!   passages: the search of `bare-search` in a store holding documentation, then the request
//!   serve sent for the same question (captured with its passages) posted as it is. Every
//!   request of the load asks that one question; the handler refuses to answer if the search
//!   finds nothing.
//! - `bare-live PROVIDER_URL SIM_URL FIRST_REQUEST SECOND_REQUEST CLAIMS`: the limit of the live
//!   path: the first captured call, the building's occupancy from the simulator (as the caller,
//!   `CLAIMS` in `x-gateway-claims`), then the second captured call, and the answer's text.
//! - `streams URL N`: opens N streamed `/ask` requests, waits until each has received a token,
//!   prints `open N`, and holds them until its standard input closes.
//!
//! Servers print their base URL on the first line of standard output. The bench uses the
//! allocator `serve` uses, so that the limit differs from `serve` only by the agent.

use axum::body::{Body, Bytes};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use crowdvision_agent::auth::AuthUser;
use crowdvision_agent::config::Config;
use crowdvision_agent::retrieval::search::{Retriever, SearchMode};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const ANSWER: &str = "The lobby of building A is open from 7 to 19.";
const HOLD_FOR: Duration = Duration::from_secs(600);
const HOLD_PHRASE: &str = "please hold";
const LIVE_MARK: &str = "LIVE-PATH";
const LIVE_ANSWER: &str = "Meeting Room Aurora in Acme Headquarters is in use right now.";

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["provider"] => serve(provider_router()).await,
        ["bare", provider, request] => serve(bare_router(provider, request)).await,
        ["bare-search", provider, request] => {
            serve(bare_search_router(provider, request).await).await
        }
        ["bare-docs", provider, request] => serve(bare_docs_router(provider, request).await).await,
        ["bare-live", provider, sim, first, second, claims] => {
            serve(bare_live_router(provider, sim, first, second, claims)).await
        }
        ["streams", url, count] => open_streams(url, count.parse().expect("N is a number")).await,
        // `cargo bench` runs every bench target with `--bench`: nothing to measure alone.
        _ => eprintln!("serve_load is driven by bench/serve-load.sh"),
    }
}

async fn serve(app: Router) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    println!("http://{}", listener.local_addr().unwrap());
    // SIGTERM ends the process through `exit`, so that a build instrumented for profile-guided
    // optimisation (scripts/build-pgo) writes its profile.
    tokio::spawn(async {
        let mut terminate =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).unwrap();
        terminate.recv().await;
        std::process::exit(0);
    });
    axum::serve(listener, app).await.unwrap();
}

/// The part of a chat-completions request the provider reads.
#[derive(serde::Deserialize)]
struct Probe {
    #[serde(default)]
    stream: bool,
}

/// The last two request bodies the provider received, newest second.
type Received = Arc<Mutex<(Bytes, Bytes)>>;

fn provider_router() -> Router {
    let received: Received = Arc::default();
    let (remember, last, previous) = (received.clone(), received.clone(), received);
    Router::new()
        .route(
            "/v1/chat/completions",
            post(move |body: Bytes| {
                let mut kept = remember.lock().unwrap();
                kept.0 = std::mem::replace(&mut kept.1, body.clone());
                completion(body)
            }),
        )
        .route(
            "/last-request",
            get(move || async move { last.lock().unwrap().1.clone() }),
        )
        .route(
            "/previous-request",
            get(move || async move { previous.lock().unwrap().0.clone() }),
        )
}

fn contains(body: &[u8], text: &str) -> bool {
    body.windows(text.len()).any(|w| w == text.as_bytes())
}

/// The live path's answer: one `get_occupancy` call, then text once its result is in.
fn live_reply(body: &[u8], usage: &Value) -> Option<Response> {
    if !contains(body, LIVE_MARK) {
        return None;
    }
    let message = if contains(body, r#""role":"tool""#) {
        json!({"role": "assistant", "content": LIVE_ANSWER})
    } else {
        json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": "call-1", "type": "function", "function": {"name": "get_occupancy",
            "arguments": r#"{"building_id":"acme-hq","room_id":"hq-101"}"#}}]})
    };
    let finish = if message["tool_calls"].is_array() {
        "tool_calls"
    } else {
        "stop"
    };
    Some(
        Json(json!({
            "id": "bench", "object": "chat.completion", "model": "bench/model",
            "choices": [{"index": 0, "finish_reason": finish, "message": message}],
            "usage": usage,
        }))
        .into_response(),
    )
}

/// The documentation path's answer: the first sentence of the first passage the request's
/// last message carries, with that passage's marker.
fn cited_reply(body: &[u8], usage: &Value) -> Option<Response> {
    if !contains(body, "[^") {
        return None;
    }
    let request: Value = serde_json::from_slice(body).ok()?;
    let last = request["messages"].as_array()?.last()?["content"].as_str()?;
    let answer = first_cited_sentence(last)?;
    Some(
        Json(json!({
            "id": "bench", "object": "chat.completion", "model": "bench/model",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": answer}}],
            "usage": usage,
        }))
        .into_response(),
    )
}

/// `Sentence. [^id]` from the first passage of `prompt`: its marker, then its first line that
/// is neither blank nor a heading, up to the first full stop.
fn first_cited_sentence(prompt: &str) -> Option<String> {
    let marked = &prompt[prompt.find("[^")?..];
    let marker = &marked[..=marked.find(']')?];
    let prose = marked
        .lines()
        .skip(1)
        .map(str::trim)
        .find(|line| !line.is_empty() && !line.starts_with('#'))?;
    let sentence = prose.find(". ").map_or(prose, |end| &prose[..=end]);
    Some(format!("{sentence} {marker}"))
}

async fn completion(body: Bytes) -> Response {
    let probe: Probe = serde_json::from_slice(&body).unwrap();
    let usage = json!({"prompt_tokens": 40, "completion_tokens": 12, "total_tokens": 52});
    if !probe.stream {
        if let Some(reply) = live_reply(&body, &usage) {
            return reply;
        }
        if let Some(reply) = cited_reply(&body, &usage) {
            return reply;
        }
        return Json(json!({
            "id": "bench", "object": "chat.completion", "model": "bench/model",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": ANSWER}}],
            "usage": usage,
        }))
        .into_response();
    }
    let hold = body
        .windows(HOLD_PHRASE.len())
        .any(|w| w == HOLD_PHRASE.as_bytes());
    let chunk = |delta: Value, finish: Value| {
        format!(
            "data: {}\n\n",
            json!({"id": "bench", "object": "chat.completion.chunk", "model": "bench/model",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        )
    };
    let first = chunk(
        json!({"role": "assistant", "content": "Holding "}),
        Value::Null,
    );
    let rest = format!(
        "{}{}data: [DONE]\n\n",
        chunk(json!({"content": "on."}), json!("stop")),
        format_args!(
            "data: {}\n\n",
            json!({"id": "bench", "object": "chat.completion.chunk", "choices": [], "usage": usage})
        )
    );
    let events = futures::stream::unfold(0, move |step| {
        let (first, rest) = (first.clone(), rest.clone());
        async move {
            match step {
                0 => Some((Ok::<_, std::io::Error>(first), 1)),
                1 => {
                    if hold {
                        tokio::time::sleep(HOLD_FOR).await;
                    }
                    Some((Ok(rest), 2))
                }
                _ => None,
            }
        }
    });
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(events))
        .unwrap()
}

fn bare_router(provider: &str, request_file: &str) -> Router {
    let url = format!("{}/v1/chat/completions", provider.trim_end_matches('/'));
    let http = crowdvision_agent::http::client_builder().build().unwrap();
    let (before, after) = request_around_question(request_file, None);
    Router::new().route(
        "/ask",
        post(move |Json(request): Json<Value>| async move {
            let question = request["question"].as_str().unwrap_or_default();
            let call = call_for(&before, question, &after);
            Json(json!({"answer": answer_of(&http, &url, call).await}))
        }),
    )
}

/// The answer's text from one provider call posted as `call`, the way the limits post it.
async fn answer_of(http: &reqwest::Client, url: &str, call: String) -> Value {
    let mut reply: Value = http
        .post(url)
        .header("content-type", "application/json")
        .body(call)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    reply["choices"][0]["message"]["content"].take()
}

/// What the documentation path's limits find in their store: nothing (`bare-search`, whose
/// call is built around each question) or passages (`bare-docs`, whose call is the captured
/// one, for the one question of its load).
enum Searched {
    Nothing { before: String, after: String },
    Passages { call: String },
}

async fn bare_search_router(provider: &str, request_file: &str) -> Router {
    let (before, after) = request_around_question(request_file, Some("capture"));
    searching_router(provider, Searched::Nothing { before, after }).await
}

async fn bare_docs_router(provider: &str, request_file: &str) -> Router {
    let call = std::fs::read_to_string(request_file).unwrap();
    searching_router(provider, Searched::Passages { call }).await
}

/// `POST /ask`: the question searched through the library as the anonymous caller, in the
/// store the environment configures, then the one provider call.
async fn searching_router(provider: &str, searched: Searched) -> Router {
    let url = format!("{}/v1/chat/completions", provider.trim_end_matches('/'));
    let http = crowdvision_agent::http::client_builder().build().unwrap();
    let config = Config::load(None).expect("the environment configures the store");
    let retriever = Arc::new(Retriever::from_config(&config).await.unwrap());
    let anonymous = Arc::new(AuthUser::anonymous());
    let searched = Arc::new(searched);
    Router::new().route(
        "/ask",
        post(move |Json(request): Json<Value>| async move {
            let asked = request["question"].as_str().unwrap_or_default();
            let found = retriever
                .search(asked, &anonymous, None, SearchMode::Hybrid)
                .await
                .unwrap();
            let call = match searched.as_ref() {
                Searched::Nothing { before, after } => {
                    assert!(found.is_empty(), "the bench's store is empty");
                    call_for(before, asked, after)
                }
                Searched::Passages { call } => {
                    assert!(!found.is_empty(), "the documentation answers the question");
                    call.clone()
                }
            };
            Json(json!({"answer": answer_of(&http, &url, call).await}))
        }),
    )
}

fn bare_live_router(
    provider: &str,
    sim: &str,
    first_file: &str,
    second_file: &str,
    claims: &str,
) -> Router {
    let url = format!("{}/v1/chat/completions", provider.trim_end_matches('/'));
    let occupancy = format!("{}/buildings/acme-hq/occupancy", sim.trim_end_matches('/'));
    let http = crowdvision_agent::http::client_builder().build().unwrap();
    let (before, after) = request_around_question(first_file, None);
    let second = std::fs::read_to_string(second_file).unwrap();
    let claims = claims.to_string();
    Router::new().route(
        "/ask",
        post(move |Json(request): Json<Value>| async move {
            let question = request["question"].as_str().unwrap_or_default();
            let call = call_for(&before, question, &after);
            let post = |body: String| {
                http.post(&url)
                    .header("content-type", "application/json")
                    .body(body)
                    .send()
            };
            let asked: Value = post(call).await.unwrap().json().await.unwrap();
            assert!(asked["choices"][0]["message"]["tool_calls"].is_array());
            let rooms: Value = http
                .get(&occupancy)
                .header("x-gateway-claims", &claims)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            assert!(rooms.is_array() || rooms.is_object());
            let reply: Value = post(second.clone()).await.unwrap().json().await.unwrap();
            Json(json!({"answer": reply["choices"][0]["message"]["content"]}))
        }),
    )
}

/// The captured request as the text before and after its question, so that a limit builds
/// each call by concatenation (`call_for`), the cheapest way there is. The question is the last
/// message's content, or its end when `captured_as` names the question it was captured for (the
/// documentation path's message opens with what the search found).
fn request_around_question(request_file: &str, captured_as: Option<&str>) -> (String, String) {
    const MARK: &str = "QUESTION-GOES-HERE";
    let mut request: Value =
        serde_json::from_str(&std::fs::read_to_string(request_file).unwrap()).unwrap();
    let last = request["messages"]
        .as_array_mut()
        .and_then(|m| m.last_mut());
    let content = &mut last.expect("the captured request has messages")["content"];
    let opening = match captured_as {
        Some(question) => content.as_str().and_then(|c| c.strip_suffix(question)),
        None => Some(""),
    };
    let opening = opening.expect("the request was captured for the question named");
    *content = json!([opening, MARK].concat());
    let text = request.to_string();
    let (before, after) = text.split_once(MARK).unwrap();
    (before.to_string(), after.to_string())
}

/// One call: `question` put, JSON-escaped, between the captured request's two parts.
fn call_for(before: &str, question: &str, after: &str) -> String {
    let quoted = serde_json::to_string(question).unwrap();
    [before, &quoted[1..quoted.len() - 1], after].concat()
}

async fn open_streams(url: &str, count: usize) {
    let address = url.trim_start_matches("http://").trim_end_matches('/');
    let body = json!({"question": HOLD_PHRASE, "stream": true}).to_string();
    let request = format!(
        "POST /ask HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\n\
         content-length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut opened = Vec::with_capacity(count);
    for _ in 0..count {
        let mut socket = tokio::net::TcpStream::connect(address).await.unwrap();
        socket.write_all(request.as_bytes()).await.unwrap();
        opened.push(socket);
    }
    for socket in &mut opened {
        wait_for_token(socket).await;
    }
    println!("open {count}");
    // Blocking is fine here: the streams are open and nothing else runs in this process.
    let _ = std::io::stdin().read_line(&mut String::new());
}

async fn wait_for_token(socket: &mut tokio::net::TcpStream) {
    let mut seen = Vec::new();
    let mut buffer = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains("event: token") {
        let read = socket.read(&mut buffer).await.unwrap();
        assert!(read > 0, "a stream closed before its first token: {seen:?}");
        seen.extend_from_slice(&buffer[..read]);
    }
}
