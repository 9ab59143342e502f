//! `eval DATASET...`: runs golden datasets through the agent in process, each case as its own
//! `as:` caller, and reports per case and per model. Everything that can be wrong with the
//! input (dataset, filter, baseline, settings) is found before the first model call (exit 2).
//! Exit 1 when a case FAILs or ERRORs (or XPASSes under --strict), else 0.

use super::out::outln;
use super::{render, EXIT_USAGE};
use anyhow::{Context, Result};
use clap::Args;
use crowdvision_agent::agent::answer::Agent;
use crowdvision_agent::agent::tools::STANDARD_TOOL_NAMES;
use crowdvision_agent::agent::usage::PriceTable;
use crowdvision_agent::compose;
use crowdvision_agent::config::Config;
use crowdvision_agent::eval::dataset::{self, Case, Dataset};
use crowdvision_agent::eval::formats;
use crowdvision_agent::eval::judge::{default_judge_model, model_family, Judge};
use crowdvision_agent::eval::report::{compare, Report, RunRecord};
use crowdvision_agent::eval::runner::{self, EvalProgress, InProcess, NoProgress, RunOptions};
use crowdvision_agent::sim::{self, Fixture, SimHandle};
use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct EvalArgs {
    #[command(subcommand)]
    pub action: Option<EvalAction>,
    /// Dataset files, or folders of them (*.yaml, *.yml).
    #[arg(required = true, value_name = "DATASET")]
    datasets: Vec<PathBuf>,
    /// Answer models to sweep, comma-separated (default: ANSWER_MODEL).
    #[arg(long, value_delimiter = ',', value_name = "MODEL,...")]
    models: Vec<String>,
    /// The model that grades judge rubrics (default: JUDGE_MODEL, the dataset's judge_model,
    /// else a model of another family than the answer model).
    #[arg(long, value_name = "MODEL")]
    judge_model: Option<String>,
    /// Only cases whose id matches (`*` wildcards) or that carry this tag; repeatable.
    #[arg(long, value_name = "ID|TAG")]
    filter: Vec<String>,
    /// Runs of each case; a case that passes some runs and fails others is flaky.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    repeat: u32,
    /// Answers in flight at once.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=64))]
    jobs: u16,
    /// Seconds one answer (with its grading) may take before the case is an ERROR.
    #[arg(long, default_value_t = 300.0, value_name = "SECONDS")]
    timeout: f64,
    /// Also fail (exit 1) on XPASS: a case marked xfail that now passes.
    #[arg(long)]
    strict: bool,
    /// Write the full report as JSON.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write JUnit XML for CI systems.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Write a Markdown summary (for a pull-request comment).
    #[arg(long, value_name = "FILE")]
    markdown: Option<PathBuf>,
    /// A previous --json report: print new failures, fixed cases and the pass-rate change.
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// Start the simulator in process and point the live-data tools at it.
    #[arg(long, conflicts_with = "server")]
    sim: bool,
    /// Run against a running `serve` at this URL, each case as a development token minted with
    /// EVAL_JWT_SECRET for its `as:` caller.
    #[arg(long, value_name = "URL")]
    server: Option<String>,
    /// The fixture --sim serves [default: the built-in campus]
    #[arg(long, value_name = "FILE")]
    sim_fixture: Option<PathBuf>,
}

#[derive(Debug, clap::Subcommand)]
pub enum EvalAction {
    /// Write golden-case skeletons from the answers people rated (administrators): each
    /// complaint runs as XFAIL until the answer changes.
    ImportFeedback(super::feedback::ImportFeedbackArgs),
}

