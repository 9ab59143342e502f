//! The HTTP API (`serve`): `POST /ask` (JSON, or server-sent events with `stream: true`),
//! `POST /ingest` (admins: the configured root and/or inline documents, never a path from the
//! request), `GET /healthz`, `GET /readyz`, `GET /openapi.json`, and the page with its sign-in
//! (`/auth/config`, `/auth/token`). A thin shell over the same library `ask` uses: identity from
//! the request through [`crate::auth::identity::plan`] and `finish`, answers from [`Agent::answer`].
//!
//! Limits that keep it up: a request body limit (413), the question length (422), a deadline
//! per request (504, or an SSE `error` event), a bound on answers in flight with load shedding
//! (503 + `Retry-After`, never a queue), and a client that hangs up cancels its answer. Errors
//! are `{"error": {"code", "message"}}` and never carry internals.

mod admission;
mod answer_json;
mod answering;
mod caller;
pub mod compat;
mod conversations;
mod errors;
mod feedback;
pub mod limits;
mod mcp;
mod oversize;
pub mod page;
mod request;
pub mod resource;
pub mod routes;
mod shares;
mod signin;

pub use errors::ApiError;

use crate::agent::answer::Agent;
use crate::auth::identity::IdentitySettings;
use crate::retrieval::search::Retriever;
use axum::Router;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// What `POST /ingest` writes with.
#[derive(Debug, Clone)]
pub struct IngestSettings {
    pub chunking: crate::config::ChunkingConfig,
    /// The configured knowledge-base root (`DOCS_ROOT`): the only folder the server ingests.
    pub docs_root: std::path::PathBuf,
    pub max_source_bytes: u64,
    pub require_permissions: bool,
    pub embedding_dim: usize,
}

/// What the server needs besides the agent.
#[derive(Debug, Clone)]
pub struct ServerSettings {
    pub max_body_bytes: usize,
    pub max_question_chars: usize,
    pub request_timeout: Duration,
    /// Answers in flight at once; more are shed with 503.
    pub max_in_flight: usize,
    /// Seconds a shed client is told to wait.
    pub retry_after_seconds: u64,
    /// Interval of SSE keep-alive comments.
    pub keep_alive: Duration,
    pub cors_origins: Vec<String>,
    /// `REPLICA_NAME`: sent back as `x-agent-replica` so an operator can tell replicas apart.
    pub replica_name: Option<String>,
    /// `PUBLIC_BASE_URL`, without a trailing slash: names the MCP resource.
    pub public_base_url: Option<String>,
    /// Per-caller admission (429).
    pub limits: limits::LimitSettings,
    /// Days a conversation is kept after its last turn; 0: ever.
    pub conversation_retention_days: u32,
}

/// Tells the answers in flight that the shutdown grace is over: each ends with a 503 or an SSE
/// `error` event that says it was cut, instead of a connection that just closes.
#[derive(Clone, Debug)]
pub struct Drain(Arc<tokio::sync::watch::Sender<bool>>);

impl Default for Drain {
    fn default() -> Drain {
        Drain(Arc::new(tokio::sync::watch::channel(false).0))
    }
}

impl Drain {
    /// The grace is over: cut every answer still running.
    pub fn cut(&self) {
        self.0.send_replace(true);
    }

    /// Resolves once [`Drain::cut`] has been called.
    pub async fn cut_off(&self) {
        let mut watching = self.0.subscribe();
        let _ = watching.wait_for(|cut| *cut).await;
    }
}

pub struct AppState {
    pub agent: Agent,
    pub retriever: Arc<Retriever>,
    pub authz: Arc<crate::auth::authz::Authorizer>,
    pub ingest: IngestSettings,
    pub identity: IdentitySettings,
    /// `identity` for `/mcp`: OIDC tokens must name the MCP resource as their audience.
    pub mcp_identity: IdentitySettings,
    /// The page's sign-in at the identity provider (`OIDC_CLIENT_ID`); `None`: paste a token.
    pub sign_in: Option<Arc<crate::auth::signin::SignIn>>,
    /// The identity provider's keys, when OIDC bearer tokens are accepted.
    pub jwks: Option<Arc<crate::auth::jwks::JwksCache>>,
    pub settings: ServerSettings,
    /// Whether a provider key is configured (for `/readyz`).
    pub provider_configured: bool,
    pub(crate) slots: Arc<Semaphore>,
    pub(crate) limits: Arc<limits::CallerLimits>,
    /// The per-caller limits all replicas share, when the store holds them (PostgreSQL).
    pub(crate) quota: Option<Arc<dyn crate::quota::SharedQuota>>,
    /// The conversations kept in the store; `None` when `CONVERSATIONS=false`.
    pub conversations: Option<Arc<dyn crate::conversations::ConversationStore>>,
    /// Cut at the end of the shutdown grace; see [`serve`].
    pub drain: Drain,
    /// Renders `GET /metrics`; `None` (404) when this process installed no recorder.
    pub metrics: Option<metrics_exporter_prometheus::PrometheusHandle>,
}

