//! `conversations [list|show ID|delete ID]`: the caller's conversations kept in the store,
//! as `serve` keeps them (`--claims`/`--token` name the caller, as for `ask`). `chat --resume
//! ID` goes on with one.

use super::identity;
use super::out::outln;
use anyhow::{bail, Result};
use clap::{Args, Subcommand};
use crowdvision_agent::config::Config;
use crowdvision_agent::conversations::{self as kept, ConversationStore, ListQuery};
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Debug, Args)]
pub struct ConversationsArgs {
    #[command(subcommand)]
    action: Option<ConversationsAction>,
    /// Print as JSON.
    #[arg(long, global = true)]
    json: bool,
}

#[derive(Debug, Subcommand)]
enum ConversationsAction {
    /// The caller's conversations, newest first (the default action).
    List {
        /// How many (1 to 100).
        #[arg(long, short = 'n', default_value_t = kept::DEFAULT_PAGE)]
        last: u32,
        /// Only those holding every word of this text in a question, an answer or the title.
        #[arg(long, short = 'q')]
        search: Option<String>,
    },
    /// One conversation with its turns.
    Show { id: String },
    /// Deletes a conversation and its turns.
    Delete { id: String },
}

/// The conversations of the configured store, or why there are none.
pub async fn store_of(config: &Config) -> Result<Arc<dyn ConversationStore>> {
    if !config.server.conversations {
        bail!("CONVERSATIONS=false: no conversations are kept");
    }
    let store = crowdvision_agent::compose::store(config, false).await?;
    store.require_migrated().await?;
    Ok(store.conversations())
}

pub fn cutoff(config: &Config) -> i64 {
    kept::retention_cutoff(kept::now_ms(), config.server.conversation_retention_days)
}

pub async fn run(
    config: Config,
    caller: identity::Given<'_>,
    args: ConversationsArgs,
) -> Result<ExitCode> {
    let owner = identity::resolve(caller, &config)?.user.sub;
    let store = store_of(&config).await?;
    let since_ms = cutoff(&config);
    let action = args.action.unwrap_or(ConversationsAction::List {
        last: kept::DEFAULT_PAGE,
        search: None,
    });
    match action {
        ConversationsAction::List { last, search } => {
            let query = ListQuery {
                limit: kept::page_size(Some(last)),
                offset: 0,
                since_ms,
                words: kept::search_patterns(search.as_deref()),
            };
            let listed = store.list(&owner, &query).await?;
            if listed.is_empty() {
                eprintln!("no conversations (`chat` starts one; serve's page keeps them too)");
                return Ok(ExitCode::FAILURE);
            }
            for conversation in listed {
                if args.json {
                    outln!("{}", serde_json::to_string(&conversation)?);
                } else {
                    outln!(
                        "{}  {}  {} turns  {}",
                        conversation.id,
                        when(conversation.updated_ms),
                        conversation.turn_count,
                        conversation.title
                    );
                }
            }
        }
        ConversationsAction::Show { id } => {
            let Some(conversation) = store.get(&owner, &id, since_ms).await? else {
                return not_found(&id);
            };
            if args.json {
                outln!("{}", serde_json::to_string_pretty(&conversation)?);
            } else {
                outln!(
                    "{}  {}",
                    conversation.summary.id,
                    conversation.summary.title
                );
                for turn in &conversation.turns {
                    outln!("\n[{}] > {}", when(turn.at_ms), turn.question);
                    outln!("{}", turn.answer);
                }
            }
        }
        ConversationsAction::Delete { id } => {
            if !store.delete(&owner, &id).await? {
                return not_found(&id);
            }
            outln!("deleted {id}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn not_found(id: &str) -> Result<ExitCode> {
    eprintln!("no conversation {id} of yours; `crowdvision-agent conversations` lists them");
    Ok(ExitCode::FAILURE)
}

/// A time in milliseconds as "2026-12-04 14:05 UTC".
fn when(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|at| at.format("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_default()
}
