//! `eval import-feedback`: the answers people rated, as golden-case skeletons. Each complaint
//! becomes a case with the question, the caller's roles and domains (never a token), the
//! answer complained about (`expect.differs_from`) and `xfail` with the reason given, so it runs
//! as XFAIL until the behaviour changes and then reports XPASS. Reading every caller's feedback
//! is for administrators.

use super::{identity, usage};
use anyhow::{Context, Result};
use clap::Args;
use crowdvision_agent::config::Config;
use crowdvision_agent::conversations::{self as kept, feedback, Rating};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct ImportFeedbackArgs {
    /// Only thumbs-down (complaints); without it, every rating.
    #[arg(long)]
    down: bool,
    /// How far back: a count and a unit, `m`, `h`, `d` or `w` (e.g. 24h, 7d).
    #[arg(long, default_value = "7d", value_name = "WINDOW")]
    since: String,
    /// The dataset file to write (YAML, as `eval` reads it).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
}

pub async fn run(
    config: Config,
    caller: identity::Given<'_>,
    args: ImportFeedbackArgs,
) -> Result<ExitCode> {
    let caller = identity::resolve(caller, &config)?;
    let authz = crowdvision_agent::auth::authz::Authorizer::from_config(&config);
    if !authz.can_ingest_documents(&caller.user) {
        return Err(usage(anyhow::anyhow!(
            "import-feedback reads every caller's feedback: act as an administrator \
             (--claims or --token with the admin role)"
        )));
    }
    let since = feedback::since(&args.since, kept::now_ms()).ok_or_else(|| {
        usage(anyhow::anyhow!(
            "--since takes a count and a unit (m, h, d, w), e.g. 7d; got {:?}",
            args.since
        ))
    })?;
    let store = super::conversations::store_of(&config).await?;
    let rating = args.down.then_some(Rating::Down);
    let records = store.feedback_since(since, rating).await?;
    let cases: Vec<serde_json::Value> = records.iter().map(feedback::golden_case).collect();
    let body = serde_yaml::to_string(&serde_json::json!({ "cases": cases }))?;
    let header = format!(
        "# Golden-case skeletons from {} feedback given since {} ({}).\n\
         # Each runs as XFAIL while the answer is the one complained about; add the assertions\n\
         # that pin the right behaviour (contains, cited_sources, …) before moving it into\n\
         # datasets/golden.yaml.\n",
        cases.len(),
        args.since,
        if args.down {
            "thumbs-down"
        } else {
            "all ratings"
        },
    );
    std::fs::write(&args.out, format!("{header}{body}"))
        .with_context(|| format!("writing {}", args.out.display()))?;
    eprintln!("{} cases written to {}", cases.len(), args.out.display());
    Ok(ExitCode::SUCCESS)
}
