//! OpenAI-compatible chat over the agent, for the clients people already have (Open WebUI,
//! LibreChat, aichat, the `openai` SDKs): `GET /v1/models` and `POST /v1/chat/completions`,
//! whole or streamed as `chat.completion.chunk`s. Same identity, limits and checks as `/ask`;
//! the client's "API key" is a bearer token of the deployment's login.
//!
//! What a client sends is read as a conversation: its last message is the question, the user
//! and assistant messages before it the history. The agent keeps its own system prompt: a
//! client's `system` and `developer` messages are ignored. `tools`, `functions` and
//! `tool_choice` are refused (the agent runs its own tools), and so are `tool` messages and
//! content parts other than text. The answer's citations follow it as Markdown footnote
//! definitions. A stream shows the agent's tool steps as `reasoning_content` deltas.

use super::answering::{self, Streamed};
use super::caller::caller;
use super::conversations::KeptTurn;
use super::errors::ApiError;
use super::request::{parse_json, question as question_checked, require_json};
use super::AppState;
use crate::contract::{AskResponse, HistoryMessage, HistoryRole, Question};
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures::StreamExt;
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Arc;

/// Messages a request may carry at most.
pub const MAX_MESSAGES: usize = 200;

pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/v1/models", get(models))
        .route("/v1/chat/completions", post(completions))
}

/// An [`ApiError`] in OpenAI's error shape: `{"error": {"message", "type", "param", "code"}}`.
#[derive(Debug)]
pub struct CompatError(pub ApiError);

impl From<ApiError> for CompatError {
    fn from(error: ApiError) -> CompatError {
        CompatError(error)
    }
}

fn error_type(status: StatusCode) -> &'static str {
    match status.as_u16() {
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        429 => "rate_limit_error",
        400..=499 => "invalid_request_error",
        _ => "api_error",
    }
}

fn error_body(error: &ApiError) -> Value {
    json!({"error": {
        "message": error.message,
        "type": error_type(error.status),
        "param": null,
        "code": error.code,
    }})
}

impl IntoResponse for CompatError {
    fn into_response(self) -> Response {
        let body = error_body(&self.0);
        let mut response = self.0.into_response();
        // The status, `Retry-After` and the refusal's log line stay; the body is OpenAI's.
        *response.body_mut() = axum::body::Body::from(body.to_string());
        response
    }
}

fn invalid(code: &'static str, message: impl Into<String>) -> CompatError {
    CompatError(ApiError::new(StatusCode::BAD_REQUEST, code, message))
}

async fn models(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
) -> Result<Json<Value>, CompatError> {
    let caller = caller(&headers, &state).await?;
    let data: Vec<Value> = state
        .agent
        .models_for(&caller.user)
        .into_iter()
        .map(|id| json!({"id": id, "object": "model", "created": 0, "owned_by": "crowdvision-agent"}))
        .collect();
    Ok(Json(json!({"object": "list", "data": data})))
}

