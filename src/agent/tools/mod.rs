//! PORT `Tool`: something the model may call, with typed arguments whose JSON schema is
//! generated (never written by hand), run as the asking user ([`ToolContext`]). The [`registry::ToolRegistry`]
//! validates arguments, applies the timeout and turns every failure into a result the model can
//! read, so a tool only ever returns data or a [`ToolError`].

pub mod live;
pub mod registry;
pub mod search_docs;

use crate::auth::authz::Authorizer;
use crate::auth::identity::Caller;
use crate::auth::AuthUser;
use crate::config::Config;
use crate::retrieval::search::Retriever;
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use std::sync::Arc;

/// A failure the model is told about, in words safe to show it (no internals, no other
/// tenant's data).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    pub kind: ToolErrorKind,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolErrorKind {
    UnknownTool,
    BadArguments,
    NotFound,
    Unavailable,
    Timeout,
    /// Past `MAX_TOOL_CALLS_PER_TURN`: not run.
    TooManyCalls,
}

impl ToolError {
    pub fn new(kind: ToolErrorKind, message: impl Into<String>) -> ToolError {
        ToolError {
            kind,
            message: message.into(),
        }
    }
}

/// The names of the tools [`standard_registry`] registers, for checking names written by people
/// (an eval dataset's `tools:`) without building the registry.
pub const STANDARD_TOOL_NAMES: [&str; 8] = [
    search_docs::SearchDocs::NAME,
    live::ListBuildings::NAME,
    live::GetBuilding::NAME,
    live::GetRoom::NAME,
    live::GetOccupancy::NAME,
    live::ListSensors::NAME,
    live::GetLatestSensorData::NAME,
    live::GetSensorHistory::NAME,
];

/// Every tool the agent offers: `search_docs` over `retriever`, and the live-data tools over
/// the downstream services of `config`.
pub fn standard_registry(
    config: &Config,
    retriever: Arc<Retriever>,
    authz: Arc<Authorizer>,
) -> registry::ToolRegistry {
    let mut registry = registry::ToolRegistry::new(config.llm.tool_timeout);
    let search = search_docs::SearchDocs::new(retriever);
    if config.llm.answering.stable_tool_prefix {
        // Last, so that a first hop offered only the live tools sends a prefix of the list
        // every later hop sends, and the provider's prompt cache keeps the schemas.
        register_live_tools(&mut registry, &live_data(config, authz));
        registry.register(search);
    } else {
        registry.register(search);
        register_live_tools(&mut registry, &live_data(config, authz));
    }
    registry
}

/// The seven live-data tools alone: what needs no knowledge base.
pub fn live_registry(config: &Config, authz: Arc<Authorizer>) -> registry::ToolRegistry {
    let mut registry = registry::ToolRegistry::new(config.llm.tool_timeout);
    register_live_tools(&mut registry, &live_data(config, authz));
    registry
}

fn live_data(config: &Config, authz: Arc<Authorizer>) -> live::LiveData {
    let (twin, sensors) = crate::downstream::http::from_config(&config.downstream);
    live::LiveData {
        twin: Arc::new(twin),
        sensors: Arc::new(sensors),
        authz,
    }
}

/// The seven live-data tools over `data`.
pub fn register_live_tools(registry: &mut registry::ToolRegistry, data: &live::LiveData) {
    registry.register(live::ListBuildings(data.clone()));
    registry.register(live::GetBuilding(data.clone()));
    registry.register(live::GetRoom(data.clone()));
    registry.register(live::GetOccupancy(data.clone()));
    registry.register(live::ListSensors(data.clone()));
    registry.register(live::GetLatestSensorData(data.clone()));
    registry.register(live::GetSensorHistory(data.clone()));
}

/// A result's JSON Schema: an object with these properties, each `(name, JSON type)`, of which
/// those in `required` are always present. A type written `"object|null"` allows either.
pub fn result_schema(properties: &[(&str, &str)], required: &[&str]) -> serde_json::Value {
    let properties: serde_json::Map<String, serde_json::Value> = properties
        .iter()
        .map(|(name, kind)| {
            let kind: serde_json::Value = match kind.split_once('|') {
                Some((one, other)) => serde_json::json!([one, other]),
                None => serde_json::json!(kind),
            };
            (name.to_string(), serde_json::json!({ "type": kind }))
        })
        .collect();
    serde_json::json!({"type": "object", "properties": properties, "required": required})
}

/// Who a tool runs for, and what the request asked of it.
#[derive(Debug, Clone, Copy)]
pub struct ToolContext<'a> {
    pub user: &'a AuthUser,
    /// The claims header forwarded to the downstream services; `None` for the anonymous caller.
    pub claims: Option<&'a str>,
    /// The request's `top_k` for `search_docs`; `None` = the configured `TOP_K_FINAL`.
    pub top_k: Option<usize>,
    /// The buildings this answer has read, so that its tools read each once; `None` (a tool
    /// run on its own): every read goes to the twin service.
    pub reads: Option<&'a live::BuildingReads>,
}

impl<'a> ToolContext<'a> {
    pub fn for_caller(caller: &'a Caller) -> ToolContext<'a> {
        ToolContext {
            user: &caller.user,
            claims: caller.forwarded_claims.as_deref(),
            top_k: None,
            reads: None,
        }
    }
}

#[async_trait]
pub trait Tool: Send + Sync {
    type Args: DeserializeOwned + JsonSchema + Send;

    /// The name the model calls it by: the one place a tool's name is written.
    const NAME: &'static str;

    fn name(&self) -> &'static str {
        Self::NAME
    }

    /// What the model reads to decide when to call the tool.
    fn description(&self) -> &'static str;

    /// The JSON Schema of a successful result, for hosts that read results as data (MCP's
    /// `outputSchema`); see [`result_schema`].
    fn output_schema(&self) -> Option<serde_json::Value> {
        None
    }

    /// The result as JSON for the model, and a one-line summary for the trace.
    async fn run(
        &self,
        args: Self::Args,
        context: ToolContext<'_>,
    ) -> Result<(serde_json::Value, String), ToolError>;
}
