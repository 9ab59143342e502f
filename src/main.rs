//! The `crowdvision-agent` binary: parse, dispatch, map errors to exit codes. Nothing else.

mod cli;

use clap::Parser;
use crowdvision_agent::config::ConfigError;
use crowdvision_agent::retrieval::ingest::IngestError;
use crowdvision_agent::retrieval::search::SearchError;
use crowdvision_agent::retrieval::store::StoreError;
use std::process::ExitCode;

// glibc's allocator fragments and contends under many concurrent answers (BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let outcome = cli::run(cli).await;
    cli::telemetry::finish();
    match outcome {
        Ok(code) => code,
        Err(error) if closed_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            if is_usage(&error) {
                ExitCode::from(cli::EXIT_USAGE)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

/// Configuration, usage and a store built with another embedding model are the caller's to fix:
/// exit 2.
fn is_usage(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause.is::<ConfigError>()
            || cause.is::<cli::UsageError>()
            || matches!(
                cause.downcast_ref::<StoreError>(),
                Some(StoreError::EmbeddingMismatch { .. })
            )
            || matches!(
                cause.downcast_ref::<SearchError>(),
                Some(SearchError::Store(StoreError::EmbeddingMismatch { .. }))
            )
            || matches!(
                cause.downcast_ref::<IngestError>(),
                Some(IngestError::Store(StoreError::EmbeddingMismatch { .. }))
                    | Some(IngestError::MissingRoot(_))
            )
    })
}

/// Whether the error is stdout's reader having gone (`… | head`): not a failure.
fn closed_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
