//! ADAPTER for [`ChatModel`]: any OpenAI-compatible chat-completions endpoint (OpenRouter, a
//! local server, a gateway) through `async-openai` with a custom base URL.
//!
//! The wire shapes are this module's own serde types (async-openai's "bring your own types"
//! calls), so that provider extras such as OpenRouter's `usage.cost` are read, and anything
//! malformed becomes an [`LlmError`] instead of a panic. Retries live in [`RetryingHttp`], a
//! tower service under async-openai that sees every response's status and headers: 429, 5xx and
//! refused connections are retried with jittered backoff or after `Retry-After`, never past the
//! call's deadline. The deadline (`LLM_TIMEOUT_SECONDS`) bounds the whole call, streaming
//! included.

use super::llm::{
    ChatModel, ChatRequest, ChatTurn, FinishReason, LlmError, Message, Role, TokenSink, ToolCall,
    ToolChoice,
};
use super::usage::Usage;
use crate::config::LlmConfig;
use crate::http::{backoff, is_retryable, retry_after, MAX_RETRY_WAIT};
use async_openai::config::OpenAIConfig;
use async_openai::error::OpenAIError;
use async_openai::middleware::{HttpRequestFactory, ReqwestService};
use async_openai::Client;
use async_trait::async_trait;
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

const BACKOFF_BASE: Duration = Duration::from_millis(200);

pub struct OpenAiChat {
    client: Client<OpenAIConfig>,
    /// The provider's base URL, named in transport errors.
    base_url: String,
    deadline: Duration,
    max_retries: u32,
}

impl OpenAiChat {
    pub fn new(config: &LlmConfig) -> OpenAiChat {
        let mut provider = OpenAIConfig::new()
            .with_api_base(config.base_url.as_str().trim_end_matches('/'))
            .with_api_key(config.api_key.clone().unwrap_or_default());
        // OpenRouter's attribution headers; other providers ignore them.
        if let Ok(with_title) = provider.clone().with_header("X-Title", "crowdvision-agent") {
            provider = with_title;
        }
        let http = crate::http::client_builder()
            .build()
            .expect("a reqwest client with default settings always builds");
        let client = Client::with_config(provider).with_http_service(RetryingHttp {
            inner: ReqwestService::new(http),
            max_retries: config.max_retries,
            deadline: config.timeout,
            base_url: config.base_url.to_string(),
        });
        OpenAiChat {
            client,
            base_url: config.base_url.to_string(),
            deadline: config.timeout,
            max_retries: config.max_retries,
        }
    }

    /// The port's error, naming the provider when it could not be reached.
    fn error(&self, error: OpenAIError) -> LlmError {
        match from_openai(error) {
            LlmError::Transport(reason) => {
                LlmError::Transport(format!("{} ({reason})", self.base_url))
            }
            other => other,
        }
    }

    async fn complete(&self, body: WireRequest<'_>) -> Result<ChatTurn, LlmError> {
        let response: WireResponse = self
            .client
            .chat()
            .create_byot(body)
            .await
            .map_err(|e| self.error(e))?;
        response.into_turn()
    }

    /// A stream cut off before any text was shown is asked for again, like a 5xx; once text
    /// has been shown the cut-off is the caller's error.
    async fn stream_retrying_cut_offs(
        &self,
        request: &ChatRequest<'_>,
        tokens: &TokenSink<'_>,
    ) -> Result<ChatTurn, LlmError> {
        let mut retries = 0;
        loop {
            let shown = std::sync::atomic::AtomicBool::new(false);
            let tracking = |text: &str| {
                shown.store(true, std::sync::atomic::Ordering::Relaxed);
                tokens(text);
            };
            match self
                .stream(WireRequest::new(request, true), &tracking)
                .await
            {
                Err(LlmError::Truncated)
                    if !shown.load(std::sync::atomic::Ordering::Relaxed)
                        && retries < self.max_retries =>
                {
                    retries += 1;
                    tracing::warn!(retry = retries, "provider stream was cut off; retrying");
                    tokio::time::sleep(backoff(BACKOFF_BASE, retries)).await;
                }
                other => return other,
            }
        }
    }

    async fn stream(
        &self,
        body: WireRequest<'_>,
        tokens: &TokenSink<'_>,
    ) -> Result<ChatTurn, LlmError> {
        let mut chunks = self
            .client
            .chat()
            .create_stream_byot::<_, WireChunk>(body)
            .await
            .map_err(|e| self.error(e))?;
        let mut assembly = StreamAssembly::default();
        while let Some(chunk) = chunks.next().await {
            assembly.push(chunk.map_err(|e| self.error(e))?, tokens)?;
        }
        assembly.finish()
    }
}

