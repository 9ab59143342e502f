//! `ask "QUESTION"`: one answer through the agent loop, as the given caller. Prints the answer
//! and its citations; `-v` adds the tool trace, usage and cost; `--json` prints the response
//! object; `--stream` prints the answer's text as the model produces it.

use super::out::outln;
use super::{identity, render};
use anyhow::Result;
use clap::Args;
use crowdvision_agent::agent::answer::Agent;
use crowdvision_agent::auth::identity::Caller;
use crowdvision_agent::client::{RemoteAgent, RemoteIdentity};
use crowdvision_agent::compose;
use crowdvision_agent::config::Config;
use crowdvision_agent::contract::AskResponse;
use crowdvision_agent::contract::{AgentEvent, Question};
use crowdvision_agent::history::{Entry, History};
use crowdvision_agent::retrieval::store::ChunkStore;
use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Debug, Args)]
pub struct AskArgs {
    /// The question.
    question: String,
    /// Print the response object as JSON (with --stream: one JSON event a line, then `done`).
    #[arg(long)]
    json: bool,
    /// Print the answer's text as it arrives.
    #[arg(long)]
    stream: bool,
    /// Answer with this model instead of ANSWER_MODEL (needs MODEL_OVERRIDE_MIN_ROLE).
    #[arg(long)]
    model: Option<String>,
    /// Passages search_docs returns: 1 to 50 (default TOP_K_FINAL).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=50))]
    top_k: Option<u64>,
    /// Also print the tool trace, usage and cost.
    #[arg(short, long)]
    verbose: bool,
    /// Ask a running `serve` at this URL (e.g. http://localhost:3000 or …/agent) instead of
    /// answering in this process.
    #[arg(long, value_name = "URL")]
    server: Option<String>,
}

pub async fn run(config: Config, caller: identity::Given<'_>, args: AskArgs) -> Result<ExitCode> {
    let question = Question {
        model: args.model.clone(),
        top_k: args.top_k.map(|k| k as usize),
        ..Question::new(args.question.as_str())
    };
    let answerer = Answerer::build(&config, caller, args.server.as_deref()).await?;
    let started = std::time::Instant::now();
    let response = if args.stream {
        let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel();
        let json = args.json;
        let printer = tokio::spawn(async move {
            let mut text = render::StreamPrinter::new();
            while let Some(event) = receiver.recv().await {
                print_event(&event, json, &mut text);
            }
        });
        let response = answerer.answer(&question, Some(&sender)).await;
        drop(sender);
        printer.await?;
        response
    } else {
        answerer.answer(&question, None).await
    };
    answerer.close().await;
    let response = response?;
    remember(&config, "ask", &args.question, &response, started.elapsed());
    print_response(&response, &args);
    Ok(ExitCode::SUCCESS)
}

/// Appends the answer to the local history (unless `HISTORY=false`). A history that cannot be
/// written is a warning: the answer itself was given.
pub fn remember(
    config: &Config,
    command: &str,
    question: &str,
    response: &AskResponse,
    elapsed: std::time::Duration,
) {
    if !config.history.enabled {
        return;
    }
    let entry = Entry::new(command, question, response, elapsed.as_millis() as u64);
    if let Err(error) = History::at(&config.history.path).append(&entry) {
        eprintln!("warning: {error} (HISTORY=false turns the history off)");
    }
}

/// Where answers come from: this process, or a running server (`--server URL`).
pub enum Answerer {
    Local(Box<Agent>, Caller, Arc<dyn ChunkStore>),
    Remote(RemoteAgent, RemoteIdentity),
}

impl Answerer {
    pub async fn build(
        config: &Config,
        caller: identity::Given<'_>,
        server: Option<&str>,
    ) -> Result<Answerer> {
        Ok(match server {
            Some(url) => Answerer::Remote(RemoteAgent::new(url)?, identity::remote(caller)?),
            None => {
                let parts = compose::answering(config).await?;
                Answerer::Local(
                    Box::new(parts.agent(config)),
                    identity::resolve(caller, config)?,
                    parts.retriever.store.clone(),
                )
            }
        })
    }

    /// Closes the knowledge base of a local answerer (see [`ChunkStore::close`]).
    pub async fn close(&self) {
        if let Answerer::Local(_, _, store) = self {
            store.close().await;
        }
    }

    /// The model answering when none is chosen; `None` when a server decides.
    pub fn default_model(&self) -> Option<&str> {
        match self {
            Answerer::Local(agent, ..) => Some(agent.default_model()),
            Answerer::Remote(..) => None,
        }
    }

    pub async fn answer(
        &self,
        question: &Question,
        events: Option<&tokio::sync::mpsc::UnboundedSender<AgentEvent>>,
    ) -> Result<AskResponse> {
        Ok(match self {
            Answerer::Local(agent, caller, _) => agent.answer(question, caller, events).await?,
            Answerer::Remote(remote, identity) => remote.ask(question, identity, events).await?,
        })
    }
}

fn print_event(event: &AgentEvent, json: bool, text: &mut render::StreamPrinter) {
    let mut out = std::io::stdout().lock();
    if json {
        let _ = writeln!(out, "{}", serde_json::to_string(event).unwrap_or_default());
    } else {
        match event {
            AgentEvent::Token { text: delta } => text.token(&mut out, delta),
            AgentEvent::Retract => text.retract(&mut out),
            AgentEvent::ToolCall { tool, .. } => eprintln!("… {tool}"),
            AgentEvent::ToolResult { .. } => {}
        }
    }
    let _ = out.flush();
}

fn print_response(response: &AskResponse, args: &AskArgs) {
    if args.json {
        let body = if args.stream {
            serde_json::json!({"event": "done", "response": response})
        } else {
            serde_json::to_value(response).unwrap_or_default()
        };
        outln!("{body}");
        return;
    }
    if args.stream {
        // The text is already out, filtered as it streamed (no invented marker was shown).
        outln!();
    } else {
        outln!("{}", response.answer);
    }
    if !response.citations.is_empty() {
        outln!(
            "\nSources:\n{}",
            render::citation_lines(response).trim_end()
        );
    }
    if args.verbose {
        if !response.trace.is_empty() {
            outln!("\n{}", render::trace_table(&response.trace));
        }
        outln!("\n{}", render::usage_line(response));
        let invented = &response.retrieval.hallucinated_citations;
        if !invented.is_empty() {
            let named: Vec<&str> = invented
                .iter()
                .map(String::as_str)
                .filter(|id| !id.is_empty())
                .collect();
            if named.is_empty() {
                outln!("removed {} invented citations", invented.len());
            } else {
                outln!("removed invented citations: {}", named.join(", "));
            }
        }
        let unsupported = &response.retrieval.unsupported_citations;
        if !unsupported.is_empty() {
            outln!(
                "citations whose passage does not support their sentence: {}",
                unsupported.join(", ")
            );
        }
    }
}
