//! The command-line surface: the clap definition of every subcommand, and dispatch to one thin
//! module per subcommand.

mod ask;
mod chat;
mod chunk;
mod db;
mod doctor;
mod eval;
mod identity;
mod ingest;
mod out;
mod render;
mod search;
mod serve;
mod sim;
mod tools;

use anyhow::Result;
use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use crowdvision_agent::config::Config;
use out::out;
use std::path::PathBuf;
use std::process::ExitCode;

/// Exit code for usage and configuration errors.
pub const EXIT_USAGE: u8 = 2;

/// A command used wrongly (arguments, identity, files it was given): exit 2, as configuration
/// errors are.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// `error` as a usage error, its causes kept in the message.
pub fn usage(error: impl std::fmt::Display) -> anyhow::Error {
    anyhow::Error::new(UsageError(format!("{error:#}")))
}

#[derive(Debug, Parser)]
#[command(
    name = "crowdvision-agent",
    version,
    about = "Answers questions about buildings, rooms, occupancy and sensors from a permission-filtered knowledge base and live data",
    propagate_version = true
)]
pub struct Cli {
    /// Optional settings file (YAML mapping of the environment variable names).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Act as this caller: a file holding gateway claims (JSON, or its base64).
    #[arg(long, global = true, value_name = "FILE")]
    pub claims: Option<PathBuf>,

    /// Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET).
    #[arg(long, global = true, value_name = "JWT")]
    pub token: Option<String>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Walk Markdown sources, chunk, embed and store them.
    Ingest(ingest::IngestArgs),
    /// Print the chunks files would produce, one JSON object a line with --json.
    Chunk(chunk::ChunkArgs),
    /// Hybrid retrieval only, no LLM: ranked chunks with both ranks and the fused score.
    Search(search::SearchArgs),
    /// Answer one question: text, citations, tool trace, usage, cost, decision.
    Ask(ask::AskArgs),
    /// Multi-turn conversation with history, the same loop as ask.
    Chat(chat::ChatArgs),
    /// Golden-dataset evaluation: assertions, an LLM judge, xfail, repeats, model sweeps, reports.
    Eval(eval::EvalArgs),
    /// Serve the HTTP API: POST /ask (JSON or SSE), GET /healthz, GET /readyz.
    Serve(serve::ServeArgs),
    /// The tool registry: list the tools, or call one directly as the caller.
    Tools(tools::ToolsArgs),
    /// Simulate twin-service and sensor-service from a YAML fixture.
    Sim(sim::SimArgs),
    /// Schema management for the configured store.
    Db(db::DbArgs),
    /// The effective settings and where each came from, then a live check of the store, the
    /// provider, the embedder and the downstream services.
    Doctor(doctor::DoctorArgs),
    /// Print a shell completion script.
    Completions {
        #[arg(value_enum)]
        shell: Shell,
    },
    /// Print the man page (roff).
    Man,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    Elvish,
    Powershell,
}

pub async fn run(cli: Cli) -> Result<ExitCode> {
    let load = || Config::load(cli.config.as_deref());
    let caller = identity::Given {
        claims: cli.claims.as_deref(),
        token: cli.token.as_deref(),
    };
    match cli.command {
        Command::Ingest(args) => ingest::run(load()?, args).await,
        Command::Chunk(args) => chunk::run(load()?, args),
        Command::Db(args) => db::run(load()?, args).await,
        Command::Completions { shell } => {
            out!("{}", completion_script(shell));
            Ok(ExitCode::SUCCESS)
        }
        Command::Man => {
            out!("{}", man_page());
            Ok(ExitCode::SUCCESS)
        }
        Command::Search(args) => search::run(load()?, caller, args).await,
        Command::Ask(args) => ask::run(load()?, caller, args).await,
        Command::Chat(args) => chat::run(load()?, caller, args).await,
        Command::Eval(args) => eval::run(load()?, args).await,
        Command::Serve(args) => serve::run(load()?, args).await,
        Command::Tools(args) => tools::run(load()?, caller, args).await,
        Command::Sim(args) => sim::run(args).await,
        Command::Doctor(args) => doctor::run(cli.config.as_deref(), args).await,
    }
}

pub fn completion_script(shell: Shell) -> String {
    let mut command = Cli::command();
    let mut out = Vec::new();
    let name = "crowdvision-agent";
    match shell {
        Shell::Bash => {
            clap_complete::generate(clap_complete::Shell::Bash, &mut command, name, &mut out)
        }
        Shell::Zsh => {
            clap_complete::generate(clap_complete::Shell::Zsh, &mut command, name, &mut out)
        }
        Shell::Fish => {
            clap_complete::generate(clap_complete::Shell::Fish, &mut command, name, &mut out)
        }
        Shell::Elvish => {
            clap_complete::generate(clap_complete::Shell::Elvish, &mut command, name, &mut out)
        }
        Shell::Powershell => clap_complete::generate(
            clap_complete::Shell::PowerShell,
            &mut command,
            name,
            &mut out,
        ),
    }
    String::from_utf8(out).expect("completion scripts are UTF-8")
}

pub fn man_page() -> String {
    let mut out = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut out)
        .expect("rendering to memory cannot fail");
    String::from_utf8(out).expect("the man page is UTF-8")
}
