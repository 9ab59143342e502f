//! `tools list` and `tools call NAME --args JSON`: the tool registry from the command line, run
//! as the given caller, no LLM. The quickest way to check what a tool returns.

use super::identity;
use super::out::outln;
use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
use crowdvision_agent::agent::tools::registry::ToolRegistry;
use crowdvision_agent::agent::tools::{standard_registry, ToolContext};
use crowdvision_agent::auth::authz::Authorizer;
use crowdvision_agent::config::Config;
use crowdvision_agent::retrieval::search::Retriever;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Debug, Args)]
pub struct ToolsArgs {
    #[command(subcommand)]
    action: ToolsAction,
}

#[derive(Debug, Subcommand)]
enum ToolsAction {
    /// The tools, their descriptions and generated argument schemas.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Run one tool as the caller and print what the model would receive.
    Call {
        name: String,
        /// The arguments as a JSON object.
        #[arg(long, default_value = "{}")]
        args: String,
    },
}

pub async fn run(config: Config, caller: identity::Given<'_>, args: ToolsArgs) -> Result<ExitCode> {
    let registry = build_registry(&config).await?;
    match args.action {
        ToolsAction::List { json } => {
            let schemas = registry.schemas();
            if json {
                outln!("{}", serde_json::to_string_pretty(&schemas)?);
            } else {
                let mut table = Table::new();
                table.load_preset(UTF8_FULL_CONDENSED).set_header(vec![
                    "tool",
                    "description",
                    "arguments",
                ]);
                for schema in schemas {
                    table.add_row(vec![
                        schema.name.to_string(),
                        schema.description.to_string(),
                        serde_json::to_string(&schema.parameters["properties"])?,
                    ]);
                }
                outln!("{table}");
            }
            Ok(ExitCode::SUCCESS)
        }
        ToolsAction::Call { name, args } => {
            let user = identity::resolve(caller, &config)?;
            let arguments: serde_json::Value =
                serde_json::from_str(&args).context("--args is not JSON")?;
            let outcome = registry
                .call(&name, arguments, ToolContext::for_caller(&user))
                .await;
            outln!("{}", serde_json::to_string_pretty(&outcome)?);
            Ok(if outcome.ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
    }
}

async fn build_registry(config: &Config) -> Result<ToolRegistry> {
    let retriever = Retriever::from_config(config).await?;
    let authz = Arc::new(Authorizer::from_config(config));
    Ok(standard_registry(config, Arc::new(retriever), authz))
}
