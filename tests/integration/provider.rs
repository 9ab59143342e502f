//! A scripted OpenAI-compatible chat-completions server on loopback: the one stand-in of the
//! test suite (there is no network to reach a real model). It speaks the wire format, JSON and
//! server-sent events with tool-call deltas split across chunks, plays one scripted reply per
//! request in order, and records every request body so tests can assert on what the agent sent.
//! When the script runs out it answers 500 "script exhausted", so a test that calls the model
//! more often than it planned fails visibly.
//!
//! The agent's topic check (a request whose reply is held to the `topic` JSON schema) is
//! answered apart, from [`ScriptedProvider::set_topic`] (default `crowdvision_platform_roles_or_settings`, with
//! no usage), and recorded apart: the scripts and the recorded requests are the answer calls.

use axum::body::Body;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Clone, Debug)]
pub enum Reply {
    /// 200 with this chat-completion body.
    Json(Value),
    /// 200 `text/event-stream`: each chunk as one `data:` event, `pause` apart, then `[DONE]`.
    Stream { chunks: Vec<Value>, pause: Duration },
    /// An error status, optionally with `Retry-After`.
    Status {
        status: u16,
        retry_after: Option<&'static str>,
    },
    /// Waits this long before answering 500 (a provider that hangs).
    Hang(Duration),
    /// Waits this long, then plays the reply (a slow but working provider).
    Delay(Duration, Box<Reply>),
    /// 200 `text/event-stream` with these chunks, then the connection closes: no finish
    /// reason, no `[DONE]` (a stream cut off).
    CutStream(Vec<Value>),
    /// Any status with a body of any type (an HTML error page, say).
    Raw {
        status: u16,
        content_type: &'static str,
        body: String,
        retry_after: Option<&'static str>,
    },
}

/// Decides a reply from the request body; `None` falls through to the scripted replies.
pub type Rule = Arc<dyn Fn(&Value) -> Option<Reply> + Send + Sync>;

#[derive(Clone, Default)]
struct Script {
    rule: Arc<Mutex<Option<Rule>>>,
    replies: Arc<Mutex<VecDeque<Reply>>>,
    /// Replayed for every request once the script is done (for a model that never stops).
    forever: Arc<Mutex<Option<Reply>>>,
    requests: Arc<Mutex<Vec<(Instant, Value)>>>,
    /// The topic every topic check is answered with; `None` until set (the default topic).
    topic: Arc<Mutex<Option<String>>>,
    topic_checks: Arc<Mutex<Vec<Value>>>,
    /// Streamed replies whose client hung up before the last chunk.
    streams_cut: Arc<std::sync::atomic::AtomicUsize>,
}

/// Counts a streamed reply dropped before its end: the client closed the connection.
struct EndGuard {
    finished: bool,
    cut: Arc<std::sync::atomic::AtomicUsize>,
}

impl Drop for EndGuard {
    fn drop(&mut self) {
        if !self.finished {
            self.cut.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }
}

pub struct ScriptedProvider {
    /// The base URL to give as `LLM_BASE_URL`.
    pub url: String,
    script: Script,
}

impl ScriptedProvider {
    pub async fn start(replies: Vec<Reply>) -> ScriptedProvider {
        ScriptedProvider::serve(Script::default(), replies).await
    }

    /// A provider that answers every request by `rule` (for runs whose requests arrive in no
    /// fixed order, such as concurrent eval cases).
    pub async fn with_rule(
        rule: impl Fn(&Value) -> Option<Reply> + Send + Sync + 'static,
    ) -> ScriptedProvider {
        let provider = ScriptedProvider::serve(Script::default(), Vec::new()).await;
        provider.set_rule(rule);
        provider
    }

    /// From now on, answer by `rule` first (the scripted replies follow when it says `None`).
    pub fn set_rule(&self, rule: impl Fn(&Value) -> Option<Reply> + Send + Sync + 'static) {
        *self.script.rule.lock().unwrap() = Some(Arc::new(rule));
    }

    /// As [`ScriptedProvider::with_rule`], listening on `address` (`None` when it is taken).
    pub async fn with_rule_on(
        address: &str,
        rule: impl Fn(&Value) -> Option<Reply> + Send + Sync + 'static,
    ) -> Option<ScriptedProvider> {
        let listener = tokio::net::TcpListener::bind(address).await.ok()?;
        let provider = ScriptedProvider::serve_with(listener, Script::default(), Vec::new());
        provider.set_rule(rule);
        Some(provider)
    }