#[async_trait]
impl ChatModel for OpenAiChat {
    async fn chat(
        &self,
        request: ChatRequest<'_>,
        tokens: Option<&TokenSink<'_>>,
    ) -> Result<ChatTurn, LlmError> {
        let call = async {
            match tokens {
                Some(sink) => self.stream_retrying_cut_offs(&request, sink).await,
                None => self.complete(WireRequest::new(&request, false)).await,
            }
        };
        tokio::time::timeout(self.deadline, call)
            .await
            .unwrap_or(Err(LlmError::Timeout))
    }
}

// ---------------------------------------------------------------------------------------------
// Retries

/// The final status of a request that did not succeed, carried through async-openai so that
/// the status survives whatever the error body holds; `detail` is the bounded summary.
#[derive(Debug, thiserror::Error)]
#[error("HTTP {status}")]
struct ProviderStatus {
    status: u16,
    detail: String,
}

/// Most of an error body read for its summary.
const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

/// A tower service under async-openai that retries 429, 5xx and refused connections.
#[derive(Clone)]
struct RetryingHttp {
    inner: ReqwestService,
    max_retries: u32,
    deadline: Duration,
    base_url: String,
}

impl tower::Service<HttpRequestFactory> for RetryingHttp {
    type Response = reqwest::Response;
    type Error = OpenAIError;
    type Future = Pin<Box<dyn Future<Output = Result<reqwest::Response, OpenAIError>> + Send>>;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), OpenAIError>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: HttpRequestFactory) -> Self::Future {
        Box::pin(self.clone().send(request))
    }
}

impl RetryingHttp {
    async fn send(mut self, request: HttpRequestFactory) -> Result<reqwest::Response, OpenAIError> {
        use tower::Service;
        let give_up_at = Instant::now() + self.deadline;
        let mut retries = 0;
        loop {
            let result = self.inner.call(request.clone()).await;
            let (wait, requested) = match &result {
                Ok(response) if response.status().is_success() => return result,
                Ok(response) if is_retryable(response.status()) => {
                    match retry_after(response.headers()) {
                        Some(wait) => (wait, true),
                        None => (backoff(BACKOFF_BASE, retries + 1), false),
                    }
                }
                Err(OpenAIError::Reqwest(e)) if e.is_connect() => {
                    (backoff(BACKOFF_BASE, retries + 1), false)
                }
                _ => return final_result(result).await,
            };
            let left = give_up_at.saturating_duration_since(Instant::now());
            if requested && (wait > MAX_RETRY_WAIT || wait > left) {
                // Waiting less than asked would only be refused again: fail now, saying why.
                let status = result.as_ref().map_or(503, |r| r.status().as_u16());
                return Err(OpenAIError::Boxed(Box::new(ProviderStatus {
                    status,
                    detail: format!(
                        "asked to retry after {} s, more than the {} s this call may still wait",
                        wait.as_secs(),
                        left.min(MAX_RETRY_WAIT).as_secs()
                    ),
                })));
            }
            if retries >= self.max_retries || wait > left {
                // One warning per call that failed for good, naming where it went.
                let failure = match &result {
                    Ok(response) => format!("HTTP {}", response.status().as_u16()),
                    Err(OpenAIError::Reqwest(e)) => crate::http::describe_error(e),
                    Err(other) => other.to_string().chars().take(160).collect(),
                };
                tracing::warn!(
                    url = %self.base_url,
                    attempts = retries + 1,
                    %failure,
                    "provider call failed"
                );
                return final_result(result).await;
            }
            retries += 1;
            tracing::debug!(
                retry = retries,
                wait_ms = wait.as_millis() as u64,
                "provider call failed; retrying"
            );
            tokio::time::sleep(wait).await;
        }
    }
}

/// An unsuccessful response becomes its status and a bounded summary of its body; the body
/// itself goes no further.
async fn final_result(
    result: Result<reqwest::Response, OpenAIError>,
) -> Result<reqwest::Response, OpenAIError> {
    match result {
        Ok(response) if !response.status().is_success() => {
            let status = response.status().as_u16();
            let body = crate::http::bounded_body(response, MAX_ERROR_BODY_BYTES).await;
            Err(OpenAIError::Boxed(Box::new(ProviderStatus {
                status,
                detail: crate::http::error_summary(&body),
            })))
        }
        other => other,
    }
}

