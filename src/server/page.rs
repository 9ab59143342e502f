//! The chat page people use in a browser: one HTML file, its scripts (the page, and its
//! sign-in at the identity provider) and its style, embedded in the binary and served at `/`
//! (so `/agent/` behind the proxy), plus `GET /whoami` for the page to show who it asks as. The page talks only to this origin: a strict
//! Content-Security-Policy allows no inline script, no other host, no framing.

use super::errors::ApiError;
use super::AppState;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use std::sync::Arc;

const INDEX: &str = include_str!("page/index.html");
const SCRIPT: &str = include_str!("page/app.js");
const SIGN_IN_SCRIPT: &str = include_str!("page/signin.js");
const STYLE: &str = include_str!("page/app.css");

/// Everything the page may load or call: its own files and this origin's API.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; \
     form-action 'self'; frame-ancestors 'none'";

pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route(
            "/",
            get(|| async { asset("text/html; charset=utf-8", INDEX) }),
        )
        .route(
            "/assets/app.js",
            get(|| async { asset("text/javascript; charset=utf-8", SCRIPT) }),
        )
        .route(
            "/assets/signin.js",
            get(|| async { asset("text/javascript; charset=utf-8", SIGN_IN_SCRIPT) }),
        )
        .route(
            "/assets/app.css",
            get(|| async { asset("text/css; charset=utf-8", STYLE) }),
        )
        .route("/whoami", get(whoami))
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// Who the request's identity is: the caller an answer would run as. A request that presents
/// no credential where one is required is told so with `logged_in: false` (not a 401, which a
/// browser logs as an error for every visitor who has not logged in yet); a credential that is
/// refused is a 401 as on `/ask`.
#[utoipa::path(get, path = "/whoami", responses(
    (status = 200, description = "`{logged_in, sub, roles, domains}`; `logged_in: false` and nothing else when no credential was presented"),
    (status = 401, description = "a credential that is refused", body = crate::contract::ErrorBody),
))]
pub(super) async fn whoami(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
) -> Result<Json<serde_json::Value>, ApiError> {
    let presented = ["x-gateway-claims", "authorization", "cookie"]
        .iter()
        .any(|name| headers.contains_key(*name));
    if !presented && state.identity.require_auth {
        return Ok(Json(serde_json::json!({ "logged_in": false })));
    }
    let caller = super::caller::caller(&headers, &state).await?;
    Ok(Json(serde_json::json!({
        "logged_in": true,
        "sub": caller.user.sub,
        "roles": caller.user.roles,
        "domains": caller.user.domains,
    })))
}
