//! ADAPTER for [`ChatModel`]: any OpenAI-compatible chat-completions endpoint (OpenRouter, a
//! local server, a gateway): streamed calls through `async-openai` with a custom base URL,
//! one-response calls posted directly ([`direct`]) with the URL and headers built once.
//!
//! The wire shapes are this module's own serde types (async-openai's "bring your own types"
//! calls), so that provider extras such as OpenRouter's `usage.cost` are read, and anything
//! malformed becomes an [`LlmError`] instead of a panic. Retries live in [`RetryingHttp`], a
//! tower service under async-openai that sees every response's status and headers: 429, 5xx and
//! refused connections are retried with jittered backoff or after `Retry-After`, never past the
//! call's deadline. The deadline (`LLM_TIMEOUT_SECONDS`) bounds the whole call, streaming
//! included.

use super::llm::{ChatModel, ChatRequest, ChatTurn, LlmError, TokenSink};
use crate::config::LlmConfig;
use crate::http::backoff;
use async_openai::config::OpenAIConfig;
use async_openai::error::OpenAIError;
use async_openai::middleware::ReqwestService;
use async_openai::Client;
use async_trait::async_trait;
use futures::StreamExt;
use std::time::Duration;

mod body;
mod direct;
mod retry;
mod stream;
mod wire;

use direct::Endpoint;

use retry::{from_openai, RetryingHttp};
use stream::{StreamAssembly, WireChunk};
use wire::{WireRequest, WireResponse};

const BACKOFF_BASE: Duration = Duration::from_millis(200);
/// OpenRouter's attribution (`X-Title`); other providers ignore it.
const TITLE: &str = "crowdvision-agent";

pub struct OpenAiChat {
    client: Client<OpenAIConfig>,
    /// What a one-response call posts through; the same service async-openai streams through.
    http: RetryingHttp,
    endpoint: Result<std::sync::Arc<Endpoint>, String>,
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
        if let Ok(with_title) = provider.clone().with_header("X-Title", TITLE) {
            provider = with_title;
        }
        let http = crate::http::client_builder()
            .build()
            .expect("a reqwest client with default settings always builds");
        let http = RetryingHttp {
            inner: ReqwestService::new(http),
            max_retries: config.max_retries,
            deadline: config.timeout,
            base_url: config.base_url.as_str().into(),
        };
        let client = Client::with_config(provider).with_http_service(http.clone());
        let endpoint = Endpoint::new(
            &config.base_url,
            config.api_key.as_deref().unwrap_or_default(),
        );
        OpenAiChat {
            client,
            http,
            endpoint: endpoint.map(std::sync::Arc::new),
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

    async fn complete(&self, request: &ChatRequest<'_>) -> Result<ChatTurn, LlmError> {
        let endpoint = self
            .endpoint
            .as_ref()
            .map_err(|e| LlmError::Transport(e.clone()))?;
        let body = body::one_response(request).map_err(|error| {
            LlmError::Malformed(format!("the request did not serialize: {error}"))
        })?;
        let response: WireResponse = direct::complete(&self.http, endpoint, body)
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
                None => self.complete(&request).await,
            }
        };
        tokio::time::timeout(self.deadline, call)
            .await
            .unwrap_or(Err(LlmError::Timeout))
    }
}

#[cfg(test)]
mod tests {
    use super::stream::*;
    use super::wire::*;
    use super::*;
    use crate::agent::llm::FinishReason;
    use crate::contract::Usage;
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
    fn tools_go_out_in_the_order_and_escaping_they_always_had() {
        use crate::agent::llm::{ChatRequest, Message, ToolChoice};
        let tool = crate::agent::tools::registry::ToolSchema::new(
            "find_room",
            "Finds a \"room\" by name.\nOne line more.",
            serde_json::json!({"type": "object", "properties": {"name": {"type": "string"}}}),
        );
        let messages = [Message::user("hi")];
        let request = ChatRequest {
            model: "m",
            messages: &messages,
            tools: std::slice::from_ref(&tool),
            temperature: 0.0,
            max_output_tokens: 5,
            response_schema: None,
            tool_choice: ToolChoice::Required,
        };
        let body = serde_json::to_string(&WireRequest::new(&request, false)).unwrap();
        let tools = r#""tools":[{"type":"function","function":{"name":"find_room","description":"Finds a \"room\" by name.\nOne line more.","parameters":{"type":"object","properties":{"name":{"type":"string"}}}}}]"#;
        assert!(body.contains(tools), "{body}");
    }

    #[test]
    fn an_empty_stream_is_an_error() {
        assert_eq!(
            StreamAssembly::default().finish().err(),
            Some(LlmError::EmptyChoices)
        );
    }
}
