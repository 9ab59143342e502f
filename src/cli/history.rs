//! `history [list|show ID|search TEXT]`: the local log of `ask` and `chat` answers.

use super::out::outln;
use super::render;
use anyhow::Result;
use clap::{Args, Subcommand};
use crowdvision_agent::config::Config;
use crowdvision_agent::history::{Entry, History};
use std::process::ExitCode;

/// Answers `history` lists when not told how many.
const DEFAULT_LAST: usize = 20;

#[derive(Debug, Args)]
pub struct HistoryArgs {
    #[command(subcommand)]
    action: Option<HistoryAction>,
    /// Print entries as JSON, one object a line.
    #[arg(long, global = true)]
    json: bool,
}

#[derive(Debug, Subcommand)]
enum HistoryAction {
    /// The latest answers, oldest first (the default action).
    List {
        /// How many of the latest answers.
        #[arg(long, short = 'n', default_value_t = DEFAULT_LAST)]
        last: usize,
    },
    /// One answer in full: question, answer, decision, citations, model, tokens, cost, time.
    Show {
        /// The number `history list` gives it.
        id: usize,
    },
    /// Answers whose question or answer holds this text (any case).
    Search {
        /// The text to look for.
        text: String,
    },
}

pub fn run(config: Config, args: HistoryArgs) -> Result<ExitCode> {
    let history = History::at(&config.history.path);
    let entries = history.read()?;
    let action = args
        .action
        .unwrap_or(HistoryAction::List { last: DEFAULT_LAST });
    let chosen: Vec<&Entry> = match &action {
        HistoryAction::List { last } => entries.iter().rev().take(*last).rev().collect(),
        HistoryAction::Search { text } => entries.iter().filter(|e| e.mentions(text)).collect(),
        HistoryAction::Show { id } => match entries.iter().find(|e| e.id == *id) {
            Some(entry) => vec![entry],
            None => {
                eprintln!(
                    "no answer {id} in {} ({} answers); `crowdvision-agent history` lists them",
                    history.path().display(),
                    entries.len()
                );
                return Ok(ExitCode::FAILURE);
            }
        },
    };
    if chosen.is_empty() {
        let why = if config.history.enabled {
            "ask or chat adds one per answer"
        } else {
            "HISTORY=false keeps it off"
        };
        eprintln!(
            "no answers in the history at {} ({why})",
            history.path().display()
        );
        return Ok(ExitCode::FAILURE);
    }
    for entry in &chosen {
        if args.json {
            let mut value = serde_json::to_value(entry)?;
            value["id"] = serde_json::json!(entry.id);
            outln!("{value}");
        } else if matches!(action, HistoryAction::Show { .. }) {
            outln!("{}", full(entry));
        } else {
            outln!("{}", summary_line(entry));
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn summary_line(entry: &Entry) -> String {
    let question: String = entry.question.chars().take(70).collect();
    let fields = [
        entry.id.to_string(),
        entry.at.format("%Y-%m-%d %H:%M").to_string(),
        entry.decision.as_str().to_string(),
        question,
    ];
    if render::stdout_is_terminal() {
        format!(
            "{:>4}  {}  {:<9}  {}",
            fields[0], fields[1], fields[2], fields[3]
        )
    } else {
        fields.join("\t")
    }
}

fn full(entry: &Entry) -> String {
    let cost = entry
        .cost_usd
        .map_or("unknown".to_string(), |c| format!("${c:.6}"));
    let mut text = format!(
        "#{} {} ({}, {})\nQ: {}\n\n{}\n",
        entry.id,
        entry.at.format("%Y-%m-%d %H:%M:%S UTC"),
        entry.command,
        entry.decision.as_str(),
        entry.question,
        entry.answer
    );
    if !entry.citations.is_empty() {
        text.push_str(&format!("\nSources:\n  {}\n", entry.citations.join("\n  ")));
    }
    text.push_str(&format!(
        "\n{} · {} prompt + {} completion tokens · {cost} · {:.1} s",
        entry.model,
        entry.usage.prompt_tokens,
        entry.usage.completion_tokens,
        entry.milliseconds as f64 / 1000.0
    ));
    text
}
