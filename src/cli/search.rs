//! `search "QUERY"`: hybrid retrieval only, no LLM, as a given caller.

use super::out::outln;
use super::{identity, render};
use anyhow::Result;
use clap::Args;
use crowdvision_agent::compose;
use crowdvision_agent::config::Config;
use crowdvision_agent::retrieval::query::keyword_terms;
use crowdvision_agent::retrieval::search::SearchMode;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// The question or keywords (not empty).
    #[arg(value_parser = non_empty_query)]
    query: String,
    /// How many results: 1 to 50 (default TOP_K_FINAL).
    #[arg(long, short = 'k', value_parser = clap::value_parser!(u64).range(1..=50))]
    top_k: Option<u64>,
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
    let retriever = compose::retriever(&config).await?;
    retriever.check_store().await?;
    let results = retriever
        .search(
            &args.query,
            &user,
            args.top_k.map(|k| k as usize),
            SearchMode::Hybrid,
        )
        .await?;
    if results.is_empty() && !args.json {
        eprintln!(
            "no passage matched \"{}\" that this caller may read; try other words, or check \
             the caller (--claims/--token) and what `crowdvision-agent db status` says is stored",
            args.query
        );
        return Ok(ExitCode::from(1));
    }
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
        if render::stdout_is_terminal() {
            let terms = if render::colour() {
                keyword_terms(&args.query)
            } else {
                Vec::new()
            };
            outln!("{}", render::search_table(&results, &terms));
        } else {
            outln!("{}", render::plain_lines(&render::search_rows(&results)));
        }
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

/// A query with something to search for: an empty one would return arbitrary passages.
pub fn non_empty_query(query: &str) -> Result<String, String> {
    if query.trim().is_empty() {
        Err("the query is empty: give the words or the question to search for".to_string())
    } else {
        Ok(query.to_string())
    }
}
