//! The `crowdvision-agent` binary: parse, dispatch, map errors to exit codes. Nothing else.

mod cli;

use crowdvision_agent::compose::ComposeError;
use crowdvision_agent::config::ConfigError;
use crowdvision_agent::retrieval::ingest::IngestError;
use crowdvision_agent::retrieval::search::SearchError;
use crowdvision_agent::retrieval::store::StoreError;
use std::process::ExitCode;

// glibc's allocator fragments and contends under many concurrent answers (BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(cli::run(cli));
    // Tasks still running (a connection pool's, say) may hold spans of the command; they end
    // when the runtime drops them, and only then can the last spans be sent.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
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
                cause.downcast_ref::<ComposeError>(),
                Some(ComposeError::Config(_))
                    | Some(ComposeError::Store(StoreError::EmbeddingMismatch { .. }))
                    | Some(ComposeError::Search(SearchError::Store(
                        StoreError::EmbeddingMismatch { .. }
                    )))
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