/// The body of `POST /v1/chat/completions`, as far as it is read.
#[derive(Debug, Deserialize)]
pub struct CompletionRequest {
    #[serde(default)]
    pub model: Option<String>,
    pub messages: Vec<ClientMessage>,
    #[serde(default)]
    pub stream: bool,
    #[serde(default)]
    pub stream_options: Option<StreamOptions>,
    #[serde(default)]
    pub tools: Option<Value>,
    #[serde(default)]
    pub functions: Option<Value>,
    #[serde(default)]
    pub tool_choice: Option<Value>,
    #[serde(default)]
    pub response_format: Option<Value>,
    /// A conversation of the caller's kept by the server (an extension: `extra_body` in the
    /// official SDKs): its stored turns are the history, earlier messages are ignored, and the
    /// answer is added to it.
    #[serde(default)]
    pub conversation_id: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct StreamOptions {
    #[serde(default)]
    pub include_usage: bool,
}

#[derive(Debug, Deserialize)]
pub struct ClientMessage {
    pub role: String,
    #[serde(default)]
    pub content: Value,
}

/// The text of a message's content: a string, or text parts joined.
fn content_text(content: &Value) -> Result<String, CompatError> {
    match content {
        Value::String(text) => Ok(text.clone()),
        Value::Null => Ok(String::new()),
        Value::Array(parts) => parts
            .iter()
            .map(
                |part| match (part["type"].as_str(), part["text"].as_str()) {
                    (Some("text"), Some(text)) => Ok(text),
                    _ => Err(invalid(
                        "unsupported_content",
                        "only text content parts are accepted",
                    )),
                },
            )
            .collect::<Result<Vec<_>, _>>()
            .map(|texts| texts.join("\n")),
        _ => Err(invalid(
            "invalid_content",
            "content must be a string or text parts",
        )),
    }
}

/// An answer sent back by the client, without the footnote definitions this endpoint added.
fn without_footnotes(text: &str) -> String {
    text.lines()
        .filter(|line| !(line.starts_with("[^") && line.contains("]: ")))
        .collect::<Vec<_>>()
        .join("\n")
        .trim_end()
        .to_string()
}

/// A `response_format` other than absent, null or `{"type": "text"}`: JSON the agent would not
/// write, so it is refused rather than ignored.
fn asks_for_structured_output(format: Option<&Value>) -> bool {
    match format {
        None | Some(Value::Null) => false,
        Some(format) => format.get("type").and_then(Value::as_str) != Some("text"),
    }
}

/// The question a request asks, with its history. Pure.
pub fn question_of(request: &CompletionRequest) -> Result<Question, CompatError> {
    let offered = |field: &Option<Value>| field.as_ref().is_some_and(|v| !v.is_null());
    if offered(&request.tools) || offered(&request.functions) || offered(&request.tool_choice) {
        return Err(invalid(
            "tools_not_accepted",
            "this endpoint runs the agent's own tools: send no tools, functions or tool_choice",
        ));
    }
    if asks_for_structured_output(request.response_format.as_ref()) {
        return Err(invalid(
            "response_format_not_supported",
            "answers are cited prose: response_format may only be {\"type\": \"text\"}",
        ));
    }
    if request.messages.len() > MAX_MESSAGES {
        return Err(invalid(
            "too_many_messages",
            format!("at most {MAX_MESSAGES} messages are accepted"),
        ));
    }
    let mut conversation = Vec::new();
    for message in &request.messages {
        let text = content_text(&message.content)?;
        match message.role.as_str() {
            "system" | "developer" => {}
            "user" => conversation.push((HistoryRole::User, text)),
            "assistant" => conversation.push((HistoryRole::Assistant, without_footnotes(&text))),
            "tool" | "function" => {
                return Err(invalid(
                    "tool_messages_not_accepted",
                    "tool messages are not accepted: the agent runs its own tools",
                ))
            }
            _ => return Err(invalid("invalid_role", "a message has an unknown role")),
        }
    }
    let Some((HistoryRole::User, text)) = conversation.pop() else {
        return Err(invalid(
            "no_question",
            "the last message must be the user's question",
        ));
    };
    let history = conversation
        .into_iter()
        .map(|(role, content)| HistoryMessage { role, content })
        .collect();
    Ok(Question {
        text,
        history,
        model: request.model.clone(),
        top_k: None,
    })
}

/// The answer as a client shows it: the text, then its citations as footnote definitions.
pub fn answer_text(response: &AskResponse) -> String {
    crate::citations::with_footnotes(&response.answer, &response.citations)
}

fn usage_json(response: &AskResponse) -> Value {
    json!({
        "prompt_tokens": response.usage.prompt_tokens,
        "completion_tokens": response.usage.completion_tokens,
        "total_tokens": response.usage.total_tokens,
    })
}

/// An id unique within this process's life: the clock and a counter.
fn completion_id() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let count = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos = crate::clock::unix_nanos();
    format!("chatcmpl-{nanos:x}{count:x}")
}

