//! The runner: `Agent::answer` drives the bounded tool-calling loop of [`super::run`] with a
//! [`ChatModel`] and a [`ToolRegistry`], and assembles the response object.
//!
//! system prompt + prior turns + question → model (with the tool schemas) → tool calls run
//! concurrently, results appended in the order requested → model again … until a final answer
//! or `MAX_TOOL_HOPS`. Then citations are checked against the passages `search_docs` returned
//! during this answer, and usage and cost are summed over every model call.

use super::decision::{Decision, IDK_MARKER, REFUSAL_PREFIX};
use super::llm::{ChatModel, ChatRequest, LlmError, Message, TokenSink, ToolCall};
use super::model_choice::{ModelChoice, ModelChoiceError};
use super::response::{AskResponse, RetrievalReport, TraceEntry};
use super::run::{LoopState, Step};
use super::tools::registry::{ToolOutcome, ToolRegistry, ToolSchema};
use super::tools::ToolContext;
use super::usage::{Cost, PriceTable, Usage};
use crate::auth::authz::Authorizer;
use crate::auth::identity::Caller;
use crate::citations::{self, ChunkOrigin};
use crate::config::Config;
use crate::retrieval::search::MAX_TOP_K;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::mpsc::UnboundedSender;

/// The name of the documentation tool, whose results are what citations may point at.
const SEARCH_DOCS: &str = "search_docs";

/// Prior turns kept from a conversation; older ones are dropped first.
pub const MAX_HISTORY_MESSAGES: usize = 40;

/// The system prompt, with the library's marker and refusal wording filled in.
pub fn system_prompt() -> String {
    include_str!("../../prompts/system.md")
        .replace("{IDK_MARKER}", IDK_MARKER)
        .replace("{REFUSAL_PREFIX}", REFUSAL_PREFIX)
}

