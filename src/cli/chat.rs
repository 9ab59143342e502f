//! `chat`: a REPL over the same agent as `ask`, remembering the conversation. Answers stream as
//! they are produced. Ctrl-C while an answer is running cancels that answer (the question is
//! forgotten) and returns to the prompt; Ctrl-C at the prompt clears the line; Ctrl-D exits.
//! Lines typed are kept in a history file across sessions.

use super::ask::Answerer;
use super::out::outln;
use super::{identity, render};
use anyhow::Result;
use clap::Args;
use crowdvision_agent::agent::conversation::Conversation;
use crowdvision_agent::auth::AuthUser;
use crowdvision_agent::config::Config;
use crowdvision_agent::contract::{AgentEvent, AskResponse};
use crowdvision_agent::conversations::{self as kept, ConversationStore, Feedback, Rating, Reason};
use rustyline::error::ReadlineError;
use rustyline::DefaultEditor;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

const HELP: &str = "\
Type a question, or a command:
  /model [NAME]  pick the answer model (from ALLOWED_MODELS, on a terminal), or use NAME from now
                 on (/model default: the configured one)
  /trace         the tool calls of the last answer
  /cost          tokens and cost of this session
  /reset         forget the conversation so far
  /good          the last answer was right (kept with the conversation)
  /bad REASON [COMMENT]
                 the last answer was wrong: wrong-figure, wrong-building, wrong-language,
                 missing-source, not-helpful or other, with an optional comment
  /help          this text
Ctrl-C cancels an answer in progress; Ctrl-D leaves.";

#[derive(Debug, Args)]
pub struct ChatArgs {
    /// Answer with this model instead of ANSWER_MODEL (needs MODEL_OVERRIDE_MIN_ROLE).
    #[arg(long)]
    model: Option<String>,
    /// Passages search_docs returns (1 to 50; default TOP_K_FINAL).
    #[arg(long)]
    top_k: Option<usize>,
    /// Where typed lines are kept between sessions (default: in the user's data directory).
    #[arg(long, value_name = "FILE")]
    history: Option<PathBuf>,
    /// Chat with a running `serve` at this URL (e.g. http://localhost:3000 or …/agent) instead
    /// of answering in this process. The conversation is kept here and sent with each question.
    #[arg(long, value_name = "URL")]
    server: Option<String>,
    /// Go on with this conversation kept in the store (`conversations` lists them). Without
    /// it, a new conversation is kept from the first answer (CONVERSATIONS=false: none).
    #[arg(long, value_name = "ID", conflicts_with = "server")]
    resume: Option<String>,
}

/// Where this session's turns are kept: the store's conversations, as `serve` keeps them.
struct Kept {
    store: std::sync::Arc<dyn ConversationStore>,
    caller: AuthUser,
    id: Option<String>,
    /// The last answer kept: what `/good` and `/bad` are about.
    last_turn: Option<i64>,
    since_ms: i64,
}

impl Kept {
    /// The store's conversations for a local chat; `None` (said once) when they cannot be kept.
    async fn open(config: &Config, caller: identity::Given<'_>) -> Result<Option<Kept>> {
        let caller = identity::resolve(caller, config)?.user;
        match super::conversations::store_of(config).await {
            Ok(store) => Ok(Some(Kept {
                store,
                caller,
                id: None,
                last_turn: None,
                since_ms: super::conversations::cutoff(config),
            })),
            Err(error) => {
                eprintln!("(this chat is not kept: {error})");
                Ok(None)
            }
        }
    }

    /// Adds an answered turn, starting the conversation at the first one.
    async fn keep(&mut self, question: &str, response: &AskResponse) -> Result<()> {
        let id = match &self.id {
            Some(id) => id.clone(),
            None => {
                let id = kept::new_id();
                let title = kept::title_of(question);
                self.store
                    .create(&self.caller.sub, &id, &title, kept::now_ms())
                    .await?;
                self.id = Some(id.clone());
                id
            }
        };
        let language = crowdvision_agent::agent::question::language::detect(question)
            .map(|language| language.code().to_string());
        let turn = kept::Turn::of(question, response, &self.caller, language, kept::now_ms());
        match self
            .store
            .append(&self.caller.sub, &id, &turn, self.since_ms)
            .await?
        {
            Some(turn_id) => self.last_turn = Some(turn_id),
            None => anyhow::bail!("conversation {id} is gone"),
        }
        Ok(())
    }

    /// `/good` or `/bad REASON [COMMENT]` on the last answer kept.
    async fn judge(&self, command: &str) -> Result<String> {
        let (Some(id), Some(turn_id)) = (&self.id, self.last_turn) else {
            anyhow::bail!("there is no answer to rate yet");
        };
        let feedback = feedback_of(command, id, turn_id)?;
        if !self
            .store
            .give_feedback(&self.caller, &feedback, kept::now_ms())
            .await?
        {
            anyhow::bail!("conversation {id} is gone");
        }
        kept::score_the_answers_trace(
            self.store.as_ref(),
            &self.caller.sub,
            &feedback,
            self.since_ms,
        )
        .await;
        Ok(match feedback.reason {
            None => "Thanks: noted as a good answer.".to_string(),
            Some(reason) => format!("Thanks: noted as a bad answer ({}).", reason.as_str()),
        })
    }
}

