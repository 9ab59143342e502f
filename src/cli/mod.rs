//! The command-line surface: the clap definition of every subcommand, and dispatch to one thin
//! module per subcommand.

mod ask;
mod chat;
mod chunk;
mod conversations;
mod db;
mod doctor;
mod eval;
mod feedback;
mod history;
mod identity;
mod ingest;
mod mcp;
mod out;
mod render;
mod search;
mod serve;
mod sim;
pub mod telemetry;
mod tools;

use anyhow::Result;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use crowdvision_agent::config::{reference, Config};
use out::out;
use std::path::PathBuf;
use std::process::ExitCode;

/// The heading the options every subcommand takes are listed under.
const GLOBAL: &str = "Global options";

/// Shown under `--help`; `--help` (long) adds the environment and the exit codes.
const EXAMPLES: &str = concat!(
    "Examples:\n",
    include_str!("help/examples.txt"),
    "\nMore with --help: the environment variables and the exit codes."
);

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
    propagate_version = true,
    after_help = EXAMPLES
)]
pub struct Cli {
    /// Optional settings file (YAML mapping of the environment variable names).
    #[arg(long, global = true, value_name = "FILE", help_heading = GLOBAL)]
    pub config: Option<PathBuf>,

    /// Act as this caller: a file holding gateway claims (JSON, or its base64).
    #[arg(long, global = true, value_name = "FILE", help_heading = GLOBAL)]
    pub claims: Option<PathBuf>,

    /// Act as the caller of this development token (HS256, verified with EVAL_JWT_SECRET).
    #[arg(long, global = true, value_name = "JWT", help_heading = GLOBAL)]
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
    #[command(after_help = include_str!("help/serve-identity.txt"))]
    Serve(serve::ServeArgs),
    /// The tool registry: list the tools, or call one directly as the caller.
    Tools(tools::ToolsArgs),
    /// Serve the tools and `ask` to an MCP host over stdio, as the caller of --claims/--token.
    Mcp(mcp::McpArgs),
    /// Simulate twin-service and sensor-service from a YAML fixture.
    Sim(sim::SimArgs),
    /// Schema management for the configured store.
    Db(db::DbArgs),
    /// The effective settings and where each came from, then a live check of the store, the
    /// provider, the embedder and the downstream services.
    Doctor(doctor::DoctorArgs),
    /// The local log of ask and chat answers: list, show one, search (HISTORY=false: off).
    History(history::HistoryArgs),
    /// The caller's conversations kept in the store: list, show one, delete one
    /// (CONVERSATIONS=false: none are kept).
    Conversations(conversations::ConversationsArgs),
    /// Print a shell completion script.
    Completions {
        /// The shell to complete for.
        #[arg(value_enum)]
        shell: Shell,
    },
    /// Print a man page (roff): the command's, or one subcommand's.
    Man {
        /// The subcommand whose page to print (its file is crowdvision-agent-NAME.1).
        subcommand: Option<String>,
    },
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
    let serving = matches!(cli.command, Command::Serve(_));
    let load = || -> Result<Config> {
        let config = Config::load(cli.config.as_deref())?;
        telemetry::start(&config.observability, serving)?;
        Ok(config)
    };
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
        Command::Man { subcommand } => {
            let page = match subcommand {
                None => man_page(),
                Some(name) => subcommand_man_page(&name).ok_or_else(|| {
                    usage(format!(
                        "no subcommand {name}; the pages are for {}",
                        man_subcommands().join(", ")
                    ))
                })?,
            };
            out!("{page}");
            Ok(ExitCode::SUCCESS)
        }
        Command::Search(args) => search::run(load()?, caller, args).await,
        Command::Ask(args) => ask::run(load()?, caller, args).await,
        Command::Chat(args) => chat::run(load()?, caller, args).await,
        Command::Eval(eval::EvalArgs {
            action: Some(eval::EvalAction::ImportFeedback(args)),
            ..
        }) => feedback::run(load()?, caller, args).await,
        Command::Eval(args) => eval::run(load()?, args).await,
        Command::Serve(args) => serve::run(load()?, args).await,
        Command::Tools(args) => tools::run(load()?, caller, args).await,
        Command::Mcp(args) => mcp::run(load()?, caller, args).await,
        Command::Sim(args) => {
            telemetry::start_from_environment()?;
            sim::run(args).await
        }
        Command::History(args) => history::run(load()?, args),
        Command::Conversations(args) => conversations::run(load()?, caller, args).await,
        Command::Doctor(args) => {
            telemetry::start_from_environment()?;
            doctor::run(cli.config.as_deref(), args).await
        }
    }
}

/// The command line as clap reads it: `--help` (long) adds the environment, written from the
/// settings table, and the exit codes.
pub fn command() -> clap::Command {
    Cli::command().after_long_help(format!(
        "Examples:\n{}\n{}\n{}",
        include_str!("help/examples.txt"),
        reference::environment_help(),
        include_str!("help/exit-status.txt")
    ))
}

/// The arguments of this process; `--help`, `--version` and usage errors exit here.
pub fn parse() -> Cli {
    Cli::from_arg_matches(&command().get_matches()).unwrap_or_else(|error| error.exit())
}

pub fn completion_script(shell: Shell) -> String {
    let mut command = command();
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

/// The top man page, with ENVIRONMENT and EXIT STATUS sections and the subcommands' pages
/// named under SEE ALSO.
pub fn man_page() -> String {
    let mut page = render_man(command());
    let pages: Vec<String> = man_subcommands()
        .iter()
        .map(|name| format!("\\fBcrowdvision-agent-{name}\\fR(1)"))
        .collect();
    page.push_str(&format!(".SH \"SEE ALSO\"\n{}\n", pages.join(", ")));
    page
}

/// The subcommands that have a page of their own.
pub fn man_subcommands() -> Vec<String> {
    command()
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .filter(|name| name != "help")
        .collect()
}

/// `crowdvision-agent-NAME(1)`: one subcommand, its options and the global ones, the
/// environment and the exit status.
pub fn subcommand_man_page(name: &str) -> Option<String> {
    let command = command();
    let sub = command.find_subcommand(name)?.clone();
    let title = format!("crowdvision-agent-{name}");
    let sub = sub
        .name(title)
        .bin_name(format!("crowdvision-agent {name}"))
        .version(env!("CARGO_PKG_VERSION"));
    let mut page = render_man(sub);
    page.push_str(".SH \"SEE ALSO\"\n\\fBcrowdvision-agent\\fR(1)\n");
    Some(page)
}

/// A clap command as roff, followed by the ENVIRONMENT and EXIT STATUS sections.
fn render_man(command: clap::Command) -> String {
    let mut out = Vec::new();
    clap_mangen::Man::new(command)
        .render(&mut out)
        .expect("rendering to memory cannot fail");
    let mut page = String::from_utf8(out).expect("the man page is UTF-8");
    page.push_str(&roff_section("ENVIRONMENT", &reference::environment_help()));
    page.push_str(&roff_section(
        "EXIT STATUS",
        include_str!("help/exit-status.txt"),
    ));
    page
}

/// A help text (a heading line, then indented lines) as a roff section kept as written.
fn roff_section(name: &str, text: &str) -> String {
    let body: Vec<String> = text
        .lines()
        .skip(1)
        .map(|line| line.trim_start().replace('\\', "\\e"))
        .map(|line| {
            if line.starts_with('.') || line.starts_with('\'') {
                format!("\\&{line}")
            } else {
                line
            }
        })
        .collect();
    format!(".SH \"{name}\"\n.nf\n{}\n.fi\n", body.join("\n"))
}