impl AppState {
    pub fn new(
        agent: Agent,
        retriever: Arc<Retriever>,
        authz: Arc<crate::auth::authz::Authorizer>,
        ingest: IngestSettings,
        identity: IdentitySettings,
        settings: ServerSettings,
        provider_configured: bool,
    ) -> AppState {
        AppState {
            slots: Arc::new(Semaphore::new(settings.max_in_flight.max(1))),
            limits: limits::CallerLimits::new(settings.limits),
            quota: retriever.store.shared_quota(),
            conversations: Some(retriever.store.conversations()),
            drain: Drain::default(),
            sign_in: None,
            jwks: identity.oidc.as_ref().map(|oidc| {
                Arc::new(crate::auth::jwks::JwksCache::new(
                    oidc.jwks_url.clone(),
                    crate::auth::jwks::FETCH_TIMEOUT,
                ))
            }),
            mcp_identity: resource::mcp_identity(&identity, settings.public_base_url.as_deref()),
            agent,
            retriever,
            authz,
            ingest,
            identity,
            settings,
            provider_configured,
            metrics: None,
        }
    }
}

impl AppState {
    /// The state with every setting from `config`.
    pub fn from_config(
        config: &crate::config::Config,
        agent: Agent,
        retriever: Arc<Retriever>,
        authz: Arc<crate::auth::authz::Authorizer>,
    ) -> AppState {
        let mut state = AppState::new(
            agent,
            retriever,
            authz,
            IngestSettings {
                chunking: config.chunking,
                docs_root: config.ingest.docs_root.clone(),
                max_source_bytes: config.ingest.max_source_bytes,
                require_permissions: config.ingest.require_permissions,
                embedding_dim: config.embedding.dim,
            },
            IdentitySettings::from_config(&config.access),
            ServerSettings {
                max_body_bytes: config.server.max_request_bytes,
                max_question_chars: config.llm.answering.max_question_chars,
                request_timeout: config.server.request_timeout,
                max_in_flight: config.server.max_in_flight,
                retry_after_seconds: 1,
                keep_alive: Duration::from_secs(15),
                cors_origins: config.server.cors_origins.clone(),
                replica_name: config.server.replica_name.clone(),
                public_base_url: config
                    .server
                    .public_base_url
                    .as_ref()
                    .map(|url| url.as_str().trim_end_matches('/').to_string()),
                limits: limits::LimitSettings {
                    in_flight_per_caller: config.server.max_in_flight_per_caller,
                    requests_per_minute: config.server.requests_per_minute,
                    tokens_per_hour: config.server.tokens_per_hour,
                },
                conversation_retention_days: config.server.conversation_retention_days,
            },
            config.llm.api_key.is_some(),
        );
        if !config.server.conversations {
            state.conversations = None;
        }
        if let (Some(sign_in), Some(oidc)) = (&config.access.sign_in, &config.access.oidc) {
            state.sign_in = Some(Arc::new(crate::auth::signin::SignIn::new(
                sign_in.clone(),
                oidc.issuer.clone(),
            )));
        }
        state
    }
}

/// Every route, with the body limit and CORS applied.
pub fn router(state: Arc<AppState>) -> Router {
    routes::router(state)
}

/// How long the answers cut at the end of the grace get to send their 503 or `error` event.
const CUT_FLUSH: Duration = Duration::from_secs(2);

/// Serves `router` on `listener` until `shutdown` resolves; then stops accepting, lets the
/// answers and streams in flight finish for up to `grace`, cuts those still running through
/// `drain` (each then ends with a 503 or an SSE `error` event), and returns.
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    grace: Duration,
    drain: Drain,
) -> std::io::Result<()> {
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let mut server = tokio::spawn(async move {
        axum::serve(listener, router)
            .with_graceful_shutdown(async move {
                let _ = stop_rx.await;
            })
            .await
    });
    tokio::select! {
        finished = &mut server => return finished.unwrap_or(Ok(())),
        _ = shutdown => { let _ = stop_tx.send(()); }
    }
    match tokio::time::timeout(grace, &mut server).await {
        Ok(finished) => finished.unwrap_or(Ok(())),
        Err(_) => {
            tracing::warn!(
                grace_s = grace.as_secs_f64(),
                "answers still in flight after the shutdown grace; cutting them"
            );
            drain.cut();
            match tokio::time::timeout(CUT_FLUSH, &mut server).await {
                Ok(finished) => finished.unwrap_or(Ok(())),
                Err(_) => {
                    server.abort();
                    Ok(())
                }
            }
        }
    }
}
