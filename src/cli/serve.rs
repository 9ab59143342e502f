//! `serve`: the HTTP API on `BIND` (default 127.0.0.1:3000, loopback only) until SIGTERM or
//! Ctrl-C, then a graceful stop: no new connections, answers in flight finish within
//! SHUTDOWN_GRACE_SECONDS. With OIDC configured, the JWKS is fetched at start and refreshed on a
//! timer.

use anyhow::{Context, Result};
use clap::Args;
use crowdvision_agent::compose;
use crowdvision_agent::config::Config;
use crowdvision_agent::server::{self, AppState};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on (default: BIND, 127.0.0.1:3000; 0.0.0.0:PORT for every interface).
    #[arg(long, value_name = "ADDR")]
    bind: Option<SocketAddr>,
}

pub async fn run(config: Config, args: ServeArgs) -> Result<ExitCode> {
    let parts = compose::answering_unchecked(&config).await?;
    let mut state = AppState::from_config(
        &config,
        parts.agent(&config),
        parts.retriever.clone(),
        parts.authz.clone(),
    );
    state.metrics = Some(
        crowdvision_agent::observe::metrics::install_prometheus()
            .map_err(|e| anyhow::anyhow!("cannot install the metrics recorder: {e}"))?,
    );
    if let Some(jwks) = &state.jwks {
        match jwks.refresh_now().await {
            Ok(keys) => eprintln!("serve: {keys} OIDC signing keys read"),
            Err(error) => eprintln!(
                "serve: warning: the OIDC key set could not be read yet ({error}); bearer tokens get 503 until it can"
            ),
        }
        jwks.clone()
            .spawn_refresher(crowdvision_agent::auth::jwks::REFRESH_EVERY);
    }
    eprintln!("serve: identity: {}", state.identity.describe());
    let bind = args.bind.unwrap_or(config.server.bind);
    let listener = tokio::net::TcpListener::bind(bind)
        .await
        .with_context(|| format!("cannot listen on {bind}"))?;
    eprintln!("serve: listening on http://{}", listener.local_addr()?);
    let drain = state.drain.clone();
    server::serve(
        listener,
        server::router(Arc::new(state)),
        stop_signal(),
        config.server.shutdown_grace,
        drain,
    )
    .await?;
    eprintln!("serve: stopped");
    Ok(ExitCode::SUCCESS)
}

/// SIGTERM (what a process manager sends) or Ctrl-C.
async fn stop_signal() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = terminate => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}
