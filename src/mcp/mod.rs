//! The MCP server: the agent's tools (`search_docs`, the seven live-data tools) and `ask` (the
//! whole agent) for MCP hosts, over any rmcp transport: stdio for `crowdvision-agent mcp`,
//! Streamable HTTP at `/mcp` on `serve` ([`crate::server`] wires that one).
//!
//! Every call runs as its caller, through the same registry and agent as `/ask`: permissions
//! are the tools' own (SQL filters, the Cedar decision on a building's domain), so what a host
//! can reach is exactly what the caller could reach by asking. Over stdio the caller is fixed
//! when the process starts; over HTTP it is resolved for every request by the route and handed
//! here in the request's extensions.

pub mod catalog;
pub mod prompts;

use crate::agent::tools::registry::ToolRegistry;
use crate::agent::tools::ToolContext;
use crate::auth::identity::Caller;
use crate::contract::{AskResponse, Question};
use async_trait::async_trait;
use catalog::Call;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult, CompletionInfo,
    ErrorData, GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListToolsResult, PaginatedRequestParams, Reference, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};
use std::sync::Arc;

/// PORT: runs the whole agent for `ask`, with whatever limits the transport applies.
#[async_trait]
pub trait Asker: Send + Sync {
    /// The answer, or a reason safe to show the caller.
    async fn ask(&self, question: Question, caller: &Caller) -> Result<AskResponse, String>;
}

/// `ask` straight through an agent, for a process that serves one caller (stdio).
pub struct Direct(pub crate::agent::answer::Agent);

#[async_trait]
impl Asker for Direct {
    async fn ask(&self, question: Question, caller: &Caller) -> Result<AskResponse, String> {
        self.0
            .answer(&question, caller, None)
            .await
            .map_err(|error| match error {
                crate::contract::AgentError::Llm(error) => {
                    tracing::warn!(%error, "ask failed at the provider");
                    crate::contract::PROVIDER_FAILED.to_string()
                }
                other => other.to_string(),
            })
    }
}

/// Where a call's caller comes from.
#[derive(Debug, Clone)]
pub enum Callers {
    /// One caller for the whole process (stdio).
    Fixed(Box<Caller>),
    /// The [`Caller`] the HTTP route put into each request's extensions.
    PerRequest,
}

/// The MCP server over one registry and one agent.
#[derive(Clone)]
pub struct McpServer {
    registry: Arc<ToolRegistry>,
    asker: Arc<dyn Asker>,
    callers: Callers,
    listed: Arc<Vec<Tool>>,
}

impl McpServer {
    pub fn new(registry: Arc<ToolRegistry>, asker: Arc<dyn Asker>, callers: Callers) -> McpServer {
        let listed = Arc::new(catalog::tools(&registry.schemas()));
        McpServer {
            registry,
            asker,
            callers,
            listed,
        }
    }

    fn caller_of(&self, context: &RequestContext<RoleServer>) -> Result<Caller, ErrorData> {
        match &self.callers {
            Callers::Fixed(caller) => Ok((**caller).clone()),
            Callers::PerRequest => context
                .extensions
                .get::<axum::http::request::Parts>()
                .and_then(|parts| parts.extensions.get::<Caller>())
                .cloned()
                .ok_or_else(|| ErrorData::internal_error("the request has no caller", None)),
        }
    }

    /// Runs a routed call as `caller`.
    pub async fn run(&self, call: Call, caller: &Caller) -> rmcp::model::CallToolResult {
        match call {
            Call::Tool { name, arguments } => {
                let outcome = self
                    .registry
                    .call(&name, arguments, ToolContext::for_caller(caller))
                    .await;
                tracing::info!(tool = %name, ok = outcome.ok, ms = outcome.ms, "mcp tool call");
                catalog::tool_result(&outcome)
            }
            Call::Ask { question } => match self.asker.ask(Question::new(question), caller).await {
                Ok(response) => catalog::answer_result(&response),
                Err(reason) => catalog::failure_result(&reason),
            },
            Call::BadAsk(reason) => catalog::failure_result(&reason),
        }
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .enable_completions()
                .build(),
        )
        .with_server_info(Implementation::new(
            "crowdvision-agent",
            env!("CARGO_PKG_VERSION"),
        ))
        .with_instructions(
            "Buildings, rooms, live occupancy, sensors and their documentation, as the \
                 caller may see them. `ask` answers a whole question with citations; the other \
                 tools return data.",
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.listed.to_vec()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.listed.iter().find(|tool| tool.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let caller = self.caller_of(&context)?;
        let call = catalog::route(&request.name, request.arguments, |name| {
            self.registry.has(name)
        })?;
        Ok(self.run(call, &caller).await.into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(prompts::list()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        prompts::render(&request.name, request.arguments.as_ref()).map(Into::into)
    }

    /// A `building_id` of a prompt completes to the buildings the caller may see (read through
    /// `list_buildings` as the caller); nothing else completes.
    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let caller = self.caller_of(&context)?;
        let prompt = match &request.r#ref {
            Reference::Prompt(prompt) => prompt.name.as_str(),
            _ => "",
        };
        let mut values = Vec::new();
        if prompts::completes_to_buildings(prompt, &request.argument.name)
            && self.registry.has("list_buildings")
        {
            let outcome = self
                .registry
                .call(
                    "list_buildings",
                    serde_json::json!({}),
                    ToolContext::for_caller(&caller),
                )
                .await;
            let ids: Vec<String> = outcome.content["buildings"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|b| b["id"].as_str().map(str::to_string))
                .collect();
            values = prompts::matching(&ids, &request.argument.value);
        }
        let completion = CompletionInfo::with_all_values(values)
            .map_err(|reason| ErrorData::internal_error(reason, None))?;
        Ok(CompleteResult::new(completion))
    }
}