    async fn serve(script: Script, replies: Vec<Reply>) -> ScriptedProvider {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        ScriptedProvider::serve_with(listener, script, replies)
    }

    fn serve_with(
        listener: tokio::net::TcpListener,
        script: Script,
        replies: Vec<Reply>,
    ) -> ScriptedProvider {
        script.replies.lock().unwrap().extend(replies);
        let app = Router::new()
            .route("/v1/chat/completions", post(chat))
            .with_state(script.clone());
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        ScriptedProvider { url, script }
    }

    /// After the scripted replies, answer every further request with `reply`.
    pub fn then_forever(&self, reply: Reply) {
        *self.script.forever.lock().unwrap() = Some(reply);
    }

    /// Answer topic checks with this topic from now on.
    pub fn set_topic(&self, topic: &str) {
        *self.script.topic.lock().unwrap() = Some(topic.to_string());
    }

    /// The topic-check request bodies received so far, in order.
    pub fn topic_checks(&self) -> Vec<Value> {
        self.script.topic_checks.lock().unwrap().clone()
    }

    /// The request bodies received so far (topic checks apart), in order.
    pub fn requests(&self) -> Vec<Value> {
        self.script
            .requests
            .lock()
            .unwrap()
            .iter()
            .map(|(_, body)| body.clone())
            .collect()
    }