async fn completions(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, CompatError> {
    require_json(&headers)?;
    let caller = caller(&headers, &state).await?;
    let request: CompletionRequest = parse_json(body, "a chat completion request")?;
    let mut question = question_of(&request)?;
    question_checked(&question.text, &state)?;
    let keeping = match &request.conversation_id {
        Some(id) => {
            let (history, keeping) = super::conversations::resume(&state, &caller, id).await?;
            question.history = history;
            Some(keeping)
        }
        None => None,
    };
    let held = answering::admit(&state, &caller).await?;
    if !request.stream {
        let (response, kept) =
            answering::answer_once(&state, &question, &caller, held, keeping).await?;
        let mut body = json!({
            "id": completion_id(),
            "object": "chat.completion",
            "created": crate::clock::unix_secs(),
            "model": response.model,
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": answer_text(&response)},
                "finish_reason": "stop",
                "logprobs": null,
            }],
            "usage": usage_json(&response),
        });
        if let Some(kept) = kept {
            body["conversation_id"] = kept.conversation_id.into();
            body["turn_id"] = kept.turn_id.into();
        }
        return Ok(Json(body).into_response());
    }
    let include_usage = request
        .stream_options
        .as_ref()
        .is_some_and(|o| o.include_usage);
    let keep_alive = state.settings.keep_alive;
    let mut chunks = Chunks::new(state.agent.default_model().to_string(), include_usage);
    let stream = answering::answer_stream(state, question, caller, held, keeping)
        .map(move |streamed| chunks.of(streamed))
        .flat_map(futures::stream::iter)
        .chain(futures::stream::once(async { "[DONE]".to_string() }))
        .map(|data| Ok::<_, std::convert::Infallible>(Event::default().data(data)));
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(keep_alive))
        .into_response())
}

/// The chunks of one streamed completion, as the answer's items arrive.
struct Chunks {
    id: String,
    created: u64,
    model: String,
    include_usage: bool,
    /// The content sent so far.
    sent: String,
    /// The agent withdrew text (a re-ask): what was sent can no longer be trusted to lead to
    /// the answer, and nothing more streams until it is known.
    withdrawn: bool,
    started: bool,
}

impl Chunks {
    fn new(model: String, include_usage: bool) -> Chunks {
        Chunks {
            id: completion_id(),
            created: crate::clock::unix_secs(),
            model,
            include_usage,
            sent: String::new(),
            withdrawn: false,
            started: false,
        }
    }

    fn chunk(&self, delta: Value, finish: Option<&str>) -> String {
        self.chunk_value(delta, finish).to_string()
    }

