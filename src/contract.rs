//! What crosses the library's boundary, in one place: the question and its history, the events
//! of a streamed answer, the response, the errors of an answer, and the JSON bodies of the HTTP
//! API. The server, the client, the answer log and the CLI all speak these types. Plain data.

use crate::citations::Citation;
use serde::{Deserialize, Serialize};
use std::ops::AddAssign;

/// A question and what the request asks of it.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Question {
    pub text: String,
    /// Earlier turns of the conversation, oldest first.
    pub history: Vec<HistoryMessage>,
    /// A model other than `ANSWER_MODEL`, subject to [`ModelChoice`].
    pub model: Option<String>,
    /// Passages `search_docs` returns, held within 1..=[`MAX_TOP_K`](crate::retrieval::search::MAX_TOP_K).
    pub top_k: Option<usize>,
}

impl Question {
    pub fn new(text: impl Into<String>) -> Question {
        Question {
            text: text.into(),
            ..Question::default()
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct HistoryMessage {
    pub role: HistoryRole,
    pub content: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum HistoryRole {
    User,
    Assistant,
}

/// What happens during an answer, as it happens (for `--stream` and server-sent events).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum AgentEvent {
    Token {
        text: String,
    },
    ToolCall {
        tool: String,
        #[schema(value_type = Object)]
        arguments: serde_json::Value,
    },
    ToolResult {
        tool: String,
        ok: bool,
        ms: u64,
        summary: String,
        /// What a page may draw from the result (a sensor's history, occupancy against
        /// capacity); absent for other tools.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        chart: Option<Chart>,
    },
    /// The text streamed since the last `retract` (or the start) is withdrawn: a client drops
    /// it; the text that follows replaces it. Sent when the library discards a first attempt
    /// (a re-ask) or when its checks end the answer with other text.
    Retract,
}

/// A tool result as a page draws it. Built from the caller's own result by
/// [`crate::agent::chart::from_result`]: nothing in it was not in that result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Chart {
    /// A sensor's readings over a window: one point per reading returned, or per time bucket
    /// (its mean, with its minimum and maximum) when the readings were summarised.
    Series {
        title: String,
        unit: Option<String>,
        from: String,
        to: String,
        points: Vec<SeriesPoint>,
    },
    /// People against capacity, one bar per room.
    Occupancy { title: String, rooms: Vec<RoomLoad> },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SeriesPoint {
    /// RFC 3339, to the second.
    pub at: String,
    pub value: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RoomLoad {
    pub room: String,
    pub count: u64,
    pub capacity: Option<u64>,
}

/// What a caller is told when the provider failed an answer (the details are only logged).
pub const PROVIDER_FAILED: &str = "the language model provider failed; try again later";
/// The message of an answer whose provider was unreachable, overloaded or failing (503).
pub const PROVIDER_UNAVAILABLE: &str =
    "the language model provider is unavailable; try again shortly";
/// The message of an answer whose provider did not answer in time (504).
pub const PROVIDER_TIMED_OUT: &str =
    "the language model provider did not answer in time; try again shortly";

/// Whether `text` shows nothing: only whitespace, control and invisible format characters.
pub fn is_blank(text: &str) -> bool {
    text.chars()
        .all(|c| c.is_whitespace() || c.is_control() || crate::text::is_invisible(c))
}

/// The body of `POST /ask`.
#[derive(Debug, Deserialize, serde::Serialize, utoipa::ToSchema)]
pub struct AskRequest {
    /// The question; blank is refused (422), and so is one longer than the server's
    /// `MAX_QUESTION_CHARS` (4000 by default).
    #[schema(min_length = 1, max_length = 4000)]
    pub question: String,
    /// Answer as server-sent events instead of one JSON object.
    #[serde(default)]
    pub stream: bool,
    /// The answer model, for callers whose role may choose it (`MODEL_OVERRIDE_MIN_ROLE`).
    #[serde(default)]
    pub model: Option<String>,
    /// Passages `search_docs` returns.
    #[serde(default)]
    #[schema(minimum = 1, maximum = 50)]
    pub top_k: Option<usize>,
    /// Earlier turns of the conversation, oldest first.
    #[serde(default)]
    pub history: Vec<HistoryMessage>,
    /// A conversation of the caller's kept by the server (`POST /conversations`): its stored
    /// turns are the history (in place of `history`), and this turn is added once answered.
    /// Unknown, expired or another caller's: 404.
    #[serde(default)]
    pub conversation_id: Option<String>,
}

/// `{"error": {"code", "message"}}`: the body of every error.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ErrorBody<'a> {
    pub error: ErrorDetail<'a>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ErrorDetail<'a> {
    /// Stable and machine-readable: `unauthenticated`, `question_too_long`, `overloaded`, …
    pub code: &'a str,
    pub message: &'a str,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct AskResponse {
    pub answer: String,
    pub citations: Vec<Citation>,
    pub trace: Vec<TraceEntry>,
    pub usage: Usage,
    pub cost: Cost,
    pub idk: bool,
    pub decision: Decision,
    pub model: String,
    pub retrieval: RetrievalReport,
    /// The id of the answer's trace (exported or, without an exporter, the one its log lines
    /// carry); kept with a conversation's turn, not sent.
    #[serde(skip)]
    pub trace_id: Option<String>,
}

/// One tool call of the answer: what ran, with which arguments, how it went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TraceEntry {
    pub tool: String,
    #[schema(value_type = Object)]
    pub arguments: serde_json::Value,
    pub ok: bool,
    pub ms: u64,
    pub summary: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RetrievalReport {
    /// The invented markers removed from the answer. Serialised as their number: no part of an
    /// invented marker ever reaches a client (`ask -v` prints the ids locally).
    #[serde(serialize_with = "count", deserialize_with = "placeholders")]
    #[schema(value_type = u64)]
    pub hallucinated_citations: Vec<String>,
    /// The model's own markers whose passage does not support the sentence they end (no
    /// shared figure or key term): kept in the answer, flagged here for a reader to check.
    #[serde(default)]
    pub unsupported_citations: Vec<String>,
}

fn count<S: serde::Serializer>(ids: &[String], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_u64(ids.len() as u64)
}

/// Read back from a server, the count becomes that many unnamed entries.
fn placeholders<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<String>, D::Error> {
    let count = u64::deserialize(deserializer)?;
    Ok(vec![String::new(); count.min(10_000) as usize])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialises_with_the_contract_field_names() {
        let response = AskResponse {
            answer: "Room 2.14 reads 612 ppm.".into(),
            citations: vec![],
            trace: vec![TraceEntry {
                tool: "get_latest_sensor_data".into(),
                arguments: serde_json::json!({"building_id": "hq", "room_id": "2.14"}),
                ok: true,
                ms: 12,
                summary: "1 reading".into(),
            }],
            usage: Usage {
                prompt_tokens: 10,
                completion_tokens: 5,
                total_tokens: 15,
                ..Usage::default()
            },
            cost: Cost {
                estimated_usd: Some(0.0001),
                provider_usd: None,
            },
            idk: false,
            decision: Decision::Answered,
            model: "openai/gpt-4o-mini".into(),
            retrieval: RetrievalReport::default(),
            trace_id: None,
        };
        let json = serde_json::to_value(&response).unwrap();
        for field in [
            "answer",
            "citations",
            "trace",
            "usage",
            "cost",
            "idk",
            "decision",
            "model",
            "retrieval",
        ] {
            assert!(json.get(field).is_some(), "{field}");
        }
        assert_eq!(json["trace"][0]["summary"], "1 reading");
        assert_eq!(json["usage"]["total_tokens"], 15);
        assert_eq!(json["cost"]["provider_usd"], serde_json::Value::Null);
        assert_eq!(json["retrieval"]["hallucinated_citations"], 0);
        assert_eq!(json["decision"], "answered");
    }
}

/// How an answer ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Answered,
    Idk,
    Declined,
    ToolLoopExhausted,
    /// The next model call would have passed the request's token budget.
    BudgetExhausted,
}

impl Decision {
    /// The name on the wire (`answered`, `idk`, `declined`, `tool_loop_exhausted`,
    /// `budget_exhausted`).
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Answered => "answered",
            Decision::Idk => "idk",
            Decision::Declined => "declined",
            Decision::ToolLoopExhausted => "tool_loop_exhausted",
            Decision::BudgetExhausted => "budget_exhausted",
        }
    }
}

/// Tokens spent on one answer, summed over its model calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub total_tokens: u64,
    /// Prompt tokens the provider read from its prompt cache (`prompt_tokens_details.
    /// cached_tokens`, reported by OpenAI and llama.cpp); 0 when it reports none.
    #[serde(default)]
    pub cached_prompt_tokens: u64,
    /// Model calls these tokens were spent in.
    #[serde(default)]
    pub model_calls: u64,
}

impl AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.total_tokens += other.total_tokens;
        self.cached_prompt_tokens += other.cached_prompt_tokens;
        self.model_calls += other.model_calls;
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Cost {
    /// From the price table; `None` for a model it does not list.
    pub estimated_usd: Option<f64>,
    /// Summed from the provider's reports; `None` when no hop reported a cost.
    pub provider_usd: Option<f64>,
}

impl Cost {
    /// Adds one hop's provider-reported cost, if any.
    pub fn add_provider(&mut self, usd: Option<f64>) {
        if let Some(usd) = usd {
            *self.provider_usd.get_or_insert(0.0) += usd;
        }
    }
}
