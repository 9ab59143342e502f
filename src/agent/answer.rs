//! The driver of an answer: [`Agent::answer`] feeds an [`AnswerRun`] (every decision, no IO)
//! with what the model and the tools return and does what each [`Step`] says: calls the
//! [`ChatModel`], runs the [`ToolRegistry`]'s tools concurrently, opens the spans, records the
//! metrics and streams what a client is shown.

use super::llm::{
    ChatModel, ChatRequest, ChatTurn, FinishReason, LlmError, Message, ResponseSchema, TokenSink,
};
use super::model_choice::ModelChoice;
use super::run::{
    arguments_value, system_prompt, AnswerRun, ModelCall, Offer, ReplyShape, Step, ToolRun,
    Toolbox, ANSWER_FIELD_SCHEMA,
};
use super::stream::StreamedTokens;
use super::tools::live::BuildingReads;
use super::tools::registry::{ToolOutcome, ToolRegistry, ToolSchema};
use super::tools::ToolContext;
use super::usage::PriceTable;
use crate::agent::error::{question_refusal, AgentError};
use crate::auth::authz::Authorizer;
use crate::auth::identity::Caller;
use crate::config::Config;
use crate::contract::{AgentEvent, AskResponse, Question};
use crate::observe::{self, metrics};
use crate::retrieval::search::MAX_TOP_K;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::mpsc::UnboundedSender;
use tracing::{Instrument, Span};

pub use super::run::MAX_HISTORY_MESSAGES;
use crate::config::LoopSettings;

pub struct Agent {
    model: Arc<dyn ChatModel>,
    tools: Arc<ToolRegistry>,
    toolbox: Toolbox,
    /// Generated once: every request sends the same schemas; one list per [`Offer`].
    offered: Vec<(Offer, Vec<ToolSchema>)>,
    topic_schema: serde_json::Value,
    settings: LoopSettings,
    model_choice: ModelChoice,
    authz: Arc<Authorizer>,
    prices: PriceTable,
    system_prompt: String,
}

impl Agent {
    pub fn new(
        model: Arc<dyn ChatModel>,
        tools: Arc<ToolRegistry>,
        settings: LoopSettings,
        model_choice: ModelChoice,
        authz: Arc<Authorizer>,
        prices: PriceTable,
    ) -> Agent {
        let schemas = tools.schemas();
        let offered = Offer::ALL
            .iter()
            .map(|offer| {
                let admitted = schemas.iter().filter(|s| offer.admits(s.name)).cloned();
                (*offer, admitted.collect())
            })
            .collect();
        Agent {
            toolbox: Toolbox::new(schemas.iter().map(|s| s.name)),
            offered,
            topic_schema: crate::agent::question::scope::response_schema(),
            system_prompt: system_prompt(settings.scope_check),
            model,
            tools,
            settings,
            model_choice,
            authz,
            prices,
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
            config.llm.answering.clone(),
            ModelChoice {
                default_model: config.llm.answer_model.clone(),
                min_role: config.access.model_override_min_role.clone(),
                allowed: config.access.allowed_models.clone(),
            },
            authz,
            prices,
        )
    }

    /// The tools this agent calls, for running them directly (the MCP server).
    pub fn tools(&self) -> &Arc<ToolRegistry> {
        &self.tools
    }

    pub fn default_model(&self) -> &str {
        &self.model_choice.default_model
    }

    /// The models `user` may ask this agent to answer with: the default one, and the allowed
    /// ones when the user's role may choose.
    pub fn models_for(&self, user: &crate::auth::AuthUser) -> Vec<String> {
        let mut models = vec![self.model_choice.default_model.clone()];
        for model in &self.model_choice.allowed {
            let chosen = self.model_choice.resolve(Some(model), user, &self.authz);
            if chosen.is_ok() && !models.contains(model) {
                models.push(model.clone());
            }
        }
        models
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
        let (span, trace_id) = observe::answer_span(&caller.user.sub, self.default_model());
        observe::record_payload(&span, "langfuse.observation.input", || {
            question.text.clone()
        });
        let result = self
            .answer_in_span(question, caller, events)
            .instrument(span.clone())
            .await;
        record_answer(&span, &result);
        result.map(|response| AskResponse {
            trace_id,
            ..response
        })
    }

    async fn answer_in_span(
        &self,
        question: &Question,
        caller: &Caller,
        events: Option<&UnboundedSender<AgentEvent>>,
    ) -> Result<AskResponse, AgentError> {
        if let Some(refusal) = question_refusal(&question.text, self.settings.max_question_chars) {
            return Err(refusal);
        }
        let model =
            self.model_choice
                .resolve(question.model.as_deref(), &caller.user, &self.authz)?;
        let streamed =
            events.map(|sender| StreamedTokens::new(sender, &self.settings.link_allowed_hosts));
        let reads = BuildingReads::default();
        let context = ToolContext {
            top_k: question.top_k.map(|k| k.clamp(1, MAX_TOP_K)),
            reads: Some(&reads),
            ..ToolContext::for_caller(caller)
        };
        let mut run = AnswerRun::new(
            question,
            &self.settings,
            &self.toolbox,
            &self.system_prompt,
            &model,
            &self.prices,
        );
        let driven = self
            .drive(&mut run, &model, context, events, streamed.as_ref())
            .await;
        let response = match driven {
            Ok(response) => response,
            Err(error) => {
                if let Some(streamed) = &streamed {
                    // A stream that showed text and then failed withdraws the text first.
                    streamed.retract();
                }
                return Err(error);
            }
        };
        if let Some(streamed) = &streamed {
            // Whatever the checks after the model changed, the client ends with the answer.
            streamed.settle(&response.answer);
        }
        Ok(response)
    }