/// A question and what the request asks of it.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Question {
    pub text: String,
    /// Earlier turns of the conversation, oldest first.
    pub history: Vec<HistoryMessage>,
    /// A model other than `ANSWER_MODEL`, subject to [`ModelChoice`].
    pub model: Option<String>,
    /// Passages `search_docs` returns, held within 1..=[`MAX_TOP_K`].
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum AgentEvent {
    Token {
        text: String,
    },
    ToolCall {
        tool: String,
        arguments: serde_json::Value,
    },
    ToolResult {
        tool: String,
        ok: bool,
        ms: u64,
        summary: String,
    },
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AgentError {
    #[error("the question is longer than {limit} characters")]
    QuestionTooLong { limit: usize },
    #[error(transparent)]
    ModelChoice(#[from] ModelChoiceError),
    #[error(transparent)]
    Llm(#[from] LlmError),
}

#[derive(Debug, Clone)]
pub struct AgentSettings {
    pub temperature: f32,
    pub max_output_tokens: u32,
    pub max_tool_hops: u32,
    pub max_tool_calls_per_turn: usize,
    pub max_question_chars: usize,
    pub link_allowed_hosts: Vec<String>,
}

pub struct Agent {
    model: Arc<dyn ChatModel>,
    tools: Arc<ToolRegistry>,
    /// Generated once: every request sends the same schemas.
    schemas: Vec<ToolSchema>,
    settings: AgentSettings,
    model_choice: ModelChoice,
    authz: Arc<Authorizer>,
    prices: PriceTable,
    system_prompt: String,
}

impl Agent {
    pub fn new(
        model: Arc<dyn ChatModel>,
        tools: Arc<ToolRegistry>,
        settings: AgentSettings,
        model_choice: ModelChoice,
        authz: Arc<Authorizer>,
        prices: PriceTable,
    ) -> Agent {
        Agent {
            schemas: tools.schemas(),
            model,
            tools,
            settings,
            model_choice,
            authz,
            prices,
            system_prompt: system_prompt(),
        }
    }

    /// An agent with every setting from `config`.
    pub fn from_config(
        config: &Config,
        model: Arc<dyn ChatModel>,
        tools: Arc<ToolRegistry>,
        authz: Arc<Authorizer>,
    ) -> Agent {
        let prices = PriceTable::with_overrides(&config.llm.prices);
        Agent::new(
            model,
            tools,
            AgentSettings {
                temperature: config.llm.temperature,
                max_output_tokens: config.llm.max_output_tokens,
                max_tool_hops: config.llm.max_tool_hops,
                max_tool_calls_per_turn: config.llm.max_tool_calls_per_turn,
                max_question_chars: config.llm.max_question_chars,
                link_allowed_hosts: config.llm.link_allowed_hosts.clone(),
            },
            ModelChoice {
                default_model: config.llm.answer_model.clone(),
                min_role: config.access.model_override_min_role.clone(),
                allowed: config.access.allowed_models.clone(),
            },
            authz,
            prices,
        )
    }

    pub fn default_model(&self) -> &str {
        &self.model_choice.default_model
    }

    /// Answers `question` for `caller`. With `events`, text deltas (the model's output
    /// streamed) and tool activity are sent as they happen.
    pub async fn answer(
        &self,
        question: &Question,
        caller: &Caller,
        events: Option<&UnboundedSender<AgentEvent>>,
    ) -> Result<AskResponse, AgentError> {
        if question.text.chars().count() > self.settings.max_question_chars {
            return Err(AgentError::QuestionTooLong {
                limit: self.settings.max_question_chars,
            });
        }
        let user = &caller.user;
        let model = self
            .model_choice
            .resolve(question.model.as_deref(), user, &self.authz)?;
        let context = ToolContext {
            top_k: question.top_k.map(|k| k.clamp(1, MAX_TOP_K)),
            ..ToolContext::for_caller(caller)
        };
        let streamed = events.map(StreamedTokens::new);
        let token_sink = streamed.as_ref().map(|s| move |text: &str| s.push(text));
        let tokens: Option<&TokenSink<'_>> = token_sink.as_ref().map(|s| s as &TokenSink<'_>);

        let mut messages = self.opening_messages(question);
        let mut state = LoopState::new(self.settings.max_tool_hops);
        let mut progress = Progress::default();
        loop {
            let turn = self
                .model
                .chat(
                    ChatRequest {
                        model: &model,
                        messages: &messages,
                        tools: &self.schemas,
                        temperature: self.settings.temperature,
                        max_output_tokens: self.settings.max_output_tokens,
                        response_schema: None,
                    },
                    tokens,
                )
                .await?;
            if let Some(streamed) = &streamed {
                streamed.end_of_turn();
            }
            progress.usage += turn.usage;
            progress.cost.add_provider(turn.provider_cost);
            if !turn.model.is_empty() {
                progress.served_model = Some(turn.model.clone());
            }
            match state.next(&turn) {
                Step::CallTools(calls) => {
                    let outcomes = self.run_tools(&calls, context, events).await;
                    messages.push(turn.message);
                    for (call, outcome) in calls.iter().zip(outcomes) {
                        messages.push(Message::tool_result(&call.id, outcome.content.to_string()));
                        progress.record(call, outcome);
                    }
                    if let Some(streamed) = &streamed {
                        streamed.allow(progress.returned_chunks.keys());
                    }
                }
                Step::Done { answer, decision } => {
                    return Ok(self.response(answer, decision, &model, progress));
                }
            }
        }
    }

    fn opening_messages(&self, question: &Question) -> Vec<Message> {
        let skip = question.history.len().saturating_sub(MAX_HISTORY_MESSAGES);
        let mut messages = Vec::with_capacity(question.history.len() - skip + 2);
        messages.push(Message::system(self.system_prompt.as_str()));
        for earlier in &question.history[skip..] {
            messages.push(match earlier.role {
                HistoryRole::User => Message::user(earlier.content.as_str()),
                HistoryRole::Assistant => Message::assistant(earlier.content.as_str()),
            });
        }
        messages.push(Message::user(crate::text::strip_invisible(&question.text)));
        messages
    }

    /// Runs one turn's calls concurrently; the outcomes come back in the order requested.
    async fn run_tools(
        &self,
        calls: &[ToolCall],
        context: ToolContext<'_>,
        events: Option<&UnboundedSender<AgentEvent>>,
    ) -> Vec<ToolOutcome> {
        if let Some(sender) = events {
            for call in calls {
                let _ = sender.send(AgentEvent::ToolCall {
                    tool: call.name.clone(),
                    arguments: arguments_value(&call.arguments),
                });
            }
        }
        let width = self.settings.max_tool_calls_per_turn;
        let outcomes = futures::future::join_all(calls.iter().enumerate().map(|(i, call)| async move {
            if i < width {
                self.tools.call_text(&call.name, &call.arguments, context).await
            } else {
                ToolOutcome::refused(
                    &call.name,
                    format!("not run: at most {width} tool calls run per turn; ask again for the rest"),
                )
            }
        }))
        .await;
        if let Some(sender) = events {
            for outcome in &outcomes {
                let _ = sender.send(AgentEvent::ToolResult {
                    tool: outcome.tool.clone(),
                    ok: outcome.ok,
                    ms: outcome.ms,
                    summary: outcome.summary.clone(),
                });
            }
        }
        outcomes
    }

    fn response(
        &self,
        answer: String,
        decision: Decision,
        model: &str,
        progress: Progress,
    ) -> AskResponse {
        let answer = super::links::neutralise(&answer, &self.settings.link_allowed_hosts);
        let checked = citations::check(&answer, &progress.returned_chunks);
        let model = progress.served_model.unwrap_or_else(|| model.to_string());
        let mut cost = progress.cost;
        cost.estimated_usd = self.prices.estimate_served(&model, &progress.usage);
        AskResponse {
            answer: checked.answer,
            citations: checked.citations,
            trace: progress.trace,
            usage: progress.usage,
            cost,
            idk: matches!(decision, Decision::Idk | Decision::ToolLoopExhausted),
            decision,
            model,
            retrieval: RetrievalReport {
                hallucinated_citations: checked.hallucinated,
            },
        }
    }
}

/// The answer's text as it streams, through a [`citations::StreamFilter`] that knows the
/// chunks returned so far: no invented marker is ever sent, not even in part.
struct StreamedTokens<'a> {
    sender: &'a UnboundedSender<AgentEvent>,
    state: std::sync::Mutex<(citations::StreamFilter, std::collections::HashSet<String>)>,
}

impl<'a> StreamedTokens<'a> {
    fn new(sender: &'a UnboundedSender<AgentEvent>) -> StreamedTokens<'a> {
        StreamedTokens {
            sender,
            state: std::sync::Mutex::default(),
        }
    }

    fn push(&self, delta: &str) {
        let shown = {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            let (filter, known) = &mut *state;
            filter.push(delta, |id| known.contains(id))
        };
        self.send(shown);
    }

    /// A model turn ended: what is held back was not a marker.
    fn end_of_turn(&self) {
        let rest = self
            .state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .0
            .finish();
        self.send(rest);
    }

    /// Chunks a marker may now name.
    fn allow<'i>(&self, ids: impl Iterator<Item = &'i String>) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.1.extend(ids.cloned());
    }

    fn send(&self, text: String) {
        if !text.is_empty() {
            // A receiver that has gone away (a client that hung up) only loses the deltas.
            let _ = self.sender.send(AgentEvent::Token { text });
        }
    }
}