pub async fn run(mut config: Config, args: EvalArgs) -> Result<ExitCode> {
    let inputs = match Inputs::read(&config, &args) {
        Ok(inputs) => inputs,
        Err(message) => {
            eprintln!("error: {message}");
            return Ok(ExitCode::from(EXIT_USAGE));
        }
    };
    if let Some(url) = &args.server {
        let Some(secret) = config.access.eval_jwt_secret.clone() else {
            eprintln!(
                "error: eval --server mints a token per case: set EVAL_JWT_SECRET to the server's"
            );
            return Ok(ExitCode::from(EXIT_USAGE));
        };
        let target = runner::Remote {
            agent: crowdvision_agent::client::RemoteAgent::new(url)?,
            secret,
        };
        let judge = match &inputs.judge_model {
            Some(judge_model) => {
                config.require_api_key()?;
                let chat = compose::chat_model(&config);
                Some(judge_for(&config, chat, judge_model))
            }
            None => None,
        };
        return finish(&args, &inputs, &target, judge.as_ref()).await;
    }
    config.require_api_key()?;
    let _sim = if args.sim {
        Some(start_sim(args.sim_fixture.as_deref(), &mut config).await?)
    } else {
        None
    };
    let parts = compose::answering(&config).await?;
    let agents: HashMap<String, Agent> = inputs
        .models
        .iter()
        .map(|model| {
            let mut for_model = config.clone();
            for_model.llm.answer_model = model.clone();
            (model.clone(), parts.agent(&for_model))
        })
        .collect();
    let judge = inputs
        .judge_model
        .as_ref()
        .map(|judge_model| judge_for(&config, parts.chat.clone(), judge_model));
    let target = InProcess { agents };
    let outcome = finish(&args, &inputs, &target, judge.as_ref()).await;
    parts.retriever.store.close().await;
    outcome
}

/// Runs the selected cases on `target` and reports.
async fn finish(
    args: &EvalArgs,
    inputs: &Inputs,
    target: &dyn runner::AnswerTarget,
    judge: Option<&Judge>,
) -> Result<ExitCode> {
    if let Some(judge) = judge {
        warn_same_family(&judge.judge_model, &inputs.models);
    }
    let cases: Vec<&Case> = runner::select(&inputs.dataset.cases, &args.filter);
    let options = RunOptions {
        jobs: usize::from(args.jobs),
        repeat: args.repeat,
        timeout: Duration::from_secs_f64(args.timeout),
    };
    let bar = std::io::stderr().is_terminal().then(Bar::new);
    let progress: &dyn EvalProgress = match &bar {
        Some(bar) => bar,
        None => &NoProgress,
    };
    let models = runner::run(&cases, &inputs.models, target, judge, &options, progress).await;
    if let Some(bar) = &bar {
        bar.0.finish_and_clear();
    }
    let report = Report::new(
        inputs
            .dataset
            .files
            .iter()
            .map(|f| f.display().to_string())
            .collect(),
        inputs.judge_model.clone(),
        args.repeat,
        args.strict,
        models,
    );
    let diff = inputs.baseline.as_ref().map(|b| compare(b, &report));

    outln!("{}", render::eval_report(&report));
    if let Some(diff) = &diff {
        outln!("\n{}", render::baseline_diff(diff));
    }
    write_reports(args, &report, diff.as_ref())?;
    Ok(if report.failed() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Room for a one-sentence verdict.
const JUDGE_MAX_OUTPUT_TOKENS: u32 = 256;

fn judge_for(
    config: &Config,
    chat: Arc<dyn crowdvision_agent::agent::llm::ChatModel>,
    judge_model: &str,
) -> Judge {
    Judge {
        model: chat,
        judge_model: judge_model.to_string(),
        prices: PriceTable::with_overrides(&config.llm.prices),
        max_output_tokens: JUDGE_MAX_OUTPUT_TOKENS,
    }
}

/// Everything read and checked before anything runs.
struct Inputs {
    dataset: Dataset,
    models: Vec<String>,
    judge_model: Option<String>,
    baseline: Option<Report>,
}

impl Inputs {
    fn read(config: &Config, args: &EvalArgs) -> Result<Inputs, String> {
        let dataset =
            dataset::load(&args.datasets, &STANDARD_TOOL_NAMES).map_err(|e| e.to_string())?;
        let selected = runner::select(&dataset.cases, &args.filter);
        if selected.is_empty() {
            return Err(format!(
                "no case matches --filter {}",
                args.filter.join(", ")
            ));
        }
        let default_model = if args.server.is_some() {
            runner::SERVER_MODEL
        } else {
            config.llm.answer_model.as_str()
        };
        let models = sweep_models(&args.models, default_model)?;
        if !(args.timeout.is_finite() && args.timeout > 0.0 && args.timeout <= 86_400.0) {
            return Err("--timeout must be between 0 and 86400 seconds".to_string());
        }
        let needs_judge = selected.iter().any(|c| c.expect.judge.is_some());
        let judge_model = needs_judge.then(|| {
            args.judge_model
                .clone()
                .or_else(|| config.llm.judge_model.clone())
                .or_else(|| dataset.judge_model.clone())
                .unwrap_or_else(|| default_judge_model(&models[0]).to_string())
        });
        let baseline = args.baseline.as_deref().map(read_baseline).transpose()?;
        Ok(Inputs {
            dataset,
            models,
            judge_model,
            baseline,
        })
    }
}

fn sweep_models(given: &[String], answer_model: &str) -> Result<Vec<String>, String> {
    if given.is_empty() {
        return Ok(vec![answer_model.to_string()]);
    }
    let mut models: Vec<String> = Vec::new();
    for model in given.iter().map(|m| m.trim()) {
        if model.is_empty() {
            return Err("--models holds an empty model name".to_string());
        }
        if !models.iter().any(|m| m == model) {
            models.push(model.to_string());
        }
    }
    Ok(models)
}

fn read_baseline(path: &Path) -> Result<Report, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("--baseline {}: cannot read: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| {
        format!(
            "--baseline {}: not a report written by eval --json: {e}",
            path.display()
        )
    })
}

