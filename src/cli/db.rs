//! `db migrate | status | reset`: schema management for the configured store.

use super::out::outln;
use super::render;
use anyhow::Result;
use clap::{Args, Subcommand};
use crowdvision_agent::compose;
use crowdvision_agent::config::Config;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct DbArgs {
    #[command(subcommand)]
    action: DbAction,
}

#[derive(Debug, Subcommand)]
enum DbAction {
    /// Apply pending migrations (creates the store when it does not exist).
    Migrate,
    /// Show migrations, the recorded embedding model and dimension, and counts.
    Status {
        /// Print the status as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Drop every table the agent created, to rebuild with another embedding model or size.
    Reset {
        /// Delete without asking (on a terminal, reset asks first; elsewhere --yes is needed).
        #[arg(long)]
        yes: bool,
    },
}

/// Asks on a terminal whether to delete the knowledge base at `location` (default: no); `None`
/// off a terminal, where nothing is asked: scripts pass `--yes`.
fn confirmed_on_terminal(location: &str) -> Result<Option<bool>> {
    use std::io::IsTerminal;
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return Ok(None);
    }
    Ok(Some(
        dialoguer::Confirm::new()
            .with_prompt(format!(
                "Delete the whole knowledge base at {location}? It cannot be undone"
            ))
            .default(false)
            .interact()?,
    ))
}

pub async fn run(config: Config, args: DbArgs) -> Result<ExitCode> {
    // Only `migrate` creates a store; looking at or resetting one that is not there says so.
    let store = match args.action {
        DbAction::Migrate => compose::store(&config, true).await?,
        _ => compose::store(&config, false).await?,
    };
    match args.action {
        DbAction::Migrate => {
            let applied = store.migrate(config.embedding.dim).await?;
            if applied.is_empty() {
                outln!("{}: up to date", store.backend());
            } else {
                outln!("{}: applied migrations {applied:?}", store.backend());
            }
        }
        DbAction::Status { json } => {
            let status = store.status().await?;
            if json {
                outln!("{}", serde_json::to_string_pretty(&status)?);
            } else {
                outln!("{}", render::status_table(&status));
            }
        }
        DbAction::Reset { yes } => {
            if !yes {
                match confirmed_on_terminal(&store.status().await?.location)? {
                    Some(true) => {}
                    Some(false) => {
                        eprintln!("nothing deleted");
                        return Ok(ExitCode::FAILURE);
                    }
                    None => {
                        eprintln!(
                            "db reset deletes the whole knowledge base; run it on a terminal to \
                             confirm, or pass --yes"
                        );
                        return Ok(ExitCode::from(super::EXIT_USAGE));
                    }
                }
            }
            store.reset().await?;
            outln!(
                "{}: knowledge base deleted; run `crowdvision-agent ingest` to rebuild",
                store.backend()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