    fn chunk_value(&self, delta: Value, finish: Option<&str>) -> Value {
        json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": null}],
        })
    }

    /// The chunks (data lines) one item of the answer becomes.
    fn of(&mut self, streamed: Streamed) -> Vec<String> {
        let mut out = Vec::new();
        if !self.started {
            self.started = true;
            out.push(self.chunk(json!({"role": "assistant", "content": ""}), None));
        }
        match streamed {
            Streamed::Event(crate::contract::AgentEvent::Token { text }) if !self.withdrawn => {
                self.sent.push_str(&text);
                out.push(self.chunk(json!({ "content": text }), None));
            }
            Streamed::Event(crate::contract::AgentEvent::Token { .. }) => {}
            Streamed::Event(crate::contract::AgentEvent::Retract) => self.withdrawn = true,
            Streamed::Event(crate::contract::AgentEvent::ToolCall { tool, .. }) => {
                out.push(self.chunk(json!({"reasoning_content": format!("{tool} …\n")}), None));
            }
            Streamed::Event(crate::contract::AgentEvent::ToolResult { tool, summary, .. }) => {
                let line = format!("{tool}: {summary}\n");
                out.push(self.chunk(json!({ "reasoning_content": line }), None));
            }
            Streamed::Done(response, kept) => out.extend(self.finish(&response, kept)),
            Streamed::Failed(error) => out.push(error_body(&error).to_string()),
        }
        out
    }

    /// The rest of the answer, the finish reason, and the usage when asked for. When what was
    /// sent is the start of the answer the rest follows it, so the joined deltas are the
    /// answer; when the agent withdrew text, the answer follows a separating line.
    fn finish(&mut self, response: &AskResponse, kept: Option<KeptTurn>) -> Vec<String> {
        let text = answer_text(response);
        let rest = match text.strip_prefix(self.sent.as_str()) {
            Some(rest) => rest.to_string(),
            None => format!("\n\n---\n\n{text}"),
        };
        self.model = response.model.clone();
        let mut last = self.chunk_value(json!({ "content": rest }), Some("stop"));
        if let Some(kept) = kept {
            last["conversation_id"] = kept.conversation_id.into();
            last["turn_id"] = kept.turn_id.into();
        }
        let mut out = vec![last.to_string()];
        if self.include_usage {
            out.push(
                json!({
                    "id": self.id,
                    "object": "chat.completion.chunk",
                    "created": self.created,
                    "model": self.model,
                    "choices": [],
                    "usage": usage_json(response),
                })
                .to_string(),
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(body: Value) -> CompletionRequest {
        serde_json::from_value(body).unwrap()
    }

    fn refusal(body: Value) -> &'static str {
        match question_of(&request(body)) {
            Err(CompatError(error)) => error.code,
            Ok(question) => panic!("accepted: {question:?}"),
        }
    }

    #[test]
    fn the_last_user_message_is_the_question_and_the_rest_its_history() {
        let question = question_of(&request(json!({"model": "m", "messages": [
            {"role": "system", "content": "You are a pirate."},
            {"role": "user", "content": "Which buildings can I see?"},
            {"role": "assistant", "content": "Acme HQ [^a].\n\n[^a]: user/b.md › Buildings"},
            {"role": "user", "content": [{"type": "text", "text": "And the first one?"}]}
        ]})))
        .unwrap();
        assert_eq!(question.text, "And the first one?");
        assert_eq!(question.model.as_deref(), Some("m"));
        assert_eq!(question.history.len(), 2);
        assert_eq!(question.history[1].content, "Acme HQ [^a].");
        assert!(question
            .history
            .iter()
            .all(|m| !m.content.contains("pirate")));
    }

    #[test]
    fn what_the_agent_cannot_take_is_refused() {
        let user = json!({"role": "user", "content": "hi"});
        assert_eq!(
            refusal(json!({"messages": [user], "tools": [{"type": "function"}]})),
            "tools_not_accepted"
        );
        assert_eq!(
            refusal(json!({"messages": [user], "functions": []})),
            "tools_not_accepted"
        );
        assert_eq!(
            refusal(json!({"messages": [{"role": "wizard", "content": "x"}]})),
            "invalid_role"
        );
        assert_eq!(
            refusal(json!({"messages": [{"role": "tool", "content": "x"}]})),
            "tool_messages_not_accepted"
        );
        assert_eq!(refusal(json!({"messages": []})), "no_question");
        assert_eq!(
            refusal(json!({"messages": [{"role": "assistant", "content": "x"}]})),
            "no_question"
        );
        let image =
            json!({"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]});
        assert_eq!(refusal(json!({"messages": [image]})), "unsupported_content");
        let many: Vec<Value> = (0..=MAX_MESSAGES).map(|_| user.clone()).collect();
        assert_eq!(refusal(json!({"messages": many})), "too_many_messages");
        for format in [
            json!({"type": "json_object"}),
            json!({"type": "json_schema", "json_schema": {"name": "x", "schema": {}}}),
            json!("json"),
        ] {
            assert_eq!(
                refusal(json!({"messages": [user], "response_format": format})),
                "response_format_not_supported"
            );
        }
        for format in [json!({"type": "text"}), Value::Null] {
            assert!(question_of(&request(
                json!({"messages": [user], "response_format": format})
            ))
            .is_ok());
        }
        // A null tools field is what some clients send for none.
        assert!(question_of(&request(json!({"messages": [user], "tools": null}))).is_ok());
    }

    #[test]
    fn errors_take_openai_types() {
        assert_eq!(error_type(StatusCode::UNAUTHORIZED), "authentication_error");
        assert_eq!(
            error_type(StatusCode::TOO_MANY_REQUESTS),
            "rate_limit_error"
        );
        assert_eq!(
            error_type(StatusCode::PAYLOAD_TOO_LARGE),
            "invalid_request_error"
        );
        assert_eq!(error_type(StatusCode::SERVICE_UNAVAILABLE), "api_error");
    }
}