/// Maps async-openai's errors onto the port's, without the provider's response bodies.
fn from_openai(error: OpenAIError) -> LlmError {
    match error {
        OpenAIError::Boxed(boxed) => match boxed.downcast::<ProviderStatus>() {
            Ok(status) => LlmError::Status {
                status: status.status,
                detail: status.detail,
            },
            Err(other) => LlmError::Transport(other.to_string()),
        },
        OpenAIError::ApiError(api) => LlmError::Status {
            status: api.status_code.as_u16(),
            detail: String::new(),
        },
        OpenAIError::Reqwest(e) if e.is_timeout() => LlmError::Timeout,
        OpenAIError::Reqwest(e) if e.is_decode() => {
            LlmError::Malformed("the body could not be decoded".to_string())
        }
        OpenAIError::Reqwest(e) if e.is_body() => LlmError::Truncated,
        OpenAIError::Reqwest(e) => LlmError::Transport(crate::http::describe_error(&e)),
        // serde's message quotes the body it choked on: say where only.
        OpenAIError::JSONDeserialize(e, _) => LlmError::Malformed(format!(
            "not the expected JSON (line {}, column {})",
            e.line(),
            e.column()
        )),
        // Stream errors may quote the event they choked on: say what kind of failure only.
        OpenAIError::StreamError(_) => LlmError::Transport("the event stream broke".to_string()),
        other => LlmError::Malformed(format!("unexpected response ({})", error_kind(&other))),
    }
}

/// The kind of an async-openai error, without its text (which may quote the provider).
fn error_kind(error: &OpenAIError) -> &'static str {
    match error {
        OpenAIError::InvalidArgument(_) => "invalid argument",
        OpenAIError::FileSaveError(_) | OpenAIError::FileReadError(_) => "file",
        _ => "other",
    }
}

// ---------------------------------------------------------------------------------------------
// Wire format: requests

#[derive(Serialize)]
struct WireRequest<'a> {
    model: &'a str,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    temperature: f32,
    max_tokens: u32,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<WireResponseFormat<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<&'static str>,
}

#[derive(Serialize)]
struct WireResponseFormat<'a> {
    r#type: &'static str,
    json_schema: WireJsonSchema<'a>,
}

#[derive(Serialize)]
struct WireJsonSchema<'a> {
    name: &'a str,
    strict: bool,
    schema: &'a serde_json::Value,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
struct WireMessage<'a> {
    role: Role,
    content: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<WireToolCall<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
}

#[derive(Serialize)]
struct WireToolCall<'a> {
    id: &'a str,
    r#type: &'static str,
    function: WireFunction<'a>,
}

#[derive(Serialize)]
struct WireFunction<'a> {
    name: &'a str,
    arguments: &'a str,
}

#[derive(Serialize)]
struct WireTool<'a> {
    r#type: &'static str,
    function: WireToolFunction<'a>,
}

#[derive(Serialize)]
struct WireToolFunction<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a serde_json::value::RawValue,
}

