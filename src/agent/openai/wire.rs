//! The wire shapes of chat completions, this adapter's own serde types: requests written from
//! the port's, responses read into a turn. Every response field is optional here and what is
//! required is checked in code, so a missing field is a clear error, not a serde message.

use crate::agent::llm::{
    ChatRequest, ChatTurn, FinishReason, LlmError, Message, ResponseSchema, Role, ToolCall,
    ToolChoice,
};
use crate::contract::Usage;
use serde::{Deserialize, Serialize};

#[derive(Serialize)]
pub(super) struct WireRequest<'a> {
    pub(super) model: &'a str,
    pub(super) messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) tools: Vec<WireTool<'a>>,
    pub(super) temperature: f32,
    pub(super) max_tokens: u32,
    pub(super) stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) stream_options: Option<StreamOptions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) response_format: Option<WireResponseFormat<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) tool_choice: Option<&'static str>,
}

#[derive(Serialize)]
pub(super) struct WireResponseFormat<'a> {
    r#type: &'static str,
    pub(super) json_schema: WireJsonSchema<'a>,
}

#[derive(Serialize)]
pub(super) struct WireJsonSchema<'a> {
    pub(super) name: &'a str,
    pub(super) strict: bool,
    pub(super) schema: &'a serde_json::Value,
}

#[derive(Serialize)]
pub(super) struct StreamOptions {
    pub(super) include_usage: bool,
}

#[derive(Serialize)]
pub(super) struct WireMessage<'a> {
    pub(super) role: Role,
    pub(super) content: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) tool_calls: Vec<WireToolCall<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) tool_call_id: Option<&'a str>,
}

#[derive(Serialize)]
pub(super) struct WireToolCall<'a> {
    pub(super) id: &'a str,
    r#type: &'static str,
    pub(super) function: WireFunction<'a>,
}

#[derive(Serialize)]
pub(super) struct WireFunction<'a> {
    pub(super) name: &'a str,
    pub(super) arguments: &'a str,
}

#[derive(Serialize)]
pub(super) struct WireTool<'a> {
    r#type: &'static str,
    /// The tool's `{"name", "description", "parameters"}`, rendered when it was registered.
    pub(super) function: &'a serde_json::value::RawValue,
}

impl<'a> WireRequest<'a> {
    pub(super) fn new(request: &ChatRequest<'a>, stream: bool) -> WireRequest<'a> {
        WireRequest {
            model: request.model,
            messages: request.messages.iter().map(WireMessage::from).collect(),
            tools: request
                .tools
                .iter()
                .map(|tool| WireTool {
                    r#type: "function",
                    function: &tool.definition_json,
                })
                .collect(),
            temperature: request.temperature,
            max_tokens: request.max_output_tokens,
            stream,
            stream_options: stream.then_some(StreamOptions {
                include_usage: true,
            }),
            tool_choice: tool_choice(request),
            response_format: request.response_schema.map(WireResponseFormat::of),
        }
    }
}

/// What `tool_choice` says, when it says anything.
pub(super) fn tool_choice(request: &ChatRequest<'_>) -> Option<&'static str> {
    match request.tool_choice {
        _ if request.tools.is_empty() => None,
        ToolChoice::Auto => None,
        ToolChoice::Required => Some("required"),
        ToolChoice::None => Some("none"),
    }
}

impl<'a> WireResponseFormat<'a> {
    pub(super) fn of(format: ResponseSchema<'a>) -> WireResponseFormat<'a> {
        WireResponseFormat {
            r#type: "json_schema",
            json_schema: WireJsonSchema {
                name: format.name,
                strict: true,
                schema: format.schema,
            },
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
pub(super) struct WireResponse {
    pub(super) model: Option<String>,
    #[serde(default)]
    pub(super) choices: Vec<WireChoice>,
    pub(super) usage: Option<WireUsage>,
    pub(super) error: Option<serde_json::Value>,
}

#[derive(Deserialize)]
pub(super) struct WireChoice {
    pub(super) message: Option<WireReply>,
    pub(super) finish_reason: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct WireReply {
    pub(super) content: Option<String>,
    pub(super) tool_calls: Option<Vec<WireReplyCall>>,
}

#[derive(Deserialize)]
pub(super) struct WireReplyCall {
    pub(super) id: Option<String>,
    pub(super) function: Option<WireReplyFunction>,
}

#[derive(Deserialize)]
pub(super) struct WireReplyFunction {
    pub(super) name: Option<String>,
    /// Text by the specification; some servers send an object.
    pub(super) arguments: Option<serde_json::Value>,
}

#[derive(Deserialize, Default, Clone, Copy)]
pub(super) struct WireUsage {
    #[serde(default)]
    pub(super) prompt_tokens: u64,
    #[serde(default)]
    pub(super) completion_tokens: u64,
    #[serde(default)]
    pub(super) total_tokens: u64,
    /// OpenRouter's own cost report, in US dollars.
    pub(super) cost: Option<f64>,
    #[serde(default)]
    pub(super) prompt_tokens_details: Option<WirePromptDetails>,
}

#[derive(Deserialize, Default, Clone, Copy)]
pub(super) struct WirePromptDetails {
    #[serde(default)]
    pub(super) cached_tokens: u64,
}

impl WireUsage {
    pub(super) fn usage(self) -> Usage {
        Usage {
            prompt_tokens: self.prompt_tokens,
            completion_tokens: self.completion_tokens,
            total_tokens: if self.total_tokens > 0 {
                self.total_tokens
            } else {
                self.prompt_tokens + self.completion_tokens
            },
            cached_prompt_tokens: self.prompt_tokens_details.map_or(0, |d| d.cached_tokens),
            model_calls: 0,
        }
    }

    pub(super) fn cost(self) -> Option<f64> {
        self.cost.filter(|c| c.is_finite() && *c >= 0.0)
    }
}

impl WireResponse {
    pub(super) fn into_turn(self) -> Result<ChatTurn, LlmError> {
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

pub(super) fn arguments_text(arguments: Option<serde_json::Value>) -> String {
    match arguments {
        None | Some(serde_json::Value::Null) => String::new(),
        Some(serde_json::Value::String(text)) => text,
        Some(other) => other.to_string(),
    }
}

pub(super) fn checked_call(
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

pub(super) fn assistant_message(content: Option<String>, calls: Vec<ToolCall>) -> Message {
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
pub(super) fn finish_reason(
    reason: Option<&str>,
    has_calls: bool,
) -> Result<FinishReason, LlmError> {
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

pub(super) fn provider_error(error: &serde_json::Value) -> LlmError {
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
