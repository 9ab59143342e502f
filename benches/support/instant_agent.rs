//! The agent both overhead benchmarks measure: a two-hop answer (one `search_docs`-shaped tool
//! call returning six passages of ~1,200 characters, then a final answer citing two of them)
//! against a `ChatModel` that hands back prepared turns at once.

use async_trait::async_trait;
use crowdvision_agent::agent::answer::Agent;
use crowdvision_agent::agent::llm::{
    ChatModel, ChatRequest, ChatTurn, FinishReason, LlmError, Message, TokenSink, ToolCall,
};
use crowdvision_agent::agent::model_choice::ModelChoice;
use crowdvision_agent::agent::tools::registry::ToolRegistry;
use crowdvision_agent::agent::tools::{Tool, ToolContext, ToolError};
use crowdvision_agent::agent::usage::PriceTable;
use crowdvision_agent::auth::authz::Authorizer;
use crowdvision_agent::config::LoopSettings;
use crowdvision_agent::contract::Usage;
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;

/// Returns six fixed passages at once, shaped as `search_docs` results.
struct InstantDocs {
    results: serde_json::Value,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DocsArgs {
    /// What to look for.
    query: String,
}

#[async_trait]
impl Tool for InstantDocs {
    type Args = DocsArgs;
    const NAME: &'static str = "search_docs";
    fn description(&self) -> &'static str {
        "Search the CrowdVision documentation."
    }
    async fn run(
        &self,
        args: DocsArgs,
        _context: ToolContext<'_>,
    ) -> Result<(serde_json::Value, String), ToolError> {
        debug_assert!(!args.query.is_empty());
        Ok((self.results.clone(), "6 passages from 6 pages".into()))
    }
}

fn passages() -> serde_json::Value {
    let text =
        "CO2 sensors report parts per million; the alarm threshold is configurable. ".repeat(16);
    let results: Vec<serde_json::Value> = (0..6)
        .map(|i| {
            serde_json::json!({
                "chunk_id": format!("chunk{i:02}abcdef0123456789"),
                "source": format!("user/page-{i}.md"),
                "section": "Sensors > CO2 > Thresholds",
                "text": text,
            })
        })
        .collect();
    serde_json::json!({ "results": results })
}

pub const FINAL_ANSWER: &str =
    "The CO2 alarm threshold is configurable per room [^chunk00abcdef0123456789], \
     and readings are in parts per million [^chunk03abcdef0123456789].";

/// Hands back the prepared turns in turn: a tool call when the last message is the question,
/// the final answer once a tool result is there.
pub struct InstantModel {
    pub calling: ChatTurn,
    pub answering: ChatTurn,
}

#[async_trait]
impl ChatModel for InstantModel {
    async fn chat(
        &self,
        request: ChatRequest<'_>,
        _tokens: Option<&TokenSink<'_>>,
    ) -> Result<ChatTurn, LlmError> {
        let after_tools = request
            .messages
            .last()
            .is_some_and(|m| m.tool_call_id.is_some());
        Ok(if after_tools {
            self.answering.clone()
        } else {
            self.calling.clone()
        })
    }
}

pub fn turn(message: Message, finish: FinishReason) -> ChatTurn {
    ChatTurn {
        message,
        finish,
        usage: Usage {
            prompt_tokens: 1500,
            completion_tokens: 40,
            total_tokens: 1540,
            ..Usage::default()
        },
        provider_cost: None,
        model: "openai/gpt-4o-mini".into(),
    }
}

fn registry() -> Arc<ToolRegistry> {
    let mut registry = ToolRegistry::new(Duration::from_secs(5));
    registry.register(InstantDocs {
        results: passages(),
    });
    Arc::new(registry)
}

pub fn agent(model: Arc<dyn ChatModel>) -> Agent {
    Agent::new(
        model,
        registry(),
        LoopSettings {
            temperature: 0.1,
            max_output_tokens: 2048,
            max_tool_hops: 6,
            max_tool_calls_per_turn: 8,
            max_question_chars: 4000,
            link_allowed_hosts: Vec::new(),
            max_tokens_per_request: 100_000,
            require_grounded_answers: true,
            // The topic check is one more model call, not agent work: measured apart.
            scope_check: false,
            search_first: true,
            // The scripted hops include a further search, as when the figure was recorded.
            search_again: true,
            stable_tool_prefix: true,
        },
        ModelChoice {
            default_model: "openai/gpt-4o-mini".into(),
            min_role: "business_admin".into(),
            allowed: vec![],
        },
        Arc::new(Authorizer::new("business_admin")),
        PriceTable::default(),
    )
}

/// The in-process model of both benchmarks: a `search_docs` call, then [`FINAL_ANSWER`].
pub fn instant_model() -> InstantModel {
    let call = ToolCall {
        id: "call_1".into(),
        name: "search_docs".into(),
        arguments: r#"{"query":"CO2 alarm threshold"}"#.into(),
    };
    InstantModel {
        calling: turn(
            Message::assistant_calls(vec![call]),
            FinishReason::ToolCalls,
        ),
        answering: turn(Message::assistant(FINAL_ANSWER), FinishReason::Stop),
    }
}