/// The feedback `/good` or `/bad REASON [COMMENT]` gives on turn `turn_id`. Pure.
fn feedback_of(command: &str, conversation_id: &str, turn_id: i64) -> Result<Feedback> {
    let mut words = command.splitn(3, char::is_whitespace);
    let (rating, reason) = match words.next() {
        Some("good") => (Rating::Up, None),
        Some("bad") => {
            let named = words.next().unwrap_or_default();
            let reason = Reason::parse(named).ok_or_else(|| {
                anyhow::anyhow!(
                    "say why: /bad wrong-figure|wrong-building|wrong-language|missing-source|\
                     not-helpful|other [comment]"
                )
            })?;
            (Rating::Down, Some(reason))
        }
        _ => anyhow::bail!("not a rating: /good or /bad REASON"),
    };
    let comment = words.next().map(str::trim).filter(|c| !c.is_empty());
    Ok(Feedback {
        conversation_id: conversation_id.to_string(),
        turn_id,
        rating,
        reason,
        comment: comment.map(str::to_string),
        expected: None,
    }
    .normalised()?)
}

pub async fn run(config: Config, caller: identity::Given<'_>, args: ChatArgs) -> Result<ExitCode> {
    let answerer = Answerer::build(&config, caller, args.server.as_deref()).await?;
    let history_file = args.history.unwrap_or_else(default_history_file);
    let mut editor = DefaultEditor::new()?;
    // A missing history file is the normal first run.
    let _ = editor.load_history(&history_file);
    let mut conversation = Conversation::new(args.model, args.top_k);
    let mut kept = match (&args.server, &args.resume) {
        (Some(_), _) => None,
        (None, None) => Kept::open(&config, caller).await?,
        (None, Some(id)) => {
            let store = super::conversations::store_of(&config).await?;
            let user = identity::resolve(caller, &config)?.user;
            let since_ms = super::conversations::cutoff(&config);
            let Some(resumed) = store.get(&user.sub, id, since_ms).await? else {
                eprintln!(
                    "no conversation {id} of yours; `crowdvision-agent conversations` lists them"
                );
                return Ok(ExitCode::FAILURE);
            };
            outln!(
                "Resuming \"{}\" ({} turns).",
                resumed.summary.title,
                resumed.turns.len()
            );
            conversation.resume(kept::history_of(&resumed.turns));
            Some(Kept {
                store,
                caller: user,
                id: Some(id.clone()),
                last_turn: resumed.turns.last().map(|turn| turn.id),
                since_ms,
            })
        }
    };
    let model = match (&args.server, answerer.default_model()) {
        (Some(url), _) => format!("server {url}"),
        (None, model) => format!("model {}", model.unwrap_or_default()),
    };
    outln!("CrowdVision chat, {model}. /help for commands, Ctrl-D to leave.");
    loop {
        let line = tokio::task::block_in_place(|| editor.readline("> "));
        let line = match line {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(error) => return Err(error.into()),
        };
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let _ = editor.add_history_entry(line);
        if let Some(rating) = line
            .strip_prefix('/')
            .filter(|command| command.starts_with("good") || command.starts_with("bad"))
        {
            let said = match kept.as_ref() {
                Some(kept) => kept.judge(rating).await,
                None => Err(anyhow::anyhow!(
                    "this chat is not kept, so its answers cannot be rated"
                )),
            };
            match said {
                Ok(thanks) => outln!("{thanks}"),
                Err(error) => eprintln!("{error}"),
            }
        } else if let Some(command) = line.strip_prefix('/') {
            run_command(
                command,
                &mut conversation,
                &answerer,
                &config.access.allowed_models,
            );
        } else if let Some(response) = answer(line, &mut conversation, &answerer, &config).await {
            if let Some(kept) = kept.as_mut() {
                if let Err(error) = kept.keep(line, &response).await {
                    eprintln!("(this answer was not kept: {error})");
                }
            }
        }
    }
    if let Some(id) = kept.and_then(|kept| kept.id) {
        outln!("Kept as {id}: `crowdvision-agent chat --resume {id}` goes on with it.");
    }
    if let Some(parent) = history_file.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    if let Err(error) = editor.save_history(&history_file) {
        eprintln!(
            "could not save the history to {}: {error}",
            history_file.display()
        );
    }
    answerer.close().await;
    Ok(ExitCode::SUCCESS)
}

fn default_history_file() -> PathBuf {
    directories::ProjectDirs::from("", "", "crowdvision-agent")
        .map(|dirs| dirs.data_dir().join("chat_history.txt"))
        .unwrap_or_else(|| PathBuf::from(".crowdvision-agent-chat-history"))
}