impl<'a> WireRequest<'a> {
    fn new(request: &ChatRequest<'a>, stream: bool) -> WireRequest<'a> {
        WireRequest {
            model: request.model,
            messages: request.messages.iter().map(WireMessage::from).collect(),
            tools: request
                .tools
                .iter()
                .map(|tool| WireTool {
                    r#type: "function",
                    function: WireToolFunction {
                        name: tool.name,
                        description: tool.description,
                        parameters: &tool.parameters_json,
                    },
                })
                .collect(),
            temperature: request.temperature,
            max_tokens: request.max_output_tokens,
            stream,
            stream_options: stream.then_some(StreamOptions {
                include_usage: true,
            }),
            tool_choice: (request.tool_choice == ToolChoice::Required && !request.tools.is_empty())
                .then_some("required"),
            response_format: request.response_schema.map(|format| WireResponseFormat {
                r#type: "json_schema",
                json_schema: WireJsonSchema {
                    name: format.name,
                    strict: true,
                    schema: format.schema,
                },
            }),
        }
    }
}

impl<'a> From<&'a Message> for WireMessage<'a> {
    fn from(message: &'a Message) -> WireMessage<'a> {
        WireMessage {
            role: message.role,
            content: message.content.as_deref(),
            tool_calls: message
                .tool_calls
                .iter()
                .map(|call| WireToolCall {
                    id: &call.id,
                    r#type: "function",
                    function: WireFunction {
                        name: &call.name,
                        arguments: &call.arguments,
                    },
                })
                .collect(),
            tool_call_id: message.tool_call_id.as_deref(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Wire format: responses. Every field is optional here; what is required is checked below, so a
// missing field is a clear error rather than a serde message.

#[derive(Deserialize)]
struct WireResponse {
    model: Option<String>,
    #[serde(default)]
    choices: Vec<WireChoice>,
    usage: Option<WireUsage>,
    error: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct WireChoice {
    message: Option<WireReply>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireReply {
    content: Option<String>,
    tool_calls: Option<Vec<WireReplyCall>>,
}

#[derive(Deserialize)]
struct WireReplyCall {
    id: Option<String>,
    function: Option<WireReplyFunction>,
}

#[derive(Deserialize)]
struct WireReplyFunction {
    name: Option<String>,
    /// Text by the specification; some servers send an object.
    arguments: Option<serde_json::Value>,
}

#[derive(Deserialize, Default, Clone, Copy)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    total_tokens: u64,
    /// OpenRouter's own cost report, in US dollars.
    cost: Option<f64>,
}

impl WireUsage {
    fn usage(self) -> Usage {
        Usage {
            prompt_tokens: self.prompt_tokens,
            completion_tokens: self.completion_tokens,
            total_tokens: if self.total_tokens > 0 {
                self.total_tokens
            } else {
                self.prompt_tokens + self.completion_tokens
            },
        }
    }

    fn cost(self) -> Option<f64> {
        self.cost.filter(|c| c.is_finite() && *c >= 0.0)
    }
}

impl WireResponse {
    fn into_turn(self) -> Result<ChatTurn, LlmError> {
        if let Some(error) = self.error {
            return Err(provider_error(&error));
        }
        let choice = self
            .choices
            .into_iter()
            .next()
            .ok_or(LlmError::EmptyChoices)?;
        let reply = choice
            .message
            .ok_or_else(|| LlmError::Malformed("the choice has no message".into()))?;
        let calls = reply
            .tool_calls
            .unwrap_or_default()
            .into_iter()
            .map(|call| {
                let function = call.function.unwrap_or(WireReplyFunction {
                    name: None,
                    arguments: None,
                });
                checked_call(call.id, function.name, arguments_text(function.arguments))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let usage = self.usage.unwrap_or_default();
        Ok(ChatTurn {
            finish: finish_reason(choice.finish_reason.as_deref(), !calls.is_empty())?,
            message: assistant_message(reply.content, calls),
            usage: usage.usage(),
            provider_cost: usage.cost(),
            model: self.model.unwrap_or_default(),
        })
    }
}

fn arguments_text(arguments: Option<serde_json::Value>) -> String {
    match arguments {
        None | Some(serde_json::Value::Null) => String::new(),
        Some(serde_json::Value::String(text)) => text,
        Some(other) => other.to_string(),
    }
}

fn checked_call(
    id: Option<String>,
    name: Option<String>,
    arguments: String,
) -> Result<ToolCall, LlmError> {
    let id = id
        .filter(|id| !id.is_empty())
        .ok_or_else(|| LlmError::Malformed("a tool call has no id".into()))?;
    // A call without a name stays a call: the registry answers it as an unknown tool, and the
    // model can correct itself.
    let name = name.unwrap_or_default();
    Ok(ToolCall {
        id,
        name,
        arguments,
    })
}

fn assistant_message(content: Option<String>, calls: Vec<ToolCall>) -> Message {
    let content = content.filter(|text| !text.is_empty());
    if calls.is_empty() {
        Message::assistant(content.unwrap_or_default())
    } else {
        Message {
            content,
            ..Message::assistant_calls(calls)
        }
    }
}

/// A missing finish reason (some local servers omit it) is read from whether tools were called.
fn finish_reason(reason: Option<&str>, has_calls: bool) -> Result<FinishReason, LlmError> {
    match reason {
        None if has_calls => Ok(FinishReason::ToolCalls),
        None => Ok(FinishReason::Stop),
        Some("stop" | "end_turn") => Ok(FinishReason::Stop),
        Some("tool_calls" | "function_call") => Ok(FinishReason::ToolCalls),
        Some("length") => Ok(FinishReason::Length),
        Some("content_filter") => Ok(FinishReason::ContentFilter),
        Some(other) => Err(LlmError::UnknownFinishReason(
            other.chars().take(40).collect(),
        )),
    }
}

fn provider_error(error: &serde_json::Value) -> LlmError {
    let wrapped = serde_json::json!({ "error": error });
    let summary = crate::http::error_summary(wrapped.to_string().as_bytes());
    LlmError::Malformed(format!(
        "the provider reported an error: {}",
        if summary.is_empty() {
            "no message"
        } else {
            summary.as_str()
        }
    ))
}

// ---------------------------------------------------------------------------------------------
// Wire format: streamed chunks, and their assembly into one turn

#[derive(Deserialize)]
struct WireChunk {
    model: Option<String>,
    #[serde(default)]
    choices: Vec<WireChunkChoice>,
    usage: Option<WireUsage>,
    error: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct WireChunkChoice {
    delta: Option<WireDelta>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireDelta {
    content: Option<String>,
    tool_calls: Option<Vec<WireCallDelta>>,
}

#[derive(Deserialize)]
struct WireCallDelta {
    index: Option<usize>,
    id: Option<String>,
    function: Option<WireFunctionDelta>,
}

#[derive(Deserialize)]
struct WireFunctionDelta {
    name: Option<String>,
    arguments: Option<String>,
}

#[derive(Default)]
struct PartialCall {
    index: usize,
    id: Option<String>,
    name: Option<String>,
    arguments: String,
}

/// Collects a streamed turn: text deltas are passed on as they come; tool calls arrive in
/// pieces keyed by `index` (id and name in the first, the arguments spread over the rest).
#[derive(Default)]
struct StreamAssembly {
    content: String,
    calls: Vec<PartialCall>,
    finish: Option<String>,
    usage: WireUsage,
    model: Option<String>,
    chunks: usize,
}

impl StreamAssembly {
    fn push(&mut self, chunk: WireChunk, tokens: &TokenSink<'_>) -> Result<(), LlmError> {
        if let Some(error) = chunk.error {
            return Err(provider_error(&error));
        }
        self.chunks += 1;
        if self.model.is_none() {
            self.model = chunk.model;
        }
        if let Some(usage) = chunk.usage {
            self.usage = usage;
        }
        for choice in chunk.choices {
            if let Some(reason) = choice.finish_reason {
                self.finish = Some(reason);
            }
            let Some(delta) = choice.delta else { continue };
            if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                tokens(&text);
                self.content.push_str(&text);
            }
            for piece in delta.tool_calls.unwrap_or_default() {
                self.add_call_piece(piece);
            }
        }
        Ok(())
    }

    fn add_call_piece(&mut self, piece: WireCallDelta) {
        // Without an index, a piece with a new id starts a call; anything else continues the last.
        let index = piece.index.unwrap_or_else(|| {
            let last = self.calls.last();
            match (&piece.id, last) {
                (Some(id), Some(call)) if call.id.as_ref() != Some(id) => call.index + 1,
                (_, Some(call)) => call.index,
                (_, None) => 0,
            }
        });
        let position = match self.calls.iter().position(|c| c.index == index) {
            Some(position) => position,
            None => {
                self.calls.push(PartialCall {
                    index,
                    ..PartialCall::default()
                });
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[position];
        if let Some(id) = piece.id.filter(|id| !id.is_empty()) {
            call.id = Some(id);
        }
        if let Some(function) = piece.function {
            if let Some(name) = function.name.filter(|n| !n.is_empty()) {
                call.name = Some(name);
            }
            if let Some(arguments) = function.arguments {
                call.arguments.push_str(&arguments);
            }
        }
    }

    fn finish(mut self) -> Result<ChatTurn, LlmError> {
        if self.chunks == 0 {
            return Err(LlmError::EmptyChoices);
        }
        if self.finish.is_none() {
            // No finish reason: the stream was cut off, and what came is not the answer.
            return Err(LlmError::Truncated);
        }
        self.calls.sort_by_key(|c| c.index);
        let calls = self
            .calls
            .into_iter()
            .map(|c| checked_call(c.id, c.name, c.arguments))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ChatTurn {
            finish: finish_reason(self.finish.as_deref(), !calls.is_empty())?,
            message: assistant_message(Some(self.content), calls),
            usage: self.usage.usage(),
            provider_cost: self.usage.cost(),
            model: self.model.unwrap_or_default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    fn chunk(json: serde_json::Value) -> WireChunk {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn tool_call_pieces_are_joined_by_index() {
        let seen = Mutex::new(Vec::<String>::new());
        let sink = |t: &str| seen.lock().unwrap().push(t.to_string());
        let mut assembly = StreamAssembly::default();
        let pieces = [
            serde_json::json!({"model": "m", "choices": [{"delta": {"content": "Let me check"}}]}),
            serde_json::json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "a", "function": {"name": "search_docs", "arguments": "{\"qu"}}]}}]}),
            serde_json::json!({"choices": [{"delta": {"tool_calls": [{"index": 1, "id": "b", "function": {"name": "list_buildings", "arguments": ""}}]}}]}),
            serde_json::json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": "ery\": \"co2\"}"}}]}}]}),
            serde_json::json!({"choices": [{"delta": {}, "finish_reason": "tool_calls"}]}),
            serde_json::json!({"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 3, "cost": 0.001}}),
        ];
        for piece in pieces {
            assembly.push(chunk(piece), &sink).unwrap();
        }
        let turn = assembly.finish().unwrap();
        assert_eq!(turn.finish, FinishReason::ToolCalls);
        assert_eq!(turn.message.tool_calls.len(), 2);
        assert_eq!(turn.message.tool_calls[0].arguments, "{\"query\": \"co2\"}");
        assert_eq!(turn.message.tool_calls[1].name, "list_buildings");
        assert_eq!(turn.message.content.as_deref(), Some("Let me check"));
        assert_eq!(turn.usage.total_tokens, 10);
        assert_eq!(turn.provider_cost, Some(0.001));
        assert_eq!(*seen.lock().unwrap(), vec!["Let me check".to_string()]);
    }

    #[test]
    fn pieces_without_an_index_follow_their_ids() {
        let mut assembly = StreamAssembly::default();
        let pieces = [
            serde_json::json!({"choices": [{"delta": {"tool_calls": [{"id": "a", "function": {"name": "x", "arguments": "{"}}]}}]}),
            serde_json::json!({"choices": [{"delta": {"tool_calls": [{"function": {"arguments": "}"}}]}}]}),
            serde_json::json!({"choices": [{"delta": {"tool_calls": [{"id": "b", "function": {"name": "y", "arguments": "{}"}}]}, "finish_reason": "tool_calls"}]}),
        ];
        for piece in pieces {
            assembly.push(chunk(piece), &|_| {}).unwrap();
        }
        let turn = assembly.finish().unwrap();
        let calls: Vec<(&str, &str)> = turn
            .message
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(calls, vec![("a", "{}"), ("b", "{}")]);
    }

    #[test]
    fn a_stream_without_a_finish_reason_is_truncated() {
        let mut assembly = StreamAssembly::default();
        let text = serde_json::json!({"choices": [{"delta": {"content": "The answer is"}}]});
        assembly.push(chunk(text), &|_| {}).unwrap();
        assert_eq!(assembly.finish().unwrap_err(), LlmError::Truncated);
    }

    #[test]
    fn malformed_responses_are_typed_errors() {
        let parse = |json: serde_json::Value| {
            serde_json::from_value::<WireResponse>(json)
                .unwrap()
                .into_turn()
        };
        assert_eq!(
            parse(serde_json::json!({"choices": []})),
            Err(LlmError::EmptyChoices)
        );
        assert!(matches!(
            parse(serde_json::json!({"choices": [{"message": {"content": "x"}, "finish_reason": "sleepy"}]})),
            Err(LlmError::UnknownFinishReason(r)) if r == "sleepy"
        ));
        assert!(matches!(
            parse(serde_json::json!({"choices": [{"message": {"tool_calls": [{"function": {"name": "x"}}]}}]})),
            Err(LlmError::Malformed(m)) if m.contains("no id")
        ));
        assert!(matches!(
            parse(serde_json::json!({"error": {"message": "quota"}})),
            Err(LlmError::Malformed(m)) if m.contains("quota")
        ));
        let ok = parse(serde_json::json!({
            "model": "m",
            "choices": [{"message": {"content": null, "tool_calls": [{"id": "c", "function": {"name": "x", "arguments": {"a": 1}}}]}}],
        }))
        .unwrap();
        assert_eq!(ok.finish, FinishReason::ToolCalls);
        assert_eq!(ok.message.tool_calls[0].arguments, "{\"a\":1}");
        assert_eq!(ok.usage, Usage::default());
        assert_eq!(ok.provider_cost, None);
    }

    #[test]
    fn an_empty_stream_is_an_error() {
        assert_eq!(
            StreamAssembly::default().finish().err(),
            Some(LlmError::EmptyChoices)
        );
    }
}
