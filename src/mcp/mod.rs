//! The MCP server: the agent's tools (`search_docs`, the seven live-data tools) and `ask` (the
//! whole agent), the documentation pages and live buildings and rooms as resources, and a few
//! prompts, for MCP hosts, over any rmcp transport: stdio for `crowdvision-agent mcp`,
//! Streamable HTTP at `/mcp` on `serve` ([`crate::server`] wires that one).
//!
//! Every call runs as its caller, through the same registry and agent as `/ask`: permissions
//! are the tools' own (SQL filters, the Cedar decision on a building's domain), so what a host
//! can reach is exactly what the caller could reach by asking. Pages are read from the store
//! with the same permission filter as search, in its SQL. Over stdio the caller is fixed
//! when the process starts; over HTTP it is resolved for every request by the route and handed
//! here in the request's extensions.

pub mod catalog;
pub mod prompts;
pub mod resources;

use crate::agent::tools::registry::ToolRegistry;
use crate::agent::tools::ToolContext;
use crate::auth::identity::Caller;
use crate::contract::{AskResponse, Question};
use crate::retrieval::store::ChunkStore;
use async_trait::async_trait;
use catalog::Call;
use resources::Read;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
    CompletionInfo, ErrorData, GetPromptRequestParams, GetPromptResponse, Implementation,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    Reference, ResourceContents, ServerCapabilities, ServerConfig, Tool,
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
                crate::agent::error::AgentError::Llm(error) => {
                    tracing::warn!(%error, "ask failed at the provider");
                    if error.is_timeout() {
                        crate::contract::PROVIDER_TIMED_OUT.to_string()
                    } else if error.is_outage() {
                        crate::contract::PROVIDER_UNAVAILABLE.to_string()
                    } else {
                        crate::contract::PROVIDER_FAILED.to_string()
                    }
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

/// The MCP server over one registry, one agent and the store the pages are read from.
#[derive(Clone)]
pub struct McpServer {
    registry: Arc<ToolRegistry>,
    asker: Arc<dyn Asker>,
    pages: Arc<dyn ChunkStore>,
    callers: Callers,
    listed: Arc<Vec<Tool>>,
}

impl McpServer {
    pub fn new(
        registry: Arc<ToolRegistry>,
        asker: Arc<dyn Asker>,
        pages: Arc<dyn ChunkStore>,
        callers: Callers,
    ) -> McpServer {
        let listed = Arc::new(catalog::tools(&registry.schemas()));
        McpServer {
            registry,
            asker,
            pages,
            callers,
            listed,
        }
    }

    /// Reads a resource as `caller`: a page through the store's permission filter, a building
    /// or room through its tool. Anything the caller may not read is [`resources::not_found`].
    async fn read(&self, uri: &str, caller: &Caller) -> Result<ReadResourceResult, ErrorData> {
        let read = resources::parse(uri).ok_or_else(|| resources::not_found(uri))?;
        let text = match &read {
            Read::Page { source } => {
                let permissions = caller.user.effective_permissions();
                let chunks = self
                    .pages
                    .page_chunks(source, &permissions)
                    .await
                    .map_err(documentation_unavailable)?;
                resources::page_text(&chunks).ok_or_else(|| resources::not_found(uri))?
            }
            live => {
                let (tool, arguments) =
                    live.tool_call().ok_or_else(|| resources::not_found(uri))?;
                let outcome = self
                    .registry
                    .call(tool, arguments, ToolContext::for_caller(caller))
                    .await;
                if !outcome.ok {
                    return Err(live_failure(uri, &outcome.content));
                }
                outcome.content.to_string()
            }
        };
        // What was read is the caller's: a cache must not serve it to anyone else.
        let contents =
            ResourceContents::text(text, uri).with_mime_type(resources::mime_type(&read));
        Ok(ReadResourceResult::new(vec![contents]).with_cache_scope(CacheScope::Private))
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

/// A store failure while listing or reading pages: logged, and said without its details.
fn documentation_unavailable(error: crate::retrieval::store::StoreError) -> ErrorData {
    tracing::warn!(%error, "the documentation pages could not be read");
    ErrorData::internal_error("the documentation is unavailable", None)
}

/// A live read that failed: not found (or not the caller's) is [`resources::not_found`]; the
/// service being down is said as such, in the tool's own words.
fn live_failure(uri: &str, content: &serde_json::Value) -> ErrorData {
    let kind = content["error"]["kind"].as_str().unwrap_or_default();
    if kind == "not_found" || kind == "bad_arguments" {
        return resources::not_found(uri);
    }
    let message = content["error"]["message"]
        .as_str()
        .unwrap_or("the live data is unavailable");
    ErrorData::internal_error(message.to_string(), None)
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
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

    /// The caller's own pages, a page of them at a time; never to be cached for another caller.
    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let caller = self.caller_of(&context)?;
        let pages = self
            .pages
            .visible_pages(&caller.user.effective_permissions())
            .await
            .map_err(documentation_unavailable)?;
        let cursor = request.and_then(|request| request.cursor);
        let (page, next) = resources::page_after(&pages, cursor.as_deref(), resources::PAGE_SIZE);
        let mut listed = ListResourcesResult::with_all_items(resources::listed(page))
            .with_cache_scope(CacheScope::Private);
        listed.next_cursor = next;
        Ok(listed)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(
            resources::templates(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let caller = self.caller_of(&context)?;
        self.read(&request.uri, &caller).await.map(Into::into)
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