/// Streams one answer; Ctrl-C drops it (closing the provider connection) and keeps the session.
/// The answer, when one was given.
async fn answer(
    text: &str,
    conversation: &mut Conversation,
    answerer: &Answerer,
    config: &Config,
) -> Option<AskResponse> {
    let question = conversation.question(text);
    let started = std::time::Instant::now();
    let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel();
    let printer = tokio::spawn(async move {
        let mut printer = render::StreamPrinter::new();
        while let Some(event) = receiver.recv().await {
            let mut out = std::io::stdout().lock();
            match event {
                AgentEvent::Token { text } => printer.token(&mut out, &text),
                AgentEvent::Retract => printer.retract(&mut out),
                AgentEvent::ToolCall { tool, .. } => {
                    let _ = writeln!(out, "… {tool}");
                }
                AgentEvent::ToolResult { .. } => {}
            }
            let _ = out.flush();
        }
    });
    let outcome = tokio::select! {
        result = answerer.answer(&question, Some(&sender)) => Some(result),
        _ = tokio::signal::ctrl_c() => None,
    };
    drop(sender);
    let _ = printer.await;
    match outcome {
        None => {
            outln!("\n(cancelled)");
            None
        }
        Some(Err(error)) => {
            outln!("\nerror: {error}");
            None
        }
        Some(Ok(response)) => {
            outln!();
            if !response.citations.is_empty() {
                outln!("Sources:\n{}", render::citation_lines(&response).trim_end());
            }
            super::ask::remember(config, "chat", text, &response, started.elapsed());
            conversation.record(text, response.clone());
            Some(response)
        }
    }
}

/// Offers the default model and the allowed ones to pick from, on a terminal; `None` when there
/// is nothing to pick from, no terminal, or the pick was cancelled.
fn pick_model(current: &str, default_model: &str, allowed: &[String]) -> Option<String> {
    use std::io::IsTerminal;
    let mut models = vec![default_model.to_string()];
    models.extend(allowed.iter().filter(|m| *m != default_model).cloned());
    if models.len() < 2 || !std::io::stdin().is_terminal() {
        return None;
    }
    let chosen = dialoguer::Select::new()
        .with_prompt("Answer with (models above the default need MODEL_OVERRIDE_MIN_ROLE)")
        .items(&models)
        .default(models.iter().position(|m| m == current).unwrap_or(0))
        .interact_opt()
        .ok()??;
    models.get(chosen).cloned()
}

fn run_command(
    command: &str,
    conversation: &mut Conversation,
    answerer: &Answerer,
    allowed_models: &[String],
) {
    let default_model = answerer
        .default_model()
        .unwrap_or("the server's answer model");
    let (name, argument) = command
        .split_once(char::is_whitespace)
        .map_or((command, ""), |(n, a)| (n, a.trim()));
    match name {
        "help" => outln!("{HELP}"),
        "model" if argument.is_empty() => {
            let current = conversation.model.as_deref().unwrap_or(default_model);
            match pick_model(current, default_model, allowed_models) {
                Some(picked) if picked == default_model => conversation.model = None,
                Some(picked) => conversation.model = Some(picked),
                None => {}
            }
            outln!(
                "model: {}",
                conversation.model.as_deref().unwrap_or(default_model)
            );
        }
        "model" if argument == "default" => {
            conversation.model = None;
            outln!("model: {default_model}");
        }
        "model" => {
            // Checked against the override gate when the next question is asked.
            conversation.model = Some(argument.to_string());
            outln!("model: {argument}");
        }
        "trace" => match &conversation.last {
            Some(last) if !last.trace.is_empty() => {
                outln!("{}", render::trace_table(&last.trace))
            }
            Some(_) => outln!("the last answer called no tools"),
            None => outln!("no answer yet"),
        },
        "cost" => {
            let totals = &conversation.totals;
            let estimated = match totals.unpriced_answers {
                0 => format!("${:.6}", totals.estimated_usd),
                n if n == totals.answers => "n/a (model not in the price table)".to_string(),
                n => format!("${:.6} ({n} answers not priced)", totals.estimated_usd),
            };
            outln!(
                "{} answers · tokens {} in + {} out = {} · estimated {estimated} · provider {}",
                totals.answers,
                totals.usage.prompt_tokens,
                totals.usage.completion_tokens,
                totals.usage.total_tokens,
                totals
                    .provider_usd
                    .map_or("n/a".to_string(), |usd| format!("${usd:.6}")),
            );
        }
        "reset" => {
            conversation.reset();
            outln!("conversation forgotten");
        }
        other => outln!("unknown command /{other}; /help lists them"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_and_bad_become_feedback_on_the_last_answer() {
        let good = feedback_of("good", "c_1", 7).unwrap();
        assert_eq!(
            (good.rating, good.reason, good.turn_id),
            (Rating::Up, None, 7)
        );
        let bad = feedback_of("bad wrong-figure poor starts at 1000", "c_1", 7).unwrap();
        assert_eq!(bad.rating, Rating::Down);
        assert_eq!(bad.reason, Some(Reason::WrongFigure));
        assert_eq!(bad.comment.as_deref(), Some("poor starts at 1000"));
        assert_eq!(feedback_of("bad other", "c_1", 7).unwrap().comment, None);
        assert!(
            feedback_of("bad", "c_1", 7).is_err(),
            "a complaint names its reason"
        );
        assert!(feedback_of("bad rude", "c_1", 7).is_err());
    }
}