fn warn_same_family(judge_model: &str, models: &[String]) {
    let family = model_family(judge_model);
    if models.iter().any(|m| model_family(m) == family) {
        eprintln!(
            "warning: the judge {judge_model} is of the same family ({family}) as an answer \
             model; it may favour that model's answers"
        );
    }
}

async fn start_sim(fixture_path: Option<&Path>, config: &mut Config) -> Result<SimHandle> {
    let fixture = Fixture::load_or_campus(fixture_path).with_context(|| {
        format!(
            "--sim-fixture {}",
            fixture_path.unwrap_or(Path::new("")).display()
        )
    })?;
    let handle = sim::start(fixture, "127.0.0.1:0".parse()?)
        .await
        .context("starting the simulator on loopback")?;
    let url: url::Url = handle.url.parse()?;
    config.downstream.twin_service_url = url.clone();
    config.downstream.sensor_service_url = url;
    Ok(handle)
}

fn write_reports(
    args: &EvalArgs,
    report: &Report,
    diff: Option<&crowdvision_agent::eval::report::BaselineDiff>,
) -> Result<()> {
    let write = |path: &Path, text: String| {
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
    };
    if let Some(path) = &args.json {
        write(path, serde_json::to_string_pretty(report)?)?;
    }
    if let Some(path) = &args.junit {
        write(path, formats::junit(report))?;
    }
    if let Some(path) = &args.markdown {
        write(path, formats::markdown(report, diff))?;
    }
    Ok(())
}

struct Bar(indicatif::ProgressBar);

impl Bar {
    fn new() -> Bar {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {elapsed} {wide_msg}")
                .expect("the template is valid"),
        );
        Bar(bar)
    }
}

impl EvalProgress for Bar {
    fn started(&self, jobs: usize) {
        self.0.set_length(jobs as u64);
    }
    fn finished(&self, model: &str, case_id: &str, record: &RunRecord) {
        self.0
            .set_message(format!("{} {case_id} ({model})", record.status.as_str()));
        self.0.inc(1);
    }
}
