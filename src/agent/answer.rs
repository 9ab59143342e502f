//! The runner: `Agent::answer` drives the bounded tool-calling loop of [`super::run`] with a
//! [`ChatModel`] and a [`ToolRegistry`], and assembles the response object.
//!
//! The question is routed first ([`super::routing`]): a greeting is answered by the library; a
//! live-data question's first model call offers only the live tools and requires one; any other
//! question is searched with `search_docs` *before* the first model call (as the caller, through
//! the registry like any tool call) and the passages go into the request, headed by their
//! markers. Then: model → tool calls run concurrently, results appended in the order requested
//! → model again … until a final answer or `MAX_TOOL_HOPS`. A refusal or "no answer" written
//! after live tools returned data is asked once more from those results. Citations are checked
//! against the passages returned during this answer; when the answer cites none, they are
//! attributed in code ([`super::grounding`]). Usage and cost are summed over every model call.

use super::decision::{describes_tools, Decision, IDK_MARKER, OUT_OF_SCOPE_CODE};
use super::llm::{
    ChatModel, ChatRequest, ChatTurn, FinishReason, LlmError, Message, ResponseSchema, TokenSink,
    ToolCall, ToolChoice,
};
use super::model_choice::{ModelChoice, ModelChoiceError};
use super::passages;
use super::places;
use super::response::{AskResponse, RetrievalReport, TraceEntry};
use super::routing::{asks_for_history, route, Route};
use super::run::{LoopState, Step};
use super::scope::{parse_topic, Topic, TOPIC_QUESTION};
use super::stream::StreamedTokens;
use super::tools::registry::{ToolOutcome, ToolRegistry, ToolSchema};
use super::tools::ToolContext;
use super::usage::{Cost, PriceTable, Usage};
use crate::auth::authz::Authorizer;
use crate::auth::identity::Caller;
use crate::citations::{self, ChunkOrigin};
use crate::config::Config;
use crate::observe::{self, metrics};
use crate::retrieval::search::MAX_TOP_K;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::{Arc, LazyLock};
use std::time::Instant;
use tokio::sync::mpsc::UnboundedSender;
use tracing::{Instrument, Span};

/// The name of the documentation tool, whose results are what citations may point at.
const SEARCH_DOCS: &str = "search_docs";

/// The live tools the runner calls itself to learn which places a question names.
const LIST_BUILDINGS: &str = "list_buildings";
const GET_BUILDING: &str = "get_building";
const GET_SENSOR_HISTORY: &str = "get_sensor_history";

/// Buildings whose rooms are looked up before the first model call, at most.
const MAX_BUILDINGS_LOOKED_UP: usize = 3;

/// What the lookup before a live question's first model call found.
enum PlacesLookup {
    /// The caller's buildings and the named rooms, as text for the request.
    Known(String),
    /// The question names an id that is none of the caller's buildings or rooms.
    Unknown,
}