    /// Streamed replies the client stopped reading before their end.
    pub fn streams_cut(&self) -> usize {
        self.script
            .streams_cut
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    pub fn request_times(&self) -> Vec<Instant> {
        self.script
            .requests
            .lock()
            .unwrap()
            .iter()
            .map(|(at, _)| *at)
            .collect()
    }
}

async fn chat(State(script): State<Script>, Json(body): Json<Value>) -> Response {
    if body["response_format"]["json_schema"]["name"] == "topic" {
        let topic = script.topic.lock().unwrap().clone();
        let topic = topic.unwrap_or_else(|| "crowdvision_platform_roles_or_settings".to_string());
        script.topic_checks.lock().unwrap().push(body);
        return play(Some(answer(
            &json!({ "topic": topic }).to_string(),
            usage(0, 0),
        )));
    }
    let rule = script.rule.lock().unwrap().clone();
    let ruled = rule.and_then(|rule| rule(&body));
    script.requests.lock().unwrap().push((Instant::now(), body));
    let next = ruled.or_else(|| script.replies.lock().unwrap().pop_front());
    let mut reply = next.or_else(|| script.forever.lock().unwrap().clone());
    while let Some(Reply::Delay(wait, inner)) = reply {
        tokio::time::sleep(wait).await;
        reply = Some(*inner);
    }
    if let Some(Reply::Hang(wait)) = &reply {
        tokio::time::sleep(*wait).await;
    }
    play_counting(reply, &script.streams_cut)
}

fn play(reply: Option<Reply>) -> Response {
    play_counting(reply, &Arc::default())
}

fn play_counting(reply: Option<Reply>, cut: &Arc<std::sync::atomic::AtomicUsize>) -> Response {
    match reply {
        None => (StatusCode::INTERNAL_SERVER_ERROR, "script exhausted").into_response(),
        Some(Reply::Json(value)) => Json(value).into_response(),
        Some(Reply::Status {
            status,
            retry_after,
        }) => {
            let mut response = (
                StatusCode::from_u16(status).unwrap(),
                Json(json!({"error": {"message": "scripted failure", "type": "scripted"}})),
            )
                .into_response();
            if let Some(seconds) = retry_after {
                response
                    .headers_mut()
                    .insert("retry-after", seconds.parse().unwrap());
            }
            response
        }
        Some(Reply::Hang(_)) | Some(Reply::Delay(..)) => {
            (StatusCode::INTERNAL_SERVER_ERROR, "hung").into_response()
        }
        Some(Reply::CutStream(chunks)) => {
            let events = futures::stream::iter(
                chunks
                    .into_iter()
                    .map(|c| Ok::<_, std::io::Error>(format!("data: {c}\n\n"))),
            );
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(events))
                .unwrap()
        }
        Some(Reply::Raw {
            status,
            content_type,
            body,
            retry_after,
        }) => {
            let mut builder = Response::builder()
                .status(status)
                .header("content-type", content_type);
            if let Some(seconds) = retry_after {
                builder = builder.header("retry-after", seconds);
            }
            builder.body(Body::from(body)).unwrap()
        }
        Some(Reply::Stream { chunks, pause }) => {
            let guard = EndGuard {
                finished: false,
                cut: cut.clone(),
            };
            let events = futures::stream::unfold(
                (chunks.into_iter(), false, true, guard),
                move |(mut rest, done, first, mut guard)| async move {
                    if done {
                        // `guard.finished` was set with the last chunk.
                        return None;
                    }
                    if !first {
                        tokio::time::sleep(pause).await;
                    }
                    let (text, finished) = match rest.next() {
                        Some(chunk) => (format!("data: {chunk}\n\n"), false),
                        None => ("data: [DONE]\n\n".to_string(), true),
                    };
                    guard.finished = finished;
                    Some((
                        Ok::<_, std::io::Error>(text),
                        (rest, finished, false, guard),
                    ))
                },
            );
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(events))
                .unwrap()
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Reply builders

/// The text of the last user message of a request body.
pub fn last_user_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .rfind(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

pub fn usage(prompt: u64, completion: u64) -> Value {
    json!({"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion})
}

/// A final text answer.
pub fn answer(text: &str, usage: Value) -> Reply {
    Reply::Json(json!({
        "id": "scripted",
        "object": "chat.completion",
        "model": "scripted/model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": usage,
    }))
}

/// A turn that calls tools: `(call id, tool name, arguments as the model writes them)`.
pub fn tool_calls(calls: &[(&str, &str, &str)], usage: Value) -> Reply {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, arguments)| {
            json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
        })
        .collect();
    Reply::Json(json!({
        "id": "scripted",
        "object": "chat.completion",
        "model": "scripted/model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": calls}, "finish_reason": "tool_calls"}],
        "usage": usage,
    }))
}

pub fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({
        "id": "scripted",
        "object": "chat.completion.chunk",
        "model": "scripted/model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    })
}

/// A streamed final answer, one delta per piece, then the usage chunk.
pub fn streamed_answer(pieces: &[&str], usage: Value, pause: Duration) -> Reply {
    let mut chunks = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    chunks.extend(pieces.iter().map(|p| chunk(json!({"content": p}), None)));
    chunks.push(chunk(json!({}), Some("stop")));
    chunks.push(json!({"id": "scripted", "object": "chat.completion.chunk", "model": "scripted/model", "choices": [], "usage": usage}));
    Reply::Stream { chunks, pause }
}

/// Streamed tool calls, each call's arguments split into pieces of `piece` characters and the
/// calls' pieces interleaved, as providers send them.
pub fn streamed_tool_calls(calls: &[(&str, &str, &str)], piece: usize, usage: Value) -> Reply {
    let mut chunks = vec![chunk(json!({"role": "assistant", "content": null}), None)];
    for (index, (id, name, _)) in calls.iter().enumerate() {
        chunks.push(chunk(
            json!({"tool_calls": [{"index": index, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}),
            None,
        ));
    }
    let pieces: Vec<Vec<String>> = calls
        .iter()
        .map(|(_, _, arguments)| {
            arguments
                .chars()
                .collect::<Vec<_>>()
                .chunks(piece)
                .map(|c| c.iter().collect())
                .collect()
        })
        .collect();
    let longest = pieces.iter().map(Vec::len).max().unwrap_or(0);
    for round in 0..longest {
        for (index, call_pieces) in pieces.iter().enumerate() {
            if let Some(text) = call_pieces.get(round) {
                chunks.push(chunk(
                    json!({"tool_calls": [{"index": index, "function": {"arguments": text}}]}),
                    None,
                ));
            }
        }
    }
    chunks.push(chunk(json!({}), Some("tool_calls")));
    chunks.push(json!({"id": "scripted", "object": "chat.completion.chunk", "model": "scripted/model", "choices": [], "usage": usage}));
    Reply::Stream {
        chunks,
        pause: Duration::ZERO,
    }
}
