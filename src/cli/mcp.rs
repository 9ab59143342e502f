//! `mcp`: the MCP server over stdio, for hosts that start it as a subprocess (Claude Desktop,
//! VS Code, Cursor). Every call is the caller's given by `--claims` or `--token`. Stdout is the
//! protocol's; logs go to stderr as always.

use super::identity;
use anyhow::Result;
use clap::Args;
use crowdvision_agent::compose;
use crowdvision_agent::config::Config;
use crowdvision_agent::mcp::{Callers, Direct, McpServer};
use rmcp::ServiceExt;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Debug, Args)]
pub struct McpArgs {}

pub async fn run(config: Config, caller: identity::Given<'_>, _args: McpArgs) -> Result<ExitCode> {
    let caller = identity::resolve(caller, &config)?;
    let parts = compose::answering(&config).await?;
    let server = McpServer::new(
        parts.tools.clone(),
        Arc::new(Direct(parts.agent(&config))),
        parts.retriever.store.clone(),
        Callers::Fixed(Box::new(caller)),
    );
    let running = server.serve(rmcp::transport::stdio()).await?;
    tracing::info!("mcp: serving on stdio");
    running.waiting().await?;
    Ok(ExitCode::SUCCESS)
}
