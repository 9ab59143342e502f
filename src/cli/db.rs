//! `db migrate | status | reset`: schema management for the configured store.

use super::out::outln;
use super::render;
use anyhow::Result;
use clap::{Args, Subcommand};
use crowdvision_agent::config::Config;
use crowdvision_agent::retrieval::store;
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
        /// Confirm: the knowledge base is deleted.
        #[arg(long)]
        yes: bool,
    },
}

pub async fn run(config: Config, args: DbArgs) -> Result<ExitCode> {
    // Only `migrate` creates a store; looking at or resetting one that is not there says so.
    let store = match args.action {
        DbAction::Migrate => store::open(&config.store.location).await?,
        _ => store::open_existing(&config.store.location).await?,
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
                eprintln!("db reset deletes the whole knowledge base; run it again with --yes");
                return Ok(ExitCode::from(super::EXIT_USAGE));
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
