//! `tools list` and `tools call NAME --args JSON`: the tool registry from the command line, run
//! as the given caller, no LLM. The quickest way to check what a tool returns.

use super::out::outln;
use super::{identity, render};
use anyhow::Result;
use clap::{Args, Subcommand};
use crowdvision_agent::agent::tools::registry::ToolRegistry;
use crowdvision_agent::agent::tools::ToolContext;
use crowdvision_agent::compose;
use crowdvision_agent::config::Config;
use crowdvision_agent::retrieval::store::StoreError;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct ToolsArgs {
    #[command(subcommand)]
    action: ToolsAction,
}

#[derive(Debug, Subcommand)]
enum ToolsAction {
    /// The tools, their descriptions and generated argument schemas.
    List {
        /// Print the tools with their full argument schemas as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run one tool as the caller and print what the model would receive.
    Call {
        /// The tool to run, as `tools list` names it (e.g. get_occupancy).
        name: String,
        /// The arguments as a JSON object.
        #[arg(long, default_value = "{}")]
        args: String,
    },
}

pub async fn run(config: Config, caller: identity::Given<'_>, args: ToolsArgs) -> Result<ExitCode> {
    let needs_store = match &args.action {
        ToolsAction::List { .. } => Needs::IfThere,
        ToolsAction::Call { name, .. } if name == "search_docs" => Needs::Store,
        ToolsAction::Call { .. } => Needs::Nothing,
    };
    let registry = build_registry(&config, needs_store).await?;
    match args.action {
        ToolsAction::List { json } => {
            let schemas = registry.schemas();
            if json {
                outln!("{}", serde_json::to_string_pretty(&schemas)?);
            } else {
                let rows: Vec<Vec<String>> = schemas
                    .iter()
                    .map(|schema| {
                        vec![
                            schema.name.to_string(),
                            argument_names(&schema.parameters),
                            schema.description.to_string(),
                        ]
                    })
                    .collect();
                if render::stdout_is_terminal() {
                    let mut table = render::table(&["tool", "arguments", "description"]);
                    for row in rows {
                        table.add_row(row);
                    }
                    outln!("{table}");
                } else {
                    outln!("{}", render::plain_lines(&rows));
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        ToolsAction::Call { name, args } => {
            let user = identity::resolve(caller, &config)?;
            let arguments: serde_json::Value = serde_json::from_str(&args)
                .map_err(|e| super::usage(format!("--args is not JSON: {e}")))?;
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

/// A tool's arguments by name, optional ones marked `?` (`building_id, room_id?`); the full
/// schemas are in `tools list --json`.
fn argument_names(parameters: &serde_json::Value) -> String {
    let required: Vec<&str> = parameters["required"]
        .as_array()
        .map(|names| names.iter().filter_map(|n| n.as_str()).collect())
        .unwrap_or_default();
    let Some(properties) = parameters["properties"].as_object() else {
        return String::new();
    };
    properties
        .keys()
        .map(|name| {
            if required.contains(&name.as_str()) {
                name.clone()
            } else {
                format!("{name}?")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// What a `tools` action needs of the knowledge base: the live-data tools need none.
enum Needs {
    Store,
    IfThere,
    Nothing,
}

async fn build_registry(config: &Config, needs: Needs) -> Result<ToolRegistry> {
    let retriever = match needs {
        Needs::Nothing => None,
        Needs::Store => Some(compose::retriever(config).await?),
        Needs::IfThere => match compose::retriever(config).await {
            Ok(retriever) => Some(retriever),
            Err(error @ StoreError::NoKnowledgeBase { .. }) => {
                eprintln!("note: search_docs is not listed: {error}");
                None
            }
            Err(error) => return Err(error.into()),
        },
    };
    Ok(compose::registry(config, retriever))
}
