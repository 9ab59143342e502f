//! `/mcp`: the MCP server over Streamable HTTP. Each request is identified like `/ask` (401
//! otherwise, before the protocol sees it) and its [`Caller`] handed to [`McpServer`] in the
//! request's extensions. A session belongs to the caller who opened it: a session id this
//! server did not hand to that caller is answered exactly like one that never existed (404), so
//! one caller cannot use, or learn anything about, another's session. `ask` is admitted like
//! `/ask` (the caller's limits, then a slot: the refusal is the tool's error result).

use super::answering;
use super::caller::caller;
use super::AppState;
use crate::auth::identity::Caller;
use crate::contract::{AskResponse, Question};
use crate::mcp::{Asker, Callers, McpServer};
use async_trait::async_trait;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

/// The header that carries an MCP session id.
const SESSION_HEADER: &str = "mcp-session-id";

/// Sessions remembered with their owner; the oldest is forgotten (and so refused) past this.
const MAX_SESSIONS: usize = 10_000;

/// The `/mcp` route over `state`'s agent and tools.
pub fn routes(state: &Arc<AppState>) -> Router<Arc<AppState>> {
    let server = McpServer::new(
        state.agent.tools().clone(),
        Arc::new(Served(state.clone())),
        Callers::PerRequest,
    );
    // Host and Origin are not checked by the transport: every request carries the caller's
    // identity, and a browser cannot post JSON here from another site without a CORS
    // preflight that only `CORS_ORIGINS` passes.
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .with_max_request_body_bytes(state.settings.max_body_bytes);
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let guard = Arc::new(McpGuard {
        state: state.clone(),
        owners: Mutex::new(Owners::default()),
    });
    Router::new()
        .route_service("/mcp", service)
        .route_layer(axum::middleware::from_fn_with_state(guard, identify))
}

struct McpGuard {
    state: Arc<AppState>,
    owners: Mutex<Owners>,
}

/// Which caller (by `sub`) each session was opened by, oldest first.
#[derive(Default)]
struct Owners {
    by_session: HashMap<String, String>,
    opened: VecDeque<String>,
}

impl Owners {
    fn record(&mut self, session: String, sub: String) {
        if self.by_session.insert(session.clone(), sub).is_none() {
            self.opened.push_back(session);
        }
        while self.opened.len() > MAX_SESSIONS {
            if let Some(oldest) = self.opened.pop_front() {
                self.by_session.remove(&oldest);
            }
        }
    }

    fn belongs_to(&self, session: &str, sub: &str) -> bool {
        self.by_session
            .get(session)
            .is_some_and(|owner| owner == sub)
    }

    fn forget(&mut self, session: &str) {
        if self.by_session.remove(session).is_some() {
            self.opened.retain(|s| s != session);
        }
    }
}

/// Identifies the request, checks its session belongs to the caller, and records the owner of
/// a session the response opens.
async fn identify(
    State(guard): State<Arc<McpGuard>>,
    mut request: Request,
    next: Next,
) -> Response {
    let caller = match caller(request.headers(), &guard.state).await {
        Ok(caller) => caller,
        Err(error) => return error.into_response(),
    };
    let session = match request.headers().get(SESSION_HEADER) {
        None => None,
        Some(value) => match value.to_str() {
            Ok(id) if lock(&guard.owners).belongs_to(id, &caller.user.sub) => Some(id.to_string()),
            _ => return unknown_session(),
        },
    };
    let closing = request.method() == axum::http::Method::DELETE;
    let sub = caller.user.sub.clone();
    request.extensions_mut().insert(caller);
    let response = next.run(request).await;
    match (&session, response.headers().get(SESSION_HEADER)) {
        (None, Some(opened)) => {
            if let Ok(opened) = opened.to_str() {
                lock(&guard.owners).record(opened.to_string(), sub);
            }
        }
        (Some(id), _) if closing && response.status().is_success() => {
            lock(&guard.owners).forget(id)
        }
        _ => {}
    }
    response
}

/// What the transport answers for a session it does not know.
fn unknown_session() -> Response {
    (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response()
}

fn lock(owners: &Mutex<Owners>) -> std::sync::MutexGuard<'_, Owners> {
    owners
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `ask` as `/ask` runs it: admitted against the caller's limits and the server's slots, under
/// the request deadline.
struct Served(Arc<AppState>);

#[async_trait]
impl Asker for Served {
    async fn ask(&self, question: Question, caller: &Caller) -> Result<AskResponse, String> {
        let state = &self.0;
        super::request::question(&question.text, state).map_err(|e| e.message)?;
        let held = answering::admit(state, caller).map_err(|e| e.message)?;
        answering::answer_once(state, &question, caller, held)
            .await
            .map_err(|e| e.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_belongs_only_to_the_caller_who_opened_it() {
        let mut owners = Owners::default();
        owners.record("s1".into(), "alice".into());
        assert!(owners.belongs_to("s1", "alice"));
        assert!(!owners.belongs_to("s1", "bob"));
        assert!(!owners.belongs_to("s2", "alice"), "never opened");
        owners.forget("s1");
        assert!(!owners.belongs_to("s1", "alice"), "closed");
    }

    #[test]
    fn the_oldest_sessions_are_forgotten_past_the_bound() {
        let mut owners = Owners::default();
        for n in 0..=MAX_SESSIONS {
            owners.record(format!("s{n}"), "alice".into());
        }
        assert!(!owners.belongs_to("s0", "alice"));
        assert!(owners.belongs_to(&format!("s{MAX_SESSIONS}"), "alice"));
        assert_eq!(owners.by_session.len(), MAX_SESSIONS);
    }
}
