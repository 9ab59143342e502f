//! `/mcp`: the MCP server over Streamable HTTP, without server-side sessions. Each request is
//! identified like `/ask` (401 otherwise, before the protocol sees it) and its [`Caller`] handed
//! to [`McpServer`] in the request's extensions. Every POST is answered on its own by whichever
//! replica the proxy picks: no replica holds anything a later request needs, so a host's
//! requests may land anywhere and one replica may stop mid-conversation. With no session there
//! is no session id one caller could borrow from another. `ask` is admitted like `/ask` (the
//! caller's limits, then a slot: the refusal is the tool's error result).

use super::answering;
use super::caller::caller_under;
use super::resource;
use super::AppState;
use crate::auth::identity::Caller;
use crate::contract::{AskResponse, Question};
use crate::mcp::{Asker, Callers, McpServer};
use async_trait::async_trait;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::sync::Arc;

/// The `/mcp` route over `state`'s agent and tools.
pub fn routes(state: &Arc<AppState>) -> Router<Arc<AppState>> {
    let server = McpServer::new(
        state.agent.tools().clone(),
        Arc::new(Served(state.clone())),
        state.retriever.store.clone(),
        Callers::PerRequest,
    );
    // Host and Origin are not checked by the transport: every request carries the caller's
    // identity, and a browser cannot post JSON here from another site without a CORS
    // preflight that only `CORS_ORIGINS` passes.
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_max_request_body_bytes(state.settings.max_body_bytes);
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    Router::new()
        .route_service("/mcp", service)
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            identify,
        ))
}

/// Identifies the request under `/mcp`'s rules and hands its caller to the protocol. A 401
/// tells the host where to learn how to log in.
async fn identify(
    State(state): State<Arc<AppState>>,
    mut request: Request,
    next: Next,
) -> Response {
    match caller_under(request.headers(), &state, &state.mcp_identity).await {
        Ok(caller) => {
            request.extensions_mut().insert(caller);
            next.run(request).await
        }
        Err(error) => {
            let unauthenticated = error.status == StatusCode::UNAUTHORIZED;
            let mut response = error.into_response();
            let challenge = resource::challenge(state.settings.public_base_url.as_deref());
            if let (true, Ok(value)) = (unauthenticated, HeaderValue::from_str(&challenge)) {
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, value);
            }
            response
        }
    }
}

/// `ask` as `/ask` runs it: admitted against the caller's limits and the server's slots, under
/// the request deadline.
struct Served(Arc<AppState>);

#[async_trait]
impl Asker for Served {
    async fn ask(&self, question: Question, caller: &Caller) -> Result<AskResponse, String> {
        let state = &self.0;
        super::request::question(&question.text, state).map_err(|e| e.message)?;
        let held = answering::admit(state, caller)
            .await
            .map_err(|e| e.message)?;
        answering::answer_once(state, &question, caller, held, None)
            .await
            .map(|(response, _)| response)
            .map_err(|e| e.message)
    }
}