/// The arguments for the trace and the events: the JSON the model sent, or its text when it
/// is not JSON.
fn arguments_value(arguments: &str) -> serde_json::Value {
    serde_json::from_str(arguments)
        .unwrap_or_else(|_| serde_json::Value::String(arguments.to_string()))
}

/// What the loop has gathered so far.
#[derive(Default)]
struct Progress {
    usage: Usage,
    cost: Cost,
    trace: Vec<TraceEntry>,
    /// Every passage `search_docs` returned during this answer: what a citation may point at.
    returned_chunks: HashMap<String, ChunkOrigin>,
    /// The model the provider says answered (the last one that said).
    served_model: Option<String>,
}

impl Progress {
    fn record(&mut self, call: &ToolCall, outcome: ToolOutcome) {
        if outcome.ok && outcome.tool == SEARCH_DOCS {
            self.returned_chunks
                .extend(returned_passages(&outcome.content));
        }
        self.trace.push(TraceEntry {
            tool: outcome.tool,
            arguments: arguments_value(&call.arguments),
            ok: outcome.ok,
            ms: outcome.ms,
            summary: outcome.summary,
        });
    }
}

fn returned_passages(content: &serde_json::Value) -> Vec<(String, ChunkOrigin)> {
    let Some(results) = content.get("results").and_then(|r| r.as_array()) else {
        return Vec::new();
    };
    results
        .iter()
        .filter_map(|passage| {
            let text = |field: &str| {
                passage
                    .get(field)
                    .and_then(|v| v.as_str())
                    .map(str::to_string)
            };
            Some((
                text("chunk_id")?,
                ChunkOrigin {
                    source: text("source").unwrap_or_default(),
                    section: text("section").unwrap_or_default(),
                },
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_system_prompt_names_the_marker_and_the_refusal() {
        let prompt = system_prompt();
        assert!(prompt.contains(IDK_MARKER));
        assert!(prompt.contains(REFUSAL_PREFIX));
        assert!(!prompt.contains("{IDK_MARKER}") && !prompt.contains("{REFUSAL_PREFIX}"));
        assert!(prompt.contains("[^chunk_id]"));
    }

    #[test]
    fn passages_are_read_from_search_results() {
        let content = serde_json::json!({"results": [
            {"chunk_id": "c1", "source": "user/a.md", "section": "A > B", "text": "…"},
            {"source": "no id"},
        ]});
        let passages = returned_passages(&content);
        assert_eq!(passages.len(), 1);
        assert_eq!(passages[0].0, "c1");
        assert_eq!(passages[0].1.section, "A > B");
        assert!(returned_passages(&serde_json::json!({"error": {}})).is_empty());
    }
}