    /// Does what each step of `run` says until it is done.
    async fn drive(
        &self,
        run: &mut AnswerRun<'_>,
        model: &str,
        context: ToolContext<'_>,
        events: Option<&UnboundedSender<AgentEvent>>,
        streamed: Option<&StreamedTokens<'_>>,
    ) -> Result<AskResponse, AgentError> {
        let mut hop = 0;
        let mut hop_span = Span::none();
        let mut step = run.start();
        loop {
            step = match step {
                Step::Done(response) => return Ok(*response),
                Step::Failed(outage) => return Err(AgentError::Unavailable(outage)),
                Step::Model(call) => {
                    if call.purpose == super::run::Purpose::Answer {
                        hop += 1;
                        hop_span = observe::hop_span(hop);
                    }
                    if call.withdraw_shown {
                        if let Some(streamed) = streamed {
                            streamed.retract();
                        }
                    }
                    let reply = self
                        .call_model(&call, run.messages(), model, streamed)
                        .instrument(hop_span.clone())
                        .await;
                    let failed = reply.as_ref().err().cloned();
                    let next = run.model_replied(reply)?;
                    if let Some(error) = failed {
                        tracing::warn!(%error, purpose = call.purpose.as_str(), "a model call failed; the answer goes on without it");
                    }
                    next
                }
                Step::Tools(batch) => {
                    let outcomes = self
                        .run_tools(&batch, context, events)
                        .instrument(hop_span.clone())
                        .await;
                    let next = run.tools_returned(outcomes);
                    if let Some(streamed) = streamed {
                        streamed.allow(run.citable());
                    }
                    next
                }
            };
        }
    }

    /// One model call as the run asked for it; its text streamed when the call says so.
    async fn call_model(
        &self,
        call: &ModelCall,
        messages: &[Message],
        model: &str,
        streamed: Option<&StreamedTokens<'_>>,
    ) -> Result<ChatTurn, LlmError> {
        let schema = match call.shape {
            ReplyShape::Free => None,
            ReplyShape::Topic => Some(ResponseSchema {
                name: "topic",
                schema: &self.topic_schema,
            }),
            ReplyShape::AnswerField => Some(ResponseSchema {
                name: "answer",
                schema: &ANSWER_FIELD_SCHEMA,
            }),
        };
        let request = ChatRequest {
            model,
            messages,
            tools: self.offered_schemas(call.listed),
            temperature: call.temperature,
            max_output_tokens: call.max_output_tokens,
            response_schema: schema,
            tool_choice: call.tool_choice,
        };
        let streamed = streamed.filter(|_| call.streamed);
        let sink = streamed.map(|s| move |text: &str| s.push(text));
        let tokens = sink.as_ref().map(|s| s as &TokenSink<'_>);
        let reply = self.chat(request, tokens, call.purpose.as_str()).await;
        if let Some(streamed) = streamed {
            streamed.end_of_turn();
        }
        reply
    }

    fn offered_schemas(&self, offer: Offer) -> &[ToolSchema] {
        self.offered
            .iter()
            .find(|(listed, _)| *listed == offer)
            .map_or(&[], |(_, schemas)| schemas.as_slice())
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

    /// Runs one batch's calls concurrently; the outcomes come back in the order requested.
    async fn run_tools(
        &self,
        batch: &[ToolRun],
        context: ToolContext<'_>,
        events: Option<&UnboundedSender<AgentEvent>>,
    ) -> Vec<ToolOutcome> {
        if let Some(sender) = events {
            for run in batch {
                let call = run.call();
                let _ = sender.send(AgentEvent::ToolCall {
                    tool: call.name.clone(),
                    arguments: arguments_value(&call.arguments),
                });
            }
        }
        let outcomes = futures::future::join_all(batch.iter().map(|run| {
            let call = run.call();
            let span = observe::tool_span(&call.name, &call.id);
            observe::record_payload(&span, "langfuse.observation.input", || {
                call.arguments.clone()
            });
            async move {
                let outcome = match run {
                    ToolRun::Call(call) => {
                        self.tools
                            .call_text(&call.name, &call.arguments, context)
                            .await
                    }
                    ToolRun::Refused(_, refusal) => refusal.clone(),
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
                    chart: outcome
                        .ok
                        .then(|| super::chart::from_result(&outcome.tool, &outcome.content))
                        .flatten(),
                });
            }
        }
        outcomes
    }
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
        Err(error) => {
            if error.is_outage() {
                span.record("decision", "unavailable");
                metrics::decision("unavailable");
            }
            record_failure(span, error);
        }
    }
}

fn record_failure(span: &Span, error: &AgentError) {
    observe::record_error(
        span,
        match error {
            AgentError::QuestionTooLong { .. } => "question_too_long",
            AgentError::QuestionEmpty => "question_empty",
            AgentError::ModelChoice(_) => "model_choice",
            AgentError::Llm(error) => error.kind(),
            AgentError::Unavailable(outage) => outage.kind(),
        },
    )
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
