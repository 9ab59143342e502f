//! `ingest [PATH...]`: sources → store, with a progress bar on a TTY and a summary table.

use super::out::outln;
use super::render;
use anyhow::{Context, Result};
use clap::Args;
use crowdvision_agent::compose;
use crowdvision_agent::config::Config;
use crowdvision_agent::retrieval::chunk::Chunker;
use crowdvision_agent::retrieval::ingest::{IngestOptions, Ingestor, NoProgress, Progress};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Debug, Args)]
pub struct IngestArgs {
    /// Files or folders of Markdown (.md, .markdown, .qmd, .qd).
    #[arg(default_value = "documentation")]
    paths: Vec<PathBuf>,
    /// Delete stored documents whose sources were not found under the given paths.
    #[arg(long)]
    prune: bool,
    /// Print what would change, per source, without writing.
    #[arg(long)]
    dry_run: bool,
    /// Refuse documents that declare no permissions (also REQUIRE_PERMISSIONS=true).
    #[arg(long)]
    require_permissions: bool,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
}

pub async fn run(config: Config, args: IngestArgs) -> Result<ExitCode> {
    let (store, embedder) = compose::writable_store(&config)
        .await
        .context("preparing the store")?;
    let ingestor = Ingestor {
        store,
        embedder,
        chunker: Chunker::new(config.chunking),
    };
    let options = IngestOptions {
        roots: args.paths,
        prune: args.prune,
        dry_run: args.dry_run,
        require_permissions: args.require_permissions || config.ingest.require_permissions,
        docs_root: Some(config.ingest.docs_root.clone()),
        max_source_bytes: config.ingest.max_source_bytes,
    };
    let bar = (!args.json && std::io::stderr().is_terminal()).then(ProgressBar::new);
    let progress: &dyn Progress = match &bar {
        Some(bar) => bar,
        None => &NoProgress,
    };
    let started = Instant::now();
    let outcome = ingestor.run(&options, progress).await;
    ingestor.store.close().await;
    let summary = outcome?;
    let elapsed = started.elapsed();
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        if summary.dry_run {
            outln!("{}", render::dry_run_diff(&summary));
        }
        outln!("{}", render::ingest_summary(&summary, elapsed));
        for report in summary.sources.iter().filter(|r| r.error.is_some()) {
            eprintln!(
                "failed: {}: {}",
                report.source,
                report.error.as_deref().unwrap_or("")
            );
        }
    }
    if summary.sources.is_empty() {
        eprintln!(
            "no Markdown found under {}: ingest reads .md, .markdown, .qmd and .qd files (hidden \
             files and folders are skipped); name the folder that holds your pages",
            options
                .roots
                .iter()
                .map(|r| r.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(if summary.failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

struct ProgressBar(indicatif::ProgressBar);

impl ProgressBar {
    fn new() -> ProgressBar {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {elapsed} {wide_msg}")
                .expect("the template is valid"),
        );
        ProgressBar(bar)
    }
}

impl Progress for ProgressBar {
    fn start(&self, total: usize) {
        self.0.set_length(total as u64);
    }
    fn advance(&self, source: &str) {
        self.0.set_message(source.to_string());
        self.0.inc(1);
    }
    fn finish(&self) {
        self.0.finish_and_clear();
    }
}