/// A tool call the runner makes itself (not the model), traced like any other.
/// Arguments as compared for a repeated call: string values lowercased, their whitespace
/// collapsed and their end punctuation dropped.
fn comparable_arguments(arguments: &serde_json::Value) -> serde_json::Value {
    match arguments {
        serde_json::Value::String(text) => {
            let words: Vec<&str> = text.split_whitespace().collect();
            let joined = words.join(" ").to_lowercase();
            serde_json::Value::String(joined.trim_end_matches(['?', '.', '!']).to_string())
        }
        serde_json::Value::Object(fields) => serde_json::Value::Object(
            fields
                .iter()
                .map(|(key, value)| (key.clone(), comparable_arguments(value)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn code_call(id: &str, name: &str, arguments: serde_json::Value) -> ToolCall {
    ToolCall {
        id: id.to_string(),
        name: name.to_string(),
        arguments: arguments.to_string(),
    }
}

/// Prior turns kept from a conversation; older ones are dropped first.
pub const MAX_HISTORY_MESSAGES: usize = 40;

/// The system prompt. Without the topic check ([`super::scope`]) it also asks the model to
/// answer an off-topic request with a code the library turns into its refusal; with the check,
/// off-topic requests never reach the answer call, and a small model told about a refusal code
/// uses it for questions it should answer.
pub fn system_prompt(scope_check: bool) -> String {
    let mut prompt = include_str!("../../prompts/system.md").to_string();
    if !scope_check {
        prompt.push_str(
            &include_str!("../../prompts/out-of-scope.md")
                .replace("{OUT_OF_SCOPE_CODE}", OUT_OF_SCOPE_CODE),
        );
    }
    prompt
}

/// Asked once, without tools, when an answer describes which tool to call instead of answering.
const ANSWER_INSTEAD_OF_DESCRIBING: &str = "Do not explain which tool to call or how to look \
     the answer up: answer the question yourself, briefly, from the passages and tool results \
     above, with their numbers and names.";

/// The reply the re-ask after a tool-describing answer is held to: one text field. Small
/// models (qwen2.5-coder-0.5b) write a tool call and its result back as JSON text instead of
/// an answer, and do so again when asked in words; held to this schema they write the answer.
static ANSWER_FIELD_SCHEMA: LazyLock<serde_json::Value> = LazyLock::new(|| {
    serde_json::json!({
        "type": "object",
        "properties": { "answer": { "type": "string" } },
        "required": ["answer"],
        "additionalProperties": false
    })
});

/// The `answer` of a reply held to [`ANSWER_FIELD_SCHEMA`]; `None` when the reply is not that
/// JSON (a provider that ignored the schema), and then its text is read as it is.
fn read_answer_field(reply: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct Reply {
        answer: String,
    }
    let reply = reply.trim();
    match serde_json::from_str::<Reply>(reply) {
        Ok(whole) => Some(whole.answer),
        Err(_) => read_cut_answer_field(reply),
    }
}

/// The text of an `answer` field whose reply was cut off, mostly inside the string, as happens
/// when a small model repeats itself up to `MAX_OUTPUT_TOKENS`: the user gets what was written,
/// not the JSON around it. `None` when the reply does not open with that field.
fn read_cut_answer_field(reply: &str) -> Option<String> {
    let written = reply
        .strip_prefix('{')?
        .trim_start()
        .strip_prefix("\"answer\"")?
        .trim_start()
        .strip_prefix(':')?
        .trim_start()
        .strip_prefix('"')?;
    // The string may be whole, with the cut after it.
    let opened = format!("\"{written}");
    if let Some(Ok(whole)) = serde_json::Deserializer::from_str(&opened)
        .into_iter::<String>()
        .next()
    {
        return Some(whole);
    }
    // The cut may fall inside an escape (`\`, `\u00e`): drop up to its 5 characters.
    let ends = written
        .char_indices()
        .map(|(at, _)| at)
        .chain([written.len()]);
    ends.rev()
        .take(6)
        .find_map(|end| serde_json::from_str::<String>(&format!("\"{}\"", &written[..end])).ok())
}

/// Asked once when a model refuses or finds nothing although live tools returned data.
const REASK_FROM_RESULTS: &str = "The tool results above hold data for this question. Answer \
     the question from them, briefly, with their numbers and names.";

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
    },
    /// The text streamed since the last `retract` (or the start) is withdrawn: a client drops
    /// it; the text that follows replaces it. Sent when the library discards a first attempt
    /// (a re-ask) or when its checks end the answer with other text.
    Retract,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AgentError {
    #[error("the question is longer than {limit} characters")]
    QuestionTooLong { limit: usize },
    #[error("the question is empty (nothing visible in it)")]
    QuestionEmpty,
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
    /// `MAX_TOKENS_PER_REQUEST`: the loop stops (`budget_exhausted`) before a model call that
    /// would pass it; 0 for none.
    pub max_tokens_per_request: u64,
    /// A documentation answer that no passage supports is `idk`.
    pub require_grounded_answers: bool,
    /// A documentation question's topic is asked first; off-topic requests are declined.
    pub scope_check: bool,
    /// A documentation question is searched before the first model call and the passages are
    /// sent with it; without it the model decides whether to call `search_docs`.
    pub search_first: bool,
}

pub struct Agent {
    model: Arc<dyn ChatModel>,
    tools: Arc<ToolRegistry>,
    /// Generated once: every request sends the same schemas.
    schemas: Vec<ToolSchema>,
    /// The schemas without `search_docs`: the first hop of a live-data question.
    live_schemas: Vec<ToolSchema>,
    /// `search_docs` alone: the first hop of a documentation question, whose passages are in
    /// the request already (live tools need ids such a question does not name).
    docs_schemas: Vec<ToolSchema>,
    /// `get_sensor_history` alone: the first hop of a live question about a past window.
    history_schemas: Vec<ToolSchema>,
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
        let prompt = system_prompt(settings.scope_check);
        let schemas = tools.schemas();
        let (docs_schemas, live_schemas) = schemas
            .iter()
            .cloned()
            .partition(|s: &ToolSchema| s.name == SEARCH_DOCS);
        let history_schemas = schemas
            .iter()
            .filter(|s| s.name == GET_SENSOR_HISTORY)
            .cloned()
            .collect();
        Agent {
            schemas,
            live_schemas,
            docs_schemas,
            history_schemas,
            model,
            tools,
            settings,
            model_choice,
            authz,
            prices,
            system_prompt: prompt,
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
        metrics::know_models(
            std::iter::once(config.llm.answer_model.as_str())
                .chain(config.llm.judge_model.as_deref())
                .chain(config.access.allowed_models.iter().map(String::as_str)),
        );
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
                max_tokens_per_request: config.llm.max_tokens_per_request,
                require_grounded_answers: config.llm.require_grounded_answers,
                scope_check: config.llm.scope_check,
                search_first: config.llm.search_first,
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
    /// streamed) and tool activity are sent as they happen. The answer is one `agent.answer`
    /// span (see [`crate::observe`]).
    pub async fn answer(
        &self,
        question: &Question,
        caller: &Caller,
        events: Option<&UnboundedSender<AgentEvent>>,
    ) -> Result<AskResponse, AgentError> {
        let span = observe::answer_span(&caller.user.sub, self.default_model());
        observe::record_payload(&span, "langfuse.observation.input", || {
            question.text.clone()
        });
        let result = self
            .answer_in_span(question, caller, events)
            .instrument(span.clone())
            .await;
        record_answer(&span, &result);
        result
    }

    async fn answer_in_span(
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
        if is_blank(&question.text) {
            return Err(AgentError::QuestionEmpty);
        }
        let user = &caller.user;
        let model = self
            .model_choice
            .resolve(question.model.as_deref(), user, &self.authz)?;
        let streamed =
            events.map(|sender| StreamedTokens::new(sender, &self.settings.link_allowed_hosts));
        let result = self
            .answer_streamed(question, caller, &model, events, streamed.as_ref())
            .await;
        if let (Some(streamed), Ok(response)) = (&streamed, &result) {
            // Whatever the checks after the model changed, the client ends with the answer.
            streamed.settle(&response.answer);
        }
        result
    }

    /// The answer after the request's checks; `streamed` carries what a client is shown.
    async fn answer_streamed(
        &self,
        question: &Question,
        caller: &Caller,
        model: &str,
        events: Option<&UnboundedSender<AgentEvent>>,
        streamed: Option<&StreamedTokens<'_>>,
    ) -> Result<AskResponse, AgentError> {
        let model = model.to_string();
        let context = ToolContext {
            top_k: question.top_k.map(|k| k.clamp(1, MAX_TOP_K)),
            ..ToolContext::for_caller(caller)
        };
        let token_sink = streamed.map(|s| move |text: &str| s.push(text));
        let tokens: Option<&TokenSink<'_>> = token_sink.as_ref().map(|s| s as &TokenSink<'_>);

        let route = route(&crate::text::strip_invisible(&question.text));
        if let Route::Greeting(kind) = route {
            let reply = kind.reply().to_string();
            if let Some(streamed) = &streamed {
                streamed.send(reply.clone());
            }
            return Ok(self.response(
                reply,
                Decision::Answered,
                &model,
                Progress::default(),
                &question.text,
            ));
        }
        let mut progress = Progress {
            needs_grounding: route == Route::Documentation
                && self.settings.require_grounded_answers,
            ..Progress::default()
        };
        // The topic is decided first: an off-topic request is declined without a search.
        if route == Route::Documentation && self.settings.scope_check {
            let topic = self.topic(&model, question, &mut progress).await?;
            if let Some(refusal) = topic.and_then(Topic::refusal) {
                if let Some(streamed) = &streamed {
                    streamed.send(refusal.to_string());
                }
                return Ok(self.response(
                    refusal.to_string(),
                    Decision::Declined,
                    &model,
                    progress,
                    &question.text,
                ));
            }
        }
        let passages = match route {
            Route::Documentation if self.settings.search_first && self.tools.has(SEARCH_DOCS) => {
                self.search_first(question, context, events, &mut progress)
                    .await
            }
            Route::Live => match self
                .look_up_places(question, context, events, &mut progress)
                .await
            {
                Some(PlacesLookup::Known(text)) => Some(text),
                Some(PlacesLookup::Unknown) => {
                    // The question names a building or room the caller has none of: whether
                    // it does not exist or is someone else's, the answer is the same.
                    if let Some(streamed) = &streamed {
                        streamed.send(IDK_MARKER.to_string());
                    }
                    return Ok(self.response(
                        IDK_MARKER.to_string(),
                        Decision::Idk,
                        &model,
                        progress,
                        &question.text,
                    ));
                }
                None => None,
            },
            _ => None,
        };
        if let Some(streamed) = &streamed {
            streamed.allow(progress.returned_chunks.keys());
        }
        let mut messages = self.opening_messages(question, passages.as_deref());
        let mut state = LoopState::new(self.settings.max_tool_hops)
            .with_token_budget(self.settings.max_tokens_per_request);
        let mut live_first = route == Route::Live && !self.live_schemas.is_empty();
        let history_first = !self.history_schemas.is_empty() && asks_for_history(&question.text);
        let mut docs_first =
            route == Route::Documentation && passages.is_some() && !self.docs_schemas.is_empty();
        let mut reasked = false;
        // The re-ask after an answer that described tools offers none.
        let mut tools_off = false;
        // ... and holds the reply to one `answer` field (see [`ANSWER_FIELD_SCHEMA`]).
        let mut answer_field = false;
        let mut hop = 0;
        loop {
            hop += 1;
            let hop_span = observe::hop_span(hop);
            let (tools, tool_choice): (&[ToolSchema], ToolChoice) = if tools_off {
                (&[], ToolChoice::Auto)
            } else if live_first && history_first {
                (&self.history_schemas, ToolChoice::Required)
            } else if live_first {
                (&self.live_schemas, ToolChoice::Required)
            } else if docs_first {
                (&self.docs_schemas, ToolChoice::Auto)
            } else {
                (&self.schemas, ToolChoice::Auto)
            };
            live_first = false;
            docs_first = false;
            let request = |response_schema| ChatRequest {
                model: &model,
                messages: &messages,
                tools,
                temperature: self.settings.temperature,
                max_output_tokens: self.settings.max_output_tokens,
                response_schema,
                tool_choice,
            };
            let turn = if answer_field {
                let schema = ResponseSchema {
                    name: "answer",
                    schema: &ANSWER_FIELD_SCHEMA,
                };
                let mut turn = self
                    .answer_in_field(request(Some(schema)), request(None))
                    .instrument(hop_span.clone())
                    .await?;
                if let Some(text) = turn.message.content.as_deref().and_then(read_answer_field) {
                    turn.message.content = Some(text);
                }
                // Nothing of this reply was streamed (it was JSON): its answer goes out now,
                // through the same filters as streamed tokens.
                if let (Some(streamed), Some(text)) = (&streamed, &turn.message.content) {
                    streamed.push(text);
                }
                turn
            } else {
                self.chat(request(None), tokens, "answer")
                    .instrument(hop_span.clone())
                    .await?
            };
            if let Some(streamed) = &streamed {
                streamed.end_of_turn();
            }
            progress.usage += turn.usage;
            progress.cost.add_provider(turn.provider_cost);
            if !turn.model.is_empty() {
                progress.served_model = Some(turn.model.clone());
            }
            match state.next(&turn) {
                Step::CallTools(calls)
                    if !tools_off && calls.iter().all(|c| progress.earlier_result(c).is_some()) =>
                {
                    // Every call was made already (a small model re-runs the search whose
                    // passages it was given): nothing new would come back. The model gets the
                    // earlier results as the answer to its calls and is asked once more with
                    // no tools, to answer from them.
                    let results: Vec<Message> = calls
                        .iter()
                        .map(|call| {
                            let earlier = progress.earlier_result(call).unwrap_or_default();
                            Message::tool_result(&call.id, earlier)
                        })
                        .collect();
                    messages.push(turn.message);
                    messages.extend(results);
                    tools_off = true;
                }
                Step::CallTools(calls) => {
                    let outcomes = self
                        .run_tools(&calls, context, events)
                        .instrument(hop_span)
                        .await;
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
                    let describing = decision == Decision::Answered
                        && describes_tools(&answer, self.schemas.iter().map(|s| s.name));
                    let refused_data = matches!(decision, Decision::Idk | Decision::Declined)
                        && progress.live_data_returned;
                    if (describing || refused_data) && !reasked {
                        reasked = true;
                        if let Some(streamed) = &streamed {
                            streamed.retract();
                        }
                        tools_off = describing;
                        answer_field = describing;
                        messages.push(turn.message);
                        messages.push(Message::user(if describing {
                            ANSWER_INSTEAD_OF_DESCRIBING
                        } else {
                            REASK_FROM_RESULTS
                        }));
                        continue;
                    }
                    let (answer, decision) = if describing {
                        // Asked once more and still describing tools: no answer was given.
                        (IDK_MARKER.to_string(), Decision::Idk)
                    } else {
                        (answer, decision)
                    };
                    if let Some(streamed) = &streamed {
                        if Some(answer.as_str()) != turn.message.content.as_deref() {
                            // The library's sentence, in place of what the model wrote.
                            streamed.retract();
                            streamed.send(answer.clone());
                        }
                    }
                    return Ok(self.response(answer, decision, &model, progress, &question.text));
                }
            }
        }
    }

    /// The re-ask held to [`ANSWER_FIELD_SCHEMA`], not streamed. A provider that refuses the
    /// schema (HTTP 4xx) is asked the same without it.
    async fn answer_in_field(
        &self,
        held: ChatRequest<'_>,
        plain: ChatRequest<'_>,
    ) -> Result<ChatTurn, LlmError> {
        match self.chat(held, None, "answer").await {
            Err(LlmError::Status { status, .. }) if (400..500).contains(&status) => {
                self.chat(plain, None, "answer").await
            }
            other => other,
        }
    }

    /// Searches the documentation for the question as the caller, before any model call, and
    /// returns the passages as text for the request.
    async fn search_first(
        &self,
        question: &Question,
        context: ToolContext<'_>,
        events: Option<&UnboundedSender<AgentEvent>>,
        progress: &mut Progress,
    ) -> Option<String> {
        let call = code_call(
            "search-first",
            SEARCH_DOCS,
            serde_json::json!({ "query": question.text }),
        );
        // An unavailable search is no passages: the model may still try `search_docs` itself.
        let outcome = self.run_code_call(&call, context, events).await?;
        let text = passages::as_prompt_text(&outcome.content);
        progress.record(&call, outcome);
        text
    }

    /// Runs one call the library makes itself (traced and streamed like the model's); `None`
    /// when it failed.
    async fn run_code_call(
        &self,
        call: &ToolCall,
        context: ToolContext<'_>,
        events: Option<&UnboundedSender<AgentEvent>>,
    ) -> Option<ToolOutcome> {
        let outcome = self
            .run_tools(std::slice::from_ref(call), context, events)
            .await
            .pop()?;
        outcome.ok.then_some(outcome)
    }

    /// Looks up, as the caller and before any model call, the buildings the caller may see and
    /// the rooms of those the question names (or, for a follow-up naming none, those the
    /// conversation's last turns name), and returns them as text for the request. `None` when
    /// the live tools are not registered or the lookup failed: the model looks them up itself.
    async fn look_up_places(
        &self,
        question: &Question,
        context: ToolContext<'_>,
        events: Option<&UnboundedSender<AgentEvent>>,
        progress: &mut Progress,
    ) -> Option<PlacesLookup> {
        if !self.tools.has(LIST_BUILDINGS) || !self.tools.has(GET_BUILDING) {
            return None;
        }
        let listing = code_call("places-buildings", LIST_BUILDINGS, serde_json::json!({}));
        let listed = self.run_code_call(&listing, context, events).await?;
        let buildings = places::buildings_of(&listed.content);
        progress.record(&listing, listed);
        let text = crate::text::strip_invisible(&question.text);
        let mut named = places::buildings_named(&text, &buildings);
        let mut searched = text.to_string();
        if named.is_empty() {
            // A follow-up ("and the first one?") names its place in the turns before it.
            for earlier in question.history.iter().rev().take(2) {
                searched.push('\n');
                searched.push_str(&earlier.content);
            }
            named = places::buildings_named(&searched, &buildings);
        }
        let calls: Vec<ToolCall> = named
            .iter()
            .take(MAX_BUILDINGS_LOOKED_UP)
            .enumerate()
            .map(|(i, building)| {
                code_call(
                    &format!("places-building-{i}"),
                    GET_BUILDING,
                    serde_json::json!({ "building_id": building.id }),
                )
            })
            .collect();
        let outcomes = self.run_tools(&calls, context, events).await;
        let mut rooms = Vec::new();
        for (call, outcome) in calls.iter().zip(outcomes) {
            if outcome.ok {
                rooms.extend(places::rooms_of(&outcome.content));
            }
            progress.record(call, outcome);
        }
        let mut resolved = places::resolve(&text, &buildings, &rooms);
        if resolved.buildings.is_empty() && resolved.rooms.is_empty() && resolved.unknown.is_empty()
        {
            resolved = places::resolve(&searched, &buildings, &rooms);
        }
        if !resolved.unknown.is_empty() && resolved.rooms.is_empty() {
            return Some(PlacesLookup::Unknown);
        }
        Some(PlacesLookup::Known(places::describe(
            &buildings, &rooms, &resolved,
        )))
    }

    /// The question's topic, asked as typed JSON: the system prompt, the conversation and the
    /// question, without tools or passages. `None` when the provider failed or the reply was
    /// not the JSON asked for: then nothing is decided and the answer call goes ahead. A
    /// provider that cannot be reached at all (its retries spent) fails the answer here: the
    /// answer call would only fail the same way, a second time.
    async fn topic(
        &self,
        model: &str,
        question: &Question,
        progress: &mut Progress,
    ) -> Result<Option<Topic>, LlmError> {
        let mut asked = self.opening_messages(question, None);
        if let Some(last) = asked.last_mut() {
            *last = Message::user(format!(
                "Question: {}",
                crate::text::strip_invisible(&question.text)
            ));
        }
        asked.push(Message::user(TOPIC_QUESTION));
        let schema = super::scope::response_schema();
        let turn = self
            .chat(
                ChatRequest {
                    model,
                    messages: &asked,
                    tools: &[],
                    temperature: 0.0,
                    max_output_tokens: 40,
                    response_schema: Some(ResponseSchema {
                        name: "topic",
                        schema: &schema,
                    }),
                    tool_choice: ToolChoice::Auto,
                },
                None,
                "topic",
            )
            .await;
        match turn {
            Ok(turn) => {
                progress.usage += turn.usage;
                progress.cost.add_provider(turn.provider_cost);
                Ok(parse_topic(
                    turn.message.content.as_deref().unwrap_or_default(),
                ))
            }
            Err(error @ (LlmError::Transport(_) | LlmError::Timeout)) => Err(error),
            Err(error) => {
                tracing::warn!(%error, "the topic check failed; answering without it");
                Ok(None)
            }
        }
    }

    /// One model call as a `gen_ai.chat` span (a generation), with its tokens and cost.
    async fn chat(
        &self,
        request: ChatRequest<'_>,
        tokens: Option<&TokenSink<'_>>,
        purpose: &'static str,
    ) -> Result<ChatTurn, LlmError> {
        let span = observe::chat_span(request.model, purpose);
        observe::record_payload(&span, "langfuse.observation.input", || {
            prompt_text(request.messages)
        });
        let model = request.model.to_string();
        let started = Instant::now();
        let result = self
            .model
            .chat(request, tokens)
            .instrument(span.clone())
            .await;
        match &result {
            Ok(turn) => {
                let served = if turn.model.is_empty() {
                    &model
                } else {
                    &turn.model
                };
                span.record("gen_ai.response.model", served.as_str());
                span.record("gen_ai.response.finish_reasons", finish_name(turn.finish));
                span.record("gen_ai.usage.input_tokens", turn.usage.prompt_tokens);
                span.record("gen_ai.usage.output_tokens", turn.usage.completion_tokens);
                let cost = turn
                    .provider_cost
                    .or_else(|| self.prices.estimate_served(served, &turn.usage));
                if let Some(usd) = cost {
                    span.record("gen_ai.usage.cost", usd);
                    // Labelled by the model asked for: a configured name, never the
                    // provider's own spelling of it.
                    metrics::model_cost(&model, usd);
                }
                observe::record_payload(&span, "langfuse.observation.output", || turn_text(turn));
                metrics::model_call(
                    &model,
                    started.elapsed(),
                    turn.usage.prompt_tokens,
                    turn.usage.completion_tokens,
                );
            }
            Err(error) => {
                observe::record_error(&span, error.kind());
                metrics::model_error(&model, error.kind());
            }
        }
        result
    }

    fn opening_messages(&self, question: &Question, passages: Option<&str>) -> Vec<Message> {
        let skip = question.history.len().saturating_sub(MAX_HISTORY_MESSAGES);
        let mut messages = Vec::with_capacity(question.history.len() - skip + 2);
        messages.push(Message::system(self.system_prompt.as_str()));
        for earlier in &question.history[skip..] {
            messages.push(match earlier.role {
                HistoryRole::User => Message::user(earlier.content.as_str()),
                HistoryRole::Assistant => Message::assistant(earlier.content.as_str()),
            });
        }
        let text = crate::text::strip_invisible(&question.text);
        messages.push(Message::user(match passages {
            Some(passages) => format!("{passages}\n\nQuestion: {text}"),
            None => text.into_owned(),
        }));
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
        let outcomes = futures::future::join_all(calls.iter().enumerate().map(|(i, call)| {
            let span = observe::tool_span(&call.name, &call.id);
            observe::record_payload(&span, "langfuse.observation.input", || {
                call.arguments.clone()
            });
            async move {
                let outcome = if i < width {
                    self.tools.call_text(&call.name, &call.arguments, context).await
                } else {
                    ToolOutcome::refused(
                        &call.name,
                        format!("not run: at most {width} tool calls run per turn; ask again for the rest"),
                    )
                };
                record_tool(&Span::current(), &outcome);
                outcome
            }
            .instrument(span)
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
        question: &str,
    ) -> AskResponse {
        let answer = super::links::neutralise(&answer, &self.settings.link_allowed_hosts);
        let mut decision = decision;
        let mut checked = citations::check(&answer, &progress.returned_chunks);
        let unsupported =
            super::grounding::unsupported_markers(&checked.answer, &progress.passages);
        if checked.citations.is_empty() && decision == Decision::Answered {
            if let Some(marked) = super::grounding::attribute(&checked.answer, &progress.passages) {
                let hallucinated = std::mem::take(&mut checked.hallucinated);
                checked = citations::check(&marked, &progress.returned_chunks);
                checked.hallucinated = hallucinated;
                for citation in &mut checked.citations {
                    citation.attributed = true;
                }
            }
        }
        if decision == Decision::Answered
            && checked.citations.is_empty()
            && progress.needs_grounding
            && !progress.live_data_returned
        {
            // A documentation answer that no passage supports was not found in the
            // documentation: the library says so instead of passing on an invention.
            decision = Decision::Idk;
            checked = citations::check(IDK_MARKER, &progress.returned_chunks);
        }
        if decision == Decision::Answered
            && self.settings.require_grounded_answers
            && progress.live_data_returned
            && !super::grounding::numbers_grounded(&checked.answer, question, &progress.sources())
        {
            // Every figure of the answer is new: written from live data, it was invented.
            decision = Decision::Idk;
            checked = citations::check(IDK_MARKER, &progress.returned_chunks);
        }
        if decision == Decision::Answered
            && self.settings.require_grounded_answers
            && progress.live_data_returned
            && !super::grounding::subject_returned(question, &progress.sources())
        {
            // The question asks about something none of the returned data holds (elevators,
            // an electricity bill): whatever the answer says of it was not read there.
            decision = Decision::Idk;
            checked = citations::check(IDK_MARKER, &progress.returned_chunks);
        }
        let model = progress.served_model.unwrap_or_else(|| model.to_string());
        let mut cost = progress.cost;
        cost.estimated_usd = self.prices.estimate_served(&model, &progress.usage);
        AskResponse {
            answer: checked.answer,
            citations: checked.citations,
            trace: progress.trace,
            usage: progress.usage,
            cost,
            idk: matches!(
                decision,
                Decision::Idk | Decision::ToolLoopExhausted | Decision::BudgetExhausted
            ),
            decision,
            model,
            retrieval: RetrievalReport {
                hallucinated_citations: checked.hallucinated,
                unsupported_citations: if decision == Decision::Answered {
                    unsupported
                } else {
                    Vec::new()
                },
            },
        }
    }
}

/// Whether `text` shows nothing: only whitespace, control and invisible format characters.
pub fn is_blank(text: &str) -> bool {
    text.chars()
        .all(|c| c.is_whitespace() || c.is_control() || crate::text::is_invisible(c))
}

/// The request's totals on its span, and the decision counted.
fn record_answer(span: &Span, result: &Result<AskResponse, AgentError>) {
    match result {
        Ok(response) => {
            span.record("decision", response.decision.as_str());
            span.record("gen_ai.response.model", response.model.as_str());
            span.record("gen_ai.usage.input_tokens", response.usage.prompt_tokens);
            span.record(
                "gen_ai.usage.output_tokens",
                response.usage.completion_tokens,
            );
            if let Some(usd) = response.cost.provider_usd.or(response.cost.estimated_usd) {
                span.record("gen_ai.usage.cost", usd);
            }
            span.record("tool_calls", response.trace.len());
            span.record("citations", response.citations.len());
            observe::record_payload(span, "langfuse.observation.output", || {
                response.answer.clone()
            });
            metrics::decision(response.decision.as_str());
        }
        Err(error) => observe::record_error(
            span,
            match error {
                AgentError::QuestionTooLong { .. } => "question_too_long",
                AgentError::QuestionEmpty => "question_empty",
                AgentError::ModelChoice(_) => "model_choice",
                AgentError::Llm(error) => error.kind(),
            },
        ),
    }
}

/// A tool call's status on its span (the error's kind, not its text) and in the metrics.
fn record_tool(span: &Span, outcome: &ToolOutcome) {
    span.record("ok", outcome.ok);
    let error_kind = (!outcome.ok).then(|| {
        outcome.content["error"]["kind"]
            .as_str()
            .unwrap_or("error")
            .to_string()
    });
    if let Some(kind) = &error_kind {
        observe::record_error(span, kind);
    }
    observe::record_payload(span, "langfuse.observation.output", || {
        outcome.summary.clone()
    });
    metrics::tool_call(
        &outcome.tool,
        std::time::Duration::from_millis(outcome.ms),
        error_kind.as_deref(),
    );
}

/// The messages of a model call as JSON text (a payload).
fn prompt_text(messages: &[Message]) -> String {
    serde_json::to_string(messages).unwrap_or_default()
}

/// What the model wrote, and the tools it called (a payload).
fn turn_text(turn: &ChatTurn) -> String {
    serde_json::to_string(&turn.message).unwrap_or_default()
}

fn finish_name(finish: FinishReason) -> &'static str {
    match finish {
        FinishReason::Stop => "stop",
        FinishReason::ToolCalls => "tool_calls",
        FinishReason::Length => "length",
        FinishReason::ContentFilter => "content_filter",
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
    /// The same passages as (chunk id, text), in the order returned, for attribution.
    passages: Vec<(String, String)>,
    /// A live-data tool returned data (not an error) during this answer.
    live_data_returned: bool,
    /// What the live-data tools returned, as the model read it.
    live_results: Vec<String>,
    /// Every call that returned data: its tool, arguments as compared for a repeat, and what
    /// the model read.
    results: Vec<(String, serde_json::Value, String)>,
    /// A documentation question: an answer no passage supports is `idk`.
    needs_grounding: bool,
    /// The model the provider says answered (the last one that said).
    served_model: Option<String>,
}

impl Progress {
    fn record(&mut self, call: &ToolCall, outcome: ToolOutcome) {
        if outcome.ok {
            self.results.push((
                outcome.tool.clone(),
                comparable_arguments(&arguments_value(&call.arguments)),
                outcome.content.to_string(),
            ));
        }
        if outcome.ok && outcome.tool == SEARCH_DOCS {
            for (chunk_id, origin, text) in passages::returned(&outcome.content) {
                self.returned_chunks.insert(chunk_id.clone(), origin);
                self.passages.push((chunk_id, text));
            }
        } else if outcome.ok {
            self.live_data_returned = true;
            self.live_results.push(outcome.content.to_string());
        }
        self.trace.push(TraceEntry {
            tool: outcome.tool,
            arguments: arguments_value(&call.arguments),
            ok: outcome.ok,
            ms: outcome.ms,
            summary: outcome.summary,
        });
    }

    /// What `call` returned when it was made before in this answer, by the library or the
    /// model, with the same arguments (a search query compared without case, spacing or end
    /// punctuation); `None` when it was not, or failed.
    fn earlier_result(&self, call: &ToolCall) -> Option<String> {
        let asked = comparable_arguments(&arguments_value(&call.arguments));
        self.results
            .iter()
            .find(|(tool, arguments, _)| *tool == call.name && *arguments == asked)
            .map(|(_, _, content)| content.clone())
    }

    /// Everything the answer could draw figures from: live results and passages.
    fn sources(&self) -> Vec<&str> {
        self.live_results
            .iter()
            .map(String::as_str)
            .chain(self.passages.iter().map(|(_, text)| text.as_str()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_system_prompt_asks_for_codes_never_for_the_library_sentences() {
        let prompt = system_prompt(false);
        assert!(prompt.contains(OUT_OF_SCOPE_CODE));
        let checked = system_prompt(true);
        assert!(
            !checked.contains(OUT_OF_SCOPE_CODE),
            "the topic check declines instead"
        );
        assert!(prompt.starts_with(&checked));
        assert!(
            !prompt.contains(super::super::decision::NO_ANSWER_CODE),
            "no answer is decided in code"
        );
        assert!(!prompt.contains(super::super::decision::IDK_MARKER));
        assert!(!prompt.contains(super::super::decision::REFUSAL_PREFIX));
        assert!(!prompt.contains('{'));
        assert!(prompt.contains("[^chunk_id]"));
    }

    #[test]
    fn the_answer_field_is_read_and_anything_else_is_not() {
        assert_eq!(
            read_answer_field(" {\"answer\": \"6 people.\"}\n").as_deref(),
            Some("6 people.")
        );
        assert_eq!(read_answer_field("6 people."), None);
        assert_eq!(read_answer_field(r#"{"name": "get_occupancy"}"#), None);
        assert_eq!(read_answer_field(r#"{"answer": 6}"#), None);
    }

    #[test]
    fn an_answer_field_cut_off_inside_its_string_gives_the_text_written() {
        assert_eq!(
            read_answer_field(r#"{"answer": "globex-tower has 3 rooms, globex-tower"#).as_deref(),
            Some("globex-tower has 3 rooms, globex-tower")
        );
        assert_eq!(
            read_answer_field(r#"{ "answer" : "line\none \u00e9t\u00"#).as_deref(),
            Some("line\none ét")
        );
        assert_eq!(
            read_answer_field(r#"{"answer": "ends in a backslash \"#).as_deref(),
            Some("ends in a backslash ")
        );
        assert_eq!(
            read_answer_field(r#"{"answer": "6 people.", "source": "get_ro"#).as_deref(),
            Some("6 people.")
        );
        // Not an answer field: read as text.
        assert_eq!(read_answer_field(r#"{"name": "get_room"#), None);
        assert_eq!(read_answer_field(r#"The answer is "6"#), None);
    }
}
