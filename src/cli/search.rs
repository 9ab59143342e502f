//! `search "QUERY"`: hybrid retrieval only, no LLM, as a given caller.

use super::out::outln;
use super::{identity, render};
use anyhow::Result;
use clap::Args;
use crowdvision_agent::config::Config;
use crowdvision_agent::retrieval::search::{Retriever, SearchMode};
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// The question or keywords.
    query: String,
    /// How many results (default TOP_K_FINAL, at most 50).
    #[arg(long, short = 'k')]
    top_k: Option<usize>,
    /// Print the results as JSON.
    #[arg(long)]
    json: bool,
    /// Also print the plans and timings of the vector and keyword searches.
    #[arg(long)]
    explain: bool,
}

pub async fn run(
    config: Config,
    caller: identity::Given<'_>,
    args: SearchArgs,
) -> Result<ExitCode> {
    let user = identity::resolve(caller, &config)?.user;
    let retriever = Retriever::from_config(&config).await?;
    retriever.check_store().await?;
    let results = retriever
        .search(&args.query, &user, args.top_k, SearchMode::Hybrid)
        .await?;
    let plans = if args.explain {
        Some(
            retriever
                .explain(&args.query, &user, results.len().max(1))
                .await?,
        )
    } else {
        None
    };
    if args.json {
        let body = serde_json::json!({ "results": results, "explain": plans });
        outln!("{}", serde_json::to_string_pretty(&body)?);
    } else {
        outln!("{}", render::search_table(&results));
        for plan in plans.iter().flatten() {
            outln!(
                "\n{} search: {:.2} ms\n{}",
                plan.search,
                plan.milliseconds,
                plan.plan
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
