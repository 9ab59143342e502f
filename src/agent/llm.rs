//! PORT `ChatModel`: the project's own message, tool-call and turn types, and the trait an
//! OpenAI-compatible adapter implements. No SDK type crosses this boundary.

use super::tools::registry::ToolSchema;
use crate::contract::Usage;
use async_trait::async_trait;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

/// A tool call the model asked for; `arguments` is the JSON text exactly as the model sent it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Message {
    pub role: Role,
    pub content: Option<String>,
    pub tool_calls: Vec<ToolCall>,
    /// For `Role::Tool`: the call this message answers.
    pub tool_call_id: Option<String>,
}

impl Message {
    fn new(role: Role, content: Option<String>) -> Message {
        Message {
            role,
            content,
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    pub fn system(text: impl Into<String>) -> Message {
        Message::new(Role::System, Some(text.into()))
    }

    pub fn user(text: impl Into<String>) -> Message {
        Message::new(Role::User, Some(text.into()))
    }

    pub fn assistant(text: impl Into<String>) -> Message {
        Message::new(Role::Assistant, Some(text.into()))
    }

    pub fn assistant_calls(calls: Vec<ToolCall>) -> Message {
        Message {
            tool_calls: calls,
            ..Message::new(Role::Assistant, None)
        }
    }

    pub fn tool_result(call_id: impl Into<String>, content: impl Into<String>) -> Message {
        Message {
            tool_call_id: Some(call_id.into()),
            ..Message::new(Role::Tool, Some(content.into()))
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    Stop,
    ToolCalls,
    Length,
    ContentFilter,
}

/// One model response: the assistant message and what it cost.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatTurn {
    pub message: Message,
    pub finish: FinishReason,
    pub usage: Usage,
    /// The provider's own cost report (OpenRouter's `usage.cost`), when it sends one.
    pub provider_cost: Option<f64>,
    pub model: String,
}

pub struct ChatRequest<'a> {
    pub model: &'a str,
    pub messages: &'a [Message],
    pub tools: &'a [ToolSchema],
    pub temperature: f32,
    pub max_output_tokens: u32,
    /// Constrains the reply to JSON matching a schema (`response_format: json_schema`).
    pub response_schema: Option<ResponseSchema<'a>>,
    /// Whether the model must call one of `tools` (`tool_choice: required`).
    pub tool_choice: ToolChoice,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ToolChoice {
    /// The model decides (the provider's default; nothing is sent).
    #[default]
    Auto,
    /// The model must call one of the tools offered.
    Required,
    /// The model may not call a tool (the tools are sent only to keep the prompt's prefix).
    None,
}

/// A JSON schema the reply must follow, named as the provider asks.
#[derive(Debug, Clone, Copy)]
pub struct ResponseSchema<'a> {
    pub name: &'a str,
    pub schema: &'a serde_json::Value,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    /// `detail`: the provider's error code and message, bounded and control-free (or why the
    /// call was not retried); empty when the body said nothing usable.
    #[error("the provider answered HTTP {status}{}", if detail.is_empty() { String::new() } else { format!(" ({detail})") })]
    Status { status: u16, detail: String },
    #[error("the provider's stream ended before the answer was complete")]
    Truncated,
    #[error("the provider did not answer within the deadline")]
    Timeout,
    #[error("the provider could not be reached: {0}")]
    Transport(String),
    #[error("the provider's response is malformed: {0}")]
    Malformed(String),
    #[error("the provider returned no choices")]
    EmptyChoices,
    #[error("the provider returned an unknown finish reason {0:?}")]
    UnknownFinishReason(String),
    #[error("the provider is not configured: {0}")]
    Config(String),
}

impl LlmError {
    pub fn is_timeout(&self) -> bool {
        matches!(self, LlmError::Timeout)
    }

    /// The provider was down, overloaded or slow, rather than wrong: worth retrying later.
    pub fn is_outage(&self) -> bool {
        match self {
            LlmError::Timeout | LlmError::Transport(_) | LlmError::Truncated => true,
            LlmError::Status { status, .. } => *status == 429 || *status >= 500,
            _ => false,
        }
    }

    /// A short name of the failure for spans and metrics (never the detail: it may carry data).
    pub fn kind(&self) -> &'static str {
        match self {
            LlmError::Status { .. } => "status",
            LlmError::Truncated => "truncated",
            LlmError::Timeout => "timeout",
            LlmError::Transport(_) => "transport",
            LlmError::Malformed(_) => "malformed",
            LlmError::EmptyChoices => "empty_choices",
            LlmError::UnknownFinishReason(_) => "unknown_finish_reason",
            LlmError::Config(_) => "config",
        }
    }
}

/// Receives the answer's text as the model produces it, one delta at a time.
pub type TokenSink<'a> = dyn Fn(&str) + Send + Sync + 'a;

#[async_trait]
pub trait ChatModel: Send + Sync {
    /// One model turn. With `tokens`, the response is streamed and every text delta is passed
    /// on as it arrives; the returned turn is the same either way.
    async fn chat(
        &self,
        request: ChatRequest<'_>,
        tokens: Option<&TokenSink<'_>>,
    ) -> Result<ChatTurn, LlmError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors_set_roles_and_links() {
        let result = Message::tool_result("call_1", "{}");
        assert_eq!(result.role, Role::Tool);
        assert_eq!(result.tool_call_id.as_deref(), Some("call_1"));
        let calls = Message::assistant_calls(vec![ToolCall {
            id: "call_1".into(),
            name: "search_docs".into(),
            arguments: "{\"query\":\"co2\"}".into(),
        }]);
        assert_eq!(calls.role, Role::Assistant);
        assert!(calls.content.is_none());
        assert_eq!(serde_json::to_value(Role::Assistant).unwrap(), "assistant");
    }
}
